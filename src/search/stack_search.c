/*
 * stack_search.c - the search on a pool of the caller's workers (the library starts no
 * thread: tp_search_pool), the search over every software stack (the CLI's and tp_call_json's
 * search without a framework), ties within the estimate's uncertainty, the term that separates
 * a layout from the best, and the fit hint of memory and estimate.
 */
#include "search_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int tp_stack_hit_cmp(const void *pa, const void *pb)
{
    const struct tp_stack_hit *a = pa, *b = pb;
    int c = tp_search_hit_cmp(&a->h, &b->h);
    return c ? c : (a->fw > b->fw) - (a->fw < b->fw);
}

/* A pooled search: the shards go to the tasks through a counter; each task merges its own
   into its worker's list. */
struct pool_worker {
    struct tp_search_hit *top, *shard, *tmp; /* cap hits each */
    size_t n;
    struct tp_search_stats st;
};
struct pool_job {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_search_opts *o;
    const struct tp_calib *cal;
    const struct tp_pool *pool;
    size_t cap;
    struct pool_worker *w;
    atomic_uint next, done;
    atomic_ullong layouts;
    atomic_bool failed;
    struct tp_error err;     /* written by the one task that set `failed` first */
};

static void pool_task(void *arg, unsigned k)
{
    struct pool_job *x = arg;
    struct pool_worker *w = &x->w[k];
    struct tp_search_opts o = *x->o;
    o.n_shards = TP_SEARCH_SHARDS;
    for (;;) {
        unsigned s = atomic_fetch_add(&x->next, 1);
        if (s >= TP_SEARCH_SHARDS || atomic_load(&x->failed))
            return;
        o.shard = s;
        size_t n = 0;
        struct tp_search_stats st;
        struct tp_error err = {{0}, {0}};
        if (tp_search(x->m, x->c, x->j, &o, x->cal, w->shard, x->cap, &n, &st, &err) != TP_OK) {
            if (!atomic_exchange(&x->failed, true))
                x->err = err;
            return;
        }
        tp_search_stats_add(&w->st, &st);
        w->n = tp_search_merge(w->top, w->n, w->shard, n, w->tmp, x->cap);
        struct tp_search_hit *swap = w->top;
        w->top = w->tmp;
        w->tmp = swap;
        unsigned long long layouts =
            atomic_fetch_add(&x->layouts, (unsigned long long)st.evaluated) + st.evaluated;
        unsigned done = atomic_fetch_add(&x->done, 1) + 1;
        if (x->pool->progress)
            x->pool->progress(x->pool->ctx, done, TP_SEARCH_SHARDS, layouts);
    }
}

enum tp_status tp_search_pool(const struct tp_model *m, const struct tp_cluster *c,
                              const struct tp_job *j, const struct tp_search_opts *o,
                              const struct tp_calib *cal, const struct tp_pool *pool,
                              struct tp_search_hit *hits, size_t cap, size_t *n_hits,
                              struct tp_search_stats *st, struct tp_error *err)
{
    unsigned workers = pool && pool->run ? pool->workers : 1;
    if (workers <= 1 || cap == 0)
        return tp_search(m, c, j, o, cal, hits, cap, n_hits, st, err);
    if (workers > TP_SEARCH_SHARDS)
        workers = TP_SEARCH_SHARDS;
    memset(st, 0, sizeof *st);
    *n_hits = 0;
    struct pool_job x = {.m = m, .c = c, .j = j, .o = o, .cal = cal, .pool = pool, .cap = cap};
    atomic_init(&x.next, 0);
    atomic_init(&x.done, 0);
    atomic_init(&x.layouts, 0);
    atomic_init(&x.failed, false);
    x.w = calloc(workers, sizeof *x.w);
    struct tp_search_hit *buf = calloc(3 * (size_t)workers * cap + cap, sizeof *buf);
    if (!x.w || !buf) {
        free(x.w);
        free(buf);
        return tp_fail(err, TP_ENOMEM, "out of memory for the search buffers");
    }
    for (unsigned k = 0; k < workers; k++) {
        x.w[k].top = buf + 3 * (size_t)k * cap;
        x.w[k].shard = x.w[k].top + cap;
        x.w[k].tmp = x.w[k].shard + cap;
    }
    pool->run(pool->ctx, workers, pool_task, &x);
    enum tp_status s = TP_OK;
    if (atomic_load(&x.failed)) {
        *err = x.err;
        s = TP_EINVAL;
    } else if (atomic_load(&x.done) != TP_SEARCH_SHARDS) {
        s = tp_fail(err, TP_ENOMEM, "the search's workers stopped early");
    } else {
        /* in the workers' order, by the total order: the same for any interleaving */
        struct tp_search_hit *tmp = buf + 3 * (size_t)workers * cap;
        size_t n = 0;
        for (unsigned k = 0; k < workers; k++) {
            tp_search_stats_add(st, &x.w[k].st);
            n = tp_search_merge(hits, n, x.w[k].top, x.w[k].n, tmp, cap);
            memcpy(hits, tmp, n * sizeof *hits);
        }
        *n_hits = n;
    }
    if (s != TP_OK)
        memset(st, 0, sizeof *st);
    free(x.w);
    free(buf);
    return s;
}

