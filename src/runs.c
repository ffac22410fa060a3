/*
 * runs.c - one row of the runs file (validation/runs/README.md) -> model, cluster, job,
 * layout and measured figures.
 *
 * Cells are strings as the CSV reader returns them; this file parses and checks them.  What a
 * row leaves empty and the model needs is assumed from the framework's documented default and
 * listed in run->assumptions; what cannot be assumed makes the row unmappable, with the reason.
 * Reading the file itself is the caller's job (bench/ and the CLI use libcsv).
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
    const char *const *cols;
    const char *const *cells;
    size_t n;
    struct tp_error *err;
    struct tp_run *run;
};

static const char *cell(const struct row *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->cols[i], name) == 0)
            return r->cells[i] ? r->cells[i] : "";
    return "";
}

static void assume(struct tp_run *run, const char *text)
{
    size_t used = strlen(run->assumptions);
    snprintf(run->assumptions + used, sizeof run->assumptions - used, "%s%s", used ? "; " : "",
             text);
}

/* A non-negative whole number; `dflt` when empty; error when malformed. */
static enum tp_status num_u32(const struct row *r, const char *name, bool required, uint32_t dflt,
                              uint32_t *out)
{
    const char *s = cell(r, name);
    if (!*s) {
        if (required)
            return tp_fail(r->err, TP_EINVAL, "%s is empty", name);
        *out = dflt;
        return TP_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || v < 0 || v > UINT32_MAX || v != floor(v))
        return tp_fail(r->err, TP_EINVAL, "%s \"%s\" is not a whole number", name, s);
    *out = (uint32_t)v;
    return TP_OK;
}

static double num_real(const struct row *r, const char *name)
{
    const char *s = cell(r, name);
    char *end;
    double v = *s ? strtod(s, &end) : NAN;
    return *s && *end == '\0' && isfinite(v) ? v : NAN;
}

/* MLA dimensions shared by DeepSeek-V2/V3 and Kimi K2 (their config.json files). */
static void mla_defaults(struct tp_model *m)
{
    m->attn = TP_ATTN_MLA;
    m->q_lora_rank = 1536;
    m->kv_lora_rank = 512;
    m->qk_nope_dim = 128;
    m->qk_rope_dim = 64;
    m->v_head_dim = 128;
    m->head_dim = 192;
    m->head_dim_explicit = true;
}

static enum tp_status map_arch(const struct row *r, struct tp_model *m)
{
    const char *arch = cell(r, "arch");
    if (strcmp(arch, "llama") == 0 || strcmp(arch, "mixtral") == 0 ||
        strcmp(arch, "llama4") == 0 || strcmp(arch, "bailing_moe") == 0 ||
        strcmp(arch, "grok1") == 0) {
        /* RMSNorm, SwiGLU, RoPE, no biases: the defaults */
    } else if (strcmp(arch, "qwen3_moe") == 0) {
        m->qk_norm = true;
    } else if (strcmp(arch, "gpt_oss") == 0) {
        m->qkv_bias = m->o_bias = m->attn_sinks = m->router_bias = m->expert_bias = true;
    } else if (strcmp(arch, "gpt") == 0) {
        m->norm = TP_NORM_LAYER;
        m->mlp = TP_MLP_GELU;
        m->pos = TP_POS_LEARNED;
        m->qkv_bias = m->o_bias = m->mlp_bias = true;
    } else if (strcmp(arch, "nemotron") == 0) {
        m->norm = TP_NORM_LAYER; /* squared-ReLU MLP: two matrices */
        m->mlp = TP_MLP_GELU;
    } else if (strcmp(arch, "deepseek_v2") == 0 || strcmp(arch, "deepseek_v3") == 0) {
        mla_defaults(m);
        if (strcmp(arch, "deepseek_v3") == 0)
            m->router_score_bias = true;
    } else if (*arch == '\0') {
        return tp_fail(r->err, TP_EINVAL, "arch is empty");
    } else {
        return tp_fail(r->err, TP_EUNSUPPORTED, "arch %s is not modelled", arch);
    }
    snprintf(m->family, sizeof m->family, "%s", arch);
    return TP_OK;
}

