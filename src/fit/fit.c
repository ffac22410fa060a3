/*
 * fit.c - fits the time model's efficiency parameters to measured runs (trainplan calibrate).
 *
 * Loss: per row r = log(predicted / measured) tokens/s per GPU, so over- and under-prediction
 * count alike; the pseudo-Huber loss delta * (sqrt(1 + (r / delta)^2) - 1) with delta 0.05 is
 * quadratic for small errors and linear (robust) for large ones; the mean over a source's rows,
 * averaged over sources, stops the largest source from owning the fit.  (The median per source
 * is what the report shows; fitting it directly is a piecewise-constant landscape with no
 * slope to follow and a different local minimum for every start.)  A ridge term pulls every
 * parameter toward the base calibration (lambda * sum ((u - u0) / sigma)^2 in the fitting
 * coordinate u: log for rates and ratios, logit for fractions; lambda = prior_weight / rows, so
 * the pull weighs as much as 0.4 rows and fades as rows accumulate), so parameters the rows
 * cannot move stay at the base, and a fit to two runs moves the base no further than the two
 * runs need.
 *
 * Method (all GSL): Levenberg-Marquardt (multifit_nlinear's trust region, the loss written as
 * a sum of squares, a forward-difference Jacobian) from the base (with o->starts > 1, also from
 * the best starts - 1 of `samples` quasi-random Sobol points of a box around it) over the
 * global parameters the rows identify (those that move the loss at all), until the step or the
 * gradient vanishes or ten steps together lower the loss by under 1e-5 of it; then, per GPU
 * type measured by at least `min_gpu_rows` rows from two sources (one source cannot separate
 * its GPU from its software stack), that GPU's GEMM rate (its MAMF times one factor in
 * 0.76..1.25) by Brent's method inside the bracket a grid finds.  The two alternate `rounds`
 * times.  (Nelder-Mead reached the same optimum on the shipped runs, to the 3 digits written,
 * in 5x the evaluations.)  Fitted values are rounded to 3 significant digits (far finer than
 * what the runs determine) so the output is stable across compilers.
 *
 * What pins each parameter (its rows, prior, bound and standard error: calibrate --explain) is
 * explain.c's; the problem and the objective's pieces they share are in fit_problem.h.
 *
 * The fitter allocates (GSL's workspace and per-row arrays); the evaluation it calls is the
 * pure tp_time_step (through the rows' plans, crossval.c).
 *
 * GSL and process-global state: GSL reports errors through one process-wide handler (abort by
 * default).  The fit never installs or swaps it (that would race with any other thread of the
 * host); instead no call here can reach GSL_ERROR on its inputs: vectors and solvers are
 * allocated with 1..N_GLOBALS parameters and more residuals than parameters (the Sobol sequence
 * with 1..40 dimensions, its limit), the objective and every residual are finite by
 * construction (data_term is a mean of bounded residuals, and loss() and global_resid map an
 * overflowing prior to a large finite value; Brent calls GSL_ERROR on a non-finite value), the
 * least-squares tolerances are positive, Brent is started only on a bracket whose middle is
 * strictly lowest, and vector indices stay in range.  What remains is GSL failing to allocate
 * a few hundred bytes, where its handler decides (a host that wants no abort sets its own
 * once, at start-up).
 */
