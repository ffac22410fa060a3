/*
 * evaluate.c - one evaluation of a run, and the arithmetic every verb shares around it.
 *
 * tp_evaluate is the single path from (model, cluster, job, layout, calibration) to memory, time,
 * range, domain check, checkpoint plan and budget: estimate, memory, logs, validate and calibrate
 * (through tp_run_evaluate) call it instead of gluing the pieces by hand.  The helpers below it
 * are the rules that used to live in several places: MFU against one peak, whole steps for a
 * token budget, GPU-hours, the global batch's accumulation and the Pareto front.
 */
#include "eval_internal.h"

#include <math.h>
#include <string.h>

void tp_eval_opts_init(struct tp_eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gpu_hour_price = -1;
    tp_wallclock_opts_init(&o->wall);
}

enum tp_status tp_evaluate(const struct tp_model *m, const struct tp_cluster *c,
                           const struct tp_job *j, const struct tp_layout *l,
                           const struct tp_calib *cal, const struct tp_eval_opts *o,
                           struct tp_evaluation *out, struct tp_error *err)
{
    memset(out, 0, sizeof *out);
    if (!cal || !o)
        return tp_fail(err, TP_EINVAL, "no calibration or options to evaluate with");
    enum tp_status st = tp_run_check(m, c, j, l, cal, err);
    if (st != TP_OK) {
        /* the figures of a rejected run are NaN, as tp_time_step's and tp_memory_stage's */
        tp_time_step(m, c, j, l, cal, &out->time);
        tp_memory_worst(m, c, j, l, &out->memory);
        return st;
    }
    tp_memory_worst(m, c, j, l, &out->memory);
    tp_time_step(m, c, j, l, cal, &out->time);
    out->domain = tp_calib_domain_check(cal, m, c, j, out->time.mfu, out->outside,
                                        sizeof out->outside);
    tp_time_range(m, c, j, l, out->domain, &out->range);
    tp_ckpt_plan(m, c, j, l, o->storage_bps, &out->ckpt);
    if (o->tokens > 0) {
        tp_wallclock(&out->time, &out->ckpt, o->tokens, &o->wall, &out->wall);
        out->gpu_hours = tp_gpu_hours(out->wall.total_s, c->n_gpus);
        out->cost = o->gpu_hour_price >= 0 ? out->gpu_hours * o->gpu_hour_price : 0;
    }
    return TP_OK;
}

double tp_mfu(double flops_per_token, double tokens_per_s_per_gpu, double peak_flops)
{
    return peak_flops > 0 ? flops_per_token * tokens_per_s_per_gpu / peak_flops : NAN;
}

double tp_budget_steps(double tokens, double tokens_per_step)
{
    return tokens_per_step > 0 ? ceil(tokens / tokens_per_step) : NAN;
}

double tp_gpu_hours(double seconds, uint32_t gpus)
{
    return seconds / 3600 * gpus;
}

enum tp_status tp_layout_set_gbs(struct tp_layout *l, uint64_t gbs, bool gas_given,
                                 struct tp_error *err)
{
    uint64_t per = (uint64_t)l->mbs * l->dp;
    if (per == 0 || gbs % per != 0)
        return tp_fail_field(err, TP_EINVAL, "gbs",
                             "gbs %llu is not a multiple of mbs*dp = %u*%u = %llu",
                             (unsigned long long)gbs, l->mbs, l->dp, (unsigned long long)per);
    uint64_t gas = gbs / per;
    if (gas > UINT32_MAX || (gas_given && gas != l->gas))
        return tp_fail_field(err, TP_EINVAL, "gbs", "gbs %llu = mbs*dp*gas needs gas %llu, not %u",
                             (unsigned long long)gbs, (unsigned long long)gas, l->gas);
    l->gas = (uint32_t)gas;
    return TP_OK;
}

void tp_pareto_front(const double *a, const double *b, const bool *valid, size_t n, bool *front)
{
    for (size_t i = 0; i < n; i++) {
        front[i] = valid[i];
        for (size_t k = 0; k < n && front[i]; k++)
            if (k != i && valid[k] && a[k] <= a[i] && b[k] <= b[i] && (a[k] < a[i] || b[k] < b[i]))
                front[i] = false;
    }
}
