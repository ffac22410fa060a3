/*
 * suggest.c - when a run does not fit: the smallest changes that make it fit.
 *
 * Tries one knob at a time, in the order a practitioner would (cheapest in speed first):
 * smaller micro-batch (same global batch), recompute, a higher ZeRO stage, a lighter optimizer,
 * a fused loss, more tensor / pipeline / context / expert parallelism, CPU offload.  When no
 * single change fits, tries pairs.  Every candidate goes through the same checks and memory
 * model as the original layout.
 */
#include "internal.h"

#include <stddef.h>
#include <string.h>

struct cand {
    struct tp_job j;
    struct tp_layout l;
    char text[96];
};

enum { MAX_CANDS = 48 };

static bool fits(const struct tp_model *m, const struct tp_cluster *c, struct cand *k,
                 double *total)
{
    struct tp_error err;
    /* never a change the job's stack cannot run (no --tp to an Axolotl user) */
    if (tp_layout_check(m, c, &k->j, &k->l, &err) != TP_OK ||
        tp_stack_check(m, &k->j, &k->l, &err) != TP_OK)
        return false;
    struct tp_memory mem;
    tp_memory_worst(m, c, &k->j, &k->l, &mem);
    *total = mem.total_bytes;
    return mem.fits;
}

static size_t push(struct cand *list, size_t n, const struct tp_job *j, const struct tp_layout *l,
                   const char *text)
{
    if (n >= MAX_CANDS)
        return n;
    list[n].j = *j;
    list[n].l = *l;
    tp_snprintf(list[n].text, sizeof list[n].text, "%s", text);
    return n + 1;
}

/* Single-knob candidates, cheapest first. */
static size_t singles(const struct tp_cluster *c, const struct tp_job *j, const struct tp_layout *l,
                      struct cand *out)
{
    size_t n = 0;
    char text[96];
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
        tp_snprintf(text, sizeof text, "--mbs %u --gas %u", x.mbs, x.gas);
        n = push(out, n, j, &x, text);
    }
    for (int rc = (int)l->recompute + 1; rc <= TP_RECOMPUTE_FULL; rc++) {
        x = *l;
        x.recompute = (enum tp_recompute)rc;
        x.recompute_layers = 0;
        n = push(out, n, j, &x, rc == TP_RECOMPUTE_FULL ? "--recompute full" : "--recompute selective");
    }
    for (uint32_t z = l->zero + 1; z <= 3; z++) {
        x = *l;
        x.zero = z;
        tp_snprintf(text, sizeof text, "--zero %u", z);
        n = push(out, n, j, &x, text);
    }
    if (j->optimizer == TP_OPT_ADAMW) {
        y = *j;
        y.optimizer = TP_OPT_ADAMW_8BIT;
        n = push(out, n, &y, l, "--optimizer adamw-8bit");
    }
    if (!j->fused_loss) {
        y = *j;
        y.fused_loss = true;
        n = push(out, n, &y, l, "--fused-loss");
    }
    const struct {
        const char *flag;
        size_t off;
    } dims[] = {{"--tp", offsetof(struct tp_layout, tp)},
                {"--pp", offsetof(struct tp_layout, pp)},
                {"--cp", offsetof(struct tp_layout, cp)},
                {"--ep", offsetof(struct tp_layout, ep)}};
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
            tp_snprintf(text, sizeof text, "%s %u (dp %u)", dims[d].flag, *v, x.dp);
            n = push(out, n, j, &x, text);
        }
    }
    x = *l;
    x.offload = TP_OFFLOAD_OPTIMIZER;
    x.zero = l->zero ? l->zero : 1;
    n = push(out, n, j, &x, l->zero ? "--offload optimizer" : "--zero 1 --offload optimizer");
    x.offload = TP_OFFLOAD_PARAMS;
    x.zero = 3;
    n = push(out, n, j, &x, "--zero 3 --offload params");
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

size_t tp_memory_suggest(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l, struct tp_fix *out,
                         size_t cap)
{
    struct cand first[MAX_CANDS], second[MAX_CANDS]; /* about 20 KB of stack */
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
        tp_snprintf(out[found].text, sizeof out[found].text, "%s", first[i].text);
        out[found].job = first[i].j;
        out[found].layout = first[i].l;
        out[found].total_bytes = total;
        found++;
        /* one recompute / zero / parallel suggestion each: later ones of a kind are larger */
        while (i + 1 < n && strncmp(first[i + 1].text, first[i].text, 5) == 0 && !is_mbs)
            i++;
    }
    if (found > 0)
        return found;
    /* no single change: pairs, in the same order */
    for (size_t a = 0; a < n && found < cap; a++) {
        size_t k = singles(c, &first[a].j, &first[a].l, second);
        for (size_t b = 0; b < k && found < cap; b++) {
            if (strncmp(first[a].text, second[b].text, 5) == 0)
                continue;
            bool seen = false;
            for (size_t f = 0; f < found && !seen; f++)
                seen = same_run(&out[f], &second[b]);
            if (seen || !fits(m, c, &second[b], &total))
                continue;
            tp_snprintf(out[found].text, sizeof out[found].text, "%s %s", first[a].text,
                     second[b].text);
            out[found].job = second[b].j;
            out[found].layout = second[b].l;
            out[found].total_bytes = total;
            found++;
            break;
        }
    }
    return found;
}
