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
 *   - ZeRO 0 bf16 (BF16_Optimizer) probes nothing but reads each fp32 gradient's norm with
 *     .item(); no other stack pays any of it;
 *   - on the GPU: the weight gradients accumulate outside the GEMM (AccumulateGrad, 6 B per
 *     parameter from the second micro-batch; BF16_Optimizer's update_hp_grads, 18 B every
 *     micro-batch), the pipeline's p2p go one tensor at a time, and the step's reduction
 *     waits for the last backward.
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
   in bf16 BF16_Optimizer probes nothing but takes each fp32 gradient's norm with .item()
   (runtime/utils.py get_global_norm_of_tensors) and zeroes them (clear_hp_grads).  Per tensor the host pays at least half the measured probe
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
    job.precision = TP_PREC_FP16;
    struct tp_time fp16 = step(TP_FW_MEGATRON_DS);
    struct tp_time mcore_fp16 = step(TP_FW_MEGATRON);
    struct tp_params pc;
    tp_count_params(&model, &pc);
    double params = (double)pc.total, tensors = 48 * 12 + 2 + 2;
    /* BF16_Optimizer: get_global_norm_of_tensors' norm().item() per fp32 gradient (a launch
       and a drain, about the measured probe) reading 4 B per element, clear_hp_grads writing
       4 B */
    double b16 = bf16.optimizer_s - mcore_bf16.optimizer_s + mc, b16_bytes = params * 8;
    printf("  ZeRO 0 bf16 norms: %.2f ms per step over %.0f tensors\n", b16 * 1e3, tensors);
    assert_true(b16 >= tensors * PROBE_S / 2 + b16_bytes / cluster.gpu.hbm_bw);
    assert_true(b16 <= tensors * PROBE_S * 2 + b16_bytes / (0.5 * cluster.gpu.hbm_bw) + 1e-3);
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

/* The weight gradients' accumulation on the GPU, per parameter of the rank (host_ds.c): GPT-2
   small on 8 A100s, DP 8, 4 micro-batches of 1024 tokens, the fused loss on both stacks so that
   the element-wise seconds differ by it alone.  AccumulateGrad (fp16 or ZeRO 1: the 16-bit
   .grad) reads the new and the old gradient and writes the sum from the second micro-batch on;
   BF16_Optimizer (bf16, ZeRO 0) casts every micro-batch's bf16 gradient to an fp32 temporary
   and adds it to the fp32 gradient (bf16_optimizer.py update_hp_grads). */
#define ACCUM_16BIT_BYTES (2.0 + 2 + 2)
#define HP_GRADS_BYTES (2.0 + 4 + 4 + 4 + 4)
static void test_grad_accum(void **state)
{
    (void)state;
    setup_run("gpt2", 8);
    job.seq = 1024;
    job.fused_loss = true;
    lay.mbs = 1;
    lay.gas = 4;
    double bw = cluster.gpu.hbm_bw * cal.mem_eff;
    const struct tp_calib_gpu *o = tp_calib_gpu_find(&cal, cluster.gpu.key);
    if (o && o->mem_eff > 0)
        bw = cluster.gpu.hbm_bw * o->mem_eff;
    const struct {
        enum tp_precision prec;
        uint32_t zero;
        double want_bytes; /* per parameter and step */
    } cases[] = {
        {TP_PREC_FP16, 0, 3 * ACCUM_16BIT_BYTES},
        {TP_PREC_FP16, 1, 3 * ACCUM_16BIT_BYTES},
        {TP_PREC_BF16, 1, 3 * ACCUM_16BIT_BYTES},
        {TP_PREC_BF16, 0, 4 * HP_GRADS_BYTES},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        job.precision = cases[i].prec;
        lay.zero = cases[i].zero;
        struct tp_time mds = step(TP_FW_MEGATRON_DS), mlm = step(TP_FW_MEGATRON);
        double params = fixture_memory().params;
        double want = params * cases[i].want_bytes / bw;
        double got = mds.elementwise_s - mlm.elementwise_s;
        if (!(fabs(got - want) <= 1e-9 * want))
            fail_msg("case %zu: got %.9g s, want %.9g s", i, got, want);
    }
    /* LoRA: the frozen weights get no gradient to accumulate */
    job.task = TP_TASK_LORA;
    job.precision = TP_PREC_FP16;
    lay.zero = 0;
    struct tp_time lm = step(TP_FW_MEGATRON_DS), ll = step(TP_FW_MEGATRON);
    assert_true(fabs(lm.elementwise_s - ll.elementwise_s) < 1e-12);
}

/* The pipeline's transfers (time.c): DeepSpeed's p2p.send / p2p.recv one tensor at a time.
   On 2 stages each stage has one neighbour: its activation goes out and its gradient comes in
   (or the reverse), 2 transfers per micro-batch as the model prices Megatron's; with TP the
   PartitionedTensor's meta goes first, one more NCCL latency per transfer.  At the step's end
   the two stages all-reduce the tied embedding's gradient. */
