/*
 * params.c - exact parameter counts from explicit tensor lists.
 *
 * Every count is a sum over a named list of tensors with their shapes, block by block, so the
 * breakdown by component and by block comes for free and each tensor can be checked alone.
 * Shapes follow the Hugging Face modeling code of each family (docs/physics.md §1.2-1.4):
 *   standard attention  q (q_dim x H), k and v (kv_dim x H), o (H x q_dim) [+ biases, q/k norm, sinks]
 *   MLA                 q_a (r_q x H), q_a_norm (r_q), q_b (n_q(d_nope+d_rope) x r_q),
 *                       kv_a (r_kv+d_rope x H), kv_a_norm (r_kv), kv_b (n_q(d_nope+d_v) x r_kv),
 *                       o (H x n_q d_v)                                [HF-deepseek_v3]
 *   GLU MLP             gate, up (I x H), down (H x I);  GELU MLP: up (I x H), down (H x I)
 *   MoE                 router (E x H), E experts of the MLP shape at I_e, shared MLP at I_s
 *   MTP module          enorm, hnorm (H), eh_proj (H x 2H), final norm (H) + one MoE block
 *                       (DeepSeek-V3 report §2.2)
 *   hybrid blocks       a Mamba-2 or gated-DeltaNet mixer (ssm.c) in place of attention, and
 *                       no FFN where the layout says so (Nemotron-H: one module per block)
 * Fused layouts (GPT-2 c_attn, Phi-3 qkv_proj/gate_up_proj, BLOOM query_key_value) hold the
 * same elements as the separate tensors listed here.
 */
#include "model_internal.h"

#include <string.h>

const char *tp_component_name(enum tp_component c)
{
    static const char *const names[TP_COMP_COUNT] = {
        "embedding", "position", "attention", "mlp", "experts",
        "shared_experts", "router", "norms", "lm_head"};
    return (unsigned)c < TP_COMP_COUNT ? names[c] : "?";
}

struct list {
    struct tp_tensor *t;
    size_t n;
};

static void add_ex(struct list *l, const char *name, enum tp_component comp, uint64_t rows,
                   uint64_t cols, uint32_t count, uint32_t active, bool replicated, uint32_t lora)
{
    if (rows == 0 || cols == 0 || count == 0)
        return;
    replicated = replicated || comp == TP_COMP_NORMS || comp == TP_COMP_ROUTER;
    l->t[l->n++] = (struct tp_tensor){name, comp, rows, cols, count, active, replicated, lora};
}

static void add(struct list *l, const char *name, enum tp_component comp, uint64_t rows,
                uint64_t cols, uint32_t count, uint32_t active)
{
    add_ex(l, name, comp, rows, cols, count, active, false, 0);
}

/* A projection LoRA can adapt (TP_LORA_* bit). */
static void add_proj(struct list *l, const char *name, enum tp_component comp, uint64_t rows,
                     uint64_t cols, uint32_t count, uint32_t active, uint32_t lora)
{
    add_ex(l, name, comp, rows, cols, count, active, false, lora);
}

/* A tensor every tensor-parallel rank keeps whole. */
static void add_repl(struct list *l, const char *name, enum tp_component comp, uint64_t rows)
{
    add_ex(l, name, comp, rows, 1, 1, 1, true, 0);
}

static void add1(struct list *l, const char *name, enum tp_component comp, uint64_t rows,
                 uint64_t cols)
{
    add(l, name, comp, rows, cols, 1, 1);
}

/* A norm: RMSNorm has a weight, LayerNorm a weight and a bias. */
static void add_norm(struct list *l, const struct tp_model *m, const char *w, const char *b,
                     uint64_t width)
{
    add1(l, w, TP_COMP_NORMS, width, 1);
    if (m->norm == TP_NORM_LAYER)
        add1(l, b, TP_COMP_NORMS, width, 1);
}

