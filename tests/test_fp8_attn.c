/*
 * test_fp8_attn.c - FP8 attention (tp_job.fp8_attention; src/eval/attn_fp8.c, mem_attn.c,
 * src/plan/check.c, src/readers/runs_fp8attn.c) against the kernel measurements it comes from:
 *
 *   [CUDNN-FE-SDPA] NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results (commit
 *   3929da2ef), cuDNN SDPA, Llama 3.1 preset (64 query heads, 8 KV heads, head dim 128),
 *   causal, TFLOP/s in bfloat16 and fp8, forward and backward:
 *     GB200 (llama3.1/gb200/llama3.1_20260424_100750.csv), GB300 (llama3.1/gb300/...
 *     _100757.csv), H200 (h200_919_only_cudnn/llama3.1_20260227_034703.csv).
 *   [TE-DPA] Transformer Engine FusedAttnFunc: Q, K, V quantized before the kernel and saved in
 *   FP8 for the FP8 backward.
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

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.6f, want %.6f (+- %g)", got, want, tol);
}

/* The ratios are the published figures' (fp8 TFLOP/s over bf16 TFLOP/s, the same GPU, shape and
   pass), at the measured lengths. */
static void test_ratio_published(void **state)
{
    (void)state;
    double f, b;
    /* GB200, 8192 tokens: fwd 2047 / 1574, bwd 1454 / 1332 */
    assert_true(tp_attn_fp8_ratio(fixture_gpu("gb200"), 8192, &f, &b));
    near(f, 2047.0 / 1574, 1e-9);
    near(b, 1454.0 / 1332, 1e-9);
    /* B200 is GB200's die: the same figures */
    assert_true(tp_attn_fp8_ratio(fixture_gpu("b200"), 8192, &f, &b));
    near(f, 2047.0 / 1574, 1e-9);
    /* GB300, 32768 tokens: fwd 3108 / 1953, bwd 2128 / 1490 */
    assert_true(tp_attn_fp8_ratio(fixture_gpu("gb300"), 32768, &f, &b));
    near(f, 3108.0 / 1953, 1e-9);
    near(b, 2128.0 / 1490, 1e-9);
    /* H200, 2048 tokens: fwd 698 / 484, bwd 393 / 370; 16384: the FP8 backward is slower
       (374 / 579) */
    assert_true(tp_attn_fp8_ratio(fixture_gpu("h200"), 2048, &f, &b));
    near(f, 698.0 / 484, 1e-9);
    near(b, 393.0 / 370, 1e-9);
    assert_true(tp_attn_fp8_ratio(fixture_gpu("h100-sxm"), 16384, &f, &b));
    near(f, 1010.0 / 673, 1e-9);
    near(b, 374.0 / 579, 1e-9);
    assert_true(b < 1);
    /* between measured lengths: linear in log2 of the length (4k and 8k on GB300) */
    assert_true(tp_attn_fp8_ratio(fixture_gpu("gb300"), sqrt(4096.0 * 8192.0), &f, &b));
    near(f, (2532.0 / 1703 + 2897.0 / 1856) / 2, 1e-9);
    /* outside 2k-32k: the end points */
    assert_true(tp_attn_fp8_ratio(fixture_gpu("gb200"), 131072, &f, &b));
    near(f, 2197.0 / 1622, 1e-9);
    assert_true(tp_attn_fp8_ratio(fixture_gpu("gb200"), 512, &f, &b));
    near(b, 831.0 / 885, 1e-9);
    /* no measurement: the 16-bit kernel's rate */
    assert_false(tp_attn_fp8_ratio(fixture_gpu("mi300x"), 8192, &f, &b));
    near(f, 1, 0);
    near(b, 1, 0);
}

/* tp_resolve_hw: the forward rate times the forward ratio, the backward's time over the
   forward's so that the backward runs at its own ratio; the SSM scans keep the 16-bit rate;
   FlashAttention-3's FP8 is forward-only. */
