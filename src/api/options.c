/*
 * options.c - options by name through the one table (option_table.c): what the CLI's argv
 * parser, tp_call_json (python/trainplan, the page) and --help all go through, so a name, its
 * aliases, its range and its "did you mean" are the same everywhere.
 *
 * Numbers are parsed strictly (the whole text must be a number: "8x" is an error, never 8), in
 * range, and zero only where zero means something; enums are decoded here, once, into the
 * library's own values.
 */
#include "api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const VERB_NAMES[] = {"params",   "models", "memory",    "gpus",
                                         "estimate", "search", "validate",  "calibrate",
                                         "logs",     "export", "size",      "checkpoint"};
#define N_VERBS (sizeof VERB_NAMES / sizeof VERB_NAMES[0])

const char *tp_verb_name(unsigned verb)
{
    for (size_t i = 0; i < N_VERBS; i++)
        if (verb == 1u << i)
            return VERB_NAMES[i];
    return "?";
}

unsigned tp_verb_find(const char *name)
{
    for (size_t i = 0; name && i < N_VERBS; i++)
        if (strcmp(VERB_NAMES[i], name) == 0)
            return 1u << i;
    return 0;
}

/* a == b with '_' and '-' the same, over a's first n characters and all of b */
static bool same_name(const char *a, size_t n, const char *b)
{
    size_t i = 0;
    for (; i < n && b[i]; i++)
        if (a[i] != b[i] && !((a[i] == '_' || a[i] == '-') && (b[i] == '_' || b[i] == '-')))
            return false;
    return i == n && b[i] == '\0';
}

/* `name` is one of the '|'-separated `list` */
static bool in_list(const char *list, const char *name)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, "|");
        if (same_name(p, n, name))
            return true;
        p += n + (p[n] == '|');
    }
    return false;
}

const struct tp_option *tp_option_find(const char *name)
{
    size_t n;
    const struct tp_option *t = tp_options(&n);
    for (size_t i = 0; i < n; i++)
        if (same_name(t[i].name, strlen(t[i].name), name) || in_list(t[i].aliases, name))
            return &t[i];
    return NULL;
}

const struct tp_option *tp_option_find_verb(const char *name, unsigned verbs)
{
    size_t n;
    const struct tp_option *t = tp_options(&n), *any = NULL;
    for (size_t i = 0; i < n; i++)
        if (same_name(t[i].name, strlen(t[i].name), name) || in_list(t[i].aliases, name)) {
            if (t[i].verbs & verbs)
                return &t[i];
            if (!any)
                any = &t[i];
        }
    return any;
}

/* Levenshtein distance of a (n chars) and b (m chars) with '_' = '-', capped at 3. */
static size_t distance(const char *a, size_t n, const char *b, size_t m)
{
    if (n > 40 || m > 40)
        return 3;
    size_t row[41];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            bool eq = a[i - 1] == b[j - 1] ||
                      ((a[i - 1] == '_' || a[i - 1] == '-') && (b[j - 1] == '_' || b[j - 1] == '-'));
            size_t best = diag + !eq;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m] < 3 ? row[m] : 3;
}

const char *tp_option_suggest(const char *name, unsigned verb)
{
    size_t n, len = strlen(name), best = 3;
    const struct tp_option *t = tp_options(&n), *found = NULL;
    /* short names allow one edit (tp, pp, ep are one apart from each other) */
    size_t limit = len <= 4 ? 1 : 2;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i].verbs & verb))
            continue;
        for (const char *p = t[i].name, *next = t[i].aliases; p;) {
            size_t k = p == t[i].name ? strlen(p) : strcspn(p, "|");
            size_t d = distance(name, len, p, k);
            /* a name cut short ("--gradient-accum") is as near as one edit */
            if (len >= 4 && k > len && same_name(p, len, name))
                d = 1;
            if (d <= limit && d < best) {
                best = d;
                found = &t[i];
            }
            if (p == t[i].name) {
                p = next;
            } else {
                p += k;
                p = *p == '|' ? p + 1 : NULL;
            }
        }
    }
    return found ? found->name : NULL;
}

