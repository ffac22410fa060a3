/*
 * test_flops.c - known-answer tests for training FLOPs per token.
 *
 * Expected values: docs/physics.md §2.2-2.5 worked examples (Megatron-LM
 * num_floating_point_operations conventions), the Narayanan et al. 2021 closed forms, and the
 * convention table of §2.4.  Tolerances match the digits the sources print.
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

#define FIX "tests/fixtures/hf/"

static struct tp_model model;

static void load(const char *name)
{
    struct tp_error err = {{0}, {0}};
    enum tp_status st = name[0] == 't' ? tp_model_from_hf_config(name, &model, &err)
                                       : tp_model_from_preset(name, &model, &err);
    if (st != TP_OK)
        fail_msg("%s: %s", name, err.msg);
}

static struct tp_flops flops(uint64_t seq, enum tp_attn_convention c, enum tp_recompute r,
                             uint32_t mtp)
{
    struct tp_flops f;
    struct tp_error err = {{0}, {0}};
    if (tp_flops_per_token(&model, seq, c, r, mtp, &f, &err) != TP_OK)
        fail_msg("%s", err.msg);
    return f;
}

/* |got - want| <= half a unit of the last printed digit. */
static void near(double got, double want, double unit)
{
    if (fabs(got - want) > unit / 2)
        fail_msg("got %.6f, expected %.6f (+-%g)", got, want, unit / 2);
}

