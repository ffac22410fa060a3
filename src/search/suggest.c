/*
 * suggest.c - when a run does not fit: the smallest changes that make it fit.
 *
 * Tries one knob at a time, in the order a practitioner would (cheapest in speed first):
 * smaller micro-batch (same global batch), recompute, a higher ZeRO stage, a lighter optimizer,
 * a fused loss, more tensor / pipeline / context / expert parallelism, CPU offload.  When no
 * single change fits, tries pairs.  Every candidate goes through the same checks and memory
 * model as the original layout.
 */
#include "search_internal.h"

#include <stddef.h>
#include <string.h>

/* A single change: at most two settings (mbs with gas, zero with offload). */
struct cand {
    struct tp_job j;
    struct tp_layout l;
    struct tp_setting set[2];
    size_t n_set;
};

enum { MAX_CANDS = 48 };

/* What each change saves (docs/physics.md §3: the memory terms). */
static const char R_MBS[] = "fewer activations per micro-batch, the global batch kept";
const char TP_REASON_RECOMPUTE[] = "activations recomputed in the backward pass, not stored";
static const char R_ZERO[] = "optimizer states, gradients or weights sharded over data parallel";
static const char R_OPTIMIZER[] = "optimizer moments stored in 8 bits";
const char TP_REASON_FUSED_LOSS[] = "the loss computed in chunks: no full logits stored";
static const char R_SPLIT[] = "weights and activations split over more GPUs";
static const char R_OFFLOAD[] = "optimizer states or parameters held in host memory";

void tp_setting_set(struct tp_setting *s, const char *field, const char *value, uint32_t dp,
                    const char *reason)
{
    tp_snprintf(s->field, sizeof s->field, "%s", field);
    tp_snprintf(s->value, sizeof s->value, "%s", value);
    s->dp = dp;
    s->reason = reason;
}

static bool fits(const struct tp_model *m, const struct tp_cluster *c, struct cand *k,
                 double *total)
{
    struct tp_error err;
    /* never a change the job's stack cannot run (no tensor parallelism to an Axolotl user) */
    if (tp_layout_check(m, c, &k->j, &k->l, &err) != TP_OK ||
        tp_stack_check(m, &k->j, &k->l, &err) != TP_OK)
        return false;
    struct tp_memory mem;
    tp_memory_worst(m, c, &k->j, &k->l, &mem);
    *total = mem.total_bytes;
    return mem.fits;
}

/* Appends a candidate of one setting (and a second when field2 is not NULL). */
static size_t push(struct cand *list, size_t n, const struct tp_job *j, const struct tp_layout *l,
                   const char *field, const char *value, uint32_t dp, const char *reason,
                   const char *field2, const char *value2)
{
    if (n >= MAX_CANDS)
        return n;
    list[n].j = *j;
    list[n].l = *l;
    tp_setting_set(&list[n].set[0], field, value, dp, reason);
    list[n].n_set = 1;
    if (field2)
        tp_setting_set(&list[n].set[list[n].n_set++], field2, value2, 0, reason);
    return n + 1;
}

