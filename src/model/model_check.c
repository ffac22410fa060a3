/*
 * model_check.c - a model's shape is finalized (moved here from check.c, the plan's checks, so
 * that flops.c on the model floor does not call up into it).
 */
#include "model_internal.h"

enum tp_status tp_model_shape_check(const struct tp_model *m, struct tp_error *err)
{
    if (!m || m->n_layers == 0 || m->n_layers > TP_MAX_LAYERS || m->hidden == 0 ||
        m->n_heads == 0 || m->n_kv_heads == 0 || m->head_dim == 0 || m->vocab == 0)
        return tp_fail(err, TP_EINVAL, "the model is not finalized (layers, hidden, heads, "
                                       "head_dim and vocab must be set: tp_model_finalize)");
    for (uint32_t l = 0; l < m->n_layers; l++)
        if (m->layer_mixer[l] > TP_MIXER_NONE || m->layer_attn[l] > TP_LAYER_CHUNKED)
            return tp_fail(err, TP_EINVAL, "block %u has an unknown mixer or attention kind "
                                           "(tp_model_finalize)", l);
    return TP_OK;
}
