/*
 * logs_row.c - a parsed log (with the model, cluster, job and layout it ran) as a row of the
 * canonical runs file, for validate and calibrate.
 */
#include "logs_internal.h"

#include <csv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------------------------------- */
/* Runs-file row                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* The canonical columns of the runs files, in their order (validation/runs/README.md). */
static const char *const RUNS_COLUMNS[] = {
    "row_id", "source", "source_ref", "source_table", "source_version_or_date", "model",
    "n_layers", "hidden", "n_heads", "kv_heads", "ffn_hidden", "vocab", "seq_len",
    "total_params", "moe_num_experts", "moe_topk", "moe_ffn_hidden", "moe_shared_experts",
    "active_params", "gpu_type", "gpu_mem_gb", "num_gpus", "gpus_per_node", "interconnect",
    "tp", "pp", "dp", "cp", "sp", "ep", "vpp", "zero_or_fsdp", "micro_batch", "global_batch",
    "grad_accum", "recompute", "precision", "framework", "tflops_per_gpu", "tflops_convention",
    "mfu", "hfu", "tokens_per_s_per_gpu", "tokens_per_s_total", "samples_per_s", "step_time_s",
    "mem_per_gpu_gib", "derived_fields", "notes", "arch", "tied", "dense_layers", "head_dim",
    "framework_key", "task", "fp8_recipe", "recompute_detail", "shard_group_size", "oom",
    "dup_of", "wall_clock_h", "total_tokens", "original_values"};
enum { N_RUNS_COLUMNS = sizeof RUNS_COLUMNS / sizeof RUNS_COLUMNS[0] };

struct out {
    char *buf;
    size_t len, used; /* used counts what would have been written */
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->used < o->len) {
        size_t room = o->len - o->used - 1;
        memcpy(o->buf + o->used, s, n < room ? n : room);
        o->buf[o->used + (n < room ? n : room)] = '\0';
    }
    o->used += n;
}

/* One cell, quoted by libcsv when it holds a comma, a quote or a line break. */
static void cell(struct out *o, const char *s, bool first)
{
    if (!first)
        put(o, ",", 1);
    size_t n = strlen(s);
    if (strpbrk(s, ",\"\r\n") == NULL) {
        put(o, s, n);
        return;
    }
    size_t need = csv_write(NULL, 0, s, n);
    char *q = malloc(need + 1);
    if (!q) {
        put(o, "\"\"", 2);
        return;
    }
    csv_write(q, need, s, n);
    put(o, q, need);
    free(q);
}

/* The runs file's `arch` key for a model, and what of the model it cannot carry. */
static const char *runs_arch(const struct tp_model *m, char *lost, size_t len)
{
    const char *arch;
    lost[0] = '\0';
    if (tp_model_hybrid(m) && strcmp(m->family, "nemotron_h") == 0)
        return "nemotron_h"; /* the row's model cell names the preset (model_cell) */
    if (tp_model_hybrid(m))
        tp_snprintf(lost, len, "hybrid token mixers (gated DeltaNet / Mamba-2 blocks)");
    if (tp_model_hybrid(m))
        arch = m->n_experts ? (m->qk_norm ? "qwen3_moe" : "mixtral") : "llama";
    else if (m->attn == TP_ATTN_MLA)
        arch = m->router_score_bias ? "deepseek_v3" : "deepseek_v2";
    else if (m->attn_sinks || m->expert_bias)
        arch = "gpt_oss";
    else if (m->norm == TP_NORM_LAYER && m->mlp == TP_MLP_GELU && m->pos != TP_POS_ROPE)
        arch = "gpt";
    else if (m->norm == TP_NORM_LAYER && m->mlp == TP_MLP_GELU)
        arch = "nemotron";
    else if (m->n_experts)
        arch = m->qk_norm ? "qwen3_moe" : "mixtral";
    else
        arch = "llama";
    size_t u = 0;
    if (m->qkv_bias && strcmp(arch, "gpt") != 0 && strcmp(arch, "gpt_oss") != 0)
        u += (size_t)tp_snprintf(lost + u, len - u, "%sq/k/v biases", u ? ", " : "");
    if (m->qk_norm && strcmp(arch, "qwen3_moe") != 0 && u < len)
        u += (size_t)tp_snprintf(lost + u, len - u, "%sq/k norms", u ? ", " : "");
    if ((m->window || m->chunk) && u < len)
        u += (size_t)tp_snprintf(lost + u, len - u, "%ssliding/chunked attention", u ? ", " : "");
    if (m->n_experts && (m->moe_step > 1 || m->layers_explicit) && u < len)
        u += (size_t)tp_snprintf(lost + u, len - u, "%sinterleaved MoE layout", u ? ", " : "");
    if (m->norms_per_block == 4 && u < len)
        tp_snprintf(lost + u, len - u, "%ssandwich norms", u ? ", " : "");
    return arch;
}

