/*
 * crossval.c - the fit's options, the rows' time plans (built once per call, shared by every
 * fit that reads the rows), tp_calib_fit over them, and leave-one-source-out cross-validation:
 * one fit per source (or per group of sources, at most max_folds) on the other sources'
 * rows (at most fold_rows of them), the folds spread over worker threads (each fold is
 * independent and deterministic, so the held-out figures do not depend on the number of
 * threads or their timing).  Nothing here
 * needs GSL: the fit itself is fit.c, or nofit.c in a build without GSL (make NO_GSL=1).
 */
#include "fit_internal.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The parts of a run the time model reads: the model's shape (not its display name and source,
   which name the row), the cluster, the job and the layout. */
enum { N_PARTS = 5 };
static void config_parts(const struct tp_run *r, const void *part[N_PARTS], size_t size[N_PARTS])
{
    size_t shape = offsetof(struct tp_model, n_layers);
    part[0] = r->model.family;
    size[0] = sizeof r->model.family;
    part[1] = (const char *)&r->model + shape;
    size[1] = sizeof r->model - shape;
    part[2] = &r->cluster;
    size[2] = sizeof r->cluster;
    part[3] = &r->job;
    size[3] = sizeof r->job;
    part[4] = &r->layout;
    size[4] = sizeof r->layout;
}

/* FNV-1a over those parts: rows measured on the same configuration (another source, another
   date) share one plan and one prediction per evaluation. */
static uint64_t config_hash(const struct tp_run *r)
{
    const void *part[N_PARTS];
    size_t size[N_PARTS];
    config_parts(r, part, size);
    uint64_t h = 1469598103934665603u;
    for (size_t k = 0; k < N_PARTS; k++)
        for (size_t i = 0; i < size[k]; i++) {
            h ^= ((const unsigned char *)part[k])[i];
            h *= 1099511628211u;
        }
    return h;
}

static bool same_config(const struct tp_run *a, const struct tp_run *b)
{
    const void *pa[N_PARTS], *pb[N_PARTS];
    size_t size[N_PARTS];
    config_parts(a, pa, size);
    config_parts(b, pb, size);
    for (size_t k = 0; k < N_PARTS; k++)
        if (memcmp(pa[k], pb[k], size[k]) != 0)
            return false;
    return true;
}

struct hashed {
    uint64_t h;
    size_t row;
};

static int by_hash_then_row(const void *a, const void *b)
{
    const struct hashed *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* ptr[i] = the plan of the first row with row i's configuration (byte for byte: two rows that
   differ in unused bytes only get a plan each, which costs time, never a wrong figure).  The
   rows are sorted by hash, so a row is compared only with the earlier first rows of its hash's
   configurations, not with every earlier row (97,272 rows in a 10 MB file). */
static enum tp_status share_plans(const struct tp_run *const *runs, size_t n,
                                  struct tp_fit_plans *ps)
{
    struct hashed *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return TP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        e[i] = (struct hashed){config_hash(runs[i]), i};
        ps->ptr[i] = &ps->plans[i];
    }
    qsort(e, n, sizeof *e, by_hash_then_row);
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && e[b].h == e[a].h)
            b++;
        for (size_t i = a + 1; i < b; i++) /* in row order within the hash */
            for (size_t j = a; j < i; j++) {
                size_t r = e[j].row, s = e[i].row;
                if (ps->ptr[r] == &ps->plans[r] && same_config(runs[s], runs[r])) {
                    ps->ptr[s] = &ps->plans[r];
                    break;
                }
            }
        a = b;
    }
    free(e);
    return TP_OK;
}

enum tp_status tp_fit_plans_build(const struct tp_run *const *runs, size_t n,
                                  const struct tp_calib *base, struct tp_fit_plans *ps)
{
    memset(ps, 0, sizeof *ps);
    size_t n_stages = 0;
    for (size_t i = 0; i < n; i++) { /* a checked layout has pp <= layers <= TP_MAX_LAYERS */
        const struct tp_run *r = runs[i];
        if (tp_run_check(&r->model, &r->cluster, &r->job, &r->layout, NULL, NULL) == TP_OK)
            n_stages += r->layout.pp;
    }
    ps->plans = calloc(n ? n : 1, sizeof *ps->plans);
    ps->stages = calloc(n_stages ? n_stages : 1, sizeof *ps->stages);
    ps->ptr = calloc(n ? n : 1, sizeof *ps->ptr);
    if (!ps->plans || !ps->stages || !ps->ptr) {
        tp_fit_plans_free(ps);
        return TP_ENOMEM;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tp_run *r = runs[i];
        bool ok = tp_run_check(&r->model, &r->cluster, &r->job, &r->layout, NULL, NULL) == TP_OK;
        struct tp_time_stage *stages = ps->stages + at;
        if (ok)
            at += r->layout.pp;
        else
            memset(&ps->plans[i], 0, sizeof ps->plans[i]); /* ok = false: priced NaN */
        if (ok)
            tp_time_plan_init(&ps->plans[i], &r->model, &r->cluster, &r->job, &r->layout, base,
                              stages);
    }
    if (share_plans(runs, n, ps) != TP_OK) {
        tp_fit_plans_free(ps);
        return TP_ENOMEM;
    }
    return TP_OK;
}

