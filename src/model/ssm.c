/*
 * ssm.c - the token mixers of hybrid models that are not attention: Mamba-2 (Nemotron-H) and
 * the gated DeltaNet (Qwen3-Next).  Their tensors, GEMM shapes, scan FLOPs, stored activations
 * and element-wise traffic live here; params.c, flops.c, memory.c and time.c call in per block.
 *
 * Tensors follow the Hugging Face modeling code:
 *   Mamba-2 (modeling_nemotron_h.py NemotronHMamba2Mixer), d_in = heads * head_dim,
 *     conv_dim = d_in + 2 * groups * state:
 *     in_proj (d_in + conv_dim + heads) x H [+ bias], conv1d conv_dim x kernel [+ bias conv_dim],
 *     dt_bias, A_log, D (heads each), norm (gated RMSNorm, d_in), out_proj H x d_in [+ bias]
 *   Gated DeltaNet (modeling_qwen3_next.py Qwen3NextGatedDeltaNet), key_dim = k_heads * d_k,
 *     value_dim = v_heads * d_v, conv_dim = 2 * key_dim + value_dim:
 *     in_proj_qkvz (2 key_dim + 2 value_dim) x H, in_proj_ba (2 v_heads) x H,
 *     conv1d conv_dim x kernel, dt_bias, A_log (v_heads each), norm (gated RMSNorm, d_v),
 *     out_proj H x value_dim
 *
 * Scan FLOPs (forward, per token, per layer; 2 FLOP per multiply-add):
 *   Mamba-2 SSD, chunk Q, state N, head dim P, per head (Dao & Gu 2024, arXiv:2405.21060,
 *   §6 "the SSD algorithm": diagonal blocks C_i B_j^T then times X, chunk states B^T X, state
 *   passing, state-to-output C h): 2 * [k * (N + P) + 2 N P], where k is the mean number of
 *   earlier positions a token sees inside its chunk (causal: exact count for chunks of Q, as
 *   chunked attention; non-causal convention: the whole chunk).  The inter-chunk recurrence
 *   (N P per chunk) is left out (< 1/Q of the state terms).
 *   Gated DeltaNet, chunk C, per value head (Yang et al. 2024, arXiv:2412.06464, §3.3 with the
 *   chunkwise DeltaNet of Yang et al. 2024b, arXiv:2406.06484, §3.2: the WY/UT form):
 *   2 * [k * (3 d_k + 2 d_v) + 3 d_k d_v] for K K^T, W = A K, U = A V (the UT transform),
 *   Q K^T and its product with the new values, plus U - W S, the state update K^T U and the
 *   output Q S; the triangular solve (C^2/3 per token) is left out.  Key heads are shared by
 *   v_heads / k_heads value heads (repeat_interleave in the modeling code).
 */
#include "model_internal.h"

#include <string.h>

static void put(struct tp_tensor *out, size_t *n, const char *name, uint64_t rows, uint64_t cols,
                bool replicated, uint32_t lora)
{
    if (rows == 0 || cols == 0)
        return;
    out[(*n)++] = (struct tp_tensor){name, TP_COMP_ATTENTION, rows, cols, 1, 1, replicated, lora};
}

uint64_t tp_ssm_inner(const struct tp_model *m)
{
    return (uint64_t)m->ssm_heads * m->ssm_head_dim;
}

/* Channels of the depthwise conv: x, B and C (Mamba-2); q, k and v (gated DeltaNet). */
static uint64_t conv_dim(const struct tp_model *m, enum tp_mixer k)
{
    if (k == TP_MIXER_MAMBA2)
        return tp_ssm_inner(m) + 2ull * m->ssm_groups * m->ssm_state;
    return 2ull * m->gdn_k_heads * m->gdn_k_dim + (uint64_t)m->gdn_v_heads * m->gdn_v_dim;
}

static uint64_t gdn_value_dim(const struct tp_model *m)
{
    return (uint64_t)m->gdn_v_heads * m->gdn_v_dim;
}

