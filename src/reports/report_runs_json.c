/*
 * report_runs_json.c - the JSON documents of the verbs over runs files, `validate` and
 * `calibrate`, built in the library so that the CLI (--format json) and python/trainplan print
 * the same keys and the same numbers; and the calibration file calibrate writes.
 */
#include "reports_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *stats_json(const struct tp_err_stats *st)
{
    return json_pack("{s:I, s:o, s:o, s:o}", "rows", (json_int_t)st->n, "median_abs_error",
                     num_or_null(st->median_abs), "p90_abs_error", num_or_null(st->p90_abs),
                     "bias", num_or_null(st->bias));
}

static json_t *group_json(const struct tp_validation *v, enum tp_run_group g)
{
    json_t *obj = json_object();
    const char *key;
    struct tp_err_stats st;
    for (size_t i = 0; i < v->runs->n; i++)
        if (tp_validation_group(v, g, i, &key, &st))
            json_object_set_new(obj, key, stats_json(&st));
    return obj;
}

static json_t *row_json(const struct tp_run *run, const struct tp_run_eval *e)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
        " s:b, s:b, s:o}",
        "row_id", run->row_id, "source", run->source, "gpu", run->cluster.gpu.key,
        "framework", run->framework_key, "num_gpus", (json_int_t)run->cluster.n_gpus,
        "measured_from", e->measured_from, "predicted_tokens_per_s_per_gpu",
        num_or_null(e->predicted_tokens_per_s_per_gpu), "measured_tokens_per_s_per_gpu",
        num_or_null(e->measured_tokens_per_s_per_gpu), "native_unit", e->native_unit,
        "predicted_native", num_or_null(e->predicted_native), "measured_native",
        num_or_null(e->measured_native), "error", num_or_null(e->err),
        "predicted_step_time_s", num_or_null(e->predicted_step_s), "predicted_memory_gib",
        num_or_null(e->predicted_mem_gib), "measured_memory_gib",
        num_or_null(e->measured_mem_gib), "memory_error", num_or_null(e->mem_err),
        "measured_oom", e->measured_oom, "predicted_fits", e->predicted_fits,
        "outside_domain", e->domain ? json_string(e->domain_note) : json_null());
    if (!o)
        return NULL;
    json_object_set_new(o, "memory_verdict", json_string(tp_mem_verdict_name(e->predicted_verdict)));
    json_object_set_new(o, "measured_memory_kind", json_string(tp_mem_kind_name(run->mem_kind)));
    json_object_set_new(o, "range_class", json_string(e->range.cls));
    json_object_set_new(o, "predicted_tokens_per_s_per_gpu_low",
                        num_or_null(e->predicted_tokens_per_s_per_gpu * e->range.lo));
    json_object_set_new(o, "predicted_tokens_per_s_per_gpu_high",
                        num_or_null(e->predicted_tokens_per_s_per_gpu * e->range.hi));
    json_object_set_new(o, "in_range", isfinite(e->err) ? json_boolean(e->in_range)
                                                         : json_null());
    const struct tp_layout *l = &run->layout; /* the assumed layout, when the row gave none */
    json_object_set_new(o, "layout_searched",
                        run->layout_searched
                            ? json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
                                        "tp", (json_int_t)l->tp, "pp", (json_int_t)l->pp,
                                        "vpp", (json_int_t)l->vpp, "dp", (json_int_t)l->dp,
                                        "cp", (json_int_t)l->cp, "ep", (json_int_t)l->ep,
                                        "mbs", (json_int_t)l->mbs, "gas", (json_int_t)l->gas,
                                        "zero", (json_int_t)l->zero, "sp", l->sp)
                            : json_null());
    json_object_set_new(o, "n_heads_assumed", run->heads_assumed
                                                  ? json_integer((json_int_t)run->model.n_heads)
                                                  : json_null());
    return o;
}

/* The summary object from a summary, its three group objects and the counts of rows not
   compared (shared by the in-memory and the streaming validation). */