enum tp_status tp_search_stacks(const struct tp_model *m, const struct tp_cluster *c,
                                struct tp_job *j, const struct tp_search_opts *o,
                                const struct tp_calib *cal, const enum tp_framework *fw,
                                size_t n_fw, struct tp_stack_hit *out, size_t cap, size_t *n,
                                struct tp_search_stats *st, struct tp_error *err)
{
    return tp_search_stacks_pool(m, c, j, o, cal, fw, n_fw, NULL, out, cap, n, st, err);
}

enum tp_status tp_search_stacks_pool(const struct tp_model *m, const struct tp_cluster *c,
                                     struct tp_job *j, const struct tp_search_opts *o,
                                     const struct tp_calib *cal, const enum tp_framework *fw,
                                     size_t n_fw, const struct tp_pool *pool,
                                     struct tp_stack_hit *out, size_t cap, size_t *n,
                                     struct tp_search_stats *st, struct tp_error *err)
{
    *n = 0;
    memset(st, 0, sizeof *st);
    if (n_fw == 0 || cap == 0)
        return TP_OK;
    struct tp_search_hit *part = calloc(cap, sizeof *part);
    struct tp_stack_hit *all = calloc(cap * n_fw, sizeof *all);
    if (!part || !all) {
        free(part);
        free(all);
        return tp_fail(err, TP_ENOMEM, "out of memory");
    }
    size_t total = 0;
    enum tp_status s = TP_OK;
    for (size_t f = 0; f < n_fw && s == TP_OK; f++) {
        struct tp_search_stats one;
        size_t k = 0;
        j->framework = fw[f];
        s = tp_search_pool(m, c, j, o, cal, pool, part, cap, &k, &one, err);
        if (s != TP_OK)
            break;
        tp_search_stats_add(st, &one);
        for (size_t i = 0; i < k; i++) {
            all[total].h = part[i];
            all[total++].fw = fw[f];
        }
    }
    if (s == TP_OK) {
        qsort(all, total, sizeof all[0], tp_stack_hit_cmp);
        *n = total < cap ? total : cap;
        memcpy(out, all, *n * sizeof *out);
        j->framework = *n ? out[0].fw : fw[0];
    }
    free(part);
    free(all);
    return s;
}

double tp_search_tie_band(const struct tp_model *m, const struct tp_cluster *c,
                          const struct tp_job *j, const struct tp_stack_hit *best,
                          unsigned domain, struct tp_range *rg)
{
    struct tp_job jb = *j;
    jb.framework = best->fw;
    tp_time_range(m, c, &jb, &best->h.layout, domain, rg);
    /* half the 80% range without its between-source part (tp_range_relative): layouts
       compared on one cluster and stack share that offset, so two predictions closer than
       the spread inside one source (widened by the distance terms) are not told apart by
       what the model got right on held-out runs of the class */
    return tp_range_relative(rg) - 1;
}