static void attention_standard(struct list *l, const struct tp_model *m)
{
    uint64_t h = m->hidden, q = (uint64_t)m->n_heads * m->head_dim;
    uint64_t kv = (uint64_t)m->n_kv_heads * m->head_dim;
    /* a gated attention's q_proj also yields the per-head output gate (Qwen3NextAttention) */
    add_proj(l, "self_attn.q_proj.weight", TP_COMP_ATTENTION, m->attn_out_gate ? 2 * q : q, h, 1,
             1, TP_LORA_Q);
    add_proj(l, "self_attn.k_proj.weight", TP_COMP_ATTENTION, kv, h, 1, 1, TP_LORA_K);
    add_proj(l, "self_attn.v_proj.weight", TP_COMP_ATTENTION, kv, h, 1, 1, TP_LORA_V);
    add_proj(l, "self_attn.o_proj.weight", TP_COMP_ATTENTION, h, q, 1, 1, TP_LORA_O);
    if (m->qkv_bias) {
        add1(l, "self_attn.q_proj.bias", TP_COMP_ATTENTION, q, 1);
        add1(l, "self_attn.k_proj.bias", TP_COMP_ATTENTION, kv, 1);
        add1(l, "self_attn.v_proj.bias", TP_COMP_ATTENTION, kv, 1);
    }
    if (m->o_bias)
        add_repl(l, "self_attn.o_proj.bias", TP_COMP_ATTENTION, h);
    if (m->qk_norm) {
        add_repl(l, "self_attn.q_norm.weight", TP_COMP_ATTENTION, m->head_dim);
        add_repl(l, "self_attn.k_norm.weight", TP_COMP_ATTENTION, m->head_dim);
    }
    if (m->attn_sinks)
        add1(l, "self_attn.sinks", TP_COMP_ATTENTION, m->n_heads, 1);
}

static void attention_mla(struct list *l, const struct tp_model *m)
{
    uint64_t h = m->hidden, nq = m->n_heads;
    uint64_t qk = (uint64_t)m->qk_nope_dim + m->qk_rope_dim;
    if (m->q_lora_rank > 0) {
        add_proj(l, "self_attn.q_a_proj.weight", TP_COMP_ATTENTION, m->q_lora_rank, h, 1, 1,
                 TP_LORA_Q);
        add_repl(l, "self_attn.q_a_layernorm.weight", TP_COMP_ATTENTION, m->q_lora_rank);
        add_proj(l, "self_attn.q_b_proj.weight", TP_COMP_ATTENTION, nq * qk, m->q_lora_rank, 1, 1,
                 TP_LORA_Q);
    } else {
        add_proj(l, "self_attn.q_proj.weight", TP_COMP_ATTENTION, nq * qk, h, 1, 1, TP_LORA_Q);
    }
    add_proj(l, "self_attn.kv_a_proj_with_mqa.weight", TP_COMP_ATTENTION,
             (uint64_t)m->kv_lora_rank + m->qk_rope_dim, h, 1, 1, TP_LORA_K | TP_LORA_V);
    add_repl(l, "self_attn.kv_a_layernorm.weight", TP_COMP_ATTENTION, m->kv_lora_rank);
    add_proj(l, "self_attn.kv_b_proj.weight", TP_COMP_ATTENTION,
             nq * ((uint64_t)m->qk_nope_dim + m->v_head_dim), m->kv_lora_rank, 1, 1,
             TP_LORA_K | TP_LORA_V);
    add_proj(l, "self_attn.o_proj.weight", TP_COMP_ATTENTION, h, nq * m->v_head_dim, 1, 1,
             TP_LORA_O);
}

enum mlp_kind { MLP_DENSE, MLP_EXPERTS, MLP_SHARED };

/* One MLP of width `width` (count copies, `active` of them used per token). */
static void mlp(struct list *l, const struct tp_model *m, enum mlp_kind k, uint64_t width,
                uint32_t count, uint32_t active, bool bias)
{
    static const enum tp_component comps[3] = {TP_COMP_MLP, TP_COMP_EXPERTS, TP_COMP_SHARED};
    static const char *const names[3][6] = {
        {"mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
         "mlp.gate_proj.bias", "mlp.up_proj.bias", "mlp.down_proj.bias"},
        {"mlp.experts.gate_proj.weight", "mlp.experts.up_proj.weight",
         "mlp.experts.down_proj.weight", "mlp.experts.gate_proj.bias",
         "mlp.experts.up_proj.bias", "mlp.experts.down_proj.bias"},
        {"mlp.shared_experts.gate_proj.weight", "mlp.shared_experts.up_proj.weight",
         "mlp.shared_experts.down_proj.weight", "mlp.shared_experts.gate_proj.bias",
         "mlp.shared_experts.up_proj.bias", "mlp.shared_experts.down_proj.bias"}};
    enum tp_component comp = comps[k];
    uint64_t h = m->hidden;
    if (m->mlp == TP_MLP_GLU)
        add_proj(l, names[k][0], comp, width, h, count, active, TP_LORA_GATE);
    add_proj(l, names[k][1], comp, width, h, count, active, TP_LORA_UP);
    add_proj(l, names[k][2], comp, h, width, count, active, TP_LORA_DOWN);
    if (bias) {
        if (m->mlp == TP_MLP_GLU)
            add(l, names[k][3], comp, width, 1, count, active);
        add(l, names[k][4], comp, width, 1, count, active);
        add_ex(l, names[k][5], comp, h, 1, count, active, true, 0); /* row-parallel bias */
    }
}

