/*
 * fit_problem.h - what the fit (fit.c) and its report of what pins each parameter (explain.c)
 * share: the fitted global parameters and their priors, the fitting coordinates, the problem a
 * fit works on and the objective's pieces.  Private to src/fit (GSL builds).
 */
#ifndef TP_FIT_PROBLEM_H
#define TP_FIT_PROBLEM_H

#include "fit_internal.h"

#include <gsl/gsl_vector.h>
#include <stddef.h>

enum xform { LOG, LOGIT };
#define DELTA 0.05 /* pseudo-Huber scale of the fit's loss, in log-ratio */

struct global {
    const char *name;
    size_t off;
    enum xform x;
    double sigma; /* prior width in the fitting coordinate */
    const char *cite; /* NULL: a weak pull toward the base; else the published measurement the
                         prior is, and sigma its uncertainty: a Bayesian prior (M_LAMBDA) */
};

/* A measured prior weighs as a Gaussian prior against the data term read as a likelihood:
   the data term is the mean over S sources of each source's mean pseudo-Huber loss, about
   r^2 / (2 DELTA) per row, and the rows of one source share one source effect of spread TAU
   (the spread between sources' median errors held out, ~0.1 in log), so the data term times
   S DELTA / TAU^2 is the negative log-likelihood and a prior (u - u0)^2 / (2 sigma^2) enters
   the objective with weight TAU^2 / (2 S DELTA) (M_LAMBDA, per source count).  The same
   factor turns the objective's curvature into the parameters' covariance (standard_errors). */
#define TAU 0.10
#define M_LAMBDA(sources) (TAU * TAU / (2.0 * (sources) * DELTA))

/* The global parameters a fit moves (fit.c), in report order. */
#define N_GLOBALS 17
extern const struct global tp_fit_global_params[N_GLOBALS];
#define GLOBALS tp_fit_global_params
#define GPU_SIGMA 1.0

/* One die's GEMM factor (tp_gpu_die: GB200 shares B200's) and the catalog entries on it. */
enum { MAX_DIE_GPUS = 4 };
struct gpu_slot {
    char key[24];       /* the die's catalog key */
    struct {
        char key[24];
        double mamf, mamf8; /* the base's effective rates for this GPU */
    } gpu[MAX_DIE_GPUS];
    uint32_t n_gpus;
    double u;           /* log of the fitted factor */
    uint32_t rows;
    uint32_t sources;   /* distinct sources measuring this die */
    bool fitted;
    double se_u;        /* standard error of u (NAN: none) */
    bool at_edge;       /* the factor sits at an end of the 0.76..1.25 grid */
};

struct problem {
    const struct tp_run *const *runs;
    const struct tp_time_plan *const *plans; /* per row: its calibration-independent work */
    const double *measured;
    size_t n;
    uint32_t *source, n_sources;
    uint32_t *slot;     /* per row: index into gpu[], or UINT32_MAX */
    double *r, *lr, *scratch; /* per row: |log(pred/meas)|, its signed value; sort space */
    size_t *first;      /* per row: the first row sharing its plan (itself when none) */
    size_t *same;       /* per row: the first row sharing its plan and measurement */
    double *tps, *h;    /* per row: the prediction and the pseudo-Huber loss of this evaluation */
    double *src_sum;    /* per source: the sum of its rows' losses */
    size_t *src_rows;   /* per source: its rows in play */
    struct tp_calib cal;
    double lambda;
    size_t free_k[N_GLOBALS], n_free;
    double u0[N_GLOBALS];
    struct gpu_slot gpu[TP_CALIB_MAX_GPUS];
    uint32_t n_gpu;
    uint32_t only;      /* restrict the data term to this slot (UINT32_MAX: all rows) */
    enum { LOSS_HUBER, LOSS_MEDIAN } loss;
    unsigned evals;
    const struct tp_fit_opts *o; /* its progress callback */
    /* Levenberg-Marquardt: the residuals of the last evaluation and the point they are at (the
       Jacobian's base point), and a trial point and its residuals */
    gsl_vector *lm_x, *lm_f, *lm_xt, *lm_ft;
    bool lm_valid;
};

/* The fitting coordinate of a value and back (fit.c). */
double tp_fit_to_u(enum xform x, double v);
double tp_fit_from_u(enum xform x, double u);
/* A calibration field by offset; the sort order of doubles. */
double *tp_fit_field(struct tp_calib *c, size_t off);
int tp_fit_by_value(const void *a, const void *b);
/* The data term at p->cal (fills the rows' figures); a physical bound on global k. */
double tp_fit_data_term(struct problem *p);
double tp_fit_physical(size_t k, double v);
void tp_fit_set_global(struct problem *p, size_t k, double u);
/* The objective as GSL's sum of squares; Levenberg-Marquardt over the free globals. */
int tp_fit_global_resid(const gsl_vector *x, void *arg, gsl_vector *f);
void tp_fit_globals_lm(struct problem *p, unsigned max_evals);

/* explain.c: which globals the rows identify, and what pins each (the report's rows, sources
   and prior); globals the fit drove to a bound held at their priors; standard errors. */
void tp_fit_find_free(struct problem *p, struct tp_fit_result *res);
void tp_fit_hold_bounded(struct problem *p, struct tp_fit_result *res, unsigned max_evals);
void tp_fit_standard_errors(struct problem *p, struct tp_fit_result *res);

#endif
