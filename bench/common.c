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

size_t bench_held_out_runs(char files[][BENCH_PATH])
{
    static char cal[BENCH_MAX_FILES][BENCH_PATH];
    size_t n_cal = bench_default_runs(cal), n = 0;
    DIR *d = opendir("data/runs");
    if (!d)
        return 0;
    for (struct dirent *e; n < BENCH_MAX_FILES && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0 || len + 11 > BENCH_PATH)
            continue;
        char path[BENCH_PATH];
        snprintf(path, sizeof path, "data/runs/%s", e->d_name);
        bool listed = false;
        for (size_t i = 0; i < n_cal && !listed; i++)
            listed = strcmp(cal[i], path) == 0;
        if (!listed)
            memcpy(files[n++], path, sizeof path);
    }
    closedir(d);
    qsort(files, n, BENCH_PATH, by_name);
    return n;
}

size_t bench_default_runs(char files[][BENCH_PATH])
{
    FILE *list = fopen(BENCH_CALIBRATION_LIST, "r");
    char line[BENCH_PATH - 16];
    size_t n = 0;
    if (!list)
        return 0;
    while (n < BENCH_MAX_FILES && fgets(line, sizeof line, list)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        snprintf(files[n++], BENCH_PATH, "data/runs/%s", line);
    }
    fclose(list);
    return n;
}

int bench_read_runs(const char *bench, char *const *paths, size_t n_paths, tp_run_fn fn,
                    void *ctx)
{
    static char defaults[BENCH_MAX_FILES][BENCH_PATH];
    size_t n = n_paths ? n_paths : bench_default_runs(defaults);
    if (n == 0) {
        printf("%s: no runs files (" BENCH_CALIBRATION_LIST " not found); nothing to do\n", bench);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        struct tp_error err;
        if (tp_runs_read(n_paths ? paths[i] : defaults[i], fn, ctx, &err) != TP_OK) {
            fprintf(stderr, "%s: %s\n", bench, err.msg);
            return 2;
        }
    }
    return 0;
}
