/*
 * export_megatron.c - Megatron-LM / Megatron-DeepSpeed arguments of a plan, one per line in a
 * bash array (megatron_args.sh) that the launch script passes to pretrain_gpt.py.
 *
 * Flags are those of the frameworks' argument parsers: Megatron-LM
 * megatron/training/arguments.py (explicit add_argument calls) and training_config.py (the
 * dataclass fields ArgumentGroupFactory turns into --micro-batch-size, --global-batch-size,
 * --ckpt-format); Megatron-DeepSpeed megatron/arguments.py plus DeepSpeed's --deepspeed and
 * --deepspeed_config (deepspeed/__init__.py add_config_arguments).  docs/export.md names the
 * commits checked; test_export pins every name.
 */
#include "export_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tp_arg(struct tp_flags *a, const char *flag, const char *fmt, ...)
{
    if (a->n == TP_MAX_ARGS) {
        a->overflow = true;
        return;
    }
    a->flag[a->n] = flag;
    va_list ap;
    va_start(ap, fmt);
    int k = tp_vsnprintf(a->value[a->n], sizeof a->value[a->n], fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof a->value[a->n])
        a->overflow = true; /* never a silently cut value: render refuses */
    a->n++;
}

void tp_sw(struct tp_flags *a, const char *flag)
{
    if (a->n == TP_MAX_ARGS) {
        a->overflow = true;
        return;
    }
    a->flag[a->n] = flag;
    a->value[a->n][0] = '\0';
    a->n++;
}

/* Whether blocks [from, n) repeat a unit of `per` blocks holding both dense and MoE ones. */
static bool periodic(const struct tp_model *m, uint32_t from, uint32_t per)
{
    uint32_t rest = m->n_layers - from;
    if (rest < 2 * per || rest % per != 0)
        return false;
    bool dense = false, moe = false;
    for (uint32_t i = from; i < from + per; i++) {
        if (m->layer_moe[i])
            moe = true;
        else
            dense = true;
    }
    for (uint32_t i = from + per; i < m->n_layers; i++)
        if (m->layer_moe[i] != m->layer_moe[i - per])
            return false;
    return dense && moe;
}

/* --moe-layer-freq as Megatron's Python list pattern (arguments.py moe_freq_type: 1 = MoE
   block): a repeated unit where the blocks have one, after the leading dense blocks or from
   the first ("([0,1]*24)", "([0]*1+[0,1]*23)"), else run by run ("([0]*3+[1]*43)"). */
static void moe_pattern(const struct tp_model *m, char *buf, size_t len)
{
    uint32_t n = m->n_layers, lead = 0;
    while (lead < n && !m->layer_moe[lead])
        lead++;
    size_t o = (size_t)tp_snprintf(buf, len, "(");
    const uint32_t starts[] = {0, lead};
    for (size_t s = 0; s < 2; s++)
        for (uint32_t per = 2, f = starts[s]; per <= 8; per++) {
            if (!periodic(m, f, per))
                continue;
            if (f)
                o += (size_t)tp_snprintf(buf + o, o < len ? len - o : 0, "[0]*%u+", f);
            o += (size_t)tp_snprintf(buf + o, o < len ? len - o : 0, "[");
            for (uint32_t i = 0; i < per; i++)
                o += (size_t)tp_snprintf(buf + o, o < len ? len - o : 0, "%s%u", i ? "," : "",
                                         m->layer_moe[f + i] ? 1 : 0);
            tp_snprintf(buf + o, o < len ? len - o : 0, "]*%u)", (n - f) / per);
            return;
        }
    for (uint32_t i = 0; i < n && o < len;) {
        uint32_t k = i;
        while (k < n && m->layer_moe[k] == m->layer_moe[i])
            k++;
        o += (size_t)tp_snprintf(buf + o, len - o, "%s[%u]*%u", i ? "+" : "",
                                 m->layer_moe[i] ? 1 : 0, k - i);
        i = k;
    }
    if (o < len)
        tp_snprintf(buf + o, len - o, ")");
}

static bool all_moe(const struct tp_model *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (!m->layer_moe[i])
            return false;
    return true;
}

