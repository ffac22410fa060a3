/*
 * cmd_validate.c - `trainplan validate RUNS.csv...`: every measured run against its
 * prediction, with error statistics by source, GPU type and framework.  A report: exit 0
 * whatever the errors.
 *
 * Rows stream: each is read, predicted, written out and added to the running summary
 * (tp_validate_stream) before the next, so memory does not grow with the file.  The rows wait
 * in a temporary file, in the format's text (the table's title counts them; nothing reaches
 * stdout before every file was read, so an error prints its one line alone), the skipped rows
 * in another (they come last).  --svg holds the rows for the plot.
 */
#include "cli.h"
#include "plot.h"

#include <csv.h>
#include <math.h>
#include <stdint.h>
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

static void table_group(const struct tp_validate_stream *v, enum tp_run_group g, const char *title)
{
    printf("\n  %-46s %5s  %8s  %8s  %8s\n", title, "rows", "median", "p90", "bias");
    const char *key;
    struct tp_err_stats st;
    for (size_t i = 0; i < tp_validate_stream_groups(v, g); i++) {
        tp_validate_stream_group(v, g, i, &key, &st);
        table_line(cli_escape(key), &st);
    }
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
static void table_row(FILE *f, const struct tp_run *run, const struct tp_run_eval *e)
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
        fprintf(f, "%-44s %-10s %-9s %11s %11s %-12s %7s  %s", cli_escape(run->row_id),
                run->cluster.gpu.key, "-", "", "", "", "", mem);
    else
        fprintf(f, "%-44s %-10s %-9s %11.*f %11.*f %-12s %+6.1f%%  %s", cli_escape(run->row_id),
                run->cluster.gpu.key, e->measured_from, decimals(e->measured_native),
                e->predicted_native, decimals(e->measured_native), e->measured_native,
                e->native_unit, 100 * e->err, mem);
    if (e->domain)
        fprintf(f, "  [outside the calibration: %s]", e->domain_note);
    char lay[96];
    searched_text(run, lay, sizeof lay);
    if (*lay)
        fprintf(f, "  [layout searched: %s]", lay);
    if (run->heads_assumed)
        fprintf(f, "  [n_heads assumed: %u = hidden / 128]", run->model.n_heads);
    fprintf(f, "\n");
}

/* The state of one validation as its rows stream by. */
struct vstate {
    const struct cli_args *a;
    struct tp_calib cal;
    struct tp_validate_stream *acc;
    FILE *rows;      /* the rows as the format writes them */
    FILE *skipped;   /* skipped rows: row id and reason, each a length and its bytes */
    size_t n, n_skipped, duplicates, unmeasured;
    bool failed;     /* out of memory or a temporary file that failed */
    struct tp_run_eval ev;
    struct tp_runs kept; /* --svg: every row, for the plot */
    struct tp_run_eval *kept_ev;
};

static void put_text(FILE *f, const char *s)
{
    uint32_t len = (uint32_t)strlen(s);
    fwrite(&len, sizeof len, 1, f);
    fwrite(s, 1, len, f);
}

/* The next text put_text wrote into `f`, into buf (NUL-terminated); false at the end. */
static bool get_text(FILE *f, char *buf, size_t size)
{
    uint32_t len;
    if (fread(&len, sizeof len, 1, f) != 1 || len >= size)
        return false;
    return fread(buf, 1, len, f) == len && (buf[len] = '\0', true);
}

static const char *const CSV_COLS[] = {
    "row_id", "source", "gpu", "framework", "num_gpus", "measured_from",
    "predicted_tokens_per_s_per_gpu", "measured_tokens_per_s_per_gpu", "error",
    "predicted_memory_gib", "measured_memory_gib", "memory_error", "outside_domain", "skipped",
    "layout_searched", "n_heads_assumed", "predicted_tokens_per_s_per_gpu_low",
    "predicted_tokens_per_s_per_gpu_high", "in_range"};
enum { N_CSV_COLS = sizeof CSV_COLS / sizeof CSV_COLS[0], CSV_SKIPPED = 13 };

static void csv_header(size_t n)
{
    for (size_t k = 0; k < n; k++)
        printf("%s%s", k ? "," : "", CSV_COLS[k]);
    printf("\n");
}

/* A text cell as report_csv_cell writes it: always quoted, quotes doubled (RFC 4180). */
static void csv_text(FILE *f, const char *s)
{
    csv_fwrite(f, s, strlen(s));
}

/* A number as the CSV writer prints it (out_csv_rows): whole and large numbers to the unit,
   the rest to 10 significant digits; nothing for NaN. */
static void csv_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, fabs(x) < 1e15 && (x == floor(x) || fabs(x) >= 1e6) ? "%.0f" : "%.10g", x);
}

