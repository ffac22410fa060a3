/*
 * call_checkpoint.c - `checkpoint` as a report: the model to compare with (MODEL, config, else
 * the config.json beside the checkpoint), the headers read (tp_ckpt_inspect), the saves'
 * plan (tp_ckpt_plan), and the document `trainplan checkpoint --format json` prints.  The CLI
 * renders its table and CSV from the same report; bindings get the document (tp_call_json).
 */
#include "api_internal.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The config.json in PATH (a folder) or beside it (a file). */
static void beside(const char *path, char *buf, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        tp_snprintf(buf, len, "%s/config.json", path);
        return;
    }
    const char *s = strrchr(path, '/');
    if (s)
        tp_snprintf(buf, len, "%.*s/config.json", (int)(s - path), path);
    else
        tp_snprintf(buf, len, "config.json");
}

static enum tp_status resolve_model(const struct tp_args *a, struct tp_ckpt_report *x,
                                    struct tp_error *err)
{
    const char *given = a->n_files > 1 ? a->files[1] : a->config;
    if (a->n_files > 1 && a->config)
        return tp_fail_field(err, TP_EINVAL, "config", "give the model once: MODEL (%s) or "
                             "--config (%s)", a->files[1], a->config);
    if (given) {
        struct tp_args *b = malloc(sizeof *b);
        if (!b)
            return tp_fail(err, TP_ENOMEM, "out of memory");
        *b = *a;
        b->model = given;
        char notes[512];
        enum tp_status s = tp_args_model(b, &x->m, notes, sizeof notes, err);
        free(b);
        TRY(s);
        x->have_model = true;
        tp_snprintf(x->model_source, sizeof x->model_source, "%s", given);
        return TP_OK;
    }
    /* one shard of a sharded save is not the model: compare it only when asked */
    const char *base = strrchr(x->path, '/') ? strrchr(x->path, '/') + 1 : x->path;
    if (strstr(base, "-of-") && strstr(base, ".safetensors")) {
        tp_snprintf(x->model_note, sizeof x->model_note,
                    "one shard of a sharded save: give its folder or index to compare the model");
        return TP_OK;
    }
    char cfg[600];
    beside(x->path, cfg, sizeof cfg);
    struct stat st;
    if (stat(cfg, &st) != 0)
        return TP_OK;
    struct tp_error e = {{0}, {0}};
    if (tp_model_from_hf_config(cfg, &x->m, &e) != TP_OK) {
        tp_snprintf(x->model_note, sizeof x->model_note, "config.json beside it not used: %s",
                    e.msg);
        return TP_OK;
    }
    x->have_model = true;
    tp_snprintf(x->model_source, sizeof x->model_source, "%s", cfg);
    return TP_OK;
}

static void resolve_job(const struct tp_args *a, struct tp_job *j)
{
    tp_job_init(j);
    j->task = (enum tp_task)a->task;
    j->optimizer = (enum tp_optimizer)a->optimizer;
    j->precision = (enum tp_precision)a->precision;
    if (a->lora_rank != TP_UNSET)
        j->lora_rank = (uint32_t)a->lora_rank;
}

/* The plan: --gpus, else the ranks of the ZeRO folder, else 8; --zero, else the folder's. */
static void plan(const struct tp_args *a, struct tp_ckpt_report *x)
{
    const struct tp_ckpt_zero *z = &x->ck->zero;
    uint32_t mp = z->mp_ranks ? z->mp_ranks : 1;
    x->plan_gpus = a->gpus != TP_UNSET           ? (uint32_t)a->gpus
                   : z->present && z->dp_ranks ? z->dp_ranks * mp
                                               : 8;
    x->plan_zero = a->zero != TP_UNSET ? (uint32_t)a->zero : z->present ? z->stage_hint : 0;
    x->gpus_from = a->gpus != TP_UNSET ? "given" : z->present && z->dp_ranks ? "the ZeRO folder"
                                                                            : "assumed";
    x->zero_from = a->zero != TP_UNSET ? "given" : z->present ? "the ZeRO folder" : "assumed";
    struct tp_cluster c;
    memset(&c, 0, sizeof c);
    c.n_gpus = x->plan_gpus;
    struct tp_layout l;
    tp_layout_init(&l);
    l.tp = x->plan_gpus % mp == 0 ? mp : 1;
    l.dp = x->plan_gpus / l.tp;
    l.zero = x->plan_zero;
    tp_ckpt_plan(&x->m, &c, &x->j, &l, x->storage_gbps * 1e9, &x->plan);
    x->planned = true;
}

