/*
 * test_async_tp.c - the backward tensor-parallel all-reduce run beside the weight-gradient GEMM
 * (src/eval/time_block.c tp_async_hidden), as each stack and era ran it.
 *
 * Counted from the code: Megatron-LM's ColumnParallelLinear since 2021-09 (NVIDIA/Megatron-LM
 * cf7efd4f, merged as b462d25), Megatron-Core's LinearWithGradAccumulationAndAsyncCommunication
 * (core_r0.8.0 megatron/core/tensor_parallel/layers.py) and Transformer Engine's linear modules
 * ("Overlap dgrad-RS/AR with wgrad") issue the input gradient's all-reduce (with sequence
 * parallelism its reduce-scatter) with async_op=True, run the weight-gradient GEMM, then wait.
 * A block has two column-parallel linears (QKV, fc1), so per block and micro-batch two
 * backward collectives of C seconds each run beside a weight-gradient GEMM.  While one runs,
 * NCCL's 24 channels hold 24 of the A100's 108 SMs (NVIDIA/nccl-tests#100; NVIDIA/nccl#689:
 * NCCL's CTAs do not share an SM with compute), so the GEMM advances at 84/108 and the pair
 * hides min(wgrad, (1 - 24/108) C) of the collective.  Megatron-DeepSpeed never does this
 * (megatron/arguments.py sets async_tensor_model_parallel_allreduce = False under --deepspeed,
 * microsoft/Megatron-DeepSpeed f90b8877), nor Megatron-LM of 2020 and April 2021.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run_fixture.h"

/* NCCL's ring channels on an HGX A100 over NVSwitch (see the header) and the A100's SMs */
#define NCCL_SMS 24.0
#define A100_SMS 108.0

static void near(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
}

/* An all-reduce of `bytes` over n GPUs of one NVLink node, from the calibration's constants
   (the model's ring, src/eval/comm.c). */
static double ring_allreduce(double bytes, double n)
{
    double lat = cal.lat_base_s + 2 * (n - 1) * cal.lat_intra_s;
    return lat + 2 * (n - 1) / n * bytes / (cluster.gpu.intra_bw * cal.eff_intra);
}

/* GPT-3 175B (96 x 12288) at TP 8 on one A100 node, micro-batch 1 x 2048, 4 micro-batches:
   each column-parallel weight gradient (QKV: 2048 x 12288 x 4608, about 0.9 ms; fc1 larger)
   outlasts its 50 MB all-reduce (about 0.4 ms), so each of the 2 x 96 backward all-reduces
   per micro-batch costs only the SM share NCCL takes from the GEMM: exactly (1 - 24/108) C
   less than run alone.  With sequence parallelism the part beside the GEMM is the
   reduce-scatter, half the all-gather + reduce-scatter pair. */
static void test_large_gemm_hides_all_but_the_sm_share(void **state)
{
    (void)state;
    fixture_run("gpt3-175b", "a100-80gb", 8);
    job.seq = 2048;
    lay.tp = 8;
    lay.mbs = 1;
    lay.gas = 4;
    double c = ring_allreduce(2048.0 * 12288 * 2, 8);
    double hidden = (1 - NCCL_SMS / A100_SMS) * c;
    job.no_async_tp_allreduce = true;
    struct tp_time off = fixture_step(TP_FW_MEGATRON);
    job.no_async_tp_allreduce = false;
    struct tp_time on = fixture_step(TP_FW_MEGATRON);
    near("TP time hidden, all-reduce", off.tp_comm_s - on.tp_comm_s,
         lay.gas * 96 * 2 * hidden, 1e-6);
    assert_true(on.step_s < off.step_s);

    lay.sp = true;
    job.no_async_tp_allreduce = true;
    off = fixture_step(TP_FW_MEGATRON);
    job.no_async_tp_allreduce = false;
    on = fixture_step(TP_FW_MEGATRON);
    near("TP time hidden, SP reduce-scatter", off.tp_comm_s - on.tp_comm_s,
         lay.gas * 96 * 2 * hidden / 2, 1e-6);
}

/* GPT-2 medium (24 x 1024) at TP 8, micro-batch 1 x 1024 (issue 36's small-model regime):
   the QKV weight gradient (1024 x 1024 x 384) takes a few microseconds against an all-reduce
   of 2 MB in tens: the GEMM caps what hides, so the step saves less than the SM-share bound
   and more than nothing. */
