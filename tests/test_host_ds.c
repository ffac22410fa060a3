/*
 * test_host_ds.c - DeepSpeed's engine under Megatron-DeepSpeed (src/eval/host_ds.c,
 * docs/host.md) against the code it counts ([DS-CODE] DeepSpeed v0.9.5, [MDS-CODE]) and the
 * host costs measured for it (docs/host.md § Measured host costs: torch 2.11 on an H200 host:
 * torch.cuda.synchronize() on an idle device 8 us, an in-place launch 10 us,
 * float(x.float().sum()) 26 us).
 *
 *   - ThroughputTimer.start() synchronizes at every micro-batch's forward (one drain);
 *   - with the pipeline engine and TP > 1, the partitioned activations and gradients cost
 *     drains (to_meta, from_meta) and all-gathers over the TP group per micro-batch;
 *   - ZeRO 0 fp16 steps (FP16_Optimizer) check every gradient tensor for overflow with
 *     float(x.float().sum()); ZeRO 1/2 probe and take the norm (.item()) of each gradient of
 *     the rank's partition in any 16-bit type: per-tensor drains;
 *   - ZeRO 0 bf16 (BF16_Optimizer) pays nothing per tensor, and no other stack pays any of it.
 * The calibration is the priors' (eager_op_s 12 us), so the figures follow from the sources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "time_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run_fixture.h"

/* Measured host costs (docs/host.md): a synchronize on an idle device, one launch, and a
   per-tensor overflow probe float(x.float().sum()) (two launches and a drain). */
#define SYNC_IDLE_S 8e-6
#define LAUNCH_S 10e-6
#define PROBE_S 26e-6

static void setup_run(const char *preset, uint32_t gpus)
{
    fixture_run(preset, "a100-80gb", gpus);
    tp_calib_prior(&cal);
}

static struct tp_time step(enum tp_framework fw)
{
    return fixture_step(fw);
}

/* A drain priced as two eager ops (its call and the launch the idle GPU waits for) lies
   between the measured synchronize + launch (18 us) and twice it. */
static void test_drain_price_measured(void **state)
{
    (void)state;
    setup_run("gpt2-xl", 8);
    double drain = 2 * cal.eager_op_s;
    assert_true(drain >= SYNC_IDLE_S + LAUNCH_S);
    assert_true(drain <= 2 * (SYNC_IDLE_S + LAUNCH_S));
}

/* GPT-2 XL (48 blocks) on 8 A100s, PP 2 x DP 4, micro-batch 4 of 1024 tokens, bf16: every
   block is GPU-bound, so against the fused Megatron-LM stack Megatron-DeepSpeed adds, per
   micro-batch on a stage of 24 blocks: the blocks' torch.tensor copies (2 each: a call and a
   launch), the data path's 2 syncs (both stages load a batch: TrainSchedule's LoadMicroBatch
   on the first and the last stage) and ThroughputTimer.start()'s synchronize: 54 eager ops,
   less Megatron-Core's two loss-check drains on the last stage (4 ops);
   without TP no activation is partitioned, and the pipeline engine has no DP loss
   all-reduce per micro-batch. */
static void test_pipeline_drains_tp1(void **state)
{
    (void)state;
    setup_run("gpt2-xl", 8);
    job.seq = 1024;
    lay.pp = 2;
    lay.mbs = 4;
    lay.gas = 4;
    struct tp_time fused = step(TP_FW_MEGATRON), mds = step(TP_FW_MEGATRON_DS);
    double ops = 24 * 2 + 2 * 2 + 2;
    /* less the fused stack's own loss checks on the last stage: 2 drains, 4 ops (host_step.c) */
    double want = 4 * (ops - 4) * cal.eager_op_s;
    double got = mds.overhead_s - fused.overhead_s;
    if (!(fabs(got - want) <= 1e-9))
        fail_msg("got %.6g s, want %.6g s", got, want);
}

/* The Megatron-DeepSpeed 125M example's layout (data/runs small_models:2: TP 2, PP 2,
   micro-batch 2 of 2048 tokens, fp16): with TP the pipeline engine partitions what crosses
   the stage boundary.  The first stage (a next stage only) drains at to_meta in its forward and
   at two from_meta in its backward and all-gathers twice (full() of the output and of the
   gradient); the last stage drains at from_meta and to_meta once each and all-gathers once.
   Each drain costs at least the measured synchronize + launch, each all-gather at least its
   NCCL latency.  And all of it stays under 1 ms per micro-batch: the row measured 49 ms per
   micro-batch and stage (25 TFLOP/s), so this work is not what the model misses there. */
