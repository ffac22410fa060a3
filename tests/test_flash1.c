/*
 * test_flash1.c - FlashAttention 1.x (--attention flash1): its rate against FlashAttention-2's
 * as the FA2 paper measured it, its memory, and where it has a kernel and a stack to run in.
 *
 * Expected values: FlashAttention-2 paper (Dao 2023, arXiv:2307.08691) Fig. 4, forward +
 * backward TFLOP/s on A100 80GB SXM4, causal mask, seqlen 512 / 1k / 2k / 4k / 8k / 16k, the
 * bars of FlashAttention (1.x) and FlashAttention-2 (Dao-AILab/flash-attention
 * assets/flash2_a100_fwd_bwd_benchmark.png); the same benchmark on H100 80GB SXM5
 * (assets/flash2_h100_fwd_bwd_benchmark.png).  Where the kernel exists: flash-attn v1.0.9
 * csrc/flash_attn/fmha_api.cpp (sm75 / sm8x / sm90, head dims multiples of 8 up to 128) and its
 * README ("Head dim > 64 backward requires A100 or H100").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <string.h>

#include "run_fixture.h"

/* The figure's bars, FA1 then FA2, per sequence length. */
static const double A100_HD64_FA1[6] = {58, 70, 77, 87, 92, 97};
static const double A100_HD64_FA2[6] = {88, 119, 140, 156, 165, 171};
static const double A100_HD128_FA1[6] = {55, 62, 69, 76, 80, 83};
static const double A100_HD128_FA2[6] = {99, 133, 155, 173, 182, 189};
static const double H100_HD64_FA1[6] = {104, 123, 136, 138, 149, 156};
static const double H100_HD64_FA2[6] = {141, 192, 232, 257, 273, 284};
static const double H100_HD128_FA1[6] = {98, 109, 108, 126, 135, 137};
static const double H100_HD128_FA2[6] = {163, 221, 265, 294, 308, 328};

/* The median over the six lengths of FA1 / FA2. */
static double median_ratio(const double *fa1, const double *fa2)
{
    double r[6];
    for (int i = 0; i < 6; i++)
        r[i] = fa1[i] / fa2[i];
    for (int i = 1; i < 6; i++) /* insertion sort */
        for (int k = i; k > 0 && r[k - 1] > r[k]; k--) {
            double t = r[k];
            r[k] = r[k - 1];
            r[k - 1] = t;
        }
    return (r[2] + r[3]) / 2;
}

static void near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.6g, want %.6g (+-%.2g%%)", got, want, 100 * rel);
}

/* FA1 / FA2 attention time of the fixture's run, the GEMMs unchanged. */
static double fa1_over_fa2(void)
{
    job.attn_impl = TP_ATTN_FLASH2;
    struct tp_time fa2 = fixture_step(job.framework);
    job.attn_impl = TP_ATTN_FLASH1;
    struct tp_time fa1 = fixture_step(job.framework);
    near(fa1.gemm_s, fa2.gemm_s, 1e-12);
    assert_true(fa2.attn_s > 0);
    return fa1.attn_s / fa2.attn_s;
}

/* A100: FA1 takes 1 / the figure's median FA1 / FA2 of the attention time FA2 takes, by the
   FA1 kernel the head dim runs (GPT-2: 64, Fig. 4c; Llama-3.1-8B: 128, Fig. 4d). */
static void test_flash1_a100_ratio(void **state)
{
    (void)state;
    fixture_run("gpt2", "a100-80gb", 8);
    job.framework = TP_FW_MEGATRON_DS;
    job.seq = 2048;
    double r64 = median_ratio(A100_HD64_FA1, A100_HD64_FA2);
    near(r64, 0.5625, 1e-3); /* 77/140 .. 87/156 and 92/165 .. 97/171 */
    near(fa1_over_fa2(), 1 / r64, 1e-3);
    fixture_run("llama-3.1-8b", "a100-80gb", 8);
    job.framework = TP_FW_DEEPSPEED;
    job.seq = 4096;
    double r128 = median_ratio(A100_HD128_FA1, A100_HD128_FA2);
    near(r128, 0.4424, 1e-3);
    near(fa1_over_fa2(), 1 / r128, 1e-3);
    /* "around 2x speedup compared to FlashAttention" (the paper's abstract) */
    assert_true(1 / r128 > 1.7 && 1 / r64 < 2.0);
}

