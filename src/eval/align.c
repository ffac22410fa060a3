/*
 * align.c - GEMM widths that tensor-core kernels run below their rate: the penalty the time
 * model applies (time_block.c) and the model dimensions that `params` and `search` warn about.
 *
 * The grids: [NV-DL] Matrix Multiplication Background, "Tensor Core Requirements": cuBLAS >= 11
 * runs tensor cores at any size, most efficiently when the dimensions are multiples of 16
 * bytes, and on A100 of 128 bytes (64 16-bit elements).
 *
 * The rate off the 16-byte grid: [NANOGPT] commit 77e7e04c (GPT-2 124M on one A100, bf16,
 * torch.compile, 12 x 1024 tokens): padding the vocabulary 50257 -> 50304, the nearest
 * multiple of 64, made the step "about 25% faster", the last layer having taken "about 40% of
 * latency".  The rest of the step unchanged, the head went from 0.40 of the old step to
 * 0.40 - (1 - 1/1.25) = 0.20 of it: an odd width (2-byte aligned) ran the head's GEMMs at
 * TP_ALIGN_RAGGED = 0.20 / 0.40 = 0.5 of the aligned rate (tests/test_time.c pins it).
 * Between the grids (16-byte aligned, off the 128-byte grid) no published measurement we know
 * of isolates the loss: the square root of the ragged rate, the geometric middle [derived].
 * One figure for every tensor-core generation: the only measurement is an A100's.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdio.h>

#define TP_ALIGN_RAGGED 0.5 /* off the 16-byte grid: nanoGPT 50257 vs 50304 (A100) */

double tp_gemm_align_eff(double width, double elem_bytes)
{
    double bytes = width * elem_bytes;
    if (fmod(bytes, 128) == 0)
        return 1;
    return fmod(bytes, 16) == 0 ? sqrt(TP_ALIGN_RAGGED) : TP_ALIGN_RAGGED;
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
        n = add(out, n, cap, "head_dim", m->head_dim, 1, eb, sqrt(TP_ALIGN_RAGGED));
    return n;
}
