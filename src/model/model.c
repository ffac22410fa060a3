/*
 * model.c - the model description: defaults, validation, shape overrides.
 *
 * A model is a struct of shapes plus a per-block layout (which blocks are MoE, which attend to
 * a window).  This file derives the defaulted fields and checks that the shapes make sense; it
 * does not count anything (params.c) and reads no files (hf_config.c).
 */
#include "model_internal.h"

#include <string.h>

void tp_model_init(struct tp_model *m)
{
    memset(m, 0, sizeof *m);
    tp_snprintf(m->family, sizeof m->family, "custom");
    m->mlp = TP_MLP_GLU;
    m->norm = TP_NORM_RMS;
    m->pos = TP_POS_ROPE;
    m->attn = TP_ATTN_STANDARD;
    m->norms_per_block = 2;
    m->moe_step = 1;
}

/* Upper bounds that catch typos (an extra zero or two) while leaving room for any plausible
   model.  They also keep every count below 2^63 (see tp_count_params). */
enum {
    MAX_HIDDEN = 1 << 18,
    MAX_HEADS = 1 << 14,
    MAX_HEAD_DIM = 1 << 12,
    MAX_FFN = 1 << 22,
    MAX_VOCAB = 1 << 24,
    MAX_POSITIONS = 1 << 24,
    MAX_EXPERTS = 1 << 12,
    MAX_RANK = 1 << 16,
    MAX_MTP = 16,
    MAX_NORMS = 4
};

