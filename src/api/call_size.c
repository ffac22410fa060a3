/*
 * call_size.c - `size` as a report: the budget (a FLOP count, or a cluster and a deadline),
 * the fit, the family's grid, the branch and bound over it (tp_size_best, on the caller's
 * struct tp_pool) and the marked alternatives; and the document `trainplan size --format json`
 * prints.  The CLI renders its table, CSV and SVG from the same report; bindings get the
 * document (tp_call_json).  The physics is src/search/size.c, scaling.c and size_search.c.
 */
#include "api_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Besiroglu et al. 2024 (arXiv 2404.10102) Table 1: the refit of Hoffmann's approach 3 whose
   optimum agrees with approaches 1 and 2 (N_opt ~ C^0.513; 29.5B at 1e23 FLOPs against 28.4B
   and 26.9B); Hoffmann's printed approach-3 constants give 14.6B and miss its own Table A3. */
#define DEFAULT_FIT "besiroglu"
/* Two shapes tie when their predicted losses differ by less than what 1% more compute buys at
   the optimum: a 1% budget difference is below what a plan holds to (seven hours of a month),
   and far below the spread of the fits that agree (hoffmann-1, hoffmann-2 and besiroglu put
   N_opt 10% apart at 1e23).  Ties are broken by what trains faster (size_search.c). */
#define TIE_COMPUTE 0.01
/* size searches a layout per shape; past this many GPUs the search's grid is not one a plan
   is made on (the option table allows more for the other verbs) */
#define MAX_GPUS 65536u

static const char *const MARK_NAMES[TP_SIZE_MARKS] = {"best", "d20n", "half", "quarter"};
static const char *const MARK_TEXT[TP_SIZE_MARKS] = {
    "lowest predicted loss (ties: the fastest)", "D ~ 20N (15..25 tokens per parameter)",
    "over-trained: at most half the parameters", "over-trained: at most a quarter"};

const char *tp_size_mark_name(int mark)
{
    return mark >= 0 && mark < TP_SIZE_MARKS ? MARK_NAMES[mark] : NULL;
}

const char *tp_size_mark_text(int mark)
{
    return mark >= 0 && mark < TP_SIZE_MARKS ? MARK_TEXT[mark] : NULL;
}

const char *tp_size_mark_of(const struct tp_size_report *r, size_t i)
{
    for (int m = 0; m < TP_SIZE_MARKS; m++)
        if (r->marks[m] == (long)i)
            return MARK_NAMES[m];
    return NULL;
}

const char *tp_size_tie_breaker(const struct tp_size_report *r)
{
    return r->cluster ? "the fastest on the cluster first (highest MFU)"
                      : "the fewest parameters first (cheaper to serve)";
}

/* The grid's extreme shapes bound the budgets it can answer: a budget whose compute-optimal
   model (by the loss fit) lies outside them would only rank the grid's edge. */
static enum tp_status check_budget(const struct tp_size_report *r, struct tp_error *err)
{
    if (r->cluster && r->c.n_gpus > MAX_GPUS)
        return tp_fail_field(err, TP_EINVAL, "gpus", "gpus %u: size searches a layout per shape "
                             "and stops at 65,536 GPUs", r->c.n_gpus);
    struct tp_scaling_opt o;
    double lo, hi;
    TRY(tp_scaling_optimum(r->loss_fit, r->nominal, &o, err));
    TRY(tp_size_grid_span(&r->g, r->loss_fit, &lo, &hi, err));
    if (o.n_opt < lo || o.n_opt > hi) {
        char n[16], l[16], h[16];
        tp_fmt_si(n, sizeof n, o.n_opt);
        tp_fmt_si(l, sizeof l, lo);
        tp_fmt_si(h, sizeof h, hi);
        return tp_fail(err, TP_EINVAL, "a budget of %.3g FLOPs wants a %s-parameter model (%s), "
                       "outside the %s grid's %s..%s", r->nominal, n, r->loss_fit->key,
                       tp_size_family_name(r->g.family), l, h);
    }
    return TP_OK;
}

