/*
 * hf_config.c - Hugging Face config.json -> struct tp_model, one reader per model_type.
 *
 * Field names and defaults follow each family's configuration_*.py in huggingface/transformers
 * ([HF-x] in docs/physics.md §1.1-1.4).  Multimodal checkpoints (llama4, gemma3) keep the
 * language model under "text_config".  Every missing, null or wrongly typed field a family
 * needs is reported with the file and the field name; fields a family does not use are ignored.
 * This file does not count anything; it only fills the shapes and the per-block layout.
 */
#include "logs_internal.h"
#include "hf_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A config is at most a few KB; anything past this is not a config.json. */
#define MAX_CONFIG_BYTES (1u << 20) /* published config.json files are a few KB */


static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

enum tp_status hf_field_error(const struct cfg *c, const char *key, const char *what)
{
    return tp_fail(c->err, TP_EINVAL, "%s: field \"%s\" %s", c->label, key, what);
}

/* Reads a non-negative integer field.  Missing or null: *out = dflt when !required. */
enum tp_status hf_get_u32(const struct cfg *c, const char *key, bool required, uint32_t dflt,
                              uint32_t *out)
{
    const json_t *v = json_object_get(c->obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return hf_field_error(c, key, v ? "is null but must be a positive integer"
                                         : "is missing (a positive integer is required)");
        *out = dflt;
        return TP_OK;
    }
    json_int_t i;
    double r = json_is_real(v) ? json_real_value(v) : 0;
    if (json_is_integer(v)) {
        i = json_integer_value(v);
    } else if (json_is_real(v) && (r < 0 || r > UINT32_MAX) && r == floor(r)) {
        /* range-checked as a double: converting 1.5e38 to an integer first is undefined */
        char what[96];
        tp_snprintf(what, sizeof what, "is %g, out of range", r);
        return hf_field_error(c, key, what);
    } else if (json_is_real(v) && r == floor(r)) {
        i = (json_int_t)r; /* 4096.0 is written by some exporters */
    } else {
        char what[96];
        tp_snprintf(what, sizeof what, "must be an integer (found %s)", type_name(v));
        return hf_field_error(c, key, what);
    }
    if (i < 0 || i > (json_int_t)UINT32_MAX) {
        char what[96];
        tp_snprintf(what, sizeof what, "is %lld, out of range", (long long)i);
        return hf_field_error(c, key, what);
    }
    *out = (uint32_t)i;
    return TP_OK;
}

enum tp_status hf_get_bool(const struct cfg *c, const char *key, bool dflt, bool *out)
{
    const json_t *v = json_object_get(c->obj, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return TP_OK;
    }
    if (!json_is_boolean(v)) {
        char what[96];
        tp_snprintf(what, sizeof what, "must be true or false (found %s)", type_name(v));
        return hf_field_error(c, key, what);
    }
    *out = json_is_true(v);
    return TP_OK;
}

/* A boolean from the top level of a multimodal file, else the text config. */
static enum tp_status get_bool_outer(const struct cfg *c, const char *key, bool dflt, bool *out)
{
    if (c->obj != c->root && json_object_get(c->root, key)) {
        struct cfg top = *c;
        top.obj = c->root;
        return hf_get_bool(&top, key, dflt, out);
    }
    return hf_get_bool(c, key, dflt, out);
}

/* The model's own context: the pre-extension length when rope_scaling names one. Contexts past
   32768 are long-context extensions, not a sensible default for per-token FLOPs: 0 there
   (the caller falls back to 4096 and says so). */
enum tp_status hf_read_context(const struct cfg *c, struct tp_model *m)
{
    uint32_t ctx = 0;
    const json_t *rs = json_object_get(c->obj, "rope_scaling");
    if (json_is_object(rs)) {
        struct cfg sub = *c;
        sub.obj = rs;
        TRY(hf_get_u32(&sub, "original_max_position_embeddings", false, 0, &ctx));
    }
    if (ctx == 0)
        TRY(hf_get_u32(c, "max_position_embeddings", false, 0, &ctx));
    m->default_seq = ctx <= 32768 ? ctx : 0;
    return TP_OK;
}

