/*
 * runs.c - one row of the runs file (validation/runs/README.md) -> model, cluster, job,
 * layout and measured figures.
 *
 * Cells are strings as the CSV reader returns them; this file parses and checks them.  What a
 * row leaves empty and the model needs is assumed from the framework's documented default and
 * listed in run->assumptions; what cannot be assumed makes the row unmappable, with the reason.
 * Reading the file itself is the caller's job (bench/ and the CLI use libcsv).
 */
#include "runs_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *tp_row_cell(const struct row *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->cols[i] && strcmp(r->cols[i], name) == 0)
            return r->cells[i] ? r->cells[i] : "";
    return "";
}

void tp_row_assume(struct tp_run *run, const char *text)
{
    size_t used = strlen(run->assumptions);
    tp_snprintf(run->assumptions + used, sizeof run->assumptions - used, "%s%s", used ? "; " : "",
             text);
}

/* The release month of a row's stack as yyyymm: a calendar date ("2024-07"; a year alone
   counts as its January) or a container release ("26.06.01", "NeMo 24.07 container": 2000 +
   yy); 0 when the cell names neither. */
long tp_row_release_month(const char *date)
{
    while (*date && (*date < '0' || *date > '9'))
        date++;
    char *end;
    long v = strtol(date, &end, 10), year;
    if (v >= 2000 && v < 2100)
        year = v;
    else if (v >= 19 && v < 100 && *end == '.')
        year = 2000 + v;
    else
        return 0;
    long month = (*end == '-' || *end == '.') ? strtol(end + 1, NULL, 10) : 1;
    return year * 100 + (month >= 1 && month <= 12 ? month : 1);
}

long tp_row_release_year(const char *date)
{
    return tp_row_release_month(date) / 100;
}

/* A Megatron-Core recipe: NeMo / Megatron-Bridge, or Megatron-LM from 2022 on (Megatron-LM of
   2020-2021 predates sequence parallelism and the distributed optimizer). */
static bool mcore_recipe(const struct row *r)
{
    const char *fw = tp_row_cell(r, "framework_key");
    long year = tp_row_release_year(tp_row_cell(r, "source_version_or_date"));
    return strcmp(fw, "nemo") == 0 || (strcmp(fw, "megatron") == 0 && year >= 2022);
}

/* A non-negative whole number; `dflt` when empty; error when malformed. */
enum tp_status tp_row_u32(const struct row *r, const char *name, bool required, uint32_t dflt,
                          uint32_t *out)
{
    const char *s = tp_row_cell(r, name);
    if (!*s) {
        if (required)
            return tp_fail(r->err, TP_EINVAL, "%s is empty", name);
        *out = dflt;
        return TP_OK;
    }
    char *end;
    errno = 0;
    double v = tp_row_plain_number(s) ? tp_strtod(s, &end) : NAN;
    if (isnan(v) || errno || v < 0 || v > UINT32_MAX || v != floor(v))
        return tp_fail(r->err, TP_EINVAL, "%s \"%s\" is not a whole number", name, s);
    *out = (uint32_t)v;
    return TP_OK;
}

/* A measured figure: NaN when empty; an error when it is not a plain non-negative decimal
   (a unit or suffix such as "5.7k" or "80GB" would otherwise be dropped silently; strtod's hex
   floats, "inf" and "nan" are not decimals either). */
