/*
 * cmd_validate.c - `trainplan validate RUNS.csv...`: every measured run against its
 * prediction, with error statistics by source, GPU type and framework.  A report: exit 0
 * whatever the errors.
 */
#include "cli.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: trainplan validate RUNS.csv... [--calibration FILE] [--summary]\n"
           "                          [--format table|json|csv]\n\n"
           "Predicts every row of the runs files (docs/runs-file.md) and compares it with what\n"
           "was measured: throughput in tokens/s per GPU (converted from the row's tokens/s,\n"
           "step time, TFLOP/s or MFU, and shown in the row's own unit too) and peak memory\n"
           "where the row gives it.  Summary: rows, median and p90 of |predicted/measured - 1|\n"
           "and the signed median (bias), overall and by source, GPU type and framework.  Rows\n"
           "outside the calibration's domain (a GPU it never saw, 4x its largest cluster, model\n"
           "size or sequence) are flagged; rows that cannot be mapped are listed with the reason.\n"
           "Exit status 0 whatever the errors (2 for unreadable input).\n\noptions:\n");
    cli_print_options(stdout, CMD_VALIDATE);
}

static void table_line(const char *name, const struct tp_err_stats *st)
{
    if (st->n == 0)
        return;
    printf("  %-46s %5zu  %7.1f%%  %7.1f%%  %+7.1f%%\n", name, st->n, 100 * st->median_abs,
           100 * st->p90_abs, 100 * st->bias);
}

static void table_group(const struct tp_validation *v, enum tp_run_group g, const char *title)
{
    printf("\n  %-46s %5s  %8s  %8s  %8s\n", title, "rows", "median", "p90", "bias");
    const char *key;
    struct tp_err_stats st;
    for (size_t i = 0; i < v->runs->n; i++)
        if (tp_validation_group(v, g, i, &key, &st))
            table_line(key, &st);
}

/* Decimals that show a figure of this size to about 4 significant digits. */
static int decimals(double v)
{
    double a = fabs(v);
    return a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4;
}

/* The layout of a row that gave none, as the search found it ("" for a row's own layout). */
static void searched_text(const struct tp_run *run, char *buf, size_t len)
{
    const struct tp_layout *l = &run->layout;
    char vpp[16] = "";
    if (l->vpp > 1)
        snprintf(vpp, sizeof vpp, " vpp %u", l->vpp);
    if (!run->layout_searched)
        buf[0] = '\0';
    else
        snprintf(buf, len, "tp %u pp %u%s dp %u mbs %u gas %u%s", l->tp, l->pp, vpp, l->dp,
                 l->mbs, l->gas, l->sp ? " sp" : "");
}

/* One row of the table: measured against predicted, memory, the domain, a searched layout. */
static void table_row(const struct tp_run *run, const struct tp_run_eval *e)
{
    char mem[64] = "";
    if (!isnan(e->measured_mem_gib))
        snprintf(mem, sizeof mem, "%.1f / %.1f (%+.0f%%)", e->predicted_mem_gib,
                 e->measured_mem_gib, 100 * e->mem_err);
    else if (e->measured_oom)
        snprintf(mem, sizeof mem, "%.1f / OOM (%s)", e->predicted_mem_gib,
                 e->predicted_verdict == TP_MEM_TIGHT ? "predicted tight"
                 : e->predicted_fits                  ? "predicted to fit"
                                                      : "predicted OOM");
    else if (!e->predicted_fits)
        snprintf(mem, sizeof mem, "%.1f / ran (predicted OOM)", e->predicted_mem_gib);
    if (isnan(e->err))
        printf("%-44s %-10s %-9s %11s %11s %-12s %7s  %s", run->row_id, run->cluster.gpu.key,
               "-", "", "", "", "", mem);
    else
        printf("%-44s %-10s %-9s %11.*f %11.*f %-12s %+6.1f%%  %s", run->row_id,
               run->cluster.gpu.key, e->measured_from, decimals(e->measured_native),
               e->predicted_native, decimals(e->measured_native), e->measured_native,
               e->native_unit, 100 * e->err, mem);
    if (e->domain)
        printf("  [outside the calibration: %s]", e->domain_note);
    char lay[96];
    searched_text(run, lay, sizeof lay);
    if (*lay)
        printf("  [layout searched: %s]", lay);
    if (run->heads_assumed)
        printf("  [n_heads assumed: %u = hidden / 128]", run->model.n_heads);
    printf("\n");
}

