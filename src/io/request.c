/*
 * request.c - a run described by options named as the CLI's flags: what the CLI resolves its
 * arguments through and what a binding sets by keyword (python/trainplan).  One path from the
 * options to a checked cluster, job and layout, so both get the same run.
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

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
    r->trainable_frac = -1;
}

enum kind { K_INT, K_REAL, K_BOOL, K_ENUM, K_GPU, K_LORA, K_STR };
#define F(f) offsetof(struct tp_request, f)
static const struct opt {
    const char *key;
    enum kind kind;
    size_t off;
    double lo, hi;       /* K_INT, K_REAL */
    int names;           /* K_ENUM: enum tp_names, the value is the index (+ base); -1 for
                            the framework (tp_stack_find) and MoE implementation */
    int base;
} OPTS[] = {
    {"gpu", K_GPU, F(gpu), 0, 0, 0, 0},
    {"gpus", K_INT, F(gpus), 1, 1 << 20, 0, 0},
    {"gpus_per_node", K_INT, F(gpus_per_node), 1, 1024, 0, 0},
    {"hbm_gb", K_REAL, F(hbm_gb), 1e-3, 1e6, 0, 0},
    {"peak_tflops", K_REAL, F(peak_tflops), 1e-3, 1e7, 0, 0},
    {"hbm_tbps", K_REAL, F(hbm_tbps), 1e-3, 1e4, 0, 0},
    {"intra_gbps", K_REAL, F(intra_gbps), 1e-3, 1e6, 0, 0},
    {"inter_gbps", K_REAL, F(inter_gbps), 1e-3, 1e6, 0, 0},
    {"host_gbps", K_REAL, F(host_gbps), 1e-3, 1e6, 0, 0},
    {"task", K_ENUM, F(task), 0, 0, TP_NAMES_TASK, 0},
    {"optimizer", K_ENUM, F(optimizer), 0, 0, TP_NAMES_OPTIMIZER, 0},
    {"precision", K_ENUM, F(precision), 0, 0, TP_NAMES_PRECISION, 0},
    {"framework", K_ENUM, F(framework), 0, 0, -1, 1}, /* tp_stack_find: keys and aliases */
    {"attention", K_ENUM, F(attn_impl), 0, 0, TP_NAMES_ATTENTION, 0},
    {"fp8_recipe", K_ENUM, F(fp8_recipe), 0, 0, TP_NAMES_FP8_RECIPE, 0},
    {"moe_dispatcher", K_ENUM, F(moe_dispatcher), 0, 0, TP_NAMES_MOE_DISPATCHER, 0},
    {"moe_impl", K_ENUM, F(moe_impl), 0, 0, -1, 0},
    {"z3_leaf", K_BOOL, F(z3_leaf), 0, 0, 0, 0},
    {"fsdp_backend", K_BOOL, F(fsdp_backend), 0, 0, 0, 0},
    {"moe_a2a_overlap", K_BOOL, F(moe_a2a_overlap), 0, 0, 0, 0},
    {"zero_quantized_weights", K_BOOL, F(zero_quant_weights), 0, 0, 0, 0},
    {"zero_quantized_gradients", K_BOOL, F(zero_quant_grads), 0, 0, 0, 0},
    {"dropout", K_BOOL, F(dropout), 0, 0, 0, 0},
    {"fused_loss", K_BOOL, F(fused_loss), 0, 0, 0, 0},
    {"kbit_fp32", K_BOOL, F(kbit_fp32), 0, 0, 0, 0},
    {"expandable_segments", K_BOOL, F(expandable_segments), 0, 0, 0, 0},
    {"tp_comm_overlap", K_BOOL, F(tp_comm_overlap), 0, 0, 0, 0},
    {"fp8_param_gather", K_BOOL, F(fp8_param_gather), 0, 0, 0, 0},
    {"seq", K_INT, F(seq), 1, 1 << 24, 0, 0},
    {"doc_len", K_INT, F(doc_len), 1, 1 << 24, 0, 0},
    {"lora_rank", K_INT, F(lora_rank), 1, 65536, 0, 0},
    {"lora_targets", K_LORA, F(lora_targets), 0, 0, 0, 0},
    {"moe_capacity", K_REAL, F(moe_capacity), 0, 64, 0, 0},
    {"moe_imbalance", K_REAL, F(moe_imbalance), 1, 64, 0, 0},
    {"trainable_frac", K_REAL, F(trainable_frac), 1e-6, 1, 0, 0},
    {"overhead_gb", K_REAL, F(overhead_gb), 0, 1e3, 0, 0},
    {"nccl_gb", K_REAL, F(nccl_gb), 0, 1e3, 0, 0},
    {"frag", K_REAL, F(frag), 0, 1, 0, 0},
    {"dp", K_INT, F(dp), 1, 1 << 20, 0, 0},
    {"tp", K_INT, F(tp), 1, 1024, 0, 0},
    {"pp", K_INT, F(pp), 1, 1024, 0, 0},
    {"vpp", K_INT, F(vpp), 1, 1024, 0, 0},
    {"ep", K_INT, F(ep), 1, 4096, 0, 0},
    {"etp", K_INT, F(etp), 1, 1024, 0, 0},
    {"cp", K_INT, F(cp), 1, 1024, 0, 0},
    {"zero", K_INT, F(zero), 0, 3, 0, 0},
    {"shard_group", K_INT, F(shard_group), 1, 1 << 20, 0, 0},
    {"hpz", K_INT, F(hpz), 1, 1 << 20, 0, 0},
    {"mbs", K_INT, F(mbs), 1, 1 << 16, 0, 0},
    {"gas", K_INT, F(gas), 1, 1 << 24, 0, 0},
    {"gbs", K_INT, F(gbs), 1, 1 << 30, 0, 0},
    {"recompute_layers", K_INT, F(recompute_layers), 1, 1024, 0, 0},
    {"pp_first", K_INT, F(pp_first), 1, 1024, 0, 0},
    {"pp_last", K_INT, F(pp_last), 1, 1024, 0, 0},
    {"sp", K_BOOL, F(sp), 0, 0, 0, 0},
    {"recompute", K_ENUM, F(recompute), 0, 0, TP_NAMES_RECOMPUTE, 0},
    {"offload", K_ENUM, F(offload), 0, 0, TP_NAMES_OFFLOAD, 0},
    {"offload_activations", K_BOOL, F(offload_activations), 0, 0, 0, 0},
    {"offload_layers", K_INT, F(offload_layers), 1, 1024, 0, 0},
    {"schedule", K_ENUM, F(schedule), 0, 0, TP_NAMES_SCHEDULE, 0},
    {"pp_layout", K_STR, F(pp_layout), 0, 0, 0, 0},
    {"recompute_modules", K_STR, F(recompute_modules), 0, 0, 0, 0},
};
#undef F

