#!/bin/sh
# seeds.sh - (re)builds the committed seed corpora fuzz/corpus/<name>/ from the project's own
# inputs: config.json fixtures, calibration files, training-log fixtures (each behind every
# format-hint byte), runs files (header + one row each, from tests/ and
# data/runs/), the CLI cases' argument lists and export's hostile file names.  Run from the
# repository root.
set -eu
c=fuzz/corpus
# the corpora built here (fuzz/corpus/safetensors/ is kept by hand: docs/checkpoint.md)
rm -rf "$c/config" "$c/calib" "$c/logs" "$c/runs" "$c/args" "$c/outfile"
mkdir -p "$c/config" "$c/calib" "$c/logs" "$c/runs" "$c/args" "$c/outfile"
for f in tests/fixtures/hf/*.json tests/cli/fixtures/*.json; do
    case $f in */calib-*) continue ;; esac
    cp "$f" "$c/config/$(basename "$f")"
done
cp data/calibration.json "$c/calib/calibration.json"
for f in tests/cli/fixtures/calib-*.json; do cp "$f" "$c/calib/$(basename "$f")"; done
# fuzz_logs: the first byte is the format hint (0 = detect, 1..7 = enum tp_log_format)
for f in tests/fixtures/logs/*; do
    for h in 0 1 2 3 4 5 6 7; do
        { printf "\\$(printf %03o "$h")"; cat "$f"; } >"$c/logs/$h-$(basename "$f")"
    done
done
# fuzz_runs: header + one row, five rows per file
for f in tests/fixtures/runs/*.csv data/runs/*.csv; do
    [ -r "$f" ] || continue
    b=$(basename "$f" .csv)
    for i in 2 3 4 5 6; do
        [ "$(wc -l <"$f")" -ge "$i" ] || break
        { head -n 1 "$f"; sed -n "${i}p" "$f"; } >"$c/runs/$b-$i.csv"
    done
done
# fuzz_args: command byte (0 params, 1 memory, 2 estimate, 3 search, 4 validate, 5 calibrate,
# 6 logs, 7 models, 8 gpus) then one argument per line, from tests/cli/cases.txt
n=0
grep -v '^[[:space:]]*#' tests/cli/cases.txt | awk -F' [|] ' 'NF >= 3 {print $2}' |
while IFS= read -r args; do
    set -f
    set -- $args
    set +f
    [ $# -gt 0 ] || continue
    cmd=$1
    case $cmd in
    params) b=0 ;; memory) b=1 ;; estimate) b=2 ;; search) b=3 ;; validate) b=4 ;;
    calibrate) b=5 ;; logs) b=6 ;; models) b=7 ;; gpus) b=8 ;; *) continue ;;
    esac
    shift
    n=$((n + 1))
    { printf "\\$(printf %03o "$b")"; for a in "$@"; do printf '%s\n' "$a" | tr -d "'\""; done; } \
        >"$c/args/case-$n"
done
# fuzz_outfile: first byte's low bit --force, a file name, a newline, the content
o=0
for name in ds_config.json launch.sh link ../outside a/b . .. '' .hidden \
    "$(printf '%0300d' 0)" 'ds_config.json/'; do
    for force in 0 1; do
        o=$((o + 1))
        { printf "\\$(printf %03o "$force")"; printf '%s\n{"x": 1}\n' "$name"; } \
            >"$c/outfile/name-$o"
    done
done
for d in "$c"/*; do echo "$d: $(ls "$d" | wc -l) seeds"; done
