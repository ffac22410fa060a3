/*
 * cmd_checkpoint.c - `trainplan checkpoint PATH [MODEL | --config FILE]`: what a checkpoint
 * holds, what is wrong with it, whether it is the model, and what the run's saves weigh.
 *
 * The library reads the headers (tp_ckpt_inspect) and plans the saves (tp_ckpt_plan); this
 * file resolves the model (MODEL, --config, else the config.json beside the checkpoint), and
 * prints.  Exit status 0 when no problem is found, 1 when any is, 2 when PATH or the model
 * cannot be read.
 */
#include "cli.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void help(void)
{
    printf("usage: trainplan checkpoint PATH [MODEL | --config config.json] [--gpus N]\n"
           "                            [--zero 0-3] [--storage-gbps X]\n"
           "                            [--format table|json|csv]\n\n"
           "Inspects a checkpoint without reading its tensor data: PATH is a .safetensors file,\n"
           "a model.safetensors.index.json, or a folder (its *.safetensors, the index, and any\n"
           "DeepSpeed `latest` / global_stepN / *_states.pt).  Reports tensors, dtypes, bytes and\n"
           "parameters per file and in total, the parameters by component, and the faults:\n"
           "stub or zero-length files, shards the index names that are missing, tensors in no\n"
           "shard or in two files, truncated files, overlapping or out-of-bounds offsets,\n"
           "unknown dtypes, headers that are not JSON, missing ZeRO ranks.  With a model (MODEL,\n"
           "--config, else the config.json beside the checkpoint) compares tensor names and\n"
           "shapes (Llama-style families) and the total, and plans the run's saves: bytes per\n"
           "save and per rank, the consolidated fp32 and bf16 sizes, and the host RAM and disk\n"
           "zero_to_fp32 needs.\n\n"
           "JSON keys: schema_version, path, files[] (path, bytes, tensors, params, ...),\n"
           "total_params, by_component, problems[] (kind, file, tensor, detail), matches_config,\n"
           "comparison, zero, plan.\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_CHECKPOINT);
    printf("\nexit status: 0 no problem found; 1 problems found (one line each); 2 usage error,\n"
           "or PATH or the model cannot be read.\n");
}

/* What the command works from. */
struct ctx {
    const char *path;
    struct tp_model m;
    bool have_model;
    char model_source[600];
    char model_note[600];   /* why the config.json beside the checkpoint was not used */
    struct tp_job j;
    struct tp_ckpt *ck;
    bool planned;
    struct tp_ckpt_plan plan;
    uint32_t plan_gpus, plan_zero;
    double storage_gbps;
};

/* The config.json in PATH (a folder) or beside it (a file). */
static void beside(const char *path, char *buf, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "%s/config.json", path);
        return;
    }
    const char *s = strrchr(path, '/');
    if (s)
        snprintf(buf, len, "%.*s/config.json", (int)(s - path), path);
    else
        snprintf(buf, len, "config.json");
}

static int resolve_model(const struct cli_args *a, struct ctx *x)
{
    const char *given = a->n_files > 1 ? a->files[1] : a->config;
    if (a->n_files > 1 && a->config) {
        cli_error("give the model once: MODEL (%s) or --config (%s)", a->files[1], a->config);
        return EXIT_USAGE;
    }
    if (given) {
        struct cli_args b = *a;
        b.model = given;
        char notes[512];
        int rc = cli_resolve_model(&b, &x->m, notes, sizeof notes);
        if (rc != EXIT_OK)
            return rc;
        x->have_model = true;
        snprintf(x->model_source, sizeof x->model_source, "%s", given);
        return EXIT_OK;
    }
    /* one shard of a sharded save is not the model: compare it only when asked */
    const char *base = strrchr(x->path, '/') ? strrchr(x->path, '/') + 1 : x->path;
    if (strstr(base, "-of-") && strstr(base, ".safetensors")) {
        snprintf(x->model_note, sizeof x->model_note,
                 "one shard of a sharded save: give its folder or index to compare the model");
        return EXIT_OK;
    }
    char cfg[600];
    beside(x->path, cfg, sizeof cfg);
    struct stat st;
    if (stat(cfg, &st) != 0)
        return EXIT_OK;
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_hf_config(cfg, &x->m, &err) != TP_OK) {
        snprintf(x->model_note, sizeof x->model_note, "config.json beside it not used: %s",
                 err.msg);
        return EXIT_OK;
    }
    x->have_model = true;
    snprintf(x->model_source, sizeof x->model_source, "%s", cfg);
    return EXIT_OK;
}

static void resolve_job(const struct cli_args *a, struct tp_job *j)
{
    tp_job_init(j);
    j->task = (enum tp_task)a->task;
    j->optimizer = (enum tp_optimizer)a->optimizer;
    j->precision = (enum tp_precision)a->precision;
    if (a->lora_rank != TP_UNSET)
        j->lora_rank = (uint32_t)a->lora_rank;
}

