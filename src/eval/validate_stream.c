/*
 * validate_stream.c - validate's summary from running counts and bounded reservoirs, so that
 * a runs file of any length is validated in memory that does not grow with its rows (one
 * struct tp_run at a time; `trainplan validate`).
 *
 * The error quantiles (median, p90, bias) come from a reservoir of at most TP_RESERVOIR
 * errors per statistic (Vitter 1985, "Random sampling with a reservoir", Algorithm R), drawn
 * with a fixed seed so a file always gives the same figures.  While a statistic has seen no
 * more errors than the reservoir holds, the reservoir is every error and the quantiles are
 * exactly tp_validation_stats' (the shipped runs files: a few hundred rows).  Groups (source,
 * GPU, framework) are found through a hash table, in order of first appearance.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct reservoir {
    double *v;
    size_t n_seen, n_kept, cap;
    uint64_t rng;
};

struct vgroup {
    char *key;
    struct reservoir r;
    size_t measured, in_range; /* rows with a throughput, and those inside the 80% range */
};

struct vgroups {
    struct vgroup *g;
    size_t n, cap;
    size_t *slot; /* open addressing: group index + 1, 0 empty */
    size_t n_slots;
};

struct tp_validate_stream {
    struct reservoir all, mem, searched;
    struct vgroups groups[3];
    struct tp_validation_summary counts; /* the counters; the statistics come at the end */
    double *scratch;
};

/* splitmix64 (Steele, Lea and Flood 2014): a fixed seed, the same draws on every platform */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bool reservoir_add(struct reservoir *r, double x)
{
    if (isnan(x))
        return true;
    r->n_seen++;
    if (r->n_kept < TP_RESERVOIR) {
        if (r->n_kept == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 16;
            cap = cap > TP_RESERVOIR ? TP_RESERVOIR : cap;
            double *v = realloc(r->v, cap * sizeof *v);
            if (!v)
                return false;
            r->v = v;
            r->cap = cap;
        }
        r->v[r->n_kept++] = x;
        return true;
    }
    uint64_t j = next_rand(&r->rng) % r->n_seen; /* keep x with probability CAP / seen */
    if (j < TP_RESERVOIR)
        r->v[j] = x;
    return true;
}

static void reservoir_stats(const struct reservoir *r, double *scratch, struct tp_err_stats *st)
{
    tp_err_stats(r->v, r->n_kept, scratch, st);
    st->n = r->n_seen;
}

static uint64_t hash_key(const char *k)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ULL;
    return h;
}

static bool rehash(struct vgroups *gs, size_t n_slots)
{
    size_t *slot = calloc(n_slots, sizeof *slot);
    if (!slot)
        return false;
    for (size_t i = 0; i < gs->n; i++) {
        size_t h = (size_t)hash_key(gs->g[i].key) & (n_slots - 1);
        while (slot[h])
            h = (h + 1) & (n_slots - 1);
        slot[h] = i + 1;
    }
    free(gs->slot);
    gs->slot = slot;
    gs->n_slots = n_slots;
    return true;
}

/* The group of `key`, made at its first appearance; NULL when out of memory. */
static struct vgroup *group_of(struct vgroups *gs, const char *key)
{
    if (2 * (gs->n + 1) > gs->n_slots && !rehash(gs, gs->n_slots ? 2 * gs->n_slots : 64))
        return NULL;
    size_t h = (size_t)hash_key(key) & (gs->n_slots - 1);
    while (gs->slot[h]) {
        struct vgroup *g = &gs->g[gs->slot[h] - 1];
        if (strcmp(g->key, key) == 0)
            return g;
        h = (h + 1) & (gs->n_slots - 1);
    }
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? 2 * gs->cap : 16;
        struct vgroup *g = realloc(gs->g, cap * sizeof *g);
        if (!g)
            return NULL;
        gs->g = g;
        gs->cap = cap;
    }
    struct vgroup *g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    g->r.rng = 0x5eed + gs->n;
    size_t len = strlen(key) + 1;
    if (!(g->key = malloc(len)))
        return NULL;
    memcpy(g->key, key, len);
    gs->slot[h] = ++gs->n;
    return g;
}

