/*
 * validate_runs.c - every loaded run predicted with one calibration and the error statistics
 * that `trainplan validate` and python's trainplan.validate report: overall and by source, GPU
 * type and framework, memory, OOM verdicts, fit verdicts, the 80% range and the domain.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *tp_run_group_key(const struct tp_run *r, enum tp_run_group g)
{
    return g == TP_GROUP_SOURCE ? r->source
           : g == TP_GROUP_GPU  ? r->cluster.gpu.key
                                : r->framework_key;
}

enum tp_status tp_validate_runs(const struct tp_runs *runs, const struct tp_calib *cal,
                                struct tp_validation *out, struct tp_error *err)
{
    size_t n = runs->n ? runs->n : 1;
    *out = (struct tp_validation){runs, calloc(n, sizeof *out->ev), calloc(n, sizeof(double)),
                                  calloc(n, sizeof(double))};
    if (!out->ev || !out->err || !out->scratch) {
        tp_validation_free(out);
        return tp_fail(err, TP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < runs->n; i++)
        tp_run_evaluate(&runs->runs[i], cal, &out->ev[i]);
    return TP_OK;
}

void tp_validation_free(struct tp_validation *v)
{
    free(v->ev);
    free(v->err);
    free(v->scratch);
    memset(v, 0, sizeof *v);
}

void tp_validation_stats(const struct tp_validation *v, enum tp_run_group g, const char *value,
                         struct tp_err_stats *st)
{
    size_t n = 0;
    for (size_t i = 0; i < v->runs->n; i++)
        if (!value || strcmp(tp_run_group_key(&v->runs->runs[i], g), value) == 0)
            v->err[n++] = v->ev[i].err;
    tp_err_stats(v->err, n, v->scratch, st);
}

bool tp_validation_group(const struct tp_validation *v, enum tp_run_group g, size_t i,
                         const char **key, struct tp_err_stats *st)
{
    const char *k = tp_run_group_key(&v->runs->runs[i], g);
    for (size_t j = 0; j < i; j++)
        if (strcmp(tp_run_group_key(&v->runs->runs[j], g), k) == 0)
            return false;
    tp_validation_stats(v, g, k, st);
    *key = k[0] ? k : "(none)";
    return true;
}

void tp_validation_balance(const double *medians, size_t n, double share_sum, double *scratch,
                           struct tp_validation_summary *s)
{
    s->sources = n;
    s->source_median = s->source_in_range = NAN;
    if (n == 0 || !scratch)
        return;
    struct tp_err_stats st;
    tp_err_stats(medians, n, scratch, &st);
    s->source_median = st.median_abs;
    s->source_in_range = share_sum / (double)n;
}

/* Every source weighing one: each source's median |error| and share inside the range, in the
   order the sources first appear (as the stream keeps them). */
static void balance(const struct tp_validation *v, struct tp_validation_summary *s)
{
    size_t rows = v->runs->n ? v->runs->n : 1;
    double *med = malloc(2 * rows * sizeof *med);
    size_t n = 0;
    double share = 0;
    for (size_t i = 0; med && i < v->runs->n; i++) {
        const char *key;
        struct tp_err_stats st;
        if (!tp_validation_group(v, TP_GROUP_SOURCE, i, &key, &st))
            continue; /* not the first row of its source */
        const char *k = tp_run_group_key(&v->runs->runs[i], TP_GROUP_SOURCE);
        size_t measured = 0, in_range = 0;
        for (size_t j = i; j < v->runs->n; j++)
            if (isfinite(v->ev[j].err) &&
                strcmp(tp_run_group_key(&v->runs->runs[j], TP_GROUP_SOURCE), k) == 0) {
                measured++;
                in_range += v->ev[j].in_range;
            }
        if (!measured)
            continue;
        med[n++] = st.median_abs;
        share += (double)in_range / (double)measured;
    }
    tp_validation_balance(med, n, share, med ? med + rows : NULL, s);
    free(med);
}

void tp_validation_summarize(const struct tp_validation *v, struct tp_validation_summary *s)
{
    memset(s, 0, sizeof *s);
    tp_validation_stats(v, TP_GROUP_SOURCE, NULL, &s->throughput);
    size_t n_mem = 0;
    for (size_t i = 0; i < v->runs->n; i++) {
        const struct tp_run_eval *e = &v->ev[i];
        if (e->measured_oom) { /* OOM rows: how many the memory model calls */
            s->oom++;
            s->oom_predicted += !e->predicted_fits;
            s->oom_tight += e->predicted_verdict == TP_MEM_TIGHT;
        } else { /* rows that ran: how many the memory model says fit */
            s->completed++;
            s->completed_fit += e->predicted_fits;
            s->completed_tight += e->predicted_fits && e->predicted_verdict == TP_MEM_TIGHT;
        }
        if (!isnan(e->mem_err))
            v->err[n_mem++] = e->mem_err;
        if (isfinite(e->err)) { /* measured throughput inside the prediction's 80% range */
            s->measured++;
            s->in_range += e->in_range;
        }
        s->outside_domain += e->domain != 0;
    }
    tp_err_stats(v->err, n_mem, v->scratch, &s->memory);
    size_t n_searched = 0; /* the rows whose layout the mapper searched, on their own */
    for (size_t i = 0; i < v->runs->n; i++)
        if (v->runs->runs[i].layout_searched)
            v->err[n_searched++] = v->ev[i].err;
    tp_err_stats(v->err, n_searched, v->scratch, &s->searched);
    balance(v, s);
}