/* Fields shared by the Llama-like families.  vocab_default 0 = vocab_size is required. */
enum tp_status hf_read_llama_like(const struct cfg *c, struct tp_model *m, bool tie_default,
                                      uint32_t vocab_default)
{
    TRY(hf_get_u32(c, "hidden_size", true, 0, &m->hidden));
    TRY(hf_get_u32(c, "num_hidden_layers", true, 0, &m->n_layers));
    TRY(hf_get_u32(c, "num_attention_heads", true, 0, &m->n_heads));
    TRY(hf_get_u32(c, "num_key_value_heads", false, m->n_heads, &m->n_kv_heads));
    TRY(hf_get_u32(c, "head_dim", false, 0, &m->head_dim));
    m->head_dim_explicit = m->head_dim != 0;
    TRY(hf_get_u32(c, "intermediate_size", true, 0, &m->ffn));
    TRY(hf_get_u32(c, "vocab_size", vocab_default == 0, vocab_default, &m->vocab));
    TRY(get_bool_outer(c, "tie_word_embeddings", tie_default, &m->tied));
    bool attn_bias, mlp_bias;
    TRY(hf_get_bool(c, "attention_bias", false, &attn_bias));
    TRY(hf_get_bool(c, "mlp_bias", false, &mlp_bias));
    m->qkv_bias = m->o_bias = attn_bias;
    m->mlp_bias = mlp_bias;
    return hf_read_context(c, m);
}

/* "layer_types": ["sliding_attention", "full_attention", "chunked_attention", ...]. */
static enum tp_status read_layer_types(const struct cfg *c, struct tp_model *m, bool *found)
{
    const json_t *a = json_object_get(c->obj, "layer_types");
    *found = false;
    if (!a || json_is_null(a))
        return TP_OK;
    if (!json_is_array(a))
        return hf_field_error(c, "layer_types", "must be an array of strings");
    if (json_array_size(a) != m->n_layers) {
        char what[128];
        tp_snprintf(what, sizeof what, "has %zu entries but num_hidden_layers is %u",
                 json_array_size(a), m->n_layers);
        return hf_field_error(c, "layer_types", what);
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (!s)
            return hf_field_error(c, "layer_types", "must hold only strings");
        m->layer_mixer[i] = TP_MIXER_ATTN;
        if (strcmp(s, "full_attention") == 0)
            m->layer_attn[i] = TP_LAYER_FULL;
        else if (strcmp(s, "linear_attention") == 0) /* Qwen3-Next: a gated DeltaNet */
            m->layer_mixer[i] = TP_MIXER_GDN;
        else if (strcmp(s, "sliding_attention") == 0)
            m->layer_attn[i] = TP_LAYER_SLIDING;
        else if (strcmp(s, "chunked_attention") == 0)
            m->layer_attn[i] = TP_LAYER_CHUNKED;
        else
            return tp_fail(c->err, TP_EUNSUPPORTED,
                           "%s: field \"layer_types\" entry %zu is \"%s\" (understood: "
                           "full_attention, sliding_attention, chunked_attention, "
                           "linear_attention)",
                           c->label, i, s);
    }
    *found = true;
    return TP_OK;
}

/* A list of 0-based block indices: sets flags[i] = value for each listed index. */
static enum tp_status read_index_list(const struct cfg *c, const char *key, uint32_t n_layers,
                                      uint8_t *flags, uint8_t value, bool *found)
{
    const json_t *a = json_object_get(c->obj, key);
    *found = false;
    if (!a || json_is_null(a))
        return TP_OK;
    if (!json_is_array(a))
        return hf_field_error(c, key, "must be an array of layer indices");
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= (json_int_t)n_layers) {
            char what[128];
            tp_snprintf(what, sizeof what, "entry %zu must be a layer index in 0..%u", i,
                     n_layers - 1);
            return hf_field_error(c, key, what);
        }
        flags[json_integer_value(v)] = value;
    }
    *found = true;
    return TP_OK;
}

/* Sliding-window fields: "sliding_window" (+ "use_sliding_window" for Qwen). Every block
   slides unless the family says otherwise. */
static enum tp_status read_window(const struct cfg *c, struct tp_model *m, bool needs_flag)
{
    bool use = true;
    if (needs_flag)
        TRY(hf_get_bool(c, "use_sliding_window", false, &use));
    uint32_t w = 0;
    TRY(hf_get_u32(c, "sliding_window", false, 0, &w));
    m->window = use ? w : 0;
    return TP_OK;
}

