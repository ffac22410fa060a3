/*
 * runs_csv.c - reads a runs file with libcsv and hands each row to tp_run_from_row().
 *
 * Only this file knows the file is CSV: it keeps the header, collects each record's cells and
 * passes them on by column name.  Memory for one record is released before the next.
 *
 * The reading is strict (docs/runs-file.md, "What is refused"): libcsv runs with CSV_STRICT
 * and CSV_STRICT_FINI, so a quote inside an unquoted cell, text after a closing quote or a
 * quoted cell never closed is an error naming the file and the physical line (the parser is
 * fed one line at a time, and the line where an unbalanced quote opened is tracked), never a
 * cell that silently swallows the rest of the file.  A UTF-8 byte-order mark (Excel's "CSV
 * UTF-8") is skipped; a header naming a column twice is refused.  A row with more cells than
 * the reader keeps, more cells than the header names, a cell that is not UTF-8 or holds a
 * control character is reported with its line and column and skipped; the rest is read.
 */
#include "logs_internal.h"

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
    size_t n_cells, n_fields; /* kept, and seen in the record (past MAX_COLS) */
    size_t line;              /* the physical line being fed, from 1 */
    size_t rec_line;          /* the physical line the record being read began on */
    size_t quote_line;        /* the line an unbalanced quote opened on */
    bool quote_open;          /* an odd number of quotes so far: inside a quoted cell */
    bool in_header, stop, oom;
    char bad[160];            /* the first bad cell of the record ("" none) */
    char header_error[200];   /* why the header is refused ("" none) */
    const char *missing; /* a required column the header does not name: not a runs file */
    const char *path;
    tp_run_fn fn;
    void *ctx;
    struct tp_run run; /* the row being handed out */
    char buf[65536];   /* what fread gives */
};

/* Whether s[0..len) is well-formed UTF-8 (no overlong forms, surrogates or code points past
   U+10FFFF: RFC 3629 section 4); *ctl receives the first C0/C1 control character or DEL other
   than tab, CR and LF (0 none). */
static bool utf8_ok(const unsigned char *s, size_t len, unsigned *ctl)
{
    *ctl = 0;
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
                *ctl = *ctl ? *ctl : c;
            i++;
            continue;
        }
        size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (n == 0 || c > 0xf4 || i + n > len)
            return false;
        unsigned cp = c & (0x3f >> (n - 1));
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        if (cp >= 0x80 && cp <= 0x9f) /* C1 controls: 0x9b is a terminal's CSI */
            *ctl = *ctl ? *ctl : cp;
        i += n;
    }
    return true;
}

static const char *column_name(const struct reader *r, size_t i)
{
    return i < r->n_header && r->header[i][0] ? r->header[i] : NULL;
}

/* The first fault of a cell: a NUL byte, bytes that are not UTF-8, a control character. */
static void check_cell(struct reader *r, size_t i, const char *s, size_t len)
{
    if (r->bad[0])
        return;
    unsigned ctl;
    const char *what = NULL;
    char ctl_text[16] = "";
    if (memchr(s, '\0', len))
        what = "holds a NUL byte";
    else if (!utf8_ok((const unsigned char *)s, len, &ctl))
        what = "is not valid UTF-8";
    else if (ctl) {
        snprintf(ctl_text, sizeof ctl_text, "\\x%02x", ctl);
        what = "holds a control character";
    }
    if (!what)
        return;
    const char *name = r->in_header ? NULL : column_name(r, i);
    if (name)
        snprintf(r->bad, sizeof r->bad, "column %zu (%.64s) %s%s%s", i + 1, name, what,
                 *ctl_text ? " " : "", ctl_text);
    else
        snprintf(r->bad, sizeof r->bad, "column %zu %s%s%s", i + 1, what, *ctl_text ? " " : "",
                 ctl_text);
}

static void on_field(void *s, size_t len, void *data)
{
    struct reader *r = data;
    if (r->n_fields == 0) { /* the record began as many lines up as its first cell spans */
        size_t nl = 0;
        for (size_t i = 0; i < len; i++)
            nl += ((const char *)s)[i] == '\n';
        r->rec_line = r->line > nl ? r->line - nl : 1;
    }
    size_t i = r->n_fields++;
    if (i >= MAX_COLS)
        return;
    check_cell(r, i, s, len);
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
    r->n_cells = r->n_fields = 0;
    r->bad[0] = '\0';
}

/* The header: at most MAX_COLS columns, each named once, in UTF-8; the columns every row
   needs. */
static void take_header(struct reader *r)
{
    memcpy(r->header, r->cells, sizeof(char *) * r->n_cells);
    r->n_header = r->n_cells;
    size_t fields = r->n_fields;
    r->n_cells = r->n_fields = 0;
    r->in_header = false;
    r->stop = true;
    if (fields > MAX_COLS) {
        snprintf(r->header_error, sizeof r->header_error, "the header names %zu columns (at "
                 "most %d)", fields, MAX_COLS);
        return;
    }
    if (r->bad[0]) {
        snprintf(r->header_error, sizeof r->header_error, "header: %s", r->bad);
        r->bad[0] = '\0';
        return;
    }
    for (size_t i = 0; i < r->n_header; i++)
        for (size_t j = 0; j < i; j++)
            if (r->header[i][0] && strcmp(r->header[i], r->header[j]) == 0) {
                snprintf(r->header_error, sizeof r->header_error, "the header names column "
                         "\"%.64s\" twice (columns %zu and %zu)", r->header[i], j + 1, i + 1);
                return;
            }
    /* a file without the columns every row needs is not a runs file: one error, not an
       "arch is empty" for each of its lines */
    static const char *const need[] = {"arch", "gpu_type", "num_gpus"};
    for (size_t k = 0; k < 3 && !r->missing; k++) {
        bool found = false;
        for (size_t i = 0; i < r->n_header && !found; i++)
            found = strcmp(r->header[i], need[k]) == 0;
        if (!found)
            r->missing = need[k];
    }
    r->stop = r->missing != NULL;
}

