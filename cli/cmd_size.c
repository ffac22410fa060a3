/*
 * cmd_size.c - `trainplan size (--flops C | --gpu G --gpus N (--days D | --gpu-hours H))`:
 * the model to train for a compute budget, a cluster and a deadline.
 *
 * Every published fit's closed-form optimum, then a grid of concrete shapes of the family,
 * each counted and costed exactly, ranked by the loss a fit predicts for the tokens the budget
 * buys it; with a cluster the tokens come from each shape's fastest layout (the search core).
 * Exit status 0 when a shape is listed, 1 when none fits the cluster, 2 on bad input.
 */
#include "cli.h"
#include "plot.h"
#include "par_search.h"
#include "size_run.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Besiroglu et al. 2024 (arXiv 2404.10102) Table 1: the refit of Hoffmann's approach 3 whose
   optimum agrees with approaches 1 and 2 (N_opt ~ C^0.513; 29.5B at 1e23 FLOPs against 28.4B
   and 26.9B); Hoffmann's printed approach-3 constants give 14.6B and miss its own Table A3. */
#define DEFAULT_FIT "besiroglu"
/* Two shapes tie when their predicted losses differ by less than what 1% more compute buys at
   the optimum: a 1% budget difference is below what a plan holds to (seven hours of a month),
   and far below the spread of the fits that agree (hoffmann-1, hoffmann-2 and besiroglu put
   N_opt 10% apart at 1e23).  Ties are broken by what trains faster (size_search.c). */
#define TIE_COMPUTE 0.01

enum { MARKS = 4 };
static const char *const MARK_NAMES[MARKS] = {"best", "d20n", "half", "quarter"};
static const char *const MARK_TEXT[MARKS] = {
    "lowest predicted loss (ties: the fastest)", "D ~ 20N (15..25 tokens per parameter)",
    "over-trained: at most half the parameters", "over-trained: at most a quarter"};

struct size_job {
    struct cli_args a;
    struct run r;                     /* cluster and job (r.m unused) */
    struct tp_size_grid g;
    const struct tp_scaling_fit *fit, *loss_fit, *hoffmann3;
    struct tp_calib cal;
    struct tp_search_opts o;
    struct tp_size_req req;
    struct size_pool pool;
    bool cluster;
    double seconds;                   /* the deadline (cluster, no --flops) */
    double nominal;                   /* FLOPs for the fits' optima */
};

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

/* The grid's extreme shapes bound the budgets it can answer: a budget whose compute-optimal
   model (by the loss fit) lies outside them would only rank the grid's edge. */
