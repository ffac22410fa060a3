/*
 * cmd_calibrate.c - `trainplan calibrate RUNS.csv... -o CAL.json`: fits the time model's
 * efficiency parameters to measured runs (tp_calib_fit), reports the error before and after
 * and the leave-one-source-out cross-validated error, and writes the calibration file that
 * estimate, search and validate read with --calibration.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: trainplan calibrate RUNS.csv... [-o CAL.json] [--base FILE|prior] [--no-cv]\n"
           "                           [--no-per-gpu] [--min-gpu-rows N] [--prior-weight W]\n"
           "                           [--max-evals N] [--quiet] [--format table|json|csv]\n\n"
           "Fits the efficiency parameters of the time model to the measured throughput of the\n"
           "runs files (docs/runs-file.md): GEMM efficiency, attention and memory-bound kernel\n"
           "efficiency, achieved network bandwidth per level, TP and DP overlap and the per-step\n"
           "overhead globally, and a GEMM rate per GPU type measured by two sources.  Loss:\n"
           "pseudo-Huber on log(predicted/measured), averaged per source then over sources,\n"
           "plus a pull toward the base calibration so parameters the runs cannot identify keep\n"
           "the base's values (two runs give a sensible fit).  Method: GSL quasi-random starts,\n"
           "Nelder-Mead and Brent.  Reported: mean over sources of the median\n"
           "|log(predicted/measured)|.  Prints the error\n"
           "before and after and, with rows from two or more sources, the leave-one-source-out\n"
           "cross-validated error (each source predicted by a fit to the others): the honest\n"
           "figure.  The built-in defaults are `make calibration` (this command with --base\n"
           "prior over ../shared/validation/runs).  CSV: the fitted parameters, one row each.\n"
           "On a terminal, a progress line on stderr (not with --quiet).\n\noptions:\n");
    cli_print_options(stdout, CMD_CALIBRATE);
}

struct errs {
    double *before, *after, *held_out, *pick, *scratch;
};

/* Statistics of `e` over the `n` fitted rows of `source` (NULL: all). */
static void stats_of(const struct tp_run *const *rows, size_t n, const double *e,
                     const char *source, double *pick, double *scratch, struct tp_err_stats *st)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!source || strcmp(rows[i]->source, source) == 0)
            pick[k++] = e[i];
    tp_err_stats(pick, k, scratch, st);
}

static void print_stat(const char *name, const struct tp_err_stats *st)
{
    if (st->n == 0 || isnan(st->median_abs)) {
        printf("  %-36s %5s  %8s  %8s  %8s\n", name, "-", "-", "-", "-");
        return;
    }
    printf("  %-36s %5zu  %7.1f%%  %7.1f%%  %+7.1f%%\n", name, st->n, 100 * st->median_abs,
           100 * st->p90_abs, 100 * st->bias);
}

static json_t *stat_json(const struct tp_err_stats *st)
{
    if (st->n == 0 || isnan(st->median_abs))
        return json_null();
    return json_pack("{s:I, s:f, s:f, s:f}", "rows", (json_int_t)st->n, "median_abs_error",
                     st->median_abs, "p90_abs_error", st->p90_abs, "bias", st->bias);
}

/* The progress line on a terminal: what runs, how many objective evaluations (summed over the
   fits running side by side), how long. */
struct progress {
    const char *phase;
    struct timespec start;
};

static void on_progress(void *ctx, unsigned evals)
{
    struct progress *p = ctx;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double s = (double)(now.tv_sec - p->start.tv_sec) + 1e-9 * (double)(now.tv_nsec - p->start.tv_nsec);
    fprintf(stderr, "\rcalibrate: %s, %u evaluations, %.0f s   ", p->phase, evals, s);
}

