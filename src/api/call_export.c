/*
 * call_export.c - `export` for the bindings (tp_call_json): the run the options describe, or
 * with best the search's fastest layout, as the target framework's files, in the document
 * `trainplan export --format json` prints (tp_json_export: the CLI prints the same).  The
 * binding returns the files' contents; writing them is the caller's (the CLI's -o).
 */
#include "api_internal.h"
#include "trainplan_export.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

json_t *tp_json_export(const struct tp_model *m, const struct tp_cluster *c,
                       const struct tp_layout *l, const char *to, const struct tp_export *x,
                       const struct tp_memory *mem, const char *output)
{
    uint32_t nodes = c->n_gpus > c->gpus_per_node
                         ? (c->n_gpus + c->gpus_per_node - 1) / c->gpus_per_node : 1;
    json_t *files = json_array();
    for (size_t i = 0; files && i < x->n_files; i++) {
        char path[4096];
        tp_snprintf(path, sizeof path, "%s/%s", output ? output : ".", x->files[i].name);
        json_array_append_new(files, json_pack("{s:s, s:o, s:s}", "name", x->files[i].name,
                                               "path", output ? json_string(path) : json_null(),
                                               "content", x->files[i].text));
    }
    json_t *doc = json_pack(
        "{s:i, s:s, s:s, s:{s:s, s:s}, s:s, s:I, s:I, s:o, s:I, s:b, s:f, s:s, s:o}",
        "schema_version", TP_SCHEMA_VERSION, "command", "export", "to", to, "model", "name",
        m->name, "family", m->family, "gpu", c->gpu.key, "gpus", (json_int_t)c->n_gpus,
        "nodes", (json_int_t)nodes, "layout", tp_json_layout(l), "global_batch",
        (json_int_t)((uint64_t)l->mbs * l->gas * l->dp), "fits", (int)mem->fits,
        "memory_bytes", mem->total_bytes, "notes", x->notes, "files", files);
    if (doc) /* fits, or tight: within the memory model's error (docs/memory.md) */
        json_object_set_new(doc, "memory_verdict", json_string(tp_mem_verdict_name(mem->verdict)));
    return doc;
}

/* best searches the layout: the layout options are the search's to choose. */
enum tp_status tp_export_args_check(const struct tp_args *a, struct tp_error *err)
{
    if (!a->best)
        return TP_OK;
    const struct {
        bool given;
        const char *key;
    } dims[] = {{a->dp != TP_UNSET, "dp"},       {a->tp != TP_UNSET, "tp"},
                {a->pp != TP_UNSET, "pp"},       {a->vpp != TP_UNSET, "vpp"},
                {a->ep != TP_UNSET, "ep"},       {a->cp != TP_UNSET, "cp"},
                {a->mbs != TP_UNSET, "mbs"},     {a->gas != TP_UNSET, "gas"},
                {a->zero != TP_UNSET, "zero"},   {a->recompute != 0, "recompute"},
                {a->offload != 0, "offload"},    {a->pp_first != TP_UNSET, "pp_first"},
                {a->pp_last != TP_UNSET, "pp_last"}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].given)
            return tp_fail_field(err, TP_EINVAL, dims[i].key, "%s: best=true searches the "
                                 "layout (drop it, or drop best=true to export the layout "
                                 "given)", dims[i].key);
    if (a->gbs == TP_UNSET)
        return tp_fail_field(err, TP_EINVAL, "gbs", "gbs: best=true needs the global batch "
                             "(in sequences)");
    return TP_OK;
}

/* What an export call holds (large: on the heap). */
struct export_call {
    struct tp_args a;
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_request q;
    struct tp_calib cal;
    struct tp_evaluation ev;
    struct tp_export x;
    char notes[512];
    char best_note[512]; /* best: the faster layout the target cannot run */
    struct tp_default_effect dflt[8];
};