size_t tp_mixer_tensors(const struct tp_model *m, enum tp_mixer k, struct tp_tensor *out)
{
    size_t n = 0;
    uint64_t h = m->hidden, cd = conv_dim(m, k);
    if (k == TP_MIXER_MAMBA2) {
        uint64_t din = tp_ssm_inner(m), heads = m->ssm_heads;
        put(out, &n, "mixer.in_proj.weight", din + cd + heads, h, false, TP_LORA_Q);
        if (m->ssm_proj_bias)
            put(out, &n, "mixer.in_proj.bias", din + cd + heads, 1, false, 0);
        put(out, &n, "mixer.conv1d.weight", cd, m->ssm_conv, false, 0);
        if (m->ssm_conv_bias)
            put(out, &n, "mixer.conv1d.bias", cd, 1, false, 0);
        put(out, &n, "mixer.dt_bias", heads, 1, false, 0);
        put(out, &n, "mixer.A_log", heads, 1, false, 0);
        put(out, &n, "mixer.D", heads, 1, false, 0);
        put(out, &n, "mixer.norm.weight", din, 1, false, 0);
        put(out, &n, "mixer.out_proj.weight", h, din, false, TP_LORA_O);
        if (m->ssm_proj_bias)
            put(out, &n, "mixer.out_proj.bias", h, 1, true, 0);
    } else if (k == TP_MIXER_GDN) {
        uint64_t key = (uint64_t)m->gdn_k_heads * m->gdn_k_dim, val = gdn_value_dim(m);
        put(out, &n, "linear_attn.in_proj_qkvz.weight", 2 * key + 2 * val, h, false,
            TP_LORA_Q | TP_LORA_K | TP_LORA_V);
        put(out, &n, "linear_attn.in_proj_ba.weight", 2ull * m->gdn_v_heads, h, false, 0);
        put(out, &n, "linear_attn.conv1d.weight", cd, m->gdn_conv, false, 0);
        put(out, &n, "linear_attn.dt_bias", m->gdn_v_heads, 1, false, 0);
        put(out, &n, "linear_attn.A_log", m->gdn_v_heads, 1, false, 0);
        put(out, &n, "linear_attn.norm.weight", m->gdn_v_dim, 1, true, 0);
        put(out, &n, "linear_attn.out_proj.weight", h, val, false, TP_LORA_O);
    }
    return n;
}

size_t tp_mixer_gemms(const struct tp_model *m, enum tp_mixer k, struct tp_mixer_gemm *g)
{
    double h = m->hidden;
    if (k == TP_MIXER_MAMBA2) {
        double din = (double)tp_ssm_inner(m);
        g[0] = (struct tp_mixer_gemm){din + (double)conv_dim(m, k) + m->ssm_heads, h, true};
        g[1] = (struct tp_mixer_gemm){h, din, false};
        return 2;
    }
    if (k == TP_MIXER_GDN) {
        double key = (double)m->gdn_k_heads * m->gdn_k_dim, val = (double)gdn_value_dim(m);
        g[0] = (struct tp_mixer_gemm){2 * key + 2 * val + 2.0 * m->gdn_v_heads, h, true};
        g[1] = (struct tp_mixer_gemm){h, val, false};
        return 2;
    }
    return 0;
}

double tp_mixer_gemm_weights(const struct tp_model *m, enum tp_mixer k)
{
    struct tp_mixer_gemm g[TP_MIXER_GEMMS];
    size_t n = tp_mixer_gemms(m, k, g);
    double w = 0;
    for (size_t i = 0; i < n; i++)
        w += g[i].N * g[i].K;
    return w;
}

/* Mean earlier-or-same positions a token sees inside chunks of `c` over a sequence of `s`
   (the exact causal count, as for chunked attention), or the whole chunk (non-causal). */
static double chunk_reach(double c, double s, enum tp_attn_convention conv)
{
    if (c <= 0 || c > s)
        c = s;
    if (conv == TP_ATTN_NONCAUSAL)
        return c;
    double q = (double)((uint64_t)s / (uint64_t)c), r = s - q * c;
    return (q * c * (c + 1) / 2 + r * (r + 1) / 2) / s;
}

double tp_mixer_scan_flops(const struct tp_model *m, enum tp_mixer k, double s,
                           enum tp_attn_convention conv)
{
    if (k == TP_MIXER_MAMBA2) {
        double n = m->ssm_state, p = m->ssm_head_dim;
        double reach = chunk_reach(m->ssm_chunk, s, conv);
        return 2.0 * m->ssm_heads * (reach * (n + p) + 2 * n * p);
    }
    if (k == TP_MIXER_GDN) {
        double dk = m->gdn_k_dim, dv = m->gdn_v_dim;
        double reach = chunk_reach(m->gdn_chunk, s, conv);
        return 2.0 * m->gdn_v_heads * (reach * (3 * dk + 2 * dv) + 3 * dk * dv);
    }
    return 0;
}

