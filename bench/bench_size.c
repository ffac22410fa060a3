/*
 * bench_size.c - speed of `trainplan size`'s grid: counting every shape of the llama3 family
 * for a FLOP budget (the notes' 1.36e21), and one layout search per shape on a cluster (the
 * shapes nearest the hoffmann-3 optimum, 8 x A100 80GB and 64 x H100 SXM), single-threaded.
 * The CLI searches only the shapes its loss bound cannot rule out, on every CPU.
 *   bench_size          the figures
 *   bench_size --smoke  a few shapes, quietly
 */
#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const struct tp_scaling_fit *hoffmann3(void)
{
    const struct tp_scaling_fit *f = NULL;
    tp_scaling_fit_find("hoffmann-3", &f, NULL);
    return f;
}

/* Counts the whole grid; returns the shapes, or 0 after an error line. */
static size_t count_grid(const struct tp_size_grid *g, struct tp_size_shape *s, size_t n,
                         double *dt)
{
    double t0 = now();
    for (size_t i = 0; i < n; i++) {
        struct tp_error err = {{0}, {0}};
        if (tp_size_count(g, hoffmann3(), 1.36e21, &s[i], &err) != TP_OK) {
            fprintf(stderr, "bench_size: %s\n", err.msg);
            return 0;
        }
    }
    *dt = now() - t0;
    return n;
}

static int by_params_to_opt(const void *a, const void *b)
{
    const struct tp_size_shape *x = a, *y = b;
    double o = 2.1e9; /* hoffmann-3's N_opt at 1.36e21 */
    double dx = fabs(log(x->params / o)), dy = fabs(log(y->params / o));
    return dx < dy ? -1 : dx > dy;
}

static int search_some(const struct tp_size_grid *g, struct tp_size_shape *s, size_t n,
                       const char *gpu, uint32_t gpus, bool quiet)
{
    struct tp_cluster c;
    struct tp_error err = {{0}, {0}};
    if (tp_cluster_init(&c, gpu, gpus, &err) != TP_OK) {
        fprintf(stderr, "bench_size: %s\n", err.msg);
        return 2;
    }
    struct tp_job j;
    tp_job_init(&j);
    struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_search_opts o;
    tp_search_opts_init(&o);
    o.gbs = 128 * (uint64_t)gpus;
    size_t fit = 0;
    double t0 = now();
    for (size_t i = 0; i < n; i++) {
        if (tp_size_on_cluster(g, hoffmann3(), &c, &j, &o, &cal, 0, 15 * 86400.0, &s[i],
                               &err) != TP_OK) {
            fprintf(stderr, "bench_size: %s\n", err.msg);
            return 2;
        }
        fit += s[i].has_layout;
    }
    double dt = now() - t0;
    if (!quiet)
        printf("  %3u x %-10s %5zu shapes searched in %6.2f s: %7.1f ms per shape, %zu with a "
               "layout\n", gpus, gpu, n, dt, 1e3 * dt / (double)n, fit);
    return 0;
}

int main(int argc, char **argv)
{
    bool quiet = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    struct tp_size_grid g;
    tp_size_grid_init(&g);
    g.seq = 2048;
    if (quiet)
        g.hidden_max = 1024;
    size_t n = tp_size_enumerate(&g, NULL, 0);
    struct tp_size_shape *s = calloc(n, sizeof *s);
    if (!s) {
        fprintf(stderr, "bench_size: out of memory\n");
        return 2;
    }
    tp_size_enumerate(&g, s, n);
    double dt = 0;
    if (count_grid(&g, s, n, &dt) == 0) {
        free(s);
        return 2;
    }
    if (!quiet)
        printf("bench_size: llama3 grid, seq 2048, 1.36e21 FLOPs\n"
               "  %zu shapes counted (parameters, exact FLOPs, tokens, loss) in %.3f s: %.1f us "
               "per shape\n", n, dt, 1e6 * dt / (double)n);
    qsort(s, n, sizeof *s, by_params_to_opt);
    size_t k = quiet ? 3 : 300;
    int rc = search_some(&g, s, k < n ? k : n, "a100-80gb", 8, quiet);
    if (rc == 0 && !quiet)
        rc = search_some(&g, s, k < n ? k : n, "h100-sxm", 64, quiet);
    free(s);
    return rc;
}
