/*
 * plot.c - `--svg FILE` on memory, estimate, search --gpus, validate, logs and size: each
 * command's figures mapped onto the library's charts (src/plot/svg_plot.c) and written to FILE.
 */
#include "plot.h"
#include "outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A plot the command's figures cannot give (no point, no feasible layout). */
static enum tp_status no_plot(struct tp_error *err, const char *why)
{
    snprintf(err->msg, sizeof err->msg, "%s", why);
    return TP_EINVAL;
}

/* Writes a rendered chart (or reports why there is none) and frees it. */
static int finish(const char *path, enum tp_status st, struct tp_svg *doc,
                  const struct tp_error *err)
{
    int rc = EXIT_OK;
    if (st != TP_OK) {
        cli_error("--svg %s: %s", path, err->msg);
        rc = EXIT_USAGE;
    } else {
        char what[4200];
        snprintf(what, sizeof what, "--svg %s: cannot write", path);
        rc = out_write(what, path, doc->data, doc->len);
    }
    tp_svg_free(doc);
    return rc;
}

static void layout_text(const struct run *r, char *buf, size_t len)
{
    const struct tp_layout *l = &r->l;
    snprintf(buf, len, "%s on %u x %s; dp %u tp %u pp %u cp %u ep %u, ZeRO %u, mbs %u x gas %u",
             r->m.name, r->c.n_gpus, r->c.gpu.key, l->dp, l->tp, l->pp, l->cp, l->ep, l->zero,
             l->mbs, l->gas);
}

enum { MEM_SEGS = 8, MAX_STAGE_BARS = 64 };