static enum tp_status check_range(const char *field, uint64_t v, uint64_t lo, uint64_t hi,
                                  struct tp_error *err)
{
    if (v >= lo && v <= hi)
        return TP_OK;
    if (v == 0)
        return tp_fail(err, TP_EINVAL, "%s must be positive (got 0)", field);
    return tp_fail(err, TP_EINVAL, "%s=%llu is out of range (expected %llu..%llu)", field,
                   (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
}

#define CHECK(field, v, lo, hi)                                                                   \
    do {                                                                                          \
        enum tp_status st_ = check_range(field, (v), (lo), (hi), err);                            \
        if (st_ != TP_OK)                                                                         \
            return st_;                                                                           \
    } while (0)

/* Rebuilds layer_moe[] and layer_attn[] from the rules (see struct tp_model). */
static void build_layout(struct tp_model *m)
{
    for (uint32_t l = 0; l < TP_MAX_LAYERS; l++) {
        bool in = l < m->n_layers;
        m->layer_moe[l] = in && m->n_experts > 0 && l >= m->moe_first_dense &&
                          l % m->moe_step == m->moe_phase;
        uint8_t kind = TP_LAYER_FULL;
        if (in && (m->window > 0 || m->chunk > 0)) {
            bool full = m->attn_full_every > 0 && (l + 1) % m->attn_full_every == 0;
            if (!full)
                kind = m->chunk > 0 ? TP_LAYER_CHUNKED : TP_LAYER_SLIDING;
        }
        m->layer_attn[l] = in ? kind : TP_LAYER_FULL;
        /* Qwen3-Next: every linear_full_every-th block is full attention, the rest DeltaNets */
        bool gdn = in && m->gdn_k_heads > 0 &&
                   (m->linear_full_every == 0 || (l + 1) % m->linear_full_every != 0);
        m->layer_mixer[l] = gdn ? TP_MIXER_GDN : TP_MIXER_ATTN;
        m->layer_no_ffn[l] = 0;
    }
}

static enum tp_status check_mla(const struct tp_model *m, struct tp_error *err)
{
    if (m->q_lora_rank > 0)
        CHECK("q_lora_rank", m->q_lora_rank, 1, MAX_RANK);
    CHECK("kv_lora_rank", m->kv_lora_rank, 1, MAX_RANK);
    CHECK("qk_nope_head_dim", m->qk_nope_dim, 1, MAX_HEAD_DIM);
    CHECK("qk_rope_head_dim", m->qk_rope_dim, 1, MAX_HEAD_DIM);
    CHECK("v_head_dim", m->v_head_dim, 1, MAX_HEAD_DIM);
    return TP_OK;
}

static enum tp_status check_moe(struct tp_model *m, struct tp_error *err)
{
    CHECK("num_experts", m->n_experts, 1, MAX_EXPERTS);
    CHECK("num_experts_per_tok (top-k)", m->top_k, 1, MAX_EXPERTS);
    if (m->top_k > m->n_experts)
        return tp_fail(err, TP_EINVAL,
                       "num_experts_per_tok=%u exceeds the number of experts %u (try topk=%u)",
                       m->top_k, m->n_experts, m->n_experts);
    CHECK("moe_intermediate_size (expert width)", m->moe_ffn, 1, MAX_FFN);
    if (m->n_shared_experts > MAX_EXPERTS)
        return check_range("shared experts", m->n_shared_experts, 0, MAX_EXPERTS, err);
    if (m->shared_ffn == 0)
        m->shared_ffn = tp_mul_u32_sat(m->n_shared_experts, m->moe_ffn);
    if (m->n_shared_experts == 0 && m->shared_ffn > 0)
        m->n_shared_experts = 1;
    if (m->shared_ffn > MAX_FFN)
        return check_range("shared expert width", m->shared_ffn, 0, MAX_FFN, err);
    CHECK("MoE layer step", m->moe_step, 1, TP_MAX_LAYERS);
    if (m->moe_phase >= m->moe_step)
        return tp_fail(err, TP_EINVAL, "MoE layer phase %u must be below the step %u",
                       m->moe_phase, m->moe_step);
    if (m->moe_first_dense > m->n_layers)
        return tp_fail(err, TP_EINVAL, "dense_layers=%u exceeds num_hidden_layers=%u",
                       m->moe_first_dense, m->n_layers);
    return TP_OK;
}

/* Each field in range can still multiply out past what a count should hold: 4096 experts of
   width 2^22 in 1024 blocks of hidden 2^18 is 3 * 2^62 parameters, which prints negative as a
   signed 64-bit integer (JSON).  The sum is taken in double, so it cannot wrap; 10^15 is 500
   times the largest published model (Kimi K2, DeepSeek-V3: about 10^12). */
static enum tp_status check_total(const struct tp_model *m, struct tp_error *err)
{
    double total = 2.0 * m->vocab * m->hidden + tp_blocks_params_total(m);
    if (total > 1e15)
        return tp_fail(err, TP_EINVAL, "the shape gives %.3g parameters, beyond 1e15 (check "
                                       "hidden_size, intermediate sizes, experts and layers)",
                       total);
    return TP_OK;
}

enum tp_status tp_model_finalize(struct tp_model *m, struct tp_error *err)
{
    CHECK("num_hidden_layers", m->n_layers, 1, TP_MAX_LAYERS);
    CHECK("hidden_size", m->hidden, 1, MAX_HIDDEN);
    CHECK("num_attention_heads", m->n_heads, 1, MAX_HEADS);
    if (m->n_kv_heads == 0)
        m->n_kv_heads = m->n_heads;
    CHECK("num_key_value_heads", m->n_kv_heads, 1, m->n_heads);
    if (m->n_heads % m->n_kv_heads != 0)
        return tp_fail(err, TP_EINVAL,
                       "num_key_value_heads=%u must divide num_attention_heads=%u",
                       m->n_kv_heads, m->n_heads);
    if (m->head_dim == 0 && !m->head_dim_explicit) {
        if (m->attn == TP_ATTN_STANDARD && m->hidden % m->n_heads != 0)
            return tp_fail(err, TP_EINVAL,
                           "hidden_size=%u is not divisible by num_attention_heads=%u; "
                           "give head_dim explicitly",
                           m->hidden, m->n_heads);
        m->head_dim = m->hidden / m->n_heads;
    }
    if (m->attn == TP_ATTN_STANDARD)
        CHECK("head_dim", m->head_dim, 1, MAX_HEAD_DIM);
    CHECK("vocab_size", m->vocab, 1, MAX_VOCAB);
    if (m->pos == TP_POS_LEARNED)
        CHECK("max_position_embeddings (learned positions)", m->max_positions, 1, MAX_POSITIONS);
    CHECK("norms per block", m->norms_per_block, 1, MAX_NORMS);
    if (m->mtp_layers > MAX_MTP)
        return check_range("num_nextn_predict_layers", m->mtp_layers, 0, MAX_MTP, err);
    if (m->attn == TP_ATTN_MLA) {
        enum tp_status st = check_mla(m, err);
        if (st != TP_OK)
            return st;
    }
    if (m->n_experts > 0) {
        enum tp_status st = check_moe(m, err);
        if (st != TP_OK)
            return st;
    }
    if (m->window > MAX_POSITIONS || m->chunk > MAX_POSITIONS)
        return tp_fail(err, TP_EINVAL, "attention window %u / chunk %u is out of range",
                       m->window, m->chunk);

    if (!m->layers_explicit)
        build_layout(m);
    bool has_dense = false;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        if (m->n_experts == 0 || m->layer_no_ffn[l])
            m->layer_moe[l] = 0;
        if (!m->layer_moe[l] && !m->layer_no_ffn[l])
            has_dense = true;
        if (m->layer_attn[l] == TP_LAYER_SLIDING && m->window == 0)
            return tp_fail(err, TP_EINVAL, "block %u is sliding-window but sliding_window is 0", l);
        if (m->layer_attn[l] == TP_LAYER_CHUNKED && m->chunk == 0)
            return tp_fail(err, TP_EINVAL, "block %u is chunked but attention_chunk_size is 0", l);
    }
    /* the slots past the last block: attention, full, dense (all 0), so that two finalized
       models of one shape compare equal byte for byte */
    size_t tail = TP_MAX_LAYERS - m->n_layers;
    _Static_assert(TP_MIXER_ATTN == 0 && TP_LAYER_FULL == 0, "the tail is zeroed");
    memset(&m->layer_mixer[m->n_layers], 0, tail);
    memset(&m->layer_no_ffn[m->n_layers], 0, tail);
    memset(&m->layer_moe[m->n_layers], 0, tail);
    memset(&m->layer_attn[m->n_layers], 0, tail);
    if (has_dense || m->ffn > 0)
        CHECK("intermediate_size (dense MLP width)", m->ffn, 1, MAX_FFN);
    TRY(tp_mixer_check(m, err));
    return check_total(m, err);
}

void tp_shape_init(struct tp_shape *s)
{
    s->layers = s->hidden = s->heads = s->kv_heads = s->head_dim = s->ffn = s->vocab = TP_UNSET;
    s->max_positions = s->experts = s->topk = s->moe_ffn = s->shared_experts = TP_UNSET;
    s->dense_layers = s->mtp_layers = s->window = TP_UNSET;
    s->tied = s->bias = s->qk_norm = s->mlp = s->norm = s->pos = TP_UNSET;
}

bool tp_shape_any(const struct tp_shape *s)
{
    const int64_t v[] = {s->layers,  s->hidden,         s->heads,        s->kv_heads,
                         s->head_dim, s->ffn,           s->vocab,        s->max_positions,
                         s->experts, s->topk,           s->moe_ffn,      s->shared_experts,
                         s->dense_layers, s->mtp_layers, s->window,      s->tied,
                         s->bias,    s->qk_norm,        s->mlp,          s->norm,
                         s->pos};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] != TP_UNSET)
            return true;
    return false;
}