static enum tp_status map_model(const struct row *r, struct tp_model *m)
{
    tp_model_init(m);
    TRY(map_arch(r, m));
    snprintf(m->name, sizeof m->name, "%s", cell(r, "model"));
    snprintf(m->source, sizeof m->source, "runs file row %s", r->run->row_id);
    TRY(num_u32(r, "n_layers", true, 0, &m->n_layers));
    TRY(num_u32(r, "hidden", true, 0, &m->hidden));
    TRY(num_u32(r, "n_heads", true, 0, &m->n_heads));
    TRY(num_u32(r, "kv_heads", false, 0, &m->n_kv_heads));
    if (m->attn == TP_ATTN_MLA)
        m->n_kv_heads = m->n_heads;
    uint32_t hd = 0;
    TRY(num_u32(r, "head_dim", false, 0, &hd));
    if (hd && m->attn != TP_ATTN_MLA) {
        m->head_dim = hd;
        m->head_dim_explicit = true;
    }
    TRY(num_u32(r, "vocab", true, 0, &m->vocab));
    uint32_t tied = 0;
    TRY(num_u32(r, "tied", false, 0, &tied));
    m->tied = tied != 0;
    if (!*cell(r, "tied"))
        assume(r->run, "untied head");
    TRY(num_u32(r, "moe_num_experts", false, 0, &m->n_experts));
    TRY(num_u32(r, "ffn_hidden", m->n_experts == 0, 0, &m->ffn));
    if (m->n_experts) {
        TRY(num_u32(r, "moe_topk", true, 0, &m->top_k));
        TRY(num_u32(r, "moe_ffn_hidden", true, 0, &m->moe_ffn));
        TRY(num_u32(r, "moe_shared_experts", false, 0, &m->n_shared_experts));
        TRY(num_u32(r, "dense_layers", false, 0, &m->moe_first_dense));
    }
    uint32_t seq = 0;
    TRY(num_u32(r, "seq_len", true, 0, &seq));
    m->default_seq = seq;
    if (m->pos == TP_POS_LEARNED)
        m->max_positions = seq;
    struct tp_error inner;
    if (tp_model_finalize(m, &inner) != TP_OK)
        return tp_fail(r->err, TP_EINVAL, "model shape: %s", inner.msg);
    return TP_OK;
}

static enum tp_status map_framework(const struct row *r, struct tp_job *j)
{
    static const struct {
        const char *key;
        enum tp_framework fw;
    } fws[] = {{"megatron", TP_FW_MEGATRON},    {"megatron-deepspeed", TP_FW_MEGATRON},
               {"nemo", TP_FW_MEGATRON},        {"deepspeed", TP_FW_DEEPSPEED},
               {"fsdp", TP_FW_FSDP},            {"torchtitan", TP_FW_TORCHTITAN},
               {"llm-foundry", TP_FW_FSDP},     {"axolotl", TP_FW_AXOLOTL},
               {"maxtext", TP_FW_FSDP},         {"paxml", TP_FW_FSDP},
               {"colossalai", TP_FW_DEEPSPEED}, {"other", TP_FW_FSDP}};
    const char *key = cell(r, "framework_key");
    snprintf(r->run->framework_key, sizeof r->run->framework_key, "%s", key);
    for (size_t i = 0; i < sizeof fws / sizeof fws[0]; i++)
        if (strcmp(fws[i].key, key) == 0) {
            j->framework = fws[i].fw;
            return TP_OK;
        }
    j->framework = TP_FW_FSDP;
    assume(r->run, "framework conventions of FSDP");
    return TP_OK;
}

static enum tp_status map_job(const struct row *r, const struct tp_model *m, struct tp_job *j)
{
    tp_job_init(j);
    j->seq = m->default_seq;
    TRY(map_framework(r, j));
    const char *task = cell(r, "task");
    static const char *const tasks[] = {"pretrain", "sft", "dpo", "lora", "qlora"};
    for (int i = 0; i < 5; i++)
        if (strcmp(task, tasks[i]) == 0)
            j->task = (enum tp_task)i;
    const char *prec = cell(r, "precision");
    if (strcmp(prec, "fp16") == 0)
        j->precision = TP_PREC_FP16;
    else if (strcmp(prec, "fp32") == 0)
        j->precision = TP_PREC_FP32;
    else if (strstr(prec, "fp8") || strstr(prec, "fp4"))
        j->precision = TP_PREC_FP8;
    else if (!*prec)
        assume(r->run, "bf16");
    const char *fw = cell(r, "framework"), *notes = cell(r, "notes");
    if (strstr(fw, "8bit") || strstr(fw, "8-bit"))
        j->optimizer = TP_OPT_ADAMW_8BIT;
    if (strstr(fw, "Liger") || strstr(notes, "Liger"))
        j->fused_loss = true;
    /* Megatron-LM before FlashAttention (2020-2021) kept dropout and the s x s scores */
    const char *date = cell(r, "source_version_or_date");
    long year = strtol(date, NULL, 10);
    if (year > 0 && year < 2022) {
        j->attn_impl = TP_ATTN_EAGER;
        j->dropout = true;
    }
    return TP_OK;
}