enum tp_status tp_row_real(const struct row *r, const char *name, double *out)
{
    const char *s = tp_row_cell(r, name);
    *out = NAN;
    if (!*s)
        return TP_OK;
    char *end;
    errno = 0;
    double v = tp_row_plain_number(s) ? tp_strtod(s, &end) : NAN;
    if (errno || !isfinite(v) || v < 0)
        return tp_fail(r->err, TP_EINVAL,
                       "%s \"%s\" is not a plain non-negative number (no units or suffixes)",
                       name, s);
    *out = v;
    return TP_OK;
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
    const char *arch = tp_row_cell(r, "arch");
    if (strcmp(arch, "llama") == 0 || strcmp(arch, "mixtral") == 0 ||
        strcmp(arch, "llama4") == 0 || strcmp(arch, "bailing_moe") == 0 ||
        strcmp(arch, "grok1") == 0) {
        /* RMSNorm, SwiGLU, RoPE, no biases: the defaults */
    } else if (strcmp(arch, "qwen3_moe") == 0) {
        m->qk_norm = true;
    } else if (strcmp(arch, "gpt_oss") == 0) {
        m->qkv_bias = m->o_bias = m->attn_sinks = m->router_bias = m->expert_bias = true;
        m->expert_glu_clamp = true;
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
    tp_snprintf(m->family, sizeof m->family, "%s", arch);
    return TP_OK;
}

/* A row that names its model but gives no shape (n_layers, hidden or n_heads empty): the
   built-in preset of that name (the whole cell, or the text in its last parentheses, as in
   "Ring mini (ring-mini-2.0)"), with the row's sequence length.  *found is false when no
   preset has the name; the row is then reported with the first empty shape field. */
static enum tp_status map_preset(const struct row *r, struct tp_model *m, const char *why,
                                 bool *found)
{
    *found = false;
    char name[128];
    snprintf(name, sizeof name, "%s", tp_row_cell(r, "model"));
    char *open = strrchr(name, '('), *close = open ? strchr(open, ')') : NULL; /* the last */
    struct tp_error inner;
    if (tp_model_from_preset(name, m, &inner) != TP_OK) {
        if (!open || !close)
            return TP_OK;
        *close = '\0';
        if (tp_model_from_preset(open + 1, m, &inner) != TP_OK)
            return TP_OK;
    }
    *found = true;
    uint32_t seq = 0;
    TRY(tp_row_u32(r, "seq_len", true, 0, &seq));
    m->default_seq = seq;
    char text[160];
    snprintf(text, sizeof text, "shape of the built-in preset %s (%s)", m->name, why);
    tp_row_assume(r->run, text);
    if (tp_model_finalize(m, &inner) != TP_OK)
        return tp_fail(r->err, TP_EINVAL, "model shape: %s", inner.msg);
    return TP_OK;
}

/* Nemotron-H rows: the runs format has no columns for the per-block pattern or the Mamba-2
   shapes, so the row names a nemotron_h preset in its model cell; the shape cells it gives
   must agree with the preset's. */
static enum tp_status map_hybrid(const struct row *r, struct tp_model *m)
{
    bool found;
    TRY(map_preset(r, m, "the runs format has no per-block pattern or Mamba-2 columns", &found));
    if (!found || strcmp(m->family, "nemotron_h") != 0)
        return tp_fail(r->err, TP_EUNSUPPORTED,
                       "arch nemotron_h needs its per-block pattern and Mamba-2 shapes: name a "
                       "nemotron_h preset in the model cell (e.g. \"Nemotron_3_Nano "
                       "(nemotron-3-nano-30b-a3b)\"; `trainplan models` lists them)");
    const struct {
        const char *col;
        uint32_t have;
    } agree[] = {{"n_layers", m->n_layers}, {"hidden", m->hidden}, {"n_heads", m->n_heads},
                 {"vocab", m->vocab}, {"moe_num_experts", m->n_experts}};
    for (size_t i = 0; i < sizeof agree / sizeof agree[0]; i++) {
        uint32_t v = 0;
        TRY(tp_row_u32(r, agree[i].col, false, agree[i].have, &v));
        if (v != agree[i].have)
            return tp_fail(r->err, TP_EINVAL, "%s %u differs from the preset %s (%u)",
                           agree[i].col, v, m->name, agree[i].have);
    }
    return TP_OK;
}

/* The head count.  A Megatron-LM GPT row that leaves it empty gets head dim 128, the head dim
   of every Megatron-LM GPT model from 7.5B to 310.1B parameters in Narayanan et al. 2021
   (arXiv 2104.04473) Table 1 (e.g. 310.1B: hidden 16384, 128 heads): for a GPT model with
   multi-head attention the time model uses the head count only through that head dim (the
   attention kernel's shape); the parameters and GEMM FLOPs do not depend on it. */
static enum tp_status map_heads(const struct row *r, struct tp_model *m)
{
    if (*tp_row_cell(r, "n_heads") || strcmp(tp_row_cell(r, "arch"), "gpt") != 0 ||
        strcmp(tp_row_cell(r, "framework_key"), "megatron") != 0 || m->hidden % 128 != 0 ||
        *tp_row_cell(r, "kv_heads"))
        return tp_row_u32(r, "n_heads", true, 0, &m->n_heads);
    m->n_heads = m->hidden / 128;
    r->run->heads_assumed = true;
    char text[128];
    snprintf(text, sizeof text, "n_heads = hidden / 128 = %u (head dim 128, as Narayanan et al. "
             "2021 Table 1)", m->n_heads);
    tp_row_assume(r->run, text);
    return TP_OK;
}

static enum tp_status map_model(const struct row *r, struct tp_model *m)
{
    if (strcmp(tp_row_cell(r, "arch"), "nemotron_h") == 0)
        return map_hybrid(r, m);
    if (!*tp_row_cell(r, "n_layers") || !*tp_row_cell(r, "hidden") || !*tp_row_cell(r, "n_heads")) {
        bool found;
        TRY(map_preset(r, m, "the row gives none", &found));
        if (found)
            return TP_OK;
    }
    tp_model_init(m);
    TRY(map_arch(r, m));
    tp_snprintf(m->name, sizeof m->name, "%s", tp_row_cell(r, "model"));
    tp_snprintf(m->source, sizeof m->source, "runs file row %s", r->run->row_id);
    TRY(tp_row_u32(r, "n_layers", true, 0, &m->n_layers));
    TRY(tp_row_u32(r, "hidden", true, 0, &m->hidden));
    TRY(map_heads(r, m));
    TRY(tp_row_u32(r, "kv_heads", false, 0, &m->n_kv_heads));
    if (m->attn == TP_ATTN_MLA)
        m->n_kv_heads = m->n_heads;
    uint32_t hd = 0;
    TRY(tp_row_u32(r, "head_dim", false, 0, &hd));
    if (hd && m->attn != TP_ATTN_MLA) {
        m->head_dim = hd;
        m->head_dim_explicit = true;
    }
    TRY(tp_row_u32(r, "vocab", true, 0, &m->vocab));
    TRY(tp_row_bool(r, "tied", false, &m->tied));
    if (!*tp_row_cell(r, "tied"))
        tp_row_assume(r->run, "untied head");
    TRY(tp_row_u32(r, "moe_num_experts", false, 0, &m->n_experts));
    bool four_h = m->n_experts == 0 && m->mlp == TP_MLP_GELU && !*tp_row_cell(r, "ffn_hidden");
    TRY(tp_row_u32(r, "ffn_hidden", m->n_experts == 0 && !four_h, 0, &m->ffn));
    if (four_h) {
        m->ffn = 4 * m->hidden; /* the GPT MLP default (Megatron-LM --ffn-hidden-size) */
        tp_row_assume(r->run, "ffn_hidden = 4 * hidden (GPT default)");
    }
    if (m->n_experts) {
        TRY(tp_row_u32(r, "moe_topk", true, 0, &m->top_k));
        TRY(tp_row_u32(r, "moe_ffn_hidden", true, 0, &m->moe_ffn));
        TRY(tp_row_u32(r, "moe_shared_experts", false, 0, &m->n_shared_experts));
        TRY(tp_row_u32(r, "dense_layers", false, 0, &m->moe_first_dense));
    }
    uint32_t seq = 0;
    TRY(tp_row_u32(r, "seq_len", true, 0, &seq));
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
    } fws[] = {{"megatron", TP_FW_MEGATRON},    {"megatron-deepspeed", TP_FW_MEGATRON_DS},
               {"nemo", TP_FW_MEGATRON},        {"deepspeed", TP_FW_DEEPSPEED},
               {"fsdp", TP_FW_FSDP},            {"torchtitan", TP_FW_TORCHTITAN},
               {"llm-foundry", TP_FW_FSDP},     {"axolotl", TP_FW_AXOLOTL},
               {"maxtext", TP_FW_FSDP},         {"paxml", TP_FW_FSDP},
               {"colossalai", TP_FW_DEEPSPEED}, {"other", TP_FW_FSDP}};
    const char *key = tp_row_cell(r, "framework_key");
    tp_snprintf(r->run->framework_key, sizeof r->run->framework_key, "%s", key);
    const char *names[sizeof fws / sizeof fws[0]];
    for (size_t i = 0; i < sizeof fws / sizeof fws[0]; i++)
        names[i] = fws[i].key;
    int i;
    TRY(tp_row_enum(r, "framework_key", names, sizeof fws / sizeof fws[0], &i));
    if (i >= 0) {
        tp_snprintf(r->run->framework_key, sizeof r->run->framework_key, "%s", names[i]);
        j->framework = fws[i].fw;
        return TP_OK;
    }
    j->framework = TP_FW_FSDP;
    tp_row_assume(r->run, "framework conventions of FSDP");
    return TP_OK;
}

