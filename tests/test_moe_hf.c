/*
 * test_moe_hf.c - the Hugging Face MoE stack under DeepSpeed ZeRO-3 (src/eval/moe_hf.c,
 * docs/moe.md "The Hugging Face stack").
 *
 * Sources:
 *   [HF-MOE]    Qwen/Qwen3-30B-A3B as transformers 4.x builds it: 18,867 tensors
 *               (docs/checkpoint.md), one gate/up/down projection per expert.
 *   [AX-Z3]     Axolotl's zero3 JSONs set sub_group_size 0; MOE_ARCH_BLOCK marks qwen3_moe a
 *               leaf (PR #2596, v0.10.0).
 *   [DS-Z3STEP] stage3.py: one sub-group per tensor at sub_group_size 0, each walking every
 *               tensor in zero_grad (issue #8586); offloaded optimizers skip that path.
 *   [DS-HOOK]   DeepSpeed v0.17.1 stage_1_and_2.py: a Python gradient hook per trainable tensor,
 *               each micro-batch's backward under ZeRO-2 (narrow, copy_, view_as into the
 *               reduce bucket).
 *   [SWIFT]     modelscope/ms-swift docs/source_en/Instruction/Megatron-SWIFT-Training.md
 *               § Benchmark (5df8180fd, 2025-07-03): Qwen1.5-MoE-A2.7B full SFT on 8 x A800,
 *               DeepSpeed ZeRO-2 6.02 s/it (data/runs/public_hf_stacks.csv swiftbench:4, never
 *               fitted).
 *   users000 (data/runs/users_mi300x_runs.csv, notes 000/001): Qwen3-30B-A3B SFT on 8 MI300X,
 *               ZeRO-3 ~700 trainable tokens/s per GPU (~38 h), ZeRO-2 + ep 2 ~15 h for the
 *               same data.
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

/* The users' SFT as their notes give it: Axolotl, 8 MI300X, AdamW-8bit, seq 8k, mbs 16, full
   recompute, Liger's fused loss, trainable tokens. */
static void setup(const char *preset, uint32_t zero, uint32_t ep)
{
    fixture_run(preset, "mi300x", 8);
    job.framework = TP_FW_AXOLOTL;
    job.task = TP_TASK_SFT;
    job.optimizer = TP_OPT_ADAMW_8BIT;
    job.seq = 8192;
    job.fused_loss = true;
    job.trainable_frac = 0.61; /* SFT: the trainable share of the token slots */
    lay.dp = 8;
    lay.zero = zero;
    lay.ep = ep;
    lay.mbs = 16;
    lay.recompute = TP_RECOMPUTE_FULL;
    fixture_check();
}

static struct tp_time step(void)
{
    struct tp_time t;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    return t;
}

/* The tensors DeepSpeed sees: Qwen3-30B-A3B's 18,867 as transformers 4.x builds it; stacked
   (grouped kernels) 48 blocks of 12 plus the embedding, final norm and head. */
static void test_tensor_count(void **state)
{
    (void)state;
    setup("qwen3-30b-a3b", 3, 1);
    assert_true(tp_hf_param_tensors(&model, false) == 18867);
    assert_true(tp_hf_param_tensors(&model, true) == 48 * 12 + 3);
}

/* Axolotl's ZeRO-3 on Qwen3-30B-A3B: a leaf block (no per-expert fetches) and the optimizer
   step's walk over 18,867 sub-groups x 18,867 tensors, at the measured 0.13 us per visit
   (moe_hf.c [DEV-2611]).  The users measured ~700 trainable tokens/s per
   GPU (notes 000): it must lie inside the prediction's 80% range, and ZeRO-2 + ep 2 must come
   out faster by the measured 38 h / 15 h = 2.53x within 20%.  (With the walk's per-visit time
   an estimate, 0.2 us, this pinned the prediction within 25% of 700; measured, the walk leaves
   the prediction 55% fast, about as fast as the ZeRO-2 run's 42%: docs/moe.md.) */
