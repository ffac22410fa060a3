/*
 * fit_internal.h - what the fit (fit.c) and the cross-validation (crossval.c) share: the
 * rows' time plans, built once and read by every fit and fold, and the fit over planned rows.
 */
#ifndef TP_FIT_INTERNAL_H
#define TP_FIT_INTERNAL_H

#include "search_internal.h"

/* One time plan per row (struct tp_time_plan) and the stages they point at. */
struct tp_fit_plans {
    struct tp_time_plan *plans;
    struct tp_time_stage *stages;
    const struct tp_time_plan **ptr; /* ptr[i] = &plans[i]: what tp_fit_planned takes */
};
/* TP_ENOMEM when out of memory (nothing to free then); a row tp_run_check rejects gets a plan
   that prices it NaN, as tp_time_step does. */
enum tp_status tp_fit_plans_build(const struct tp_run *const *runs, size_t n,
                                  const struct tp_calib *base, struct tp_fit_plans *ps);
void tp_fit_plans_free(struct tp_fit_plans *ps);

/* tp_calib_fit over rows whose plans are built (plans[i] belongs to runs[i]). */
enum tp_status tp_fit_planned(const struct tp_run *const *runs,
                              const struct tp_time_plan *const *plans, const double *measured,
                              size_t n, const struct tp_calib *base, const struct tp_fit_opts *o,
                              struct tp_calib *out, struct tp_fit_result *res,
                              struct tp_error *err);

/* Worker threads: o->threads, or the online CPUs (at most TP_FIT_MAX_WORKERS); no more than
   there are jobs. */
#define TP_FIT_MAX_WORKERS 64
size_t tp_fit_workers(const struct tp_fit_opts *o, size_t jobs);

/* Of `n` items in order, keep at most `cap` evenly spaced (0: all): item i is kept when
   floor(i cap / n) steps at it. */
static inline bool tp_evenly_kept(size_t i, size_t n, size_t cap)
{
    return !cap || n <= cap || (i + 1) * cap / n != i * cap / n;
}

/* Joins `n` rows, measured at `measured` tokens/s per GPU from `n_sources` sources, into the
   domain `d` (domain.c); `cal` prices them for the MFU they measured. */
void tp_fit_join_domain(struct tp_calib_domain *d, const struct tp_run *const *runs,
                        const double *measured, size_t n, uint32_t n_sources,
                        const struct tp_calib *cal);

/* Numbers the rows' sources 0, 1, ... in order of first appearance (ord[i] for row i); returns
   how many, or SIZE_MAX when out of memory (sources.c). */
size_t tp_source_ordinals(const struct tp_run *const *runs, size_t n, uint32_t *ord);

#endif
