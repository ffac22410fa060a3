#!/bin/sh
# run.sh - every command's --format csv and --format json output must parse (issue 16): CSV by
# libcsv's strict parser with one field count throughout, JSON by jansson (check_format).
#   sh tests/formats/run.sh ./build/trainplan ./build/tests/check_format
# Prints one line per failure and, last, "formats: N passed, N failed".  Exit 0 when all pass.
bin=$1
check=$2
passed=0
failed=0
runs=tests/cli/fixtures/runs-two.csv
fit="calibrate $runs --no-cv --max-evals 300"
if $bin $fit -o /dev/null 2>&1 | grep -q -F "without the fitting backend"; then
    echo "formats: calibrate skipped: this build has no fitting backend (NO_GSL=1)"
    fit="params llama-3.1-8b"
fi
for verb in \
    "params llama-3.1-8b" \
    "models" \
    "gpus" \
    "memory llama-3.1-8b --gpu h100 --gpus 8 --zero 3" \
    "memory qwen3-8b --gpu h100 --gpus 8..32 --mbs 1,3 --gbs 64 --zero 3" \
    "estimate llama-3.1-8b --gpu h100 --gpus 8 --zero 3" \
    "estimate llama-3.1-8b --gpu h100 --gpus 8 --mbs 1,2 --seq 2048,4096 --zero 3" \
    "search llama-3.1-8b --gpus 8 --gbs 64" \
    "search llama-3.1-8b --gpus 8,16 --gbs 64" \
    "validate $runs tests/cli/fixtures/runs-hostile.csv" \
    "$fit" \
    "logs tests/fixtures/logs/megatron-lm.log" \
    "export --to deepspeed llama-3.1-8b --gpus 8 --zero 3" \
    "size --flops 1e21" \
    "checkpoint tests/cli/fixtures/ckpt/clean"; do
    for fmt in csv json; do
        # shellcheck disable=SC2086
        $bin $verb --format $fmt >/tmp/fmt.$$ 2>/dev/null
        rc=$?
        if [ $rc -ge 2 ]; then
            echo "FAIL $verb --format $fmt: exit $rc"
            failed=$((failed + 1))
        elif "$check" $fmt </tmp/fmt.$$; then
            passed=$((passed + 1))
        else
            echo "FAIL $verb --format $fmt: does not parse"
            failed=$((failed + 1))
        fi
    done
done
rm -f /tmp/fmt.$$
echo "formats: $passed passed, $failed failed"
[ $failed -eq 0 ]