double tp_mixer_scan_bytes(const struct tp_model *m, enum tp_mixer k)
{
    /* what the scan kernel reads and writes per token, 16-bit: its inputs (the conv outputs,
       the gate and step values) and its output */
    if (k == TP_MIXER_MAMBA2)
        return 2.0 * ((double)conv_dim(m, k) + tp_ssm_inner(m) + 2.0 * m->ssm_heads);
    if (k == TP_MIXER_GDN)
        return 2.0 * ((double)conv_dim(m, k) + gdn_value_dim(m) + 2.0 * m->gdn_v_heads);
    return 0;
}

double tp_mixer_elementwise(const struct tp_model *m, enum tp_mixer k)
{
    /* elements moved per token outside the GEMMs and the scan, all split by tp: the conv reads
       and writes its channels (with SiLU fused), the gated RMSNorm reads y and z and writes
       its output */
    double cd = (double)conv_dim(m, k);
    if (k == TP_MIXER_MAMBA2)
        return 2 * cd + 3.0 * tp_ssm_inner(m);
    if (k == TP_MIXER_GDN)
        return 2 * cd + 3.0 * gdn_value_dim(m);
    return 0;
}

double tp_mixer_activations(const struct tp_model *m, enum tp_mixer k, double gin)
{
    /* Bytes per token a mixer keeps for its backward, all split by tp [derived from the saved
       tensors of mamba_ssm's MambaChunkScanCombinedFn and fla's chunk_gated_delta_rule]: the
       conv input and output (16-bit), the gate z, the scan output, the out_proj input in the
       GEMM precision, and fp32 per-head step values (dt and its cumulative sum; g and beta).
       The DeltaNet also keeps its fp32 chunk matrix A (chunk entries per token per head). */
    double cd = (double)conv_dim(m, k);
    if (k == TP_MIXER_MAMBA2) {
        double din = (double)tp_ssm_inner(m);
        return 2 * cd * 2 + 2 * din * 2 + gin * din + 8.0 * m->ssm_heads;
    }
    if (k == TP_MIXER_GDN) {
        double val = (double)gdn_value_dim(m);
        return 2 * cd * 2 + 2 * val * 2 + gin * val + 8.0 * m->gdn_v_heads +
               4.0 * m->gdn_chunk * m->gdn_v_heads;
    }
    return 0;
}

size_t tp_mixer_tp_splits(const struct tp_model *m, struct tp_mixer_split *out)
{
    /* Megatron-Core's MambaMixer splits heads and B/C groups over tp; GatedDeltaNet its key
       and value heads */
    bool mamba = false, gdn = false;
    for (uint32_t l = 0; l < m->n_layers && l < TP_MAX_LAYERS; l++) {
        mamba = mamba || m->layer_mixer[l] == TP_MIXER_MAMBA2;
        gdn = gdn || m->layer_mixer[l] == TP_MIXER_GDN;
    }
    size_t n = 0;
    if (mamba) {
        out[n++] = (struct tp_mixer_split){"mamba_num_heads", m->ssm_heads};
        out[n++] = (struct tp_mixer_split){"n_groups", m->ssm_groups};
    }
    if (gdn) {
        out[n++] = (struct tp_mixer_split){"linear_num_key_heads", m->gdn_k_heads};
        out[n++] = (struct tp_mixer_split){"linear_num_value_heads", m->gdn_v_heads};
    }
    return n;
}

bool tp_mixer_tp_ok(const struct tp_model *m, uint32_t tp)
{
    struct tp_mixer_split s[4];
    size_t n = tp_mixer_tp_splits(m, s);
    for (size_t i = 0; i < n; i++)
        if (tp == 0 || s[i].count % tp)
            return false;
    return true;
}

bool tp_model_hybrid(const struct tp_model *m)
{
    for (uint32_t l = 0; l < m->n_layers && l < TP_MAX_LAYERS; l++)
        if (m->layer_mixer[l] != TP_MIXER_ATTN || m->layer_no_ffn[l])
            return true;
    return false;
}

unsigned tp_block_kind(const struct tp_model *m, uint32_t layer)
{
    unsigned ffn = m->layer_no_ffn[layer] ? TP_BLOCK_FFN_NONE
                   : m->layer_moe[layer] ? TP_BLOCK_FFN_MOE : TP_BLOCK_FFN_DENSE;
    unsigned mixer = m->layer_mixer[layer] == TP_MIXER_ATTN ? m->layer_attn[layer]
                                                            : 2u + m->layer_mixer[layer];
    return ffn * TP_BLOCK_MIXERS + mixer;
}

