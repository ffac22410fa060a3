/*
 * bench_calibrate.c - how well the calibration generalises: the error on the runs files with
 * the uncalibrated physics priors, after fitting (in sample), and leave-one-source-out (each
 * source predicted by a fit to the other sources: the honest figure), overall and per source.
 * A benchmark: it never fails on accuracy.
 *   bench_calibrate [RUNS.csv ...]   default: the calibration set (data/runs/calibration.txt)
 *   bench_calibrate --smoke          one small fit on the first file (checks that it runs)
 *   bench_calibrate --rows FILE ...  also write each row's errors (CSV: row_id, source, gpu,
 *                                    priors, fitted, held-out, built-in) to FILE
 */
#include "trainplan.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_ROWS = 1024 };

struct state {
    struct tp_run runs[MAX_ROWS];
    double measured[MAX_ROWS];
    size_t n;
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    (void)path;
    (void)line;
    struct state *s = ctx;
    /* the rows calibrate fits: not those whose layout or head count is assumed */
    if (why || run->duplicate || tp_run_assumed(run) || s->n == MAX_ROWS)
        return true;
    double m = tp_run_measured_tokens_per_s(run, NULL);
    if (!(m > 0))
        return true;
    s->runs[s->n] = *run;
    s->measured[s->n++] = m;
    return true;
}

static void line(const struct state *s, const double *e, const char *source)
{
    static double pick[MAX_ROWS], scratch[MAX_ROWS];
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!source || strcmp(s->runs[i].source, source) == 0)
            pick[n++] = e[i];
    struct tp_err_stats st;
    tp_err_stats(pick, n, scratch, &st);
    if (st.n == 0)
        printf(" %8s", "-");
    else
        printf(" %7.1f%%", 100 * st.median_abs);
}

/* The issue-14 figures of the held-out errors in one line: the median over the sources of each
   source's median |error| (source-balanced), the worst source, and the p90 over the rows
   (tp_err_stats: linear interpolation between order statistics). */
static void held_summary(const struct state *s, const double *held)
{
    static double pick[MAX_ROWS], scratch[MAX_ROWS], medians[MAX_ROWS];
    size_t n_src = 0;
    const char *worst = NULL;
    double worst_med = -1;
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(s->runs[j].source, s->runs[i].source) != 0;
        if (!first)
            continue;
        size_t n = 0;
        for (size_t j = 0; j < s->n; j++)
            if (strcmp(s->runs[j].source, s->runs[i].source) == 0)
                pick[n++] = held[j];
        struct tp_err_stats st;
        tp_err_stats(pick, n, scratch, &st);
        if (st.n == 0)
            continue;
        medians[n_src++] = st.median_abs;
        if (st.median_abs > worst_med) {
            worst_med = st.median_abs;
            worst = s->runs[i].source;
        }
    }
    struct tp_err_stats all, bal;
    tp_err_stats(held, s->n, scratch, &all);
    tp_err_stats(medians, n_src, scratch, &bal); /* medians are >= 0: |x| = x */
    if (all.n == 0 || bal.n == 0)
        return;
    printf("\n  held out: median of the %zu source medians %.1f%%, worst source %s %.1f%%; "
           "over the rows median %.1f%%, p90 %.1f%%\n",
           bal.n, 100 * bal.median_abs, worst, 100 * worst_med, 100 * all.median_abs,
           100 * all.p90_abs);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, size_t n, double p)
{
    double k = (double)(n - 1) * p;
    size_t f = (size_t)floor(k), c = (size_t)ceil(k);
    return sorted[f] + (sorted[c] - sorted[f]) * (k - (double)f);
}

/* Each row's range under the built-in table (its class: src/eval/range.c), looked up once. */
static void row_ranges(const struct state *s, struct tp_range *rg)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct tp_run *r = &s->runs[i];
        tp_time_range(&r->model, &r->cluster, &r->job, &r->layout, 0, &rg[i]);
    }
}

/* Whether row i is the first of its class among the rows whose x is finite (x NULL: every
   row), so that a loop over the rows visits each class once, in order of appearance. */
