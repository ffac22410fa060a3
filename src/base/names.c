/*
 * names.c - one name table per job and layout enum, in the enum's order.
 */
#include "base_internal.h"

#include <assert.h>
#include <string.h>

static const char *const TASK[] = {"pretrain", "sft", "dpo", "lora", "qlora"};
static const char *const OPTIMIZER[] = {"adamw", "adamw-8bit", "adamw-4bit",
                                        "adafactor", "sgd", "sgd-momentum", "adamw-bf16"};
static const char *const PRECISION[] = {"bf16", "fp16", "fp8", "fp32", "mxfp8", "nvfp4", "mxfp4"};
static const char *const ATTENTION[] = {"flash", "eager", "flash2", "flash3", "flex",
                                         "cudnn9.19", "flash1"};
static const char *const FP8_RECIPE[] = {"tensorwise", "rowwise"};
static const char *const RECOMPUTE[] = {"none", "selective", "full"};
static const char *const OFFLOAD[] = {"none", "optimizer", "params"};
static const char *const SCHEDULE[] = {"1f1b", "interleaved", "gpipe", "dualpipe"};
static const char *const MOE_DISPATCHER[] = {"alltoall", "allgather", "flex", "hybridep"};
static const char *const MOE_ROUTING[] = {"auto", "corpus", "dataset", "forced"};
static const char *const LAYER_ATTN[] = {"full", "sliding", "chunked"};
static const char *const ATTN_CONVENTION[] = {"causal", "noncausal"};
static const char *const MIXER[] = {"attention", "mamba2", "gated_deltanet", "none"};

/* Each table is in its enum's order and sized against the enum's last value, so a value added
   to an enum without its name fails to build. */
#define LAST(a, last) static_assert(sizeof a / sizeof a[0] == (last) + 1, #a ": one name per value")
LAST(TASK, TP_TASK_QLORA);
LAST(OPTIMIZER, TP_OPT_ADAMW_BF16);
LAST(PRECISION, TP_PREC_MXFP4);
LAST(ATTENTION, TP_ATTN_FLASH1);
LAST(FP8_RECIPE, TP_FP8_ROWWISE);
LAST(RECOMPUTE, TP_RECOMPUTE_FULL);
LAST(OFFLOAD, TP_OFFLOAD_PARAMS);
LAST(SCHEDULE, TP_SCHED_DUALPIPE);
LAST(MOE_DISPATCHER, TP_MOE_DISPATCH_HYBRIDEP);
LAST(MOE_ROUTING, TP_MOE_ROUTING_FORCED);
LAST(LAYER_ATTN, TP_LAYER_CHUNKED);
LAST(ATTN_CONVENTION, TP_ATTN_NONCAUSAL);
LAST(MIXER, TP_MIXER_NONE);
#undef LAST

#define T(a) {a, (int)(sizeof a / sizeof a[0])}
static const struct {
    const char *const *names;
    int n;
} TABLES[TP_NAMES_COUNT] = {
    [TP_NAMES_TASK] = T(TASK),           [TP_NAMES_OPTIMIZER] = T(OPTIMIZER),
    [TP_NAMES_PRECISION] = T(PRECISION), [TP_NAMES_ATTENTION] = T(ATTENTION),
    [TP_NAMES_RECOMPUTE] = T(RECOMPUTE), [TP_NAMES_OFFLOAD] = T(OFFLOAD),
    [TP_NAMES_SCHEDULE] = T(SCHEDULE),   [TP_NAMES_LAYER_ATTN] = T(LAYER_ATTN),
    [TP_NAMES_ATTN_CONVENTION] = T(ATTN_CONVENTION), [TP_NAMES_MIXER] = T(MIXER),
    [TP_NAMES_FP8_RECIPE] = T(FP8_RECIPE), [TP_NAMES_MOE_DISPATCHER] = T(MOE_DISPATCHER),
    [TP_NAMES_MOE_ROUTING] = T(MOE_ROUTING),
};
#undef T

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