static void note(char *notes, size_t len, const char *text)
{
    if (!notes || len == 0)
        return;
    size_t used = strlen(notes);
    if (used + 3 >= len)
        return;
    tp_snprintf(notes + used, len - used, "%s%s", used ? "; " : "", text);
}

/* Values from the CLI are int64; anything above UINT32_MAX is absurd for every field and is
   rejected here so that finalize's ranges see it. */
static enum tp_status u32_of(const char *flag, int64_t v, uint32_t *out, bool zero_ok,
                             struct tp_error *err)
{
    if (v < 0 || v > (int64_t)UINT32_MAX || (v == 0 && !zero_ok))
        return tp_fail(err, TP_EINVAL, "--%s %lld is out of range", flag, (long long)v);
    *out = (uint32_t)v;
    return TP_OK;
}

#define SET_U32(flag, val, dst, zero_ok)                                                          \
    do {                                                                                          \
        if ((val) != TP_UNSET) {                                                                  \
            enum tp_status st_ = u32_of(flag, (val), &(dst), zero_ok, err);                       \
            if (st_ != TP_OK)                                                                     \
                return st_;                                                                       \
        }                                                                                         \
    } while (0)

/* A from-scratch model needs these four shapes; everything else has a default. */
static enum tp_status require_scratch(const struct tp_shape *s, struct tp_error *err)
{
    const char *missing = s->layers == TP_UNSET   ? "--layers"
                          : s->hidden == TP_UNSET ? "--hidden"
                          : s->heads == TP_UNSET  ? "--heads"
                          : s->vocab == TP_UNSET  ? "--vocab"
                                                  : NULL;
    if (missing)
        return tp_fail(err, TP_EINVAL,
                       "a model from shape flags needs --layers, --hidden, --heads and --vocab "
                       "(missing %s), or give a preset or config.json to override",
                       missing);
    return TP_OK;
}

