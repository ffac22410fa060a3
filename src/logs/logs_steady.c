/*
 * logs_steady.c - the steady state of a parsed log: warm-up skipped, medians of the per-step
 * series, outliers dropped, and the figures that follow from them.
 */
#include "logs_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------------------------------- */
/* Steady state                                                                               */
/* ----------------------------------------------------------------------------------------- */

void tp_log_steady_opts_init(struct tp_log_steady_opts *o)
{
    memset(o, 0, sizeof *o);
    o->skip_warmup = -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); NaN when n == 0. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { N_SERIES = 6 };
static const char *const SERIES[N_SERIES] = {"step time", "tokens/s per GPU", "tokens/s",
                                             "samples/s", "TFLOP/s per GPU", "MFU"};

static double series(const struct tp_log_step *s, int k)
{
    switch (k) {
    case 0: return s->step_s;
    case 1: return s->tokens_per_s_per_gpu;
    case 2: return s->tokens_per_s;
    case 3: return s->samples_per_s;
    case 4: return s->tflops_per_gpu;
    default: return s->mfu;
    }
}

/* Mean of one field over the kept steps; NaN when none has it. */
static double mean_of(const struct tp_log_step *steps, const bool *keep, size_t n,
                      double (*get)(const struct tp_log_step *))
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i] && isfinite(get(&steps[i]))) {
            sum += get(&steps[i]);
            k++;
        }
    return k ? sum / (double)k : NAN;
}

static double get_step(const struct tp_log_step *s) { return s->step_s; }
static double get_tok(const struct tp_log_step *s) { return s->tokens_per_s; }
static double get_tokg(const struct tp_log_step *s) { return s->tokens_per_s_per_gpu; }
static double get_smp(const struct tp_log_step *s) { return s->samples_per_s; }
static double get_tfl(const struct tp_log_step *s) { return s->tflops_per_gpu; }
static double get_mfu(const struct tp_log_step *s) { return s->mfu; }

/* Tokens/s, per GPU, samples/s and step time from what is known (logged or derived). */
static void derive(struct tp_log_steady *o)
{
    double tps = o->tokens_per_step;
    /* the log's own rate, kept when the tokens per step replace it: a basis switch the CLI
       names (HF/Axolotl count the tokens they train on, the slots count every position) */
    o->logged_tokens_per_s_per_gpu = o->tokens_per_s_per_gpu;
    if (!isfinite(o->logged_tokens_per_s_per_gpu) && isfinite(o->tokens_per_s) && o->gpus)
        o->logged_tokens_per_s_per_gpu = o->tokens_per_s / o->gpus;
    if (tps > 0 && isfinite(o->step_s_mean)) {
        o->tokens_from_step = true;
        o->tokens_per_s = tps / o->step_s_mean;
        if (o->gpus)
            o->tokens_per_s_per_gpu = o->tokens_per_s / o->gpus;
        tp_snprintf(o->how, sizeof o->how, "tokens/s = tokens per step / mean step time");
    }
    if (!isfinite(o->tokens_per_s) && isfinite(o->tokens_per_s_per_gpu) && o->gpus)
        o->tokens_per_s = o->tokens_per_s_per_gpu * o->gpus;
    if (!isfinite(o->tokens_per_s) && isfinite(o->samples_per_s) && o->seq)
        o->tokens_per_s = o->samples_per_s * (double)o->seq;
    if (!isfinite(o->tokens_per_s_per_gpu) && isfinite(o->tokens_per_s) && o->gpus)
        o->tokens_per_s_per_gpu = o->tokens_per_s / o->gpus;
    if (!isfinite(o->step_s_mean) && tps > 0 && isfinite(o->tokens_per_s)) {
        o->step_s_mean = tps / o->tokens_per_s;
        o->step_time_derived = true;
    }
    if (o->global_batch && isfinite(o->step_s_mean) && !o->from_summary)
        o->samples_per_s = (double)o->global_batch / o->step_s_mean;
    else if (!isfinite(o->samples_per_s) && isfinite(o->tokens_per_s) && o->seq)
        o->samples_per_s = o->tokens_per_s / (double)o->seq;
    if (!o->how[0])
        tp_snprintf(o->how, sizeof o->how, "%s", o->step_time_derived
                     ? "the logged rates; step time = tokens per step / tokens/s"
                     : "means of the logged figures");
}

