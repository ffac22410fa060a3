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

enum key { BY_SOURCE, BY_GPU, BY_FRAMEWORK };

static const char *key_of(const struct tp_run *r, enum key k)
{
    return k == BY_SOURCE ? r->source : k == BY_GPU ? r->cluster.gpu.key : r->framework_key;
}

struct report {
    const struct cli_runs *runs;
    struct tp_run_eval *ev;
    double *err, *scratch;
};

/* Statistics of the throughput errors of rows whose key `k` equals `value` (NULL: all). */
static void stats_of(const struct report *r, enum key k, const char *value,
                     struct tp_err_stats *st)
{
    size_t n = 0;
    for (size_t i = 0; i < r->runs->n; i++)
        if (!value || strcmp(key_of(&r->runs->runs[i], k), value) == 0)
            r->err[n++] = r->ev[i].err;
    tp_err_stats(r->err, n, r->scratch, st);
}

static bool first_of_value(const struct report *r, enum key k, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(key_of(&r->runs->runs[j], k), key_of(&r->runs->runs[i], k)) == 0)
            return false;
    return true;
}

static void table_line(const char *name, const struct tp_err_stats *st)
{
    if (st->n == 0)
        return;
    printf("  %-46s %5zu  %7.1f%%  %7.1f%%  %+7.1f%%\n", name, st->n, 100 * st->median_abs,
           100 * st->p90_abs, 100 * st->bias);
}

static void table_group(const struct report *r, enum key k, const char *title)
{
    printf("\n  %-46s %5s  %8s  %8s  %8s\n", title, "rows", "median", "p90", "bias");
    for (size_t i = 0; i < r->runs->n; i++) {
        if (!first_of_value(r, k, i))
            continue;
        struct tp_err_stats st;
        const char *v = key_of(&r->runs->runs[i], k);
        stats_of(r, k, v, &st);
        table_line(v[0] ? v : "(none)", &st);
    }
}

/* Memory errors of rows with a measured peak; OOM rows counted separately. */
static void memory_stats(const struct report *r, struct tp_err_stats *st, size_t *oom,
                         size_t *oom_right)
{
    size_t n = 0;
    *oom = *oom_right = 0;
    for (size_t i = 0; i < r->runs->n; i++) {
        if (r->ev[i].measured_oom) {
            (*oom)++;
            *oom_right += !r->ev[i].predicted_fits;
        }
        if (!isnan(r->ev[i].mem_err))
            r->err[n++] = r->ev[i].mem_err;
    }
    tp_err_stats(r->err, n, r->scratch, st);
}

/* Rows with a measured throughput, and those inside their prediction's 80% range. */
static size_t in_range(const struct report *r, size_t *measured)
{
    size_t n = 0;
    *measured = 0;
    for (size_t i = 0; i < r->runs->n; i++) {
        if (!isfinite(r->ev[i].err))
            continue;
        (*measured)++;
        n += r->ev[i].in_range;
    }
    return n;
}

/* Rows that ran (no OOM) and those of them the memory model says fit. */
static size_t fit_right(const struct report *r, size_t *completed)
{
    size_t n = 0;
    *completed = 0;
    for (size_t i = 0; i < r->runs->n; i++) {
        if (r->ev[i].measured_oom)
            continue;
        (*completed)++;
        n += r->ev[i].predicted_fits;
    }
    return n;
}

static size_t outside_domain(const struct report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->runs->n; i++)
        n += r->ev[i].domain != 0;
    return n;
}

/* Decimals that show a figure of this size to about 4 significant digits. */
static int decimals(double v)
{
    double a = fabs(v);
    return a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4;
}

