/*
 * trainplan.h - the whole public API of libtrainplan.
 *
 * libtrainplan plans large-language-model training runs: exact parameter and FLOP counts from a
 * model description (built-in preset, Hugging Face config.json, or shape fields).  Later modules
 * (memory, time, search, calibration) build on the same model description.
 *
 * Ownership: every object is a plain value owned by the caller; the library keeps no global
 * mutable state, never allocates inside the evaluation functions, never prints and never exits.
 * Fallible functions return enum tp_status and, on failure, fill the caller's struct tp_error
 * with a one-line message (no trailing newline).  The only functions that read files are
 * tp_model_from_hf_config() and tp_model_from_hf_json(); they release everything they allocate
 * before returning.
 *
 * Units are in the field names or comments: counts are plain numbers of parameters, FLOPs are
 * floating-point operations (a multiply-add is 2), lengths are tokens.
 */
#ifndef TRAINPLAN_H
#define TRAINPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_VERSION "0.1.0"
/* What a declaration of the public API carries: exported from libtrainplan.so, which builds every
   other symbol hidden (-fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define TP_API __attribute__((visibility("default")))
#else
#define TP_API
#endif
/* Version of the JSON documents the CLI writes; bumped on any incompatible key change. */
#define TP_SCHEMA_VERSION 1
/* Most transformer blocks a model may have (the largest published models have < 200). */
#define TP_MAX_LAYERS 1024
/* Most virtual pipeline stages (pp * vpp) an explicit pipeline layout may list. */
#define TP_MAX_VSTAGES 256

/* Status codes; append only. */
enum tp_status {
    TP_OK = 0,
    TP_EINVAL,       /* an input value is missing, out of range or inconsistent */
    TP_ENOTFOUND,    /* a named thing (preset, file) does not exist */
    TP_EUNSUPPORTED, /* a valid input the library does not model (e.g. an unknown model_type) */
    TP_EIO,          /* a file could not be read */
    TP_ENOMEM        /* an allocation failed (file readers, the calibration fit) */
};

struct tp_error {
    char msg[512]; /* one line, no trailing newline; empty when no error */
    char field[32]; /* the input field the error is about, named as the CLI's option without
                       its dashes and as a binding's keyword ("gbs", "gas"); empty when none */
};

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
    bool shared_expert_gate;    /* H->1 sigmoid gate on the shared expert (Qwen2-MoE) */
    bool router_score_bias;     /* E-float e_score_correction_bias buffer (DeepSeek-V3, GLM-4.5):
                                   counted only in the checkpoint figure */
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
/* Builds preset `name` (key or alias, case-insensitive) into `m`.  TP_ENOTFOUND when unknown,
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


/* ----------------------------------------------------------------------------------------- */
/* Hardware catalog                                                                           */
/* ----------------------------------------------------------------------------------------- */

enum tp_dtype { TP_FP32 = 0, TP_TF32, TP_BF16, TP_FP8, TP_FP4, TP_DTYPE_COUNT };

/* One accelerator as its datasheet gives it.  Bandwidths are per GPU, per direction, in
   bytes/s; FLOP/s are dense (no sparsity); 0 = the device has no such mode. */
struct tp_gpu {
    const char *key;        /* stable lower-case key: "h100-sxm", "mi300x", ... */
    const char *label;      /* human name */
    const char *source;     /* datasheet citation */
    double peak_flops[TP_DTYPE_COUNT];
    double hbm_bytes;       /* memory capacity in bytes; a vendor's "80 GB" is 80 GiB of DRAM */
    double hbm_bw;          /* memory bandwidth */
    double intra_bw;        /* scale-up link per GPU (NVLink, xGMI, ...); PCIe when none */
    uint32_t gpus_per_node; /* typical GPUs per node / scale-up domain */
    double inter_bw;        /* default scale-out (NIC) bandwidth per GPU */
    double host_bw;         /* host link (PCIe) per direction */
    uint32_t sms;           /* streaming multiprocessors / compute units (0 = unknown) */
    /* Maximum achievable matmul FLOP/s as a fraction of the peak (large bf16 / fp8 GEMM sweeps,
       [MLE] "MAMF"); 0 = not measured (struct tp_calib supplies a default). */
    double mamf_bf16, mamf_fp8;
    /* Asynchronous warpgroup / tcgen05 tensor-core MMA (NVIDIA sm_90 Hopper, sm_100 data-centre
       Blackwell): kernels written for Ampere's mma.sync, such as FlashAttention-2, reach only
       part of the peak there (struct tp_calib fa2_ratio). */
    bool async_mma;
    /* Scale-up links of a point-to-point mesh (AMD Infinity Fabric / xGMI: 7 links per GPU in
       an 8-GPU node; Gaudi's RoCE all-to-all): a group of g ranks in a node uses g - 1 of them,
       so it reaches (g - 1) / links of intra_bw.  0 = a switch (NVSwitch): any group gets it
       all. */
    uint32_t mesh_links;
};