static enum tp_status from_summary(const struct tp_log_info *info, struct tp_log_steady *o,
                                   struct tp_error *err)
{
    if (!isfinite(info->train_runtime_s))
        return tp_fail(err, TP_EINVAL, "the log has %zu step lines but no step time or "
                       "throughput figure", o->n_steps);
    o->from_summary = true;
    if (isfinite(info->train_steps_per_s) && info->train_steps_per_s > 0)
        o->step_s_mean = 1 / info->train_steps_per_s;
    else if (info->total_steps)
        o->step_s_mean = info->train_runtime_s / (double)info->total_steps;
    o->samples_per_s = info->train_samples_per_s;
    o->tokens_per_s_per_gpu = info->train_tokens_per_s_per_gpu;
    if (isfinite(o->tokens_per_s_per_gpu) && o->gpus)
        o->tokens_per_s = o->tokens_per_s_per_gpu * o->gpus;
    o->n_used = o->n_steps;
    tp_snprintf(o->rule, sizeof o->rule, "no per-step timing in the log: the Trainer's "
             "end-of-training summary (train_runtime %.1f s, warm-up included)",
             info->train_runtime_s);
    tp_snprintf(o->how, sizeof o->how, "the Trainer's summary (whole-run averages)");
    derive(o);
    return TP_OK;
}

bool tp_log_is_outlier(const struct tp_log_steady *o, const struct tp_log_step *s)
{
    for (int k = 0; k < N_SERIES; k++)
        if (o->basis && strcmp(o->basis, SERIES[k]) == 0) {
            double x = series(s, k);
            return isfinite(x) && fabs(x - o->basis_median) > o->basis_threshold;
        }
    return false;
}

/* What the steady state starts from: the GPUs, batch and tokens per step the options or the
   log give, the peak memory over the log, everything else unknown (NaN). */
static void steady_init(const struct tp_log_step *steps, size_t n, const struct tp_log_info *info,
                        const struct tp_log_steady_opts *opts, struct tp_log_steady *o)
{
    memset(o, 0, sizeof *o);
    o->n_steps = n;
    o->basis = "";
    o->basis_median = o->basis_threshold = NAN;
    o->step_s_median = o->step_s_mean = o->tokens_per_s = o->tokens_per_s_per_gpu = NAN;
    o->samples_per_s = o->tflops_per_gpu = o->mfu = o->mem_gib = o->loss_last = NAN;
    o->gpus = opts->gpus ? opts->gpus : info->gpus;
    o->global_batch = opts->global_batch ? opts->global_batch : info->global_batch;
    o->seq = opts->seq ? opts->seq : info->seq;
    if (opts->global_batch || opts->seq)
        o->tokens_per_step = o->global_batch && o->seq
                                 ? (double)o->global_batch * (double)o->seq
                                 : info->tokens_per_step;
    else
        o->tokens_per_step = info->tokens_per_step;
    tp_logs_set_max(&o->mem_gib, info->mem_gib);
    for (size_t i = 0; i < n; i++)
        tp_logs_set_max(&o->mem_gib, steps[i].mem_gib);
    o->mem_kind = isfinite(o->mem_gib) ? info->mem_kind : NULL;
    o->mem_alloc_gib = info->mem_alloc_gib;
    o->logged_tokens_per_s_per_gpu = NAN;
}

/* The outlier test's centre and width over the steps after warm-up (median and MAD of the
   basis series, values in v), then which steps are kept and the figures over them. */