/* A JSON string; bytes that are not UTF-8 (a file name can hold any) become '?'. */
static json_t *jstr(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    char buf[1024];
    size_t i = 0;
    for (; s[i] && i < sizeof buf - 1; i++)
        buf[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
    buf[i] = '\0';
    return json_string(buf);
}

/* A count as a JSON integer; null when it cannot be one (past 2^63 - 1: a total that did not
   fit, see tp_ckpt.totals_overflow), never a wrapped negative number. */
static json_t *ju64(uint64_t v)
{
    return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_null();
}

static json_t *files_json(const struct tp_ckpt *c)
{
    json_t *v = json_array();
    for (size_t i = 0; i < c->n_files; i++) {
        const struct tp_ckpt_file *f = &c->files[i];
        json_array_append_new(
            v, json_pack("{s:o, s:o, s:I, s:o, s:I, s:o, s:s, s:b, s:b}", "path", jstr(f->path),
                         "bytes", ju64(f->bytes), "tensors", (json_int_t)f->tensors, "params",
                         ju64(f->params), "excluded", (json_int_t)f->excluded, "header_bytes",
                         ju64(f->header_bytes), "dtypes", f->dtypes, "stub", f->stub, "missing",
                         f->missing));
    }
    return v;
}

static json_t *problems_json(const struct tp_ckpt *c)
{
    json_t *v = json_array();
    for (size_t i = 0; i < c->n_problems; i++) {
        const struct tp_ckpt_problem *p = &c->problems[i];
        json_array_append_new(v, json_pack("{s:s, s:o, s:o, s:o}", "kind",
                                           tp_ckpt_problem_name(p->kind), "file", jstr(p->file),
                                           "tensor", jstr(p->tensor), "detail", jstr(p->detail)));
    }
    return v;
}

static json_t *counts_json(const struct tp_ckpt *c)
{
    json_t *o = json_object();
    for (unsigned k = 0; k <= TP_COMP_COUNT; k++)
        json_object_set_new(o, k == TP_COMP_COUNT ? "other"
                                                  : tp_component_name((enum tp_component)k),
                            ju64(c->by_comp[k]));
    return o;
}

static json_t *dtypes_json(const struct tp_ckpt *c)
{
    json_t *o = json_object();
    for (unsigned d = 0; d < TP_ST_DTYPE_COUNT; d++)
        if (c->by_dtype[d])
            json_object_set_new(o, tp_st_dtype_name((enum tp_st_dtype)d),
                                ju64(c->by_dtype[d]));
    return o;
}

static json_t *zero_json(const struct tp_ckpt_zero *z)
{
    if (!z->present)
        return json_null();
    json_t *tags = json_array();
    for (size_t i = 0; i < z->n_tags && i < 8; i++)
        json_array_append_new(tags, jstr(z->tags[i]));
    json_t *files = json_array();
    for (size_t i = 0; i < z->n_files; i++) {
        const struct tp_zero_file *f = &z->files[i];
        json_array_append_new(
            files, json_pack("{s:o, s:o, s:b, s:o, s:o, s:o}", "name", jstr(f->name), "bytes",
                             ju64(f->bytes), "optim", f->optim, "dp_rank",
                             f->zero_rank ? json_integer(f->dp_rank) : json_null(), "mp_rank",
                             f->mp_rank != UINT32_MAX ? json_integer(f->mp_rank) : json_null(),
                             "planned_bytes",
                             f->planned_bytes > 0 ? json_real(f->planned_bytes) : json_null()));
    }
    return json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "folder",
                     jstr(z->tag_dir),
                     "latest", jstr(z->latest), "n_tags", (json_int_t)z->n_tags, "dp_ranks",
                     (json_int_t)z->dp_ranks, "mp_ranks", (json_int_t)z->mp_ranks, "stage_hint",
                     (json_int_t)z->stage_hint, "model_bytes", ju64(z->model_bytes),
                     "optim_bytes", ju64(z->optim_bytes), "files", files, "tags", tags);
}

