/*
 * trainplan/model.h - the model: its description (preset, Hugging Face config.json, shape
 * fields), the presets, parameter counts and FLOPs per token.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_MODEL_H
#define TRAINPLAN_MODEL_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Model description                                                                          */
/* ----------------------------------------------------------------------------------------- */

enum tp_mlp {
    TP_MLP_GLU = 0, /* gated: gate, up, down (SwiGLU, GeGLU) - 3 matrices */
    TP_MLP_GELU = 1 /* plain: up, down (GPT-2/GPT-3/BLOOM GELU) - 2 matrices */
};

enum tp_norm {
    TP_NORM_RMS = 0,  /* RMSNorm: weight only (H) */
    TP_NORM_LAYER = 1 /* LayerNorm: weight and bias (2H) */
};

enum tp_pos {
    TP_POS_ROPE = 0,    /* rotary: no parameters */
    TP_POS_LEARNED = 1, /* learned absolute table: max_positions x H */
    TP_POS_ALIBI = 2    /* ALiBi: no parameters */
};

enum tp_attn_kind {
    TP_ATTN_STANDARD = 0, /* MHA / GQA / MQA with separate or fused q, k, v, o */
    TP_ATTN_MLA = 1       /* DeepSeek multi-head latent attention (low-rank q and kv) */
};

/* What the keys of one block's attention can see. */
enum tp_layer_attn {
    TP_LAYER_FULL = 0,    /* causal over the whole sequence */
    TP_LAYER_SLIDING = 1, /* causal, last `window` tokens (Mistral v0.1, Gemma 2/3, gpt-oss) */
    TP_LAYER_CHUNKED = 2  /* causal inside fixed chunks of `chunk` tokens (Llama 4) */
};

/* What mixes tokens in one block (hybrid models: Nemotron-H, Qwen3-Next).  A block has a
   mixer (or none) and an FFN (or none): Nemotron-H's blocks hold exactly one of Mamba-2,
   attention, MLP or MoE; Qwen3-Next's hold a gated DeltaNet or gated attention, then MoE. */
enum tp_mixer {
    TP_MIXER_ATTN = 0,   /* self-attention (standard or MLA, per `attn`) */
    TP_MIXER_MAMBA2 = 1, /* Mamba-2 SSD mixer (Dao & Gu 2024) */
    TP_MIXER_GDN = 2,    /* gated DeltaNet linear attention (Yang et al. 2024) */
    TP_MIXER_NONE = 3    /* no token mixer: an FFN-only block */
};

/*
 * A model: a decoder-only transformer described by its shapes.  Build one with
 * tp_model_init() + field assignments + tp_model_finalize(), or with a preset or config reader
 * (which finalize for you).  After finalize, layer_moe[] and layer_attn[] hold the per-block
 * layout for blocks 0..n_layers-1.
 */
struct tp_model {
    char name[64];    /* display name */
    char family[32];  /* Hugging Face model_type ("llama", "qwen3_moe", ...) or "custom" */
    char source[192]; /* where the shape comes from (preset citation or file path) */

    uint32_t n_layers;      /* L: transformer blocks, MTP blocks excluded */
    uint32_t hidden;        /* H: model width */
    uint32_t n_heads;       /* n_q: query heads */
    uint32_t n_kv_heads;    /* n_kv: key/value heads; 0 in input = n_heads */
    uint32_t head_dim;      /* d_h; 0 in input = hidden / n_heads */
    bool head_dim_explicit; /* d_h was given, not derived (keeps it when hidden changes) */
    uint32_t ffn;           /* I: width of the dense-block MLP */
    uint32_t vocab;         /* V: rows of the embedding matrix (padded size) */
    uint32_t max_positions; /* rows of the learned position table (TP_POS_LEARNED only) */
    enum tp_mlp mlp;
    enum tp_norm norm;
    enum tp_pos pos;
    enum tp_attn_kind attn;
    bool tied;              /* LM head shares the token embedding */
    bool qkv_bias;          /* biases on q, k, v projections */
    bool o_bias;            /* bias on the output projection */
    bool mlp_bias;          /* biases on the dense MLP matrices */
    bool qk_norm;           /* per-head RMSNorm weights on q and k: 2*d_h per block */
    bool attn_sinks;        /* one learned sink logit per query head per block (gpt-oss) */
    bool embed_norm;        /* LayerNorm after the token embedding (BLOOM) */
    uint8_t norms_per_block;/* 2 (pre-norm) or 4 (Gemma 2/3 sandwich) */