/* The index of `val` among '|'-separated `choices`, or -1. */
static int choice(const char *choices, const char *val)
{
    const char *p = choices;
    for (int idx = 0; *p; idx++) {
        size_t n = strcspn(p, "|");
        if (strlen(val) == n && strncmp(p, val, n) == 0)
            return idx;
        p += n + (p[n] == '|');
    }
    return -1;
}

static enum tp_status set_number(struct tp_request *r, const struct opt *o, const char *value,
                                 struct tp_error *err)
{
    char *end;
    errno = 0;
    double v = tp_strtod(value, &end);
    bool whole = o->kind == K_INT;
    if (end == value || *end || errno || !isfinite(v) || v < o->lo || v > o->hi ||
        (whole && v != floor(v)))
        return tp_fail_field(err, TP_EINVAL, o->key, "%s %s: expected %s from %g to %g", o->key,
                             value, whole ? "a whole number" : "a number", o->lo, o->hi);
    if (whole)
        *(int64_t *)(void *)((char *)r + o->off) = (int64_t)v;
    else
        *(double *)(void *)((char *)r + o->off) = v;
    return TP_OK;
}

static enum tp_status set_enum(struct tp_request *r, const struct opt *o, const char *value,
                               struct tp_error *err)
{
    int idx;
    if (o->names >= 0) {
        if ((idx = tp_name_value((enum tp_names)o->names, value)) < 0) {
            char choices[128];
            tp_name_choices((enum tp_names)o->names, choices, sizeof choices);
            return tp_fail_field(err, TP_EINVAL, o->key, "%s %s: expected one of %s", o->key,
                                 value, choices);
        }
    } else if (strcmp(o->key, "framework") == 0) {
        const struct tp_stack *st;
        if (tp_stack_find(value, &st, err) != TP_OK) {
            tp_snprintf(err->field, sizeof err->field, "%s", o->key);
            return TP_EINVAL;
        }
        idx = (int)st->fw;
    } else { /* moe_impl */
        for (idx = TP_MOE_DENSE; idx >= 0; idx--)
            if (strcmp(tp_moe_impl_name((enum tp_moe_impl)idx), value) == 0)
                break;
        if (idx < 0)
            return tp_fail_field(err, TP_EINVAL, o->key, "%s %s: expected one of "
                                 "default|eager|grouped|deepspeed|dense", o->key, value);
    }
    *(int *)(void *)((char *)r + o->off) = idx + o->base;
    return TP_OK;
}