static void print_table(const struct report *r, const char *calibration, bool summary_only)
{
    const struct cli_runs *runs = r->runs;
    printf("trainplan %s - validate: %zu rows predicted (calibration: %s)\n", TP_VERSION,
           runs->n, calibration ? calibration : "built-in defaults");
    if (!summary_only) {
        printf("\n%-44s %-10s %-9s %11s %11s %-12s %7s  %s\n", "row", "gpu", "measured",
               "predicted", "measured", "unit", "error", "memory GiB pred/meas");
        for (size_t i = 0; i < runs->n; i++) {
            const struct tp_run *run = &runs->runs[i];
            const struct tp_run_eval *e = &r->ev[i];
            char mem[64] = "";
            if (!isnan(e->measured_mem_gib))
                snprintf(mem, sizeof mem, "%.1f / %.1f (%+.0f%%)", e->predicted_mem_gib,
                         e->measured_mem_gib, 100 * e->mem_err);
            else if (e->measured_oom)
                snprintf(mem, sizeof mem, "%.1f / OOM (%s)", e->predicted_mem_gib,
                         e->predicted_fits ? "predicted to fit" : "predicted OOM");
            else if (!e->predicted_fits)
                snprintf(mem, sizeof mem, "%.1f / ran (predicted OOM)", e->predicted_mem_gib);
            if (isnan(e->err))
                printf("%-44s %-10s %-9s %11s %11s %-12s %7s  %s", run->row_id,
                       run->cluster.gpu.key, "-", "", "", "", "", mem);
            else
                printf("%-44s %-10s %-9s %11.*f %11.*f %-12s %+6.1f%%  %s", run->row_id,
                       run->cluster.gpu.key, e->measured_from, decimals(e->measured_native),
                       e->predicted_native, decimals(e->measured_native), e->measured_native,
                       e->native_unit, 100 * e->err, mem);
            if (e->domain)
                printf("  [outside the calibration: %s]", e->domain_note);
            printf("\n");
        }
    }
    printf("\nthroughput error = predicted / measured - 1, in tokens/s per GPU\n");
    printf("\n  %-46s %5s  %8s  %8s  %8s\n", "", "rows", "median", "p90", "bias");
    struct tp_err_stats st;
    stats_of(r, BY_SOURCE, NULL, &st);
    table_line("all", &st);
    table_group(r, BY_SOURCE, "by source");
    table_group(r, BY_GPU, "by GPU");
    table_group(r, BY_FRAMEWORK, "by framework");
    size_t oom, oom_right;
    memory_stats(r, &st, &oom, &oom_right);
    printf("\npeak memory (worst stage vs measured peak):");
    if (st.n)
        printf(" %zu rows, median |error| %.1f%%, p90 %.1f%%, bias %+.1f%%", st.n,
               100 * st.median_abs, 100 * st.p90_abs, 100 * st.bias);
    else
        printf(" no row gives one");
    printf("\n");
    size_t completed, fit = fit_right(r, &completed);
    printf("runs that ran (no OOM) predicted to fit: %zu of %zu (%.1f%%)\n", fit, completed,
           completed ? 100.0 * (double)fit / (double)completed : 0.0);
    printf("runs that ran out of memory predicted not to fit: %zu of %zu", oom_right, oom);
    if (oom)
        printf(" (%.1f%%)\n", 100.0 * (double)oom_right / (double)oom);
    else
        printf(" (no row marks an OOM)\n");
    size_t measured, inside = in_range(r, &measured);
    printf("measured inside the prediction's 80%% range: %zu of %zu (%.0f%%)\n", inside, measured,
           measured ? 100.0 * (double)inside / (double)measured : 0.0);
    printf("rows outside the calibrated domain: %zu\n", outside_domain(r));
    printf("rows not compared: %zu could not be mapped, %zu duplicates, %zu with nothing "
           "measured\n", runs->n_skipped, runs->duplicates, runs->unmeasured);
    for (size_t i = 0; i < runs->n_skipped; i++)
        printf("  %-44s %s\n", runs->skipped[i].row_id, runs->skipped[i].why);
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *stats_json(const struct tp_err_stats *st)
{
    return json_pack("{s:I, s:o, s:o, s:o}", "rows", (json_int_t)st->n, "median_abs_error",
                     num_or_null(st->median_abs), "p90_abs_error", num_or_null(st->p90_abs),
                     "bias", num_or_null(st->bias));
}

static json_t *group_json(const struct report *r, enum key k)
{
    json_t *obj = json_object();
    for (size_t i = 0; i < r->runs->n; i++) {
        if (!first_of_value(r, k, i))
            continue;
        struct tp_err_stats st;
        const char *v = key_of(&r->runs->runs[i], k);
        stats_of(r, k, v, &st);
        json_object_set_new(obj, v[0] ? v : "(none)", stats_json(&st));
    }
    return obj;
}

static int print_json(const struct report *r, const char *calibration)
{
    const struct cli_runs *runs = r->runs;
    json_t *rows = json_array();
    for (size_t i = 0; i < runs->n; i++) {
        const struct tp_run *run = &runs->runs[i];
        const struct tp_run_eval *e = &r->ev[i];
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
            " s:b, s:b, s:o}",
            "row_id", run->row_id, "source", run->source, "gpu", run->cluster.gpu.key,
            "framework", run->framework_key, "num_gpus", (json_int_t)run->cluster.n_gpus,
            "measured_from", e->measured_from, "predicted_tokens_per_s_per_gpu",
            num_or_null(e->predicted_tokens_per_s_per_gpu), "measured_tokens_per_s_per_gpu",
            num_or_null(e->measured_tokens_per_s_per_gpu), "native_unit", e->native_unit,
            "predicted_native", num_or_null(e->predicted_native), "measured_native",
            num_or_null(e->measured_native), "error", num_or_null(e->err),
            "predicted_step_time_s", num_or_null(e->predicted_step_s), "predicted_memory_gib",
            num_or_null(e->predicted_mem_gib), "measured_memory_gib",
            num_or_null(e->measured_mem_gib), "memory_error", num_or_null(e->mem_err),
            "measured_oom", e->measured_oom, "predicted_fits", e->predicted_fits,
            "outside_domain", e->domain ? json_string(e->domain_note) : json_null());
        json_object_set_new(o, "range_class", json_string(e->range.cls));
        json_object_set_new(o, "predicted_tokens_per_s_per_gpu_low",
                            num_or_null(e->predicted_tokens_per_s_per_gpu * e->range.lo));
        json_object_set_new(o, "predicted_tokens_per_s_per_gpu_high",
                            num_or_null(e->predicted_tokens_per_s_per_gpu * e->range.hi));
        json_object_set_new(o, "in_range", isfinite(e->err) ? json_boolean(e->in_range)
                                                             : json_null());
        json_array_append_new(rows, o);
    }
    for (size_t i = 0; i < runs->n_skipped; i++)
        json_array_append_new(rows, json_pack("{s:s, s:s}", "row_id", runs->skipped[i].row_id,
                                              "skipped", runs->skipped[i].why));
    struct tp_err_stats all, mem;
    stats_of(r, BY_SOURCE, NULL, &all);
    size_t oom, oom_right;
    memory_stats(r, &mem, &oom, &oom_right);
    json_t *summary = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I}, s:I, s:I, s:I, s:I}", "throughput",
        stats_json(&all), "by_source", group_json(r, BY_SOURCE), "by_gpu",
        group_json(r, BY_GPU), "by_framework", group_json(r, BY_FRAMEWORK), "memory",
        stats_json(&mem), "oom", "rows", (json_int_t)oom, "predicted_oom",
        (json_int_t)oom_right, "outside_domain", (json_int_t)outside_domain(r), "skipped",
        (json_int_t)runs->n_skipped, "duplicates", (json_int_t)runs->duplicates, "unmeasured",
        (json_int_t)runs->unmeasured);
    size_t measured, inside = in_range(r, &measured);
    size_t completed, fit = fit_right(r, &completed);
    json_object_set_new(summary, "completed", json_integer((json_int_t)completed));
    json_object_set_new(summary, "completed_predicted_to_fit", json_integer((json_int_t)fit));
    json_object_set_new(summary, "in_range", json_integer((json_int_t)inside));
    json_object_set_new(summary, "in_range_of", json_integer((json_int_t)measured));
    json_t *doc = json_pack("{s:i, s:s, s:s, s:o, s:o}", "schema_version", TP_SCHEMA_VERSION,
                            "calibration", calibration ? calibration : "built-in defaults",
                            "error_definition", "predicted / measured - 1", "rows", rows,
                            "summary", summary);
    return cli_print_json(doc, 6);
}