void tp_args_init(unsigned cmd, struct tp_args *a)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->seq = TP_UNSET;
    a->mtp = TP_UNSET;
    a->gpus = a->gpus_per_node = TP_UNSET;
    a->dp = a->tp = a->pp = a->vpp = a->ep = a->etp = a->cp = a->zero = TP_UNSET;
    a->shard_group = a->mbs = a->gas = a->gbs = a->recompute_layers = a->lora_rank = TP_UNSET;
    a->hpz = TP_UNSET;
    a->offload_layers = TP_UNSET;
    a->framework = TP_UNSET;
    a->moe_capacity = a->moe_imbalance = a->overhead_gb = a->nccl_gb = a->frag = -1;
    a->nccl_buffsize = -1;
    a->trainable_frac = -1;
    a->price = a->prior_weight = -1;
    a->min_gpu_rows = a->max_evals = a->starts = a->fold_rows = TP_UNSET;
    a->max_folds = a->fit_rows = TP_UNSET;
    a->skip_warmup = TP_UNSET;
    a->top = a->max_tp = a->max_pp = a->max_cp = a->max_ep = a->max_mbs = TP_UNSET;
    a->threads = a->pp_first = a->pp_last = TP_UNSET;
    a->ckpt_every = a->eval_every = TP_UNSET;
    tp_shape_init(&a->shape);
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
    double d = tp_strtod(s, NULL);
    if (!isfinite(d) || fabs(d) > 9e18)
        return 2;
    if (d != floor(d))
        return 1;
    *out = (int64_t)d;
    return 0;
}

/* The option's name with underscores: the binding's keyword, and err->field. */
static const char *keyword(const struct tp_option *o, char *buf, size_t len)
{
    size_t i = 0;
    for (; o->name[i] && i + 1 < len; i++)
        buf[i] = o->name[i] == '-' ? '_' : o->name[i];
    buf[i] = '\0';
    return buf;
}

static enum tp_status set_enum(const struct tp_option *o, const char *key, const char *val,
                               struct tp_args *a, struct tp_error *err)
{
    int *dst = (int *)(void *)((char *)a + o->offset);
    const char *p = o->choices;
    for (int idx = 0; *p; idx++) {
        size_t n = strcspn(p, "|");
        if (strlen(val) == n && strncmp(p, val, n) == 0) {
            *dst = o->values ? o->values[idx] : idx;
            return TP_OK;
        }
        p += n + (p[n] == '|');
    }
    const struct tp_stack *st;
    if (o->offset == offsetof(struct tp_args, framework) && tp_stack_find(val, &st, NULL) == TP_OK) {
        *dst = (int)st->fw; /* stack.c's aliases: trl, mcore, megatron-core */
        return TP_OK;
    }
    return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected one of %s", key, val, o->choices);
}

static enum tp_status set_number(const struct tp_option *o, const char *key, const char *val,
                                 struct tp_args *a, struct tp_error *err)
{
    char *dst = (char *)a + o->offset;
    if (o->kind == TP_OPT_REAL) {
        char *end;
        errno = 0;
        double v = tp_strtod(val, &end);
        if (!*val || *end || errno || !isfinite(v) ||
            strspn(val, "0123456789.eE+-") != strlen(val))
            return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected a number", key, val);
        if (v < o->lo || v > o->hi)
            return tp_fail_field(err, TP_EINVAL, key, "%s %s is out of range (%g..%g)", key, val,
                                 o->lo, o->hi);
        *(double *)(void *)dst = v;
        return TP_OK;
    }
    int64_t v = 0;
    int bad = parse_int(val, &v);
    if (bad == 1)
        return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected a whole number", key, val);
    if (bad == 2 || (double)v < o->lo || (double)v > o->hi)
        return tp_fail_field(err, TP_EINVAL, key, "%s %s is out of range (%.0f..%.0f)", key, val,
                             o->lo, o->hi);
    *(int64_t *)(void *)dst = v;
    return TP_OK;
}

