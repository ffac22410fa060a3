/*
 * par_search.c - tp_search on POSIX threads.
 *
 * The library stays thread-free: tp_search enumerates one shard of the outer (tp, cp, pp) loop
 * when asked (tp_search_opts.shard / n_shards).  Here PAR_SHARDS shards go to the workers
 * through an atomic counter; each worker merges its shards' hits into its own top list and adds
 * up its own stats, and the lists are merged at the end in the library's total order
 * (tp_search_hit_cmp: time per token, then the layout fields), so the result is the same for
 * any number of threads and any interleaving.
 */
#include "par_search.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned par_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4096 ? 4096 : (unsigned)n;
}

struct shared {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_search_opts *o;
    const struct tp_calib *cal;
    size_t cap;
    atomic_uint next;         /* the next shard to take */
    atomic_ullong layouts;    /* layouts evaluated so far, for the progress line */
    atomic_bool failed;
    pthread_mutex_t lock;     /* guards done, exited, err; `wake` signals a change */
    pthread_cond_t wake;
    unsigned done, exited;
    struct tp_error err;
};

struct worker {
    struct shared *sh;
    pthread_t id;
    struct tp_search_hit *top, *shard, *tmp; /* cap entries each */
    size_t n;
    struct tp_search_stats st;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    struct tp_search_opts o = *sh->o;
    o.n_shards = PAR_SHARDS;
    for (;;) {
        unsigned k = atomic_fetch_add(&sh->next, 1);
        if (k >= PAR_SHARDS || atomic_load(&sh->failed))
            break;
        o.shard = k;
        size_t n = 0;
        struct tp_search_stats st;
        struct tp_error err = {{0}, {0}};
        if (tp_search(sh->m, sh->c, sh->j, &o, sh->cal, w->shard, sh->cap, &n, &st, &err) !=
            TP_OK) {
            pthread_mutex_lock(&sh->lock);
            if (!atomic_load(&sh->failed))
                sh->err = err;
            atomic_store(&sh->failed, true);
            pthread_mutex_unlock(&sh->lock);
            break;
        }
        tp_search_stats_add(&w->st, &st);
        w->n = tp_search_merge(w->top, w->n, w->shard, n, w->tmp, sh->cap);
        struct tp_search_hit *swap = w->top;
        w->top = w->tmp;
        w->tmp = swap;
        atomic_fetch_add(&sh->layouts, (unsigned long long)st.evaluated);
        pthread_mutex_lock(&sh->lock);
        sh->done++;
        pthread_cond_signal(&sh->wake);
        pthread_mutex_unlock(&sh->lock);
    }
    pthread_mutex_lock(&sh->lock);
    sh->exited++;
    pthread_cond_signal(&sh->wake);
    pthread_mutex_unlock(&sh->lock);
    return NULL;
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for the `started` workers to finish, printing the progress line to stderr when asked:
   after 1 s, at most four times a second.  Returns whether it printed one. */
static bool wait_workers(struct shared *sh, unsigned started, bool progress)
{
    double t0 = mono(), shown = 0;
    bool printed = false;
    pthread_mutex_lock(&sh->lock);
    while (sh->exited < started) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&sh->wake, &sh->lock, &until);
        double now = mono();
        if (progress && sh->exited < started && now - t0 >= 1.0 && now - shown >= 0.25) {
            fprintf(stderr, "\rsearch: %u/%u shards, %llu layouts, %.1f s", sh->done,
                    (unsigned)PAR_SHARDS, (unsigned long long)atomic_load(&sh->layouts),
                    now - t0);
            fflush(stderr);
            shown = now;
            printed = true;
        }
    }
    pthread_mutex_unlock(&sh->lock);
    return printed;
}

/* The workers' results merged into the top `sh->cap` hits and summed statistics, or the
   error that stopped them. */
