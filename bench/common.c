/*
 * common.c - helpers the benchmarks share.
 */
#include "common.h"

#include <stdio.h>
#include <string.h>

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
