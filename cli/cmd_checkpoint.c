/*
 * cmd_checkpoint.c - `trainplan checkpoint PATH [MODEL | --config FILE]`: what a checkpoint
 * holds, what is wrong with it, whether it is the model, and what the run's saves weigh.
 *
 * The library resolves the model (MODEL, --config, else the config.json beside the
 * checkpoint), reads the headers and plans the saves (tp_checkpoint_report) and makes the JSON
 * document (tp_json_checkpoint); this file prints the table and the CSV.  Exit status 0 when no problem is found, 1 when any is, 2 when PATH or the model
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

/* One binary unit for the whole plan (the one that suits its largest figure, the save), so
   the lines compare at a glance: "213632 B" beside "1.43 MiB" did not. */
struct unit {
    double div;
    const char *name;
};

static struct unit unit_for(double bytes)
{
    static const struct unit U[] = {
        {1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}};
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++)
        if (bytes >= U[i].div)
            return U[i];
    return (struct unit){1, "B"};
}

static struct unit plan_unit;

static void gib(char *buf, size_t len, double bytes)
{
    if (plan_unit.div == 1)
        snprintf(buf, len, "%.0f B", bytes);
    else if (bytes == 0)
        snprintf(buf, len, "0 %s", plan_unit.name);
    else
        snprintf(buf, len, "%.2f %s", bytes / plan_unit.div, plan_unit.name);
}

void report_checkpoint_plan(const struct tp_ckpt_plan *p, double storage_gbps)
{
    char a[32], b[32], c[32];
    double big = p->save_bytes;
    const double others[] = {p->model_file_bytes, p->optim_file_bytes, p->zero_to_fp32_ram_bytes,
                             p->consolidated_fp32_bytes};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        big = others[i] > big ? others[i] : big;
    plan_unit = unit_for(big);
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
        printf("  %-42s %15s %8s %16s  %s\n", cli_escape(name), f->missing ? "missing" : b, t, p,
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

static void print_compare(const struct tp_ckpt_report *x)
{
    const struct tp_ckpt *c = x->ck;
    char e[32], f[32];
    printf("\nagainst the model  %s [%s] from %s\n", cli_escape(x->m.name), x->m.family,
           cli_escape(x->model_source));
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
    printf("\nDeepSpeed ZeRO     %s (latest: %s)\n", cli_escape(z->tag_dir),
           z->latest[0] ? cli_escape(z->latest) : "none");
    printf("  tags             %zu:", z->n_tags);
    for (size_t i = 0; i < z->n_tags && i < 8; i++)
        printf(" %s", cli_escape(z->tags[i]));
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

/* users' notes 001: the stub sits in the output folder; the real weights are in its
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

static void print_table(const struct tp_ckpt_report *x)
{
    const struct tp_ckpt *c = x->ck;
    printf("trainplan %s - checkpoint\n\npath     %s%s\n", TP_VERSION, cli_escape(c->path),
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
        printf("\nplan per save      %u GPUs%s, ZeRO %u%s, %s, %s (DeepSpeed's files)\n",
               x->plan_gpus, strcmp(x->gpus_from, "assumed") == 0 ? " (assumed: give --gpus)" : "",
               x->plan_zero, strcmp(x->zero_from, "assumed") == 0 ? " (assumed: give --zero)" : "",
               tp_name(TP_NAMES_OPTIMIZER, (int)x->j.optimizer),
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
        printf("  %-17s %s%s%s%s: %s\n", tp_ckpt_problem_name(p->kind), cli_escape(p->file),
               p->file[0] && p->tensor[0] ? " " : "", p->tensor[0] ? cli_escape(p->tensor) : "",
               p->file[0] || p->tensor[0] ? "" : "(checkpoint)", cli_escape(p->detail));
    }
}

/* ---- JSON and CSV ------------------------------------------------------------------------ */

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
        report_csv_cell(cli_escape(f->path));
        printf(",,%llu,%zu,", (unsigned long long)f->bytes, f->tensors);
        csv_count(f->params);
        report_csv_cell(f->dtypes);
        putchar('\n');
    }
    printf("total,,");
    report_csv_cell(cli_escape(c->path));
    printf(",,");
    csv_count(c->total_bytes);
    printf("%zu,", c->n_tensors);
    csv_count(c->total_params);
    printf("%s\n", !c->compared ? "" : c->matches_config ? "matches_config" : "does_not_match");
    for (size_t i = 0; i < c->n_problems; i++) {
        const struct tp_ckpt_problem *p = &c->problems[i];
        printf("problem,%s,", tp_ckpt_problem_name(p->kind));
        report_csv_cell(cli_escape(p->file));
        putchar(',');
        report_csv_cell(cli_escape(p->tensor));
        printf(",,,,");
        report_csv_cell(cli_escape(p->detail));
        putchar('\n');
    }
}

int cmd_checkpoint(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_CHECKPOINT, &a, help);
    if (rc >= 0)
        return rc;
    static struct tp_ckpt_report x;
    struct tp_error err = {{0}, {0}};
    if (tp_checkpoint_report(&a, &x, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    rc = EXIT_OK;
    if (a.format == FMT_JSON)
        rc = cli_print_json(tp_json_checkpoint(&x), 0);
    else if (a.format == FMT_CSV)
        print_csv(x.ck);
    else
        print_table(&x);
    bool problems = x.ck->n_problems > 0;
    tp_checkpoint_report_free(&x);
    if (rc != EXIT_OK)
        return rc;
    return cli_finish(problems ? EXIT_NO : EXIT_OK);
}