static void steady_figures(const struct tp_log_step *steps, size_t n, size_t w, int k,
                           double *v, bool *keep, struct tp_log_steady *o)
{
    size_t m = 0;
    for (size_t i = w; i < n; i++)
        if (isfinite(series(&steps[i], k)))
            v[m++] = series(&steps[i], k);
    double med = median(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = fabs(v[i] - med);
    double mad = median(v, m);
    double sd = fmax(1.4826 * mad, 0.01 * fabs(med));
    o->basis_median = med;
    o->basis_threshold = 3 * sd;
    m = 0;
    for (size_t i = w; i < n; i++) {
        keep[i] = !tp_log_is_outlier(o, &steps[i]);
        if (!keep[i])
            o->n_outliers++;
        else if (m++ == 0)
            o->first_step = steps[i].step;
        if (keep[i]) {
            o->last_step = steps[i].step;
            if (isfinite(steps[i].loss))
                o->loss_last = steps[i].loss;
        }
    }
    o->n_used = m;
    size_t ms = 0;
    for (size_t i = w; i < n; i++)
        if (keep[i] && isfinite(steps[i].step_s))
            v[ms++] = steps[i].step_s;
    o->step_s_median = median(v, ms);
    o->step_s_mean = mean_of(steps, keep, n, get_step);
    o->tokens_per_s = mean_of(steps, keep, n, get_tok);
    o->tokens_per_s_per_gpu = mean_of(steps, keep, n, get_tokg);
    o->samples_per_s = mean_of(steps, keep, n, get_smp);
    o->tflops_per_gpu = mean_of(steps, keep, n, get_tfl);
    o->mfu = mean_of(steps, keep, n, get_mfu);
}

/* The rule line: how many warm-up steps were skipped and the outlier threshold used. */
static void steady_rule(size_t w, int k, struct tp_log_steady *o)
{
    const char *unit = k == 0 ? " s" : k == 5 ? "%" : "";
    double scale = k == 5 ? 100 : 1;
    char warm[128];
    if (o->warmup_default)
        tp_snprintf(warm, sizeof warm, "the first 10%% of the logged steps (at least 1; none "
                    "under 5 steps): %zu skipped", w);
    else
        tp_snprintf(warm, sizeof warm, "%zu skipped, as asked", w);
    tp_snprintf(o->rule, sizeof o->rule, "warm-up: %s; outliers: %s more than 3 x max(1.4826 x "
                "MAD, 1%% of the median) = %.4g%s from the median %.4g%s: %zu dropped", warm,
                o->basis, o->basis_threshold * scale, unit, o->basis_median * scale, unit,
                o->n_outliers);
}

enum tp_status tp_log_steady_state(const struct tp_log_step *steps, size_t n,
                                   const struct tp_log_info *info,
                                   const struct tp_log_steady_opts *opts,
                                   struct tp_log_steady *out, struct tp_error *err)
{
    struct tp_log_steady_opts dflt;
    if (!opts) {
        tp_log_steady_opts_init(&dflt);
        opts = &dflt;
    }
    struct tp_log_steady *o = out;
    steady_init(steps, n, info, opts, o);
    if (n == 0)
        return from_summary(info, o, err);

    size_t w;
    if (opts->skip_warmup >= 0) {
        if ((uint64_t)opts->skip_warmup >= n)
            return tp_fail(err, TP_EINVAL, "skipping %lld warm-up steps leaves none of the %zu "
                           "logged", (long long)opts->skip_warmup, n);
        w = (size_t)opts->skip_warmup;
    } else {
        o->warmup_default = true;
        w = n >= 5 ? (n + 9) / 10 : 0;
    }
    o->n_warmup = w;

    int k = 0;
    for (; k < N_SERIES; k++) {
        size_t have = 0;
        for (size_t i = w; i < n; i++)
            have += isfinite(series(&steps[i], k));
        if (have)
            break;
    }
    if (k == N_SERIES)
        return from_summary(info, o, err);
    o->basis = SERIES[k];

    double *v = malloc(sizeof(double) * (n - w));
    bool *keep = calloc(n, sizeof *keep);
    if (!v || !keep) {
        free(v);
        free(keep);
        return tp_fail(err, TP_ENOMEM, "out of memory");
    }
    steady_figures(steps, n, w, k, v, keep, o);
    free(v);
    free(keep);
    steady_rule(w, k, o);
    derive(o);
    return TP_OK;
}