static bool first_of_class(const struct tp_range *rg, const double *x, size_t i)
{
    if (x && !isfinite(x[i]))
        return false;
    for (size_t j = 0; j < i; j++)
        if ((!x || isfinite(x[j])) && strcmp(rg[j].cls, rg[i].cls) == 0)
            return false;
    return true;
}

/* Per class of run (src/eval/range.c): the 10th and 90th percentiles of measured / predicted of the
   held-out predictions (what the built-in 80% ranges should be), and the share of held-out runs
   inside the built-in range (its coverage; 0.8 is honest). */
static void range_table(const struct state *s, const double *held)
{
    static double ratio[MAX_ROWS];
    static struct tp_range rg[MAX_ROWS];
    row_ranges(s, rg);
    printf("\n  80%% ranges by class (measured / held-out prediction):\n");
    printf("  %-22s %5s %8s %8s   %-17s %8s   %s\n", "class", "rows", "p10", "p90",
           "built-in range", "coverage", "source-balanced p10 - p90");
    for (size_t i = 0; i < s->n; i++) {
        if (!first_of_class(rg, NULL, i))
            continue;
        size_t n = 0, inside = 0;
        for (size_t j = 0; j < s->n; j++) {
            if (strcmp(rg[j].cls, rg[i].cls) != 0 || !isfinite(held[j]))
                continue;
            ratio[n] = 1 / (1 + held[j]);
            inside += ratio[n] >= rg[i].lo && ratio[n] <= rg[i].hi;
            n++;
        }
        if (n == 0)
            continue;
        qsort(ratio, n, sizeof ratio[0], cmp_double);
        /* the sources of the class and their rows, for the source-balanced percentiles */
        double src_n[64];
        size_t n_src = 0;
        const char *names[64];
        for (size_t j = 0; j < s->n; j++) {
            if (strcmp(rg[j].cls, rg[i].cls) != 0 || !isfinite(held[j]))
                continue;
            size_t q = 0;
            while (q < n_src && strcmp(names[q], s->runs[j].source) != 0)
                q++;
            if (q == n_src && n_src < 64) {
                names[n_src] = s->runs[j].source;
                src_n[n_src++] = 0;
            }
            if (q < n_src)
                src_n[q]++;
        }
        /* and the source-balanced percentiles: each source's rows weigh 1 / (sources x its
           rows), so a new source is predicted as any source, not as the largest */
        static struct wr {
            double r, w;
        } wr[MAX_ROWS];
        size_t m = 0;
        for (size_t j = 0; j < s->n; j++) {
            if (strcmp(rg[j].cls, rg[i].cls) != 0 || !isfinite(held[j]))
                continue;
            for (size_t q = 0; q < n_src; q++)
                if (strcmp(names[q], s->runs[j].source) == 0) {
                    wr[m].r = 1 / (1 + held[j]);
                    wr[m++].w = 1 / ((double)n_src * src_n[q]);
                }
        }
        qsort(wr, m, sizeof wr[0], cmp_double); /* by r: the struct's first member */
        double cum = 0, b10 = NAN, b90 = NAN;
        for (size_t q = 0; q < m; q++) {
            cum += wr[q].w;
            if (isnan(b10) && cum >= 0.1)
                b10 = wr[q].r;
            if (isnan(b90) && cum >= 0.9)
                b90 = wr[q].r;
        }
        printf("  %-22s %5zu %8.3f %8.3f   %6.2f - %-8.2f %7.0f%%   %5.3f - %5.3f (%zu sources)\n",
               rg[i].cls, n, quantile(ratio, n, 0.1), quantile(ratio, n, 0.9), rg[i].lo, rg[i].hi,
               100.0 * (double)inside / (double)n, b10, b90, n_src);
    }
}

/* Numbers the rows' sources 0, 1, ... in order of first appearance (tp_range_spread's ids). */
static void source_ids(const struct state *s, uint32_t *id)
{
    for (size_t i = 0; i < s->n; i++) {
        id[i] = (uint32_t)i;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->runs[j].source, s->runs[i].source) == 0) {
                id[i] = id[j];
                break;
            }
    }
}

static double tokens_per_micro_batch(const struct tp_run *r)
{
    return (double)r->layout.mbs * (double)r->job.seq / (double)(r->layout.cp ? r->layout.cp : 1);
}

