/*
 * size_search.c - branch and bound over the shape grid of `trainplan size`: the ranked shapes
 * of a budget or a cluster, each searched for its fastest layout only when it can still rank.
 *
 * Without a cluster every shape's loss is known from its exact FLOPs per token, so the bound is
 * the loss and nothing is searched.  With a cluster and a deadline the tokens a shape gets come
 * from its fastest layout (tp_search), but they can never exceed GPUs x R x time / FLOPs per
 * token, R the fastest rate the time model runs any model FLOP at, and the loss falls with
 * tokens: that loss is a lower bound.  R (rate_ceiling) is the GEMM rate (peak x MAMF x
 * gemm_scale, tile and wave efficiencies <= 1) or the attention kernel's, whichever is higher;
 * every other term only adds time.  On an H100 that is about 61% of the peak instead of 100%,
 * so fewer shapes are searched: the Megatron 1,024-GPU case of docs/size.md 355 of 776, not
 * 401 at the peak.  Should a searched shape ever run faster than R (a time model changed under this
 * file), the walk notices, falls back to the peak (MFU 1, which tp_time_step checks) and goes
 * on, so the list stays exact.
 * Shapes are taken in order of bound, in batches the caller's pool (struct tp_pool, the
 * search's) evaluates (the library starts no thread); once the next bound exceeds both the k-th best loss found and the best loss plus
 * the tie band, no later shape can enter the list and the walk stops: the list is exactly the
 * k first.  A batch's shapes are merged in order after it, so the list does not depend on the
 * pool; each shape is searched at most once across lists (done[]).
 */
#include "time_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Shapes a pool evaluates at once: a batch costs 2-40 ms of searches (0.1-2.5 ms a shape,
   docs/size.md), enough for threads to share; its threshold is the one at its start, so a
   larger batch searches more shapes that cannot rank (32: 255 on 64 H100s, 16: 243). */
#define BATCH 16

/* DeepSeek LLM 2024 (arXiv 2401.02954) eq. 1: B_opt = 0.2920 C^0.3271 tokens; in sequences, a
   power of two per GPU (so every data-parallel size divides it), at least one per GPU. */
uint64_t tp_size_default_gbs(double flops, uint64_t seq, uint32_t gpus)
{
    if (!(flops > 0) || seq == 0 || gpus == 0)
        return gpus;
    double per_gpu = 0.2920 * pow(flops, 0.3271) / (double)seq / gpus;
    double k = per_gpu > 1 ? round(log2(per_gpu)) : 0;
    return (uint64_t)gpus << (int)(k < 16 ? k : 16);
}

enum tp_status tp_size_grid_span(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                                 double *lo, double *hi, struct tp_error *err)
{
    struct tp_size_shape edge[2];
    memset(edge, 0, sizeof edge);
    edge[0].layers = 4;
    edge[0].hidden = g->hidden_min;
    edge[1].layers = g->layers_max;
    edge[1].hidden = g->hidden_max;
    for (int i = 0; i < 2; i++) {
        tp_size_enumerate_one(g, &edge[i]);
        TRY(tp_size_count(g, f, 0, &edge[i], err));
    }
    *lo = edge[0].fit_n;
    *hi = edge[1].fit_n;
    return TP_OK;
}

double tp_size_tie_band(const struct tp_scaling_fit *f, double flops, double frac)
{
    struct tp_scaling_opt a, b;
    if (!f || !(frac > 0) || tp_scaling_optimum(f, flops, &a, NULL) != TP_OK ||
        tp_scaling_optimum(f, flops * (1 + frac), &b, NULL) != TP_OK)
        return 0;
    double d = a.loss_opt - b.loss_opt;
    return isfinite(d) && d > 0 ? d : 0;
}

struct keyed {
    double bound;
    size_t i;
};

static int by_bound(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->bound != y->bound)
        return x->bound < y->bound ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

void tp_size_free(struct tp_size_state *s)
{
    free(s->shapes);
    free(s->bound);
    free(s->order);
    free(s->done);
    memset(s, 0, sizeof *s);
}

/* R per GPU, in model FLOP/s (see the top of the file): GEMMs at the GEMM dtype's rate (the
   16-bit one for those kept out of FP8; the row-wise FP8 kernel's ratio when above 1), the
   attention core's forward at attn_flops and its backward (2x the forward's model FLOPs) at
   attn_bwd times the forward's time; never above the peak tp_time_step checks against. */