static enum tp_status run_export(struct export_call *e, const struct tp_args *a,
                                 enum tp_export_format fmt, char **out, struct tp_error *err)
{
    /* without framework the stack is the target's */
    e->a = *a;
    if (e->a.framework == TP_UNSET &&
        (fmt == TP_EXPORT_DEEPSPEED || fmt == TP_EXPORT_AXOLOTL || fmt == TP_EXPORT_MEGATRON ||
         fmt == TP_EXPORT_MEGATRON_DS))
        e->a.framework = fmt == TP_EXPORT_DEEPSPEED  ? TP_FW_DEEPSPEED
                         : fmt == TP_EXPORT_AXOLOTL  ? TP_FW_AXOLOTL
                         : fmt == TP_EXPORT_MEGATRON ? TP_FW_MEGATRON
                                                     : TP_FW_MEGATRON_DS;
    if (a->best)
        e->a.gbs = TP_UNSET; /* the search keeps the global batch; the default layout may not */
    TRY(tp_args_model(&e->a, &e->m, e->notes, sizeof e->notes, err));
    TRY(tp_args_request(&e->a, &e->q, err));
    TRY(tp_request_resolve(&e->q, &e->m, &e->c, &e->j, &e->l, err));
    tp_calib_init(&e->cal);
    if (a->best) {
        if (a->calibration)
            TRY(tp_calib_from_file(a->calibration, &e->cal, err));
        struct tp_search_opts o;
        struct tp_export_best best;
        TRY(tp_args_search_opts(a, (uint64_t)a->gbs, &o, err));
        TRY(tp_export_best(fmt, a->to, &e->m, &e->c, &e->j, &o, &e->cal, NULL, &best, err));
        if (!best.found)
            return tp_fail_field(err, TP_EINVAL, "best", "no layout of the %llu evaluated "
                                 "fits (search lists the constraints that reject them)",
                                 best.evaluated);
        e->l = best.layout;
        tp_snprintf(e->best_note, sizeof e->best_note, "%s", best.note);
        tp_calib_init(&e->cal); /* the fit below is the built-in calibration's, as the CLI's */
    }
    struct tp_export_opts eo;
    tp_export_opts_init(&eo);
    eo.base_model = a->base_model;
    eo.job_name = a->job_name;
    eo.tokens = a->tokens;
    eo.steps = a->steps > 0 ? (uint64_t)a->steps : 0;
    eo.lr = a->lr;
    if (tp_export_build(fmt, &e->m, &e->c, &e->j, &e->l, &eo, &e->x, err) != TP_OK) {
        char msg[sizeof err->msg];
        tp_snprintf(msg, sizeof msg, "%s", err->msg);
        return tp_fail_field(err, TP_EINVAL, "to", "to %s: %s", a->to, msg);
    }
    struct tp_eval_opts opts;
    tp_eval_opts_init(&opts);
    enum tp_status s = tp_evaluate(&e->m, &e->c, &e->j, &e->l, &e->cal, &opts, &e->ev, err);
    if (s == TP_OK && !e->ev.memory.fits && !a->allow_oom)
        s = tp_fail_field(err, TP_EINVAL, "allow_oom", "the layout does not fit: the worst pipeline "
                          "stage needs %.2f GB of %.2f GB per GPU (memory lists the changes "
                          "that make it fit; allow_oom exports it anyway)",
                          e->ev.memory.total_bytes / 1e9, e->ev.memory.capacity_bytes / 1e9);
    if (s == TP_OK) {
        json_t *doc = tp_json_export(&e->m, &e->c, &e->l, a->to, &e->x, &e->ev.memory, NULL);
        /* the defaults the exported run hangs on, as the CLI adds them: the stack is the
           target's, and with best the search chose the layout */
        unsigned searched = a->best ? TP_GIVEN_MBS | TP_GIVEN_GBS | TP_GIVEN_RECOMPUTE |
                                          TP_GIVEN_ZERO
                                    : 0;
        size_t n_dflt = tp_defaults_that_matter(&e->m, &e->c, &e->j, &e->l, &e->cal,
                                                a->given | searched | TP_GIVEN_FRAMEWORK,
                                                e->dflt, sizeof e->dflt / sizeof e->dflt[0]);
        if (doc)
            json_object_set_new(doc, "defaults_that_matter",
                                tp_json_default_effects(e->dflt, n_dflt));
        if (doc && e->best_note[0]) /* the CLI prints it as a note on stderr */
            json_object_set_new(doc, "best_note", json_string(e->best_note));
        *out = tp_json_dumps(doc, 12);
        s = *out ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    }
    tp_export_free(&e->x);
    return s;
}

enum tp_status tp_call_export(const struct tp_args *a, char **out, struct tp_error *err)
{
    enum tp_export_format fmt;
    if (!a->to)
        return tp_fail_field(err, TP_EINVAL, "to", "export needs to (deepspeed, axolotl, "
                             "megatron, megatron-deepspeed, torchrun, slurm)");
    if (a->output)
        return tp_fail_field(err, TP_EINVAL, "output", "output: the binding returns the files' "
                             "contents (\"files\"); the CLI's -o writes them");
    if (tp_export_format_find(a->to, &fmt, err) != TP_OK) {
        tp_snprintf(err->field, sizeof err->field, "to");
        return TP_EINVAL;
    }
    if (a->tokens > 0 && a->steps > 0)
        return tp_fail_field(err, TP_EINVAL, "steps", "tokens and steps both give the stopping "
                             "point: give one");
    TRY(tp_export_args_check(a, err));
    struct export_call *e = calloc(1, sizeof *e);
    if (!e)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    enum tp_status s = run_export(e, a, fmt, out, err);
    free(e);
    return s;
}