/* The range model's components (src/eval/range.c prints them as its table): per class, the
   random-effects spread of the leave-one-source-out log errors (tp_range_spread) and the span of
   model sizes and tokens per micro-batch per GPU its rows cover; and the between-source spread of
   every source (the tau of classes measured by fewer than three sources). */
static void range_model(const struct state *s, const double *held)
{
    static double x[MAX_ROWS];
    static uint32_t id[MAX_ROWS];
    static struct tp_range rg[MAX_ROWS];
    source_ids(s, id);
    row_ranges(s, rg);
    for (size_t i = 0; i < s->n; i++)
        x[i] = isfinite(held[i]) ? -log1p(held[i]) : NAN;
    struct tp_range_spread all;
    if (tp_range_spread(x, id, s->n, &all) != TP_OK)
        return;
    printf("\n  range model (src/eval/range.c): log(measured / held-out prediction) = mu + "
           "source + row\n");
    printf("  all classes: %zu rows, %zu sources, mu %.3f, within %.3f, tau %.3f (between "
           "sources)\n", all.rows, all.sources, all.mu, all.within, all.tau);
    printf("  %-20s %5s %4s %7s %7s %7s %7s   %-17s %s\n", "class", "rows", "src", "mu",
           "within", "tau", "used", "params", "tokens/micro-batch/GPU");
    size_t hf_dof = 0;
    double hf_ss = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!first_of_class(rg, NULL, i))
            continue;
        static double cx[MAX_ROWS];
        double p_lo = INFINITY, p_hi = 0, t_lo = INFINITY, t_hi = 0;
        for (size_t j = 0; j < s->n; j++) {
            bool in = strcmp(rg[j].cls, rg[i].cls) == 0;
            cx[j] = in ? x[j] : NAN;
            if (!in)
                continue;
            struct tp_params p;
            tp_count_params(&s->runs[j].model, &p);
            p_lo = fmin(p_lo, (double)p.total);
            p_hi = fmax(p_hi, (double)p.total);
            t_lo = fmin(t_lo, tokens_per_micro_batch(&s->runs[j]));
            t_hi = fmax(t_hi, tokens_per_micro_batch(&s->runs[j]));
        }
        struct tp_range_spread c;
        if (tp_range_spread(cx, id, s->n, &c) != TP_OK)
            continue;
        double tau = c.sources >= 3 ? c.tau : all.tau;
        if (strncmp(rg[i].cls, "hf/", 3) == 0 && c.rows > c.sources) {
            hf_ss += c.within * c.within * (double)(c.rows - c.sources);
            hf_dof += c.rows - c.sources;
        }
        printf("  %-20s %5zu %4zu %7.3f %7.3f %7.3f %7.3f   %.3g-%-9.3g %.4g-%.4g\n", rg[i].cls,
               c.rows, c.sources, c.mu, c.within, c.sources >= 2 ? c.tau : NAN, tau, p_lo, p_hi,
               t_lo, t_hi);
    }
    printf("  Hugging Face classes' rows: within-source sum of squares %.4f over %zu degrees of "
           "freedom (src/eval/range.c pools them with the users' MoE runs)\n", hf_ss, hf_dof);
}

/* ---- the spread over every held-out source: the calibration's and the public files' ------ */

/* One held-out row of either set: its log error about its class's centre, the source, the
   class, and the parts of its range that are not the class's spread. */
struct spread_row {
    double d, dist, q;
    uint32_t src, cls;
    bool pub;
};

enum { MAX_SPREAD = 2 * MAX_ROWS, MAX_CLASSES = 16 };

/* within and tau of the rows of class `cls` (every class when cls is MAX_CLASSES) about their
   centre, leaving out source `ex` (UINT32_MAX: none): the pooled sd inside the sources, and
   the sources' mean square offset from the centre less the share the within-source spread
   carries (each source weighing one; the centre is fixed, not re-estimated).  The number of
   sources, or 0 when fewer than two rows of one source exist. */
