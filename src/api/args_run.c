/*
 * args_run.c - the options (struct tp_args, filled through the one table) as what the verbs
 * run: the request a run resolves from, the search's limits, the budget and wall-clock of an
 * estimate, the fit's options.  The CLI and tp_call_json (python, the page) both use these, so
 * a keyword means what its flag means.
 */
#include "api_internal.h"

#include <string.h>

/* --zero, --fsdp and --distributed-optimizer all say the ZeRO stage; one of them at most. */
static enum tp_status resolve_zero(const struct tp_args *a, struct tp_request *q,
                                   struct tp_error *err)
{
    static const int64_t FSDP_ZERO[] = {0, 0, 2, 3, 3};
    int given = (a->zero != TP_UNSET) + (a->fsdp != 0) + (a->distopt != 0);
    if (given > 1)
        return tp_fail_field(err, TP_EINVAL, "zero", "give only one of --zero, --fsdp and "
                             "--distributed-optimizer");
    if (a->zero != TP_UNSET)
        q->zero = a->zero;
    else if (a->fsdp)
        q->zero = FSDP_ZERO[a->fsdp];
    else if (a->distopt)
        q->zero = 1;
    q->hybrid_shard = a->fsdp == 4;
    return TP_OK;
}

enum tp_status tp_args_request(const struct tp_args *a, struct tp_request *q,
                               struct tp_error *err)
{
    tp_request_init(q);
    q->gpu = a->gpu;
    q->gpus = a->gpus;
    q->gpus_per_node = a->gpus_per_node;
    q->hbm_gb = a->hbm_gb;
    q->peak_tflops = a->peak_tflops;
    q->hbm_tbps = a->hbm_tbps;
    q->intra_gbps = a->intra_gbps;
    q->inter_gbps = a->inter_gbps;
    q->host_gbps = a->host_gbps;
    q->task = a->task;
    q->optimizer = a->optimizer;
    q->precision = a->precision;
    q->framework = a->framework;
    /* --fsdp names PyTorch FSDP: with no --framework it is the fsdp stack (torchtitan when the
       layout pipelines, which plain FSDP2 does not), not DeepSpeed's ZeRO.  search with no
       --framework still tries every stack. */
    bool pipelined = (a->pp != TP_UNSET && a->pp > 1) || (a->vpp != TP_UNSET && a->vpp > 1) ||
                     a->pp_layout;
    if (a->fsdp && a->framework == TP_UNSET && a->cmd != TP_VERB_SEARCH)
        q->framework = pipelined ? TP_FW_TORCHTITAN : TP_FW_FSDP;
    q->attn_impl = a->attn_impl;
    q->fp8_recipe = a->fp8_recipe;
    q->frozen_weights = a->frozen_weights;
    q->moe_impl = a->moe_impl;
    q->z3_leaf = a->z3_leaf != 0;
    /* --fsdp under the Hugging Face / Axolotl stack: its FSDP2 backend, not DeepSpeed */
    q->fsdp_backend = a->fsdp_backend || (a->fsdp != 0 && a->framework == TP_FW_AXOLOTL);
    q->zero_quant_weights = a->zero_quant_weights != 0;
    q->zero_quant_grads = a->zero_quant_grads != 0;
    q->moe_a2a_overlap = a->moe_a2a_overlap != 0;
    q->moe_pad_capacity = a->moe_pad_capacity != 0;
    q->moe_dispatcher = a->moe_dispatcher;
    q->moe_routing = a->moe_routing;
    q->cuda_graphs = a->cuda_graphs;
    q->log_params_norm = a->log_params_norm != 0;
    q->log_num_zeros = a->log_num_zeros != 0;
    q->dropout = a->dropout != 0;
    q->fused_loss = a->fused_loss != 0;
    q->kbit_fp32 = a->kbit_fp32 != 0;
    q->expandable_segments = a->expandable_segments != 0;
    q->tp_comm_overlap = a->tp_comm_overlap != 0;
    q->no_async_tp_allreduce = a->no_async_tp_allreduce != 0;
    q->fp8_param_gather = a->fp8_param_gather != 0;
    q->fp8_attention = a->fp8_attention != 0;
    q->fp8_act_store = a->fp8_act_store != 0;
    q->seq = a->seq;
    q->doc_len = a->doc_len;
    q->lora_rank = a->lora_rank;
    if (a->lora_targets && !(q->lora_targets = tp_lora_targets_parse(a->lora_targets)))
        return tp_fail_field(err, TP_EINVAL, "lora_targets", "lora_targets %s: expected all, "
                             "attention, mlp or a comma list of q,k,v,o,gate,up,down",
                             a->lora_targets);
    q->moe_capacity = a->moe_capacity;
    q->moe_imbalance = a->moe_imbalance;
    q->trainable_frac = a->trainable_frac;
    q->overhead_gb = a->overhead_gb;
    q->nccl_gb = a->nccl_gb;
    q->nccl_buffsize = a->nccl_buffsize;
    q->frag = a->frag;
    const int64_t src[] = {a->dp,  a->tp,  a->pp,  a->vpp, a->ep, a->etp, a->cp, a->shard_group,
                           a->hpz, a->mbs, a->gas, a->gbs, a->recompute_layers, a->pp_first,
                           a->pp_last};
    int64_t *dst[] = {&q->dp,  &q->tp,  &q->pp,  &q->vpp, &q->ep,  &q->etp, &q->cp,
                      &q->shard_group, &q->hpz, &q->mbs, &q->gas, &q->gbs,
                      &q->recompute_layers, &q->pp_first, &q->pp_last};
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        *dst[i] = src[i];
    q->sp = a->sp != 0;
    q->recompute = a->recompute;
    q->offload = a->offload;
    q->offload_activations = a->offload_activations != 0;
    q->offload_layers = a->offload_layers;
    q->schedule = a->schedule;
    q->pp_layout = a->pp_layout;
    q->recompute_modules = a->recompute_modules;
    /* search with no --framework tries every stack on each layout (tp_stack_check there), so
       the placeholder layout is not held to the default stack */
    q->no_stack_check = a->cmd == TP_VERB_LOGS ||
                        (a->cmd == TP_VERB_SEARCH && a->framework == TP_UNSET);
    q->gbs_is_target = a->cmd == TP_VERB_SEARCH || a->cmd == TP_VERB_SIZE;
    return resolve_zero(a, q, err);
}