static enum tp_status map_job(const struct row *r, const struct tp_model *m, struct tp_job *j)
{
    tp_job_init(j);
    j->seq = m->default_seq;
    TRY(map_framework(r, j));
    /* a Hugging Face / Axolotl row sharded by FSDP ("fsdp-full", "fsdp-grad-op", "hsdp") ran on
       FSDP2 through Accelerate, not on DeepSpeed */
    const char *zf = tp_row_cell(r, "zero_or_fsdp");
    j->fsdp_backend = j->framework == TP_FW_AXOLOTL &&
                      (strncmp(zf, "fsdp-", 5) == 0 || strcmp(zf, "hsdp") == 0);
    static const char *const tasks[] = {"pretrain", "sft", "dpo", "lora", "qlora"};
    int i;
    TRY(tp_row_enum(r, "task", tasks, 5, &i));
    if (i >= 0)
        j->task = (enum tp_task)i;
    /* the precision by its whole name: "notfp8" is no FP8 */
    static const char *const precs[] = {"bf16", "fp16", "fp32", "fp8", "mxfp8", "nvfp4", "mxfp4"};
    static const enum tp_precision prec_of[] = {TP_PREC_BF16,  TP_PREC_FP16,  TP_PREC_FP32,
                                                TP_PREC_FP8,   TP_PREC_MXFP8, TP_PREC_NVFP4,
                                                TP_PREC_MXFP4};
    TRY(tp_row_enum(r, "precision", precs, 7, &i));
    if (i >= 0)
        j->precision = prec_of[i];
    else
        tp_row_assume(r->run, "bf16");
    const char *fw = tp_row_cell(r, "framework");
    if (strstr(fw, "8bit") || strstr(fw, "8-bit"))
        j->optimizer = TP_OPT_ADAMW_8BIT;
    tp_row_recipe_job(r, j);
    /* Runs before FlashAttention reached the frameworks kept dropout and the s x s scores:
       Megatron-LM took it in PR #267 (opened 2022-12-09, merged January 2023), PyTorch's SDPA
       in 2.0 (March 2023); Korthikanti et al. 2022 count both in their activations (34sbh +
       5as^2b: the softmax output and the attention dropout mask) */
    const char *date = tp_row_cell(r, "source_version_or_date");
    long year = strtol(date, NULL, 10);
    if (year >= 2000 && year < 2023) { /* a calendar year, not a release like "26.08" */
        j->attn_impl = TP_ATTN_EAGER;
        j->dropout = true;
    } else if (strcmp(r->run->framework_key, "megatron-deepspeed") == 0) {
        /* Megatron-DeepSpeed calls flash-attn, not TE: whichever is installed under
           --use-flash-attn (c08e2cc2's transformer.py takes flash_attn_varlen_func when
           flash-attn 2 is there, else flash_attn_unpadded_func); a framework cell naming
           "FlashAttention 1" (the rebase README's "FlashAttention (1.0,4)" and "1.x") ran 1.x */
        j->attn_impl = strstr(fw, "FlashAttention 1") ? TP_ATTN_FLASH1 : TP_ATTN_FLASH2;
    } else if (strstr(fw, "Flex Attention") || strstr(fw, "FlexAttention") ||
               strstr(fw, "flex_attention")) {
        j->attn_impl = TP_ATTN_FLEX; /* "Flex Attention QLoRA + FSDP2" (the framework cell) */
    }
    TRY(tp_row_stack_columns(r, j));
    TRY(tp_row_fp8_attention(r, j));
    TRY(tp_row_cuda_graphs(r, j)); /* after moe_capacity: a full graph needs static shapes */
    tp_row_step_logging(r, j);
    return tp_row_pack_fill(r, j); /* after doc_len: the two must agree */
}