static void block(struct list *l, const struct tp_model *m, uint32_t layer)
{
    static const char *const norm_w[4] = {
        "input_layernorm.weight", "post_attention_layernorm.weight",
        "pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight"};
    static const char *const norm_b[4] = {
        "input_layernorm.bias", "post_attention_layernorm.bias",
        "pre_feedforward_layernorm.bias", "post_feedforward_layernorm.bias"};
    for (unsigned i = 0; i < m->norms_per_block && i < 4; i++)
        add_norm(l, m, norm_w[i], norm_b[i], m->hidden);
    enum tp_mixer mixer = (enum tp_mixer)m->layer_mixer[layer];
    if (mixer == TP_MIXER_MAMBA2 || mixer == TP_MIXER_GDN)
        l->n += tp_mixer_tensors(m, mixer, l->t + l->n);
    else if (mixer == TP_MIXER_ATTN && m->attn == TP_ATTN_MLA)
        attention_mla(l, m);
    else if (mixer == TP_MIXER_ATTN)
        attention_standard(l, m);
    if (m->layer_no_ffn[layer])
        return;
    if (!m->layer_moe[layer]) {
        mlp(l, m, MLP_DENSE, m->ffn, 1, 1, m->mlp_bias);
        return;
    }
    add1(l, "mlp.gate.weight", TP_COMP_ROUTER, m->n_experts, m->hidden);
    if (m->router_bias)
        add1(l, "mlp.gate.bias", TP_COMP_ROUTER, m->n_experts, 1);
    mlp(l, m, MLP_EXPERTS, m->moe_ffn, m->n_experts, m->top_k, m->expert_bias);
    if (m->shared_ffn > 0) {
        mlp(l, m, MLP_SHARED, m->shared_ffn, 1, 1, false);
        if (m->shared_expert_gate)
            add1(l, "mlp.shared_expert_gate.weight", TP_COMP_SHARED, 1, m->hidden);
    }
}

/* The last MoE block with attention (else the last MoE block, else the last block): the one
   an MTP module copies (DeepSeek-V3; Qwen3-Next's MTP layer is gated attention + MoE). */
uint32_t tp_mtp_template_layer(const struct tp_model *m)
{
    for (uint32_t l = m->n_layers; l-- > 0;)
        if (m->layer_moe[l] && m->layer_mixer[l] == TP_MIXER_ATTN)
            return l;
    for (uint32_t l = m->n_layers; l-- > 0;)
        if (m->layer_moe[l])
            return l;
    return m->n_layers - 1;
}

size_t tp_block_tensors(const struct tp_model *m, uint32_t layer, struct tp_tensor *out)
{
    struct list l = {out, 0};
    if (layer < m->n_layers) {
        block(&l, m, layer);
    } else if (layer == m->n_layers) {
        add1(&l, "mtp.enorm.weight", TP_COMP_NORMS, m->hidden, 1);
        add1(&l, "mtp.hnorm.weight", TP_COMP_NORMS, m->hidden, 1);
        add1(&l, "mtp.eh_proj.weight", TP_COMP_ATTENTION, m->hidden, 2 * (uint64_t)m->hidden);
        add1(&l, "mtp.shared_head.norm.weight", TP_COMP_NORMS, m->hidden, 1);
    }
    return l.n;
}

