/*
 * pp_stages.c - which blocks each pipeline stage holds (a checked layout's plan, moved here
 * from memory.c so that layout.c and pp_layout.c do not call up into the evaluation floor;
 * memory.c and time.c read it).  Megatron-Core's stage split: [MEG-M] (docs/references.md).
 */
#include "plan_internal.h"

/* The blocks [lo, hi) of stage `stage` without interleaving.  With pp_first/pp_last
   (Megatron-Core --decoder-first/last-pipeline-num-layers) the stages not given share the
   rest equally; otherwise stage s holds [s L / p, (s+1) L / p) (uneven depths spread their
   remainder over the later stages). */
static void stage_span(const struct tp_model *m, const struct tp_layout *l, uint32_t stage,
                       uint32_t *lo, uint32_t *hi)
{
    if ((l->pp_first || l->pp_last) && l->pp >= 2) {
        uint32_t given = l->pp_first + l->pp_last;
        uint32_t others = l->pp - (l->pp_first > 0) - (l->pp_last > 0);
        uint32_t mid = others ? (m->n_layers - given) / others : 0;
        uint32_t first = l->pp_first ? l->pp_first : mid;
        uint32_t last = l->pp_last ? l->pp_last : mid;
        *lo = stage == 0 ? 0 : first + (stage - 1) * mid;
        *hi = stage == 0 ? first : stage == l->pp - 1 ? *lo + last : *lo + mid;
        return;
    }
    *lo = (uint32_t)((uint64_t)stage * m->n_layers / l->pp);
    *hi = (uint32_t)((uint64_t)(stage + 1) * m->n_layers / l->pp);
}

/* The blocks of pipeline stage `stage` as contiguous ranges [lo[i], hi[i]): interleaved, chunk
   c of L/(p v) blocks goes to stage c mod p (v ranges); otherwise one range (stage_span).
   Returns the number of ranges (at most TP_MAX_LAYERS). */
uint32_t tp_stage_ranges(const struct tp_model *m, const struct tp_layout *l, uint32_t stage,
                         uint32_t *lo, uint32_t *hi)
{
    if (l->pp_nv && l->pp_nv == l->pp * l->vpp) { /* Megatron-Core's map, in layer order */
        uint32_t at = 0, n = 0;
        for (uint32_t v = 0; v < l->pp_nv; v++) {
            if (v % l->pp == stage && l->pp_map[v] > 0) {
                lo[n] = at;
                hi[n++] = at + l->pp_map[v];
            }
            at += l->pp_map[v];
        }
        return n;
    }
    if (l->vpp > 1) {
        uint32_t chunk = m->n_layers / (l->pp * l->vpp), n = 0;
        for (uint32_t c = stage; c < l->pp * l->vpp; c += l->pp, n++) {
            lo[n] = c * chunk;
            hi[n] = (c + 1) * chunk;
        }
        return n;
    }
    stage_span(m, l, stage, &lo[0], &hi[0]);
    return 1;
}

bool tp_stage_same_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t s)
{
    if (s < 2 || s + 1 >= l->pp || l->pp_nv)
        return false;
    uint32_t lo0[TP_MAX_LAYERS], hi0[TP_MAX_LAYERS], lo1[TP_MAX_LAYERS], hi1[TP_MAX_LAYERS];
    uint32_t n0 = tp_stage_ranges(m, l, s - 1, lo0, hi0), n1 = tp_stage_ranges(m, l, s, lo1, hi1);
    if (n0 != n1)
        return false;
    for (uint32_t r = 0; r < n0; r++) {
        if (hi0[r] - lo0[r] != hi1[r] - lo1[r])
            return false;
        for (uint32_t i = 0; i < hi0[r] - lo0[r]; i++) {
            uint32_t a = lo0[r] + i, b = lo1[r] + i; /* what tp_block_kind reads, compared raw */
            if (m->layer_mixer[a] != m->layer_mixer[b] || m->layer_attn[a] != m->layer_attn[b] ||
                m->layer_moe[a] != m->layer_moe[b] || m->layer_no_ffn[a] != m->layer_no_ffn[b])
                return false;
        }
    }
    return true;
}

uint32_t tp_stage_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t stage)
{
    if (l->pp == 0 || stage >= l->pp || l->vpp == 0) /* not a checked layout */
        return 0;
    if (l->pp_nv && l->pp_nv == l->pp * l->vpp) {
        uint32_t b = 0;
        for (uint32_t v = stage; v < l->pp_nv; v += l->pp)
            b += l->pp_map[v];
        return b;
    }
    if (l->vpp > 1)
        return m->n_layers / (l->pp * l->vpp) * l->vpp;
    uint32_t lo, hi;
    stage_span(m, l, stage, &lo, &hi);
    return hi - lo;
}