json_t *tp_json_checkpoint(const struct tp_ckpt_report *x)
{
    const struct tp_ckpt *c = x->ck;
    json_t *doc = json_pack("{s:i, s:s, s:o, s:b, s:o, s:o, s:o, s:I, s:b, s:o, s:o}",
                            "schema_version", TP_SCHEMA_VERSION, "command", "checkpoint", "path",
                            jstr(c->path), "has_index", c->has_index, "files", files_json(c),
                            "total_params", ju64(c->total_params), "total_bytes",
                            ju64(c->total_bytes), "excluded_tensors", (json_int_t)c->n_excluded,
                            "totals_overflow", c->totals_overflow,
                            "by_component", counts_json(c), "problems", problems_json(c));
    if (!doc)
        return NULL;
    json_object_set_new(doc, "by_dtype", dtypes_json(c));
    json_object_set_new(doc, "matches_config",
                        c->compared ? json_boolean(c->matches_config) : json_null());
    json_t *cmp = json_null();
    if (c->compared)
        cmp = json_pack("{s:s, s:s, s:o, s:o, s:b, s:I, s:I, s:I, s:I, s:b, s:b}", "model",
                        x->m.name, "family", x->m.family, "source", jstr(x->model_source),
                        "expected_params", ju64(c->expected_params), "names_compared",
                        c->names_compared, "matched", (json_int_t)c->matched, "missing",
                        (json_int_t)c->missing, "unexpected", (json_int_t)c->unexpected,
                        "shape_mismatches", (json_int_t)c->shape_mismatches, "tied", x->m.tied,
                        "head_in_checkpoint", c->head_in_checkpoint);
    json_object_set_new(doc, "comparison", cmp);
    json_object_set_new(doc, "zero", zero_json(&c->zero));
    json_t *pl = json_null();
    if (x->planned) {
        pl = tp_json_ckpt_plan(&x->plan);
        json_object_set_new(pl, "gpus", json_integer(x->plan_gpus));
        json_object_set_new(pl, "zero", json_integer(x->plan_zero));
        json_object_set_new(pl, "gpus_from", json_string(x->gpus_from));
        json_object_set_new(pl, "zero_from", json_string(x->zero_from));
    }
    json_object_set_new(doc, "plan", pl);
    json_object_set_new(doc, "model_note", jstr(x->model_note));
    return doc;
}

enum tp_status tp_checkpoint_report(const struct tp_args *a, struct tp_ckpt_report *x,
                                    struct tp_error *err)
{
    memset(x, 0, sizeof *x);
    if (a->n_files == 0 || a->n_files > 2)
        return tp_fail_field(err, TP_EINVAL, "files", a->n_files
                                 ? "checkpoint takes one PATH and at most one MODEL (got %zu "
                                   "arguments)"
                                 : "no checkpoint given (trainplan checkpoint PATH [MODEL])",
                             a->n_files);
    x->path = a->files[0];
    x->storage_gbps = a->storage_gbps;
    TRY(resolve_model(a, x, err));
    resolve_job(a, &x->j);
    uint32_t gpus = a->gpus != TP_UNSET ? (uint32_t)a->gpus : 0;
    TRY(tp_ckpt_inspect(x->path, x->have_model ? &x->m : NULL, &x->j, gpus, &x->ck, err));
    if (x->ck->n_files == 0 && !x->ck->zero.present) {
        tp_ckpt_free(x->ck);
        x->ck = NULL;
        return tp_fail(err, TP_EINVAL, "%s: no safetensors file, shard index or DeepSpeed "
                       "checkpoint found", x->path);
    }
    if (x->have_model)
        plan(a, x);
    return TP_OK;
}

void tp_checkpoint_report_free(struct tp_ckpt_report *x)
{
    tp_ckpt_free(x->ck);
    x->ck = NULL;
}
