/*
 * hw_rates.c - the rates one block's kernels run at on a GPU, for a precision, stack and
 * calibration (struct hw): the GEMMs' sustained share of the tensor-core peak (per dtype, FP8
 * and FP4 recipes, the casts Transformer Engine runs around them), the attention kernel's rate
 * by family (native / FlashAttention-2 / FlexAttention / cuDNN release / FP8, ROCm's measured
 * kernels, Blackwell Ultra's exponential units), HBM, and QLoRA's dequantization.  The
 * measured per-GPU ratios come from kernel_rates.c and attn_fp8.c; time_block.c prices the
 * block at these rates.
 */
#include "time_internal.h"

/* Bytes per weight element a weight-gradient GEMM moves for its output under a stack that
   accumulates into the fp32 main_grad (tp_stack.wgrad_main_grad: Megatron-Core): with
   gradient-accumulation fusion (Megatron-LM's default, --no-gradient-accumulation-fusion
   turns it off) Transformer Engine writes the weight gradient straight into the parameter's
   fp32 main_grad and adds to it: Linear and GroupedLinear pass `fuse_wgrad_accumulation` and
   the wgrad GEMM runs with `out=main_grad` (out_dtype taken from it, fp32 under the default
   grad_reduce_in_fp32 / accumulate_allreduce_grads_in_fp32 for bf16) and `accumulate=True`
   (D = A B + C: the epilogue reads C and writes D, 4 + 4 bytes) [TE-WGRAD]:
   transformer_engine/pytorch/module/grouped_linear.py (v2.4: `wgrad_list = main_grads`,
   `general_grouped_gemm(..., accumulate=accumulate_wgrad_into_param_main_grad)`), and
   cpp_extensions/gemm.py (`out_dtype = TE_DType[out[0].dtype]`).  Dense blocks, whose weight
   gradients reduce over thousands of tokens, stay compute-bound (arithmetic intensity
   2 x tokens / 8 FLOP per byte); an expert's at a few hundred rows does not: its main_grad
   read-modify-write takes longer than its FLOPs (docs/moe.md "The cost per local expert").
   The other stacks write a 16-bit gradient and add it elsewhere (host_ds.c, optimizer.c). */
#define WGRAD_ACCUM_B 8.0

