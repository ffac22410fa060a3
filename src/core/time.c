/*
 * time.c - seconds per optimizer step from first principles (training-physics.md §4-5).
 *
 * Per pipeline stage and micro-batch, every GEMM runs at its real shape (forward, data gradient,
 * weight gradient) with a shape-aware efficiency: the device's best GEMM fraction (MAMF, [MLE])
 * times tile and wave quantization on its SMs ([NV-DL]), or the bytes it moves over HBM when
 * that takes longer (small dimensions).  The attention core runs at its own efficiency with the
 * causal half of the work (FlashAttention) or, eager, as batched GEMMs over the full square plus
 * a memory-bound softmax.  Norms, activations, rotary, residuals, casts and the loss move bytes
 * over HBM.  Recompute adds a forward.
 *
 * Communication uses NCCL's ring cost (latency + volume over the achieved bus bandwidth) on a
 * two-level network ([NCCL-TUNE], [NCCLT], §4.3): TP/SP collectives per layer ([SHO19],
 * [KOR22]), context-parallel KV exchange, MoE all-to-all with the busiest rank's load, pipeline
 * send/recv and the 1F1B / interleaved bubble ([NAR21]), DP gradient reduction overlapped with
 * the last backward, ZeRO-3/FSDP gathers per micro-batch behind prefetch ([ZeRO], [FSDP]).  The
 * optimizer step is memory-bound over the sharded states (CPU Adam when offloaded).
 *
 * Rank order (Megatron-Core's default tp-cp-ep-dp-pp): TP ranks are adjacent, then CP, then DP,
 * then PP; expert parallel groups sit inside DP with stride etp.  A group of n ranks with stride
 * s has min(n, gpus_per_node / s) ranks in each node.
 *
 * Every efficiency is a field of struct tp_calib; nothing here is fitted to a row.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* What one evaluation needs from the cluster and calibration, resolved once. */
struct hw {
    double gemm_flops;  /* GEMM dtype peak * MAMF * gemm_scale */
    double attn_flops;  /* 16-bit peak * attn_eff */
    double mem_bw;      /* HBM bandwidth * mem_eff */
    double sms, tile_m, tile_n;
    bool fp8;           /* quantized GEMMs (fp8, mxfp8, nvfp4, mxfp4) with their casts */
    enum tp_dtype gemm_dtype;
    double cast_fwd, cast_bwd; /* bytes moved per element by the input / gradient casts */
    double act_bytes;   /* bytes per activation element (2; 4 in fp32 training) */
};

/* Forward / backward cost of one block (or the embedding and head) for one micro-batch. */
struct cost {
    double fwd_gemm, bwd_gemm, fwd_attn, bwd_attn, fwd_mem, bwd_mem;
    double tp_fwd, tp_bwd;   /* TP/SP collectives (not yet reduced by overlap) */
    double cp_fwd, cp_bwd;   /* context-parallel KV exchange, exposed part */
    double ep_fwd, ep_bwd;   /* MoE all-to-all */
    double host_fwd, host_bwd; /* host-bound time of eager loops (launches, syncs) */
};

static double ceil_div(double a, double b)
{
    return ceil(a / b);
}

/* Fraction of the SMs' work that is useful for `tiles` output tiles: the last wave is partial. */
static double wave_eff(double tiles, double sms)
{
    if (sms <= 0 || tiles <= 0)
        return 1;
    return tiles / (ceil_div(tiles, sms) * sms);
}

/* Time of `count` independent GEMMs (a grouped GEMM) of M x N x K. */
static double gemm(const struct hw *h, double M, double N, double K, double count)
{
    if (M <= 0 || N <= 0 || K <= 0 || count <= 0)
        return 0;
    double tm = ceil_div(M, h->tile_m), tn = ceil_div(N, h->tile_n);
    double eta_tile = (M * N) / (tm * h->tile_m * tn * h->tile_n);
    double eta = eta_tile * wave_eff(tm * tn * count, h->sms);
    double flops = 2 * M * N * K * count;
    double t_compute = flops / (h->gemm_flops * eta);
    double bytes = (M * K + K * N + M * N) * 2 * count;
    double t_memory = bytes / h->mem_bw;
    return t_compute > t_memory ? t_compute : t_memory;
}

/* A linear layer y = x W^T, W of N x K, applied to M tokens (count copies). */
struct linear {
    double N, K, count, M;
    bool frozen; /* no weight gradient (LoRA/QLoRA base) */
    bool nf4;    /* QLoRA: dequantized from NF4 before each use */
    bool lora;   /* carries a LoRA adapter */
};

static void add_linear(const struct hw *h, const struct tp_job *j, const struct linear *x,
                       struct cost *c)
{
    c->fwd_gemm += gemm(h, x->M, x->N, x->K, x->count);
    c->bwd_gemm += gemm(h, x->M, x->K, x->N, x->count); /* data gradient */
    if (!x->frozen)
        c->bwd_gemm += gemm(h, x->N, x->K, x->M, x->count); /* weight gradient */
    if (h->fp8) {
        /* Transformer Engine casts of the input (fwd) and of the output gradient (bwd) */
        c->fwd_mem += h->cast_fwd * x->M * x->K * x->count / h->mem_bw;
        c->bwd_mem += h->cast_bwd * x->M * x->N * x->count / h->mem_bw;
    }
    if (x->nf4) {
        /* bitsandbytes dequantizes the 4-bit weight to 16 bits for every use */
        double t = 2.5 * x->N * x->K * x->count / h->mem_bw;
        c->fwd_mem += t;
        c->bwd_mem += t;
    }
    if (x->lora && j->lora_rank > 0) {
        double r = j->lora_rank;
        c->fwd_gemm += gemm(h, x->M, r, x->K, x->count) + gemm(h, x->M, x->N, r, x->count);
        c->bwd_gemm += 2 * (gemm(h, x->M, x->K, r, x->count) + gemm(h, x->M, r, x->N, x->count));
    }
}

