/*
 * bench_search.c - speed of the layout search: evaluations per second on one core and the wall
 * time of two full searches the issue names (GPT-3 175B on 1,024 A100 80GB, global batch 1536,
 * seq 2048; a 1T-parameter GPT on 3,072 A100 80GB, [NAR21] Table 1 shape, global batch 3072).
 *   bench_search          the figures
 *   bench_search --smoke  the same on a small cluster, quietly
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

static int run(const char *label, const struct tp_model *m, const char *gpu, uint32_t n,
               uint64_t gbs, bool quiet)
{
    const struct tp_gpu *g;
    struct tp_error err;
    if (tp_gpu_find(gpu, &g, &err) != TP_OK) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 2;
    }
    struct tp_cluster c = {*g, n, g->gpus_per_node};
    struct tp_job j;
    tp_job_init(&j);
    j.seq = 2048;
    j.framework = TP_FW_MEGATRON;
    struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_search_opts o;
    tp_search_opts_init(&o);
    o.gbs = gbs;
    struct tp_search_hit hits[5];
    size_t k;
    struct tp_search_stats st;
    double t0 = now();
    if (tp_search(m, &c, &j, &o, &cal, hits, 5, &k, &st, &err) != TP_OK) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 2;
    }
    double dt = now() - t0;
    uint64_t timed = st.feasible - st.dominated;
    if (!quiet) {
        printf("%-44s %8.3f s  %9llu layouts (%llu feasible, %llu fully evaluated: memory + "
               "time)  %.2fM layouts/s, %.0fk full evaluations/s\n",
               label, dt, (unsigned long long)st.evaluated, (unsigned long long)st.feasible,
               (unsigned long long)timed, st.evaluated / dt / 1e6,
               (st.rejected[TP_REJECT_MEMORY] + timed) / dt / 1e3);
        if (k > 0)
            printf("%44s best: tp %u pp %u vpp %u dp %u mbs %u %s, %.2f s/step, MFU %.1f%%\n", "",
                   hits[0].layout.tp, hits[0].layout.pp, hits[0].layout.vpp, hits[0].layout.dp,
                   hits[0].layout.mbs, hits[0].layout.recompute ? "recompute" : "no recompute",
                   hits[0].time.step_s, 100 * hits[0].time.mfu);
    }
    return 0;
}

int main(int argc, char **argv)
{
    bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    struct tp_model gpt3, t1;
    struct tp_error err;
    if (tp_model_from_preset("gpt3-175b", &gpt3, &err) != TP_OK) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 2;
    }
    /* [NAR21] Table 1, 1T row: 128 layers, hidden 25600, 160 heads, vocab 51200 */
    t1 = gpt3;
    t1.n_layers = 128;
    t1.hidden = 25600;
    t1.n_heads = t1.n_kv_heads = 160;
    t1.head_dim = 0;
    t1.ffn = 4 * 25600;
    t1.max_positions = 2048;
    snprintf(t1.name, sizeof t1.name, "GPT 1T");
    if (tp_model_finalize(&t1, &err) != TP_OK) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 2;
    }
    if (smoke)
        return run("smoke", &gpt3, "a100-80gb", 64, 128, true);
    printf("bench_search: full searches on one core (Megatron framework: tp, pp, vpp, dp, ZeRO "
           "0/1, mbs 1-16, 3 recompute modes, optimizer offload)\n");
    int rc = run("GPT-3 175B, 1024 x A100 80GB, gbs 1536", &gpt3, "a100-80gb", 1024, 1536, false);
    if (rc == 0)
        rc = run("GPT 1T, 3072 x A100 80GB, gbs 3072", &t1, "a100-80gb", 3072, 3072, false);
    return rc;
}
