/*
 * report_advice_json.c - the advice arrays of the run verbs' documents: the changes that make
 * a run faster (tp_time_suggest) and the defaults that move the answer
 * (tp_defaults_that_matter), for the CLI, the binding and the page alike.
 */
#include "reports_internal.h"

#include <jansson.h>
#include <math.h>

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *tp_json_speedups(const struct tp_speedup *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = tp_json_fix(&s[i].fix);
        if (!o)
            continue;
        json_object_set_new(o, "gain", num(s[i].gain));
        json_object_set_new(o, "tokens_per_s_per_gpu", num(s[i].tokens_per_s_per_gpu));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *tp_json_default_effects(const struct tp_default_effect *e, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:b, s:b}", "input", e[i].field,
                         "taken", e[i].taken, "tried", e[i].tried, "tokens_per_s_ratio",
                         num(e[i].ratio), "total_bytes", num(e[i].total_bytes), "fits",
                         (int)e[i].fits, "moves_time", (int)e[i].moves_time, "moves_memory",
                         (int)e[i].moves_memory));
    return a;
}