/* The model cell: the model's name, and for a nemotron_h preset its key in parentheses, which
   is how the runs mapper finds a hybrid's per-block pattern (runs.c map_hybrid). */
static const char *model_cell_of(const struct tp_model *m, char *buf, size_t len)
{
    tp_snprintf(buf, len, "%s", m->name);
    if (strcmp(m->family, "nemotron_h") != 0)
        return buf;
    for (size_t i = 0; i < tp_preset_count(); i++) {
        const struct tp_preset_info *p = tp_preset_get(i);
        if (strcmp(p->label, m->name) == 0)
            tp_snprintf(buf, len, "%s (%s)", m->name, p->key);
    }
    return buf;
}

static const char *zero_key(const struct tp_job *j, const struct tp_layout *l, char *buf)
{
    bool fsdp = j->framework == TP_FW_FSDP || j->framework == TP_FW_TORCHTITAN;
    if (fsdp && l->zero == 3)
        return "fsdp-full";
    if (fsdp && l->zero == 2)
        return "fsdp-grad-op";
    if (j->framework == TP_FW_MEGATRON && l->zero == 1)
        return "megatron-distopt";
    tp_snprintf(buf, 8, "%u", l->zero);
    return buf;
}

static void fmt_num(char *buf, size_t len, double v)
{
    if (isfinite(v))
        tp_snprintf(buf, len, "%.10g", v);
    else
        buf[0] = '\0';
}

/* The free-text cells of a row: framework, derived_fields and notes. */
struct row_text {
    char framework[96], derived[256], notes[1024];
};

static void row_text(const struct tp_log_row *r, const char *lost, bool flops, struct row_text *t)
{
    const struct tp_job *j = r->job;
    const struct tp_log_steady *st = r->steady;
    enum tp_log_format f = r->info->format;
    tp_snprintf(t->framework, sizeof t->framework, "%s (from a %s log)%s%s",
                tp_stack_get(j->framework)->key, tp_log_format_name(f),
                j->optimizer == TP_OPT_ADAMW_8BIT ? "; optimizer=adamw-8bit" : "",
                j->fused_loss ? "; fused loss (as Liger)" : "");
    tp_snprintf(t->derived, sizeof t->derived, "tokens_per_s_per_gpu, tokens_per_s_total, "
                "samples_per_s, step_time_s, mem_per_gpu_gib: steady state of the log (trainplan "
                "logs); model shape, GPU and layout from the command line and the log");
    char *notes = t->notes;
    size_t cap = sizeof t->notes;
    int nn = tp_snprintf(notes, cap, "trainplan logs, %s log: %zu steps logged, %zu used (%s); "
                         "throughput: %s", tp_log_format_name(f), st->n_steps, st->n_used,
                         st->rule, st->how);
    if (flops && nn > 0 && (size_t)nn < cap)
        nn += tp_snprintf(notes + nn, cap - (size_t)nn, "; TFLOP/s and MFU as the %s log "
                          "counts them", tp_log_format_name(f));
    if (lost[0] && nn > 0 && (size_t)nn < cap)
        nn += tp_snprintf(notes + nn, cap - (size_t)nn, "; the runs format does not carry the "
                          "model's %s", lost);
    if (r->layout->tp > 1 && nn > 0 && (size_t)nn < cap) /* the runs mapper reads it back */
        nn += tp_snprintf(notes + nn, cap - (size_t)nn, "; %s",
                          j->tp_comm_overlap ? "--tp-comm-overlap" : "--no-tp-comm-overlap");
    if (r->note && r->note[0] && nn > 0 && (size_t)nn < cap)
        tp_snprintf(notes + nn, cap - (size_t)nn, "; %s", r->note);
}

/* A row's cells, by column number (RUNS_COLUMNS); numbers are written into v. */
struct row_cells {
    char v[N_RUNS_COLUMNS][48];
    const char *cells[N_RUNS_COLUMNS];
};

static void set_u(struct row_cells *rc, size_t i, uint64_t x)
{
    tp_snprintf(rc->v[i], sizeof rc->v[i], "%llu", (unsigned long long)x);
}

/* The model's columns (model through active_params, and arch through head_dim). */
static void model_cells(const struct tp_log_row *r, const char *arch, char *model_cell,
                        size_t len, struct row_cells *rc)
{
    const struct tp_model *m = r->model;
    struct tp_params pc;
    tp_count_params(m, &pc);
    rc->cells[5] = model_cell_of(m, model_cell, len);
    set_u(rc, 6, m->n_layers);
    set_u(rc, 7, m->hidden);
    set_u(rc, 8, m->n_heads);
    set_u(rc, 9, m->attn == TP_ATTN_MLA ? m->n_heads : m->n_kv_heads);
    if (m->ffn)
        set_u(rc, 10, m->ffn);
    set_u(rc, 11, m->vocab);
    set_u(rc, 12, r->job->seq);
    set_u(rc, 13, pc.total);
    if (m->n_experts) {
        set_u(rc, 14, m->n_experts);
        set_u(rc, 15, m->top_k);
        set_u(rc, 16, m->moe_ffn);
        set_u(rc, 17, m->n_shared_experts);
    }
    set_u(rc, 18, pc.active);
    rc->cells[49] = arch;
    set_u(rc, 50, m->tied ? 1 : 0);
    set_u(rc, 51, m->n_experts ? m->moe_first_dense : m->n_layers);
    if (m->attn != TP_ATTN_MLA)
        set_u(rc, 52, m->head_dim);
}