TP_API size_t tp_gpu_count(void);
TP_API const struct tp_gpu *tp_gpu_get(size_t i);
/* Finds a GPU by key or alias (case-insensitive); TP_ENOTFOUND lists close keys. */
TP_API enum tp_status tp_gpu_find(const char *name, const struct tp_gpu **out, struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Cluster, job and parallel layout                                                           */
/* ----------------------------------------------------------------------------------------- */

struct tp_cluster {
    struct tp_gpu gpu;      /* a copy, so every figure can be overridden */
    uint32_t n_gpus;
    uint32_t gpus_per_node;
};

/* `n_gpus` of catalog GPU `gpu` (key or alias) with the catalog's GPUs per node;
   TP_ENOTFOUND as tp_gpu_find. */
TP_API enum tp_status tp_cluster_init(struct tp_cluster *c, const char *gpu, uint32_t n_gpus,
                               struct tp_error *err);

enum tp_task { TP_TASK_PRETRAIN = 0, TP_TASK_SFT, TP_TASK_DPO, TP_TASK_LORA, TP_TASK_QLORA };
enum tp_optimizer {
    TP_OPT_ADAMW = 0,  /* fp32 m and v */
    TP_OPT_ADAMW_8BIT, /* bitsandbytes blockwise 8-bit m and v (block 256, fp32 absmax) */
    TP_OPT_ADAMW_4BIT, /* torchao 4-bit m and v (block 128, fp32 scale) */
    TP_OPT_ADAFACTOR,  /* factored second moment, no first moment */
    TP_OPT_SGD,        /* no state */
    TP_OPT_SGD_MOMENTUM,
    TP_OPT_ADAMW_BF16  /* torch AdamW on 16-bit parameters without a mixed-precision wrapper
                          (a model loaded in bf16, no fp32 master): m and v in bf16, the
                          update applied to the bf16 weights (torch/optim/adamw.py keeps the
                          states in the parameter's dtype) */
};
enum tp_precision {
    TP_PREC_BF16 = 0,
    TP_PREC_FP16,
    TP_PREC_FP8,    /* per-tensor or blockwise scaled FP8 (Transformer Engine DelayedScaling,
                       Float8CurrentScaling, Float8BlockScaling) */
    TP_PREC_FP32,
    TP_PREC_MXFP8,  /* FP8 with 32-element E8M0 block scales (MXFP8BlockScaling): needs
                       block-scaled tensor cores (Blackwell, MI355X) */
    TP_PREC_NVFP4,  /* FP4 E2M1 with 16-element FP8 block scales and a per-tensor scale
                       (NVFP4BlockScaling): GEMMs at the FP4 rate */
    TP_PREC_MXFP4   /* FP4 E2M1 with 32-element E8M0 block scales (OCP MX) */
};
#define TP_PREC_COUNT 7
/* The tensor-core type a precision's GEMMs run in: TP_FP8 (fp8, mxfp8), TP_FP4 (nvfp4,
   mxfp4), TP_TF32 (fp32), else TP_BF16. */
TP_API enum tp_dtype tp_prec_gemm_dtype(enum tp_precision p);

/* The share of a GEMM's tensor-core rate left when an operand row is `width` elements of
   `elem_bytes` each: 1 on the 128-byte grid, less off it, less again off the 16-byte grid
   (align.c: NVIDIA's Tensor Core Requirements, sized by BLOOM-176B's hidden 14400 vs 13824). */
TP_API double tp_gemm_align_eff(double width, double elem_bytes);
/* A model dimension whose GEMM width (per TP rank) is off the 128-byte grid. */
struct tp_misalign {
    char what[32];   /* "hidden", "head_dim", "heads x head_dim", "ffn", ... */
    double dim;      /* the model's dimension */
    double width;    /* what one TP rank's GEMM sees (dim / tp where TP splits it) */
    double nearest;  /* the nearest value of the dimension on the grid */
    double eff;      /* tp_gemm_align_eff of the width */
};
/* The model's dimensions that run off the grid at TP size `tp` and precision `p`; fills at
   most `cap` and returns how many there are. */
TP_API size_t tp_model_misaligned(const struct tp_model *m, uint32_t tp, enum tp_precision p,
                                  struct tp_misalign *out, size_t cap);
/* Bytes per element of a GEMM input saved for backward in the precision's format (the
   quantized data plus its block scales): 1 fp8, 1 + 1/32 mxfp8, 0.5 + 1/16 nvfp4, 0.5 + 1/32
   mxfp4; 2 for 16-bit, 4 for fp32. */
TP_API double tp_prec_saved_bytes(enum tp_precision p);
/* Lower-case name ("bf16", "nvfp4", ...); "?" when out of range. */
TP_API const char *tp_prec_name(enum tp_precision p);
/* Whose bytes-per-parameter conventions: DeepSpeed/FSDP keep 16-bit gradients (2+2+12 = 16 B
   for AdamW); Megatron accumulates fp32 main gradients (2+4+12 = 18 B). */
enum tp_framework {
    TP_FW_DEEPSPEED = 0, TP_FW_FSDP, TP_FW_MEGATRON, TP_FW_AXOLOTL, TP_FW_TORCHTITAN,
    TP_FW_MEGATRON_DS, /* Megatron-DeepSpeed: Megatron-LM's TP/PP on DeepSpeed's engine */
    TP_FW_COUNT
};
/* How a stack runs the routed experts of an MoE block (training-physics.md §5.5, docs/stacks.md).
   DEFAULT: the stack's own (tp_stack_moe_impl).  EAGER: Hugging Face modeling code's Python
   loop over the experts (one small GEMM chain per expert, a host sync to find its tokens,
   gather and index_add_); GROUPED: one grouped GEMM over all local experts with fused
   permute/unpermute (Megatron-Core/TE, MegaBlocks, torch._grouped_mm); DEEPSPEED: DeepSpeed-MoE
   / Tutel (capacity-padded dispatch, a loop over the local experts, expert parallel).  DENSE:
   every expert runs over every token, the unselected ones on zero-scaled input (transformers'
   Llama4TextMoe: hidden_states.repeat(num_experts, 1); Axolotl's linearized Llama 4 experts);
   a Hugging Face stack's default for the llama4 family. */
enum tp_moe_impl { TP_MOE_DEFAULT = 0, TP_MOE_EAGER, TP_MOE_GROUPED, TP_MOE_DEEPSPEED, TP_MOE_DENSE };
/* Attention kernel.  TP_ATTN_FLASH is the framework's default fused kernel: Megatron-Core/NeMo
   run Transformer Engine's (cuDNN fused attention: native to Hopper and Blackwell), the others
   FlashAttention-2 (flash-attn, PyTorch SDPA's flash backend).  FLASH2 / FLASH3 name the kernel
   outright: FlashAttention-2, or an architecture-native one (FlashAttention-3, cuDNN, TE). */
enum tp_attn_impl { TP_ATTN_FLASH = 0, TP_ATTN_EAGER, TP_ATTN_FLASH2, TP_ATTN_FLASH3 };
enum tp_offload { TP_OFFLOAD_NONE = 0, TP_OFFLOAD_OPTIMIZER, TP_OFFLOAD_PARAMS };

/* LoRA target modules (bit mask). */
enum {
    TP_LORA_Q = 1u << 0, TP_LORA_K = 1u << 1, TP_LORA_V = 1u << 2, TP_LORA_O = 1u << 3,
    TP_LORA_GATE = 1u << 4, TP_LORA_UP = 1u << 5, TP_LORA_DOWN = 1u << 6,
    TP_LORA_ALL = 0x7f
};

/* How a loss over the full logits holds them (with fused_loss false).  DEFAULT: the 16-bit
   logits and one fp32 copy for backward (Megatron-Core's vocab-parallel cross-entropy, whose
   backward writes the gradient into that copy).  16BIT: a kernel that reads the 16-bit logits
   and keeps only a per-token log-sum-exp (flash-attn's cross-entropy: llm-foundry's default
   loss_fn; Transformer Engine's, which writes the gradient into its input).  HF: Hugging Face
   modeling code with PyTorch's cross_entropy (transformers >= 4.45 ForCausalLMLoss): the model
   output keeps the 16-bit logits, the loss upcasts them and saves the fp32 log-softmax, whose
   backward holds two fp32 gradients at once.  HF_FP32_LOGITS: transformers <= 4.44, whose
   forward upcast the logits itself (logits = logits.float()) and returned the fp32 copy. */
enum tp_loss_impl { TP_LOSS_DEFAULT = 0, TP_LOSS_16BIT, TP_LOSS_HF, TP_LOSS_HF_FP32_LOGITS };

struct tp_job {
    enum tp_task task;
    enum tp_optimizer optimizer;
    enum tp_precision precision;
    enum tp_framework framework;
    enum tp_attn_impl attn_impl;
    uint64_t seq;              /* tokens per sample */
    uint32_t lora_rank;        /* LoRA / QLoRA adapter rank */
    uint32_t lora_targets;     /* TP_LORA_* mask */
    bool dropout;              /* activations keep dropout masks (GPT-2/3-era recipes) */
    bool fused_loss;           /* chunked/fused cross-entropy: no full fp32 logits copy */
    bool grad_16bit;           /* Megatron's main gradients and their reduction in 16 bits
                                  (grad_reduce_in_fp32 False: Megatron-Bridge and NeMo 2
                                  performance recipes); else fp32 where the stack keeps them */
    bool tp_comm_overlap;      /* TP collectives overlapped with GEMMs (Transformer Engine
                                  userbuffers: Megatron-Core --tp-comm-overlap, NeMo's
                                  tp_comm_overlap; torchtitan async TP) */
    enum tp_loss_impl loss_impl; /* the loss over the full logits (unless fused_loss) */
    bool kbit_fp32;            /* QLoRA through PEFT's prepare_model_for_kbit_training (TRL's
                                  SFTTrainer for a 4-bit model outside FSDP): the non-quantized
                                  weights, the residual stream and the logits in fp32 */
    enum tp_moe_impl moe_impl; /* TP_MOE_DEFAULT: the stack's */
    bool z3_leaf;              /* ZeRO-3 fetches an MoE block's experts as one leaf module
                                  (deepspeed.utils.set_z3_leaf_modules), not expert by expert */
    double moe_capacity;       /* token-dropping capacity factor; 0 = dropless */
    double moe_imbalance;      /* dropless: busiest expert's load over the mean (>= 1) */
    double trainable_frac;     /* share of the processed token slots the user's throughput
                                  counts (0 < f <= 1; 1 = every slot).  Axolotl >= 0.13 logs
                                  tokens_per_second_per_gpu over trainable tokens only (labels
                                  != -100: no prompt turns, no padding; axolotl PR #3072); the
                                  token budget counts the same tokens */
    /* Framework overhead (explicit and overridable; training-physics.md §3.8 [heuristic]) */
    double overhead_base_bytes;   /* CUDA context, cuBLAS/flash workspaces */
    double overhead_comm_bytes;   /* per live NCCL communicator */
    double overhead_frag;         /* allocator fragmentation, fraction of states + activations
                                     (logits included) */
};

enum tp_schedule { TP_SCHED_1F1B = 0, TP_SCHED_INTERLEAVED, TP_SCHED_GPIPE };

struct tp_layout {
    uint32_t dp, tp, pp, vpp, ep, etp, cp;
    bool sp;                   /* Megatron sequence parallelism (with tp > 1) */
    uint32_t zero;             /* 0..3: ZeRO stage / FSDP strategy (3 = FULL_SHARD) */
    uint32_t shard_group;      /* HSDP / hpZ: ranks per sharding group (0 = the whole DP group) */
    uint32_t mbs, gas;         /* sequences per micro-batch; micro-batches per step */
    enum tp_recompute recompute;
    uint32_t recompute_layers; /* with TP_RECOMPUTE_FULL: only this many blocks per stage (0 = all) */
    uint32_t recompute_modules; /* with TP_RECOMPUTE_SELECTIVE: enum tp_recompute_module mask
                                   (0 = core_attn) */
    enum tp_offload offload;
    bool offload_activations;  /* the activations saved for backward are copied to host memory
                                  as they are made and back before they are used (transformers'
                                  gradient_checkpointing offload, torchtitan/TRL activation
                                  offloading, Megatron-Core fine-grained activation offloading) */
    uint32_t offload_layers;   /* with offload_activations: only the first this many blocks of a
                                  stage (Megatron-Core cpu_offloading_num_layers; 0 = all) */
    enum tp_schedule schedule;
    /* Uneven pipeline split (Megatron-Core --decoder-first/last-pipeline-num-layers), vpp == 1
       only: transformer blocks on the first / last stage, 0 = not given.  The stages not given
       share the remaining blocks equally (they must divide); both 0 = the default split. */
    uint32_t pp_first, pp_last;
    /* Megatron-Core's split per virtual stage (--pipeline-model-parallel-layout, or what
       --decoder-first/last-pipeline-num-layers and --account-for-embedding/loss-in-pipeline-split
       give with interleaving): pp_map[v] blocks on virtual stage v, which is chunk v / pp of
       rank v % pp, for pp_nv = pp * vpp stages in layer order; pp_nv 0 = no map (the split
       above).  Filled by tp_layout_pp_parse / tp_layout_pp_account, or by tp_layout_check from
       pp_first/pp_last when vpp > 1. */
    uint32_t pp_nv;
    uint16_t pp_map[TP_MAX_VSTAGES];
};

/* Fills a job with the defaults: pretrain, AdamW, bf16, DeepSpeed conventions, flash attention,
   seq 4096, LoRA rank 16 on all linear layers, dropless MoE with imbalance 1.2, overhead
   1.0 GB + 0.5 GB per communicator + 8% (training-physics.md §3.8). */
TP_API void tp_job_init(struct tp_job *j);
/* Whether the job's attention kernel is native to async-MMA GPUs (FLASH3, or FLASH under
   Megatron-Core/NeMo, whose Transformer Engine runs cuDNN fused attention); FlashAttention-2
   and eager attention are not. */
TP_API bool tp_attn_native(const struct tp_job *j);
/* The share of processed token slots the job's throughput and token budget count
   (tp_job.trainable_frac; 1 when unset). */
TP_API double tp_job_trainable_frac(const struct tp_job *j);

/* A software stack (--framework) as a first-class part of the model: what it can run and which
   kernels it runs (docs/stacks.md; each capability with the source it comes from). */
struct tp_stack {
    enum tp_framework fw;
    const char *key;        /* "megatron", "axolotl", ... */
    const char *aliases;    /* other names, comma-separated ("hf,trl" for axolotl) */
    const char *label;
    const char *source;     /* where the capabilities come from */
    bool tp, pp, vpp, cp, ep, sp, uneven_pp, offload;
    unsigned zero_mask;     /* bit z: ZeRO stage / FSDP sharding z the stack runs */
    bool ep_zero3;          /* expert parallel together with ZeRO-3 / full sharding */
    bool eager_modules;     /* Hugging Face modeling code op by op (no fused norms/rotary/GLU
                               unless a fused loss / Liger is on) */
    enum tp_moe_impl moe_impl; /* its MoE implementation (DEEPSPEED stacks: EAGER at ep 1) */
    bool fp32_grad_reduce;  /* reduces gradients in fp32 (Megatron main grads, FSDP2 default) */
    bool ds_zero;           /* its sharding is DeepSpeed's ZeRO (stage-2 per-micro-batch
                               reduce-scatter, bucket buffers, ZeRO-3 hooks per module) */
};
TP_API size_t tp_stack_count(void);
TP_API const struct tp_stack *tp_stack_get(enum tp_framework fw);
/* By key or alias, case-insensitive; TP_ENOTFOUND lists the keys. */
TP_API enum tp_status tp_stack_find(const char *name, const struct tp_stack **out, struct tp_error *err);
/* The MoE implementation a job runs: its own, else its stack's (DeepSpeed-MoE where the
   stack runs expert parallel through it and ep > 1; where the stack runs Hugging Face's modeling
   code, that code's own: dense over all experts for the llama4 family).  `m` may be NULL. */
TP_API enum tp_moe_impl tp_job_moe_impl(const struct tp_model *m, const struct tp_job *j,
                                        const struct tp_layout *l);
TP_API const char *tp_moe_impl_name(enum tp_moe_impl impl);
/* Whether the job's stack can run the layout; TP_EINVAL names the first thing it cannot
   ("axolotl runs no tensor parallelism (tp 4)"), for search and for layouts a user gives. */
TP_API enum tp_status tp_stack_check(const struct tp_model *m, const struct tp_job *j,
                              const struct tp_layout *l, struct tp_error *err);
/* dp = tp = pp = vpp = ep = cp = mbs = gas = 1 (0 for etp: = tp), zero 0, no recompute. */
TP_API void tp_layout_init(struct tp_layout *l);

/* Checks that layout, model, job and cluster fit together; derives dp (from n_gpus) when it is
   0 and etp when 0.  Messages say what does not divide what, with a hint. */
TP_API enum tp_status tp_layout_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, struct tp_layout *l, struct tp_error *err);
/* Checks the cluster's figures against the job: GPUs per node, finite non-negative peaks,
   bandwidths, and a tensor-core rate for the job's precision (fp8 on a GPU without FP8 units,
   or fp32 on one without fp32/tf32 rates, is TP_EINVAL, not a silent or infinite answer).
   tp_layout_check() calls it. */
TP_API enum tp_status tp_cluster_check(const struct tp_cluster *c, const struct tp_job *j,
                                struct tp_error *err);
/* Checks a run as the functions that take a checked layout need it (finalized model, cluster,
   job, layout sizes and world size, calibration unless NULL), without changing anything: what
   tp_time_step(), tp_memory_stage() and tp_run_evaluate() run first. */
struct tp_calib;
TP_API enum tp_status tp_run_check(const struct tp_model *m, const struct tp_cluster *c,
                            const struct tp_job *j, const struct tp_layout *l,
                            const struct tp_calib *cal, struct tp_error *err);
/* The dense peak the job's GEMMs run at and MFU is measured against: the 16-bit peak, or for
   fp32 jobs the TF32 tensor-core peak where the GPU has one (else its FP32 peak). */
TP_API double tp_job_peak_flops(const struct tp_cluster *c, const struct tp_job *j);
/* Parses Megatron-Core's --pipeline-model-parallel-layout string (pipeline_parallel_layer_
   layout.py: 'E' embedding, 't' a decoder block, 'm' an MTP block, 'L' the loss, '|' between
   virtual stages, "(..)*n" and "x*n" repeat, ',' cosmetic; e.g. "Et*3|(tt|)*29,m|L") into
   l->pp_map for the layout's pp (set l->pp first): the stage count fixes vpp (it must be a
   multiple of pp, and match a vpp > 1 already set), the embedding must come first and the loss
   last, exactly once each, and the 't's must number n_layers.  TP_EINVAL names what is wrong. */
TP_API enum tp_status tp_layout_pp_parse(const char *text, uint32_t n_layers, struct tp_layout *l,
                                         struct tp_error *err);
/* Megatron-Core's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-
   split: the embedding and/or the loss take one block's slot, so (n_layers + embedding + loss)
   must divide by pp * vpp; the first (last) virtual stage builds one block fewer.  Fills
   l->pp_map for l->pp and l->vpp. */
TP_API enum tp_status tp_layout_pp_account(uint32_t n_layers, bool embedding, bool loss,
                                           struct tp_layout *l, struct tp_error *err);
/* Writes l->pp_map as a layout string Megatron-Core parses ("Et*3|(t*2|)*29|t|L"); the
   default split of m (may be NULL: then "") when pp_nv is 0.  Returns what snprintf would. */
TP_API int tp_layout_pp_format(const struct tp_model *m, const struct tp_layout *l, char *buf,
                               size_t len);
/* Transformer blocks pipeline stage `stage` (0..pp-1) of a checked layout holds (all its
   interleaved chunks together).  Without pp_first/pp_last, stage s holds blocks
   [s L / pp, (s+1) L / pp): an uneven depth spreads its remainder over the later stages. */
TP_API uint32_t tp_stage_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t stage);

