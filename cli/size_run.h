/*
 * size_run.h - the shape grid of `trainplan size` evaluated on POSIX threads: branch and bound
 * over the shapes, each searched for its fastest layout only when it can still rank.
 */
#ifndef TP_SIZE_RUN_H
#define TP_SIZE_RUN_H

#include "trainplan.h"

#include <stdbool.h>
#include <stddef.h>

/* Everything the evaluation of one shape needs (read-only while workers run). */
struct size_ctx {
    const struct tp_size_grid *grid;
    const struct tp_scaling_fit *loss_fit;
    const struct tp_cluster *cluster; /* NULL: no cluster, the budget is `flops` */
    const struct tp_job *job;
    const struct tp_search_opts *opts;
    const struct tp_calib *cal;
    double flops;                     /* > 0: the budget is fixed */
    double seconds;                   /* training time (cluster, flops == 0) */
    unsigned threads;
};

/* Which shapes may take a rank of a list. */
struct size_filter {
    double max_params;                /* 0 = no bound */
    double min_tpp, max_tpp;          /* tokens per parameter after evaluation; 0 = any */
};

struct size_state {
    struct tp_size_shape *shapes;
    size_t n;
    double *bound;                    /* a lower bound of each shape's loss */
    size_t *order;                    /* shapes by bound, ascending */
    unsigned char *done;              /* 1 = evaluated (0 = not yet) */
    size_t searched;                  /* shapes searched for a layout */
};

/* Counts every shape and computes its loss bound (the loss itself without a cluster, or with a
   fixed budget; else the loss at the tokens the cluster's peak FLOP/s would give).  Returns
   EXIT_OK or prints the error. */
int size_prepare(const struct size_ctx *c, struct size_state *s);
/* The `k` best shapes by loss among those the filter accepts, best first, as indices into
   s->shapes; evaluates (searches) only shapes whose bound could still beat the k-th.  Returns
   how many were found (< k when fewer exist); -1 after an error line. */
long size_best(const struct size_ctx *c, struct size_state *s, const struct size_filter *f,
               size_t *out, size_t k);
void size_free(struct size_state *s);

#endif
