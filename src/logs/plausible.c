/*
 * plausible.c - what a measured figure can physically be.  A training log or a runs file is
 * read as the user gave it; a negative, zero or impossibly large step time, rate, TFLOP/s, MFU
 * or memory figure is dropped (NaN, "not stated") and counted, so that no derived figure
 * (tokens/s, GPU-hours, cost, a runs-file row) inherits it and the CLI can say how many went.
 */
#include "internal.h"

#include <math.h>

/* The largest dense peak and HBM capacity of any catalog GPU: no GPU logs more. */
static void catalog_limits(double *peak, double *hbm)
{
    *peak = *hbm = 0;
    for (size_t i = 0; i < tp_gpu_count(); i++) {
        const struct tp_gpu *g = tp_gpu_get(i);
        for (int d = 0; d < TP_DTYPE_COUNT; d++)
            *peak = g->peak_flops[d] > *peak ? g->peak_flops[d] : *peak;
        *hbm = g->hbm_bytes > *hbm ? g->hbm_bytes : *hbm;
    }
}

/* Keeps v when it is NaN (not stated) or finite in (0, max]; else drops it and counts it. */
static void keep_if(double *v, double max, size_t *dropped)
{
    if (isnan(*v) || (isfinite(*v) && *v > 0 && *v <= max))
        return;
    *v = NAN;
    ++*dropped;
}

/* A time: NaN, or in [1 us, max] (one kernel launch takes microseconds: no step is shorter). */
static void keep_time(double *v, double max, size_t *dropped)
{
    if (isnan(*v) || (*v >= 1e-6 && *v <= max))
        return;
    *v = NAN;
    ++*dropped;
}

size_t tp_log_drop_implausible(struct tp_log_step *steps, size_t n, struct tp_log_info *info)
{
    double peak, hbm;
    catalog_limits(&peak, &hbm);
    size_t dropped = 0;
    /* tokens/s: below the fastest catalog GPU's peak over 6 FLOP per token of a 10^4-parameter
       model (6N, Kaplan 2020), far beyond any language model a log could come from */
    double tps_max = peak / 6e4, gib_max = 2 * hbm / 1073741824.0;
    for (size_t i = 0; i < n; i++) {
        struct tp_log_step *s = &steps[i];
        keep_time(&s->step_s, 1e7, &dropped);
        keep_if(&s->tokens_per_s_per_gpu, tps_max, &dropped);
        keep_if(&s->tokens_per_s, tps_max * 1e7, &dropped); /* up to 10^7 GPUs */
        keep_if(&s->samples_per_s, tps_max * 1e7, &dropped);
        keep_if(&s->tflops_per_gpu, peak / 1e12, &dropped);
        keep_if(&s->mfu, 1.0, &dropped); /* model FLOPs cannot exceed the peak */
        keep_if(&s->mem_gib, gib_max, &dropped);
        if (!isfinite(s->loss)) /* NaN losses are logged by diverged runs: kept as unknown */
            s->loss = NAN;
    }
    keep_if(&info->mem_gib, gib_max, &dropped);
    keep_if(&info->mem_alloc_gib, gib_max, &dropped);
    keep_time(&info->train_runtime_s, 1e14, &dropped);
    keep_if(&info->train_samples_per_s, tps_max * 1e7, &dropped);
    keep_if(&info->train_steps_per_s, 1e6, &dropped);
    keep_if(&info->train_tokens_per_s_per_gpu, tps_max, &dropped);
    if (!(info->tokens_per_step > 0 && isfinite(info->tokens_per_step)))
        info->tokens_per_step = 0;
    info->n_implausible += dropped;
    return dropped;
}
