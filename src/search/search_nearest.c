/*
 * search_nearest.c - when no layout is feasible: the nearest change of each kind that makes one
 * feasible, as data (struct tp_fix: the field, its value, what it relieves).  The CLI renders
 * the changes as flags (--gbs 96), the JSON as keys and values python takes as keywords.
 *
 * Kinds, in order: another stack (only when the caller named one), the nearest global batch
 * that a layout divides (within 64 sequences), more GPUs (2x, 4x, 8x).
 */
#include "search_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The search on the calling thread (tp_search_stacks): any feasible layout, the fastest. */
static bool search_here(void *ctx, const struct tp_cluster *c, const struct tp_job *j,
                        const struct tp_search_opts *o, const enum tp_framework *fw, size_t n_fw,
                        struct tp_stack_hit *best)
{
    const struct tp_nearest_in *in = ctx;
    struct tp_job jt = *j;
    struct tp_search_stats st;
    size_t n = 0;
    struct tp_error err;
    return tp_search_stacks(in->m, c, &jt, o, in->cal, fw, n_fw, best, 1, &n, &st, &err) ==
               TP_OK && n > 0;
}

static void found(struct tp_fix *f, const char *field, const char *value, const char *reason,
                  const struct tp_job *j, const struct tp_stack_hit *best)
{
    memset(f, 0, sizeof *f);
    tp_setting_set(&f->set[0], field, value, 0, reason);
    f->n_set = 1;
    f->job = *j;
    f->job.framework = best->fw;
    f->layout = best->h.layout;
    f->total_bytes = best->h.memory_bytes;
}

/* Another stack than the one named. */
static bool other_stack(const struct tp_nearest_in *in, tp_search_fn fn, void *ctx,
                        struct tp_fix *out)
{
    struct tp_stack_hit best;
    for (int f = 0; f < TP_FW_COUNT; f++) {
        enum tp_framework fw = (enum tp_framework)f;
        if (fw == in->fw[0] || !fn(ctx, in->c, in->j, in->o, &fw, 1, &best))
            continue;
        found(out, "framework", tp_stack_get(fw)->key, "the named stack runs no layout that fits",
              in->j, &best);
        return true;
    }
    return false;
}

/* The nearest global batch a layout divides, below first at equal distance. */
static bool nearest_gbs(const struct tp_nearest_in *in, tp_search_fn fn, void *ctx,
                        struct tp_fix *out)
{
    struct tp_search_opts g = *in->o;
    struct tp_stack_hit best;
    for (uint64_t d = 1; d <= in->o->gbs && d <= 64; d++)
        for (int s = -1; s <= 1; s += 2) {
            if (s < 0 && d >= in->o->gbs)
                continue;
            g.gbs = s < 0 ? in->o->gbs - d : in->o->gbs + d;
            if (!fn(ctx, in->c, in->j, &g, in->fw, in->n_fw, &best))
                continue;
            char v[24];
            tp_snprintf(v, sizeof v, "%llu", (unsigned long long)g.gbs);
            found(out, "gbs", v, "no layout's mbs*dp divides the global batch", in->j, &best);
            return true;
        }
    return false;
}

/* More GPUs of the same kind: 2x, 4x, 8x. */
static bool more_gpus(const struct tp_nearest_in *in, tp_search_fn fn, void *ctx,
                      struct tp_fix *out)
{
    struct tp_stack_hit best;
    for (uint32_t k = 2; k <= 8; k *= 2) {
        struct tp_cluster c = *in->c;
        c.n_gpus = in->c->n_gpus * k;
        if (!fn(ctx, &c, in->j, in->o, in->fw, in->n_fw, &best))
            continue;
        char v[24];
        tp_snprintf(v, sizeof v, "%u", c.n_gpus);
        found(out, "gpus", v, in->memory_bound ? "the model needs more memory than the GPUs hold"
                                               : "no layout divides the GPUs",
              in->j, &best);
        return true;
    }
    return false;
}

size_t tp_search_nearest(const struct tp_nearest_in *in, tp_search_fn fn, void *ctx,
                         struct tp_fix *out, size_t cap)
{
    size_t n = 0;
    struct tp_nearest_in here = *in;
    if (!fn) {
        fn = search_here;
        ctx = &here;
    }
    if (n < cap && in->framework_given && other_stack(in, fn, ctx, &out[n]))
        n++;
    if (n < cap && nearest_gbs(in, fn, ctx, &out[n]))
        n++;
    if (n < cap && more_gpus(in, fn, ctx, &out[n]))
        n++;
    return n;
}
