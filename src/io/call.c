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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum verb { V_ESTIMATE, V_MEMORY, V_SEARCH };

/* What a call holds: the run, its calibration and its evaluation (large: on the heap). */
struct call {
    enum verb verb;
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_calib cal;
    struct tp_evaluation ev;
    struct tp_fix fixes[TP_MAX_FIXES];
    struct tp_request q;
    struct tp_eval_opts o;
    struct tp_search_opts so;
    double top;
    const char *calibration;
    bool per_stage;
    unsigned given;                     /* TP_GIVEN_* of the keys given (advise.c) */
    struct tp_default_effect dflt[8];
    struct tp_speedup fast[3];
};

/* The advice arrays the CLI adds to estimate's and memory's documents (cli/advice.c): the
   defaults that move the answer, and for estimate the changes that make a fitting run
   faster. */
static void add_advice(struct call *x, json_t *doc)
{
    if (!doc)
        return;
    size_t n = tp_defaults_that_matter(&x->m, &x->c, &x->j, &x->l, &x->cal, x->given, x->dflt,
                                       sizeof x->dflt / sizeof x->dflt[0]);
    json_object_set_new(doc, "defaults_that_matter", tp_json_default_effects(x->dflt, n));
    if (x->verb != V_ESTIMATE)
        return;
    n = x->ev.memory.fits ? tp_time_suggest(&x->m, &x->c, &x->j, &x->l, &x->cal, x->fast,
                                            sizeof x->fast / sizeof x->fast[0])
                          : 0;
    json_object_set_new(doc, "speedups", tp_json_speedups(x->fast, n));
}

/* The TP_GIVEN_* bit a key sets (0: none). */
static unsigned given_bit(const char *key)
{
    static const struct {
        const char *key;
        unsigned bit;
    } K[] = {{"mbs", TP_GIVEN_MBS},
             {"gbs", TP_GIVEN_GBS},
             {"gas", TP_GIVEN_GBS},
             {"gpus_per_node", TP_GIVEN_GPUS_PER_NODE},
             {"framework", TP_GIVEN_FRAMEWORK},
             {"fsdp", TP_GIVEN_FRAMEWORK | TP_GIVEN_ZERO},
             {"recompute", TP_GIVEN_RECOMPUTE},
             {"recompute_layers", TP_GIVEN_RECOMPUTE},
             {"recompute_modules", TP_GIVEN_RECOMPUTE},
             {"zero", TP_GIVEN_ZERO},
             {"distributed_optimizer", TP_GIVEN_ZERO},
             {"seq", TP_GIVEN_SEQ}};
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++)
        if (strcmp(K[i].key, key) == 0)
            return K[i].bit;
    return 0;
}

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

