/*
 * cmd_calibrate.c - `trainplan calibrate RUNS.csv... -o CAL.json`: fits the time model's
 * efficiency parameters to measured runs (tp_calib_fit), reports the error before and after
 * and the leave-one-source-out cross-validated error, and writes the calibration file that
 * estimate, search and validate read with --calibration.
 */
#include "cli.h"
#include "outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: trainplan calibrate RUNS.csv... [-o CAL.json] [--base FILE|prior] [--no-cv]\n"
           "                           [--explain] [--no-per-gpu] [--min-gpu-rows N] [--prior-weight W]\n"
           "                           [--max-evals N] [--starts N] [--fold-rows N]\n"
           "                           [--max-folds N] [--fit-rows N] [--quiet]\n"
           "                           [--format table|json|csv]\n\n"
           "Fits the efficiency parameters of the time model to the measured throughput of the\n"
           "runs files (docs/runs-file.md): GEMM efficiency, attention and memory-bound kernel\n"
           "efficiency, achieved network bandwidth per level, TP and DP overlap and the per-step\n"
           "overhead globally, and a GEMM rate per GPU type measured by two sources.  Loss:\n"
           "pseudo-Huber on log(predicted/measured), averaged per source then over sources,\n"
           "plus a pull toward the base calibration so parameters the runs cannot identify keep\n"
           "the base's values (two runs give a sensible fit).  Method: GSL's Levenberg-\n"
           "Marquardt from the base (--starts N adds the best quasi-random points as starts)\n"
           "and Brent.\n"
           "Reported: mean over sources of the median |log(predicted/measured)|.  Prints the\n"
           "error before and after and, with rows from two or more sources, the\n"
           "leave-one-source-out cross-validated error (each source predicted by a fit to the\n"
           "others): the honest figure.  The built-in defaults are `make calibration` (this\n"
           "command with --base prior over data/runs).  CSV: the fitted\n"
           "parameters, one row each.\n"
           "On a terminal, a progress line on stderr (not with --quiet).\n"
           "--explain: also what pins each parameter: the rows and sources that move it, its\n"
           "standard error, its prior (a published measurement, or a weak pull toward the\n"
           "base) and whether the free fit put it at a bound (then held at its prior); JSON:\n"
           "always, in params[].\n\noptions:\n");
    cli_print_options(stdout, CMD_CALIBRATE);
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

/* calibrate --explain: what pins each parameter (src/fit/fit.c). */
static void print_explain(const struct tp_fit_result *res)
{
    printf("\n  what pins each parameter (rows whose prediction moves by over 0.5%% when it "
           "moves by 0.2 in log/logit;\n  se: standard error from the fit's curvature with "
           "the spread between sources; prior sd in log/logit)\n");
    printf("  %-28s %10s %10s %5s %4s  %-40s %s\n", "parameter", "value", "se", "rows", "src",
           "pinned by", "prior");
    for (size_t i = 0; i < res->n_params; i++) {
        const struct tp_fit_param *p = &res->params[i];
        char se[16] = "-", by[64], prior[160];
        if (!isnan(p->se))
            snprintf(se, sizeof se, "%.3g", p->se);
        if (p->at_bound)
            snprintf(by, sizeof by, "at a bound in the free fit: held at prior");
        else if (!p->identified || p->rows == 0)
            snprintf(by, sizeof by, p->identified ? "no row moves 0.5%%: near prior" : "no row: kept at prior");
        else
            snprintf(by, sizeof by, "rows (most: %.28s)", p->top_source[0] ? p->top_source : "-");
        if (p->measured_prior)
            snprintf(prior, sizeof prior, "%.4g sd %.2g, measured: %s", p->prior, p->prior_sd,
                     p->cite);
        else
            snprintf(prior, sizeof prior, "%.4g sd %.2g (weak pull)", p->prior, p->prior_sd);
        printf("  %-28s %10.4g %10s %5u %4u  %-40s %s\n", p->name, p->after, se, p->rows,
               p->sources, by, prior);
    }
}

