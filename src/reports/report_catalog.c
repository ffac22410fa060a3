/*
 * report_catalog.c - the documents of `trainplan models` and `trainplan gpus`: the built-in
 * presets with their counts and sources, the accelerator catalog.
 */
#include "reports_internal.h"

#include <jansson.h>
#include <stdlib.h>

json_t *tp_json_models(struct tp_error *err)
{
    json_t *list = json_array();
    struct tp_model *m = malloc(sizeof *m);
    for (size_t i = 0; list && m && i < tp_preset_count(); i++) {
        const struct tp_preset_info *info = tp_preset_get(i);
        struct tp_params p;
        if (tp_model_from_preset(info->key, m, err) != TP_OK) { /* a broken table row: a bug */
            json_decref(list);
            free(m);
            return NULL;
        }
        tp_count_params(m, &p);
        json_t *o = json_object();
        json_object_set_new(o, "key", json_string(info->key));
        json_object_set_new(o, "aliases", json_string(info->aliases));
        json_object_set_new(o, "label", json_string(info->label));
        json_object_set_new(o, "family", json_string(m->family));
        json_object_set_new(o, "params_total", json_integer((json_int_t)p.total));
        json_object_set_new(o, "params_active", json_integer((json_int_t)p.active));
        json_object_set_new(o, "source", json_string(info->source));
        json_array_append_new(list, o);
    }
    free(m);
    if (!list) {
        tp_fail(err, TP_ENOMEM, "out of memory");
        return NULL;
    }
    return json_pack("{s:i, s:o}", "schema_version", TP_SCHEMA_VERSION, "models", list);
}

json_t *tp_json_gpus(void)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < tp_gpu_count(); i++) {
        const struct tp_gpu *g = tp_gpu_get(i);
        const double *f = g->peak_flops;
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f,"
                            " s:f, s:I, s:f, s:f, s:s}",
                            "key", g->key, "label", g->label, "fp32_flops", f[TP_FP32],
                            "tf32_flops", f[TP_TF32], "bf16_flops", f[TP_BF16], "fp8_flops",
                            f[TP_FP8], "fp4_flops", f[TP_FP4], "hbm_bytes", g->hbm_bytes,
                            "hbm_bw", g->hbm_bw, "intra_bw", g->intra_bw, "gpus_per_node",
                            (json_int_t)g->gpus_per_node, "inter_bw", g->inter_bw, "host_bw",
                            g->host_bw, "sms", (json_int_t)g->sms, "mamf_bf16", g->mamf_bf16,
                            "mamf_fp8", g->mamf_fp8, "source", g->source));
    }
    return list ? json_pack("{s:i, s:o}", "schema_version", TP_SCHEMA_VERSION, "gpus", list)
                : NULL;
}
