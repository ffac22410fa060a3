/*
 * export.c - trainplan export: the format table, the DeepSpeed config document, and the
 * dispatcher that builds a format's files (export_axolotl.c, export_megatron.c and
 * export_launch.c build the others).
 *
 * DeepSpeed keys are those of DeepSpeed's config parser (deepspeed/runtime/constants.py,
 * runtime/zero/config.py, zero/offload_config.py, activation_checkpointing/config.py); the
 * bucket sizes are the ones the Hugging Face Trainer's DeepSpeed integration computes for
 * "auto" (transformers/integrations/deepspeed.py, trainer_config_finalize: reduce bucket H^2,
 * stage-3 prefetch bucket 0.9 H^2, persistence threshold 10 H), the same H^2 buckets
 * src/eval/memory.c counts as communication buffers.
 */
#include "export_internal.h"
#include "stack_rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FORMAT_NAMES[TP_EXPORT_FORMAT_COUNT] = {
    "deepspeed", "axolotl", "megatron", "megatron-deepspeed", "torchrun", "slurm"};

const char *tp_export_format_name(enum tp_export_format f)
{
    return (unsigned)f < TP_EXPORT_FORMAT_COUNT ? FORMAT_NAMES[f] : "unknown";
}

enum tp_status tp_export_format_find(const char *name, enum tp_export_format *out,
                                     struct tp_error *err)
{
    for (int i = 0; i < TP_EXPORT_FORMAT_COUNT; i++)
        if (tp_streq_ci(name, FORMAT_NAMES[i])) {
            *out = (enum tp_export_format)i;
            return TP_OK;
        }
    return tp_fail(err, TP_ENOTFOUND,
                   "unknown export format \"%s\" (formats: deepspeed, axolotl, megatron, "
                   "megatron-deepspeed, torchrun, slurm)", name);
}

void tp_export_opts_init(struct tp_export_opts *o)
{
    memset(o, 0, sizeof *o);
}

void tp_sbuf_append(struct tp_sbuf *b, const char *text, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void tp_sbuf_printf(struct tp_sbuf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = tp_vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line) {
        b->failed = true; /* the exporters' lines are short: a longer one is a bug */
        return;
    }
    tp_sbuf_append(b, line, (size_t)n);
}