static size_t spread_about(const struct spread_row *r, size_t n, uint32_t cls, uint32_t ex,
                           double *within, double *tau)
{
    static double sum[MAX_SPREAD], cnt[MAX_SPREAD];
    memset(cnt, 0, sizeof cnt);
    memset(sum, 0, sizeof sum);
    for (size_t i = 0; i < n; i++)
        if ((cls == MAX_CLASSES || r[i].cls == cls) && r[i].src != ex) {
            sum[r[i].src] += r[i].d;
            cnt[r[i].src]++;
        }
    size_t k = 0, rows = 0;
    double ms = 0, inv = 0, ss = 0;
    for (size_t s = 0; s < MAX_SPREAD; s++)
        if (cnt[s] > 0) {
            ms += (sum[s] / cnt[s]) * (sum[s] / cnt[s]);
            inv += 1 / cnt[s];
            rows += (size_t)cnt[s];
            k++;
        }
    for (size_t i = 0; i < n; i++)
        if ((cls == MAX_CLASSES || r[i].cls == cls) && r[i].src != ex) {
            double e = r[i].d - sum[r[i].src] / cnt[r[i].src];
            ss += e * e;
        }
    if (k == 0 || rows <= k)
        return 0;
    *within = sqrt(ss / (double)(rows - k));
    *tau = sqrt(fmax(0, ms / (double)k - *within * *within * inv / (double)k));
    return k;
}

/* The range's spread measured on every held-out source, not only the calibration's: the
   calibration rows' leave-one-source-out errors and the held-out public files' errors under the
   built-in calibration (each file's rows a source no fit saw), about each class's centre
   (src/eval/range.c's mu: the calibration sources' mean, which this leaves alone).  A user's
   cluster is one more source; the public files are such sources.  Then each source is judged
   by the spread of the others (leave-one-source-out of within and tau), with its rows' own
   distance terms: the coverage src/eval/range.c would give a source it had never seen. */
static void range_model_held_out(const struct state *s, const double *held)
{
    static char files[BENCH_MAX_FILES][BENCH_PATH];
    static char *ptr[BENCH_MAX_FILES];
    static struct state pub;
    static struct spread_row r[MAX_SPREAD];
    static char cls_name[MAX_CLASSES][32], src_name[MAX_SPREAD][96];
    size_t n_files = bench_held_out_runs(files), n = 0, n_cls = 0, n_src = 0;
    for (size_t i = 0; i < n_files; i++)
        ptr[i] = files[i];
    pub.n = 0;
    if (n_files == 0 || bench_read_runs("bench_calibrate", ptr, n_files, on_row, &pub) != 0)
        return;
    struct tp_calib builtin;
    tp_calib_init(&builtin);
    static struct tp_run_eval e;
    for (size_t i = 0; i < s->n + pub.n && n < MAX_SPREAD; i++) {
        bool is_pub = i >= s->n;
        const struct tp_run *run = is_pub ? &pub.runs[i - s->n] : &s->runs[i];
        struct tp_range rg;
        double err;
        if (is_pub) {
            if (tp_run_evaluate(run, &builtin, &e) != TP_OK || !isfinite(e.err))
                continue;
            rg = e.range;
            err = e.err;
        } else {
            if (!isfinite(held[i]))
                continue;
            tp_time_range(&run->model, &run->cluster, &run->job, &run->layout, 0, &rg);
            err = held[i];
        }
        uint32_t c = 0, k = 0;
        while (c < n_cls && strcmp(cls_name[c], rg.cls) != 0)
            c++;
        if (c == n_cls && n_cls < MAX_CLASSES)
            snprintf(cls_name[n_cls++], sizeof cls_name[0], "%s", rg.cls);
        while (k < n_src && strcmp(src_name[k], run->source) != 0)
            k++;
        if (k == n_src)
            snprintf(src_name[n_src++], sizeof src_name[0], "%s", run->source);
        if (c == MAX_CLASSES)
            continue;
        r[n++] = (struct spread_row){.d = -log1p(err) - 0.5 * log(rg.lo * rg.hi),
                                     .dist = rg.distance, .q = rg.q, .src = k, .cls = c,
                                     .pub = is_pub};
    }
    double w_all = NAN, t_all = NAN;
    size_t k_all = spread_about(r, n, MAX_CLASSES, UINT32_MAX, &w_all, &t_all);
    printf("\n  range spread over every held-out source (the calibration's leave-one-source-out "
           "rows and the %zu held-out files' rows under the built-in calibration, about each "
           "class's centre; each source weighing one):\n", n_files);
    printf("  all classes: %zu sources, within %.3f, tau %.3f\n", k_all, w_all, t_all);
    printf("  %-20s %5s %4s %7s %7s %7s\n", "class", "rows", "src", "within", "tau", "used");
    for (uint32_t c = 0; c < n_cls; c++) {
        double w = NAN, t = NAN;
        size_t rows = 0, k = spread_about(r, n, c, UINT32_MAX, &w, &t);
        for (size_t i = 0; i < n; i++)
            rows += r[i].cls == c;
        printf("  %-20s %5zu %4zu %7.3f %7.3f %7.3f\n", cls_name[c], rows, k, w, t,
               k >= 3 ? t : t_all);
    }
    /* each source judged by the others' spread */
    double in[2] = {0, 0}, all[2] = {0, 0}, src_in[2] = {0, 0}, srcs[2] = {0, 0};
    for (uint32_t k = 0; k < n_src; k++) {
        double yes = 0, tot = 0, wa = NAN, ta = NAN;
        bool is_pub = false;
        spread_about(r, n, MAX_CLASSES, k, &wa, &ta); /* every class's, without source k */
        for (size_t i = 0; i < n; i++) {
            if (r[i].src != k)
                continue;
            double w = NAN, t = NAN;
            size_t kc = spread_about(r, n, r[i].cls, k, &w, &t);
            if (kc < 3)
                t = ta;
            if (!isfinite(w))
                w = wa;
            double sd = sqrt(w * w + t * t + r[i].dist * r[i].dist);
            yes += fabs(r[i].d) <= r[i].q * sd;
            tot++;
            is_pub = r[i].pub;
        }
        if (tot == 0)
            continue;
        in[is_pub] += yes;
        all[is_pub] += tot;
        src_in[is_pub] += yes / tot;
        srcs[is_pub]++;
    }
    printf("  each source judged by the others' spread: inside the 80%% range: calibration "
           "sources %.0f%% of rows, %.0f%% source-balanced (%.0f); held-out files' sources "
           "%.0f%% of rows, %.0f%% source-balanced (%.0f)\n",
           100 * in[0] / all[0], 100 * src_in[0] / srcs[0], srcs[0], 100 * in[1] / all[1],
           100 * src_in[1] / srcs[1], srcs[1]);
}

