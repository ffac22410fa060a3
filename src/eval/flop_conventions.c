/*
 * flop_conventions.c - the FLOP conventions a runs file's TFLOP/s and MFU figures count (its
 * tflops_convention column, docs/runs-file.md): one table of their names and what each counts
 * per token (moved here from runs_measured.c's chain of comparisons and runs.c's list).
 */
#include "eval_internal.h"

#include <assert.h>
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
    if (!conv ||
        tp_flops_per_token(m, seq, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f, NULL) != TP_OK)
        return 0;
    for (size_t i = 0; i < TP_CONV_COUNT; i++)
        if (strcmp(conv, TP_FLOP_CONVENTIONS[i]) == 0)
            return PER_TOKEN[i] ? PER_TOKEN[i](m, (double)seq, &f) : 0;
    return 0;
}
