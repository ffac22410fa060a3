/*
 * search.c - every consistent parallel layout of a job on a cluster, the ones that fit, ranked.
 *
 * Enumerates tp, cp, pp, vpp, the pipeline split, ep, ZeRO stage, micro-batch (the global batch
 * fixed), recompute mode (none, selective, full, full on N blocks per stage) and optimizer
 * offload; classifies each rejected layout by the first constraint it breaks (each constraint
 * has a name, enum tp_reject); evaluates the rest with the same memory and time functions
 * `trainplan estimate` uses; keeps the best K by step time per token.  Pure: no allocation, no
 * I/O, no threads; the caller owns the result array and may run disjoint shards of the outer
 * (tp, cp, pp) loop in parallel.
 *
 * Pipeline splits: with pp > 1 and no interleaving, the even split when pp divides the layers,
 * and the splits that count the embedding and/or the head as one layer each (Megatron-Core
 * --account-for-embedding/loss-in-pipeline-split, expressed as --decoder-first/last-pipeline-
 * num-layers): (L + 2) / pp blocks per stage with one fewer on the first and the last stage,
 * or (L + 1) / pp with one fewer on the first (or the last) stage.
 *
 * Pruning never drops a layout that could rank: for one layout, recompute only adds work, so
 * when a layout fits without recompute its selective and full variants are counted as
 * evaluated-and-dominated and skipped; likewise offload only adds time, so it is tried only when
 * the same layout does not fit on the GPU.  Partial recompute (full recompute of N blocks per
 * stage) is searched only where full recompute fits: memory falls and time rises with N, so the
 * smallest N that fits wins, and a binary search over N finds it (once on the GPU, once with
 * the optimizer offloaded below that N); every N it probes is counted.
 */
#include "search_internal.h"

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
    o->recompute_mask = TP_SEARCH_RC_NONE | TP_SEARCH_RC_SELECTIVE | TP_SEARCH_RC_FULL |
                        TP_SEARCH_RC_PARTIAL;
    o->offload = true;
    o->uneven_pp = true;
}

/* Splits `text` at commas into a mask of `names` indices; a token no name matches (a `noun`),
   or an empty list, is TP_EINVAL on `field`. */
static enum tp_status parse_list(const char *text, const char *field, const char *noun,
                                 const char *const *names, size_t n_names, const char *expected,
                                 unsigned *mask, struct tp_error *err)
{
    char buf[128];
    if (!text || strlen(text) >= sizeof buf)
        return tp_fail_field(err, TP_EINVAL, field, "%s: expected a comma list of %s", field,
                             expected);
    memcpy(buf, text, strlen(text) + 1);
    *mask = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < n_names && strcmp(tok, names[k]) != 0)
            k++;
        if (k == n_names)
            return tp_fail_field(err, TP_EINVAL, field, "%s: unknown %s \"%s\" (expected %s)",
                                 field, noun, tok, expected);
        *mask |= 1u << k;
    }
    if (!*mask)
        return tp_fail_field(err, TP_EINVAL, field, "%s: no %s given (expected %s)", field, noun,
                             expected);
    return TP_OK;
}

enum tp_status tp_search_parse_recompute_modes(const char *text, unsigned *mask,
                                               struct tp_error *err)
{
    /* in TP_SEARCH_RC_* bit order */
    static const char *const NAMES[] = {"none", "selective", "full", "partial"};
    TRY(parse_list(text, "recompute_modes", "mode", NAMES, 4, "none, selective, full, partial",
                   mask, err));
    if ((*mask & TP_SEARCH_RC_PARTIAL) && !(*mask & TP_SEARCH_RC_FULL))
        return tp_fail_field(err, TP_EINVAL, "recompute_modes", "recompute_modes: partial (full "
                             "recompute of N blocks) is tried only together with full");
    return TP_OK;
}