void tp_fit_plans_free(struct tp_fit_plans *ps)
{
    free(ps->plans);
    free(ps->stages);
    free(ps->ptr);
    memset(ps, 0, sizeof *ps);
}

void tp_fit_opts_init(struct tp_fit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->prior_weight = 0.4;
    o->min_gpu_rows = 5;
    o->max_evals = 2500;
    o->rounds = 2;
    o->per_gpu = true;
    o->starts = 1;
    o->samples = 256;
    o->fold_rows = 512;
    o->fit_rows = 4096;
    o->max_folds = 16;
}

enum tp_status tp_calib_fit(const struct tp_run *const *runs, const double *measured, size_t n,
                            const struct tp_calib *base, const struct tp_fit_opts *o,
                            struct tp_calib *out, struct tp_fit_result *res,
                            struct tp_error *err)
{
    struct tp_fit_plans ps;
    if (tp_fit_plans_build(runs, n, base, &ps) != TP_OK) {
        memset(res, 0, sizeof *res);
        return tp_fail(err, TP_ENOMEM, "calibrate: out of memory");
    }
    enum tp_status st = tp_fit_planned(runs, ps.ptr, measured, n, base, o, out, res, err);
    tp_fit_plans_free(&ps);
    return st;
}

/* ---- leave-one-source-out ---------------------------------------------------------------- */

struct cv {
    const struct tp_run *const *runs;
    const struct tp_time_plan *const *plans;
    const double *measured;
    size_t n;
    const struct tp_calib *base;
    const struct tp_fit_opts *o;
    double *held_out;          /* NULL: no folds */
    struct tp_calib *full;     /* the fit to every row (job 0), or NULL */
    struct tp_fit_result *full_res;
    uint32_t *src_ord;         /* per row: its source's number, in order of first appearance */
    size_t *fold_train;        /* per fold: the rows of the sources it fits on */
    size_t n_folds, n_jobs, next; /* jobs: the full fit (when asked), then the folds; fold f
                                     holds out the sources numbered f mod n_folds */
    enum tp_status *status;    /* per job */
    struct tp_error *errs;     /* per job */
    unsigned evals;            /* summed over the folds, for the progress callback */
    pthread_mutex_t lock;
};

struct worker {
    struct cv *cv;
    unsigned last;             /* this worker's fit's count at its last report */
    const struct tp_run **train;
    const struct tp_time_plan **train_plans;
    double *meas;
};

/* A fold's progress into the sum over folds, reported one thread at a time. */
static void fold_progress(void *ctx, unsigned evals)
{
    struct worker *w = ctx;
    struct cv *cv = w->cv;
    pthread_mutex_lock(&cv->lock);
    cv->evals += evals >= w->last ? evals - w->last : evals; /* a smaller count: a new fit */
    w->last = evals;
    cv->o->progress(cv->o->progress_ctx, cv->evals);
    pthread_mutex_unlock(&cv->lock);
}

