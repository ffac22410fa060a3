/*
 * plausible.c - what a measured figure can physically be.  A training log or a runs file is
 * read as the user gave it.  In a log, a negative, zero or impossibly large step time, rate,
 * TFLOP/s, MFU or memory figure is dropped (NaN, "not stated") and counted, so that no derived
 * figure (tokens/s, GPU-hours, cost, a runs-file row) inherits it and the CLI can say how many
 * went.  In a runs file, the same bounds, now against the row's own GPU, make the row an error
 * naming the column (tp_run_plausible): a row is one measurement, not a series to clean.
 */
#include "logs_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* The bounds both readers use: memory up to twice the largest HBM (a GB/GiB mix-up, reserved
   beyond allocated), step times from one kernel launch (1 us) to 10^7 s. */
#define MEM_SLACK 2.0
#define STEP_MIN_S 1e-6
#define STEP_MAX_S 1e7

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
    if (isnan(*v) || (*v >= STEP_MIN_S && *v <= max))
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
    double tps_max = peak / 6e4, gib_max = MEM_SLACK * hbm / 1073741824.0;
    for (size_t i = 0; i < n; i++) {
        struct tp_log_step *s = &steps[i];
        keep_time(&s->step_s, STEP_MAX_S, &dropped);
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

/* A fraction of the peak (MFU, HFU): in (0, 1]; a figure in (1, 100] is a percent typed in a
   column of fractions. */
static enum tp_status fraction(const char *col, double v, struct tp_error *err)
{
    if (isnan(v) || v == 0 || (v > 0 && v <= 1)) /* 0: printed as no figure, not compared */
        return TP_OK;
    if (v > 1 && v <= 100)
        return tp_fail(err, TP_EINVAL, "%s %g is not a fraction of the peak in (0, 1] (a "
                       "percent? write %g)", col, v, v / 100);
    return tp_fail(err, TP_EINVAL, "%s %g is not a fraction of the peak in (0, 1]", col, v);
}

/* The tokens/s per GPU a row's figure `v` of column `col` implies (`tps`), against what the
   part can do: a token costs at least 2 FLOPs per active parameter (the forward alone, Kaplan
   et al. 2020 section 2.1: C_forward = 2N), so no run exceeds peak / 2N; below 10^-6 of what
   6N per token at the peak gives, a figure is a typo or a unit slip (1e-300, seconds as
   hours^-1), not a training run. */
static enum tp_status rate(const struct tp_run *run, const char *col, double v, double tps,
                           double peak, double n_active, struct tp_error *err)
{
    if (isnan(v) || v == 0) /* a rate printed as 0: rounded below the source's precision
                                   (llm-foundry's samples/s of its largest models), no figure */
        return TP_OK;
    double hi = peak / (2 * n_active), lo = 1e-6 * peak / (6 * n_active);
    if (tps > hi)
        return tp_fail(err, TP_EINVAL, "%s %g means %.4g tokens/s per GPU, beyond what a %s "
                       "can do for a model of %.4g active parameters (%.4g at its %s peak, 2 "
                       "FLOPs per parameter)", col, v, tps, run->cluster.gpu.key, n_active, hi,
                       tp_name(TP_NAMES_PRECISION, (int)run->job.precision));
    if (tps < lo)
        return tp_fail(err, TP_EINVAL, "%s %g means %.4g tokens/s per GPU, under 10^-6 of "
                       "what a %s does at its peak (a typo or unit slip?)", col, v, tps,
                       run->cluster.gpu.key);
    return TP_OK;
}

/* Two figures of one measurement: `v` (column `col`: TFLOP/s, or a peak fraction meaning
   tf_lo..tf_hi TFLOP/s as the source took the 16-bit or the precision's peak) against the
   TFLOP/s the row's tokens/s mean under its convention (`implied`). */
static enum tp_status agree(const struct tp_run *run, const char *col, double v, double tf_lo,
                            double tf_hi, double implied, struct tp_error *err)
{
    if (!(v > 0 && implied > 0) || (tf_lo <= 2 * implied && 2 * tf_hi >= implied))
        return TP_OK;
    return tp_fail(err, TP_EINVAL, "%s %g disagrees with tokens_per_s_per_gpu %g: under the "
                   "%s convention they mean %.4g and %.4g TFLOP/s per GPU, more than a factor "
                   "of 2 apart", col, v, run->tokens_per_s_per_gpu, run->tflops_convention,
                   tf_lo > 2 * implied ? tf_lo : tf_hi, implied);
}

enum tp_status tp_run_plausible(const struct tp_run *run, struct tp_error *err)
{
    const struct tp_gpu *g = &run->cluster.gpu;
    double hbm = g->hbm_bytes;
    TRY(fraction("mfu", run->mfu, err));
    TRY(fraction("hfu", run->hfu, err));
    /* TFLOP/s under any convention: at most the part's dense peak in the row's precision (the
       16-bit peak for fp32 rows, which mixed precision runs on) */
    enum tp_dtype d = tp_prec_gemm_dtype(run->job.precision);
    double cap = g->peak_flops[d] > g->peak_flops[TP_BF16] ? g->peak_flops[d]
                                                           : g->peak_flops[TP_BF16];
    double tf = run->tflops_per_gpu;
    if (!isnan(tf) && !(tf >= 0 && tf * 1e12 <= cap))
        return tp_fail(err, TP_EINVAL, "tflops_per_gpu %g is not in (0, %.0f], the %s's dense "
                       "peak in %s", tf, cap / 1e12, g->key, tp_name(TP_NAMES_PRECISION, (int)run->job.precision));
    double mem = run->mem_gib, mem_max = MEM_SLACK * hbm / 1073741824.0;
    if (!isnan(mem) && !(mem > 0 && mem <= mem_max))
        return tp_fail(err, TP_EINVAL, "mem_per_gpu_gib %g is not in (0, %.0f], twice the %s's "
                       "memory", mem, mem_max, g->key);
    double st = run->step_time_s;
    if (!isnan(st) && !(st >= STEP_MIN_S && st <= STEP_MAX_S))
        return tp_fail(err, TP_EINVAL, "step_time_s %g is not in [1e-06, 1e+07] s", st);
    struct tp_params p;
    tp_count_params(&run->model, &p);
    double n = run->cluster.n_gpus, seq = (double)run->job.seq, na = (double)p.active;
    if (!(na > 0 && n > 0 && seq > 0))
        return TP_OK;
    /* rates against the same peak as TFLOP/s: the precision's */
    TRY(rate(run, "tokens_per_s_per_gpu", run->tokens_per_s_per_gpu, run->tokens_per_s_per_gpu,
             cap, na, err));
    TRY(rate(run, "step_time_s", st, run->global_batch * seq / st / n, cap, na, err));
    TRY(rate(run, "samples_per_s", run->samples_per_s, run->samples_per_s * seq / n, cap, na,
             err));
    double wall = run->wall_clock_h * 3600;
    if (wall > 0)
        TRY(rate(run, "total_tokens", run->total_tokens, run->total_tokens / wall / n, cap, na,
                 err));
    /* tokens/s consistent with the row's TFLOP/s and MFU: the conventions of the shipped
       sources reproduce their own pairs within 0.58..1.00 (bench_time's "FLOP conventions"
       table), so a factor of 2 apart is a wrong cell or a wrong convention, not rounding */
    double f = tp_convention_flops_per_token(&run->model, run->job.seq, run->tflops_convention);
    double share = tp_job_trainable_frac(&run->job), tps = run->tokens_per_s_per_gpu;
    if (f > 0 && share > 0 && tps > 0) {
        double implied = tps / share * f / 1e12, bf16 = g->peak_flops[TP_BF16] / 1e12;
        bool hw = strcmp(run->tflops_convention, "megatron-hfu-2021") == 0;
        double frac = hw ? run->hfu : run->mfu;
        TRY(agree(run, "tflops_per_gpu", tf, tf, tf, implied, err));
        /* MFU against the 16-bit peak, or (FP8 rows of llm-foundry and torchtitan) the
           precision's */
        TRY(agree(run, hw ? "hfu" : "mfu", frac, frac * bf16, frac * cap / 1e12, implied, err));
    }
    return TP_OK;
}
