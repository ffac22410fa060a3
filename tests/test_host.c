/*
 * test_host.c - the host terms of the time model (src/eval/host.c, docs/host.md) against the
 * code and measurements they come from ([MDS-CODE], [HOST-ISS]).
 *
 *   - Megatron-DeepSpeed's ParallelTransformerLayer.forward (megatron/model/transformer.py)
 *     creates two CUDA scalars with torch.tensor(0.0, device=...) in every block: two
 *     synchronizing copies (pytorch/pytorch#120996); its data path (megatron/core/
 *     tensor_parallel/data.py broadcast_data) two more per micro-batch.  When the GPU is the
 *     bottleneck each costs a host call and a launch the drained GPU waits for.
 *   - When the host is the bottleneck the first copy waits for the block's last TP collective,
 *     which no rank finishes before the slowest has issued it (NVIDIA/nccl#701).
 *   - A 70B model hides all of it behind milliseconds of GPU work per block.
 * The calibration is the priors' (eager_op_s 12 us: pytorch/pytorch#41383's 6.8 us of CPU per
 * op plus the launch), so the figures below follow from the sources alone.
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

static void setup_run(const char *preset, const char *gpu, uint32_t gpus)
{
    fixture_run(preset, gpu, gpus);
    tp_calib_prior(&cal);
}

static void step(enum tp_framework fw, struct tp_time *t)
{
    *t = fixture_step(fw);
}

static void near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.6g, want %.6g (+-%.2g%%)", got, want, 100 * rel);
}

/* GPT-2 XL (48 blocks) at micro-batch 4 and 1024 tokens on 8 A100s, no TP: every block is
   GPU-bound, so the fused Megatron-LM stack adds nothing past the per-step overhead and
   Megatron-DeepSpeed adds exactly its syncs: per block the second copy's host call and the
   launch after it, which the drained GPU waits for (the first copy's call hides behind the
   queued work); per micro-batch the data path's two syncs, a call and a launch each:
   (48 x 2 + 2 x 2) x 12 us = 1.2 ms; and DeepSpeed's engine (host_ds.c): ThroughputTimer's
   synchronize at each forward (a call and a launch) and loss_func's average over the 8 DP
   ranks (cat, divide, the all-reduce's launch and Python: 6 ops, and its NCCL latency):
   1.2 ms + 8 x 12 us + the all-reduce's latency, over the 4 micro-batches. */
static void test_syncs_gpu_bound(void **state)
{
    (void)state;
    setup_run("gpt2-xl", "a100-80gb", 8);
    job.seq = 1024;
    lay.mbs = 4;
    lay.gas = 4;
    struct tp_time fused, mds;
    step(TP_FW_MEGATRON, &fused);
    /* Megatron-Core's only host time here: its loss checks, 2 drains (2 ops each) per
       micro-batch (host_step.c) */
    near(fused.overhead_s, cal.step_overhead_s + 4 * 4 * cal.eager_op_s, 1e-12);
    step(TP_FW_MEGATRON_DS, &mds);
    double per_mb = (48 * 2 + 2 * 2) * cal.eager_op_s;
    near(per_mb, 1.2e-3, 1e-9);
    double loss_ar = tp_time_allreduce(&cluster, &cal, 4, 8, 8); /* 4 bytes: its latency */
    per_mb += 8 * cal.eager_op_s + loss_ar;
    near(mds.overhead_s - cal.step_overhead_s, 4 * per_mb, 1e-6);
}

/* GPT-2 medium (24 blocks, 0.35B) at micro-batch 1 and 1024 tokens on TP 8: the host is the
   bottleneck, and each block's first copy waits for its attention all-reduce (2 MiB of bf16
   activations over the 8 ranks), so every block exposes at least that collective beside the
   second copy's launch; without TP the same shape has no collective to wait for. */
static void test_syncs_host_bound(void **state)
{
    (void)state;
    setup_run("gpt2-medium", "a100-80gb", 8);
    job.seq = 1024;
    lay.tp = 8;
    lay.gas = 16;
    struct tp_time t;
    step(TP_FW_MEGATRON_DS, &t);
    double ar = tp_time_allreduce(&cluster, &cal, 1024.0 * 1024 * 2, 8, 8);
    /* NCCL's ring: 8.4 + 14 x 3.4 us of latency, 2 x 7/8 x 2 MiB over the NVLink bus */
    assert_true(ar > 56e-6);
    double floor = 16 * 24 * (ar + cal.eager_op_s);
    assert_true(t.overhead_s - cal.step_overhead_s >= floor);
    /* and the same run's fused stack (no syncs) exposes less host time */
    struct tp_time fused;
    step(TP_FW_MEGATRON, &fused);
    assert_true(fused.overhead_s + floor <= t.overhead_s + 1e-12);
}

/* Llama 3.1 70B at micro-batch 1 and 4096 tokens on TP 8, PP 4: milliseconds of GPU work per
   block hide the launches, the Python and the collectives' host calls; Megatron-DeepSpeed's
   copies cost 20 blocks x 2 launches per micro-batch (31 ms over 64) and its data path's syncs
   and TP broadcasts about 0.25 ms per micro-batch more: under 1% of the 8 s step. */
static void test_large_model_unmoved(void **state)
{
    (void)state;
    setup_run("llama-3.1-70b", "h100-sxm", 64);
    job.seq = 4096;
    lay.tp = 8;
    lay.pp = 4;
    lay.sp = true;
    lay.gas = 64;
    struct tp_time t;
    step(TP_FW_MEGATRON, &t);
    /* the last stage's loss checks alone (host_step.c): 2 drains per micro-batch */
    near(t.overhead_s, cal.step_overhead_s + 64 * 4 * cal.eager_op_s, 1e-12);
    step(TP_FW_MEGATRON_DS, &t);
    double extra = t.overhead_s - cal.step_overhead_s;
    assert_true(extra > 0);
    assert_true(extra > 20 * 2 * 64 * cal.eager_op_s);
    assert_true(extra < 0.01 * t.step_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syncs_gpu_bound),
        cmocka_unit_test(test_syncs_host_bound),
        cmocka_unit_test(test_large_model_unmoved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
