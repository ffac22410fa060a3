/*
 * attn_fp8.c - FP8 attention (Megatron-Core --fp8-dot-product-attention, Transformer Engine's
 * fp8_dpa): how much faster the FP8 fused attention kernel runs than the 16-bit one on the same
 * GPU and shape, forward and backward apart, and the quantization passes it adds around the
 * kernel.  Pure and allocation-free (docs/calibration.md, "FP8 attention").
 *
 * Sources:
 * [CUDNN-FE-SDPA] NVIDIA/cudnn-frontend, benchmark/sdpa_benchmark_training/results (commit
 *   3929da2ef): the Llama 3.1 preset (64 query heads, 8 key/value heads, head dim 128, causal
 *   `top_left` mask, q = kv length 2k-32k), cuDNN's SDPA in bfloat16 and in fp8 (per-tensor
 *   scaled E4M3 forward, E5M2 gradients), forward and non-deterministic backward timed apart:
 *   llama3.1/gb200/llama3.1_20260424_100750.csv and llama3.1/gb300/llama3.1_20260424_100757.csv
 *   (cuDNN 9.22, batch 2), h200_919_only_cudnn/llama3.1_20260227_034703.csv (cuDNN 9.19.1,
 *   batch 1).  Cross-check: FlashAttention-3's FP8 forward on H100 "close to 1.2 PFLOPs/s"
 *   against 740 TFLOP/s in FP16 at its best shape (head dim 256; Shah et al. 2024,
 *   arXiv:2407.08608, abstract and Fig. 7): 1.6, where cuDNN's causal forward at head dim 128
 *   gives 1.44-1.51 on H200.
 * [TE-DPA] NVIDIA/TransformerEngine transformer_engine/pytorch/attention/dot_product_attention/
 *   backends.py (FusedAttnFunc, commit d0067d0da): with fp8_dpa the forward quantizes Q, K and
 *   V before the kernel (combine_and_quantize with the QKV quantizer) and the backward
 *   quantizes dO (the dO quantizer); the backward runs in FP8 unless NVTE_FP8_DPA_BWD=0.
 *   Under current scaling (the recipe MLPerf's Llama 3.1 8B runs, and TE's for FP8CS linears)
 *   the kernel writes O, dQ, dK and dV in 16 bits (NVTE_DPA_FP8CS_O_in_F16 defaults to 1), so
 *   no pass dequantizes them; each quantization is an amax reduction over the 16-bit tensor
 *   and then the cast (Float8CurrentScalingQuantizer).
 */
#include "time_internal.h"

#include <math.h>
#include <string.h>

/* Causal SDPA TFLOP/s of [CUDNN-FE-SDPA] at q = kv = 2k, 4k, 8k, 16k, 32k tokens. */
#define FP8_ATTN_POINTS 5
struct fp8_attn_figures {
    const char *keys; /* catalog keys that take these figures, "|"-separated */
    double bf16_fwd[FP8_ATTN_POINTS], fp8_fwd[FP8_ATTN_POINTS];
    double bf16_bwd[FP8_ATTN_POINTS], fp8_bwd[FP8_ATTN_POINTS];
};

/* Hopper: the H200 figures stand for every sm_90 part (the same SM and kernels; attention at
   these shapes is bound by the tensor cores and the softmax, not by HBM) [derived for H100,
   H800, H20].  Blackwell: GB200's for B200 (the same die), GB300's for B300.  The FP8
   backward on Hopper runs below the bf16 one past 4k keys (cuDNN 9.19.1 as measured). */
static const struct fp8_attn_figures FIG[] = {
    {"h200|h100-sxm|h100-pcie|h100-96gb|h800|h20",
     {484, 591, 644, 673, 688}, {698, 854, 964, 1010, 1042},
     {370, 474, 541, 579, 581}, {393, 471, 430, 374, 370}},
    {"gb200|b200",
     {1097, 1408, 1574, 1708, 1622}, {1420, 1805, 2047, 2154, 2197},
     {885, 1148, 1332, 1328, 1226}, {831, 1178, 1454, 1632, 1687}},
    {"gb300|b300",
     {1373, 1703, 1856, 1915, 1953}, {1954, 2532, 2897, 3054, 3108},
     {967, 1248, 1435, 1507, 1490}, {944, 1396, 1781, 2035, 2128}},
};

/* The ratio at `span` keys: linear in log2 of the length between the measured points, the end
   points' ratio outside 2k-32k. */
static double ratio_at(const double *bf16, const double *fp8, double span)
{
    double x = span > 0 ? log2(span) - 11 : 0; /* 2k -> 0, 32k -> 4 */
    if (x <= 0)
        return fp8[0] / bf16[0];
    if (x >= FP8_ATTN_POINTS - 1)
        return fp8[FP8_ATTN_POINTS - 1] / bf16[FP8_ATTN_POINTS - 1];
    int i = (int)x;
    double f = x - i, r0 = fp8[i] / bf16[i], r1 = fp8[i + 1] / bf16[i + 1];
    return r0 + f * (r1 - r0);
}

bool tp_attn_fp8_ratio(const struct tp_gpu *g, double span, double *fwd, double *bwd)
{
    *fwd = *bwd = 1;
    if (!g->key)
        return false;
    for (size_t i = 0; i < sizeof FIG / sizeof FIG[0]; i++)
        if (tp_in_list(FIG[i].keys, g->key)) {
            *fwd = ratio_at(FIG[i].bf16_fwd, FIG[i].fp8_fwd, span);
            *bwd = ratio_at(FIG[i].bf16_bwd, FIG[i].fp8_bwd, span);
            return true;
        }
    return false;
}

/* Bytes per local token the FP8 attention's quantization passes move [TE-DPA], current
   scaling: forward Q, K and V (an amax read of the 16-bit tensor, 2 B, then the cast, 2 B
   read and 1 B written), backward dO the same; K and V per key/value head (MLA's per query
   head).  `tp` splits the heads. */
void tp_attn_fp8_cast_bytes(const struct tp_model *m, double tp, double *fwd, double *bwd)
{
    double q, kv, o;
    if (m->attn == TP_ATTN_MLA) {
        q = (double)m->n_heads * ((double)m->qk_nope_dim + m->qk_rope_dim);
        kv = q + (double)m->n_heads * m->v_head_dim;
        o = (double)m->n_heads * m->v_head_dim;
    } else {
        q = o = (double)m->n_heads * m->head_dim;
        kv = 2.0 * m->n_kv_heads * m->head_dim;
    }
    *fwd = 5 * (q + kv) / tp;
    *bwd = 5 * o / tp;
}