/* Single-knob candidates, cheapest first. */
static size_t singles(const struct tp_cluster *c, const struct tp_job *j, const struct tp_layout *l,
                      struct cand *out)
{
    size_t n = 0;
    char v1[24], v2[24];
    struct tp_layout x;
    struct tp_job y;
    /* micro-batch: every smaller size that keeps the global batch (mbs * gas constant) */
    for (uint32_t mbs = l->mbs - 1; mbs >= 1 && mbs < l->mbs; mbs--) {
        uint64_t per = (uint64_t)l->mbs * l->gas;
        if (per % mbs)
            continue;
        x = *l;
        x.mbs = mbs;
        x.gas = (uint32_t)(per / mbs);
        tp_snprintf(v1, sizeof v1, "%u", x.mbs);
        tp_snprintf(v2, sizeof v2, "%u", x.gas);
        n = push(out, n, j, &x, "mbs", v1, 0, R_MBS, "gas", v2);
    }
    for (int rc = (int)l->recompute + 1; rc <= TP_RECOMPUTE_FULL; rc++) {
        x = *l;
        x.recompute = (enum tp_recompute)rc;
        x.recompute_layers = 0;
        n = push(out, n, j, &x, "recompute", tp_name(TP_NAMES_RECOMPUTE, rc), 0, TP_REASON_RECOMPUTE,
                 NULL, NULL);
    }
    for (uint32_t z = l->zero + 1; z <= 3; z++) {
        x = *l;
        x.zero = z;
        tp_snprintf(v1, sizeof v1, "%u", z);
        n = push(out, n, j, &x, "zero", v1, 0, R_ZERO, NULL, NULL);
    }
    if (j->optimizer == TP_OPT_ADAMW) {
        y = *j;
        y.optimizer = TP_OPT_ADAMW_8BIT;
        n = push(out, n, &y, l, "optimizer", tp_name(TP_NAMES_OPTIMIZER, TP_OPT_ADAMW_8BIT), 0,
                 R_OPTIMIZER, NULL, NULL);
    }
    if (!j->fused_loss) {
        y = *j;
        y.fused_loss = true;
        n = push(out, n, &y, l, "fused_loss", "true", 0, TP_REASON_FUSED_LOSS, NULL, NULL);
    }
    const struct {
        const char *field;
        size_t off;
    } dims[] = {{"tp", offsetof(struct tp_layout, tp)},
                {"pp", offsetof(struct tp_layout, pp)},
                {"cp", offsetof(struct tp_layout, cp)},
                {"ep", offsetof(struct tp_layout, ep)}};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        for (uint32_t f = 2; f <= 8 && l->dp % f == 0; f *= 2) {
            x = *l;
            uint32_t *v = (uint32_t *)((char *)&x + dims[d].off);
            *v *= f;
            if (dims[d].off != offsetof(struct tp_layout, ep))
                x.dp /= f;
            if (dims[d].off == offsetof(struct tp_layout, tp) && x.etp == l->tp)
                x.etp = x.tp;
            if (dims[d].off == offsetof(struct tp_layout, tp) && x.tp > c->gpus_per_node)
                break;
            tp_snprintf(v1, sizeof v1, "%u", *v);
            n = push(out, n, j, &x, dims[d].field, v1, x.dp, R_SPLIT, NULL, NULL);
        }
    }
    x = *l;
    x.offload = TP_OFFLOAD_OPTIMIZER;
    x.zero = l->zero ? l->zero : 1;
    const char *opt = tp_name(TP_NAMES_OFFLOAD, TP_OFFLOAD_OPTIMIZER);
    n = l->zero ? push(out, n, j, &x, "offload", opt, 0, R_OFFLOAD, NULL, NULL)
                : push(out, n, j, &x, "zero", "1", 0, R_OFFLOAD, "offload", opt);
    x.offload = TP_OFFLOAD_PARAMS;
    x.zero = 3;
    n = push(out, n, j, &x, "zero", "3", 0, R_OFFLOAD, "offload",
             tp_name(TP_NAMES_OFFLOAD, TP_OFFLOAD_PARAMS));
    return n;
}

/* Two candidates describe the same run (a pair found in either order). */
static bool same_run(const struct tp_fix *f, const struct cand *k)
{
    const struct tp_layout *a = &f->layout, *b = &k->l;
    return a->mbs == b->mbs && a->gas == b->gas && a->zero == b->zero &&
           a->recompute == b->recompute && a->offload == b->offload && a->tp == b->tp &&
           a->pp == b->pp && a->cp == b->cp && a->ep == b->ep && a->dp == b->dp &&
           f->job.optimizer == k->j.optimizer && f->job.fused_loss == k->j.fused_loss;
}

/* Two candidates change the same knob (their first settings' fields). */
static bool same_kind(const struct cand *a, const struct cand *b)
{
    return strcmp(a->set[0].field, b->set[0].field) == 0;
}

/* out = the run of `k` with the settings of `first` (may be NULL) then those of `k`. */
static void to_fix(const struct cand *first, const struct cand *k, double total,
                   struct tp_fix *out)
{
    out->n_set = 0;
    for (size_t i = 0; first && i < first->n_set; i++)
        out->set[out->n_set++] = first->set[i];
    for (size_t i = 0; i < k->n_set; i++)
        out->set[out->n_set++] = k->set[i];
    out->job = k->j;
    out->layout = k->l;
    out->total_bytes = total;
}

size_t tp_memory_suggest(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l, struct tp_fix *out,
                         size_t cap)
{
    struct cand first[MAX_CANDS], second[MAX_CANDS]; /* about 80 KB of stack */
    size_t found = 0, n = singles(c, j, l, first);
    double total;
    /* the smallest change of each kind: for micro-batches the largest that fits */
    bool mbs_done = false;
    for (size_t i = 0; i < n && found < cap; i++) {
        bool is_mbs = first[i].l.mbs != l->mbs;
        if (is_mbs && mbs_done)
            continue;
        if (!fits(m, c, &first[i], &total))
            continue;
        mbs_done = mbs_done || is_mbs;
        to_fix(NULL, &first[i], total, &out[found++]);
        /* one recompute / zero / parallel suggestion each: later ones of a kind are larger */
        while (i + 1 < n && same_kind(&first[i + 1], &first[i]) && !is_mbs)
            i++;
    }
    if (found > 0)
        return found;
    /* no single change: pairs, in the same order */
    for (size_t a = 0; a < n && found < cap; a++) {
        size_t k = singles(c, &first[a].j, &first[a].l, second);
        for (size_t b = 0; b < k && found < cap; b++) {
            if (same_kind(&first[a], &second[b]))
                continue;
            bool seen = false;
            for (size_t f = 0; f < found && !seen; f++)
                seen = same_run(&out[f], &second[b]);
            if (seen || !fits(m, c, &second[b], &total))
                continue;
            to_fix(&first[a], &second[b], total, &out[found++]);
            break;
        }
    }
    return found;
}