static void shape_lm(const struct tp_export_plan *p, struct tp_flags *a)
{
    const struct tp_model *m = p->m;
    tp_arg(a, "--num-layers", "%u", m->n_layers);
    tp_arg(a, "--hidden-size", "%u", m->hidden);
    if (m->ffn)
        tp_arg(a, "--ffn-hidden-size", "%u", m->ffn);
    tp_arg(a, "--num-attention-heads", "%u", m->n_heads);
    if (m->attn == TP_ATTN_MLA) {
        tp_sw(a, "--multi-latent-attention");
        if (m->q_lora_rank)
            tp_arg(a, "--q-lora-rank", "%u", m->q_lora_rank);
        tp_arg(a, "--kv-lora-rank", "%u", m->kv_lora_rank);
        tp_arg(a, "--qk-head-dim", "%u", m->qk_nope_dim);
        tp_arg(a, "--qk-pos-emb-head-dim", "%u", m->qk_rope_dim);
        tp_arg(a, "--v-head-dim", "%u", m->v_head_dim);
    } else {
        if (m->head_dim * m->n_heads != m->hidden)
            tp_arg(a, "--kv-channels", "%u", m->head_dim);
        if (m->n_kv_heads < m->n_heads) {
            tp_sw(a, "--group-query-attention");
            tp_arg(a, "--num-query-groups", "%u", m->n_kv_heads);
        }
    }
    tp_arg(a, "--seq-length", "%llu", (unsigned long long)p->j->seq);
    uint64_t maxpos = m->pos == TP_POS_LEARNED && m->max_positions > p->j->seq ? m->max_positions
                                                                               : p->j->seq;
    tp_arg(a, "--max-position-embeddings", "%llu", (unsigned long long)maxpos);
    tp_arg(a, "--position-embedding-type", "%s",
        m->pos == TP_POS_ROPE ? "rope" : m->pos == TP_POS_LEARNED ? "learned_absolute" : "none");
    tp_arg(a, "--normalization", "%s", m->norm == TP_NORM_RMS ? "RMSNorm" : "LayerNorm");
    if (m->mlp == TP_MLP_GLU)
        tp_sw(a, "--swiglu");
    if (!m->tied)
        tp_sw(a, "--untie-embeddings-and-output-weights");
    if (!m->qkv_bias && !m->o_bias && !m->mlp_bias)
        tp_sw(a, "--disable-bias-linear");
    else if (m->qkv_bias && !m->o_bias && !m->mlp_bias) {
        tp_sw(a, "--disable-bias-linear");
        tp_sw(a, "--add-qkv-bias");
    }
    if (m->qk_norm)
        tp_sw(a, "--qk-layernorm");
}

static void moe_lm(const struct tp_export_plan *p, struct tp_flags *a)
{
    const struct tp_model *m = p->m;
    if (!m->n_experts)
        return;
    tp_arg(a, "--num-experts", "%u", m->n_experts);
    tp_arg(a, "--moe-router-topk", "%u", m->top_k);
    tp_arg(a, "--moe-ffn-hidden-size", "%u", m->moe_ffn);
    uint32_t shared = m->shared_ffn ? m->shared_ffn : m->n_shared_experts * m->moe_ffn;
    if (shared)
        tp_arg(a, "--moe-shared-expert-intermediate-size", "%u", shared);
    if (!all_moe(m)) {
        char pat[TP_ARG_LEN - 2];
        moe_pattern(m, pat, sizeof pat);
        tp_arg(a, "--moe-layer-freq", "\"%s\"", pat);
    }
    tp_sw(a, "--moe-grouped-gemm");
    /* the dispatcher the plan priced (docs/moe.md): DeepEP through the flex dispatcher */
    if (p->j->moe_dispatcher == TP_MOE_DISPATCH_FLEX) {
        tp_arg(a, "--moe-token-dispatcher-type", "flex");
        tp_sw(a, "--moe-enable-deepep");
    } else if (p->j->moe_dispatcher == TP_MOE_DISPATCH_HYBRIDEP) {
        /* Megatron-Core arguments.py: --moe-flex-dispatcher-backend {deepep,hybridep} */
        tp_arg(a, "--moe-token-dispatcher-type", "flex");
        tp_arg(a, "--moe-flex-dispatcher-backend", "hybridep");
    } else {
        tp_arg(a, "--moe-token-dispatcher-type", "%s",
            p->j->moe_dispatcher == TP_MOE_DISPATCH_ALLGATHER ? "allgather" : "alltoall");
    }
    /* node-limited routing (--moe-router-num-groups / --moe-router-group-topk) is a model field:
       export_model.c writes it from the config */
    if (p->j->moe_capacity > 0)
        tp_arg(a, "--moe-expert-capacity-factor", "%g", p->j->moe_capacity);
    if (p->j->moe_pad_capacity) /* the padding the plan priced (moe_skew.c tp_moe_load) */
        tp_sw(a, "--moe-pad-expert-input-to-capacity");
    if (m->router_score_bias)
        tp_sw(a, "--moe-router-enable-expert-bias");
}