/* ---- families ---------------------------------------------------------------------------- */

static enum tp_status fam_gpt2(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_get_u32(c, "n_embd", true, 0, &m->hidden));
    TRY(hf_get_u32(c, "n_layer", true, 0, &m->n_layers));
    TRY(hf_get_u32(c, "n_head", true, 0, &m->n_heads));
    TRY(hf_get_u32(c, "n_inner", false, 0, &m->ffn));
    if (m->ffn == 0)
        m->ffn = 4 * m->hidden; /* GPT2MLP: n_inner or 4 * n_embd */
    TRY(hf_get_u32(c, "vocab_size", true, 0, &m->vocab));
    TRY(hf_get_u32(c, "n_positions", true, 0, &m->max_positions));
    m->default_seq = m->max_positions;
    m->mlp = TP_MLP_GELU;
    m->norm = TP_NORM_LAYER;
    m->pos = TP_POS_LEARNED;
    m->qkv_bias = m->o_bias = m->mlp_bias = true;
    m->tied = true; /* GPT2LMHeadModel always ties lm_head to wte */
    return TP_OK;
}

/* BLOOM: ALiBi, LayerNorm after the word embedding, fused query_key_value with biases,
   4H GELU MLP with biases, tied head (BloomForCausalLM; 12H^2 + 13H per block). */
static enum tp_status fam_bloom(const struct cfg *c, struct tp_model *m)
{
    const char *h = json_object_get(c->obj, "hidden_size") ? "hidden_size" : "n_embed";
    TRY(hf_get_u32(c, h, true, 0, &m->hidden));
    TRY(hf_get_u32(c, "n_layer", true, 0, &m->n_layers));
    TRY(hf_get_u32(c, "n_head", true, 0, &m->n_heads));
    TRY(hf_get_u32(c, "vocab_size", true, 0, &m->vocab));
    m->ffn = 4 * m->hidden;
    m->mlp = TP_MLP_GELU;
    m->norm = TP_NORM_LAYER;
    m->pos = TP_POS_ALIBI;
    m->embed_norm = true;
    m->qkv_bias = m->o_bias = m->mlp_bias = true;
    m->tied = true;
    return TP_OK;
}

static enum tp_status fam_llama(const struct cfg *c, struct tp_model *m)
{
    return hf_read_llama_like(c, m, false, 0);
}

static enum tp_status fam_mistral(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    return read_window(c, m, false);
}

static enum tp_status fam_phi3(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    return read_window(c, m, false);
}

/* Qwen2/Qwen3: with use_sliding_window, blocks from max_window_layers on slide. */
static enum tp_status qwen_window(const struct cfg *c, struct tp_model *m, bool *explicit_attn)
{
    TRY(read_window(c, m, true));
    *explicit_attn = false;
    if (m->window == 0)
        return TP_OK;
    uint32_t first = 0;
    TRY(hf_get_u32(c, "max_window_layers", false, 0, &first));
    for (uint32_t l = 0; l < m->n_layers && l < TP_MAX_LAYERS; l++)
        m->layer_attn[l] = l >= first ? TP_LAYER_SLIDING : TP_LAYER_FULL;
    *explicit_attn = true;
    return TP_OK;
}

static enum tp_status fam_qwen2(const struct cfg *c, struct tp_model *m, bool *explicit_attn)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    m->qkv_bias = true; /* Qwen2Attention: bias on q, k, v; none on o */
    m->o_bias = false;
    return qwen_window(c, m, explicit_attn);
}

static enum tp_status fam_qwen3(const struct cfg *c, struct tp_model *m, bool *explicit_attn)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    m->qk_norm = true;
    return qwen_window(c, m, explicit_attn);
}

/* Qwen2-MoE / Qwen3-MoE: block l is MoE iff l not in mlp_only_layers and
   (l+1) % decoder_sparse_step == 0. */
