/*
 * explain.c - what pins each fitted parameter (trainplan calibrate --explain): the rows and
 * sources whose prediction it moves, its prior, whether the fit drove it to a bound (then it is
 * held at its prior), and its standard error from the objective's curvature.  docs/calibration.md.
 */
#include "fit_problem.h"

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rows that pin a parameter: those whose log prediction moves by over 0.5% while it
   moves by 0.2 in its fitting coordinate (lr0: each row's log ratio at the base), counted with
   their sources and the source holding most of them. */
static void pinning_rows(const struct problem *p, const double *lr0, const double *lr1,
                         uint32_t *per_src, struct tp_fit_param *fp)
{
    for (size_t i = 0; i < p->n; i++)
        if (fabs(lr1[i] - lr0[i]) > 0.005) {
            fp->rows++;
            fp->sources += per_src[p->source[i]]++ == 0;
        }
    uint32_t best = 0;
    for (size_t i = 0; i < p->n; i++)
        if (per_src[p->source[i]] > best) {
            best = per_src[p->source[i]];
            tp_snprintf(fp->top_source, sizeof fp->top_source, "%s", p->runs[i]->source);
        }
}

/* Which global parameters the rows identify (those that move the loss at all): free_k; and
   for each the rows that pin it and its prior. */
void tp_fit_find_free(struct problem *p, struct tp_fit_result *res)
{
    double f0 = tp_fit_data_term(p);
    double *lr0 = malloc((p->n ? p->n : 1) * sizeof *lr0);
    double *lr1 = malloc((p->n ? p->n : 1) * sizeof *lr1);
    uint32_t *per_src = malloc((p->n_sources ? p->n_sources : 1) * sizeof *per_src);
    if (lr0)
        memcpy(lr0, p->lr, p->n * sizeof *lr0);
    for (size_t k = 0; k < N_GLOBALS; k++) {
        double v = *tp_fit_field(&p->cal, GLOBALS[k].off);
        p->u0[k] = tp_fit_to_u(GLOBALS[k].x, v);
        double moved = 0;
        struct tp_fit_param *fp = &res->params[res->n_params++];
        memset(fp, 0, sizeof *fp);
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            tp_fit_set_global(p, k, p->u0[k] + 0.2 * sgn);
            moved = fmax(moved, fabs(tp_fit_data_term(p) - f0));
            if (sgn < 0 && lr1)
                memcpy(lr1, p->lr, p->n * sizeof *lr1);
        }
        *tp_fit_field(&p->cal, GLOBALS[k].off) = v;
        tp_snprintf(fp->name, sizeof fp->name, "%s", GLOBALS[k].name);
        fp->before = v;
        fp->identified = moved > 1e-7;
        fp->prior = v;
        fp->prior_sd = GLOBALS[k].sigma;
        fp->measured_prior = GLOBALS[k].cite != NULL;
        fp->cite = GLOBALS[k].cite ? GLOBALS[k].cite : "";
        fp->se = NAN;
        if (lr0 && lr1 && per_src) {
            memset(per_src, 0, p->n_sources * sizeof *per_src);
            pinning_rows(p, lr0, lr1, per_src, fp);
        }
        if (fp->identified)
            p->free_k[p->n_free++] = k;
    }
    tp_fit_data_term(p); /* the rows' figures at the base again */
    free(lr0);
    free(lr1);
    free(per_src);
}

/* Whether a fitted value sits at a bound: a fraction at the logit's clamp, gemm_scale at the
   MAMF sweep's rate (the physical bound), or a rate or time driven under half its prior `v0`
   toward zero where the rows no longer tell it from zero (zero within one standard deviation: the fit
   only stopped crawling there). */
static bool bounded(struct problem *p, size_t k, double v, double v0)
{
    if (GLOBALS[k].x == LOGIT)
        return v <= 0.01 || v >= 0.99;
    if (tp_fit_physical(k, 2.0) != 2.0 && v >= tp_fit_physical(k, 2.0) * 0.999)
        return true;
    if (v >= 0.5 * v0) /* not driven toward zero */
        return false;
    double *f = tp_fit_field(&p->cal, GLOBALS[k].off);
    double at = tp_fit_data_term(p);
    *f = 0;
    double zero = tp_fit_data_term(p);
    *f = v;
    tp_fit_data_term(p);
    /* zero within one standard deviation: the log-likelihood (the loss scaled as M_LAMBDA
       explains) gains under 1/2 from the value over zero */
    return (zero - at) * (p->n_sources ? p->n_sources : 1) * DELTA / (TAU * TAU) < 0.5;
}

