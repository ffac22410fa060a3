#!/bin/sh
# check.sh - the exported files would start (make test: export-test): every preset and every
# fixture config exported for Megatron-LM, the users' Axolotl, DeepSpeed and Megatron-DeepSpeed
# scenarios and the launch scripts go through scripts/check-export-start.py (Megatron's argument
# parser and validity rules, DeepSpeed's config model, Axolotl's schema, bash -n, "$@").
# Then the checker is shown to fail on broken files (a flag Megatron does not know, a value
# outside a flag's choices, SP dropped for MoE with TP, a ZeRO key DeepSpeed forbids, ...).
#
#   sh tests/export/check.sh ./build/trainplan        (from the repository root)
set -u
bin=$1
out=$(mktemp -d 2>/dev/null) || exit 2
trap 'rm -rf "$out"' EXIT
if ! command -v python3 >/dev/null 2>&1 || ! command -v bash >/dev/null 2>&1; then
    echo "export-test: python3 or bash not found; skipped"
    exit 0
fi
fail=0
n=0
# exp NAME ARGS...: export -o $out/NAME (exit 0 expected)
exp() {
    name=$1
    shift
    if ! "$bin" export "$@" -o "$out/$name" >"$out/$name.log" 2>&1; then
        echo "FAIL export-test $name: trainplan export $*"; cat "$out/$name.log"; fail=1
        return
    fi
    n=$((n + 1))
}
# every shipped preset (hybrids are refused: pretrain_gpt.py builds transformer blocks only)
for m in $("$bin" models --format csv | sed 1d | cut -d, -f1 | tr -d '"'); do
    case $m in
    nemotron-h-8b|nemotron-3-nano-30b-a3b|qwen3-next-80b-a3b)
        if "$bin" export --to megatron "$m" --gpus 8 --allow-oom >/dev/null 2>&1; then
            echo "FAIL export-test $m: a hybrid model is exported for pretrain_gpt.py"; fail=1
        fi
        continue ;;
    esac
    exp "preset-$m" --to slurm --framework megatron "$m" --gpu h100-sxm --gpus 8 --allow-oom \
        --tokens 1e9