enum tp_status hf_qwen_moe(const struct cfg *c, struct tp_model *m, bool *explicit_moe)
{
    TRY(hf_get_u32(c, "num_experts", true, 0, &m->n_experts));
    TRY(hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k));
    TRY(hf_get_u32(c, "moe_intermediate_size", true, 0, &m->moe_ffn));
    TRY(hf_get_u32(c, "shared_expert_intermediate_size", false, 0, &m->shared_ffn));
    m->n_shared_experts = m->shared_ffn > 0;
    /* positive when given: hf_rules.c */
    TRY(hf_get_u32(c, "decoder_sparse_step", false, 1, &m->moe_step));
    m->moe_phase = m->moe_step - 1;
    uint8_t dense[TP_MAX_LAYERS] = {0};
    bool found;
    if (m->n_layers > TP_MAX_LAYERS)
        return TP_OK; /* finalize reports the depth */
    TRY(read_index_list(c, "mlp_only_layers", m->n_layers, dense, 1, &found));
    if (!found || json_array_size(json_object_get(c->obj, "mlp_only_layers")) == 0)
        return TP_OK; /* the step rule says it all */
    *explicit_moe = true;
    for (uint32_t l = 0; l < m->n_layers; l++)
        m->layer_moe[l] = !dense[l] && (l + 1) % m->moe_step == 0;
    return TP_OK;
}

static enum tp_status fam_qwen3_moe(const struct cfg *c, struct tp_model *m, bool *explicit_attn,
                                    bool *explicit_moe)
{
    TRY(fam_qwen3(c, m, explicit_attn));
    return hf_qwen_moe(c, m, explicit_moe);
}

static enum tp_status fam_qwen2_moe(const struct cfg *c, struct tp_model *m, bool *explicit_attn,
                                    bool *explicit_moe)
{
    TRY(fam_qwen2(c, m, explicit_attn));
    m->shared_expert_gate = true; /* Qwen2MoeSparseMoeBlock.shared_expert_gate: H -> 1 */
    return hf_qwen_moe(c, m, explicit_moe);
}

static enum tp_status fam_mixtral(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    TRY(read_window(c, m, false));
    m->moe_ffn = m->ffn; /* MixtralConfig.intermediate_size is the width of each expert */
    m->ffn = 0;
    TRY(hf_get_u32(c, "num_local_experts", true, 0, &m->n_experts));
    return hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k);
}

/* DeepSeek-V2/V3: MLA attention; block l is MoE iff n_routed_experts is set and
   l >= first_k_dense_replace and l % moe_layer_freq == 0. */
static enum tp_status fam_deepseek(const struct cfg *c, struct tp_model *m, bool v3)
{
    TRY(hf_get_u32(c, "hidden_size", true, 0, &m->hidden));
    TRY(hf_get_u32(c, "num_hidden_layers", true, 0, &m->n_layers));
    TRY(hf_get_u32(c, "num_attention_heads", true, 0, &m->n_heads));
    TRY(hf_get_u32(c, "num_key_value_heads", false, m->n_heads, &m->n_kv_heads));
    TRY(hf_get_u32(c, "intermediate_size", true, 0, &m->ffn));
    TRY(hf_get_u32(c, "vocab_size", true, 0, &m->vocab));
    TRY(hf_get_bool(c, "tie_word_embeddings", false, &m->tied));
    m->attn = TP_ATTN_MLA;
    TRY(hf_get_u32(c, "q_lora_rank", false, 0, &m->q_lora_rank));
    TRY(hf_get_u32(c, "kv_lora_rank", true, 0, &m->kv_lora_rank));
    TRY(hf_get_u32(c, "qk_nope_head_dim", true, 0, &m->qk_nope_dim));
    TRY(hf_get_u32(c, "qk_rope_head_dim", true, 0, &m->qk_rope_dim));
    TRY(hf_get_u32(c, "v_head_dim", true, 0, &m->v_head_dim));
    m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
    m->head_dim_explicit = true;
    bool attn_bias;
    TRY(hf_get_bool(c, "attention_bias", false, &attn_bias));
    if (attn_bias)
        return tp_fail(c->err, TP_EUNSUPPORTED,
                       "%s: field \"attention_bias\" true is not modelled for MLA", c->label);
    TRY(hf_get_u32(c, "n_routed_experts", false, 0, &m->n_experts));
    if (m->n_experts > 0) {
        TRY(hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k));
        TRY(hf_get_u32(c, "moe_intermediate_size", true, 0, &m->moe_ffn));
        TRY(hf_get_u32(c, "n_shared_experts", false, 0, &m->n_shared_experts));
        m->shared_ffn = tp_mul_u32_sat(m->n_shared_experts, m->moe_ffn); /* one fused shared MLP */
        TRY(hf_get_u32(c, "first_k_dense_replace", false, 0, &m->moe_first_dense));
        TRY(hf_get_u32(c, "moe_layer_freq", false, 1, &m->moe_step));
        m->moe_phase = 0;
        /* group-limited routing (DeepseekV3TopkRouter: n_group, topk_group) */
        TRY(hf_get_u32(c, "n_group", false, 0, &m->router_groups));
        TRY(hf_get_u32(c, "topk_group", false, 0, &m->router_group_topk));
        if (m->router_group_topk >= m->router_groups)
            m->router_groups = m->router_group_topk = 0; /* no limit */
    }
    /* V3's noaux_tc routing keeps an E-float e_score_correction_bias buffer per MoE block. */
    const char *method = json_string_value(json_object_get(c->obj, "topk_method"));
    m->router_score_bias = m->n_experts > 0 && (method ? strcmp(method, "noaux_tc") == 0 : v3);
    TRY(hf_get_u32(c, "num_nextn_predict_layers", false, 0, &m->mtp_layers));
    return hf_read_context(c, m);
}