/* Selective recompute's modules: the `recompute_modules` cell, else Megatron's flag as the
   row's notes quote it ("--recompute-modules moe_act layernorm"), else core_attn. */
static enum tp_status map_recompute_modules(const struct row *r, struct tp_layout *l)
{
    struct tp_error inner;
    const char *list = tp_row_cell(r, "recompute_modules");
    if (*list) {
        if (tp_recompute_modules_parse(list, &l->recompute_modules, &inner) != TP_OK)
            return tp_fail(r->err, TP_EINVAL, "recompute_modules: %s", inner.msg);
        return TP_OK;
    }
    /* torchtitan's selective checkpointing: the op-level policy its llama train configs set
       (selective_ac_option = "op"), unless the row names another */
    const char *detail = tp_row_cell(r, "recompute_detail");
    if (strcmp(detail, "per-op") == 0 ||
        (!*detail && strcmp(tp_row_cell(r, "framework_key"), "torchtitan") == 0)) {
        l->recompute_modules = TP_RC_OP;
        return TP_OK;
    }
    const char *flag = strstr(tp_row_cell(r, "notes"), "--recompute-modules ");
    if (!flag)
        return TP_OK;
    flag += strlen("--recompute-modules ");
    char names[128];
    size_t n = 0;
    /* the names up to the next flag, parenthesis or sentence end */
    while (flag[n] && flag[n] != '(' && flag[n] != ';' && flag[n] != ')' &&
           !(flag[n] == '-' && flag[n + 1] == '-') && n + 1 < sizeof names)
        n++;
    memcpy(names, flag, n);
    names[n] = '\0';
    if (tp_recompute_modules_parse(names, &l->recompute_modules, &inner) != TP_OK)
        return tp_fail(r->err, TP_EINVAL, "notes: %s", inner.msg);
    return TP_OK;
}

