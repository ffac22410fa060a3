/*
 * common.h - helpers the benchmarks share (bench/common.c).
 */
#ifndef TP_BENCH_COMMON_H
#define TP_BENCH_COMMON_H

#include <stddef.h>

enum { BENCH_MAX_FILES = 64, BENCH_PATH = 512 };

/* Fills `files` with every .csv in ../shared/validation/runs, sorted; returns how many (0 when
   the directory is missing). */
size_t bench_default_runs(char files[][BENCH_PATH]);

#endif