static enum tp_status fam_glm4_moe(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    m->o_bias = false; /* Glm4MoeAttention: attention_bias on q, k, v; o_proj has none */
    TRY(hf_get_bool(c, "use_qk_norm", false, &m->qk_norm));
    TRY(hf_get_u32(c, "n_routed_experts", true, 0, &m->n_experts));
    TRY(hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k));
    TRY(hf_get_u32(c, "moe_intermediate_size", true, 0, &m->moe_ffn));
    TRY(hf_get_u32(c, "n_shared_experts", false, 0, &m->n_shared_experts));
    m->shared_ffn = tp_mul_u32_sat(m->n_shared_experts, m->moe_ffn);
    TRY(hf_get_u32(c, "first_k_dense_replace", false, 0, &m->moe_first_dense));
    m->router_score_bias = true; /* Glm4MoeTopkRouter.e_score_correction_bias */
    return hf_get_u32(c, "num_nextn_predict_layers", false, 0, &m->mtp_layers);
}

/* Llama 4 (text_config): intermediate_size is the width of each routed expert and of the one
   shared expert; intermediate_size_mlp is the dense-block MLP.  MoE blocks: "moe_layers", else
   every interleave_moe_layer_step-th block.  RoPE blocks use chunked attention
   (attention_chunk_size); "no_rope_layers"[l] == 0 marks a NoPE block with full attention,
   by default every 4th block. */
static enum tp_status fam_llama4(const struct cfg *c, struct tp_model *m, bool *explicit_attn,
                                 bool *explicit_moe)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    m->moe_ffn = m->ffn;
    m->shared_ffn = m->ffn;
    m->n_shared_experts = 1;
    TRY(hf_get_u32(c, "intermediate_size_mlp", false, 0, &m->ffn));
    TRY(hf_get_u32(c, "num_local_experts", true, 0, &m->n_experts));
    TRY(hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k));
    /* positive when given: hf_rules.c */
    TRY(hf_get_u32(c, "interleave_moe_layer_step", false, 1, &m->moe_step));
    m->moe_phase = m->moe_step - 1;
    if (m->n_layers > TP_MAX_LAYERS)
        return TP_OK;
    memset(m->layer_moe, 0, sizeof m->layer_moe);
    TRY(read_index_list(c, "moe_layers", m->n_layers, m->layer_moe, 1, explicit_moe));
    TRY(hf_get_u32(c, "attention_chunk_size", false, 0, &m->chunk));
    m->attn_full_every = 4;
    const json_t *nr = json_object_get(c->obj, "no_rope_layers");
    if (m->chunk > 0 && json_is_array(nr) && json_array_size(nr) > 0) {
        if (json_array_size(nr) != m->n_layers)
            return hf_field_error(c, "no_rope_layers", "must have one entry per layer");
        for (uint32_t l = 0; l < m->n_layers; l++) {
            const json_t *v = json_array_get(nr, l);
            if (!json_is_integer(v))
                return hf_field_error(c, "no_rope_layers", "must hold integers 0 or 1");
            m->layer_attn[l] = json_integer_value(v) ? TP_LAYER_CHUNKED : TP_LAYER_FULL;
        }
        *explicit_attn = true;
    }
    return TP_OK;
}

