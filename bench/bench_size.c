/*
 * bench_size.c - speed of `trainplan size` in the library, single-threaded (the CLI adds
 * threads): counting every shape of the llama3 grid for a FLOP budget, and the branch and bound
 * (tp_size_best) on the clusters of docs/size.md, with the shapes it searched.
 *   bench_size          the figures
 *   bench_size --smoke  a small grid on 8 A100s, quietly
 */
#include "trainplan.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct bench_case {
    const char *what, *gpu;
    int framework;                  /* enum tp_framework; -1: the default */
    uint32_t gpus;
    double days, flops;
    uint64_t seq, gbs;
};

static int run(const struct bench_case *b, bool smoke)
{
    const struct tp_scaling_fit *fit = NULL;
    struct tp_error err = {{0}, {0}};
    if (tp_scaling_fit_find("besiroglu", &fit, &err) != TP_OK) {
        fprintf(stderr, "bench_size: %s\n", err.msg);
        return 2;
    }
    struct tp_size_grid g;
    tp_size_grid_init(&g);
    g.seq = b->seq;
    if (smoke)
        g.hidden_max = 2048;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_calib cal;
    struct tp_search_opts o;
    tp_job_init(&j);
    j.seq = b->seq;
    tp_calib_init(&cal);
    tp_search_opts_init(&o);
    o.gbs = b->gbs;
    if (b->gpu && tp_cluster_init(&c, b->gpu, b->gpus, &err) != TP_OK) {
        fprintf(stderr, "bench_size: %s\n", err.msg);
        return 2;
    }
    if (b->framework >= 0)
        j.framework = (enum tp_framework)b->framework;
    double nominal = !b->gpu ? b->flops
                             : 0.5 * b->gpus * c.gpu.peak_flops[TP_BF16] * b->days * 86400;
    struct tp_size_req r = {&g, fit, b->gpu ? &c : NULL, &j, &o, &cal, b->flops,
                            b->days * 86400, tp_size_tie_band(fit, nominal, 0.01)};
    struct tp_size_state st;
    struct tp_size_filter all = {0, 0, 0};
    size_t top[5], n = 0;
    double t0 = now();
    if (tp_size_prepare(&r, &st, &err) != TP_OK) {
        fprintf(stderr, "bench_size: %s\n", err.msg);
        return 2;
    }
    double t1 = now();
    enum tp_status s = tp_size_best(&r, &st, &all, NULL, NULL, top, 5, &n, &err);
    double t2 = now();
    if (s != TP_OK) {
        fprintf(stderr, "bench_size: %s\n", err.msg);
        tp_size_free(&st);
        return 2;
    }
    if (!smoke)
        printf("  %-58s %4zu shapes, counted in %.3f s; %4zu searched in %6.3f s (%.2f ms "
               "each)\n", b->what, st.n, t1 - t0, st.searched, t2 - t1,
               st.searched ? 1e3 * (t2 - t1) / (double)st.searched : 0.0);
    tp_size_free(&st);
    return n > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    static const struct bench_case cases[] = {
        {"--flops 1.36e21 --seq 2048", NULL, -1, 0, 0, 1.36e21, 2048, 0},
        {"--gpu a100-80gb --gpus 8 --days 15 --seq 2048", "a100-80gb", -1, 8, 15, 0, 2048, 512},
        {"--gpu h100-sxm --gpus 64 --days 30", "h100-sxm", -1, 64, 30, 0, 4096, 1024},
        {"--gpu h100-sxm --gpus 16384 --days 54", "h100-sxm", -1, 16384, 54, 0, 4096, 16384},
        {"--gpu h100-sxm --gpus 1024 --days 30 --gbs 256 --framework megatron", "h100-sxm",
         TP_FW_MEGATRON, 1024, 30, 0, 4096, 256},
    };
    if (smoke)
        return run(&cases[1], true);
    printf("bench_size: the library's size search, one thread (besiroglu, top 5)\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (run(&cases[i], false) != 0)
            return 2;
    return 0;
}