/* ----------------------------------------------------------------------------------------- */
/* Memory per GPU                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* Bytes on one GPU of one pipeline stage at its peak (start of the last backward). */
struct tp_memory {
    uint32_t stage;            /* 0-based pipeline stage */
    uint32_t first_layer, n_layers;
    double params;             /* parameters held on this GPU (after TP/PP/EP, before ZeRO) */
    double weights_bytes;      /* resident weights (incl. a frozen DPO reference / LoRA base) */
    double grads_bytes;
    double optimizer_bytes;    /* master weights + optimizer states */
    double gather_bytes;       /* ZeRO-3/FSDP transient unsharded units */
    double activations_bytes;  /* stored activations of the micro-batches in flight */
    double logits_bytes;       /* logits and loss buffers (last stage) */
    double comm_bytes;         /* communication buckets */
    double overhead_bytes;     /* context, NCCL, fragmentation */
    double total_bytes;
    double capacity_bytes;
    double headroom_bytes;     /* capacity - total (negative when it does not fit) */
    bool fits;
    double in_flight;          /* micro-batches whose activations are held */
    double host_bytes_per_node;/* CPU RAM the offload needs per node */
};

/* Memory of pipeline stage `stage` (0..pp-1) for a checked layout. Pure, allocation-free.
   TP_EINVAL (NaN totals, fits false) when tp_run_check() rejects the inputs or stage >= pp. */
TP_API enum tp_status tp_memory_stage(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                     const struct tp_layout *l, uint32_t stage, struct tp_memory *out);
/* A change that makes a run fit. */
struct tp_fix {
    char text[96];            /* the flags to add, e.g. "--recompute full" */
    struct tp_job job;
    struct tp_layout layout;
    double total_bytes;       /* worst-stage total with the change */
};

/* Lists up to `cap` single changes (or pairs, when no single one works) after which the worst
   stage fits; cheapest in speed first.  Returns the number written. */
TP_API size_t tp_memory_suggest(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l, struct tp_fix *out,
                         size_t cap);

/* When the run does not fit (`mem` its worst stage) but would with a fused loss or another
   recompute mode (no layout size changes): those flags ("--fused-loss"), the first in speed;
   else "".  The memory and estimate documents' fits_with. */
TP_API void tp_fit_hint(const struct tp_model *m, const struct tp_cluster *c,
                        const struct tp_job *j, const struct tp_layout *l,
                        const struct tp_memory *mem, char *buf, size_t len);

/* The stage with the largest total (the one that decides the fit); TP_EINVAL as
   tp_memory_stage(). */
TP_API enum tp_status tp_memory_worst(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_layout *l,
                               struct tp_memory *out);

/* ----------------------------------------------------------------------------------------- */
/* Measured runs (the runs-file format of validation/runs/README.md)                          */
/* ----------------------------------------------------------------------------------------- */

/* One measured run mapped to model, cluster, job and layout.  Measured figures are NaN when
   the row does not give them. */
struct tp_run {
    char row_id[96];
    char source[96];        /* the file's source key (row_id before ':') */
    char framework_key[24];
    char assumptions[512];  /* defaults the mapper had to assume, ';'-separated */
    struct tp_model model;
    struct tp_cluster cluster;
    struct tp_job job;
    struct tp_layout layout;
    double tokens_per_s_per_gpu, step_time_s, tflops_per_gpu, mfu, hfu;
    double samples_per_s;   /* sequences per second, all GPUs (NaN: not given) */
    double wall_clock_h, total_tokens; /* a whole run: hours and tokens (NaN: not given) */
    char tflops_convention[24]; /* how tflops_per_gpu / mfu count FLOPs (runs README) */
    double global_batch;    /* sequences per step as mapped (mbs * gas * dp) */
    double mem_gib;         /* measured peak memory per GPU (GiB as the source prints it) */
    bool oom;
    bool duplicate;         /* dup_of is set: the same measurement as another row */
    bool gas_unknown;       /* grad_accum was empty (derived from global_batch, else 1) */
    bool mbs_unknown;       /* micro_batch was empty (derived or assumed 1) */
};

/* Maps one row, given as parallel arrays of column names and cell texts (empty = unknown), to
   a run.  Columns are found by name, in any order; extra columns are ignored.  A row that
   cannot be mapped returns TP_EINVAL / TP_EUNSUPPORTED with the reason (e.g. "seq_len is
   empty", "arch nemotron_h (hybrid Mamba) is not modelled"). */
TP_API enum tp_status tp_run_from_row(const char *const *cols, const char *const *cells, size_t n,
                               struct tp_run *out, struct tp_error *err);

/* FLOPs per token that a TFLOP/s convention of the runs file counts for this model at sequence
   length `seq` ("megatron-hfu-2021", "korthikanti-mfu", "megatron-core", "nemo-model",
   "llm-foundry", "torchtitan", "dgxc-formula"); 0 for "other", empty or unknown names. */
TP_API double tp_convention_flops_per_token(const struct tp_model *m, uint64_t seq, const char *conv);

/* The run's measured throughput in tokens/s per GPU: the row's own figure, else its step time
   over the mapped batch, else its TFLOP/s (or MFU times the dense 16-bit peak) divided by its
   convention's FLOPs per token.  NaN when none applies; `how` (may be NULL) names the route. */
TP_API double tp_run_measured_tokens_per_s(const struct tp_run *run, const char **how);

/* Called once per data row of a runs file with the mapped run and why == NULL, or, when the
   row cannot be mapped, with the run's identity and measured figures filled and the reason in
   `why`.  Return false to stop reading. */
typedef bool (*tp_run_fn)(void *ctx, const char *path, size_t line, const struct tp_run *run,
                          const struct tp_error *why);
/* Reads a runs CSV (RFC 4180 quoting; the first line names the columns) and calls `fn` for
   every row.  TP_EIO / TP_EINVAL for an unreadable or malformed file. */