enum tp_status tp_args_search_opts(const struct tp_args *a, uint64_t gbs,
                                   struct tp_search_opts *o, struct tp_error *err)
{
    tp_search_opts_init(o);
    o->gbs = gbs;
    const struct {
        int64_t v;
        uint32_t *dst;
    } lim[] = {{a->max_tp, &o->max_tp}, {a->max_pp, &o->max_pp}, {a->max_cp, &o->max_cp},
               {a->max_ep, &o->max_ep}, {a->max_mbs, &o->max_mbs}};
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].v != TP_UNSET)
            *lim[i].dst = (uint32_t)lim[i].v;
    o->mem_headroom = a->mem_headroom;
    o->offload = !a->no_offload;
    o->uneven_pp = !a->even_pp;
    if (a->recompute_modes)
        TRY(tp_search_parse_recompute_modes(a->recompute_modes, &o->recompute_mask, err));
    if (a->zero_stages)
        TRY(tp_search_parse_zero_stages(a->zero_stages, &o->zero_mask, err));
    return TP_OK;
}

enum tp_status tp_args_eval_opts(const struct tp_args *a, struct tp_eval_opts *o,
                                 struct tp_error *err)
{
    tp_eval_opts_init(o);
    bool epochs = a->epochs > 0, dataset = a->dataset_tokens > 0;
    if (epochs != dataset)
        return tp_fail_field(err, TP_EINVAL, "epochs", "epochs and dataset_tokens go together "
                             "(tokens = epochs x dataset tokens)");
    if (epochs && a->tokens > 0)
        return tp_fail_field(err, TP_EINVAL, "tokens", "give either tokens or epochs with "
                             "dataset_tokens, not both");
    double tokens = epochs ? a->epochs * a->dataset_tokens : a->tokens > 0 ? a->tokens : 0;
    if (a->price >= 0 && tokens == 0)
        return tp_fail_field(err, TP_EINVAL, "gpu_hour_price", "gpu_hour_price needs a token "
                             "budget (tokens, or epochs with dataset_tokens)");
    bool extras = a->ckpt_every != TP_UNSET || a->eval_every != TP_UNSET ||
                  a->eval_tokens > 0 || a->startup_min > 0;
    if (extras && tokens == 0)
        return tp_fail_field(err, TP_EINVAL, "tokens", "ckpt_every, eval_every/eval_tokens and "
                             "startup_min need a token budget (tokens, or epochs with "
                             "dataset_tokens)");
    if (a->ckpt_every != TP_UNSET && !(a->storage_gbps > 0))
        return tp_fail_field(err, TP_EINVAL, "ckpt_every", "ckpt_every needs storage_gbps (the "
                             "time of one save)");
    if ((a->eval_every != TP_UNSET) != (a->eval_tokens > 0))
        return tp_fail_field(err, TP_EINVAL, "eval_every", "eval_every and eval_tokens go "
                             "together");
    o->tokens = tokens;
    o->gpu_hour_price = tokens > 0 && a->price >= 0 ? a->price : -1;
    o->storage_bps = a->storage_gbps * 1e9;
    o->wall.startup_s = a->startup_min * 60;
    /* the weights are read in the wall-clock only when its extras are asked for: alone,
       storage_gbps prices the saves of the checkpoint block */
    o->wall.storage_bps = extras && a->storage_gbps > 0 ? a->storage_gbps * 1e9 : 0;
    o->wall.ckpt_every = a->ckpt_every != TP_UNSET ? (uint64_t)a->ckpt_every : 0;
    o->wall.eval_every = a->eval_every != TP_UNSET ? (uint64_t)a->eval_every : 0;
    o->wall.eval_tokens = a->eval_tokens;
    return TP_OK;
}

void tp_args_fit_opts(const struct tp_args *a, struct tp_fit_opts *o)
{
    tp_fit_opts_init(o);
    if (a->prior_weight >= 0)
        o->prior_weight = a->prior_weight;
    const struct {
        int64_t v;
        uint32_t *dst;
    } counts[] = {{a->min_gpu_rows, &o->min_gpu_rows}, {a->max_evals, &o->max_evals},
                  {a->starts, &o->starts},             {a->fold_rows, &o->fold_rows},
                  {a->max_folds, &o->max_folds},       {a->fit_rows, &o->fit_rows}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].v != TP_UNSET)
            *counts[i].dst = (uint32_t)counts[i].v;
    o->per_gpu = !a->no_per_gpu;
}

enum tp_status tp_args_model(const struct tp_args *a, struct tp_model *m, char *notes,
                             size_t len, struct tp_error *err)
{
    notes[0] = '\0';
    if (a->model)
        TRY(tp_model_from_name(a->model, m, err));
    else if (tp_shape_any(&a->shape))
        tp_model_init(m);
    else
        return tp_fail_field(err, TP_EINVAL, "model", "no model: give a preset name, a "
                             "config.json path, or shape flags (--layers --hidden --heads "
                             "--vocab ...)");
    if (tp_shape_any(&a->shape))
        TRY(tp_model_apply_shape(m, &a->shape, notes, len, err));
    return TP_OK;
}