static void print_summary(const struct tp_validation *v)
{
    const struct tp_runs *runs = v->runs;
    struct tp_validation_summary s;
    tp_validation_summarize(v, &s);
    printf("\nthroughput error = predicted / measured - 1, in tokens/s per GPU\n");
    printf("\n  %-46s %5s  %8s  %8s  %8s\n", "", "rows", "median", "p90", "bias");
    table_line("all", &s.throughput);
    table_group(v, TP_GROUP_SOURCE, "by source");
    table_group(v, TP_GROUP_GPU, "by GPU");
    table_group(v, TP_GROUP_FRAMEWORK, "by framework");
    printf("\npeak memory (worst stage vs measured peak):");
    if (s.memory.n)
        printf(" %zu rows, median |error| %.1f%%, p90 %.1f%%, bias %+.1f%%", s.memory.n,
               100 * s.memory.median_abs, 100 * s.memory.p90_abs, 100 * s.memory.bias);
    else
        printf(" no row gives one");
    printf("\n");
    printf("runs that ran (no OOM) predicted to fit: %zu of %zu (%.1f%%)\n", s.completed_fit,
           s.completed,
           s.completed ? 100.0 * (double)s.completed_fit / (double)s.completed : 0.0);
    printf("runs that ran out of memory predicted not to fit: %zu of %zu", s.oom_predicted, s.oom);
    if (s.oom)
        printf(" (%.1f%%)\n", 100.0 * (double)s.oom_predicted / (double)s.oom);
    else
        printf(" (no row marks an OOM)\n");
    /* fits by less than the memory model's error for its class (docs/memory.md) */
    printf("predicted to fit but tight (within the memory model's error): %zu of the runs that "
           "ran, %zu of those that ran out of memory\n", s.completed_tight, s.oom_tight);
    printf("measured inside the prediction's 80%% range: %zu of %zu (%.0f%%)\n", s.in_range,
           s.measured, s.measured ? 100.0 * (double)s.in_range / (double)s.measured : 0.0);
    printf("rows outside the calibrated domain: %zu\n", s.outside_domain);
    printf("rows with a searched layout (counted above; calibrate does not fit them): %zu",
           s.searched.n);
    if (s.searched.n)
        printf(", median |error| %.1f%%, p90 %.1f%%, bias %+.1f%%", 100 * s.searched.median_abs,
               100 * s.searched.p90_abs, 100 * s.searched.bias);
    printf("\n");
    printf("rows not compared: %zu could not be mapped, %zu duplicates, %zu with nothing "
           "measured\n", runs->n_skipped, runs->duplicates, runs->unmeasured);
    for (size_t i = 0; i < runs->n_skipped; i++)
        printf("  %-44s %s\n", runs->skipped[i].row_id, runs->skipped[i].why);
}

static void print_table(const struct tp_validation *v, const char *calibration,
                        bool summary_only)
{
    const struct tp_runs *runs = v->runs;
    printf("trainplan %s - validate: %zu rows predicted (calibration: %s)\n", TP_VERSION,
           runs->n, calibration ? calibration : "built-in defaults");
    if (!summary_only) {
        printf("\n%-44s %-10s %-9s %11s %11s %-12s %7s  %s\n", "row", "gpu", "measured",
               "predicted", "measured", "unit", "error", "memory GiB pred/meas");
        for (size_t i = 0; i < runs->n; i++)
            table_row(&runs->runs[i], &v->ev[i]);
    }
    print_summary(v);
}

static int print_csv(const struct tp_validation *v)
{
    const struct tp_runs *runs = v->runs;
    json_t *rows = json_array();
    for (size_t i = 0; i < runs->n; i++) {
        const struct tp_run *run = &runs->runs[i];
        const struct tp_run_eval *e = &v->ev[i];
        json_array_append_new(
            rows, json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s,"
                            " s:n}",
                            "row_id", run->row_id, "source", run->source, "gpu",
                            run->cluster.gpu.key, "framework", run->framework_key, "num_gpus",
                            (json_int_t)run->cluster.n_gpus, "measured_from", e->measured_from,
                            "predicted_tokens_per_s_per_gpu",
                            out_num(e->predicted_tokens_per_s_per_gpu),
                            "measured_tokens_per_s_per_gpu",
                            out_num(e->measured_tokens_per_s_per_gpu), "error", out_num(e->err),
                            "predicted_memory_gib", out_num(e->predicted_mem_gib),
                            "measured_memory_gib", out_num(e->measured_mem_gib), "memory_error",
                            out_num(e->mem_err), "outside_domain", e->domain_note, "skipped"));
        char lay[96];
        searched_text(run, lay, sizeof lay);
        json_t *row = json_array_get(rows, i);
        json_object_set_new(row, "layout_searched", json_string(lay));
        json_object_set_new(row, "n_heads_assumed",
                            run->heads_assumed ? json_integer(run->model.n_heads) : json_null());
    }
    for (size_t i = 0; i < runs->n_skipped; i++)
        json_array_append_new(rows, json_pack("{s:s, s:s}", "row_id", runs->skipped[i].row_id,
                                              "skipped", runs->skipped[i].why));
    return out_csv_rows(rows);
}

int cmd_validate(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_VALIDATE, &a, help);
    if (rc >= 0)
        return rc;
    if (a.n_files == 0) {
        cli_error("validate needs at least one runs file (e.g. trainplan validate "
                  "data/runs/*.csv)");
        return EXIT_USAGE;
    }
    struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_error err;
    if (a.calibration && tp_calib_from_file(a.calibration, &cal, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    struct tp_runs runs;
    if (tp_runs_load(a.files, a.n_files, &runs, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    struct tp_validation v;
    if (tp_validate_runs(&runs, &cal, &v, &err) != TP_OK) {
        cli_error_field(&err);
        rc = EXIT_USAGE;
    } else {
        rc = a.svg ? plot_validate(a.svg, &runs, v.ev) : EXIT_OK;
        if (rc == EXIT_OK && a.format == FMT_JSON)
            rc = cli_print_json(tp_json_validate(&v, a.calibration), 6);
        else if (rc == EXIT_OK && a.format == FMT_CSV)
            rc = print_csv(&v);
        else if (rc == EXIT_OK)
            print_table(&v, a.calibration, a.summary);
        tp_validation_free(&v);
    }
    tp_runs_free(&runs);
    return cli_finish(rc);
}