TP_API enum tp_status tp_runs_read(const char *path, tp_run_fn fn, void *ctx, struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Time per step                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* Most per-GPU entries a calibration may carry. */
#define TP_CALIB_MAX_GPUS 32

/* The inputs a calibration was fitted on. */
struct tp_calib_domain {
    uint32_t rows, sources;       /* 0 rows: unknown (hand-written file) */
    uint32_t n_gpus;
    struct {
        char key[24];
        uint32_t rows;
        uint32_t max_gpus;        /* largest cluster measured on this GPU */
    } gpu[TP_CALIB_MAX_GPUS];
    double min_params, max_params; /* total parameters of the models measured */
    uint64_t max_seq;
};

/* Why an input lies outside a calibration's domain (flags of tp_calib_domain_check). */
enum {
    TP_DOMAIN_GPU = 1u << 0,     /* GPU type never measured */
    TP_DOMAIN_SCALE = 1u << 1,   /* more than 4x the GPUs of the largest run on that GPU */
    TP_DOMAIN_SIZE = 1u << 2,    /* model under 1/4 or over 4x the parameters measured */
    TP_DOMAIN_SEQ = 1u << 3      /* sequence over 4x the longest measured */
};

/* Per-GPU efficiencies a calibration may set (0 = keep the catalog's / the global default). */
struct tp_calib_gpu {
    char key[24];         /* catalog key ("h100-sxm") */
    double mamf_bf16, mamf_fp8, attn_eff, mem_eff;
};

/*
 * Every efficiency parameter of the time model, in one place (docs/design.md "Time model").
 * Physics (FLOPs, bytes, collective volumes) is computed; these numbers say how much of the
 * hardware's peak the software achieves.  Defaults come from tp_calib_init(); a calibration file
 * (tp_calib_from_json) overrides any subset.
 */
struct tp_calib {
    /* GEMMs: time = FLOPs / (peak * mamf * gemm_scale * eta_tile * eta_wave), or the bytes over
       HBM bandwidth when that is longer (small dimensions) */
    double mamf_default;   /* MAMF fraction for GPUs the catalog has none for */
    double fp8_mamf_ratio; /* fp8 MAMF / bf16 MAMF when the fp8 one is unknown */
    double gemm_scale;     /* real training GEMMs relative to the MAMF sweep's best shapes */
    uint32_t tile_m, tile_n; /* output tile of one thread block (wave and tile quantization) */
    /* attention core (FlashAttention): forward at attn_eff of the 16-bit peak */
    double attn_eff;
    double attn_bwd_ratio; /* backward / forward time of the attention kernel */
    double fa2_ratio;      /* FlashAttention-2 over the native kernel on GPUs with async MMA
                              (Hopper, Blackwell: struct tp_gpu async_mma) */
    /* memory-bound kernels (norms, activations, rotary, residuals, casts, loss) */
    double mem_eff;        /* achieved fraction of HBM bandwidth */
    double fused_elementwise; /* share of element-wise traffic that fused kernels remove
                                 (Megatron/TE, torch.compile) */
    /* host-side overheads */
    double layer_overhead_s;  /* per block per micro-batch, forward + backward (launches) */
    double eager_op_s;        /* host time of one eager PyTorch op (dispatch + launch) */
    double host_sync_s;       /* one device-to-host sync with the GPU drained (torch.where) */
    double moe_eager_ops;     /* ops per expert forward in Hugging Face's expert loop */
    double z3_fetch_s;        /* one on-demand ZeRO-3 parameter fetch (hook, gather, wait) */
    double step_overhead_s;   /* per optimizer step (logging, scheduler, data, syncs) */
    /* network: achieved bus bandwidth over line rate, and NCCL latency terms */
    double eff_intra, eff_inter, eff_pcie;
    double lat_base_s, lat_intra_s, lat_inter_s;
    /* overlap: fraction of the covering compute that can hide a communication */
    double dp_overlap;     /* DP gradient reduction / parameter gather behind backward/forward */
    double fsdp_overlap;   /* ZeRO-3/FSDP per-micro-batch gathers behind compute (prefetch) */
    double tp_overlap;     /* TP collectives hidden behind GEMMs, in jobs that overlap them
                              (struct tp_job tp_comm_overlap); 0 in the others */
    double ep_overlap;     /* MoE all-to-all hidden behind expert compute */
    double pp_overlap;     /* pipeline send/recv hidden behind compute */
    /* optimizer */
    double opt_eff;        /* HBM fraction the optimizer kernels reach */
    double host_adam_bw;   /* CPU Adam: host memory bytes/s per GPU (offloaded optimizer) */
    /* per-GPU overrides */
    struct tp_calib_gpu gpus[TP_CALIB_MAX_GPUS];
    size_t n_gpus;
    /* what the calibration was fitted on ("fit" in the file): inputs outside it are flagged */
    struct tp_calib_domain domain;
};

/* The physics priors: sourced constants and first-principles efficiencies before any fit
   (docs/design.md "Calibration").  `trainplan calibrate --base prior` starts from these. */
TP_API void tp_calib_prior(struct tp_calib *c);
/* The built-in defaults: the priors plus data/calibration.json (fitted by `trainplan calibrate`
   over ../shared/validation/runs and compiled in). */
TP_API void tp_calib_init(struct tp_calib *c);
/* Reads a calibration JSON document (keys as the struct's field names, "gpus": {"key": {...}});
   keys not given keep their current value; unknown keys are an error. */
TP_API enum tp_status tp_calib_from_json(const char *json, size_t len, struct tp_calib *c,
                                  struct tp_error *err);
TP_API enum tp_status tp_calib_from_file(const char *path, struct tp_calib *c, struct tp_error *err);
/* Writes the calibration as JSON into buf (NUL-terminated); returns the length needed. */
TP_API size_t tp_calib_to_json(const struct tp_calib *c, char *buf, size_t len);
/* The per-GPU entry for `key`, or NULL. */
TP_API const struct tp_calib_gpu *tp_calib_gpu_find(const struct tp_calib *c, const char *key);
/* Flags (TP_DOMAIN_*) for the ways a run lies outside the calibration's domain, and a
   one-line explanation in `why` (empty when inside, or when the domain is unknown). */
TP_API unsigned tp_calib_domain_check(const struct tp_calib *c, const struct tp_model *m,
                               const struct tp_cluster *cl, const struct tp_job *j, char *why,
                               size_t len);


/* Step time of a checked layout, broken down.  Times are seconds per optimizer step on the
   critical path (the slowest pipeline stage); "exposed" communication is what compute does not
   hide. */
struct tp_time {
    double step_s;
    /* compute of all micro-batches on the slowest stage */
    double fwd_s, bwd_s, recompute_s;
    double gemm_s, attn_s, elementwise_s; /* the same compute split by kernel kind */
    double overhead_s;      /* launch overhead per layer and per step */
    /* exposed communication per step */
    double tp_comm_s, cp_comm_s, ep_comm_s, pp_comm_s, dp_comm_s;
    double dp_comm_total_s; /* DP/ZeRO traffic before overlap */
    double bubble_s;        /* pipeline fill and drain */
    double optimizer_s;     /* optimizer step and gradient clipping (GPU or CPU Adam) */
    double offload_s;       /* host transfers of an offloaded optimizer or parameters */
    uint32_t slowest_stage;
    /* throughput */
    double tokens_per_step, samples_per_step;  /* tokens counted as the job counts them
                                                  (tp_job.trainable_frac of the slots) */
    double tokens_per_s, tokens_per_s_per_gpu, samples_per_s;
    double slots_per_s_per_gpu; /* token slots processed (padding and masked tokens included):
                                   the FLOP rates and MFU use these */
    /* FLOPs per token (task-aware: frozen weights have no weight gradients; DPO adds the
       reference forward) and the rates they give */
    double model_flops_per_token, hw_flops_per_token;
    double peak_flops;      /* the MFU basis: tp_job_peak_flops (fp32 runs: the TF32 peak) */
    double model_tflops_per_gpu, mfu, hw_tflops_per_gpu, hfu;
    double megatron_tflops_per_gpu;  /* what Megatron-LM logs: causal model FLOPs */
    double deepspeed_tflops_per_gpu; /* Megatron-DeepSpeed's throughput formula (GPT shape,
                                        x4/3 with full recompute) */
};

/* Time per step of a checked layout (tp_layout_check) with `cal`.  Pure and allocation-free.
   TP_EINVAL (and NaN figures) when tp_run_check() rejects the inputs. */
TP_API enum tp_status tp_time_step(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                  const struct tp_layout *l, const struct tp_calib *cal, struct tp_time *out);

/* An 80% range on a throughput estimate: measured / predicted tokens/s of held-out runs of the
   same class (stack kind, GPU vendor, dense or MoE), widened outside the calibrated domain
   (src/core/range.c, docs/accuracy.md).  tokens/s low = predicted * lo, high = predicted * hi;
   a step time or a wall-clock divides by them. */
struct tp_range {
    double lo, hi;
    char cls[32];          /* "fused/nvidia/dense", "hf/other/moe", ... */
    uint32_t rows;         /* held-out runs behind it (0: borrowed from a nearer class) */
    const char *basis;     /* where the range comes from, in words */
    bool widened;          /* outside the calibrated domain (TP_DOMAIN_* given) */
};
TP_API void tp_time_range(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                   const struct tp_layout *l, unsigned domain, struct tp_range *out);

/* Collective times (seconds) for `bytes` over n ranks, `per_node` of them in each node, with the
   cluster's links and the calibration's efficiencies (training-physics.md §4.1-4.3). */
TP_API double tp_time_allreduce(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                         uint32_t n, uint32_t per_node);
TP_API double tp_time_allgather(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                         uint32_t n, uint32_t per_node);
TP_API double tp_time_alltoall(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                        uint32_t n, uint32_t per_node);
/* Pipeline bubble as a fraction of the ideal time: (p-1)/(v m) ([NAR21] §2.2). */
TP_API double tp_bubble_fraction(uint32_t pp, uint32_t vpp, uint32_t micro_batches);

/* ----------------------------------------------------------------------------------------- */
/* Validation: predicted against measured (trainplan validate)                                 */
/* ----------------------------------------------------------------------------------------- */

/* One mapped run predicted with a calibration. */
struct tp_run_eval {
    double predicted_tokens_per_s_per_gpu;
    double measured_tokens_per_s_per_gpu; /* NaN: the row has no convertible throughput */
    const char *measured_from;  /* the row's figure: "tokens/s", "step time", "TFLOP/s", "MFU",
                                   "HFU" or "" */
    /* the same comparison in the row's own unit (step time s, TFLOP/s under the row's
       convention, MFU or HFU in %; tokens/s per GPU otherwise) */
    double predicted_native, measured_native;
    const char *native_unit;
    double err;                 /* predicted / measured tokens/s - 1 (NaN when unmeasured) */
    double predicted_step_s;
    double predicted_mem_gib;   /* worst stage */
    double measured_mem_gib;    /* NaN when the row gives none */
    double mem_err;             /* predicted / measured - 1 */
    bool predicted_fits, measured_oom;
    unsigned domain;            /* TP_DOMAIN_* flags */
    char domain_note[192];
    struct tp_range range;      /* the prediction's 80% range (tp_time_range) */
    bool in_range;              /* the measured tokens/s lies inside it */
    struct tp_time time;
};

/* Predicts one mapped run (tp_run_from_row) with `cal` and pairs it with what was measured.
   TP_EINVAL (NaN predictions) when tp_run_check() rejects the run. */
TP_API enum tp_status tp_run_evaluate(const struct tp_run *run, const struct tp_calib *cal,
                     struct tp_run_eval *out);

/* Error statistics of relative errors (predicted / measured - 1). */
struct tp_err_stats {
    size_t n;
    double median_abs, p90_abs; /* of |err|, linear interpolation between order statistics */
    double bias;                /* median of the signed errors */
};
/* `scratch` holds n doubles; NaNs in `err` are skipped. */
TP_API void tp_err_stats(const double *err, size_t n, double *scratch, struct tp_err_stats *out);

/* ----------------------------------------------------------------------------------------- */
/* Calibration fit (trainplan calibrate)                                                       */
/* ----------------------------------------------------------------------------------------- */

struct tp_fit_opts {
    double prior_weight;   /* pull toward the base values, in rows' worth (default 0.4;
                              lambda = prior_weight / rows) */
    uint32_t min_gpu_rows; /* a GPU type gets its own GEMM rate from this many rows (default 5) */
    uint32_t max_evals;    /* objective evaluations per Nelder-Mead run (default 2500) */
    uint32_t rounds;       /* alternations of the global and per-GPU fits (default 2) */
    bool per_gpu;          /* fit per-GPU GEMM rates (default true) */
    uint32_t starts;       /* Nelder-Mead starts: the base and the best quasi-random points
                              (default 4; 1 = the base only) */
    uint32_t samples;      /* quasi-random points tried for the starts (default 256) */
    /* called every 256 objective evaluations with the count so far in this fit (NULL: none);
       in tp_calib_cross_validate, the count summed over the folds so far, one call at a time
       whatever thread runs the fold; the library prints nothing, the caller may show progress */
    void (*progress)(void *ctx, unsigned evaluations);
    void *progress_ctx;
    uint32_t threads;      /* tp_calib_cross_validate's folds run on this many threads (default
                              0: one per online CPU); the figures do not depend on it */
};
TP_API void tp_fit_opts_init(struct tp_fit_opts *o);

#define TP_FIT_MAX_PARAMS 48
struct tp_fit_param {
    char name[48];         /* calibration key ("gemm_scale", "gpus.h100-sxm.mamf_bf16") */
    double before, after;
    bool identified;       /* the rows move the objective when it moves; false: kept */
};
struct tp_fit_result {
    size_t rows, sources;
    double objective_before, objective_after; /* reported: mean over sources of the median
                                                 |log(predicted / measured)| (the fit itself
                                                 minimises a pseudo-Huber loss, fit.c) */
    unsigned evaluations;  /* of the objective (each predicts every row) */
    size_t n_params;
    struct tp_fit_param params[TP_FIT_MAX_PARAMS];
};

/* Fits the efficiency parameters (docs/design.md "Calibration") starting from and regularised
   toward `base`; `out` is `base` with the fitted values and the rows' domain joined to its own.
   Allocates working memory (GSL); TP_EINVAL when there is nothing to fit. */
TP_API enum tp_status tp_calib_fit(const struct tp_run *const *runs, const double *measured, size_t n,
                            const struct tp_calib *base, const struct tp_fit_opts *o,
                            struct tp_calib *out, struct tp_fit_result *res,
                            struct tp_error *err);
/* Leave-one-source-out: for each source, fits on the other sources' rows and predicts its own;
   held_out[i] = predicted / measured - 1 (NaN when only one source).  The folds run on
   o->threads POSIX threads; each is the fit tp_calib_fit would make of its rows. */
TP_API enum tp_status tp_calib_cross_validate(const struct tp_run *const *runs, const double *measured,
                                       size_t n, const struct tp_calib *base,
                                       const struct tp_fit_opts *o, double *held_out,
                                       struct tp_error *err);
/* Both in one call: the fit to every row (tp_calib_fit's `out` and `res`) and, when held_out is
   not NULL, leave-one-source-out, the fit and the folds side by side on o->threads threads over
   the rows' calibration-independent work done once.  The same figures as the two calls. */
TP_API enum tp_status tp_calib_fit_validate(const struct tp_run *const *runs,
                                            const double *measured, size_t n,
                                            const struct tp_calib *base,
                                            const struct tp_fit_opts *o, struct tp_calib *out,
                                            struct tp_fit_result *res, double *held_out,
                                            struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Layout search                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* Why a layout was rejected (the first constraint it breaks); append only. */
enum tp_reject {
    TP_REJECT_TP_HEADS = 0, /* tp must divide the query and key/value heads */
    TP_REJECT_LIMIT,        /* beyond --max-tp (default: a node), --max-pp, --max-cp, --max-ep */
    TP_REJECT_PP_LAYERS,    /* pp <= layers; pp * vpp must divide them (interleaving); with
                               vpp 1, pp must divide the layers, or the layers plus the
                               embedding and/or the head counted as one layer each */
    TP_REJECT_CP_SEQ,       /* 2 * cp must divide the sequence (load-balanced ring attention) */
    TP_REJECT_EP_EXPERTS,   /* ep must divide the routed experts */
    TP_REJECT_BATCH,        /* mbs * dp must divide the global batch */
    TP_REJECT_FRAMEWORK,    /* the framework cannot run it (DeepSpeed: data parallel and MoE only;
                               FSDP: no pipeline; DeepSpeed MoE not under ZeRO-3; ...) */
    TP_REJECT_MEMORY,       /* the worst stage does not fit, even with the optimizer offloaded */
    TP_REJECT_COUNT
};
/* Short stable name of a rejection reason ("tp-divides-heads", ..., "memory"). */
TP_API const char *tp_reject_name(enum tp_reject r);

/* recompute_mask bits: the three modes, and partial recompute (full on N blocks per stage,
   searched only together with TP_SEARCH_RC_FULL). */
enum {
    TP_SEARCH_RC_NONE = 1u << 0,
    TP_SEARCH_RC_SELECTIVE = 1u << 1,
    TP_SEARCH_RC_FULL = 1u << 2,
    TP_SEARCH_RC_PARTIAL = 1u << 3
};

struct tp_search_opts {
    uint64_t gbs;            /* global batch in sequences (fixed) */
    uint32_t max_tp;         /* 0 = gpus per node */
    uint32_t max_pp;         /* 0 = the layers */
    uint32_t max_cp;         /* default 1 (no context parallelism) */
    uint32_t max_ep;         /* 0 = no limit beyond dp * cp */
    uint32_t max_vpp;        /* interleaving chunks tried with pp > 1 (default 8) */
    uint32_t max_mbs;        /* micro-batch sizes 1..max_mbs (default 16) */
    double mem_headroom;     /* fraction of the capacity kept free (0..0.9) */
    unsigned zero_mask;      /* ZeRO stages to try, bit z (default all; the framework narrows) */
    unsigned recompute_mask; /* TP_SEARCH_RC_* (default all four) */
    bool offload;            /* try optimizer offload where a layout does not fit on the GPU */
    bool uneven_pp;          /* with pp > 1 and vpp 1, also try the splits that count the
                                embedding and/or the head as a layer (default true) */
    bool exhaustive;         /* time every feasible layout: no pruning by dominance, every
                                partial-recompute count (tests; default false) */
    double probe_time_per_token; /* count the timed layouts faster than this (--explain);
                                    0 = none */
    /* Sharding: this call enumerates only the outer (tp, cp, pp) combinations whose running
       index i has i % n_shards == shard (n_shards 0 or 1: all).  Disjoint shards' stats add up
       (tp_search_stats_add) and their hits merge (tp_search_merge) to exactly the single-call
       result, so callers may run shards on threads; the library itself runs none. */
    uint32_t shard, n_shards;
};
TP_API void tp_search_opts_init(struct tp_search_opts *o);

struct tp_search_hit {
    struct tp_layout layout; /* checked, as tp_time_step saw it */
    struct tp_time time;
    double memory_bytes;     /* worst stage */
    double time_per_token;   /* step_s / tokens_per_step: the rank key */
};

struct tp_search_stats {
    uint64_t evaluated;      /* layouts considered (a rejection at an outer level counts the
                                zero-stage x micro-batch x recompute choices it stands for;
                                partial recompute counts each count of blocks probed) */
    uint64_t feasible;       /* those that satisfy every constraint and fit */
    uint64_t dominated;      /* feasible, but a cheaper recompute mode (or fewer recomputed
                                blocks) of the same layout fits, so they cannot rank first and
                                were not timed */
    uint64_t rejected[TP_REJECT_COUNT]; /* sums to evaluated - feasible */
    uint64_t partial;        /* partial-recompute layouts probed (part of evaluated) */
    uint64_t uneven;         /* layouts with an uneven pipeline split (part of evaluated) */
    uint64_t faster_than_probe; /* timed layouts faster per token than probe_time_per_token */
};

/* Classifies one layout as the search would (dp derived from the GPUs, etp = tp, SP with TP
   under Megatron, gas from the global batch): the first constraint it breaks, or
   TP_REJECT_COUNT when it is feasible; then `mem` (when it got that far) and `t` (feasible)
   hold its evaluation.  Any valid pp_first/pp_last split passes (the search itself enumerates
   only the even and the embedding/head ones); the even split needs pp | L.  For --explain. */
TP_API enum tp_reject tp_search_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_search_opts *o,
                               const struct tp_calib *cal, struct tp_layout *l,
                               struct tp_memory *mem, struct tp_time *t);

/* Enumerates the layouts of job `j` on cluster `c`, keeps the `cap` fastest per token in `hits`
   (sorted by tp_search_hit_cmp), and counts the rest by reason.  Pure and allocation-free. */
TP_API enum tp_status tp_search(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_search_opts *o,
                         const struct tp_calib *cal, struct tp_search_hit *hits, size_t cap,
                         size_t *n_hits, struct tp_search_stats *st, struct tp_error *err);

/* The search's total order: time per token, then the layout fields (tp, pp, vpp, cp, ep, dp,
   zero, mbs, recompute, recompute_layers, pp_first, pp_last, offload).  <0, 0, >0. */
TP_API int tp_search_hit_cmp(const struct tp_search_hit *a, const struct tp_search_hit *b);
/* Merges two lists sorted by tp_search_hit_cmp into `out` (not overlapping them), keeping the
   first `cap`; returns how many it wrote. */
TP_API size_t tp_search_merge(const struct tp_search_hit *a, size_t na, const struct tp_search_hit *b,
                       size_t nb, struct tp_search_hit *out, size_t cap);
/* Adds the counts of `part` (one shard) to `sum`. */
TP_API void tp_search_stats_add(struct tp_search_stats *sum, const struct tp_search_stats *part);

/* A search hit and the software stack it was found on (the search over every stack). */
struct tp_stack_hit {
    struct tp_search_hit h;
    enum tp_framework fw;
};
/* Orders by tp_search_hit_cmp, then by stack (for qsort). */
TP_API int tp_stack_hit_cmp(const void *a, const void *b);
/* Searches each of the `n_fw` stacks in `fw` (j->framework is left at the best's, else fw[0]),
   keeping the `cap` fastest over all of them, sorted by tp_stack_hit_cmp; the stats add up
   over the stacks.  Allocates a scratch list of cap hits per stack. */
TP_API enum tp_status tp_search_stacks(const struct tp_model *m, const struct tp_cluster *c,
                                       struct tp_job *j, const struct tp_search_opts *o,
                                       const struct tp_calib *cal,
                                       const enum tp_framework *fw, size_t n_fw,
                                       struct tp_stack_hit *out, size_t cap, size_t *n,
                                       struct tp_search_stats *st, struct tp_error *err);
/* The relative difference in time per token within which a layout ties the best: half the 80%
   range of the best's class, in log space; `rg` receives that range. */
TP_API double tp_search_tie_band(const struct tp_model *m, const struct tp_cluster *c,
                                 const struct tp_job *j, const struct tp_stack_hit *best,
                                 unsigned domain, struct tp_range *rg);
/* The step-time term that differs most from the best's: "bubble +0.120s", or "best". */
TP_API void tp_search_differs(const struct tp_stack_hit *best, const struct tp_stack_hit *h,
                              char *buf, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* Training logs (trainplan logs)                                                             */
/* ----------------------------------------------------------------------------------------- */

/* The log formats tp_log_parse() understands; append only. */
enum tp_log_format {
    TP_LOG_UNKNOWN = 0,
    TP_LOG_MEGATRON,    /* Megatron-LM / Megatron-Core: " iteration N/ M | ... | elapsed time per
                           iteration (ms): X | throughput per GPU (TFLOP/s/GPU): X | ..." */
    TP_LOG_MEGATRON_DS, /* Megatron-DeepSpeed: the same lines with "samples per second: X" and
                           "TFLOPs: X" */
    TP_LOG_HF,          /* Hugging Face Trainer, Axolotl, TRL: per-step dicts {'loss': ...}, the
                           tqdm progress bar, the {'train_runtime': ...} summary */
    TP_LOG_TORCHTITAN,  /* "step: N  loss: X  memory: X GiB(p%)  tps: N  tflops: X  mfu: X%" */
    TP_LOG_NANOGPT,     /* "iter N: loss X, time X ms, mfu X%" */
    TP_LOG_LLMC,        /* llm.c "step N/M | loss X ... | X ms | X% bf16 MFU | X tok/s" */
    TP_LOG_JSON,        /* the users' JSON run logs: "training_iterations" / "training_progress"
                           lists of {iter, loss, dt_ms, tokens_per_sec, mfu, memory_allocated_gb} */
    TP_LOG_FORMAT_COUNT
};

/* Stable short name ("megatron", "megatron-deepspeed", "hf", "torchtitan", "nanogpt", "llm.c",
   "json"; "unknown") and a human description. */
TP_API const char *tp_log_format_name(enum tp_log_format f);
TP_API const char *tp_log_format_label(enum tp_log_format f);
/* The list a user reads when a file is in none of the formats (static string). */
TP_API const char *tp_log_formats_understood(void);
/* A format by name or alias ("megatron-lm", "axolotl", "trl", "llmc", ...); TP_ENOTFOUND
   lists the names. */
TP_API enum tp_status tp_log_format_find(const char *name, enum tp_log_format *out,
                                  struct tp_error *err);

/* One logged step.  Every figure is as the log prints it, NaN when the line does not give it. */
struct tp_log_step {
    uint64_t step;               /* the iteration number as logged (HF without a progress bar:
                                    1, 2, ... in order) */
    double step_s;               /* seconds per optimizer step */
    double tokens_per_s;         /* all GPUs together */
    double tokens_per_s_per_gpu;
    double samples_per_s;
    double tflops_per_gpu;       /* under the framework's own FLOP convention */
    double mfu;                  /* fraction 0..1, the framework's convention and peak */
    double mem_gib;              /* peak memory per GPU in GiB (reserved where the log gives it;
                                    a JSON log's "gb" figure kept as printed) */
    double loss;
};

/* What a log states about the run as a whole; 0 / NaN = not stated. */
struct tp_log_info {
    enum tp_log_format format;
    size_t n_steps;              /* step records found (all of them, also beyond `cap`) */
    size_t n_lines;              /* text lines read (0 for JSON) */
    uint32_t gpus;               /* world size (Megatron, llm.c, torchtitan device mesh, JSON
                                    config; HF: total batch / (per-device batch x accumulation)) */
    uint32_t tp, pp, dp, cp;     /* Megatron's parallel sizes */
    uint64_t global_batch;       /* sequences per optimizer step */
    uint64_t micro_batch;        /* sequences per micro-batch per GPU */
    uint64_t grad_accum;         /* micro-batches per step (HF banner) */
    uint64_t seq;                /* tokens per sequence */
    double tokens_per_step;      /* as stated (nanoGPT, llm.c, JSON config), else
                                    global_batch x seq */
    uint64_t total_steps;        /* planned steps (train_iters, max_steps, progress-bar total) */
    double mem_gib;              /* peak from separate memory reports (Megatron "memory (MB)"
                                    lines: max reserved, else max allocated); NaN */
    /* the Hugging Face Trainer's end-of-training summary (whole run, warm-up included) */
    double train_runtime_s, train_samples_per_s, train_steps_per_s, train_loss;
    double train_tokens_per_s_per_gpu; /* "train_tokens_per_second": per device */
    size_t n_implausible;        /* figures dropped as physically impossible (negative, zero or
                                    non-finite times and rates, MFU above 1, TFLOP/s above the
                                    fastest catalog GPU's peak, memory above twice the largest
                                    HBM): the steady state never sees them */
};

/* Parses a training log held in memory (text, or a JSON document).  With `hint` ==
   TP_LOG_UNKNOWN the format is detected from the content: a JSON object with a
   training_iterations / training_progress list, else the text format with the most step lines.
   Up to `cap` step records go into `steps` (NULL with cap 0 counts them: info->n_steps).
   Errors (TP_EINVAL): an empty text; no known format ("no known training-log format found
   (understood: ...)"); with a hint, no step lines of that format.  A log whose only figures are
   the HF summary is accepted with 0 steps.  Allocates a line buffer, a pattern and (JSON) the
   document, all released before returning. */
TP_API enum tp_status tp_log_parse(const char *text, size_t len, enum tp_log_format hint,
                            struct tp_log_step *steps, size_t cap, struct tp_log_info *info,
                            struct tp_error *err);

/* How the steady state is taken. */
struct tp_log_steady_opts {
    int64_t skip_warmup;         /* logged steps to skip at the start; < 0 = the default rule:
                                    the first 10% (rounded up, at least 1) when there are >= 5 */
    uint32_t gpus;               /* 0 = as the log states */
    uint64_t global_batch, seq;  /* 0 = as the log states (tokens per step = their product) */
};
TP_API void tp_log_steady_opts_init(struct tp_log_steady_opts *o);

/*
 * The steady state of a log (docs/design.md "Training logs").  Warm-up: the first
 * `skip_warmup` logged steps are skipped.  Outliers: on the first series the log has, in the
 * order step time, tokens/s per GPU, tokens/s, samples/s, TFLOP/s, MFU, a step is dropped when
 * it lies more than 3 robust standard deviations from the median of the steps after warm-up,
 * the robust SD being max(1.4826 x MAD, 1% of the median).  Figures are over the steps kept:
 * median and mean step time; tokens/s = tokens per step / mean step time when both are known,
 * else the mean of the logged rates (per GPU x GPUs and back when one side is missing);
 * TFLOP/s and MFU the mean of the logged figures; memory the peak of the whole log.
 */
struct tp_log_steady {
    size_t n_steps, n_warmup, n_outliers, n_used;
    bool warmup_default;         /* n_warmup came from the default rule */
    uint64_t first_step, last_step; /* iteration numbers of the first and last step used */
    const char *basis;           /* series the outlier rule ran on ("step time", ...; static) */
    double basis_median, basis_threshold; /* dropped beyond median +- threshold (basis units:
                                             seconds, tokens/s, ..., MFU fraction) */
    double step_s_median, step_s_mean;
    double tokens_per_s, tokens_per_s_per_gpu, samples_per_s;
    double tflops_per_gpu, mfu;  /* as logged (the framework's convention) */
    double mem_gib;              /* peak per GPU over the whole log */
    double loss_last;            /* of the last step used */
    double tokens_per_step;      /* used for the derivations (0 = unknown) */
    uint32_t gpus;               /* used for the derivations (0 = unknown) */
    uint64_t global_batch, seq;  /* used (0 = unknown) */
    bool step_time_derived;      /* step time = tokens per step / tokens/s (not logged) */
    bool from_summary;           /* no per-step timing: the HF summary's whole-run averages */
    char rule[320];              /* the warm-up and outlier rule with its numbers, one line */
    char how[192];               /* where throughput and step time come from, one line */
};

/* Whether one step (after the warm-up) is an outlier under `o`'s rule: its figure of the
   series `o->basis` lies more than basis_threshold from basis_median. */
TP_API bool tp_log_is_outlier(const struct tp_log_steady *o, const struct tp_log_step *s);
/* Computes the steady state of n parsed steps.  Allocates scratch (freed before returning).
   TP_EINVAL when nothing is left to measure (no steps, no timing figure, warm-up >= steps). */
TP_API enum tp_status tp_log_steady_state(const struct tp_log_step *steps, size_t n,
                                   const struct tp_log_info *info,
                                   const struct tp_log_steady_opts *o, struct tp_log_steady *out,
                                   struct tp_error *err);

/* A measured run for the runs-file format (../shared/validation/runs/README.md). */
struct tp_log_row {
    const char *row_id;          /* unique, "source:n" style */
    const char *source_ref;      /* the log file */
    const char *note;            /* appended to the notes column; may be NULL */
    const struct tp_model *model;
    const struct tp_cluster *cluster;
    const struct tp_job *job;
    const struct tp_layout *layout; /* checked (tp_layout_check) */
    const struct tp_log_info *info;
    const struct tp_log_steady *steady;
};

/* Writes the runs file's canonical header line (with `header`) and one row for `r` into buf as
   RFC 4180 CSV (cells quoted where they need it); tp_runs_read() reads it back.  Returns the
   length needed, like snprintf. */
TP_API size_t tp_log_runs_csv(const struct tp_log_row *r, bool header, char *buf, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* Model sizing for a compute budget (trainplan size)                                         */
/* ----------------------------------------------------------------------------------------- */

/* What a scaling-law fit calls N (its parameter or model-scale convention). */
enum tp_scaling_n {
    TP_SCALING_N_TOTAL = 0,   /* every parameter, embedding and head included (Hoffmann 2022) */
    TP_SCALING_N_NONEMB,      /* excluding the token/position embedding and the LM head
                                 (Kaplan 2020) */
    TP_SCALING_N_DEEPSEEK_M   /* not parameters: M, non-embedding training FLOPs per token,
                                 attention included (DeepSeek LLM 2024) */
};

/* The form of a fit's compute-optimal allocation. */
enum tp_scaling_form {
    TP_SCALING_PARAMETRIC = 0, /* L(N, D) = E + A / N^alpha + B / D^beta; optimum in closed form
                                  under C = flops_per_nd * N * D (Hoffmann 2022 eq. 4) */
    TP_SCALING_KAPLAN,         /* L(N, D) = [(Nc/N)^(aN/aD) + Dc/D]^aD; N_opt = n_coef *
                                  C_pfday^n_exp, D_opt = C / (flops_per_nd * N_opt) */
    TP_SCALING_POWER           /* N_opt = n_coef * (C / c_ref)^n_exp and D_opt = d_coef *
                                  (C / c_ref)^d_exp; no loss law */
};

/* One published scaling-law fit, as data (src/core/scaling.c cites each). */
struct tp_scaling_fit {
    const char *key;          /* "hoffmann-3", "besiroglu", "kaplan", ... */
    const char *label;
    const char *source;       /* citation: paper, equation or table */
    const char *conventions;  /* what N, D and C mean in this fit, one line */
    enum tp_scaling_form form;
    enum tp_scaling_n n_kind;
    double flops_per_nd;      /* the fit's C / (N * D): 6 for 6ND; 1 for M * D */
    double E, A, B, alpha, beta;       /* PARAMETRIC; KAPLAN: Nc = A, Dc = B, aN = alpha,
                                          aD = beta */
    double n_coef, n_exp, d_coef, d_exp, c_ref; /* POWER (KAPLAN: n_coef, n_exp, c_ref) */
};

TP_API size_t tp_scaling_fit_count(void);
TP_API const struct tp_scaling_fit *tp_scaling_fit_get(size_t i);
/* A fit by key (case-insensitive); TP_ENOTFOUND lists the keys. */
TP_API enum tp_status tp_scaling_fit_find(const char *name, const struct tp_scaling_fit **out,
                                   struct tp_error *err);

/* A fit's compute-optimal allocation of `flops` (its own C convention). */
struct tp_scaling_opt {
    double flops;
    double n_opt;             /* in the fit's N convention (M in FLOPs/token for DeepSeek) */
    double d_opt;             /* training tokens */
    double loss_opt;          /* L(N_opt, D_opt); NaN when the fit has no loss law */
    double tokens_per_n;      /* d_opt / n_opt (NaN for DeepSeek's M) */
};
/* TP_EINVAL for a budget that is not a positive finite number. */
TP_API enum tp_status tp_scaling_optimum(const struct tp_scaling_fit *f, double flops,
                                  struct tp_scaling_opt *out, struct tp_error *err);
/* The fit's predicted loss at (n, d) in its conventions; NaN when it has no loss law. */
TP_API double tp_scaling_loss(const struct tp_scaling_fit *f, double n, double d);
/* The fit's N for a finalized model at sequence length `seq`: total parameters, parameters
   without embedding and head, or M = model FLOPs per token (causal) less the LM head's. */
TP_API double tp_scaling_n_of(const struct tp_scaling_fit *f, const struct tp_model *m, uint64_t seq);

/* Architecture families the size grid builds. */
enum tp_size_family { TP_FAMILY_LLAMA3 = 0, TP_FAMILY_QWEN3, TP_FAMILY_GPT, TP_FAMILY_COUNT };
TP_API const char *tp_size_family_name(enum tp_size_family f);
TP_API enum tp_status tp_size_family_find(const char *name, enum tp_size_family *out,
                                   struct tp_error *err);

struct tp_size_grid {
    enum tp_size_family family;
    uint32_t vocab;               /* 0 = the family's tokenizer */
    uint64_t seq;                 /* tokens per sequence (FLOPs per token, the cluster's job) */
    double aspect_min, aspect_max;/* hidden / layers kept (default 20..200) */
    uint32_t hidden_min, hidden_max; /* default 256..16384, multiples of 128 */
    uint32_t layers_max;          /* default 160 (deepest released dense LLMs: 126-118) */
};
TP_API void tp_size_grid_init(struct tp_size_grid *g);

/* One concrete shape of the family and what it gets from the budget. */
struct tp_size_shape {
    uint32_t layers, hidden, heads, kv_heads, ffn, vocab;
    bool tied;
    double params;                /* total, counted by tp_count_params */
    double fit_n;                 /* in the loss fit's convention */
    double flops_per_token;       /* exact model FLOPs (causal) at the grid's sequence length */
    double tokens;                /* D = budget / flops_per_token */
    double budget_flops;          /* model FLOPs spent: the budget, or rate x time x FLOPs */
    double loss;                  /* predicted by the loss fit (NaN: none) */
    /* with a cluster (has_layout) */
    bool has_layout;
    struct tp_search_hit best;    /* the search's fastest layout */
    double seconds;               /* training time for `tokens` */
};

/* Enumerates the family's shapes (hidden, layers) of the grid into `out` (NULL: counts);
   returns how many there are. */
TP_API size_t tp_size_enumerate(const struct tp_size_grid *g, struct tp_size_shape *out, size_t cap);
/* Fills the family's shape for s->layers and s->hidden (the rest of `s` is reset). */
TP_API void tp_size_enumerate_one(const struct tp_size_grid *g, struct tp_size_shape *s);
/* Builds the finalized model of a shape. */
TP_API enum tp_status tp_size_model(const struct tp_size_grid *g, const struct tp_size_shape *s,
                             struct tp_model *m, struct tp_error *err);
/* Counts the shape (params, fit_n, flops_per_token) for loss fit `f`, then, for a FLOP budget
   `flops` > 0, tokens = flops / flops_per_token and the loss. */
TP_API enum tp_status tp_size_count(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                             double flops, struct tp_size_shape *s, struct tp_error *err);
/* With a cluster: the search's fastest layout for the shape (`o->gbs` set), then tokens from
   `seconds` of training (flops == 0) or seconds from the budget (flops > 0), and the loss.
   TP_OK with has_layout false when no layout fits. */
TP_API enum tp_status tp_size_on_cluster(const struct tp_size_grid *g, const struct tp_scaling_fit *f,
                                  const struct tp_cluster *c, const struct tp_job *j,
                                  const struct tp_search_opts *o, const struct tp_calib *cal,
                                  double flops, double seconds, struct tp_size_shape *s,
                                  struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Checkpoints (trainplan checkpoint): safetensors files, shard indexes, DeepSpeed ZeRO       */
/* folders, and the size of the checkpoints a run will save                                  */
/* ----------------------------------------------------------------------------------------- */

/* The largest safetensors header accepted (safetensors crate MAX_HEADER_SIZE, 100,000,000). */
#define TP_ST_MAX_HEADER 100000000u
/* Most dimensions one tensor may have. */
#define TP_ST_MAX_DIMS 8

/* safetensors dtypes (huggingface/safetensors src/tensor.rs `Dtype`); append only. */
enum tp_st_dtype {
    TP_ST_UNKNOWN = 0, TP_ST_BOOL, TP_ST_U8, TP_ST_I8, TP_ST_F8_E5M2, TP_ST_F8_E4M3,
    TP_ST_F8_E8M0, TP_ST_F4, TP_ST_F6_E2M3, TP_ST_F6_E3M2, TP_ST_I16, TP_ST_U16, TP_ST_F16,
    TP_ST_BF16, TP_ST_I32, TP_ST_U32, TP_ST_F32, TP_ST_C64, TP_ST_F64, TP_ST_I64, TP_ST_U64,
    TP_ST_DTYPE_COUNT
};
/* The name as a header writes it ("BF16"); "?" for TP_ST_UNKNOWN. */
TP_API const char *tp_st_dtype_name(enum tp_st_dtype d);
/* Bits per element (4 for F4, 6 for F6_*, 8 for F8_*, 128 for C64...); 0 when unknown. */
TP_API unsigned tp_st_dtype_bits(enum tp_st_dtype d);

/* What can be wrong with a checkpoint; append only.  Names (tp_ckpt_problem_name) are the
   JSON `kind` values. */
enum tp_ckpt_kind {
    TP_CK_BAD_HEADER = 0, /* "bad-header": no 8-byte length, a length past the limit, not JSON,
                             not an object, a tensor entry without dtype/shape/data_offsets */
    TP_CK_STUB,           /* "stub": a zero-length file, or every tensor has zero elements */
    TP_CK_TRUNCATED,      /* "truncated": the data section is shorter than the header says */
    TP_CK_OVERLAP,        /* "overlap": two tensors' byte ranges overlap */
    TP_CK_OUT_OF_BOUNDS,  /* "out-of-bounds": a tensor's range ends past the file */
    TP_CK_GAP,            /* "gap": bytes no tensor covers (the format has none) */
    TP_CK_SIZE_MISMATCH,  /* "size-mismatch": byte range != shape x dtype size */
    TP_CK_UNKNOWN_DTYPE,  /* "unknown-dtype" */
    TP_CK_BAD_INDEX,      /* "bad-index": model.safetensors.index.json unreadable or malformed */
    TP_CK_MISSING_SHARD,  /* "missing-shard": the index names a file that is not there */
    TP_CK_NOT_IN_SHARD,   /* "not-in-shard": the index maps a tensor to a file without it */
    TP_CK_NOT_IN_INDEX,   /* "not-in-index": a shard holds a tensor the index does not list */
    TP_CK_DUPLICATE,      /* "duplicate": two files hold the same tensor */
    TP_CK_MISSING_TENSOR, /* "missing-tensor": the model has it, the checkpoint does not */
    TP_CK_UNEXPECTED_TENSOR, /* "unexpected-tensor": the checkpoint has it, the model does not */
    TP_CK_SHAPE_MISMATCH, /* "shape-mismatch" */
    TP_CK_PARAM_MISMATCH, /* "param-mismatch": total parameters differ from the model's */
    TP_CK_MISSING_TAG,    /* "missing-tag": `latest` names a folder that is not there */
    TP_CK_MISSING_RANK,   /* "missing-rank": a ZeRO rank file is absent */
    TP_CK_SMALL_RANK,     /* "small-rank-file": a ZeRO rank file under half its planned size */
    TP_CK_KIND_COUNT
};
TP_API const char *tp_ckpt_problem_name(enum tp_ckpt_kind k);

struct tp_ckpt_problem {
    enum tp_ckpt_kind kind;
    char file[256];    /* path of the file concerned ("" when none) */
    char tensor[192];  /* tensor name ("" when the problem is the file's) */
    char detail[256];  /* one line */
};

/* One tensor entry of a safetensors header. */
struct tp_st_tensor {
    char *name;                      /* owned by the header */
    enum tp_st_dtype dtype;
    uint32_t ndim;
    uint64_t shape[TP_ST_MAX_DIMS];
    uint64_t elements;               /* product of the shape (UINT64_MAX when it overflows) */
    uint64_t begin, end;             /* data_offsets, relative to the data section */
};

/* A parsed safetensors header and what is wrong with it. */
struct tp_st_header {
    uint64_t header_bytes;           /* N, the header length the first 8 bytes give */
    uint64_t data_bytes;             /* bytes of the file after 8 + N (0 when the file is
                                        shorter) */
    uint64_t params;                 /* sum of elements (saturating) */
    size_t n_tensors;
    struct tp_st_tensor *tensors;    /* in header order */
    size_t n_problems;
    struct tp_ckpt_problem *problems; /* `file` left empty: the caller knows the file */
};

/* Parses the header of a safetensors file from its first `len` bytes (`buf`), the file being
   `file_bytes` long; tensor data is never looked at.  Pure and bounded: the length prefix is
   checked against TP_ST_MAX_HEADER, `len` and `file_bytes` before anything is allocated, and
   offsets are checked, never trusted.  Faults are problems in `h`, not errors: TP_OK whenever
   the header could be examined; TP_ENOMEM only.  Free `h` with tp_st_header_free. */
TP_API enum tp_status tp_st_parse(const unsigned char *buf, size_t len, uint64_t file_bytes,
                           struct tp_st_header *h, struct tp_error *err);
TP_API void tp_st_header_free(struct tp_st_header *h);

/* One file of a checkpoint. */
struct tp_ckpt_file {
    char path[512];
    uint64_t bytes;        /* size on disk (0 when missing) */
    uint64_t header_bytes;
    size_t tensors;
    uint64_t params;       /* elements of its tensors */
    char dtypes[64];       /* the dtypes it holds, comma-separated ("BF16", "BF16,F32") */
    bool missing;          /* named by the index, not on disk */
    bool stub;             /* zero-length, or every tensor has zero elements */
};

/* One tensor of the checkpoint (stub files excluded), sorted by name. */
struct tp_ckpt_tensor {
    char *name;
    uint32_t file;         /* index into files */
    enum tp_st_dtype dtype;
    uint32_t ndim;
    uint64_t shape[TP_ST_MAX_DIMS];
    uint64_t elements;
};

/* A DeepSpeed ZeRO checkpoint file (`*_model_states.pt`, `*_optim_states.pt`): name and size
   only, the pickles are not opened. */
struct tp_zero_file {
    char name[128];
    uint64_t bytes;
    bool optim;            /* *_optim_states.pt, else *_model_states.pt */
    bool zero_rank;        /* zero_pp_rank_R_...: one per data-parallel rank */
    uint32_t dp_rank, mp_rank;
    double planned_bytes;  /* from tp_ckpt_plan when a model was given, else 0 */
};

struct tp_ckpt_zero {
    bool present;
    char latest[64];       /* the tag `latest` names ("" when no such file) */
    char tag_dir[512];     /* the folder inspected (global_stepN) */
    size_t n_tags;         /* global_step* folders beside it */
    char tags[8][64];      /* up to 8 of them, in name order */
    size_t n_files;
    struct tp_zero_file *files;
    uint32_t dp_ranks, mp_ranks; /* 1 + the largest rank numbers seen */
    uint32_t stage_hint;   /* 3 when per-rank model states exist, else 2 (stage 0-2 save
                              alike) */
    uint64_t model_bytes, optim_bytes;
};

/* An inspected checkpoint. */
struct tp_ckpt {
    char path[512];
    bool has_index;
    size_t n_files;
    struct tp_ckpt_file *files;
    size_t n_tensors;
    struct tp_ckpt_tensor *tensors;
    size_t n_problems;
    struct tp_ckpt_problem *problems;
    size_t n_lost;
    char **lost;                   /* tensors the index maps to shards that are not there,
                                      sorted (their missing-tensor lines are left out: the
                                      missing-shard line says it) */
    uint64_t total_params;         /* elements of every tensor, counted once */
    uint64_t total_bytes;          /* the safetensors files' sizes */
    uint64_t by_comp[TP_COMP_COUNT + 1]; /* by the component its name says; [TP_COMP_COUNT] =
                                            other (buffers, unknown names) */
    uint64_t by_dtype[TP_ST_DTYPE_COUNT]; /* parameters per dtype */
    /* against the model (compared = a model was given) */
    bool compared;
    bool names_compared;           /* the family's checkpoint names follow the params core */
    bool matches_config;
    uint64_t expected_params;      /* the model's params_checkpoint */
    size_t matched, missing, unexpected, shape_mismatches;
    bool head_in_checkpoint;       /* lm_head.weight is stored */
    struct tp_ckpt_zero zero;
};

/* Inspects `path`: a .safetensors file, a model.safetensors.index.json, or a folder (its
   *.safetensors files and index, and any DeepSpeed `latest` / global_stepN / *_states.pt).
   Only headers are read.  With `m` (may be NULL) compares the tensors with the model's and
   plans the ZeRO files' sizes for `n_gpus` ranks (0 = the ranks found) under job `j` (NULL:
   tp_job_init's).  TP_ENOTFOUND / TP_EIO when `path` cannot be read; every fault in the files
   is a problem in the result.  Free with tp_ckpt_free (NULL is fine). */
TP_API enum tp_status tp_ckpt_inspect(const char *path, const struct tp_model *m,
                               const struct tp_job *j, uint32_t n_gpus, struct tp_ckpt **out,
                               struct tp_error *err);
TP_API void tp_ckpt_free(struct tp_ckpt *c);
/* The component a Hugging Face tensor name belongs to (TP_COMP_COUNT: none of them). */
TP_API enum tp_component tp_ckpt_component(const char *name);

/* The checkpoints a run saves (docs/checkpoint.md), in bytes. */
struct tp_ckpt_plan {
    double params;                 /* parameters saved: params_checkpoint (LoRA: adapters) */
    double weights_bytes;          /* the model in the training precision (16-bit, fp32) */
    double master_bytes;           /* the fp32 master copy (0 when training in fp32) */
    double moments_bytes;          /* optimizer states (AdamW: fp32 m and v) */
    double save_bytes;             /* one save: weights + master + moments */
    uint32_t model_files;          /* files holding the weights (one per model-parallel rank;
                                      every rank under ZeRO-3) */
    uint32_t optim_files;          /* files holding master + moments */
    double model_file_bytes, optim_file_bytes; /* each */
    double consolidated_fp32_bytes, consolidated_bf16_bytes; /* one model file after merging */
    double zero_to_fp32_ram_bytes; /* host RAM zero_to_fp32 peaks at */
    double zero_to_fp32_disk_bytes;/* free disk it writes */
    double save_s;                 /* one save at storage_bps (0 when not given) */
};
/* Plans the checkpoint of a checked run; `storage_bps` (bytes/s, 0 = not given) is the
   aggregate write bandwidth. */
TP_API void tp_ckpt_plan(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                  const struct tp_layout *l, double storage_bps, struct tp_ckpt_plan *out);

/* ----------------------------------------------------------------------------------------- */
/* Wall-clock as users measure it (src/core/wallclock.c)                                       */
/* ----------------------------------------------------------------------------------------- */

struct tp_wallclock_opts {
    double startup_s;     /* launch, NCCL and ZeRO initialisation (given; 0 = left out) */
    double storage_bps;   /* aggregate storage bandwidth: reading the weights, writing saves */
    uint64_t ckpt_every;  /* optimizer steps between saves (0 = no saves) */
    uint64_t eval_every;  /* optimizer steps between evaluations (0 = none) */
    double eval_tokens;   /* tokens of one evaluation pass */
};
struct tp_wallclock {
    double steps, train_s;  /* optimizer steps for the tokens and their time */
    double startup_s, load_s, ckpt_s, eval_s;
    double saves, evals;
    double total_s;
    double goodput;         /* train_s / total_s */
};
TP_API void tp_wallclock_opts_init(struct tp_wallclock_opts *o);
/* The wall-clock of training `tokens` with the step time `t`; `ck` (may be NULL) gives the
   bytes of the weights and of one save (tp_ckpt_plan with o->storage_bps). */
TP_API void tp_wallclock(const struct tp_time *t, const struct tp_ckpt_plan *ck, double tokens,
                  const struct tp_wallclock_opts *o, struct tp_wallclock *out);

/* ----------------------------------------------------------------------------------------- */
/* One evaluation of a run (src/core/evaluate.c): what every verb that prices a run calls      */
/* ----------------------------------------------------------------------------------------- */

struct tp_eval_opts {
    double tokens;          /* token budget (0 = none): steps, wall-clock, GPU-hours */
    double gpu_hour_price;  /* price of one GPU-hour (< 0 = not priced) */
    double storage_bps;     /* aggregate checkpoint write bandwidth, bytes/s (0 = not given) */
    struct tp_wallclock_opts wall; /* the wall-clock beyond the steps (a token budget's) */
};
struct tp_evaluation {
    struct tp_memory memory;   /* the worst pipeline stage */
    struct tp_time time;
    struct tp_range range;     /* the 80% range of the throughput */
    unsigned domain;           /* TP_DOMAIN_* flags: outside the calibration's domain */
    char outside[192];         /* why, in one line (empty when inside) */
    struct tp_ckpt_plan ckpt;
    struct tp_wallclock wall;  /* all zero without a token budget */
    double gpu_hours;          /* of the whole wall-clock; 0 without a token budget */
    double cost;               /* gpu_hours x price; 0 when not priced */
};
TP_API void tp_eval_opts_init(struct tp_eval_opts *o);
/* The whole evaluation of a checked run: memory of the worst stage, time per step, its range,
   the domain check, the checkpoint plan, and with a token budget the wall-clock, GPU-hours and
   cost.  Pure and allocation-free (tp_calib_init gives the built-in calibration).  TP_EINVAL (NaN
   figures, the reason in err) when tp_run_check() rejects the run. */
TP_API enum tp_status tp_evaluate(const struct tp_model *m, const struct tp_cluster *c,
                                  const struct tp_job *j, const struct tp_layout *l,
                                  const struct tp_calib *cal, const struct tp_eval_opts *o,
                                  struct tp_evaluation *out, struct tp_error *err);

/* Model FLOPs utilisation: flops_per_token x tokens/s per GPU over `peak_flops` (the MFU basis,
   tp_job_peak_flops); NaN when the peak is not positive. */
TP_API double tp_mfu(double flops_per_token, double tokens_per_s_per_gpu, double peak_flops);
/* Optimizer steps a token budget takes at `tokens_per_step` (whole steps). */
TP_API double tp_budget_steps(double tokens, double tokens_per_step);
/* GPU-hours of `seconds` on `gpus` GPUs. */
TP_API double tp_gpu_hours(double seconds, uint32_t gpus);
/* The gradient accumulation a global batch of `gbs` samples gives a checked layout
   (gbs = mbs x dp x gas); when `gas_given`, l->gas must agree.  Sets l->gas; TP_EINVAL with
   err->field "gbs" when gbs is not a multiple of mbs x dp or disagrees with the given gas. */
TP_API enum tp_status tp_layout_set_gbs(struct tp_layout *l, uint64_t gbs, bool gas_given,
                                        struct tp_error *err);
/* Marks the Pareto front of n points, smaller being better in both a and b: front[i] is true
   when valid[i] and no other valid point is at least as good in both and better in one. */
TP_API void tp_pareto_front(const double *a, const double *b, const bool *valid, size_t n,
                            bool *front);

/* The names of the job and layout enums, one table each (src/core/names.c): what the CLI's
   options take, a binding's keywords take, and the JSON documents print. */
enum tp_names {
    TP_NAMES_TASK = 0,  /* enum tp_task: pretrain, sft, dpo, lora, qlora */
    TP_NAMES_OPTIMIZER, /* enum tp_optimizer: adamw, adamw-8bit, ... */
    TP_NAMES_PRECISION, /* enum tp_precision: bf16, fp16, fp8, fp32, mxfp8, nvfp4, mxfp4 */
    TP_NAMES_ATTENTION, /* enum tp_attn_impl: flash, eager, flash2, flash3 */
    TP_NAMES_RECOMPUTE, /* enum tp_recompute: none, selective, full */
    TP_NAMES_OFFLOAD,   /* enum tp_offload: none, optimizer, params */
    TP_NAMES_SCHEDULE,  /* enum tp_schedule: 1f1b, interleaved, gpipe */
    TP_NAMES_LAYER_ATTN, /* enum tp_layer_attn: full, sliding, chunked */
    TP_NAMES_ATTN_CONVENTION, /* enum tp_attn_convention: causal, noncausal */
    TP_NAMES_MIXER,     /* enum tp_mixer: attention, mamba2, gated_deltanet, none */
    TP_NAMES_COUNT
};
/* The name of `value` in table `t`; "?" when out of range. */
TP_API const char *tp_name(enum tp_names t, int value);
/* The value named `name` in table `t`, or -1. */
TP_API int tp_name_value(enum tp_names t, const char *name);
/* The table's names joined by '|' ("none|selective|full") into buf (NUL-terminated), for
   messages and help; returns the length needed. */
TP_API size_t tp_name_choices(enum tp_names t, char *buf, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* A run as options (src/io/request.c): what the CLI's flags and a binding's keywords describe */
/* ----------------------------------------------------------------------------------------- */

/* Options named as the CLI's flags without dashes ("gpus_per_node" is --gpus-per-node and a
   binding's gpus_per_node=).  TP_UNSET / 0 / negative leave the default, as each field says. */
struct tp_request {
    const char *gpu;                /* catalog key or alias; NULL = h100-sxm */
    int64_t gpus, gpus_per_node;    /* TP_UNSET: dp*tp*pp*cp when dp is given, else a node */
    double hbm_gb, peak_tflops, hbm_tbps, intra_gbps, inter_gbps, host_gbps; /* 0 = catalog */
    /* job: enums by value; framework is 1 + enum tp_framework (0 = deepspeed, or megatron when
       the layout needs model parallelism) */
    int task, optimizer, precision, framework, attn_impl, moe_impl;
    bool z3_leaf, dropout, fused_loss, tp_comm_overlap, kbit_fp32;
    int64_t seq;                    /* TP_UNSET: the model's context, else 4096 */
    int64_t lora_rank;              /* TP_UNSET = 16 */
    uint32_t lora_targets;          /* TP_LORA_* mask; 0 = all */
    double moe_capacity, moe_imbalance, overhead_gb, nccl_gb, frag; /* < 0 = default */
    double trainable_frac; /* < 0 = every slot counts */
    /* layout (TP_UNSET = default or derived) */
    int64_t dp, tp, pp, vpp, ep, etp, cp, zero, shard_group, mbs, gas, gbs, recompute_layers;
    int64_t pp_first, pp_last;
    bool sp, hybrid_shard;          /* hybrid_shard: FSDP HYBRID_SHARD (shard within a node) */
    int recompute, offload, schedule;
    bool offload_activations;       /* --offload-activations */
    int64_t offload_layers;         /* --offload-layers (TP_UNSET: all) */
    const char *pp_layout;          /* Megatron's --pipeline-model-parallel-layout string, or
                                       embedding, loss, embedding,loss (NULL: none) */
    const char *recompute_modules;  /* "core_attn,moe_act,..." (implies recompute selective) */
    bool no_stack_check;            /* logs: a measured run may use what its stack cannot */
    bool gbs_is_target;             /* search, size: gbs is the search's, not the layout's */
};
TP_API void tp_request_init(struct tp_request *r);
/* Sets one option from text by its name ("gpu", "gpus", "tp", "zero", "recompute" ...; dashes
   or underscores).  TP_EINVAL with err->field set for an unknown name or a bad value. */
TP_API enum tp_status tp_request_set(struct tp_request *r, const char *key, const char *value,
                                     struct tp_error *err);
/* The cluster, job and layout a request describes for model `m` (finalized), checked
   (tp_layout_check, tp_stack_check) and with gbs turned into gas. */
TP_API enum tp_status tp_request_resolve(const struct tp_request *r, const struct tp_model *m,
                                         struct tp_cluster *c, struct tp_job *j,
                                         struct tp_layout *l, struct tp_error *err);
/* A model by name: a config.json or a folder holding one when `name` exists or looks like a
   path (a '/', or ending ".json"), else a preset. */
TP_API enum tp_status tp_model_from_name(const char *name, struct tp_model *m,
                                         struct tp_error *err);
/* "q,k,v" (or all, attention, mlp) as TP_LORA_* bits; 0 for an unknown name. */
TP_API uint32_t tp_lora_targets_parse(const char *list);

/* ----------------------------------------------------------------------------------------- */
/* JSON documents (src/io/report_json.c, src/io/report_run_json.c, src/io/call.c)              */
/* ----------------------------------------------------------------------------------------- */

/* The documents `--format json` prints, as jansson objects (json_t, new references; NULL when
   out of memory) for C callers, and as text for bindings.  Keys and numbers are the CLI's. */
struct json_t;
TP_API struct json_t *tp_json_layout(const struct tp_layout *l);
TP_API struct json_t *tp_json_memory(const struct tp_memory *m);
TP_API struct json_t *tp_json_ckpt_plan(const struct tp_ckpt_plan *p);
/* `trainplan estimate`'s document; `calibration` names the file (NULL: the built-in one). */
TP_API struct json_t *tp_json_estimate(const struct tp_model *m, const struct tp_cluster *c,
                                       const struct tp_job *j, const struct tp_layout *l,
                                       const struct tp_eval_opts *o,
                                       const struct tp_evaluation *ev, const char *calibration,
                                       const char *notes);
/* `trainplan memory`'s document: the worst stage, every stage with per_stage, the fixes. */
TP_API struct json_t *tp_json_memory_report(const struct tp_model *m, const struct tp_cluster *c,
                                            const struct tp_job *j, const struct tp_layout *l,
                                            const struct tp_memory *worst, bool per_stage,
                                            const struct tp_fix *fixes, size_t n_fixes,
                                            const char *notes);
/* `trainplan search`'s document (one hit: a result row, also used by the sweep over counts).
   Each hit carries the stack it runs on; `tie` marks the hits within `band` (relative time per
   token, tp_search_tie_band) of hits[0], `differs_most` the step-time term that separates a hit
   from hits[0] (tp_search_differs). */
struct tp_search_stats;
struct tp_stack_hit;
TP_API struct json_t *tp_json_search_hit(const struct tp_stack_hit *h,
                                         const struct tp_stack_hit *best, double band);
TP_API struct json_t *tp_json_search(const struct tp_model *m, const struct tp_cluster *c,
                                     const struct tp_job *j, uint64_t gbs,
                                     const struct tp_search_stats *st,
                                     const struct tp_stack_hit *hits, size_t n,
                                     const char *outside, double band);
/* `trainplan params`: counts, FLOPs per token and the blocks in runs of equal counts. */
struct tp_block_run {
    uint32_t first, last;       /* blocks first..last, each with the counts below */
    bool moe;
    uint8_t attn;               /* enum tp_layer_attn */
    uint64_t params, active;
    uint8_t mixer;              /* enum tp_mixer */
    bool no_ffn;                /* the blocks have no FFN */
};
struct tp_params_report {
    struct tp_model m;          /* the caller's, finalized */
    struct tp_params p;
    struct tp_flops f;
    enum tp_attn_convention conv;
    enum tp_recompute rc;
    uint32_t mtp;
    char notes[512];            /* the caller's assumptions (shape overrides) */
    struct tp_block_run runs[TP_MAX_LAYERS];
    size_t n_runs;
};
/* Fills r->p, r->f and r->runs for r->m at `seq` tokens (0: the model's context, else 4096);
   `per_layer` gives one run per block.  TP_EINVAL as tp_flops_per_token. */
TP_API enum tp_status tp_params_report(struct tp_params_report *r, uint64_t seq,
                                       enum tp_attn_convention conv, enum tp_recompute rc,
                                       uint32_t mtp, bool per_layer, struct tp_error *err);
/* `trainplan params`'s document. */
TP_API struct json_t *tp_json_params(const struct tp_params_report *r);
/* `doc` (consumed; NULL gives NULL) as the CLI prints it: indented by 2, keys in order, reals
   with `digits` significant digits (0: the shortest round-trip form).  Free with tp_free. */
TP_API char *tp_json_dumps(struct json_t *doc, int digits);
TP_API void tp_free(void *p);
/* Fixes a memory report lists, as `trainplan memory` does. */
#define TP_MAX_FIXES 6

/* One verb, its options named as the CLI's flags, its document as the CLI's --format json
   prints it: the entry point of bindings (ctypes, WebAssembly).  verb "estimate" or "memory":
   keys as tp_request_set takes them, plus "tokens", "gpu_hour_price" and "calibration" (a file)
   for estimate, "per_stage" for memory; verb "params": "seq", "recompute", "attention_flops",
   "mtp", "per_layer"; verb "search": the run's keys with "gbs" (required), "top", "max_tp",
   "max_pp", "max_cp", "max_ep", "max_mbs", "mem_headroom", "no_offload", "even_pp",
   "calibration" (one thread: the same hits as the CLI's threaded search).  *out (free with tp_free) on TP_OK; err names the field
   otherwise.  Thread-safe: nothing is shared between calls. */
TP_API enum tp_status tp_call_json(const char *verb, const char *model, const char *const *keys,
                                   const char *const *values, size_t n, char **out,
                                   struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Version and layout checks for bindings (src/core/abi.c)                                     */
/* ----------------------------------------------------------------------------------------- */

/* The library's version, TP_VERSION as it was built. */
TP_API const char *tp_version(void);
/* sizeof a public struct as the library was built, by its name without "struct " ("tp_model",
   "tp_evaluation", ...); 0 for a name it does not know.  A binding compares it with its own. */
TP_API size_t tp_struct_size(const char *name);
/* TP_OK when the caller was compiled against the header the library was built from: call it as
   TP_ABI_CHECK(&err).  TP_EUNSUPPORTED, naming the first mismatch, otherwise. */
TP_API enum tp_status tp_abi_check(const char *version, size_t model, size_t cluster, size_t job,
                                   size_t layout, size_t calib, size_t evaluation,
                                   struct tp_error *err);
#define TP_ABI_CHECK(err)                                                                       \
    tp_abi_check(TP_VERSION, sizeof(struct tp_model), sizeof(struct tp_cluster),                \
                 sizeof(struct tp_job), sizeof(struct tp_layout), sizeof(struct tp_calib),      \
                 sizeof(struct tp_evaluation), (err))

/* ----------------------------------------------------------------------------------------- */
/* SVG plots (src/plot/svg.c: the document, axes, legend; src/plot/svg_plot.c: the charts)              */
/* ----------------------------------------------------------------------------------------- */

/* A growing SVG document (malloc'd; tp_svg_free releases it).  `data` is NUL-terminated. */
struct tp_svg {
    char *data;
    size_t len, cap;
    bool failed;           /* an allocation failed: the document is incomplete */
};
TP_API void tp_svg_free(struct tp_svg *s);

/* How a series' points are drawn. */
enum tp_mark { TP_MARK_DOT = 0, TP_MARK_SQUARE, TP_MARK_DIAMOND, TP_MARK_TRIANGLE, TP_MARK_NONE };

/* One series of an x-y chart: n points, optional vertical ranges and labels per point. */
struct tp_plot_series {
    const char *name;            /* legend entry (NULL: none) */
    const double *x, *y;         /* non-finite or (log axis) non-positive points are skipped */
    const double *y_lo, *y_hi;   /* a vertical range per point (NULL: none) */
    const char *const *labels;   /* a label per point (NULL: none; a NULL entry: no label) */
    size_t n;
    enum tp_mark mark;
    bool line;                   /* joins the points in order */
    bool hollow;                 /* open marks (e.g. the points off a Pareto front) */
    int colour;                  /* palette index 0..7; -1: the series' index */
};

/* A vertical marker line across an x-y chart (warm-up end, an optimum). */
struct tp_plot_vline {
    double x;
    const char *label;
};

/* An x-y chart.  With `identity_bands` the chart is predicted (y) against measured (x): the
   y = x line and the +-10% and +-25% bands are drawn under the points. */
struct tp_plot_xy {
    const char *title, *subtitle;
    const char *x_label, *y_label;
    bool x_log, y_log;
    bool identity_bands;
    const struct tp_plot_series *series;
    size_t n_series;
    const struct tp_plot_vline *vlines;
    size_t n_vlines;
};

/* Stacked bars: n_bars bars of n_segs segments each, values[bar * n_segs + seg] (>= 0, in the
   unit of `value_label`), with an optional limit line (a GPU's capacity). */
struct tp_plot_bars {
    const char *title, *subtitle;
    const char *value_label;     /* the value axis' label, with its unit */
    const char *const *bar_names;
    size_t n_bars;
    const char *const *seg_names;
    size_t n_segs;
    const double *values;
    double limit;                /* NaN or <= 0: none */
    const char *limit_label;
    bool horizontal;             /* bars along x (one long bar reads better so) */
};

/* Renders a chart into `out` (initialised to {0}; appended to).  Okabe-Ito colours, text in
   the SVG (titles, ticks, legend) so it reads without explanation.  TP_EINVAL when the chart
   has nothing to draw or a value is out of range; TP_ENOMEM when an allocation failed. */
TP_API enum tp_status tp_svg_xy(const struct tp_plot_xy *p, struct tp_svg *out, struct tp_error *err);
TP_API enum tp_status tp_svg_bars(const struct tp_plot_bars *p, struct tp_svg *out,
                                  struct tp_error *err);
/* n x-y charts one above the other in one document (a log's step time and its tokens/s). */
TP_API enum tp_status tp_svg_panels(const struct tp_plot_xy *p, size_t n, struct tp_svg *out,
                                    struct tp_error *err);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_H */