static json_t *summary_json(const struct tp_validation_summary *s, json_t *by_source,
                            json_t *by_gpu, json_t *by_framework, size_t skipped,
                            size_t duplicates, size_t unmeasured)
{
    json_t *o = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I}, s:I, s:I, s:I, s:I}", "throughput",
        stats_json(&s->throughput), "by_source", by_source, "by_gpu", by_gpu, "by_framework",
        by_framework, "memory", stats_json(&s->memory), "oom", "rows", (json_int_t)s->oom,
        "predicted_oom", (json_int_t)s->oom_predicted, "outside_domain",
        (json_int_t)s->outside_domain, "skipped", (json_int_t)skipped, "duplicates",
        (json_int_t)duplicates, "unmeasured", (json_int_t)unmeasured);
    if (!o)
        return NULL;
    json_object_set_new(o, "completed", json_integer((json_int_t)s->completed));
    json_object_set_new(o, "completed_predicted_to_fit", json_integer((json_int_t)s->completed_fit));
    json_object_set_new(o, "completed_predicted_tight", json_integer((json_int_t)s->completed_tight));
    json_object_set_new(o, "oom_predicted_tight", json_integer((json_int_t)s->oom_tight));
    json_object_set_new(o, "in_range", json_integer((json_int_t)s->in_range));
    json_object_set_new(o, "in_range_of", json_integer((json_int_t)s->measured));
    json_object_set_new(o, "layout_searched", stats_json(&s->searched));
    /* every source weighing one (null when no source has a throughput row) */
    json_object_set_new(o, "sources", json_integer((json_int_t)s->sources));
    json_object_set_new(o, "source_median_abs", isfinite(s->source_median)
                                                    ? json_real(s->source_median) : json_null());
    json_object_set_new(o, "source_in_range", isfinite(s->source_in_range)
                                                  ? json_real(s->source_in_range) : json_null());
    return o;
}

static json_t *stream_group_json(const struct tp_validate_stream *v, enum tp_run_group g)
{
    json_t *obj = json_object();
    const char *key;
    struct tp_err_stats st;
    for (size_t i = 0; i < tp_validate_stream_groups(v, g); i++) {
        tp_validate_stream_group(v, g, i, &key, &st);
        json_object_set_new(obj, key, stats_json(&st));
    }
    return obj;
}

json_t *tp_json_validate_row(const struct tp_run *run, const struct tp_run_eval *e)
{
    return row_json(run, e);
}

json_t *tp_json_validate_stream_summary(const struct tp_validate_stream *v, size_t skipped,
                                        size_t duplicates, size_t unmeasured)
{
    struct tp_validation_summary s;
    tp_validate_stream_summarize(v, &s);
    return summary_json(&s, stream_group_json(v, TP_GROUP_SOURCE),
                        stream_group_json(v, TP_GROUP_GPU),
                        stream_group_json(v, TP_GROUP_FRAMEWORK), skipped, duplicates,
                        unmeasured);
}

static json_t *summary_json_of(const struct tp_validation *v)
{
    struct tp_validation_summary s;
    tp_validation_summarize(v, &s);
    return summary_json(&s, group_json(v, TP_GROUP_SOURCE), group_json(v, TP_GROUP_GPU),
                        group_json(v, TP_GROUP_FRAMEWORK), v->runs->n_skipped,
                        v->runs->duplicates, v->runs->unmeasured);
}

json_t *tp_json_validate(const struct tp_validation *v, const char *calibration)
{
    const struct tp_runs *runs = v->runs;
    json_t *rows = json_array();
    for (size_t i = 0; i < runs->n; i++)
        json_array_append_new(rows, row_json(&runs->runs[i], &v->ev[i]));
    for (size_t i = 0; i < runs->n_skipped; i++)
        json_array_append_new(rows, json_pack("{s:s, s:s}", "row_id", runs->skipped[i].row_id,
                                              "skipped", runs->skipped[i].why));
    return json_pack("{s:i, s:s, s:s, s:o, s:o}", "schema_version", TP_SCHEMA_VERSION,
                     "calibration", calibration ? calibration : "built-in defaults",
                     "error_definition", "predicted / measured - 1", "rows", rows, "summary",
                     summary_json_of(v));
}

/* calibrate's statistics: null where nothing was measured (no fold, one source). */
static json_t *fit_stat_json(const struct tp_err_stats *st)
{
    if (st->n == 0 || isnan(st->median_abs))
        return json_null();
    return json_pack("{s:I, s:f, s:f, s:f}", "rows", (json_int_t)st->n, "median_abs_error",
                     st->median_abs, "p90_abs_error", st->p90_abs, "bias", st->bias);
}