/* The cluster, layout and job columns. */
static void layout_cells(const struct tp_log_row *r, char *zbuf, struct row_cells *rc)
{
    const struct tp_cluster *c = r->cluster;
    const struct tp_job *j = r->job;
    const struct tp_layout *l = r->layout;
    rc->cells[19] = c->gpu.key;
    fmt_num(rc->v[20], sizeof rc->v[20], c->gpu.hbm_bytes / 1073741824.0);
    set_u(rc, 21, c->n_gpus);
    set_u(rc, 22, c->gpus_per_node);
    set_u(rc, 24, l->tp);
    set_u(rc, 25, l->pp);
    set_u(rc, 26, l->dp);
    set_u(rc, 27, l->cp);
    set_u(rc, 28, l->sp ? 1 : 0);
    set_u(rc, 29, l->ep);
    set_u(rc, 30, l->vpp);
    rc->cells[31] = zero_key(j, l, zbuf);
    set_u(rc, 32, l->mbs);
    set_u(rc, 33, (uint64_t)l->mbs * l->gas * l->dp);
    set_u(rc, 34, l->gas);
    rc->cells[35] = tp_name(TP_NAMES_RECOMPUTE, (int)l->recompute);
    rc->cells[36] = tp_name(TP_NAMES_PRECISION, (int)j->precision);
    rc->cells[53] = tp_stack_get(j->framework)->key;
    rc->cells[54] = tp_name(TP_NAMES_TASK, (int)j->task);
    if (l->shard_group)
        set_u(rc, 57, l->shard_group);
}

size_t tp_log_runs_csv(const struct tp_log_row *r, bool header, char *buf, size_t len)
{
    struct out o = {buf, len, 0};
    if (buf && len)
        buf[0] = '\0';
    if (header) {
        for (size_t i = 0; i < N_RUNS_COLUMNS; i++)
            cell(&o, RUNS_COLUMNS[i], i == 0);
        put(&o, "\n", 1);
    }
    const struct tp_log_steady *st = r->steady;
    enum tp_log_format f = r->info->format;
    char lost[160];
    const char *arch = runs_arch(r->model, lost, sizeof lost);

    /* the FLOP convention of the logged TFLOP/s and MFU (runs README tflops_convention) */
    const char *conv = "other";
    if (f == TP_LOG_TORCHTITAN)
        conv = "torchtitan";
    else if (f == TP_LOG_MEGATRON_DS && r->layout->recompute == TP_RECOMPUTE_FULL)
        conv = "megatron-hfu-2021"; /* 24*4*B*s*L*h^2*(1+s/6h+V/16Lh): counts the recompute */
    bool flops = isfinite(st->tflops_per_gpu) || isfinite(st->mfu);
    struct row_text t;
    row_text(r, lost, flops, &t);

    struct row_cells rc;
    for (size_t i = 0; i < N_RUNS_COLUMNS; i++) {
        rc.v[i][0] = '\0';
        rc.cells[i] = rc.v[i];
    }
    char model_cell[160], zbuf[8];
    rc.cells[0] = r->row_id;
    rc.cells[1] = "logs";
    rc.cells[2] = r->source_ref;
    model_cells(r, arch, model_cell, sizeof model_cell, &rc);
    layout_cells(r, zbuf, &rc);
    rc.cells[37] = t.framework;
    if (flops) {
        fmt_num(rc.v[38], sizeof rc.v[38], st->tflops_per_gpu);
        rc.cells[39] = conv;
        fmt_num(rc.v[40], sizeof rc.v[40], st->mfu);
    }
    fmt_num(rc.v[42], sizeof rc.v[42], st->tokens_per_s_per_gpu);
    fmt_num(rc.v[43], sizeof rc.v[43], st->tokens_per_s);
    fmt_num(rc.v[44], sizeof rc.v[44], st->samples_per_s);
    fmt_num(rc.v[45], sizeof rc.v[45], st->step_s_mean);
    fmt_num(rc.v[46], sizeof rc.v[46], st->mem_gib);
    rc.cells[47] = t.derived;
    rc.cells[48] = t.notes;
    rc.cells[58] = "0";
    for (size_t i = 0; i < N_RUNS_COLUMNS; i++)
        cell(&o, rc.cells[i], i == 0);
    put(&o, "\n", 1);
    return o.used;
}

