/*
 * common.c - pieces every command shares: model resolution, number formatting, exit handling.
 */
#include "cli.h"
#include "outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_print_json(json_t *doc, int digits)
{
    char *s = tp_json_dumps(doc, digits);
    if (!s) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    puts(s);
    tp_free(s);
    return EXIT_OK;
}

/* The cluster taken for options not given (cli_resolve_cluster_job), said on stderr when the
   command ends well: usage says --gpu and --gpus, and the answer hangs on them. */
static char assumed[160];

int cli_finish(int code)
{
    if (assumed[0] && code != EXIT_USAGE)
        fprintf(stderr, "trainplan: note: %s\n", assumed);
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
    out_inputs(a); /* no output may overwrite one of them (cli/outfile.c) */
    if (a->help) {
        help();
        return cli_finish(EXIT_OK);
    }
    return -1;
}

int cli_begin_run(int argc, char **argv, unsigned cmd, struct cli_args *a, void (*help)(void),
                  struct run *r)
{
    int rc = cli_begin(argc, argv, cmd, a, help);
    if (rc >= 0)
        return rc;
    memset(r, 0, sizeof *r);
    rc = cli_resolve_run(a, r);
    return rc == EXIT_OK ? -1 : rc;
}

int cli_begin_listing(int argc, char **argv, unsigned cmd, struct cli_args *a,
                      void (*help)(void), const char *name)
{
    int rc = cli_begin(argc, argv, cmd, a, help);
    if (rc < 0 && a->model) {
        cli_error("`trainplan %s` takes no argument (got \"%s\")", name, a->model);
        return EXIT_USAGE;
    }
    return rc;
}

