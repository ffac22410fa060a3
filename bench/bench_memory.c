/*
 * bench_memory.c - predicted vs measured peak memory per GPU for every run in the runs files
 * that reports memory (or an OOM), each compared as the source measured it (the row's mem_kind:
 * allocated, reserved, or device-used; unknown is compared as device-used).  Prints one line per
 * row, then the errors overall (per row, and source-balanced: the median of the sources'
 * medians), per source and per kind of measurement, the OOM confusion with the verdicts fits /
 * tight / does not fit, and per class of stack the margin tp_memory_margin compiles in (the 80th
 * percentile of measured / predicted - 1).  A benchmark: it never fails on accuracy.
 *   bench_memory [RUNS.csv ...]   default: the calibration set (data/runs/calibration.txt)
 *   bench_memory --smoke          the same, quietly (checks that it runs)
 */
#include "trainplan.h"

#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0
enum { MAX_ROWS = 1024 };

struct result {
    char row_id[96], source[96];
    enum tp_mem_kind kind;
    const char *cls;
    double err; /* (predicted - measured) / measured */
};

struct state {
    struct result rows[MAX_ROWS];
    size_t n, skipped;
    size_t oom_rows, oom_nofit, oom_tight;   /* ran out of memory: predicted no fit / tight */
    size_t ran_rows, ran_fit, ran_tight;     /* ran (no OOM flag): predicted fit / tight */
    bool quiet;
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    struct state *s = ctx;
    if (run->duplicate)
        return true;
    if (why) {
        if (!isnan(run->mem_gib) || run->oom) {
            s->skipped++;
            if (!s->quiet)
                printf("%-44s skipped: %s (%s line %zu)\n", run->row_id, why->msg, path, line);
        }
        return true;
    }
    struct tp_memory m;
    if (tp_memory_worst(&run->model, &run->cluster, &run->job, &run->layout, &m) != TP_OK)
        return true;
    if (run->oom) {
        s->oom_rows++;
        s->oom_nofit += m.verdict == TP_MEM_NO_FIT;
        s->oom_tight += m.verdict == TP_MEM_TIGHT;
        if (!s->quiet)
            printf("%-44s predicted %7.1f GiB  measured OOM  %s\n", run->row_id,
                   m.total_bytes / GIB,
                   m.verdict == TP_MEM_NO_FIT ? "ok"
                   : m.verdict == TP_MEM_TIGHT ? "tight (within the model's error)"
                                               : "WRONG (predicts fit)");
        return true;
    }
    s->ran_rows++;
    s->ran_fit += m.fits;
    s->ran_tight += m.verdict == TP_MEM_TIGHT;
    if (isnan(run->mem_gib) || s->n >= MAX_ROWS)
        return true;
    struct result *r = &s->rows[s->n++];
    snprintf(r->row_id, sizeof r->row_id, "%s", run->row_id);
    snprintf(r->source, sizeof r->source, "%s", run->source);
    r->kind = run->mem_kind;
    tp_memory_margin(&run->job, &r->cls);
    double pred = tp_memory_as(&m, run->mem_kind) / GIB;
    r->err = (pred - run->mem_gib) / run->mem_gib;
    if (!s->quiet)
        printf("%-44s predicted %7.1f GiB  measured %7.1f GiB %-9s %+6.1f%%  %s\n", run->row_id,
               pred, run->mem_gib, tp_mem_kind_name(run->mem_kind), 100 * r->err,
               run->assumptions[0] ? run->assumptions : "");
    return true;
}

enum by { BY_ALL, BY_SOURCE, BY_KIND, BY_CLASS };

static bool match(const struct result *r, enum by by, const struct result *key)
{
    switch (by) {
    case BY_ALL: return true;
    case BY_SOURCE: return strcmp(r->source, key->source) == 0;
    case BY_KIND: return r->kind == key->kind;
    case BY_CLASS: return strcmp(r->cls, key->cls) == 0;
    }
    return false;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile of n sorted values, linear interpolation between order statistics. */
static double quantile(const double *v, size_t n, double p)
{
    double k = (double)(n - 1) * p;
    size_t f = (size_t)floor(k), c = (size_t)ceil(k);
    return v[f] + (v[c] - v[f]) * (k - (double)f);
}

static void summary(const struct state *s, enum by by, const struct result *key,
                    const char *label)
{
    static double e[MAX_ROWS], scratch[MAX_ROWS];
    size_t n = 0;
    double worst = 0;
    for (size_t i = 0; i < s->n; i++)
        if (match(&s->rows[i], by, key)) {
            e[n++] = s->rows[i].err;
            worst = fmax(worst, fabs(s->rows[i].err));
        }
    struct tp_err_stats st;
    tp_err_stats(e, n, scratch, &st);
    if (st.n == 0)
        return;
    printf("  %-32s rows %3zu  median |err| %5.1f%%  p90 %5.1f%%  worst %5.1f%%  bias %+5.1f%%\n",
           label, st.n, 100 * st.median_abs, 100 * st.p90_abs, 100 * worst, 100 * st.bias);
}

/* Each group of `by` once, in order of first appearance. */
static void groups(const struct state *s, enum by by)
{
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = !match(&s->rows[k], by, &s->rows[i]);
        if (!first)
            continue;
        const char *label = by == BY_SOURCE ? s->rows[i].source
                            : by == BY_KIND ? tp_mem_kind_name(s->rows[i].kind)
                                            : s->rows[i].cls;
        summary(s, by, &s->rows[i], label);
    }
}