enum tp_status tp_search_parse_zero_stages(const char *text, unsigned *mask, struct tp_error *err)
{
    static const char *const NAMES[] = {"0", "1", "2", "3"};
    return parse_list(text, "zero_stages", "stage", NAMES, 4, "0, 1, 2, 3", mask, err);
}

static int cmp_u(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

int tp_search_hit_cmp(const struct tp_search_hit *a, const struct tp_search_hit *b)
{
    if (a->time_per_token != b->time_per_token)
        return a->time_per_token < b->time_per_token ? -1 : 1;
    const struct tp_layout *x = &a->layout, *y = &b->layout;
    const uint32_t fx[] = {x->tp, x->pp, x->vpp, x->cp, x->ep, x->dp, x->zero, x->mbs,
                           (uint32_t)x->recompute, x->recompute_layers, x->pp_first, x->pp_last,
                           (uint32_t)x->offload};
    const uint32_t fy[] = {y->tp, y->pp, y->vpp, y->cp, y->ep, y->dp, y->zero, y->mbs,
                           (uint32_t)y->recompute, y->recompute_layers, y->pp_first, y->pp_last,
                           (uint32_t)y->offload};
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++)
        if (fx[i] != fy[i])
            return cmp_u(fx[i], fy[i]);
    return 0;
}

size_t tp_search_merge(const struct tp_search_hit *a, size_t na, const struct tp_search_hit *b,
                       size_t nb, struct tp_search_hit *out, size_t cap)
{
    size_t i = 0, k = 0, n = 0;
    while (n < cap && (i < na || k < nb)) {
        if (k >= nb || (i < na && tp_search_hit_cmp(&a[i], &b[k]) <= 0))
            out[n++] = a[i++];
        else
            out[n++] = b[k++];
    }
    return n;
}

void tp_search_stats_add(struct tp_search_stats *sum, const struct tp_search_stats *part)
{
    sum->evaluated += part->evaluated;
    sum->feasible += part->feasible;
    sum->dominated += part->dominated;
    for (int i = 0; i < TP_REJECT_COUNT; i++)
        sum->rejected[i] += part->rejected[i];
    sum->partial += part->partial;
    sum->uneven += part->uneven;
    sum->faster_than_probe += part->faster_than_probe;
}

/* Which ZeRO stages / sharding modes a framework runs (struct tp_stack). */
static unsigned framework_zero(enum tp_framework fw)
{
    return tp_stack_get(fw)->zero_mask;
}

/* Whether the stack runs the model-parallel part of a layout with one of its ZeRO stages (the
   search tries each separately; a job with ZeRO++ options passes only at stage 3). */
static bool framework_allows(const struct tp_model *m, const struct tp_job *j,
                             const struct tp_layout *l)
{
    struct tp_layout probe = *l;
    unsigned mask = tp_stack_get(j->framework)->zero_mask;
    for (probe.zero = 0; probe.zero <= 3; probe.zero++)
        if ((mask & (1u << probe.zero)) && tp_stack_check(m, j, &probe, NULL) == TP_OK)
            return true;
    return false;
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
    bool uneven;         /* the current layouts have an uneven pipeline split */
    uint32_t max_blocks; /* blocks of the largest stage of the current layouts */
    enum tp_schedule sched; /* the pipeline schedule of the current layouts */
};

/* Keeps the best `cap` hits in tp_search_hit_cmp order. */
static void keep(struct ctx *x, const struct tp_layout *l, const struct tp_time *t,
                 const struct tp_memory *mem)
{
    struct tp_search_hit h;
    h.layout = *l;
    h.time = *t;
    h.memory_bytes = mem->total_bytes;
    h.time_per_token = t->step_s / t->tokens_per_step;
    size_t pos = x->n;
    while (pos > 0 && tp_search_hit_cmp(&x->hits[pos - 1], &h) > 0)
        pos--;
    if (pos >= x->cap)
        return;
    size_t last = x->n < x->cap ? x->n : x->cap - 1;
    for (size_t i = last; i > pos; i--)
        x->hits[i] = x->hits[i - 1];
    x->hits[pos] = h;
    if (x->n < x->cap)
        x->n++;
}