static enum tp_status layout_lm(const struct tp_export_plan *p, struct tp_flags *a,
                                struct tp_error *err)
{
    const struct tp_layout *l = p->l;
    tp_arg(a, "--tensor-model-parallel-size", "%u", l->tp);
    tp_arg(a, "--pipeline-model-parallel-size", "%u", l->pp);
    if (l->vpp > 1)
        tp_arg(a, "--num-virtual-stages-per-pipeline-rank", "%u", l->vpp);
    if (l->pp_first)
        tp_arg(a, "--decoder-first-pipeline-num-layers", "%u", l->pp_first);
    if (l->pp_last)
        tp_arg(a, "--decoder-last-pipeline-num-layers", "%u", l->pp_last);
    tp_arg(a, "--context-parallel-size", "%u", l->cp);
    if (p->m->n_experts) {
        tp_arg(a, "--expert-model-parallel-size", "%u", l->ep);
        if (l->etp != l->tp)
            tp_arg(a, "--expert-tensor-parallel-size", "%u", l->etp);
    }
    if (l->sp)
        tp_sw(a, "--sequence-parallel");
    /* DualPipe is ported to Megatron-LM (megatron/core/pipeline_parallel/dualpipe, PR #5254)
       but no training flag runs it: refuse rather than write a 1F1B run */
    if (l->schedule == TP_SCHED_DUALPIPE)
        return tp_fail(err, TP_EUNSUPPORTED, "Megatron-LM has no flag for DualPipe (schedule "
                                             "dualpipe): its training loop runs 1F1B or "
                                             "interleaved pipelines");
    if (l->zero == 1) {
        tp_sw(a, "--use-distributed-optimizer");
    } else if (l->zero >= 2) { /* Megatron-FSDP: ZeRO-2 = optim_grads, ZeRO-3 = + params */
        tp_sw(a, "--use-megatron-fsdp");
        tp_arg(a, "--data-parallel-sharding-strategy", "%s",
            l->zero == 2 ? "optim_grads" : "optim_grads_params");
        tp_arg(a, "--ckpt-format", "fsdp_dtensor"); /* the only format Megatron-FSDP saves */
    }
    /* --fp8-param-gather without the distributed optimizer: rule megatron-fp8-gather-distopt
       (tp_export_build checks the target's rules) */
    if (l->dp > 1) {
        tp_sw(a, "--overlap-grad-reduce");
        if (l->zero == 1)
            tp_sw(a, "--overlap-param-gather");
    }
    if (l->offload == TP_OFFLOAD_PARAMS)
        return tp_fail(err, TP_EUNSUPPORTED, "Megatron-LM offloads the optimizer, not the "
                                             "parameters (--optimizer-cpu-offload)");
    if (l->offload == TP_OFFLOAD_OPTIMIZER) {
        if (l->zero != 1)
            return tp_fail(err, TP_EUNSUPPORTED, "Megatron-LM's --optimizer-cpu-offload needs "
                                                 "the distributed optimizer (zero=1)");
        tp_sw(a, "--optimizer-cpu-offload");
        tp_sw(a, "--use-precision-aware-optimizer"); /* arguments.py asserts it with the offload */
        tp_arg(a, "--optimizer-offload-fraction", "1.0");
    }
    return TP_OK;
}

static void recompute(const struct tp_export_plan *p, struct tp_flags *a, bool ds)
{
    const struct tp_layout *l = p->l;
    if (l->recompute == TP_RECOMPUTE_SELECTIVE) {
        tp_arg(a, "--recompute-granularity", "selective");
    } else if (l->recompute == TP_RECOMPUTE_FULL) {
        tp_arg(a, "--recompute-granularity", "full");
        /* block: the first N blocks of each stage; uniform 1: every block on its own */
        tp_arg(a, "--recompute-method", "%s", l->recompute_layers ? "block" : "uniform");
        tp_arg(a, "--recompute-num-layers", "%u", l->recompute_layers ? l->recompute_layers : 1);
        if (ds)
            tp_sw(a, "--deepspeed-activation-checkpointing");
    }
}

