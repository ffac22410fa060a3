/*
 * report_json.c - the JSON documents of the run verbs, built in the library so that the CLI
 * (--format json), a binding (python/trainplan) and a WebAssembly page print the same keys and
 * the same numbers.  jansson objects for C callers, text for the rest (tp_json_dumps).
 */
#include "reports_internal.h"

#include <jansson.h>
#include <stdlib.h>

json_t *tp_json_layout(const struct tp_layout *l)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:s,"
                     " s:I, s:s, s:s}",
                     "dp", (json_int_t)l->dp, "tp", (json_int_t)l->tp, "pp", (json_int_t)l->pp,
                     "vpp", (json_int_t)l->vpp, "pp_first", (json_int_t)l->pp_first, "pp_last",
                     (json_int_t)l->pp_last, "ep", (json_int_t)l->ep, "etp", (json_int_t)l->etp,
                     "cp", (json_int_t)l->cp, "sp", (int)l->sp, "zero", (json_int_t)l->zero,
                     "shard_group", (json_int_t)l->shard_group, "mbs", (json_int_t)l->mbs,
                     "gas", (json_int_t)l->gas, "recompute",
                     tp_name(TP_NAMES_RECOMPUTE, (int)l->recompute), "recompute_layers",
                     (json_int_t)l->recompute_layers, "offload",
                     tp_name(TP_NAMES_OFFLOAD, (int)l->offload), "schedule",
                     tp_name(TP_NAMES_SCHEDULE, (int)l->schedule));
    if (o && l->hpz > 1)
        json_object_set_new(o, "hpz", json_integer((json_int_t)l->hpz));
    if (o && l->pp_nv) {
        char text[1024];
        tp_layout_pp_format(NULL, l, text, sizeof text);
        json_object_set_new(o, "pp_layout", json_string(text));
    }
    return o;
}

json_t *tp_json_memory(const struct tp_memory *m)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
                     " s:b, s:f, s:f}",
                     "stage", (json_int_t)m->stage, "first_layer", (json_int_t)m->first_layer,
                     "layers", (json_int_t)m->n_layers, "params_per_gpu", m->params,
                     "weights_bytes", m->weights_bytes, "grads_bytes", m->grads_bytes,
                     "optimizer_bytes", m->optimizer_bytes, "gather_bytes", m->gather_bytes,
                     "activations_bytes", m->activations_bytes, "logits_bytes", m->logits_bytes,
                     "comm_bytes", m->comm_bytes, "overhead_bytes", m->overhead_bytes,
                     "total_bytes", m->total_bytes, "capacity_bytes", m->capacity_bytes,
                     "headroom_bytes", m->headroom_bytes, "fits", (int)m->fits,
                     "micro_batches_in_flight", m->in_flight,
                     "host_bytes_per_node", m->host_bytes_per_node);
    /* which memory (docs/memory.md), the step's peak, and the verdict with the model's error */
    json_t *kinds = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:f, s:f, s:f, s:s, s:f,"
                              " s:s}",
                              "allocated_bytes", m->allocated_bytes, "reserved_bytes",
                              m->reserved_bytes, "device_bytes", m->device_bytes,
                              "allocator_bytes", m->allocator_bytes, "context_bytes",
                              m->context_bytes, "nccl_bytes", m->nccl_bytes, "peak_phase",
                              m->peak_phase == TP_PHASE_OPTIMIZER ? "optimizer step" : "backward",
                              "backward_bytes", m->backward_bytes, "optimizer_step_bytes",
                              m->optimizer_step_bytes, "step_temp_bytes", m->step_temp_bytes,
                              "margin", m->margin, "margin_class",
                              m->margin_class ? m->margin_class : "", "margin_bytes",
                              m->total_bytes * m->margin, "verdict",
                              tp_mem_verdict_name(m->verdict));
    if (o && kinds)
        json_object_update(o, kinds);
    json_decref(kinds);
    return o;
}

json_t *tp_json_ckpt_plan(const struct tp_ckpt_plan *p)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:o}",
                     "params", p->params, "save_bytes", p->save_bytes, "weights_bytes",
                     p->weights_bytes, "master_bytes", p->master_bytes, "moments_bytes",
                     p->moments_bytes, "model_files", (json_int_t)p->model_files,
                     "model_file_bytes", p->model_file_bytes, "optim_files",
                     (json_int_t)p->optim_files, "optim_file_bytes", p->optim_file_bytes,
                     "consolidated_fp32_bytes", p->consolidated_fp32_bytes,
                     "consolidated_bf16_bytes", p->consolidated_bf16_bytes,
                     "zero_to_fp32_ram_bytes", p->zero_to_fp32_ram_bytes,
                     "zero_to_fp32_disk_bytes", p->zero_to_fp32_disk_bytes, "save_s",
                     p->save_s > 0 ? json_real(p->save_s) : json_null());
}

char *tp_json_dumps(json_t *doc, int digits)
{
    size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                   (digits ? JSON_REAL_PRECISION(digits) : 0);
    char *s = doc ? json_dumps(doc, flags) : NULL;
    json_decref(doc);
    return s;
}

void tp_free(void *p)
{
    free(p);
}