/* Default dense width: 4H for a GELU MLP (GPT-2/3); for a gated MLP the Llama-1/2 rule
   (torchtitan FeedForward, multiple_of 256): 256 * ceil((8H/3) / 256). */
static uint32_t default_ffn(const struct tp_model *m)
{
    if (m->mlp == TP_MLP_GELU)
        return 4 * m->hidden;
    uint64_t raw = (uint64_t)m->hidden * 8 / 3;
    return (uint32_t)((raw + 255) / 256 * 256);
}

static enum tp_status apply_moe_shape(struct tp_model *m, const struct tp_shape *s, bool was_moe,
                                      char *notes, size_t len, struct tp_error *err)
{
    SET_U32("experts", s->experts, m->n_experts, true);
    SET_U32("topk", s->topk, m->top_k, false);
    SET_U32("moe-ffn", s->moe_ffn, m->moe_ffn, false);
    if (s->shared_experts != TP_UNSET) {
        SET_U32("shared-experts", s->shared_experts, m->n_shared_experts, true);
        m->shared_ffn = 0; /* re-derived as n_shared * I_e */
    }
    if (s->dense_layers != TP_UNSET) {
        SET_U32("dense-layers", s->dense_layers, m->moe_first_dense, true);
        m->layers_explicit = false;
    }
    if (m->n_experts > 0 && !was_moe) {
        m->layers_explicit = false; /* a dense model's explicit layout has no MoE blocks */
        if (m->top_k == 0)
            return tp_fail_field(err, TP_EINVAL, "experts",
                                 "experts needs --topk (experts per token)");
        if (m->moe_ffn == 0) {
            m->moe_ffn = m->ffn ? m->ffn : default_ffn(m);
            note(notes, len, "expert width = the dense ffn width (set moe_ffn)");
        }
        m->moe_step = m->moe_step ? m->moe_step : 1;
    }
    return TP_OK;
}

/* A layout listed block by block with Mamba-2 mixers or FFN-only blocks has no rule to rebuild
   it from (Nemotron-H's hybrid_override_pattern). */
static bool hybrid_pattern(const struct tp_model *m, uint32_t layers)
{
    for (uint32_t l = 0; l < layers && l < TP_MAX_LAYERS; l++)
        if (m->layer_mixer[l] == TP_MIXER_MAMBA2 || m->layer_mixer[l] == TP_MIXER_NONE ||
            m->layer_no_ffn[l])
            return true;
    return false;
}