static void csv_row(FILE *f, const struct tp_run *run, const struct tp_run_eval *e)
{
    csv_text(f, cli_escape(run->row_id));
    fputc(',', f);
    csv_text(f, cli_escape(run->source));
    fputc(',', f);
    csv_text(f, run->cluster.gpu.key);
    fputc(',', f);
    csv_text(f, run->framework_key);
    fprintf(f, ",%u,", run->cluster.n_gpus);
    csv_text(f, e->measured_from);
    fputc(',', f);
    const double nums[] = {e->predicted_tokens_per_s_per_gpu, e->measured_tokens_per_s_per_gpu,
                           e->err, e->predicted_mem_gib, e->measured_mem_gib, e->mem_err};
    for (size_t k = 0; k < 6; k++) {
        csv_num(f, nums[k]);
        fputc(',', f);
    }
    csv_text(f, e->domain_note);
    fputs(",,", f); /* skipped: empty for a row that was compared */
    char lay[96];
    searched_text(run, lay, sizeof lay);
    csv_text(f, lay);
    fputc(',', f);
    if (run->heads_assumed)
        fprintf(f, "%u", run->model.n_heads);
    fputc(',', f); /* the prediction's 80% range, as in the JSON rows */
    csv_num(f, e->predicted_tokens_per_s_per_gpu * e->range.lo);
    fputc(',', f);
    csv_num(f, e->predicted_tokens_per_s_per_gpu * e->range.hi);
    fputc(',', f);
    if (isfinite(e->err))
        fprintf(f, "%d", (int)e->in_range);
    fputc('\n', f);
}

/* One object of the JSON rows list, indented as the whole document would indent it. */
static bool json_row(FILE *f, json_t *o, bool first)
{
    char *text = tp_json_dumps(o, 6);
    if (!text)
        return false;
    fprintf(f, "%s\n    ", first ? "" : ",");
    for (const char *p = text; *p; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fputs("    ", f);
    }
    tp_free(text);
    return true;
}

static void copy_rows(FILE *f)
{
    rewind(f);
    char buf[8192];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, stdout);
}

/* Room for one more of n elements, doubling at powers of two (as the library's tp_grow). */
static void *grow(void *array, size_t n, size_t elem)
{
    if (n && (n & (n - 1)) != 0)
        return array;
    size_t cap = n ? 2 * n : 1;
    return cap > SIZE_MAX / elem ? NULL : realloc(array, cap * elem);
}

static bool keep_for_plot(struct vstate *s, const struct tp_run *run)
{
    struct tp_runs *k = &s->kept;
    struct tp_run *r = grow(k->runs, k->n, sizeof *r);
    struct tp_run_eval *e = grow(s->kept_ev, k->n, sizeof *e);
    if (r)
        k->runs = r;
    if (e)
        s->kept_ev = e;
    if (!r || !e)
        return false;
    k->runs[k->n] = *run;
    s->kept_ev[k->n++] = s->ev;
    return true;
}

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    struct vstate *s = ctx;
    enum out_format fmt = s->a->format;
    if (run->duplicate) {
        s->duplicates++;
        return true;
    }
    if (why) { /* as tp_runs_load words it: the reason, then the file and line */
        char text[sizeof ((struct tp_skipped_row *)0)->why];
        snprintf(text, sizeof text, "%s (%s line %zu)", why->msg, path, line);
        put_text(s->skipped, cli_escape(run->row_id[0] ? run->row_id : "(no row_id)"));
        put_text(s->skipped, cli_escape(text));
        s->n_skipped++;
        return !ferror(s->skipped) || (s->failed = true, false);
    }
    if (!tp_run_measured_something(run)) {
        s->unmeasured++;
        return true;
    }
    tp_run_evaluate(run, &s->cal, &s->ev);
    struct tp_error err;
    if (tp_validate_stream_add(s->acc, run, &s->ev, &err) != TP_OK ||
        (s->a->svg && !keep_for_plot(s, run))) {
        s->failed = true;
        return false;
    }
    if (fmt == FMT_JSON && !json_row(s->rows, tp_json_validate_row(run, &s->ev), s->n == 0)) {
        s->failed = true;
        return false;
    }
    if (fmt == FMT_CSV) {
        csv_row(s->rows, run, &s->ev);
    } else if (fmt != FMT_JSON && !s->a->summary) {
        table_row(s->rows, run, &s->ev);
    }
    s->n++;
    return !ferror(s->rows) || (s->failed = true, false);
}

static void print_summary(const struct vstate *st)
{
    const struct tp_validate_stream *v = st->acc;
    struct tp_validation_summary s;
    tp_validate_stream_summarize(v, &s);
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
    if (s.sources)
        printf("every source weighing one (%zu source%s): median of the source medians %.1f%%, "
               "inside the 80%% range %.0f%%\n", s.sources, s.sources == 1 ? "" : "s",
               100 * s.source_median, 100 * s.source_in_range);
    printf("rows outside the calibrated domain: %zu\n", s.outside_domain);
    printf("rows with a searched layout (counted above; calibrate does not fit them): %zu",
           s.searched.n);
    if (s.searched.n)
        printf(", median |error| %.1f%%, p90 %.1f%%, bias %+.1f%%", 100 * s.searched.median_abs,
               100 * s.searched.p90_abs, 100 * s.searched.bias);
    printf("\n");
    printf("rows not compared: %zu could not be mapped, %zu duplicates, %zu with nothing "
           "measured\n", st->n_skipped, st->duplicates, st->unmeasured);
}

