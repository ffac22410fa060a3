/*
 * cmd_size.c - `trainplan size (--flops C | --gpu G --gpus N (--days D | --gpu-hours H))`:
 * the model to train for a compute budget, a cluster and a deadline.
 *
 * Every published fit's closed-form optimum, then a grid of concrete shapes of the family,
 * each counted and costed exactly, ranked by the loss a fit predicts for the tokens the budget
 * buys it; with a cluster the tokens come from each shape's fastest layout (the search core).
 * The library composes it (tp_size_report, src/api/call_size.c, on the CLI's thread pool) and
 * makes the JSON document (tp_json_size); this file prints the table, the CSV and the SVG.
 * Exit status 0 when a shape is listed, 1 when none fits the cluster, 2 on bad input.
 */
#include "cli.h"
#include "plot.h"
#include "par_search.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: trainplan size (--flops C | --gpu NAME --gpus N (--days D | --gpu-hours H))\n"
           "                      [--fit NAME] [--family llama3|qwen3|gpt] [--vocab V] [--seq S]\n"
           "                      [--top K] [--gbs B] [--gpu-hour-price P] [job options]\n\n"
           "Which model to train for a compute budget.  Prints the compute-optimal parameters,\n"
           "tokens and loss of every published scaling-law fit (Hoffmann et al. 2022 approaches\n"
           "1-3, Besiroglu et al. 2024, Kaplan et al. 2020, DeepSeek LLM 2024, Llama 3 2024),\n"
           "each in its own conventions; the default, besiroglu, agrees with approaches 1 and 2\n"
           "(hoffmann-3's printed constants do not).  Then concrete shapes of the family as its\n"
           "released models are built (head_dim 128, heads a multiple of 8, 8 KV heads, hidden a\n"
           "multiple of 256 or 512, layers a multiple of 4 or 8), each counted exactly and costed\n"
           "with exact FLOPs per token at the sequence length, given D = budget / FLOPs-per-token\n"
           "tokens and ranked by the loss the fit predicts (fits without a loss law: besiroglu's).\n"
           "Losses within what 1%% more compute buys tie; ties list the fastest on the cluster\n"
           "first (without one, the fewest parameters).  Marked: the best shape, the best at\n"
           "D ~ 20N, and the best at half and a quarter of its size.\n\n"
           "With --gpu and --gpus the budget comes from the cluster: each shape's fastest layout\n"
           "(`trainplan search`, global batch from --gbs or DeepSeek LLM's B_opt = 0.292 C^0.3271\n"
           "tokens) gives its tokens/s, so shapes the hardware runs badly get fewer tokens; days,\n"
           "GPU-hours, cost and MFU per shape.  With --flops too, the budget is fixed and days vary.\n\n"
           "JSON keys: schema_version, command, fit, params_opt, tokens_opt, loss_opt,\n"
           "tokens_per_param_opt, fits[], loss_fit, family, seq, vocab, budget_flops, cluster,\n"
           "grid, tie_band, tie_band_compute, tie_breaker, caveat (hoffmann-3), shapes[] (rank,\n"
           "mark, tie, layers, hidden, heads, kv_heads, ffn, vocab, tied, params,\n"
           "flops_per_token, tokens, tokens_per_param, loss; with a cluster days, gpu_hours,\n"
           "cost, mfu, tokens_per_s, layout), alternatives[].\n\n"
           "options:\n");
    cli_print_options(stdout, CMD_SIZE);
    printf("\nexit status: 0 shapes listed; 1 no shape fits the cluster; 2 usage or input error.\n");
}

static void layout_text(const struct tp_layout *l, char *buf, size_t len)
{
    char rc[24];
    report_recompute(l, rc, sizeof rc);
    snprintf(buf, len, "dp%u tp%u pp%u%s mbs%u zero%u rc %s%s", l->dp, l->tp, l->pp,
             l->vpp > 1 ? " vpp" : "", l->mbs, l->zero, rc,
             l->offload ? " +offload" : "");
}

static double days_of(const struct tp_size_shape *sh)
{
    return sh->seconds / 86400;
}

static double gpu_hours_of(const struct tp_size_report *r, const struct tp_size_shape *sh)
{
    return sh->seconds / 3600 * r->c.n_gpus;
}

