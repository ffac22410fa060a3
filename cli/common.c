/*
 * common.c - pieces every command shares: model resolution, number formatting, exit handling.
 */
#include "cli.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

int cli_finish(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("could not write the output");
        return EXIT_USAGE;
    }
    return code;
}

int cli_begin(int argc, char **argv, unsigned cmd, struct cli_args *a, void (*help)(void))
{
    int rc = cli_parse(argc, argv, cmd, a);
    if (rc != EXIT_OK)
        return rc;
    if (a->help) {
        help();
        return cli_finish(EXIT_OK);
    }
    return -1;
}

/* MODEL names a file or directory when it exists or looks like a path; else a preset. */
static bool looks_like_path(const char *s)
{
    struct stat sb;
    if (stat(s, &sb) == 0)
        return true;
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

int cli_resolve_model(const struct cli_args *a, struct tp_model *m, char *notes, size_t len)
{
    struct tp_error err = {{0}};
    enum tp_status st = TP_OK;
    notes[0] = '\0';
    if (a->model) {
        st = looks_like_path(a->model) ? tp_model_from_hf_config(a->model, m, &err)
                                       : tp_model_from_preset(a->model, m, &err);
    } else if (tp_shape_any(&a->shape)) {
        tp_model_init(m);
    } else {
        cli_error("no model: give a preset name, a config.json path, or shape flags "
                  "(--layers --hidden --heads --vocab ...)");
        return EXIT_USAGE;
    }
    if (st == TP_OK && tp_shape_any(&a->shape))
        st = tp_model_apply_shape(m, &a->shape, notes, len, &err);
    if (st != TP_OK) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

void fmt_count(char *buf, size_t len, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void fmt_si(char *buf, size_t len, double v)
{
    static const char *const suffix[] = {"", "K", "M", "B", "T", "P"};
    int i = 0;
    double x = fabs(v);
    while (x >= 999.995 && i < 5) {
        x /= 1000;
        i++;
    }
    snprintf(buf, len, "%s%.*f%s", v < 0 ? "-" : "", i == 0 ? 0 : 2, x, suffix[i]);
}