static double rate_ceiling(const struct tp_size_req *r, double *peak)
{
    const struct tp_cluster *c = r->cluster;
    struct tp_job j = *r->job;
    j.seq = r->grid->seq;
    struct tp_calib def;
    const struct tp_calib *cal = r->cal;
    if (!cal) {
        tp_calib_init(&def);
        cal = &def;
    }
    struct hw h;
    tp_resolve_hw(c, &j, cal, &h);
    double gemm = h.gemm_flops > h.gemm16_flops ? h.gemm_flops : h.gemm16_flops;
    if (h.rowwise && h.rowwise_gemm > 1)
        gemm *= h.rowwise_gemm;
    double sfu = h.sfu_fwd > h.sfu_bwd ? h.sfu_fwd : h.sfu_bwd;
    double attn = h.attn_flops * sfu * (h.attn_bwd < 2 ? 3 / (1 + h.attn_bwd) : 1);
    double top = gemm > attn ? gemm : attn;
    *peak = h.fp8 ? c->gpu.peak_flops[h.gemm_dtype] : tp_job_peak_flops(c, &j);
    return top > 0 && top < *peak ? top : *peak;
}

/* The bound counts a token at the shape's full causal model FLOPs, which is what the time
   model prices for pre-training and full fine-tuning on whole sequences.  LoRA (no weight
   gradients), DPO (pairs and a reference forward) and packed documents (attention within each)
   count a token otherwise: there every shape is searched (bound minus infinity), slower but
   exact. */
static bool bound_holds(const struct tp_size_req *r)
{
    const struct tp_job *j = r->job;
    struct tp_job js = *j;
    js.seq = r->grid->seq;
    return (j->task == TP_TASK_PRETRAIN || j->task == TP_TASK_SFT) &&
           !(tp_attn_span(&js) < (double)js.seq);
}

/* Each shape's bound from the cluster's rate per GPU (`rate`). */
static void cluster_bounds(const struct tp_size_req *r, struct tp_size_state *s, double rate)
{
    bool holds = bound_holds(r);
    for (size_t i = 0; i < s->n; i++) {
        const struct tp_size_shape *sh = &s->shapes[i];
        if (r->flops > 0) {
            s->bound[i] = sh->loss; /* the budget fixes the tokens: the loss itself */
        } else if (!holds) {
            s->bound[i] = -INFINITY;
        } else {
            double d_max = rate * r->cluster->n_gpus * r->seconds / sh->flops_per_token;
            s->bound[i] = tp_scaling_loss(r->loss_fit, sh->fit_n, d_max);
        }
    }
}

/* s->order: the shapes by bound, ascending (index as tie-break). */
static enum tp_status sort_by_bound(struct tp_size_state *s, struct tp_error *err)
{
    struct keyed *k = calloc(s->n ? s->n : 1, sizeof *k);
    if (!k)
        return tp_fail(err, TP_ENOMEM, "out of memory for %zu shapes", s->n);
    for (size_t i = 0; i < s->n; i++)
        k[i] = (struct keyed){s->bound[i], i};
    qsort(k, s->n, sizeof *k, by_bound);
    for (size_t i = 0; i < s->n; i++)
        s->order[i] = k[i].i;
    free(k);
    return TP_OK;
}

enum tp_status tp_size_prepare(const struct tp_size_req *r, struct tp_size_state *s,
                               struct tp_error *err)
{
    memset(s, 0, sizeof *s);
    s->n = tp_size_enumerate(r->grid, NULL, 0);
    size_t n1 = s->n ? s->n : 1;
    s->shapes = calloc(n1, sizeof *s->shapes);
    s->bound = calloc(n1, sizeof *s->bound);
    s->order = calloc(n1, sizeof *s->order);
    s->done = calloc(n1, 1);
    if (!s->shapes || !s->bound || !s->order || !s->done) {
        tp_size_free(s);
        return tp_fail(err, TP_ENOMEM, "out of memory for %zu shapes", n1);
    }
    tp_size_enumerate(r->grid, s->shapes, s->n);
    for (size_t i = 0; i < s->n; i++) {
        struct tp_size_shape *sh = &s->shapes[i];
        enum tp_status st = tp_size_count(r->grid, r->loss_fit, r->flops, sh, err);
        if (st != TP_OK) {
            tp_size_free(s);
            return st;
        }
        s->done[i] = !r->cluster;
        s->bound[i] = sh->loss;
    }
    if (r->cluster) {
        s->rate = rate_ceiling(r, &s->peak);
        cluster_bounds(r, s, s->rate);
    }
    enum tp_status st = sort_by_bound(s, err);
    if (st != TP_OK)
        tp_size_free(s);
    return st;
}

