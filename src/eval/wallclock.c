/*
 * wallclock.c - a run's wall-clock as users measure it: the training steps plus start-up, the
 * initial weights read from storage, checkpoint saves and evaluation passes (goodput).
 *
 * The steps are tp_time_step's; a save is tp_ckpt_plan's bytes over the storage bandwidth
 * (written synchronously, as DeepSpeed's and the HF Trainer's default saves are); an evaluation
 * token costs what a training token's forward costs (no backward, no recompute).
 */
#include "eval_internal.h"

#include <math.h>
#include <string.h>

void tp_wallclock_opts_init(struct tp_wallclock_opts *o)
{
    memset(o, 0, sizeof *o);
}

void tp_wallclock(const struct tp_time *t, const struct tp_ckpt_plan *ck, double tokens,
                  const struct tp_wallclock_opts *o, struct tp_wallclock *out)
{
    memset(out, 0, sizeof *out);
    if (!(tokens > 0) || !(t->tokens_per_step > 0) || !(t->step_s > 0))
        return;
    out->steps = tp_budget_steps(tokens, t->tokens_per_step);
    out->train_s = out->steps * t->step_s;
    out->startup_s = o->startup_s > 0 ? o->startup_s : 0;
    if (o->storage_bps > 0 && ck) /* the released 16-bit weights, read once */
        out->load_s = ck->consolidated_bf16_bytes / o->storage_bps;
    if (o->ckpt_every > 0 && ck) {
        out->saves = floor(out->steps / (double)o->ckpt_every);
        out->ckpt_s = out->saves * ck->save_s;
    }
    if (o->eval_every > 0 && o->eval_tokens > 0) {
        out->evals = floor(out->steps / (double)o->eval_every);
        out->eval_s = out->evals * o->eval_tokens * t->fwd_s / t->tokens_per_step;
    }
    out->total_s = out->startup_s + out->load_s + out->train_s + out->ckpt_s + out->eval_s;
    out->goodput = out->train_s / out->total_s;
}
