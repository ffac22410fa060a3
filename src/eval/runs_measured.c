/*
 * runs_measured.c - a runs-file row's measured throughput in tokens/s per GPU, from whichever
 * figure the row gives (docs/runs-file.md, "Throughput, converted consistently"); the FLOP
 * conventions its TFLOP/s and MFU figures count are flop_conventions.c's table.
 */
#include "eval_internal.h"

#include <math.h>
#include <string.h>

static double measured_slots_per_s(const struct tp_run *run, const char **how)
{
    *how = "";
    if (isfinite(run->tokens_per_s_per_gpu) && run->tokens_per_s_per_gpu > 0) {
        *how = "tokens/s";
        return run->tokens_per_s_per_gpu;
    }
    double n = run->cluster.n_gpus, seq = (double)run->job.seq;
    if (isfinite(run->step_time_s) && run->step_time_s > 0 && run->global_batch > 0 && n > 0) {
        *how = "step time";
        return run->global_batch * seq / run->step_time_s / n;
    }
    if (isfinite(run->samples_per_s) && run->samples_per_s > 0 && n > 0) {
        *how = "samples/s";
        return run->samples_per_s * seq / n;
    }
    /* a whole run's tokens over its wall-clock: start-up, evaluation and checkpoints included,
       so a lower bound on the steady state */
    if (isfinite(run->wall_clock_h) && run->wall_clock_h > 0 && isfinite(run->total_tokens) &&
        run->total_tokens > 0 && n > 0) {
        *how = "wall-clock";
        return run->total_tokens / (run->wall_clock_h * 3600) / n;
    }
    double per_token = tp_convention_flops_per_token(&run->model, run->job.seq,
                                                     run->tflops_convention);
    if (per_token <= 0)
        return NAN;
    if (isfinite(run->tflops_per_gpu) && run->tflops_per_gpu > 0) {
        *how = "TFLOP/s";
        return run->tflops_per_gpu * 1e12 / per_token;
    }
    bool hw = strcmp(run->tflops_convention, TP_FLOP_CONVENTIONS[TP_CONV_MEGATRON_HFU_2021]) == 0;
    double frac = hw ? run->hfu : run->mfu;
    if (isfinite(frac) && frac > 0) {
        *how = hw ? "HFU" : "MFU";
        return frac * run->cluster.gpu.peak_flops[TP_BF16] / per_token;
    }
    return NAN;
}

/* The measured throughput in the tokens the row's job counts: a tokens/s column or a run's
   tokens over its wall-clock are taken as counted; step times, samples/s and FLOP rates
   measure every token slot, so they are scaled by the job's trainable share. */
bool tp_run_assumed(const struct tp_run *run)
{
    return run->layout_searched || run->heads_assumed;
}

double tp_run_measured_tokens_per_s(const struct tp_run *run, const char **how)
{
    const char *unused;
    how = how ? how : &unused;
    double slots = measured_slots_per_s(run, how);
    bool counted = strcmp(*how, "tokens/s") == 0 || strcmp(*how, "wall-clock") == 0;
    return counted ? slots : slots * tp_job_trainable_frac(&run->job);
}