int plot_memory(const char *path, const struct run *r)
{
    static const char *const SEGS[MEM_SEGS] = {
        "weights",     "gradients", "optimizer states", "ZeRO-3/FSDP gather buffers",
        "activations", "logits",    "comm. buffers",    "overhead: context, NCCL"};
    size_t n = r->l.pp < MAX_STAGE_BARS ? r->l.pp : MAX_STAGE_BARS;
    double *v = calloc(n * MEM_SEGS, sizeof *v);
    char(*names)[24] = calloc(n, sizeof *names);
    const char **bar = calloc(n, sizeof *bar);
    if (!v || !names || !bar) {
        free(v);
        free(names);
        free(bar);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    struct tp_memory m = {0};
    for (size_t s = 0; s < n; s++) {
        tp_memory_stage(&r->m, &r->c, &r->j, &r->l, (uint32_t)s, &m);
        const double b[MEM_SEGS] = {m.weights_bytes,     m.grads_bytes,  m.optimizer_bytes,
                                    m.gather_bytes,      m.activations_bytes, m.logits_bytes,
                                    m.comm_bytes,        m.overhead_bytes};
        for (size_t k = 0; k < MEM_SEGS; k++)
            v[s * MEM_SEGS + k] = b[k] / 1e9;
        snprintf(names[s], sizeof names[s], n == 1 ? "per GPU" : "stage %zu", s);
        bar[s] = names[s];
    }
    char sub[200], lim[64];
    layout_text(r, sub, sizeof sub);
    snprintf(lim, sizeof lim, "%s capacity %.1f GB", r->c.gpu.key, m.capacity_bytes / 1e9);
    struct tp_plot_bars p = {"Memory per GPU at the peak, by component", sub,
                             "GB per GPU (10^9 bytes)", bar, n, SEGS, MEM_SEGS, v,
                             m.capacity_bytes / 1e9, lim, false};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_svg_bars(&p, &doc, &err);
    free(v);
    free(names);
    free(bar);
    return finish(path, st, &doc, &err);
}

enum { TIME_SEGS = 13 };

int plot_estimate(const char *path, const struct run *r, const struct tp_time *t)
{
    static const char *const SEGS[TIME_SEGS] = {
        "forward", "backward", "recompute", "TP collectives", "CP KV exchange", "MoE all-to-all",
        "pipeline send/recv", "pipeline bubble", "data-parallel / ZeRO", "optimizer step",
        "offload (PCIe)", "launch overhead", "other"};
    double v[TIME_SEGS] = {t->fwd_s,     t->bwd_s,       t->recompute_s, t->tp_comm_s,
                           t->cp_comm_s, t->ep_comm_s,   t->pp_comm_s,   t->bubble_s,
                           t->dp_comm_s, t->optimizer_s, t->offload_s,   t->overhead_s, 0};
    double sum = 0;
    for (size_t k = 0; k + 1 < TIME_SEGS; k++)
        sum += v[k] > 0 ? v[k] : 0;
    for (size_t k = 0; k + 1 < TIME_SEGS; k++)
        v[k] = v[k] > 0 ? v[k] : 0;
    v[TIME_SEGS - 1] = t->step_s > sum ? t->step_s - sum : 0;
    static const char *const BAR[1] = {"step"};
    char sub[256], lay[200];
    layout_text(r, lay, sizeof lay);
    snprintf(sub, sizeof sub, "%s; %.0f tokens/s per GPU, MFU %.1f%%", lay,
             t->tokens_per_s_per_gpu, 100 * t->mfu);
    char title[96];
    snprintf(title, sizeof title, "Step time %.3f s, by what it is spent on", t->step_s);
    struct tp_plot_bars p = {title, sub, "seconds per optimizer step", BAR, 1, SEGS, TIME_SEGS, v,
                             NAN, NULL, true};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    enum tp_status st = isfinite(t->step_s) ? tp_svg_bars(&p, &doc, &err)
                                            : no_plot(&err, "no step time to plot");
    return finish(path, st, &doc, &err);
}

int plot_search(const char *path, const struct run *r, const struct plot_sweep *s)
{
    size_t n = s->n;
    double *x = calloc(2 * n + 1, sizeof *x), *y = calloc(2 * n + 1, sizeof *y);
    char(*lab)[48] = calloc(n + 1, sizeof *lab);
    const char **labels = calloc(2 * n + 1, sizeof *labels);
    if (!x || !y || !lab || !labels) {
        free(x), free(y), free(lab), free(labels);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    /* front first (joined), then the others (hollow) */
    size_t nf = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
        if (!s->found[i])
            continue;
        const struct tp_layout *l = &s->best[i].h.layout;
        snprintf(lab[i], sizeof lab[i], "%u GPUs (tp%u pp%u dp%u)", s->gpus[i], l->tp, l->pp,
                 l->dp);
        size_t at = s->front[i] ? nf++ : n + no++;
        x[at] = s->gpu_hours[i];
        y[at] = s->train_s[i] / 3600;
        labels[at] = lab[i];
    }
    char tk[32], xl[96], yl[96], sub[200];
    fmt_si(tk, sizeof tk, s->tokens > 0 ? s->tokens : 1e6);
    snprintf(xl, sizeof xl, "GPU-hours for %s tokens", tk);
    snprintf(yl, sizeof yl, "hours of training for %s tokens", tk);
    snprintf(sub, sizeof sub, "%s on %s, the fastest layout per GPU count", r->m.name,
             r->c.gpu.key);
    struct tp_plot_series se[2] = {
        {"Pareto front", x, y, NULL, NULL, labels, nf, TP_MARK_DOT, true, false, 0},
        {"dominated", x + n, y + n, NULL, NULL, labels + n, no, TP_MARK_DOT, false, true, 3}};
    struct tp_plot_xy p = {"Training time against GPU-hours", sub, xl, yl, true, true, false,
                           se, no ? 2 : 1, NULL, 0};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    enum tp_status st = nf ? tp_svg_xy(&p, &doc, &err)
                           : no_plot(&err, "no feasible layout at any GPU count");
    free(x), free(y), free(lab), free(labels);
    return finish(path, st, &doc, &err);
}

enum { MAX_SOURCES = 24 };

int plot_validate(const char *path, const struct tp_runs *runs, const struct tp_run_eval *ev)
{
    size_t n = runs->n;
    double *buf = calloc(4 * n + 1, sizeof *buf);
    const char *src[MAX_SOURCES];
    size_t ns = 0, at = 0;
    struct tp_plot_series se[MAX_SOURCES + 1];
    if (!buf) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    /* rows grouped by source (first-seen order), the sources past MAX_SOURCES together */
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < ns && strcmp(src[k], runs->runs[i].source) != 0)
            k++;
        if (k == ns && ns < MAX_SOURCES)
            src[ns++] = runs->runs[i].source;
    }
    for (size_t k = 0; k <= ns; k++) {
        size_t first = at;
        for (size_t i = 0; i < n; i++) {
            size_t g = 0;
            while (g < ns && strcmp(src[g], runs->runs[i].source) != 0)
                g++;
            if (g != k)
                continue;
            double pr = ev[i].predicted_tokens_per_s_per_gpu;
            buf[at] = ev[i].measured_tokens_per_s_per_gpu;
            buf[n + at] = pr;
            buf[2 * n + at] = pr * ev[i].range.lo;
            buf[3 * n + at] = pr * ev[i].range.hi;
            at++;
        }
        se[k] = (struct tp_plot_series){k < ns ? src[k] : "other sources", buf + first,
                                        buf + n + first, buf + 2 * n + first,
                                        buf + 3 * n + first, NULL, at - first,
                                        (enum tp_mark)(k / 8 % 4), false, false, (int)(k % 8)};
    }
    struct tp_plot_xy p = {"Predicted against measured throughput",
                           "one point per measured run, with its 80% range; on the diagonal the "
                           "prediction is exact",
                           "measured tokens/s per GPU", "predicted tokens/s per GPU", true, true,
                           true, se, ns + (se[ns].n > 0), NULL, 0};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_svg_xy(&p, &doc, &err);
    free(buf);
    return finish(path, st, &doc, &err);
}

