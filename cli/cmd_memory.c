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
    printf("usage: trainplan memory MODEL --gpu NAME --gpus N [layout and job options]\n\n"
           "Per-GPU memory of a training run at its peak, for the worst pipeline stage (every\n"
           "stage with --per-stage): weights, gradients, optimizer states after ZeRO/FSDP and\n"
           "TP/PP/EP sharding, ZeRO-3 gather buffers, activations of the micro-batches in flight,\n"
           "logits, communication buffers and framework overhead, against the GPU's capacity.\n"
           "When it does not fit, lists the smallest changes that make it fit.\n\n"
           "JSON keys: schema_version, weights_bytes, grads_bytes, optimizer_bytes,\n"
           "activations_bytes, total_bytes, capacity_bytes, fits, ... (bytes, per GPU).\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_MEMORY);
    printf("\nexit status: 0 fits; 1 does not fit; 2 usage or input error.\n");
}

static void print_csv(const struct run *r, const struct tp_memory *m)
{
    printf("model,gpu,gpus,dp,tp,pp,cp,ep,zero,mbs,gas,recompute,weights_bytes,grads_bytes,"
           "optimizer_bytes,gather_bytes,activations_bytes,logits_bytes,comm_bytes,"
           "overhead_bytes,total_bytes,capacity_bytes,fits\n");
    printf("\"%s\",%s,%u,%u,%u,%u,%u,%u,%u,%u,%u,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,"
           "%.0f,%d\n",
           r->m.name, r->c.gpu.key, r->c.n_gpus, r->l.dp, r->l.tp, r->l.pp, r->l.cp, r->l.ep,
           r->l.zero, r->l.mbs, r->l.gas, tp_name(TP_NAMES_RECOMPUTE, (int)r->l.recompute),
           m->weights_bytes, m->grads_bytes, m->optimizer_bytes, m->gather_bytes, m->activations_bytes,
           m->logits_bytes, m->comm_bytes, m->overhead_bytes, m->total_bytes, m->capacity_bytes,
           m->fits);
}

int cmd_memory(int argc, char **argv)
{
    struct cli_args a;
    static struct run r;
    int rc = cli_begin_run(argc, argv, CMD_MEMORY, &a, help, &r);
    if (rc >= 0)
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
    if (a.format == FMT_JSON) {
        rc = cli_print_json(tp_json_memory_report(&r.m, &r.c, &r.j, &r.l, &worst, a.per_stage != 0,
                                                  fixes, n_fixes, r.notes), 12);
        if (rc != EXIT_OK)
            return rc;
    } else if (a.format == FMT_CSV) {
        print_csv(&r, &worst);
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
            for (size_t i = 0; i < n_fixes; i++)
                printf("  fits with %-40s (total %.2f GB)\n", fixes[i].text,
                       fixes[i].total_bytes / 1e9);
            if (n_fixes == 0)
                printf("  none found among single or paired changes; try more GPUs or a GPU "
                       "with more memory\n");
        }
    }
    return cli_finish(worst.fits ? EXIT_OK : EXIT_NO);
}
