/*
 * test_fit_plan.c - calibrate's fast path gives the figures of the plain one: a run's time plan
 * (the calibration-independent work done once, src/eval/time.c) prices it to the bit as
 * tp_time_step does, for dense, pipelined, interleaved, recomputed, MoE, LoRA and eager runs
 * and for calibrations the plan was not recorded with; and the fit with its folds on threads
 * (tp_calib_fit_validate) gives the calibration and held-out errors of tp_calib_fit and
 * tp_calib_cross_validate run one after the other on one thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fit_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N_COLS = 24 };
static const char *const COLS[N_COLS] = {
    "row_id",       "arch",        "n_layers",       "hidden",         "n_heads",
    "kv_heads",     "ffn_hidden",  "vocab",          "seq_len",        "gpu_type",
    "num_gpus",     "tp",          "pp",             "micro_batch",    "global_batch",
    "precision",    "framework_key", "zero_or_fsdp", "recompute",      "vpp",
    "moe_num_experts", "moe_topk", "moe_ffn_hidden", "ep"};

/* A row of the runs file (docs/runs-file.md): a Llama-style model or, with experts, a
   Mixtral-style one. */
static void row(struct tp_run *run, const char *const cells[N_COLS])
{
    struct tp_error err = {{0}, {0}};
    size_t n = 0;
    const char *c[N_COLS], *v[N_COLS];
    for (size_t i = 0; i < N_COLS; i++)
        if (cells[i][0]) { /* empty cells are left out: the column's default */
            c[n] = COLS[i];
            v[n++] = cells[i];
        }
    enum tp_status st = tp_run_from_row(c, v, n, run, &err);
    if (st != TP_OK)
        fprintf(stderr, "%s: %s\n", cells[0], err.msg);
    assert_int_equal(st, TP_OK);
}

enum { N_RUNS = 7 };
static struct tp_run runs[N_RUNS];

static void make_runs(void)
{
    static const char *const cells[N_RUNS][N_COLS] = {
        /* dense, one stage */
        {"a:1", "llama", "32", "4096", "32", "8", "14336", "128256", "8192", "h100-sxm", "8",
         "2", "1", "1", "64", "bf16", "megatron", "megatron-distopt", "", "", "", "", "", ""},
        /* 80 blocks over 8 stages: stages 2-6 repeat stage 1; full recompute */
        {"a:2", "llama", "80", "8192", "64", "8", "28672", "128256", "4096", "h100-sxm", "512",
         "8", "8", "1", "512", "bf16", "megatron", "megatron-distopt", "full", "", "", "", "",
         ""},
        /* interleaved, selective recompute, fp8 */
        {"b:1", "llama", "96", "12288", "96", "8", "49152", "50257", "2048", "h100-sxm",
         "1024", "8", "8", "1", "1536", "fp8", "megatron", "megatron-distopt", "selective", "3",
         "", "", "", ""},
        /* MoE with expert parallelism */
        {"b:2", "mixtral", "32", "4096", "32", "8", "14336", "32000", "4096", "h100-sxm", "64",
         "2", "4", "1", "256", "bf16", "megatron", "megatron-distopt", "", "", "8", "2",
         "14336", "8"},
        /* FSDP on A100 */
        {"c:1", "llama", "28", "3072", "24", "8", "8192", "128256", "4096", "a100-80gb", "16",
         "1", "1", "2", "128", "bf16", "fsdp", "fsdp-full", "full", "", "", "", "", ""},
        /* DeepSpeed ZeRO-3 MoE (an eager expert loop) */
        {"c:2", "mixtral", "32", "4096", "32", "8", "14336", "32000", "4096", "h100-sxm", "16",
         "1", "1", "1", "64", "bf16", "deepspeed", "3", "full", "", "8", "2", "14336", ""},
        /* the same configuration as a:1 under another source: one plan serves both */
        {"c:3", "llama", "32", "4096", "32", "8", "14336", "128256", "8192", "h100-sxm", "8",
         "2", "1", "1", "64", "bf16", "megatron", "megatron-distopt", "", "", "", "", "", ""},
    };
    for (int i = 0; i < N_RUNS; i++)
        row(&runs[i], cells[i]);
}