#include "fit_problem.h"

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_qrng.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G(f, x, s) {#f, offsetof(struct tp_calib, f), x, s, NULL}
#define M(f, x, s, why) {#f, offsetof(struct tp_calib, f), x, s, why}
const struct global tp_fit_global_params[] = {
    /* attn_bwd_ratio is not fitted: training runs see attention as (1 + ratio) / attn_eff, so
       the two cannot be told apart; the ratio stays at FlashAttention's 2.5 */
    /* attn_block_keys is the attention's sequence-length curve: runs of 0.5k to 1M tokens
       tell it apart from attn_eff */
    G(gemm_scale, LOG, 1),      G(attn_eff, LOGIT, 1),          G(attn_block_keys, LOG, 1),
    /* the MoE rows' grouped expert GEMMs: their own rate, not the GPU's dense one.  One
       source's MoE rows cannot tell its stack from the kernels, so the prior is the kernels'
       measurement: MegaBlocks' block-sparse expert GEMMs run within a few percent of cuBLAS
       batched GEMMs (Gale et al. 2022, arXiv:2211.15841, 98.6%); log sd 0.3 */
    M(grouped_gemm_scale, LOG, 0.3,
      "MegaBlocks (arXiv:2211.15841): grouped expert GEMMs at ~98.6% of cuBLAS batched"),
    /* FlashAttention-3 (arXiv:2407.08608) Fig. 5: FA2 335-370 against FA3 610-660 TFLOP/s on
       H100, 0.51-0.61: logit sd 0.25 */
    M(fa2_ratio, LOGIT, 0.25, "FlashAttention-3 paper Fig. 5: FA2/FA3 0.51-0.61 on H100"),
    /* cuDNN's fused attention by release on Hopper, BF16, head dim 128, causal, forward +
       backward (backward 2.5x the forward's FLOPs), [CUDNN-FE]: cuDNN
       9.1.0 on H200 (b740542, 2024-05-07, benchmark_results.csv, 4k-64k tokens) 468 / 490 /
       520 / 520 / 520 TFLOP/s; cuDNN 9.19.1 on H200 (df73764, 2026-03-09,
       results/h200_919_only_cudnn/llama3.1_*.csv, 4k-32k) 502 / 567 / 603 / 608: 1.07 at 4k,
       1.16-1.17 from 8k; cuDNN 9.19.0 on H100 SXM [DEV-2611-SDPA] 477 / 518 / 554 / 572,
       5-9% under the H200 run of the same kernel.  Prior 1.16; log sd 0.07 (the releases between 9.1 and 9.19, whose
       Hopper figures are not published, and the unstated clocks of the 9.19 run) */
    M(cudnn_gen_ratio, LOG, 0.07,
      "cudnn-frontend benchmark/: cuDNN 9.19.1 vs 9.1.0 on H200, causal hd128 fwd+bwd 1.16"),
    G(mem_eff, LOGIT, 1),       G(fused_elementwise, LOGIT, 1),
    /* torchao's row-wise FP8 GEMM: only its rows identify it */
    M(fp8_rowwise_ratio, LOGIT, 0.5, "pytorch/pytorch#147971: row-wise vs tensor-wise FP8 GEMM"),
    G(tp_overlap, LOGIT, 2),    G(dp_overlap, LOGIT, 1),        G(ep_overlap, LOGIT, 2),
    /* runs with ZeRO-3/FSDP gathers and large DP groups tell it from dp_overlap: one caps
       what hides, the other charges for what does.  Lee et al. 2025: 18.9% mean, up to 40%
       (two sd in logit: 0.5) */
    M(overlap_slowdown, LOGIT, 0.5,
      "Lee et al. 2025 (arXiv:2507.03114): compute 18.9% slower overlapped, up to 40%"),
    /* the per-step residual beyond host_step.c's counted parts: no microbenchmark sizes
       it, and a measured-looking 5 ms prior broke leave-one-source-out (5.1 -> 7.4%,
       docs/host.md "The step beside the blocks"), so the rows pin it (105 of 6 sources) */
    G(step_overhead_s, LOG, 1.5),
    /* achieved bus bandwidth over line rate: nccl-tests all-reduce busbw (docs/physics.md
       4.2), logit sd 0.5 */
    M(eff_intra, LOGIT, 0.5, "nccl-tests all-reduce busbw over NVLink line rate (0.75-0.85)"),
    M(eff_inter, LOGIT, 0.5, "nccl-tests all-reduce busbw over NIC line rate (0.85-0.95)"),
    /* host time per eager launch (src/eval/host.c): 5-25 us measured, prior 12, log sd 0.4 */
    M(eager_op_s, LOG, 0.4,
      "pytorch/pytorch#41383: 6.8 us/op CPU side + 1-3 us launch; 5-25 us per op in all"),
};
#undef G
#undef M

double tp_fit_to_u(enum xform x, double v)
{
    if (x == LOG) /* host times per op are ~1e-5 s: the floor sits far below */
        return log(v > 1e-12 ? v : 1e-12);
    double f = v < 0.005 ? 0.005 : v > 0.995 ? 0.995 : v;
    return log(f / (1 - f));
}

double tp_fit_from_u(enum xform x, double u)
{
    return x == LOG ? exp(u) : 1 / (1 + exp(-u));
}

static double round3(double v)
{
    if (v == 0 || !isfinite(v))
        return v;
    double scale = pow(10, 2 - floor(log10(fabs(v))));
    return round(v * scale) / scale;
}

double *tp_fit_field(struct tp_calib *c, size_t off)
{
    return (double *)(void *)((char *)c + off);
}

int tp_fit_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean over sources of the median |log(pred/meas)| of the rows in play. */
double tp_fit_data_term(struct problem *p)
{
    p->evals++;
    if (p->o->progress && p->evals % 256 == 0)
        p->o->progress(p->o->progress_ctx, p->evals);
    for (size_t i = 0; i < p->n; i++) {
        if (p->only != UINT32_MAX && p->slot[i] != p->only)
            continue;
        if (p->same[i] < i) { /* the same configuration and measurement: the same residual */
            p->r[i] = p->r[p->same[i]];
            p->lr[i] = p->lr[p->same[i]];
            p->h[i] = p->h[p->same[i]];
            continue;
        }
        if (p->first[i] < i) { /* the same configuration: the same prediction */
            p->tps[i] = p->tps[p->first[i]];
        } else {
            struct tp_time t;
            tp_time_planned(p->plans[i], &p->cal, &t);
            p->tps[i] = t.tokens_per_s_per_gpu;
        }
        double ratio = p->tps[i] / p->measured[i];
        double lr = ratio > 0 && isfinite(ratio) ? log(ratio) : 10;
        double r = fabs(lr);
        p->r[i] = r;
        p->lr[i] = lr;
        /* pseudo-Huber: quadratic within DELTA, linear beyond */
        p->h[i] = DELTA * (sqrt(1 + r * r / (DELTA * DELTA)) - 1);
    }
    double sum = 0;
    uint32_t used = 0;
    if (p->loss == LOSS_HUBER) { /* each source's mean, its rows summed in their order */
        memset(p->src_sum, 0, p->n_sources * sizeof p->src_sum[0]);
        memset(p->src_rows, 0, p->n_sources * sizeof p->src_rows[0]);
        for (size_t i = 0; i < p->n; i++)
            if (p->only == UINT32_MAX || p->slot[i] == p->only) {
                p->src_sum[p->source[i]] += p->h[i];
                p->src_rows[p->source[i]]++;
            }
        for (uint32_t s = 0; s < p->n_sources; s++)
            if (p->src_rows[s]) {
                sum += p->src_sum[s] / (double)p->src_rows[s];
                used++;
            }
        return used ? sum / used : 0;
    }
    for (uint32_t s = 0; s < p->n_sources; s++) { /* each source's median */
        size_t k = 0;
        for (size_t i = 0; i < p->n; i++)
            if (p->source[i] == s && (p->only == UINT32_MAX || p->slot[i] == p->only))
                p->scratch[k++] = p->r[i];
        if (k == 0)
            continue;
        qsort(p->scratch, k, sizeof p->scratch[0], tp_fit_by_value);
        sum += k % 2 ? p->scratch[k / 2] : (p->scratch[k / 2 - 1] + p->scratch[k / 2]) / 2;
        used++;
    }
    return used ? sum / used : 0;
}

/* Physical bounds a fit may not cross: a training GEMM never beats the MAMF sweep's best shape
   (gemm_scale <= 1), and nothing exceeds the peak (per-GPU MAMF <= 1, set_gpu). */
double tp_fit_physical(size_t k, double v)
{
    if (strcmp(GLOBALS[k].name, "gemm_scale") == 0 && v > 1.0)
        return 1.0;
    return v;
}

void tp_fit_set_global(struct problem *p, size_t k, double u)
{
    *tp_fit_field(&p->cal, GLOBALS[k].off) = tp_fit_physical(k, tp_fit_from_u(GLOBALS[k].x, u));
}

static struct tp_calib_gpu *calib_entry(struct tp_calib *c, const char *key)
{
    struct tp_calib_gpu *e = (struct tp_calib_gpu *)tp_calib_gpu_find(c, key);
    if (e || c->n_gpus >= TP_CALIB_MAX_GPUS)
        return e;
    e = &c->gpus[c->n_gpus++];
    memset(e, 0, sizeof *e);
    tp_snprintf(e->key, sizeof e->key, "%s", key);
    return e;
}

static void set_gpu(struct problem *p, uint32_t g, double u)
{
    for (uint32_t k = 0; k < p->gpu[g].n_gpus; k++) {
        struct tp_calib_gpu *e = calib_entry(&p->cal, p->gpu[g].gpu[k].key);
        if (!e)
            continue;
        e->mamf_bf16 = fmin(1.0, p->gpu[g].gpu[k].mamf * exp(u));
        e->mamf_fp8 = fmin(1.0, p->gpu[g].gpu[k].mamf8 * exp(u));
    }
}

/* The objective as GSL may see it: finite (a prior pulled past the range of a double counts as
   a very bad point, never as the non-finite value GSL's minimizers stop on with GSL_ERROR). */
static double loss(double v)
{
    return isfinite(v) ? v : 1e300;
}

/* The prior's weight for global k: a measured prior's (M_LAMBDA), else the weak pull. */
static double lambda_of(const struct problem *p, size_t k)
{
    return GLOBALS[k].cite ? M_LAMBDA(p->n_sources ? p->n_sources : 1) : p->lambda;
}

static double global_f(const gsl_vector *v, void *arg)
{
    struct problem *p = arg;
    double prior = 0;
    for (size_t i = 0; i < p->n_free; i++) {
        size_t k = p->free_k[i];
        double u = gsl_vector_get(v, i);
        tp_fit_set_global(p, k, u);
        double d = (u - p->u0[k]) / GLOBALS[k].sigma;
        prior += lambda_of(p, k) * d * d;
    }
    return loss(tp_fit_data_term(p) + prior);
}

/* Multi-start: the objective at quasi-random points (GSL's Sobol sequence) of a box around
   the current values (+-2 in log, +-6 in logit), then Levenberg-Marquardt from the current
   values and from the best `starts` - 1 points; the best optimum stays in the calibration. */
static void fit_globals_multistart(struct problem *p, const struct tp_fit_opts *o)
{
    enum { MAX_STARTS = 16 };
    size_t d = p->n_free;
    uint32_t starts = o->starts < MAX_STARTS ? o->starts : MAX_STARTS;
    if (d == 0)
        return;
    double center[N_GLOBALS], cand[MAX_STARTS][N_GLOBALS], cand_f[MAX_STARTS];
    uint32_t n_cand = 0;
    for (size_t i = 0; i < d; i++) {
        size_t k = p->free_k[i];
        center[i] = tp_fit_to_u(GLOBALS[k].x, *tp_fit_field(&p->cal, GLOBALS[k].off));
    }
    gsl_qrng *q = d <= 40 && starts > 1 ? gsl_qrng_alloc(gsl_qrng_sobol, (unsigned)d) : NULL;
    gsl_vector *v = gsl_vector_alloc(d);
    for (uint32_t s = 0; q && v && s < o->samples; s++) {
        double x[N_GLOBALS];
        gsl_qrng_get(q, x);
        for (size_t i = 0; i < d; i++) {
            double half = GLOBALS[p->free_k[i]].x == LOG ? 2.0 : 6.0;
            gsl_vector_set(v, i, center[i] + half * (2 * x[i] - 1));
        }
        double f = global_f(v, p);
        /* keep the best starts - 1, sorted */
        uint32_t pos = n_cand;
        while (pos > 0 && cand_f[pos - 1] > f)
            pos--;
        if (pos >= starts - 1)
            continue;
        uint32_t last = n_cand < starts - 1 ? n_cand : starts - 2;
        for (uint32_t m = last; m > pos; m--) {
            cand_f[m] = cand_f[m - 1];
            memcpy(cand[m], cand[m - 1], sizeof cand[m]);
        }
        cand_f[pos] = f;
        for (size_t i = 0; i < d; i++)
            cand[pos][i] = gsl_vector_get(v, i);
        if (n_cand < starts - 1)
            n_cand++;
    }
    gsl_qrng_free(q);
    /* from the current values first, then from each candidate */
    double best_f = HUGE_VAL, best_u[N_GLOBALS];
    memcpy(best_u, center, sizeof best_u);
    for (uint32_t c = 0; c <= n_cand; c++) {
        /* Sobol's first point is the box's centre, often among the best: a start already
           taken would retrace the same steps to the same optimum */
        bool taken = false;
        for (uint32_t e = 0; c > 0 && e < c && !taken; e++)
            taken = memcmp(cand[c - 1], e == 0 ? center : cand[e - 1],
                           d * sizeof center[0]) == 0;
        if (taken)
            continue;
        for (size_t i = 0; i < d; i++)
            tp_fit_set_global(p, p->free_k[i], c == 0 ? center[i] : cand[c - 1][i]);
        tp_fit_globals_lm(p, o->max_evals);
        for (size_t i = 0; i < d; i++)
            gsl_vector_set(v, i, tp_fit_to_u(GLOBALS[p->free_k[i]].x,
                                      *tp_fit_field(&p->cal, GLOBALS[p->free_k[i]].off)));
        double f = global_f(v, p);
        if (f < best_f) {
            best_f = f;
            for (size_t i = 0; i < d; i++)
                best_u[i] = gsl_vector_get(v, i);
        }
    }
    for (size_t i = 0; i < d; i++)
        tp_fit_set_global(p, p->free_k[i], best_u[i]);
    gsl_vector_free(v);
}

/* The objective as a sum of squares, 1/2 sum f_i^2 (what GSL's nonlinear least squares
   minimizes): per row f = sign(r) sqrt(2 w h) with h its pseudo-Huber loss and w = 1 / (sources
   in play x the rows of its source), so the rows add up to data_term's mean of source means;
   per free parameter f = sqrt(2 lambda) (u - u0) / sigma, the ridge.  sign(r) sqrt(h) is smooth
   through r = 0 (it is r / sqrt(2 DELTA) there), which Levenberg-Marquardt needs. */
int tp_fit_global_resid(const gsl_vector *x, void *arg, gsl_vector *f)
{
    struct problem *p = arg;
    for (size_t i = 0; i < p->n_free; i++)
        tp_fit_set_global(p, p->free_k[i], gsl_vector_get(x, i));
    tp_fit_data_term(p);
    uint32_t used = 0;
    for (uint32_t s = 0; s < p->n_sources; s++)
        used += p->src_rows[s] > 0;
    for (size_t i = 0; i < p->n; i++) {
        double e = sqrt(2 * p->h[i] / ((double)used * (double)p->src_rows[p->source[i]]));
        gsl_vector_set(f, i, p->lr[i] < 0 ? -e : e);
    }
    for (size_t i = 0; i < p->n_free; i++) {
        size_t k = p->free_k[i];
        double pull = sqrt(2 * lambda_of(p, k));
        double d = pull * (gsl_vector_get(x, i) - p->u0[k]) / GLOBALS[k].sigma;
        gsl_vector_set(f, p->n + i, isfinite(d) ? d : 1e150);
    }
    return GSL_SUCCESS;
}

/* The residuals at x for GSL, kept as the base point of the Jacobian that GSL asks for next
   when it accepts the step. */
static int lm_f(const gsl_vector *x, void *arg, gsl_vector *f)
{
    struct problem *p = arg;
    tp_fit_global_resid(x, p, f);
    gsl_vector_memcpy(p->lm_x, x);
    gsl_vector_memcpy(p->lm_f, f);
    p->lm_valid = true;
    return GSL_SUCCESS;
}

/* Forward differences, one evaluation per parameter (GSL's own would add one at x, already
   evaluated); step sqrt(eps) max(|u|, 1), and backward where a forward step would cross the
   physical bound (gemm_scale = 1, where the model is flat) and see no slope. */
static int lm_df(const gsl_vector *x, void *arg, gsl_matrix *J)
{
    struct problem *p = arg;
    bool same = p->lm_valid;
    for (size_t i = 0; same && i < p->n_free; i++)
        same = gsl_vector_get(x, i) == gsl_vector_get(p->lm_x, i);
    if (!same)
        lm_f(x, p, p->lm_f);
    gsl_vector_memcpy(p->lm_xt, x);
    for (size_t j = 0; j < p->n_free; j++) {
        size_t k = p->free_k[j];
        double u = gsl_vector_get(x, j), h = sqrt(DBL_EPSILON) * fmax(fabs(u), 1);
        if (tp_fit_physical(k, tp_fit_from_u(GLOBALS[k].x, u + h)) != tp_fit_from_u(GLOBALS[k].x, u + h))
            h = -h;
        double uh = u + h; /* the step as represented */
        h = uh - u;
        gsl_vector_set(p->lm_xt, j, uh);
        tp_fit_global_resid(p->lm_xt, p, p->lm_ft);
        for (size_t i = 0; i < J->size1; i++)
            gsl_matrix_set(J, i, j, (gsl_vector_get(p->lm_ft, i) - gsl_vector_get(p->lm_f, i)) / h);
        gsl_vector_set(p->lm_xt, j, u);
    }
    return GSL_SUCCESS;
}

/* Levenberg-Marquardt (GSL's trust-region nonlinear least squares, forward-difference
   Jacobian: n_free + 1 evaluations a step) over the free global parameters from their current
   values, until the step or the gradient vanishes, no step lowers the loss, ten steps together
   lower it by under 1e-5 of it (a crawl along a valley: on a file whose every row is its own
   source the trust region gained 1e-7 of the loss a step for 2,500 evaluations), or
   max_evals. */
void tp_fit_globals_lm(struct problem *p, unsigned max_evals)
{
    if (p->n_free == 0)
        return;
    size_t n = p->n + p->n_free;
    gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = lm_f;
    fdf.df = lm_df;
    fdf.n = n;
    fdf.p = p->n_free;
    fdf.params = p;
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, n, p->n_free);
    gsl_vector *x = gsl_vector_alloc(p->n_free);
    p->lm_x = gsl_vector_alloc(p->n_free);
    p->lm_xt = gsl_vector_alloc(p->n_free);
    p->lm_f = gsl_vector_alloc(n);
    p->lm_ft = gsl_vector_alloc(n);
    p->lm_valid = false;
    if (!w || !x || !p->lm_x || !p->lm_xt || !p->lm_f || !p->lm_ft)
        goto done;
    for (size_t i = 0; i < p->n_free; i++) {
        size_t k = p->free_k[i];
        gsl_vector_set(x, i, tp_fit_to_u(GLOBALS[k].x, *tp_fit_field(&p->cal, GLOBALS[k].off)));
    }
    if (gsl_multifit_nlinear_init(x, &fdf, w) != GSL_SUCCESS)
        goto done;
    unsigned start = p->evals;
    int info;
    double hist[10];
    size_t it = 0;
    while (p->evals - start < max_evals) {
        if (gsl_multifit_nlinear_iterate(w) != GSL_SUCCESS) /* GSL_ENOPROG: at the minimum */
            break;
        double c = 0; /* twice the loss */
        gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &c);
        if (it >= 10 && hist[it % 10] - c < 1e-5 * c) /* hist[it % 10]: ten steps ago */
            break;
        hist[it++ % 10] = c;
        if (gsl_multifit_nlinear_test(1e-4, 1e-6, 0, &info, w) == GSL_SUCCESS)
            break;
    }
    /* the accepted point, not the last trial */
    gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
