/*
 * par_search.c - the CLI's worker pool on POSIX threads, lent to the library's pooled search
 * (tp_search_pool: the shards, their merge and the result's independence of the threads are
 * the library's) and to size's branch and bound (tp_size_best: batches of shapes).  Here:
 * starting the threads, waiting for them, and the progress line.
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

struct par_pool {
    bool progress;
    const char *label, *unit; /* the progress line's "search: 3/64 shards" */
    bool whole;               /* one line over every run, from the pool's start (size) */
    double t0, shown;         /* the line's start and last print (monotonic seconds) */
    bool printed;             /* a line is on stderr */
    atomic_uint done, total;  /* the library's progress: pieces done of total */
    atomic_ullong layouts;
    pthread_mutex_t lock;     /* guards exited; `wake` signals a change */
    pthread_cond_t wake;
    unsigned exited;
};

/* One thread: one task of a run. */
struct par_thread {
    struct par_pool *p;
    pthread_t id;
    void (*task)(void *arg, unsigned k);
    void *arg;
    unsigned k;
};

static void *thread_main(void *v)
{
    struct par_thread *t = v;
    t->task(t->arg, t->k);
    pthread_mutex_lock(&t->p->lock);
    t->p->exited++;
    pthread_cond_signal(&t->p->wake);
    pthread_mutex_unlock(&t->p->lock);
    return NULL;
}

static void show(struct par_pool *p);

static void on_progress(void *ctx, unsigned done, unsigned total, unsigned long long layouts)
{
    struct par_pool *p = ctx;
    atomic_store(&p->total, total);
    /* the largest seen: tasks report out of order */
    unsigned d = atomic_load(&p->done);
    while (d < done && !atomic_compare_exchange_weak(&p->done, &d, done))
        ;
    unsigned long long l = atomic_load(&p->layouts);
    while (l < layouts && !atomic_compare_exchange_weak(&p->layouts, &l, layouts))
        ;
    /* a whole-pool line is reported between runs, on the calling thread (size's walk after
       each batch): shown here too, so that one thread (--threads 1) shows it */
    if (p->whole)
        show(p);
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The progress line, when asked, once the work has run 1 s, at most four times a second. */
static void show(struct par_pool *p)
{
    double now = mono();
    if (!p->progress || now - p->t0 < 1.0 || now - p->shown < 0.25)
        return;
    fprintf(stderr, "\r%s: %u/%u %s", p->label, atomic_load(&p->done), atomic_load(&p->total),
            p->unit);
    if (atomic_load(&p->layouts))
        fprintf(stderr, ", %llu layouts", (unsigned long long)atomic_load(&p->layouts));
    fprintf(stderr, ", %.1f s", now - p->t0);
    fflush(stderr);
    p->shown = now;
    p->printed = true;
}

/* Waits for the `started` threads to finish, printing the progress line to stderr when asked:
   after 1 s (of the run, or of the pool when `whole`), at most four times a second. */
static void wait_threads(struct par_pool *p, unsigned started)
{
    if (!p->whole)
        p->t0 = mono();
    pthread_mutex_lock(&p->lock);
    while (p->exited < started) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->wake, &p->lock, &until);
        if (p->exited < started)
            show(p);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Clears the progress line if one is on stderr. */
static void clear_line(struct par_pool *p)
{
    if (p->printed)
        fprintf(stderr, "\r%60s\r", "");
    p->printed = false;
}

static void run(void *ctx, unsigned n, void (*task)(void *arg, unsigned k), void *arg)
{
    struct par_pool *p = ctx;
    if (!p->whole) {
        atomic_store(&p->done, 0);
        atomic_store(&p->layouts, 0);
        p->shown = 0;
    }
    p->exited = 0;
    struct par_thread *t = calloc(n, sizeof *t);
    unsigned started = 0;
    for (unsigned k = 0; t && k < n; k++) {
        t[k] = (struct par_thread){p, 0, task, arg, k};
        if (pthread_create(&t[k].id, NULL, thread_main, &t[k]) != 0)
            break;
        started++;
    }
    /* the tasks no thread took (none could start: WebAssembly without threads, the page) run
       here, with the same result */
    for (unsigned k = started; k < n; k++)
        task(arg, k);
    if (started > 0)
        wait_threads(p, started);
    for (unsigned k = 0; k < started; k++)
        pthread_join(t[k].id, NULL);
    if (!p->whole)
        clear_line(p);
    free(t);
}

struct tp_pool par_pool(struct par_pool **state, unsigned threads, bool progress)
{
    struct tp_pool pool = {1, NULL, NULL, NULL};
    struct par_pool *p = calloc(1, sizeof *p);
    *state = p;
    if (!p)
        return pool; /* the calling thread alone: the same result */
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        *state = NULL;
        return pool;
    }
    if (pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        *state = NULL;
        return pool;
    }
    p->progress = progress;
    p->label = "search";
    p->unit = "shards";
    p->t0 = mono();
    atomic_init(&p->done, 0);
    atomic_init(&p->total, 0);
    atomic_init(&p->layouts, 0);
    pool.workers = threads ? threads : par_cpus();
    pool.run = run;
    pool.progress = on_progress;
    pool.ctx = p;
    return pool;
}

void par_pool_whole(struct par_pool *p, const char *label, const char *unit)
{
    if (!p)
        return;
    p->whole = true;
    p->label = label;
    p->unit = unit;
    p->t0 = mono();
}

void par_pool_free(struct par_pool *p)
{
    if (!p)
        return;
    clear_line(p);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

enum tp_status par_search(const struct tp_model *m, const struct tp_cluster *c,
                          const struct tp_job *j, const struct tp_search_opts *o,
                          const struct tp_calib *cal, unsigned threads, bool progress,
                          struct tp_search_hit *hits, size_t cap, size_t *n_hits,
                          struct tp_search_stats *st, struct tp_error *err)
{
    if (cap == 0) {
        memset(st, 0, sizeof *st);
        *n_hits = 0;
        snprintf(err->msg, sizeof err->msg, "search needs room for results");
        return TP_EINVAL;
    }
    struct par_pool *state;
    struct tp_pool pool = par_pool(&state, threads, progress);
    enum tp_status s = tp_search_pool(m, c, j, o, cal, &pool, hits, cap, n_hits, st, err);
    par_pool_free(state);
    return s;
}