done
# every fixture config (Hugging Face config.json as shipped)
for f in tests/fixtures/hf/*.json; do
    b=$(basename "$f" .json)
    case $b in nemotron-h-8b|qwen3-next-80b-a3b) continue ;; esac
    exp "config-$b" --to megatron "$f" --gpu h100-sxm --gpus 8 --allow-oom --steps 1000
done
# the users' scenarios and the layouts the rules touch
exp slurm-70b --to slurm llama-3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 2 --sp --gas 16 \
    --zero 1 --framework megatron --tokens 1e12
exp qwen-ep-tp --to megatron qwen3-30b-a3b --gpu h100-sxm --gpus 16 --tp 2 --pp 2 --ep 4 \
    --framework megatron --seq 4096 --tokens 1e12
exp qwen-fp8-vpp --to megatron qwen3-30b-a3b --gpu h100-sxm --gpus 64 --tp 2 --pp 4 --vpp 2 \
    --ep 4 --sp --zero 1 --precision fp8 --framework megatron --gbs 256 --seq 4096 --allow-oom
exp glm-uneven --to megatron glm-4.5-air --gpu h100-sxm --gpus 64 --pp 4 --pp-first 10 \
    --pp-last 12 --ep 8 --distributed-optimizer --mbs 1 --gbs 512 --seq 4096 --recompute full \
    --framework megatron
exp ax-70b --to axolotl llama-3.3-70b --gpu mi300x --gpus 8 --task sft --seq 8192 --mbs 4 \
    --gas 4 --zero 3 --recompute full --framework axolotl --allow-oom --tokens 1e8
exp ax-best --to axolotl --best glm-4.5-air --gpu mi300x --gpus 8 --framework axolotl \
    --gbs 64 --seq 4096 --task sft
exp ax-qlora-fsdp --to axolotl qwen3-30b-a3b --gpu h100-sxm --gpus 8 --task qlora \
    --framework axolotl --fsdp full_shard --allow-oom
exp ds-8b --to deepspeed llama-3.1-8b --gpu h100-sxm --gpus 8 --zero 2 --recompute full
exp torchrun-ds-offload --to torchrun llama-3.1-8b --gpu h100-sxm --gpus 16 --zero 3 \
    --offload optimizer --framework deepspeed
exp titan-qwen --to slurm qwen3-30b-a3b --gpu h100-sxm --gpus 16 --tp 2 --ep 4 --zero 3 \
    --framework torchtitan --seq 4096 --tokens 1e10 --allow-oom
exp titan-pp --to torchrun llama-3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 4 --vpp 5 --sp \
    --zero 3 --framework torchtitan --gas 16 --allow-oom
exp mds-bloom --to megatron-deepspeed bloom-176b --gpu a100-80gb --gpus 384 --tp 4 --pp 12 \
    --gbs 2048 --seq 2048 --zero 1 --recompute full --allow-oom --tokens 3.66e11
python3 scripts/check-export-start.py "$out"/*/ || fail=1
# the checker fails on broken files
broken() {
    what=$1 dir=$2
    if python3 scripts/check-export-start.py "$dir" >"$out/broken.log" 2>&1; then
        echo "FAIL export-test: the checker accepts $what"; fail=1
    fi
    rm -rf "$dir"
}
if [ -d "$out/qwen-ep-tp" ]; then
    cp -r "$out/qwen-ep-tp" "$out/b1" && sed -i 's/--swiglu/--swiglu-typo/' "$out/b1/megatron_args.sh"
    broken "an unknown Megatron flag" "$out/b1"
    cp -r "$out/qwen-ep-tp" "$out/b2" && sed -i '/--sequence-parallel/d' "$out/b2/megatron_args.sh"
    broken "MoE with TP and no sequence parallelism" "$out/b2"
    cp -r "$out/qwen-ep-tp" "$out/b3" && sed -i 's/--lr-decay-style cosine/--lr-decay-style cosin/' \
        "$out/b3/megatron_args.sh"
    broken "a value outside --lr-decay-style's choices" "$out/b3"
    cp -r "$out/qwen-ep-tp" "$out/b4" && sed -i 's/--train-samples/--train-iters/' \
        "$out/b4/megatron_args.sh"
    broken "--train-iters with a samples-based schedule" "$out/b4"
fi
if [ -d "$out/ds-8b" ]; then
    cp -r "$out/ds-8b" "$out/b5" && sed -i 's/"overlap_comm"/"overlap_comms"/' "$out/b5/ds_config.json"
    broken "a ZeRO key DeepSpeed forbids" "$out/b5"
    cp -r "$out/ds-8b" "$out/b6" && sed -i 's/"train_batch_size": [0-9]*/"train_batch_size": 7/' \
        "$out/b6/ds_config.json"
    broken "a train_batch_size that is not micro x accumulation x dp" "$out/b6"
fi
if [ -d "$out/ax-70b" ]; then
    cp -r "$out/ax-70b" "$out/b7" && sed -i '/^learning_rate:/d' "$out/b7/axolotl.yaml"
    broken "an Axolotl YAML without learning_rate" "$out/b7"
    cp -r "$out/ax-70b" "$out/b8" && sed -i 's/"\$@"//' "$out/b8/launch.sh"
    broken "a launch script that drops its arguments" "$out/b8"
fi
if [ -d "$out/titan-qwen" ]; then
    cp -r "$out/titan-qwen" "$out/b9" && sed -i 's/--training.steps/--training.step/' "$out/b9/train.sbatch"
    broken "a torchtitan option that is not a config field" "$out/b9"
fi
if [ "$fail" = 0 ]; then
    echo "export-test: $n exports start (parser, rules, schema, bash -n); 9 broken files refused"
fi
exit $fail