done:
    for (size_t i = 0; x && i < p->n_free; i++)
        tp_fit_set_global(p, p->free_k[i], gsl_vector_get(x, i));
    gsl_vector_free(x);
    gsl_vector_free(p->lm_x);
    gsl_vector_free(p->lm_xt);
    gsl_vector_free(p->lm_f);
    gsl_vector_free(p->lm_ft);
    p->lm_x = p->lm_xt = p->lm_f = p->lm_ft = NULL;
    if (w)
        gsl_multifit_nlinear_free(w);
}

static double gpu_f(double u, void *arg)
{
    struct problem *p = arg;
    set_gpu(p, p->only, u);
    double d = u / GPU_SIGMA;
    return loss(tp_fit_data_term(p) + p->lambda * d * d);
}

/* One GPU's GEMM factor: the best point of a grid over 0.76x..1.25x (a GPU's measured MAMF
   is good to that; a larger gap between a GPU's rows and the model is the model's or the
   software's, not the GPU's), refined by Brent. */
static void fit_gpu(struct problem *p, uint32_t g)
{
    enum { STEPS = 23 };
    double lo = -0.275, du = 0.025, f[STEPS];
    p->only = g;
    uint32_t best = 0;
    for (uint32_t i = 0; i < STEPS; i++) {
        f[i] = gpu_f(lo + du * i, p);
        if (f[i] < f[best])
            best = i;
    }
    double u = lo + du * best;
    if (best > 0 && best + 1 < STEPS && f[best] < f[best - 1] && f[best] < f[best + 1]) {
        gsl_min_fminimizer *m = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
        gsl_function fn = {gpu_f, p};
        if (m && gsl_min_fminimizer_set_with_values(m, &fn, u, f[best], u - du, f[best - 1],
                                                    u + du, f[best + 1]) == GSL_SUCCESS) {
            for (int it = 0; it < 40; it++) {
                if (gsl_min_fminimizer_iterate(m) != GSL_SUCCESS)
                    break;
                double a = gsl_min_fminimizer_x_lower(m), b = gsl_min_fminimizer_x_upper(m);
                if (gsl_min_test_interval(a, b, 1e-3, 0) == GSL_SUCCESS)
                    break;
            }
            if (gsl_min_fminimizer_f_minimum(m) < f[best])
                u = gsl_min_fminimizer_x_minimum(m);
        }
        gsl_min_fminimizer_free(m);
    }
    /* its standard error from the objective's curvature (scaled as in standard_errors) */
    double e = 0.02, fm = gpu_f(u - e, p), f0 = gpu_f(u, p), fp = gpu_f(u + e, p);
    double curv = (fm - 2 * f0 + fp) / (e * e);
    double scale = TAU * TAU / (DELTA * (p->n_sources ? p->n_sources : 1));
    p->gpu[g].se_u = curv > 0 ? sqrt(scale / curv) : NAN;
    /* at an end of the grid the gap is the model's or the software's, not the GPU's (the
       header): the rows pin the bound, not the factor, which is held at its prior (the
       catalog's MAMF) */
    p->gpu[g].at_edge = best == 0 || best + 1 == STEPS;
    if (p->gpu[g].at_edge) {
        u = 0;
        p->gpu[g].se_u = NAN;
    }
    p->gpu[g].u = u;
    set_gpu(p, g, u);
    p->only = UINT32_MAX;
}