void tp_resolve_hw(const struct tp_cluster *c, const struct tp_job *j,
                   const struct tp_calib *cal, struct hw *h)
{
    const struct tp_gpu *g = &c->gpu;
    const struct tp_calib_gpu *o = tp_calib_gpu_find(cal, g->key);
    double mamf, mamf8;
    tp_calib_gemm_rates(cal, g, &mamf, &mamf8);
    double attn_eff = o && o->attn_eff > 0 ? o->attn_eff : cal->attn_eff;
    double mem_eff = o && o->mem_eff > 0 ? o->mem_eff : cal->mem_eff;
    double p16 = g->peak_flops[TP_BF16];
    /* a compute-poor GPU's kernels run nearer their peak (tp_kernel_rel); neither the GEMMs nor
       the attention pass the MAMF sweep's rate or 0.95 of the peak */
    double rel_attn, rel_gemm, rel_fa2, rel_mamf4;
    tp_kernel_rel(g, &rel_attn, &rel_gemm, &rel_fa2, &rel_mamf4);
    /* ROCm: the stack's own attention kernel where it was measured (tp_rocm_attn: TE's CK v3
       under NeMo / Megatron, FlashAttention-2's CK build under the others); FlexAttention's
       Triton kernels keep the per-GPU bound */
    double rocm_fwd = 1, rocm_bwd = 1;
    if (j->attn_impl != TP_ATTN_FLEX &&
        tp_rocm_attn_rel(g, tp_attn_native(j), &rocm_fwd, &rocm_bwd))
        rel_attn = rocm_fwd;
    /* Blackwell Ultra's doubled exponential units speed the native kernels only, the forward
       more than the backward (tp_attn_sfu_rel); FlashAttention-2 stays mma.sync-bound */
    h->sfu_fwd = h->sfu_bwd = 1;
    if (tp_attn_native(j) || j->fp8_attention)
        tp_attn_sfu_rel(g, &h->sfu_fwd, &h->sfu_bwd);
    double gemm_scale = cal->gemm_scale * rel_gemm > 1 ? 1 : cal->gemm_scale * rel_gemm;
    attn_eff = attn_eff * rel_attn > 0.95 ? 0.95 : attn_eff * rel_attn;
    /* FlashAttention-2 is an Ampere-style (mma.sync) kernel: on async-MMA GPUs it reaches only
       fa2_ratio of the native kernel's rate.  FlexAttention against FlashAttention-2, the
       kernel the PyTorch stacks run beside it (Dong et al. 2024, arXiv:2412.05496, and the
       PyTorch blog of 2024-08): on A100 90% of its forward and 85% of its backward; on H100
       about 25% faster forward and 3% faster backward (there 85% and 76% of FlashAttention-3,
       which fa2_ratio, fitted to training runs, puts further from FlashAttention-2) */
    h->attn_bwd = cal->attn_bwd_ratio * rocm_fwd / rocm_bwd;
    /* ROCm's native kernel (TE's CK v3 under NeMo / Megatron / Primus) runs in training at its
       benchmarked rate, measured in a training trace (tp_rocm_attn_trained), not at the share
       fitted to NVIDIA's runs: its own rate replaces attn_eff x the kernels' ratio */
    double rocm_share, rocm_bwd_time;
    if (j->attn_impl != TP_ATTN_FLEX && tp_attn_native(j) &&
        tp_rocm_attn_trained(g, &rocm_share, &rocm_bwd_time)) {
        attn_eff = rocm_share;
        h->attn_bwd = cal->attn_bwd_ratio * rocm_bwd_time;
    }
    /* FP8 attention runs a native kernel (cuDNN through Transformer Engine, FlashAttention-3) */
    if (g->async_mma && !tp_attn_native(j) && !j->fp8_attention)
        attn_eff *= cal->fa2_ratio * rel_fa2;
    /* cuDNN's fused attention of the 2025-26 releases on Hopper (async MMA, no FP4 tensor
       cores: sm_90): cudnn_gen_ratio of the 2024 kernel the anchored rate carries (fit.c has
       the [CUDNN-FE] benchmarks).  Blackwell's kernels are their own family, anchored by
       2025-26 rows already. */
    if (j->attn_impl == TP_ATTN_CUDNN919 && g->async_mma && !(g->peak_flops[TP_FP4] > 0)) {
        attn_eff *= cal->cudnn_gen_ratio;
        attn_eff = attn_eff > 0.95 ? 0.95 : attn_eff;
    }
    if (j->attn_impl == TP_ATTN_FLEX) {
        attn_eff *= g->async_mma ? 1.25 : 0.90;
        h->attn_bwd *= g->async_mma ? 1.25 / 1.03 : 0.90 / 0.85;
    }
    /* FP8 attention: the FP8 kernel's measured rate over the 16-bit kernel's at the job's
       span, forward and backward apart (attn_fp8.c); FlashAttention-3's FP8 is a forward
       kernel only, its backward stays in 16 bits.  GPUs without a measurement keep the
       16-bit rate (ratio 1) */
    double attn16_eff = attn_eff;
    h->fp8_attn = j->fp8_attention && g->peak_flops[TP_FP8] > 0;
    if (h->fp8_attn) {
        double rf, rb;
        tp_attn_fp8_ratio(g, tp_attn_span(j), &rf, &rb);
        if (j->attn_impl == TP_ATTN_FLASH3)
            rb = 1;
        attn_eff *= rf;
        h->attn_bwd *= rf / rb;
    }
    enum tp_dtype gd = tp_prec_gemm_dtype(j->precision);
    h->gemm_dtype = gd;
    h->fp8 = (gd == TP_FP8 || gd == TP_FP4) && g->peak_flops[gd] > 0;
    /* FP8: 2 B read + 1 B written for the input; the gradient and its transpose, twice that.
       FP4 (NVFP4 recipe): the input cast writes the rowwise and the columnwise copy (2 x
       (0.5 + 1/16) B) in one pass; the gradient's columnwise copy goes through the random
       Hadamard transform in a pass of its own [derived from the byte counts] */
    h->cast_fwd = gd == TP_FP4 ? 2 + 2 * 0.5625 : 3;
    h->cast_bwd = gd == TP_FP4 ? 2 + 2 * 0.5625 + 2 + 0.5625 : 6;
    /* Transformer Engine on data-centre Blackwell (async MMA and FP4 tensor cores): cuBLASLt
       takes FP8 GEMMs in any layout, so a tensor-scaled operand keeps one copy and the
       gradient's cast writes no transpose, 2 B read + 1 B written [TE-NONTN]; MXFP8's 1 x 32
       blocks follow the reduction axis, so input and gradient each get a row-wise and a
       column-wise copy with one E8M0 scale per 32 values, in one pass [derived] */
    if (gd == TP_FP8 && g->async_mma && g->peak_flops[TP_FP4] > 0 &&
        j->framework == TP_FW_MEGATRON) {
        double bytes = j->precision == TP_PREC_MXFP8 ? 2 + 2 * (1 + 1.0 / 32) : 3;
        h->cast_fwd = h->cast_bwd = bytes;
    }
    h->rowwise = h->fp8 && gd == TP_FP8 && j->precision == TP_PREC_FP8 &&
                 j->fp8_recipe == TP_FP8_ROWWISE;
    h->rowwise_gemm = cal->fp8_rowwise_ratio > 0 ? cal->fp8_rowwise_ratio : 1;
    h->fp8_tp_gather = h->fp8 && gd == TP_FP8 && j->precision == TP_PREC_FP8 && !h->rowwise &&
                       tp_stack_get(j->framework)->fp8_tp_gather;
    /* FP4 GEMMs: the measured sustained share where there is one (tp_kernel_rel), else the
       FP8 share of the FP8 rate again [heuristic; no FP4 row in the calibration set] */
    double mamf4 = rel_mamf4 > 0 ? rel_mamf4 : mamf8 * cal->fp8_mamf_ratio;
    h->act_bytes = j->precision == TP_PREC_FP32 ? 4 : 2;
    if (j->precision == TP_PREC_FP32) {
        double p = g->peak_flops[TP_TF32] > 0 ? g->peak_flops[TP_TF32] : g->peak_flops[TP_FP32];
        h->gemm_flops = p * mamf * gemm_scale;
        h->gemm16_flops = h->gemm_flops;
        h->attn_flops = p * attn_eff;
        h->scan_flops = p * attn16_eff;
    } else {
        h->gemm16_flops = p16 * mamf * gemm_scale;
        h->gemm_flops = !h->fp8        ? p16 * mamf * gemm_scale
                        : gd == TP_FP4 ? g->peak_flops[TP_FP4] * mamf4 * gemm_scale
                                       : g->peak_flops[TP_FP8] * mamf8 * gemm_scale;
        h->attn_flops = p16 * attn_eff;
        h->scan_flops = p16 * attn16_eff;
    }
    h->fa_async = g->async_mma;
    h->fa_peak = p16 * (g->async_mma ? rel_fa2 : 1);
    h->mem_bw = g->hbm_bw * mem_eff;
    /* QLoRA's dequantization: bitsandbytes <= 0.47's kernel, the one the measured QLoRA runs
       executed (tp_nf4_dequant_bw) */
    h->nf4_bw = tp_nf4_dequant_bw(g, false);
    h->wgrad_out_b = tp_stack_get(j->framework)->wgrad_main_grad ? WGRAD_ACCUM_B : 2;
    h->sms = g->sms;
    h->tile_m = cal->tile_m ? cal->tile_m : 128;
    h->tile_n = cal->tile_n ? cal->tile_n : 128;
}
