/*
 * common.h - helpers the benchmarks share (bench/common.c).
 */
#ifndef TP_BENCH_COMMON_H
#define TP_BENCH_COMMON_H

#include "trainplan.h"

#include <stddef.h>

enum { BENCH_MAX_FILES = 64, BENCH_PATH = 512 };

/* Reads the runs files `paths` (or, when n_paths is 0, every default one) and calls `fn` for
   every row.  Returns 0 when read, 1 when there is nothing to read (said on stdout: the
   benchmark has nothing to do), 2 after printing an error as "`bench`: message". */
int bench_read_runs(const char *bench, char *const *paths, size_t n_paths, tp_run_fn fn,
                    void *ctx);

/* Every .csv in ../shared/validation/runs, sorted, into files; how many (0 when the directory is
   missing). */
size_t bench_default_runs(char files[][BENCH_PATH]);

#endif