static enum tp_status map_layout(const struct row *r, struct tp_layout *l)
{
    struct tp_run *run = r->run;
    tp_layout_init(l);
    TRY(tp_row_u32(r, "tp", false, 0, &l->tp));
    TRY(tp_row_u32(r, "pp", false, 0, &l->pp));
    TRY(tp_row_u32(r, "dp", false, 0, &l->dp));
    TRY(tp_row_u32(r, "cp", false, 1, &l->cp));
    TRY(tp_row_u32(r, "ep", false, 1, &l->ep));
    TRY(tp_row_u32(r, "vpp", false, 1, &l->vpp));
    const char *notes = tp_row_cell(r, "notes");
    if (!*tp_row_cell(r, "vpp") && l->pp > 1 && strcmp(run->framework_key, "torchtitan") == 0 &&
        (strstr(notes, "Interleaved 1F1B") || strstr(notes, "Interleaved1F1B") ||
         strstr(notes, "InterleavedZeroBubble") || strstr(notes, "ZBVZeroBubble"))) {
        /* torchtitan's multi-stage schedules without split points build 2 stages per rank
           (parallelisms/pipelining_utils.py generate_split_points, at the commit of its
           2024-12 benchmarks; "v schedules assume 2 stages per rank") */
        l->vpp = 2;
        tp_row_assume(run, "2 pipeline stages per rank (torchtitan's multi-stage schedules)");
    }
    TRY(tp_row_u32(r, "etp", false, 0, &l->etp));
    TRY(tp_row_u32(r, "pp_first", false, 0, &l->pp_first));
    TRY(tp_row_u32(r, "pp_last", false, 0, &l->pp_last));
    bool act_off = false;
    TRY(tp_row_bool(r, "offload_activations", false, &act_off));
    TRY(tp_row_u32(r, "offload_layers", false, 0, &l->offload_layers));
    l->offload_activations = act_off || l->offload_layers != 0;
    TRY(tp_row_bool(r, "sp", false, &l->sp));
    if (!*tp_row_cell(r, "sp") && mcore_recipe(r) && l->tp != 1) {
        l->sp = true; /* NeMo/Megatron-Bridge recipes and Megatron-Core's examples run SP with TP */
        tp_row_assume(run, "sequence parallelism with TP (Megatron-Core recipes)");
    }
    static const char *const zeros[] = {"0", "1", "2", "3", "fsdp-full", "fsdp-grad-op", "hsdp",
                                        "megatron-distopt"};
    int zi;
    TRY(tp_row_enum(r, "zero_or_fsdp", zeros, sizeof zeros / sizeof zeros[0], &zi));
    const char *z = zi >= 0 ? zeros[zi] : "";
    if (strcmp(z, "fsdp-full") == 0 || strcmp(z, "3") == 0)
        l->zero = 3;
    else if (strcmp(z, "fsdp-grad-op") == 0 || strcmp(z, "2") == 0)
        l->zero = 2;
    else if (strcmp(z, "megatron-distopt") == 0 || strcmp(z, "1") == 0)
        l->zero = 1;
    else if (strcmp(z, "hsdp") == 0)
        l->zero = 3;
    else if (!*z && mcore_recipe(r)) {
        l->zero = 1; /* Megatron-Bridge's and NeMo's default: use_distributed_optimizer True */
        tp_row_assume(run, "distributed optimizer (Megatron-Core recipes' default)");
    } else if (strcmp(z, "0") != 0)
        tp_row_assume(run, "no ZeRO sharding");
    /* parameter / optimizer CPU offload as the run stated it: DeepSpeed's offload_optimizer /
       offload_param, FSDP2's CPUOffloadPolicy (Accelerate's fsdp_offload_params: the sharded
       parameters, their gradients and the optimizer step on the host) */
    static const char *const offloads[] = {"none", "optimizer", "params"};
    int oi;
    TRY(tp_row_enum(r, "offload", offloads, 3, &oi));
    if (oi > 0)
        l->offload = oi == 1 ? TP_OFFLOAD_OPTIMIZER : TP_OFFLOAD_PARAMS;
    TRY(tp_row_u32(r, "shard_group_size", false, 0, &l->shard_group));
    TRY(tp_row_u32(r, "hpz", false, 0, &l->hpz)); /* ZeRO++ zero_hpz_partition_size */
    TRY(tp_row_u32(r, "micro_batch", false, 0, &l->mbs));
    TRY(tp_row_u32(r, "grad_accum", false, 0, &l->gas));
    run->gas_unknown = l->gas == 0;
    if (l->gas == 0)
        l->gas = 1; /* derived from global_batch once dp is known */
    run->mbs_unknown = l->mbs == 0;
    if (l->mbs == 0)
        l->mbs = 1; /* derived from global_batch once dp is known */
    /* the pipeline schedule column (DualPipe rows, data/runs/public_moe_runs.csv) */
    const char *sched = tp_row_cell(r, "schedule");
    if (*sched) {
        int v = tp_name_value(TP_NAMES_SCHEDULE, sched);
        if (v < 0)
            return tp_fail(r->err, TP_EINVAL, "schedule \"%s\" is not a known value", sched);
        l->schedule = (enum tp_schedule)v;
    }
    static const char *const modes[] = {"none", "selective", "full"};
    int ri;
    TRY(tp_row_enum(r, "recompute", modes, 3, &ri));
    const char *rc = ri >= 0 ? modes[ri] : "";
    if (strcmp(rc, "full") == 0) {
        l->recompute = TP_RECOMPUTE_FULL;
    } else if (strcmp(rc, "selective") == 0) {
        l->recompute = TP_RECOMPUTE_SELECTIVE;
        TRY(map_recompute_modules(r, l));
    } else if (!*rc && strcmp(tp_row_cell(r, "framework_key"), "megatron") == 0 &&
               tp_row_release_year(tp_row_cell(r, "source_version_or_date")) > 0 &&
               tp_row_release_year(tp_row_cell(r, "source_version_or_date")) < 2022) {
        /* Megatron-LM of 2019-2021 checkpointed every layer: --checkpoint-activations in its
           example scripts, "activation checkpointing after every transformer layer" in the
           Megatron-LM paper (Shoeybi et al. 2019, §5) */
        l->recompute = TP_RECOMPUTE_FULL;
        tp_row_assume(run, "full recompute (Megatron-LM --checkpoint-activations)");
    } else if (!*rc && tp_row_recipe_recompute(r, l)) {
        tp_row_assume(run, "selective recompute of layernorm and moe_act (Megatron-Bridge recipe)");
    } else if (!*rc) {
        bool finetune = strcmp(tp_row_cell(r, "framework_key"), "axolotl") == 0;
        l->recompute = finetune ? TP_RECOMPUTE_FULL : TP_RECOMPUTE_NONE;
        tp_row_assume(run, finetune ? "gradient checkpointing on (Axolotl fine-tuning configs)"
                             : "no recompute");
    }
    /* full recompute of only the first N blocks of each stage: Megatron-Core's
       --recompute-method block --recompute-num-layers N (NeMo's activations_checkpoint_method
       block / _num_layers; --recompute-layers) */
    TRY(tp_row_u32(r, "recompute_layers", false, 0, &l->recompute_layers));
    if (l->recompute_layers && l->recompute != TP_RECOMPUTE_FULL)
        return tp_fail(r->err, TP_EINVAL, "recompute_layers %u needs recompute full",
                       l->recompute_layers);
    return TP_OK;
}

/* Rows that give only the model-parallel size (TP x PP = num_gpus / dp) get Megatron's rule:
   tensor parallelism inside a node (up to gpus_per_node), pipeline stages for the rest
   ([NAR21] §3.3, the takeaway every table of that paper follows).  Rows that give no dp
   either get the search's fastest layout (runs_search.c). */
