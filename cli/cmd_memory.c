/*
 * cmd_memory.c - `trainplan memory MODEL ...`: will the run fit, and what takes the memory.
 *
 * Exit status 0 when the worst pipeline stage fits, 1 when it does not (with the smallest
 * changes that make it fit), 2 on bad input.
 */
#include "cli.h"
#include "plot.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: trainplan memory MODEL [--gpu NAME] [--gpus N] [layout and job options]\n\n"
           "Per-GPU memory of a training run at its peak, for the worst pipeline stage (every\n"
           "stage with --per-stage): weights, gradients, optimizer states after ZeRO/FSDP and\n"
           "TP/PP/EP sharding, ZeRO-3 gather buffers, activations of the micro-batches in flight,\n"
           "logits, communication buffers and framework overhead, against the GPU's capacity.\n"
           "When it does not fit, lists the smallest changes that make it fit.\n"
           "Lists: --mbs 1,2,4,8, --seq 4096,8192, --gpus 8..512 (doubling), also --gbs --gas\n"
           "--tp --pp --dp --cp --ep --zero: one row per combination (JSON sweep[], CSV rows).\n\n"
           "JSON keys: schema_version, weights_bytes, grads_bytes, optimizer_bytes,\n"
           "activations_bytes, total_bytes, capacity_bytes, fits, ... (bytes, per GPU),\n"
           "defaults_that_matter[] (inputs not given that move the memory; docs/advice.md).\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_MEMORY);
    printf("\nexit status: 0 fits; 1 does not fit; 2 usage or input error.\n");
}

/* One flat row: what the table says, for CSV and for a sweep's rows. */
static json_t *memory_row(const struct run *r, const struct tp_memory *m)
{
    char hint[160];
    report_fit_hint(r, m, hint, sizeof hint);
    json_t *row = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:o, s:o,"
                     " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:s}",
                     "model", r->m.name, "gpu", r->c.gpu.key, "gpus", (json_int_t)r->c.n_gpus,
                     "seq", (json_int_t)r->j.seq, "dp", (json_int_t)r->l.dp, "tp",
                     (json_int_t)r->l.tp, "pp", (json_int_t)r->l.pp, "cp", (json_int_t)r->l.cp,
                     "ep", (json_int_t)r->l.ep, "zero", (json_int_t)r->l.zero, "mbs",
                     (json_int_t)r->l.mbs, "gas", (json_int_t)r->l.gas, "recompute",
                     tp_name(TP_NAMES_RECOMPUTE, (int)r->l.recompute), "weights_bytes", out_num(m->weights_bytes),
                     "grads_bytes", out_num(m->grads_bytes), "optimizer_bytes",
                     out_num(m->optimizer_bytes), "gather_bytes", out_num(m->gather_bytes),
                     "activations_bytes", out_num(m->activations_bytes), "logits_bytes",
                     out_num(m->logits_bytes), "comm_bytes", out_num(m->comm_bytes),
                     "overhead_bytes", out_num(m->overhead_bytes), "total_bytes",
                     out_num(m->total_bytes), "capacity_bytes", out_num(m->capacity_bytes),
                     "fits", (int)m->fits, "fits_with", hint);
    if (row) /* fits, tight (within the model's error) or does not fit */
        json_object_set_new(row, "verdict", json_string(tp_mem_verdict_name(m->verdict)));
    return row;
}

static int sweep_one(const struct cli_args *a, struct run *r, void *ctx, json_t *row, bool *ok)
{
    (void)a;
    struct tp_eval_opts o;
    tp_eval_opts_init(&o);
    static struct tp_evaluation ev; /* the one evaluation; its worst stage is the row */
    tp_evaluate(&r->m, &r->c, &r->j, &r->l, ctx, &o, &ev, NULL);
    *ok = ev.memory.fits;
    return cli_sweep_merge(row, memory_row(r, &ev.memory));
}

