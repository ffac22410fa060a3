/*
 * test_hardening.c - hostile inputs at the library's boundaries (issue 22): each case once
 * crashed, hung or printed an impossible figure; each now gets TP_EINVAL with a message naming
 * the field, or a dropped figure, and the figures that are returned are physically possible.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A runs-file row: torchtitan_benchmarks:1 of data/runs (Llama 3.1 8B, 8 H100,
   FSDP), with the cells under test replaced. */
static enum tp_status row(const char *const *names, const char *const *values, size_t n_over,
                          struct tp_run *run, struct tp_error *err)
{
    static const char *const cols[] = {
        "row_id", "model", "n_layers", "hidden", "n_heads", "kv_heads", "ffn_hidden", "vocab",
        "seq_len", "gpu_type", "num_gpus", "gpus_per_node", "tp", "pp", "dp", "cp",
        "zero_or_fsdp", "micro_batch", "global_batch", "recompute", "precision", "arch",
        "framework_key", "tokens_per_s_per_gpu"};
    enum { N = sizeof cols / sizeof cols[0] };
    const char *cells[N] = {"t:1", "Llama 3.1 8B", "32", "4096", "32", "8", "14336", "128256",
                            "8192", "h100-96gb", "8", "8", "1", "1", "8", "1", "fsdp-full", "2",
                            "16", "selective", "bf16", "llama", "torchtitan", "5762"};
    for (size_t i = 0; i < n_over; i++)
        for (size_t k = 0; k < N; k++)
            if (strcmp(cols[k], names[i]) == 0)
                cells[k] = values[i];
    return tp_run_from_row(cols, cells, N, run, err);
}

static void expect_row_error(const char *const *names, const char *const *values, size_t n,
                             const char *field)
{
    struct tp_run *run = malloc(sizeof *run);
    struct tp_error err = {{0}, {0}};
    assert_non_null(run);
    assert_int_equal(row(names, values, n, run, &err), TP_EINVAL);
    if (!strstr(err.msg, field))
        fail_msg("\"%s\" does not name %s", err.msg, field);
    free(run);
}

static void test_runs_zero_and_wrapping_counts(void **state)
{
    (void)state;
    struct tp_run *run = malloc(sizeof *run);
    struct tp_error err = {{0}, {0}};
    assert_int_equal(row(NULL, NULL, 0, run, &err), TP_OK); /* the row as published maps */
    free(run);
    /* tp and pp empty: resolve_split divides by cp, num_gpus and gpus_per_node (SIGFPE) */
    const char *split[] = {"tp", "pp", "cp"};
    expect_row_error(split, (const char *[]){"", "", "0"}, 3, "cp");
    const char *gpus[] = {"tp", "pp", "num_gpus"};
    expect_row_error(gpus, (const char *[]){"", "", "0"}, 3, "num_gpus");
    const char *gpn[] = {"tp", "pp", "gpus_per_node"};
    expect_row_error(gpn, (const char *[]){"", "", "0"}, 3, "gpus_per_node");
    /* dp * cp = 2^32 wrapped to 0 in 32 bits */
    const char *wrap[] = {"tp", "pp", "dp", "cp"};
    expect_row_error(wrap, (const char *[]){"", "", "65536", "65536"}, 4, "num_gpus");
    /* NULL arrays: an error, not a crash */
    run = malloc(sizeof *run);
    assert_int_equal(tp_run_from_row(NULL, NULL, 3, run, &err), TP_EINVAL);
    free(run);
}

