/*
 * check.c - input checks at the library's boundaries that are not about divisibility: the
 * cluster's figures against the job's precision, and the whole of a run (model, cluster, job,
 * layout, calibration) at the entry of the functions that take a checked layout, so that a
 * caller's zeroed or hand-edited struct gets TP_EINVAL, never a division by zero, an infinite
 * time or a figure above the hardware's peak.
 */
#include "plan_internal.h"

#include <math.h>
#include <stddef.h>

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

/* The tensor-core rate the job's GEMMs run at: what tp_time_step prices them with and what
   MFU is measured against (fp32 jobs run their matmuls as TF32 where the GPU has it). */
double tp_job_peak_flops(const struct tp_cluster *c, const struct tp_job *j)
{
    const double *p = c->gpu.peak_flops;
    switch (j->precision) {
    case TP_PREC_FP32:
        return p[TP_TF32] > 0 ? p[TP_TF32] : p[TP_FP32];
    case TP_PREC_FP8: /* MFU stays against the 16-bit peak, as Megatron and torchtitan report */
    case TP_PREC_MXFP8:
    case TP_PREC_NVFP4:
    case TP_PREC_MXFP4:
    case TP_PREC_BF16:
    case TP_PREC_FP16:
        break;
    }
    return p[TP_BF16];
}