static void test_resolve_hw(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "gb200", 8);
    job.precision = TP_PREC_NVFP4;
    job.framework = TP_FW_MEGATRON;
    job.seq = 8192;
    struct hw h16, h8;
    tp_resolve_hw(&cluster, &job, &cal, &h16);
    job.fp8_attention = true;
    tp_resolve_hw(&cluster, &job, &cal, &h8);
    assert_true(h8.fp8_attn && !h16.fp8_attn);
    near(h8.attn_flops / h16.attn_flops, 2047.0 / 1574, 1e-9);
    near((h16.attn_bwd / h16.attn_flops) / (h8.attn_bwd / h8.attn_flops), 1454.0 / 1332, 1e-9);
    near(h8.scan_flops, h16.scan_flops, 0);
    job.attn_impl = TP_ATTN_FLASH3;
    tp_resolve_hw(&cluster, &job, &cal, &h8);
    job.fp8_attention = false;
    tp_resolve_hw(&cluster, &job, &cal, &h16);
    near(h8.attn_flops / h16.attn_flops, 2047.0 / 1574, 1e-9);
    near((h16.attn_bwd / h16.attn_flops) / (h8.attn_bwd / h8.attn_flops), 1, 1e-12);
}

static struct tp_time step(void)
{
    struct tp_error err = {{0}, {0}};
    struct tp_time t;
    struct tp_layout l = lay;
    if (tp_layout_check(&model, &cluster, &job, &l, &err) != TP_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(tp_time_step(&model, &cluster, &job, &l, &cal, &t), TP_OK);
    return t;
}

/* A step of Llama 3.1 8B at 8k on GB300 (MLPerf v5.1's shape): the attention kernels' time
   falls by the measured ratios (between the forward's and the backward's), the step by less
   (the quantization passes are element-wise work). */
static void test_step(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "gb300", 8);
    job.precision = TP_PREC_NVFP4;
    job.framework = TP_FW_MEGATRON;
    job.seq = 8192;
    lay.dp = 8;
    lay.zero = 1;
    lay.mbs = 2;
    struct tp_time t16 = step();
    job.fp8_attention = true;
    struct tp_time t8 = step();
    double speed = t16.attn_s / t8.attn_s;
    assert_true(speed > 1781.0 / 1435 && speed < 2897.0 / 1856);
    assert_true(t8.elementwise_s > t16.elementwise_s);
    assert_true(t8.step_s < t16.step_s);
}

/* Saved Q, K, V in FP8 ([TE-DPA]): Llama 3.1 8B at TP 1, one micro-batch of 8192 tokens,
   32 layers x (4096 + 1024 + 1024) elements per token: one byte less each; none under
   selective recompute of the attention core (its checkpoint keeps the 16-bit inputs). */
static void test_memory(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "h100-sxm", 8);
    job.precision = TP_PREC_FP8;
    job.framework = TP_FW_MEGATRON;
    job.seq = 8192;
    lay.dp = 8;
    lay.zero = 1;
    struct tp_memory m16 = fixture_memory();
    job.fp8_attention = true;
    struct tp_memory m8 = fixture_memory();
    near(m16.activations_bytes - m8.activations_bytes, 32.0 * 8192 * (4096 + 1024 + 1024), 1);
    lay.recompute = TP_RECOMPUTE_SELECTIVE;
    struct tp_memory s8 = fixture_memory();
    job.fp8_attention = false;
    struct tp_memory s16 = fixture_memory();
    near(s16.activations_bytes, s8.activations_bytes, 0);
}

static enum tp_status check(const char *gpu_key, enum tp_precision p, enum tp_attn_impl a,
                            struct tp_error *err)
{
    fixture_run("llama-3.1-8b", gpu_key, 8);
    job.precision = p;
    job.attn_impl = a;
    job.fp8_attention = true;
    return tp_cluster_check(&cluster, &job, err);
}

/* Validation: an FP8 or FP4 recipe, a GPU with FP8 tensor cores, an FP8-capable kernel. */
static void test_validation(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(check("h100-sxm", TP_PREC_BF16, TP_ATTN_FLASH, &err), TP_EINVAL);
    assert_string_equal(err.field, "fp8_attention");
    assert_non_null(strstr(err.msg, "needs precision fp8, mxfp8, nvfp4 or mxfp4, not bf16"));
    assert_int_equal(check("a100-80gb", TP_PREC_FP8, TP_ATTN_FLASH, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "a100-80gb has no FP8 tensor cores"));
    assert_int_equal(check("h100-sxm", TP_PREC_FP8, TP_ATTN_FLASH2, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "not attention flash2"));
    assert_int_equal(check("h100-sxm", TP_PREC_FP8, TP_ATTN_EAGER, &err), TP_EINVAL);
    assert_int_equal(check("h100-sxm", TP_PREC_FP8, TP_ATTN_FLEX, &err), TP_EINVAL);
    assert_int_equal(check("h100-sxm", TP_PREC_FP8, TP_ATTN_FLASH, &err), TP_OK);
    assert_int_equal(check("gb200", TP_PREC_NVFP4, TP_ATTN_CUDNN919, &err), TP_OK);
    assert_int_equal(check("b200", TP_PREC_MXFP8, TP_ATTN_FLASH3, &err), TP_OK);
}

