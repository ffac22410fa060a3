#!/bin/bash
# torchrun launch, planned by trainplan 0.1.0: Llama 3.3 70B on 8 x mi300x (1 node x 8); dp 8 tp 1 pp 1 vpp 1 cp 1 ep 1, ZeRO-3, mbs 4 x gas 4 = global batch 128, seq 8192
set -euo pipefail
cd "$(dirname "$0")"
torchrun \
    --standalone \
    --nnodes 1 \
    --nproc-per-node 8 \
    -m axolotl.cli.train axolotl.yaml "$@"