/* Gemma 2/3: explicit head_dim, four RMSNorms per block, GeGLU, tied head.  Sliding blocks:
   "layer_types" when present, else Gemma 2 alternates (even blocks slide) and Gemma 3 makes
   every sliding_window_pattern-th block global. */
static enum tp_status fam_gemma(const struct cfg *c, struct tp_model *m, bool gemma3)
{
    /* Gemma3TextConfig defaults vocab_size to 262208; multimodal files often omit it. */
    TRY(hf_read_llama_like(c, m, true, gemma3 ? 262208 : 0));
    m->norms_per_block = 4;
    m->qk_norm = gemma3;
    TRY(hf_get_u32(c, "sliding_window", false, 0, &m->window));
    uint32_t pattern = 2;
    if (gemma3)
        TRY(hf_get_u32(c, "sliding_window_pattern", false, 6, &pattern));
    m->attn_full_every = pattern;
    return TP_OK;
}

static enum tp_status fam_gpt_oss(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    m->moe_ffn = m->ffn; /* GptOssConfig.intermediate_size is the expert width */
    m->ffn = 0;
    m->qkv_bias = m->o_bias = true; /* attention_bias covers q, k, v and o */
    m->attn_sinks = true;
    m->router_bias = m->expert_bias = true;
    m->expert_glu_clamp = true; /* swiglu_limit (GptOssConfig default 7.0) */
    TRY(hf_get_u32(c, "num_local_experts", true, 0, &m->n_experts));
    const char *k = json_object_get(c->obj, "num_experts_per_tok") ? "num_experts_per_tok"
                                                                    : "experts_per_token";
    TRY(hf_get_u32(c, k, true, 0, &m->top_k));
    TRY(hf_get_u32(c, "sliding_window", false, 0, &m->window));
    m->attn_full_every = 2; /* alternating sliding/full when layer_types is absent */
    return TP_OK;
}

/* Bailing MoE V2 (inclusionAI Ling/Ring 2.0, modeling_bailing_moe_v2.py): fused
   query_key_value (bias iff use_qkv_bias), dense output (bias iff use_bias), per-head q/k
   RMSNorm (use_qk_norm), first_k_dense_replace dense blocks, bias-free SwiGLU experts, one
   shared MLP of num_shared_experts * moe_shared_expert_intermediate_size, expert_bias buffer. */
static enum tp_status fam_bailing_moe(const struct cfg *c, struct tp_model *m)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    TRY(hf_get_bool(c, "use_qkv_bias", false, &m->qkv_bias));
    TRY(hf_get_bool(c, "use_bias", false, &m->o_bias));
    TRY(hf_get_bool(c, "use_qk_norm", false, &m->qk_norm));
    TRY(hf_get_u32(c, "num_experts", true, 0, &m->n_experts));
    TRY(hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k));
    TRY(hf_get_u32(c, "moe_intermediate_size", true, 0, &m->moe_ffn));
    TRY(hf_get_u32(c, "num_shared_experts", false, 0, &m->n_shared_experts));
    uint32_t shared_width;
    TRY(hf_get_u32(c, "moe_shared_expert_intermediate_size", false, m->moe_ffn, &shared_width));
    m->shared_ffn = tp_mul_u32_sat(m->n_shared_experts, shared_width);
    TRY(hf_get_u32(c, "first_k_dense_replace", false, 0, &m->moe_first_dense));
    TRY(hf_get_bool(c, "moe_router_enable_expert_bias", false, &m->router_score_bias));
    return hf_get_u32(c, "num_nextn_predict_layers", false, 0, &m->mtp_layers);
}

/* ---- dispatch ---------------------------------------------------------------------------- */

static const char FAMILIES[] = "gpt2, bloom, llama, mistral, qwen2, qwen2_moe, qwen3, qwen3_moe, "
                               "qwen3_next, mixtral, deepseek_v2, deepseek_v3, kimi_k2 (any "
                               "config with kv_lora_rank: MLA), glm4_moe, llama4, phi3, gemma2, "
                               "gemma3, gemma3_text, gpt_oss, bailing_moe, nemotron_h";