int cmd_calibrate(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin(argc, argv, CMD_CALIBRATE, &a, help);
    if (rc >= 0)
        return rc;
    if (a.n_files == 0) {
        cli_error("calibrate needs at least one runs file (e.g. trainplan calibrate "
                  "my-runs.csv -o cluster.json)");
        return EXIT_USAGE;
    }
    struct tp_calib base;
    struct tp_error err;
    const char *base_name = "built-in defaults";
    tp_calib_init(&base);
    if (a.base && strcmp(a.base, "prior") == 0) {
        tp_calib_prior(&base);
        base_name = "physics priors";
    } else if (a.base) {
        if (tp_calib_from_file(a.base, &base, &err) != TP_OK) {
            cli_error_field(&err);
            return EXIT_USAGE;
        }
        base_name = a.base;
    }
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    if (a.prior_weight >= 0)
        o.prior_weight = a.prior_weight;
    if (a.min_gpu_rows != TP_UNSET)
        o.min_gpu_rows = (uint32_t)a.min_gpu_rows;
    if (a.max_evals != TP_UNSET)
        o.max_evals = (uint32_t)a.max_evals;
    o.per_gpu = !a.no_per_gpu;
    static struct progress prog = {"fit and leave-one-source-out", {0, 0}};
    if (a.no_cv)
        prog.phase = "fit";
    clock_gettime(CLOCK_MONOTONIC, &prog.start);
    if (isatty(STDERR_FILENO) && !a.quiet) { /* stderr only, and only on a terminal */
        o.progress = on_progress;
        o.progress_ctx = &prog;
    }

    struct cli_runs all;
    if ((rc = cli_load_runs(a.files, a.n_files, &all)) != EXIT_OK)
        return rc;
    /* the rows with a throughput to fit */
    size_t n = 0;
    size_t cap = all.n ? all.n : 1;
    const struct tp_run **ptr = calloc(cap, sizeof *ptr);
    double *meas = calloc(cap, sizeof *meas);
    struct errs e = {calloc(cap, sizeof(double)), calloc(cap, sizeof(double)),
                     calloc(cap, sizeof(double)), calloc(cap, sizeof(double)),
                     calloc(cap, sizeof(double))};
    rc = EXIT_USAGE;
    if (!ptr || !meas || !e.before || !e.after || !e.held_out || !e.pick || !e.scratch) {
        cli_error("out of memory");
        goto out;
    }
    for (size_t i = 0; i < all.n; i++) {
        double m = tp_run_measured_tokens_per_s(&all.runs[i], NULL);
        if (!(m > 0))
            continue;
        ptr[n] = &all.runs[i];
        meas[n++] = m;
    }
    if (n == 0) {
        cli_error("no row of %s%s has a measured throughput (tokens/s, step time, TFLOP/s or "
                  "MFU) to fit", a.files[0], a.n_files > 1 ? " and the others" : "");
        goto out;
    }
    /* the fit and the leave-one-source-out folds side by side (one source: no fold) */
    struct tp_calib fitted;
    struct tp_fit_result res;
    int fit_status = (int)tp_calib_fit_validate(ptr, meas, n, &base, &o, &fitted, &res,
                                                a.no_cv ? NULL : e.held_out, &err);
    if (o.progress)
        fprintf(stderr, "\r%60s\r", ""); /* clear the progress line */
    if (fit_status != (int)TP_OK) {
        cli_error_field(&err);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        struct tp_run_eval ev;
        tp_run_evaluate(ptr[i], &base, &ev);
        e.before[i] = ev.err;
        tp_run_evaluate(ptr[i], &fitted, &ev);
        e.after[i] = ev.err;
        if (a.no_cv)
            e.held_out[i] = NAN;
    }
    bool cv = !a.no_cv && res.sources >= 2;
    if (a.output) {
        size_t len = tp_calib_to_json(&fitted, NULL, 0);
        char *text = malloc(len);
        FILE *f = text ? fopen(a.output, "w") : NULL;
        if (!f) {
            cli_error("%s: cannot write the calibration file", a.output);
            free(text);
            goto out;
        }
        tp_calib_to_json(&fitted, text, len);
        bool ok = fputs(text, f) >= 0;
        ok = (fclose(f) == 0) && ok;
        free(text);
        if (!ok) {
            cli_error("%s: write failed", a.output);
            goto out;
        }
    }
    struct tp_err_stats sb, sa, sc;
    stats_of(ptr, n, e.before, NULL, e.pick, e.scratch, &sb);
    stats_of(ptr, n, e.after, NULL, e.pick, e.scratch, &sa);
    stats_of(ptr, n, e.held_out, NULL, e.pick, e.scratch, &sc);
    if (a.format != FMT_TABLE) {
        json_t *params = json_array(), *by_source = json_object();
        for (size_t i = 0; i < res.n_params; i++)
            json_array_append_new(params,
                                  json_pack("{s:s, s:f, s:f, s:b}", "name", res.params[i].name,
                                            "before", res.params[i].before, "after",
                                            res.params[i].after, "identified",
                                            res.params[i].identified));
        if (a.format == FMT_CSV) { /* the fitted parameters, one row each */
            json_decref(by_source);
            rc = out_csv_rows(params);
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            const char *src = ptr[i]->source;
            if (json_object_get(by_source, src))
                continue;
            struct tp_err_stats b, f, h;
            stats_of(ptr, n, e.before, src, e.pick, e.scratch, &b);
            stats_of(ptr, n, e.after, src, e.pick, e.scratch, &f);
            stats_of(ptr, n, e.held_out, src, e.pick, e.scratch, &h);
            json_object_set_new(by_source, src,
                                json_pack("{s:o, s:o, s:o}", "before", stat_json(&b), "after",
                                          stat_json(&f), "held_out", stat_json(&h)));
        }
        json_t *doc = json_pack(
            "{s:i, s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
            "schema_version", TP_SCHEMA_VERSION, "base", base_name, "output",
            a.output ? a.output : "", "rows", (json_int_t)n, "sources", (json_int_t)res.sources,
            "skipped", (json_int_t)all.n_skipped, "objective_before", res.objective_before,
            "objective_after", res.objective_after, "evaluations", (json_int_t)res.evaluations,
            "params", params, "before", stat_json(&sb), "after", stat_json(&sa),
            "leave_one_source_out", stat_json(&sc), "by_source", by_source, "calibration",
            json_null());
        size_t len = tp_calib_to_json(&fitted, NULL, 0);
        char *text = malloc(len);
        if (text) {
            tp_calib_to_json(&fitted, text, len);
            json_object_set_new(doc, "calibration", json_loads(text, 0, NULL));
        }
        free(text);
        rc = cli_print_json(doc, 6);
        goto out;
    }
    printf("trainplan %s - calibrate: %zu rows from %zu sources (base: %s)\n", TP_VERSION, n,
           res.sources, base_name);
    if (all.n_skipped || all.n > n)
        printf("not fitted: %zu rows that could not be mapped, %zu with no throughput figure\n",
               all.n_skipped, all.n - n);
    printf("mean over sources of the median |log(predicted/measured)|: %.4f -> %.4f "
           "(%u evaluations)\n",
           res.objective_before, res.objective_after, res.evaluations);
    printf("\n  %-36s %10s %10s\n", "parameter", "before", "after");
    for (size_t i = 0; i < res.n_params; i++)
        printf("  %-36s %10.4g %10.4g%s\n", res.params[i].name, res.params[i].before,
               res.params[i].after,
               res.params[i].identified ? "" : "  (not identified by these rows: kept)");
    printf("\nerror = predicted / measured - 1, tokens/s per GPU\n");
    printf("\n  %-36s %5s  %8s  %8s  %8s\n", "", "rows", "median", "p90", "bias");
    print_stat("before (base)", &sb);
    print_stat("after (in sample)", &sa);
    print_stat(cv ? "leave-one-source-out" : "leave-one-source-out (one source: n/a)", &sc);
    printf("\n  %-36s %8s %8s %8s   median |error|\n", "by source", "before", "after",
           "held-out");
    char still[2048] = "";
    for (size_t i = 0; i < n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(ptr[j]->source, ptr[i]->source) != 0;
        if (!first)
            continue;
        struct tp_err_stats b, f, h;
        stats_of(ptr, n, e.before, ptr[i]->source, e.pick, e.scratch, &b);
        stats_of(ptr, n, e.after, ptr[i]->source, e.pick, e.scratch, &f);
        stats_of(ptr, n, e.held_out, ptr[i]->source, e.pick, e.scratch, &h);
        char held[16] = "-";
        if (!isnan(h.median_abs))
            snprintf(held, sizeof held, "%.1f%%", 100 * h.median_abs);
        printf("  %-36s %7.1f%% %7.1f%% %8s\n", ptr[i]->source, 100 * b.median_abs,
               100 * f.median_abs, held);
        /* a fit cannot fix what the model lacks: say so where the error stays large */
        if (f.median_abs > 0.25)
            snprintf(still + strlen(still), sizeof still - strlen(still),
                     "warning: %s is still off by a median %.0f%% after the fit: the model "
                     "lacks something these runs do (stack, kernels, or the runs' own "
                     "figures)\n", ptr[i]->source, 100 * f.median_abs);
    }
    fputs(still, stdout);
    if (a.output)
        printf("\nwrote %s (use it with --calibration)\n", a.output);
    else
        printf("\nnothing written (give -o FILE to keep the fit)\n");
    rc = EXIT_OK;
out:
    free(ptr);
    free(meas);
    free(e.before);
    free(e.after);
    free(e.held_out);
    free(e.pick);
    free(e.scratch);
    cli_free_runs(&all);
    return cli_finish(rc);
}
