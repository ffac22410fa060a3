/*
 * search.c - every consistent parallel layout of a job on a cluster, the ones that fit, ranked.
 *
 * Enumerates tp, cp, pp, vpp, ep, ZeRO stage, micro-batch (the global batch fixed), recompute
 * mode and optimizer offload; classifies each rejected layout by the first constraint it breaks
 * (each constraint has a name, enum tp_reject); evaluates the rest with the same memory and time
 * functions `trainplan estimate` uses; keeps the best K by step time per token.  Pure: no
 * allocation, no I/O; the caller owns the result array.
 *
 * Pruning never drops a layout that could rank: for one layout, recompute only adds work, so
 * when a layout fits without recompute its selective and full variants are counted as
 * evaluated-and-dominated and skipped; likewise offload only adds time, so it is tried only when
 * the same layout does not fit on the GPU.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

const char *tp_reject_name(enum tp_reject r)
{
    static const char *const names[TP_REJECT_COUNT] = {
        "tp-divides-heads", "size-limit", "pp-divides-layers", "cp-divides-seq",
        "ep-divides-experts", "batch-divides", "framework", "memory"};
    return (unsigned)r < TP_REJECT_COUNT ? names[r] : "?";
}

void tp_search_opts_init(struct tp_search_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_cp = 1;
    o->max_vpp = 8;
    o->max_mbs = 16;
    o->zero_mask = 0xf;
    o->recompute_mask = 0x7;
    o->offload = true;
}

/* Which ZeRO stages / sharding modes a framework runs. */
static unsigned framework_zero(enum tp_framework fw)
{
    switch (fw) {
    case TP_FW_MEGATRON: return 1u << 0 | 1u << 1 | 1u << 3; /* DDP, distopt, Megatron-FSDP */
    case TP_FW_FSDP:
    case TP_FW_TORCHTITAN: return 1u << 0 | 1u << 2 | 1u << 3; /* DDP, SHARD_GRAD_OP, FULL */
    case TP_FW_DEEPSPEED:
    case TP_FW_AXOLOTL: return 0xf;
    }
    return 0xf;
}

/* Model parallelism beyond data parallel: Megatron runs tp, pp, vpp, cp, ep; DeepSpeed and
   Axolotl (HF Trainer) run data parallel (and DeepSpeed MoE's ep); FSDP/torchtitan add tp, pp,
   cp, ep (torchtitan's 2D/3D/4D). */
static bool framework_allows(enum tp_framework fw, const struct tp_layout *l)
{
    if (fw == TP_FW_DEEPSPEED || fw == TP_FW_AXOLOTL)
        return l->tp == 1 && l->pp == 1 && l->cp == 1;
    if (fw == TP_FW_FSDP)
        return l->pp == 1 && l->vpp == 1;
    return true;
}

struct ctx {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_search_opts *o;
    const struct tp_calib *cal;
    struct tp_search_hit *hits;
    size_t cap, n;
    struct tp_search_stats *st;
    double capacity;
};

/* Keeps the best `cap` hits sorted by time per token. */
static void keep(struct ctx *x, const struct tp_layout *l, const struct tp_time *t,
                 const struct tp_memory *mem)
{
    double key = t->step_s / t->tokens_per_step;
    size_t pos = x->n;
    while (pos > 0 && x->hits[pos - 1].time_per_token > key)
        pos--;
    if (pos >= x->cap)
        return;
    size_t last = x->n < x->cap ? x->n : x->cap - 1;
    for (size_t i = last; i > pos; i--)
        x->hits[i] = x->hits[i - 1];
    struct tp_search_hit *h = &x->hits[pos];
    h->layout = *l;
    h->time = *t;
    h->memory_bytes = mem->total_bytes;
    h->time_per_token = key;
    if (x->n < x->cap)
        x->n++;
}

static bool fits(const struct ctx *x, const struct tp_memory *mem)
{
    return mem->total_bytes <= x->capacity;
}