int cli_resolve_model(const struct cli_args *a, struct tp_model *m, char *notes, size_t len)
{
    struct tp_error err = {{0}, {0}};
    if (tp_args_model(a, m, notes, len, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

void fmt_count(char *buf, size_t len, uint64_t v)
{
    tp_fmt_count(buf, len, v);
}

void fmt_si(char *buf, size_t len, double v)
{
    tp_fmt_si(buf, len, v);
}

int cli_resolve_run(const struct cli_args *a, struct run *r)
{
    int rc = cli_resolve_model(a, &r->m, r->notes, sizeof r->notes);
    if (rc != EXIT_OK)
        return rc;
    return cli_resolve_cluster_job(a, r);
}

int cli_resolve_cluster_job(const struct cli_args *a, struct run *r)
{
    struct tp_request q;
    struct tp_error err = {{0}, {0}};
    if (tp_args_request(a, &q, &err) != TP_OK ||
        tp_request_resolve(&q, &r->m, &r->c, &r->j, &r->l, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    /* the verbs that price a run on a cluster: say what was taken for --gpu / --gpus */
    r->gpu_assumed = !a->gpu;
    r->gpus_assumed = a->gpus == TP_UNSET && !a->gpus_list && a->dp == TP_UNSET &&
                      a->tp == TP_UNSET && a->pp == TP_UNSET && a->cp == TP_UNSET;
    if ((a->cmd & (CMD_MEMORY | CMD_ESTIMATE | CMD_SEARCH | CMD_EXPORT)) &&
        (r->gpu_assumed || r->gpus_assumed)) {
        char gpu[80] = "", gpus[48] = "";
        if (r->gpu_assumed)
            snprintf(gpu, sizeof gpu, "--gpu %s (%s)", r->c.gpu.key, r->c.gpu.label);
        if (r->gpus_assumed)
            snprintf(gpus, sizeof gpus, "--gpus %u", r->c.n_gpus);
        snprintf(assumed, sizeof assumed, "not given, assumed: %s%s%s", gpu,
                 gpu[0] && gpus[0] ? ", " : "", gpus);
    }
    return EXIT_OK;
}

/* One line about the model's GEMM widths off the tensor cores' 128-byte grid at TP size `tp`:
   the first such dimension, its nearest aligned value and how many more there are. */
void cli_warn_misaligned(const struct tp_model *m, uint32_t tp, enum tp_precision p)
{
    struct tp_misalign mis[8];
    size_t n = tp_model_misaligned(m, tp, p, mis, 8);
    if (n == 0)
        return;
    const struct tp_misalign *a = &mis[0];
    printf("warning: %s %.0f", a->what, a->dim);
    if (a->width != a->dim)
        printf(" / tp %u = %.0f", tp, a->width);
    printf(" is off the tensor cores' 128-byte grid: its GEMMs run at %.0f%% of the rate; nearest "
           "aligned %s: %.0f", 100 * a->eff, a->what, a->nearest);
    if (n > 1)
        printf(" (%zu more widths off the grid)", n - 1);
    printf("\n");
}

static bool ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* At text[i], a setting whose key is an option: key=value, or a bare key with an underscore
   standing as a word of the sentence (pp_last: no English word has one; not an item of a list
   such as the recompute modules "mlp, moe, shared_experts").  Its length (key, and '=' when
   given), the flag ("pp-last") in `flag`, *value whether a value follows; else 0. */
static size_t setting_at(const char *text, size_t i, char *flag, size_t len, bool *value)
{
    if (i > 0 && (ident_char(text[i - 1]) || text[i - 1] == '-' || text[i - 1] == '.'))
        return 0;
    size_t n = 0;
    bool underscore = false;
    while (ident_char(text[i + n]) && n + 1 < len) {
        underscore = underscore || text[i + n] == '_';
        flag[n] = text[i + n] == '_' ? '-' : text[i + n];
        n++;
    }
    flag[n] = '\0';
    *value = text[i + n] == '=' && text[i + n + 1] && text[i + n + 1] != ' ';
    bool word = underscore && (i == 0 || strchr(" (/", text[i - 1])) &&
                strchr(" )/:;.", text[i + n]); /* strchr finds the final NUL too */
    if (n == 0 || ident_char(text[i + n]) || (!*value && !word) || !cli_is_option(flag))
        return 0;
    return n + *value;
}

void cli_render_settings(const char *text, char *out, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; text[i] && o + 1 < len;) {
        char flag[40];
        bool value;
        size_t n = setting_at(text, i, flag, sizeof flag, &value);
        if (n == 0) {
            out[o++] = text[i++];
            continue;
        }
        i += n;
        bool on = value && strncmp(text + i, "true", 4) == 0 && !ident_char(text[i + 4]);
        int k = snprintf(out + o, len - o, value && !on ? "--%s " : "--%s", flag);
        o += k > 0 ? (size_t)k : 0;
        if (on)
            i += 4;
        if (o >= len)
            o = len - 1;
    }
    out[o] = '\0';
}

const char *cli_lib_msg(const struct tp_error *err)
{
    static char msg[2 * sizeof err->msg];
    cli_render_settings(err->msg, msg, sizeof msg);
    return msg;
}

/* A library error that names its field ("gbs 12 is not ..."): the field as the flag, and the
   settings it names (zero=3) as flags (--zero 3). */
void cli_error_field(const struct tp_error *err)
{
    char msg[2 * sizeof err->msg];
    cli_render_settings(err->msg, msg, sizeof msg);
    size_t n = strlen(err->field);
    if (!n || strncmp(msg, err->field, n) != 0) {
        cli_error("%s", msg);
        return;
    }
    char flag[sizeof err->field];
    for (size_t i = 0; i <= n; i++)
        flag[i] = err->field[i] == '_' ? '-' : err->field[i];
    cli_error("--%s%s", flag, msg + n);
}

const char *cli_escape(const char *text)
{
    static char buf[4][4096]; /* a few per printf call; each up to 4 KiB escaped */
    static unsigned next;
    char *out = buf[next++ % 4];
    tp_text_escape(text, out, sizeof buf[0]);
    return out;
}

void fmt_duration(char *buf, size_t len, double s)
{
    if (s < 120)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.1f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, len, "%.1f h", s / 3600);
    else
        snprintf(buf, len, "%.1f days", s / 86400);
}
