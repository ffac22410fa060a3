/*
 * test_moe_local.c - what Megatron-Core's grouped experts cost per local expert and micro-batch
 * (src/eval/time_block.c WGRAD_ACCUM_B, src/eval/host.c expert_host_ops; docs/moe.md "The cost
 * per local expert").
 *
 * Sources:
 *   [TE-WGRAD] NVIDIA/TransformerEngine v2.4 transformer_engine/pytorch/module/grouped_linear.py:
 *            under fuse_wgrad_accumulation the weight-gradient grouped GEMM writes into each
 *            expert's main_grad (`wgrad_list = main_grads`) with `accumulate=True`, its output
 *            dtype the main_grad's (cpp_extensions/gemm.py), fp32 by Megatron's default: 4 bytes
 *            read and 4 written per expert weight, every micro-batch, whatever its rows.
 *   [MOEZOO] yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md, H100 table (HEAD
 *            e8650517d): Qwen3-235B-A22B, DeepEP, 256 H100, seq 4096, TP 4, CP 1, EP 8, PP 8,
 *            ETP 1, VPP 4, MBS 1, GBS 2048, 29.0 s per step (167 TFLOP/s per GPU); the launch
 *            line (examples/qwen3/run_235b.sh at 31c5686) forces balanced routing.  The runs
 *            file's row mcoremoezoo:5.
 *   [TE-GG]  NVIDIA/TransformerEngine PR #2045, H100, BF16, general_grouped_gemm with TE 2.7 and
 *            CUDA 12.9: 8 GEMMs of 4096 x 768 x 2048 at 627.9 TFLOP/s, 16 of 2048 x 768 x 2048
 *            at 553.9: 2.75 us per GEMM beyond the FLOPs (time_block.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>

#include "run_fixture.h"

/* Qwen3-235B-A22B's shape ([MOEZOO]'s model config and the model's config.json) on the
   preset of its smaller sibling. */
static void qwen3_235b(const char *gpu, uint32_t gpus)
{
    struct tp_error err = {{0}, {0}};
    fixture_run("qwen3-30b-a3b", gpu, gpus);
    struct tp_shape s;
    tp_shape_init(&s);
    s.layers = 94;
    s.hidden = 4096;
    s.heads = 64;
    s.kv_heads = 4;
    s.head_dim = 128;
    s.ffn = 12288;
    s.experts = 128;
    s.topk = 8;
    s.moe_ffn = 1536;
    if (tp_model_apply_shape(&model, &s, NULL, 0, &err) != TP_OK)
        fail_msg("%s", err.msg);
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_BF16;
    job.seq = 4096;
    job.fused_loss = true;
    job.moe_dispatcher = TP_MOE_DISPATCH_FLEX;
    job.moe_routing = TP_MOE_ROUTING_FORCED;
}

/* [MOEZOO]'s layout without the pipeline: TP 4 (SP), EP 8, ETP 1 on 32 GPUs, so each rank's
   experts see 1,024 tokens x top-8 x EP 8 / 128 = 512 rows each; `ep` 8 or 16. */
static struct tp_time no_pipeline(uint32_t ep)
{
    qwen3_235b("h100-sxm", 32);
    lay.tp = 4;
    lay.sp = true;
    lay.dp = 8;
    lay.ep = ep;
    lay.etp = 1;
    lay.zero = 1;
    lay.mbs = 1;
    lay.gas = 8;
    return fixture_step(TP_FW_MEGATRON);
}

/* [TE-WGRAD]: halving the local experts (EP 8 -> 16) doubles each one's rows and keeps the
   FLOPs, so a GEMM priced by its FLOPs alone would not move; the fp32 main_grad of the 8
   experts no longer local is 8 bytes per weight the weight gradients stop moving.  At 512 and
   1,024 rows an expert's weight gradient is bound by those bytes, so the GEMM time drops by
   them at the calibration's HBM rate, and by the 48 fewer GEMMs' fixed time per layer and
   micro-batch [TE-GG] (within 10%: the tiles and waves of the two shapes). */
static void test_main_grad_per_local_expert(void **state)
{
    (void)state;
    struct tp_time e8 = no_pipeline(8), e16 = no_pipeline(16);
    double weights = 3.0 * 4096 * 1536;                         /* one expert's gate, up, down */
    double bytes = 8 * weights * 8 * 94 * 8; /* 8 experts fewer, 8 B each, layers, micro-batches */
    double t = bytes / (cluster.gpu.hbm_bw * cal.mem_eff);
    double gemms = 8 * 6 * 2.75e-6 * 94 * 8; /* [TE-GG]: fwd, dgrad, wgrad of fc1, fc2 each */
    assert_true(fabs((e8.gemm_s - e16.gemm_s) / (t + gemms) - 1) < 0.1);
}

/* [MOEZOO]: the published 29.0 s per step.  The model is still short of it (docs/moe.md "The
   cost per local expert": the rest of the per-layer excess is not found in the code), but the
   experts' main_grad traffic and their GEMMs' fixed time take the prediction from 0.57 of the
   figure (16.5 s, before them) to 0.68 (19.7 s): above 0.6 of it, and never past it. */
static void test_modelzoo_step(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    qwen3_235b("h100-sxm", 256);
    lay.tp = 4;
    lay.sp = true;
    lay.pp = 8;
    lay.vpp = 4;
    lay.dp = 8;
    lay.ep = 8;
    lay.etp = 1;
    lay.zero = 1;
    lay.mbs = 1;
    lay.gas = 256;
    if (tp_layout_pp_account(94, true, true, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct tp_time t = fixture_step(TP_FW_MEGATRON);
    assert_true(t.step_s > 0.6 * 29.0);
    assert_true(t.step_s < 29.0);
}

/* The host's share per local expert (host.c, counted from TE's GroupedLinear and Megatron's
   DDP hooks: 1 eager op forward and 4 backward per expert): with all 128 experts on each of 8
   ranks and a micro-batch of one 2,048-token sequence, each expert's GEMMs run 128 rows, shorter
   than their launches and hooks, so the step is host-bound there and pays for the experts it
   holds; at EP 8 (16 local experts, 1,024 rows each) the GPU covers them.  The 112 extra
   experts' count must show, in part: their main_grad traffic and the GEMMs' fixed time
   (time_block.c) cover most of it. */
static void test_host_per_local_expert(void **state)
{
    (void)state;
    double over[2];
    const uint32_t eps[2] = {1, 8};
    for (int i = 0; i < 2; i++) {
        fixture_run("qwen3-30b-a3b", "h100-sxm", 8);
        job.framework = TP_FW_MEGATRON;
        job.precision = TP_PREC_BF16;
        job.seq = 2048;
        job.moe_routing = TP_MOE_ROUTING_FORCED;
        lay.dp = 8;
        lay.ep = eps[i];
        lay.zero = 1;
        lay.mbs = 1;
        lay.gas = 4;
        over[i] = fixture_step(TP_FW_MEGATRON).overhead_s;
    }
    double counted = 112 * (1 + 4) * cal.eager_op_s * model.n_layers * 4;
    assert_true(over[0] - over[1] > 0.1 * counted);
    assert_true(over[0] - over[1] < counted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_main_grad_per_local_expert),
        cmocka_unit_test(test_modelzoo_step),
        cmocka_unit_test(test_host_per_local_expert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