struct keyed {
    uintptr_t plan;
    uint64_t measured; /* the double's bits: equal bits, the same measurement */
    size_t row;
};

static int by_plan_measured_row(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->plan != y->plan)
        return x->plan < y->plan ? -1 : 1;
    if (x->measured != y->measured)
        return x->measured < y->measured ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Rows that share a plan (first: the lowest such row) and, of those, rows with the same
   measurement too (same): a file that repeats rows costs one prediction and one loss per
   distinct row and evaluation.  By sorting on (plan, measurement, row): O(n log n). */
static bool share_rows(struct problem *p)
{
    struct keyed *e = malloc((p->n ? p->n : 1) * sizeof *e);
    if (!e)
        return false;
    for (size_t i = 0; i < p->n; i++) {
        e[i] = (struct keyed){(uintptr_t)(const void *)p->plans[i], 0, i};
        memcpy(&e[i].measured, &p->measured[i], sizeof e[i].measured);
    }
    qsort(e, p->n, sizeof *e, by_plan_measured_row);
    for (size_t a = 0; a < p->n;) {
        size_t b = a, low = e[a].row;
        while (b < p->n && e[b].plan == e[a].plan) {
            low = e[b].row < low ? e[b].row : low;
            b++;
        }
        for (size_t i = a; i < b; i++) {
            bool lead = i == a || e[i].measured != e[i - 1].measured;
            size_t same = lead ? e[i].row : p->same[e[i - 1].row];
            p->first[e[i].row] = low;
            p->same[e[i].row] = same;
        }
        a = b;
    }
    free(e);
    return true;
}