enum tp_status tp_parse_list(const char *key, const char *text, int64_t lo, int64_t hi,
                             int64_t *out, size_t cap, size_t *n, struct tp_error *err)
{
    *n = 0;
    const char *dots = strstr(text, "..");
    char *end;
    errno = 0;
    if (dots) {
        long long x = strtoll(text, &end, 10), y;
        if (end != dots || x < lo || x < 1 || (y = strtoll(dots + 2, &end, 10)) < x || *end ||
            y > hi || errno)
            return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected LOW..HIGH (doubling) with "
                                 "%lld <= LOW <= HIGH <= %lld", key, text,
                                 (long long)(lo > 1 ? lo : 1), (long long)hi);
        for (long long v = x; v <= y && *n < cap; v *= 2)
            out[(*n)++] = v;
        if (out[*n - 1] != y && *n < cap)
            out[(*n)++] = y;
        return TP_OK;
    }
    for (const char *p = text; *p;) {
        long long v = strtoll(p, &end, 10);
        if (end == p || v < lo || v > hi || errno || (*end && *end != ',') || *n == cap ||
            (*end == ',' && !end[1]))
            return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected a list of up to %zu whole "
                                 "numbers in %lld..%lld (1,2,4) or a range (8..512: doubling)",
                                 key, text, cap, (long long)lo, (long long)hi);
        out[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    return TP_OK;
}

/* The options memory and estimate sweep over (one row per combination of their values). */
static const char *const SWEEPABLE[] = {"mbs", "seq", "gpus", "gbs", "gas", "tp", "pp", "dp",
                                        "cp", "ep", "zero"};

/* mbs 1,2,4 or gpus 8..512: checks every value as the option would, keeps the list for the
   CLI's sweep and the first value for the rest. */
static enum tp_status add_sweep(const struct tp_option *o, const char *key, const char *val,
                                struct tp_args *a, struct tp_error *err)
{
    bool ok = false;
    for (size_t i = 0; i < sizeof SWEEPABLE / sizeof SWEEPABLE[0]; i++)
        ok = ok || strcmp(SWEEPABLE[i], o->name) == 0;
    if (!ok)
        return tp_fail_field(err, TP_EINVAL, key, "%s %s: only --mbs, --seq, --gpus, --gbs, "
                             "--gas, --tp, --pp, --dp, --cp, --ep and --zero take a list", key,
                             val);
    if (a->n_sweeps == TP_ARGS_MAX_SWEEPS)
        return tp_fail_field(err, TP_EINVAL, key, "%s %s: at most %d options take a list at once",
                             key, val, TP_ARGS_MAX_SWEEPS);
    struct tp_sweep *sw = &a->sweeps[a->n_sweeps];
    TRY(tp_parse_list(key, val, (int64_t)o->lo, (int64_t)o->hi, sw->values,
                      TP_ARGS_MAX_SWEEP_VALUES, &sw->n, err));
    sw->name = o->name;
    sw->offset = o->offset;
    *(int64_t *)(void *)((char *)a + o->offset) = sw->values[0];
    a->n_sweeps++;
    return TP_OK;
}

/* An option that is not the verb's: the same words and "did you mean" in every front end. */
static enum tp_status not_an_option(const struct tp_args *a, const char *name,
                                    const struct tp_option *o, bool binding, struct tp_error *err)
{
    char key[40];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof key; i++)
        key[i] = name[i] == '-' ? '_' : name[i];
    key[i] = '\0';
    const char *verb = tp_verb_name(a->cmd);
    if (o && binding && o->cli_only && (o->verbs & a->cmd))
        return tp_fail_field(err, TP_EINVAL, key, "%s is the CLI's (its output), not a keyword "
                             "of %s", key, verb);
    const char *near = o ? NULL : tp_option_suggest(name, a->cmd);
    char hint[64] = "";
    if (near) {
        char k[40];
        size_t j = 0;
        for (; near[j] && j + 1 < sizeof k; j++)
            k[j] = near[j] == '-' ? '_' : near[j];
        k[j] = '\0';
        tp_snprintf(hint, sizeof hint, " (did you mean %s?)", k);
    }
    return tp_fail_field(err, TP_EINVAL, key, "unknown option %s for %s%s", key, verb, hint);
}

/* The TP_GIVEN_* bits option `name` sets (tp_defaults_that_matter: the inputs the user gave are
   not defaults to warn about); 0 for the others. */