/* The budget, the fit, the grid, the cluster and the search's options from the options. */
static enum tp_status resolve(const struct tp_args *a, struct tp_size_report *r,
                              struct tp_error *err)
{
    r->cluster = a->gpu || a->gpus != TP_UNSET;
    if (r->cluster && (!a->gpu || a->gpus == TP_UNSET))
        return tp_fail(err, TP_EINVAL, "size with a cluster needs both --gpu and --gpus");
    int budgets = (a->flops > 0) + (a->days > 0) + (a->gpu_hours > 0);
    if (!r->cluster && (a->flops <= 0 || budgets != 1))
        return tp_fail(err, TP_EINVAL, "size needs a budget: --flops C, or --gpu G --gpus N "
                       "with --days D or --gpu-hours H (--days and --gpu-hours need the "
                       "cluster)");
    if (r->cluster && budgets != 1)
        return tp_fail(err, TP_EINVAL, "size on a cluster needs exactly one of --days, "
                       "--gpu-hours and --flops");
    /* the default, and the loss of the fits without one: Besiroglu et al. 2024's refit of
       approach 3, whose optimum agrees with approaches 1 and 2 (docs/size.md) */
    struct tp_error e = {{0}, {0}};
    if (tp_scaling_fit_find(a->fit ? a->fit : DEFAULT_FIT, &r->fit, &e) != TP_OK ||
        tp_scaling_fit_find(DEFAULT_FIT, &r->loss_fit, &e) != TP_OK)
        return tp_fail_field(err, TP_EINVAL, "fit", "fit: %s", e.msg);
    const struct tp_scaling_fit *h3 = NULL;
    tp_scaling_fit_find("hoffmann-3", &h3, NULL);
    r->hoffmann3 = r->fit == h3;
    if (r->fit->form != TP_SCALING_POWER)
        r->loss_fit = r->fit;
    tp_size_grid_init(&r->g);
    if (a->family && tp_size_family_find(a->family, &r->g.family, &e) != TP_OK)
        return tp_fail_field(err, TP_EINVAL, "family", "family: %s", e.msg);
    if (a->shape.vocab != TP_UNSET)
        r->g.vocab = (uint32_t)a->shape.vocab;
    struct tp_request q;
    TRY(tp_args_request(a, &q, err));
    TRY(tp_request_resolve(&q, &r->m, &r->c, &r->j, &r->l, err));
    r->g.seq = r->j.seq;
    tp_calib_init(&r->cal);
    if (a->calibration)
        TRY(tp_calib_from_file(a->calibration, &r->cal, err));
    r->flops = a->flops > 0 ? a->flops : 0;
    r->price = a->price;
    r->tie_compute = TIE_COMPUTE;
    double hours = a->gpu_hours > 0 ? a->gpu_hours / r->c.n_gpus : a->days * 24;
    r->seconds = a->flops > 0 ? 0 : hours * 3600;
    /* the fits' optima: the budget, or the cluster's peak at 50% MFU over the deadline */
    r->nominal = a->flops > 0 ? a->flops
                              : 0.5 * r->c.gpu.peak_flops[TP_BF16] * r->c.n_gpus * r->seconds;
    TRY(check_budget(r, err));
    tp_search_opts_init(&r->o);
    r->o.gbs = a->gbs != TP_UNSET ? (uint64_t)a->gbs
                                  : tp_size_default_gbs(r->nominal, r->g.seq, r->c.n_gpus);
    r->req = (struct tp_size_req){&r->g, r->loss_fit, r->cluster ? &r->c : NULL, &r->j,
                                  &r->o, &r->cal, a->flops, r->seconds,
                                  tp_size_tie_band(r->loss_fit, r->nominal, TIE_COMPUTE)};
    return TP_OK;
}

/* The list's lowest loss and how many of its first shapes tie with it. */
static void count_ties(struct tp_size_report *r)
{
    r->low = INFINITY;
    r->n_tie = 0;
    for (size_t i = 0; i < r->n_top; i++)
        if (r->st.shapes[r->top[i]].loss < r->low)
            r->low = r->st.shapes[r->top[i]].loss;
    while (r->n_tie < r->n_top &&
           r->st.shapes[r->top[r->n_tie]].loss <= r->low + r->req.tie_band)
        r->n_tie++;
}

/* The ranked list, then the best shape of each alternative's filter. */
static enum tp_status rank(struct tp_size_report *r, size_t k, const struct tp_pool *pool,
                           struct tp_error *err)
{
    struct tp_size_filter all = {0, 0, 0};
    TRY(tp_size_best(&r->req, &r->st, &all, pool, r->top, k, &r->n_top, err));
    if (r->n_top == 0)
        return TP_OK;
    r->marks[0] = (long)r->top[0];
    count_ties(r);
    double best_params = r->st.shapes[r->top[0]].params;
    const struct tp_size_filter f[TP_SIZE_MARKS] = {
        {0, 0, 0}, {0, 15, 25}, {best_params / 2, 0, 0}, {best_params / 4, 0, 0}};
    for (int m = 1; m < TP_SIZE_MARKS; m++) {
        size_t one, n = 0;
        TRY(tp_size_best(&r->req, &r->st, &f[m], pool, &one, 1, &n, err));
        if (n == 1)
            r->marks[m] = (long)one;
    }
    return TP_OK;
}

enum tp_status tp_size_report(const struct tp_args *a, const struct tp_pool *pool,
                              struct tp_size_report *r, struct tp_error *err)
{
    memset(r, 0, sizeof *r);
    for (int m = 0; m < TP_SIZE_MARKS; m++)
        r->marks[m] = -1;
    TRY(resolve(a, r, err));
    TRY(tp_size_prepare(&r->req, &r->st, err));
    size_t k = a->top != TP_UNSET ? (size_t)a->top : 5;
    if (k > TP_SIZE_TOP_MAX)
        k = TP_SIZE_TOP_MAX;
    enum tp_status s = rank(r, k, pool, err);
    if (s != TP_OK)
        tp_size_report_free(r);
    return s;
}

