/*
 * flops.c - training FLOPs per token by exact matmul counting.
 *
 * Convention (Megatron-LM training.py num_floating_point_operations [MEG-F], the 2025-03 form
 * with causal halving; docs/physics.md §2.2): every GEMM runs three times (forward, data
 * gradient, weight gradient) at 2 FLOP per multiply-add, so a token costs 6 FLOP per weight
 * element it multiplies.  The LM head always costs 6*H*V, tied or not; the input embedding is a
 * gather and costs nothing; the router, norms, biases and element-wise work are left out (< 1%).
 * MLA attention counts its q_a/kv_a norm weights like Megatron does, and an MTP module counts
 * its norms and eh_proj (3H + 2H^2) plus one block and one more LM head.
 *
 * Attention core (QK^T and AV) per token per layer, forward: 2 * n_q * (d_qk + d_v) * k, where
 * k is the mean number of keys a query sees: s/2 under the causal convention (s with the
 * non-causal one), and the exact causal count for sliding windows and chunks [derived]:
 *   window w < s:  k = (w(w+1)/2 + (s-w)w) / s
 *   chunks c < s:  k = (q c(c+1)/2 + r(r+1)/2) / s,  s = q c + r
 * For standard attention this is the familiar 6*s*q_dim (causal) or 12*s*q_dim per token.
 * Hybrid blocks: a Mamba-2 / gated-DeltaNet mixer counts its projections as GEMMs and its
 * chunked scan in fwd_scan (formulas and citations in ssm.c); blocks without an FFN count none.
 */
#include "model_internal.h"

#include <string.h>

/* Mean number of keys per query for one block. */
double tp_keys_per_query(const struct tp_model *m, uint32_t layer, double s,
                         enum tp_attn_convention conv)
{
    enum tp_layer_attn kind = (enum tp_layer_attn)m->layer_attn[layer];
    double reach = kind == TP_LAYER_SLIDING ? m->window : kind == TP_LAYER_CHUNKED ? m->chunk : s;
    if (conv == TP_ATTN_NONCAUSAL)
        return reach < s ? reach : s;
    if (kind == TP_LAYER_FULL || reach >= s)
        return s / 2;
    if (kind == TP_LAYER_SLIDING)
        return (reach * (reach + 1) / 2 + (s - reach) * reach) / s;
    double q = (double)((uint64_t)s / (uint64_t)reach), r = s - q * reach;
    return (q * reach * (reach + 1) / 2 + r * (r + 1) / 2) / s;
}

/* The span attention runs over: the packed documents' length where a kernel keeps each
   document to itself (not eager attention, whose block-diagonal mask still fills s x s). */
double tp_attn_span(const struct tp_job *j)
{
    bool packed = j->doc_len > 0 && j->doc_len < j->seq && j->attn_impl != TP_ATTN_EAGER;
    return packed ? (double)j->doc_len : (double)j->seq;
}

/* Query-key plus value width summed over heads: n_q * (d_qk + d_v). */
double tp_head_widths(const struct tp_model *m)
{
    if (m->attn == TP_ATTN_MLA)
        return (double)m->n_heads *
               ((double)m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim);
    return 2.0 * m->n_heads * m->head_dim;
}

/* GEMM weight elements of one block's token mixer (attention, Mamba-2, gated DeltaNet). */
static double attn_weights(const struct tp_model *m, uint32_t layer)
{
    enum tp_mixer mixer = (enum tp_mixer)m->layer_mixer[layer];
    if (mixer != TP_MIXER_ATTN)
        return tp_mixer_gemm_weights(m, mixer);
    double h = m->hidden, nq = m->n_heads;
    if (m->attn == TP_ATTN_MLA) {
        double rq = m->q_lora_rank, rkv = m->kv_lora_rank;
        double qk = (double)m->qk_nope_dim + m->qk_rope_dim;
        double q = rq > 0 ? rq * (h + nq * qk + 1) : h * nq * qk;
        return q + rkv * (h + nq * ((double)m->qk_nope_dim + m->v_head_dim) + 1) +
               h * m->qk_rope_dim + nq * m->v_head_dim * h;
    }
    double q = nq * m->head_dim, kv = (double)m->n_kv_heads * m->head_dim;
    return h * ((m->attn_out_gate ? 2 : 1) * q + 2 * kv) + q * h;
}

/* GEMM weight elements of one block's FFN that a token multiplies. */
static double ffn_weights(const struct tp_model *m, uint32_t layer)
{
    double mats = m->mlp == TP_MLP_GLU ? 3 : 2, h = m->hidden;
    if (m->layer_no_ffn[layer])
        return 0;
    if (!m->layer_moe[layer])
        return mats * h * m->ffn;
    return mats * h * ((double)m->moe_ffn * m->top_k + m->shared_ffn);
}

