/*
 * call.c - one verb by name with its options by name, answered with the CLI's JSON document:
 * the whole of what a binding needs (python/trainplan over ctypes, a WebAssembly page).  The
 * options go through the one option table (tp_args_set), so a keyword is the CLI's flag with
 * underscores, with the flag's range, aliases and "did you mean".
 *
 * Everything a call uses is allocated for the call and freed before it returns, so calls on
 * different threads share nothing.
 */
#include "api_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a call holds: the options, the run, its calibration and its evaluation (large: on the
   heap). */
struct call {
    struct tp_args a;
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
    struct tp_params_report params;
    char notes[512];
    struct tp_default_effect dflt[8];   /* the advice (advise.c) */
    struct tp_speedup fast[3];
};

/* The advice arrays the CLI adds to estimate's and memory's documents (cli/advice.c): the
   defaults that move the answer, and for estimate the changes that make a fitting run
   faster. */
static void add_advice(struct call *x, json_t *doc)
{
    if (!doc)
        return;
    size_t n = tp_defaults_that_matter(&x->m, &x->c, &x->j, &x->l, &x->cal, x->a.given,
                                       x->dflt, sizeof x->dflt / sizeof x->dflt[0]);
    json_object_set_new(doc, "defaults_that_matter", tp_json_default_effects(x->dflt, n));
    if (x->a.cmd != TP_VERB_ESTIMATE)
        return;
    n = x->ev.memory.fits ? tp_time_suggest(&x->m, &x->c, &x->j, &x->l, &x->cal, x->fast,
                                            sizeof x->fast / sizeof x->fast[0])
                          : 0;
    json_object_set_new(doc, "speedups", tp_json_speedups(x->fast, n));
}

/* The keywords through the table; a list (the CLI's sweeps) is one call per value here. */
static enum tp_status set_all(struct tp_args *a, const char *const *keys,
                              const char *const *values, size_t n, struct tp_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!keys[i])
            return tp_fail_field(err, TP_EINVAL, "", "a keyword without a name");
        TRY(tp_args_set(a, keys[i], values[i], true, err));
    }
    if (a->n_sweeps || a->gpus_list) {
        const char *name = a->gpus_list ? "gpus" : a->sweeps[0].name;
        return tp_fail_field(err, TP_EINVAL, name, "%s: one value per call (a list is the CLI's "
                             "sweep)", name);
    }
    return TP_OK;
}

static enum tp_status dump(json_t *doc, int digits, char **out, struct tp_error *err)
{
    *out = tp_json_dumps(doc, digits);
    return *out ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
}

/* `params`: the counts and FLOPs of a model (no cluster, no job). */
static enum tp_status params_json(struct call *x, char **out, struct tp_error *err)
{
    struct tp_params_report *r = &x->params;
    TRY(tp_args_model(&x->a, &r->m, r->notes, sizeof r->notes, err));
    TRY(tp_params_report(r, x->a.seq != TP_UNSET ? (uint64_t)x->a.seq : 0,
                         (enum tp_attn_convention)x->a.attn_conv,
                         (enum tp_recompute)x->a.recompute,
                         x->a.mtp == TP_UNSET ? 0 : (uint32_t)x->a.mtp, x->a.per_layer != 0, err));
    return dump(tp_json_params(r), 10, out, err);
}

static enum tp_status search_json(struct call *x, char **out, struct tp_error *err)
{
    if (x->a.gbs == TP_UNSET)
        return tp_fail_field(err, TP_EINVAL, "gbs", "search needs the global batch (gbs, in "
                             "sequences)");
    if (x->a.tokens > 0 || x->a.price >= 0)
        return tp_fail_field(err, TP_EINVAL, x->a.tokens > 0 ? "tokens" : "gpu_hour_price",
                             "%s: search's wall-clock per layout is the CLI's table alone",
                             x->a.tokens > 0 ? "tokens" : "gpu_hour_price");
    TRY(tp_args_search_opts(&x->a, (uint64_t)x->a.gbs, &x->so, err));
    size_t n = 0, cap = x->a.top != TP_UNSET ? (size_t)x->a.top : 5;
    /* as the CLI: every stack unless framework names one, each result labelled */
    enum tp_framework fw[TP_FW_COUNT];
    size_t n_fw = 0;
    for (int f = 0; f < TP_FW_COUNT; f++)
        if (x->a.framework == TP_UNSET || f == x->a.framework)
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
                                   x->a.framework != TP_UNSET,
                                   st->rejected[TP_REJECT_MEMORY] > 0};
        size_t n_near = n ? 0 : tp_search_nearest(&in, NULL, NULL, x->fixes, TP_MAX_FIXES);
        json_t *doc = tp_json_search(&x->m, &x->c, &x->j, x->so.gbs, st, hits, n, outside,
                                     band, x->fixes, n_near);
        /* the defaults the best layout hangs on: what the search did not choose */
        size_t n_dflt = 0;
        if (n > 0) {
            struct tp_job j = x->j;
            j.framework = hits[0].fw;
            n_dflt = tp_defaults_that_matter(&x->m, &x->c, &j, &hits[0].h.layout, &x->cal,
                                             x->a.given | TP_GIVEN_MBS | TP_GIVEN_GBS |
                                                 TP_GIVEN_RECOMPUTE | TP_GIVEN_ZERO |
                                                 TP_GIVEN_FRAMEWORK,
                                             x->dflt, sizeof x->dflt / sizeof x->dflt[0]);
        }
        if (doc)
            json_object_set_new(doc, "defaults_that_matter",
                                tp_json_default_effects(x->dflt, n_dflt));
        s = dump(doc, 8, out, err);
    }
    free(hits);
    free(st);
    return s;
}

