/*
 * pp_layout.c - Megatron-Core's pipeline layouts per virtual stage: the
 * --pipeline-model-parallel-layout string (megatron/core/transformer/
 * pipeline_parallel_layer_layout.py), the embedding/loss accounting of
 * --account-for-embedding/loss-in-pipeline-split and the uneven first/last stages with
 * interleaving (transformer_block.py get_num_layers_to_build), all as blocks per virtual stage.
 * Virtual stage v is chunk v / pp of pipeline rank v % pp; the stages run in layer order.
 */
#include "plan_internal.h"

#include <string.h>

/* The expanded layout is at most the blocks, the MTP blocks, E, L and the separators. */
#define EXPANDED_MAX (TP_MAX_LAYERS + 2 * TP_MAX_VSTAGES + 64)

static bool put(char *out, size_t *n, char c)
{
    if (*n + 1 >= EXPANDED_MAX)
        return false;
    out[(*n)++] = c;
    out[*n] = '\0';
    return true;
}

/* "*123" at s: the count, *end after it; false when s is not a repeat. */
static bool repeat_count(const char *s, const char **end, unsigned long *count)
{
    if (s[0] != '*' || s[1] < '0' || s[1] > '9')
        return false;
    unsigned long n = 0;
    for (s++; *s >= '0' && *s <= '9'; s++)
        n = n > 100000 ? n : n * 10 + (unsigned long)(*s - '0');
    *end = s;
    *count = n;
    return true;
}

static enum tp_status too_long(struct tp_error *err)
{
    return tp_fail(err, TP_EINVAL, "pp_layout expands to more than %d characters",
                   EXPANDED_MAX);
}

/* Megatron's two substitutions in its order: every "(...)*n" (no nesting), then every
   "x*n"; commas are dropped first.  False when the result would not fit. */
static enum tp_status expand(const char *text, char *out, struct tp_error *err)
{
    char once[EXPANDED_MAX];
    size_t n = 0;
    once[0] = out[0] = '\0';
    for (const char *s = text; *s; s++) {
        if (*s == ',')
            continue;
        const char *close = *s == '(' ? strchr(s, ')') : NULL;
        const char *end;
        unsigned long k;
        if (close && !memchr(s + 1, '(', (size_t)(close - s - 1)) &&
            repeat_count(close + 1, &end, &k)) {
            for (unsigned long r = 0; r < k; r++)
                for (const char *c = s + 1; c < close; c++)
                    if (*c != ',' && !put(once, &n, *c))
                        return too_long(err);
            s = end - 1;
            continue;
        }
        if (!put(once, &n, *s))
            return too_long(err);
    }
    size_t m = 0;
    for (const char *s = once; *s; s++) {
        const char *end;
        unsigned long k;
        if (repeat_count(s + 1, &end, &k)) {
            for (unsigned long r = 0; r < k; r++)
                if (!put(out, &m, *s))
                    return too_long(err);
            s = end - 1;
            continue;
        }
        if (!put(out, &m, *s))
            return too_long(err);
    }
    return TP_OK;
}

/* Stores `nv` stages for l->pp (vpp = nv / pp, which must agree with a vpp > 1 given). */
static enum tp_status set_map(struct tp_layout *l, const uint32_t *blocks, uint32_t nv,
                              const char *what, struct tp_error *err)
{
    if (l->pp < 1)
        return tp_fail(err, TP_EINVAL, "%s needs pp=2 or more", what);
    if (nv == 0 || nv % l->pp != 0)
        return tp_fail(err, TP_EINVAL, "%s lists %u virtual stages, not a multiple of pp=%u",
                       what, nv, l->pp);
    if (l->vpp > 1 && nv != l->pp * l->vpp)
        return tp_fail(err, TP_EINVAL, "%s lists %u virtual stages but pp*vpp = %u*%u = %u", what,
                       nv, l->pp, l->vpp, l->pp * l->vpp);
    if (nv > TP_MAX_VSTAGES)
        return tp_fail(err, TP_EINVAL, "%s lists %u virtual stages (at most %d)", what, nv,
                       TP_MAX_VSTAGES);
    for (uint32_t v = 0; v < nv; v++) {
        if (blocks[v] > UINT16_MAX)
            return tp_fail(err, TP_EINVAL, "%s puts %u blocks on one virtual stage", what,
                           blocks[v]);
        l->pp_map[v] = (uint16_t)blocks[v];
    }
    l->vpp = nv / l->pp;
    l->pp_nv = nv;
    return TP_OK;
}

