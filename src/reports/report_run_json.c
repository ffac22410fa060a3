/*
 * report_run_json.c - the `estimate`, `memory` and `search` documents (report_json.c has the
 * parts).
 */
#include "reports_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *time_json(const struct tp_time *t)
{
    json_t *o = json_object();
    const struct {
        const char *k;
        double v;
    } f[] = {{"forward_s", t->fwd_s},           {"backward_s", t->bwd_s},
             {"recompute_s", t->recompute_s},   {"gemm_s", t->gemm_s},
             {"attention_s", t->attn_s},        {"memory_bound_s", t->elementwise_s},
             {"tp_comm_s", t->tp_comm_s},       {"cp_comm_s", t->cp_comm_s},
             {"ep_comm_s", t->ep_comm_s},       {"pp_comm_s", t->pp_comm_s},
             {"bubble_s", t->bubble_s},         {"dp_comm_s", t->dp_comm_s},
             {"dp_comm_total_s", t->dp_comm_total_s}, {"optimizer_s", t->optimizer_s},
             {"offload_s", t->offload_s},       {"overhead_s", t->overhead_s}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        json_object_set_new(o, f[i].k, json_real(f[i].v));
    json_object_set_new(o, "slowest_stage", json_integer(t->slowest_stage));
    return o;
}

static json_t *range_json(const struct tp_range *rg)
{
    /* the log-space sd's parts: within a source, between sources, away from the data */
    return json_pack("{s:s, s:s, s:I, s:b, s:f, s:f, s:f, s:f, s:f}", "class", rg->cls, "basis",
                     rg->basis, "held_out_runs", (json_int_t)rg->rows, "widened",
                     (int)rg->widened, "low_factor", rg->lo, "high_factor", rg->hi,
                     "sd_within_source", rg->within, "sd_between_sources", rg->tau,
                     "sd_distance", rg->distance);
}

/* The token budget's figures: steps, wall-clock and its 80% range, GPU-hours, cost. */
static void budget_json(json_t *doc, const struct tp_eval_opts *o, const struct tp_evaluation *ev)
{
    const struct tp_wallclock *w = &ev->wall;
    const struct tp_range *rg = &ev->range;
    if (!(o->tokens > 0)) {
        json_object_set_new(doc, "train_time_s", json_null());
        return;
    }
    json_object_set_new(doc, "train_tokens", json_real(o->tokens));
    json_object_set_new(doc, "train_steps", json_real(w->steps));
    json_object_set_new(doc, "train_time_s", json_real(w->train_s));
    json_object_set_new(doc, "train_time_s_low", json_real(w->train_s / rg->hi));
    json_object_set_new(doc, "train_time_s_high", json_real(w->train_s / rg->lo));
    double other = w->total_s - w->train_s;
    json_object_set_new(doc, "wall_clock_s", json_real(w->total_s));
    json_object_set_new(doc, "wall_clock_s_low", json_real(other + w->train_s / rg->hi));
    json_object_set_new(doc, "wall_clock_s_high", json_real(other + w->train_s / rg->lo));
    json_object_set_new(doc, "goodput", json_real(w->goodput));
    json_object_set_new(doc, "wall_clock",
                        json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "steps_s", w->train_s,
                                  "startup_s", w->startup_s, "load_weights_s", w->load_s,
                                  "checkpoints_s", w->ckpt_s, "saves", w->saves, "evaluation_s",
                                  w->eval_s, "evaluations", w->evals));
    json_object_set_new(doc, "gpu_hours", json_real(ev->gpu_hours));
    json_object_set_new(doc, "cost",
                        o->gpu_hour_price >= 0 ? json_real(ev->cost) : json_null());
}

/* A setting's value as JSON: a whole number, true, or the name. */
static json_t *value_json(const char *v)
{
    size_t n = strspn(v, "0123456789");
    if (n > 0 && v[n] == '\0' && n < 10)
        return json_integer(strtoll(v, NULL, 10));
    return strcmp(v, "true") == 0 ? json_true() : json_string(v);
}

json_t *tp_json_fix(const struct tp_fix *f)
{
    json_t *settings = json_object(), *reasons = json_array();
    for (size_t i = 0; i < f->n_set; i++) {
        const struct tp_setting *s = &f->set[i];
        json_object_set_new(settings, s->field, value_json(s->value));
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = f->set[k].reason == s->reason;
        if (!seen && s->reason)
            json_array_append_new(reasons, json_string(s->reason));
    }
    return json_pack("{s:o, s:I, s:o, s:f}", "settings", settings, "dp",
                     (json_int_t)f->layout.dp, "reasons", reasons, "total_bytes", f->total_bytes);
}

