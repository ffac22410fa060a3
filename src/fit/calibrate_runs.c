/*
 * calibrate_runs.c - `trainplan calibrate` and python's trainplan.calibrate over loaded runs:
 * the rows with a measured throughput, the fit (and leave-one-source-out beside it), and each
 * row's error before, after and held out, from which both build their reports.
 */
#include "fit_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void tp_calibration_free(struct tp_calibration *r)
{
    free(r->rows);
    free(r->measured);
    free(r->before);
    free(r->after);
    free(r->held_out);
    free(r->pick);
    free(r->scratch);
    free(r->src_ord);
    free(r->src_first);
    free(r->by_src);
    free(r->src_at);
    memset(r, 0, sizeof *r);
}

static enum tp_status alloc_rows(struct tp_calibration *r, size_t cap, struct tp_error *err)
{
    r->rows = calloc(cap, sizeof *r->rows);
    r->measured = calloc(cap, sizeof(double));
    r->before = calloc(cap, sizeof(double));
    r->after = calloc(cap, sizeof(double));
    r->held_out = calloc(cap, sizeof(double));
    r->pick = calloc(cap, sizeof(double));
    r->scratch = calloc(cap, sizeof(double));
    r->src_ord = calloc(cap, sizeof *r->src_ord);
    r->src_first = calloc(cap, sizeof *r->src_first);
    r->by_src = calloc(cap, sizeof *r->by_src);
    r->src_at = calloc(cap + 1, sizeof *r->src_at);
    if (r->rows && r->measured && r->before && r->after && r->held_out && r->pick && r->scratch &&
        r->src_ord && r->src_first && r->by_src && r->src_at)
        return TP_OK;
    tp_calibration_free(r);
    return tp_fail(err, TP_ENOMEM, "out of memory");
}

/* tp_calib_fit_validate on the rows, or on o->fit_rows of them, evenly spaced
   (tp_evenly_kept), the others' held-out errors NaN. */
static enum tp_status fit_some(struct tp_calibration *out, const struct tp_calib *base,
                               const struct tp_fit_opts *o, bool cross_validate,
                               struct tp_error *err)
{
    size_t n = out->n, cap = o->fit_rows;
    double *held = cross_validate ? out->held_out : NULL;
    if (!cap || n <= cap)
        return tp_calib_fit_validate(out->rows, out->measured, n, base, o, &out->fitted,
                                     &out->res, held, err);
    const struct tp_run **rows = calloc(cap, sizeof *rows);
    double *meas = calloc(cap, sizeof *meas), *sub = calloc(cap, sizeof *sub);
    size_t *at = calloc(cap, sizeof *at), k = 0;
    enum tp_status st = TP_ENOMEM;
    if (rows && meas && sub && at) {
        for (size_t i = 0; i < n && k < cap; i++)
            if (tp_evenly_kept(i, n, cap)) {
                rows[k] = out->rows[i];
                meas[k] = out->measured[i];
                at[k++] = i;
            }
        st = tp_calib_fit_validate(rows, meas, k, base, o, &out->fitted, &out->res,
                                   held ? sub : NULL, err);
        for (size_t i = 0; held && i < n; i++)
            held[i] = NAN;
        for (size_t j = 0; held && st == TP_OK && j < k; j++)
            held[at[j]] = sub[j];
    } else {
        tp_fail(err, st, "calibrate: out of memory");
    }
    free(rows);
    free(meas);
    free(sub);
    free(at);
    return st;
}

/* Rows [a, b) predicted with the base and with the fit. */
struct slice {
    struct tp_calibration *out;
    size_t a, b;
};

static void *evaluate_slice(void *arg)
{
    struct slice *s = arg;
    for (size_t i = s->a; i < s->b; i++) {
        struct tp_run_eval ev;
        tp_run_evaluate(s->out->rows[i], &s->out->base, &ev);
        s->out->before[i] = ev.err;
        tp_run_evaluate(s->out->rows[i], &s->out->fitted, &ev);
        s->out->after[i] = ev.err;
    }
    return NULL;
}

/* Every row's error before and after, in contiguous slices on o->threads threads (default: the
   online CPUs); each row's figures are its own, so the threads change nothing but the time (a
   10 MB file holds 100,000 rows).  A thread that cannot start leaves its slice to this one. */
