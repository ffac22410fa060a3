/*
 * size_run.h - the worker pool `trainplan size` gives the library's branch and bound
 * (tp_size_best): POSIX threads, and the progress line on stderr for work over a second.
 */
#ifndef TP_SIZE_RUN_H
#define TP_SIZE_RUN_H

#include "trainplan.h"

#include <stdbool.h>
#include <stddef.h>

struct size_pool {
    unsigned threads;   /* workers, the calling thread included (0: 1) */
    bool progress;      /* print the progress line (stderr) after a second */
    double t0, shown;   /* start, last progress line (monotonic seconds) */
    size_t tasks;       /* shapes searched so far */
    bool printed;
};

void size_pool_init(struct size_pool *p, unsigned threads, bool progress);
/* tp_pool_fn: runs task(arg, i) for i in [0, n) on p->threads threads. */
void size_pool_run(void *pool, size_t n, tp_pool_task task, void *arg);
/* Clears the progress line if one was printed. */
void size_pool_end(struct size_pool *p);

#endif