struct tp_validate_stream *tp_validate_stream_new(void)
{
    struct tp_validate_stream *s = calloc(1, sizeof *s);
    if (s && !(s->scratch = malloc(TP_RESERVOIR * sizeof *s->scratch))) {
        free(s);
        return NULL;
    }
    if (s) {
        s->all.rng = 0x5eed01;
        s->mem.rng = 0x5eed02;
        s->searched.rng = 0x5eed03;
    }
    return s;
}

void tp_validate_stream_free(struct tp_validate_stream *s)
{
    if (!s)
        return;
    free(s->all.v);
    free(s->mem.v);
    free(s->searched.v);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < s->groups[k].n; i++) {
            free(s->groups[k].g[i].key);
            free(s->groups[k].g[i].r.v);
        }
        free(s->groups[k].g);
        free(s->groups[k].slot);
    }
    free(s->scratch);
    free(s);
}

enum tp_status tp_validate_stream_add(struct tp_validate_stream *s, const struct tp_run *run,
                                      const struct tp_run_eval *e, struct tp_error *err)
{
    struct tp_validation_summary *c = &s->counts;
    if (e->measured_oom) { /* as tp_validation_summarize counts them */
        c->oom++;
        c->oom_predicted += !e->predicted_fits;
        c->oom_tight += e->predicted_verdict == TP_MEM_TIGHT;
    } else {
        c->completed++;
        c->completed_fit += e->predicted_fits;
        c->completed_tight += e->predicted_fits && e->predicted_verdict == TP_MEM_TIGHT;
    }
    if (isfinite(e->err)) {
        c->measured++;
        c->in_range += e->in_range;
    }
    c->outside_domain += e->domain != 0;
    bool ok = reservoir_add(&s->all, e->err) && reservoir_add(&s->mem, e->mem_err) &&
              (!run->layout_searched || reservoir_add(&s->searched, e->err));
    for (int k = 0; k < 3 && ok; k++) {
        struct vgroup *g = group_of(&s->groups[k], tp_run_group_key(run, (enum tp_run_group)k));
        ok = g && reservoir_add(&g->r, e->err);
        if (ok && isfinite(e->err)) {
            g->measured++;
            g->in_range += e->in_range;
        }
    }
    return ok ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
}

void tp_validate_stream_summarize(const struct tp_validate_stream *s,
                                  struct tp_validation_summary *out)
{
    *out = s->counts;
    reservoir_stats(&s->all, s->scratch, &out->throughput);
    reservoir_stats(&s->mem, s->scratch, &out->memory);
    reservoir_stats(&s->searched, s->scratch, &out->searched);
    const struct vgroups *src = &s->groups[TP_GROUP_SOURCE];
    double *med = malloc(2 * (src->n ? src->n : 1) * sizeof *med);
    size_t n = 0;
    double share = 0;
    for (size_t i = 0; med && i < src->n; i++) {
        const struct vgroup *g = &src->g[i];
        if (!g->measured)
            continue;
        struct tp_err_stats st;
        reservoir_stats(&g->r, s->scratch, &st);
        med[n++] = st.median_abs;
        share += (double)g->in_range / (double)g->measured;
    }
    tp_validation_balance(med, n, share, med ? med + src->n : NULL, out);
    free(med);
}

size_t tp_validate_stream_groups(const struct tp_validate_stream *s, enum tp_run_group g)
{
    return s->groups[g].n;
}

void tp_validate_stream_group(const struct tp_validate_stream *s, enum tp_run_group g, size_t i,
                              const char **key, struct tp_err_stats *st)
{
    const struct vgroup *x = &s->groups[g].g[i];
    *key = x->key[0] ? x->key : "(none)";
    reservoir_stats(&x->r, s->scratch, st);
}
