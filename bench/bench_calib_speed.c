/*
 * bench_calib_speed.c - how long calibrate takes (issues 16 and 22): the fit over the shipped
 * runs with and without leave-one-source-out, and validate and calibrate on a ~10 MB runs file
 * made at run time by repeating the shipped rows (written to a temporary file, removed after),
 * then on the same rows with each copy on its own vocabulary size (every configuration
 * distinct, so no prediction is shared), and with every row its own source.
 * Wall-clock and CPU seconds of the library calls the verbs make (reading the files, each row
 * evaluated, tp_calib_fit, tp_calib_fit_validate on the online CPUs).  A benchmark: it prints
 * figures and never fails on them.
 *   bench_calib_speed [RUNS.csv ...]   default: the calibration set (data/runs/calibration.txt)
 *   bench_calib_speed --smoke          a short fit on the first rows (checks that it runs)
 */
#include "trainplan.h"

#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rows {
    struct tp_run *runs;
    double *measured;
    size_t n, cap, read;
};

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    (void)path;
    (void)line;
    struct rows *s = ctx;
    s->read++;
    /* the rows calibrate fits: not those whose layout or head count is assumed */
    if (why || run->duplicate || tp_run_assumed(run))
        return true;
    double m = tp_run_measured_tokens_per_s(run, NULL);
    if (!(m > 0))
        return true;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 512;
        struct tp_run *r = realloc(s->runs, cap * sizeof *r);
        double *d = r ? realloc(s->measured, cap * sizeof *d) : NULL;
        if (r)
            s->runs = r;
        if (!d)
            return false;
        s->measured = d;
        s->cap = cap;
    }
    s->runs[s->n] = *run;
    s->measured[s->n++] = m;
    return true;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_s(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

/* The fit, then the fit with its folds; prints wall and CPU seconds of each. */
static int time_fits(const char *what, const struct rows *s, const struct tp_fit_opts *o,
                     bool cv)
{
    const struct tp_run **ptr = calloc(s->n ? s->n : 1, sizeof *ptr);
    double *held = calloc(s->n ? s->n : 1, sizeof *held);
    double *meas = calloc(s->n ? s->n : 1, sizeof *meas);
    static struct tp_calib prior, fitted;
    struct tp_fit_result res;
    struct tp_error err;
    int rc = 0;
    if (!ptr || !held || !meas) {
        rc = 2;
        goto out;
    }
    /* the rows calibrate fits: at most o->fit_rows, evenly spaced (tp_calibrate_runs) */
    size_t n = 0, cap = o->fit_rows && s->n > o->fit_rows ? o->fit_rows : s->n;
    for (size_t i = 0; i < s->n && n < cap; i++)
        if ((i + 1) * cap / s->n != i * cap / s->n) {
            ptr[n] = &s->runs[i];
            meas[n++] = s->measured[i];
        }
    if (n < s->n)
        printf("  %-34s (calibrate fits %zu of the %zu rows, evenly spaced: --fit-rows)\n", what,
               n, s->n);
    tp_calib_prior(&prior);
    double w = now_s(), c = cpu_s();
    enum tp_status st = tp_calib_fit(ptr, meas, n, &prior, o, &fitted, &res, &err);
    if (st == TP_EUNSUPPORTED) { /* a build without GSL (make NO_GSL=1) */
        printf("bench_calib_speed: skipped: %s\n", err.msg);
        goto out;
    }
    if (st != TP_OK) {
        fprintf(stderr, "bench_calib_speed: %s\n", err.msg);
        rc = 2;
        goto out;
    }
    printf("  %-34s calibrate --no-cv   %6.2f s wall %6.2f s CPU (%u evaluations)\n", what,
           now_s() - w, cpu_s() - c, res.evaluations);
    w = now_s();
    c = cpu_s();
    if (cv && tp_calib_fit_validate(ptr, meas, n, &prior, o, &fitted, &res, held, &err) != TP_OK) {
        fprintf(stderr, "bench_calib_speed: %s\n", err.msg);
        rc = 2;
        goto out;
    }
    if (cv)
        printf("  %-34s calibrate           %6.2f s wall %6.2f s CPU (fit + folds)\n", what,
               now_s() - w, cpu_s() - c);
out:
    free(ptr);
    free(held);
    free(meas);
    return rc;
}

/* Appends every data row of `src` (all but its header line) to `out`; the header when asked. */
static bool append_rows(FILE *out, const char *src, bool header)
{
    FILE *in = fopen(src, "r");
    if (!in)
        return false;
    int ch;
    bool past_header = false;
    while ((ch = fgetc(in)) != EOF) {
        if (past_header || header)
            fputc(ch, out);
        if (ch == '\n')
            past_header = true;
    }
    fclose(in);
    return !ferror(out);
}

/* The ~10 MB file of issue 22: the shipped rows repeated under the first file's header. */
static long make_big(const char *path, char files[][BENCH_PATH], size_t n)
{
    FILE *f = fopen(path, "w");
    bool ok = f && append_rows(f, files[0], true);
    for (size_t i = 1; ok && i < n; i++)
        ok = append_rows(f, files[i], false);
    while (ok && ftell(f) < 10 * 1000 * 1000)
        for (size_t i = 0; ok && i < n; i++)
            ok = append_rows(f, files[i], false);
    long size = ok ? ftell(f) : -1;
    if (f)
        fclose(f);
    return size;
}

/* Each copy of the shipped rows (base_n of them) on its own vocabulary size, vocab + 128 x
   copy: the same file, but no configuration repeats across copies, so no prediction is shared
   (calibrate's cost is evaluations x distinct configurations). */
static int distinct_copies(struct rows *big, size_t base_n, const struct tp_fit_opts *o)
{
    if (base_n == 0)
        return 0;
    for (size_t i = 0; i < big->n; i++)
        big->runs[i].model.vocab += (uint32_t)(128 * (i / base_n));
    printf("\n  the same rows, copy c on vocabulary + 128 c (every configuration distinct):\n");
    return time_fits("", big, o, true);
}

/* The distinct rows again, each naming its own source: leave-one-source-out would be one fit
   per row; --max-folds and --fold-rows (16 folds of at most 1024 rows) bound it. */
static int own_sources(struct rows *big, const struct tp_fit_opts *o)
{
    for (size_t i = 0; i < big->n; i++)
        snprintf(big->runs[i].source, sizeof big->runs[i].source, "row%zu", i);
    printf("\n  and every row its own source (%zu sources):\n", big->n);
    return time_fits("", big, o, true);
}

static int big_file(char files[][BENCH_PATH], size_t n_files, size_t base_n,
                    const struct tp_fit_opts *o)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[BENCH_PATH];
    snprintf(path, sizeof path, "%s/bench_calib_speed_XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return 2;
    close(fd);
    long size = make_big(path, files, n_files);
    struct rows big;
    memset(&big, 0, sizeof big);
    int rc = 2;
    double w = now_s(), c = cpu_s();
    char *p = path;
    if (size > 0 && bench_read_runs("bench_calib_speed", &p, 1, on_row, &big) == 0) {
        double read_w = now_s() - w, read_c = cpu_s() - c;
        static struct tp_calib builtin;
        tp_calib_init(&builtin);
        for (size_t i = 0; i < big.n; i++) { /* validate: every row predicted */
            struct tp_run_eval e;
            tp_run_evaluate(&big.runs[i], &builtin, &e);
        }
        printf("\n  %.1f MB file, %zu rows (%zu with a throughput):\n", (double)size / 1e6,
               big.read, big.n);
        printf("  %-34s read                %6.2f s wall %6.2f s CPU\n", "", read_w, read_c);
        printf("  %-34s validate            %6.2f s wall %6.2f s CPU (read included)\n", "",
               now_s() - w, cpu_s() - c);
        rc = time_fits("", &big, o, true);
        if (rc == 0)
            rc = distinct_copies(&big, base_n, o);
        if (rc == 0)
            rc = own_sources(&big, o);
    }
    remove(path);
    free(big.runs);
    free(big.measured);
    return rc;
}

int main(int argc, char **argv)
{
    bool smoke = false;
    static char files[BENCH_MAX_FILES][BENCH_PATH];
    char *given[BENCH_MAX_FILES];
    size_t n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0)
            smoke = true;
        else if (n_files < BENCH_MAX_FILES)
            given[n_files++] = argv[i];
    }
    for (size_t i = 0; i < n_files; i++)
        snprintf(files[i], BENCH_PATH, "%s", given[i]);
    size_t n_default = n_files ? n_files : bench_default_runs(files);
    struct rows s;
    memset(&s, 0, sizeof s);
    int rc = bench_read_runs("bench_calib_speed", given, n_files, on_row, &s);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    struct tp_fit_opts o;
    tp_fit_opts_init(&o);
    if (smoke) { /* the first rows, a short fit */
        s.n = s.n < 24 ? s.n : 24;
        o.starts = 1;
        o.max_evals = 50;
        o.rounds = 1;
        o.samples = 16;
        rc = time_fits("smoke", &s, &o, true);
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        printf("bench_calib_speed: calibrate --base prior, %ld online CPUs\n\n", cpus);
        printf("  shipped runs, %zu rows with a throughput:\n", s.n);
        rc = time_fits("", &s, &o, true);
        if (rc == 0)
            rc = big_file(files, n_default, s.n, &o);
    }
    free(s.runs);
    free(s.measured);
    return rc;
}