/* The CUDA graphs the plan priced (host.c), in flags both checked Megatron-LM commits take
   (docs/export.md): at 67f3515c a whole iteration is --cuda-graph-impl local with
   --cuda-graph-scope full_iteration and needs --no-check-for-nan-in-loss-and-grad (arguments.py:
   "--no-check-for-nan-in-loss-and-grad should be set with full_iteration CUDA graph"), and
   d98e8a64 migrates that pair to --cuda-graph-impl full_iteration (cuda_graph_config.py).  Per
   layer: Transformer Engine's make_graphed_callables (--cuda-graph-impl transformer_engine; at
   67f3515c the scopes below are "only supported with --cuda-graph-impl=transformer_engine"), the
   whole layer when dense; an MoE layer captures its attention and router (and the
   preprocessing, which transformer_config.py refuses "when there are DtoH copies" under an
   unpadded capacity factor), or its whole MoE when padded to capacity. */
static void cuda_graphs_lm(const struct tp_export_plan *p, struct tp_flags *a)
{
    const struct tp_job *j = p->j;
    if (j->cuda_graphs == TP_CUDA_GRAPHS_FULL) {
        tp_arg(a, "--cuda-graph-impl", "local");
        tp_arg(a, "--cuda-graph-scope", "full_iteration");
        tp_sw(a, "--no-check-for-nan-in-loss-and-grad");
    } else if (j->cuda_graphs == TP_CUDA_GRAPHS_LAYER) {
        tp_arg(a, "--cuda-graph-impl", "transformer_engine");
        if (p->m->n_experts > 0)
            tp_arg(a, "--cuda-graph-scope", "%s",
                   j->moe_pad_capacity ? "attn moe"
                   : j->moe_capacity > 0 && j->moe_dispatcher == TP_MOE_DISPATCH_ALLTOALL
                       ? "attn moe_router"
                       : "attn moe_router moe_preprocess");
    }
}