enum tp_status tp_layout_pp_parse(const char *text, uint32_t n_layers, struct tp_layout *l,
                                  struct tp_error *err)
{
    if (!text || !l)
        return tp_fail(err, TP_EINVAL, "pp_layout: no layout given");
    if (l->pp_first || l->pp_last)
        return tp_fail(err, TP_EINVAL, "pp_layout replaces pp_first/pp_last: give one");
    char s[EXPANDED_MAX];
    TRY(expand(text, s, err));
    uint32_t blocks[TP_MAX_VSTAGES] = {0}, nv = 1, total = 0, n_e = 0, n_l = 0;
    bool mtp_seen = false;
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '|') {
            if (++nv > TP_MAX_VSTAGES)
                return tp_fail(err, TP_EINVAL, "pp_layout lists more than %d virtual stages",
                               TP_MAX_VSTAGES);
        } else if (c == 't') {
            if (mtp_seen)
                return tp_fail(err, TP_EINVAL, "pp_layout: decoder blocks ('t') must come "
                                               "before the MTP blocks ('m')");
            blocks[nv - 1]++;
            total++;
        } else if (c == 'm') {
            mtp_seen = true;
        } else if (c == 'E' || c == 'L') {
            if ((c == 'E' && i != 0) || (c == 'L' && i != len - 1))
                return tp_fail(err, TP_EINVAL, "pp_layout: the embedding 'E' must come first "
                                               "and the loss 'L' last");
            if (c == 'E')
                n_e++;
            else
                n_l++;
        } else {
            return tp_fail(err, TP_EINVAL, "pp_layout: '%c' is not a layer (E embedding, t "
                                           "decoder block, m MTP block, L loss, | between "
                                           "stages, (..)*n and x*n repeat)", c);
        }
    }
    if (n_e != 1 || n_l != 1)
        return tp_fail(err, TP_EINVAL, "pp_layout must start with the embedding 'E' and end "
                                       "with the loss 'L'");
    if (total != n_layers)
        return tp_fail(err, TP_EINVAL, "pp_layout places %u decoder blocks ('t') but "
                                       "num_hidden_layers=%u", total, n_layers);
    return set_map(l, blocks, nv, "pp_layout", err);
}

enum tp_status tp_layout_pp_account(uint32_t n_layers, bool embedding, bool loss,
                                    struct tp_layout *l, struct tp_error *err)
{
    uint32_t nv = l->pp * (l->vpp ? l->vpp : 1);
    uint32_t slots = n_layers + embedding + loss;
    if (nv == 0 || slots % nv != 0 || nv > TP_MAX_VSTAGES)
        return tp_fail(err, TP_EINVAL,
                       "num_hidden_layers=%u%s%s = %u slots do not split evenly over pp*vpp = %u",
                       n_layers, embedding ? " + embedding" : "", loss ? " + loss" : "", slots,
                       nv);
    uint32_t chunk = slots / nv, blocks[TP_MAX_VSTAGES];
    for (uint32_t v = 0; v < nv; v++)
        blocks[v] = chunk;
    blocks[0] -= embedding;
    blocks[nv - 1] -= loss;
    return set_map(l, blocks, nv, "pp_layout=embedding,loss", err);
}

/* --pp-first/--pp-last with vpp > 1, as Megatron-Core builds them: the first (last) rank holds
   pp_first (pp_last) blocks, the other ranks share the rest equally, and every rank splits its
   blocks equally over its vpp chunks. */
