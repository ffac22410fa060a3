#!/bin/sh
# users_runs.sh - the users' measured runs (data/runs/users_mi300x_runs.csv,
# notes 000/001) predicted by `trainplan estimate` with the flags a user would give: predicted
# tokens/s per GPU, its 80% range, the measurement and the error.  Figures only; no verdict.
#   sh bench/users_runs.sh [./build/trainplan]
T=${1:-./build/trainplan}
MI="--gpu mi300x --gpus 8 --framework hf --optimizer adamw-8bit --recompute full"
# Axolotl (>= 0.13, PR #3072) logs tokens_per_second_per_gpu over trainable tokens only
# (labels != -100).  The SFT runs train on the assistant turns of sft.shisa-v2.1, packed into
# 8k rows: notes 001 give 1188 steps for its 3 epochs at 8 GPUs x mbs 16 x 8192 = 1.246e9 token
# slots, against the 7.6e8 tokens the notes count (700 tok/s/GPU x 8 x 38 h): 0.61 trainable.
SFT="--trainable-frac 0.61"
row() {
    name=$1 measured=$2
    shift 2
    "$T" estimate "$@" --format json | python3 -c "
import json, sys
d = json.load(sys.stdin)
t, lo, hi = d['tokens_per_s_per_gpu'], d['tokens_per_s_per_gpu_low'], d['tokens_per_s_per_gpu_high']
m = $measured
print('%-34s %8.0f  [%6.0f - %6.0f] %7.0f  %+7.1f%%  %s' % ('$name', t, lo, hi, m, 100 * (t / m - 1),
      'inside' if lo <= m <= hi else 'OUTSIDE'))"
}
printf '%-34s %8s  %17s %7s  %8s\n' run predicted "80% range" measured error
row "users000:5 Llama-3.2-3B SFT"   8900 llama-3.2-3b $MI $SFT --zero 3 --task sft --seq 8192 --mbs 16
row "users000:6 Llama-3.2-3B DPO"   8900 llama-3.2-3b $MI --zero 3 --task dpo --seq 4096 --mbs 8
row "users000:7 Phi-4 SFT"          2300 phi-4 $MI $SFT --zero 3 --task sft --seq 8192 --mbs 16
row "users000:8 Phi-4 DPO"          2300 phi-4 $MI --zero 3 --task dpo --seq 4096 --mbs 8
# 094: ~700 tokens/s per GPU, ZeRO-3 (seq and micro-batch not stated: 8k x 16 per notes 001)
row "users000:2 Qwen3-30B ZeRO-3"    700 qwen3-30b-a3b $MI $SFT --zero 3 --task sft --seq 8192 --mbs 16 --fused-loss
# 095: the same 7.6e8 tokens in ~15 h with ZeRO-2 + Tutel ep 2 (7.6e8 / 15 h / 8 GPUs)
row "users000:3 Qwen3-30B ZeRO-2 ep2" 1759 qwen3-30b-a3b $MI $SFT --zero 2 --ep 2 --task sft --seq 8192 --mbs 16 --fused-loss
# 096: DPO in ~24 h over ~4.6e8 tokens (the notes' DPO curriculum)
row "users000:4 Qwen3-30B DPO ep2"   666 qwen3-30b-a3b $MI --zero 2 --ep 2 --task dpo --seq 4096 --mbs 8 --fused-loss
# 110 (Ring-mini-2.0): its notes leave the ZeRO stage, micro-batch and MoE kernels open and name a
# MegaBlocks config that stock Axolotl cannot run (docs/moe.md "What the Ring-mini-2.0 run
# executed"): the remote-code loop as Axolotl runs it, and grouped kernels, bracket the measurement
AX="--framework axolotl --gpu mi300x --gpus 8 --optimizer adamw-8bit --recompute full --fused-loss"
row "users000:1 Ring-mini ZeRO-3 loop"  2600 ring-mini-2.0 $AX $SFT --zero 3 --task sft --seq 8192 --mbs 16
row "users000:1 Ring-mini ZeRO-2 loop"  2600 ring-mini-2.0 $AX $SFT --zero 2 --task sft --seq 8192 --mbs 16
row "users000:1 Ring-mini megablocks"   2600 ring-mini-2.0 $AX $SFT --zero 3 --task sft --seq 8192 --mbs 16 --moe-impl megablocks
row "users000:9 Llama-4-Scout QLoRA 1x"  519 llama-4-scout --gpu h100-sxm --gpus 1 --framework hf --task qlora --seq 4096 --recompute full
row "users000:10 Llama-4-Scout QLoRA 4x" 280 llama-4-scout --gpu h100-sxm --gpus 4 --framework hf --fsdp full_shard --task qlora --seq 4096 --recompute full --attention flex