static void test_time_step_rejects_unchecked_inputs(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_calib *cal = malloc(sizeof *cal);
    struct tp_error err;
    struct tp_time t;
    assert_non_null(cal);
    tp_calib_init(cal);
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &m, &err), TP_OK);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 8, &err), TP_OK);
    tp_job_init(&j);
    memset(&l, 0, sizeof l); /* zeroed: every size 0 (once a division by zero) */
    assert_int_equal(tp_time_step(&m, &c, &j, &l, cal, &t), TP_EINVAL);
    assert_true(isnan(t.step_s));
    struct tp_memory mem;
    assert_int_equal(tp_memory_stage(&m, &c, &j, &l, 0, &mem), TP_EINVAL);
    tp_layout_init(&l);
    assert_int_equal(tp_layout_check(&m, &c, &j, &l, &err), TP_OK);
    assert_int_equal(tp_time_step(&m, &c, &j, &l, cal, &t), TP_OK);
    assert_true(t.step_s > 0 && isfinite(t.step_s) && t.mfu > 0 && t.mfu <= 1);
    struct tp_cluster zero = c;
    zero.gpus_per_node = 0;
    assert_int_equal(tp_time_step(&m, &zero, &j, &l, cal, &t), TP_EINVAL);
    assert_int_equal(tp_time_step(&m, &c, &j, &l, NULL, &t), TP_EINVAL);
    free(cal);
}

/* Zeroed structs into the other public entry points: once a SIGSEGV (FLOPs of an unfinalized
   model) and SIGFPEs (stage blocks with pp 0, collectives with 0 ranks per node). */
static void test_public_entry_points_zeroed(void **state)
{
    (void)state;
    static struct tp_model m;
    static struct tp_cluster c;
    static struct tp_job j;
    static struct tp_layout l;
    static struct tp_calib cal;
    struct tp_flops f;
    struct tp_error err;
    memset(&m, 0, sizeof m);
    assert_int_equal(tp_flops_per_token(&m, 2048, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f, &err),
                     TP_EINVAL);
    assert_int_equal(tp_stage_blocks(&m, &l, 0), 0);
    assert_true(isnan(tp_time_allgather(&c, &cal, 1e9, 8, 0)));
    assert_true(isnan(tp_time_alltoall(&c, &cal, 1e9, 8, 0)));
    struct tp_search_opts o;
    tp_search_opts_init(&o);
    o.gbs = 64;
    c.n_gpus = 8;
    struct tp_search_hit hits[4];
    struct tp_search_stats st;
    size_t n = 99;
    assert_int_equal(tp_search(&m, &c, &j, &o, &cal, hits, 4, &n, &st, &err), TP_EINVAL);
    assert_int_equal(n, 0);
}

/* Checks the layout of llama-3.1-8b on 8 `gpu` at `prec`; returns the status, *t the time. */
static enum tp_status precision_on(const char *gpu, enum tp_precision prec, struct tp_time *t,
                                   struct tp_error *err)
{
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &m, err), TP_OK);
    assert_int_equal(tp_cluster_init(&c, gpu, 8, err), TP_OK);
    tp_job_init(&j);
    j.precision = prec;
    tp_layout_init(&l);
    l.zero = 3;
    enum tp_status st = tp_layout_check(&m, &c, &j, &l, err);
    if (st != TP_OK)
        return st;
    struct tp_calib *cal = malloc(sizeof *cal);
    assert_non_null(cal);
    tp_calib_init(cal);
    st = tp_time_step(&m, &c, &j, &l, cal, t);
    free(cal);
    return st;
}

static void test_precision_needs_the_unit(void **state)
{
    (void)state;
    struct tp_time t;
    struct tp_error err = {{0}, {0}};
    /* Gaudi 2 lists no fp32/tf32 matrix rate (Intel Gaudi 2 spec via [MLE]): once an infinite
       step, 0 tokens/s and -nan% shares */
    assert_int_equal(precision_on("gaudi2", TP_PREC_FP32, &t, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "fp32"));
    /* A100 has no FP8 tensor cores (NVIDIA A100 datasheet: TF32, BF16/FP16, INT8 only): once
       silently priced as bf16 */
    assert_int_equal(precision_on("a100-80gb", TP_PREC_FP8, &t, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "fp8"));
    /* fp32 GEMMs run as TF32 and MFU is against the TF32 peak: 156 TFLOP/s on A100 and
       494.7 on H100 SXM (datasheets, dense); once 434% and 291% against the FP32 peak */
    assert_int_equal(precision_on("a100-80gb", TP_PREC_FP32, &t, &err), TP_OK);
    assert_true(t.peak_flops == 156e12 && t.mfu > 0 && t.mfu <= 1);
    assert_int_equal(precision_on("h100-sxm", TP_PREC_FP32, &t, &err), TP_OK);
    assert_true(t.mfu > 0 && t.mfu <= 1);
}