static void test_pipeline_partitioned(void **state)
{
    (void)state;
    setup_run("gpt2", 8);
    job.seq = 2048;
    job.precision = TP_PREC_FP16;
    lay.tp = 2;
    lay.pp = 2;
    lay.dp = 2;
    lay.zero = 1;
    lay.mbs = 2;
    lay.gas = 64;
    lay.recompute = TP_RECOMPUTE_FULL;
    job.framework = TP_FW_MEGATRON_DS;
    struct tp_error err = {{0}, {0}};
    if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct ctx x;
    memset(&x, 0, sizeof x);
    x.m = &model;
    x.c = &cluster;
    x.j = &job;
    x.l = &lay;
    x.cal = &cal;
    x.h.act_bytes = 2;
    x.tokens = 2.0 * 2048;
    x.g_tp = 2;
    double ag = tp_time_allgather(&cluster, &cal, x.tokens * model.hidden * 2, 2, 2);
    assert_true(ag > 0);
    double first = tp_host_ds_micro_batch(&x, 0), last = tp_host_ds_micro_batch(&x, 1);
    double drain = SYNC_IDLE_S + LAUNCH_S;
    /* beside ThroughputTimer's drain, which every stage pays */
    assert_true(first - 2 * cal.eager_op_s >= 3 * drain + 2 * ag);
    assert_true(last - 2 * cal.eager_op_s >= 2 * drain + ag);
    assert_true(first < 1e-3 && last < 1e-3);
    /* without TP nothing is partitioned: the timer's drain alone */
    lay.tp = 1;
    lay.dp = 4;
    assert_true(fabs(tp_host_ds_micro_batch(&x, 0) - 2 * cal.eager_op_s) < 1e-12);
}

/* GPT-2 XL on 8 A100s, one micro-batch per step.  ZeRO 0 in fp16 (FP16_Optimizer) probes all
   580 gradient tensors of the rank (48 blocks x 12 in megatron/model/transformer.py, the word
   and position embeddings, the final LayerNorm's weight and bias) with float(x.float().sum());
   in bf16 (BF16_Optimizer) nothing.  Per tensor the host pays at least half the measured probe
   (26 us) and at most twice it, beside the GPU's pass over the gradients (10 bytes per
   parameter).  ZeRO 1 over 8 DP ranks probes and norms the partition's 580 / 8 + 1 tensors in
   either type, the same for fp16 and bf16. */
static void test_step_checks(void **state)
{
    (void)state;
    setup_run("gpt2-xl", 8);
    job.seq = 1024;
    lay.mbs = 4;
    lay.gas = 1;
    job.precision = TP_PREC_BF16;
    struct tp_time bf16 = step(TP_FW_MEGATRON_DS);
    struct tp_time mcore_bf16 = step(TP_FW_MEGATRON);
    /* Megatron-Core's own step (host_step.c): the norm's and the loss scale's .item() drains
       (2 ops each) and the norm's all-reduce from Python (4 ops, no latency on one rank of
       its model-parallel group); its launches hide behind the optimizer's GPU pass */
    double mc = 8 * cal.eager_op_s;
    assert_true(fabs(mcore_bf16.optimizer_s - bf16.optimizer_s - mc) < 1e-12);
    job.precision = TP_PREC_FP16;
    struct tp_time fp16 = step(TP_FW_MEGATRON_DS);
    struct tp_time mcore_fp16 = step(TP_FW_MEGATRON);
    struct tp_params pc;
    tp_count_params(&model, &pc);
    double params = (double)pc.total, tensors = 48 * 12 + 2 + 2;
    double bytes = params * 10;
    double gpu_min = bytes / cluster.gpu.hbm_bw, gpu_max = bytes / (0.5 * cluster.gpu.hbm_bw);
    double extra = fp16.optimizer_s - mcore_fp16.optimizer_s + mc;
    printf("  ZeRO 0 fp16 probes: %.2f ms per step over %.0f tensors\n", extra * 1e3, tensors);
    assert_true(extra >= tensors * PROBE_S / 2 + gpu_min);
    assert_true(extra <= tensors * PROBE_S * 2 + gpu_max);
    /* ZeRO 1: the partition's probes and norms, whatever the 16-bit type */
    lay.zero = 1;
    struct tp_time z1_fp16 = step(TP_FW_MEGATRON_DS), z1_m = step(TP_FW_MEGATRON);
    job.precision = TP_PREC_BF16;
    struct tp_time z1_bf16 = step(TP_FW_MEGATRON_DS);
    assert_true(fabs(z1_fp16.optimizer_s - z1_bf16.optimizer_s) < 1e-12);
    double part = 580.0 / 8 + 1, z1 = z1_fp16.optimizer_s - z1_m.optimizer_s + mc;
    double pbytes = params / 8 * (10 + 18);
    assert_true(z1 >= 2 * part * PROBE_S / 2 + pbytes / cluster.gpu.hbm_bw);
    assert_true(z1 <= 2 * part * PROBE_S * 2 + pbytes / (0.5 * cluster.gpu.hbm_bw) + 1e-3);
    assert_true(z1 < extra); /* the partition is an eighth of the tensors */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drain_price_measured),
        cmocka_unit_test(test_pipeline_drains_tp1),
        cmocka_unit_test(test_pipeline_partitioned),
        cmocka_unit_test(test_step_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
