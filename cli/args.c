/*
 * args.c - one option table drives parsing, validation and --help for every command.
 *
 * Numbers are parsed strictly (the whole token must be a number: "8x" is an error, never 8),
 * in range, and zero only where zero means something.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum opt_kind {
    OPT_INT,   /* int64 field, value in [lo, hi] */
    OPT_ENUM,  /* int field, value one of `choices` (index, or `values` entry) */
    OPT_CONST  /* int field set to `lo` (no value) */
};

struct opt {
    const char *name;    /* long name without "--" */
    const char *alias;   /* second name or NULL */
    enum opt_kind kind;
    size_t offset;       /* field in struct cli_args */
    int64_t lo, hi;
    const char *choices; /* OPT_ENUM: '|'-separated names */
    const int *values;   /* OPT_ENUM: value per choice (NULL = index) */
    unsigned cmds;
    const char *metavar;
    const char *help;
};

#define F(field) offsetof(struct cli_args, field)
#define S(field) offsetof(struct cli_args, shape.field)
#define SHAPE_CMDS CMD_PARAMS

static const int MLP_VALUES[] = {TP_MLP_GELU, TP_MLP_GLU, TP_MLP_GLU};
static const int NORM_VALUES[] = {TP_NORM_LAYER, TP_NORM_RMS};
static const int POS_VALUES[] = {TP_POS_LEARNED, TP_POS_ROPE, TP_POS_ALIBI};

static const struct opt OPTS[] = {
    {"help", "h", OPT_CONST, F(help), 1, 1, NULL, NULL, CMD_PARAMS | CMD_MODELS, NULL,
     "show this help and exit"},
    {"format", NULL, OPT_ENUM, F(format), 0, 0, "table|json|csv", NULL, CMD_PARAMS | CMD_MODELS,
     "FMT", "output format (default table)"},
    {"seq", "seq-len", OPT_INT, F(seq), 1, 1 << 24, NULL, NULL, CMD_PARAMS, "N",
     "sequence length for the FLOP counts (default: the model's, else 4096)"},
    {"recompute", NULL, OPT_ENUM, F(recompute), 0, 0, "none|selective|full", NULL, CMD_PARAMS,
     "MODE", "activation recompute for hardware FLOPs (default none)"},
    {"attention-flops", NULL, OPT_ENUM, F(attn_conv), 0, 0, "causal|noncausal", NULL, CMD_PARAMS,
     "CONV", "count the causal half of attention (default) or the full square"},
    {"mtp", NULL, OPT_INT, F(mtp), 0, 16, NULL, NULL, CMD_PARAMS, "N",
     "multi-token-prediction modules trained along (default 0)"},
    {"per-layer", NULL, OPT_CONST, F(per_layer), 1, 1, NULL, NULL, CMD_PARAMS, NULL,
     "list every block instead of runs of identical blocks"},
    /* shape flags: describe a model alone, or override a preset / config.json */
    {"layers", NULL, OPT_INT, S(layers), 1, TP_MAX_LAYERS, NULL, NULL, SHAPE_CMDS, "N",
     "transformer blocks"},
    {"hidden", "hidden-size", OPT_INT, S(hidden), 1, 1 << 18, NULL, NULL, SHAPE_CMDS, "N",
     "model width H"},
    {"heads", NULL, OPT_INT, S(heads), 1, 1 << 14, NULL, NULL, SHAPE_CMDS, "N", "query heads"},
    {"kv-heads", NULL, OPT_INT, S(kv_heads), 1, 1 << 14, NULL, NULL, SHAPE_CMDS, "N",
     "key/value heads (GQA; default = heads)"},
    {"head-dim", NULL, OPT_INT, S(head_dim), 1, 1 << 12, NULL, NULL, SHAPE_CMDS, "N",
     "head dimension (default hidden/heads)"},
    {"ffn", "intermediate-size", OPT_INT, S(ffn), 1, 1 << 22, NULL, NULL, SHAPE_CMDS, "N",
     "dense MLP width (default 4H for gelu, 256*ceil(8H/3/256) for swiglu)"},
    {"vocab", "vocab-size", OPT_INT, S(vocab), 1, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "vocabulary (embedding rows)"},
    {"max-positions", NULL, OPT_INT, S(max_positions), 1, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "rows of a learned position table (--pos learned)"},
    {"experts", NULL, OPT_INT, S(experts), 0, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "routed experts per MoE block (0 = dense)"},
    {"topk", "top-k", OPT_INT, S(topk), 1, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "routed experts per token"},
    {"moe-ffn", NULL, OPT_INT, S(moe_ffn), 1, 1 << 22, NULL, NULL, SHAPE_CMDS, "N",
     "width of one routed expert"},
    {"shared-experts", NULL, OPT_INT, S(shared_experts), 0, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "shared experts (each moe-ffn wide)"},
    {"dense-layers", NULL, OPT_INT, S(dense_layers), 0, TP_MAX_LAYERS, NULL, NULL, SHAPE_CMDS,
     "N", "leading blocks with a dense MLP instead of experts"},
    {"window", "sliding-window", OPT_INT, S(window), 0, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "sliding attention window on every block (0 = full attention)"},
    {"tied", NULL, OPT_CONST, S(tied), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "LM head shares the embedding"},
    {"untied", NULL, OPT_CONST, S(tied), 0, 0, NULL, NULL, SHAPE_CMDS, NULL,
     "separate LM head"},
    {"mlp", NULL, OPT_ENUM, S(mlp), 0, 0, "gelu|swiglu|geglu", MLP_VALUES, SHAPE_CMDS, "KIND",
     "gelu: 2 matrices; swiglu/geglu: 3 matrices"},
    {"norm", NULL, OPT_ENUM, S(norm), 0, 0, "layernorm|rmsnorm", NORM_VALUES, SHAPE_CMDS, "KIND",
     "LayerNorm (weight+bias) or RMSNorm (weight)"},
    {"bias", NULL, OPT_CONST, S(bias), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "biases on q, k, v, o and the MLP"},
    {"no-bias", NULL, OPT_CONST, S(bias), 0, 0, NULL, NULL, SHAPE_CMDS, NULL, "no linear biases"},
    {"qk-norm", NULL, OPT_CONST, S(qk_norm), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "per-head RMSNorm on q and k"},
    {"pos", NULL, OPT_ENUM, S(pos), 0, 0, "learned|rope|alibi", POS_VALUES, SHAPE_CMDS, "KIND",
     "position encoding"},
};