    /* Multi-head latent attention (attn == TP_ATTN_MLA); q_lora_rank 0 = plain q_proj. */
    uint32_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;

    /* Mixture of experts: n_experts == 0 means dense. */
    uint32_t n_experts;         /* E: routed experts per MoE block */
    uint32_t top_k;             /* k: routed experts per token */
    uint32_t moe_ffn;           /* I_e: width of one routed expert */
    uint32_t n_shared_experts;  /* shared experts (always active) */
    uint32_t shared_ffn;        /* I_s: total width of the shared expert(s); 0 = n_shared * I_e */
    bool router_bias;           /* router linear has a bias (gpt-oss) */
    bool expert_bias;           /* routed experts carry biases (gpt-oss) */
    bool expert_glu_clamp;      /* routed experts clamp their GLU halves (gpt-oss swiglu_limit) */
    bool shared_expert_gate;    /* H->1 sigmoid gate on the shared expert (Qwen2-MoE) */
    bool router_score_bias;     /* E-float e_score_correction_bias buffer (DeepSeek-V3, GLM-4.5):
                                   counted only in the checkpoint figure */
    /* Group-limited routing (DeepSeek-V2/V3 config.json n_group / topk_group; Megatron-Core
       --moe-router-num-groups / --moe-router-group-topk): the experts fall into router_groups
       groups and a token picks its experts among its best router_group_topk of them.  With one
       group per node this is DeepSeek-V3's node-limited routing, "each token will be sent to
       at most 4 nodes" (arXiv:2412.19437 §2.1.2).  0 = unlimited. */
    uint32_t router_groups, router_group_topk;
    /* Which blocks are MoE (used when !layers_explicit): block l is MoE iff
       l >= moe_first_dense and l % moe_step == moe_phase. */
    uint32_t moe_first_dense, moe_step, moe_phase;

    uint32_t mtp_layers; /* multi-token-prediction modules the checkpoint declares */

    /* Attention reach (used when !layers_explicit): with window or chunk set, block l is FULL iff
       attn_full_every > 0 and (l+1) % attn_full_every == 0, else SLIDING (window) or CHUNKED. */
    uint32_t window, chunk, attn_full_every;

    uint32_t default_seq; /* the model's training context length, 0 = unknown */

    /* Mamba-2 mixers (layer_mixer TP_MIXER_MAMBA2): d_inner = ssm_heads * ssm_head_dim,
       B and C in ssm_groups groups of ssm_state, a depthwise conv of ssm_conv taps over
       d_inner + 2 * groups * state channels, chunks of ssm_chunk tokens in the SSD scan. */
    uint32_t ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv, ssm_chunk;
    bool ssm_conv_bias, ssm_proj_bias;
    /* Gated DeltaNet mixers (TP_MIXER_GDN): key and value heads and widths, conv taps, chunk. */
    uint32_t gdn_k_heads, gdn_v_heads, gdn_k_dim, gdn_v_dim, gdn_conv, gdn_chunk;
    bool attn_out_gate;       /* q_proj also yields a sigmoid output gate (Qwen3-Next) */
    /* Rule for hybrids (used when !layers_explicit): with gdn_k_heads set, block l is full
       attention iff (l+1) % linear_full_every == 0, else a gated DeltaNet. */
    uint32_t linear_full_every;