json_t *tp_json_fixes(const struct tp_fix *f, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, tp_json_fix(&f[i]));
    return a;
}

/* fits_with: the fused loss / recompute change that makes the run fit, or null. */
static json_t *hint_json(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l,
                         const struct tp_memory *mem)
{
    struct tp_fix hint;
    return tp_fit_hint(m, c, j, l, mem, &hint) ? tp_json_fix(&hint) : json_null();
}

json_t *tp_json_estimate(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l,
                         const struct tp_eval_opts *o, const struct tp_evaluation *ev,
                         const char *calibration, const char *notes)
{
    const struct tp_time *t = &ev->time;
    const struct tp_range *rg = &ev->range;
    json_t *doc = json_pack(
        "{s:i, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:I}, s:{s:s, s:s, s:s, s:s, s:I, s:o, s:b, s:b, s:s,"
        " s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:s?},"
        " s:o,"
        " s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
        "schema_version", TP_SCHEMA_VERSION, "command", "estimate", "model", "name", m->name,
        "family", m->family, "cluster", "gpu", c->gpu.key, "gpus", (json_int_t)c->n_gpus,
        "gpus_per_node", (json_int_t)c->gpus_per_node, "job", "task",
        tp_name(TP_NAMES_TASK, (int)j->task), "precision",
        tp_name(TP_NAMES_PRECISION, (int)j->precision), "framework",
        tp_stack_get(j->framework)->key, "attention", tp_name(TP_NAMES_ATTENTION, (int)j->attn_impl),
        "seq", (json_int_t)j->seq, "doc_len",
        j->doc_len ? json_integer((json_int_t)j->doc_len) : json_null(), "tp_comm_overlap",
        (int)j->tp_comm_overlap,
        "moe_a2a_overlap", (int)j->moe_a2a_overlap, "moe_dispatcher",
        tp_name(TP_NAMES_MOE_DISPATCHER, (int)j->moe_dispatcher),
        "fp8_param_gather", (int)j->fp8_param_gather, "fp8_attention", (int)j->fp8_attention,
        "zero_quantized_weights",
        (int)j->zero_quant_weights, "zero_quantized_gradients", (int)j->zero_quant_grads,
        "fsdp_backend", (int)j->fsdp_backend, "log_params_norm", (int)j->log_params_norm,
        "log_num_zeros_in_grad", (int)j->log_num_zeros, "fp8_recipe",
        j->precision == TP_PREC_FP8 ? tp_name(TP_NAMES_FP8_RECIPE, (int)j->fp8_recipe) : NULL,
        "layout", tp_json_layout(l), "step_time_s", t->step_s, "tokens_per_step", t->tokens_per_step,
        "tokens_per_s_per_gpu", t->tokens_per_s_per_gpu, "tokens_per_s", t->tokens_per_s,
        "samples_per_s", t->samples_per_s, "model_flops_per_token", t->model_flops_per_token,
        "hw_flops_per_token", t->hw_flops_per_token, "model_tflops_per_gpu",
        t->model_tflops_per_gpu, "mfu", t->mfu, "hw_tflops_per_gpu", t->hw_tflops_per_gpu, "hfu",
        t->hfu, "peak_tflops", t->peak_flops / 1e12, "megatron_tflops_per_gpu",
        t->megatron_tflops_per_gpu, "deepspeed_tflops_per_gpu", t->deepspeed_tflops_per_gpu);
    if (!doc)
        return NULL;
    json_object_set_new(doc, "fits", json_boolean(ev->memory.fits));
    json_object_set_new(doc, "memory_verdict",
                        json_string(tp_mem_verdict_name(ev->memory.verdict)));
    if (tp_job_trainable_frac(j) < 1) { /* the rates above count trainable tokens */
        json_object_set_new(doc, "trainable_frac", json_real(tp_job_trainable_frac(j)));
        json_object_set_new(doc, "slots_per_s_per_gpu", json_real(t->slots_per_s_per_gpu));
    }
    json_object_set_new(doc, "tokens_per_s_per_gpu_low", json_real(t->tokens_per_s_per_gpu * rg->lo));
    json_object_set_new(doc, "tokens_per_s_per_gpu_high", json_real(t->tokens_per_s_per_gpu * rg->hi));
    json_object_set_new(doc, "step_time_s_low", json_real(t->step_s / rg->hi));
    json_object_set_new(doc, "step_time_s_high", json_real(t->step_s / rg->lo));
    json_object_set_new(doc, "range", range_json(rg));
    json_object_set_new(doc, "moe_impl",
                        m->n_experts ? json_string(tp_moe_impl_name(tp_job_moe_impl(m, j, l)))
                                     : json_null());
    if (m->n_experts > 1 && l->ep > 1) { /* the busiest EP rank's load and the routing behind it */
        enum tp_moe_routing routing;
        double load = tp_moe_busiest_load(m, j, l, &routing);
        json_t *job = json_object_get(doc, "job");
        json_object_set_new(job, "moe_routing",
                            json_string(tp_name(TP_NAMES_MOE_ROUTING, (int)routing)));
        json_object_set_new(job, "moe_busiest_load", json_real(load));
    }
    bool packed = tp_attn_span(j) < (double)j->seq;
    json_object_set_new(doc, "flop_convention",
                        json_string(packed ? "exact matmuls, causal attention within each packed "
                                             "document (Megatron-LM 2025); MFU/HFU against the "
                                             "dense 16-bit peak"
                                           : "exact matmuls, causal attention (Megatron-LM 2025); "
                                             "MFU/HFU against the dense 16-bit peak"));
    json_object_set_new(doc, "time", time_json(t));
    json_object_set_new(doc, "memory", tp_json_memory(&ev->memory));
    json_object_set_new(doc, "fits_with", hint_json(m, c, j, l, &ev->memory));
    json_object_set_new(doc, "checkpoint", tp_json_ckpt_plan(&ev->ckpt));
    budget_json(doc, o, ev);
    json_object_set_new(doc, "calibration",
                        json_string(calibration ? calibration : "built-in defaults"));
    json_object_set_new(doc, "outside_calibration",
                        ev->outside[0] ? json_string(ev->outside) : json_null());
    json_object_set_new(doc, "notes", json_string(notes ? notes : ""));
    return doc;
}

