/*
 * cmd_export.c - `trainplan export --to FORMAT MODEL ...`: the planned layout as the files the
 * user's framework runs (DeepSpeed JSON, Axolotl YAML, Megatron arguments, torchrun/Slurm
 * launch scripts).  The library builds the texts (src/export/); this file resolves the plan
 * (the flags of estimate, or the search's best layout with --best), refuses a layout that does
 * not fit, and prints or writes the files.
 *
 * Exit status 0 exported; 1 the layout does not fit (without --allow-oom) or --best finds none;
 * 2 usage, input or I/O error, or a plan the target framework cannot express.
 */
#include "cli.h"
#include "outfile.h"
#include "par_search.h"
#include "trainplan_export.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: trainplan export --to FORMAT MODEL [--gpu NAME] [--gpus N] [layout and job options]\n"
           "                        [--best --gbs B [search options]] [--allow-oom] [--force] [-o DIR]\n\n"
           "Writes the planned run as the files its framework reads, with every batch, parallel\n"
           "and precision value the plan's (train_batch_size = micro-batch x accumulation x dp):\n"
           "  deepspeed            DeepSpeed config JSON (ZeRO stage, offload, buckets sized for\n"
           "                       the model, bf16/fp16, clipping)\n"
           "  axolotl              Axolotl YAML (+ the DeepSpeed JSON it points at, or an FSDP2\n"
           "                       block with --framework fsdp)\n"
           "  megatron             Megatron-LM arguments as a bash array for pretrain_gpt.py;\n"
           "                       Megatron-DeepSpeed's with --framework megatron-deepspeed\n"
           "  megatron-deepspeed   Megatron-DeepSpeed arguments + its DeepSpeed JSON\n"
           "  torchrun, slurm      launch script for the planned nodes (+ the --framework stack's\n"
           "                       config files)\n"
           "Without -o the format's own file goes to stdout; with -o DIR every file it needs\n"
           "(configs and a launch script) is written there and the names are printed; a file\n"
           "already there is replaced only with --force, a symbolic link never, and each file\n"
           "is written to a temporary name and renamed into place.  What the\n"
           "target cannot say exactly as planned is printed as notes on stderr.  Key and flag\n"
           "names are checked against the frameworks' sources: see docs/export.md.\n\n"
           "--best runs `trainplan search` with the same flags (--gbs needed) and exports its\n"
           "fastest layout.  A layout that does not fit is refused unless --allow-oom.\n\n"
           "JSON keys: schema_version, command, to, model, gpus, nodes, layout{...},\n"
           "global_batch, fits, memory_bytes, notes, files[] (name, path, content).\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_EXPORT);
    printf("\nexit status: 0 exported; 1 does not fit (without --allow-oom) or no layout fits;\n"
           "2 usage, input or I/O error, or a plan the framework cannot express.\n");
}

/* --best: the fastest layout the target's files run (tp_export_best, over the CLI's thread
   pool) replaces r->l, with a note naming a faster one the target cannot run.  EXIT_NO when
   none fits; EXIT_USAGE when none of those that fit can be exported. */