static enum tp_status map_layout(const struct row *r, struct tp_layout *l)
{
    struct tp_run *run = r->run;
    tp_layout_init(l);
    TRY(num_u32(r, "tp", false, 1, &l->tp));
    TRY(num_u32(r, "pp", false, 1, &l->pp));
    TRY(num_u32(r, "dp", false, 0, &l->dp));
    TRY(num_u32(r, "cp", false, 1, &l->cp));
    TRY(num_u32(r, "ep", false, 1, &l->ep));
    TRY(num_u32(r, "vpp", false, 1, &l->vpp));
    uint32_t sp = 0;
    TRY(num_u32(r, "sp", false, 0, &sp));
    l->sp = sp != 0;
    const char *z = cell(r, "zero_or_fsdp");
    if (strcmp(z, "fsdp-full") == 0 || strcmp(z, "3") == 0)
        l->zero = 3;
    else if (strcmp(z, "fsdp-grad-op") == 0 || strcmp(z, "2") == 0)
        l->zero = 2;
    else if (strcmp(z, "megatron-distopt") == 0 || strcmp(z, "1") == 0)
        l->zero = 1;
    else if (strcmp(z, "hsdp") == 0)
        l->zero = 3;
    else if (strcmp(z, "0") != 0)
        assume(run, "no ZeRO sharding");
    TRY(num_u32(r, "shard_group_size", false, 0, &l->shard_group));
    TRY(num_u32(r, "micro_batch", true, 0, &l->mbs));
    TRY(num_u32(r, "grad_accum", false, 0, &l->gas));
    run->gas_unknown = l->gas == 0;
    if (l->gas == 0)
        l->gas = 1; /* derived from global_batch once dp is known */
    const char *rc = cell(r, "recompute");
    if (strcmp(rc, "full") == 0) {
        l->recompute = TP_RECOMPUTE_FULL;
    } else if (strcmp(rc, "selective") == 0) {
        l->recompute = TP_RECOMPUTE_SELECTIVE;
    } else if (!*rc) {
        bool finetune = strcmp(cell(r, "framework_key"), "axolotl") == 0;
        l->recompute = finetune ? TP_RECOMPUTE_FULL : TP_RECOMPUTE_NONE;
        assume(run, finetune ? "gradient checkpointing on (Axolotl fine-tuning configs)"
                             : "no recompute");
    }
    return TP_OK;
}

enum tp_status tp_run_from_row(const char *const *cols, const char *const *cells, size_t n,
                               struct tp_run *out, struct tp_error *err)
{
    memset(out, 0, sizeof *out);
    struct row r = {cols, cells, n, err, out};
    snprintf(out->row_id, sizeof out->row_id, "%s", cell(&r, "row_id"));
    snprintf(out->source, sizeof out->source, "%.*s", (int)strcspn(out->row_id, ":"),
             out->row_id);
    out->duplicate = *cell(&r, "dup_of") != '\0';
    out->tokens_per_s_per_gpu = num_real(&r, "tokens_per_s_per_gpu");
    out->step_time_s = num_real(&r, "step_time_s");
    out->tflops_per_gpu = num_real(&r, "tflops_per_gpu");
    out->mfu = num_real(&r, "mfu");
    out->hfu = num_real(&r, "hfu");
    out->mem_gib = num_real(&r, "mem_per_gpu_gib");
    out->oom = strcmp(cell(&r, "oom"), "1") == 0;

    TRY(map_model(&r, &out->model));
    TRY(map_job(&r, &out->model, &out->job));
    TRY(map_layout(&r, &out->layout));
    const struct tp_gpu *g;
    struct tp_error inner;
    if (tp_gpu_find(cell(&r, "gpu_type"), &g, &inner) != TP_OK)
        return tp_fail(err, TP_EUNSUPPORTED, "gpu_type \"%s\" is not in the catalog",
                       cell(&r, "gpu_type"));
    out->cluster.gpu = *g;
    TRY(num_u32(&r, "num_gpus", true, 0, &out->cluster.n_gpus));
    TRY(num_u32(&r, "gpus_per_node", false, g->gpus_per_node, &out->cluster.gpus_per_node));
    struct tp_layout *l = &out->layout;
    if (tp_layout_check(&out->model, &out->cluster, &out->job, l, &inner) != TP_OK)
        return tp_fail(err, TP_EINVAL, "layout: %s", inner.msg);
    if (out->gas_unknown) {
        uint32_t gbs = 0;
        TRY(num_u32(&r, "global_batch", false, 0, &gbs));
        uint64_t per = (uint64_t)l->mbs * l->dp;
        l->gas = gbs && gbs % per == 0 ? (uint32_t)(gbs / per) : 1;
        if (!gbs)
            assume(out, "one micro-batch per step");
    }
    return TP_OK;
}