static void print_fits(const struct tp_size_report *r)
{
    printf("compute-optimal by each fit at %.3g FLOPs%s\n", r->nominal,
           r->cluster && r->flops <= 0 ? " (the cluster's peak at 50% MFU over the deadline)"
                                       : "");
    printf("  %-11s %12s %12s %8s %8s  %s\n", "fit", "N_opt", "D_opt", "D/N", "loss",
           "conventions");
    for (size_t i = 0; i < tp_scaling_fit_count(); i++) {
        const struct tp_scaling_fit *f = tp_scaling_fit_get(i);
        struct tp_scaling_opt o;
        if (tp_scaling_optimum(f, r->nominal, &o, NULL) != TP_OK)
            continue;
        char n[24], d[24], tpp[16] = "-", loss[16] = "-";
        if (f->n_kind == TP_SCALING_N_DEEPSEEK_M)
            snprintf(n, sizeof n, "M %.2fG", o.n_opt / 1e9); /* FLOPs per token */
        else
            fmt_si(n, sizeof n, o.n_opt);
        fmt_si(d, sizeof d, o.d_opt);
        if (isfinite(o.tokens_per_n))
            snprintf(tpp, sizeof tpp, "%.1f", o.tokens_per_n);
        if (isfinite(o.loss_opt))
            snprintf(loss, sizeof loss, "%.3f", o.loss_opt);
        printf("%c %-11s %12s %12s %8s %8s  %s\n", f == r->fit ? '*' : ' ', f->key, n, d, tpp,
               loss, f->conventions);
    }
}

static void print_row(const struct tp_size_report *r, const struct tp_size_shape *sh,
                      const char *rank, const char *mark)
{
    char p[16], d[16];
    fmt_si(p, sizeof p, sh->params);
    fmt_si(d, sizeof d, sh->tokens);
    printf("%5s %-8s %4u %6u %5u %3u %6u %8s %9.2f %8s %6.1f %7.4f", rank, mark ? mark : "",
           sh->layers, sh->hidden, sh->heads, sh->kv_heads, sh->ffn, p,
           sh->flops_per_token / 1e9, d, sh->tokens / sh->params, sh->loss);
    if (r->cluster) {
        char lay[160];
        layout_text(&sh->best.layout, lay, sizeof lay);
        printf(" %7.2f %10.0f %5.1f%%  %s", days_of(sh), gpu_hours_of(r, sh),
               100 * sh->best.time.mfu, lay);
    }
    printf("\n");
}

static void print_table(const struct tp_size_report *r)
{
    const struct tp_size_state *st = &r->st;
    printf("trainplan %s - size\n\n", TP_VERSION);
    printf("family   %s, vocab %u, seq %llu\n", tp_size_family_name(r->g.family),
           st->n ? st->shapes[0].vocab : 0, (unsigned long long)r->g.seq);
    if (r->cluster) {
        printf("cluster  %u x %s, %s conventions, global batch %llu sequences\n",
               r->c.n_gpus, r->c.gpu.label, tp_stack_get(r->j.framework)->key,
               (unsigned long long)r->o.gbs);
        if (r->flops > 0)
            printf("budget   %.4g model FLOPs (days follow each shape's fastest layout)\n",
                   r->flops);
        else
            printf("budget   %.2f days = %.0f GPU-hours (tokens from each shape's fastest "
                   "layout)\n", r->seconds / 86400, r->seconds / 3600 * r->c.n_gpus);
    } else {
        printf("budget   %.4g model FLOPs (exact, causal: D = budget / FLOPs per token)\n",
               r->flops);
    }
    printf("loss     %s%s\n\n", r->loss_fit->key,
           r->loss_fit != r->fit ? " (the chosen fit has no loss law)" : "");
    print_fits(r);
    if (r->hoffmann3)
        printf("note: hoffmann-3 is approach 3 as printed (eq. 10); its rounded constants do not "
               "reproduce Hoffmann's own Table A3 and put N_opt at about half of approaches 1 and "
               "2 (Besiroglu et al. 2024); the default, besiroglu, agrees with them\n");
    printf("\n%zu shapes in the grid", st->n);
    if (r->cluster && st->searched == st->n)
        printf(", every one searched for a layout");
    else if (r->cluster)
        printf(", %zu searched for a layout (the rest cannot rank: their loss at %.0f%% of the "
               "peak, the fastest any FLOP runs, is above the list's)", st->searched,
               100 * st->rate / r->c.gpu.peak_flops[TP_BF16]);
    printf("\n\n%5s %-8s %4s %6s %5s %3s %6s %8s %9s %8s %6s %7s", "rank", "mark", "L", "hidden",
           "heads", "kv", "ffn", "params", "GFLOP/tok", "tokens", "D/N", "loss");
    if (r->cluster)
        printf(" %7s %10s %6s  %s", "days", "GPU-hours", "MFU", "layout");
    printf("\n");
    for (size_t i = 0; i < r->n_top; i++) {
        char rank[24];
        snprintf(rank, sizeof rank, "%zu", i + 1);
        print_row(r, &st->shapes[r->top[i]], rank, tp_size_mark_of(r, r->top[i]));
    }
    if (r->n_top == 0) {
        printf("no shape has a feasible layout on this cluster\n");
        return;
    }
    if (r->n_tie > 1)
        printf("\nranks 1-%zu tie: losses within %.4f of the lowest (%.4f), what %g%% more "
               "compute buys at the optimum; %s\n", r->n_tie, r->req.tie_band, r->low,
               100 * r->tie_compute, tp_size_tie_breaker(r));
    else
        printf("\nno tie: no other loss within %.4f of the best (what %g%% more compute buys "
               "at the optimum)\n", r->req.tie_band, 100 * r->tie_compute);
    const struct tp_size_shape *best = &st->shapes[r->top[0]];
    printf("\nalternatives (inference-aware: smaller models trained on more tokens)\n");
    for (int m = 1; m < TP_SIZE_MARKS; m++) {
        if (r->marks[m] < 0) {
            printf("  %-8s none in the grid\n", tp_size_mark_name(m));
            continue;
        }
        const struct tp_size_shape *sh = &st->shapes[r->marks[m]];
        char p[16];
        fmt_si(p, sizeof p, sh->params);
        printf("  %-8s %uL-%uH-%uD-%uff, %s parameters, %.1f tokens/parameter, loss %.4f "
               "(%+.4f): %s\n",
               tp_size_mark_name(m), sh->layers, sh->heads, sh->hidden, sh->ffn, p,
               sh->tokens / sh->params, sh->loss, sh->loss - best->loss, tp_size_mark_text(m));
    }
    if (r->cluster && r->price >= 0)
        printf("\ncost of the best shape: %.2f (%.0f GPU-hours at %.2f)\n",
               gpu_hours_of(r, best) * r->price, gpu_hours_of(r, best), r->price);
}