static void print_table(const struct tp_calibration *r, const char *base_name,
                        const char *output, bool explain)
{
    const struct tp_fit_result *res = &r->res;
    printf("trainplan %s - calibrate: %zu rows from %zu sources (base: %s)\n", TP_VERSION, r->n,
           r->n_sources, base_name);
    if (r->runs->n_skipped || r->runs->n > r->n)
        printf("not fitted: %zu rows that could not be mapped, %zu with no throughput figure, "
               "%zu with an assumed layout or head count (validate's searched layouts)\n",
               r->runs->n_skipped, r->runs->n - r->n - r->assumed, r->assumed);
    if (res->rows < r->n)
        printf("fitted on %zu of the %zu rows, evenly spaced (--fit-rows; 0 fits every row); "
               "every row is predicted before and after\n", res->rows, r->n);
    printf("mean over sources of the median |log(predicted/measured)|: %.4f -> %.4f "
           "(%u evaluations)\n",
           res->objective_before, res->objective_after, res->evaluations);
    printf("\n  %-36s %10s %10s\n", "parameter", "before", "after");
    for (size_t i = 0; i < res->n_params; i++)
        printf("  %-36s %10.4g %10.4g%s\n", res->params[i].name, res->params[i].before,
               res->params[i].after,
               res->params[i].identified ? "" : "  (not identified by these rows: kept)");
    if (explain)
        print_explain(res);
    struct tp_err_stats sb, sa, sc;
    tp_calibration_stats(r, r->before, NULL, &sb);
    tp_calibration_stats(r, r->after, NULL, &sa);
    tp_calibration_stats(r, r->held_out, NULL, &sc);
    printf("\nerror = predicted / measured - 1, tokens/s per GPU\n");
    printf("\n  %-36s %5s  %8s  %8s  %8s\n", "", "rows", "median", "p90", "bias");
    print_stat("before (base)", &sb);
    print_stat("after (in sample)", &sa);
    char held_label[48];
    snprintf(held_label, sizeof held_label, "leave-sources-out (%u folds)", res->folds);
    print_stat(!r->cross_validated          ? "leave-one-source-out (one source: n/a)"
               : res->folds < res->sources ? held_label
                                           : "leave-one-source-out",
               &sc);
    printf("\n  %-36s %8s %8s %8s   median |error|\n", "by source", "before", "after",
           "held-out");
    char still[2048] = "";
    size_t more = 0;
    const char *src;
    struct tp_err_stats st[3]; /* before, after, held out */
    for (size_t i = 0; i < r->n; i++) {
        if (!tp_calibration_source(r, i, &src, st))
            continue;
        char held[16] = "-";
        if (!isnan(st[2].median_abs))
            snprintf(held, sizeof held, "%.1f%%", 100 * st[2].median_abs);
        printf("  %-36s %7.1f%% %7.1f%% %8s\n", src, 100 * st[0].median_abs,
               100 * st[1].median_abs, held);
        /* a fit cannot fix what the model lacks: say so where the error stays large (whole
           lines while they fit, then a count) */
        if (st[1].median_abs > 0.25) {
            char line[512];
            snprintf(line, sizeof line,
                     "warning: %s is still off by a median %.0f%% after the fit: the model "
                     "lacks something these runs do (stack, kernels, or the runs' own "
                     "figures)\n", src, 100 * st[1].median_abs);
            if (strlen(still) + strlen(line) < sizeof still)
                strcat(still, line);
            else
                more++;
        }
    }
    fputs(still, stdout);
    if (more)
        printf("warning: %zu more sources are still off by a median over 25%% after the fit\n",
               more);
    if (r->cross_validated && res->folds < res->sources)
        printf("held out: %u folds over %zu sources, fold f holding out every source numbered f "
               "mod %u (--max-folds; 0 gives one fold per source)\n",
               res->folds, res->sources, res->folds);
    if (r->cross_validated && res->fold_rows)
        printf("held out: each fold fitted on at most %u of the other sources' rows, evenly "
               "spaced (--fold-rows; 0 fits every row)\n", res->fold_rows);
    if (output)
        printf("\nwrote %s (use it with --calibration)\n", output);
    else
        printf("\nnothing written (give -o FILE to keep the fit)\n");
}

static void fit_opts(const struct cli_args *a, struct tp_fit_opts *o)
{
    static struct progress prog = {"fit and leave-one-source-out", {0, 0}};
    tp_args_fit_opts(a, o); /* the options as the bindings read them */
    if (a->no_cv)
        prog.phase = "fit";
    clock_gettime(CLOCK_MONOTONIC, &prog.start);
    if (isatty(STDERR_FILENO) && !a->quiet) { /* stderr only, and only on a terminal */
        o->progress = on_progress;
        o->progress_ctx = &prog;
    }
}

/* The fitted calibration as tp_calib_to_json's text, through cli/outfile.c. */
static int write_calibration(const struct tp_calib *c, const char *what, const char *path)
{
    size_t len = tp_calib_to_json(c, NULL, 0);
    char *text = malloc(len);
    if (!text) {
        cli_error("%s: out of memory", what);
        return EXIT_USAGE;
    }
    tp_calib_to_json(c, text, len);
    int rc = out_write(what, path, text, strlen(text));
    free(text);
    return rc;
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
    const char *base_name;
    if (tp_calib_base(a.base, &base, &base_name, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    char what[4200] = "";
    if (a.output) {
        snprintf(what, sizeof what, "%s: cannot write the calibration file", a.output);
        if (out_check(what, a.output) != EXIT_OK)
            return EXIT_USAGE;
    }
    struct tp_fit_opts o;
    fit_opts(&a, &o);
    struct tp_runs all;
    if (tp_runs_load(a.files, a.n_files, &all, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    struct tp_calibration r;
    enum tp_status st = tp_calibrate_runs(&all, &base, &o, !a.no_cv, &r, &err);
    if (o.progress)
        fprintf(stderr, "\r%60s\r", ""); /* clear the progress line */
    rc = EXIT_USAGE;
    if (st != TP_OK) {
        cli_error_field(&err);
    } else if (a.output && write_calibration(&r.fitted, what, a.output) != EXIT_OK) {
        /* the error is printed */
    } else if (a.format == FMT_CSV) { /* the fitted parameters, one row each */
        rc = out_csv_rows(tp_json_fit_params(&r.res));
    } else if (a.format == FMT_JSON) {
        rc = cli_print_json(tp_json_calibrate(&r, base_name, a.output), 6);
    } else {
        print_table(&r, base_name, a.output, a.explain_fit != 0);
        rc = EXIT_OK;
    }
    if (st == TP_OK)
        tp_calibration_free(&r);
    tp_runs_free(&all);
    return cli_finish(rc);
}
