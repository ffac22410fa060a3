/*
 * request.c - a run's settings (tp_args_request makes them from the options: options.c) to a
 * checked cluster, job and layout: the one path the CLI and the bindings resolve a run by.
 */
#include "api_internal.h"

#include <stddef.h>
#include <string.h>

void tp_request_init(struct tp_request *r)
{
    memset(r, 0, sizeof *r);
    r->gpus = r->gpus_per_node = r->seq = r->lora_rank = r->offload_layers = TP_UNSET;
    int64_t *dims[] = {&r->dp,          &r->tp,   &r->pp,  &r->vpp,
                       &r->ep,          &r->etp,  &r->cp,  &r->zero,
                       &r->shard_group, &r->mbs,  &r->gas, &r->gbs,
                       &r->recompute_layers, &r->pp_first, &r->pp_last, &r->hpz};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        *dims[i] = TP_UNSET;
    r->moe_capacity = r->moe_imbalance = r->overhead_gb = r->nccl_gb = r->frag = -1;
    r->nccl_buffsize = -1;
    r->trainable_frac = -1;
    r->framework = TP_UNSET;
}

uint32_t tp_lora_targets_parse(const char *list)
{
    static const struct {
        const char *name;
        uint32_t bit;
    } names[] = {{"q", TP_LORA_Q},       {"k", TP_LORA_K},   {"v", TP_LORA_V},
                 {"o", TP_LORA_O},       {"gate", TP_LORA_GATE}, {"up", TP_LORA_UP},
                 {"down", TP_LORA_DOWN}, {"all", TP_LORA_ALL}, {"attention", 0xf},
                 {"mlp", 0x70}};
    uint32_t mask = 0;
    while (*list) {
        size_t n = strcspn(list, ",");
        uint32_t bit = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(names[i].name, list, n) == 0)
                bit = names[i].bit;
        if (!bit)
            return 0;
        mask |= bit;
        list += n + (list[n] == ',');
    }
    return mask;
}

static void resolve_job(const struct tp_request *r, const struct tp_model *m, struct tp_job *j)
{
    tp_job_init(j);
    j->task = (enum tp_task)r->task;
    j->optimizer = (enum tp_optimizer)r->optimizer;
    j->precision = (enum tp_precision)r->precision;
    j->framework = r->framework != TP_UNSET ? (enum tp_framework)r->framework : TP_FW_DEEPSPEED;
    j->moe_impl = (enum tp_moe_impl)r->moe_impl;
    j->z3_leaf = r->z3_leaf;
    j->fsdp_backend = r->fsdp_backend;
    j->moe_a2a_overlap = r->moe_a2a_overlap;
    j->moe_pad_capacity = r->moe_pad_capacity;
    j->log_params_norm = r->log_params_norm;
    j->log_num_zeros = r->log_num_zeros;
    j->zero_quant_weights = r->zero_quant_weights;
    j->zero_quant_grads = r->zero_quant_grads;
    j->attn_impl = (enum tp_attn_impl)r->attn_impl;
    j->dropout = r->dropout;
    j->fused_loss = r->fused_loss;
    j->kbit_fp32 = r->kbit_fp32;
    j->expandable_segments = r->expandable_segments;
    j->tp_comm_overlap = r->tp_comm_overlap;
    j->no_async_tp_allreduce = r->no_async_tp_allreduce;
    j->fp8_param_gather = r->fp8_param_gather;
    j->fp8_attention = r->fp8_attention;
    j->fp8_act_store = r->fp8_act_store;
    j->fp8_recipe = (enum tp_fp8_recipe)r->fp8_recipe;
    j->frozen_weights = (enum tp_frozen_format)r->frozen_weights;
    j->moe_dispatcher = (enum tp_moe_dispatcher)r->moe_dispatcher;
    j->moe_routing = (enum tp_moe_routing)r->moe_routing;
    j->cuda_graphs = (enum tp_cuda_graphs)r->cuda_graphs;
    j->seq = r->seq != TP_UNSET ? (uint64_t)r->seq : m->default_seq ? m->default_seq : 4096;
    j->doc_len = r->doc_len > 0 ? (uint32_t)r->doc_len : 0;
    if (r->lora_rank != TP_UNSET)
        j->lora_rank = (uint32_t)r->lora_rank;
    if (r->lora_targets)
        j->lora_targets = r->lora_targets;
    if (r->moe_capacity >= 0)
        j->moe_capacity = r->moe_capacity;
    if (r->moe_imbalance >= 0)
        j->moe_imbalance = r->moe_imbalance;
    if (r->trainable_frac > 0)
        j->trainable_frac = r->trainable_frac;
    if (r->overhead_gb >= 0)
        j->overhead_base_bytes = r->overhead_gb * 1e9;
    if (r->nccl_gb >= 0)
        j->overhead_comm_bytes = r->nccl_gb * 1e9;
    if (r->nccl_buffsize >= 0)
        j->nccl_buffsize = r->nccl_buffsize;
    if (r->frag >= 0)
        j->overhead_frag = r->frag;
}