static int check_budget(const struct size_job *s)
{
    if (s->cluster && s->r.c.n_gpus > 65536) {
        cli_error("--gpus %u: size searches a layout per shape and stops at 65,536 GPUs",
                  s->r.c.n_gpus);
        return EXIT_USAGE;
    }
    struct tp_scaling_opt o;
    struct tp_error err = {{0}, {0}};
    double lo, hi;
    if (tp_scaling_optimum(s->loss_fit, s->nominal, &o, &err) != TP_OK ||
        tp_size_grid_span(&s->g, s->loss_fit, &lo, &hi, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    if (o.n_opt < lo || o.n_opt > hi) {
        char n[16], l[16], h[16];
        fmt_si(n, sizeof n, o.n_opt);
        fmt_si(l, sizeof l, lo);
        fmt_si(h, sizeof h, hi);
        cli_error("a budget of %.3g FLOPs wants a %s-parameter model (%s), outside the %s grid's "
                  "%s..%s", s->nominal, n, s->loss_fit->key, tp_size_family_name(s->g.family),
                  l, h);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int resolve(int argc, char **argv, struct size_job *s)
{
    struct cli_args *a = &s->a;
    int rc = cli_begin_listing(argc, argv, CMD_SIZE, a, help, "size");
    if (rc >= 0)
        return rc;
    struct tp_error err = {{0}, {0}};
    s->cluster = a->gpu || a->gpus != TP_UNSET;
    if (s->cluster && (!a->gpu || a->gpus == TP_UNSET)) {
        cli_error("size with a cluster needs both --gpu and --gpus");
        return EXIT_USAGE;
    }
    int budgets = (a->flops > 0) + (a->days > 0) + (a->gpu_hours > 0);
    if (!s->cluster && (a->flops <= 0 || budgets != 1)) {
        cli_error("size needs a budget: --flops C, or --gpu G --gpus N with --days D or "
                  "--gpu-hours H (--days and --gpu-hours need the cluster)");
        return EXIT_USAGE;
    }
    if (s->cluster && budgets != 1) {
        cli_error("size on a cluster needs exactly one of --days, --gpu-hours and --flops");
        return EXIT_USAGE;
    }
    /* the default, and the loss of the fits without one: Besiroglu et al. 2024's refit of
       approach 3, whose optimum agrees with approaches 1 and 2 (docs/size.md) */
    if (tp_scaling_fit_find(a->fit ? a->fit : DEFAULT_FIT, &s->fit, &err) != TP_OK ||
        tp_scaling_fit_find(DEFAULT_FIT, &s->loss_fit, &err) != TP_OK) {
        cli_error("--fit: %s", err.msg);
        return EXIT_USAGE;
    }
    tp_scaling_fit_find("hoffmann-3", &s->hoffmann3, NULL);
    if (s->fit->form != TP_SCALING_POWER)
        s->loss_fit = s->fit;
    tp_size_grid_init(&s->g);
    if (a->family && tp_size_family_find(a->family, &s->g.family, &err) != TP_OK) {
        cli_error("--family: %s", err.msg);
        return EXIT_USAGE;
    }
    if (a->shape.vocab != TP_UNSET)
        s->g.vocab = (uint32_t)a->shape.vocab;
    if ((rc = cli_resolve_cluster_job(a, &s->r)) != EXIT_OK)
        return rc;
    s->g.seq = s->r.j.seq;
    tp_calib_init(&s->cal);
    if (a->calibration && tp_calib_from_file(a->calibration, &s->cal, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    double hours = a->gpu_hours > 0 ? a->gpu_hours / s->r.c.n_gpus : a->days * 24;
    s->seconds = a->flops > 0 ? 0 : hours * 3600;
    /* the fits' optima: the budget, or the cluster's peak at 50% MFU over the deadline */
    s->nominal = a->flops > 0 ? a->flops
                              : 0.5 * s->r.c.gpu.peak_flops[TP_BF16] * s->r.c.n_gpus * s->seconds;
    if ((rc = check_budget(s)) != EXIT_OK)
        return rc;
    tp_search_opts_init(&s->o);
    s->o.gbs = a->gbs != TP_UNSET ? (uint64_t)a->gbs
                                  : tp_size_default_gbs(s->nominal, s->g.seq, s->r.c.n_gpus);
    s->req = (struct tp_size_req){&s->g, s->loss_fit, s->cluster ? &s->r.c : NULL, &s->r.j,
                                  &s->o, &s->cal, a->flops, s->seconds,
                                  tp_size_tie_band(s->loss_fit, s->nominal, TIE_COMPUTE)};
    size_pool_init(&s->pool, s->cluster ? (a->threads != TP_UNSET ? (unsigned)a->threads
                                                                  : par_cpus())
                                        : 1,
                   isatty(STDERR_FILENO) && !a->quiet);
    return -1;
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

static double gpu_hours_of(const struct size_job *s, const struct tp_size_shape *sh)
{
    return sh->seconds / 3600 * s->r.c.n_gpus;
}

static json_t *shape_json(const struct size_job *s, const struct tp_size_shape *sh, size_t rank,
                          const char *mark, bool tie)
{
    json_t *o = json_pack("{s:I, s:s?, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:f, s:f, s:f,"
                          " s:f}",
                          "rank", (json_int_t)rank, "mark", mark, "layers",
                          (json_int_t)sh->layers, "hidden", (json_int_t)sh->hidden, "heads",
                          (json_int_t)sh->heads, "kv_heads", (json_int_t)sh->kv_heads, "ffn",
                          (json_int_t)sh->ffn, "vocab", (json_int_t)sh->vocab, "tied",
                          (int)sh->tied, "params", (json_int_t)sh->params, "flops_per_token",
                          sh->flops_per_token, "tokens", sh->tokens, "tokens_per_param",
                          sh->tokens / sh->params, "loss", sh->loss);
    if (o && rank == 0)
        json_object_set_new(o, "rank", json_null()); /* an alternative outside the list */
    if (o && rank > 0)
        json_object_set_new(o, "tie", json_boolean(tie));
    if (s->cluster && o) {
        const struct tp_time *t = &sh->best.time;
        json_object_set_new(o, "days", json_real(days_of(sh)));
        json_object_set_new(o, "gpu_hours", json_real(gpu_hours_of(s, sh)));
        json_object_set_new(o, "cost", s->a.price >= 0
                                           ? json_real(gpu_hours_of(s, sh) * s->a.price)
                                           : json_null());
        json_object_set_new(o, "mfu", json_real(t->mfu));
        json_object_set_new(o, "tokens_per_s", json_real(t->tokens_per_s));
        json_object_set_new(o, "step_time_s", json_real(t->step_s));
        json_object_set_new(o, "layout", tp_json_layout(&sh->best.layout));
    }
    return o;
}

static json_t *fits_json(double flops)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < tp_scaling_fit_count(); i++) {
        const struct tp_scaling_fit *f = tp_scaling_fit_get(i);
        struct tp_scaling_opt o;
        if (tp_scaling_optimum(f, flops, &o, NULL) != TP_OK)
            continue;
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:s, s:f, s:f, s:o, s:o}", "fit", f->key, "source",
                           f->source, "conventions", f->conventions, "params_opt", o.n_opt,
                           "tokens_opt", o.d_opt, "loss_opt",
                           isfinite(o.loss_opt) ? json_real(o.loss_opt) : json_null(),
                           "tokens_per_param",
                           isfinite(o.tokens_per_n) ? json_real(o.tokens_per_n) : json_null()));
    }
    return arr;
}

/* The ranked shapes and the marked alternatives (indices into st->shapes; marks[m] = -1 when
   no shape qualifies). */
struct size_result {
    size_t top[1000];
    long n_top;
    long marks[MARKS];
    long n_tie;                       /* the first n_tie of top tie (within the band) */
    double low;                       /* the lowest loss of the list */
};

/* The tie-breaker, as printed. */
static const char *tie_breaker(const struct size_job *s)
{
    return s->cluster ? "the fastest on the cluster first (highest MFU)"
                      : "the fewest parameters first (cheaper to serve)";
}

/* The list's lowest loss and how many of its first shapes tie with it. */
static void count_ties(const struct size_job *s, const struct tp_size_state *st,
                       struct size_result *res)
{
    res->low = INFINITY;
    res->n_tie = 0;
    for (long i = 0; i < res->n_top; i++)
        if (st->shapes[res->top[i]].loss < res->low)
            res->low = st->shapes[res->top[i]].loss;
    while (res->n_tie < res->n_top &&
           st->shapes[res->top[res->n_tie]].loss <= res->low + s->req.tie_band)
        res->n_tie++;
}

static int rank_shapes(struct size_job *s, struct tp_size_state *st, size_t k,
                       struct size_result *res)
{
    struct tp_size_filter all = {0, 0, 0};
    struct tp_error err = {{0}, {0}};
    size_t n = 0;
    for (int m = 0; m < MARKS; m++)
        res->marks[m] = -1;
    res->n_top = 0;
    if (tp_size_best(&s->req, st, &all, size_pool_run, &s->pool, res->top, k, &n, &err) !=
        TP_OK) {
        size_pool_end(&s->pool);
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    res->n_top = (long)n;
    if (n == 0) {
        size_pool_end(&s->pool);
        return EXIT_OK;
    }
    res->marks[0] = (long)res->top[0];
    count_ties(s, st, res);
    double best_params = st->shapes[res->top[0]].params;
    const struct tp_size_filter f[MARKS] = {
        {0, 0, 0}, {0, 15, 25}, {best_params / 2, 0, 0}, {best_params / 4, 0, 0}};
    for (int m = 1; m < MARKS; m++) {
        size_t one;
        if (tp_size_best(&s->req, st, &f[m], size_pool_run, &s->pool, &one, 1, &n, &err) !=
            TP_OK) {
            size_pool_end(&s->pool);
            cli_error_field(&err);
            return EXIT_USAGE;
        }
        if (n == 1)
            res->marks[m] = (long)one;
    }
    size_pool_end(&s->pool);
    return EXIT_OK;
}

static const char *mark_of(const struct size_result *res, size_t i)
{
    for (int m = 0; m < MARKS; m++)
        if (res->marks[m] == (long)i)
            return MARK_NAMES[m];
    return NULL;
}

static void print_fits(const struct size_job *s)
{
    printf("compute-optimal by each fit at %.3g FLOPs%s\n", s->nominal,
           s->cluster && s->a.flops <= 0 ? " (the cluster's peak at 50% MFU over the deadline)"
                                         : "");
    printf("  %-11s %12s %12s %8s %8s  %s\n", "fit", "N_opt", "D_opt", "D/N", "loss",
           "conventions");
    for (size_t i = 0; i < tp_scaling_fit_count(); i++) {
        const struct tp_scaling_fit *f = tp_scaling_fit_get(i);
        struct tp_scaling_opt o;
        if (tp_scaling_optimum(f, s->nominal, &o, NULL) != TP_OK)
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
        printf("%c %-11s %12s %12s %8s %8s  %s\n", f == s->fit ? '*' : ' ', f->key, n, d, tpp,
               loss, f->conventions);
    }
}

static void print_row(const struct size_job *s, const struct tp_size_shape *sh, const char *rank,
                      const char *mark)
{
    char p[16], d[16];
    fmt_si(p, sizeof p, sh->params);
    fmt_si(d, sizeof d, sh->tokens);
    printf("%5s %-8s %4u %6u %5u %3u %6u %8s %9.2f %8s %6.1f %7.4f", rank, mark ? mark : "",
           sh->layers, sh->hidden, sh->heads, sh->kv_heads, sh->ffn, p,
           sh->flops_per_token / 1e9, d, sh->tokens / sh->params, sh->loss);
    if (s->cluster) {
        char lay[160];
        layout_text(&sh->best.layout, lay, sizeof lay);
        printf(" %7.2f %10.0f %5.1f%%  %s", days_of(sh), gpu_hours_of(s, sh),
               100 * sh->best.time.mfu, lay);
    }
    printf("\n");
}

static void print_table(const struct size_job *s, const struct tp_size_state *st,
                        const struct size_result *res)
{
    printf("trainplan %s - size\n\n", TP_VERSION);
    printf("family   %s, vocab %u, seq %llu\n", tp_size_family_name(s->g.family),
           st->n ? st->shapes[0].vocab : 0, (unsigned long long)s->g.seq);
    if (s->cluster) {
        printf("cluster  %u x %s, %s conventions, global batch %llu sequences\n",
               s->r.c.n_gpus, s->r.c.gpu.label, tp_stack_get(s->r.j.framework)->key,
               (unsigned long long)s->o.gbs);
        if (s->a.flops > 0)
            printf("budget   %.4g model FLOPs (days follow each shape's fastest layout)\n",
                   s->a.flops);
        else
            printf("budget   %.2f days = %.0f GPU-hours (tokens from each shape's fastest "
                   "layout)\n", s->seconds / 86400, s->seconds / 3600 * s->r.c.n_gpus);
    } else {
        printf("budget   %.4g model FLOPs (exact, causal: D = budget / FLOPs per token)\n",
               s->a.flops);
    }
    printf("loss     %s%s\n\n", s->loss_fit->key,
           s->loss_fit != s->fit ? " (the chosen fit has no loss law)" : "");
    print_fits(s);
    if (s->fit == s->hoffmann3)
        printf("note: hoffmann-3 is approach 3 as printed (eq. 10); its rounded constants do not "
               "reproduce Hoffmann's own Table A3 and put N_opt at about half of approaches 1 and "
               "2 (Besiroglu et al. 2024); the default, besiroglu, agrees with them\n");
    printf("\n%zu shapes in the grid", st->n);
    if (s->cluster && st->searched == st->n)
        printf(", every one searched for a layout");
    else if (s->cluster)
        printf(", %zu searched for a layout (the rest cannot rank: their loss at %.0f%% of the "
               "peak, the fastest any FLOP runs, is above the list's)", st->searched,
               100 * st->rate / s->r.c.gpu.peak_flops[TP_BF16]);
    printf("\n\n%5s %-8s %4s %6s %5s %3s %6s %8s %9s %8s %6s %7s", "rank", "mark", "L", "hidden",
           "heads", "kv", "ffn", "params", "GFLOP/tok", "tokens", "D/N", "loss");
    if (s->cluster)
        printf(" %7s %10s %6s  %s", "days", "GPU-hours", "MFU", "layout");
    printf("\n");
    for (long i = 0; i < res->n_top; i++) {
        char rank[24];
        snprintf(rank, sizeof rank, "%ld", i + 1);
        print_row(s, &st->shapes[res->top[i]], rank, mark_of(res, res->top[i]));
    }
    if (res->n_top == 0) {
        printf("no shape has a feasible layout on this cluster\n");
        return;
    }
    if (res->n_tie > 1)
        printf("\nranks 1-%ld tie: losses within %.4f of the lowest (%.4f), what %g%% more "
               "compute buys at the optimum; %s\n", res->n_tie, s->req.tie_band, res->low,
               100 * TIE_COMPUTE, tie_breaker(s));
    else
        printf("\nno tie: no other loss within %.4f of the best (what %g%% more compute buys "
               "at the optimum)\n", s->req.tie_band, 100 * TIE_COMPUTE);
    const struct tp_size_shape *best = &st->shapes[res->top[0]];
    printf("\nalternatives (inference-aware: smaller models trained on more tokens)\n");
    for (int m = 1; m < MARKS; m++) {
        if (res->marks[m] < 0) {
            printf("  %-8s none in the grid\n", MARK_NAMES[m]);
            continue;
        }
        const struct tp_size_shape *sh = &st->shapes[res->marks[m]];
        char p[16];
        fmt_si(p, sizeof p, sh->params);
        printf("  %-8s %uL-%uH-%uD-%uff, %s parameters, %.1f tokens/parameter, loss %.4f "
               "(%+.4f): %s\n",
               MARK_NAMES[m], sh->layers, sh->heads, sh->hidden, sh->ffn, p,
               sh->tokens / sh->params, sh->loss, sh->loss - best->loss, MARK_TEXT[m]);
    }
    if (s->cluster && s->a.price >= 0)
        printf("\ncost of the best shape: %.2f (%.0f GPU-hours at %.2f)\n",
               gpu_hours_of(s, best) * s->a.price, gpu_hours_of(s, best), s->a.price);
}

static int print_json(const struct size_job *s, const struct tp_size_state *st,
                      const struct size_result *res)
{
    struct tp_scaling_opt o;
    tp_scaling_optimum(s->fit, s->nominal, &o, NULL);
    json_t *shapes = json_array(), *alts = json_array();
    for (long i = 0; i < res->n_top; i++)
        json_array_append_new(shapes, shape_json(s, &st->shapes[res->top[i]], (size_t)i + 1,
                                                 mark_of(res, res->top[i]), i < res->n_tie));
    for (int m = 1; m < MARKS; m++)
        if (res->marks[m] >= 0)
            json_array_append_new(alts, shape_json(s, &st->shapes[res->marks[m]], 0,
                                                   MARK_NAMES[m], false));
    json_t *cluster = json_null();
    if (s->cluster)
        cluster = json_pack("{s:s, s:I, s:f, s:f, s:I, s:s}", "gpu", s->r.c.gpu.key, "gpus",
                            (json_int_t)s->r.c.n_gpus, "days", s->seconds / 86400,
                            "gpu_hours", s->seconds / 3600 * s->r.c.n_gpus, "global_batch",
                            (json_int_t)s->o.gbs, "framework",
                            tp_stack_get(s->r.j.framework)->key);
    json_t *doc = json_pack(
        "{s:i, s:s, s:s, s:f, s:f, s:o, s:o, s:o, s:s, s:s, s:I, s:I, s:o, s:o,"
        " s:{s:I, s:I}, s:o, s:o}",
        "schema_version", TP_SCHEMA_VERSION, "command", "size", "fit", s->fit->key, "params_opt",
        o.n_opt, "tokens_opt", o.d_opt, "loss_opt",
        isfinite(o.loss_opt) ? json_real(o.loss_opt) : json_null(), "tokens_per_param_opt",
        isfinite(o.tokens_per_n) ? json_real(o.tokens_per_n) : json_null(), "fits",
        fits_json(s->nominal), "loss_fit", s->loss_fit->key, "family",
        tp_size_family_name(s->g.family), "seq", (json_int_t)s->g.seq, "vocab",
        (json_int_t)(st->n ? st->shapes[0].vocab : 0), "budget_flops",
        s->a.flops > 0 ? json_real(s->a.flops) : json_null(), "cluster", cluster, "grid",
        "shapes", (json_int_t)st->n, "searched", (json_int_t)st->searched, "shapes", shapes,
        "alternatives", alts);
    if (doc) {
        json_object_set_new(doc, "tie_band", json_real(s->req.tie_band));
        json_object_set_new(doc, "tie_band_compute", json_real(TIE_COMPUTE));
        json_object_set_new(doc, "tie_breaker", json_string(tie_breaker(s)));
        if (s->fit == s->hoffmann3)
            json_object_set_new(doc, "caveat",
                                json_string("approach 3 as printed: its rounded constants do "
                                            "not reproduce Hoffmann's own Table A3 (Besiroglu "
                                            "et al. 2024)"));
    }
    /* DeepSeek's optimum is M, FLOPs per token, not parameters */
    if (doc)
        json_object_set_new(doc, "params_opt_unit",
                            json_string(s->fit->n_kind == TP_SCALING_N_DEEPSEEK_M
                                            ? "non-embedding FLOPs per token (M)"
                                            : "parameters"));
    return cli_print_json(doc, 8);
}

static void print_csv(const struct size_job *s, const struct tp_size_state *st,
                      const struct size_result *res)
{
    printf("rank,mark,layers,hidden,heads,kv_heads,ffn,vocab,params,flops_per_token,tokens,"
           "loss%s,tie\n", s->cluster ? ",days,gpu_hours,mfu,tokens_per_s,dp,tp,pp,mbs,zero" : "");
    for (long i = 0; i < res->n_top; i++) {
        const struct tp_size_shape *sh = &st->shapes[res->top[i]];
        const char *mark = mark_of(res, res->top[i]);
        printf("%ld,%s,%u,%u,%u,%u,%u,%u,%.0f,%.6g,%.6g,%.6f", i + 1, mark ? mark : "",
               sh->layers, sh->hidden, sh->heads, sh->kv_heads, sh->ffn, sh->vocab, sh->params,
               sh->flops_per_token, sh->tokens, sh->loss);
        if (s->cluster) {
            const struct tp_layout *l = &sh->best.layout;
            printf(",%.4f,%.1f,%.4f,%.1f,%u,%u,%u,%u,%u", days_of(sh), gpu_hours_of(s, sh),
                   sh->best.time.mfu, sh->best.time.tokens_per_s, l->dp, l->tp, l->pp, l->mbs,
                   l->zero);
        }
        printf(",%d\n", i < res->n_tie);
    }
}

/* --svg: the evaluated shapes' loss against their parameters, the ranked ones marked. */
static int plot_ranked(const struct size_job *s, const struct tp_size_state *st,
                       const struct size_result *res)
{
    struct tp_scaling_opt o;
    double n_opt = tp_scaling_optimum(s->loss_fit, s->nominal, &o, NULL) == TP_OK ? o.n_opt : NAN;
    struct plot_size p = {st->shapes, st->done, st->n, res->top, (size_t)res->n_top,
                          s->loss_fit->key, tp_size_family_name(s->g.family), s->nominal, n_opt};
    return plot_size(s->a.svg, &p);
}

int cmd_size(int argc, char **argv)
{
    static struct size_job s;
    int rc = resolve(argc, argv, &s);
    if (rc >= 0)
        return rc;
    static struct tp_size_state st;
    static struct size_result res;
    struct tp_error err = {{0}, {0}};
    if (tp_size_prepare(&s.req, &st, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    rc = rank_shapes(&s, &st, s.a.top != TP_UNSET ? (size_t)s.a.top : 5, &res);
    if (rc == EXIT_OK && s.a.svg)
        rc = plot_ranked(&s, &st, &res);
    if (rc == EXIT_OK) {
        if (s.a.format == FMT_JSON)
            rc = print_json(&s, &st, &res);
        else if (s.a.format == FMT_CSV)
            print_csv(&s, &st, &res);
        else
            print_table(&s, &st, &res);
    }
    tp_size_free(&st);
    if (rc != EXIT_OK)
        return rc;
    return cli_finish(res.n_top > 0 ? EXIT_OK : EXIT_NO);
}