size_t tp_outer_tensors(const struct tp_model *m, struct tp_tensor *out)
{
    struct list l = {out, 0};
    add1(&l, "embed_tokens.weight", TP_COMP_EMBEDDING, m->vocab, m->hidden);
    if (m->pos == TP_POS_LEARNED)
        add1(&l, "embed_positions.weight", TP_COMP_POSITION, m->max_positions, m->hidden);
    if (m->embed_norm)
        add_norm(&l, m, "embed_layernorm.weight", "embed_layernorm.bias", m->hidden);
    add_norm(&l, m, "norm.weight", "norm.bias", m->hidden);
    if (!m->tied)
        add1(&l, "lm_head.weight", TP_COMP_HEAD, m->vocab, m->hidden);
    return l.n;
}

static uint64_t sum(const struct tp_tensor *t, size_t n, bool active, uint64_t *by_comp)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = t[i].rows * t[i].cols * (active ? t[i].active : t[i].count);
        s += v;
        if (by_comp)
            by_comp[t[i].comp] += v;
    }
    return s;
}

uint64_t tp_block_params(const struct tp_model *m, uint32_t layer, bool active)
{
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    size_t n = tp_block_tensors(m, layer, t);
    return sum(t, n, active, NULL);
}

/* A block kind's sums: its tensors depend on the block's mixer, MoE and FFN flags only, all of
   which its kind (tp_block_kind) fixes, so each kind is listed once however many blocks it has
   (61 blocks of two kinds in DeepSeek-V3; a 10 MB runs file counts its models ~10^6 times). */
struct kind_sums {
    bool seen;
    uint64_t total, active, by_comp[TP_COMP_COUNT];
};

static const struct kind_sums *kind_sums(const struct tp_model *m, uint32_t layer,
                                         struct kind_sums *cache, struct kind_sums *scratch)
{
    /* a value out of its enum (a struct filled by hand) could alias another kind: no cache */
    bool known = m->layer_attn[layer] <= TP_LAYER_CHUNKED && m->layer_mixer[layer] <= TP_MIXER_NONE;
    unsigned k = known ? tp_block_kind(m, layer) : TP_BLOCK_KINDS;
    struct kind_sums *s = k < TP_BLOCK_KINDS ? &cache[k] : scratch;
    if (!s->seen || s == scratch) {
        struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
        size_t n = tp_block_tensors(m, layer, t);
        memset(s, 0, sizeof *s);
        s->total = sum(t, n, false, s->by_comp);
        s->active = sum(t, n, true, NULL);
        s->seen = true;
    }
    return s;
}

double tp_blocks_params_total(const struct tp_model *m)
{
    struct kind_sums cache[TP_BLOCK_KINDS], scratch;
    memset(cache, 0, sizeof cache);
    double total = 0;
    for (uint32_t l = 0; l < m->n_layers; l++)
        total += (double)kind_sums(m, l, cache, &scratch)->total;
    return total;
}

void tp_count_params(const struct tp_model *m, struct tp_params *p)
{
    memset(p, 0, sizeof *p);
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    struct kind_sums cache[TP_BLOCK_KINDS], scratch;
    memset(cache, 0, sizeof cache);
    for (uint32_t l = 0; l < m->n_layers; l++) {
        const struct kind_sums *s = kind_sums(m, l, cache, &scratch);
        p->total += s->total;
        p->active += s->active;
        for (unsigned c = 0; c < TP_COMP_COUNT; c++)
            p->by_comp[c] += s->by_comp[c];
        if (m->layer_moe[l])
            p->moe_layers++;
        else
            p->dense_layers++;
    }
    size_t n = tp_outer_tensors(m, t);
    p->total += sum(t, n, false, p->by_comp);
    p->active += sum(t, n, true, NULL);

    p->embedding = p->by_comp[TP_COMP_EMBEDDING] + p->by_comp[TP_COMP_POSITION];
    p->nonembedding = p->total - p->embedding;
    p->active_excl_embedding = p->active - p->embedding;
    /* Convention C drops the output projection too; a tied head is the embedding itself. */
    p->active_excl_embedding_head = p->active_excl_embedding - p->by_comp[TP_COMP_HEAD];

    if (m->mtp_layers > 0) {
        size_t k = tp_block_tensors(m, m->n_layers, t);
        uint64_t own = sum(t, k, false, NULL);
        p->mtp = m->mtp_layers * (own + tp_block_params(m, tp_mtp_template_layer(m), false));
    }
    if (m->router_score_bias)
        p->buffers = (uint64_t)p->moe_layers * m->n_experts;
    p->checkpoint = p->total + p->buffers;
}