/* ---- one block ----------------------------------------------------------------------- */

struct ctx {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_layout *l;
    const struct tp_calib *cal;
    struct hw h;
    double tokens;   /* tokens of one micro-batch on this rank (after CP; DPO pairs) */
    double seqs;     /* sequences of one micro-batch (DPO: chosen + rejected) */
    double seq_local;/* tokens of one sequence on this rank */
    bool frozen;     /* LoRA/QLoRA: base weights get no gradient */
    bool eager;      /* Hugging Face modules op by op (no fused kernels, no fused loss) */
    enum tp_moe_impl moe_impl;
    uint32_t g_tp, g_cp, g_ep;
};

/* Element-wise bytes per token of one block's forward that every TP rank repeats (norms,
   residuals: replicated without SP) and that TP splits (the rest). */
static void elementwise(const struct ctx *x, bool moe, double *replicated, double *split,
                        double *expert)
{
    const struct tp_model *m = x->m;
    double H = m->hidden, q = (double)m->n_heads * m->head_dim;
    double kv = (double)m->n_kv_heads * m->head_dim;
    if (m->attn == TP_ATTN_MLA) {
        q = (double)m->n_heads * ((double)m->qk_nope_dim + m->qk_rope_dim);
        kv = (double)m->kv_lora_rank + m->qk_rope_dim;
    }
    /* Bytes moved per element, fused kernels (Megatron/TE, torch.compile, Liger): a norm reads
       and writes once (2 elements), rotary and q/k norms likewise, the gated activation reads
       2F and writes F.  Hugging Face modeling code run eagerly (Axolotl/TRL without Liger)
       launches one kernel per op: RMSNorm upcasts to fp32 and makes ~5 passes (about 9x the
       fused traffic), rotary builds rotate_half copies (about 5x), SwiGLU runs act and mul
       separately (10 element-reads/writes instead of 6 per output: 5/3x) [derived from the
       modeling_llama.py op sequence]. */
    bool eager = x->eager;
    double f_norm = eager ? 9 : 1, f_rope = eager ? 5 : 1, f_glu = eager ? 5.0 / 3 : 1;
    /* norms read and write H; two residual adds read 2H and write H; dropout writes a mask */
    *replicated = f_norm * m->norms_per_block * 2 * H + 2 * 3 * H +
                  (x->j->dropout ? 2 * 2 * H : 0);
    *split = 0;
    if (m->pos == TP_POS_ROPE)
        *split += f_rope * 2 * (q + kv);
    if (m->qk_norm)
        *split += f_norm * 2 * (q + kv);
    double glu = m->mlp == TP_MLP_GLU ? 3 * f_glu : 2; /* SwiGLU reads 2F writes F; GELU F, F */
    *expert = 0;
    if (!moe) {
        *split += glu * m->ffn;
    } else {
        double shared = m->shared_ffn;
        *split += glu * shared;
        /* routed: activation on k expert rows per token; permute and unpermute read and write
           the hidden state of every routed copy */
        *expert = glu * (double)m->moe_ffn * m->top_k + 4 * H * m->top_k;
    }
}

/* Attention core of one block for one micro-batch. */
static void attention(const struct ctx *x, uint32_t layer, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    double heads = (double)m->n_heads / l->tp;
    double width = tp_head_widths(m) / l->tp; /* n_q (d_qk + d_v) on this rank */
    double s = (double)x->j->seq;
    if (x->j->attn_impl == TP_ATTN_EAGER) {
        /* QK^T and AV as batched GEMMs over the full square (the mask is applied afterwards),
           then scale/mask/softmax/dropout over s x s scores: ~9 B per score forward, twice
           that backward */
        double dqk = width / heads / 2, count = x->seqs * heads;
        double sl = x->seq_local;
        c->fwd_attn += gemm(&x->h, sl, s, dqk, count) + gemm(&x->h, sl, dqk, s, count);
        c->bwd_attn += gemm(&x->h, sl, dqk, s, count) + gemm(&x->h, s, dqk, sl, count) +
                       gemm(&x->h, sl, s, dqk, count) + gemm(&x->h, s, dqk, sl, count);
        double scores = count * sl * s;
        c->fwd_mem += 9 * scores / x->h.mem_bw;
        c->bwd_mem += 18 * scores / x->h.mem_bw;
        return;
    }
    /* FlashAttention: causal pairs only; thread blocks of 128 queries per head */
    double kpq = tp_keys_per_query(m, layer, s, TP_ATTN_CAUSAL);
    double flops = 2 * width * kpq * x->tokens;
    double ctas = x->seqs * heads * ceil_div(x->seq_local, 128);
    /* each 128-query block also pays about one key block of work it does not count: the
       diagonal tile computed whole under the causal mask, and the block's prologue and softmax
       epilogue (FlashAttention-2 Alg. 1 / FlashAttention-3 tiling): short sequences run below
       the kernel's long-sequence rate (FA3 paper Fig. 5: 0.5k causal at about half the 16k
       rate) */
    double t = flops * (kpq + 256) / kpq / (x->h.attn_flops * wave_eff(ctas, x->h.sms));
    c->fwd_attn += t;
    c->bwd_attn += t * x->cal->attn_bwd_ratio;
}

/* Collective time of one TP all-reduce (or SP all-gather + reduce-scatter) of the block output. */
static double tp_collective(const struct ctx *x)
{
    const struct tp_layout *l = x->l;
    double bytes = x->tokens * x->m->hidden * x->h.act_bytes;
    return tp_time_allreduce(x->c, x->cal, bytes, l->tp, x->g_tp);
}