json_t *tp_json_memory_report(const struct tp_model *m, const struct tp_cluster *c,
                              const struct tp_job *j, const struct tp_layout *l,
                              const struct tp_memory *worst, bool per_stage,
                              const struct tp_fix *fixes, size_t n_fixes, const char *notes)
{
    json_t *o = tp_json_memory(worst);
    json_t *head = json_pack(
        "{s:i, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:I, s:f}, s:{s:s, s:s, s:s, s:s, s:b, s:I, s:s},"
        " s:o}",
        "schema_version", TP_SCHEMA_VERSION, "command", "memory", "model", "name", m->name,
        "family", m->family, "cluster", "gpu", c->gpu.key, "gpus", (json_int_t)c->n_gpus,
        "gpus_per_node", (json_int_t)c->gpus_per_node, "capacity_bytes", c->gpu.hbm_bytes,
        "job", "task", tp_name(TP_NAMES_TASK, (int)j->task), "optimizer",
        tp_name(TP_NAMES_OPTIMIZER, (int)j->optimizer), "precision",
        tp_name(TP_NAMES_PRECISION, (int)j->precision), "framework",
        tp_stack_get(j->framework)->key, "fsdp_backend", (int)j->fsdp_backend, "seq",
        (json_int_t)j->seq, "attention",
        tp_name(TP_NAMES_ATTENTION, (int)j->attn_impl), "layout", tp_json_layout(l));
    if (!head || !o) {
        json_decref(head);
        json_decref(o);
        return NULL;
    }
    json_object_update(head, o);
    json_decref(o);
    if (per_stage) {
        json_t *stages = json_array();
        for (uint32_t s = 0; s < l->pp; s++) {
            struct tp_memory ms;
            tp_memory_stage(m, c, j, l, s, &ms);
            json_array_append_new(stages, tp_json_memory(&ms));
        }
        json_object_set_new(head, "stages", stages);
    }
    json_object_set_new(head, "fixes", tp_json_fixes(fixes, n_fixes));
    json_object_set_new(head, "notes", json_string(notes ? notes : ""));
    json_object_set_new(head, "fits_with", hint_json(m, c, j, l, worst));
    return head;
}

