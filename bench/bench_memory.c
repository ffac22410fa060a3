/*
 * bench_memory.c - predicted vs measured peak memory per GPU for every run in the runs files
 * that reports memory (or an OOM).  Prints one line per row, then median and worst absolute
 * relative error overall and per source.  A benchmark: it never fails on accuracy.
 *   bench_memory [RUNS.csv ...]   default: the calibration set (data/runs/calibration.txt)
 *   bench_memory --smoke          the same, quietly (checks that it runs)
 */
#include "trainplan.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0
enum { MAX_ROWS = 512 };

struct result {
    char row_id[96], source[96];
    double err; /* (predicted - measured) / measured */
};

struct state {
    struct result rows[MAX_ROWS];
    size_t n, skipped, oom_rows, oom_right;
    bool quiet;
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    struct state *s = ctx;
    if (run->duplicate || (isnan(run->mem_gib) && !run->oom))
        return true;
    if (why) {
        s->skipped++;
        if (!s->quiet)
            printf("%-44s skipped: %s (%s line %zu)\n", run->row_id, why->msg, path, line);
        return true;
    }
    struct tp_memory m;
    tp_memory_worst(&run->model, &run->cluster, &run->job, &run->layout, &m);
    if (run->oom) {
        s->oom_rows++;
        s->oom_right += !m.fits;
        if (!s->quiet)
            printf("%-44s predicted %7.1f GiB  measured OOM  %s\n", run->row_id,
                   m.total_bytes / GIB, m.fits ? "WRONG (predicts fit)" : "ok");
        return true;
    }
    if (s->n >= MAX_ROWS)
        return false;
    struct result *r = &s->rows[s->n++];
    snprintf(r->row_id, sizeof r->row_id, "%s", run->row_id);
    snprintf(r->source, sizeof r->source, "%s", run->source);
    r->err = (m.total_bytes / GIB - run->mem_gib) / run->mem_gib;
    if (!s->quiet)
        printf("%-44s predicted %7.1f GiB  measured %7.1f GiB  %+6.1f%%  %s\n", run->row_id,
               m.total_bytes / GIB, run->mem_gib, 100 * r->err,
               run->assumptions[0] ? run->assumptions : "");
    return true;
}

static void summary(const struct state *s, const char *source)
{
    static double e[MAX_ROWS], scratch[MAX_ROWS];
    size_t n = 0;
    double worst = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!source || strcmp(s->rows[i].source, source) == 0) {
            e[n++] = s->rows[i].err;
            worst = fmax(worst, fabs(s->rows[i].err));
        }
    struct tp_err_stats st;
    tp_err_stats(e, n, scratch, &st);
    if (st.n == 0)
        return;
    printf("  %-32s rows %3zu  median |err| %5.1f%%  worst |err| %5.1f%%\n",
           source ? source : "all", st.n, 100 * st.median_abs, 100 * worst);
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
    printf("\nbench_memory: predicted vs measured peak memory per GPU (worst pipeline stage)\n");
    summary(&s, NULL);
    for (size_t i = 0; i < s.n; i++) {
        bool first = true;
        for (size_t k = 0; k < i; k++)
            first = first && strcmp(s.rows[k].source, s.rows[i].source) != 0;
        if (first)
            summary(&s, s.rows[i].source);
    }
    printf("  memory rows that could not be mapped: %zu\n", s.skipped);
    if (s.oom_rows)
        printf("  OOM rows predicted not to fit: %zu of %zu\n", s.oom_right, s.oom_rows);
    return 0;
}