/* A record the reader refuses before mapping it: handed out with its row_id and the reason. */
static void refuse(struct reader *r, const char *why_text)
{
    struct tp_error why = {{0}, {0}};
    snprintf(why.msg, sizeof why.msg, "%s", why_text);
    memset(&r->run, 0, sizeof r->run);
    for (size_t i = 0; i < r->n_cells && i < r->n_header; i++)
        if (strcmp(r->header[i], "row_id") == 0) /* escaped: the cell may be the fault */
            tp_text_escape(r->cells[i], r->run.row_id, sizeof r->run.row_id);
    if (!r->fn(r->ctx, r->path, r->rec_line, &r->run, &why))
        r->stop = true;
}

static void on_record(int c, void *data)
{
    (void)c;
    struct reader *r = data;
    if (r->in_header) {
        take_header(r);
        return;
    }
    if (r->stop || r->oom) {
        clear_cells(r);
        return;
    }
    char text[320];
    size_t extra = 0; /* non-empty cells past the header's columns */
    for (size_t i = r->n_header; i < r->n_cells; i++)
        extra += r->cells[i][0] != '\0';
    if (r->n_fields > MAX_COLS) {
        snprintf(text, sizeof text, "the row has %zu cells (the reader keeps at most %d)",
                 r->n_fields, MAX_COLS);
        refuse(r, text);
    } else if (r->bad[0]) {
        refuse(r, r->bad);
    } else if (extra) {
        snprintf(text, sizeof text, "the row has %zu cells but the header names %zu columns "
                 "(a cell holding a comma must be quoted)", r->n_cells, r->n_header);
        refuse(r, text);
    } else {
        struct tp_error why = {{0}, {0}};
        size_t n = r->n_cells < r->n_header ? r->n_cells : r->n_header;
        enum tp_status st = tp_run_from_row((const char *const *)r->header,
                                            (const char *const *)r->cells, n, &r->run, &why);
        if (!r->fn(r->ctx, r->path, r->rec_line, &r->run, st == TP_OK ? NULL : &why))
            r->stop = true;
    }
    clear_cells(r);
}

/* Feeds one piece of a line (up to and including its '\n', if it has one). */
static enum tp_status feed(struct csv_parser *p, struct reader *rd, const char *s, size_t n,
                           struct tp_error *err)
{
    bool was_open = rd->quote_open;
    size_t open_line = rd->quote_line;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '"') {
            rd->quote_open = !rd->quote_open;
            if (rd->quote_open)
                rd->quote_line = rd->line;
        }
    if (csv_parse(p, s, n, on_field, on_record, rd) == n)
        return TP_OK;
    if (was_open)
        return tp_fail(err, TP_EINVAL, "%s line %zu: malformed CSV: the quoted cell opened on "
                       "line %zu is never closed (a quote inside a quoted cell is written "
                       "twice: \"\")", rd->path, rd->line, open_line);
    return tp_fail(err, TP_EINVAL, "%s line %zu: malformed CSV: a quote inside an unquoted "
                   "cell or text after a closing quote (RFC 4180: quote the whole cell and "
                   "double the quotes in it)", rd->path, rd->line);
}

static enum tp_status read_all(FILE *f, struct csv_parser *p, struct reader *rd,
                               struct tp_error *err)
{
    char *buf = rd->buf;
    size_t got;
    bool first = true;
    while (!rd->stop && (got = fread(buf, 1, sizeof rd->buf, f)) > 0) {
        size_t at = 0;
        if (first && got >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
            at = 3; /* the UTF-8 byte-order mark Excel writes ("CSV UTF-8") */
        first = false;
        while (at < got && !rd->stop) {
            const char *nl = memchr(buf + at, '\n', got - at);
            size_t n = nl ? (size_t)(nl - (buf + at)) + 1 : got - at;
            TRY(feed(p, rd, buf + at, n, err));
            at += n;
            rd->line += nl != NULL;
        }
    }
    if (ferror(f))
        return tp_fail(err, TP_EIO, "%s: read error", rd->path);
    if (!rd->stop && csv_fini(p, on_field, on_record, rd) != 0)
        return tp_fail(err, TP_EINVAL, "%s line %zu: malformed CSV: the quoted cell opened on "
                       "this line is never closed", rd->path, rd->quote_line);
    return TP_OK;
}

enum tp_status tp_runs_read(const char *path, tp_run_fn fn, void *ctx, struct tp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tp_fail(err, TP_EIO, "%s: %s", path, strerror(errno));
    struct csv_parser p;
    struct reader *rd = calloc(1, sizeof *rd); /* holds a struct tp_run: off the stack */
    if (!rd || csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        free(rd);
        fclose(f);
        return tp_fail(err, TP_ENOMEM, "%s: out of memory", path);
    }
    rd->in_header = true;
    rd->line = 1;
    rd->path = path;
    rd->fn = fn;
    rd->ctx = ctx;
    enum tp_status st = read_all(f, &p, rd, err);
    if (st == TP_OK && rd->header_error[0])
        st = tp_fail(err, TP_EINVAL, "%s line 1: %s", path, rd->header_error);
    if (st == TP_OK && rd->missing)
        st = tp_fail(err, TP_EINVAL, "%s: not a runs file: the header names no %s column "
                     "(docs/runs-file.md)", path, rd->missing);
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