/* memory, estimate, search: the run the options describe. */
static enum tp_status run_json(struct call *x, char **out, struct tp_error *err)
{
    TRY(tp_args_model(&x->a, &x->m, x->notes, sizeof x->notes, err));
    TRY(tp_args_request(&x->a, &x->q, err));
    TRY(tp_request_resolve(&x->q, &x->m, &x->c, &x->j, &x->l, err));
    tp_calib_init(&x->cal);
    if (x->a.calibration)
        TRY(tp_calib_from_file(x->a.calibration, &x->cal, err));
    if (x->a.cmd == TP_VERB_SEARCH)
        return search_json(x, out, err);
    if (x->a.cmd == TP_VERB_ESTIMATE)
        TRY(tp_args_eval_opts(&x->a, &x->o, err));
    else
        tp_eval_opts_init(&x->o);
    TRY(tp_evaluate(&x->m, &x->c, &x->j, &x->l, &x->cal, &x->o, &x->ev, err));
    json_t *doc;
    if (x->a.cmd == TP_VERB_ESTIMATE) {
        doc = tp_json_estimate(&x->m, &x->c, &x->j, &x->l, &x->o, &x->ev, x->a.calibration,
                               x->notes);
    } else {
        size_t n = x->ev.memory.fits ? 0 : tp_memory_suggest(&x->m, &x->c, &x->j, &x->l,
                                                             x->fixes, TP_MAX_FIXES);
        doc = tp_json_memory_report(&x->m, &x->c, &x->j, &x->l, &x->ev.memory,
                                    x->a.per_stage != 0, x->fixes, n, x->notes);
    }
    add_advice(x, doc);
    return dump(doc, x->a.cmd == TP_VERB_ESTIMATE ? 8 : 12, out, err);
}

/* The verbs a call runs and what each needs.  A verb the library composes joins with its bit
   here, one line of the dispatch below and one row of python's _VERBS. */
#define MODEL_VERBS (TP_VERB_PARAMS | TP_VERB_MEMORY | TP_VERB_ESTIMATE | TP_VERB_SEARCH | \
                     TP_VERB_EXPORT)
#define LIST_VERBS (TP_VERB_MODELS | TP_VERB_GPUS | TP_VERB_SIZE)
#define CALL_VERBS (MODEL_VERBS | LIST_VERBS)

enum tp_status tp_call_json(const char *verb, const char *model, const char *const *keys,
                            const char *const *values, size_t n, char **out,
                            struct tp_error *err)
{
    *out = NULL;
    unsigned v = tp_verb_find(verb);
    if (!(v & CALL_VERBS))
        return tp_fail(err, TP_EINVAL, "unknown verb %.40s: expected params, memory, estimate, "
                       "search, export, size, models or gpus (validate, calibrate, checkpoint and logs: "
                       "tp_call_runs_json)",
                       verb ? verb : "(none)");
    if ((v & LIST_VERBS) && model)
        return tp_fail_field(err, TP_EINVAL, "model", "%s takes no model", verb);
    struct call *x = calloc(1, sizeof *x);
    if (!x)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    tp_args_init(v, &x->a);
    x->a.model = model;
    enum tp_status st = set_all(&x->a, keys, values, n, err);
    if (st == TP_OK) {
        if (v == TP_VERB_PARAMS)
            st = params_json(x, out, err);
        else if (v == TP_VERB_MODELS)
            st = dump(tp_json_models(err), 0, out, err);
        else if (v == TP_VERB_GPUS)
            st = dump(tp_json_gpus(), 0, out, err);
        else if (v == TP_VERB_EXPORT)
            st = tp_call_export(&x->a, out, err);
        else if (v == TP_VERB_SIZE)
            st = tp_call_size(&x->a, out, err);
        else
            st = run_json(x, out, err);
    }
    free(x);
    return st;
}

