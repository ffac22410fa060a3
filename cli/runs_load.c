/*
 * runs_load.c - reads runs files into memory for `trainplan validate` and `calibrate`.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct loader {
    struct cli_runs *out;
    bool failed;
};

static bool measured_something(const struct tp_run *r)
{
    return isfinite(r->tokens_per_s_per_gpu) || isfinite(r->step_time_s) ||
           isfinite(r->tflops_per_gpu) || isfinite(r->mfu) || isfinite(r->hfu) ||
           r->mem_gib > 0 || r->oom;
}

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    struct loader *ld = ctx;
    struct cli_runs *o = ld->out;
    if (run->duplicate) {
        o->duplicates++;
        return true;
    }
    if (why) {
        if (o->n_skipped == o->cap_skipped) {
            size_t cap = o->cap_skipped ? 2 * o->cap_skipped : 16;
            struct cli_skipped *p = realloc(o->skipped, cap * sizeof *p);
            if (!p) {
                ld->failed = true;
                return false;
            }
            o->skipped = p;
            o->cap_skipped = cap;
        }
        struct cli_skipped *s = &o->skipped[o->n_skipped++];
        snprintf(s->row_id, sizeof s->row_id, "%s", run->row_id[0] ? run->row_id : "(no row_id)");
        snprintf(s->why, sizeof s->why, "%s (%s line %zu)", why->msg, path, line);
        return true;
    }
    if (!measured_something(run)) {
        o->unmeasured++;
        return true;
    }
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        struct tp_run *p = realloc(o->runs, cap * sizeof *p);
        if (!p) {
            ld->failed = true;
            return false;
        }
        o->runs = p;
        o->cap = cap;
    }
    o->runs[o->n++] = *run;
    return true;
}

int cli_load_runs(const char *const *files, size_t n_files, struct cli_runs *out)
{
    memset(out, 0, sizeof *out);
    struct loader ld = {out, false};
    for (size_t i = 0; i < n_files; i++) {
        struct tp_error err;
        if (tp_runs_read(files[i], on_row, &ld, &err) != TP_OK) {
            cli_error_field(&err);
            cli_free_runs(out);
            return EXIT_USAGE;
        }
        if (ld.failed) {
            cli_error("out of memory reading %s", files[i]);
            cli_free_runs(out);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

void cli_free_runs(struct cli_runs *r)
{
    free(r->runs);
    free(r->skipped);
    memset(r, 0, sizeof *r);
}
