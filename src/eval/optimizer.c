/*
 * optimizer.c - the optimizers' bytes per parameter, one row each: what memory.c stores beside
 * the fp32 master copy and what time.c's optimizer step moves through HBM (moved here from the
 * two switch statements they kept).
 */
#include "eval_internal.h"

#include <assert.h>

static const struct {
    /* optimizer-state bytes per parameter beside the fp32 master copy (memory.c) */
    double states;
    /* bytes touched per parameter by one step: read the gradient (4), read and write the fp32
       master (8) and the states, write the 16-bit weight (2); plus 4 for the global-norm
       clipping read ([derived] docs/physics.md §5.3) */
    double step;
} OPTIMIZERS[] = {
    [TP_OPT_ADAMW] = {.states = 8, /* fp32 m and v */ .step = 4 + 8 + 16 + 2 + 4},
    [TP_OPT_ADAMW_8BIT] = {.states = 2 * (1 + 4.0 / 256), /* [BNB] block 256, fp32 absmax */
                           .step = 4 + 8 + 4 + 2 + 4},
    [TP_OPT_ADAMW_4BIT] = {.states = 2 * (0.5 + 4.0 / 128), /* [TAO] block 128, fp32 scale */
                           .step = 4 + 8 + 2 + 2 + 4},
    [TP_OPT_ADAFACTOR] = {.states = 0, /* factored: added per matrix by the caller */
                          .step = 4 + 8 + 1 + 2 + 4},
    [TP_OPT_SGD] = {.states = 0, .step = 4 + 8 + 2 + 4},
    [TP_OPT_SGD_MOMENTUM] = {.states = 4, .step = 4 + 8 + 8 + 2 + 4},
    [TP_OPT_ADAMW_BF16] = {.states = 4, /* bf16 m and v */
                           .step = 2 + 4 + 8 + 2 + 2}, /* 16-bit gradient, weight and states */
};
#define N_OPTIMIZERS (sizeof OPTIMIZERS / sizeof OPTIMIZERS[0])
static_assert(N_OPTIMIZERS == TP_OPT_ADAMW_BF16 + 1,
              "OPTIMIZERS: one row per enum tp_optimizer value");

double tp_optimizer_states(enum tp_optimizer o)
{
    return (unsigned)o < N_OPTIMIZERS ? OPTIMIZERS[o].states : 8;
}

double tp_optimizer_step_bytes(enum tp_optimizer o)
{
    return (unsigned)o < N_OPTIMIZERS ? OPTIMIZERS[o].step : 34;
}
