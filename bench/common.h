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

/* The calibration set: the runs files this list names (one per line, under data/runs/; run from
   the repository root), the same files `make calibration` fits. */
#define BENCH_CALIBRATION_LIST "data/runs/calibration.txt"

/* The calibration set's files, in the list's order, into files; how many (0 when the list is
   missing). */
size_t bench_default_runs(char files[][BENCH_PATH]);

/* The held-out files: every .csv file in data/runs that the calibration list does not name (the
   public files no fit uses), sorted by name, into files; how many. */
size_t bench_held_out_runs(char files[][BENCH_PATH]);

#endif
