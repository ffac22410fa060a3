/*
 * format.c - the output layer every command's --format csv goes through: rows built as flat
 * JSON objects (jansson, the same objects --format json prints), written as RFC 4180 CSV by
 * libcsv's writer.  One row shape for both formats, so the two cannot drift apart.
 */
#include "cli.h"

#include <csv.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *out_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static void cell(json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING:
        report_csv_cell(json_string_value(v));
        return;
    case JSON_INTEGER:
        printf("%lld", (long long)json_integer_value(v));
        return;
    case JSON_REAL: {
        /* whole numbers and large ones (bytes) to the unit; the rest to 10 significant digits */
        double x = json_real_value(v);
        snprintf(buf, sizeof buf, fabs(x) < 1e15 && (x == floor(x) || fabs(x) >= 1e6) ? "%.0f" : "%.10g", x);
        fputs(buf, stdout);
        return;
    }
    case JSON_TRUE:
        putchar('1');
        return;
    case JSON_FALSE:
        putchar('0');
        return;
    case JSON_NULL:
        return;
    case JSON_OBJECT:
    case JSON_ARRAY: {
        char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (s)
            report_csv_cell(s);
        free(s);
        return;
    }
    }
}

int out_csv_rows(json_t *rows)
{
    if (!rows || !json_is_array(rows)) {
        json_decref(rows);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    /* the header: every key of every row, in the order they first appear */
    json_t *cols = json_array(), *seen = json_object();
    size_t i, k;
    json_t *row, *v;
    const char *key;
    json_array_foreach(rows, i, row) {
        json_object_foreach(row, key, v) {
            if (!json_object_get(seen, key)) {
                json_object_set_new(seen, key, json_true());
                json_array_append_new(cols, json_string(key));
            }
        }
    }
    json_t *col;
    json_array_foreach(cols, k, col) {
        if (k)
            putchar(',');
        fputs(json_string_value(col), stdout);
    }
    putchar('\n');
    json_array_foreach(rows, i, row) {
        json_array_foreach(cols, k, col) {
            if (k)
                putchar(',');
            json_t *c = json_object_get(row, json_string_value(col));
            if (c)
                cell(c);
        }
        putchar('\n');
    }
    json_decref(cols);
    json_decref(seen);
    json_decref(rows);
    return EXIT_OK;
}

int out_csv_row(json_t *row)
{
    json_t *rows = json_array();
    if (!row || json_array_append_new(rows, row) != 0) {
        json_decref(rows);
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    return out_csv_rows(rows);
}
