/*
 * runs_csv.c - reads a runs file with libcsv and hands each row to tp_run_from_row().
 *
 * Only this file knows the file is CSV: it keeps the header, collects each record's cells and
 * passes them on by column name.  Memory for one record is released before the next.
 */
#include "internal.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_COLS = 256 };

struct reader {
    char *header[MAX_COLS];
    size_t n_header;
    char *cells[MAX_COLS];
    size_t n_cells;
    size_t line;
    bool in_header, stop, too_wide, oom;
    const char *missing; /* a required column the header does not name: not a runs file */
    const char *path;
    tp_run_fn fn;
    void *ctx;
    struct tp_run run; /* the row being handed out */
};

static void on_field(void *s, size_t len, void *data)
{
    struct reader *r = data;
    if (r->n_cells >= MAX_COLS) {
        r->too_wide = true;
        return;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        r->oom = true;
        return;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    r->cells[r->n_cells++] = copy;
}

static void clear_cells(struct reader *r)
{
    for (size_t i = 0; i < r->n_cells; i++)
        free(r->cells[i]);
    r->n_cells = 0;
}

static void on_record(int c, void *data)
{
    (void)c;
    struct reader *r = data;
    r->line++;
    if (r->in_header) {
        memcpy(r->header, r->cells, sizeof(char *) * r->n_cells);
        r->n_header = r->n_cells;
        r->n_cells = 0;
        r->in_header = false;
        /* a file without the columns every row needs is not a runs file: one error, not an
           "arch is empty" for each of its lines */
        static const char *const need[] = {"arch", "gpu_type", "num_gpus"};
        for (size_t k = 0; k < 3 && !r->missing; k++) {
            bool found = false;
            for (size_t i = 0; i < r->n_header && !found; i++)
                found = strcmp(r->header[i], need[k]) == 0;
            if (!found) {
                r->missing = need[k];
                r->stop = true;
            }
        }
        return;
    }
    if (!r->stop && !r->oom && !r->too_wide) {
        struct tp_error why = {{0}, {0}};
        size_t n = r->n_cells < r->n_header ? r->n_cells : r->n_header;
        enum tp_status st = tp_run_from_row((const char *const *)r->header,
                                            (const char *const *)r->cells, n, &r->run, &why);
        if (!r->fn(r->ctx, r->path, r->line, &r->run, st == TP_OK ? NULL : &why))
            r->stop = true;
    }
    clear_cells(r);
}

enum tp_status tp_runs_read(const char *path, tp_run_fn fn, void *ctx, struct tp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tp_fail(err, TP_EIO, "%s: %s", path, strerror(errno));
    struct csv_parser p;
    struct reader *rd = calloc(1, sizeof *rd); /* holds a struct tp_run: off the stack */
    if (!rd || csv_init(&p, CSV_APPEND_NULL) != 0) {
        free(rd);
        fclose(f);
        return tp_fail(err, TP_ENOMEM, "%s: out of memory", path);
    }
    rd->in_header = true;
    rd->path = path;
    rd->fn = fn;
    rd->ctx = ctx;
    char buf[65536];
    size_t got;
    enum tp_status st = TP_OK;
    while (!rd->stop && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (csv_parse(&p, buf, got, on_field, on_record, rd) != got) {
            st = tp_fail(err, TP_EINVAL, "%s: malformed CSV near record %zu: %s", path,
                         rd->line + 1, csv_strerror(csv_error(&p)));
            break;
        }
    }
    if (st == TP_OK && ferror(f))
        st = tp_fail(err, TP_EIO, "%s: read error", path);
    if (st == TP_OK)
        csv_fini(&p, on_field, on_record, rd);
    if (st == TP_OK && rd->missing)
        st = tp_fail(err, TP_EINVAL, "%s: not a runs file: the header names no %s column "
                     "(docs/runs-file.md)", path, rd->missing);
    if (st == TP_OK && rd->too_wide)
        st = tp_fail(err, TP_EINVAL, "%s: more than %d columns", path, MAX_COLS);
    if (st == TP_OK && rd->oom)
        st = tp_fail(err, TP_ENOMEM, "%s: out of memory", path);
    if (st == TP_OK && rd->in_header)
        st = tp_fail(err, TP_EINVAL, "%s: empty file (no header line)", path);
    clear_cells(rd);
    for (size_t i = 0; i < rd->n_header; i++)
        free(rd->header[i]);
    free(rd);
    csv_free(&p);
    fclose(f);
    return st;
}