json_t *tp_json_fit_params(const struct tp_fit_result *res)
{
    json_t *params = json_array();
    for (size_t i = 0; i < res->n_params; i++)
    {
        const struct tp_fit_param *p = &res->params[i];
        /* what pins it (calibrate --explain): rows, sources, standard error, prior, bound */
        json_array_append_new(params, json_pack(
            "{s:s, s:f, s:f, s:b, s:I, s:I, s:s, s:o, s:f, s:f, s:b, s:s, s:b}", "name",
            p->name, "before", p->before, "after", p->after, "identified", p->identified,
            "rows", (json_int_t)p->rows, "sources", (json_int_t)p->sources, "top_source",
            p->top_source, "se", isfinite(p->se) ? json_real(p->se) : json_null(), "prior",
            p->prior, "prior_sd", p->prior_sd, "measured_prior", p->measured_prior, "cite",
            p->cite ? p->cite : "", "at_bound", p->at_bound));
    }
    return params;
}

/* The fitted calibration as the file holds it, parsed back into the document. */
static json_t *calib_json(const struct tp_calib *c)
{
    size_t len = tp_calib_to_json(c, NULL, 0);
    char *text = malloc(len);
    json_t *o = NULL;
    if (text) {
        tp_calib_to_json(c, text, len);
        o = json_loads(text, 0, NULL);
    }
    free(text);
    return o ? o : json_null();
}

json_t *tp_json_calibrate(const struct tp_calibration *r, const char *base_name,
                          const char *output)
{
    json_t *by_source = json_object();
    const char *src;
    struct tp_err_stats st[3];
    for (size_t i = 0; i < r->n; i++)
        if (tp_calibration_source(r, i, &src, st))
            json_object_set_new(by_source, src, json_pack("{s:o, s:o, s:o}", "before",
                                                          fit_stat_json(&st[0]), "after",
                                                          fit_stat_json(&st[1]), "held_out",
                                                          fit_stat_json(&st[2])));
    struct tp_err_stats sb, sa, sc;
    tp_calibration_stats(r, r->before, NULL, &sb);
    tp_calibration_stats(r, r->after, NULL, &sa);
    tp_calibration_stats(r, r->held_out, NULL, &sc);
    return json_pack(
        "{s:i, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:o, "
        "s:o, s:I}",
        "schema_version", TP_SCHEMA_VERSION, "base", base_name, "output", output ? output : "",
        "rows", (json_int_t)r->n, "fitted_rows", (json_int_t)r->res.rows, "sources", (json_int_t)r->n_sources, "skipped",
        (json_int_t)r->runs->n_skipped, "objective_before", r->res.objective_before,
        "objective_after", r->res.objective_after, "evaluations", (json_int_t)r->res.evaluations,
        "params", tp_json_fit_params(&r->res), "before", fit_stat_json(&sb), "after",
        fit_stat_json(&sa), "leave_one_source_out", fit_stat_json(&sc), "folds",
        (json_int_t)r->res.folds, "fold_rows", (json_int_t)r->res.fold_rows, "by_source", by_source,
        "calibration", calib_json(&r->fitted), "not_fitted_assumed", (json_int_t)r->assumed);
}

enum tp_status tp_calib_base(const char *base, struct tp_calib *out, const char **name,
                             struct tp_error *err)
{
    tp_calib_init(out);
    *name = "built-in defaults";
    if (base && strcmp(base, "prior") == 0) {
        tp_calib_prior(out);
        *name = "physics priors";
    } else if (base) {
        TRY(tp_calib_from_file(base, out, err));
        *name = base;
    }
    return TP_OK;
}

enum tp_status tp_calib_write(const struct tp_calib *c, const char *path, struct tp_error *err)
{
    size_t len = tp_calib_to_json(c, NULL, 0);
    char *text = malloc(len);
    FILE *f = text ? fopen(path, "w") : NULL;
    if (!f) {
        free(text);
        return tp_fail_field(err, TP_EIO, "output", "%s: cannot write the calibration file",
                             path);
    }
    tp_calib_to_json(c, text, len);
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    free(text);
    return ok ? TP_OK : tp_fail_field(err, TP_EIO, "output", "%s: write failed", path);
}
