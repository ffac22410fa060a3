/*
 * model_internal.h - what the model floor (shapes, parameters, FLOPs, hybrid mixers) shares
 * with the floors above it.  Not installed, not public.
 */
#ifndef TP_MODEL_INTERNAL_H
#define TP_MODEL_INTERNAL_H

#include "base_internal.h"

/* model_check.c: the model has been finalized (layers, hidden, heads, head_dim, vocab set). */
enum tp_status tp_model_shape_check(const struct tp_model *m, struct tp_error *err);

/* Mean number of keys one query of block `layer` attends to at sequence length s (flops.c). */
double tp_keys_per_query(const struct tp_model *m, uint32_t layer, double s,
                         enum tp_attn_convention conv);
/* tp_flops_per_token with the causal convention and no MTP, without the comparison
   conventions (which count parameters): the evaluation core's fast path (flops.c). */
enum tp_status tp_flops_model(const struct tp_model *m, uint64_t seq, enum tp_recompute rc,
                              struct tp_flops *f);
/* n_q * (d_qk + d_v): the attention core's width summed over query heads (flops.c). */
double tp_head_widths(const struct tp_model *m);
/* The published closed form of a GPT's FLOPs per token, Narayanan et al. 2021 ([NAR21] eq. 3),
   written once: k L h^2 (1 + s / (6h) + V / (d L h)).  k is 24 per pass over the blocks (72:
   forward and backward; 96: with full recompute's second forward) and d puts the LM head's
   6 V h in (12 at k = 72, 16 at k = 96); DeepSpeed's flops profiler keeps d = 16 whatever k. */
static inline double tp_flops_nar21(const struct tp_model *m, double s, double k, double d)
{
    double L = m->n_layers, h = m->hidden, V = m->vocab;
    return k * L * h * h * (1 + s / (6 * h) + V / (d * L * h));
}

/* Block kinds that cost the same: FFN (dense, MoE, none) x mixer (attention full / sliding /
   chunked, Mamba-2, gated DeltaNet, none); tp_block_kind (ssm.c) numbers them
   ffn * TP_BLOCK_MIXERS + mixer, and tp_block_ffn / tp_block_mixer read them back. */
enum tp_block_ffn { TP_BLOCK_FFN_DENSE, TP_BLOCK_FFN_MOE, TP_BLOCK_FFN_NONE, TP_BLOCK_FFNS };
enum tp_block_mixer {
    TP_BLOCK_ATTN_FULL = TP_LAYER_FULL,       /* the attention kinds: enum tp_layer_attn */
    TP_BLOCK_ATTN_SLIDING = TP_LAYER_SLIDING,
    TP_BLOCK_ATTN_CHUNKED = TP_LAYER_CHUNKED,
    TP_BLOCK_MAMBA2 = 2 + TP_MIXER_MAMBA2,    /* the other mixers: 2 + enum tp_mixer */
    TP_BLOCK_GDN = 2 + TP_MIXER_GDN,
    TP_BLOCK_NO_MIXER = 2 + TP_MIXER_NONE,
    TP_BLOCK_MIXERS
};
#define TP_BLOCK_KINDS (TP_BLOCK_FFNS * TP_BLOCK_MIXERS)
static inline enum tp_block_ffn tp_block_ffn(unsigned kind)
{
    return (enum tp_block_ffn)(kind / TP_BLOCK_MIXERS);
}
static inline enum tp_block_mixer tp_block_mixer(unsigned kind)
{
    return (enum tp_block_mixer)(kind % TP_BLOCK_MIXERS);
}

/* The block an MTP module copies (params.c). */
uint32_t tp_mtp_template_layer(const struct tp_model *m);

/* ---- hybrid token mixers (ssm.c) ---- */
/* The block's kind, 0 .. TP_BLOCK_KINDS - 1. */
unsigned tp_block_kind(const struct tp_model *m, uint32_t layer);
/* The parameters of all blocks, summed in double (so no count wraps), each block kind's
   tensors listed once (params.c). */
double tp_blocks_params_total(const struct tp_model *m);
/* A block that is not attention + FFN: a Mamba-2 or DeltaNet mixer, or no mixer or FFN. */
bool tp_model_hybrid(const struct tp_model *m);
/* One GEMM of a mixer: N x K weight; `column` = split by tp along N (else along K). */
struct tp_mixer_gemm {
    double N, K;
    bool column;
};
#define TP_MIXER_GEMMS 2
size_t tp_mixer_gemms(const struct tp_model *m, enum tp_mixer k, struct tp_mixer_gemm *g);
size_t tp_mixer_tensors(const struct tp_model *m, enum tp_mixer k, struct tp_tensor *out);
double tp_mixer_gemm_weights(const struct tp_model *m, enum tp_mixer k);
uint64_t tp_ssm_inner(const struct tp_model *m);
/* Forward scan FLOPs per token of one mixer at sequence length s. */
double tp_mixer_scan_flops(const struct tp_model *m, enum tp_mixer k, double s,
                           enum tp_attn_convention conv);
/* The chunked-scan kernels' FLOP rate relative to the attention kernel's.  Dao & Gu 2024
   (arXiv:2405.21060) §9.3, Fig. 10: the SSD kernel (chunk 256, state 64, head dim 64) takes as
   long as FlashAttention-2 (head dim 64) at 2K tokens, where SSD does 2*(256*(64+64) + 2*64*64)
   = 81,920 FLOP per token per head against attention's 4*2048*64 = 524,288: 0.15625 of the
   rate.  Yang et al. 2024 (arXiv:2412.06464) Fig. 3 measure Gated DeltaNet's training
   throughput close to Mamba-2's, so its chunk kernels take the same factor. */
#define TP_SCAN_REL_EFF (81920.0 / 524288.0)
/* HBM bytes the scan kernel moves per token (forward). */
double tp_mixer_scan_bytes(const struct tp_model *m, enum tp_mixer k);
/* Elements moved per token by the conv and gated norm (forward, split by tp). */
double tp_mixer_elementwise(const struct tp_model *m, enum tp_mixer k);
/* Bytes per token a mixer stores for backward (split by tp); gin = bytes of a GEMM input. */
double tp_mixer_activations(const struct tp_model *m, enum tp_mixer k, double gin);
/* What tensor parallelism must divide in the model's mixers (at most 4 entries). */
struct tp_mixer_split {
    const char *field;
    uint32_t count;
};
size_t tp_mixer_tp_splits(const struct tp_model *m, struct tp_mixer_split *out);
bool tp_mixer_tp_ok(const struct tp_model *m, uint32_t tp);
/* Shape checks of the mixers the layout uses (finalize). */
enum tp_status tp_mixer_check(const struct tp_model *m, struct tp_error *err);
/* Applies a Nemotron-H hybrid_override_pattern ("M-M*-E..."): one character per block. */
enum tp_status tp_model_set_pattern(struct tp_model *m, const char *pattern,
                                    struct tp_error *err);

#endif