/* Leave-one-group-out, as a user meets a run the calibration never saw: the rows grouped by
   source, GPU family, stack or model-size decade; each group predicted by a calibration fitted
   (from the priors, the built-in fit options) on the other groups' rows, with that
   calibration's domain flags and 80% range (tp_run_evaluate), so the range widens where the
   group lies outside what the fold was fitted on.  Per group: the median |error| and the share
   of its rows inside their range; then the median of the group medians and the coverage over
   the rows and group-balanced. */
enum regime { BY_SOURCE, BY_GPU, BY_STACK, BY_SIZE };

static void regime_key(const struct tp_run *r, enum regime k, char *out, size_t len)
{
    if (k == BY_SOURCE) {
        snprintf(out, len, "%s", r->source);
    } else if (k == BY_GPU) {
        size_t n = strcspn(r->cluster.gpu.key, "-");
        snprintf(out, len, "gpu:%.*s", (int)n, r->cluster.gpu.key);
    } else if (k == BY_STACK) {
        snprintf(out, len, "stack:%s", tp_stack_get(r->job.framework)->key);
    } else {
        struct tp_params p;
        tp_count_params(&r->model, &p);
        snprintf(out, len, "size:1e%d", (int)floor(log10((double)(p.total ? p.total : 1))));
    }
}

/* Per row of the split being run: log(measured / predicted), inside its range, the fold's domain
   flags, its group and its range's width (high / low). */
static double row_x[MAX_ROWS], row_width[MAX_ROWS];
static bool row_in[MAX_ROWS];
static uint32_t row_group[MAX_ROWS];
static unsigned row_flags[MAX_ROWS];

/* The distance flags each regime split measures (src/eval/range.c's D_GPU, D_STACK, D_SHAPE). */
static unsigned split_flags(enum regime k)
{
    return k == BY_GPU     ? TP_DOMAIN_GPU | TP_DOMAIN_MAMF | TP_DOMAIN_MFU
           : k == BY_STACK ? TP_DOMAIN_STACK
           : k == BY_SIZE  ? TP_DOMAIN_SIZE | TP_DOMAIN_SEQ | TP_DOMAIN_SCALE
                           : 0;
}