/* Job f: the full fit, or a fold (fit on the other sources' rows, predict this source's). */
static void run_job(struct worker *w, size_t job)
{
    struct cv *cv = w->cv;
    struct tp_fit_opts o = *cv->o;
    if (o.progress) {
        o.progress = fold_progress;
        o.progress_ctx = w;
        w->last = 0;
    }
    if (cv->full && job == 0) {
        cv->status[0] = tp_fit_planned(cv->runs, cv->plans, cv->measured, cv->n, cv->base, &o,
                                       cv->full, cv->full_res, &cv->errs[0]);
        return;
    }
    size_t f = job - (cv->full != NULL), rank = 0, k = 0;
    for (size_t j = 0; j < cv->n; j++) {
        if (cv->src_ord[j] % cv->n_folds == f)
            continue;
        /* at most fold_rows training rows, evenly spaced */
        if (!tp_evenly_kept(rank++, cv->fold_train[f], cv->o->fold_rows))
            continue;
        w->train[k] = cv->runs[j];
        w->train_plans[k] = cv->plans[j];
        w->meas[k++] = cv->measured[j];
    }
    struct tp_calib fitted;
    struct tp_fit_result res;
    cv->status[job] = tp_fit_planned(w->train, w->train_plans, w->meas, k, cv->base, &o,
                                     &fitted, &res, &cv->errs[job]);
    for (size_t j = 0; j < cv->n && cv->status[job] == TP_OK; j++) {
        if (cv->src_ord[j] % cv->n_folds != f)
            continue;
        struct tp_time t;
        tp_time_planned(cv->plans[j], &fitted, &t);
        cv->held_out[j] = t.tokens_per_s_per_gpu / cv->measured[j] - 1;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct cv *cv = w->cv;
    for (;;) {
        pthread_mutex_lock(&cv->lock);
        size_t job = cv->next < cv->n_jobs ? cv->next++ : SIZE_MAX;
        pthread_mutex_unlock(&cv->lock);
        if (job == SIZE_MAX)
            return NULL;
        run_job(w, job);
    }
}

size_t tp_fit_workers(const struct tp_fit_opts *o, size_t jobs)
{
    long cpus = o->threads ? (long)o->threads : sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = cpus > 0 ? (size_t)cpus : 1;
    if (n > TP_FIT_MAX_WORKERS)
        n = TP_FIT_MAX_WORKERS;
    return n < jobs ? n : jobs;
}

static enum tp_status cv_run(struct cv *cv, struct tp_error *err)
{
    struct worker w[TP_FIT_MAX_WORKERS];
    pthread_t tid[TP_FIT_MAX_WORKERS];
    bool started[TP_FIT_MAX_WORKERS] = {false};
    size_t nw = tp_fit_workers(cv->o, cv->n_jobs);
    size_t n = cv->n ? cv->n : 1;
    enum tp_status st = TP_OK;
    memset(w, 0, sizeof w);
    for (size_t i = 0; i < nw; i++) {
        w[i].cv = cv;
        w[i].train = calloc(n, sizeof *w[i].train);
        w[i].train_plans = calloc(n, sizeof *w[i].train_plans);
        w[i].meas = calloc(n, sizeof *w[i].meas);
        if (!w[i].train || !w[i].train_plans || !w[i].meas)
            st = tp_fail(err, TP_ENOMEM, "calibrate: out of memory");
    }
    /* worker 0 is this thread; a thread that cannot start leaves its folds to the others */
    for (size_t i = 1; i < nw && st == TP_OK; i++)
        started[i] = pthread_create(&tid[i], NULL, worker_main, &w[i]) == 0;
    if (st == TP_OK && nw > 0) /* no job (one source, no full fit): nothing to run */
        worker_main(&w[0]);
    for (size_t i = 1; i < nw; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
    for (size_t i = 0; i < nw; i++) {
        free(w[i].train);
        free(w[i].train_plans);
        free(w[i].meas);
    }
    for (size_t f = 0; f < cv->n_jobs && st == TP_OK; f++) /* the first failing job's error */
        if (cv->status[f] != TP_OK) {
            st = cv->status[f];
            if (err)
                *err = cv->errs[f];
        }
    return st;
}

/* The full fit (full != NULL) and the folds (held_out != NULL) on one pool of threads. */
static enum tp_status fit_jobs(const struct tp_run *const *runs, const double *measured, size_t n,
                               const struct tp_calib *base, const struct tp_fit_opts *o,
                               struct tp_calib *full, struct tp_fit_result *res,
                               double *held_out, struct tp_error *err)
{
    for (size_t i = 0; held_out && i < n; i++)
        held_out[i] = NAN;
    if (full)
        memset(res, 0, sizeof *res);
    struct cv cv;
    memset(&cv, 0, sizeof cv);
    cv.runs = runs;
    cv.measured = measured;
    cv.n = n;
    cv.base = base;
    cv.o = o;
    cv.held_out = held_out;
    cv.full = full;
    cv.full_res = res;
    size_t cap = n + 1;
    cv.src_ord = calloc(cap, sizeof *cv.src_ord);
    cv.fold_train = calloc(cap, sizeof *cv.fold_train);
    cv.status = calloc(cap, sizeof *cv.status);
    cv.errs = calloc(cap, sizeof *cv.errs);
    struct tp_fit_plans ps;
    bool planned = tp_fit_plans_build(runs, n, base, &ps) == TP_OK;
    enum tp_status st = TP_OK;
    if (!cv.src_ord || !cv.fold_train || !cv.status || !cv.errs || !planned ||
        pthread_mutex_init(&cv.lock, NULL) != 0) {
        st = tp_fail(err, TP_ENOMEM, "calibrate: out of memory");
        goto out;
    }
    cv.plans = ps.ptr;
    /* the sources in order of first appearance; one fold per source, or max_folds folds that
       each hold out every max_folds-th source (none with one source: nothing to fit on) */
    size_t n_src = held_out ? tp_source_ordinals(runs, n, cv.src_ord) : 0;
    if (n_src == SIZE_MAX) {
        st = tp_fail(err, TP_ENOMEM, "calibrate: out of memory");
        pthread_mutex_destroy(&cv.lock);
        goto out;
    }
    cv.n_folds = n_src < 2 ? 0 : o->max_folds >= 2 && n_src > o->max_folds ? o->max_folds : n_src;
    for (size_t f = 0; f < cv.n_folds; f++)
        cv.fold_train[f] = n;
    for (size_t i = 0; i < n && cv.n_folds; i++)
        cv.fold_train[cv.src_ord[i] % cv.n_folds]--;
    cv.n_jobs = cv.n_folds + (full != NULL);
    st = cv_run(&cv, err);
    if (full && st == TP_OK) {
        res->folds = (uint32_t)cv.n_folds;
        for (size_t f = 0; f < cv.n_folds; f++) /* a fold fitted on fewer rows than it had */
            if (o->fold_rows && cv.fold_train[f] > o->fold_rows)
                res->fold_rows = o->fold_rows;
    }
    pthread_mutex_destroy(&cv.lock);
out:
    if (planned)
        tp_fit_plans_free(&ps);
    free(cv.src_ord);
    free(cv.fold_train);
    free(cv.status);
    free(cv.errs);
    return st;
}

enum tp_status tp_calib_cross_validate(const struct tp_run *const *runs, const double *measured,
                                       size_t n, const struct tp_calib *base,
                                       const struct tp_fit_opts *o, double *held_out,
                                       struct tp_error *err)
{
    return fit_jobs(runs, measured, n, base, o, NULL, NULL, held_out, err);
}

enum tp_status tp_calib_fit_validate(const struct tp_run *const *runs, const double *measured,
                                     size_t n, const struct tp_calib *base,
                                     const struct tp_fit_opts *o, struct tp_calib *out,
                                     struct tp_fit_result *res, double *held_out,
                                     struct tp_error *err)
{
    return fit_jobs(runs, measured, n, base, o, out, res, held_out, err);
}

/* ---- the spread of held-out errors between and within sources ----------------------------- */

/* One-way random effects by the method of moments (DerSimonian & Laird 1986, "Meta-analysis in
   clinical trials", Controlled Clinical Trials 7:177, eq. 3, with each source's mean as a
   study): tau^2 = var(source means) - within^2 x mean(1 / n_s), floored at 0. */
enum tp_status tp_range_spread(const double *x, const uint32_t *source, size_t n,
                               struct tp_range_spread *out)
{
    memset(out, 0, sizeof *out);
    out->mu = out->within = out->tau = NAN;
    double *sum = calloc(n ? n : 1, sizeof *sum), *cnt = calloc(n ? n : 1, sizeof *cnt);
    if (!sum || !cnt) {
        free(sum);
        free(cnt);
        return TP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && source[i] < n) {
            sum[source[i]] += x[i];
            cnt[source[i]]++;
            out->rows++;
        }
    double mu = 0, ss = 0, inv_n = 0;
    for (size_t s = 0; s < n; s++)
        if (cnt[s] > 0) {
            sum[s] /= cnt[s]; /* now the source's mean */
            mu += sum[s];
            inv_n += 1 / cnt[s];
            out->sources++;
        }
    if (out->sources) {
        mu /= (double)out->sources;
        inv_n /= (double)out->sources;
        out->mu = mu;
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && source[i] < n)
            ss += (x[i] - sum[source[i]]) * (x[i] - sum[source[i]]);
    if (out->rows > out->sources)
        out->within = sqrt(ss / (double)(out->rows - out->sources));
    if (out->sources >= 2) {
        double between = 0;
        for (size_t s = 0; s < n; s++)
            if (cnt[s] > 0)
                between += (sum[s] - mu) * (sum[s] - mu);
        between /= (double)(out->sources - 1);
        double w2 = isfinite(out->within) ? out->within * out->within : 0;
        out->tau = sqrt(fmax(0, between - w2 * inv_n));
    }
    free(sum);
    free(cnt);
    return TP_OK;
}