/* Forward attention core of all attention blocks (MTP blocks included). */
static double fwd_attention(const struct tp_model *m, double s, uint32_t mtp,
                            enum tp_attn_convention conv)
{
    double width = tp_head_widths(m), sum = 0;
    for (uint32_t l = 0; l < m->n_layers; l++)
        if (m->layer_mixer[l] == TP_MIXER_ATTN)
            sum += 2 * width * tp_keys_per_query(m, l, s, conv);
    sum += mtp * 2 * width * tp_keys_per_query(m, tp_mtp_template_layer(m), s, conv);
    return sum;
}

/* Forward chunked scans of the Mamba-2 / gated DeltaNet blocks (ssm.c). */
static double fwd_scans(const struct tp_model *m, double s, enum tp_attn_convention conv)
{
    double sum = 0;
    for (uint32_t l = 0; l < m->n_layers; l++)
        sum += tp_mixer_scan_flops(m, (enum tp_mixer)m->layer_mixer[l], s, conv);
    return sum;
}

static enum tp_status flops(const struct tp_model *m, uint64_t seq, enum tp_attn_convention conv,
                            enum tp_recompute rc, uint32_t mtp, bool conventions,
                            struct tp_flops *f, struct tp_error *err)
{
    memset(f, 0, sizeof *f);
    if (seq == 0 || seq > (1u << 24))
        return tp_fail(err, TP_EINVAL, "sequence length %llu is out of range (1..16777216)",
                       (unsigned long long)seq);
    if (mtp > 16)
        return tp_fail(err, TP_EINVAL, "MTP modules %u is out of range (0..16)", mtp);
    double s = (double)seq, h = m->hidden, v = m->vocab;

    double blocks = 0;
    for (uint32_t l = 0; l < m->n_layers; l++)
        blocks += attn_weights(m, l) + ffn_weights(m, l);
    uint32_t tmpl = tp_mtp_template_layer(m);
    double mtp_blocks = mtp * (3 * h + 2 * h * h + attn_weights(m, tmpl) + ffn_weights(m, tmpl));
    double head = (1.0 + mtp) * h * v;

    f->seq = seq;
    f->matmul_weights = blocks + mtp_blocks + head;
    f->fwd_dense = 2 * f->matmul_weights;
    f->fwd_attn = fwd_attention(m, s, mtp, conv);
    f->fwd_scan = fwd_scans(m, s, conv);
    f->fwd = f->fwd_dense + f->fwd_attn + f->fwd_scan;
    f->bwd = 2 * f->fwd;
    f->model = f->fwd + f->bwd;
    /* Full recompute reruns every block's forward but not the LM head [NAR21]; selective
       reruns the attention core only [KOR22]. */
    if (rc == TP_RECOMPUTE_FULL)
        f->recompute = 2 * (blocks + mtp_blocks) + f->fwd_attn + f->fwd_scan;
    else if (rc == TP_RECOMPUTE_SELECTIVE)
        f->recompute = f->fwd_attn;
    f->hardware = f->model + f->recompute;
    if (!conventions)
        return TP_OK;

    struct tp_params p;
    tp_count_params(m, &p);
    double attn_layers = 0;
    for (uint32_t l = 0; l < m->n_layers; l++)
        attn_layers += m->layer_mixer[l] == TP_MIXER_ATTN;
    double full_square = 3 * 2 * tp_head_widths(m) * s * attn_layers;
    f->six_n = 6.0 * (double)p.active;
    f->palm = f->six_n + full_square;
    f->torchtitan = 6.0 * (double)(p.active - p.embedding) + full_square;
    f->megatron_2023 = 3 * (f->fwd_dense + fwd_attention(m, s, mtp, TP_ATTN_NONCAUSAL) +
                            fwd_scans(m, s, TP_ATTN_NONCAUSAL));
    f->narayanan_2021 = tp_flops_nar21(m, s, 72, 12);
    return TP_OK;
}

enum tp_status tp_flops_per_token(const struct tp_model *m, uint64_t seq,
                                  enum tp_attn_convention conv, enum tp_recompute rc,
                                  uint32_t mtp, struct tp_flops *f, struct tp_error *err)
{
    if (!f)
        return tp_fail(err, TP_EINVAL, "no output given");
    TRY(tp_model_shape_check(m, err));
    return flops(m, seq, conv, rc, mtp, true, f, err);
}

enum tp_status tp_flops_model(const struct tp_model *m, uint64_t seq, enum tp_recompute rc,
                              struct tp_flops *f)
{
    return flops(m, seq, TP_ATTN_CAUSAL, rc, 0, false, f, NULL);
}
