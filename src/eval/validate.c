/*
 * validate.c - a measured run against its prediction, and error statistics (trainplan
 * validate, trainplan calibrate, bench_time).
 *
 * Throughput is compared in tokens/s per GPU, the measured figure converted from whatever the
 * row gives (tp_run_measured_tokens_per_s); the same comparison is also expressed in the row's
 * own unit so a user can check it against the source's table.  Memory is compared as the worst
 * pipeline stage's total against the row's peak (GiB).
 */
#include "eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

enum tp_status tp_run_evaluate(const struct tp_run *run, const struct tp_calib *cal,
                               struct tp_run_eval *out)
{
    memset(out, 0, sizeof *out);
    if (!run || !cal ||
        tp_run_check(&run->model, &run->cluster, &run->job, &run->layout, cal, NULL) != TP_OK) {
        out->predicted_tokens_per_s_per_gpu = out->predicted_step_s = NAN;
        out->measured_tokens_per_s_per_gpu = out->err = out->predicted_mem_gib = NAN;
        out->predicted_native = out->measured_native = out->measured_mem_gib = NAN;
        out->mem_err = NAN;
        out->measured_from = out->native_unit = "";
        return TP_EINVAL;
    }
    struct tp_eval_opts o;
    tp_eval_opts_init(&o);
    struct tp_evaluation ev;
    tp_evaluate(&run->model, &run->cluster, &run->job, &run->layout, cal, &o, &ev, NULL);
    out->time = ev.time;
    const struct tp_time *t = &out->time;
    out->predicted_tokens_per_s_per_gpu = t->tokens_per_s_per_gpu;
    out->predicted_step_s = t->step_s;
    out->measured_tokens_per_s_per_gpu = tp_run_measured_tokens_per_s(run, &out->measured_from);
    out->err = out->measured_tokens_per_s_per_gpu > 0
                   ? out->predicted_tokens_per_s_per_gpu / out->measured_tokens_per_s_per_gpu - 1
                   : NAN;
    /* the row's own unit */
    out->native_unit = "tokens/s/GPU";
    out->predicted_native = out->predicted_tokens_per_s_per_gpu;
    out->measured_native = out->measured_tokens_per_s_per_gpu;
    double per_token = tp_convention_flops_per_token(&run->model, run->job.seq,
                                                     run->tflops_convention);
    if (strcmp(out->measured_from, "step time") == 0) {
        out->native_unit = "s/step";
        out->measured_native = run->step_time_s;
        out->predicted_native = run->step_time_s / (1 + out->err);
    } else if (strcmp(out->measured_from, "TFLOP/s") == 0) {
        out->native_unit = "TFLOP/s/GPU";
        out->measured_native = run->tflops_per_gpu;
        out->predicted_native = t->slots_per_s_per_gpu * per_token / 1e12;
    } else if (strcmp(out->measured_from, "MFU") == 0 || strcmp(out->measured_from, "HFU") == 0) {
        out->native_unit = strcmp(out->measured_from, "MFU") == 0 ? "MFU %" : "HFU %";
        out->measured_native = 100 * (out->native_unit[0] == 'M' ? run->mfu : run->hfu);
        out->predicted_native = 100 * t->slots_per_s_per_gpu * per_token /
                                run->cluster.gpu.peak_flops[TP_BF16];
    }
    out->predicted_mem_gib = tp_memory_as(&ev.memory, run->mem_kind) / GIB; /* like with like */
    out->predicted_fits = ev.memory.fits;
    out->predicted_verdict = ev.memory.verdict;
    out->measured_oom = run->oom;
    out->measured_mem_gib = run->mem_gib > 0 ? run->mem_gib : NAN;
    out->mem_err = out->measured_mem_gib > 0 ? out->predicted_mem_gib / out->measured_mem_gib - 1
                                             : NAN;
    out->domain = ev.domain;
    tp_snprintf(out->domain_note, sizeof out->domain_note, "%s", ev.outside);
    out->range = ev.range;
    double m = out->measured_tokens_per_s_per_gpu, p = out->predicted_tokens_per_s_per_gpu;
    out->in_range = m > 0 && m >= p * out->range.lo && m <= p * out->range.hi;
    return TP_OK;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) (n > 0), interpolating between order statistics. */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;
    return i + 1 < n ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

void tp_err_stats(const double *err, size_t n, double *scratch, struct tp_err_stats *out)
{
    memset(out, 0, sizeof *out);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(err[i]))
            scratch[k++] = err[i];
    out->n = k;
    if (k == 0) {
        out->median_abs = out->p90_abs = out->bias = NAN;
        return;
    }
    qsort(scratch, k, sizeof scratch[0], by_value);
    out->bias = quantile(scratch, k, 0.5);
    for (size_t i = 0; i < k; i++)
        scratch[i] = fabs(scratch[i]);
    qsort(scratch, k, sizeof scratch[0], by_value);
    out->median_abs = quantile(scratch, k, 0.5);
    out->p90_abs = quantile(scratch, k, 0.9);
}
