/*
 * check_format.c - reads stdin as CSV or JSON and fails unless it parses: CSV by libcsv's
 * strict parser (RFC 4180 quoting) with the same number of fields on every record as on the
 * header, JSON by jansson.  tests/formats/run.sh feeds it every command's --format output.
 *   check_format csv|json < OUTPUT
 */
#include <csv.h>
#include <jansson.h>

#include <stdio.h>
#include <string.h>

struct count {
    size_t fields, header, records, bad;
};

static void on_field(void *s, size_t len, void *ctx)
{
    (void)s;
    (void)len;
    ((struct count *)ctx)->fields++;
}

static void on_record(int c, void *ctx)
{
    (void)c;
    struct count *k = ctx;
    if (k->records++ == 0)
        k->header = k->fields;
    else if (k->fields != k->header)
        k->bad++;
    k->fields = 0;
}

static int check_csv(void)
{
    struct csv_parser p;
    struct count k = {0, 0, 0, 0};
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return 2;
    char buf[4096];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        if (csv_parse(&p, buf, n, on_field, on_record, &k) != n) {
            fprintf(stderr, "check_format: CSV: %s\n", csv_strerror(csv_error(&p)));
            rc = 1;
            break;
        }
    if (!rc && csv_fini(&p, on_field, on_record, &k) != 0) {
        fprintf(stderr, "check_format: CSV: %s\n", csv_strerror(csv_error(&p)));
        rc = 1;
    }
    csv_free(&p);
    if (!rc && (k.records < 2 || k.bad)) {
        fprintf(stderr, "check_format: CSV: %zu records, %zu with a field count unlike the "
                        "header's %zu\n", k.records, k.bad, k.header);
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "csv") != 0 && strcmp(argv[1], "json") != 0)) {
        fprintf(stderr, "usage: check_format csv|json < OUTPUT\n");
        return 2;
    }
    if (argv[1][0] == 'c')
        return check_csv();
    json_error_t e;
    json_t *doc = json_loadf(stdin, 0, &e);
    if (!doc) {
        fprintf(stderr, "check_format: JSON: line %d: %s\n", e.line, e.text);
        return 1;
    }
    json_decref(doc);
    return 0;
}