const char *tp_hf_families(void)
{
    return FAMILIES;
}

static enum tp_status read_family(const struct cfg *c, const char *type, struct tp_model *m,
                                  bool *explicit_attn, bool *explicit_moe, bool *explicit_mixer)
{
    /* Multi-head latent attention is read from its fields, whatever the model_type: DeepSeek-V2,
       V2-Lite, V3 and the checkpoints built on them (Kimi K2's "kimi_k2") carry kv_lora_rank */
    const json_t *mla = json_object_get(c->obj, "kv_lora_rank");
    if (mla && !json_is_null(mla))
        return fam_deepseek(c, m, strcmp(type, "deepseek_v2") != 0);
    if (strcmp(type, "nemotron_h") == 0)
        return hf_fam_nemotron_h(c, m, explicit_mixer);
    if (strcmp(type, "qwen3_next") == 0)
        return hf_fam_qwen3_next(c, m, explicit_attn, explicit_moe);
    if (strcmp(type, "gpt2") == 0)
        return fam_gpt2(c, m);
    if (strcmp(type, "bloom") == 0)
        return fam_bloom(c, m);
    if (strcmp(type, "llama") == 0)
        return fam_llama(c, m);
    if (strcmp(type, "mistral") == 0)
        return fam_mistral(c, m);
    if (strcmp(type, "phi3") == 0)
        return fam_phi3(c, m);
    if (strcmp(type, "qwen2") == 0)
        return fam_qwen2(c, m, explicit_attn);
    if (strcmp(type, "qwen3") == 0)
        return fam_qwen3(c, m, explicit_attn);
    if (strcmp(type, "qwen3_moe") == 0)
        return fam_qwen3_moe(c, m, explicit_attn, explicit_moe);
    if (strcmp(type, "qwen2_moe") == 0)
        return fam_qwen2_moe(c, m, explicit_attn, explicit_moe);
    if (strcmp(type, "mixtral") == 0)
        return fam_mixtral(c, m);
    if (strcmp(type, "glm4_moe") == 0)
        return fam_glm4_moe(c, m);
    if (strcmp(type, "llama4") == 0 || strcmp(type, "llama4_text") == 0)
        return fam_llama4(c, m, explicit_attn, explicit_moe);
    if (strcmp(type, "gemma2") == 0)
        return fam_gemma(c, m, false);
    if (strcmp(type, "gemma3") == 0 || strcmp(type, "gemma3_text") == 0)
        return fam_gemma(c, m, true);
    if (strcmp(type, "gpt_oss") == 0)
        return fam_gpt_oss(c, m);
    if (strcmp(type, "bailing_moe") == 0 || strcmp(type, "bailing_moe_v2") == 0)
        return fam_bailing_moe(c, m);
    return tp_fail(c->err, TP_EUNSUPPORTED,
                   "%s: unknown model_type \"%s\" (supported: %s); describe the model with shape "
                   "flags instead (--layers --hidden --heads --kv-heads --ffn --vocab ...)",
                   c->label, type, FAMILIES);
}

/* tp_model_finalize with the file name in front of its message. */
static enum tp_status finalize_in(const char *label, struct tp_model *m, struct tp_error *err)
{
    struct tp_error inner = {{0}, {0}};
    enum tp_status st = tp_model_finalize(m, &inner);
    if (st != TP_OK)
        tp_fail(err, st, "%s: %s", label, inner.msg);
    return st;
}

static enum tp_status from_root(const json_t *root, const char *label, struct tp_model *m,
                                struct tp_error *err)
{
    struct cfg c = {root, root, label, err};
    if (!json_is_object(root))
        return tp_fail(err, TP_EINVAL, "%s: the top level must be a JSON object", label);
    const json_t *mt = json_object_get(root, "model_type");
    if (!mt)
        return tp_fail(err, TP_EINVAL,
                       "%s: field \"model_type\" is missing (supported: %s); or describe the "
                       "model with shape flags",
                       label, FAMILIES);
    if (!json_is_string(mt))
        return hf_field_error(&c, "model_type", "must be a string");
    const char *type = json_string_value(mt);
    const json_t *tc = json_object_get(root, "text_config");
    if (strcmp(type, "llama4") == 0 || strcmp(type, "gemma3") == 0) {
        if (!json_is_object(tc))
            return hf_field_error(&c, "text_config", "is missing (the language model's fields live there)");
        c.obj = tc;
    }