static enum tp_status job_lm(const struct tp_export_plan *p, struct tp_flags *a,
                             struct tp_error *err)
{
    const struct tp_job *j = p->j;
    tp_arg(a, "--micro-batch-size", "%u", p->l->mbs);
    tp_arg(a, "--global-batch-size", "%llu", (unsigned long long)p->gbs);
    if (j->precision != TP_PREC_FP16 && j->precision != TP_PREC_FP32)
        tp_sw(a, "--bf16");
    if (j->precision == TP_PREC_FP16)
        tp_sw(a, "--fp16");
    if (j->precision == TP_PREC_FP8)
        tp_arg(a, "--fp8-format", "hybrid"); /* e4m3 forward, e5m2 gradients */
    if (j->precision == TP_PREC_MXFP8) {
        tp_arg(a, "--fp8-format", "e4m3");
        tp_arg(a, "--fp8-recipe", "mxfp8");
    }
    /* MXFP4: rule megatron-fp4-recipe (tp_export_build checks the target's rules) */
    if (j->precision == TP_PREC_NVFP4) {
        tp_arg(a, "--fp4-format", "e2m1");
        tp_arg(a, "--fp4-recipe", "nvfp4");
    }
    /* one entry per enum tp_attn_impl value (FlexAttention read past the end of the array):
       FlexAttention has no Megatron backend, "auto" lets Megatron-Core pick (AttnBackend in
       megatron/core/transformer/enums.py: flash, fused, unfused, local, auto) */
    static const char *const backend[TP_ATTN_FLASH1 + 1] = {"fused", "unfused", "flash",
                                                            "fused", "auto",    "fused",
                                                            "flash"};
    tp_arg(a, "--attention-backend", "%s", backend[j->attn_impl]);
    /* Megatron-Core's flash backend is Transformer Engine's, on flash-attn 2; FlashAttention
       1.x ran in Megatron-LM's legacy model, whose --use-flash-attn imports flash_attn_unpadded_func
       first (megatron/legacy/model/transformer.py) */
    if (j->attn_impl == TP_ATTN_FLASH1)
        tp_export_note(p->out, "attention flash1: Megatron-Core's flash backend runs flash-attn "
                               "2.x; FlashAttention 1.x runs in the legacy model "
                               "(--use-legacy-models --use-flash-attn with flash-attn < 2)");
    if (j->tp_comm_overlap)
        tp_sw(a, "--tp-comm-overlap");
    if (j->moe_a2a_overlap) { /* the combined 1F1B schedule; Megatron-Bridge's moe_a2a_overlap
                                 sets both (perf_plugins.py) */
        tp_sw(a, "--overlap-moe-expert-parallel-comm");
        tp_sw(a, "--delay-wgrad-compute");
    }
    if (j->fp8_param_gather) /* "Keep the compute param in fp8 ... param all-gather in fp8" */
        tp_sw(a, "--fp8-param-gather");
    /* FP8 attention is TransformerConfig.fp8_dot_product_attention, which the FP8 and NVFP4
       recipes pass to Transformer Engine as fp8_dpa (megatron/core/fp8_utils.py,
       fp4_utils.py); Megatron-LM's parser has no flag for it (arguments.py keeps it out of the
       generated TransformerConfig arguments: "no CLI argument exists for these"), so the
       file cannot carry it and says so */
    if (j->fp8_attention)
        tp_export_note(p->out, "fp8_attention: Megatron-LM's arguments.py has no "
                               "--fp8-dot-product-attention; set TransformerConfig's "
                               "fp8_dot_product_attention=True (a NeMo or Megatron-Bridge "
                               "recipe does) or the run trains with 16-bit attention");
    cuda_graphs_lm(p, a);
    if (j->fused_loss)
        tp_sw(a, "--cross-entropy-loss-fusion");
    if (!j->dropout) {
        tp_arg(a, "--attention-dropout", "0.0");
        tp_arg(a, "--hidden-dropout", "0.0");
    }
    if (j->optimizer != TP_OPT_ADAMW && j->optimizer != TP_OPT_SGD &&
        j->optimizer != TP_OPT_SGD_MOMENTUM)
        return tp_fail(err, TP_EUNSUPPORTED, "Megatron's optimizers are adam (AdamW) and sgd, "
                                             "not the planned one; plan optimizer=adamw");
    tp_arg(a, "--optimizer", "%s", j->optimizer == TP_OPT_ADAMW ? "adam" : "sgd");
    tp_arg(a, "--clip-grad", "1.0");
    return TP_OK;
}