/* The runs file: the fp8_attention column, else the notes (MLPerf's FP8_DPA=True on, AMD's
   FP8_DPA=0 off), only under an FP8 or FP4 recipe. */
static void test_runs_row(void **state)
{
    (void)state;
    const char *cols[] = {"row_id", "model", "arch", "n_layers", "hidden", "n_heads",
                          "kv_heads", "vocab", "ffn_hidden", "seq_len", "gpu_type", "num_gpus",
                          "tp", "pp", "dp", "zero_or_fsdp", "micro_batch", "global_batch",
                          "precision", "framework_key", "notes", "fp8_attention"};
    const char *cells[] = {"f:1", "Llama 3.1 8B", "llama", "32", "4096", "32", "8", "128256",
                           "14336", "8192", "gb200", "8", "1", "1", "8", "megatron-distopt",
                           "2", "16", "nvfp4", "nemo",
                           "NVFP4 GEMMs and FP8 attention (FP8_DPA=True, current scaling)", ""};
    enum { N = sizeof cols / sizeof cols[0], NOTES = N - 2, COL = N - 1, PREC = 18 };
    static struct tp_run run;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_true(run.job.fp8_attention);
    assert_non_null(strstr(run.assumptions, "FP8 attention"));
    cells[NOTES] = "MLPerf config: fp8_dot_product_attention True";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_true(run.job.fp8_attention);
    cells[NOTES] = "exported with --fp8-dot-product-attention";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_true(run.job.fp8_attention);
    cells[NOTES] = "FP8_DPA=0 (attention in BF16)";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    cells[NOTES] = "fp8_dot_product_attention False";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    cells[NOTES] = "";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    /* the column wins over the notes */
    cells[COL] = "1";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_true(run.job.fp8_attention);
    cells[COL] = "0";
    cells[NOTES] = "FP8_DPA=True";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    cells[COL] = "maybe";
    assert_int_not_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_non_null(strstr(err.msg, "fp8_attention"));
    /* a 16-bit row's notes do not turn it on */
    cells[COL] = "";
    cells[PREC] = "bf16";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
}

/* Megatron-Bridge's Qwen3 MXFP8 recipes on GB200 / GB300 / B300 set fp8_dot_product_attention
   from the 26.06 container on (commit bac3ffeb): rows silent on it are assumed to run it; the
   26.04 rows, other models and other GPUs are not, and the notes or the column decide when
   they speak. */
static void test_runs_recipe(void **state)
{
    (void)state;
    const char *cols[] = {"row_id", "source", "model", "arch", "n_layers", "hidden", "n_heads",
                          "kv_heads", "vocab", "ffn_hidden", "moe_num_experts", "moe_topk",
                          "moe_ffn_hidden", "seq_len", "gpu_type", "num_gpus", "tp", "pp",
                          "dp", "ep", "zero_or_fsdp", "micro_batch", "global_batch",
                          "precision", "framework_key", "source_version_or_date", "notes",
                          "fp8_attention"};
    const char *cells[] = {"b:47", "Megatron-Bridge performance summary", "Qwen3 30B A3B",
                           "qwen3_moe", "48", "2048", "32", "4", "151936", "6144", "128", "8",
                           "768", "4096", "gb300", "8", "1", "1", "8", "8",
                           "megatron-distopt", "8", "512", "mxfp8", "nemo", "26.06", "", ""};
    enum { N = sizeof cols / sizeof cols[0], GPU = 14, PREC = 23, DATE = 25, NOTES = 26 };
    static struct tp_run run;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_true(run.job.fp8_attention);
    assert_non_null(strstr(run.assumptions, "Megatron-Bridge's Qwen3 MXFP8 recipe"));
    cells[GPU] = "b300";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_true(run.job.fp8_attention);
    cells[NOTES] = "fp8_dot_product_attention False";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    cells[NOTES] = "";
    cells[DATE] = "26.04.01";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    cells[DATE] = "26.08";
    cells[GPU] = "b200";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
    cells[GPU] = "gb200";
    cells[PREC] = "fp8";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_false(run.job.fp8_attention);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratio_published), cmocka_unit_test(test_resolve_hw),
        cmocka_unit_test(test_step),            cmocka_unit_test(test_memory),
        cmocka_unit_test(test_validation),      cmocka_unit_test(test_runs_row),
        cmocka_unit_test(test_runs_recipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
