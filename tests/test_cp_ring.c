/*
 * test_cp_ring.c - the load-balanced causal ring of context parallelism as the time model prices
 * it (src/eval/time_block.c attention and ring_attention), on the shape of TRL's million-token
 * runs (docs/calibration.md, "Million-token context parallelism under PyTorch"):
 *
 *   [TORCH-CP] pytorch/pytorch torch/distributed/tensor/experimental/_attention.py, Note
 *   "Context parallelism load balance algorithm for causal masking": rank r holds chunks r
 *   and 2cp-1-r of the sequence; step 0 runs the local queries against the local keys under the
 *   causal mask, each later step runs the local queries against half of a key chunk or half of
 *   the queries against a whole one, without a mask.  Every step covers L^2/2 query-key pairs
 *   (L = s/cp), so a rank's kernels do 1/cp of the causal sequence's work.
 *   Qwen3-8B at 1,048,576 tokens on 8 H100 (huggingface/trl#6845, data/runs/public_hf_stacks.csv
 *   trlcp:2): Accelerate FSDP2, cp 8, full activation checkpointing, activations offloaded,
 *   PyTorch SDPA's cuDNN backend, the chunked loss.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>

#include "run_fixture.h"

/* TRL's context-parallel SFT of Qwen3-8B: `gpus` GPUs, all of them one context-parallel ring. */
static struct tp_time trl_step(uint32_t gpus, uint64_t seq)
{
    fixture_run("qwen3-8b", "h100-sxm", gpus);
    job.seq = seq;
    job.task = TP_TASK_SFT;
    job.attn_impl = TP_ATTN_CUDNN919;
    job.fsdp_backend = true;
    job.fused_loss = true;
    lay.cp = gpus;
    lay.dp = 1;
    lay.zero = 3;
    lay.recompute = TP_RECOMPUTE_FULL;
    lay.offload_activations = true;
    return fixture_step(TP_FW_AXOLOTL);
}

/* The balanced ring divides the causal sequence's attention evenly: a rank of an 8-way ring
   spends 1/8 of the attention time one GPU spends on the whole sequence (the per-block keys
   scale with the rank's queries too), within the last wave's tail: 32 heads x 1024 query
   blocks are 248.2 waves of 132 SMs, 0.3% longer.  An unbalanced ring's last rank would do
   (cp - 1/2) / (cp / 2) = 1.875 times the balanced share; a ring pricing its off-diagonal
   steps as causal kernels would pay the diagonal tile's masking once per step. */
static void test_balanced_share(void **state)
{
    (void)state;
    struct tp_time one = trl_step(1, 1048576);
    struct tp_time ring = trl_step(8, 1048576);
    double share = ring.attn_s / one.attn_s;
    if (!(fabs(share - 1.0 / 8) <= 0.005 / 8))
        fail_msg("ring rank's attention %.6f of the whole sequence's, want 1/8", share);
}

/* At a million tokens the step is attention: Qwen3-8B's causal attention forward is
   2 n_q (d_qk + d_v) s/2 = 2 x 8192 x 2^19 FLOPs per token and layer, 36 layers, against
   2N = 16.4 GFLOP per token of matmuls (8.19B parameters): 95% of the FLOPs, and more of the
   time, attention running below the GEMMs' rate. */
static void test_attention_bound(void **state)
{
    (void)state;
    struct tp_time t = trl_step(8, 1048576);
    double att = 2.0 * 8192 * 524288 * 36, mm = 2 * 8.19e9;
    assert_true(att / (att + mm) > 0.945);
    if (!(t.attn_s > 0.95 * t.step_s))
        fail_msg("attention %.1f s of a %.1f s step", t.attn_s, t.step_s);
}

/* The ring's exchange hides at these shapes: one chunk's K and V (131072 tokens x 8 KV heads x
   128 x 2 x 2 B = 537 MB) against hundreds of milliseconds of kernel per step, on one NVLink
   node (trlcp:2) and over four nodes' NICs (trlcp:7: 4M tokens on 32 GPUs, the same chunk);
   at most 1% of the step (docs/calibration.md: PyTorch's all-gather of 31 chunks outlasts its
   diagonal step by about 0.8% of trlcp:7's step). */
static void test_exchange_hidden(void **state)
{
    (void)state;
    double kv = 131072.0 * 8 * 128 * 2 * 2;
    assert_true(fabs(kv - 537e6) < 1e6);
    struct tp_time node = trl_step(8, 1048576);
    assert_true(node.cp_comm_s <= 0.01 * node.step_s);
    struct tp_time four = trl_step(32, 4194304);
    assert_true(four.cp_comm_s <= 0.01 * four.step_s);
    /* the same chunk per rank: the attention per GPU grows with the ring's length */
    double r = four.attn_s / node.attn_s;
    if (!(fabs(r - 4) < 0.01 * 4))
        fail_msg("4M over 32 against 1M over 8: attention x%.4f, want x4", r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_balanced_share),
        cmocka_unit_test(test_attention_bound),
        cmocka_unit_test(test_exchange_hidden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
