/*
 * par_search.h - tp_search on POSIX threads: the outer (tp, cp, pp) loop cut into shards that
 * worker threads take from a shared counter, merged into the single-call result.  Used by
 * `trainplan search` and bench_search; depends on the library only.
 */
#ifndef TP_PAR_SEARCH_H
#define TP_PAR_SEARCH_H

#include "trainplan.h"

#include <stdbool.h>
#include <stddef.h>

/* Shards the search is cut into (many more than threads, so that the few expensive (tp, cp,
   pp) combinations spread over the workers). */
enum { PAR_SHARDS = 64 };

/* The online CPUs (sysconf), at least 1. */
unsigned par_cpus(void);

/* tp_search over `threads` workers (0 = par_cpus()).  The hits and stats are exactly those of
   one tp_search call, whatever the thread count.  With `progress`, prints
   "\rsearch: k/n shards, X layouts, Y s" to stderr a few times per second once the search has
   run 1 s, and clears the line at the end.  The hits and stats are compared against one
   tp_search call by bench_search --smoke (make test).  TP_ENOMEM when a thread or buffer cannot be had. */
enum tp_status par_search(const struct tp_model *m, const struct tp_cluster *c,
                          const struct tp_job *j, const struct tp_search_opts *o,
                          const struct tp_calib *cal, unsigned threads, bool progress,
                          struct tp_search_hit *hits, size_t cap, size_t *n_hits,
                          struct tp_search_stats *st, struct tp_error *err);

#endif