/* The routed experts of one block run one expert after another (Hugging Face's Python loop, or
   DeepSpeed-MoE's loop over its local experts): `n_local` separate GEMM chains of `rows` tokens
   each, and a host-bound part per expert.  Hugging Face's loop (modeling_qwen3_moe.py,
   modeling_mixtral.py: for each expert, torch.where on its mask, index the hidden states, the
   gated MLP, scale by the routing weight, index_add_) costs about moe_eager_ops launches and one
   device-to-host sync (torch.where) per expert forward, twice the launches backward, with the GPU
   idle behind each sync.  DeepSpeed-MoE (moe/experts.py) pads every expert to its capacity
   (capacity factor 1.0 by default) and loops over chunks without a sync. */
static void expert_loop(const struct ctx *x, double n_local, double mean_rows, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_job *j = x->j;
    const struct tp_calib *cal = x->cal;
    bool eager = x->moe_impl == TP_MOE_EAGER;
    double rows = mean_rows;
    if (x->moe_impl == TP_MOE_DEEPSPEED)
        rows = ceil(mean_rows * (j->moe_capacity > 0 ? j->moe_capacity : 1.0));
    double up = m->mlp == TP_MLP_GLU ? 2 : 1, etp = x->l->etp, H = m->hidden;
    bool lora = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    uint32_t lt = j->lora_targets;
    struct linear a = {up * m->moe_ffn / etp, H, 1, rows, x->frozen, j->task == TP_TASK_QLORA,
                       lora && (lt & (TP_LORA_GATE | TP_LORA_UP)) != 0};
    struct linear b = {H, m->moe_ffn / etp, 1, rows, x->frozen, j->task == TP_TASK_QLORA,
                       lora && (lt & TP_LORA_DOWN) != 0};
    struct cost one;
    memset(&one, 0, sizeof one);
    add_linear(&x->h, j, &a, &one);
    add_linear(&x->h, j, &b, &one);
    c->fwd_gemm += n_local * one.fwd_gemm;
    c->bwd_gemm += n_local * one.bwd_gemm;
    c->fwd_mem += n_local * one.fwd_mem;
    c->bwd_mem += n_local * one.bwd_mem;
    if (eager) {
        /* the loop indexes the block's hidden states once per expert (hidden_states[None, top_x]);
           autograd's backward of aten::index writes a zero tensor of the whole input and
           scatters into it (derivatives.yaml: index_backward(grad.new_zeros(self.sizes()), ...)),
           and the n_local full-size gradients are summed into one: per expert one write of
           T x H for the zeros and a read-read-write for the sum */
        double full = x->tokens * m->hidden * x->h.act_bytes;
        c->bwd_mem += n_local * 4 * full / x->h.mem_bw;
    }
    double ops = eager ? cal->moe_eager_ops : cal->moe_eager_ops / 2;
    c->host_fwd += n_local * (ops * cal->eager_op_s + (eager ? cal->host_sync_s : 0));
    c->host_bwd += n_local * 2 * ops * cal->eager_op_s;
}