/* A slot for the die `die` with every catalog entry on it (the rows' own GPU first: a
   --gpu-spec GPU outside the catalog is its own die). */
static void new_slot(struct gpu_slot *e, const char *die, const struct tp_gpu *row_gpu,
                     const struct tp_calib *base)
{
    memset(e, 0, sizeof *e);
    tp_snprintf(e->key, sizeof e->key, "%s", die);
    tp_snprintf(e->gpu[0].key, sizeof e->gpu[0].key, "%s", row_gpu->key);
    tp_calib_gemm_rates(base, row_gpu, &e->gpu[0].mamf, &e->gpu[0].mamf8);
    e->n_gpus = 1;
    for (size_t i = 0; i < tp_gpu_count() && e->n_gpus < MAX_DIE_GPUS; i++) {
        const struct tp_gpu *g = tp_gpu_get(i);
        if (strcmp(g->key, row_gpu->key) == 0 || strcmp(tp_gpu_die(g->key), die) != 0)
            continue;
        tp_snprintf(e->gpu[e->n_gpus].key, sizeof e->gpu[0].key, "%s", g->key);
        tp_calib_gemm_rates(base, g, &e->gpu[e->n_gpus].mamf, &e->gpu[e->n_gpus].mamf8);
        e->n_gpus++;
    }
}