static void expect_config_error(const char *json, const char *field)
{
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_hf_json(json, strlen(json), "t.json", &m, &err), TP_EINVAL);
    if (!strstr(err.msg, field))
        fail_msg("\"%s\" does not name %s", err.msg, field);
}

static void test_config_numbers_in_range_before_use(void **state)
{
    (void)state;
    /* a real past long long's range: checked as a double (undefined behaviour before) */
    expect_config_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": "
                        "64, \"num_attention_heads\": 4, \"intermediate_size\": 128, "
                        "\"vocab_size\": 1.5e38}",
                        "vocab_size");
    /* 1024 shared experts of width 2^22: 2^32 wrapped to 0 shared parameters */
    expect_config_error("{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 2, "
                        "\"hidden_size\": 64, \"num_attention_heads\": 4, "
                        "\"intermediate_size\": 128, \"vocab_size\": 1000, "
                        "\"num_experts\": 8, \"num_experts_per_tok\": 2, "
                        "\"moe_intermediate_size\": 4194304, "
                        "\"shared_expert_intermediate_size\": 4294967295}",
                        "shared");
    /* every field in range, the product past 10^15 (it once printed a negative total) */
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    tp_model_init(&m);
    m.n_layers = 1024;
    m.hidden = 1u << 18;
    m.n_heads = 1024;
    m.vocab = 1u << 20;
    m.n_experts = 4096;
    m.top_k = 8;
    m.moe_ffn = 1u << 22;
    assert_int_equal(tp_model_finalize(&m, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "parameters"));
}

static struct tp_log_step steps[64];

static void test_logs_implausible_figures_dropped(void **state)
{
    (void)state;
    const char *neg = " iteration       10/    1000 | elapsed time per iteration (ms): -8412.3 | "
                      "throughput per GPU (TFLOP/s/GPU): 401.0 | global batch size:   512 |\n"
                      " iteration       20/    1000 | elapsed time per iteration (ms): 1e300 | "
                      "throughput per GPU (TFLOP/s/GPU): 99999999 | global batch size:   512 |\n"
                      " iteration       30/    1000 | elapsed time per iteration (ms): 0.0 | "
                      "throughput per GPU (TFLOP/s/GPU): 401.5 | global batch size:   512 |\n";
    struct tp_log_info info;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_log_parse(neg, strlen(neg), TP_LOG_MEGATRON, steps, 64, &info, &err),
                     TP_OK);
    assert_int_equal(info.n_steps, 3);
    assert_int_equal(info.n_implausible, 4); /* three times, one TFLOP/s above any GPU */
    for (int i = 0; i < 3; i++)
        assert_true(isnan(steps[i].step_s));
    assert_true(steps[0].tflops_per_gpu == 401.0 && isnan(steps[1].tflops_per_gpu));
    /* HF banner: micro-batch x accumulation = 2^64 wrapped to 0 (then a division by zero) */
    const char *hf = "***** Running training *****\n"
                     "  Instantaneous batch size per device = 4294967296\n"
                     "  Total train batch size (w. parallel, distributed & accumulation) = 128\n"
                     "  Gradient Accumulation steps = 4294967296\n"
                     "{'loss': 1.5, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
                     "{'train_runtime': 100.0, 'train_samples_per_second': 12.8, "
                     "'train_steps_per_second': 0.1, 'train_loss': 1.5, 'epoch': 1.0}\n";
    assert_int_equal(tp_log_parse(hf, strlen(hf), TP_LOG_HF, steps, 64, &info, &err), TP_OK);
    assert_int_equal(info.gpus, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_zero_and_wrapping_counts),
        cmocka_unit_test(test_time_step_rejects_unchecked_inputs),
        cmocka_unit_test(test_public_entry_points_zeroed),
        cmocka_unit_test(test_precision_needs_the_unit),
        cmocka_unit_test(test_config_numbers_in_range_before_use),
        cmocka_unit_test(test_logs_implausible_figures_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
