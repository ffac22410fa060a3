/*
 * precision.c - the training precisions: which tensor-core type their GEMMs run in and what a
 * quantized tensor costs in bytes (Transformer Engine recipes: Float8 per-tensor/blockwise,
 * MXFP8BlockScaling: E4M3 data + one E8M0 scale per 32 elements, NVFP4BlockScaling: E2M1 data
 * + one E4M3 scale per 16 elements (and an fp32 per-tensor scale), OCP MXFP4: E2M1 + one
 * E8M0 scale per 32).
 */
#include "plan_internal.h"

enum tp_dtype tp_prec_gemm_dtype(enum tp_precision p)
{
    switch (p) {
    case TP_PREC_FP8:
    case TP_PREC_MXFP8:
        return TP_FP8;
    case TP_PREC_NVFP4:
    case TP_PREC_MXFP4:
        return TP_FP4;
    case TP_PREC_FP32:
        return TP_TF32;
    case TP_PREC_BF16:
    case TP_PREC_FP16:
        break;
    }
    return TP_BF16;
}

double tp_prec_saved_bytes(enum tp_precision p)
{
    switch (p) {
    case TP_PREC_FP8:
        return 1;
    case TP_PREC_MXFP8:
        return 1 + 1.0 / 32;
    case TP_PREC_NVFP4:
        return 0.5 + 1.0 / 16;
    case TP_PREC_MXFP4:
        return 0.5 + 1.0 / 32;
    case TP_PREC_FP32:
        return 4;
    case TP_PREC_BF16:
    case TP_PREC_FP16:
        break;
    }
    return 2;
}

const char *tp_prec_name(enum tp_precision p)
{
    return tp_name(TP_NAMES_PRECISION, (int)p);
}
