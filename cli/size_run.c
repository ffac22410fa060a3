/*
 * size_run.c - branch and bound over the shape grid of `trainplan size`, on POSIX threads.
 *
 * Without a cluster every shape's loss is known from its exact FLOPs per token, so the bound
 * is the loss and nothing is searched.  With a cluster and a deadline the tokens a shape gets
 * come from its fastest layout (tp_search), but they can never exceed GPUs x peak FLOP/s x time
 * / FLOPs per token (MFU <= 1), and the loss falls with tokens: that loss is a lower bound.
 * Shapes are taken in order of bound; once the next bound exceeds the k-th best loss found, no
 * later shape can enter the list and the walk stops: the list is exactly the k best.  Workers
 * take shapes from a shared counter; the threshold only falls, so a shape skipped is one that
 * could not rank.  Each shape is searched at most once across lists (done[]).
 */
#include "size_run.h"
#include "cli.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int sort_by_bound(struct size_state *s);

int size_prepare(const struct size_ctx *c, struct size_state *s)
{
    s->n = tp_size_enumerate(c->grid, NULL, 0);
    s->shapes = calloc(s->n ? s->n : 1, sizeof *s->shapes);
    s->bound = calloc(s->n ? s->n : 1, sizeof *s->bound);
    s->order = calloc(s->n ? s->n : 1, sizeof *s->order);
    s->done = calloc(s->n ? s->n : 1, 1);
    s->searched = 0;
    if (!s->shapes || !s->bound || !s->order || !s->done) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    tp_size_enumerate(c->grid, s->shapes, s->n);
    double peak = 0;
    if (c->cluster)
        peak = c->cluster->gpu.peak_flops[TP_BF16] * c->cluster->n_gpus;
    for (size_t i = 0; i < s->n; i++) {
        struct tp_error err = {{0}, {0}};
        struct tp_size_shape *sh = &s->shapes[i];
        if (tp_size_count(c->grid, c->loss_fit, c->flops, sh, &err) != TP_OK) {
            cli_error("shape %uL-%uD: %s", sh->layers, sh->hidden, cli_lib_msg(&err));
            return EXIT_USAGE;
        }
        if (!c->cluster) {
            s->done[i] = 1;
            s->bound[i] = sh->loss;
        } else if (c->flops > 0) {
            s->bound[i] = sh->loss;
        } else {
            double d_max = peak * c->seconds / sh->flops_per_token;
            s->bound[i] = tp_scaling_loss(c->loss_fit, sh->fit_n, d_max);
        }
    }
    return sort_by_bound(s);
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

/* s->order: the shapes by bound, ascending (index as tie-break). */
static int sort_by_bound(struct size_state *s)
{
    struct keyed *k = malloc((s->n ? s->n : 1) * sizeof *k);
    if (!k) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < s->n; i++)
        k[i] = (struct keyed){s->bound[i], i};
    qsort(k, s->n, sizeof *k, by_bound);
    for (size_t i = 0; i < s->n; i++)
        s->order[i] = k[i].i;
    free(k);
    return EXIT_OK;
}

struct walk {
    const struct size_ctx *c;
    struct size_state *s;
    const struct size_filter *f;
    pthread_mutex_t mu;
    size_t next;                 /* position in s->order */
    size_t *top, k, n_top;
    bool stop, failed;
    char msg[600];
};

static bool accepts(const struct size_filter *f, const struct tp_size_shape *sh, bool post)
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

/* Loss order with the index as tie-break, so the list does not depend on the threads. */
static bool better(const struct size_state *s, size_t a, size_t b)
{
    double x = s->shapes[a].loss, y = s->shapes[b].loss;
    return x != y ? x < y : a < b;
}

static void insert(struct walk *w, size_t i)
{
    size_t pos = w->n_top;
    while (pos > 0 && better(w->s, i, w->top[pos - 1]))
        pos--;
    if (pos >= w->k)
        return;
    size_t last = w->n_top < w->k ? w->n_top : w->k - 1;
    memmove(&w->top[pos + 1], &w->top[pos], (last - pos) * sizeof *w->top);
    w->top[pos] = i;
    if (w->n_top < w->k)
        w->n_top++;
}

static void *worker(void *arg)
{
    struct walk *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        if (w->stop || w->failed || w->next >= w->s->n) {
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        size_t i = w->s->order[w->next++];
        double bound = w->s->bound[i];
        if (w->n_top == w->k && !(bound <= w->s->shapes[w->top[w->k - 1]].loss)) {
            w->stop = true; /* every later shape's bound is at least this one's */
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        bool todo = !w->s->done[i] && accepts(w->f, &w->s->shapes[i], false);
        pthread_mutex_unlock(&w->mu);
        if (!accepts(w->f, &w->s->shapes[i], false))
            continue;
        struct tp_error err = {{0}, {0}};
        enum tp_status st = TP_OK;
        if (todo)
            st = tp_size_on_cluster(w->c->grid, w->c->loss_fit, w->c->cluster, w->c->job,
                                    w->c->opts, w->c->cal, w->c->flops, w->c->seconds,
                                    &w->s->shapes[i], &err);
        pthread_mutex_lock(&w->mu);
        if (st != TP_OK) {
            w->failed = true;
            snprintf(w->msg, sizeof w->msg, "%s", cli_lib_msg(&err));
        } else {
            if (todo) {
                w->s->done[i] = 1;
                w->s->searched++;
            }
            struct tp_size_shape *sh = &w->s->shapes[i];
            if ((!w->c->cluster || sh->has_layout) && accepts(w->f, sh, true))
                insert(w, i);
        }
        pthread_mutex_unlock(&w->mu);
    }
}

long size_best(const struct size_ctx *c, struct size_state *s, const struct size_filter *f,
               size_t *out, size_t k)
{
    if (k == 0)
        return 0;
    struct walk w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.s = s;
    w.f = f;
    w.top = out;
    w.k = k;
    pthread_mutex_init(&w.mu, NULL);
    unsigned nt = c->cluster && c->threads > 1 ? c->threads : 1;
    pthread_t tid[256];
    unsigned started = 0;
    for (; started < nt && started < 256; started++)
        if (pthread_create(&tid[started], NULL, worker, &w) != 0)
            break;
    if (started == 0)
        worker(&w);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&w.mu);
    if (w.failed) {
        cli_error("%s", w.msg);
        return -1;
    }
    return (long)w.n_top;
}

void size_free(struct size_state *s)
{
    free(s->shapes);
    free(s->bound);
    free(s->order);
    free(s->done);
    memset(s, 0, sizeof *s);
}