static void test_plan_matches_step(void **state)
{
    (void)state;
    make_runs();
    static struct tp_calib cal[3];
    tp_calib_prior(&cal[0]);
    tp_calib_init(&cal[1]);
    cal[2] = cal[1];
    cal[2].tile_m = 64; /* not the tiles the plan recorded: priced without the tape */
    cal[2].gemm_scale = 0.6;
    static struct tp_time_plan plan;
    static struct tp_time_stage stages[TP_MAX_LAYERS];
    for (int i = 0; i < N_RUNS; i++) {
        const struct tp_run *r = &runs[i];
        assert_int_equal(tp_time_plan_init(&plan, &r->model, &r->cluster, &r->job, &r->layout,
                                           &cal[1], stages),
                         TP_OK);
        assert_true(plan.taped);
        for (int k = 0; k < 3; k++) {
            struct tp_time a, b;
            enum tp_status sa = tp_time_step(&r->model, &r->cluster, &r->job, &r->layout,
                                             &cal[k], &a);
            enum tp_status sb = tp_time_planned(&plan, &cal[k], &b);
            assert_int_equal(sa, sb);
            assert_true(a.step_s > 0);
            assert_memory_equal(&a, &b, sizeof a);
        }
        if (r->layout.pp == 8 && r->layout.vpp == 1) /* the middle stages repeat stage 1 */
            for (uint32_t s = 0; s < 8; s++)
                assert_int_equal(stages[s].same_as_prev, s >= 2 && s <= 6);
    }
    /* rows on one configuration share a plan (c:3 is a:1 under another source) */
    const struct tp_run *ptr[N_RUNS];
    for (int i = 0; i < N_RUNS; i++)
        ptr[i] = &runs[i];
    struct tp_fit_plans ps;
    assert_int_equal(tp_fit_plans_build(ptr, N_RUNS, &cal[1], &ps), TP_OK);
    assert_ptr_equal(ps.ptr[6], ps.ptr[0]);
    for (int i = 1; i < 6; i++)
        assert_ptr_equal(ps.ptr[i], &ps.plans[i]);
    tp_fit_plans_free(&ps);
    /* a zeroed layout is rejected by the plan as by tp_time_step: NaN figures */
    struct tp_layout zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(tp_time_plan_init(&plan, &runs[0].model, &runs[0].cluster, &runs[0].job,
                                       &zero, &cal[1], stages),
                     TP_EINVAL);
    struct tp_time t;
    assert_int_equal(tp_time_planned(&plan, &cal[1], &t), TP_EINVAL);
    assert_true(isnan(t.tokens_per_s_per_gpu));
}

static void test_fit_validate_matches(void **state)
{
    (void)state;
#ifdef TP_NO_GSL
    print_message("skipped: built without GSL (make NO_GSL=1): no fit\n");
    skip();
#endif
    make_runs();
    static struct tp_calib truth, prior, one, both;
    tp_calib_prior(&prior);
    truth = prior;
    truth.gemm_scale = 0.7;
    truth.mem_eff = 0.45;
    const struct tp_run *ptr[N_RUNS];
    double meas[N_RUNS];
    for (int i = 0; i < N_RUNS; i++) {
        struct tp_time t;
        tp_time_step(&runs[i].model, &runs[i].cluster, &runs[i].job, &runs[i].layout, &truth,
                     &t);
        ptr[i] = &runs[i];
        meas[i] = t.tokens_per_s_per_gpu * (i % 2 ? 1.05 : 0.97); /* not exactly the model */
    }
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    o.samples = 32;
    o.max_evals = 300;
    o.threads = 1;
    struct tp_fit_result r1, r2;
    struct tp_error err;
    double held1[N_RUNS], held2[N_RUNS];
    assert_int_equal(tp_calib_fit(ptr, meas, N_RUNS, &prior, &o, &one, &r1, &err), TP_OK);
    assert_int_equal(tp_calib_cross_validate(ptr, meas, N_RUNS, &prior, &o, held1, &err), TP_OK);
    o.threads = 3;
    assert_int_equal(
        tp_calib_fit_validate(ptr, meas, N_RUNS, &prior, &o, &both, &r2, held2, &err), TP_OK);
    assert_memory_equal(&one, &both, sizeof one);
    assert_int_equal(r1.evaluations, r2.evaluations);
    assert_float_equal(r1.objective_after, r2.objective_after, 0);
    for (int i = 0; i < N_RUNS; i++) {
        assert_false(isnan(held1[i])); /* three sources: every row is held out once */
        assert_memory_equal(&held1[i], &held2[i], sizeof held1[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_matches_step),
        cmocka_unit_test(test_fit_validate_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