/* validate and calibrate over the loaded runs. */
static enum tp_status runs_verb(const struct tp_args *a, const struct tp_runs *runs, char **out,
                                struct tp_error *err)
{
    struct tp_calib *cal = malloc(sizeof *cal);
    const char *base_name;
    enum tp_status st = cal ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    json_t *doc = NULL;
    if (st == TP_OK && a->cmd == TP_VERB_VALIDATE) {
        struct tp_validation v;
        tp_calib_init(cal);
        if (a->calibration)
            st = tp_calib_from_file(a->calibration, cal, err);
        if (st == TP_OK && (st = tp_validate_runs(runs, cal, &v, err)) == TP_OK) {
            doc = tp_json_validate(&v, a->calibration);
            tp_validation_free(&v);
        }
    } else if (st == TP_OK && (st = tp_calib_base(a->base, cal, &base_name, err)) == TP_OK) {
        struct tp_calibration r;
        struct tp_fit_opts o;
        tp_args_fit_opts(a, &o);
        if ((st = tp_calibrate_runs(runs, cal, &o, !a->no_cv, &r, err)) == TP_OK) {
            if (a->output)
                st = tp_calib_write(&r.fitted, a->output, err);
            if (st == TP_OK)
                doc = tp_json_calibrate(&r, base_name, a->output);
            tp_calibration_free(&r);
        }
    }
    free(cal);
    if (st == TP_OK)
        st = dump(doc, 6, out, err);
    return st;
}

/* logs over the files, as the CLI evaluates them (every file before the document). */
static enum tp_status logs_verb(const struct tp_args *a, char **out, struct tp_error *err)
{
    TRY(tp_logs_check(a, err));
    struct tp_calib *cal = malloc(sizeof *cal);
    struct tp_logs_result *res = calloc(a->n_files, sizeof *res);
    enum tp_status st = cal && res ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    if (st == TP_OK) {
        tp_calib_init(cal);
        if (a->calibration)
            st = tp_calib_from_file(a->calibration, cal, err);
    }
    for (size_t i = 0; st == TP_OK && i < a->n_files; i++) {
        struct tp_log_step *steps;
        size_t n;
        res[i].path = a->files[i];
        st = tp_logs_result_eval(a, cal, &res[i], i, &steps, &n, err);
        free(steps);
    }
    if (st == TP_OK)
        st = dump(tp_json_logs(a, res, a->n_files), 10, out, err);
    free(cal);
    free(res);
    return st;
}

enum tp_status tp_call_runs_json(const char *verb, const char *const *files, size_t n_files,
                                 const char *const *keys, const char *const *values, size_t n,
                                 char **out, struct tp_error *err)
{
    *out = NULL;
    unsigned v = tp_verb_find(verb);
    if (!(v & (TP_VERB_VALIDATE | TP_VERB_CALIBRATE | TP_VERB_CHECKPOINT | TP_VERB_LOGS)))
        return tp_fail(err, TP_EINVAL, "unknown verb %.40s: expected validate, calibrate, "
                       "checkpoint or logs", verb ? verb : "(none)");
    if (n_files == 0)
        return tp_fail_field(err, TP_EINVAL, "files", "%s needs at least one %s", verb,
                             v == TP_VERB_CHECKPOINT ? "checkpoint"
                             : v == TP_VERB_LOGS     ? "log file"
                                                     : "runs file");
    if (n_files > TP_ARGS_MAX_FILES)
        return tp_fail_field(err, TP_EINVAL, "files", "more than %d files", TP_ARGS_MAX_FILES);
    struct tp_args *a = malloc(sizeof *a);
    if (!a)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    tp_args_init(v, a);
    for (size_t i = 0; i < n_files; i++)
        a->files[i] = files[i];
    a->n_files = n_files;
    enum tp_status st = set_all(a, keys, values, n, err);
    if (st == TP_OK && v == TP_VERB_CHECKPOINT) {
        struct tp_ckpt_report *r = malloc(sizeof *r);
        st = r ? tp_checkpoint_report(a, r, err) : tp_fail(err, TP_ENOMEM, "out of memory");
        if (st == TP_OK) {
            st = dump(tp_json_checkpoint(r), 0, out, err);
            tp_checkpoint_report_free(r);
        }
        free(r);
    } else if (st == TP_OK && v == TP_VERB_LOGS) {
        st = logs_verb(a, out, err);
    } else if (st == TP_OK) {
        struct tp_runs runs;
        if ((st = tp_runs_load(files, n_files, &runs, err)) == TP_OK) {
            st = runs_verb(a, &runs, out, err);
            tp_runs_free(&runs);
        }
    }
    free(a);
    return st;
}