static json_t *hit_json(const struct tp_stack_hit *sh, const struct tp_stack_hit *best,
                        double band)
{
    const struct tp_search_hit *h = &sh->h;
    const struct tp_layout *l = &h->layout;
    const struct tp_time *t = &h->time;
    char differs[48];
    tp_search_differs(best, sh, differs, sizeof differs);
    json_t *o = json_pack("{s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I,"
                     " s:s, s:I, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                     "stack", tp_stack_get(sh->fw)->key, "tie",
                     (int)(h->time_per_token <= best->h.time_per_token * (1 + band)),
                     "differs_most", differs, "dp", (json_int_t)l->dp, "tp", (json_int_t)l->tp,
                     "pp", (json_int_t)l->pp, "vpp", (json_int_t)l->vpp, "pp_first",
                     (json_int_t)l->pp_first, "pp_last", (json_int_t)l->pp_last, "ep",
                     (json_int_t)l->ep, "cp", (json_int_t)l->cp, "sp", (int)l->sp, "zero",
                     (json_int_t)l->zero, "mbs", (json_int_t)l->mbs, "gas", (json_int_t)l->gas,
                     "recompute", tp_name(TP_NAMES_RECOMPUTE, (int)l->recompute),
                     "recompute_layers", (json_int_t)l->recompute_layers, "offload",
                     tp_name(TP_NAMES_OFFLOAD, (int)l->offload), "step_time_s", t->step_s,
                     "tokens_per_s_per_gpu", t->tokens_per_s_per_gpu, "tokens_per_s",
                     t->tokens_per_s, "model_tflops_per_gpu", t->model_tflops_per_gpu, "mfu",
                     t->mfu, "hw_tflops_per_gpu", t->hw_tflops_per_gpu, "hfu", t->hfu,
                     "memory_bytes", h->memory_bytes, "bubble_s", t->bubble_s);
    /* the pipeline schedule (DualPipe's layouts, docs/moe.md) */
    if (o)
        json_object_set_new(o, "schedule", json_string(tp_name(TP_NAMES_SCHEDULE, (int)l->schedule)));
    return o;
}

json_t *tp_json_search_hit(const struct tp_stack_hit *h, const struct tp_stack_hit *best,
                           double band)
{
    return hit_json(h, best, band);
}

json_t *tp_json_search(const struct tp_model *m, const struct tp_cluster *c,
                       const struct tp_job *j, uint64_t gbs, const struct tp_search_stats *st,
                       const struct tp_stack_hit *hits, size_t n, const char *outside,
                       double band, const struct tp_fix *nearest, size_t n_nearest)
{
    json_t *rej = json_object();
    for (int i = 0; i < TP_REJECT_COUNT; i++)
        json_object_set_new(rej, tp_reject_name((enum tp_reject)i),
                            json_integer((json_int_t)st->rejected[i]));
    json_t *res = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *h = hit_json(&hits[i], &hits[0], band);
        if (h) { /* fits, or tight: within the memory model's error for the stack */
            struct tp_job sj = *j;
            sj.framework = hits[i].fw;
            double margin = tp_memory_margin(&sj, NULL);
            json_object_set_new(h, "memory_verdict", json_string(tp_mem_verdict_name(
                tp_memory_verdict(hits[i].h.memory_bytes, c->gpu.hbm_bytes, margin))));
        }
        json_array_append_new(res, h);
    }
    json_t *doc = json_pack("{s:i, s:s, s:{s:s}, s:{s:s, s:I, s:I}, s:I, s:I, s:I, s:I, s:I,"
                            " s:I, s:I, s:o, s:o}",
                            "schema_version", TP_SCHEMA_VERSION, "command", "search", "model",
                            "name", m->name, "cluster", "gpu", c->gpu.key, "gpus",
                            (json_int_t)c->n_gpus, "gpus_per_node",
                            (json_int_t)c->gpus_per_node, "global_batch", (json_int_t)gbs,
                            "seq", (json_int_t)j->seq, "evaluated", (json_int_t)st->evaluated,
                            "feasible", (json_int_t)st->feasible, "dominated",
                            (json_int_t)st->dominated, "partial_recompute_layouts",
                            (json_int_t)st->partial, "uneven_split_layouts",
                            (json_int_t)st->uneven, "rejected", rej, "results", res);
    if (!doc)
        return NULL;
    json_object_set_new(doc, "outside_calibration",
                        outside && outside[0] ? json_string(outside) : json_null());
    json_object_set_new(doc, "tie_band", isfinite(band) ? json_real(band) : json_null());
    json_object_set_new(doc, "listed", json_integer((json_int_t)n));
    json_object_set_new(doc, "nearest", tp_json_fixes(nearest, n_nearest));
    return doc;
}
