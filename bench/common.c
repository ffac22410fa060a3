/*
 * common.c - helpers the benchmarks share.
 */
#include "common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

size_t bench_default_runs(char files[][BENCH_PATH])
{
    const char *dir = "../shared/validation/runs";
    DIR *d = opendir(dir);
    size_t n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < BENCH_MAX_FILES) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0)
            snprintf(files[n++], BENCH_PATH, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(files, n, BENCH_PATH, by_name);
    return n;
}