/* The innermost choices for one (tp, cp, pp, vpp, ep, zero, mbs). */
static void evaluate(struct ctx *x, struct tp_layout *l)
{
    struct tp_error err;
    static const enum tp_recompute modes[3] = {TP_RECOMPUTE_NONE, TP_RECOMPUTE_SELECTIVE,
                                               TP_RECOMPUTE_FULL};
    bool fitted = false;
    for (int r = 0; r < 3; r++) {
        if (!(x->o->recompute_mask & (1u << r)))
            continue;
        l->recompute = modes[r];
        l->offload = TP_OFFLOAD_NONE;
        if (fitted) { /* a cheaper recompute mode already fits: this one only adds work */
            x->st->evaluated++;
            x->st->feasible++;
            x->st->dominated++;
            continue;
        }
        struct tp_layout chk = *l;
        x->st->evaluated++;
        if (tp_layout_check(x->m, x->c, x->j, &chk, &err) != TP_OK) {
            x->st->rejected[TP_REJECT_FRAMEWORK]++;
            continue;
        }
        struct tp_memory mem;
        tp_memory_worst(x->m, x->c, x->j, &chk, &mem);
        if (!fits(x, &mem) && x->o->offload && chk.zero >= 1) {
            chk.offload = TP_OFFLOAD_OPTIMIZER;
            tp_memory_worst(x->m, x->c, x->j, &chk, &mem);
        }
        if (!fits(x, &mem)) {
            x->st->rejected[TP_REJECT_MEMORY]++;
            continue;
        }
        fitted = chk.offload == TP_OFFLOAD_NONE;
        struct tp_time t;
        tp_time_step(x->m, x->c, x->j, &chk, x->cal, &t);
        x->st->feasible++;
        if (t.step_s / t.tokens_per_step < x->o->probe_time_per_token)
            x->st->faster_than_probe++;
        keep(x, &chk, &t, &mem);
    }
}

enum tp_reject tp_search_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_search_opts *o,
                               const struct tp_calib *cal, struct tp_layout *l,
                               struct tp_memory *mem, struct tp_time *t)
{
    uint32_t max_tp = o->max_tp ? o->max_tp : c->gpus_per_node;
    uint32_t max_pp = o->max_pp ? o->max_pp : m->n_layers;
    memset(mem, 0, sizeof *mem);
    memset(t, 0, sizeof *t);
    if (l->tp == 0 || l->pp == 0 || l->cp == 0 || l->mbs == 0 || l->vpp == 0 || l->ep == 0)
        return TP_REJECT_LIMIT;
    uint64_t mp = (uint64_t)l->tp * l->pp * l->cp;
    if (c->n_gpus % mp)
        return TP_REJECT_LIMIT;
    l->dp = (uint32_t)(c->n_gpus / mp);
    if (l->tp > max_tp || l->pp > max_pp || l->cp > (o->max_cp ? o->max_cp : 1) ||
        (o->max_ep && l->ep > o->max_ep) || l->mbs > o->max_mbs ||
        (l->pp > 1 && l->vpp > o->max_vpp))
        return TP_REJECT_LIMIT;
    if (m->n_heads % l->tp || m->n_kv_heads % l->tp)
        return TP_REJECT_TP_HEADS;
    if (l->pp > m->n_layers || (l->vpp > 1 && (l->pp == 1 || m->n_layers % (l->pp * l->vpp))))
        return TP_REJECT_PP_LAYERS;
    if (l->cp > 1 && j->seq % (2ull * l->cp))
        return TP_REJECT_CP_SEQ;
    if ((m->n_experts && m->n_experts % l->ep) || (!m->n_experts && l->ep > 1) ||
        ((uint64_t)l->dp * l->cp) % l->ep)
        return TP_REJECT_EP_EXPERTS;
    l->etp = l->tp;
    l->sp = l->tp > 1 && j->framework == TP_FW_MEGATRON;
    if (!framework_allows(j->framework, l) ||
        !(o->zero_mask & framework_zero(j->framework) & (1u << l->zero)))
        return TP_REJECT_FRAMEWORK;
    if (o->gbs % ((uint64_t)l->mbs * l->dp))
        return TP_REJECT_BATCH;
    l->gas = (uint32_t)(o->gbs / ((uint64_t)l->mbs * l->dp));
    struct tp_error err;
    if (tp_layout_check(m, c, j, l, &err) != TP_OK)
        return TP_REJECT_FRAMEWORK;
    tp_memory_worst(m, c, j, l, mem);
    if (mem->total_bytes > c->gpu.hbm_bytes * (1 - o->mem_headroom))
        return TP_REJECT_MEMORY;
    tp_time_step(m, c, j, l, cal, t);
    return TP_REJECT_COUNT;
}

static uint32_t modes_of(unsigned mask)
{
    uint32_t n = 0;
    for (int r = 0; r < 3; r++)
        n += (mask >> r) & 1u;
    return n;
}