static enum tp_status collect(struct shared *sh, const struct worker *w, unsigned started,
                              struct tp_search_hit *tmp, struct tp_search_hit *hits,
                              size_t *n_hits, struct tp_search_stats *st, struct tp_error *err)
{
    if (atomic_load(&sh->failed)) {
        *err = sh->err;
        memset(st, 0, sizeof *st);
        return TP_EINVAL;
    }
    if (sh->done != PAR_SHARDS) {
        snprintf(err->msg, sizeof err->msg, "the search threads stopped early");
        memset(st, 0, sizeof *st);
        return TP_ENOMEM;
    }
    size_t n = 0;
    for (unsigned t = 0; t < started; t++) {
        tp_search_stats_add(st, &w[t].st);
        n = tp_search_merge(hits, n, w[t].top, w[t].n, tmp, sh->cap);
        memcpy(hits, tmp, n * sizeof *hits);
    }
    *n_hits = n;
    return TP_OK;
}

enum tp_status par_search(const struct tp_model *m, const struct tp_cluster *c,
                          const struct tp_job *j, const struct tp_search_opts *o,
                          const struct tp_calib *cal, unsigned threads, bool progress,
                          struct tp_search_hit *hits, size_t cap, size_t *n_hits,
                          struct tp_search_stats *st, struct tp_error *err)
{
    memset(st, 0, sizeof *st);
    *n_hits = 0;
    if (cap == 0) {
        snprintf(err->msg, sizeof err->msg, "search needs room for results");
        return TP_EINVAL;
    }
    if (threads == 0)
        threads = par_cpus();
    if (threads > PAR_SHARDS)
        threads = PAR_SHARDS;
    struct shared sh;
    memset(&sh, 0, sizeof sh);
    sh.m = m;
    sh.c = c;
    sh.j = j;
    sh.o = o;
    sh.cal = cal;
    sh.cap = cap;
    atomic_init(&sh.next, 0);
    atomic_init(&sh.layouts, 0);
    atomic_init(&sh.failed, false);
    struct worker *w = calloc(threads, sizeof *w);
    struct tp_search_hit *buf = calloc(3 * (size_t)threads * cap, sizeof *buf);
    struct tp_search_hit *tmp = calloc(cap, sizeof *tmp);
    if (!w || !buf || !tmp || pthread_mutex_init(&sh.lock, NULL) != 0) {
        free(w);
        free(buf);
        free(tmp);
        snprintf(err->msg, sizeof err->msg, "out of memory for the search buffers");
        return TP_ENOMEM;
    }
    if (pthread_cond_init(&sh.wake, NULL) != 0) {
        pthread_mutex_destroy(&sh.lock);
        free(w);
        free(buf);
        free(tmp);
        snprintf(err->msg, sizeof err->msg, "cannot set up the search threads");
        return TP_ENOMEM;
    }
    unsigned started = 0;
    for (unsigned t = 0; t < threads; t++) {
        w[t].sh = &sh;
        w[t].top = buf + 3 * (size_t)t * cap;
        w[t].shard = w[t].top + cap;
        w[t].tmp = w[t].shard + cap;
        if (pthread_create(&w[t].id, NULL, work, &w[t]) != 0)
            break;
        started++;
    }
    /* no thread could start (WebAssembly without threads: the page): the calling thread takes
       every shard itself, in the same order, with the same result */
    bool here = started == 0;
    if (here) {
        work(&w[0]);
        started = 1;
    }
    bool printed = !here && wait_workers(&sh, started, progress);
    for (unsigned t = 0; t < started && !here; t++)
        pthread_join(w[t].id, NULL);
    if (printed)
        fprintf(stderr, "\r%60s\r", "");
    enum tp_status rc = collect(&sh, w, started, tmp, hits, n_hits, st, err);
    pthread_cond_destroy(&sh.wake);
    pthread_mutex_destroy(&sh.lock);
    free(w);
    free(buf);
    free(tmp);
    return rc;
}
