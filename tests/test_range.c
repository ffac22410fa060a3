/*
 * test_range.c - the 80% range's predictive distribution (src/eval/range.c) and the
 * random-effects spread it is built from (tp_range_spread, src/fit/crossval.c).
 *
 * A synthetic set with known variance components: sources drawn with a between-source sd tau
 * and rows with a within-source sd; the estimator must recover both, and the interval
 * mu -+ 1.2816 sqrt(within^2 + tau^2) must hold about 80% of the rows of NEW sources, while
 * the interval without tau (the within-source spread alone, what a per-class band of pooled
 * residuals gives) holds far fewer.  Then the built-in range: monotone in the distance from
 * the calibration data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <string.h>

/* a fixed-seed generator (64-bit LCG, Knuth's MMIX constants) and Box-Muller normals */
static uint64_t seed = 42;
static double uniform(void)
{
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    return ((double)(seed >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

enum { N_SRC = 200, PER_SRC = 8, N = N_SRC * PER_SRC };

static void draw(double mu, double tau, double within, double *x, uint32_t *src)
{
    for (size_t s = 0; s < N_SRC; s++) {
        double b = tau * normal();
        for (size_t r = 0; r < PER_SRC; r++) {
            x[s * PER_SRC + r] = mu + b + within * normal();
            src[s * PER_SRC + r] = (uint32_t)s;
        }
    }
}

static double cover(const double *x, size_t n, double centre, double sd)
{
    size_t in = 0;
    for (size_t i = 0; i < n; i++)
        in += fabs(x[i] - centre) <= 1.2816 * sd;
    return (double)in / (double)n;
}

static void test_spread_recovers_components(void **state)
{
    (void)state;
    static double x[N], fresh[N];
    static uint32_t src[N];
    const double mu = -0.1, tau = 0.15, within = 0.08;
    seed = 42;
    draw(mu, tau, within, x, src);
    struct tp_range_spread sp;
    assert_int_equal(tp_range_spread(x, src, N, &sp), TP_OK);
    assert_int_equal(sp.rows, N);
    assert_int_equal(sp.sources, N_SRC);
    /* 200 sources: the sd of a sample sd is about sd / sqrt(2 x 199) = 5% of it */
    assert_float_equal(sp.mu, mu, 0.04);
    assert_float_equal(sp.within, within, 0.1 * within);
    assert_float_equal(sp.tau, tau, 0.2 * tau);
    /* new sources: the predictive interval holds 80% of their rows, the within-only one not */
    draw(mu, tau, within, fresh, src);
    double full = cover(fresh, N, sp.mu, sqrt(sp.within * sp.within + sp.tau * sp.tau));
    double within_only = cover(fresh, N, sp.mu, sp.within);
    assert_true(full > 0.75 && full < 0.85);
    /* within alone: sd 0.08 of a true 0.17, P(|z| < 1.28 x 0.47) is about 45% */
    assert_true(within_only < 0.6);
}

static void test_spread_edges(void **state)
{
    (void)state;
    /* one source: no tau; NaN rows skipped; two rows of it give within = |a - b| / sqrt 2 */
    const double x[] = {0.1, NAN, 0.3};
    const uint32_t src[] = {0, 0, 0};
    struct tp_range_spread sp;
    assert_int_equal(tp_range_spread(x, src, 3, &sp), TP_OK);
    assert_int_equal(sp.rows, 2);
    assert_int_equal(sp.sources, 1);
    assert_float_equal(sp.mu, 0.2, 1e-12);
    assert_float_equal(sp.within, 0.2 / sqrt(2), 1e-12);
    assert_true(isnan(sp.tau));
    /* two sources of one row each, 0 and 0.2: no within, tau = sd of the means = 0.1414 */
    const double y[] = {0, 0.2};
    const uint32_t s2[] = {0, 1};
    assert_int_equal(tp_range_spread(y, s2, 2, &sp), TP_OK);
    assert_true(isnan(sp.within));
    assert_float_equal(sp.tau, 0.2 / sqrt(2), 1e-12);
    assert_int_equal(tp_range_spread(y, s2, 0, &sp), TP_OK);
    assert_int_equal(sp.rows, 0);
    assert_true(isnan(sp.mu));
}

/* The range never narrows as the run moves away from the calibration data: each distance flag
   keeps or widens it, about the same centre; and a borrowed class is wider than its source. */
static void test_range_monotone_in_distance(void **state)
{
    (void)state;
    static struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_error err;
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &m, &err), TP_OK);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 8, &err), TP_OK);
    tp_job_init(&j);
    tp_layout_init(&l);
    l.dp = 8;
    j.framework = TP_FW_MEGATRON;
    struct tp_range base, far, prev;
    tp_time_range(&m, &c, &j, &l, 0, &base);
    assert_string_equal(base.cls, "fused/nvidia/dense");
    assert_true(base.lo < 1 && base.hi > 1 && !base.widened);
    const unsigned flags[] = {TP_DOMAIN_GPU, TP_DOMAIN_STACK, TP_DOMAIN_SIZE, TP_DOMAIN_SEQ,
                              TP_DOMAIN_SCALE, TP_DOMAIN_MAMF, TP_DOMAIN_MFU};
    prev = base;
    unsigned acc = 0;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        tp_time_range(&m, &c, &j, &l, flags[i], &far);
        assert_true(far.lo <= base.lo && far.hi >= base.hi && far.widened);
        /* the same centre in log space */
        assert_float_equal(log(far.lo) + log(far.hi), log(base.lo) + log(base.hi), 1e-9);
        acc |= flags[i];
        tp_time_range(&m, &c, &j, &l, acc, &far);
        assert_true(far.lo <= prev.lo && far.hi >= prev.hi);
        prev = far;
    }
    /* the sd's parts: sd^2 = within^2 + tau^2 + distance^2.  Each distance term is what its
       leave-one-regime-out split needs; with the spread between sources measured over every
       held-out source the splits need none (src/eval/range.c), so the flags mark the range
       widened without widening it */
    tp_time_range(&m, &c, &j, &l, TP_DOMAIN_GPU | TP_DOMAIN_STACK, &far);
    assert_float_equal(far.sd * far.sd,
                       far.within * far.within + far.tau * far.tau + far.distance * far.distance,
                       1e-12);
    assert_true(far.widened && far.distance >= 0);
    /* two layouts on one cluster share the between-source offset: the relative band is the
       range without it, narrower than half the range whenever tau > 0 */
    assert_true(base.tau > 0);
    assert_true(tp_range_relative(&base) < sqrt(base.hi / base.lo));
    assert_float_equal(log(tp_range_relative(&base)), base.q * base.within, 1e-12);
    /* another vendor: fused/other/dense borrows fused/nvidia/dense plus the GPU-family term */
    struct tp_cluster amd;
    assert_int_equal(tp_cluster_init(&amd, "mi300x", 8, &err), TP_OK);
    struct tp_range other, nv_far;
    tp_time_range(&m, &amd, &j, &l, 0, &other);
    tp_time_range(&m, &c, &j, &l, TP_DOMAIN_GPU, &nv_far);
    assert_string_equal(other.cls, "fused/other/dense");
    assert_int_equal(other.rows, 0);
    assert_float_equal(other.lo, nv_far.lo, 1e-12);
    assert_float_equal(other.hi, nv_far.hi, 1e-12);
    /* the range is the distribution's quantiles: log(hi / lo) = 2 q sd, q the normal's 1.2816
       or a Student's t above it (never below: a t quantile is wider than the normal's) */
    assert_float_equal(log(base.hi / base.lo), 2 * base.q * base.sd, 1e-9);
    assert_true(base.q >= 1.2816 && base.q < 1.3);
    /* the Hugging Face classes estimate their spread from a handful of runs: Student's t at
       0.9 for 5 degrees of freedom, 1.4759 */
    struct tp_job hfj = j;
    hfj.framework = TP_FW_AXOLOTL;
    struct tp_range hf;
    tp_time_range(&m, &amd, &hfj, &l, 0, &hf);
    assert_string_equal(hf.cls, "hf/other/dense");
    assert_float_equal(hf.q, 1.4759, 1e-4);
    assert_float_equal(log(hf.hi / hf.lo), 2 * hf.q * hf.sd, 1e-9);
    /* a model size outside what the class's rows cover never narrows it */
    static struct tp_model big;
    big = m;
    big.n_layers *= 16;
    tp_time_range(&big, &c, &j, &l, 0, &far);
    assert_true(far.lo <= base.lo + 1e-12 && far.hi >= base.hi - 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spread_recovers_components),
        cmocka_unit_test(test_spread_edges),
        cmocka_unit_test(test_range_monotone_in_distance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
