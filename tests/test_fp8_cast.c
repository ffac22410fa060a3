/*
 * test_fp8_cast.c - the bytes the FP8 casts move around each linear layer (tp_resolve_hw's
 * cast_fwd / cast_bwd, src/eval/time_block.c), from Transformer Engine's code:
 *
 *   [TE-NONTN] NVIDIA/TransformerEngine: common/gemm/cublaslt_gemm.cu takes the column-wise
 *   (transposed) FP8 copy only when !nvte_is_non_tn_fp8_gemm_supported() ("Hopper only
 *   supports TN GEMMs for FP8"); pytorch/csrc/quantizer.cpp creates that copy only then
 *   (create_transpose = columnwise_usage && !non_tn_fp8_gemm_supported(); compute capability
 *   10.x and up).  So on data-centre Blackwell a tensor-scaled FP8 tensor is cast once (2 B
 *   read, 1 B written), and MXFP8 writes its row-wise and column-wise copies, each with one
 *   E8M0 scale per 32 elements, in one pass (2 + 2 x 33/32 B).
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

static void casts(const char *gpu, enum tp_precision p, enum tp_framework fw, double *fwd,
                  double *bwd)
{
    fixture_run("llama-3.1-8b", gpu, 8);
    job.precision = p;
    job.framework = fw;
    struct hw h;
    tp_resolve_hw(&cluster, &job, &cal, &h);
    assert_true(h.fp8);
    *fwd = h.cast_fwd;
    *bwd = h.cast_bwd;
}

static void test_blackwell_te(void **state)
{
    (void)state;
    double f, b;
    /* tensor-wise FP8 under TE on sm_100 / sm_103: no transpose copy of the gradient */
    const char *bw[] = {"b200", "gb200", "b300", "gb300"};
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
        casts(bw[i], TP_PREC_FP8, TP_FW_MEGATRON, &f, &b);
        near(f, 2 + 1, 0);
        near(b, 2 + 1, 0);
    }
    /* MXFP8: row-wise and column-wise copies with their 1x32 block scales, one pass */
    casts("gb200", TP_PREC_MXFP8, TP_FW_MEGATRON, &f, &b);
    near(f, 2 + 2 * (1 + 1.0 / 32), 1e-12);
    near(b, 2 + 2 * (1 + 1.0 / 32), 1e-12);
}

static void test_hopper_and_other_stacks(void **state)
{
    (void)state;
    double f, b, f2, b2;
    /* Hopper's FP8 GEMMs are TN only: the gradient is cast with its transpose */
    casts("h100-sxm", TP_PREC_FP8, TP_FW_MEGATRON, &f, &b);
    near(f, 3, 0);
    near(b, 6, 0);
    /* torchao's casts on Blackwell are not Transformer Engine's: unchanged */
    casts("b200", TP_PREC_FP8, TP_FW_TORCHTITAN, &f2, &b2);
    near(f2, f, 0);
    near(b2, b, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blackwell_te),
        cmocka_unit_test(test_hopper_and_other_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