/* The catalog GPU with the request's overrides. */
static enum tp_status resolve_cluster(const struct tp_request *r, const struct tp_job *j,
                                      struct tp_cluster *c, struct tp_error *err)
{
    if (tp_cluster_init(c, r->gpu ? r->gpu : "h100-sxm", 0, err) != TP_OK) {
        tp_snprintf(err->field, sizeof err->field, "gpu");
        return TP_EINVAL;
    }
    if (r->hbm_gb > 0)
        c->gpu.hbm_bytes = r->hbm_gb * 1073741824.0; /* a vendor "GB" of DRAM is a GiB */
    if (r->gpus_per_node != TP_UNSET)
        c->gpus_per_node = (uint32_t)r->gpus_per_node;
    if (r->peak_tflops > 0) {
        enum tp_dtype d = j->precision == TP_PREC_FP8    ? TP_FP8
                          : j->precision == TP_PREC_FP32 ? TP_TF32
                                                         : TP_BF16;
        c->gpu.peak_flops[d] = r->peak_tflops * 1e12;
        if (d == TP_TF32)
            c->gpu.peak_flops[TP_FP32] = r->peak_tflops * 1e12;
    }
    if (r->hbm_tbps > 0)
        c->gpu.hbm_bw = r->hbm_tbps * 1e12;
    if (r->intra_gbps > 0)
        c->gpu.intra_bw = r->intra_gbps * 1e9;
    if (r->inter_gbps > 0)
        c->gpu.inter_bw = r->inter_gbps * 1e9;
    if (r->host_gbps > 0)
        c->gpu.host_bw = r->host_gbps * 1e9;
    return TP_OK;
}

static void resolve_layout(const struct tp_request *r, struct tp_layout *l)
{
    tp_layout_init(l);
    const struct {
        int64_t v;
        uint32_t *dst;
    } dims[] = {{r->dp, &l->dp},   {r->tp, &l->tp},   {r->pp, &l->pp},   {r->vpp, &l->vpp},
                {r->ep, &l->ep},   {r->etp, &l->etp}, {r->cp, &l->cp},   {r->mbs, &l->mbs},
                {r->gas, &l->gas}, {r->zero, &l->zero}, {r->shard_group, &l->shard_group},
                {r->recompute_layers, &l->recompute_layers},
                {r->pp_first, &l->pp_first}, {r->pp_last, &l->pp_last}, {r->hpz, &l->hpz}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].v != TP_UNSET)
            *dims[i].dst = (uint32_t)dims[i].v;
    l->sp = r->sp;
    l->recompute = (enum tp_recompute)r->recompute;
    l->offload = (enum tp_offload)r->offload;
    l->offload_activations = r->offload_activations || r->offload_layers != TP_UNSET;
    if (r->offload_layers != TP_UNSET)
        l->offload_layers = (uint32_t)r->offload_layers;
    l->schedule = (enum tp_schedule)r->schedule;
}

enum tp_status tp_request_resolve(const struct tp_request *r, const struct tp_model *m,
                                  struct tp_cluster *c, struct tp_job *j, struct tp_layout *l,
                                  struct tp_error *err)
{
    resolve_job(r, m, j);
    TRY(resolve_cluster(r, j, c, err));
    resolve_layout(r, l);
    if (r->hybrid_shard && l->shard_group == 0)
        l->shard_group = c->gpus_per_node; /* HYBRID_SHARD: shard within a node */
    if (r->recompute_layers != TP_UNSET && l->recompute != TP_RECOMPUTE_FULL)
        return tp_fail_field(err, TP_EINVAL, "recompute_layers",
                             "recompute_layers needs recompute full");
    if (r->recompute_modules) {
        if (l->recompute == TP_RECOMPUTE_FULL)
            return tp_fail_field(err, TP_EINVAL, "recompute_modules",
                                 "recompute_modules needs recompute=selective (or none given)");
        TRY(tp_recompute_modules_parse(r->recompute_modules, &l->recompute_modules, err));
        l->recompute = TP_RECOMPUTE_SELECTIVE;
    }
    if (r->pp_layout && m->n_layers) {
        /* "embedding", "loss" or "embedding,loss": Megatron-Core's --account-for-...-in-
           pipeline-split; anything else a --pipeline-model-parallel-layout string */
        const char *t = r->pp_layout;
        bool e = strcmp(t, "embedding") == 0 || strcmp(t, "embedding,loss") == 0;
        bool s = strcmp(t, "loss") == 0 || strcmp(t, "embedding,loss") == 0;
        enum tp_status st = e || s ? tp_layout_pp_account(m->n_layers, e, s, l, err)
                                   : tp_layout_pp_parse(t, m->n_layers, l, err);
        if (st != TP_OK) {
            tp_snprintf(err->field, sizeof err->field, "pp_layout");
            return st;
        }
    }
    if (r->gpus != TP_UNSET)
        c->n_gpus = (uint32_t)r->gpus;
    else if (r->dp != TP_UNSET)
        c->n_gpus = l->dp * l->tp * l->pp * l->cp;
    else
        c->n_gpus = c->gpus_per_node;
    /* no --framework: the default stack where it runs the layout (DeepSpeed's pipeline engine
       runs --pp with ZeRO 0/1, so a memory fix found under it reproduces), else Megatron, the
       stack that runs every layout (and the EP all-to-all overlap) */
    if (r->framework == TP_UNSET &&
        (l->tp > 1 || l->pp > 1 || l->cp > 1 || l->vpp > 1 || l->sp || j->moe_a2a_overlap) &&
        (!m->n_layers || tp_stack_check(m, j, l, NULL) != TP_OK))
        j->framework = TP_FW_MEGATRON;
    /* size has no model yet: each shape's layouts come from the search */
    if (m->n_layers)
        TRY(tp_layout_check(m, c, j, l, err));
    if (r->gbs != TP_UNSET && !r->gbs_is_target)
        TRY(tp_layout_set_gbs(l, (uint64_t)r->gbs, r->gas != TP_UNSET, err));
    /* after the micro-batches are known (DualPipe's count rule, tp_stack_check) */
    if (m->n_layers && !r->no_stack_check)
        TRY(tp_stack_check(m, j, l, err));
    return TP_OK;
}