enum tp_status tp_layout_pp_uneven(uint32_t n_layers, struct tp_layout *l, struct tp_error *err)
{
    uint32_t p = l->pp, v = l->vpp, nv = p * v;
    uint64_t given = (uint64_t)l->pp_first + l->pp_last;
    uint32_t others = p - (l->pp_first > 0) - (l->pp_last > 0);
    if (p < 2 || nv > TP_MAX_VSTAGES || given > n_layers)
        return tp_fail(err, TP_EINVAL, "pp_first=%u and pp_last=%u do not fit pp=%u "
                       "(num_hidden_layers=%u)", l->pp_first, l->pp_last, p, n_layers);
    uint32_t rest = n_layers - (uint32_t)given;
    if ((others == 0 && rest != 0) || (others > 0 && rest % others != 0))
        return tp_fail(err, TP_EINVAL,
                       "the %u blocks left by pp_first=%u and pp_last=%u do not split evenly "
                       "over the other %u stages (num_hidden_layers=%u, pp=%u)",
                       rest, l->pp_first, l->pp_last, others, n_layers, p);
    uint32_t mid = others ? rest / others : 0, blocks[TP_MAX_VSTAGES];
    for (uint32_t r = 0; r < p; r++) {
        uint32_t b = r == 0 && l->pp_first ? l->pp_first
                     : r == p - 1 && l->pp_last ? l->pp_last
                                                : mid;
        if (b % v != 0)
            return tp_fail(err, TP_EINVAL, "pipeline rank %u holds %u blocks, which do not "
                           "split into vpp=%u equal chunks", r, b, v);
        for (uint32_t c = 0; c < v; c++)
            blocks[c * p + r] = b / v;
    }
    return set_map(l, blocks, nv, "pp_first/pp_last", err);
}

/* One virtual stage's text: "E" first, the blocks ("t", "t*3"), "L" last. */
static void stage_text(uint32_t v, uint32_t nv, uint32_t blocks, char *buf, size_t len)
{
    char t[24] = "";
    if (blocks == 1)
        tp_snprintf(t, sizeof t, "t");
    else if (blocks > 1)
        tp_snprintf(t, sizeof t, "t*%u", blocks);
    tp_snprintf(buf, len, "%s%s%s", v == 0 ? "E" : "", t, v + 1 == nv ? "L" : "");
}

int tp_layout_pp_format(const struct tp_model *m, const struct tp_layout *l, char *buf,
                        size_t len)
{
    uint32_t nv = l->pp * (l->vpp ? l->vpp : 1), blocks[TP_MAX_VSTAGES];
    if (nv == 0 || nv > TP_MAX_VSTAGES)
        return tp_snprintf(buf, len, "%s", "");
    for (uint32_t v = 0; v < nv; v++) {
        if (l->pp_nv == nv) {
            blocks[v] = l->pp_map[v];
        } else if (!m) {
            return tp_snprintf(buf, len, "%s", "");
        } else { /* the default split: the chunks of the stage's ranges, in order */
            uint32_t lo[TP_MAX_LAYERS], hi[TP_MAX_LAYERS];
            uint32_t r = tp_stage_ranges(m, l, v % l->pp, lo, hi);
            uint32_t c = v / l->pp;
            blocks[v] = c < r ? hi[c] - lo[c] : 0;
        }
    }
    size_t used = 0;
    int total = 0;
    for (uint32_t v = 0; v < nv;) {
        uint32_t same = 1;
        while (v > 0 && v + same < nv - 1 && blocks[v + same] == blocks[v])
            same++;
        char one[48], piece[64];
        stage_text(v, nv, blocks[v], one, sizeof one);
        const char *sep = v + same < nv ? "|" : "";
        if (same > 1)
            tp_snprintf(piece, sizeof piece, "(%s|)*%u", one, same);
        else
            tp_snprintf(piece, sizeof piece, "%s%s", one, sep);
        int k = tp_snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, "%s",
                         piece);
        total += k;
        used += (size_t)k;
        v += same;
    }
    return total;
}