/* Weighted share of the flagged rows with |x - centre| <= q sqrt(v0 + d^2). */
static double flagged_cover(size_t n, const double *z, const double *v0, const double *q,
                            const double *w, double d)
{
    double in = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
        all += w[i];
        in += fabs(z[i]) <= q[i] * sqrt(v0[i] + d * d) ? w[i] : 0;
    }
    return all > 0 ? in / all : NAN;
}

/* The split's coverage source-balanced, its ranges' median width per class, and for a regime
   split the distance term its flagged rows need: the d (sd in log space, added in quadrature
   to the rest of each row's range) that puts 80% of them inside, each source weighing one (a
   user's cluster is a new source) and each held-out group weighing one, whichever needs more
   (bisection; 0 when they are already inside at 80%). */
static void split_figures(const struct state *s, enum regime k)
{
    static uint32_t id[MAX_ROWS];
    static double w[MAX_ROWS], z[MAX_ROWS], v0[MAX_ROWS], quant[MAX_ROWS], widths[MAX_ROWS];
    static double src_n[MAX_ROWS], src_in[MAX_ROWS], grp_n[MAX_ROWS];
    source_ids(s, id);
    memset(src_n, 0, sizeof src_n);
    memset(src_in, 0, sizeof src_in);
    memset(grp_n, 0, sizeof grp_n);
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(row_x[i])) {
            src_n[id[i]]++;
            src_in[id[i]] += row_in[i];
        }
    double bal = 0, n_src = 0;
    for (size_t q = 0; q < s->n; q++)
        if (src_n[q] > 0) {
            bal += src_in[q] / src_n[q];
            n_src++;
        }
    printf("  source-balanced: %.0f%% inside (%g sources); median width high/low:", 100 * bal / n_src,
           n_src);
    static struct tp_range rg[MAX_ROWS];
    row_ranges(s, rg);
    for (size_t i = 0; i < s->n; i++) {
        if (!first_of_class(rg, row_x, i))
            continue;
        size_t m = 0;
        for (size_t j = 0; j < s->n; j++)
            if (isfinite(row_x[j]) && strcmp(rg[j].cls, rg[i].cls) == 0)
                widths[m++] = row_width[j];
        qsort(widths, m, sizeof widths[0], cmp_double);
        printf(" %s %.2fx", rg[i].cls, quantile(widths, m, 0.5));
    }
    printf("\n");
    unsigned g = split_flags(k);
    if (!g)
        return;
    /* both weightings: each source weighing one, and each held-out group weighing one; the
       term is the larger need, so that both shares reach 80% */
    double need[2];
    size_t n = 0, sources = 0;
    for (int by_group = 0; by_group < 2; by_group++) {
        memset(grp_n, 0, sizeof grp_n);
        for (size_t i = 0; i < s->n; i++)
            if (isfinite(row_x[i]) && (row_flags[i] & g))
                grp_n[by_group ? row_group[i] : id[i]]++;
        n = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (!isfinite(row_x[i]) || !(row_flags[i] & g))
                continue;
            const struct tp_run *r = &s->runs[i];
            struct tp_range rest; /* the row's range without this split's term */
            tp_time_range(&r->model, &r->cluster, &r->job, &r->layout, row_flags[i] & ~g, &rest);
            z[n] = row_x[i] - 0.5 * (log(rest.hi) + log(rest.lo));
            v0[n] = rest.sd * rest.sd;
            quant[n] = rest.q;
            w[n++] = 1 / grp_n[by_group ? row_group[i] : id[i]];
        }
        double lo = 0, hi = 3;
        if (n == 0 || flagged_cover(n, z, v0, quant, w, 0) >= 0.8) {
            hi = 0;
        } else {
            for (int it = 0; it < 60; it++) {
                double mid = 0.5 * (lo + hi);
                if (flagged_cover(n, z, v0, quant, w, mid) >= 0.8)
                    hi = mid;
                else
                    lo = mid;
            }
        }
        need[by_group] = hi;
        if (!by_group)
            for (size_t q = 0; q < s->n; q++)
                sources += grp_n[q] > 0;
    }
    printf("  distance term for this split's flags: %zu flagged rows of %zu sources need sd %.3f "
           "(in log space) for 80%% inside source-balanced, %.3f group-balanced: %.3f\n", n,
           sources, need[0], need[1], fmax(need[0], need[1]));
}