/* The skipped rows, last, in the format's way. */
static void print_skipped(struct vstate *s)
{
    rewind(s->skipped);
    char id[sizeof ((struct tp_skipped_row *)0)->row_id * 4];
    char why[sizeof ((struct tp_skipped_row *)0)->why * 4];
    size_t i = 0;
    if (s->a->format == FMT_CSV && s->n == 0)
        printf(s->n_skipped ? "row_id,skipped\n" : "\n");
    for (; get_text(s->skipped, id, sizeof id) && get_text(s->skipped, why, sizeof why); i++) {
        if (s->a->format == FMT_JSON) {
            json_row(stdout, json_pack("{s:s, s:s}", "row_id", id, "skipped", why),
                     s->n + i == 0);
        } else if (s->a->format == FMT_CSV) {
            csv_text(stdout, id);
            for (size_t k = 1; k < (s->n ? (size_t)CSV_SKIPPED : 1); k++)
                putchar(',');
            putchar(',');
            csv_text(stdout, why);
            printf(s->n ? ",,,,,\n" : "\n");
        } else {
            printf("  %-44s %s\n", id, why);
        }
    }
}

static int print_json_end(struct vstate *s)
{
    print_skipped(s);
    printf(s->n + s->n_skipped ? "\n  ],\n  \"summary\": " : "],\n  \"summary\": ");
    char *text = tp_json_dumps(tp_json_validate_stream_summary(s->acc, s->n_skipped,
                                                               s->duplicates, s->unmeasured), 6);
    if (!text) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    for (const char *p = text; *p; p++) {
        putchar(*p);
        if (*p == '\n')
            fputs("  ", stdout);
    }
    tp_free(text);
    printf("\n}\n");
    return EXIT_OK;
}

static void print_json_head(const char *calibration)
{
    json_t *c = json_string(calibration ? calibration : "built-in defaults");
    char *text = c ? json_dumps(c, JSON_ENCODE_ANY) : NULL;
    printf("{\n  \"schema_version\": %d,\n  \"calibration\": %s,\n  \"error_definition\": "
           "\"predicted / measured - 1\",\n  \"rows\": [", TP_SCHEMA_VERSION,
           text ? text : "\"\"");
    free(text);
    json_decref(c);
}

static int finish(struct vstate *s)
{
    const struct cli_args *a = s->a;
    int rc = EXIT_OK;
    if (a->svg)
        rc = plot_validate(a->svg, &s->kept, s->kept_ev);
    if (rc != EXIT_OK)
        return rc;
    if (a->format == FMT_JSON) {
        print_json_head(a->calibration);
        copy_rows(s->rows);
        return print_json_end(s);
    }
    if (a->format == FMT_CSV) {
        if (s->n)
            csv_header(N_CSV_COLS);
        copy_rows(s->rows);
        print_skipped(s);
        return EXIT_OK;
    }
    printf("trainplan %s - validate: %zu rows predicted (calibration: %s)\n", TP_VERSION, s->n,
           a->calibration ? cli_escape(a->calibration) : "built-in defaults");
    if (!a->summary) {
        printf("\n%-44s %-10s %-9s %11s %11s %-12s %7s  %s\n", "row", "gpu", "measured",
               "predicted", "measured", "unit", "error", "memory GiB pred/meas");
        copy_rows(s->rows);
    }
    print_summary(s);
    print_skipped(s);
    return EXIT_OK;
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
    struct vstate *s = calloc(1, sizeof *s); /* holds a struct tp_run_eval: off the stack */
    struct tp_error err;
    if (!s) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    s->a = &a;
    tp_calib_init(&s->cal);
    rc = EXIT_OK;
    if (a.calibration && tp_calib_from_file(a.calibration, &s->cal, &err) != TP_OK) {
        cli_error_field(&err);
        rc = EXIT_USAGE;
    } else if (!(s->acc = tp_validate_stream_new()) || !(s->rows = tmpfile()) ||
               !(s->skipped = tmpfile())) {
        cli_error("out of memory or no temporary file");
        rc = EXIT_USAGE;
    }
    for (size_t i = 0; rc == EXIT_OK && i < a.n_files; i++) {
        if (tp_runs_read(a.files[i], on_row, s, &err) != TP_OK) {
            cli_error_field(&err);
            rc = EXIT_USAGE;
        } else if (s->failed) {
            cli_error("out of memory or a temporary file failed reading %s", a.files[i]);
            rc = EXIT_USAGE;
        }
    }
    if (rc == EXIT_OK)
        rc = finish(s);
    if (s->rows)
        fclose(s->rows);
    if (s->skipped)
        fclose(s->skipped);
    tp_validate_stream_free(s->acc);
    free(s->kept.runs);
    free(s->kept_ev);
    free(s);
    return cli_finish(rc);
}
