/*
 * size_run.c - the worker pool of `trainplan size`: the library's branch and bound
 * (src/core/size_search.c) hands it batches of shapes to search; here they run on POSIX threads
 * (the calling thread takes part, taking tasks from an atomic counter), and a progress line on
 * stderr says how many shapes were searched once the work passes a second.
 */
#include "size_run.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void size_pool_init(struct size_pool *p, unsigned threads, bool progress)
{
    p->threads = threads ? threads : 1;
    p->progress = progress;
    p->t0 = mono();
    p->shown = 0;
    p->tasks = 0;
    p->printed = false;
}

struct job {
    size_t n;
    tp_pool_task task;
    void *arg;
    atomic_size_t next;
};

static void *drain(void *arg)
{
    struct job *j = arg;
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        j->task(j->arg, i);
    return NULL;
}

void size_pool_run(void *pool, size_t n, tp_pool_task task, void *arg)
{
    struct size_pool *p = pool;
    struct job j = {n, task, arg, 0};
    atomic_init(&j.next, 0);
    enum { MAX_THREADS = 256 };
    pthread_t tid[MAX_THREADS];
    unsigned want = p->threads < n ? p->threads : (unsigned)n, started = 0;
    for (; started + 1 < want && started < MAX_THREADS; started++)
        if (pthread_create(&tid[started], NULL, drain, &j) != 0)
            break;
    drain(&j); /* the calling thread too; alone when no thread starts (the page) */
    for (unsigned t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    p->tasks += n;
    double now = mono();
    if (p->progress && now - p->t0 >= 1.0 && now - p->shown >= 0.25) {
        fprintf(stderr, "\rsize: %zu shapes searched, %.1f s", p->tasks, now - p->t0);
        fflush(stderr);
        p->shown = now;
        p->printed = true;
    }
}

void size_pool_end(struct size_pool *p)
{
    if (p->printed)
        fprintf(stderr, "\r%60s\r", "");
    p->printed = false;
}