void tp_size_report_free(struct tp_size_report *r)
{
    tp_size_free(&r->st);
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *shape_json(const struct tp_size_report *r, const struct tp_size_shape *sh,
                          size_t rank, const char *mark, bool tie)
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
    if (r->cluster && o) {
        const struct tp_time *t = &sh->best.time;
        double gpu_hours = sh->seconds / 3600 * r->c.n_gpus;
        json_object_set_new(o, "days", json_real(sh->seconds / 86400));
        json_object_set_new(o, "gpu_hours", json_real(gpu_hours));
        json_object_set_new(o, "cost", r->price >= 0 ? json_real(gpu_hours * r->price)
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
                           "tokens_opt", o.d_opt, "loss_opt", real_or_null(o.loss_opt),
                           "tokens_per_param", real_or_null(o.tokens_per_n)));
    }
    return arr;
}

json_t *tp_json_size(const struct tp_size_report *r)
{
    const struct tp_size_state *st = &r->st;
    struct tp_scaling_opt o;
    tp_scaling_optimum(r->fit, r->nominal, &o, NULL);
    json_t *shapes = json_array(), *alts = json_array();
    for (size_t i = 0; i < r->n_top; i++)
        json_array_append_new(shapes, shape_json(r, &st->shapes[r->top[i]], i + 1,
                                                 tp_size_mark_of(r, r->top[i]), i < r->n_tie));
    for (int m = 1; m < TP_SIZE_MARKS; m++)
        if (r->marks[m] >= 0)
            json_array_append_new(alts, shape_json(r, &st->shapes[r->marks[m]], 0,
                                                   MARK_NAMES[m], false));
    json_t *cluster = json_null();
    if (r->cluster)
        cluster = json_pack("{s:s, s:I, s:f, s:f, s:I, s:s}", "gpu", r->c.gpu.key, "gpus",
                            (json_int_t)r->c.n_gpus, "days", r->seconds / 86400,
                            "gpu_hours", r->seconds / 3600 * r->c.n_gpus, "global_batch",
                            (json_int_t)r->o.gbs, "framework",
                            tp_stack_get(r->j.framework)->key);
    json_t *doc = json_pack(
        "{s:i, s:s, s:s, s:f, s:f, s:o, s:o, s:o, s:s, s:s, s:I, s:I, s:o, s:o,"
        " s:{s:I, s:I}, s:o, s:o}",
        "schema_version", TP_SCHEMA_VERSION, "command", "size", "fit", r->fit->key, "params_opt",
        o.n_opt, "tokens_opt", o.d_opt, "loss_opt", real_or_null(o.loss_opt),
        "tokens_per_param_opt", real_or_null(o.tokens_per_n), "fits", fits_json(r->nominal),
        "loss_fit", r->loss_fit->key, "family", tp_size_family_name(r->g.family), "seq",
        (json_int_t)r->g.seq, "vocab", (json_int_t)(st->n ? st->shapes[0].vocab : 0),
        "budget_flops", r->flops > 0 ? json_real(r->flops) : json_null(), "cluster", cluster,
        "grid", "shapes", (json_int_t)st->n, "searched", (json_int_t)st->searched, "shapes",
        shapes, "alternatives", alts);
    if (!doc)
        return NULL;
    json_object_set_new(doc, "tie_band", json_real(r->req.tie_band));
    json_object_set_new(doc, "tie_band_compute", json_real(r->tie_compute));
    json_object_set_new(doc, "tie_breaker", json_string(tp_size_tie_breaker(r)));
    if (r->hoffmann3)
        json_object_set_new(doc, "caveat",
                            json_string("approach 3 as printed: its rounded constants do not "
                                        "reproduce Hoffmann's own Table A3 (Besiroglu et al. "
                                        "2024)"));
    /* DeepSeek's optimum is M, FLOPs per token, not parameters */
    json_object_set_new(doc, "params_opt_unit",
                        json_string(r->fit->n_kind == TP_SCALING_N_DEEPSEEK_M
                                        ? "non-embedding FLOPs per token (M)"
                                        : "parameters"));
    return doc;
}

enum tp_status tp_call_size(const struct tp_args *a, char **out, struct tp_error *err)
{
    *out = NULL;
    struct tp_size_report *r = malloc(sizeof *r);
    if (!r)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    enum tp_status s = tp_size_report(a, NULL, r, err);
    if (s == TP_OK) {
        *out = tp_json_dumps(tp_json_size(r), 8);
        if (!*out)
            s = tp_fail(err, TP_ENOMEM, "out of memory");
        tp_size_report_free(r);
    }
    free(r);
    return s;
}