/* Source-balanced: the median of the sources' median |err| and the p90 of their p90s. */
static void balanced(const struct state *s)
{
    static double e[MAX_ROWS], scratch[MAX_ROWS], med[MAX_ROWS], p90[MAX_ROWS];
    size_t n_src = 0;
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(s->rows[k].source, s->rows[i].source) != 0;
        if (!first)
            continue;
        size_t n = 0;
        for (size_t k = 0; k < s->n; k++)
            if (strcmp(s->rows[k].source, s->rows[i].source) == 0)
                e[n++] = s->rows[k].err;
        struct tp_err_stats st;
        tp_err_stats(e, n, scratch, &st);
        med[n_src] = st.median_abs;
        p90[n_src++] = st.p90_abs;
    }
    if (n_src == 0)
        return;
    qsort(med, n_src, sizeof med[0], cmp_double);
    qsort(p90, n_src, sizeof p90[0], cmp_double);
    printf("  source-balanced (%zu sources)     median of medians %5.1f%%  median of p90s %5.1f%%\n",
           n_src, 100 * quantile(med, n_src, 0.5), 100 * quantile(p90, n_src, 0.5));
}

/* The margin per class: the 80th percentile of measured / predicted - 1, at least 0 (a class
   of fewer than 10 rows takes the one over every row, "all"). */
static void margins(const struct state *s)
{
    static double e[MAX_ROWS];
    for (size_t k = 0; k < s->n; k++)
        e[k] = 1 / (1 + s->rows[k].err) - 1;
    qsort(e, s->n, sizeof e[0], cmp_double);
    if (s->n)
        printf("  margin %-10s rows %3zu  80th percentile of measured/predicted - 1: %5.1f%%\n",
               "all", s->n, 100 * fmax(0, quantile(e, s->n, 0.8)));
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(s->rows[k].cls, s->rows[i].cls) != 0;
        if (!first)
            continue;
        size_t n = 0;
        for (size_t k = 0; k < s->n; k++)
            if (strcmp(s->rows[k].cls, s->rows[i].cls) == 0)
                e[n++] = 1 / (1 + s->rows[k].err) - 1;
        qsort(e, n, sizeof e[0], cmp_double);
        struct tp_job j;
        tp_job_init(&j);
        j.framework = strcmp(s->rows[i].cls, "torchtitan") == 0 ? TP_FW_TORCHTITAN
                      : strcmp(s->rows[i].cls, "megatron") == 0 ? TP_FW_MEGATRON
                                                                 : TP_FW_AXOLOTL;
        printf("  margin %-10s rows %3zu  80th percentile of measured/predicted - 1: %5.1f%%  "
               "(compiled in: %.1f%%)\n", s->rows[i].cls, n, 100 * fmax(0, quantile(e, n, 0.8)),
               100 * tp_memory_margin(&j, NULL));
    }
}

int main(int argc, char **argv)
{
    static struct state s;
    static char *files[BENCH_MAX_FILES];
    size_t n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            s.quiet = true;
        else if (n_files < BENCH_MAX_FILES)
            files[n_files++] = argv[i];
    }
    int rc = bench_read_runs("bench_memory", files, n_files, on_row, &s);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    printf("\nbench_memory: predicted vs measured peak memory per GPU (worst pipeline stage, "
           "as each source measured it)\n");
    summary(&s, BY_ALL, NULL, "all");
    balanced(&s);
    printf(" by source\n");
    groups(&s, BY_SOURCE);
    printf(" by kind of measurement\n");
    groups(&s, BY_KIND);
    printf(" by class of stack\n");
    groups(&s, BY_CLASS);
    margins(&s);
    printf("  memory rows that could not be mapped: %zu\n", s.skipped);
    if (s.oom_rows)
        printf("  runs that ran out of memory: %zu; predicted not to fit %zu, tight %zu, "
               "fits %zu\n", s.oom_rows, s.oom_nofit, s.oom_tight,
               s.oom_rows - s.oom_nofit - s.oom_tight);
    if (s.ran_rows)
        printf("  runs that ran: %zu; predicted to fit %zu (%.1f%%), of which tight %zu\n",
               s.ran_rows, s.ran_fit, 100.0 * s.ran_fit / s.ran_rows, s.ran_tight);
    return 0;
}
