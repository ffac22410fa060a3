/*
 * bench_params.c - speed of the counting core: parameter counts plus FLOPs per token for every
 * preset, repeated.  Prints evaluations per second; never passes or fails on time.
 *   bench_params           full run (about a second)
 *   bench_params --smoke   a few iterations, to check that it runs
 */
#include "trainplan.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static struct tp_model models[64];

int main(int argc, char **argv)
{
    int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    size_t n = tp_preset_count();
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++) {
        struct tp_error err;
        if (tp_model_from_preset(tp_preset_get(i)->key, &models[i], &err) != TP_OK) {
            fprintf(stderr, "bench_params: %s\n", err.msg);
            return 2;
        }
    }
    long iters = smoke ? 10 : 20000;
    double sink = 0, t0 = now();
    for (long it = 0; it < iters; it++) {
        for (size_t i = 0; i < n; i++) {
            struct tp_params p;
            struct tp_flops f;
            tp_count_params(&models[i], &p);
            tp_flops_per_token(&models[i], 2048 + (uint64_t)(it & 7) * 512, TP_ATTN_CAUSAL,
                               TP_RECOMPUTE_FULL, 0, &f, NULL);
            sink += (double)p.total + f.model;
        }
    }
    double dt = now() - t0;
    double evals = (double)iters * (double)n;
    printf("bench_params: %zu presets x %ld iterations = %.0f evaluations in %.3f s\n", n, iters,
           evals, dt);
    printf("bench_params: %.0f evaluations/s (params + FLOPs per token), %.2f us each "
           "(checksum %.6g)\n", evals / dt, 1e6 * dt / evals, sink);
    return 0;
}
