/*
 * runs_load.c - every row of one or more runs files in memory, for validate and calibrate
 * (the CLI and python/trainplan load them the same way): mapped rows with something measured,
 * unmappable rows with the reason, and counts of duplicates and of rows with nothing measured.
 */
#include "logs_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loader {
    struct tp_runs *out;
    bool failed;
};

bool tp_run_measured_something(const struct tp_run *r)
{
    /* every measurement docs/runs-file.md documents (a whole run's hours with its tokens) */
    return isfinite(r->tokens_per_s_per_gpu) || isfinite(r->step_time_s) ||
           isfinite(r->samples_per_s) ||
           (isfinite(r->wall_clock_h) && isfinite(r->total_tokens)) ||
           isfinite(r->tflops_per_gpu) || isfinite(r->mfu) || isfinite(r->hfu) ||
           r->mem_gib > 0 || r->oom;
}

static bool skip_row(struct loader *ld, const char *path, size_t line, const struct tp_run *run,
                     const struct tp_error *why)
{
    struct tp_runs *o = ld->out;
    struct tp_skipped_row *p = tp_grow(o->skipped, o->n_skipped, sizeof *p);
    if (!p) {
        ld->failed = true;
        return false;
    }
    o->skipped = p;
    struct tp_skipped_row *s = &o->skipped[o->n_skipped++];
    char text[sizeof s->why];
    snprintf(text, sizeof text, "%s (%s line %zu)", why->msg, path, line);
    /* escaped: the reason quotes the cell and may be cut inside a UTF-8 sequence */
    tp_text_escape(run->row_id[0] ? run->row_id : "(no row_id)", s->row_id, sizeof s->row_id);
    tp_text_escape(text, s->why, sizeof s->why);
    return true;
}

static bool on_row(void *ctx, const char *path, size_t line, const struct tp_run *run,
                   const struct tp_error *why)
{
    struct loader *ld = ctx;
    struct tp_runs *o = ld->out;
    if (run->duplicate) {
        o->duplicates++;
        return true;
    }
    if (why)
        return skip_row(ld, path, line, run, why);
    if (!tp_run_measured_something(run)) {
        o->unmeasured++;
        return true;
    }
    struct tp_run *p = tp_grow(o->runs, o->n, sizeof *p);
    if (!p) {
        ld->failed = true;
        return false;
    }
    o->runs = p;
    o->runs[o->n++] = *run;
    return true;
}

enum tp_status tp_runs_load(const char *const *files, size_t n_files, struct tp_runs *out,
                            struct tp_error *err)
{
    memset(out, 0, sizeof *out);
    out->files = files;
    out->n_files = n_files;
    struct loader ld = {out, false};
    for (size_t i = 0; i < n_files; i++) {
        enum tp_status st = tp_runs_read(files[i], on_row, &ld, err);
        if (st == TP_OK && ld.failed)
            st = tp_fail(err, TP_ENOMEM, "out of memory reading %s", files[i]);
        if (st != TP_OK) {
            tp_runs_free(out);
            return st;
        }
    }
    return TP_OK;
}

void tp_runs_free(struct tp_runs *r)
{
    free(r->runs);
    free(r->skipped);
    memset(r, 0, sizeof *r);
}