static void evaluate_rows(struct tp_calibration *out, const struct tp_fit_opts *o)
{
    size_t nt = tp_fit_workers(o, out->n / 1024 + 1); /* a thread for 1,024 rows at least */
    struct slice s[TP_FIT_MAX_WORKERS];
    pthread_t tid[TP_FIT_MAX_WORKERS];
    bool started[TP_FIT_MAX_WORKERS] = {false};
    for (size_t t = 0; t < nt; t++)
        s[t] = (struct slice){out, out->n * t / nt, out->n * (t + 1) / nt};
    for (size_t t = 1; t < nt; t++)
        started[t] = pthread_create(&tid[t], NULL, evaluate_slice, &s[t]) == 0;
    evaluate_slice(&s[0]);
    for (size_t t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            evaluate_slice(&s[t]);
    }
}

enum tp_status tp_calibrate_runs(const struct tp_runs *runs, const struct tp_calib *base,
                                 const struct tp_fit_opts *o, bool cross_validate,
                                 struct tp_calibration *out, struct tp_error *err)
{
    memset(out, 0, sizeof *out);
    TRY(alloc_rows(out, runs->n ? runs->n : 1, err));
    out->runs = runs;
    out->base = *base;
    for (size_t i = 0; i < runs->n; i++) { /* the rows with a throughput to fit */
        double m = tp_run_measured_tokens_per_s(&runs->runs[i], NULL);
        if (!(m > 0))
            continue;
        /* a searched layout or an assumed head count: fitting the efficiencies to the row
           would fit them to an assumption (validate still reports it) */
        if (tp_run_assumed(&runs->runs[i])) {
            out->assumed++;
            continue;
        }
        out->rows[out->n] = &runs->runs[i];
        out->measured[out->n++] = m;
    }
    if (out->n == 0) {
        const char *first = runs->n_files ? runs->files[0] : "the runs";
        tp_calibration_free(out);
        return tp_fail(err, TP_EINVAL, "no row of %s%s has a measured throughput (tokens/s, "
                       "step time, TFLOP/s or MFU) to fit", first,
                       runs->n_files > 1 ? " and the others" : "");
    }
    /* the fit and the leave-one-source-out folds side by side (one source: no fold), on at
       most o->fit_rows rows, evenly spaced; every row is predicted before and after */
    enum tp_status st = fit_some(out, base, o, cross_validate, err);
    if (st != TP_OK) {
        tp_calibration_free(out);
        return st;
    }
    /* the rows grouped by source (a counting sort over the sources' numbers) */
    size_t n_src = tp_source_ordinals(out->rows, out->n, out->src_ord);
    if (n_src == SIZE_MAX) {
        tp_calibration_free(out);
        return tp_fail(err, TP_ENOMEM, "out of memory");
    }
    out->n_sources = n_src;
    for (size_t i = 0; i < out->n; i++)
        out->src_at[out->src_ord[i] + 1]++;
    for (size_t s = 0; s < n_src; s++)
        out->src_at[s + 1] += out->src_at[s];
    for (size_t s = 0; s < n_src; s++)
        out->src_first[s] = out->src_at[s]; /* its fill position for now */
    for (size_t i = 0; i < out->n; i++)
        out->by_src[out->src_first[out->src_ord[i]]++] = i;
    for (size_t s = 0; s < n_src; s++)
        out->src_first[s] = out->by_src[out->src_at[s]];
    evaluate_rows(out, o);
    for (size_t i = 0; i < out->n && !cross_validate; i++)
        out->held_out[i] = NAN;
    out->cross_validated = cross_validate && out->res.sources >= 2;
    return TP_OK;
}

void tp_calibration_stats(const struct tp_calibration *r, const double *errs, const char *source,
                          struct tp_err_stats *st)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (!source || strcmp(r->rows[i]->source, source) == 0)
            r->pick[k++] = errs[i];
    tp_err_stats(r->pick, k, r->scratch, st);
}

/* The statistics of one source's rows (its number s). */
static void source_stats(const struct tp_calibration *r, const double *errs, uint32_t s,
                         struct tp_err_stats *st)
{
    size_t k = 0;
    for (size_t at = r->src_at[s]; at < r->src_at[s + 1]; at++)
        r->pick[k++] = errs[r->by_src[at]];
    tp_err_stats(r->pick, k, r->scratch, st);
}

bool tp_calibration_source(const struct tp_calibration *r, size_t i, const char **source,
                           struct tp_err_stats st[3])
{
    uint32_t s = r->src_ord[i];
    if (r->src_first[s] != i)
        return false;
    source_stats(r, r->before, s, &st[0]);
    source_stats(r, r->after, s, &st[1]);
    source_stats(r, r->held_out, s, &st[2]);
    *source = r->rows[i]->source;
    return true;
}