static enum tp_status resolve_split(const struct row *r, struct tp_run *run)
{
    struct tp_layout *l = &run->layout;
    if (l->tp && l->pp)
        return TP_OK;
    uint32_t n = run->cluster.n_gpus, gpn = run->cluster.gpus_per_node;
    if (!l->dp) /* nothing to split: the layout the authors would have tuned */
        return tp_row_search_layout(r, run);
    /* dp*cp in 64 bits (two 32-bit cells can wrap it to 0) and every divisor nonzero */
    uint64_t per_rank = (uint64_t)l->dp * l->cp;
    if (n == 0 || gpn == 0 || l->cp == 0)
        return tp_fail(r->err, TP_EINVAL, "%s is 0", n == 0     ? "num_gpus"
                                                     : gpn == 0 ? "gpus_per_node"
                                                                : "cp");
    if (per_rank > n)
        return tp_fail(r->err, TP_EINVAL, "dp * cp = %u * %u exceeds num_gpus = %u", l->dp, l->cp,
                       n);
    if (n % per_rank != 0)
        return tp_fail(r->err, TP_EINVAL, "tp and pp are empty and dp = %u does not divide "
                       "num_gpus = %u", l->dp, n);
    uint32_t mp = (uint32_t)(n / per_rank);
    if (!l->tp && !l->pp) {
        l->tp = mp < gpn ? mp : gpn;
        while (mp % l->tp)
            l->tp--;
        l->pp = mp / l->tp;
        tp_row_assume(run, "tp = model-parallel size up to a node, pp = the rest");
    } else if (!l->tp) {
        l->tp = mp % l->pp == 0 ? mp / l->pp : 1;
        tp_row_assume(run, "tp = num_gpus / (dp * cp * pp)");
    } else {
        l->pp = mp % l->tp == 0 ? mp / l->tp : 1;
        tp_row_assume(run, "pp = num_gpus / (dp * cp * tp)");
    }
    return TP_OK;
}

/* Expert tensor parallel (Megatron-Core's MoE parallel folding): the `etp` cell, else
   Megatron-Core's default etp = tp, unless ep * tp expert ranks cannot be carved out of
   tp * cp * dp: the run then folded its experts with etp 1 (the only size that ran). */
static void resolve_etp(struct tp_run *run)
{
    struct tp_layout *l = &run->layout;
    if (l->etp || !l->tp || !l->dp)
        return;
    uint64_t ranks = (uint64_t)l->tp * l->cp * l->dp;
    if (l->ep > 1 && run->model.n_experts > 0 && ranks % ((uint64_t)l->ep * l->tp) != 0) {
        l->etp = 1;
        tp_row_assume(run, "etp 1 (ep*tp expert ranks do not divide tp*cp*dp)");
    }
}

/* Megatron-Core's pipeline split where the row's blocks do not divide evenly: the `pp_layout`
   cell (a --pipeline-model-parallel-layout string) when given; otherwise, for Megatron-Core
   stacks, the embedding and the loss each taking a block's slot
   (--account-for-embedding/loss-in-pipeline-split, how Megatron-Core recipes run 94 or 126
   blocks on 32 or 128 virtual stages), else the loss alone, else (any stack, interleaved)
   blocks spread as evenly as they go with the remainder on the later virtual stages. */
static enum tp_status resolve_pp_split(const struct row *r, struct tp_run *run)
{
    struct tp_layout *l = &run->layout;
    uint32_t L = run->model.n_layers, nv = l->pp * (l->vpp ? l->vpp : 1);
    struct tp_error inner;
    const char *text = tp_row_cell(r, "pp_layout");
    if (*text) {
        if (tp_layout_pp_parse(text, L, l, &inner) != TP_OK)
            return tp_fail(r->err, TP_EINVAL, "pp_layout: %s", inner.msg);
        return TP_OK;
    }
    if (l->pp < 2 || L % nv == 0 || l->pp_first || l->pp_last || nv > TP_MAX_VSTAGES)
        return TP_OK;
    bool mcore = strcmp(run->framework_key, "megatron") == 0 ||
                 strcmp(run->framework_key, "nemo") == 0;
    if (mcore && tp_layout_pp_account(L, true, true, l, &inner) == TP_OK) {
        tp_row_assume(run, "embedding and loss each take a block's slot in the pipeline split");
        return TP_OK;
    }
    if (mcore && tp_layout_pp_account(L, false, true, l, &inner) == TP_OK) {
        tp_row_assume(run, "the loss takes a block's slot in the pipeline split");
        return TP_OK;
    }
    if (l->vpp < 2)
        return TP_OK; /* 1F1B spreads an uneven depth itself (stage_span) */
    if (nv > L) /* as the CLI refuses it: a virtual stage would hold no block */
        return tp_fail(r->err, TP_EINVAL, "pp x vpp = %u x %u = %u virtual stages exceed "
                       "n_layers = %u", l->pp, l->vpp, nv, L);
    uint32_t blocks[TP_MAX_VSTAGES];
    for (uint32_t v = 0; v < nv; v++)
        blocks[v] = (uint32_t)((uint64_t)(v + 1) * L / nv - (uint64_t)v * L / nv);
    for (uint32_t v = 0; v < nv; v++)
        l->pp_map[v] = (uint16_t)blocks[v];
    l->pp_nv = nv;
    tp_row_assume(run, "blocks spread over the virtual stages, the remainder on the later ones");
    return TP_OK;
}

/* Transformer Engine's TP communication overlap with tensor-parallel size `tp`: stated in the
   notes ("--tp-comm-overlap", "--no-tp-comm-overlap", as `trainplan logs` writes them), else
   the stack's default: off under Megatron-SWIFT (ms-swift's `megatron sft` / `megatron pt`:
   `tp_comm_overlap: bool = False` in swift/megatron/argument/megatron_args.py from its first
   release, 65a462dde of 2025-03-17, to arguments/megatron_args.py at 3602360a5; its
   Command-line parameters page: "Default is False"), which only `--tp_comm_overlap true` turns
   on; elsewhere the default of NeMo's performance recipes and Megatron-Core's published runs on
   Hopper and Blackwell (*assumed true then). */
