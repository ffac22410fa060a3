/*
 * bench_sweeps.c - does the model order layouts the way measurements do?
 *
 * From the runs files, builds sweeps: rows of one source and one release (source_version_or_date)
 * with the same model, GPU type, GPU count, sequence length and precision that differ only in
 * their layout (tp, pp, vpp, cp, ep, ZeRO, micro-batch, accumulation, recompute).  The release
 * is held fixed because a sweep must change the layout alone: Megatron-Bridge's tables measure
 * one layout in several containers whose kernels move its speed by up to 1.8x, so a pooled
 * "sweep" ranks releases as much as layouts (--pool-releases pools them, a layout measured in
 * several releases then counting as one point with their mean).  Rows whose layout the search
 * chose (layout_searched) are left out.  For each sweep of at least three distinct layouts it
 * prints the Spearman rank correlation between predicted and measured tokens/s per GPU and the
 * regret of picking the predicted best (how much slower, measured, than the measured best).
 * A benchmark: it never fails on accuracy.
 *   bench_sweeps [--calibration FILE] [--min N] [--pool-releases] [RUNS.csv ...]
 *                                      default: data/runs
 *                                      --min: layouts a sweep needs (default 3; 2 adds pairs such
 *                                      as Korthikanti 2022's full vs selective + SP)
 *   bench_sweeps --smoke                               quietly
 */
#include "trainplan.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_RUNS = 1024 };
static size_t min_sweep = 3;
static bool by_release = true;

struct row {
    char key[200];
    char layout[96];  /* rows with the same layout are one point (their mean measurement) */
    char id[96];
    double measured, predicted;
};

static struct row rows[MAX_RUNS];
static size_t n_rows;
static struct tp_calib cal;

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    (void)ctx;
    (void)path;
    (void)line;
    /* a searched layout is the model's choice, not a measured layout: no sweep point */
    if (why || run->duplicate || run->layout_searched || n_rows == MAX_RUNS)
        return true;
    double measured = tp_run_measured_tokens_per_s(run, NULL);
    if (!isfinite(measured))
        return true;
    struct tp_time t;
    tp_time_step(&run->model, &run->cluster, &run->job, &run->layout, &cal, &t);
    struct row *r = &rows[n_rows++];
    snprintf(r->key, sizeof r->key, "%s%s%s | %s L%u H%u | %u x %s | seq %llu | prec %d | task %d",
             run->source, by_release && run->release[0] ? " " : "", by_release ? run->release : "",
             run->model.name, run->model.n_layers, run->model.hidden,
             run->cluster.n_gpus, run->cluster.gpu.key, (unsigned long long)run->job.seq,
             run->job.precision, run->job.task);
    snprintf(r->id, sizeof r->id, "%s", run->row_id);
    const struct tp_layout *l = &run->layout;
    snprintf(r->layout, sizeof r->layout, "%u %u %u %u %u %u %u %u %u %d %d %u", l->dp, l->tp,
             l->pp, l->vpp, l->cp, l->ep, l->zero, l->mbs, l->gas, l->recompute, l->sp,
             l->recompute_layers);
    r->measured = measured;
    r->predicted = t.tokens_per_s_per_gpu;
    return true;
}

/* Average ranks (ties share the mean rank). */
static void ranks(const double *v, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        double less = 0, equal = 0;
        for (size_t k = 0; k < n; k++) {
            less += v[k] < v[i];
            equal += v[k] == v[i];
        }
        out[i] = less + (equal + 1) / 2;
    }
}

static double spearman(const double *a, const double *b, size_t n)
{
    double ra[MAX_RUNS], rb[MAX_RUNS], ma = 0, mb = 0;
    ranks(a, n, ra);
    ranks(b, n, rb);
    for (size_t i = 0; i < n; i++) {
        ma += ra[i] / n;
        mb += rb[i] / n;
    }
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

int main(int argc, char **argv)
{
    static char *files[BENCH_MAX_FILES];
    size_t n_files = 0;
    bool quiet = false;
    tp_calib_init(&cal);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            quiet = true;
        } else if (strcmp(argv[i], "--pool-releases") == 0) {
            by_release = false;
        } else if (strcmp(argv[i], "--min") == 0 && i + 1 < argc) {
            min_sweep = (size_t)strtoul(argv[++i], NULL, 10);
            min_sweep = min_sweep < 2 ? 2 : min_sweep;
        } else if (strcmp(argv[i], "--calibration") == 0 && i + 1 < argc) {
            struct tp_error err;
            if (tp_calib_from_file(argv[++i], &cal, &err) != TP_OK) {
                fprintf(stderr, "bench_sweeps: %s\n", err.msg);
                return 2;
            }
        } else if (n_files < BENCH_MAX_FILES) {
            files[n_files++] = argv[i];
        }
    }
    int rc = bench_read_runs("bench_sweeps", files, n_files, on_row, NULL);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    static bool used[MAX_RUNS];
    double sum_rho = 0, sum_regret = 0, worst_regret = 0;
    size_t sweeps = 0, hits = 0, in_sweeps = 0;
    if (!quiet)
        printf("bench_sweeps: predicted vs measured order of layouts within sweeps (same %s, "
               "model, GPU, count, seq, precision)\n\n  %-78s %4s %8s %8s\n",
               by_release ? "source and release" : "source, releases pooled", "sweep", "lay.",
               "Spearman", "regret");
    /* regret: how much slower, measured, the predicted best is than the measured best (the
       predicted best is within `regret` of the measured best) */
    for (size_t i = 0; i < n_rows; i++) {
        if (used[i])
            continue;
        double meas[MAX_RUNS], pred[MAX_RUNS], count[MAX_RUNS];
        const char *sig[MAX_RUNS];
        size_t n = 0;
        for (size_t k = i; k < n_rows; k++) {
            if (used[k] || strcmp(rows[k].key, rows[i].key) != 0)
                continue;
            used[k] = true;
            size_t p = 0;
            while (p < n && strcmp(sig[p], rows[k].layout) != 0)
                p++;
            if (p == n) {
                sig[n] = rows[k].layout;
                meas[n] = count[n] = 0;
                pred[n++] = rows[k].predicted;
            }
            meas[p] += rows[k].measured;
            count[p]++;
        }
        for (size_t p = 0; p < n; p++)
            meas[p] /= count[p];
        if (n < min_sweep)
            continue;
        double rho = spearman(pred, meas, n);
        size_t best_m = 0, best_p = 0;
        for (size_t k = 1; k < n; k++) {
            best_m = meas[k] > meas[best_m] ? k : best_m;
            best_p = pred[k] > pred[best_p] ? k : best_p;
        }
        double regret = 1 - meas[best_p] / meas[best_m];
        sweeps++;
        in_sweeps += n;
        hits += best_p == best_m;
        if (isfinite(rho))
            sum_rho += rho;
        sum_regret += regret;
        worst_regret = regret > worst_regret ? regret : worst_regret;
        if (!quiet)
            printf("  %-78.78s %4zu %8.2f %7.1f%%\n", rows[i].key, n, rho, 100 * regret);
    }
    if (!quiet && sweeps)
        printf("\n  %zu sweeps, %zu layouts: mean Spearman %.2f; predicted best is the measured best "
               "in %zu of %zu; regret mean %.1f%%, worst %.1f%%\n",
               sweeps, in_sweeps, sum_rho / sweeps, hits, sweeps, 100 * sum_regret / sweeps,
               100 * worst_regret);
    return 0;
}
