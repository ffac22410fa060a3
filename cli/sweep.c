/*
 * sweep.c - memory and estimate over lists (--mbs 1,2,4,8 --seq 4096,8192 --gpus 8..512): one
 * row per combination, as a table, JSON or CSV.  The memory-vs-batch-size table users build by
 * hand with a shell loop.
 */
#include "cli.h"

#include <math.h>
#include <string.h>

enum { MAX_COMBOS = 4096 };

/* The first option varies slowest. */
static size_t combos(const struct cli_args *a)
{
    size_t n = 1;
    for (size_t i = 0; i < a->n_sweeps; i++)
        n *= a->sweeps[i].n;
    return n;
}

int cli_sweep(const struct cli_args *a, cli_sweep_row one, void *ctx, json_t *rows, bool *all_ok)
{
    size_t total = combos(a);
    if (total > MAX_COMBOS) {
        cli_error("the lists give %zu combinations; at most %d", total, MAX_COMBOS);
        return EXIT_USAGE;
    }
    *all_ok = true;
    static struct cli_args c;
    static struct run r;
    for (size_t k = 0; k < total; k++) {
        c = *a;
        json_t *row = json_object();
        size_t rest = k;
        for (size_t i = a->n_sweeps; i-- > 0;) {
            const struct cli_sweep *sw = &a->sweeps[i];
            int64_t v = sw->values[rest % sw->n];
            rest /= sw->n;
            *(int64_t *)(void *)((char *)&c + sw->offset) = v;
        }
        /* the swept values first, in the order given */
        for (size_t i = 0; i < a->n_sweeps; i++)
            json_object_set_new(row, a->sweeps[i].name,
                                json_integer(*(int64_t *)(void *)((char *)&c +
                                                                 a->sweeps[i].offset)));
        char why[512];
        memset(&r, 0, sizeof r);
        cli_error_capture(why, sizeof why);
        int rc = cli_resolve_run(&c, &r);
        cli_error_capture(NULL, 0);
        if (rc != EXIT_OK) {
            json_object_set_new(row, "error", json_string(why));
            *all_ok = false;
        } else {
            bool ok = true;
            if ((rc = one(&c, &r, ctx, row, &ok)) != EXIT_OK) {
                json_decref(row);
                return rc;
            }
            *all_ok = *all_ok && ok;
        }
        json_array_append_new(rows, row);
    }
    return EXIT_OK;
}

void cli_sweep_table(const json_t *rows, const struct cli_col *cols, size_t n_cols)
{
    for (size_t k = 0; k < n_cols; k++)
        printf("%*s%s", k ? 2 : 0, "", cols[k].head);
    putchar('\n');
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        const char *err = json_string_value(json_object_get(row, "error"));
        for (size_t k = 0; k < n_cols; k++) {
            int w = (int)strlen(cols[k].head);
            json_t *v = json_object_get(row, cols[k].key);
            printf("%*s", k ? 2 : 0, "");
            if (err && !v) {
                printf("%s", err);
                break;
            }
            if (json_is_integer(v))
                printf("%*lld", w, (long long)json_integer_value(v));
            else if (json_is_real(v))
                printf("%*.*f", w, cols[k].digits, json_real_value(v) * cols[k].scale);
            else if (json_is_boolean(v))
                printf("%*s", w, json_is_true(v) ? "yes" : "NO");
            else if (json_is_string(v))
                printf("%*s", w, json_string_value(v));
            else
                printf("%*s", w, "-");
        }
        putchar('\n');
    }
}

int cli_sweep_print(const struct cli_args *a, cli_sweep_row one, void *ctx, const char *command,
                    const char *title, const struct cli_col *cols, size_t n_cols, int digits)
{
    json_t *rows = json_array();
    bool all_ok;
    int rc = cli_sweep(a, one, ctx, rows, &all_ok);
    if (rc != EXIT_OK) {
        json_decref(rows);
        return rc;
    }
    if (a->format == FMT_CSV) {
        rc = out_csv_rows(rows);
    } else if (a->format == FMT_JSON) {
        rc = cli_print_json(json_pack("{s:i, s:s, s:o}", "schema_version", TP_SCHEMA_VERSION,
                                      "command", command, "sweep", rows), digits);
    } else {
        printf("trainplan %s - %s, one row per combination%s\n\n", TP_VERSION, command, title);
        cli_sweep_table(rows, cols, n_cols);
        json_decref(rows);
    }
    if (rc != EXIT_OK)
        return rc;
    return cli_finish(all_ok ? EXIT_OK : EXIT_NO);
}

int cli_sweep_merge(json_t *row, json_t *figures)
{
    if (!figures) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    json_object_update_missing(row, figures);
    json_decref(figures);
    return EXIT_OK;
}