void tp_search_differs(const struct tp_stack_hit *best, const struct tp_stack_hit *h, char *buf,
                       size_t len)
{
    const struct tp_time *a = &h->h.time, *b = &best->h.time;
    const struct {
        const char *name;
        double d;
    } terms[] = {
        {"compute", a->fwd_s + a->bwd_s + a->recompute_s - (b->fwd_s + b->bwd_s + b->recompute_s)},
        {"TP comm", a->tp_comm_s - b->tp_comm_s},
        {"CP comm", a->cp_comm_s - b->cp_comm_s},
        {"EP comm", a->ep_comm_s - b->ep_comm_s},
        {"PP comm", a->pp_comm_s - b->pp_comm_s},
        {"bubble", a->bubble_s - b->bubble_s},
        {"DP comm", a->dp_comm_s - b->dp_comm_s},
        {"optimizer", a->optimizer_s + a->offload_s - (b->optimizer_s + b->offload_s)},
        {"overhead", a->overhead_s - b->overhead_s}};
    if (h == best) {
        tp_snprintf(buf, len, "best");
        return;
    }
    size_t k = 0;
    for (size_t i = 1; i < sizeof terms / sizeof terms[0]; i++)
        if (fabs(terms[i].d) > fabs(terms[k].d))
            k = i;
    /* per token: the global batch is the same, so the step's seconds compare directly */
    tp_snprintf(buf, len, "%s %+.3fs", terms[k].name, terms[k].d);
}

bool tp_fit_hint(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                 const struct tp_layout *l, const struct tp_memory *mem, struct tp_fix *out)
{
    out->n_set = 0;
    if (mem->fits)
        return false;
    /* the switches that change no layout size: a fused/chunked loss, another recompute mode */
    static const struct {
        bool fused;
        int recompute; /* -1: as given */
    } TRY[] = {{true, -1},
               {false, TP_RECOMPUTE_SELECTIVE},
               {false, TP_RECOMPUTE_FULL},
               {true, TP_RECOMPUTE_SELECTIVE},
               {true, TP_RECOMPUTE_FULL}};
    /* never a change the stack refuses (full recompute under the EP all-to-all overlap) */
    bool runs = tp_stack_check(m, j, l, NULL) == TP_OK;
    for (size_t i = 0; i < sizeof TRY / sizeof TRY[0]; i++) {
        struct tp_job jt = *j;
        struct tp_layout lt = *l;
        if ((TRY[i].fused && jt.fused_loss) ||
            (TRY[i].recompute >= 0 && (int)lt.recompute == TRY[i].recompute &&
             !lt.recompute_layers))
            continue;
        jt.fused_loss = jt.fused_loss || TRY[i].fused;
        if (TRY[i].recompute >= 0) {
            lt.recompute = (enum tp_recompute)TRY[i].recompute;
            lt.recompute_layers = 0;
        }
        struct tp_memory mt;
        if ((runs && tp_stack_check(m, &jt, &lt, NULL) != TP_OK) ||
            tp_memory_worst(m, c, &jt, &lt, &mt) != TP_OK || !mt.fits)
            continue;
        /* the first, the cheapest in speed */
        if (TRY[i].fused)
            tp_setting_set(&out->set[out->n_set++], "fused_loss", "true", 0,
                           TP_REASON_FUSED_LOSS);
        if (TRY[i].recompute >= 0)
            tp_setting_set(&out->set[out->n_set++], "recompute",
                           tp_name(TP_NAMES_RECOMPUTE, TRY[i].recompute), 0,
                           TP_REASON_RECOMPUTE);
        out->job = jt;
        out->layout = lt;
        out->total_bytes = mt.total_bytes;
        return true;
    }
    return false;
}
