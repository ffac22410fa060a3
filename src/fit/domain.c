/*
 * domain.c - the domain a fit records in its calibration (struct tp_calib_domain): the rows,
 * sources, model sizes, sequences and software stacks it saw, and per GPU the rows, the largest cluster and the
 * highest MFU measured, by precision class, with the row that measured it.
 * tp_calib_domain_check (src/data/calib.c) reads it back.
 */
#include "fit_internal.h"

#include <string.h>

/* The model-FLOPs utilisation a run measured at `measured` tokens/s per GPU, in this library's
   FLOP count against the dense 16-bit peak: the MFU the model gives per token/s (FLOPs per
   token over the peak, which no calibration parameter moves) times the measurement, so every
   source's convention is read the same way.  0 when the run cannot be priced. */
static double measured_mfu(const struct tp_run *r, double measured, const struct tp_calib *cal)
{
    struct tp_time t;
    if (tp_time_step(&r->model, &r->cluster, &r->job, &r->layout, cal, &t) != TP_OK ||
        !(t.tokens_per_s_per_gpu > 0) || !(t.mfu > 0))
        return 0;
    return t.mfu / t.tokens_per_s_per_gpu * measured;
}

void tp_fit_join_domain(struct tp_calib_domain *d, const struct tp_run *const *runs,
                        const double *measured, size_t n, uint32_t n_sources,
                        const struct tp_calib *cal)
{
    bool fresh = d->rows == 0;
    d->rows += (uint32_t)n;
    d->sources += n_sources;
    for (size_t i = 0; i < n; i++) {
        const struct tp_run *r = runs[i];
        struct tp_params pc;
        tp_count_params(&r->model, &pc);
        double params = (double)pc.total;
        if ((fresh && i == 0) || params < d->min_params)
            d->min_params = params;
        if (params > d->max_params)
            d->max_params = params;
        if (r->job.seq > d->max_seq)
            d->max_seq = r->job.seq;
        if ((unsigned)r->job.framework < 32)
            d->stacks |= 1u << r->job.framework;
        uint32_t g = tp_calib_domain_gpu(d, r->cluster.gpu.key);
        if (g == d->n_gpus) {
            if (d->n_gpus >= TP_CALIB_MAX_GPUS)
                continue;
            memset(&d->gpu[g], 0, sizeof d->gpu[g]);
            tp_snprintf(d->gpu[g].key, sizeof d->gpu[g].key, "%s", r->cluster.gpu.key);
            d->n_gpus++;
        }
        d->gpu[g].rows++;
        if (r->cluster.n_gpus > d->gpu[g].max_gpus)
            d->gpu[g].max_gpus = r->cluster.n_gpus;
        int k = tp_mfu_class(r->job.precision);
        double mfu = measured_mfu(r, measured[i], cal);
        if (mfu > d->gpu[g].max_mfu[k]) {
            d->gpu[g].max_mfu[k] = mfu;
            tp_snprintf(d->gpu[g].max_mfu_row[k], sizeof d->gpu[g].max_mfu_row[k], "%s",
                        r->row_id);
        }
    }
}