/* Which part of a log a step is in: 0 steady, 1 warm-up, 2 outlier. */
static int step_kind(const struct tp_log_step *steps, size_t i, const struct tp_log_steady *st)
{
    return i < st->n_warmup ? 1 : tp_log_is_outlier(st, &steps[i]) ? 2 : 0;
}

/* A log's figure over the steps: the steady steps joined, warm-up and outliers marked apart.
   `buf` holds 2n doubles. */
static size_t log_series(const struct tp_log_step *steps, size_t n,
                         const struct tp_log_steady *st, const double *fig, double *buf,
                         struct tp_plot_series se[3])
{
    static const char *const NAMES[3] = {"steady steps", "warm-up (skipped)",
                                         "outliers (dropped)"};
    static const enum tp_mark MARK[3] = {TP_MARK_NONE, TP_MARK_DOT, TP_MARK_TRIANGLE};
    static const int COL[3] = {0, 1, 3};
    size_t drawn = 0, off = 0;
    for (int kind = 0; kind < 3; kind++) {
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
            count += step_kind(steps, i, st) == kind && isfinite(fig[i]);
        double *x = buf + 2 * off, *y = x + count;
        size_t j = 0;
        for (size_t i = 0; i < n; i++)
            if (step_kind(steps, i, st) == kind && isfinite(fig[i])) {
                x[j] = (double)steps[i].step;
                y[j++] = fig[i];
            }
        off += count;
        if (count)
            se[drawn++] = (struct tp_plot_series){NAMES[kind], x, y, NULL, NULL, NULL, count,
                                                  MARK[kind], kind == 0, kind == 1, COL[kind]};
    }
    return drawn;
}

