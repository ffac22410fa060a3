/*
 * par_search.h - the CLI's worker pool on POSIX threads (struct tp_pool: the library starts
 * no thread), and the search over it.  Used by `trainplan search`, `export --best`, `size`
 * and bench_search; depends on the library only.
 */
#ifndef TP_PAR_SEARCH_H
#define TP_PAR_SEARCH_H

#include "trainplan.h"

#include <stdbool.h>
#include <stddef.h>

/* The shards the library cuts a pooled search into (bench_search prints it). */
#define PAR_SHARDS TP_SEARCH_SHARDS

/* The online CPUs (sysconf), at least 1. */
unsigned par_cpus(void);

/* The pool's state: the progress line's counters and the threads' exits. */
struct par_pool;
/* A pool of `threads` workers (0 = par_cpus()) for the library's pooled calls
   (tp_search_pool, tp_search_stacks_pool).  With `progress`, its run prints
   "\rsearch: k/n shards, X layouts, Y s" to stderr a few times per second once the work has
   run 1 s, and clears the line at the end.  `state` must outlive the pool's use. */
struct tp_pool par_pool(struct par_pool **state, unsigned threads, bool progress);
/* One progress line over all the pool's runs, from now, as "\rLABEL: k/n UNIT, Y s" (size's
   many short runs: "size: 120/776 shapes"), cleared by par_pool_free. */
void par_pool_whole(struct par_pool *state, const char *label, const char *unit);
/* Clears the progress line (if any) and frees the state (NULL: nothing). */
void par_pool_free(struct par_pool *state);

/* tp_search_pool over `threads` POSIX threads: the hits and stats of one tp_search call,
   whatever the thread count (bench_search --smoke compares them in make test).  TP_ENOMEM
   when a buffer cannot be had. */
enum tp_status par_search(const struct tp_model *m, const struct tp_cluster *c,
                          const struct tp_job *j, const struct tp_search_opts *o,
                          const struct tp_calib *cal, unsigned threads, bool progress,
                          struct tp_search_hit *hits, size_t cap, size_t *n_hits,
                          struct tp_search_stats *st, struct tp_error *err);

#endif