    bool layers_explicit;                /* layer_moe/layer_attn were given one by one */
    uint8_t layer_moe[TP_MAX_LAYERS];    /* 1 = block l has a routed-expert FFN */
    uint8_t layer_attn[TP_MAX_LAYERS];   /* enum tp_layer_attn of block l */
    uint8_t layer_mixer[TP_MAX_LAYERS];  /* enum tp_mixer of block l */
    uint8_t layer_no_ffn[TP_MAX_LAYERS]; /* 1 = block l has no FFN (layer_moe is then 0) */
};

/* Sets every field to the defaults of a Llama-style dense decoder with no shape (all zero). */
TP_API void tp_model_init(struct tp_model *m);

/* Derives defaulted fields (n_kv_heads, head_dim, shared_ffn, per-block layout) and validates
   the shapes: zero or absurd sizes, heads not divisible by kv-heads, top_k > experts, ...
   Returns TP_EINVAL with a message naming the field.  Idempotent. */
TP_API enum tp_status tp_model_finalize(struct tp_model *m, struct tp_error *err);

/* Shape overrides, as given by the CLI shape flags.  TP_UNSET leaves a field as it is. */
#define TP_UNSET (-1)
struct tp_shape {
    int64_t layers, hidden, heads, kv_heads, head_dim, ffn, vocab, max_positions;
    int64_t experts, topk, moe_ffn, shared_experts, dense_layers, mtp_layers, window;
    int tied;  /* TP_UNSET, 0, 1 */
    int bias;  /* TP_UNSET, 0, 1: all linear biases (q, k, v, o, MLP) */
    int qk_norm;
    int mlp;   /* TP_UNSET or enum tp_mlp */
    int norm;  /* TP_UNSET or enum tp_norm */
    int pos;   /* TP_UNSET or enum tp_pos */
};

/* A tp_shape with every field TP_UNSET. */
TP_API void tp_shape_init(struct tp_shape *s);
/* True when any field is set. */
TP_API bool tp_shape_any(const struct tp_shape *s);

/* Applies the set fields of `s` to `m` and re-finalizes.  With `m` from tp_model_init() this
   describes a hypothetical model from scratch; then layers, hidden, heads and vocab are
   required and ffn defaults to 4H (GELU) or the Llama rule 256*ceil(8H/3/256) (GLU).
   Changing hidden/heads re-derives a derived head_dim; changing layers rebuilds an explicit
   per-block layout from its rule.  `notes` (may be NULL) receives a ';'-separated list of the
   assumptions made, for display. */
TP_API enum tp_status tp_model_apply_shape(struct tp_model *m, const struct tp_shape *s, char *notes,
                                    size_t notes_len, struct tp_error *err);

/* Reads a Hugging Face config.json (a file path, or a directory holding config.json) into `m`
   and finalizes it.  Supported model_type values: see tp_hf_families().  Errors name the file
   and the field; an unknown model_type lists the supported ones. */
TP_API enum tp_status tp_model_from_hf_config(const char *path, struct tp_model *m, struct tp_error *err);
/* The same from JSON text in memory; `label` names it in messages. */
TP_API enum tp_status tp_model_from_hf_json(const char *json, size_t len, const char *label,
                                     struct tp_model *m, struct tp_error *err);
/* Comma-separated list of the supported model_type values (static string). */
TP_API const char *tp_hf_families(void);

/* ----------------------------------------------------------------------------------------- */
/* Built-in presets                                                                           */
/* ----------------------------------------------------------------------------------------- */

struct tp_preset_info {
    const char *key;     /* stable lower-case name, e.g. "llama-3.1-8b" */
    const char *aliases; /* space-separated alternative names (may be "") */
    const char *label;   /* human name */
    const char *source;  /* citation of the shape */
};

/* Number of presets, and the i-th one (NULL past the end). */
TP_API size_t tp_preset_count(void);
TP_API const struct tp_preset_info *tp_preset_get(size_t i);
/* Builds preset `name` (key, alias or the Hugging Face id of its source, any case) into `m`.  TP_ENOTFOUND when unknown,
   with up to five close names in the message. */
