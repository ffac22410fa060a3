/*
 * call.c - one verb by name with its options by name, answered with the CLI's JSON document:
 * the whole of what a binding needs (python/trainplan over ctypes, a WebAssembly page).
 *
 * Everything a call uses is allocated for the call and freed before it returns, so calls on
 * different threads share nothing.
 */
#include "internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a call holds: the run, its calibration and its evaluation (large: on the heap). */
struct call {
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_calib cal;
    struct tp_evaluation ev;
    struct tp_fix fixes[TP_MAX_FIXES];
    struct tp_request q;
    struct tp_eval_opts o;
    const char *calibration;
    bool per_stage;
};

static enum tp_status real_option(const char *key, const char *value, double lo, double *out,
                                  struct tp_error *err)
{
    char *end;
    errno = 0;
    double v = tp_strtod(value, &end);
    if (end == value || *end || errno || !isfinite(v) || v < lo)
        return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected a number >= %g", key, value,
                             lo);
    *out = v;
    return TP_OK;
}

/* The verb's own options; the rest go to the request. */
static enum tp_status set_option(struct call *x, bool estimate, const char *key,
                                 const char *value, struct tp_error *err)
{
    if (!value)
        return tp_fail_field(err, TP_EINVAL, key, "%s needs a value", key);
    if (estimate && strcmp(key, "tokens") == 0)
        return real_option(key, value, 1, &x->o.tokens, err);
    if (estimate && strcmp(key, "gpu_hour_price") == 0)
        return real_option(key, value, 0, &x->o.gpu_hour_price, err);
    if (estimate && strcmp(key, "calibration") == 0) {
        x->calibration = value;
        return TP_OK;
    }
    if (!estimate && strcmp(key, "per_stage") == 0) {
        x->per_stage = strcmp(value, "1") == 0 || strcmp(value, "true") == 0;
        return TP_OK;
    }
    return tp_request_set(&x->q, key, value, err);
}

static enum tp_status run_verb(struct call *x, bool estimate, const char *model, char **out,
                               struct tp_error *err)
{
    TRY(tp_model_from_name(model, &x->m, err));
    TRY(tp_request_resolve(&x->q, &x->m, &x->c, &x->j, &x->l, err));
    tp_calib_init(&x->cal);
    if (x->calibration)
        TRY(tp_calib_from_file(x->calibration, &x->cal, err));
    if (x->o.gpu_hour_price >= 0 && !(x->o.tokens > 0))
        return tp_fail_field(err, TP_EINVAL, "gpu_hour_price",
                             "gpu_hour_price needs a token budget (tokens)");
    TRY(tp_evaluate(&x->m, &x->c, &x->j, &x->l, &x->cal, &x->o, &x->ev, err));
    json_t *doc;
    if (estimate) {
        doc = tp_json_estimate(&x->m, &x->c, &x->j, &x->l, &x->o, &x->ev, x->calibration, "");
    } else {
        size_t n = x->ev.memory.fits ? 0 : tp_memory_suggest(&x->m, &x->c, &x->j, &x->l,
                                                             x->fixes, TP_MAX_FIXES);
        doc = tp_json_memory_report(&x->m, &x->c, &x->j, &x->l, &x->ev.memory, x->per_stage,
                                    x->fixes, n, "");
    }
    *out = tp_json_dumps(doc, estimate ? 8 : 12);
    return *out ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
}

/* A whole number option from text, lo..hi. */
static enum tp_status int_option(const char *key, const char *value, double lo, double hi,
                                 double *out, struct tp_error *err)
{
    TRY(real_option(key, value, lo, out, err));
    if (*out > hi || *out != floor(*out))
        return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected a whole number from %g to %g",
                             key, value, lo, hi);
    return TP_OK;
}

static enum tp_status name_option(const char *key, const char *value, enum tp_names t, int *out,
                                  struct tp_error *err)
{
    if ((*out = tp_name_value(t, value)) >= 0)
        return TP_OK;
    char choices[128];
    tp_name_choices(t, choices, sizeof choices);
    return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected one of %s", key, value, choices);
}

/* `params`: the counts and FLOPs of a model (no cluster, no job). */
static enum tp_status params_json(const char *model, const char *const *keys,
                                  const char *const *values, size_t n, char **out,
                                  struct tp_error *err)
{
    double seq = 0, mtp = 0;
    int rc = 0, conv = 0;
    bool per_layer = false;
    enum tp_status st = TP_OK;
    for (size_t i = 0; i < n && st == TP_OK; i++) {
        const char *k = keys[i], *v = values[i];
        if (!v)
            st = tp_fail_field(err, TP_EINVAL, k, "%s needs a value", k);
        else if (strcmp(k, "seq") == 0)
            st = int_option(k, v, 1, 1 << 24, &seq, err);
        else if (strcmp(k, "mtp") == 0)
            st = int_option(k, v, 0, 16, &mtp, err);
        else if (strcmp(k, "recompute") == 0)
            st = name_option(k, v, TP_NAMES_RECOMPUTE, &rc, err);
        else if (strcmp(k, "attention_flops") == 0)
            st = name_option(k, v, TP_NAMES_ATTN_CONVENTION, &conv, err);
        else if (strcmp(k, "per_layer") == 0)
            per_layer = strcmp(v, "1") == 0 || strcmp(v, "true") == 0;
        else
            st = tp_fail_field(err, TP_EINVAL, k, "unknown option %s", k);
    }
    if (st != TP_OK)
        return st;
    struct tp_params_report *r = calloc(1, sizeof *r);
    if (!r)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    st = tp_model_from_name(model, &r->m, err);
    if (st == TP_OK)
        st = tp_params_report(r, (uint64_t)seq, (enum tp_attn_convention)conv,
                              (enum tp_recompute)rc, (uint32_t)mtp, per_layer, err);
    if (st == TP_OK && !(*out = tp_json_dumps(tp_json_params(r), 10)))
        st = tp_fail(err, TP_ENOMEM, "out of memory");
    free(r);
    return st;
}

enum tp_status tp_call_json(const char *verb, const char *model, const char *const *keys,
                            const char *const *values, size_t n, char **out,
                            struct tp_error *err)
{
    *out = NULL;
    if (!model)
        return tp_fail_field(err, TP_EINVAL, "model", "no model: give a preset name or a "
                             "config.json path");
    if (verb && strcmp(verb, "params") == 0)
        return params_json(model, keys, values, n, out, err);
    bool estimate = verb && strcmp(verb, "estimate") == 0;
    if (!estimate && !(verb && strcmp(verb, "memory") == 0))
        return tp_fail(err, TP_EINVAL, "unknown verb %.40s: expected params, estimate or memory",
                       verb ? verb : "(none)");
    struct call *x = calloc(1, sizeof *x);
    if (!x)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    tp_request_init(&x->q);
    tp_eval_opts_init(&x->o);
    enum tp_status st = TP_OK;
    for (size_t i = 0; i < n && st == TP_OK; i++)
        st = set_option(x, estimate, keys[i], values[i], err);
    if (st == TP_OK)
        st = run_verb(x, estimate, model, out, err);
    free(x);
    return st;
}
