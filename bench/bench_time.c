/*
 * bench_time.c - predicted vs measured training throughput for every run in the runs files.
 *
 * Each row is mapped to model, cluster, job and layout (tp_run_from_row) and predicted against
 * its measured throughput in tokens/s per GPU by tp_run_evaluate, as `trainplan validate` does.
 * Prints one line per row, then count, median and p90 of the absolute relative error and the
 * signed median (bias, tp_err_stats), per source and per GPU type, and a check that the FLOP
 * conventions reproduce the rows that print both TFLOP/s and tokens/s.  A benchmark: it never
 * fails on accuracy.
 *   bench_time [--calibration FILE] [RUNS.csv ...]   default: the calibration set (data/runs/calibration.txt)
 *   bench_time --smoke                               the same, quietly
 *   bench_time --row ROW_ID                          also the whole breakdown of one row
 *   bench_time --objective                           only the calibration objective: the mean
 *                                                    over sources of the median abs(log(pred/meas))
 */
#include "trainplan.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAX_ROWS = 1024 };

struct result {
    char row_id[96], source[96], gpu[24], framework[24];
    double err; /* predicted / measured - 1 */
};

struct conv_check {
    char name[64];
    double ratio[MAX_ROWS];
    size_t n;
};

struct state {
    struct tp_calib cal;
    struct result rows[MAX_ROWS];
    size_t n, skipped, no_target;
    struct conv_check conv[16];
    size_t n_conv;
    bool quiet;
    const char *detail; /* --row ID: print this row's whole breakdown */
    bool objective;     /* --objective: print only the mean over sources of the median
                           |log(predicted / measured)| (what a calibration minimises) */
};

static void check_convention(struct state *s, const struct tp_run *run)
{
    if (!isfinite(run->tflops_per_gpu) || !isfinite(run->tokens_per_s_per_gpu))
        return;
    double f = tp_convention_flops_per_token(&run->model, run->job.seq, run->tflops_convention);
    if (f <= 0)
        return;
    char name[64];
    snprintf(name, sizeof name, "%s (%.30s)", run->tflops_convention, run->source);
    size_t i = 0;
    while (i < s->n_conv && strcmp(s->conv[i].name, name) != 0)
        i++;
    if (i == s->n_conv) {
        if (s->n_conv == 16)
            return;
        snprintf(s->conv[s->n_conv++].name, sizeof s->conv[0].name, "%s", name);
    }
    if (s->conv[i].n < MAX_ROWS)
        s->conv[i].ratio[s->conv[i].n++] = run->tflops_per_gpu * 1e12 /
                                           (run->tokens_per_s_per_gpu * f);
}

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    struct state *s = ctx;
    if (run->duplicate)
        return true;
    bool target = isfinite(run->tokens_per_s_per_gpu) || isfinite(run->step_time_s) ||
                  isfinite(run->tflops_per_gpu) || isfinite(run->mfu) || isfinite(run->hfu);
    if (!target)
        return true;
    if (why) {
        s->skipped++;
        if (!s->quiet)
            printf("%-44s skipped: %s (%s line %zu)\n", run->row_id, why->msg, path, line);
        return true;
    }
    struct tp_run_eval e;
    tp_run_evaluate(run, &s->cal, &e);
    if (!isfinite(e.measured_tokens_per_s_per_gpu)) {
        s->no_target++;
        if (!s->quiet)
            printf("%-44s skipped: no convertible throughput (convention \"%s\")\n", run->row_id,
                   run->tflops_convention);
        return true;
    }
    check_convention(s, run);
    const struct tp_time t = e.time;
    if (s->n >= MAX_ROWS)
        return false;
    struct result *r = &s->rows[s->n++];
    snprintf(r->row_id, sizeof r->row_id, "%s", run->row_id);
    snprintf(r->source, sizeof r->source, "%s", run->source);
    snprintf(r->gpu, sizeof r->gpu, "%s", run->cluster.gpu.key);
    snprintf(r->framework, sizeof r->framework, "%s", run->framework_key);
    r->err = e.err;
    if (s->detail && strcmp(s->detail, run->row_id) == 0) {
        const struct tp_layout *l = &run->layout;
        const struct tp_model *m = &run->model;
        printf("%s: %s L%u H%u heads %u/%u ffn %u E%u k%u moe_ffn %u V%u seq %llu\n"
               "  %u x %s (%u per node) dp %u tp %u pp %u vpp %u cp %u ep %u etp %u sp %d "
               "zero %u mbs %u gas %u recompute %d prec %d fw %d imbalance %.2f\n  assumed: %s\n",
               run->row_id, m->name, m->n_layers, m->hidden, m->n_heads, m->n_kv_heads, m->ffn,
               m->n_experts, m->top_k, m->moe_ffn, m->vocab, (unsigned long long)run->job.seq,
               run->cluster.n_gpus, run->cluster.gpu.key, run->cluster.gpus_per_node, l->dp,
               l->tp, l->pp, l->vpp, l->cp, l->ep, l->etp, l->sp, l->zero, l->mbs, l->gas,
               l->recompute, run->job.precision, run->job.framework, run->job.moe_imbalance,
               run->assumptions);
        printf("  step %.4f: fwd %.4f bwd %.4f rc %.4f (gemm %.4f attn %.4f mem %.4f) tp %.4f "
               "cp %.4f ep %.4f pp %.4f bubble %.4f dp %.4f/%.4f opt %.4f overhead %.4f\n",
               t.step_s, t.fwd_s, t.bwd_s, t.recompute_s, t.gemm_s, t.attn_s, t.elementwise_s,
               t.tp_comm_s, t.cp_comm_s, t.ep_comm_s, t.pp_comm_s, t.bubble_s, t.dp_comm_s,
               t.dp_comm_total_s, t.optimizer_s, t.overhead_s);
    }
    if (!s->quiet)
        printf("%-44s %-10s pred %9.1f meas %9.1f tok/s/GPU %+6.1f%% (%s) mfu %.2f | "
               "comp %.2f tp %.2f ep %.2f pp %.2f bub %.2f dp %.2f s\n",
               run->row_id, r->gpu, t.tokens_per_s_per_gpu, e.measured_tokens_per_s_per_gpu,
               100 * r->err, e.measured_from, t.mfu,
               t.fwd_s + t.bwd_s + t.recompute_s, t.tp_comm_s, t.ep_comm_s, t.pp_comm_s,
               t.bubble_s, t.dp_comm_s);
    return true;
}