/* GPU slots of the rows (their sources numbered already): which die each row runs on, and
   each die's GPUs with their base GEMM rates, rows and sources. */
static void setup_slots(struct problem *p, const struct tp_calib *base)
{
    const struct tp_run *const *runs = p->runs;
    for (size_t i = 0; i < p->n; i++) {
        const struct tp_gpu *g = &runs[i]->cluster.gpu;
        const char *die = tp_gpu_die(g->key);
        /* a GPU's dense GEMM rate comes from dense rows: an MoE row's grouped expert GEMMs run
           at their own rate (the Blackwell factors once came from MoE rows alone and put dense
           B200 runs 18-21% too fast) */
        if (runs[i]->model.n_experts > 0) {
            p->slot[i] = UINT32_MAX;
            continue;
        }
        uint32_t s = 0;
        while (s < p->n_gpu && strcmp(p->gpu[s].key, die) != 0)
            s++;
        if (s == p->n_gpu && p->n_gpu < TP_CALIB_MAX_GPUS)
            new_slot(&p->gpu[p->n_gpu++], die, g, base);
        p->slot[i] = s < p->n_gpu ? s : UINT32_MAX;
        if (s < p->n_gpu) {
            p->gpu[s].rows++;
            size_t k = 0; /* a source seen before on this GPU? */
            while (k < i && !(p->slot[k] == s && p->source[k] == p->source[i]))
                k++;
            p->gpu[s].sources += k == i;
        }
    }
}

