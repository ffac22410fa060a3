/*
 * args.c - argv through the library's one option table (src/api/option_table.c: tp_option_find,
 * tp_args_set): parsing, validation, "did you mean" and --help for every command.  The table
 * is the only place an option is declared; this file knows argv's shapes alone (--name VALUE,
 * --name=VALUE, -h, positional MODEL or files).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* cli_error_capture: where errors go instead of stderr (a sweep's rows), NULL = stderr */
static char *capture_buf;
static size_t capture_len;

void cli_error_capture(char *buf, size_t len)
{
    capture_buf = buf;
    capture_len = len;
    if (buf && len)
        buf[0] = '\0';
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[4096], esc[4 * sizeof msg]; /* every byte escaped takes 4 */
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (capture_buf) {
        tp_text_escape(msg, capture_buf, capture_len);
        return;
    }
    tp_text_escape(msg, esc, sizeof esc); /* cli_escape's rule, without its buffer's bound */
    fprintf(stderr, "trainplan: error: %s\n", esc);
}

bool cli_is_option(const char *name)
{
    /* names only: aliases such as hidden-size are also config.json fields */
    const struct tp_option *o = tp_option_find(name);
    return o && strcmp(o->name, name) == 0;
}

int cli_parse_list(const char *name, const char *text, int64_t lo, int64_t hi, int64_t *out,
                   size_t cap, size_t *n)
{
    struct tp_error err = {{0}, {0}};
    if (tp_parse_list(name, text, lo, hi, out, cap, n, &err) == TP_OK)
        return EXIT_OK;
    cli_error_field(&err);
    return EXIT_USAGE;
}

/* argv[*i], an option: the option it names in *out and its value in *val (the next
   argument when not given with '=', *i moved past it); an unknown option, a missing or an
   unwanted value is an error. */
static int option_at(int argc, char **argv, int *i, unsigned cmd, const struct tp_option **out,
                     const char **val)
{
    const char *arg = argv[*i];
    const char *name = arg + 1 + (arg[1] == '-');
    char key[64];
    const char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (n >= sizeof key) {
        cli_error("unknown option %s", arg);
        return EXIT_USAGE;
    }
    memcpy(key, name, n);
    key[n] = '\0';
    const struct tp_option *o = tp_option_find_verb(key, cmd);
    if (!o || !(o->verbs & cmd)) {
        /* the library's suggestion: the same "did you mean" as python's and the page's */
        const char *near = o ? NULL : tp_option_suggest(key, cmd);
        cli_error("unknown option --%s for `trainplan %s` (%s%s%ssee trainplan %s --help)", key,
                  tp_verb_name(cmd), near ? "did you mean --" : "", near ? near : "",
                  near ? "? " : "", tp_verb_name(cmd));
        return EXIT_USAGE;
    }
    *val = NULL;
    if (o->kind != TP_OPT_FLAG) {
        if (eq) {
            *val = eq + 1;
        } else if (*i + 1 < argc) {
            *val = argv[++*i];
        } else {
            cli_error("--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
            return EXIT_USAGE;
        }
    } else if (eq) {
        cli_error("--%s takes no value", o->name);
        return EXIT_USAGE;
    }
    *out = o;
    return EXIT_OK;
}

int cli_parse(int argc, char **argv, unsigned cmd, struct cli_args *a)
{
    tp_args_init(cmd, a);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if ((arg[0] != '-' || arg[1] == '\0') && (cmd & FILES_CMDS)) {
            if (a->n_files == CLI_MAX_FILES) {
                cli_error("more than %d files", CLI_MAX_FILES);
                return EXIT_USAGE;
            }
            a->files[a->n_files++] = arg;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->model) {
                cli_error("unexpected argument \"%s\" (MODEL is already \"%s\")", arg, a->model);
                return EXIT_USAGE;
            }
            a->model = arg;
            continue;
        }
        const struct tp_option *o;
        const char *val;
        int orc = option_at(argc, argv, &i, cmd, &o, &val);
        if (orc != EXIT_OK)
            return orc;
        struct tp_error err = {{0}, {0}};
        if (tp_args_set(a, o->name, val, false, &err) != TP_OK) {
            cli_error_field(&err);
            return EXIT_USAGE;
        }
        if (a->help)
            return EXIT_OK;
    }
    return EXIT_OK;
}

/* Help never cuts a name or a choice list: a name and its choices too long for the line put
   the text on the next one. */
void cli_print_options(FILE *out, unsigned cmd)
{
    size_t n;
    const struct tp_option *t = tp_options(&n);
    for (size_t i = 0; i < n; i++) {
        const struct tp_option *o = &t[i];
        if (!(o->verbs & cmd))
            continue;
        if (strcmp(o->name, "gpu") == 0)
            fprintf(out, "\ncluster, layout and job:\n");
        if (strcmp(o->name, "layers") == 0)
            fprintf(out, "\nshape flags (a model alone, or overriding a preset or config.json):\n");
        const char *meta = o->kind == TP_OPT_ENUM ? o->choices : o->metavar;
        int w = fprintf(out, "  --%s%s%s", o->name, meta ? " " : "", meta ? meta : "");
        if (w > 65) /* longer than the column ever was: the text on its own line */
            fprintf(out, "\n%35s%s\n", "", o->help);
        else
            fprintf(out, "%*s%s\n", w < 35 ? 35 - w : 1, "", o->help);
        /* the other names it answers to: the frameworks' own spellings */
        for (const char *p = o->aliases; p && *p;) {
            size_t k = strcspn(p, "|");
            fprintf(out, "%s%s%.*s", p == o->aliases ? "                                   (also "
                                                     : ", ",
                    k > 1 ? "--" : "-", (int)k, p);
            p += k + (p[k] == '|');
            if (!*p)
                fprintf(out, ")\n");
        }
    }
}
