/*
 * names.c - one name table per job and layout enum, in the enum's order.
 */
#include "base_internal.h"

#include <assert.h>
#include <string.h>

/* Each table is indexed by its enum's values (designated initializers) and sized against the
   enum's last value (static_assert): a value added to an enum without a name fails to build. */
#define LAST(a, last) static_assert(sizeof a / sizeof a[0] == (last) + 1, #a ": one name per value")
static const char *const TASK[] = {
    [TP_TASK_PRETRAIN] = "pretrain", [TP_TASK_SFT] = "sft", [TP_TASK_DPO] = "dpo",
    [TP_TASK_LORA] = "lora", [TP_TASK_QLORA] = "qlora",
};
LAST(TASK, TP_TASK_QLORA);
static const char *const OPTIMIZER[] = {
    [TP_OPT_ADAMW] = "adamw", [TP_OPT_ADAMW_8BIT] = "adamw-8bit",
    [TP_OPT_ADAMW_4BIT] = "adamw-4bit", [TP_OPT_ADAFACTOR] = "adafactor", [TP_OPT_SGD] = "sgd",
    [TP_OPT_SGD_MOMENTUM] = "sgd-momentum", [TP_OPT_ADAMW_BF16] = "adamw-bf16",
};
LAST(OPTIMIZER, TP_OPT_ADAMW_BF16);
static const char *const PRECISION[] = {
    [TP_PREC_BF16] = "bf16", [TP_PREC_FP16] = "fp16", [TP_PREC_FP8] = "fp8",
    [TP_PREC_FP32] = "fp32", [TP_PREC_MXFP8] = "mxfp8", [TP_PREC_NVFP4] = "nvfp4",
    [TP_PREC_MXFP4] = "mxfp4",
};
LAST(PRECISION, TP_PREC_MXFP4);
static const char *const ATTENTION[] = {
    [TP_ATTN_FLASH] = "flash", [TP_ATTN_EAGER] = "eager", [TP_ATTN_FLASH2] = "flash2",
    [TP_ATTN_FLASH3] = "flash3", [TP_ATTN_FLEX] = "flex",
};
LAST(ATTENTION, TP_ATTN_FLEX);
static const char *const FP8_RECIPE[] = {
    [TP_FP8_TENSORWISE] = "tensorwise", [TP_FP8_ROWWISE] = "rowwise",
};
LAST(FP8_RECIPE, TP_FP8_ROWWISE);
static const char *const RECOMPUTE[] = {
    [TP_RECOMPUTE_NONE] = "none", [TP_RECOMPUTE_SELECTIVE] = "selective",
    [TP_RECOMPUTE_FULL] = "full",
};
LAST(RECOMPUTE, TP_RECOMPUTE_FULL);
static const char *const OFFLOAD[] = {
    [TP_OFFLOAD_NONE] = "none", [TP_OFFLOAD_OPTIMIZER] = "optimizer",
    [TP_OFFLOAD_PARAMS] = "params",
};
LAST(OFFLOAD, TP_OFFLOAD_PARAMS);
static const char *const SCHEDULE[] = {
    [TP_SCHED_1F1B] = "1f1b", [TP_SCHED_INTERLEAVED] = "interleaved", [TP_SCHED_GPIPE] = "gpipe",
    [TP_SCHED_DUALPIPE] = "dualpipe",
};
LAST(SCHEDULE, TP_SCHED_DUALPIPE);
static const char *const MOE_DISPATCHER[] = {
    [TP_MOE_DISPATCH_ALLTOALL] = "alltoall", [TP_MOE_DISPATCH_ALLGATHER] = "allgather",
    [TP_MOE_DISPATCH_FLEX] = "flex",
};
LAST(MOE_DISPATCHER, TP_MOE_DISPATCH_FLEX);
static const char *const LAYER_ATTN[] = {
    [TP_LAYER_FULL] = "full", [TP_LAYER_SLIDING] = "sliding", [TP_LAYER_CHUNKED] = "chunked",
};
LAST(LAYER_ATTN, TP_LAYER_CHUNKED);
static const char *const ATTN_CONVENTION[] = {
    [TP_ATTN_CAUSAL] = "causal", [TP_ATTN_NONCAUSAL] = "noncausal",
};
LAST(ATTN_CONVENTION, TP_ATTN_NONCAUSAL);
static const char *const MIXER[] = {
    [TP_MIXER_ATTN] = "attention", [TP_MIXER_MAMBA2] = "mamba2", [TP_MIXER_GDN] = "gated_deltanet",
    [TP_MIXER_NONE] = "none",
};
LAST(MIXER, TP_MIXER_NONE);
#undef LAST

#define T(a) {a, (int)(sizeof a / sizeof a[0])}
static const struct {
    const char *const *names;
    int n;
} TABLES[] = {
    [TP_NAMES_TASK] = T(TASK),           [TP_NAMES_OPTIMIZER] = T(OPTIMIZER),
    [TP_NAMES_PRECISION] = T(PRECISION), [TP_NAMES_ATTENTION] = T(ATTENTION),
    [TP_NAMES_RECOMPUTE] = T(RECOMPUTE), [TP_NAMES_OFFLOAD] = T(OFFLOAD),
    [TP_NAMES_SCHEDULE] = T(SCHEDULE),   [TP_NAMES_LAYER_ATTN] = T(LAYER_ATTN),
    [TP_NAMES_ATTN_CONVENTION] = T(ATTN_CONVENTION), [TP_NAMES_MIXER] = T(MIXER),
    [TP_NAMES_FP8_RECIPE] = T(FP8_RECIPE), [TP_NAMES_MOE_DISPATCHER] = T(MOE_DISPATCHER),
};
#undef T
static_assert(sizeof TABLES / sizeof TABLES[0] == TP_NAMES_COUNT, "TABLES: one per enum tp_names");

const char *tp_name(enum tp_names t, int value)
{
    if ((unsigned)t >= TP_NAMES_COUNT || value < 0 || value >= TABLES[t].n)
        return "?";
    return TABLES[t].names[value];
}

int tp_name_value(enum tp_names t, const char *name)
{
    if ((unsigned)t >= TP_NAMES_COUNT || !name)
        return -1;
    for (int i = 0; i < TABLES[t].n; i++)
        if (strcmp(TABLES[t].names[i], name) == 0)
            return i;
    return -1;
}

size_t tp_name_choices(enum tp_names t, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; (unsigned)t < TP_NAMES_COUNT && i < TABLES[t].n; i++) {
        int n = tp_snprintf(buf + (used < len ? used : len), used < len ? len - used : 0, "%s%s",
                            i ? "|" : "", TABLES[t].names[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    return used;
}