bool tp_row_tp_overlap(const struct row *r, uint32_t tp, bool *assumed)
{
    const struct tp_run *run = r->run;
    const char *fwk = run->framework_key, *notes = tp_row_cell(r, "notes");
    *assumed = false;
    if (tp <= 1 || strstr(notes, "no-tp-comm-overlap"))
        return false;
    /* on only where the notes quote it switched on: the flag, ms-swift's spelling or the
       MLPerf configs' variable (a note quoting a default of False is not a switch) */
    if (strstr(notes, "--tp-comm-overlap") || strstr(notes, "--tp_comm_overlap true") ||
        strstr(notes, "TP_COMM_OVERLAP=True"))
        return true;
    const char *fw = tp_row_cell(r, "framework");
    if (strstr(fw, "Megatron-SWIFT") || strstr(fw, "megatron-swift"))
        return false;
    *assumed = run->cluster.gpu.async_mma && run->job.attn_impl != TP_ATTN_EAGER &&
               (strcmp(fwk, "megatron") == 0 || strcmp(fwk, "nemo") == 0);
    return *assumed;
}

/* Megatron's backward TP all-reduce run without the weight-gradient GEMM beside it: stated
   in the notes (Megatron's --no-async-tensor-model-parallel-allreduce), or a Megatron-LM row
   released before 2021-09, when the async path did not exist (NVIDIA/Megatron-LM cf7efd4f
   "allreduce overlap with wgrad gemm", merged to main as b462d25 on 2021-09-07, on by default
   since 3f65246 of the same branch).  Megatron-DeepSpeed never runs it (its stack default). */
bool tp_row_no_async_tp(const struct row *r)
{
    const char *fw = tp_row_cell(r, "framework_key");
    if (strstr(tp_row_cell(r, "notes"), "no-async-tensor-model-parallel-allreduce"))
        return true;
    long month = tp_row_release_month(tp_row_cell(r, "source_version_or_date"));
    return strcmp(fw, "megatron") == 0 && month > 0 && month < 202109;
}

/* The measured figures of a row (NaN where empty), its OOM flag and FLOP convention. */
static enum tp_status map_measured(const struct row *r, struct tp_run *out)
{
    out->tokens_per_s_per_gpu = out->step_time_s = out->tflops_per_gpu = NAN;
    out->mfu = out->hfu = out->mem_gib = NAN;
    out->samples_per_s = out->wall_clock_h = out->total_tokens = NAN;
    TRY(tp_row_real(r, "tokens_per_s_per_gpu", &out->tokens_per_s_per_gpu));
    TRY(tp_row_real(r, "step_time_s", &out->step_time_s));
    TRY(tp_row_real(r, "tflops_per_gpu", &out->tflops_per_gpu));
    TRY(tp_row_real(r, "mfu", &out->mfu));
    TRY(tp_row_real(r, "hfu", &out->hfu));
    TRY(tp_row_real(r, "mem_per_gpu_gib", &out->mem_gib));
    TRY(tp_row_real(r, "samples_per_s", &out->samples_per_s));
    TRY(tp_row_real(r, "wall_clock_h", &out->wall_clock_h));
    TRY(tp_row_real(r, "total_tokens", &out->total_tokens));
    TRY(tp_row_bool(r, "oom", false, &out->oom));
    int i;
    TRY(tp_row_enum(r, "tflops_convention", TP_FLOP_CONVENTIONS, TP_CONV_COUNT, &i));
    if (!tp_mem_kind_parse(tp_row_cell(r, "mem_kind"), &out->mem_kind))
        return tp_fail(r->err, TP_EINVAL, "mem_kind \"%s\" is not allocated, reserved or device",
                       tp_row_cell(r, "mem_kind"));
    tp_snprintf(out->tflops_convention, sizeof out->tflops_convention, "%s",
                i >= 0 ? TP_FLOP_CONVENTIONS[i] : "");
    return TP_OK;
}

/* Micro-batch and accumulation a row leaves empty, from its global batch (and the era's
   Megatron-LM, which had no micro-batches before 2021); the global batch they make. */
static enum tp_status derive_batch(const struct row *r, struct tp_run *out)
{
    struct tp_layout *l = &out->layout;
    uint32_t gbs = 0;
    TRY(tp_row_u32(r, "global_batch", false, 0, &gbs));
    if (out->mbs_unknown) {
        /* Megatron-LM before 2021 had no micro-batches: the batch per GPU ran in one pass */
        long year = strtol(tp_row_cell(r, "source_version_or_date"), NULL, 10);
        bool whole = year >= 2000 && year < 2021 && gbs && gbs % l->dp == 0 && l->pp == 1;
        if (whole) {
            l->mbs = gbs / l->dp;
            tp_row_assume(out, "micro_batch = global_batch / dp "
                               "(no accumulation before Megatron-LM 2021)");
        } else if (!out->gas_unknown && gbs && gbs % ((uint64_t)l->dp * l->gas) == 0) {
            l->mbs = (uint32_t)(gbs / ((uint64_t)l->dp * l->gas));
            tp_row_assume(out, "micro_batch = global_batch / (dp * grad_accum)");
        } else {
            l->mbs = 1;
            tp_row_assume(out, "micro_batch 1 (not stated)");
        }
    }
    if (out->gas_unknown) {
        uint64_t per = (uint64_t)l->mbs * l->dp;
        l->gas = gbs && gbs % per == 0 ? (uint32_t)(gbs / per) : 1;
        if (!gbs)
            tp_row_assume(out, "one micro-batch per step");
    }
    out->global_batch = (double)l->mbs * l->gas * l->dp;
    return tp_row_check_batch(r, out, gbs);
}

