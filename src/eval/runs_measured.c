/*
 * runs_measured.c - a runs-file row's measured throughput in tokens/s per GPU, from whichever
 * figure the row gives (docs/runs-file.md, "Throughput, converted consistently"), and the FLOP
 * conventions its TFLOP/s and MFU figures count.
 */
#include "eval_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* The FLOP conventions a runs file's tflops_convention column names (docs/runs-file.md), each
   with what it counts per token; "other" counts nothing the model can reproduce. */
const char *const TP_FLOP_CONVENTIONS[TP_CONV_COUNT] = {
    [TP_CONV_MEGATRON_HFU_2021] = "megatron-hfu-2021",
    [TP_CONV_KORTHIKANTI_MFU] = "korthikanti-mfu",
    [TP_CONV_MEGATRON_CORE] = "megatron-core",
    [TP_CONV_NEMO_MODEL] = "nemo-model",
    [TP_CONV_LLM_FOUNDRY] = "llm-foundry",
    [TP_CONV_TORCHTITAN] = "torchtitan",
    [TP_CONV_DGXC_FORMULA] = "dgxc-formula",
    [TP_CONV_OTHER] = "other",
};
static_assert(sizeof TP_FLOP_CONVENTIONS / sizeof TP_FLOP_CONVENTIONS[0] == TP_CONV_COUNT,
              "TP_FLOP_CONVENTIONS: one name per enum tp_flop_convention value");

/* [NAR21] eq. 3: counts the recompute forward */
static double hfu_2021(const struct tp_model *m, double s, const struct tp_flops *f)
{
    (void)f;
    return tp_flops_nar21(m, s, 96, 16);
}
/* [KOR22]: model FLOPs, no recompute */
static double korthikanti(const struct tp_model *m, double s, const struct tp_flops *f)
{
    (void)m, (void)s;
    return f->narayanan_2021;
}
/* 3x forward, full (non-causal) attention square, LM head */
static double megatron_core(const struct tp_model *m, double s, const struct tp_flops *f)
{
    (void)m, (void)s;
    return f->megatron_2023;
}
/* 6N + 12 L d s, N with embeddings */
static double llm_foundry(const struct tp_model *m, double s, const struct tp_flops *f)
{
    (void)m, (void)s;
    return f->palm;
}
/* 6 N_noemb + 12 L H Q T */
static double torchtitan(const struct tp_model *m, double s, const struct tp_flops *f)
{
    (void)m, (void)s;
    return f->torchtitan;
}
static double dgxc_formula(const struct tp_model *m, double s, const struct tp_flops *f)
{
    (void)f;
    double L = m->n_layers, h = m->hidden, V = m->vocab;
    double g = m->n_kv_heads, a = m->n_heads, ffn = m->ffn;
    return 12 * L * h * h * (1 + g / a + s / h) + 18 * L * h * ffn + 6 * V * h;
}
static double (*const PER_TOKEN[TP_CONV_COUNT])(const struct tp_model *, double,
                                                const struct tp_flops *) = {
    [TP_CONV_MEGATRON_HFU_2021] = hfu_2021,
    [TP_CONV_KORTHIKANTI_MFU] = korthikanti,
    [TP_CONV_MEGATRON_CORE] = megatron_core,
    [TP_CONV_NEMO_MODEL] = megatron_core,
    [TP_CONV_LLM_FOUNDRY] = llm_foundry,
    [TP_CONV_TORCHTITAN] = torchtitan,
    [TP_CONV_DGXC_FORMULA] = dgxc_formula,
    [TP_CONV_OTHER] = NULL,
};
static_assert(sizeof PER_TOKEN / sizeof PER_TOKEN[0] == TP_CONV_COUNT,
              "PER_TOKEN: one entry per enum tp_flop_convention value");

double tp_convention_flops_per_token(const struct tp_model *m, uint64_t seq, const char *conv)
{
    struct tp_flops f;
    if (!conv || tp_flops_per_token(m, seq, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f, NULL) != TP_OK)
        return 0;
    for (size_t i = 0; i < TP_CONV_COUNT; i++)
        if (strcmp(conv, TP_FLOP_CONVENTIONS[i]) == 0)
            return PER_TOKEN[i] ? PER_TOKEN[i](m, (double)seq, &f) : 0;
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