/* A parameter without a measured prior that the fit drives to a bound is not pinned by the
   rows (the bound is): it is held at its prior and the others are fitted again without it. */
void tp_fit_hold_bounded(struct problem *p, struct tp_fit_result *res, unsigned max_evals)
{
    size_t kept = 0;
    bool held = false;
    for (size_t i = 0; i < p->n_free; i++) {
        size_t k = p->free_k[i];
        double v = *tp_fit_field(&p->cal, GLOBALS[k].off);
        if (!GLOBALS[k].cite && bounded(p, k, v, tp_fit_from_u(GLOBALS[k].x, p->u0[k]))) {
            tp_fit_set_global(p, k, p->u0[k]);
            res->params[k].at_bound = true;
            held = true;
        } else {
            p->free_k[kept++] = k;
        }
    }
    p->n_free = kept;
    if (held)
        tp_fit_globals_lm(p, max_evals);
}

/* Standard errors of the fitted globals from the curvature of the objective at the optimum:
   its Jacobian J (the residuals of global_resid), the covariance inv(J'J) in the fitting
   coordinates scaled as M_LAMBDA explains (the spread between sources: the larger of TAU and
   the sources' median log errors' root mean square), mapped to each parameter's units. */
void tp_fit_standard_errors(struct problem *p, struct tp_fit_result *res)
{
    size_t d = p->n_free, n = p->n + d;
    if (d == 0)
        return;
    gsl_matrix *J = gsl_matrix_alloc(n, d), *cov = gsl_matrix_alloc(d, d);
    gsl_vector *x = gsl_vector_alloc(d), *f0 = gsl_vector_alloc(n), *f1 = gsl_vector_alloc(n);
    if (J && cov && x && f0 && f1) {
        for (size_t i = 0; i < d; i++)
            gsl_vector_set(x, i, tp_fit_to_u(GLOBALS[p->free_k[i]].x,
                                      *tp_fit_field(&p->cal, GLOBALS[p->free_k[i]].off)));
        tp_fit_global_resid(x, p, f0);
        /* the spread between sources: each source's median signed log error */
        double ss = 0;
        uint32_t used = 0;
        for (uint32_t s = 0; s < p->n_sources; s++) {
            size_t k = 0;
            for (size_t i = 0; i < p->n; i++)
                if (p->source[i] == s)
                    p->scratch[k++] = p->lr[i];
            if (k == 0)
                continue;
            qsort(p->scratch, k, sizeof p->scratch[0], tp_fit_by_value);
            double med = k % 2 ? p->scratch[k / 2]
                               : (p->scratch[k / 2 - 1] + p->scratch[k / 2]) / 2;
            ss += med * med;
            used++;
        }
        double tau = used ? fmax(TAU, sqrt(ss / used)) : TAU;
        for (size_t j = 0; j < d; j++) {
            double u = gsl_vector_get(x, j), h = 1e-3 * fmax(fabs(u), 1);
            gsl_vector_set(x, j, u + h);
            tp_fit_global_resid(x, p, f1);
            for (size_t i = 0; i < n; i++)
                gsl_matrix_set(J, i, j, (gsl_vector_get(f1, i) - gsl_vector_get(f0, i)) / h);
            gsl_vector_set(x, j, u);
        }
        tp_fit_global_resid(x, p, f0); /* leave the calibration at the optimum */
        gsl_multifit_nlinear_covar(J, 1e-10, cov);
        double scale = tau * tau / (DELTA * (p->n_sources ? p->n_sources : 1));
        for (size_t j = 0; j < d; j++) {
            size_t k = p->free_k[j];
            double var = gsl_matrix_get(cov, j, j) * scale;
            double se_u = var > 0 && isfinite(var) ? sqrt(var) : NAN;
            double v = *tp_fit_field(&p->cal, GLOBALS[k].off);
            res->params[k].se = GLOBALS[k].x == LOG ? v * (exp(se_u) - 1) : v * (1 - v) * se_u;
        }
    }
    gsl_matrix_free(J);
    gsl_matrix_free(cov);
    gsl_vector_free(x);
    gsl_vector_free(f0);
    gsl_vector_free(f1);
}