    tp_model_init(m);
    tp_snprintf(m->family, sizeof m->family, "%s", type);
    tp_snprintf(m->name, sizeof m->name, "%s", type);
    tp_snprintf(m->source, sizeof m->source, "%s", label);
    bool explicit_attn = false, explicit_moe = false, explicit_mixer = false;
    TRY(hf_check_rules(&c, type));
    TRY(read_family(&c, type, m, &explicit_attn, &explicit_moe, &explicit_mixer));

    /* The rules fill whatever the file did not list block by block; then the explicit lists
       win.  layer_types (Gemma 2/3, gpt-oss, Qwen) overrides every attention rule; a hybrid
       pattern (Nemotron-H) sets each block's mixer, FFN and MoE flag. */
    uint8_t attn[TP_MAX_LAYERS], moe[TP_MAX_LAYERS], mixer[TP_MAX_LAYERS], no_ffn[TP_MAX_LAYERS];
    memcpy(attn, m->layer_attn, sizeof attn);
    memcpy(moe, m->layer_moe, sizeof moe);
    memcpy(mixer, m->layer_mixer, sizeof mixer);
    memcpy(no_ffn, m->layer_no_ffn, sizeof no_ffn);
    m->layers_explicit = false;
    TRY(finalize_in(label, m, err));
    bool types_found = false;
    if (m->n_layers <= TP_MAX_LAYERS)
        TRY(read_layer_types(&c, m, &types_found));
    if (!types_found && explicit_attn)
        memcpy(m->layer_attn, attn, sizeof attn);
    if (explicit_moe || explicit_mixer)
        memcpy(m->layer_moe, moe, sizeof moe);
    if (explicit_mixer) {
        memcpy(m->layer_mixer, mixer, sizeof mixer);
        memcpy(m->layer_no_ffn, no_ffn, sizeof no_ffn);
    }
    m->layers_explicit = true;
    return finalize_in(label, m, err);
}

enum tp_status tp_model_from_hf_json(const char *json, size_t len, const char *label,
                                     struct tp_model *m, struct tp_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return tp_fail(err, TP_EINVAL, "%s:%d:%d: malformed JSON: %s", label, jerr.line,
                       jerr.column, jerr.text);
    enum tp_status st = from_root(root, label, m, err);
    json_decref(root);
    return st;
}

enum tp_status tp_model_from_hf_config(const char *path, struct tp_model *m, struct tp_error *err)
{
    char file[4096];
    struct stat sb;
    if (stat(path, &sb) != 0)
        return tp_fail(err, TP_ENOTFOUND, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) {
        int n = tp_snprintf(file, sizeof file, "%s/config.json", path);
        if (n < 0 || (size_t)n >= sizeof file)
            return tp_fail(err, TP_EINVAL, "%s: path too long", path);
        if (stat(file, &sb) != 0)
            return tp_fail(err, TP_ENOTFOUND, "%s: directory has no config.json", path);
    } else {
        tp_snprintf(file, sizeof file, "%s", path);
    }
    if (!S_ISREG(sb.st_mode))
        return tp_fail(err, TP_EIO, "%s: not a regular file", file);
    if ((uint64_t)sb.st_size > MAX_CONFIG_BYTES)
        return tp_fail(err, TP_EINVAL, "%s: %lld bytes is too large for a config.json", file,
                       (long long)sb.st_size);
    FILE *f = fopen(file, "rb");
    if (!f)
        return tp_fail(err, TP_EIO, "%s: %s", file, strerror(errno));
    size_t cap = (size_t)sb.st_size + 1;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return tp_fail(err, TP_ENOMEM, "%s: out of memory", file);
    }
    size_t n = fread(buf, 1, cap, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    enum tp_status st = bad ? tp_fail(err, TP_EIO, "%s: read error", file)
                            : tp_model_from_hf_json(buf, n, file, m, err);
    free(buf);
    return st;
}