static void block_cost(const struct ctx *x, uint32_t layer, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    memset(c, 0, sizeof *c);
    double T = x->tokens, H = m->hidden, tp = l->tp;
    bool moe = m->layer_moe[layer] != 0;
    bool nf4 = j->task == TP_TASK_QLORA;
    uint32_t lt = j->lora_targets;
    bool lora = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
#define LIN(n_, k_, cnt_, m_, bits_)                                                              \
    do {                                                                                          \
        struct linear li_ = {(n_), (k_), (cnt_), (m_), x->frozen, nf4,                           \
                             lora && ((bits_) & lt) != 0};                                        \
        add_linear(&x->h, j, &li_, c);                                                            \
    } while (0)

    /* attention projections: column-parallel (split N) and row-parallel (split K) */
    if (m->attn == TP_ATTN_MLA) {
        double nq = m->n_heads, qk = (double)m->qk_nope_dim + m->qk_rope_dim;
        if (m->q_lora_rank) {
            LIN(m->q_lora_rank, H, 1, T, TP_LORA_Q); /* down projections are replicated */
            LIN(nq * qk / tp, m->q_lora_rank, 1, T, TP_LORA_Q);
        } else {
            LIN(nq * qk / tp, H, 1, T, TP_LORA_Q);
        }
        LIN((double)m->kv_lora_rank + m->qk_rope_dim, H, 1, T, TP_LORA_K | TP_LORA_V);
        LIN(nq * ((double)m->qk_nope_dim + m->v_head_dim) / tp, m->kv_lora_rank, 1, T,
            TP_LORA_K | TP_LORA_V);
        LIN(H, nq * m->v_head_dim / tp, 1, T, TP_LORA_O);
    } else {
        double q = (double)m->n_heads * m->head_dim, kv = (double)m->n_kv_heads * m->head_dim;
        LIN((q + 2 * kv) / tp, H, 1, T, TP_LORA_Q | TP_LORA_K | TP_LORA_V);
        LIN(H, q / tp, 1, T, TP_LORA_O);
    }
    attention(x, layer, c);

    double up = m->mlp == TP_MLP_GLU ? 2 : 1;
    double tp_colls = 2; /* attention: one all-reduce forward, one backward */
    if (!moe) {
        LIN(up * m->ffn / tp, H, 1, T, TP_LORA_GATE | TP_LORA_UP);
        LIN(H, m->ffn / tp, 1, T, TP_LORA_DOWN);
        tp_colls += 2;
    } else {
        double E = m->n_experts, k = m->top_k, ep = l->ep, etp = l->etp;
        double imb = j->moe_capacity > 0 ? (j->moe_capacity < j->moe_imbalance
                                                ? j->moe_capacity : j->moe_imbalance)
                                         : j->moe_imbalance;
        /* the ep ranks of a group route T*k token copies each over E experts, so each of this
           rank's E/ep experts receives T*k*ep/E rows on average; the busiest rank carries
           `imb` times the mean (dropless) or at most the capacity factor */
        double per_expert = T * k * ep / E * imb;
        LIN(E, H, 1, T, 0); /* router */
        if (x->moe_impl == TP_MOE_GROUPED) {
            LIN(up * m->moe_ffn / etp, H, E / ep, per_expert, TP_LORA_GATE | TP_LORA_UP);
            LIN(H, m->moe_ffn / etp, E / ep, per_expert, TP_LORA_DOWN);
        } else if (x->moe_impl == TP_MOE_DENSE) {
            /* every expert over all T tokens (zero-scaled where not routed), plus the E copies
               of the hidden states: repeat, scale, and the sum over experts of the outputs */
            expert_loop(x, E, T, c);
            double copies = 3 * E * T * H * x->h.act_bytes;
            c->fwd_mem += copies / x->h.mem_bw;
            c->bwd_mem += 2 * copies / x->h.mem_bw;
        } else {
            expert_loop(x, E / ep, T * k * ep / E, c);
        }
        if (m->shared_ffn) {
            LIN(up * m->shared_ffn / tp, H, 1, T, TP_LORA_GATE | TP_LORA_UP);
            LIN(H, m->shared_ffn / tp, 1, T, TP_LORA_DOWN);
        }
        tp_colls += etp > 1 || m->shared_ffn ? 2 : 0;
        /* dispatch and combine, forward and backward: T*k hidden states leave each rank */
        double bytes = T * k * H * x->h.act_bytes * imb;
        double a2a = tp_time_alltoall(x->c, x->cal, bytes, l->ep, x->g_ep);
        c->ep_fwd = 2 * a2a;
        c->ep_bwd = 2 * a2a;
    }
#undef LIN
    double rep, split, expert;
    elementwise(x, moe, &rep, &split, &expert);
    bool sp = l->sp && l->tp > 1;
    double bytes = T * ((sp ? rep / tp : rep) + split / tp + expert / l->etp) * x->h.act_bytes;
    if (!x->eager)
        bytes *= 1 - x->cal->fused_elementwise;
    c->fwd_mem += bytes / x->h.mem_bw;
    c->bwd_mem += 2 * bytes / x->h.mem_bw;

    double coll = tp_collective(x);
    c->tp_fwd = tp_colls / 2 * coll;
    c->tp_bwd = tp_colls / 2 * coll;

    if (l->cp > 1) {
        /* ring attention: each rank passes its K and V chunk around the ring (cp - 1 hops);
           the transfer hides behind the chunked attention compute ([derived] §4.6) */
        double kv = m->attn == TP_ATTN_MLA ? (double)m->n_heads * ((double)m->qk_nope_dim +
                                                                    m->qk_rope_dim + m->v_head_dim)
                                           : 2.0 * m->n_kv_heads * m->head_dim;
        double bytes_kv = (l->cp - 1.0) * T * kv / tp * x->h.act_bytes;
        uint32_t nodes = tp_comm_nodes_of(l->cp, x->g_cp);
        double t = bytes_kv / tp_comm_bus_bw(x->c, x->cal, x->g_cp, nodes) +
                   (l->cp - 1.0) * tp_comm_latency(x->cal, 1, nodes > 1);
        double fwd = t - c->fwd_attn, bwd = 2 * t - c->bwd_attn;
        c->cp_fwd = fwd > 0 ? fwd : 0;
        c->cp_bwd = bwd > 0 ? bwd : 0;
    }
}

/* Embedding (first stage) and LM head with the loss (last stage) for one micro-batch. */
static void outer_cost(const struct ctx *x, bool first, bool last, struct cost *c)
{
    const struct tp_model *m = x->m;
    memset(c, 0, sizeof *c);
    double T = x->tokens, H = m->hidden, V = m->vocab, tp = x->l->tp;
    if (first) {
        /* gather rows forward, scatter-add gradients (fp32) backward */
        c->fwd_mem += T * H * 2 * x->h.act_bytes / x->h.mem_bw;
        c->bwd_mem += T * H * 3 * 4 / x->h.mem_bw;
    }
    if (last) {
        struct linear head = {V / tp, H, 1, T, x->frozen, false, false};
        add_linear(&x->h, x->j, &head, c);
        /* cross-entropy over T x V/tp logits: fp32 softmax reads/writes and the gradient;
           a fused (chunked) loss avoids the fp32 round trips */
        double per_logit = x->j->fused_loss ? 4 : 16;
        c->fwd_mem += T * V / tp * per_logit / 2 / x->h.mem_bw;
        c->bwd_mem += T * V / tp * per_logit / 2 / x->h.mem_bw;
        c->fwd_mem += T * H * 2 * x->h.act_bytes / x->h.mem_bw; /* final norm */
    }
}

/* ---- the step ------------------------------------------------------------------------ */

