/*
 * test_moe_host.c - the host sync of Megatron-Core's dropless token dispatcher
 * (src/eval/moe_host.c; docs/moe.md "The dropless dispatcher's host sync").
 *
 * Sources:
 *   [MCORE-SYNC] NVIDIA/Megatron-LM e4b7259801 (2025-11-20),
 *            megatron/core/transformer/moe/token_dispatcher.py: MoEAlltoAllTokenDispatcher
 *            .preprocess sets the sync point "before_ep_alltoall" when dropless with ep > 1;
 *            under moe_pad_expert_input_to_capacity (drop_and_pad) the counts come from the
 *            capacity and _maybe_dtoh_and_synchronize neither copies nor waits ("no_sync").
 *   [MB-CG]  NVIDIA-NeMo/Megatron-Bridge docs/training/cuda-graphs.md (PR #3868, 2026-05-18),
 *            "Mid-sized MoE pretrain": Qwen3 30B A3B, H100, BF16, all-to-all dispatcher,
 *            2 nodes x 8 GPUs, EP 16, TP/PP/CP 1, MBS 1, GBS 1024 (the PR's handoff), eager
 *            replay iterations averaged 41.36 s per step, and 42.00 s with TE-scoped CUDA graphs
 *            of attn + moe_router + moe_preprocess: removing the launches before the sync did
 *            not shorten the step.
 *   [MB-OVL] NVIDIA-NeMo/Megatron-Bridge PR #3862 (2026-05-16): the same shape, "alltoall, no
 *            EP overlap", 41.25 s steady mean of iterations 3-8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>

#include "run_fixture.h"

/* [MB-CG]'s run: Qwen3-30B-A3B on 16 H100 (8 per node), EP 16, MBS 1, GBS 1024, seq 4096,
   BF16, Megatron-Core's alltoall dispatcher, balanced routing; dropless, or padded to a
   capacity factor of 1 (which moves the same rows when the routing is balanced). */
static void bridge_step(bool padded, struct tp_time *t)
{
    fixture_run("qwen3-30b-a3b", "h100-sxm", 16);
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_BF16;
    job.seq = 4096;
    job.moe_imbalance = 1.0;
    job.moe_capacity = padded ? 1.0 : 0;
    job.moe_pad_capacity = padded;
    lay.dp = 16;
    lay.ep = 16;
    lay.mbs = 1;
    lay.gas = 64; /* 1024 / (1 x 16) */
    lay.zero = 1;
    fixture_check();
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, t), TP_OK);
}

/* [MB-CG], [MB-OVL]: the dropless run measured 41.36 s and 41.25 s per step.  The prediction,
   the sync included, is 35.7 s (13.7% short: the model's error on a run it never saw, inside
   the 25% p90 of bench_calibrate's leave-one-source-out); the sync itself is pinned below. */
static void test_bridge_dropless_step(void **state)
{
    (void)state;
    struct tp_time t;
    bridge_step(false, &t);
    assert_true(fabs(t.step_s / 41.36 - 1) < 0.15);
    assert_true(fabs(t.step_s / 41.25 - 1) < 0.15);
}

/* [MCORE-SYNC]: the dropless dispatcher waits once per MoE layer and forward, the padded one
   never; [MB-CG]: in this exchange-bound run the host before the sync is off the critical path
   (CUDA graphs of it moved the step by +1.5%, 41.36 to 42.00 s), so the wait may cost the step
   no more than that, and it does cost something. */
static void test_sync_only_dropless(void **state)
{
    (void)state;
    struct tp_time dropless, padded;
    bridge_step(false, &dropless);
    bridge_step(true, &padded);
    double extra = dropless.step_s - padded.step_s;
    assert_true(extra > 0);
    assert_true(extra < (42.00 - 41.36) / 41.36 * dropless.step_s);
    /* the compute is the same rows either way; only the host's wait differs */
    assert_true(fabs(dropless.fwd_s - padded.fwd_s) < 1e-9 * dropless.fwd_s);
    assert_true(dropless.overhead_s > padded.overhead_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bridge_dropless_step),
        cmocka_unit_test(test_sync_only_dropless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