static int print_csv(const struct report *r)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < r->runs->n; i++) {
        const struct tp_run *run = &r->runs->runs[i];
        const struct tp_run_eval *e = &r->ev[i];
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
    }
    for (size_t i = 0; i < r->runs->n_skipped; i++)
        json_array_append_new(rows, json_pack("{s:s, s:s}", "row_id",
                                              r->runs->skipped[i].row_id, "skipped",
                                              r->runs->skipped[i].why));
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
                  "../shared/validation/runs/*.csv)");
        return EXIT_USAGE;
    }
    struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_error err;
    if (a.calibration && tp_calib_from_file(a.calibration, &cal, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    struct cli_runs runs;
    if ((rc = cli_load_runs(a.files, a.n_files, &runs)) != EXIT_OK)
        return rc;
    size_t n = runs.n ? runs.n : 1;
    struct report r = {&runs, calloc(n, sizeof *r.ev), calloc(n, sizeof *r.err),
                       calloc(n, sizeof *r.scratch)};
    if (!r.ev || !r.err || !r.scratch) {
        cli_error("out of memory");
        rc = EXIT_USAGE;
    } else {
        for (size_t i = 0; i < runs.n; i++)
            tp_run_evaluate(&runs.runs[i], &cal, &r.ev[i]);
        rc = a.svg ? plot_validate(a.svg, &runs, r.ev) : EXIT_OK;
        if (rc == EXIT_OK && a.format == FMT_JSON)
            rc = print_json(&r, a.calibration);
        else if (rc == EXIT_OK && a.format == FMT_CSV)
            rc = print_csv(&r);
        else if (rc == EXIT_OK)
            print_table(&r, a.calibration, a.summary);
    }
    free(r.ev);
    free(r.err);
    free(r.scratch);
    cli_free_runs(&runs);
    return cli_finish(rc);
}