static void test_pipe_p2p(void **state)
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
    lay.gas = 8;
    struct tp_time mds = step(TP_FW_MEGATRON_DS), mlm = step(TP_FW_MEGATRON);
    double meta = tp_comm_latency(&cal, 1, 0) * (1 - cal.pp_overlap); /* one node */
    double want = lay.gas * 2 * meta;
    if (!(fabs(mds.pp_comm_s - mlm.pp_comm_s - want) <= 1e-12))
        fail_msg("got %.9g s, want %.9g s", mds.pp_comm_s - mlm.pp_comm_s, want);
    assert_true(want > 0);
    /* the tied embedding's gradient all-reduced between the two stages after the last
       backward (ReduceTiedGrads): V x h / tp 16-bit elements, 2 ranks on one node, exposed
       beside the DP reduction */
    double tied = tp_time_allreduce(&cluster, &cal, model.vocab * (double)model.hidden / 2 * 2,
                                    2, 2);
    struct ctx x;
    memset(&x, 0, sizeof x);
    x.m = &model;
    x.c = &cluster;
    x.j = &job;
    x.l = &lay;
    x.cal = &cal;
    x.h.act_bytes = 2;
    job.framework = TP_FW_MEGATRON_DS;
    for (uint32_t s = 0; s < 2; s++)
        if (!(fabs(tp_host_ds_tied_reduce(&x, s) - tied) <= 1e-15))
            fail_msg("tied, stage %u: got %.9g s, want %.9g s", s,
                     tp_host_ds_tied_reduce(&x, s), tied);
    assert_true(fabs(mds.dp_comm_s - mds.dp_comm_total_s) < 1e-15); /* all of it exposed */
    lay.pp = 3; /* a middle stage holds no tied weight */
    assert_true(tp_host_ds_tied_reduce(&x, 1) == 0);
    lay.pp = 2;
    /* without TP nothing is partitioned: no meta */
    lay.tp = 1;
    lay.dp = 4;
    mds = step(TP_FW_MEGATRON_DS);
    mlm = step(TP_FW_MEGATRON);
    assert_true(fabs(mds.pp_comm_s - mlm.pp_comm_s) < 1e-15);
}

/* The step's reduction (time.c): GPT-2 XL on 8 A100s, DP 8, one micro-batch.  DeepSpeed's
   engine reduces after the backward (allreduce_gradients; ZeRO 0/1 register no overlapping
   hooks) in the 16-bit type, so all of it is exposed, where Megatron hides most of its fp32
   reduction behind the backward.  BF16_Optimizer (bf16, ZeRO 0) all-reduces its fp32
   gradients and all-gathers the updated bf16 weights from its DP partitions. */
static void test_dp_reduce(void **state)
{
    (void)state;
    setup_run("gpt2-xl", 8);
    job.seq = 1024;
    lay.mbs = 1;
    lay.gas = 1;
    lay.zero = 0;
    job.precision = TP_PREC_FP16;
    struct tp_time mds = step(TP_FW_MEGATRON_DS), mlm = step(TP_FW_MEGATRON);
    double params = fixture_memory().params;
    uint32_t g = tp_comm_per_node(8, 1, cluster.gpus_per_node);
    double ar16 = tp_time_allreduce(&cluster, &cal, params * 2, 8, g);
    if (!(fabs(mds.dp_comm_total_s - ar16) <= 1e-12))
        fail_msg("fp16: got %.9g s, want %.9g s", mds.dp_comm_total_s, ar16);
    assert_true(fabs(mds.dp_comm_s - mds.dp_comm_total_s) < 1e-15);
    assert_true(mlm.dp_comm_s < mlm.dp_comm_total_s);
    job.precision = TP_PREC_BF16;
    mds = step(TP_FW_MEGATRON_DS);
    double bf16 = tp_time_allreduce(&cluster, &cal, params * 4, 8, g) +
                  tp_time_allgather(&cluster, &cal, params * 2, 8, g);
    if (!(fabs(mds.dp_comm_total_s - bf16) <= 1e-12))
        fail_msg("bf16: got %.9g s, want %.9g s", mds.dp_comm_total_s, bf16);
    assert_true(fabs(mds.dp_comm_s - mds.dp_comm_total_s) < 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drain_price_measured),
        cmocka_unit_test(test_pipeline_drains_tp1),
        cmocka_unit_test(test_pipeline_partitioned),
        cmocka_unit_test(test_step_checks),
        cmocka_unit_test(test_grad_accum),
        cmocka_unit_test(test_pipe_p2p),
        cmocka_unit_test(test_dp_reduce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