/* Fitted values to 3 significant digits, and the report of each. */
static void round_and_report(struct problem *p, struct tp_fit_result *res)
{
    for (size_t i = 0; i < p->n_free; i++) {
        double *v = tp_fit_field(&p->cal, GLOBALS[p->free_k[i]].off);
        *v = round3(*v);
    }
    for (size_t k = 0; k < N_GLOBALS; k++)
        res->params[k].after = *tp_fit_field(&p->cal, GLOBALS[k].off);
    for (uint32_t g = 0; g < p->n_gpu; g++) {
        if (!p->gpu[g].fitted)
            continue;
        for (uint32_t k = 0; k < p->gpu[g].n_gpus; k++) {
            struct tp_calib_gpu *e = calib_entry(&p->cal, p->gpu[g].gpu[k].key);
            if (!e)
                continue;
            e->mamf_bf16 = round3(e->mamf_bf16);
            e->mamf_fp8 = round3(e->mamf_fp8);
            struct tp_fit_param *fp = &res->params[res->n_params++];
            tp_snprintf(fp->name, sizeof fp->name, "gpus.%s.mamf_bf16", p->gpu[g].gpu[k].key);
            fp->before = p->gpu[g].gpu[k].mamf;
            fp->after = e->mamf_bf16;
            fp->identified = true;
            fp->rows = p->gpu[g].rows;
            fp->sources = p->gpu[g].sources;
            fp->prior = fp->before;
            fp->prior_sd = GPU_SIGMA;
            fp->se = fp->after * (exp(p->gpu[g].se_u) - 1);
            fp->at_bound = p->gpu[g].at_edge;
            fp->cite = "";
        }
    }
}