static unsigned given_bits(const char *name)
{
    static const struct {
        const char *name;
        unsigned bits;
    } K[] = {{"mbs", TP_GIVEN_MBS},
             {"gbs", TP_GIVEN_GBS},
             {"gas", TP_GIVEN_GBS},
             {"gpus-per-node", TP_GIVEN_GPUS_PER_NODE},
             {"framework", TP_GIVEN_FRAMEWORK},
             {"fsdp", TP_GIVEN_FRAMEWORK | TP_GIVEN_ZERO},
             {"recompute", TP_GIVEN_RECOMPUTE},
             {"recompute-layers", TP_GIVEN_RECOMPUTE},
             {"recompute-modules", TP_GIVEN_RECOMPUTE},
             {"zero", TP_GIVEN_ZERO},
             {"distributed-optimizer", TP_GIVEN_ZERO},
             {"seq", TP_GIVEN_SEQ}};
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++)
        if (strcmp(K[i].name, name) == 0)
            return K[i].bits;
    return 0;
}

static enum tp_status set_option(struct tp_args *a, const struct tp_option *o,
                                 const char *value, struct tp_error *err);

enum tp_status tp_args_set(struct tp_args *a, const char *name, const char *value, bool binding,
                           struct tp_error *err)
{
    const struct tp_option *o = tp_option_find_verb(name, a->cmd);
    if (!o || !(o->verbs & a->cmd) || (binding && o->cli_only))
        return not_an_option(a, name, o, binding, err);
    TRY(set_option(a, o, value, err));
    a->given |= given_bits(o->name);
    return TP_OK;
}

static enum tp_status set_option(struct tp_args *a, const struct tp_option *o,
                                 const char *value, struct tp_error *err)
{
    char key[40];
    keyword(o, key, sizeof key);
    if (o->kind == TP_OPT_FLAG) {
        if (!value || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
            *(int *)(void *)((char *)a + o->offset) = (int)o->lo;
        else if (strcmp(value, "false") != 0 && strcmp(value, "0") != 0)
            return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected true or false", key,
                                 value);
        return TP_OK;
    }
    if (!value)
        return tp_fail_field(err, TP_EINVAL, key, "%s needs a value (%s)", key,
                             o->metavar ? o->metavar : "VALUE");
    if (a->cmd == TP_VERB_SEARCH && o->offset == offsetof(struct tp_args, gpus) &&
        strpbrk(value, ",.")) {
        a->gpus_list = value; /* "8,16,32" or "8..512": search parses it */
        return TP_OK;
    }
    if ((a->cmd & (TP_VERB_MEMORY | TP_VERB_ESTIMATE)) && o->kind == TP_OPT_INT &&
        (strchr(value, ',') || strstr(value, "..")))
        return add_sweep(o, key, value, a, err);
    switch (o->kind) {
    case TP_OPT_STR: *(const char **)(void *)((char *)a + o->offset) = value; return TP_OK;
    case TP_OPT_ENUM: return set_enum(o, key, value, a, err);
    default: return set_number(o, key, value, a, err);
    }
}

static const char *const KIND_NAMES[] = {"int", "real", "str", "enum", "flag"};

char *tp_options_json(unsigned verb, bool cli)
{
    size_t n;
    const struct tp_option *t = tp_options(&n);
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        const struct tp_option *o = &t[i];
        if (!(o->verbs & verb) || (o->cli_only && !cli))
            continue;
        char key[40];
        json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", o->name, "keyword",
                              keyword(o, key, sizeof key), "kind", KIND_NAMES[o->kind], "metavar",
                              o->metavar ? o->metavar : "", "help", o->help);
        if (!e || json_array_append_new(list, e) != 0) {
            json_decref(list);
            return NULL;
        }
        json_object_set_new(e, "aliases", json_string(o->aliases ? o->aliases : ""));
        if (o->kind == TP_OPT_INT || o->kind == TP_OPT_REAL) {
            json_object_set_new(e, "lo", json_real(o->lo));
            json_object_set_new(e, "hi", json_real(o->hi));
        }
        if (o->kind == TP_OPT_ENUM)
            json_object_set_new(e, "choices", json_string(o->choices));
    }
    return list ? tp_json_dumps(list, 0) : NULL;
}
