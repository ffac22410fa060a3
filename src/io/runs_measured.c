/*
 * runs_measured.c - a runs-file row's measured throughput in tokens/s per GPU, from whichever
 * figure the row gives (docs/runs-file.md, "Throughput, converted consistently"), and the FLOP
 * conventions its TFLOP/s and MFU figures count.
 */
#include "runs_internal.h"

#include <math.h>
#include <string.h>

double tp_convention_flops_per_token(const struct tp_model *m, uint64_t seq, const char *conv)
{
    struct tp_flops f;
    if (!conv || tp_flops_per_token(m, seq, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f, NULL) != TP_OK)
        return 0;
    double L = m->n_layers, h = m->hidden, s = (double)seq, V = m->vocab;
    if (strcmp(conv, "megatron-hfu-2021") == 0) /* [NAR21] eq. 3: counts the recompute forward */
        return 96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
    if (strcmp(conv, "korthikanti-mfu") == 0) /* [KOR22]: model FLOPs, no recompute */
        return f.narayanan_2021;
    if (strcmp(conv, "megatron-core") == 0 || strcmp(conv, "nemo-model") == 0)
        return f.megatron_2023; /* 3x forward, full (non-causal) attention square, LM head */
    if (strcmp(conv, "llm-foundry") == 0) /* 6N + 12 L d s, N with embeddings */
        return f.palm;
    if (strcmp(conv, "torchtitan") == 0) /* 6 N_noemb + 12 L H Q T */
        return f.torchtitan;
    if (strcmp(conv, "dgxc-formula") == 0) {
        double g = m->n_kv_heads, a = m->n_heads, ffn = m->ffn;
        return 12 * L * h * h * (1 + g / a + s / h) + 18 * L * h * ffn + 6 * V * h;
    }
    return 0;
}

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
    bool hw = strcmp(run->tflops_convention, "megatron-hfu-2021") == 0;
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