static int best_layout(const struct cli_args *a, enum tp_export_format fmt, struct run *r,
                       uint64_t gbs)
{
    static struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_error err = {{0}, {0}};
    int rc;
    if (a->calibration && tp_calib_from_file(a->calibration, &cal, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    struct tp_search_opts all;
    if ((rc = cli_search_opts(a, gbs, &all)) != EXIT_OK)
        return rc;
    unsigned threads = a->threads != TP_UNSET ? (unsigned)a->threads : par_cpus();
    struct par_pool *state = NULL;
    struct tp_pool pool = par_pool(&state, threads, false);
    static struct tp_export_best best;
    enum tp_status s = tp_export_best(fmt, a->to, &r->m, &r->c, &r->j, &all, &cal, &pool,
                                      &best, &err);
    par_pool_free(state);
    if (s != TP_OK) {
        cli_error("%s", cli_lib_msg(&err));
        return EXIT_USAGE;
    }
    if (!best.found) {
        fprintf(stderr, "trainplan: no layout of the %llu evaluated fits (see trainplan "
                        "search for the constraints that reject them)\n", best.evaluated);
        return EXIT_NO;
    }
    r->l = best.layout;
    if (best.note[0]) { /* its settings as flags (to=megatron: --to megatron) */
        char note[2 * sizeof best.note];
        cli_render_settings(best.note, note, sizeof note);
        fprintf(stderr, "trainplan: note: %s\n", note);
    }
    return EXIT_OK;
}

/* Writes every file into `dir` (created with its parents when missing): every name is checked
   first (nothing is written when one is refused), then each is written to a temporary file in
   the folder and renamed into place (cli/outfile.c). */
static int write_files(const char *dir, const struct tp_export *x, bool force)
{
    struct out_dir d;
    int rc = out_dir_open(&d, dir, force);
    char shown[4096];
    for (size_t i = 0; rc == EXIT_OK && i < x->n_files; i++)
        rc = out_dir_check(&d, x->files[i].name, shown, sizeof shown);
    for (size_t i = 0; rc == EXIT_OK && i < x->n_files; i++) {
        const char *name = x->files[i].name;
        size_t n = strlen(name);
        bool exec = (n > 3 && strcmp(name + n - 3, ".sh") == 0) ||
                    (n > 7 && strcmp(name + n - 7, ".sbatch") == 0);
        rc = out_dir_write(&d, name, x->files[i].text, strlen(x->files[i].text), exec);
    }
    out_dir_close(&d);
    return rc;
}

/* The defaults the exported run hangs on (advice.c): in the JSON, else notes on stderr. */
static struct cli_advice export_adv;

static int print_json(const struct cli_args *a, const struct run *r, const struct tp_export *x,
                      const struct tp_memory *mem)
{
    json_t *doc = tp_json_export(&r->m, &r->c, &r->l, a->to, x, mem, a->output);
    cli_advice_json(doc, &export_adv, false);
    return cli_print_json(doc, 12);
}

static void print_csv(const struct cli_args *a, const struct run *r, const struct tp_export *x,
                      const struct tp_memory *mem)
{
    const struct tp_layout *l = &r->l;
    printf("file,bytes,to,gpus,dp,tp,pp,vpp,cp,ep,zero,mbs,gas,global_batch,memory_verdict\n");
    for (size_t i = 0; i < x->n_files; i++)
        printf("%s,%zu,%s,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%llu,%s\n", x->files[i].name,
               strlen(x->files[i].text), a->to, r->c.n_gpus, l->dp, l->tp, l->pp, l->vpp, l->cp,
               l->ep, l->zero, l->mbs, l->gas,
               (unsigned long long)((uint64_t)l->mbs * l->gas * l->dp),
               tp_mem_verdict_name(mem->verdict));
}

/* The run to export: the flags resolved with the target's stack when --framework is not
   given, and with --best the layout the search ranks first. */
static int export_run(const struct cli_args *a, enum tp_export_format fmt, struct run *r)
{
    memset(r, 0, sizeof *r);
    struct cli_args resolve = *a;
    /* without --framework the stack is the target's */
    if (resolve.framework == TP_UNSET &&
        (fmt == TP_EXPORT_DEEPSPEED || fmt == TP_EXPORT_AXOLOTL || fmt == TP_EXPORT_MEGATRON ||
         fmt == TP_EXPORT_MEGATRON_DS))
        resolve.framework = fmt == TP_EXPORT_DEEPSPEED  ? TP_FW_DEEPSPEED
                            : fmt == TP_EXPORT_AXOLOTL  ? TP_FW_AXOLOTL
                            : fmt == TP_EXPORT_MEGATRON ? TP_FW_MEGATRON
                                                        : TP_FW_MEGATRON_DS;
    if (a->best)
        resolve.gbs = TP_UNSET; /* the search keeps the global batch; the default layout may not */
    int rc = cli_resolve_run(&resolve, r);
    if (rc != EXIT_OK)
        return rc;
    if (a->best && (rc = best_layout(a, fmt, r, (uint64_t)a->gbs)) != EXIT_OK)
        return rc;
    return EXIT_OK;
}

/* The built files: written under --output, and printed as JSON, CSV or the first file. */
static int export_output(const struct cli_args *a, const struct run *r,
                         const struct tp_export *x, const struct tp_memory *mem)
{
    int rc = EXIT_OK;
    if (a->output && (rc = write_files(a->output, x, a->force)) != EXIT_OK)
        return rc;
    if (a->format == FMT_JSON) {
        rc = print_json(a, r, x, mem);
    } else if (a->format == FMT_CSV) {
        print_csv(a, r, x, mem);
    } else if (a->output) {
        for (size_t i = 0; i < x->n_files; i++)
            printf("wrote %s/%s\n", a->output, x->files[i].name);
    } else {
        fputs(x->files[0].text, stdout);
    }
    if (x->notes[0] && a->format != FMT_JSON)
        fprintf(stderr, "trainplan: note: %s\n", x->notes);
    if (a->format != FMT_JSON)
        cli_advice_notes(r, &export_adv);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_EXPORT, &a, help);
    if (rc >= 0)
        return rc;
    enum tp_export_format fmt;
    struct tp_error err = {{0}, {0}};
    if (!a.to) {
        cli_error("export needs --to FORMAT (deepspeed, axolotl, megatron, megatron-deepspeed, "
                  "torchrun, slurm)");
        return EXIT_USAGE;
    }
    if (tp_export_format_find(a.to, &fmt, &err) != TP_OK) {
        cli_error("--to %s", cli_lib_msg(&err));
        return EXIT_USAGE;
    }
    if (a.tokens > 0 && a.steps > 0) {
        cli_error("--tokens and --steps both give the stopping point: give one");
        return EXIT_USAGE;
    }
    if (tp_export_args_check(&a, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    static struct run r;
    if ((rc = export_run(&a, fmt, &r)) != EXIT_OK)
        return rc;
    struct tp_export_opts o;
    tp_export_opts_init(&o);
    o.base_model = a.base_model;
    o.job_name = a.job_name;
    o.tokens = a.tokens;
    o.steps = a.steps > 0 ? (uint64_t)a.steps : 0;
    o.lr = a.lr;
    static struct tp_export x;
    if (tp_export_build(fmt, &r.m, &r.c, &r.j, &r.l, &o, &x, &err) != TP_OK) {
        cli_error("--to %s: %s", a.to, cli_lib_msg(&err));
        return EXIT_USAGE;
    }
    /* after the build: a plan the framework cannot express is an input error (2) first */
    static struct tp_calib cal; /* the fit does not depend on it: the built-in one */
    static struct tp_evaluation ev;
    struct tp_eval_opts eo;
    tp_calib_init(&cal);
    tp_eval_opts_init(&eo);
    tp_evaluate(&r.m, &r.c, &r.j, &r.l, &cal, &eo, &ev, NULL);
    const struct tp_memory mem = ev.memory;
    if (!mem.fits && !a.allow_oom) {
        fprintf(stderr, "trainplan: the layout does not fit: the worst pipeline stage needs "
                        "%.2f GB of %.2f GB per GPU (trainplan memory lists the changes that make "
                        "it fit; --allow-oom exports it anyway)\n",
                mem.total_bytes / 1e9, mem.capacity_bytes / 1e9);
        tp_export_free(&x);
        return EXIT_NO;
    }
    unsigned searched = a.best ? TP_GIVEN_MBS | TP_GIVEN_GBS | TP_GIVEN_RECOMPUTE | TP_GIVEN_ZERO
                               : 0;
    /* the stack is the target's (export_run): not a default that can move */
    cli_advice(&a, &r, &cal, searched | TP_GIVEN_FRAMEWORK, false, &export_adv);
    if (mem.verdict == TP_MEM_TIGHT)
        fprintf(stderr, "trainplan: warning: the layout fits by %.2f GB, less than the memory "
                        "model's error for %s stacks (%.0f%%): tight (trainplan memory lists the "
                        "changes that leave that margin free)\n",
                mem.headroom_bytes / 1e9, mem.margin_class, 100 * mem.margin);
    rc = export_output(&a, &r, &x, &mem);
    tp_export_free(&x);
    return rc != EXIT_OK ? rc : cli_finish(EXIT_OK);
}
