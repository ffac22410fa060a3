/*
 * hf_config_hybrid.c - config.json readers of the hybrid families: NVIDIA Nemotron-H (Mamba-2
 * mixers beside a few attention blocks, model_type "nemotron_h") and Qwen3-Next (gated
 * DeltaNet beside gated attention, model_type "qwen3_next").
 *
 * Field names and defaults follow configuration_nemotron_h.py (the checkpoints' remote code,
 * and transformers' NemotronHConfig) and transformers' configuration_qwen3_next.py.
 */
#include "hf_internal.h"

#include <string.h>

/* Nemotron-H: one module per block, from hybrid_override_pattern (M Mamba-2, * attention,
   - MLP, E MoE), each behind one RMSNorm; squared-ReLU MLPs of two matrices (up, down);
   Mamba-2 mixers of mamba_num_heads x mamba_head_dim with n_groups B/C groups. */
enum tp_status hf_fam_nemotron_h(const struct cfg *c, struct tp_model *m, bool *explicit_mixer)
{
    TRY(hf_get_u32(c, "hidden_size", true, 0, &m->hidden));
    TRY(hf_get_u32(c, "num_hidden_layers", true, 0, &m->n_layers));
    TRY(hf_get_u32(c, "num_attention_heads", true, 0, &m->n_heads));
    TRY(hf_get_u32(c, "num_key_value_heads", false, m->n_heads, &m->n_kv_heads));
    const char *hd = json_object_get(c->obj, "attention_head_dim") ? "attention_head_dim"
                                                                   : "head_dim";
    TRY(hf_get_u32(c, hd, false, 0, &m->head_dim));
    m->head_dim_explicit = m->head_dim != 0;
    TRY(hf_get_u32(c, "intermediate_size", false, 0, &m->ffn));
    TRY(hf_get_u32(c, "vocab_size", true, 0, &m->vocab));
    TRY(hf_get_bool(c, "tie_word_embeddings", false, &m->tied));
    bool attn_bias;
    TRY(hf_get_bool(c, "attention_bias", false, &attn_bias));
    m->qkv_bias = m->o_bias = attn_bias;
    TRY(hf_get_bool(c, "mlp_bias", false, &m->mlp_bias));
    m->mlp = TP_MLP_GELU; /* NemotronHMLP: up_proj, relu2, down_proj */
    m->norms_per_block = 1;
    TRY(hf_get_u32(c, "mamba_num_heads", true, 0, &m->ssm_heads));
    TRY(hf_get_u32(c, "mamba_head_dim", true, 0, &m->ssm_head_dim));
    TRY(hf_get_u32(c, "ssm_state_size", true, 0, &m->ssm_state));
    TRY(hf_get_u32(c, "n_groups", false, 1, &m->ssm_groups));
    TRY(hf_get_u32(c, "conv_kernel", false, 4, &m->ssm_conv));
    TRY(hf_get_u32(c, "chunk_size", false, 128, &m->ssm_chunk));
    TRY(hf_get_bool(c, "use_conv_bias", true, &m->ssm_conv_bias));
    TRY(hf_get_bool(c, "use_bias", false, &m->ssm_proj_bias));
    const json_t *latent = json_object_get(c->obj, "moe_latent_size");
    if (latent && !json_is_null(latent))
        return tp_fail(c->err, TP_EUNSUPPORTED,
                       "%s: field \"moe_latent_size\" (latent MoE projections) is not modelled",
                       c->label);
    TRY(hf_get_u32(c, "n_routed_experts", false, 0, &m->n_experts));
    if (m->n_experts > 0) {
        TRY(hf_get_u32(c, "num_experts_per_tok", true, 0, &m->top_k));
        TRY(hf_get_u32(c, "moe_intermediate_size", true, 0, &m->moe_ffn));
        TRY(hf_get_u32(c, "n_shared_experts", false, 0, &m->n_shared_experts));
        TRY(hf_get_u32(c, "moe_shared_expert_intermediate_size", false, 0, &m->shared_ffn));
        m->router_score_bias = true; /* NemotronHTopkRouter.e_score_correction_bias */
    }
    const char *pattern = json_string_value(json_object_get(c->obj, "hybrid_override_pattern"));
    if (!pattern)
        return hf_field_error(c, "hybrid_override_pattern",
                              "is missing or not a string (one character per block: M, *, -, E)");
    TRY(hf_read_context(c, m));
    if (m->n_layers > TP_MAX_LAYERS)
        return TP_OK; /* finalize reports the depth */
    struct tp_error inner = {{0}, {0}};
    enum tp_status st = tp_model_set_pattern(m, pattern, &inner);
    if (st != TP_OK)
        return tp_fail(c->err, st, "%s: %s", c->label, inner.msg);
    *explicit_mixer = true;
    return TP_OK;
}

/* Qwen3-Next: every block is a gated DeltaNet or (each full_attention_interval-th, or as
   layer_types lists) gated attention with q/k norms, then a Qwen2-MoE style sparse block with
   a gated shared expert.  The checkpoint ships one MTP layer (mtp.* tensors; vLLM's
   qwen3_next_mtp reads num_nextn_predict_layers, default 1). */
enum tp_status hf_fam_qwen3_next(const struct cfg *c, struct tp_model *m, bool *explicit_attn,
                                 bool *explicit_moe)
{
    TRY(hf_read_llama_like(c, m, false, 0));
    *explicit_attn = false;
    m->qk_norm = true;
    m->attn_out_gate = true;        /* Qwen3NextAttention: q_proj yields query and gate */
    m->shared_expert_gate = true;   /* Qwen3NextSparseMoeBlock.shared_expert_gate */
    TRY(hf_qwen_moe(c, m, explicit_moe));
    TRY(hf_get_u32(c, "linear_num_key_heads", true, 0, &m->gdn_k_heads));
    TRY(hf_get_u32(c, "linear_num_value_heads", true, 0, &m->gdn_v_heads));
    TRY(hf_get_u32(c, "linear_key_head_dim", true, 0, &m->gdn_k_dim));
    TRY(hf_get_u32(c, "linear_value_head_dim", true, 0, &m->gdn_v_dim));
    TRY(hf_get_u32(c, "linear_conv_kernel_dim", false, 4, &m->gdn_conv));
    /* positive when given: hf_rules.c */
    TRY(hf_get_u32(c, "full_attention_interval", false, 4, &m->linear_full_every));
    /* fla's chunk_gated_delta_rule runs chunks of 64 tokens (BT = 64) */
    m->gdn_chunk = 64;
    return hf_get_u32(c, "num_nextn_predict_layers", false, 1, &m->mtp_layers);
}