enum tp_status tp_cluster_check(const struct tp_cluster *c, const struct tp_job *j,
                                struct tp_error *err)
{
    if (!c || !j)
        return tp_fail(err, TP_EINVAL, "no cluster or job given");
    const struct tp_gpu *g = &c->gpu;
    const char *key = g->key ? g->key : "the GPU";
    if (c->gpus_per_node == 0 || c->gpus_per_node > (1u << 20))
        return tp_fail(err, TP_EINVAL, "gpus_per_node %u is out of range (1..1048576)",
                       c->gpus_per_node);
    for (int d = 0; d < TP_DTYPE_COUNT; d++)
        if (!isfinite(g->peak_flops[d]) || g->peak_flops[d] < 0 || g->peak_flops[d] > 1e18)
            return tp_fail(err, TP_EINVAL, "%s: a peak rate is not a finite figure in "
                                           "0..1e18 FLOP/s", key);
    unsigned pi = (unsigned)j->precision;
    if (pi >= TP_PREC_COUNT)
        return tp_fail_field(err, TP_EINVAL, "precision",
                             "precision %u is not one of bf16, fp16, fp8, fp32, mxfp8, nvfp4, "
                             "mxfp4", pi);
    /* Megatron-Core keeps Transformer Engine's FP8 weights only under an FP8 recipe
       (--fp8-param-gather with --fp8-format; FP4 has its own --fp4-param-gather) */
    if (j->fp8_param_gather && j->precision != TP_PREC_FP8 && j->precision != TP_PREC_MXFP8)
        return tp_fail_field(err, TP_EINVAL, "fp8_param_gather",
                             "fp8_param_gather needs precision fp8 or mxfp8, not %s",
                             tp_prec_name(j->precision));
    /* the frozen weights' storage is a LoRA base's (QLoRA's is NF4) */
    if (j->frozen_weights != TP_FROZEN_AUTO && j->task != TP_TASK_LORA)
        return tp_fail_field(err, TP_EINVAL, "frozen_weights",
                             "frozen_weights needs task lora (the frozen base's storage), "
                             "not %s", tp_name(TP_NAMES_TASK, (int)j->task));
    if ((unsigned)j->frozen_weights > TP_FROZEN_NVFP4)
        return tp_fail_field(err, TP_EINVAL, "frozen_weights",
                             "frozen_weights %u is not one of auto, 16bit, fp8, mxfp8, nvfp4",
                             (unsigned)j->frozen_weights);
    /* FP8 attention (Megatron-Core --fp8-dot-product-attention) runs under an FP8 recipe
       (Transformer Engine's fp8_dpa is a field of the FP8 recipe, NVFP4's included) in an FP8
       kernel: cuDNN's fused attention or FlashAttention-3, never FlashAttention-2, FlexAttention
       or eager attention */
    if (j->fp8_attention && tp_prec_gemm_dtype(j->precision) != TP_FP8 &&
        tp_prec_gemm_dtype(j->precision) != TP_FP4)
        return tp_fail_field(err, TP_EINVAL, "fp8_attention",
                             "fp8_attention needs precision fp8, mxfp8, nvfp4 or mxfp4, not %s",
                             tp_prec_name(j->precision));
    /* Megatron-Core stores the activation input in FP8 under an FP8 recipe
       (activation_func_fp8_input_store, megatron/core/fusions/fused_bias_swiglu.py) */
    if (j->fp8_act_store && tp_prec_gemm_dtype(j->precision) != TP_FP8 &&
        tp_prec_gemm_dtype(j->precision) != TP_FP4)
        return tp_fail_field(err, TP_EINVAL, "fp8_act_store",
                             "fp8_act_store needs precision fp8, mxfp8, nvfp4 or mxfp4, not %s",
                             tp_prec_name(j->precision));
    if (j->fp8_attention && g->peak_flops[TP_FP8] <= 0)
        return tp_fail_field(err, TP_EINVAL, "fp8_attention",
                             "fp8_attention: %s has no FP8 tensor cores (catalog fp8 peak 0)",
                             key);
    if (j->fp8_attention && (j->attn_impl == TP_ATTN_EAGER || j->attn_impl == TP_ATTN_FLASH2 ||
                             j->attn_impl == TP_ATTN_FLEX))
        return tp_fail_field(err, TP_EINVAL, "fp8_attention",
                             "fp8_attention runs cuDNN's fused attention or FlashAttention-3, "
                             "not attention %s", j->attn_impl == TP_ATTN_EAGER ? "eager"
                             : j->attn_impl == TP_ATTN_FLASH2 ? "flash2" : "flex");
    if (j->doc_len > j->seq)
        return tp_fail_field(err, TP_EINVAL, "doc_len",
                             "doc_len %u exceeds the sequence length %llu (a packed document "
                             "is at most one sample)", j->doc_len, (unsigned long long)j->seq);
    /* torchao's row-wise recipe (the stacks that run it: tp_stack_check) */
    if ((unsigned)j->fp8_recipe > TP_FP8_ROWWISE)
        return tp_fail_field(err, TP_EINVAL, "fp8_recipe",
                             "fp8_recipe %u is not one of tensorwise, rowwise",
                             (unsigned)j->fp8_recipe);
    if (j->fp8_recipe == TP_FP8_ROWWISE && j->precision != TP_PREC_FP8)
        return tp_fail_field(err, TP_EINVAL, "fp8_recipe",
                             "fp8_recipe rowwise needs precision fp8, not %s",
                             tp_prec_name(j->precision));
    if (j->fp8_recipe == TP_FP8_ROWWISE && j->fp8_param_gather)
        return tp_fail_field(err, TP_EINVAL, "fp8_recipe",
                             "fp8_recipe rowwise gathers the weights in 16 bits: torchao's FP8 "
                             "all-gather is tensor-wise only (drop fp8_param_gather)");
    /* FP4 and the MX formats need block-scaled tensor cores: Blackwell (B200, B300, GB200,
       GB300, RTX 5090) and MI355X, the parts the catalog gives an FP4 rate */
    if (tp_prec_gemm_dtype(j->precision) == TP_FP4 && g->peak_flops[TP_FP4] <= 0)
        return tp_fail_field(err, TP_EINVAL, "precision",
                             "precision %s: %s has no FP4 tensor cores (catalog fp4 peak 0); FP4 "
                             "training needs B200, B300, GB200, GB300, MI355X or RTX 5090",
                             tp_prec_name(j->precision), key);
    if (j->precision == TP_PREC_MXFP8 && g->peak_flops[TP_FP4] <= 0)
        return tp_fail_field(err, TP_EINVAL, "precision",
                             "precision mxfp8: %s has no block-scaled (MX) tensor cores; use "
                             "precision=fp8 (per-tensor or blockwise scaling) or a Blackwell / "
                             "MI355X GPU", key);
    /* the catalog's 0 means the part has no such unit (datasheets, src/plan/gpus.c): a job in that
       precision has no rate to run at, and bf16 pricing would be a silent wrong answer */
    if (j->precision == TP_PREC_FP8 && g->peak_flops[TP_FP8] <= 0)
        return tp_fail_field(err, TP_EINVAL, "precision",
                             "precision fp8: %s has no FP8 tensor cores (catalog "
                                       "fp8 peak 0); use bf16 or an FP8 GPU (H100, MI300X, ...)",
                       key);
    if (!positive(tp_job_peak_flops(c, j)))
        return tp_fail_field(err, TP_EINVAL, "precision",
                             "precision %s: %s has no %s rate in the catalog",
                             tp_prec_name(j->precision),
                       key, j->precision == TP_PREC_FP32 ? "fp32/tf32" : "16-bit");
    if (!positive(g->hbm_bytes) || !positive(g->hbm_bw) || !positive(g->intra_bw))
        return tp_fail(err, TP_EINVAL, "%s: memory capacity, memory bandwidth and scale-up "
                                       "bandwidth must be positive", key);
    if (!isfinite(g->inter_bw) || g->inter_bw < 0 || !isfinite(g->host_bw) || g->host_bw < 0)
        return tp_fail(err, TP_EINVAL, "%s: network and host bandwidths must be finite and "
                                       "non-negative", key);
    if (c->n_gpus > c->gpus_per_node && !positive(g->inter_bw))
        return tp_fail(err, TP_EINVAL, "%u GPUs span nodes of %u but %s has no network "
                                       "bandwidth", c->n_gpus, c->gpus_per_node, key);
    return TP_OK;
}