enum tp_status tp_model_apply_shape(struct tp_model *m, const struct tp_shape *s, char *notes,
                                    size_t notes_len, struct tp_error *err)
{
    if (notes && notes_len)
        notes[0] = '\0';
    bool scratch = m->hidden == 0;
    if (scratch) {
        enum tp_status st = require_scratch(s, err);
        if (st != TP_OK)
            return st;
    }
    bool was_moe = m->n_experts > 0;
    uint32_t old_layers = m->n_layers;
    bool pattern = m->layers_explicit && hybrid_pattern(m, old_layers);
    SET_U32("layers", s->layers, m->n_layers, false);
    if (m->n_layers != old_layers && pattern)
        return tp_fail_field(err, TP_EINVAL, "layers",
                             "--layers cannot change the depth of a hybrid model given block by "
                             "block (its hybrid_override_pattern); edit the pattern in its "
                             "config.json instead");
    if (m->n_layers != old_layers && m->layers_explicit) {
        m->layers_explicit = false;
        note(notes, notes_len, "per-block MoE/window layout rebuilt from its rule for the new depth");
    }
    if (s->hidden != TP_UNSET || s->heads != TP_UNSET) {
        bool mha = m->n_kv_heads == m->n_heads;
        SET_U32("hidden", s->hidden, m->hidden, false);
        SET_U32("heads", s->heads, m->n_heads, false);
        if (!m->head_dim_explicit)
            m->head_dim = 0;
        if (mha && s->kv_heads == TP_UNSET)
            m->n_kv_heads = 0;
    }
    SET_U32("kv-heads", s->kv_heads, m->n_kv_heads, false);
    if (s->head_dim != TP_UNSET) {
        SET_U32("head-dim", s->head_dim, m->head_dim, false);
        m->head_dim_explicit = true;
    }
    SET_U32("ffn", s->ffn, m->ffn, false);
    SET_U32("vocab", s->vocab, m->vocab, false);
    SET_U32("max-positions", s->max_positions, m->max_positions, false);
    SET_U32("mtp", s->mtp_layers, m->mtp_layers, true);
    if (s->window != TP_UNSET) {
        SET_U32("window", s->window, m->window, true);
        m->chunk = 0;
        m->layers_explicit = false;
    }
    if (s->mlp != TP_UNSET)
        m->mlp = (enum tp_mlp)s->mlp;
    if (s->norm != TP_UNSET)
        m->norm = (enum tp_norm)s->norm;
    if (s->pos != TP_UNSET)
        m->pos = (enum tp_pos)s->pos;
    if (s->tied != TP_UNSET)
        m->tied = s->tied != 0;
    if (s->qk_norm != TP_UNSET)
        m->qk_norm = s->qk_norm != 0;
    if (s->bias != TP_UNSET)
        m->qkv_bias = m->o_bias = m->mlp_bias = s->bias != 0;
    enum tp_status st = apply_moe_shape(m, s, was_moe, notes, notes_len, err);
    if (st != TP_OK)
        return st;
    if (pattern && !m->layers_explicit)
        return tp_fail_field(err, TP_EINVAL, s->window != TP_UNSET ? "window" : "experts",
                             "--experts, --dense-layers and --window rebuild the per-block layout "
                             "from a rule, which a hybrid model given block by block (its "
                             "hybrid_override_pattern) does not have; edit its config.json");

    if (scratch) {
        tp_snprintf(m->name, sizeof m->name, "custom %uL-%uH-%uD", m->n_layers, m->n_heads, m->hidden);
        tp_snprintf(m->source, sizeof m->source, "shape flags");
    }
    if (m->ffn == 0 && (m->n_experts == 0 || m->moe_first_dense > 0 || m->moe_step > 1)) {
        m->ffn = default_ffn(m);
        note(notes, notes_len,
             m->mlp == TP_MLP_GELU ? "ffn = 4*hidden (set --ffn)"
                                   : "ffn = 256*ceil(8*hidden/3/256), the Llama rule (set --ffn)");
    }
    if (m->pos == TP_POS_LEARNED && m->max_positions == 0) {
        m->max_positions = m->default_seq ? m->default_seq : 2048;
        note(notes, notes_len, "learned position table sized to the context length (set --max-positions)");
    }
    return tp_model_finalize(m, err);
}