static void regime_out(const struct state *s, const struct tp_calib *prior,
                       const struct tp_fit_opts *o, enum regime k)
{
    static char key[MAX_ROWS][48];
    static const struct tp_run *train[MAX_ROWS];
    static double tm[MAX_ROWS], pick[MAX_ROWS], scratch[MAX_ROWS];
    static double medians[MAX_ROWS], cover[MAX_ROWS];
    static const char *const NAMES[] = {"source", "GPU family", "stack", "model-size decade"};
    for (size_t i = 0; i < s->n; i++) {
        regime_key(&s->runs[i], k, key[i], sizeof key[i]);
        row_x[i] = NAN;
        row_in[i] = false;
        row_flags[i] = 0;
    }
    printf("\n  leave-one-%s-out (each group predicted by a fit to the others, with that fit's "
           "domain and 80%% range):\n", k == BY_SOURCE ? "source" : "regime");
    printf("  %-46s %5s %8s %8s %9s\n", NAMES[k], "rows", "median", "p90", "in range");
    size_t n_groups = 0, in_all = 0, n_all = 0;
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(key[j], key[i]) != 0;
        if (!first)
            continue;
        size_t n_train = 0;
        for (size_t j = 0; j < s->n; j++)
            if (strcmp(key[j], key[i]) != 0) {
                train[n_train] = &s->runs[j];
                tm[n_train++] = s->measured[j];
            }
        static struct tp_calib fold;
        struct tp_fit_result res;
        struct tp_error err;
        if (n_train == 0 ||
            tp_calib_fit(train, tm, n_train, prior, o, &fold, &res, &err) != TP_OK)
            continue;
        size_t n = 0, in = 0;
        for (size_t j = 0; j < s->n; j++) {
            if (strcmp(key[j], key[i]) != 0)
                continue;
            static struct tp_run_eval e;
            if (tp_run_evaluate(&s->runs[j], &fold, &e) != TP_OK || !isfinite(e.err))
                continue;
            pick[n++] = e.err;
            in += e.in_range;
            row_x[j] = -log1p(e.err);
            row_in[j] = e.in_range;
            row_flags[j] = e.domain;
            row_width[j] = e.range.hi / e.range.lo;
            row_group[j] = (uint32_t)n_groups;
        }
        if (n == 0)
            continue;
        struct tp_err_stats st;
        tp_err_stats(pick, n, scratch, &st);
        medians[n_groups] = st.median_abs;
        cover[n_groups++] = (double)in / (double)n;
        in_all += in;
        n_all += n;
        printf("  %-46s %5zu %7.1f%% %7.1f%% %8.0f%%\n", key[i], n, 100 * st.median_abs,
               100 * st.p90_abs, 100.0 * (double)in / (double)n);
    }
    struct tp_err_stats bal;
    tp_err_stats(medians, n_groups, scratch, &bal);
    double mean_cover = 0;
    for (size_t g = 0; g < n_groups; g++)
        mean_cover += cover[g] / (double)n_groups;
    if (n_groups && n_all)
        printf("  by %s: median of the %zu group medians %.1f%%; inside the 80%% range %.0f%% of "
               "the rows, %.0f%% group-balanced\n", NAMES[k], n_groups, 100 * bal.median_abs,
               100.0 * (double)in_all / (double)n_all, 100 * mean_cover);
    split_figures(s, k);
}