/* The plan: --gpus, else the ranks of the ZeRO folder, else 8; --zero, else the folder's. */
static void plan(const struct cli_args *a, struct ctx *x)
{
    const struct tp_ckpt_zero *z = &x->ck->zero;
    uint32_t mp = z->mp_ranks ? z->mp_ranks : 1;
    x->plan_gpus = a->gpus != TP_UNSET           ? (uint32_t)a->gpus
                   : z->present && z->dp_ranks ? z->dp_ranks * mp
                                               : 8;
    x->plan_zero = a->zero != TP_UNSET ? (uint32_t)a->zero : z->present ? z->stage_hint : 0;
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

static void gib(char *buf, size_t len, double bytes)
{
    if (bytes >= 1073741824.0)
        snprintf(buf, len, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= 1048576.0)
        snprintf(buf, len, "%.2f MiB", bytes / 1048576.0);
    else
        snprintf(buf, len, "%.0f B", bytes);
}

void report_checkpoint_plan(const struct tp_ckpt_plan *p, double storage_gbps)
{
    char a[32], b[32], c[32];
    gib(a, sizeof a, p->save_bytes);
    fmt_si(b, sizeof b, p->params);
    printf("  %-34s %s (%s parameters)\n", "one save", a, b);
    gib(a, sizeof a, p->weights_bytes);
    gib(b, sizeof b, p->master_bytes);
    gib(c, sizeof c, p->moments_bytes);
    printf("  %-34s %s weights + %s fp32 master + %s optimizer states\n", "  of which", a, b, c);
    gib(a, sizeof a, p->model_file_bytes);
    gib(b, sizeof b, p->optim_file_bytes);
    printf("  %-34s %u x %s model files, %u x %s optimizer files\n", "files", p->model_files,
           a, p->optim_files, b);
    gib(a, sizeof a, p->consolidated_fp32_bytes);
    gib(b, sizeof b, p->consolidated_bf16_bytes);
    printf("  %-34s %s fp32, %s bf16\n", "consolidated model", a, b);
    gib(a, sizeof a, p->zero_to_fp32_ram_bytes);
    gib(b, sizeof b, p->zero_to_fp32_disk_bytes);
    printf("  %-34s %s host RAM, %s free disk\n", "zero_to_fp32 needs", a, b);
    if (storage_gbps > 0)
        printf("  %-34s %.1f s at %g GB/s\n", "time per save", p->save_s, storage_gbps);
}

/* ---- table ------------------------------------------------------------------------------- */

static void print_files(const struct tp_ckpt *c)
{
    char b[32], t[32], p[32];
    printf("\n%-44s %15s %8s %16s  %s\n", "files", "bytes", "tensors", "params", "dtypes");
    for (size_t i = 0; i < c->n_files; i++) {
        const struct tp_ckpt_file *f = &c->files[i];
        fmt_count(b, sizeof b, f->bytes);
        fmt_count(t, sizeof t, f->tensors);
        fmt_count(p, sizeof p, f->params);
        if (f->params == UINT64_MAX)
            snprintf(p, sizeof p, "unknown");
        const char *name = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
        printf("  %-42s %15s %8s %16s  %s\n", name, f->missing ? "missing" : b, t, p,
               f->missing ? "" : f->stub ? "(stub)" : f->dtypes);
    }
    fmt_count(b, sizeof b, c->total_bytes);
    fmt_count(t, sizeof t, c->n_tensors);
    fmt_count(p, sizeof p, c->total_params);
    if (c->total_bytes == UINT64_MAX) /* a sum that did not fit: totals_overflow */
        snprintf(b, sizeof b, "unknown");
    if (c->total_params == UINT64_MAX)
        snprintf(p, sizeof p, "unknown");
    printf("  %-42s %15s %8s %16s\n", "total (stubs and duplicates once)", b, t, p);
    if (c->n_excluded)
        printf("  %zu tensor%s flagged size-mismatch or unknown-dtype %s left out of the "
               "parameter totals (see the problems)\n",
               c->n_excluded, c->n_excluded == 1 ? "" : "s", c->n_excluded == 1 ? "is" : "are");
    if (c->totals_overflow)
        printf("  a total does not fit 64 bits (hostile shapes): printed as unknown\n");
    if (c->total_params == 0 || c->totals_overflow)
        return;
    printf("\nby dtype     %33s   share\n", "params");
    for (unsigned d = 0; d < TP_ST_DTYPE_COUNT; d++)
        if (c->by_dtype[d]) {
            fmt_count(p, sizeof p, c->by_dtype[d]);
            printf("  %-26s %18s %6.2f%%\n", tp_st_dtype_name((enum tp_st_dtype)d), p,
                   100.0 * (double)c->by_dtype[d] / (double)c->total_params);
        }
    printf("\nby component %33s   share\n", "params");
    for (unsigned k = 0; k <= TP_COMP_COUNT; k++) {
        if (!c->by_comp[k])
            continue;
        fmt_count(p, sizeof p, c->by_comp[k]);
        printf("  %-26s %18s %6.2f%%\n",
               k == TP_COMP_COUNT ? "other" : tp_component_name((enum tp_component)k), p,
               100.0 * (double)c->by_comp[k] / (double)c->total_params);
    }
}

static void print_compare(const struct ctx *x)
{
    const struct tp_ckpt *c = x->ck;
    char e[32], f[32];
    printf("\nagainst the model  %s [%s] from %s\n", x->m.name, x->m.family, x->model_source);
    fmt_count(e, sizeof e, c->expected_params);
    fmt_count(f, sizeof f, c->total_params);
    printf("  %-18s %s in the checkpoint, %s in the model (params_checkpoint)\n", "parameters", f,
           e);
    if (c->names_compared)
        printf("  %-18s %zu matched, %zu missing, %zu unexpected, %zu shape mismatches\n",
               "tensors", c->matched, c->missing, c->unexpected, c->shape_mismatches);
    else
        printf("  %-18s not compared by name (%s checkpoints name or fuse tensors otherwise)\n",
               "tensors", x->m.family);
    printf("  %-18s model %s; lm_head.weight %s\n", "head", x->m.tied ? "tied" : "untied",
           c->head_in_checkpoint ? "stored" : "not stored");
    printf("  %-18s %s\n", "verdict",
           c->matches_config ? "matches the config" : "DOES NOT MATCH the config");
}

static void print_zero(const struct tp_ckpt_zero *z)
{
    printf("\nDeepSpeed ZeRO     %s (latest: %s)\n", z->tag_dir, z->latest[0] ? z->latest : "none");
    printf("  tags             %zu:", z->n_tags);
    for (size_t i = 0; i < z->n_tags && i < 8; i++)
        printf(" %s", z->tags[i]);
    printf("%s\n", z->n_tags > 8 ? " (the last 8)" : "");
    printf("  ranks            %u data-parallel x %u model-parallel; %s\n", z->dp_ranks,
           z->mp_ranks, z->stage_hint == 3 ? "stage 3 (per-rank module files)" : "stage 0-2");
    for (size_t i = 0; i < z->n_files; i++) {
        char b[32], p[32] = "";
        fmt_count(b, sizeof b, z->files[i].bytes);
        if (z->files[i].planned_bytes > 0)
            snprintf(p, sizeof p, "planned %.0f", z->files[i].planned_bytes);
        printf("  %-52s %15s  %s\n", z->files[i].name, b, p);
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* user-notes 001: the stub sits in the output folder; the real weights are in its
   checkpoint-N/ folders.  Names up to four of them. */
static void print_step_folders(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    char names[4][64];
    size_t n = 0, all = 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "checkpoint-", 11) == 0) {
            if (n < 4)
                snprintf(names[n++], sizeof names[0], "%.63s", e->d_name);
            all++;
        }
    closedir(d);
    if (all == 0)
        return;
    qsort(names, n, sizeof names[0], cmp_name);
    printf("\nnote     the stub's folder holds %zu checkpoint-N folder%s (", all,
           all == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", names[i]);
    printf("%s): point loaders at one of them, or consolidate and replace the stub\n",
           all > n ? ", ..." : "");
}

static void print_table(const struct ctx *x)
{
    const struct tp_ckpt *c = x->ck;
    printf("trainplan %s - checkpoint\n\npath     %s%s\n", TP_VERSION, c->path,
           c->has_index ? " (with a shard index)" : "");
    if (!x->have_model)
        printf("model    none (no comparison: give MODEL or --config)%s%s\n",
               x->model_note[0] ? "; " : "", x->model_note);
    if (c->n_files > 0)
        print_files(c);
    if (c->compared)
        print_compare(x);
    if (c->zero.present)
        print_zero(&c->zero);
    if (x->planned) {
        printf("\nplan per save      %u GPUs, ZeRO %u, %s, %s (DeepSpeed's files)\n", x->plan_gpus,
               x->plan_zero, tp_name(TP_NAMES_OPTIMIZER, (int)x->j.optimizer),
               tp_name(TP_NAMES_PRECISION, (int)x->j.precision));
        report_checkpoint_plan(&x->plan, x->storage_gbps);
    }
    bool stub = false;
    for (size_t i = 0; i < c->n_problems; i++)
        stub = stub || c->problems[i].kind == TP_CK_STUB;
    if (stub)
        print_step_folders(c->path);
    printf("\nproblems           %zu\n", c->n_problems);
    for (size_t i = 0; i < c->n_problems; i++) {
        const struct tp_ckpt_problem *p = &c->problems[i];
        printf("  %-17s %s%s%s%s: %s\n", tp_ckpt_problem_name(p->kind), p->file,
               p->file[0] && p->tensor[0] ? " " : "", p->tensor[0] ? p->tensor : "",
               p->file[0] || p->tensor[0] ? "" : "(checkpoint)", p->detail);
    }
}

/* ---- JSON and CSV ------------------------------------------------------------------------ */

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

static int print_json(const struct ctx *x)
{
    const struct tp_ckpt *c = x->ck;
    json_t *doc = json_pack("{s:i, s:s, s:o, s:b, s:o, s:o, s:o, s:I, s:b, s:o, s:o}",
                            "schema_version", TP_SCHEMA_VERSION, "command", "checkpoint", "path",
                            jstr(c->path), "has_index", c->has_index, "files", files_json(c),
                            "total_params", ju64(c->total_params), "total_bytes",
                            ju64(c->total_bytes), "excluded_tensors", (json_int_t)c->n_excluded,
                            "totals_overflow", c->totals_overflow,
                            "by_component", counts_json(c), "problems", problems_json(c));
    if (!doc) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
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
    }
    json_object_set_new(doc, "plan", pl);
    json_object_set_new(doc, "model_note", jstr(x->model_note));
    return cli_print_json(doc, 0);
}

/* A count and its comma; an empty cell for one that did not fit (UINT64_MAX). */
static void csv_count(uint64_t v)
{
    if (v == UINT64_MAX)
        printf(",");
    else
        printf("%llu,", (unsigned long long)v);
}

/* One table: a row per file, a total row, a row per problem. */
static void print_csv(const struct tp_ckpt *c)
{
    printf("record,kind,path,tensor,bytes,tensors,params,detail\n");
    for (size_t i = 0; i < c->n_files; i++) {
        const struct tp_ckpt_file *f = &c->files[i];
        printf("file,%s,", f->missing ? "missing" : f->stub ? "stub" : "safetensors");
        report_csv_cell(f->path);
        printf(",,%llu,%zu,", (unsigned long long)f->bytes, f->tensors);
        csv_count(f->params);
        report_csv_cell(f->dtypes);
        putchar('\n');
    }
    printf("total,,");
    report_csv_cell(c->path);
    printf(",,");
    csv_count(c->total_bytes);
    printf("%zu,", c->n_tensors);
    csv_count(c->total_params);
    printf("%s\n", !c->compared ? "" : c->matches_config ? "matches_config" : "does_not_match");
    for (size_t i = 0; i < c->n_problems; i++) {
        const struct tp_ckpt_problem *p = &c->problems[i];
        printf("problem,%s,", tp_ckpt_problem_name(p->kind));
        report_csv_cell(p->file);
        putchar(',');
        report_csv_cell(p->tensor);
        printf(",,,,");
        report_csv_cell(p->detail);
        putchar('\n');
    }
}

int cmd_checkpoint(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_CHECKPOINT, &a, help);
    if (rc >= 0)
        return rc;
    if (a.n_files == 0 || a.n_files > 2) {
        cli_error(a.n_files ? "checkpoint takes one PATH and at most one MODEL (got %zu "
                              "arguments)"
                            : "no checkpoint given (trainplan checkpoint PATH [MODEL])",
                  a.n_files);
        return EXIT_USAGE;
    }
    static struct ctx x;
    memset(&x, 0, sizeof x);
    x.path = a.files[0];
    x.storage_gbps = a.storage_gbps;
    if ((rc = resolve_model(&a, &x)) != EXIT_OK)
        return rc;
    resolve_job(&a, &x.j);
    struct tp_error err = {{0}, {0}};
    uint32_t gpus = a.gpus != TP_UNSET ? (uint32_t)a.gpus : 0;
    if (tp_ckpt_inspect(x.path, x.have_model ? &x.m : NULL, &x.j, gpus, &x.ck, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    if (x.ck->n_files == 0 && !x.ck->zero.present) {
        cli_error("%s: no safetensors file, shard index or DeepSpeed checkpoint found", x.path);
        tp_ckpt_free(x.ck);
        return EXIT_USAGE;
    }
    if (x.have_model)
        plan(&a, &x);
    rc = EXIT_OK;
    if (a.format == FMT_JSON)
        rc = print_json(&x);
    else if (a.format == FMT_CSV)
        print_csv(x.ck);
    else
        print_table(&x);
    bool problems = x.ck->n_problems > 0;
    tp_ckpt_free(x.ck);
    if (rc != EXIT_OK)
        return rc;
    return cli_finish(problems ? EXIT_NO : EXIT_OK);
}