struct walk {
    const struct tp_size_req *r;
    struct tp_size_state *s;
    const struct tp_size_filter *f;
    size_t *top, k, n_top;          /* the k lowest losses, ascending */
    size_t batch[BATCH];
    enum tp_status st[BATCH];
    struct tp_error err[BATCH];
    bool violated;                  /* a shape ran faster than s->rate */
    const struct tp_pool *pool;
    size_t nb;                      /* shapes in the batch */
    atomic_size_t next;             /* the batch's next shape to take */
};

static bool accepts(const struct tp_size_filter *f, const struct tp_size_shape *sh, bool post)
{
    if (f->max_params > 0 && sh->params > f->max_params)
        return false;
    if (!post)
        return true;
    if (!isfinite(sh->loss) || !(sh->tokens > 0))
        return false;
    double tpp = sh->tokens / sh->params;
    return !(f->min_tpp > 0 && tpp < f->min_tpp) && !(f->max_tpp > 0 && tpp > f->max_tpp);
}

/* Loss order with the index as tie-break, so the list does not depend on the pool. */
static bool lower(const struct tp_size_state *s, size_t a, size_t b)
{
    double x = s->shapes[a].loss, y = s->shapes[b].loss;
    return x != y ? x < y : a < b;
}

/* Within the tie band: the cluster's fastest (model FLOP/s, so MFU on one cluster) first;
   without a cluster the fewer parameters (cheaper to serve); then the loss order. */
static bool faster(const struct tp_size_req *r, const struct tp_size_state *s, size_t a,
                   size_t b)
{
    const struct tp_size_shape *x = &s->shapes[a], *y = &s->shapes[b];
    if (r->cluster && x->best.time.mfu != y->best.time.mfu)
        return x->best.time.mfu > y->best.time.mfu;
    if (!r->cluster && x->params != y->params)
        return x->params < y->params;
    return lower(s, a, b);
}

static void consider(struct walk *w, size_t i)
{
    const struct tp_size_shape *sh = &w->s->shapes[i];
    if ((w->r->cluster && !sh->has_layout) || !accepts(w->f, sh, true))
        return;
    size_t pos = w->n_top;
    while (pos > 0 && lower(w->s, i, w->top[pos - 1]))
        pos--;
    if (pos >= w->k)
        return;
    size_t last = w->n_top < w->k ? w->n_top : w->k - 1;
    memmove(&w->top[pos + 1], &w->top[pos], (last - pos) * sizeof *w->top);
    w->top[pos] = i;
    if (w->n_top < w->k)
        w->n_top++;
}

/* No shape whose bound is above this can enter the list. */
static double threshold(const struct walk *w)
{
    if (w->n_top == 0)
        return INFINITY;
    double kth = w->n_top == w->k ? w->s->shapes[w->top[w->k - 1]].loss : INFINITY;
    double tie = w->s->shapes[w->top[0]].loss + w->r->tie_band;
    return kth > tie ? kth : tie;
}

static void eval_one(struct walk *w, size_t b)
{
    const struct tp_size_req *r = w->r;
    w->st[b] = tp_size_on_cluster(r->grid, r->loss_fit, r->cluster, r->job, r->opts, r->cal,
                                  r->flops, r->seconds, &w->s->shapes[w->batch[b]], &w->err[b]);
}

/* One worker of the pool: the batch's shapes in turn, as the pooled search takes its shards
   (stack_search.c), each shape's result in its own slot. */
static void batch_task(void *arg, unsigned k)
{
    (void)k;
    struct walk *w = arg;
    for (size_t b; (b = atomic_fetch_add(&w->next, 1)) < w->nb;)
        eval_one(w, b);
}