/* H100: both kernels are mma.sync, so FA1 keeps FA2's fa2_ratio and the A100's FA1 / FA2; the
   paper's H100 bars agree with the A100 ratio within 1% (head dim 64) and 2% (128). */
static void test_flash1_h100_ratio(void **state)
{
    (void)state;
    near(median_ratio(H100_HD64_FA1, H100_HD64_FA2),
         median_ratio(A100_HD64_FA1, A100_HD64_FA2), 0.01);
    near(median_ratio(H100_HD128_FA1, H100_HD128_FA2),
         median_ratio(A100_HD128_FA1, A100_HD128_FA2), 0.025);
    fixture_run("llama-3.1-8b", "h100-sxm", 8);
    job.framework = TP_FW_FSDP;
    lay.zero = 3;
    job.seq = 8192;
    double r = fa1_over_fa2();
    near(r, 1 / median_ratio(H100_HD128_FA1, H100_HD128_FA2), 0.025);
    /* and FA1 is slower than the native kernel by fa2_ratio on top */
    job.attn_impl = TP_ATTN_FLASH3;
    struct tp_time fa3 = fixture_step(job.framework);
    job.attn_impl = TP_ATTN_FLASH1;
    struct tp_time fa1 = fixture_step(job.framework);
    near(fa1.attn_s, fa3.attn_s / cal.fa2_ratio * r, 1e-9);
}

/* FA1 stores what FA2 stores (O(s) softmax statistics, the fp32 dQ of the backward): no s x s
   scores, unlike eager attention. */
static void test_flash1_memory(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "a100-80gb", 8);
    job.framework = TP_FW_DEEPSPEED;
    job.seq = 4096;
    lay.zero = 3;
    job.attn_impl = TP_ATTN_FLASH2;
    struct tp_memory fa2 = fixture_memory();
    job.attn_impl = TP_ATTN_FLASH1;
    struct tp_memory fa1 = fixture_memory();
    job.attn_impl = TP_ATTN_EAGER;
    struct tp_memory eager = fixture_memory();
    near(fa1.activations_bytes, fa2.activations_bytes, 1e-12);
    assert_true(eager.activations_bytes > 2 * fa1.activations_bytes);
}

static enum tp_status check_run(const char *preset, const char *gpu, enum tp_framework fw,
                                struct tp_error *err)
{
    fixture_run(preset, gpu, 8);
    job.framework = fw;
    job.attn_impl = TP_ATTN_FLASH1;
    job.precision = TP_PREC_FP16;
    if (tp_layout_check(&model, &cluster, &job, &lay, err) != TP_OK)
        return TP_EINVAL;
    return tp_stack_check(&model, &job, &lay, err);
}