enum tp_status tp_run_from_row(const char *const *cols, const char *const *cells, size_t n,
                               struct tp_run *out, struct tp_error *err)
{
    if (!out || (n && (!cols || !cells)))
        return tp_fail(err, TP_EINVAL, "no row given (columns, cells or the output are NULL)");
    memset(out, 0, sizeof *out);
    struct row r = {cols, cells, n, err, out};
    /* the identity is echoed by every report: control characters escaped, never cut inside a
       UTF-8 sequence (a JSON string must stay UTF-8) */
    tp_text_escape(tp_row_cell(&r, "row_id"), out->row_id, sizeof out->row_id);
    tp_snprintf(out->source, sizeof out->source, "%.*s", (int)strcspn(out->row_id, ":"),
             out->row_id);
    tp_text_escape(tp_row_cell(&r, "source_version_or_date"), out->release, sizeof out->release);
    out->duplicate = *tp_row_cell(&r, "dup_of") != '\0';
    TRY(map_measured(&r, out));

    TRY(map_model(&r, &out->model));
    TRY(map_job(&r, &out->model, &out->job));
    TRY(map_layout(&r, &out->layout));
    const struct tp_gpu *g;
    struct tp_error inner;
    if (tp_gpu_find(tp_row_cell(&r, "gpu_type"), &g, &inner) != TP_OK)
        return tp_fail(err, TP_EUNSUPPORTED, "gpu_type \"%s\" is not in the catalog",
                       tp_row_cell(&r, "gpu_type"));
    out->cluster.gpu = *g;
    TRY(tp_row_u32(&r, "num_gpus", true, 0, &out->cluster.n_gpus));
    TRY(tp_row_u32(&r, "gpus_per_node", false, g->gpus_per_node, &out->cluster.gpus_per_node));
    if (out->cluster.gpus_per_node > out->cluster.n_gpus && out->cluster.n_gpus) {
        /* a job on part of a node (4 of a DGX's 8 GPUs, 64 of an NVL72): said, not silent */
        char text[96];
        snprintf(text, sizeof text, "the job's %u GPUs within one node of %u", out->cluster.n_gpus,
                 out->cluster.gpus_per_node);
        tp_row_assume(out, text);
    }
    /* rack-scale parts (GB200/GB300 NVL72): the NVLink domain, not the 4-GPU tray, is what the
       network model calls a node */
    if (g->gpus_per_node >= 32 && out->cluster.gpus_per_node < g->gpus_per_node) {
        out->cluster.gpus_per_node = g->gpus_per_node;
        tp_row_assume(out, "NVLink domain of the catalog as the node");
    }
    double nic = NAN;
    TRY(tp_row_real(&r, "nic_gbps_per_node", &nic));
    if (isfinite(nic) && nic > 0) /* the measured network: Gb/s per node over its GPUs */
        out->cluster.gpu.inter_bw = nic / 8 * 1e9 / out->cluster.gpus_per_node;
    struct tp_layout *l = &out->layout;
    TRY(resolve_split(&r, out));
    resolve_etp(out);
    TRY(resolve_pp_split(&r, out));
    bool assumed;
    out->job.tp_comm_overlap = tp_row_tp_overlap(&r, l->tp, &assumed);
    if (assumed)
        tp_row_assume(out, "TP communication overlapped (Transformer Engine userbuffers)");
    out->job.no_async_tp_allreduce = tp_row_no_async_tp(&r);
    out->job.moe_a2a_overlap = tp_row_a2a_overlap(&r, &assumed) && l->ep > 1;
    if (assumed && out->job.moe_a2a_overlap)
        tp_row_assume(out, "EP all-to-all overlapped (Megatron-Bridge recipe, moe_a2a_overlap)");
    /* Megatron-Bridge's fused expert MLP, as the row's recipe notes quote it (docs/moe.md,
       "GPT-OSS in Megatron-Bridge by release") */
    out->job.moe_fused_mlp = strstr(tp_row_cell(&r, "notes"), "cutedsl_fused_grouped_mlp True");
    if (tp_layout_check(&out->model, &out->cluster, &out->job, l, &inner) != TP_OK)
        return tp_fail(err, TP_EINVAL, "layout: %s", inner.msg);
    TRY(derive_batch(&r, out));
    /* the micro-batch and accumulation derived above from global_batch are checked like the
       rest: a row the evaluation would refuse (gas 12,825,616 from a fuzzed global_batch) is
       reported here, with its reason, not dropped later */
    if (tp_run_check(&out->model, &out->cluster, &out->job, l, NULL, &inner) != TP_OK)
        return tp_fail(err, TP_EINVAL, "layout: %s", inner.msg);
    /* what the row measured must be something the part can do (src/logs/plausible.c) */
    return tp_run_plausible(out, err);
}