void tp_export_note(struct tp_export *x, const char *fmt, ...)
{
    size_t used = strlen(x->notes);
    if (used && used + 2 < sizeof x->notes) {
        memcpy(x->notes + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= sizeof x->notes)
        return;
    va_list ap;
    va_start(ap, fmt);
    tp_vsnprintf(x->notes + used, sizeof x->notes - used, fmt, ap);
    va_end(ap);
}

enum tp_status tp_export_add(struct tp_export *x, const char *name, char *text,
                             struct tp_error *err)
{
    if (!text)
        return tp_fail(err, TP_ENOMEM, "out of memory building %s", name);
    if (x->n_files == TP_EXPORT_MAX_FILES) {
        free(text);
        return tp_fail(err, TP_EINVAL, "internal: too many export files");
    }
    struct tp_export_file *f = &x->files[x->n_files++];
    tp_snprintf(f->name, sizeof f->name, "%s", name);
    f->text = text;
    return TP_OK;
}

enum tp_status tp_export_add_sbuf(struct tp_export *x, const char *name, struct tp_sbuf *b,
                                  struct tp_error *err)
{
    if (b->failed) {
        free(b->s);
        return tp_fail(err, TP_ENOMEM, "out of memory building %s", name);
    }
    return tp_export_add(x, name, b->s, err);
}

void tp_export_free(struct tp_export *x)
{
    for (size_t i = 0; i < x->n_files; i++)
        free(x->files[i].text);
    memset(x, 0, sizeof *x);
}

enum tp_base_kind tp_export_base_model(const struct tp_model *m, char *buf, size_t len)
{
    const char *src = m->source;
    const char *hub = strstr(src, "models--");
    if (hub) { /* huggingface_hub cache: models--ORG--NAME/snapshots/<rev>/ */
        hub += strlen("models--");
        size_t n = strcspn(hub, "/");
        const char *sep = strstr(hub, "--");
        if (sep && (size_t)(sep - hub) < n) {
            tp_snprintf(buf, len, "%.*s/%.*s", (int)(sep - hub), hub, (int)(n - (size_t)(sep - hub) - 2),
                     sep + 2);
            return TP_BASE_HUB;
        }
    }
    /* a preset's source starts with the Hugging Face id: "meta-llama/Llama-3.1-8B config.json" */
    size_t word = strcspn(src, " ");
    if (strncmp(src + word, " config.json", 12) == 0 && memchr(src, '/', word)) {
        tp_snprintf(buf, len, "%.*s", (int)word, src);
        return TP_BASE_HUB;
    }
    /* a preset whose source is a description, not an id (the users' from-scratch designs): the
       model's name stands in */
    if (!*src || src[strcspn(src, " \t'\"")]) {
        tp_snprintf(buf, len, "%s", m->name);
        return TP_BASE_NONE;
    }
    /* a config.json path: its directory (Axolotl loads a local directory too) */
    size_t n = strlen(src);
    if (n > 12 && strcmp(src + n - 12, "/config.json") == 0)
        n -= 12;
    else if (n > 0 && src[n - 1] == '/')
        n--;
    tp_snprintf(buf, len, "%.*s", (int)n, src);
    return TP_BASE_PATH;
}

void tp_export_summary(const struct tp_export_plan *p, char *buf, size_t len)
{
    const struct tp_layout *l = p->l;
    tp_snprintf(buf, len,
             "trainplan %s: %s on %u x %s (%u node%s x %u); dp %u tp %u pp %u vpp %u cp %u ep %u, "
             "ZeRO-%u, mbs %u x gas %u = global batch %llu, seq %llu",
             TP_VERSION, p->m->name, p->c->n_gpus, p->c->gpu.key, p->nodes,
             p->nodes == 1 ? "" : "s", p->gpus_per_node, l->dp, l->tp, l->pp, l->vpp, l->cp, l->ep,
             l->zero, l->mbs, l->gas, (unsigned long long)p->gbs, (unsigned long long)p->j->seq);
}

/* What plain DeepSpeed (no Megatron) cannot run: it is data parallel (ZeRO) only here. */
static enum tp_status deepspeed_limits(const struct tp_export_plan *p, bool megatron,
                                       struct tp_error *err)
{
    const struct tp_layout *l = p->l;
    if (tp_prec_gemm_dtype(p->j->precision) == TP_FP8 ||
        tp_prec_gemm_dtype(p->j->precision) == TP_FP4)
        return tp_fail(err, TP_EUNSUPPORTED,
                       "a DeepSpeed config has no fp8 training mode (bf16 or fp16; fp8 runs "
                       "through Transformer Engine, e.g. to=megatron framework=megatron)");
    if (l->offload == TP_OFFLOAD_PARAMS && l->zero != 3)
        return tp_fail(err, TP_EUNSUPPORTED, "DeepSpeed offloads parameters with ZeRO-3 only");
    if (megatron) {
        if (l->pp > 1 && l->zero >= 2)
            return tp_fail(err, TP_EUNSUPPORTED,
                           "ZeRO-%u with pp %u: DeepSpeed's pipeline engine runs ZeRO-0/1 only "
                           "(runtime/pipe/engine.py)", l->zero, l->pp);
        return TP_OK;
    }
    if (l->tp > 1 || l->pp > 1 || l->cp > 1)
        return tp_fail(err, TP_EUNSUPPORTED,
                       "tp %u pp %u cp %u: a DeepSpeed/Axolotl config runs data parallel "
                       "(ZeRO) only; export a layout with tp = pp = cp = 1 or use to=megatron",
                       l->tp, l->pp, l->cp);
    if (l->ep > 1)
        return tp_fail(err, TP_EUNSUPPORTED,
                       "ep %u: DeepSpeed sets expert parallelism in the model code "
                       "(deepspeed.moe.layer.MoE ep_size), not in its config; export ep 1 or "
                       "use to=megatron", l->ep);
    return TP_OK;
}

static json_t *zero_doc(const struct tp_export_plan *p, bool hf)
{
    const struct tp_layout *l = p->l;
    double h2 = (double)p->m->hidden * p->m->hidden;
    json_t *z = json_object();
    json_object_set_new(z, "stage", json_integer(l->zero));
    if (l->zero == 0)
        return z;
    json_object_set_new(z, "overlap_comm", json_true());
    json_object_set_new(z, "contiguous_gradients", json_true());
    json_object_set_new(z, "reduce_bucket_size", json_integer((json_int_t)h2));
    if (l->zero < 3) {
        json_object_set_new(z, "allgather_bucket_size", json_integer((json_int_t)h2));
        json_object_set_new(z, "reduce_scatter", json_true());
    } else {
        json_object_set_new(z, "stage3_prefetch_bucket_size",
                            json_integer((json_int_t)(0.9 * h2)));
        json_object_set_new(z, "stage3_param_persistence_threshold",
                            json_integer((json_int_t)10 * p->m->hidden));
        json_object_set_new(z, "stage3_max_live_parameters", json_integer(1000000000));
        json_object_set_new(z, "stage3_max_reuse_distance", json_integer(1000000000));
        json_object_set_new(z, "stage3_gather_16bit_weights_on_model_save", json_true());
        /* MiCS shards the states within groups and replicates across them (the plan's shard
           group); ZeRO++ hpZ keeps a secondary copy of the weights over its group; qwZ / qgZ
           quantize the weight gathers and the gradient reduction (runtime/zero/config.py) */
        if (l->shard_group > 0 && l->shard_group < l->dp * l->cp) {
            json_object_set_new(z, "mics_shard_size", json_integer(l->shard_group));
            if (p->nodes > 1)
                json_object_set_new(z, "mics_hierarchical_params_gather", json_true());
        }
        if (l->hpz > 1)
            json_object_set_new(z, "zero_hpz_partition_size", json_integer(l->hpz));
        if (p->j->zero_quant_weights)
            json_object_set_new(z, "zero_quantized_weights", json_true());
        if (p->j->zero_quant_grads)
            json_object_set_new(z, "zero_quantized_gradients", json_true());
    }
    if (l->offload != TP_OFFLOAD_NONE)
        json_object_set_new(z, "offload_optimizer",
                            json_pack("{s:s, s:b}", "device", "cpu", "pin_memory", 1));
    if (l->offload == TP_OFFLOAD_PARAMS)
        json_object_set_new(z, "offload_param",
                            json_pack("{s:s, s:b}", "device", "cpu", "pin_memory", 1));
    (void)hf;
    return z;
}

json_t *tp_export_deepspeed_doc(const struct tp_export_plan *p, bool hf, bool megatron,
                                enum tp_status *st, struct tp_error *err)
{
    const struct tp_layout *l = p->l;
    *st = deepspeed_limits(p, megatron, err);
    if (*st != TP_OK)
        return NULL;
    *st = TP_ENOMEM;
    json_t *d = json_object();
    if (!d)
        return NULL;
    json_object_set_new(d, "train_batch_size", json_integer((json_int_t)p->gbs));
    json_object_set_new(d, "train_micro_batch_size_per_gpu", json_integer(l->mbs));
    json_object_set_new(d, "gradient_accumulation_steps", json_integer(l->gas));
    json_object_set_new(d, "gradient_clipping", json_real(1.0));
    if (p->j->precision == TP_PREC_BF16)
        json_object_set_new(d, "bf16", json_pack("{s:b}", "enabled", 1));
    else if (p->j->precision == TP_PREC_FP16) /* dynamic loss scaling: loss_scale 0 */
        json_object_set_new(d, "fp16", json_pack("{s:b, s:i, s:i}", "enabled", 1, "loss_scale", 0,
                                                 "initial_scale_power", 16));
    json_object_set_new(d, "zero_optimization", zero_doc(p, hf));
    if (l->offload != TP_OFFLOAD_NONE) {
        if (hf && p->j->optimizer == TP_OPT_ADAMW) {
            /* DeepSpeed refuses a client optimizer with ZeRO-Offload unless told; its CPU Adam
               is the one that runs there, with the Trainer's hyper-parameters ("auto") */
            json_object_set_new(d, "optimizer",
                                json_pack("{s:s, s:{s:s, s:s, s:s, s:s}}", "type", "AdamW",
                                          "params", "lr", "auto", "betas", "auto", "eps", "auto",
                                          "weight_decay", "auto"));
        } else {
            tp_export_note(p->out, "the optimizer is offloaded: DeepSpeed runs its CPU Adam "
                                   "(deepspeed.ops.adam.DeepSpeedCPUAdam) there; give it in your "
                                   "script or an \"optimizer\" block%s",
                           p->j->optimizer != TP_OPT_ADAMW ? " (the planned 8/4-bit or other "
                                                             "optimizer does not run on the CPU)"
                                                           : "");
        }
    }
    if (megatron && l->recompute == TP_RECOMPUTE_FULL) {
        /* Megatron-DeepSpeed --deepspeed-activation-checkpointing reads this block; partitioned
           and CPU checkpoints stay off, as the memory model assumes */
        json_object_set_new(d, "activation_checkpointing",
                            json_pack("{s:b, s:b, s:b, s:b, s:b}", "partition_activations", 0,
                                      "contiguous_memory_optimization", 0, "cpu_checkpointing", 0,
                                      "synchronize_checkpoint_boundary", 0, "profile", 0));
    }
    json_object_set_new(d, "steps_per_print", json_integer(10));
    json_object_set_new(d, "wall_clock_breakdown", json_false());
    *st = TP_OK;
    return d;
}

enum tp_status tp_export_add_json(struct tp_export *x, json_t *doc, struct tp_error *err)
{
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (!s)
        return tp_fail(err, TP_ENOMEM, "out of memory building %s", TP_EXPORT_DS_FILE);
    size_t n = strlen(s);
    char *t = realloc(s, n + 2); /* end the file with a newline */
    if (!t) {
        free(s);
        return tp_fail(err, TP_ENOMEM, "out of memory building %s", TP_EXPORT_DS_FILE);
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return tp_export_add(x, TP_EXPORT_DS_FILE, t, err);
}

static enum tp_status build(enum tp_export_format f, const struct tp_export_plan *p,
                            struct tp_error *err)
{
    enum tp_status st;
    switch (f) {
    case TP_EXPORT_DEEPSPEED: {
        if (p->j->fsdp_backend)
            return tp_fail(err, TP_EUNSUPPORTED, "the plan shards with FSDP2 (--fsdp under "
                                                 "axolotl), not DeepSpeed: export --to axolotl "
                                                 "writes its fsdp_config");
        json_t *d = tp_export_deepspeed_doc(p, p->j->framework == TP_FW_AXOLOTL, false, &st, err);
        if (!d)
            return st != TP_OK ? st : tp_fail(err, TP_ENOMEM, "out of memory");
        TRY(tp_export_add_json(p->out, d, err));
        return tp_export_add_launcher(p, false, TP_STACK_DEEPSPEED, err);
    }
    case TP_EXPORT_AXOLOTL:
        TRY(tp_export_axolotl(p, err));
        return tp_export_add_launcher(p, false, TP_STACK_AXOLOTL, err);
    case TP_EXPORT_MEGATRON:
    case TP_EXPORT_MEGATRON_DS: {
        bool ds = f == TP_EXPORT_MEGATRON_DS || p->j->framework == TP_FW_MEGATRON_DS;
        TRY(tp_export_megatron(p, ds, err));
        return tp_export_add_launcher(p, false, ds ? TP_STACK_MEGATRON_DS : TP_STACK_MEGATRON,
                                      err);
    }
    case TP_EXPORT_TORCHRUN:
    case TP_EXPORT_SLURM:
        return tp_export_launch(p, f == TP_EXPORT_SLURM, err);
    case TP_EXPORT_FORMAT_COUNT:
        break;
    }
    return tp_fail(err, TP_EINVAL, "unknown export format %d", (int)f);
}

void tp_export_search_limits(enum tp_export_format f, const struct tp_job *j,
                             struct tp_search_opts *o)
{
    enum tp_framework fw = j->framework;
    bool data_parallel = f == TP_EXPORT_DEEPSPEED || f == TP_EXPORT_AXOLOTL ||
                         ((f == TP_EXPORT_TORCHRUN || f == TP_EXPORT_SLURM) &&
                          fw == TP_FW_AXOLOTL);
    /* torchrun / slurm with the deepspeed stack: Megatron-DeepSpeed where tp > 1
       (tp_export_stack_of), so not data parallel only */
    if (data_parallel)
        o->max_tp = o->max_pp = o->max_cp = o->max_ep = 1;
    /* the Hugging Face Trainer checkpoints every block or none (gradient_checkpointing) */
    if (f == TP_EXPORT_AXOLOTL || fw == TP_FW_AXOLOTL)
        o->recompute_mask &= ~(unsigned)TP_SEARCH_RC_PARTIAL;
    bool mds = f == TP_EXPORT_MEGATRON_DS || fw == TP_FW_MEGATRON_DS ||
               ((f == TP_EXPORT_TORCHRUN || f == TP_EXPORT_SLURM) && fw == TP_FW_DEEPSPEED);
    if (mds && !data_parallel) {
        o->uneven_pp = false; /* no --decoder-first/last-pipeline-num-layers there */
        o->max_vpp = 1;
        o->max_cp = 1;
    }
}

/* The framework whose files format f writes for the plan (the rules it starts under). */
static enum tp_framework target_framework(enum tp_export_format f, const struct tp_export_plan *p)
{
    enum tp_framework fw = p->j->framework;
    switch (f) {
    case TP_EXPORT_DEEPSPEED:
        return fw == TP_FW_AXOLOTL ? TP_FW_AXOLOTL : TP_FW_DEEPSPEED;
    case TP_EXPORT_AXOLOTL:
        return TP_FW_AXOLOTL;
    case TP_EXPORT_MEGATRON:
        return fw == TP_FW_MEGATRON_DS ? TP_FW_MEGATRON_DS : TP_FW_MEGATRON;
    case TP_EXPORT_MEGATRON_DS:
        return TP_FW_MEGATRON_DS;
    case TP_EXPORT_TORCHRUN:
    case TP_EXPORT_SLURM:
    case TP_EXPORT_FORMAT_COUNT:
        break;
    }
    switch (tp_export_stack_of(p)) {
    case TP_STACK_MEGATRON: return TP_FW_MEGATRON;
    case TP_STACK_MEGATRON_DS: return TP_FW_MEGATRON_DS;
    case TP_STACK_AXOLOTL: return TP_FW_AXOLOTL;
    case TP_STACK_DEEPSPEED: return TP_FW_DEEPSPEED;
    case TP_STACK_TORCHTITAN: return TP_FW_TORCHTITAN;
    case TP_STACK_SCRIPT: break;
    }
    return fw;
}

enum tp_status tp_export_build(enum tp_export_format f, const struct tp_model *m,
                               const struct tp_cluster *c, const struct tp_job *j,
                               const struct tp_layout *l, const struct tp_export_opts *o,
                               struct tp_export *out, struct tp_error *err)
{
    memset(out, 0, sizeof *out);
    struct tp_export_opts defaults;
    tp_export_opts_init(&defaults);
    struct tp_export_plan p = {m, c, j, l, o ? o : &defaults, 0, 1, c->n_gpus, out};
    p.gbs = (uint64_t)l->mbs * l->gas * l->dp;
    if (c->gpus_per_node > 0 && c->n_gpus > c->gpus_per_node) {
        p.gpus_per_node = c->gpus_per_node;
        p.nodes = (c->n_gpus + c->gpus_per_node - 1) / c->gpus_per_node;
        if (c->n_gpus % c->gpus_per_node != 0)
            return tp_fail(err, TP_EUNSUPPORTED,
                           "%u GPUs is not a whole number of %u-GPU nodes: a launcher runs the "
                           "same number of processes on every node", c->n_gpus,
                           c->gpus_per_node);
    }
    if (l->dp * l->tp * l->pp * l->cp != c->n_gpus)
        return tp_fail(err, TP_EINVAL, "internal: dp*tp*pp*cp = %u, not the %u GPUs",
                       l->dp * l->tp * l->pp * l->cp, c->n_gpus);
    if ((unsigned)f >= TP_EXPORT_FORMAT_COUNT)
        return tp_fail(err, TP_EINVAL, "unknown export format %d", (int)f);
    /* the target framework's own rules (stack_rules.c), whatever stack the plan was made for */
    struct tp_job jt = *j;
    jt.framework = target_framework(f, &p);
    if (tp_stack_rules_check(m, &jt, l, err) != TP_OK)
        return TP_EUNSUPPORTED;
    enum tp_status st = build(f, &p, err);
    if (st != TP_OK)
        tp_export_free(out);
    return st;
}