/* Where FlashAttention 1.x has a kernel (sm75 / sm8x / sm90) and a stack that calls it. */
static void test_flash1_where(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_name_value(TP_NAMES_ATTENTION, "flash1"), TP_ATTN_FLASH1);
    assert_string_equal(tp_name(TP_NAMES_ATTENTION, TP_ATTN_FLASH1), "flash1");
    const enum tp_framework ok[] = {TP_FW_MEGATRON_DS, TP_FW_MEGATRON, TP_FW_DEEPSPEED,
                                    TP_FW_AXOLOTL, TP_FW_FSDP};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (check_run("llama-3.1-8b", "a100-80gb", ok[i], &err) != TP_OK)
            fail_msg("%s", err.msg);
    assert_int_equal(check_run("llama-3.1-8b", "h100-sxm", TP_FW_DEEPSPEED, &err), TP_OK);
    /* torchtitan runs PyTorch >= 2.3: SDPA's flash backend is FlashAttention-2 */
    assert_int_equal(check_run("llama-3.1-8b", "a100-80gb", TP_FW_TORCHTITAN, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "torchtitan"));
    /* no kernel image: V100 (sm70), Blackwell (sm100), AMD */
    const char *none[] = {"v100-32gb", "b200", "gb200", "rtx5090", "mi300x", "max1550"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        assert_int_equal(check_run("llama-3.1-8b", none[i], TP_FW_DEEPSPEED, &err), TP_EINVAL);
        assert_non_null(strstr(err.msg, "sm75, sm8x and sm90"));
    }
    /* sm89: head dim 64 runs, 128's backward needs an A100 or H100 */
    assert_int_equal(check_run("gpt2", "rtx4090", TP_FW_DEEPSPEED, &err), TP_OK);
    assert_int_equal(check_run("llama-3.1-8b", "l40s", TP_FW_DEEPSPEED, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "A100 or H100"));
    /* head dims up to 128 in steps of 8 */
    fixture_run("llama-3.1-8b", "a100-80gb", 8);
    job.attn_impl = TP_ATTN_FLASH1;
    model.head_dim = 160;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "up to 128"));
    model.head_dim = 128;
    job.precision = TP_PREC_FP32;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_EINVAL);
    job.precision = TP_PREC_BF16;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_OK);
    /* no FP8 kernel */
    fixture_run("llama-3.1-8b", "h100-sxm", 8);
    job.attn_impl = TP_ATTN_FLASH1;
    job.precision = TP_PREC_FP8;
    job.fp8_attention = true;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "fp8_attention"));
    /* context parallelism's ring kernels are FA2 / cuDNN */
    fixture_run("llama-3.1-8b", "a100-80gb", 8);
    job.attn_impl = TP_ATTN_FLASH1;
    job.framework = TP_FW_MEGATRON;
    job.seq = 8192;
    lay.cp = 2;
    lay.dp = 4;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_OK);
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "cp 2"));
}

/* The runs reader: an attention cell flash1 / fa1, or a Megatron-DeepSpeed framework cell that
   names FlashAttention 1 (the rebase README's 125M and 2.7B rows); FlashAttention-2 otherwise. */
static void test_flash1_rows(void **state)
{
    (void)state;
    const char *cols[] = {"row_id", "arch", "n_layers", "hidden", "n_heads", "vocab",
                          "ffn_hidden", "seq_len", "gpu_type", "num_gpus", "tp", "pp",
                          "framework_key", "framework", "attention", "source_version_or_date"};
    const char *cells[] = {"f:1", "gpt", "32", "2560", "32", "50432", "10240", "2048",
                           "a100-80gb", "8", "2", "2", "megatron-deepspeed",
                           "Megatron-DeepSpeed (GPTModelPipe, FlashAttention 1.x)", "",
                           "2023-07-12"};
    enum { N = sizeof cols / sizeof cols[0] };
    static struct tp_run run;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.attn_impl, TP_ATTN_FLASH1);
    cells[13] = "Megatron-DeepSpeed (GPTModelPipe, FlashAttention-2)";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.attn_impl, TP_ATTN_FLASH2);
    cells[14] = "fa1";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.attn_impl, TP_ATTN_FLASH1);
    cells[14] = "flash1";
    cells[8] = "v100-32gb"; /* no FA1 kernel on sm70: the row is refused, not priced */
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flash1_a100_ratio),
        cmocka_unit_test(test_flash1_h100_ratio),
        cmocka_unit_test(test_flash1_memory),
        cmocka_unit_test(test_flash1_where),
        cmocka_unit_test(test_flash1_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
