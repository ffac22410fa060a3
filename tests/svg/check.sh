#!/bin/sh
# check.sh - every command's --svg file is well-formed XML with an <svg> root, and shows the
# figures the same command prints (make test: svg-test).
#
#   sh tests/svg/check.sh ./build/trainplan        (from the repository root)
set -u
bin=$1
out=$(mktemp -d 2>/dev/null) || exit 2
trap 'rm -rf "$out"' EXIT
runs=tests/fixtures/runs
fail=0
if command -v python3 >/dev/null 2>&1; then
    xmlcheck() { python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
sys.exit(r.tag != "{http://www.w3.org/2000/svg}svg")' "$1"; }
elif command -v xmllint >/dev/null 2>&1; then
    xmlcheck() { xmllint --noout "$1" && grep -q '^<svg xmlns="http://www.w3.org/2000/svg"' "$1"; }
else
    echo "svg: neither python3 nor xmllint found; XML checks skipped"
    exit 0
fi
# plot NAME EXPECTED_EXIT ARGS...: runs the command with --svg and checks the file
plot() {
    name=$1 want=$2
    shift 2
    "$bin" "$@" --svg "$out/$name.svg" >"$out/$name.out" 2>&1
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL svg $name: exit $rc, expected $want"; cat "$out/$name.out"; fail=1; return
    fi
    if ! xmlcheck "$out/$name.svg"; then
        echo "FAIL svg $name: not a well-formed SVG document"; fail=1; return
    fi
    echo "svg $name: well-formed"
}
# col NAME: the named column of a one-row CSV on stdin (the header names the columns)
col() { awk -F, -v k="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i }
                            NR == 2 { print $c }'; }
# contains NAME TEXT: the plot shows TEXT
contains() {
    grep -qF -- "$2" "$out/$1.svg" || { echo "FAIL svg $1: '$2' not in the plot"; fail=1; }
}
plot memory 1 memory llama-3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 4 --gbs 512
# the worst stage's total as the table prints it (GB, 10^9 bytes), on its bar
total=$("$bin" memory llama-3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 4 --gbs 512 \
        --format csv | col total_bytes | awk '{ printf "%.4g", $1 / 1e9 }')
contains memory ">$total</text>"
contains memory "h100-sxm capacity 85.9 GB"
plot estimate 1 estimate llama-3.1-8b --gpu h100-sxm --gpus 8 --tp 2 --gbs 64
step=$("$bin" estimate llama-3.1-8b --gpu h100-sxm --gpus 8 --tp 2 --gbs 64 --format csv |
       col step_time_s | awk '{ printf "%.3f", $1 }')
contains estimate "Step time $step s"
plot search 0 search llama-3.1-8b --gpu h100-sxm --gpus 8..32 --gbs 256
contains search ">Pareto front</text>"
contains search "32 GPUs (tp"
plot validate 0 validate $runs/*.csv
contains validate ">within 25%</text>"
plot logs 0 logs tests/fixtures/logs/megatron-lm.log
contains logs ">outliers (dropped)</text>"
contains logs ">warm-up ends</text>"
plot size 0 size --flops 1e21 --top 3
contains size ">#1</text>"
# what cannot be plotted or written: one error line, exit 2
"$bin" search llama-3.1-8b --gpus 8 --gbs 64 --svg "$out/x.svg" >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL svg search without --gpus A..B: not a usage error"; fail=1; }
"$bin" memory llama-3.1-8b --gpus 8 --svg "$out/no/such/dir.svg" >/dev/null 2>"$out/err"
[ $? = 2 ] && grep -q "cannot write" "$out/err" ||
    { echo "FAIL svg unwritable file: not a usage error"; fail=1; }
[ $fail = 0 ] && echo "svg: all plots well-formed" || exit 1