static void print_csv(const struct tp_size_report *r)
{
    const struct tp_size_state *st = &r->st;
    printf("rank,mark,layers,hidden,heads,kv_heads,ffn,vocab,params,flops_per_token,tokens,"
           "loss%s,tie\n", r->cluster ? ",days,gpu_hours,mfu,tokens_per_s,dp,tp,pp,mbs,zero" : "");
    for (size_t i = 0; i < r->n_top; i++) {
        const struct tp_size_shape *sh = &st->shapes[r->top[i]];
        const char *mark = tp_size_mark_of(r, r->top[i]);
        printf("%zu,%s,%u,%u,%u,%u,%u,%u,%.0f,%.6g,%.6g,%.6f", i + 1, mark ? mark : "",
               sh->layers, sh->hidden, sh->heads, sh->kv_heads, sh->ffn, sh->vocab, sh->params,
               sh->flops_per_token, sh->tokens, sh->loss);
        if (r->cluster) {
            const struct tp_layout *l = &sh->best.layout;
            printf(",%.4f,%.1f,%.4f,%.1f,%u,%u,%u,%u,%u", days_of(sh), gpu_hours_of(r, sh),
                   sh->best.time.mfu, sh->best.time.tokens_per_s, l->dp, l->tp, l->pp, l->mbs,
                   l->zero);
        }
        printf(",%d\n", i < r->n_tie);
    }
}

/* --svg: the evaluated shapes' loss against their parameters, the ranked ones marked. */
static int plot_ranked(const struct tp_size_report *r, const char *svg)
{
    const struct tp_size_state *st = &r->st;
    struct tp_scaling_opt o;
    double n_opt = tp_scaling_optimum(r->loss_fit, r->nominal, &o, NULL) == TP_OK ? o.n_opt : NAN;
    struct plot_size p = {st->shapes, st->done, st->n, r->top, r->n_top,
                          r->loss_fit->key, tp_size_family_name(r->g.family), r->nominal, n_opt};
    return plot_size(svg, &p);
}

int cmd_size(int argc, char **argv)
{
    static struct cli_args a;
    int rc = cli_begin_listing(argc, argv, CMD_SIZE, &a, help, "size");
    if (rc >= 0)
        return rc;
    static struct tp_size_report r;
    struct tp_error err = {{0}, {0}};
    bool cluster = a.gpu || a.gpus != TP_UNSET;
    /* the shapes' searches on the CLI's threads (one without a cluster: nothing to search),
       one progress line over the whole walk */
    struct par_pool *state;
    struct tp_pool pool = par_pool(&state, cluster ? (a.threads != TP_UNSET ? (unsigned)a.threads
                                                                           : par_cpus())
                                                   : 1,
                                   isatty(STDERR_FILENO) && !a.quiet);
    par_pool_whole(state, "size", "shapes searched");
    enum tp_status st = tp_size_report(&a, &pool, &r, &err);
    par_pool_free(state);
    if (st != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    rc = a.svg ? plot_ranked(&r, a.svg) : EXIT_OK;
    if (rc == EXIT_OK) {
        if (a.format == FMT_JSON)
            rc = cli_print_json(tp_json_size(&r), 8);
        else if (a.format == FMT_CSV)
            print_csv(&r);
        else
            print_table(&r);
    }
    size_t n_top = r.n_top;
    tp_size_report_free(&r);
    if (rc != EXIT_OK)
        return rc;
    return cli_finish(n_top > 0 ? EXIT_OK : EXIT_NO);
}