static bool truthy(const char *value)
{
    return strcmp(value, "1") == 0 || strcmp(value, "true") == 0;
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
            per_layer = truthy(v);
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

/* search's own options: the limits of the enumeration. */
static enum tp_status search_option(struct call *x, const char *key, const char *value,
                                    bool *taken, struct tp_error *err)
{
    static const struct {
        const char *key;
        size_t off;
    } LIMITS[] = {{"max_tp", offsetof(struct tp_search_opts, max_tp)},
                  {"max_pp", offsetof(struct tp_search_opts, max_pp)},
                  {"max_cp", offsetof(struct tp_search_opts, max_cp)},
                  {"max_ep", offsetof(struct tp_search_opts, max_ep)},
                  {"max_mbs", offsetof(struct tp_search_opts, max_mbs)}};
    double v;
    *taken = true;
    for (size_t i = 0; i < sizeof LIMITS / sizeof LIMITS[0]; i++)
        if (strcmp(key, LIMITS[i].key) == 0) {
            TRY(int_option(key, value, 1, 4096, &v, err));
            *(uint32_t *)(void *)((char *)&x->so + LIMITS[i].off) = (uint32_t)v;
            return TP_OK;
        }
    if (strcmp(key, "top") == 0)
        return int_option(key, value, 1, 1000, &x->top, err);
    if (strcmp(key, "mem_headroom") == 0) {
        TRY(real_option(key, value, 0, &x->so.mem_headroom, err));
        return x->so.mem_headroom <= 0.9 ? TP_OK
                                         : tp_fail_field(err, TP_EINVAL, key, "%s %s: expected "
                                                         "0 to 0.9", key, value);
    }
    if (strcmp(key, "no_offload") == 0) {
        x->so.offload = !truthy(value);
        return TP_OK;
    }
    if (strcmp(key, "even_pp") == 0) {
        x->so.uneven_pp = !truthy(value);
        return TP_OK;
    }
    if (strcmp(key, "recompute_modes") == 0)
        return tp_search_parse_recompute_modes(value, &x->so.recompute_mask, err);
    if (strcmp(key, "zero_stages") == 0)
        return tp_search_parse_zero_stages(value, &x->so.zero_mask, err);
    *taken = false;
    return TP_OK;
}

/* The verb's own options; the rest go to the request. */
static enum tp_status set_option(struct call *x, const char *key, const char *value,
                                 struct tp_error *err)
{
    if (!value)
        return tp_fail_field(err, TP_EINVAL, key, "%s needs a value", key);
    bool estimate = x->verb == V_ESTIMATE, taken;
    if (estimate && strcmp(key, "tokens") == 0)
        return real_option(key, value, 1, &x->o.tokens, err);
    if (estimate && strcmp(key, "gpu_hour_price") == 0)
        return real_option(key, value, 0, &x->o.gpu_hour_price, err);
    if (x->verb != V_MEMORY && strcmp(key, "calibration") == 0) {
        x->calibration = value;
        return TP_OK;
    }
    if (x->verb == V_MEMORY && strcmp(key, "per_stage") == 0) {
        x->per_stage = truthy(value);
        return TP_OK;
    }
    if (x->verb == V_SEARCH) {
        TRY(search_option(x, key, value, &taken, err));
        if (taken)
            return TP_OK;
    }
    return tp_request_set(&x->q, key, value, err);
}

static enum tp_status search_json(struct call *x, char **out, struct tp_error *err)
{
    if (x->q.gbs == TP_UNSET)
        return tp_fail_field(err, TP_EINVAL, "gbs", "search needs the global batch (gbs, in "
                             "sequences)");
    x->so.gbs = (uint64_t)x->q.gbs;
    size_t n = 0, cap = x->top > 0 ? (size_t)x->top : 5;
    /* as the CLI: every stack unless framework names one, each result labelled */
    enum tp_framework fw[TP_FW_COUNT];
    size_t n_fw = 0;
    for (int f = 0; f < TP_FW_COUNT; f++)
        if (!x->q.framework || f == x->q.framework - 1)
            fw[n_fw++] = (enum tp_framework)f;
    struct tp_stack_hit *hits = calloc(cap, sizeof *hits);
    struct tp_search_stats *st = calloc(1, sizeof *st);
    enum tp_status s = hits && st ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    if (s == TP_OK)
        s = tp_search_stacks(&x->m, &x->c, &x->j, &x->so, &x->cal, fw, n_fw, hits, cap, &n, st,
                             err);
    if (s == TP_OK) {
        char outside[320];
        unsigned domain = tp_calib_domain_check(&x->cal, &x->m, &x->c, &x->j,
                                                n ? hits[0].h.time.mfu : NAN, outside,
                                                sizeof outside);
        struct tp_range rg;
        double band = n ? tp_search_tie_band(&x->m, &x->c, &x->j, &hits[0], domain, &rg) : 0;
        struct tp_nearest_in in = {&x->m, &x->c, &x->j, &x->so, &x->cal, fw, n_fw,
                                   x->q.framework != 0, st->rejected[TP_REJECT_MEMORY] > 0};
        size_t n_near = n ? 0 : tp_search_nearest(&in, NULL, NULL, x->fixes, TP_MAX_FIXES);
        json_t *doc = tp_json_search(&x->m, &x->c, &x->j, x->so.gbs, st, hits, n, outside,
                                     band, x->fixes, n_near);
        /* the defaults the best layout hangs on: what the search did not choose */
        size_t n_dflt = 0;
        if (n > 0) {
            struct tp_job j = x->j;
            j.framework = hits[0].fw;
            n_dflt = tp_defaults_that_matter(&x->m, &x->c, &j, &hits[0].h.layout, &x->cal,
                                             x->given | TP_GIVEN_MBS | TP_GIVEN_GBS |
                                                 TP_GIVEN_RECOMPUTE | TP_GIVEN_ZERO |
                                                 TP_GIVEN_FRAMEWORK,
                                             x->dflt, sizeof x->dflt / sizeof x->dflt[0]);
        }
        if (doc)
            json_object_set_new(doc, "defaults_that_matter",
                                tp_json_default_effects(x->dflt, n_dflt));
        *out = tp_json_dumps(doc, 8);
        s = *out ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    }
    free(hits);
    free(st);
    return s;
}

static enum tp_status run_verb(struct call *x, const char *model, char **out,
                               struct tp_error *err)
{
    TRY(tp_model_from_name(model, &x->m, err));
    x->q.gbs_is_target = x->verb == V_SEARCH;
    TRY(tp_request_resolve(&x->q, &x->m, &x->c, &x->j, &x->l, err));
    tp_calib_init(&x->cal);
    if (x->calibration)
        TRY(tp_calib_from_file(x->calibration, &x->cal, err));
    if (x->verb == V_SEARCH)
        return search_json(x, out, err);
    if (x->o.gpu_hour_price >= 0 && !(x->o.tokens > 0))
        return tp_fail_field(err, TP_EINVAL, "gpu_hour_price",
                             "gpu_hour_price needs a token budget (tokens)");
    TRY(tp_evaluate(&x->m, &x->c, &x->j, &x->l, &x->cal, &x->o, &x->ev, err));
    json_t *doc;
    if (x->verb == V_ESTIMATE) {
        doc = tp_json_estimate(&x->m, &x->c, &x->j, &x->l, &x->o, &x->ev, x->calibration, "");
    } else {
        size_t n = x->ev.memory.fits ? 0 : tp_memory_suggest(&x->m, &x->c, &x->j, &x->l,
                                                             x->fixes, TP_MAX_FIXES);
        doc = tp_json_memory_report(&x->m, &x->c, &x->j, &x->l, &x->ev.memory, x->per_stage,
                                    x->fixes, n, "");
    }
    add_advice(x, doc);
    *out = tp_json_dumps(doc, x->verb == V_ESTIMATE ? 8 : 12);
    return *out ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
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
    static const char *const VERBS[] = {[V_ESTIMATE] = "estimate", [V_MEMORY] = "memory",
                                        [V_SEARCH] = "search"};
    int v = -1;
    for (int i = 0; i < 3 && verb; i++)
        if (strcmp(verb, VERBS[i]) == 0)
            v = i;
    if (v < 0)
        return tp_fail(err, TP_EINVAL, "unknown verb %.40s: expected params, estimate, memory "
                       "or search", verb ? verb : "(none)");
    struct call *x = calloc(1, sizeof *x);
    if (!x)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    x->verb = (enum verb)v;
    tp_request_init(&x->q);
    tp_eval_opts_init(&x->o);
    tp_search_opts_init(&x->so);
    enum tp_status st = TP_OK;
    for (size_t i = 0; i < n && st == TP_OK; i++) {
        st = set_option(x, keys[i], values[i], err);
        x->given |= keys[i] ? given_bit(keys[i]) : 0;
    }
    if (st == TP_OK)
        st = run_verb(x, model, out, err);
    free(x);
    return st;
}

/* The options of validate and calibrate (tp_call_runs_json). */
struct runs_call {
    bool calibrate;
    const char *calibration, *base, *output;
    bool cv;
    struct tp_fit_opts o;
};

/* calibrate's own options, in the ranges of the CLI's flags (cli/args.c). */
static enum tp_status fit_option(struct runs_call *x, const char *key, const char *value,
                                 struct tp_error *err)
{
    double v;
    if (strcmp(key, "base") == 0)
        x->base = value;
    else if (strcmp(key, "output") == 0)
        x->output = value;
    else if (strcmp(key, "no_cv") == 0)
        x->cv = !truthy(value);
    else if (strcmp(key, "no_per_gpu") == 0)
        x->o.per_gpu = !truthy(value);
    else if (strcmp(key, "prior_weight") == 0) {
        TRY(real_option(key, value, 0, &x->o.prior_weight, err));
        if (x->o.prior_weight > 100)
            return tp_fail_field(err, TP_EINVAL, key, "%s %s: expected 0 to 100", key, value);
    } else if (strcmp(key, "quiet") != 0) {
        /* the fit's whole-number bounds, with the CLI's ranges (cli/args.c) */
        static const struct {
            const char *key;
            double lo, hi;
            size_t off;
        } COUNTS[] = {{"min_gpu_rows", 1, 1e5, offsetof(struct tp_fit_opts, min_gpu_rows)},
                      {"max_evals", 10, 1e6, offsetof(struct tp_fit_opts, max_evals)},
                      {"starts", 1, 16, offsetof(struct tp_fit_opts, starts)},
                      {"fold_rows", 0, 1e8, offsetof(struct tp_fit_opts, fold_rows)},
                      {"fit_rows", 0, 1e8, offsetof(struct tp_fit_opts, fit_rows)},
                      {"max_folds", 0, 1e8, offsetof(struct tp_fit_opts, max_folds)}};
        for (size_t i = 0; i < sizeof COUNTS / sizeof COUNTS[0]; i++)
            if (strcmp(key, COUNTS[i].key) == 0) {
                TRY(int_option(key, value, COUNTS[i].lo, COUNTS[i].hi, &v, err));
                *(uint32_t *)(void *)((char *)&x->o + COUNTS[i].off) = (uint32_t)v;
                return TP_OK;
            }
        return tp_fail_field(err, TP_EINVAL, key, "unknown option %s", key);
    }
    return TP_OK;
}

static enum tp_status runs_verb(struct runs_call *x, const struct tp_runs *runs, char **out,
                                struct tp_error *err)
{
    struct tp_calib *cal = malloc(sizeof *cal);
    const char *base_name;
    enum tp_status st = cal ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    json_t *doc = NULL;
    if (st == TP_OK && !x->calibrate) {
        struct tp_validation v;
        tp_calib_init(cal);
        if (x->calibration)
            st = tp_calib_from_file(x->calibration, cal, err);
        if (st == TP_OK && (st = tp_validate_runs(runs, cal, &v, err)) == TP_OK) {
            doc = tp_json_validate(&v, x->calibration);
            tp_validation_free(&v);
        }
    } else if (st == TP_OK && (st = tp_calib_base(x->base, cal, &base_name, err)) == TP_OK) {
        struct tp_calibration r;
        if ((st = tp_calibrate_runs(runs, cal, &x->o, x->cv, &r, err)) == TP_OK) {
            if (x->output)
                st = tp_calib_write(&r.fitted, x->output, err);
            if (st == TP_OK)
                doc = tp_json_calibrate(&r, base_name, x->output);
            tp_calibration_free(&r);
        }
    }
    free(cal);
    if (st == TP_OK && !(*out = tp_json_dumps(doc, 6)))
        st = tp_fail(err, TP_ENOMEM, "out of memory");
    return st;
}

enum tp_status tp_call_runs_json(const char *verb, const char *const *files, size_t n_files,
                                 const char *const *keys, const char *const *values, size_t n,
                                 char **out, struct tp_error *err)
{
    *out = NULL;
    struct runs_call x = {.cv = true};
    if (!verb || (strcmp(verb, "validate") != 0 && strcmp(verb, "calibrate") != 0))
        return tp_fail(err, TP_EINVAL, "unknown verb %.40s: expected validate or calibrate",
                       verb ? verb : "(none)");
    x.calibrate = strcmp(verb, "calibrate") == 0;
    if (n_files == 0)
        return tp_fail_field(err, TP_EINVAL, "files", "%s needs at least one runs file", verb);
    tp_fit_opts_init(&x.o);
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i], *v = values[i];
        if (!v)
            return tp_fail_field(err, TP_EINVAL, k, "%s needs a value", k);
        if (x.calibrate)
            TRY(fit_option(&x, k, v, err));
        else if (strcmp(k, "calibration") == 0)
            x.calibration = v;
        else
            return tp_fail_field(err, TP_EINVAL, k, "unknown option %s", k);
    }
    struct tp_runs runs;
    TRY(tp_runs_load(files, n_files, &runs, err));
    enum tp_status st = runs_verb(&x, &runs, out, err);
    tp_runs_free(&runs);
    return st;
}