static void resolve_hw(const struct tp_cluster *c, const struct tp_job *j,
                       const struct tp_calib *cal, struct hw *h)
{
    const struct tp_gpu *g = &c->gpu;
    const struct tp_calib_gpu *o = tp_calib_gpu_find(cal, g->key);
    double mamf = o && o->mamf_bf16 > 0 ? o->mamf_bf16 : g->mamf_bf16 > 0 ? g->mamf_bf16
                                                                         : cal->mamf_default;
    double mamf8 = o && o->mamf_fp8 > 0 ? o->mamf_fp8 : g->mamf_fp8 > 0 ? g->mamf_fp8
                                                                      : mamf * cal->fp8_mamf_ratio;
    double attn_eff = o && o->attn_eff > 0 ? o->attn_eff : cal->attn_eff;
    double mem_eff = o && o->mem_eff > 0 ? o->mem_eff : cal->mem_eff;
    double p16 = g->peak_flops[TP_BF16];
    /* FlashAttention-2 is an Ampere-style (mma.sync) kernel: on async-MMA GPUs it reaches only
       fa2_ratio of the native kernel's rate */
    if (g->async_mma && !tp_attn_native(j))
        attn_eff *= cal->fa2_ratio;
    enum tp_dtype gd = tp_prec_gemm_dtype(j->precision);
    h->gemm_dtype = gd;
    h->fp8 = (gd == TP_FP8 || gd == TP_FP4) && g->peak_flops[gd] > 0;
    /* FP8: 2 B read + 1 B written for the input; the gradient and its transpose, twice that.
       FP4 (NVFP4 recipe): the input cast writes the rowwise and the columnwise copy (2 x
       (0.5 + 1/16) B) in one pass; the gradient's columnwise copy goes through the random
       Hadamard transform in a pass of its own [derived from the byte counts] */
    h->cast_fwd = gd == TP_FP4 ? 2 + 2 * 0.5625 : 3;
    h->cast_bwd = gd == TP_FP4 ? 2 + 2 * 0.5625 + 2 + 0.5625 : 6;
    /* FP4 GEMMs reach the FP8 share of the FP8 rate again [heuristic; no FP4 row in the
       calibration set] */
    double mamf4 = mamf8 * cal->fp8_mamf_ratio;
    h->act_bytes = j->precision == TP_PREC_FP32 ? 4 : 2;
    if (j->precision == TP_PREC_FP32) {
        double p = g->peak_flops[TP_TF32] > 0 ? g->peak_flops[TP_TF32] : g->peak_flops[TP_FP32];
        h->gemm_flops = p * mamf * cal->gemm_scale;
        h->attn_flops = p * attn_eff;
    } else {
        h->gemm_flops = !h->fp8        ? p16 * mamf * cal->gemm_scale
                        : gd == TP_FP4 ? g->peak_flops[TP_FP4] * mamf4 * cal->gemm_scale
                                       : g->peak_flops[TP_FP8] * mamf8 * cal->gemm_scale;
        h->attn_flops = p16 * attn_eff;
    }
    h->mem_bw = g->hbm_bw * mem_eff;
    h->sms = g->sms;
    h->tile_m = cal->tile_m ? cal->tile_m : 128;
    h->tile_n = cal->tile_n ? cal->tile_n : 128;
}

/* Per-micro-batch times of one stage. */
struct stage_time {
    double fwd, bwd, recompute;      /* compute */
    double gemm, attn, mem;          /* compute split by kind (fwd + bwd + recompute) */
    double tp, cp, ep, pp;           /* exposed communication */
    double overhead;
    double total;                    /* everything one micro-batch costs this stage */
    uint32_t moe_blocks;             /* blocks with routed experts on this stage */
};

static void add_cost(struct cost *sum, const struct cost *c, double k)
{
    sum->fwd_gemm += k * c->fwd_gemm;
    sum->bwd_gemm += k * c->bwd_gemm;
    sum->fwd_attn += k * c->fwd_attn;
    sum->bwd_attn += k * c->bwd_attn;
    sum->fwd_mem += k * c->fwd_mem;
    sum->bwd_mem += k * c->bwd_mem;
    sum->tp_fwd += k * c->tp_fwd;
    sum->tp_bwd += k * c->tp_bwd;
    sum->cp_fwd += k * c->cp_fwd;
    sum->cp_bwd += k * c->cp_bwd;
    sum->ep_fwd += k * c->ep_fwd;
    sum->ep_bwd += k * c->ep_bwd;
    sum->host_fwd += k * c->host_fwd;
    sum->host_bwd += k * c->host_bwd;
}

/* Block kinds: blocks with the same MoE flag and attention reach cost the same. */
#define KINDS 6
static unsigned kind_of(const struct tp_model *m, uint32_t layer)
{
    return (unsigned)m->layer_moe[layer] * 3 + m->layer_attn[layer];
}