static enum tp_status check_layout_sizes(const struct tp_model *m, const struct tp_cluster *c,
                                         const struct tp_job *j, const struct tp_layout *l,
                                         struct tp_error *err)
{
    const uint32_t v[] = {l->dp, l->tp, l->pp, l->vpp, l->ep, l->etp, l->cp, l->mbs, l->gas};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] == 0 || v[i] > (1u << 20))
            return tp_fail(err, TP_EINVAL, "the layout is not checked (dp, tp, pp, vpp, ep, etp, "
                                           "cp, mbs and gas must be 1..1048576: "
                                           "tp_layout_check)");
    /* each factor <= 2^20 and n_gpus < 2^32: the product is compared before it can wrap */
    uint64_t world = (uint64_t)l->tp * l->pp * l->cp;
    if (c->n_gpus == 0 || world > c->n_gpus || world * l->dp != c->n_gpus)
        return tp_fail(err, TP_EINVAL, "tp*pp*cp*dp is not the GPU count %u", c->n_gpus);
    if (l->pp > m->n_layers || j->seq == 0 || j->seq > (1u << 24) || j->seq % l->cp)
        return tp_fail(err, TP_EINVAL, "pp, the sequence length or cp is out of range");
    return TP_OK;
}

enum tp_status tp_calib_check(const struct tp_calib *cal, struct tp_error *err)
{
    const double eff[] = {cal->mamf_default, cal->gemm_scale, cal->attn_eff, cal->attn_bwd_ratio,
                          cal->mem_eff,      cal->eff_intra,  cal->eff_inter, cal->eff_pcie,
                          cal->opt_eff};
    for (size_t i = 0; i < sizeof eff / sizeof eff[0]; i++)
        if (!positive(eff[i]))
            return tp_fail(err, TP_EINVAL, "the calibration's efficiencies must be positive "
                                           "(tp_calib_init)");
    if (!(cal->attn_block_keys >= 0 && isfinite(cal->attn_block_keys)))
        return tp_fail(err, TP_EINVAL, "the calibration's attn_block_keys must be finite and "
                                       "not negative");
    return TP_OK;
}

enum tp_status tp_run_check(const struct tp_model *m, const struct tp_cluster *c,
                            const struct tp_job *j, const struct tp_layout *l,
                            const struct tp_calib *cal, struct tp_error *err)
{
    if (!m || !c || !j || !l)
        return tp_fail(err, TP_EINVAL, "a model, cluster, job and layout are needed");
    TRY(tp_model_shape_check(m, err));
    TRY(tp_cluster_check(c, j, err));
    TRY(tp_flash1_check(m, c, j, err));
    TRY(check_layout_sizes(m, c, j, l, err));
    return cal ? tp_calib_check(cal, err) : TP_OK;
}