static enum tp_status check_positive(const char *field, uint32_t v, uint32_t hi,
                                     struct tp_error *err)
{
    if (v == 0 || v > hi)
        return tp_fail(err, TP_EINVAL, "%s=%u is out of range (expected 1..%u)", field, v, hi);
    return TP_OK;
}

enum tp_status tp_mixer_check(const struct tp_model *m, struct tp_error *err)
{
    bool mamba = false, gdn = false;
    for (uint32_t l = 0; l < m->n_layers && l < TP_MAX_LAYERS; l++) {
        if (m->layer_mixer[l] > TP_MIXER_NONE)
            return tp_fail(err, TP_EINVAL, "block %u has an unknown mixer kind %u", l,
                           m->layer_mixer[l]);
        mamba = mamba || m->layer_mixer[l] == TP_MIXER_MAMBA2;
        gdn = gdn || m->layer_mixer[l] == TP_MIXER_GDN;
    }
    if (mamba) {
        TRY(check_positive("mamba_num_heads", m->ssm_heads, 1u << 14, err));
        TRY(check_positive("mamba_head_dim", m->ssm_head_dim, 1u << 12, err));
        TRY(check_positive("ssm_state_size", m->ssm_state, 1u << 12, err));
        TRY(check_positive("n_groups", m->ssm_groups, m->ssm_heads, err));
        TRY(check_positive("conv_kernel", m->ssm_conv, 64, err));
        TRY(check_positive("chunk_size", m->ssm_chunk, 1u << 16, err));
        if (m->ssm_heads % m->ssm_groups != 0)
            return tp_fail(err, TP_EINVAL, "n_groups=%u must divide mamba_num_heads=%u",
                           m->ssm_groups, m->ssm_heads);
    }
    if (gdn) {
        TRY(check_positive("linear_num_key_heads", m->gdn_k_heads, 1u << 14, err));
        TRY(check_positive("linear_num_value_heads", m->gdn_v_heads, 1u << 14, err));
        TRY(check_positive("linear_key_head_dim", m->gdn_k_dim, 1u << 12, err));
        TRY(check_positive("linear_value_head_dim", m->gdn_v_dim, 1u << 12, err));
        TRY(check_positive("linear_conv_kernel_dim", m->gdn_conv, 64, err));
        TRY(check_positive("linear chunk size", m->gdn_chunk, 1u << 16, err));
        if (m->gdn_v_heads % m->gdn_k_heads != 0)
            return tp_fail(err, TP_EINVAL,
                           "linear_num_key_heads=%u must divide linear_num_value_heads=%u",
                           m->gdn_k_heads, m->gdn_v_heads);
    }
    return TP_OK;
}

enum tp_status tp_model_set_pattern(struct tp_model *m, const char *pattern,
                                    struct tp_error *err)
{
    size_t n = strlen(pattern);
    if (n != m->n_layers)
        return tp_fail(err, TP_EINVAL,
                       "hybrid_override_pattern has %zu blocks but num_hidden_layers is %u", n,
                       m->n_layers);
    if (n > TP_MAX_LAYERS)
        return tp_fail(err, TP_EINVAL, "hybrid_override_pattern has %zu blocks (at most %u)", n,
                       (unsigned)TP_MAX_LAYERS);
    for (size_t l = 0; l < n; l++) {
        char c = pattern[l];
        if (c != 'M' && c != '*' && c != '-' && c != 'E')
            return tp_fail(err, TP_EUNSUPPORTED,
                           "hybrid_override_pattern block %zu is '%c' (understood: M Mamba-2, "
                           "* attention, - MLP, E MoE)",
                           l, c);
        if (c == 'E' && m->n_experts == 0)
            return tp_fail(err, TP_EINVAL,
                           "hybrid_override_pattern block %zu is MoE ('E') but the model has "
                           "no experts (n_routed_experts)",
                           l);
        m->layer_mixer[l] = c == 'M' ? TP_MIXER_MAMBA2 : c == '*' ? TP_MIXER_ATTN
                                                                   : TP_MIXER_NONE;
        m->layer_no_ffn[l] = c == 'M' || c == '*';
        m->layer_moe[l] = c == 'E';
        m->layer_attn[l] = TP_LAYER_FULL;
    }
    m->layers_explicit = true;
    return TP_OK;
}
