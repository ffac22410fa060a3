/*
 * test_rocm_attn.c - the measured ROCm attention kernels (tp_rocm_attn in src/eval/kernel_rates.c)
 * against their sources, and how tp_resolve_hw prices each stack's kernel with them.
 *
 * Figures, BF16, head dim 128, non-causal, seqlen 16384, TFLOP/s:
 *   Transformer Engine's CK v3 (aiter assembly) kernels: [AITER-MHA] (ROCm/aiter
 *   op_tests/cpp/mha/README.md), batch 1, 64 query heads, 8 / 4 KV heads: MI300X forward
 *   547.78 / 549.09, backward (fp32 dQ atomics) 441.55 / 448.83.
 *   FlashAttention-2's CK build: [ROCM-FA142] (MI300X, ROCm 6.3.2), batch 1 / 2 / 4 / 8:
 *   forward 353.22 / 355.51 / 339.62 / 309.60, backward 194.43 / 202.12 / 205.43 / 206.66, and
 *   the benchmark's own "fwd + bwd" column 223.08 / 230.54 / 231.57 / 228.36.
 *   H100 reference, FlashAttention-3 (arXiv:2407.08608 Figs. 5-6): 648 forward, 561 backward.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "time_internal.h"

#include <math.h>

static const struct tp_gpu *find(const char *name)
{
    struct tp_error err = {{0}, {0}};
    const struct tp_gpu *g = NULL;
    if (tp_gpu_find(name, &g, &err) != TP_OK)
        fail_msg("%s: %s", name, err.msg);
    return g;
}

/* |got - want| within `tol` of want, relative */
static void near(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: %g, expected %g", what, got, want);
}

/* flash-attn's benchmark_flash_attention.py combines the two passes with the backward counted
   as 2.5 forwards: fwd + bwd = 3.5 / (1 / fwd + 2.5 / bwd) */
static double fwd_bwd(double fwd, double bwd)
{
    return 3.5 / (1 / fwd + 2.5 / bwd);
}

/* The CK v3 kernels NeMo / Megatron run: aiter's table, the two KV-head rows averaged. */
static void test_ck_v3_figures(void **state)
{
    (void)state;
    double f, b;
    assert_true(tp_rocm_attn(find("mi300x"), true, &f, &b));
    near("mi300x ck v3 fwd", f, 548.435, 5e-4);
    near("mi300x ck v3 bwd a32", b, 445.19, 5e-4);
    /* each row of the source within 1% of the figure used */
    assert_true(fabs(f / 547.78 - 1) < 0.01 && fabs(f / 549.09 - 1) < 0.01);
    assert_true(fabs(b / 441.55 - 1) < 0.01 && fabs(b / 448.83 - 1) < 0.01);
}

/* FlashAttention-2's CK build, which the Hugging Face stacks call: the medians of #142's four
   batch sizes reproduce the issue's own fwd + bwd column (median 229.45) within 1%. */
static void test_fa2_ck_figures(void **state)
{
    (void)state;
    double f, b;
    assert_true(tp_rocm_attn(find("mi300x"), false, &f, &b));
    near("mi300x fa2-ck fwd", f, (339.62 + 353.22) / 2, 5e-4);
    near("mi300x fa2-ck bwd", b, (202.12 + 205.43) / 2, 5e-4);
    near("mi300x fa2-ck fwd+bwd", fwd_bwd(f, b), (228.36 + 230.54) / 2, 0.01);
    /* and the batch-1 row is the benchmark's formula applied to its own columns */
    near("#142 batch 1", fwd_bwd(353.22, 194.43), 223.08, 0.001);
}


/* MI325X: MI300X's die at its sustained clock (MAMF 0.601 against 0.511 of the same peak). */
static void test_mi325x_same_die(void **state)
{
    (void)state;
    double f3, b3, f5, b5;
    double clock = tp_gpu_mamf(find("mi325x"), false) / tp_gpu_mamf(find("mi300x"), false);
    for (int native = 0; native < 2; native++) {
        assert_true(tp_rocm_attn(find("mi300x"), native, &f3, &b3));
        assert_true(tp_rocm_attn(find("mi325x"), native, &f5, &b5));
        near("mi325x fwd", f5 / f3, clock, 1e-3);
        near("mi325x bwd", b5 / b3, clock, 1e-3);
    }
}

/* NVIDIA GPUs and unmeasured AMD parts have no ROCm kernel: tp_kernel_rel's figures apply. */
static void test_only_measured_gpus(void **state)
{
    (void)state;
    double f, b;
    const char *const none[] = {"h100-sxm", "b200", "a100-80gb", "mi250x", "max1550"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        assert_false(tp_rocm_attn(find(none[i]), true, &f, &b));
        assert_false(tp_rocm_attn_rel(find(none[i]), false, &f, &b));
    }
}

/* Against the H100: CK v3's forward on MI300X lands on the bound the MAMF sweeps gave before
   it was measured (668 of 1307.4 TF against 0.803 of 989 on H100 SXM, [MLE]: 0.64), within 1%;
   FlashAttention-2's CK build, forward and backward together, at 0.30 of the H100's share. */
