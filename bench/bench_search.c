/*
 * bench_search.c - speed of the layout search: evaluations per second and the wall time of two
 * full searches the issue names (GPT-3 175B on 1,024 A100 80GB, global batch 1536, seq 2048; a
 * 1T-parameter GPT on 3,072 A100 80GB, [NAR21] Table 1 shape, global batch 3072): one
 * tp_search call, then the CLI's sharded search (cli/par_search.c) on 1 thread and on every
 * online CPU.
 *   bench_search          the figures
 *   bench_search --smoke  the same on a small cluster, quietly
 */
#include "trainplan.h"
#include "../cli/par_search.h"

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
    struct tp_error err;
    struct tp_cluster c;
    if (tp_cluster_init(&c, gpu, n, &err) != TP_OK) {
        fprintf(stderr, "bench_search: %s\n", err.msg);
        return 2;
    }
    struct tp_job j;
    tp_job_init(&j);
    j.seq = 2048;
    j.framework = TP_FW_MEGATRON;
    struct tp_calib cal;
    tp_calib_init(&cal);
    struct tp_search_opts o;
    tp_search_opts_init(&o);
    o.gbs = gbs;
    struct tp_search_hit hits[5], par[5];
    size_t k, kp;
    struct tp_search_stats st, sp;
    /* the best of three runs: the searches take milliseconds */
    double dt = 1e30;
    for (int rep = 0; rep < (quiet ? 1 : 3); rep++) {
        double t0 = now();
        if (tp_search(m, &c, &j, &o, &cal, hits, 5, &k, &st, &err) != TP_OK) {
            fprintf(stderr, "bench_search: %s\n", err.msg);
            return 2;
        }
        double d = now() - t0;
        dt = d < dt ? d : dt;
    }
    uint64_t timed = st.feasible - st.dominated;
    if (!quiet) {
        printf("%-44s %8.4f s  %9llu layouts (%llu partial recompute, %llu uneven split; %llu "
               "feasible, %llu fully evaluated: memory + time)  %.2fM layouts/s, %.0fk full "
               "evaluations/s\n",
               label, dt, (unsigned long long)st.evaluated, (unsigned long long)st.partial,
               (unsigned long long)st.uneven, (unsigned long long)st.feasible,
               (unsigned long long)timed, st.evaluated / dt / 1e6,
               (st.rejected[TP_REJECT_MEMORY] + timed) / dt / 1e3);
        if (k > 0) {
            const struct tp_layout *l = &hits[0].layout;
            char rc[64];
            if (l->recompute_layers)
                snprintf(rc, sizeof rc, "full recompute of %u blocks per stage",
                         l->recompute_layers);
            else
                snprintf(rc, sizeof rc, "%s recompute",
                         l->recompute == TP_RECOMPUTE_NONE       ? "no"
                         : l->recompute == TP_RECOMPUTE_SELECTIVE ? "selective"
                                                                  : "full");
            printf("%44s best: tp %u pp %u vpp %u dp %u zero %u mbs %u, %s%s, %.2f s/step, "
                   "MFU %.1f%%\n", "", l->tp, l->pp, l->vpp, l->dp, l->zero, l->mbs, rc,
                   l->offload ? ", optimizer offloaded" : "", hits[0].time.step_s,
                   100 * hits[0].time.mfu);
        }
    }
    /* the CLI's threaded search: 1 thread, then every online CPU (--smoke: 4 threads, as a
       check); the result must be the single call's */
    unsigned runs[2] = {1, quiet ? 4 : par_cpus()};
    for (int r = 0; r < 2; r++) {
        double best = 1e30;
        for (int rep = 0; rep < (quiet ? 1 : 3); rep++) {
            double t0 = now();
            if (par_search(m, &c, &j, &o, &cal, runs[r], false, par, 5, &kp, &sp, &err) != TP_OK) {
                fprintf(stderr, "bench_search: %s\n", err.msg);
                return 2;
            }
            double d = now() - t0;
            best = d < best ? d : best;
        }
        bool same = kp == k && memcmp(&sp, &st, sizeof sp) == 0;
        for (size_t i = 0; same && i < k; i++)
            same = tp_search_hit_cmp(&par[i], &hits[i]) == 0 &&
                   par[i].time.step_s == hits[i].time.step_s;
        if (!same) {
            fprintf(stderr, "bench_search: %u threads gave a different result\n", runs[r]);
            return 1;
        }
        if (!quiet)
            printf("%44s %3u thread%s (%d shards): %8.4f s  %.2fM layouts/s, %.0fk full "
                   "evaluations/s\n", "", runs[r], runs[r] == 1 ? " " : "s", PAR_SHARDS, best,
                   sp.evaluated / best / 1e6, (sp.rejected[TP_REJECT_MEMORY] + timed) / best / 1e3);
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
    printf("bench_search: full searches (Megatron framework: tp, pp, vpp, pipeline splits, dp, "
           "ZeRO 0/1/3, mbs 1-16, recompute none/selective/full/partial, optimizer offload); "
           "best of 3 runs; %u online CPUs\n", par_cpus());
    int rc = run("GPT-3 175B, 1024 x A100 80GB, gbs 1536", &gpt3, "a100-80gb", 1024, 1536, false);
    if (rc == 0)
        rc = run("GPT 1T, 3072 x A100 80GB, gbs 3072", &t1, "a100-80gb", 3072, 3072, false);
    return rc;
}