#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("trainplan: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const struct opt *find(const char *name)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(OPTS[i].name, name) == 0 || (OPTS[i].alias && strcmp(OPTS[i].alias, name) == 0))
            return &OPTS[i];
    return NULL;
}

/* Strict integer: optional '-', decimal digits, and optionally a fraction and an exponent
   ("7.86e8") when the value is whole.  No blanks, no hex, no suffixes: "8x" is an error, never
   8.  Returns 0 on success, 1 when not a number, 2 when out of the int64 range. */
static int parse_int(const char *s, int64_t *out)
{
    const char *p = s + (*s == '-');
    size_t digits = strspn(p, "0123456789");
    if (digits == 0)
        return 1;
    if (p[digits] == '\0') {
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == ERANGE)
            return 2;
        *out = v;
        return 0;
    }
    const char *q = p + digits;
    if (*q == '.') {
        q++;
        size_t frac = strspn(q, "0123456789");
        if (frac == 0)
            return 1;
        q += frac;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        q += (*q == '+' || *q == '-');
        size_t exp = strspn(q, "0123456789");
        if (exp == 0)
            return 1;
        q += exp;
    }
    if (*q != '\0')
        return 1;
    double d = strtod(s, NULL);
    if (!isfinite(d) || fabs(d) > 9e18)
        return 2;
    if (d != floor(d))
        return 1;
    *out = (int64_t)d;
    return 0;
}

static int set_enum(const struct opt *o, const char *val, struct cli_args *a)
{
    const char *p = o->choices;
    for (int idx = 0; *p; idx++) {
        size_t n = strcspn(p, "|");
        if (strlen(val) == n && strncmp(p, val, n) == 0) {
            *(int *)((char *)a + o->offset) = o->values ? o->values[idx] : idx;
            return EXIT_OK;
        }
        p += n + (p[n] == '|');
    }
    cli_error("--%s %s: expected one of %s", o->name, val, o->choices);
    return EXIT_USAGE;
}

static int set_opt(const struct opt *o, const char *val, struct cli_args *a)
{
    if (o->kind == OPT_CONST) {
        *(int *)((char *)a + o->offset) = (int)o->lo;
        return EXIT_OK;
    }
    if (o->kind == OPT_ENUM)
        return set_enum(o, val, a);
    int64_t v = 0;
    int bad = parse_int(val, &v);
    if (bad == 1) {
        cli_error("--%s %s: expected a whole number", o->name, val);
        return EXIT_USAGE;
    }
    if (bad == 2 || v < o->lo || v > o->hi) {
        cli_error("--%s %s is out of range (%lld..%lld)", o->name, val, (long long)o->lo,
                  (long long)o->hi);
        return EXIT_USAGE;
    }
    *(int64_t *)((char *)a + o->offset) = v;
    return EXIT_OK;
}

static const char *cmd_name(unsigned cmd)
{
    return cmd == CMD_PARAMS ? "params" : cmd == CMD_MODELS ? "models" : "?";
}

int cli_parse(int argc, char **argv, unsigned cmd, struct cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->seq = TP_UNSET;
    a->mtp = TP_UNSET;
    tp_shape_init(&a->shape);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->model) {
                cli_error("unexpected argument \"%s\" (MODEL is already \"%s\")", arg, a->model);
                return EXIT_USAGE;
            }
            a->model = arg;
            continue;
        }
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
        const struct opt *o = find(key);
        if (!o || !(o->cmds & cmd)) {
            cli_error("unknown option --%s for `trainplan %s` (see trainplan %s --help)", key,
                      cmd_name(cmd), cmd_name(cmd));
            return EXIT_USAGE;
        }
        const char *val = NULL;
        if (o->kind != OPT_CONST) {
            if (eq) {
                val = eq + 1;
            } else if (i + 1 < argc) {
                val = argv[++i];
            } else {
                cli_error("--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
                return EXIT_USAGE;
            }
        } else if (eq) {
            cli_error("--%s takes no value", o->name);
            return EXIT_USAGE;
        }
        int rc = set_opt(o, val, a);
        if (rc != EXIT_OK)
            return rc;
        if (a->help)
            return EXIT_OK;
    }
    return EXIT_OK;
}

void cli_print_options(FILE *out, unsigned cmd)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt *o = &OPTS[i];
        if (!(o->cmds & cmd))
            continue;
        if (o == find("layers"))
            fprintf(out, "\nshape flags (a model alone, or overriding a preset or config.json):\n");
        char left[64];
        const char *meta = o->kind == OPT_ENUM ? o->choices : o->metavar;
        snprintf(left, sizeof left, "--%s%s%s", o->name, meta ? " " : "", meta ? meta : "");
        fprintf(out, "  %-32s %s\n", left, o->help);
    }
}