static void stage_time(const struct ctx *x, const struct cost kinds[KINDS], uint32_t stage,
                       struct stage_time *st)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    const struct tp_calib *cal = x->cal;
    struct cost sum, rc;
    memset(&sum, 0, sizeof sum);
    memset(&rc, 0, sizeof rc);
    memset(st, 0, sizeof *st);
    uint32_t n = 0, ckpt = 0;
    uint32_t lo[TP_MAX_LAYERS], hi[TP_MAX_LAYERS];
    uint32_t ranges = tp_stage_ranges(m, l, stage, lo, hi);
    for (uint32_t r = 0; r < ranges; r++)
    for (uint32_t layer = lo[r]; layer < hi[r]; layer++) {
        const struct cost *c = &kinds[kind_of(m, layer)];
        add_cost(&sum, c, 1);
        bool full = l->recompute == TP_RECOMPUTE_FULL &&
                    (l->recompute_layers == 0 || ckpt < l->recompute_layers);
        if (full) {
            ckpt++;
            add_cost(&rc, c, 1); /* the forward again, with its collectives */
        } else if (l->recompute == TP_RECOMPUTE_SELECTIVE) {
            uint32_t mods = l->recompute_modules ? l->recompute_modules : TP_RC_CORE_ATTN;
            if (mods & TP_RC_CORE_ATTN)
                rc.fwd_attn += c->fwd_attn;
            if ((mods & TP_RC_MOE) && m->layer_moe[layer]) /* dispatch and combine again */
                rc.ep_fwd += c->ep_fwd;
        }
        n++;
        st->moe_blocks += m->layer_moe[layer] != 0;
    }
    struct cost outer;
    outer_cost(x, stage == 0, stage == l->pp - 1, &outer);
    add_cost(&sum, &outer, 1);

    double ref = x->j->task == TP_TASK_DPO ? 1 : 0; /* DPO: the frozen reference's forward */
    double fwd_c = sum.fwd_gemm + sum.fwd_attn + sum.fwd_mem;
    st->fwd = fwd_c * (1 + ref);
    st->bwd = sum.bwd_gemm + sum.bwd_attn + sum.bwd_mem;
    st->recompute = rc.fwd_gemm + rc.fwd_attn + rc.fwd_mem;
    st->gemm = sum.fwd_gemm * (1 + ref) + sum.bwd_gemm + rc.fwd_gemm;
    st->attn = sum.fwd_attn * (1 + ref) + sum.bwd_attn + rc.fwd_attn;
    st->mem = sum.fwd_mem * (1 + ref) + sum.bwd_mem + rc.fwd_mem;
    st->tp = (sum.tp_fwd * (1 + ref) + sum.tp_bwd + rc.tp_fwd) *
             (1 - (x->j->tp_comm_overlap ? cal->tp_overlap : 0));
    st->cp = sum.cp_fwd * (1 + ref) + sum.cp_bwd + rc.cp_fwd;
    st->ep = (sum.ep_fwd * (1 + ref) + sum.ep_bwd + rc.ep_fwd) * (1 - cal->ep_overlap);
    if (l->pp > 1) {
        /* activations forward and gradients backward across each of the v chunk boundaries;
           with TP the scatter-gather optimisation sends 1/t ([NAR21] §4.1) */
        double bytes = x->tokens * m->hidden * x->h.act_bytes / l->tp;
        uint64_t stride = (uint64_t)l->tp * l->cp * l->dp;
        bool inter = stride >= x->c->gpus_per_node;
        double bw = inter ? cal->eff_inter * x->c->gpu.inter_bw : tp_comm_intra_bw(x->c, cal, 2);
        double one = tp_comm_latency(cal, 1, inter) + bytes / bw;
        st->pp = 2 * l->vpp * one * (1 + ref / 2) * (1 - cal->pp_overlap);
    }
    st->overhead = cal->layer_overhead_s * n * (1 + ref / 2) +
                   sum.host_fwd * (1 + ref) + sum.host_bwd + rc.host_fwd;
    st->total = st->fwd + st->bwd + st->recompute + st->tp + st->cp + st->ep + st->pp +
                st->overhead;
}

/* Optimizer-state bytes touched per parameter by one step: read the gradient (4), read and
   write the fp32 master (8) and the states, write the 16-bit weight (2); plus 4 for the
   global-norm clipping read ([derived] §5.3). */
static double opt_bytes(enum tp_optimizer o)
{
    switch (o) {
    case TP_OPT_ADAMW: return 4 + 8 + 16 + 2 + 4;
    case TP_OPT_ADAMW_8BIT: return 4 + 8 + 4 + 2 + 4;
    case TP_OPT_ADAMW_4BIT: return 4 + 8 + 2 + 2 + 4;
    case TP_OPT_ADAFACTOR: return 4 + 8 + 1 + 2 + 4;
    case TP_OPT_SGD: return 4 + 8 + 2 + 4;
    case TP_OPT_SGD_MOMENTUM: return 4 + 8 + 8 + 2 + 4;
    }
    return 34;
}

/* DP / ZeRO communication of one stage: `per_step` after the last backward (reduction) or
   before the first forward (parameter gather), `per_mb_fwd`/`per_mb_bwd` every micro-batch. */
struct dp_comm {
    double step_reduce, step_gather, mb_fwd, mb_bwd;
};

static void dp_group_comm(const struct ctx *x, double params, double trainable, uint32_t n,
                          uint64_t stride, struct dp_comm *d)
{
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    if (n <= 1 || params <= 0)
        return;
    uint32_t gpn = x->c->gpus_per_node;
    double bp = x->h.act_bytes; /* 16-bit parameters */
    /* gradient reduction dtype: Megatron reduces fp32 main grads, torchtitan's FSDP2 default
       reduce dtype is fp32; DeepSpeed and FSDP reduce in the 16-bit type */
    double bg = tp_stack_get(j->framework)->fp32_grad_reduce && !j->grad_16bit ? 4 : bp;
    uint32_t shard = l->shard_group && l->shard_group < n ? l->shard_group : n;
    uint32_t g = tp_comm_per_node(shard, stride, gpn);
    const struct tp_cluster *c = x->c;
    const struct tp_calib *cal = x->cal;
    double grads = trainable * bg;
    if (l->zero == 0) {
        d->step_reduce += tp_time_allreduce(c, cal, grads, n, tp_comm_per_node(n, stride, gpn));
        return;
    }
    double rs = tp_time_allgather(c, cal, grads, shard, g); /* reduce-scatter: same volume */
    double ag = tp_time_allgather(c, cal, params * bp, shard, g);
    if (shard < n) {
        /* HSDP: shards are replicated across n/shard groups: all-reduce the reduced shard */
        uint32_t reps = n / shard;
        d->step_reduce += tp_time_allreduce(c, cal, grads / shard, reps,
                                            tp_comm_per_node(reps, stride * shard, gpn));
    }
    bool ds = tp_stack_get(j->framework)->ds_zero;
    if (l->zero == 1) {
        d->step_reduce += rs;
        d->step_gather += trainable < params ? ag * trainable / params : ag;
    } else if (l->zero == 2 && ds) {
        /* DeepSpeed ZeRO-2 keeps no unsharded gradient: reduce-scatter every micro-batch */
        d->mb_bwd += rs;
        d->step_gather += ag * trainable / params;
    } else if (l->zero == 2) {
        /* FSDP SHARD_GRAD_OP: gather once per micro-batch's forward, reduce-scatter in its
           backward */
        d->mb_fwd += ag;
        d->mb_bwd += rs;
    } else {
        /* ZeRO-3 / FULL_SHARD: gather for forward and again for backward, reduce-scatter */
        d->mb_fwd += ag;
        d->mb_bwd += ag + rs;
    }
}