enum tp_status tp_fit_planned(const struct tp_run *const *runs,
                              const struct tp_time_plan *const *plans, const double *measured,
                              size_t n, const struct tp_calib *base, const struct tp_fit_opts *o,
                              struct tp_calib *out, struct tp_fit_result *res,
                              struct tp_error *err)
{
    memset(res, 0, sizeof *res);
    if (n == 0)
        return tp_fail(err, TP_EINVAL, "calibrate: no runs with a measured throughput to fit");
    for (size_t i = 0; i < n; i++)
        if (!(measured[i] > 0) || !isfinite(measured[i]))
            return tp_fail(err, TP_EINVAL, "calibrate: %s: measured throughput must be positive",
                           runs[i]->row_id);
    struct problem p;
    memset(&p, 0, sizeof p);
    p.o = o;
    p.runs = runs;
    p.plans = plans;
    p.measured = measured;
    p.n = n;
    p.cal = *base;
    p.lambda = o->prior_weight / (double)n; /* the data term is a mean: the pull weighs as
                                                prior_weight rows, fading as rows accumulate */
    p.only = UINT32_MAX;
    p.source = calloc(n, sizeof *p.source);
    p.slot = calloc(n, sizeof *p.slot);
    p.r = calloc(n, sizeof *p.r);
    p.lr = calloc(n, sizeof *p.lr);
    p.scratch = calloc(n, sizeof *p.scratch);
    p.first = calloc(n, sizeof *p.first);
    p.same = calloc(n, sizeof *p.same);
    p.tps = calloc(n, sizeof *p.tps);
    p.h = calloc(n, sizeof *p.h);
    p.src_sum = calloc(n, sizeof *p.src_sum);
    p.src_rows = calloc(n, sizeof *p.src_rows);
    enum tp_status st = TP_OK;
    if (!p.source || !p.slot || !p.r || !p.lr || !p.scratch || !p.first || !p.same || !p.tps ||
        !p.h || !p.src_sum || !p.src_rows) {
        st = tp_fail(err, TP_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    size_t n_src = share_rows(&p) ? tp_source_ordinals(runs, n, p.source) : SIZE_MAX;
    if (n_src == SIZE_MAX) {
        st = tp_fail(err, TP_ENOMEM, "calibrate: out of memory");
        goto done;
    }
    p.n_sources = (uint32_t)n_src;
    setup_slots(&p, base);
    res->rows = n;
    res->sources = p.n_sources;
    p.loss = LOSS_MEDIAN;
    res->objective_before = tp_fit_data_term(&p);
    p.loss = LOSS_HUBER;
    tp_fit_find_free(&p, res);
    /* A GPU's own GEMM rate needs enough rows, and rows from two sources when the fit has
       two: one source alone cannot tell its GPU from its software stack. */
    uint32_t need_sources = p.n_sources >= 2 ? 2 : 1;
    size_t reported = res->n_params; /* one reported parameter per GPU on a fitted die */
    for (uint32_t g = 0; g < p.n_gpu; g++) {
        p.gpu[g].fitted = o->per_gpu && p.gpu[g].rows >= o->min_gpu_rows &&
                          p.gpu[g].sources >= need_sources &&
                          reported + p.gpu[g].n_gpus <= TP_FIT_MAX_PARAMS;
        if (p.gpu[g].fitted)
            reported += p.gpu[g].n_gpus;
    }
    for (uint32_t round = 0; round < (o->rounds ? o->rounds : 1); round++) {
        fit_globals_multistart(&p, o);
        for (uint32_t g = 0; g < p.n_gpu; g++)
            if (p.gpu[g].fitted)
                fit_gpu(&p, g);
    }
    tp_fit_hold_bounded(&p, res, o->max_evals);
    round_and_report(&p, res);
    tp_fit_standard_errors(&p, res);
    p.loss = LOSS_MEDIAN;
    res->objective_after = tp_fit_data_term(&p);
    res->evaluations = p.evals;
    tp_fit_join_domain(&p.cal.domain, runs, measured, n, p.n_sources, &p.cal);
    *out = p.cal;
done:
    free(p.source);
    free(p.slot);
    free(p.r);
    free(p.lr);
    free(p.scratch);
    free(p.first);
    free(p.same);
    free(p.tps);
    free(p.h);
    free(p.src_sum);
    free(p.src_rows);
    return st;
}