int main(int argc, char **argv)
{
    static struct state s;
    static char *files[BENCH_MAX_FILES];
    size_t n_files = 0;
    bool smoke = false;
    const char *rows_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            smoke = true;
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
            rows_path = argv[++i];
        else if (n_files < BENCH_MAX_FILES)
            files[n_files++] = argv[i];
    }
    int rc = bench_read_runs("bench_calibrate", files, n_files, on_row, &s);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    if (smoke) { /* two sources' first rows, a short fit */
        s.n = s.n < 24 ? s.n : 24;
        o.starts = 1;
        o.max_evals = 50;
        o.rounds = 1;
    }
    static const struct tp_run *ptr[MAX_ROWS];
    static double before[MAX_ROWS], after[MAX_ROWS], held[MAX_ROWS];
    for (size_t i = 0; i < s.n; i++)
        ptr[i] = &s.runs[i];
    static struct tp_calib prior, fitted, builtin;
    tp_calib_prior(&prior);
    tp_calib_init(&builtin);
    struct tp_fit_result res;
    struct tp_error err;
    clock_t t0 = clock();
    enum tp_status st = tp_calib_fit(ptr, s.measured, s.n, &prior, &o, &fitted, &res, &err);
    if (st == TP_EUNSUPPORTED) { /* a build without GSL (make NO_GSL=1) */
        printf("bench_calibrate: skipped: %s\n", err.msg);
        return 0;
    }
    if (st != TP_OK) {
        fprintf(stderr, "bench_calibrate: %s\n", err.msg);
        return 2;
    }
    double fit_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    t0 = clock();
    if (tp_calib_cross_validate(ptr, s.measured, s.n, &prior, &o, held, &err) != TP_OK) {
        fprintf(stderr, "bench_calibrate: %s\n", err.msg);
        return 2;
    }
    double cv_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    static double builtin_e[MAX_ROWS];
    for (size_t i = 0; i < s.n; i++) {
        struct tp_run_eval e;
        tp_run_evaluate(&s.runs[i], &prior, &e);
        before[i] = e.err;
        tp_run_evaluate(&s.runs[i], &fitted, &e);
        after[i] = e.err;
        tp_run_evaluate(&s.runs[i], &builtin, &e);
        builtin_e[i] = e.err;
    }
    if (smoke)
        return 0;
    if (rows_path) {
        FILE *f = fopen(rows_path, "w");
        if (!f) {
            fprintf(stderr, "bench_calibrate: cannot write %s\n", rows_path);
            return 2;
        }
        fprintf(f, "row_id,source,gpu,priors,fitted,held_out,built_in\n");
        for (size_t i = 0; i < s.n; i++)
            fprintf(f, "%s,%s,%s,%.4f,%.4f,%.4f,%.4f\n", s.runs[i].row_id, s.runs[i].source,
                    s.runs[i].cluster.gpu.key, before[i], after[i], held[i], builtin_e[i]);
        fclose(f);
    }
    printf("bench_calibrate: median |predicted/measured - 1| of tokens/s per GPU, %zu rows, "
           "%zu sources\n", s.n, res.sources);
    printf("  priors = uncalibrated physics; fitted = calibrate --base prior (in sample);\n"
           "  held-out = leave-one-source-out (each source predicted by a fit to the others);\n"
           "  built-in = data/calibration.json\n\n");
    printf("  %-46s %5s %8s %8s %8s %8s\n", "source", "rows", "priors", "fitted", "held-out",
           "built-in");
    for (size_t i = 0; i <= s.n; i++) {
        const char *src = i < s.n ? s.runs[i].source : NULL;
        if (src) {
            bool first = true;
            for (size_t j = 0; j < i && first; j++)
                first = strcmp(s.runs[j].source, src) != 0;
            if (!first)
                continue;
        }
        size_t rows = 0;
        for (size_t j = 0; j < s.n; j++)
            rows += !src || strcmp(s.runs[j].source, src) == 0;
        printf("  %-46s %5zu", src ? src : "all", rows);
        line(&s, before, src);
        line(&s, after, src);
        line(&s, held, src);
        line(&s, builtin_e, src);
        printf("\n");
    }
    held_summary(&s, held);
    printf("\n  objective (mean over sources of median |log ratio|): priors %.4f, fitted %.4f; "
           "%u evaluations, fit %.1f s, cross-validation %.1f s\n",
           res.objective_before, res.objective_after, res.evaluations, fit_s, cv_s);
    range_table(&s, held);
    range_model(&s, held);
    range_model_held_out(&s, held);
    for (int k = BY_SOURCE; k <= BY_SIZE; k++)
        regime_out(&s, &prior, &o, (enum regime)k);
    return 0;
}