static void test_users_zero3(void **state)
{
    (void)state;
    setup("qwen3-30b-a3b", 3, 1);
    assert_true(tp_job_z3_leaf(&model, &job));
    struct tp_time z3 = step();
    assert_true(z3.optimizer_s > 0.5 * z3.step_s);
    double tps3 = z3.tokens_per_s_per_gpu;
    struct tp_range r;
    tp_time_range(&model, &cluster, &job, &lay, 0, &r);
    printf("  ZeRO-3: %.0f trainable tokens/s per GPU [%.0f - %.0f] (optimizer %.1f s of %.1f s), "
           "measured 700\n", tps3, tps3 * r.lo, tps3 * r.hi, z3.optimizer_s, z3.step_s);
    assert_true(tps3 * r.lo <= 700 && 700 <= tps3 * r.hi);
    setup("qwen3-30b-a3b", 2, 2);
    struct tp_time z2 = step();
    double ratio = z2.tokens_per_s_per_gpu / tps3, measured = 38.0 / 15.0;
    printf("  ZeRO-2 + ep 2 over ZeRO-3: %.2f, measured %.2f\n", ratio, measured);
    assert_true(fabs(ratio / measured - 1) <= 0.20);
}

/* The walk is DeepSpeed ZeRO-3's non-offloaded path at sub_group_size 0: ZeRO-2 has none, an
   offloaded optimizer skips it (its sub-groups' kernels remain), DeepSpeed's default 1e9 leaves a handful of sub-groups, and it
   is paid once per optimizer step, so more micro-batches per step spread it. */
static void test_walk_scope(void **state)
{
    (void)state;
    setup("qwen3-30b-a3b", 3, 1);
    double walk = step().optimizer_s;
    lay.gas = 8;
    assert_true(fabs(step().optimizer_s - walk) < 1e-9);
    lay.gas = 1;
    job.framework = TP_FW_DEEPSPEED;
    job.z3_leaf = true;
    assert_true(step().optimizer_s < 0.01 * walk);
    setup("qwen3-30b-a3b", 3, 1);
    lay.offload = TP_OFFLOAD_OPTIMIZER;
    assert_true(step().optimizer_s < 0.5 * walk);
    setup("qwen3-30b-a3b", 2, 2);
    assert_true(step().optimizer_s < 0.01 * walk);
}

static bool swift_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                      const struct tp_error *why)
{
    (void)path;
    (void)line;
    if (!why && strcmp(run->row_id, "swiftbench:4") == 0) {
        *(struct tp_run *)ctx = *run;
        return false;
    }
    return true;
}

/* [DS-HOOK], [SWIFT]: Qwen1.5-MoE-A2.7B holds 60 experts x 3 projections in each of 24 blocks,
   4,320 tensors whose hooks run in the Hugging Face loop's host-bound backward every
   micro-batch.  With them ms-swift's ZeRO-2 step is predicted within 12% of the measured
   6.02 s (without them: 5.08 s, 16% short). */
static void test_zero2_grad_hooks(void **state)
{
    (void)state;
    static struct tp_run run;
    struct tp_error err = {{0}, {0}};
    run.row_id[0] = 0;
    if (tp_runs_read("data/runs/public_hf_stacks.csv", swift_row, &run, &err) != TP_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(run.row_id, "swiftbench:4");
    tp_calib_init(&cal);
    struct tp_run_eval e;
    tp_run_evaluate(&run, &cal, &e);
    if (!(fabs(e.predicted_step_s / 6.02 - 1) <= 0.12))
        fail_msg("ZeRO-2 step %.2f s, measured 6.02 s", e.predicted_step_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_count),
        cmocka_unit_test(test_users_zero3),
        cmocka_unit_test(test_walk_scope),
        cmocka_unit_test(test_zero2_grad_hooks),
    };
    return cmocka_run_group_tests_name("moe_hf", tests, NULL, NULL);
}