TP_API enum tp_status tp_model_from_preset(const char *name, struct tp_model *m, struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Parameter counts                                                                           */
/* ----------------------------------------------------------------------------------------- */

/* Where a tensor belongs in the breakdown; append only. */
enum tp_component {
    TP_COMP_EMBEDDING = 0, /* token embedding (and BLOOM's embedding LayerNorm: see NORMS) */
    TP_COMP_POSITION,      /* learned position table */
    TP_COMP_ATTENTION,     /* q/k/v/o (or MLA) projections, their biases, q/k norms, sinks */
    TP_COMP_MLP,           /* dense-block MLP */
    TP_COMP_EXPERTS,       /* routed experts (all of them) */
    TP_COMP_SHARED,        /* shared experts and their gate */
    TP_COMP_ROUTER,        /* router weights and bias */
    TP_COMP_NORMS,         /* block norms, final norm, embedding norm */
    TP_COMP_HEAD,          /* untied LM head (0 when tied) */
    TP_COMP_COUNT
};

/* Short lower-case name of a component ("embedding", "attention", ...). */
TP_API const char *tp_component_name(enum tp_component c);

/* One named tensor (or a stack of identical ones: `count` copies, of which `active` are used by
   one token - only routed experts have active < count). */
struct tp_tensor {
    const char *name;           /* Hugging Face style name, e.g. "self_attn.q_proj.weight" */
    enum tp_component comp;
    uint64_t rows, cols;        /* shape; vectors have cols = 1 */
    uint32_t count, active;
    bool replicated;            /* kept whole on every tensor-parallel rank (norms, router,
                                   row-parallel biases); the rest is split by tp (experts by
                                   ep * etp) */
    uint32_t lora;              /* TP_LORA_* bit when LoRA can target this weight, else 0 */
};

/* Worst-case number of tensors one block lists; size arrays passed to tp_block_tensors with it. */
#define TP_MAX_BLOCK_TENSORS 40

/* Lists the tensors of block `layer` (0-based; layer == n_layers lists one MTP module's own
   tensors, excluding the block it wraps).  Returns the number written. */
TP_API size_t tp_block_tensors(const struct tp_model *m, uint32_t layer, struct tp_tensor *out);
/* Lists the tensors outside the blocks (embedding, position table, final norm, head). */
TP_API size_t tp_outer_tensors(const struct tp_model *m, struct tp_tensor *out);

struct tp_params {
    uint64_t total;            /* every trainable parameter of the main model (no MTP, no buffers) */
    uint64_t active;           /* per token: total minus the routed experts a token does not use
                                  (embedding and head included; convention A) */
    uint64_t active_excl_embedding;      /* convention B: active - token embedding */
    uint64_t active_excl_embedding_head; /* convention C: active - embedding - head (as if untied) */
    uint64_t embedding;        /* token embedding + learned position table */
    uint64_t nonembedding;     /* total - embedding (the LM head stays in when untied) */
    uint64_t by_comp[TP_COMP_COUNT];
    uint64_t mtp;              /* the MTP modules' own parameters (not in total) */
    uint64_t buffers;          /* router score-correction buffers (not in total) */
    uint64_t checkpoint;       /* total + buffers: what the main checkpoint stores */
    uint32_t moe_layers, dense_layers;
};

/* Counts the parameters of a finalized model by summing its tensor lists. */
TP_API void tp_count_params(const struct tp_model *m, struct tp_params *p);
/* Parameters of block `layer`; `active` selects the per-token count. */
TP_API uint64_t tp_block_params(const struct tp_model *m, uint32_t layer, bool active);

/* ----------------------------------------------------------------------------------------- */
/* FLOPs                                                                                      */
/* ----------------------------------------------------------------------------------------- */

enum tp_attn_convention {
    TP_ATTN_CAUSAL = 0, /* attention core counts the causal half: 6*s*q_dim per token per layer
                           (Megatron-LM >= 2025-03, Kaplan); the default */
    TP_ATTN_NONCAUSAL = 1 /* the full s x s square: 12*s*q_dim (PaLM, torchtitan, Megatron
                             2023-11..2025-03, Narayanan 2021) */
};

enum tp_recompute {
    TP_RECOMPUTE_NONE = 0,
    TP_RECOMPUTE_SELECTIVE = 1, /* core attention recomputed (Korthikanti 2022) */
    TP_RECOMPUTE_FULL = 2       /* every block's forward recomputed (not the LM head) */
};

/* Megatron-Core's --recompute-modules (with TP_RECOMPUTE_SELECTIVE; none given = core_attn,
   Megatron-Core's default): what each recomputes in backward instead of storing. */
enum tp_recompute_module {
    TP_RC_CORE_ATTN = 1u << 0,   /* the attention core (its s x s terms under eager attention) */
    TP_RC_LAYERNORM = 1u << 1,   /* the norms: their outputs (the QKV and MLP inputs) */
    TP_RC_MOE_ACT = 1u << 2,     /* the experts' activation function: the fc2 inputs */
    TP_RC_MLP = 1u << 3,         /* the dense MLP */
    TP_RC_MOE = 1u << 4,         /* the whole MoE layer (router, experts, shared experts) */
    TP_RC_SHARED = 1u << 5,      /* the shared experts */
    TP_RC_MLA_UP = 1u << 6,      /* MLA's up-projections: Q, K, V rebuilt from the latents */
    TP_RC_OP = 1u << 7           /* torchtitan's op-level policy (selective_ac_option "op"): the
                                    attention kernel's output and every other matmul's output
                                    are kept, the rest of the block is rebuilt (not a
                                    Megatron-Core name) */
};
/* Parses a list ("core_attn,moe_act layernorm": commas or blanks) of Megatron-Core's module
   names into a mask of enum tp_recompute_module; TP_EINVAL names an unknown one. */
TP_API enum tp_status tp_recompute_modules_parse(const char *list, uint32_t *mask,
                                                 struct tp_error *err);
/* Writes the mask as Megatron's names, comma-separated ("core_attn" for 0). */
TP_API int tp_recompute_modules_format(uint32_t mask, char *buf, size_t len);

/* Training FLOPs per token of the batch. */
struct tp_flops {
    uint64_t seq;               /* sequence length the attention terms use */
    double matmul_weights;      /* Sum of GEMM weight elements a token multiplies (blocks, MTP,
                                   LM head; the router and element-wise work are left out) */
    double fwd_dense;           /* 2 * matmul_weights */
    double fwd_attn;            /* forward attention core (QK^T and AV) under the convention */
    double fwd_scan;            /* forward chunked scans of Mamba-2 / gated DeltaNet mixers */
    double fwd;                 /* fwd_dense + fwd_attn + fwd_scan */
    double bwd;                 /* 2 * fwd: data- and weight-gradient GEMMs */
    double model;               /* fwd + bwd: model FLOPs, the basis of MFU */
    double recompute;           /* extra forward work of the recompute mode */
    double hardware;            /* model + recompute: the basis of HFU */
    /* Common conventions, for comparison (per token, training): */
    double six_n;               /* 6 * params_active (Kaplan 2020, Chinchilla) */
    double palm;                /* 6 * params_active + 12 * L * q_dim * s (PaLM App. B) */
    double torchtitan;          /* 6 * (params_active - V*H) + 12 * L * q_dim * s */
    double megatron_2023;       /* exact GEMMs with the non-causal attention square */
    double narayanan_2021;      /* 72*L*H^2*(1 + s/(6H) + V/(12*L*H)); GPT-only closed form */
};

/* Computes training FLOPs per token at sequence length `seq` (> 0).  `mtp` is the number of MTP
   modules trained along (0 = main model only; at most m->mtp_layers is meaningful but any value
   is accepted).  Exact matmul counting after Megatron-LM num_floating_point_operations. */
TP_API enum tp_status tp_flops_per_token(const struct tp_model *m, uint64_t seq,
                                  enum tp_attn_convention conv, enum tp_recompute rc,
                                  uint32_t mtp, struct tp_flops *f, struct tp_error *err);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_MODEL_H */