/* Megatron-DeepSpeed: the older parser (megatron/arguments.py) and DeepSpeed's engine. */
static enum tp_status build_ds(const struct tp_export_plan *p, struct tp_flags *a,
                               struct tp_error *err)
{
    const struct tp_model *m = p->m;
    const struct tp_layout *l = p->l;
    const struct tp_job *j = p->j;
    if (l->vpp > 1 || l->pp_first || l->pp_last || l->cp > 1 || m->attn == TP_ATTN_MLA)
        return tp_fail(err, TP_EUNSUPPORTED,
                       "Megatron-DeepSpeed has no %s; use to=megatron framework=megatron",
                       l->vpp > 1 ? "interleaved pipeline (vpp)"
                       : l->cp > 1 ? "ring context parallelism (its --ds-sequence-parallel-size "
                                     "is Ulysses)"
                       : m->attn == TP_ATTN_MLA ? "multi-latent attention"
                                                : "uneven pipeline split");
    if (j->optimizer != TP_OPT_ADAMW && j->optimizer != TP_OPT_SGD &&
        j->optimizer != TP_OPT_SGD_MOMENTUM)
        return tp_fail(err, TP_EUNSUPPORTED, "Megatron-DeepSpeed's optimizers are adam and sgd");
    tp_arg(a, "--num-layers", "%u", m->n_layers);
    tp_arg(a, "--hidden-size", "%u", m->hidden);
    tp_arg(a, "--ffn-hidden-size", "%u", m->n_experts ? m->moe_ffn : m->ffn);
    tp_arg(a, "--num-attention-heads", "%u", m->n_heads);
    if (m->n_kv_heads < m->n_heads)
        tp_arg(a, "--num-key-value-heads", "%u", m->n_kv_heads);
    tp_arg(a, "--seq-length", "%llu", (unsigned long long)j->seq);
    tp_arg(a, "--max-position-embeddings", "%llu",
        (unsigned long long)(m->pos == TP_POS_LEARNED && m->max_positions > j->seq
                                 ? m->max_positions : j->seq));
    if (m->pos == TP_POS_ROPE)
        tp_sw(a, "--use-rotary-position-embeddings");
    if (m->pos == TP_POS_ALIBI || m->embed_norm)
        tp_export_note(p->out, "%s%s: not in deepspeedai/Megatron-DeepSpeed's parser (the "
                               "bigscience-workshop fork that trained BLOOM has "
                               "--position-embedding-type alibi and --embed-layernorm)",
                       m->pos == TP_POS_ALIBI ? "ALiBi" : "",
                       m->embed_norm ? (m->pos == TP_POS_ALIBI ? ", embedding LayerNorm"
                                                               : "embedding LayerNorm") : "");
    if (m->norm == TP_NORM_RMS)
        tp_arg(a, "--normalization", "rmsnorm");
    /* the older parser's names (megatron/arguments.py): --rotary-position-embeddings-theta
       (dest rope_theta, an int), --rotary-percent, --layernorm-epsilon */
    struct tp_hf_args h;
    tp_export_hf_args(m, &h);
    if (m->pos == TP_POS_ROPE && h.rope_theta > 0)
        tp_arg(a, "--rotary-position-embeddings-theta", "%lld", (long long)h.rope_theta);
    if (m->pos == TP_POS_ROPE && h.partial_rotary > 0 && h.partial_rotary < 1)
        tp_arg(a, "--rotary-percent", "%g", h.partial_rotary);
    if (m->pos == TP_POS_ROPE && h.rope_type[0])
        tp_export_note(p->out, "rope_scaling %s: not in Megatron-DeepSpeed's parser", h.rope_type);
    if (h.norm_eps > 0)
        tp_arg(a, "--layernorm-epsilon", "%g", h.norm_eps);
    if (m->mlp == TP_MLP_GLU)
        tp_sw(a, "--swiglu");
    if (!m->tied)
        tp_sw(a, "--untie-embeddings-and-output-weights");
    if (!m->qkv_bias && !m->o_bias && !m->mlp_bias)
        tp_sw(a, "--disable-bias-linear");
    if (m->n_experts) {
        tp_arg(a, "--num-experts", "%u", m->n_experts);
        tp_arg(a, "--topk", "%u", m->top_k);
        tp_arg(a, "--expert-interval", "%u", m->moe_step ? m->moe_step : 1);
        tp_arg(a, "--moe-expert-parallel-size", "%u", l->ep);
        if (m->moe_first_dense || m->n_shared_experts || m->ffn != m->moe_ffn)
            tp_export_note(p->out, "Megatron-DeepSpeed MoE: every expert-interval block is MoE "
                                   "with --ffn-hidden-size experts; leading dense blocks, a "
                                   "separate dense width and shared experts are not expressible");
    }
    tp_arg(a, "--tensor-model-parallel-size", "%u", l->tp);
    tp_arg(a, "--pipeline-model-parallel-size", "%u", l->pp);
    if (l->pp == 1)
        tp_sw(a, "--no-pipeline-parallel"); /* ZeRO-2/3 need the non-pipeline engine */
    if (l->sp)
        tp_sw(a, "--sequence-parallel");
    tp_arg(a, "--micro-batch-size", "%u", l->mbs);
    tp_arg(a, "--global-batch-size", "%llu", (unsigned long long)p->gbs);
    if (j->precision == TP_PREC_BF16)
        tp_sw(a, "--bf16");
    if (j->precision == TP_PREC_FP16)
        tp_sw(a, "--fp16");
    recompute(p, a, true);
    /* --use-flash-attn-v1 (alias --use-flash-attn) calls flash_attn_unpadded_func, which only
       flash-attn 1.x has; --use-flash-attn-v2 flash_attn_varlen_func (megatron/arguments.py and
       megatron/model/transformer.py since cc3a94c6; before it --use-flash-attn took whichever
       package was installed) */
    if (j->attn_impl == TP_ATTN_FLASH1)
        tp_sw(a, "--use-flash-attn-v1");
    else if (j->attn_impl != TP_ATTN_EAGER)
        tp_sw(a, "--use-flash-attn-v2");
    if (j->fp8_attention) /* FlashAttention-2 has no FP8 kernel */
        tp_export_note(p->out, "fp8_attention: Megatron-DeepSpeed runs FlashAttention-2, "
                               "which has no FP8 kernel; the run trains with 16-bit attention");
    if (!j->dropout) {
        tp_arg(a, "--attention-dropout", "0.0");
        tp_arg(a, "--hidden-dropout", "0.0");
    }
    tp_arg(a, "--optimizer", "%s", j->optimizer == TP_OPT_ADAMW ? "adam" : "sgd");
    tp_arg(a, "--clip-grad", "1.0");
    tp_arg(a, "--zero-stage", "%u", l->zero);
    tp_sw(a, "--deepspeed");
    tp_arg(a, "--deepspeed_config", TP_EXPORT_DS_FILE);
    tp_export_train_lm(p, a, true);
    return TP_OK;
}

