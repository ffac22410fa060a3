/*
 * recompute.c - Megatron-Core's --recompute-modules names (megatron/core/transformer/
 * transformer_config.py: recompute_modules, default ["core_attn"]).
 */
#include "plan_internal.h"

#include <string.h>

static const struct {
    const char *name;
    uint32_t bit;
} MODULES[] = {
    {"core_attn", TP_RC_CORE_ATTN}, {"layernorm", TP_RC_LAYERNORM}, {"moe_act", TP_RC_MOE_ACT},
    {"mlp", TP_RC_MLP},             {"moe", TP_RC_MOE},             {"shared_experts", TP_RC_SHARED},
    {"mla_up_proj", TP_RC_MLA_UP},  {"op", TP_RC_OP},
};
#define N_MODULES (sizeof MODULES / sizeof MODULES[0])

enum tp_status tp_recompute_modules_parse(const char *list, uint32_t *mask, struct tp_error *err)
{
    *mask = 0;
    if (!list)
        return tp_fail(err, TP_EINVAL, "recompute_modules: no list given");
    const char *s = list;
    while (*s) {
        size_t skip = strspn(s, ", \t");
        s += skip;
        size_t n = strcspn(s, ", \t");
        if (n == 0)
            break;
        size_t i = 0;
        while (i < N_MODULES && (strlen(MODULES[i].name) != n || strncmp(MODULES[i].name, s, n)))
            i++;
        if (i == N_MODULES)
            return tp_fail(err, TP_EINVAL,
                           "recompute_modules: \"%.*s\" is not a module (core_attn, layernorm, "
                           "moe_act, mlp, moe, shared_experts, mla_up_proj, op)", (int)(n > 40 ? 40 : n),
                           s);
        *mask |= MODULES[i].bit;
        s += n;
    }
    if (*mask == 0)
        return tp_fail(err, TP_EINVAL, "recompute_modules: the list is empty");
    return TP_OK;
}

int tp_recompute_modules_format(uint32_t mask, char *buf, size_t len)
{
    if (mask == 0)
        mask = TP_RC_CORE_ATTN;
    size_t used = 0;
    int total = 0;
    for (size_t i = 0; i < N_MODULES; i++) {
        if (!(mask & MODULES[i].bit))
            continue;
        int k = tp_snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, "%s%s",
                         total ? "," : "", MODULES[i].name);
        total += k;
        used += (size_t)k;
    }
    return total;
}