/* Counts one layout considered. */
static void count(struct ctx *x, bool partial)
{
    x->st->evaluated++;
    x->st->uneven += x->uneven;
    x->st->partial += partial;
}

/* Counts `k` layouts rejected by `why` without evaluating them. */
static void reject(struct ctx *x, enum tp_reject why, uint64_t k)
{
    x->st->evaluated += k;
    x->st->rejected[why] += k;
    if (x->uneven)
        x->st->uneven += k;
}

enum fit { FIT_NONE = 1, FIT_OFFLOAD, FIT_PLAIN };

/* Does the checked layout `l` fit on the GPU, else with the optimizer offloaded (ZeRO >= 1)?
   Sets l->offload and `mem`.  `plain_fails`: it is already known not to fit on the GPU. */
static enum fit fit_of(const struct ctx *x, struct tp_layout *l, struct tp_memory *mem,
                       bool plain_fails)
{
    l->offload = TP_OFFLOAD_NONE;
    if (!plain_fails) {
        tp_memory_worst(x->m, x->c, x->j, l, mem);
        if (mem->total_bytes <= x->capacity)
            return FIT_PLAIN;
    }
    if (x->o->offload && l->zero >= 1 && tp_stack_offloads(x->j, l->zero, TP_OFFLOAD_OPTIMIZER)) {
        l->offload = TP_OFFLOAD_OPTIMIZER;
        tp_memory_worst(x->m, x->c, x->j, l, mem);
        if (mem->total_bytes <= x->capacity)
            return FIT_OFFLOAD;
    }
    l->offload = TP_OFFLOAD_NONE;
    return FIT_NONE;
}

/* Times a feasible layout and keeps it. */
static void timed(struct ctx *x, const struct tp_layout *l, const struct tp_memory *mem)
{
    struct tp_time t;
    tp_time_step(x->m, x->c, x->j, l, x->cal, &t);
    if (t.step_s / t.tokens_per_step < x->o->probe_time_per_token)
        x->st->faster_than_probe++;
    keep(x, l, &t, mem);
}

/* Partial recompute of a layout whose full recompute (`full`, checked, classified `f_full`)
   fits: the smallest N blocks per stage that fits on the GPU, and the smallest that fits with
   the optimizer offloaded below it.  `none_offload`: no recompute already fits offloaded, so
   offloaded partial recompute cannot win; `off_fitted`: no or selective recompute fits
   offloaded, so offloaded full recompute cannot.  Counts every N probed. */