static int sweep(const struct cli_args *a)
{
    static const struct cli_col COLS[] = {
        {"gpus", " gpus", 0, 1},   {"seq", "   seq", 0, 1},  {"dp", "  dp", 0, 1},
        {"tp", "tp", 0, 1},        {"pp", "pp", 0, 1},       {"zero", "zero", 0, 1},
        {"mbs", " mbs", 0, 1},     {"gas", " gas", 0, 1},    {"recompute", "recompute", 0, 1},
        {"activations_bytes", "activ. GiB", 2, 1 / 1073741824.0},
        {"logits_bytes", "logits GiB", 2, 1 / 1073741824.0},
        {"total_bytes", " total GiB", 2, 1 / 1073741824.0},
        {"capacity_bytes", "capacity GiB", 2, 1 / 1073741824.0},
        {"fits", "fits", 0, 1},    {"fits_with", "hint", 0, 1},
        {"verdict", "verdict", 0, 1}};
    static struct tp_calib cal; /* memory takes no --calibration: the built-in one */
    tp_calib_init(&cal);
    return cli_sweep_print(a, sweep_one, &cal, "memory", "", COLS, sizeof COLS / sizeof COLS[0],
                           12);
}

int cmd_memory(int argc, char **argv)
{
    struct cli_args a;
    static struct run r;
    int rc = cli_begin(argc, argv, CMD_MEMORY, &a, help);
    if (rc >= 0)
        return rc;
    if (a.n_sweeps)
        return sweep(&a);
    if ((rc = cli_resolve_run(&a, &r)) != EXIT_OK)
        return rc;
    /* memory takes no --calibration: the built-in one (the time is not printed here) */
    static struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_eval_opts o;
    tp_eval_opts_init(&o);
    static struct tp_evaluation ev;
    tp_evaluate(&r.m, &r.c, &r.j, &r.l, &cal, &o, &ev, NULL);
    const struct tp_memory worst = ev.memory;
    struct tp_fix fixes[TP_MAX_FIXES];
    size_t n_fixes = worst.fits ? 0 : tp_memory_suggest(&r.m, &r.c, &r.j, &r.l, fixes, TP_MAX_FIXES);
    if (a.svg && (rc = plot_memory(a.svg, &r)) != EXIT_OK)
        return rc;
    static struct cli_advice adv; /* the defaults that move the memory (advice.c) */
    cli_advice(&a, &r, &cal, 0, false, &adv);
    if (a.format == FMT_JSON) {
        json_t *doc = tp_json_memory_report(&r.m, &r.c, &r.j, &r.l, &worst, a.per_stage != 0,
                                            fixes, n_fixes, r.notes);
        cli_advice_json(doc, &adv, false);
        if ((rc = cli_print_json(doc, 12)) != EXIT_OK)
            return rc;
    } else if (a.format == FMT_CSV) {
        json_t *row = memory_row(&r, &worst);
        cli_advice_cell(row, &adv, false);
        if ((rc = out_csv_row(row)) != EXIT_OK)
            return rc;
    } else {
        report_header(&r, "memory");
        if (a.per_stage) {
            for (uint32_t s = 0; s < r.l.pp; s++) {
                struct tp_memory m;
                tp_memory_stage(&r.m, &r.c, &r.j, &r.l, s, &m);
                report_memory_stage(&r, &m, false);
            }
        } else {
            report_memory_stage(&r, &worst, r.l.pp > 1);
        }
        if (!worst.fits) {
            printf("\ndoes not fit by %.2f GB. Changes that make it fit:\n",
                   -worst.headroom_bytes / 1e9);
            report_fixes(&r.j, fixes, n_fixes, r.c.gpu.hbm_bytes);
        } else if (worst.verdict == TP_MEM_TIGHT) {
            report_tight(&r, &worst);
        }
        cli_advice_print(&r, &adv, true);
    }
    return cli_finish(worst.fits ? EXIT_OK : EXIT_NO);
}