enum tp_status tp_request_set(struct tp_request *r, const char *key, const char *value,
                              struct tp_error *err)
{
    char k[32];
    size_t n = strlen(key);
    if (n >= sizeof k)
        return tp_fail_field(err, TP_EINVAL, "", "unknown option %.40s", key);
    for (size_t i = 0; i <= n; i++)
        k[i] = key[i] == '-' ? '_' : key[i];
    const struct opt *o = NULL;
    for (size_t i = 0; i < sizeof OPTS / sizeof OPTS[0] && !o; i++)
        if (strcmp(OPTS[i].key, k) == 0)
            o = &OPTS[i];
    if (!o)
        return tp_fail_field(err, TP_EINVAL, k, "unknown option %s", k);
    if (!value)
        return tp_fail_field(err, TP_EINVAL, o->key, "%s needs a value", o->key);
    char *dst = (char *)r + o->off;
    switch (o->kind) {
    case K_INT:
    case K_REAL: return set_number(r, o, value, err);
    case K_ENUM: return set_enum(r, o, value, err);
    case K_GPU:
    case K_STR: *(const char **)(void *)dst = value; return TP_OK;
    case K_BOOL:
        if (choice("0|1|false|true", value) < 0)
            return tp_fail_field(err, TP_EINVAL, o->key, "%s %s: expected true or false", o->key,
                                 value);
        *(bool *)(void *)dst = choice("0|1|false|true", value) % 2 == 1;
        return TP_OK;
    case K_LORA:
        if (!(*(uint32_t *)(void *)dst = tp_lora_targets_parse(value)))
            return tp_fail_field(err, TP_EINVAL, o->key, "%s %s: expected all, attention, mlp or "
                                 "a comma list of q,k,v,o,gate,up,down", o->key, value);
        return TP_OK;
    }
    return TP_OK;
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
    j->framework = r->framework ? (enum tp_framework)(r->framework - 1) : TP_FW_DEEPSPEED;
    j->moe_impl = (enum tp_moe_impl)r->moe_impl;
    j->z3_leaf = r->z3_leaf;
    j->fsdp_backend = r->fsdp_backend;
    j->moe_a2a_overlap = r->moe_a2a_overlap;
    j->zero_quant_weights = r->zero_quant_weights;
    j->zero_quant_grads = r->zero_quant_grads;
    j->attn_impl = (enum tp_attn_impl)r->attn_impl;
    j->dropout = r->dropout;
    j->fused_loss = r->fused_loss;
    j->kbit_fp32 = r->kbit_fp32;
    j->expandable_segments = r->expandable_segments;
    j->tp_comm_overlap = r->tp_comm_overlap;
    j->fp8_param_gather = r->fp8_param_gather;
    j->fp8_recipe = (enum tp_fp8_recipe)r->fp8_recipe;
    j->moe_dispatcher = (enum tp_moe_dispatcher)r->moe_dispatcher;
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
    if (!r->framework &&
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

/* MODEL names a file or directory when it exists or looks like a path; else a preset. */
static bool looks_like_path(const char *s)
{
    struct stat sb;
    if (stat(s, &sb) == 0)
        return true;
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

enum tp_status tp_model_from_name(const char *name, struct tp_model *m, struct tp_error *err)
{
    return looks_like_path(name) ? tp_model_from_hf_config(name, m, err)
                                 : tp_model_from_preset(name, m, err);
}
