/*
 * align.c - GEMM widths that tensor-core kernels run below their rate: the penalty the time
 * model applies (time_block.c) and the model dimensions that `params` and `search` warn about.
 *
 * Source: NVIDIA, Matrix Multiplication Background User's Guide (DU-09799-001), "Tensor Core
 * Requirements": tensor cores are used most efficiently when the dimensions are multiples of
 * 16 bytes, and on A100 of 128 bytes (64 16-bit elements).  Magnitude: BigScience's BLOOM-176B
 * shape search on 320 A100 80GB (bigscience-workshop/bigscience,
 * train/tr11-176B-ml/chronicles-prequel.md, "tile and wave quantization", 02-20): TP 8, PP 10,
 * DP 4, MBS 1, GBS 2048, 80 layers, 96 heads: hidden 14400 (1800, 5400 and 7200 wide per TP
 * rank, head dim 150) ran 221.21 s per iteration against 160.29 s for hidden 13824 (every width
 * on the 128-byte grid), a 1.380 ratio where the FLOPs alone give 1.085.  TP_ALIGN_EFF is the
 * factor that makes the time model reproduce that ratio (tests/test_time.c pins it); a width
 * off the 16-byte grid pays it twice [derived].
 */
#include "eval_internal.h"

#include <math.h>
#include <stdio.h>

#define TP_ALIGN_EFF 0.73

double tp_gemm_align_eff(double width, double elem_bytes)
{
    double bytes = width * elem_bytes;
    if (fmod(bytes, 128) == 0)
        return 1;
    return fmod(bytes, 16) == 0 ? TP_ALIGN_EFF : TP_ALIGN_EFF * TP_ALIGN_EFF;
}

static size_t add(struct tp_misalign *out, size_t n, size_t cap, const char *what, double dim,
                  double split, double elem_bytes, double floor_eff)
{
    double width = dim / split, eff = tp_gemm_align_eff(width, elem_bytes);
    if (dim <= 0 || eff >= floor_eff)
        return n;
    if (n < cap) {
        struct tp_misalign *a = &out[n];
        double grid = 128 / elem_bytes * split; /* the model dimension's aligned step */
        double lo = floor(dim / grid) * grid, hi = lo + grid;
        tp_snprintf(a->what, sizeof a->what, "%s", what);
        a->dim = dim;
        a->width = width;
        a->nearest = lo > 0 && dim - lo <= hi - dim ? lo : hi;
        a->eff = eff;
    }
    return n + 1;
}

size_t tp_model_misaligned(const struct tp_model *m, uint32_t tp, enum tp_precision p,
                           struct tp_misalign *out, size_t cap)
{
    double t = tp ? tp : 1, eb = tp_prec_gemm_dtype(p) == TP_FP8 ? 1
                                 : tp_prec_gemm_dtype(p) == TP_FP4 ? 0.5 : 2;
    size_t n = 0;
    n = add(out, n, cap, "hidden", m->hidden, 1, eb, 1);
    if (m->attn != TP_ATTN_MLA) {
        n = add(out, n, cap, "heads x head_dim", (double)m->n_heads * m->head_dim, t, eb, 1);
        n = add(out, n, cap, "kv_heads x head_dim", (double)m->n_kv_heads * m->head_dim, t, eb,
                1);
    }
    n = add(out, n, cap, "ffn", m->ffn, t, eb, 1);
    n = add(out, n, cap, "moe_ffn", m->moe_ffn, t, eb, 1);
    /* the attention kernel's own width: fused kernels take head dims on the 16-byte grid
       (FlashAttention's 32..256; 96 and 144 run at their rate), so only a head dim off it */
    if (m->attn != TP_ATTN_MLA)
        n = add(out, n, cap, "head_dim", m->head_dim, 1, eb, TP_ALIGN_EFF);
    return n;
}