static void test_llama31_8b(void **state)
{
    (void)state;
    load(FIX "llama-3.1-8b.json");
    /* §2.2: Sum W = 32*(4096*6144 + 4096*4096 + 3*4096*14336) + 4096*128256 = 7,504,658,432.
       (The document prints 7,504,924,672, which is the non-embedding parameter count: it adds
       the 266,240 norm weights, which are not GEMM weights.  6*Sum W = 45.03 GFLOP either way.)
       s = 8192: F_tok = 51.47 GFLOP; s = 2048: 46.64 */
    struct tp_flops f = flops(8192, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    assert_true(f.matmul_weights == 32.0 * (4096 * 6144 + 4096 * 4096 + 3 * 4096 * 14336) +
                                        4096.0 * 128256);
    near(f.fwd_dense * 3 / 1e9, 45.03, 0.01);
    near(f.model / 1e9, 51.47, 0.01);
    near(f.fwd_attn * 3 / 1e9, 6.44, 0.01); /* 6*32*4096*8192 */
    assert_true(f.bwd == 2 * f.fwd);
    near(flops(2048, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0).model / 1e9, 46.64, 0.01);
    /* §2.5: full recompute adds 16.11 GFLOP -> 67.58 GFLOP hardware, 1.313x model */
    f = flops(8192, TP_ATTN_CAUSAL, TP_RECOMPUTE_FULL, 0);
    near(f.recompute / 1e9, 16.11, 0.01);
    near(f.hardware / 1e9, 67.58, 0.01);
    near(f.hardware / f.model, 1.313, 0.001);
    /* selective recompute adds the forward attention core only */
    f = flops(8192, TP_ATTN_CAUSAL, TP_RECOMPUTE_SELECTIVE, 0);
    assert_true(f.recompute == f.fwd_attn);
}

static void test_convention_table(void **state)
{
    (void)state;
    load(FIX "llama-3.1-8b.json");
    /* §2.4, Llama-3.1-8B GFLOP per token: 6P 48.18; torchtitan 48.25 / 57.91; PaLM (total N)
       51.40 / 61.07; Megatron causal 46.64 / 51.47 */
    struct tp_flops a = flops(2048, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    struct tp_flops b = flops(8192, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    near(a.six_n / 1e9, 48.18, 0.01);
    near(a.torchtitan / 1e9, 48.25, 0.01);
    near(b.torchtitan / 1e9, 57.91, 0.01);
    near(a.palm / 1e9, 51.40, 0.01);
    near(b.palm / 1e9, 61.07, 0.01);
    /* the non-causal convention doubles the attention core */
    struct tp_flops n = flops(8192, TP_ATTN_NONCAUSAL, TP_RECOMPUTE_NONE, 0);
    assert_true(fabs(n.fwd_attn - 2 * b.fwd_attn) < 1);
    assert_true(fabs(n.model - b.megatron_2023) < 1);
}

static void test_gpt3_narayanan(void **state)
{
    (void)state;
    /* [NAR21]: GPT-3 175B with Megatron's padded vocabulary 51200, s 2048:
       96*L*H^2*(1 + s/6H + V/16LH) = 1.434 TFLOP/token with full recompute, and
       72*L*H^2*(1 + s/6H + V/12LH) = 1.076 without.  Exact counting with the non-causal
       square reproduces both forms to rounding (biases and norms are not GEMMs). */
    struct tp_shape s;
    tp_shape_init(&s);
    s.vocab = 51200;
    load("gpt3-175b");
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_apply_shape(&model, &s, NULL, 0, &err), TP_OK);
    struct tp_flops m = flops(2048, TP_ATTN_NONCAUSAL, TP_RECOMPUTE_NONE, 0);
    struct tp_flops h = flops(2048, TP_ATTN_NONCAUSAL, TP_RECOMPUTE_FULL, 0);
    double L = 96, H = 12288, S = 2048, V = 51200;
    double f72 = 72 * L * H * H * (1 + S / (6 * H) + V / (12 * L * H));
    double f96 = 96 * L * H * H * (1 + S / (6 * H) + V / (16 * L * H));
    assert_true(fabs(m.model / f72 - 1) < 1e-12);
    assert_true(fabs(h.hardware / f96 - 1) < 1e-12);
    assert_true(fabs(m.narayanan_2021 / f72 - 1) < 1e-12);
    near(h.hardware / 1e12, 1.434, 0.001);
    near(m.model / 1e12, 1.076, 0.001);
}

static void test_deepseek_v3(void **state)
{
    (void)state;
    load(FIX "deepseek-v3.json");
    /* §2.2: s = 4096: 6*Sum W = 219.1, core 30.7, F_tok = 249.8 GFLOP without MTP, 260.0 with
       the one MTP module; 6*P_act(A) = 225.3 */
    struct tp_flops f = flops(4096, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    near(f.fwd_dense * 3 / 1e9, 219.1, 0.1);
    near(f.fwd_attn * 3 / 1e9, 30.7, 0.1);
    near(f.model / 1e9, 249.8, 0.1);
    near(f.six_n / 1e9, 225.3, 0.1);
    near(flops(4096, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 1).model / 1e9, 260.0, 0.1);
}

static void test_qwen3_moe(void **state)
{
    (void)state;
    load(FIX "qwen3-30b-a3b.json");
    /* §2.2: s = 4096: 6*Sum W = 18.17, core 4.83, F_tok = 23.01; 6*P_act = 20.12 */
    struct tp_flops f = flops(4096, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    near(f.fwd_dense * 3 / 1e9, 18.17, 0.01);
    near(f.fwd_attn * 3 / 1e9, 4.83, 0.01);
    near(f.model / 1e9, 23.01, 0.01);
    near(f.six_n / 1e9, 20.12, 0.01);
}

static void test_sliding_window(void **state)
{
    (void)state;
    /* §2.2 [derived]: window w <= s: mean keys per query k = (w(w+1)/2 + (s-w)w)/s, and the
       training core is 12*k*q_dim per layer.  Mistral 7B v0.1: w 4096, q_dim 4096, 32 layers. */
    load(FIX "mistral-7b-v0.1.json");
    double s = 8192, w = 4096, k = (w * (w + 1) / 2 + (s - w) * w) / s;
    struct tp_flops f = flops(8192, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    assert_true(fabs(f.fwd_attn * 3 - 32 * 12 * k * 4096) < 1);
    /* a window at least as long as the sequence is plain causal attention */
    struct tp_flops g = flops(4096, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    assert_true(fabs(g.fwd_attn * 3 - 32 * 6.0 * 4096 * 4096) < 1);
    /* Llama 4 chunks of 8192 at s = 16384: 36 chunked blocks see k = (2*8192*8193/2)/16384,
       12 NoPE blocks see s/2; q_dim 5120 */
    load(FIX "llama-4-scout.json");
    f = flops(16384, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0);
    double kc = 8193.0 / 2, kf = 8192;
    assert_true(fabs(f.fwd_attn - (36 * 4 * 5120 * kc + 12 * 4 * 5120 * kf)) < 1);
}

static void test_bad_seq(void **state)
{
    (void)state;
    load("llama-3.1-8b");
    struct tp_flops f;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_flops_per_token(&model, 0, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f, &err),
                     TP_EINVAL);
    assert_non_null(strstr(err.msg, "sequence length"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama31_8b),     cmocka_unit_test(test_convention_table),
        cmocka_unit_test(test_gpt3_narayanan), cmocka_unit_test(test_deepseek_v3),
        cmocka_unit_test(test_qwen3_moe),      cmocka_unit_test(test_sliding_window),
        cmocka_unit_test(test_bad_seq),
    };
    return cmocka_run_group_tests_name("flops", tests, NULL, NULL);
}