static enum tp_status render(const struct tp_export_plan *p, const struct tp_flags *a,
                             bool deepspeed, struct tp_error *err)
{
    if (a->overflow)
        return tp_fail(err, TP_EINVAL, "internal: an argument of %s does not fit its buffer",
                       TP_EXPORT_MEGATRON_FILE);
    struct tp_sbuf b = {0};
    char summary[512];
    tp_export_summary(p, summary, sizeof summary);
    tp_sbuf_printf(&b, "# %s arguments (pretrain_gpt.py), planned by %s\n",
                   deepspeed ? "Megatron-DeepSpeed" : "Megatron-LM", summary);
    tp_sbuf_printf(&b, "# Sourced by the launch script, which appends its own arguments "
                       "(\"$@\") after these.\n");
    tp_sbuf_printf(&b, "MEGATRON_ARGS=(\n");
    for (size_t i = 0; i < a->n; i++)
        tp_sbuf_printf(&b, "    %s%s%s\n", a->flag[i], a->value[i][0] ? " " : "", a->value[i]);
    tp_sbuf_printf(&b, ")\n");
    return tp_export_add_sbuf(p->out, TP_EXPORT_MEGATRON_FILE, &b, err);
}

static enum tp_status build_lm(const struct tp_export_plan *p, struct tp_flags *a,
                               struct tp_error *err)
{
    if (p->j->precision == TP_PREC_FP32)
        tp_export_note(p->out, "fp32: Megatron-LM trains in fp32 without --bf16/--fp16");
    shape_lm(p, a);
    moe_lm(p, a);
    tp_export_model_lm(p, a);
    TRY(layout_lm(p, a, err));
    recompute(p, a, false);
    TRY(job_lm(p, a, err));
    tp_export_train_lm(p, a, false);
    return TP_OK;
}

enum tp_status tp_export_megatron(const struct tp_export_plan *p, bool deepspeed,
                                  struct tp_error *err)
{
    const struct tp_job *j = p->j;
    if (j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA || j->task == TP_TASK_DPO)
        return tp_fail(err, TP_EUNSUPPORTED, "pretrain_gpt.py trains every weight on next-token "
                                             "loss: %s is not a Megatron pretraining run (use "
                                             "to=axolotl)",
                       j->task == TP_TASK_DPO ? "DPO" : "LoRA/QLoRA");
    if (tp_model_hybrid(p->m))
        return tp_fail(err, TP_EUNSUPPORTED,
                       "%s is a hybrid model (Mamba-2 / gated DeltaNet or FFN-only blocks): "
                       "pretrain_gpt.py builds only transformer blocks, and the export of "
                       "Megatron-LM's hybrid runs (pretrain_mamba.py, --hybrid-override-pattern) "
                       "is not built",
                       p->m->name);
    struct tp_flags *a = calloc(1, sizeof *a); /* ~15 KiB: off the stack */
    if (!a)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    json_t *ds = NULL;
    enum tp_status st = TP_OK;
    if (deepspeed) {
        ds = tp_export_deepspeed_doc(p, false, true, &st, err);
        if (!ds && st == TP_OK)
            st = tp_fail(err, TP_ENOMEM, "out of memory");
        if (st == TP_OK)
            st = build_ds(p, a, err);
    } else {
        st = build_lm(p, a, err);
    }
    if (st == TP_OK)
        st = render(p, a, deepspeed, err);
    free(a);
    if (st != TP_OK) {
        json_decref(ds);
        return st;
    }
    return ds ? tp_export_add_json(p->out, ds, err) : TP_OK;
}