static void partial(struct ctx *x, const struct tp_layout *full, const struct tp_memory *full_mem,
                    enum fit f_full, bool none_offload, bool off_fitted)
{
    uint32_t top = x->max_blocks - 1; /* N = 1..top; N = max_blocks is full recompute */
    uint8_t state[TP_MAX_LAYERS + 1];  /* enum fit of each N probed, 0 = not probed */
    memset(state, 0, (size_t)top + 2);
    struct tp_layout p = *full;
    struct tp_memory mem;
    bool can_offload = x->o->offload && full->zero >= 1 &&
                       tp_stack_offloads(x->j, full->zero, TP_OFFLOAD_OPTIMIZER);
    uint32_t best_plain = 0, best_off = 0; /* 0 = none; top + 1 = full recompute */
    if (x->o->exhaustive) {
        for (uint32_t n = 1; n <= top; n++) {
            p.recompute_layers = n;
            state[n] = (uint8_t)fit_of(x, &p, &mem, false);
        }
    } else {
        if (f_full == FIT_PLAIN) {
            uint32_t lo = 1, hi = top + 1; /* the answer lies in [lo, hi] */
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                p.recompute_layers = mid;
                state[mid] = (uint8_t)fit_of(x, &p, &mem, false);
                if (state[mid] == FIT_PLAIN)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            best_plain = lo;
        }
        uint32_t below = f_full == FIT_PLAIN ? best_plain : top + 1;
        if (can_offload && !none_offload && below > 1) {
            uint32_t lo = 1, hi = below; /* `below` stands for "none below it" */
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (!state[mid]) {
                    p.recompute_layers = mid;
                    state[mid] = (uint8_t)fit_of(x, &p, &mem, true);
                }
                if (state[mid] >= FIT_OFFLOAD)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            if (lo < below)
                best_off = lo;
        }
        if (f_full == FIT_OFFLOAD && best_off == 0 && !off_fitted)
            best_off = top + 1;
    }
    /* count every N probed; time the winners (all that fit when exhaustive) */
    for (uint32_t n = 1; n <= top; n++) {
        if (!state[n])
            continue;
        count(x, true);
        if (state[n] == FIT_NONE) {
            x->st->rejected[TP_REJECT_MEMORY]++;
            continue;
        }
        x->st->feasible++;
        bool win = x->o->exhaustive || n == best_plain || n == best_off;
        if (!win) {
            x->st->dominated++;
            continue;
        }
        p.recompute_layers = n;
        fit_of(x, &p, &mem, state[n] != FIT_PLAIN);
        timed(x, &p, &mem);
    }
    bool full_wins = x->o->exhaustive || (f_full == FIT_PLAIN ? best_plain == top + 1
                                                              : best_off == top + 1);
    if (full_wins)
        timed(x, full, full_mem);
    else
        x->st->dominated++;
}

/* The innermost choices for one (tp, cp, pp, vpp, split, ep, zero, mbs). */
static void evaluate(struct ctx *x, struct tp_layout *l)
{
    struct tp_error err;
    static const enum tp_recompute modes[3] = {TP_RECOMPUTE_NONE, TP_RECOMPUTE_SELECTIVE,
                                               TP_RECOMPUTE_FULL};
    bool exhaustive = x->o->exhaustive;
    bool fitted = false;       /* a cheaper recompute mode fits on the GPU */
    bool off_fitted = false;   /* a cheaper recompute mode fits with the optimizer offloaded */
    bool none_offload = false; /* no recompute fits with the optimizer offloaded */
    for (int r = 0; r < 3; r++) {
        if (!(x->o->recompute_mask & (1u << r)))
            continue;
        l->recompute = modes[r];
        l->recompute_layers = 0;
        l->offload = TP_OFFLOAD_NONE;
        count(x, false);
        if (fitted && !exhaustive) { /* a cheaper recompute mode already fits: this one only
                                        adds work */
            x->st->feasible++;
            x->st->dominated++;
            continue;
        }
        struct tp_layout chk = *l;
        if (tp_layout_check(x->m, x->c, x->j, &chk, &err) != TP_OK) {
            x->st->rejected[TP_REJECT_FRAMEWORK]++;
            continue;
        }
        struct tp_memory mem;
        enum fit f = fit_of(x, &chk, &mem, false);
        if (f == FIT_NONE) {
            x->st->rejected[TP_REJECT_MEMORY]++;
            continue;
        }
        x->st->feasible++;
        fitted = f == FIT_PLAIN;
        bool partial_too = r == 2 && (x->o->recompute_mask & TP_SEARCH_RC_PARTIAL) &&
                           x->max_blocks >= 2;
        if (partial_too)
            partial(x, &chk, &mem, f, none_offload, off_fitted && !exhaustive);
        else if (f == FIT_OFFLOAD && off_fitted && !exhaustive)
            x->st->dominated++; /* a cheaper mode fits offloaded too */
        else
            timed(x, &chk, &mem);
        none_offload = none_offload || (r == 0 && f == FIT_OFFLOAD);
        off_fitted = off_fitted || f == FIT_OFFLOAD;
    }
}