/* DeepSpeed ZeRO-3 gathers a module's parameters in a pre-forward / pre-backward hook and
   prefetches along the module order it traced on the first step.  Experts run in the loop only
   when tokens reach them, so the trace changes every step, prefetch is abandoned ("Invalidate
   trace cache") and every expert's tensors are fetched on demand, each an exposed hook, gather
   and wait (z3_fetch_s), in the forward, the backward and a recompute.  A leaf MoE block
   (set_z3_leaf_modules) fetches them with the block, behind prefetch. */
static double z3_expert_fetch(const struct ctx *x, const struct stage_time *st)
{
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    bool ds = tp_stack_get(j->framework)->ds_zero;
    if (l->zero != 3 || !ds || j->z3_leaf || x->moe_impl != TP_MOE_EAGER || st->moe_blocks == 0)
        return 0;
    double tensors = (x->m->mlp == TP_MLP_GLU ? 3.0 : 2.0) * x->m->n_experts / l->ep;
    double passes = 2 + (l->recompute == TP_RECOMPUTE_FULL);
    return st->moe_blocks * tensors * passes * x->cal->z3_fetch_s;
}

enum tp_status tp_time_step(const struct tp_model *m, const struct tp_cluster *c,
                            const struct tp_job *j, const struct tp_layout *l,
                            const struct tp_calib *cal, struct tp_time *out)
{
    memset(out, 0, sizeof *out);
    if (!cal || tp_run_check(m, c, j, l, cal, NULL) != TP_OK) {
        out->step_s = out->tokens_per_s = out->tokens_per_s_per_gpu = out->mfu = NAN;
        return TP_EINVAL;
    }
    struct ctx x;
    memset(&x, 0, sizeof x);
    x.m = m;
    x.c = c;
    x.j = j;
    x.l = l;
    x.cal = cal;
    resolve_hw(c, j, cal, &x.h);
    double pairs = j->task == TP_TASK_DPO ? 2 : 1;
    x.seqs = (double)l->mbs * pairs;
    x.seq_local = (double)j->seq / l->cp;
    x.tokens = x.seqs * x.seq_local;
    x.frozen = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    x.eager = tp_stack_get(j->framework)->eager_modules && !j->fused_loss;
    x.moe_impl = tp_job_moe_impl(m, j, l);
    uint32_t gpn = c->gpus_per_node;
    x.g_tp = tp_comm_per_node(l->tp, 1, gpn);
    x.g_cp = tp_comm_per_node(l->cp, l->tp, gpn);
    x.g_ep = tp_comm_per_node(l->ep, l->etp, gpn);

    struct cost kinds[KINDS];
    bool seen[KINDS] = {false};
    for (uint32_t layer = 0; layer < m->n_layers; layer++) {
        unsigned k = kind_of(m, layer);
        if (!seen[k]) {
            block_cost(&x, layer, &kinds[k]);
            seen[k] = true;
        }
    }

    /* the slowest stage sets the pipeline's pace */
    struct stage_time worst, st;
    double sum_total = 0;
    memset(&worst, 0, sizeof worst);
    uint32_t worst_stage = 0;
    double worst_dp = 0, worst_s = 0;
    struct dp_comm worst_comm = {0, 0, 0, 0};
    double worst_opt = 0, worst_offload = 0;
    double gas = l->gas;
    for (uint32_t s = 0; s < l->pp; s++) {
        stage_time(&x, kinds, s, &st);
        sum_total += st.total;
        struct tp_shard_params sp;
        uint32_t first, count;
        tp_stage_params(m, j, l, s, &sp, &first, &count);
        bool frozen = x.frozen;
        double dense_train = frozen ? sp.lora : sp.dense;
        double expert_train = frozen ? 0 : sp.expert;
        struct dp_comm d = {0, 0, 0, 0};
        uint32_t n_dense = l->dp * l->cp;
        uint32_t n_expert = (uint32_t)((uint64_t)l->tp * l->cp * l->dp / ((uint64_t)l->ep * l->etp));
        dp_group_comm(&x, sp.dense, dense_train, n_dense, l->tp, &d);
        if (sp.expert > 0)
            dp_group_comm(&x, sp.expert, expert_train, n_expert, (uint64_t)l->etp * l->ep, &d);
        /* exposure: per-micro-batch gathers behind that micro-batch's compute (prefetch); the
           step's reduction behind the last backward, its gather behind the first forward */
        double fwd_w = st.fwd, bwd_w = st.bwd + st.recompute;
        double e_fwd = d.mb_fwd - cal->fsdp_overlap * fwd_w;
        double e_bwd = d.mb_bwd - cal->fsdp_overlap * bwd_w;
        double exposed = gas * ((e_fwd > 0 ? e_fwd : 0) + (e_bwd > 0 ? e_bwd : 0));
        exposed += gas * z3_expert_fetch(&x, &st);
        double e_red = d.step_reduce - cal->dp_overlap * bwd_w;
        double e_gat = d.step_gather - cal->dp_overlap * fwd_w;
        exposed += (e_red > 0 ? e_red : 0) + (e_gat > 0 ? e_gat : 0);
        /* optimizer over this GPU's shard of the trainable parameters */
        double n_opt_d = l->zero >= 1 ? (l->shard_group ? l->shard_group : n_dense) : 1;
        double n_opt_e = l->zero >= 1 ? n_expert : 1;
        double local = dense_train / n_opt_d + expert_train / (n_opt_e ? n_opt_e : 1);
        double opt, offload = 0;
        if (l->offload != TP_OFFLOAD_NONE) {
            /* CPU Adam over host memory; gradients down and 16-bit weights up over PCIe */
            opt = local * (opt_bytes(j->optimizer) - 2) / cal->host_adam_bw;
            offload = local * (2 + x.h.act_bytes) / (c->gpu.host_bw * cal->eff_pcie);
            if (l->offload == TP_OFFLOAD_PARAMS) /* parameters stream in per micro-batch */
                offload += gas * 2 * (sp.dense + sp.expert) / n_opt_d * x.h.act_bytes /
                           (c->gpu.host_bw * cal->eff_pcie);
        } else {
            opt = local * opt_bytes(j->optimizer) / (c->gpu.hbm_bw * cal->opt_eff);
        }
        double stage_s = gas * st.total + exposed + opt + offload;
        if (s == 0 || stage_s > worst_s) {
            worst_s = stage_s;
            worst = st;
            worst_stage = s;
            worst_dp = exposed;
            worst_comm = d;
            worst_opt = opt;
            worst_offload = offload;
        }
    }
    double mean = sum_total / l->pp;
    double v = l->schedule == TP_SCHED_INTERLEAVED || l->vpp > 1 ? l->vpp : 1;
    double bubble = l->pp > 1 ? (l->pp - 1) / v * mean : 0;

    out->slowest_stage = worst_stage;
    out->fwd_s = gas * worst.fwd;
    out->bwd_s = gas * worst.bwd;
    out->recompute_s = gas * worst.recompute;
    out->gemm_s = gas * worst.gemm;
    out->attn_s = gas * worst.attn;
    out->elementwise_s = gas * worst.mem;
    out->overhead_s = gas * worst.overhead + cal->step_overhead_s;
    out->tp_comm_s = gas * worst.tp;
    out->cp_comm_s = gas * worst.cp;
    out->ep_comm_s = gas * worst.ep;
    out->pp_comm_s = gas * worst.pp;
    out->dp_comm_s = worst_dp > 0 ? worst_dp : 0;
    out->dp_comm_total_s = worst_comm.step_reduce + worst_comm.step_gather +
                           gas * (worst_comm.mb_fwd + worst_comm.mb_bwd);
    out->bubble_s = bubble;
    out->optimizer_s = worst_opt;
    out->offload_s = worst_offload;
    out->step_s = gas * worst.total + bubble + out->dp_comm_s + worst_opt + worst_offload +
                  cal->step_overhead_s;

    /* throughput and FLOP rates */
    /* tokens as the job counts them: trainable_frac of the slots (Axolotl's logged rate);
       the FLOP rates below use every slot processed */
    double samples = (double)l->mbs * l->gas * l->dp, counted = tp_job_trainable_frac(j);
    double n_gpus = (double)l->dp * l->tp * l->pp * l->cp;
    out->samples_per_step = samples;
    out->tokens_per_step = samples * (double)j->seq * pairs * counted;
    out->tokens_per_s = out->tokens_per_step / out->step_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / n_gpus;
    out->slots_per_s_per_gpu = out->tokens_per_s_per_gpu / counted;
    out->samples_per_s = samples / out->step_s;

    struct tp_flops f;
    if (tp_flops_model(m, j->seq, l->recompute, &f) != TP_OK)
        return TP_EINVAL;
    double model = f.model;
    if (x.frozen) /* no weight-gradient GEMMs for the frozen base */
        model = f.fwd + f.fwd_dense / 2 + 2 * f.fwd_attn;
    if (j->task == TP_TASK_DPO)
        model += f.fwd; /* the reference model's forward */
    double rc = f.recompute;
    if (l->recompute == TP_RECOMPUTE_FULL && l->recompute_layers > 0 && l->pp > 0) {
        /* each stage recomputes min(N, its blocks): the share of all blocks rebuilt */
        uint64_t rebuilt = 0;
        for (uint32_t s = 0; s < l->pp; s++) {
            uint32_t b = tp_stage_blocks(m, l, s);
            rebuilt += b < l->recompute_layers ? b : l->recompute_layers;
        }
        rc *= (double)rebuilt / m->n_layers;
    }
    out->model_flops_per_token = model;
    out->hw_flops_per_token = model + rc;
    out->peak_flops = tp_job_peak_flops(c, j); /* the rate the GEMMs were priced at */
    double tps = out->slots_per_s_per_gpu;
    out->model_tflops_per_gpu = model * tps / 1e12;
    out->hw_tflops_per_gpu = out->hw_flops_per_token * tps / 1e12;
    out->mfu = tp_mfu(model, tps, out->peak_flops);
    out->hfu = tp_mfu(out->hw_flops_per_token, tps, out->peak_flops);
    out->megatron_tflops_per_gpu = f.model * tps / 1e12;
    double L = m->n_layers, h = m->hidden, s = (double)j->seq, V = m->vocab;
    double ckpt = l->recompute == TP_RECOMPUTE_FULL ? 4 : 3;
    double ds = 24 * ckpt * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
    out->deepspeed_tflops_per_gpu = ds * tps / 1e12;
    /* physically possible: a finite positive time and no more FLOPs than the peak the GEMMs
       run at (fp8: the fp8 peak; MFU itself stays against the 16-bit one) */
    double ceiling = x.h.fp8 ? c->gpu.peak_flops[x.h.gemm_dtype] : out->peak_flops;
    bool sane = isfinite(out->step_s) && out->step_s > 0 && isfinite(out->mfu) &&
                out->hw_flops_per_token * tps <= ceiling;
    return sane ? TP_OK : TP_EINVAL;
}