enum key { BY_SOURCE, BY_GPU, BY_FRAMEWORK };

static const char *key_of(const struct result *r, enum key k)
{
    return k == BY_SOURCE ? r->source : k == BY_GPU ? r->gpu : r->framework;
}

static void line(const struct state *s, enum key k, const char *value)
{
    static double e[MAX_ROWS], scratch[MAX_ROWS];
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!value || strcmp(key_of(&s->rows[i], k), value) == 0)
            e[n++] = s->rows[i].err;
    struct tp_err_stats st;
    tp_err_stats(e, n, scratch, &st);
    if (st.n == 0)
        return;
    printf("  %-40s %4zu  %6.1f%%  %6.1f%%  %+6.1f%%\n", value ? value : "all", st.n,
           100 * st.median_abs, 100 * st.p90_abs, 100 * st.bias);
}

static void table(const struct state *s, enum key k, const char *title)
{
    printf("\n  %-40s %4s  %7s  %7s  %7s\n", title, "rows", "median", "p90", "bias");
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(key_of(&s->rows[j], k), key_of(&s->rows[i], k)) != 0;
        if (first)
            line(s, k, key_of(&s->rows[i], k));
    }
}

static double objective(const struct state *s)
{
    static double v[MAX_ROWS], scratch[MAX_ROWS];
    double sum = 0;
    size_t sources = 0;
    for (size_t i = 0; i < s->n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(s->rows[j].source, s->rows[i].source) != 0;
        if (!first)
            continue;
        size_t n = 0;
        for (size_t j = i; j < s->n; j++)
            if (strcmp(s->rows[j].source, s->rows[i].source) == 0)
                v[n++] = log1p(s->rows[j].err);
        struct tp_err_stats st;
        tp_err_stats(v, n, scratch, &st);
        sum += st.median_abs;
        sources++;
    }
    return sources ? sum / sources : 0;
}

int main(int argc, char **argv)
{
    static struct state s;
    static char *files[BENCH_MAX_FILES];
    size_t n_files = 0;
    tp_calib_init(&s.cal);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            s.quiet = true;
        } else if (strcmp(argv[i], "--objective") == 0) {
            s.objective = s.quiet = true;
        } else if (strcmp(argv[i], "--row") == 0 && i + 1 < argc) {
            s.detail = argv[++i];
        } else if (strcmp(argv[i], "--calibration") == 0 && i + 1 < argc) {
            struct tp_error err;
            if (tp_calib_from_file(argv[++i], &s.cal, &err) != TP_OK) {
                fprintf(stderr, "bench_time: %s\n", err.msg);
                return 2;
            }
        } else if (n_files < BENCH_MAX_FILES) {
            files[n_files++] = argv[i];
        }
    }
    int rc = bench_read_runs("bench_time", files, n_files, on_row, &s);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if (s.objective) {
        printf("%.6f\n", objective(&s));
        return 0;
    }
    printf("\nbench_time: predicted vs measured tokens/s per GPU (error = predicted/measured - 1)\n");
    printf("\n  %-40s %4s  %7s  %7s  %7s\n", "", "rows", "median", "p90", "bias");
    line(&s, BY_SOURCE, NULL);
    table(&s, BY_SOURCE, "by source");
    table(&s, BY_GPU, "by GPU");
    table(&s, BY_FRAMEWORK, "by framework");
    printf("\n  rows with a throughput figure that could not be mapped: %zu; "
           "with no convertible figure: %zu\n", s.skipped, s.no_target);
    printf("\n  FLOP conventions: measured TFLOP/s / (measured tokens/s x convention FLOPs/token)\n");
    for (size_t i = 0; i < s.n_conv; i++) {
        static double dev[MAX_ROWS], scratch[MAX_ROWS];
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        for (size_t k = 0; k < s.conv[i].n; k++) {
            dev[k] = s.conv[i].ratio[k] - 1;
            lo = fmin(lo, s.conv[i].ratio[k]);
            hi = fmax(hi, s.conv[i].ratio[k]);
        }
        struct tp_err_stats st; /* the signed median of ratio - 1: the median ratio */
        tp_err_stats(dev, s.conv[i].n, scratch, &st);
        printf("  %-58s %4zu  median %.3f  range %.3f..%.3f\n", s.conv[i].name,
               s.conv[i].n, 1 + st.bias, lo, hi);
    }
    return 0;
}