/* Valid pipeline split for the search: the even one needs pp | L (vpp 1). */
static bool split_ok(const struct tp_model *m, const struct tp_search_opts *o,
                     const struct tp_layout *l)
{
    if (l->pp_first || l->pp_last) {
        struct tp_error err;
        return o->uneven_pp && tp_layout_check_split(m, l, &err) == TP_OK;
    }
    return l->vpp > 1 || m->n_layers % l->pp == 0;
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
    if (m->n_heads % l->tp || m->n_kv_heads % l->tp || !tp_mixer_tp_ok(m, l->tp))
        return TP_REJECT_TP_HEADS;
    if (l->pp > m->n_layers || (l->vpp > 1 && (l->pp == 1 || m->n_layers % (l->pp * l->vpp))) ||
        !split_ok(m, o, l))
        return TP_REJECT_PP_LAYERS;
    if (l->cp > 1 && j->seq % (2ull * l->cp))
        return TP_REJECT_CP_SEQ;
    if ((m->n_experts && m->n_experts % l->ep) || (!m->n_experts && l->ep > 1) ||
        ((uint64_t)l->dp * l->cp) % l->ep)
        return TP_REJECT_EP_EXPERTS;
    l->etp = l->tp;
    l->sp = l->tp > 1 && tp_stack_get(j->framework)->sp && !o->no_sp;
    if (o->gbs % ((uint64_t)l->mbs * l->dp))
        return TP_REJECT_BATCH;
    l->gas = (uint32_t)(o->gbs / ((uint64_t)l->mbs * l->dp));
    if (!(o->zero_mask & (1u << l->zero)) || tp_stack_check(m, j, l, NULL) != TP_OK)
        return TP_REJECT_FRAMEWORK;
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

/* The pipeline splits tried for (pp, vpp): at most two (see the top of the file). */
static uint32_t splits(const struct tp_model *m, const struct tp_search_opts *o, uint32_t pp,
                       uint32_t vpp, uint32_t first[2], uint32_t last[2])
{
    uint32_t n = 0, L = m->n_layers;
    if (vpp > 1 || pp == 1 || L % pp == 0) {
        first[n] = last[n] = 0;
        n++;
    }
    if (vpp > 1 || pp == 1 || !o->uneven_pp)
        return n;
    /* embedding and head counted as a layer each; with pp 2 that is the even split */
    if (pp > 2 && (L + 2) % pp == 0 && (L + 2) / pp >= 2) {
        first[n] = last[n] = (L + 2) / pp - 1;
        n++;
    }
    /* the embedding only, or the head only */
    if ((L + 1) % pp == 0 && (L + 1) / pp >= 2) {
        first[n] = (L + 1) / pp - 1;
        last[n++] = 0;
        first[n] = 0;
        last[n++] = (L + 1) / pp - 1;
    }
    return n;
}

/* One pipeline shape (tp, cp, pp, vpp and the first/last stage sizes): every expert-parallel
   size, ZeRO stage and micro-batch size the stack and the batch allow. */
static void try_split(struct ctx *x, uint32_t tp, uint32_t cp, uint32_t pp, uint32_t vpp,
                      uint32_t first, uint32_t last, uint32_t dp, unsigned zmask, uint32_t modes,
                      uint64_t inner)
{
    const struct tp_model *m = x->m;
    const struct tp_job *j = x->j;
    const struct tp_search_opts *o = x->o;
    x->uneven = first || last;
    uint32_t max_ep = m->n_experts ? dp * cp : 1;
    for (uint32_t ep = 1; ep <= max_ep; ep++) {
        if (((uint64_t)dp * cp) % ep)
            continue;
        if (m->n_experts && m->n_experts % ep) {
            reject(x, TP_REJECT_EP_EXPERTS, inner);
            continue;
        }
        if (o->max_ep && ep > o->max_ep) {
            reject(x, TP_REJECT_LIMIT, inner);
            continue;
        }
        struct tp_layout l;
        tp_layout_init(&l);
        l.tp = tp;
        l.cp = cp;
        l.pp = pp;
        l.vpp = vpp;
        l.pp_first = first;
        l.pp_last = last;
        l.schedule = x->sched;
        l.gas = l.schedule == TP_SCHED_DUALPIPE ? 2 * pp : 1; /* (its rule: per mbs below) */
        l.dp = dp;
        l.ep = ep;
        l.etp = tp;
        l.sp = tp > 1 && tp_stack_get(j->framework)->sp && !o->no_sp;
        if (!framework_allows(m, j, &l)) {
            reject(x, TP_REJECT_FRAMEWORK, inner);
            continue;
        }
        x->max_blocks = 0;
        for (uint32_t g = 0; g < pp; g++) {
            uint32_t b = tp_stage_blocks(m, &l, g);
            x->max_blocks = b > x->max_blocks ? b : x->max_blocks;
        }
        for (uint32_t zero = 0; zero <= 3; zero++) {
            l.zero = zero;
            if (!(zmask & (1u << zero)) || tp_stack_check(m, j, &l, NULL) != TP_OK) {
                reject(x, TP_REJECT_FRAMEWORK, (uint64_t)modes * o->max_mbs);
                continue;
            }
            for (uint32_t mbs = 1; mbs <= o->max_mbs; mbs++) {
                uint64_t per = (uint64_t)mbs * dp;
                if (o->gbs % per) {
                    reject(x, TP_REJECT_BATCH, modes);
                    continue;
                }
                l.mbs = mbs;
                l.gas = (uint32_t)(o->gbs / per);
                if (!tp_dualpipe_gas_ok(&l)) {
                    reject(x, TP_REJECT_BATCH, modes);
                    continue;
                }
                evaluate(x, &l);
            }
        }
    }
}

/* DeepSeek-V3's DualPipe (moe_comm.c) for an MoE model on an even pipeline, where the stack
   runs it (tp_stack_check rejects it elsewhere): the splits above, and the one DeepSeek-V3 ran
   (1 + 15 x 4 of 61 blocks, docs/moe.md): a light first stage, whose rank also holds the last
   stage with the head, the others ceil(L / pp) blocks each. */
static void try_dualpipe(struct ctx *x, uint32_t tp, uint32_t cp, uint32_t pp, uint32_t dp,
                         unsigned zmask, uint32_t modes, uint64_t inner, const uint32_t *firsts,
                         const uint32_t *lasts, uint32_t n_split)
{
    const struct tp_model *m = x->m;
    enum tp_framework fw = x->j->framework;
    if (m->n_experts == 0 || pp < 2 || pp % 2 || (fw != TP_FW_MEGATRON && fw != TP_FW_TORCHTITAN))
        return;
    x->sched = TP_SCHED_DUALPIPE;
    for (uint32_t s = 0; s < n_split; s++) {
        x->uneven = firsts[s] || lasts[s];
        try_split(x, tp, cp, pp, 1, firsts[s], lasts[s], dp, zmask, modes, inner);
    }
    uint32_t L = m->n_layers, mid = (L + pp - 1) / pp;
    if (x->o->uneven_pp && L % pp && (uint64_t)(pp - 1) * mid < L) {
        uint32_t first = L - (pp - 1) * mid;
        bool seen = false;
        for (uint32_t s = 0; s < n_split; s++)
            seen = seen || (firsts[s] == first && lasts[s] == 0);
        if (!seen) {
            x->uneven = true;
            try_split(x, tp, cp, pp, 1, first, 0, dp, zmask, modes, inner);
        }
    }
    x->uneven = false;
    x->sched = TP_SCHED_1F1B;
}

/* One (tp, cp, pp): the limits and the model's divisibility, then every interleaving and
   uneven split of the pipeline. */
static void try_grid(struct ctx *x, uint32_t tp, uint32_t cp, uint32_t pp, uint32_t dp,
                     unsigned zmask, uint32_t modes)
{
    const struct tp_model *m = x->m;
    const struct tp_search_opts *o = x->o;
    uint32_t max_tp = o->max_tp ? o->max_tp : x->c->gpus_per_node;
    uint32_t max_pp = o->max_pp ? o->max_pp : m->n_layers;
    /* what the rest of the enumeration would have tried, for the counts */
    uint64_t inner = (uint64_t)modes * 4 * o->max_mbs;
    if (tp > max_tp || pp > max_pp || cp > (o->max_cp ? o->max_cp : 1)) {
        reject(x, TP_REJECT_LIMIT, inner);
        return;
    }
    if (m->n_heads % tp || m->n_kv_heads % tp || !tp_mixer_tp_ok(m, tp)) {
        reject(x, TP_REJECT_TP_HEADS, inner);
        return;
    }
    if (pp > m->n_layers) {
        reject(x, TP_REJECT_PP_LAYERS, inner);
        return;
    }
    if (x->j->seq % (2ull * cp) && cp > 1) {
        reject(x, TP_REJECT_CP_SEQ, inner);
        return;
    }
    for (uint32_t vpp = 1; vpp <= (pp > 1 ? o->max_vpp : 1); vpp++) {
        if (vpp > 1 && m->n_layers % (pp * vpp)) {
            reject(x, TP_REJECT_PP_LAYERS, inner);
            continue;
        }
        uint32_t firsts[2], lasts[2];
        uint32_t n_split = splits(m, o, pp, vpp, firsts, lasts);
        if (n_split == 0)
            reject(x, TP_REJECT_PP_LAYERS, inner);
        for (uint32_t s = 0; s < n_split; s++)
            try_split(x, tp, cp, pp, vpp, firsts[s], lasts[s], dp, zmask, modes, inner);
        x->uneven = false;
        if (vpp == 1)
            try_dualpipe(x, tp, cp, pp, dp, zmask, modes, inner, firsts, lasts, n_split);
    }
}

enum tp_status tp_search(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_search_opts *o,
                         const struct tp_calib *cal, struct tp_search_hit *hits, size_t cap,
                         size_t *n_hits, struct tp_search_stats *st, struct tp_error *err)
{
    if (!m || !c || !j || !o || !cal || !hits || !n_hits || !st)
        return tp_fail(err, TP_EINVAL, "search needs a model, cluster, job, options, "
                                       "calibration and outputs");
    memset(st, 0, sizeof *st);
    *n_hits = 0;
    if (c->n_gpus == 0 || o->gbs == 0 || cap == 0)
        return tp_fail(err, TP_EINVAL, "search needs GPUs, a global batch and room for results");
    TRY(tp_model_shape_check(m, err));
    TRY(tp_cluster_check(c, j, err));
    TRY(tp_flash1_check(m, c, j, err));
    if (o->n_shards > 1 && o->shard >= o->n_shards)
        return tp_fail(err, TP_EINVAL, "search shard %u is out of range (0..%u)", o->shard,
                       o->n_shards - 1);
    uint32_t n = c->n_gpus;
    struct ctx x = {m, c, j, o, cal, hits, cap, 0, st,
                    c->gpu.hbm_bytes * (1 - o->mem_headroom), false, 0, TP_SCHED_1F1B};
    unsigned zmask = o->zero_mask & framework_zero(j->framework);
    uint32_t modes = modes_of(o->recompute_mask);
    uint64_t index = 0; /* running index of the (tp, cp, pp) combinations, for sharding */
    for (uint32_t tp = 1; tp <= n; tp++) {
        if (n % tp)
            continue;
        for (uint32_t cp = 1; cp <= n / tp; cp++) {
            if ((n / tp) % cp)
                continue;
            for (uint32_t pp = 1; pp <= n / tp / cp; pp++) {
                if ((n / tp / cp) % pp)
                    continue;
                if (o->n_shards > 1 && index++ % o->n_shards != o->shard)
                    continue;
                try_grid(&x, tp, cp, pp, n / tp / cp / pp, zmask, modes);
            }
        }
    }
    *n_hits = x.n;
    return TP_OK;
}