/* Evaluates the batch on the pool, then merges it in order. */
static enum tp_status run_batch(struct walk *w, size_t nb, struct tp_error *err)
{
    for (size_t b = 0; b < nb; b++) {
        w->st[b] = TP_OK;
        memset(&w->err[b], 0, sizeof w->err[b]);
    }
    w->nb = nb;
    atomic_store(&w->next, 0);
    const struct tp_pool *pool = w->pool;
    unsigned workers = pool && pool->run ? pool->workers : 1;
    if (workers > nb)
        workers = (unsigned)nb;
    if (workers > 1)
        pool->run(pool->ctx, workers, batch_task, w);
    batch_task(w, 0); /* what no worker took (none when the pool ran them all) */
    for (size_t b = 0; b < nb; b++) {
        if (w->st[b] != TP_OK) {
            if (err)
                *err = w->err[b];
            return w->st[b];
        }
        const struct tp_size_shape *sh = &w->s->shapes[w->batch[b]];
        w->s->done[w->batch[b]] = 1;
        w->s->searched++;
        if (sh->has_layout &&
            sh->best.time.slots_per_s_per_gpu * sh->flops_per_token > w->s->rate * (1 + 1e-9))
            w->violated = true;
        consider(w, w->batch[b]);
    }
    if (pool && pool->progress)
        pool->progress(pool->ctx, (unsigned)w->s->searched, (unsigned)w->s->n, 0);
    return TP_OK;
}

/* The list: the tie group (every evaluated shape within the band of the lowest loss, all of
   them evaluated since their bounds are below the threshold) by speed, then the rest of the
   k lowest by loss. */
static size_t finish(struct walk *w, size_t *out, size_t k)
{
    if (w->n_top == 0)
        return 0;
    const struct tp_size_state *s = w->s;
    double tie = s->shapes[w->top[0]].loss + w->r->tie_band;
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct tp_size_shape *sh = &s->shapes[i];
        if (!s->done[i] || !(sh->loss <= tie) || !accepts(w->f, sh, false) ||
            (w->r->cluster && !sh->has_layout) || !accepts(w->f, sh, true))
            continue;
        size_t pos = n < k ? n : k;
        while (pos > 0 && faster(w->r, s, i, out[pos - 1]))
            pos--;
        if (pos >= k)
            continue;
        size_t last = n < k ? n : k - 1;
        memmove(&out[pos + 1], &out[pos], (last - pos) * sizeof *out);
        out[pos] = i;
        if (n < k)
            n++;
    }
    for (size_t t = 0; t < w->n_top && n < k; t++)
        if (!(s->shapes[w->top[t]].loss <= tie))
            out[n++] = w->top[t];
    return n;
}

enum tp_status tp_size_best(const struct tp_size_req *r, struct tp_size_state *s,
                            const struct tp_size_filter *f, const struct tp_pool *pool,
                            size_t *out, size_t k, size_t *n_out, struct tp_error *err)
{
    *n_out = 0;
    if (k == 0)
        return TP_OK;
    struct walk *w = calloc(1, sizeof *w);
    size_t *top = calloc(k, sizeof *top);
    if (!w || !top) {
        free(w);
        free(top);
        return tp_fail(err, TP_ENOMEM, "out of memory for a list of %zu shapes", k);
    }
    w->r = r;
    w->s = s;
    w->f = f;
    w->top = top;
    w->k = k;
    w->pool = pool;
    atomic_init(&w->next, 0);
    enum tp_status st = TP_OK;
    size_t pos = 0;
    bool stop = false;
    while (!stop && st == TP_OK) {
        double thr = threshold(w);
        size_t nb = 0;
        while (nb < BATCH) {
            if (pos >= s->n) {
                stop = true;
                break;
            }
            size_t i = s->order[pos];
            if (!(s->bound[i] <= thr)) {
                stop = true; /* every later shape's bound is at least this one's */
                break;
            }
            pos++;
            if (!accepts(f, &s->shapes[i], false))
                continue;
            if (s->done[i]) {
                consider(w, i);
                thr = threshold(w);
            } else {
                w->batch[nb++] = i;
            }
        }
        if (nb)
            st = run_batch(w, nb, err);
        if (st == TP_OK && w->violated && s->rate < s->peak) {
            /* the bound was not one: take the peak's (MFU 1) and walk again from the start;
               shapes searched stay searched */
            s->rate = s->peak;
            cluster_bounds(r, s, s->rate);
            st = sort_by_bound(s, err);
            w->violated = false;
            w->n_top = 0;
            pos = 0;
            stop = false;
        }
    }
    if (st == TP_OK)
        *n_out = finish(w, out, k);
    free(top);
    free(w);
    return st;
}