int plot_logs(const char *path, const char *log_name, const struct tp_log_step *steps, size_t n,
              const struct tp_log_steady *st)
{
    double *fig = calloc(2 * n + 1, sizeof *fig), *buf = calloc(4 * n + 2, sizeof *buf);
    if (!fig || !buf) {
        free(fig), free(buf);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        const struct tp_log_step *s = &steps[i];
        fig[i] = s->step_s;
        double tps = s->tokens_per_s;
        if (!isfinite(tps) && st->tokens_per_step > 0 && s->step_s > 0)
            tps = st->tokens_per_step / s->step_s;
        if (!isfinite(tps) && st->gpus)
            tps = s->tokens_per_s_per_gpu * st->gpus;
        fig[n + i] = tps;
    }
    struct tp_plot_series se[2][3];
    struct tp_plot_vline warm = {NAN, "warm-up ends"};
    if (st->n_warmup > 0 && st->n_warmup < n)
        warm.x = (double)steps[st->n_warmup].step - 0.5;
    char sub[256];
    snprintf(sub, sizeof sub, "%s: %zu steps, %zu warm-up, %zu outliers; steady median %.4g s",
             log_name, st->n_steps, st->n_warmup, st->n_outliers, st->step_s_median);
    static const char *const TITLE[2] = {"Step time over the logged steps",
                                         "Throughput over the logged steps"};
    static const char *const YL[2] = {"seconds per step", "tokens/s (all GPUs)"};
    struct tp_plot_xy p[2];
    size_t np = 0;
    for (int k = 0; k < 2; k++) {
        size_t ns = log_series(steps, n, st, fig + (size_t)k * n, buf + (size_t)k * 2 * n, se[k]);
        if (ns)
            p[np++] = (struct tp_plot_xy){TITLE[k], sub, "step", YL[k], false, false, false,
                                          se[k], ns, &warm, 1};
    }
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    enum tp_status st2 = np ? tp_svg_panels(p, np, &doc, &err)
                            : no_plot(&err, "the log has no per-step timing to plot");
    free(fig), free(buf);
    return finish(path, st2, &doc, &err);
}

int plot_size(const char *path, const struct plot_size *s)
{
    double *buf = calloc(2 * s->n + 2 * s->n_top + 2, sizeof *buf);
    char(*lab)[24] = calloc(s->n_top + 1, sizeof *lab);
    const char **labels = calloc(s->n_top + 1, sizeof *labels);
    if (!buf || !lab || !labels) {
        free(buf), free(lab), free(labels);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->done[i] && isfinite(s->shapes[i].loss)) {
            buf[m] = s->shapes[i].params;
            buf[s->n + m++] = s->shapes[i].loss;
        }
    double *tx = buf + 2 * s->n, *ty = tx + s->n_top;
    for (size_t r = 0; r < s->n_top; r++) {
        tx[r] = s->shapes[s->top[r]].params;
        ty[r] = s->shapes[s->top[r]].loss;
        snprintf(lab[r], sizeof lab[r], "#%zu", r + 1);
        labels[r] = r == 0 ? lab[r] : NULL; /* the ranked shapes lie close: the best named */
    }
    struct tp_plot_series se[2] = {
        {"shapes evaluated", buf, buf + s->n, NULL, NULL, NULL, m, TP_MARK_DOT, false, true, 4},
        {"ranked (best first)", tx, ty, NULL, NULL, labels, s->n_top, TP_MARK_DIAMOND, false,
         false, 3}};
    struct tp_plot_vline opt = {s->n_opt, "the fit's optimum N"};
    char sub[200], yl[96];
    snprintf(sub, sizeof sub, "%s shapes for %.3g FLOPs; loss by the %s fit", s->family,
             s->flops, s->fit_key);
    snprintf(yl, sizeof yl, "predicted loss (%s)", s->fit_key);
    struct tp_plot_xy p = {"Predicted loss against parameters for the budget", sub,
                           "parameters", yl, true, false, false, se, 2, &opt,
                           isfinite(s->n_opt) ? 1 : 0};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_svg_xy(&p, &doc, &err);
    free(buf), free(lab), free(labels);
    return finish(path, st, &doc, &err);
}