/* Counts `k` layouts rejected by `why` without evaluating them. */
static void reject(struct ctx *x, enum tp_reject why, uint64_t k)
{
    x->st->evaluated += k;
    x->st->rejected[why] += k;
}

enum tp_status tp_search(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_search_opts *o,
                         const struct tp_calib *cal, struct tp_search_hit *hits, size_t cap,
                         size_t *n_hits, struct tp_search_stats *st, struct tp_error *err)
{
    memset(st, 0, sizeof *st);
    *n_hits = 0;
    if (c->n_gpus == 0 || o->gbs == 0 || cap == 0)
        return tp_fail(err, TP_EINVAL, "search needs GPUs, a global batch and room for results");
    uint32_t gpn = c->gpus_per_node, n = c->n_gpus;
    uint32_t max_tp = o->max_tp ? o->max_tp : gpn;
    uint32_t max_pp = o->max_pp ? o->max_pp : m->n_layers;
    struct ctx x = {m, c, j, o, cal, hits, cap, 0, st,
                    c->gpu.hbm_bytes * (1 - o->mem_headroom)};
    unsigned zmask = o->zero_mask & framework_zero(j->framework);
    uint32_t modes = modes_of(o->recompute_mask);
    for (uint32_t tp = 1; tp <= n; tp++) {
        if (n % tp)
            continue;
        for (uint32_t cp = 1; cp <= n / tp; cp++) {
            if ((n / tp) % cp)
                continue;
            for (uint32_t pp = 1; pp <= n / tp / cp; pp++) {
                if ((n / tp / cp) % pp)
                    continue;
                uint32_t dp = n / tp / cp / pp;
                /* what the rest of the enumeration would have tried, for the counts */
                uint64_t inner = (uint64_t)modes * 4 * o->max_mbs;
                if (tp > max_tp || pp > max_pp || cp > (o->max_cp ? o->max_cp : 1)) {
                    reject(&x, TP_REJECT_LIMIT, inner);
                    continue;
                }
                if (m->n_heads % tp || m->n_kv_heads % tp) {
                    reject(&x, TP_REJECT_TP_HEADS, inner);
                    continue;
                }
                if (pp > m->n_layers) {
                    reject(&x, TP_REJECT_PP_LAYERS, inner);
                    continue;
                }
                if (j->seq % (2ull * cp) && cp > 1) {
                    reject(&x, TP_REJECT_CP_SEQ, inner);
                    continue;
                }
                for (uint32_t vpp = 1; vpp <= (pp > 1 ? o->max_vpp : 1); vpp++) {
                    if (vpp > 1 && m->n_layers % (pp * vpp)) {
                        reject(&x, TP_REJECT_PP_LAYERS, inner);
                        continue;
                    }
                    uint32_t max_ep = m->n_experts ? dp * cp : 1;
                    for (uint32_t ep = 1; ep <= max_ep; ep++) {
                        if (((uint64_t)dp * cp) % ep)
                            continue;
                        if (m->n_experts && m->n_experts % ep) {
                            reject(&x, TP_REJECT_EP_EXPERTS, inner);
                            continue;
                        }
                        if (o->max_ep && ep > o->max_ep) {
                            reject(&x, TP_REJECT_LIMIT, inner);
                            continue;
                        }
                        struct tp_layout l;
                        tp_layout_init(&l);
                        l.tp = tp;
                        l.cp = cp;
                        l.pp = pp;
                        l.vpp = vpp;
                        l.dp = dp;
                        l.ep = ep;
                        l.etp = tp;
                        l.sp = tp > 1 && j->framework == TP_FW_MEGATRON;
                        if (!framework_allows(j->framework, &l)) {
                            reject(&x, TP_REJECT_FRAMEWORK, inner);
                            continue;
                        }
                        for (uint32_t zero = 0; zero <= 3; zero++) {
                            if (!(zmask & (1u << zero))) {
                                reject(&x, TP_REJECT_FRAMEWORK, (uint64_t)modes * o->max_mbs);
                                continue;
                            }
                            l.zero = zero;
                            for (uint32_t mbs = 1; mbs <= o->max_mbs; mbs++) {
                                uint64_t per = (uint64_t)mbs * dp;
                                if (o->gbs % per) {
                                    reject(&x, TP_REJECT_BATCH, modes);
                                    continue;
                                }
                                l.mbs = mbs;
                                l.gas = (uint32_t)(o->gbs / per);
                                evaluate(&x, &l);
                            }
                        }
                    }
                }
            }
        }
    }
    *n_hits = x.n;
    return TP_OK;
}