static void test_relative_to_h100(void **state)
{
    (void)state;
    double f, b;
    assert_true(tp_rocm_attn_rel(find("mi300x"), true, &f, &b));
    near("ck v3 fwd vs MAMF bound", f, (668.0 / 1307.4) / 0.803, 0.01);
    assert_true(b < f); /* its backward is further from the H100's: 0.60 */
    assert_true(tp_rocm_attn_rel(find("mi300x"), false, &f, &b));
    double h100 = fwd_bwd(648, 561) / 989, mi = fwd_bwd(346.42, 203.78) / 1307.4;
    near("fa2-ck fwd+bwd share", mi / h100, 0.2977, 0.01);
    assert_true(f > b && f < 0.45 && b < 0.30);
}

/* tp_resolve_hw prices each stack's kernel: NeMo's (TE CK v3) and Axolotl's (FA2-CK) apart,
   forward by the forward's figure and the backward's time by the two passes' ratio;
   FlexAttention keeps the per-GPU bound (tp_kernel_rel's 0.64). */
static void test_resolve_per_stack(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct tp_cluster c;
    struct tp_calib cal;
    struct tp_job nemo, hf, flex;
    assert_int_equal(tp_cluster_init(&c, "mi300x", 8, &err), TP_OK);
    tp_calib_init(&cal);
    tp_job_init(&nemo);
    nemo.framework = TP_FW_MEGATRON;
    hf = nemo;
    hf.framework = TP_FW_AXOLOTL;
    flex = hf;
    flex.attn_impl = TP_ATTN_FLEX;
    struct hw hn, hh, hx;
    tp_resolve_hw(&c, &nemo, &cal, &hn);
    tp_resolve_hw(&c, &hf, &cal, &hh);
    tp_resolve_hw(&c, &flex, &cal, &hx);
    /* NeMo's CK v3 at its own measured rate (tp_rocm_attn_trained): the backward's seconds per
       forward second are attn_bwd_ratio x (fwd / bwd) */
    near("nemo forward", hn.attn_flops, 548.435e12, 1e-3);
    near("nemo bwd", hn.attn_bwd, cal.attn_bwd_ratio * (548.435 / 445.19), 1e-3);
    /* Axolotl's FlashAttention-2 CK build at the H100-fitted share times its ratio to FA3's
       (forward and backward apart) */
    near("hf forward", hh.attn_flops, 1307.4e12 * cal.attn_eff * (346.42 / 1307.4) / (648.0 / 989),
         1e-3);
    near("hf bwd", hh.attn_bwd, cal.attn_bwd_ratio * (346.42 / 203.78) / (648.0 / 561), 1e-3);
    /* FlexAttention: the bound x its A100-class factor, not a measured ROCm kernel */
    double rel, gemm, fa2, mamf4;
    tp_kernel_rel(find("mi300x"), &rel, &gemm, &fa2, &mamf4);
    near("flex", hx.attn_flops, 1307.4e12 * cal.attn_eff * rel * 0.90, 1e-3);
}

/* MI355X (gfx950): aiter's CK v3 rows ([AITER-MHA], batch 1, 64 query heads, 8 / 4 KV heads,
   seqlen 16384, non-causal): forward 1437.62 / 1432.94, backward with TE's default fp32 dQ
   atomics 843.54 / 843.24 TFLOP/s; no FlashAttention-2 CK build was measured there, so the
   Hugging Face stacks keep the per-GPU figures (tp_kernel_rel). */
static void test_mi355x_ck_v3(void **state)
{
    (void)state;
    double f, b;
    assert_true(tp_rocm_attn(find("mi355x"), true, &f, &b));
    near("mi355x ck v3 fwd", f, (1437.62 + 1432.94) / 2, 5e-4);
    near("mi355x ck v3 bwd a32", b, (843.54 + 843.24) / 2, 5e-4);
    assert_false(tp_rocm_attn(find("mi355x"), false, &f, &b));
    assert_false(tp_rocm_attn_rel(find("mi355x"), false, &f, &b));
    /* in training at its own rate: the forward's share of the 2500 TF peak, the backward's
       time per forward time */
    double share, bwd_time;
    assert_true(tp_rocm_attn_trained(find("mi355x"), &share, &bwd_time));
    near("mi355x share", share, 1435.28 / 2500, 1e-3);
    near("mi355x bwd time", bwd_time, 1435.28 / 843.39, 1e-3);
    assert_false(tp_rocm_attn_trained(find("h100-sxm"), &share, &bwd_time));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ck_v3_figures),     cmocka_unit_test(test_fa2_ck_figures),
        cmocka_unit_test(test_mi325x_same_die),   cmocka_unit_test(test_only_measured_gpus),
        cmocka_unit_test(test_relative_to_h100),  cmocka_unit_test(test_resolve_per_stack),
        cmocka_unit_test(test_mi355x_ck_v3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