static void test_small_gemm_caps_the_overlap(void **state)
{
    (void)state;
    fixture_run("gpt2-medium", "a100-80gb", 8);
    job.seq = 1024;
    job.precision = TP_PREC_FP16;
    lay.tp = 8;
    lay.mbs = 1;
    lay.gas = 8;
    double c = ring_allreduce(1024.0 * 1024 * 2, 8);
    double bound = lay.gas * 24 * 2 * (1 - NCCL_SMS / A100_SMS) * c;
    job.no_async_tp_allreduce = true;
    struct tp_time off = fixture_step(TP_FW_MEGATRON);
    job.no_async_tp_allreduce = false;
    struct tp_time on = fixture_step(TP_FW_MEGATRON);
    double saved = off.tp_comm_s - on.tp_comm_s;
    assert_true(saved > 0);
    assert_true(saved < 0.5 * bound);
    print_message("GPT-2 medium TP 8: %.3g s of the TP time hidden, bound %.3g s\n", saved, bound);
}

/* Megatron-DeepSpeed never overlaps: its TP time is the flag's "off" under Megatron-Core.
   --tp-comm-overlap (Transformer Engine's userbuffers) keeps its own pricing, a share of all
   the TP time (tp_overlap), not this one on top of it. */
static void test_stacks_that_do_not(void **state)
{
    (void)state;
    fixture_run("gpt3-175b", "a100-80gb", 8);
    job.seq = 2048;
    job.precision = TP_PREC_FP16;
    lay.tp = 8;
    lay.mbs = 1;
    lay.gas = 4;
    struct tp_time mds = fixture_step(TP_FW_MEGATRON_DS);
    job.no_async_tp_allreduce = true;
    struct tp_time mds_flag = fixture_step(TP_FW_MEGATRON_DS);
    struct tp_time off = fixture_step(TP_FW_MEGATRON);
    near("Megatron-DeepSpeed, flag or not", mds.tp_comm_s, mds_flag.tp_comm_s, 1e-12);
    near("Megatron-DeepSpeed = Megatron-Core without async", mds.tp_comm_s, off.tp_comm_s, 1e-9);

    lay.sp = true;
    job.tp_comm_overlap = true;
    job.no_async_tp_allreduce = false;
    struct tp_time ub = fixture_step(TP_FW_MEGATRON);
    job.no_async_tp_allreduce = true;
    struct tp_time ub_off = fixture_step(TP_FW_MEGATRON);
    near("userbuffers: the flag changes nothing", ub.tp_comm_s, ub_off.tp_comm_s, 1e-12);
}

struct era {
    unsigned rows, off;
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    (void)path;
    (void)line;
    struct era *e = ctx;
    if (!why) {
        e->rows++;
        e->off += run->job.no_async_tp_allreduce;
    }
    return true;
}

/* The runs reader's era rule: Megatron-LM rows of 2020 and 2021-01/04 ran no async path
   (it merged 2021-09); the 2022 selective-recompute rows did. */
static void test_runs_era_rule(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct era e2020 = {0, 0}, e2021 = {0, 0}, e2022 = {0, 0};
    assert_int_equal(tp_runs_read("data/runs/megatron_lm_2020_gpt2_scaling.csv", on_row, &e2020,
                                  &err), TP_OK);
    assert_int_equal(tp_runs_read("data/runs/megatron_lm_2021_a100_weak_scaling.csv", on_row,
                                  &e2021, &err), TP_OK);
    assert_int_equal(tp_runs_read("data/runs/megatron_korthikanti2022_selective_recompute.csv",
                                  on_row, &e2022, &err), TP_OK);
    assert_true(e2020.rows > 0 && e2020.off == e2020.rows);
    assert_true(e2021.rows > 0 && e2021.off == e2021.rows);
    assert_true(e2022.rows > 0 && e2022.off == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_gemm_hides_all_but_the_sm_share),
        cmocka_unit_test(test_small_gemm_caps_the_overlap),
        cmocka_unit_test(test_stacks_that_do_not),
        cmocka_unit_test(test_runs_era_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
