/*
 * time_block.c - the cost of one block, and of the embedding and the head, for one micro-batch
 * on one rank (docs/physics.md §4): every GEMM at its real shape with tile and wave
 * quantization ([NV-DL]) or its HBM traffic when that takes longer, the attention core
 * (FlashAttention or eager), the element-wise bytes, the TP / CP / EP collectives of the block.
 * hw_rates.c resolves the rates they run at; time.c composes them into a step.
 */
#include "time_internal.h"

#include <math.h>
#include <string.h>

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

/* The operand width of a GEMM in bytes: 16-bit, or the 8/4-bit formats' narrower elements. */
static double operand_bytes(const struct hw *h)
{
    if (!h->fp8)
        return 2;
    return h->gemm_dtype == TP_FP4 ? 0.5 : 1;
}

/* Time of `count` independent GEMMs (a grouped GEMM) of M x N x K at `align` of the rate for
   its operands' alignment (tp_gemm_align_eff), its M x N output moving `out_b` bytes per
   element (2: written in 16 bits; hw.wgrad_out_b: a weight gradient as the stack writes it).
   The shape's figures (FLOPs, quantization efficiency, bytes) do not depend on the
   calibration: a plan records them once and replays them (h->tape), the rates below are the
   calibration's. */
static double gemm(const struct hw *h, double M, double N, double K, double count, double align,
                   double out_b)
{
    struct tape *tp = h->tape;
    double flops, eta, bytes;
    if (tp && tp->play) {
        const struct tp_gemm_rec *r = &tp->play[tp->pos++];
        flops = r->flops;
        eta = r->eta;
        bytes = r->bytes;
        if (eta == 0) /* an empty GEMM */
            return 0;
    } else {
        bool empty = M <= 0 || N <= 0 || K <= 0 || count <= 0;
        flops = eta = bytes = 0;
        if (!empty) {
            double tm = ceil_div(M, h->tile_m), tn = ceil_div(N, h->tile_n);
            double eta_tile = (M * N) / (tm * h->tile_m * tn * h->tile_n);
            eta = eta_tile * wave_eff(tm * tn * count, h->sms) * align;
            flops = 2 * M * N * K * count;
            bytes = ((M * K + K * N) * 2 + M * N * out_b) * count;
        }
        if (tp && tp->rec) {
            if (tp->pos < tp->cap)
                tp->rec[tp->pos] = (struct tp_gemm_rec){flops, eta, bytes};
            else
                tp->overflow = true;
            tp->pos++;
        }
        if (empty)
            return 0;
    }
    double t_compute = flops / (h->gemm_flops * eta);
    double t_memory = bytes / h->mem_bw;
    return t_compute > t_memory ? t_compute : t_memory;
}

/* A linear layer y = x W^T, W of N x K, applied to M tokens (count copies). */
struct linear {
    double N, K, count, M;
    bool frozen; /* no weight gradient (LoRA/QLoRA base) */
    bool nf4;    /* QLoRA: dequantized from NF4 before each use */
    bool lora;   /* carries a LoRA adapter */
    double ew;   /* the share of its adapter's element-wise bytes the stack pays (elementwise()) */
};

/* tp_gemm_align_eff of a GEMM width on this hardware; 1 when a tape plays back, whose GEMMs
   carry their recorded efficiency (the fit evaluates rows tens of thousands of times). */
static double align_of(const struct hw *h, double width)
{
    if (h->tape && h->tape->play)
        return 1;
    return tp_gemm_align_eff(width, operand_bytes(h));
}

/* A LoRA adapter beside a linear: y += (alpha / r) * B (A x), A of r x K, B of N x r, in 16 bits
   (NeMo's and Megatron-Bridge's ParallelLinearAdapter run megatron.core's Column/RowParallelLinear
   outside Transformer Engine; PEFT's lora_A / lora_B are nn.Linear) [LORA-OPS].

   GEMMs.  Each has an r-wide operand, so a 128 x 128 output tile would be r/128 useful and the
   grid a few waves short of the SMs; the libraries run such shapes with narrow tiles (cuBLASLt's
   tile table goes down to 8 x 16 and 64 x 8) or split the reduction over the SMs (split-K)
   [CUBLASLT-TILE], so they stream their operands: priced at their HBM bytes, or their FLOPs at
   the 16-bit rate when that takes longer.  Forward: A x reads the input (M x K) and writes M x r;
   B h writes the M x N output.  Backward: dB and dh read the output gradient (M x N) once each,
   dA reads the input, dx_a writes an M x K gradient.

   Element-wise.  The adapter scales its output (`out * (alpha / dim)`, read and write 2 B per
   output element) and the wrapper adds it to the base output (read 2 x 2, write 2); backward the
   scale again (4 B per output element) and the two gradients of the shared input summed (read
   2 x 2, write 2 per input element).  Separate kernels in the stacks that run them [LORA-OPS],
   priced as the block's other element-wise bytes are (`ew`: all of them run eagerly, the
   calibration's unfused share under a fused stack, tp_block_cost); adapter dropout (NeMo's
   MLPerf recipes keep 0.1, PEFT's and Megatron-Bridge's default is 0) is not priced. */
static void lora_adapter(const struct hw *h, const struct linear *x, double r, struct cost *c)
{
    double M = x->M, K = x->K, N = x->N, n = x->count;
    double flops = 2 * M * r * (K + N) * n;
    double fwd_b = 2 * n * (M * K + r * K + 2 * M * r + r * N + M * N);
    double bwd_b = 2 * n * (2 * M * N + 2 * M * K + 2 * r * N + 2 * r * K + 4 * M * r);
    double tf = fwd_b / h->mem_bw, tb = bwd_b / h->mem_bw;
    double cf = flops / h->gemm16_flops, cb = 2 * cf;
    c->fwd_gemm += tf > cf ? tf : cf;
    c->bwd_gemm += tb > cb ? tb : cb;
    c->fwd_mem += x->ew * 10 * M * N * n / h->mem_bw;
    c->bwd_mem += x->ew * (4 * M * N + 6 * M * K) * n / h->mem_bw;
}

/* Bytes per element of a cast that writes the row-wise copy alone: read 2 B, write FP8 1 B
   (MXFP8: and an E8M0 scale per 32 values), FP4 0.5 B and a scale per 16 (NVFP4, E4M3) or per
   32 (MXFP4, E8M0), from the formats' block sizes [derived]. */
static double cast_rowwise(const struct hw *h, const struct tp_job *j)
{
    if (h->gemm_dtype == TP_FP4)
        return 2 + 0.5 + (j->precision == TP_PREC_MXFP4 ? 1.0 / 32 : 1.0 / 16);
    return 2 + 1 + (j->precision == TP_PREC_MXFP8 ? 1.0 / 32 : 0);
}

static void add_linear(const struct hw *h, const struct tp_job *j, const struct linear *x,
                       struct cost *c)
{
    /* the weight's two widths decide the alignment of all three GEMMs (the token count is a
       multiple of the sequence length) */
    double an = align_of(h, x->N), ak = align_of(h, x->K);
    double al = an < ak ? an : ak;
    double fwd = gemm(h, x->M, x->N, x->K, x->count, al, 2);
    c->fwd_gemm += h->rowwise ? fwd / h->rowwise_gemm : fwd;
    c->bwd_gemm += gemm(h, x->M, x->K, x->N, x->count, al, 2); /* data gradient */
    if (!x->frozen) /* weight gradient */
        c->bwd_gemm += gemm(h, x->N, x->K, x->M, x->count, al, h->wgrad_out_b);
    if (h->rowwise) {
        /* torchao row-wise (tp_fp8_recipe): a row cast is one fused pass (read 2 B, write 1);
           a column cast a reduction over the other axis first (read 2 B more).  Forward: the
           input and the weight by rows.  Backward: the output gradient by rows (data
           gradient) and by columns (weight gradient), the weight by columns, the input by
           columns; each backward GEMM's 16-bit output rescaled in place (read and write 2 B) */
        double mk = x->M * x->K * x->count, mn = x->M * x->N * x->count;
        double nk = x->N * x->K * x->count;
        c->fwd_mem += 3 * (mk + nk) / h->mem_bw;
        c->bwd_mem += (3 * mn + 5 * nk + 4 * mk) / h->mem_bw;
        if (!x->frozen)
            c->bwd_mem += (5 * mn + 5 * mk + 4 * nk) / h->mem_bw;
    } else if (h->fp8) {
        /* Transformer Engine casts of the input (fwd) and of the output gradient (bwd).  A frozen
           weight's input is quantized row-wise only: the column-wise copy feeds the weight
           gradient alone (TE 2.x [TE-FROZEN]: `backward_needs_input = is_grad_enabled and
           weight.requires_grad`, the input quantizer's column-wise usage off without it), so
           the recipes that write both copies in one pass (MXFP8, NVFP4) write one */
        double cf = h->cast_fwd, row = cast_rowwise(h, j);
        if (x->frozen && cf > row)
            cf = row;
        c->fwd_mem += cf * x->M * x->K * x->count / h->mem_bw;
        c->bwd_mem += h->cast_bwd * x->M * x->N * x->count / h->mem_bw;
    }
    if (x->nf4) {
        /* bitsandbytes dequantizes the 4-bit weight to 16 bits for every use (Linear4bit's
           matmul_4bit: dequantize_4bit, then a 16-bit matmul; its backward dequantizes again
           for the data gradient, a recompute once more), at its kernel's measured rate
           (tp_nf4_dequant_rel): read 0.5 B, write 2 B per weight */
        double t = 2.5 * x->N * x->K * x->count / h->nf4_bw;
        c->fwd_mem += t;
        c->bwd_mem += t;
    }
    if (x->lora && j->lora_rank > 0)
        lora_adapter(h, x, j->lora_rank, c);
}

/* Element-wise bytes per token of one block's forward that every TP rank repeats (norms,
   residuals: replicated without SP) and that TP splits (the rest). */
static void elementwise(const struct ctx *x, uint32_t layer, double *replicated, double *split,
                        double *expert)
{
    const struct tp_model *m = x->m;
    bool moe = m->layer_moe[layer] != 0;
    enum tp_mixer mixer = (enum tp_mixer)m->layer_mixer[layer];
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
    if (m->pos == TP_POS_ROPE && mixer == TP_MIXER_ATTN)
        *split += f_rope * 2 * (q + kv);
    if (m->qk_norm && mixer == TP_MIXER_ATTN)
        *split += f_norm * 2 * (q + kv);
    *split += tp_mixer_elementwise(m, mixer); /* conv and gated norm of a Mamba-2 / DeltaNet */
    double glu = m->mlp == TP_MLP_GLU ? 3 * f_glu : 2; /* SwiGLU reads 2F writes F; GELU F, F */
    *expert = 0;
    if (m->layer_no_ffn[layer]) {
        /* an FFN-free block */
    } else if (!moe) {
        *split += glu * m->ffn;
    } else {
        double shared = m->shared_ffn;
        *split += glu * shared;
        /* routed: activation on k expert rows per token; permute and unpermute read and write
           the hidden state of every routed copy */
        *expert = glu * (double)m->moe_ffn * m->top_k + 4 * H * m->top_k;
    }
}

/* How much more the backward of an FP8 sliding-window block costs than its window: cuDNN's FP8
   attention backward visits every causal tile and masks the window, its 16-bit backward and both
   forwards keep to the window.  GPT-OSS's shape (batch 2, 128 heads, head dim 64, window 128,
   cuDNN 9.22) on GB300 [CUDNN-FE-SDPA] results/gpt_oss/gb300: 16-bit backward 0.227, 0.442,
   0.862, 1.712, 3.450 ms at 2k-32k tokens (linear), FP8 0.467, 1.480, 5.189, 19.354, 74.763 ms
   and MXFP8 0.581-96.913 ms (quadratic), forwards linear in both; GB200 the same.  So the FP8
   backward of a window block is priced as a full causal block's (the ratio of the keys per
   query), at the FP8 kernel's rate. */
static double fp8_window_bwd(const struct ctx *x, uint32_t layer, double kpq)
{
    const struct tp_model *m = x->m;
    if (!x->h.fp8_attn || m->layer_attn[layer] != TP_LAYER_SLIDING || kpq <= 0)
        return 1;
    double full = tp_attn_span(x->j) / 2; /* a causal query's mean keys */
    double bk = x->cal->attn_block_keys;
    return full > kpq ? (full + bk) / (kpq + bk) : 1;
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
           then the element-wise passes over the s x s 16-bit scores.  A fused stack runs
           Megatron's scaled-masked softmax (fused_kernels/scaled_upper_triang_masked_softmax:
           read the scores, write the probabilities: 4 B; backward reads the gradient and the
           probabilities and writes one: 6 B).  Hugging Face's eager_attention_forward runs
           them op by op: scale (4 B), add the mask (4), softmax in fp32 (2 + 4), cast back
           (4 + 2): 20 B; backward the same ops in reverse: 22 B.  Dropout on the
           probabilities (torch's fused dropout) reads them and writes the output and a 1-byte
           mask forward, reads the gradient and the mask and writes one backward: 5 B each */
        double dqk = width / heads / 2, count = x->seqs * heads;
        double sl = x->seq_local, al = align_of(&x->h, dqk);
        c->fwd_attn +=
            gemm(&x->h, sl, s, dqk, count, al, 2) + gemm(&x->h, sl, dqk, s, count, al, 2);
        c->bwd_attn +=
            gemm(&x->h, sl, dqk, s, count, al, 2) + gemm(&x->h, s, dqk, sl, count, al, 2) +
            gemm(&x->h, sl, s, dqk, count, al, 2) + gemm(&x->h, s, dqk, sl, count, al, 2);
        double scores = count * sl * s, drop = x->j->dropout ? 5 : 0;
        c->fwd_mem += ((x->eager ? 20 : 4) + drop) * scores / x->h.mem_bw;
        c->bwd_mem += ((x->eager ? 22 : 6) + drop) * scores / x->h.mem_bw;
        return;
    }
    /* FlashAttention: causal pairs only; thread blocks of 128 queries per head */
    double kpq = x->kpq ? x->kpq[tp_kind_of(m, layer)]
                        : tp_keys_per_query(m, layer, tp_attn_span(x->j), TP_ATTN_CAUSAL);
    double flops = 2 * width * kpq * x->tokens;
    double ctas = x->seqs * heads * ceil_div(x->seq_local, 128);
    /* each 128-query block also pays attn_block_keys keys of work it does not count: the
       diagonal tile computed whole under the causal mask, and the block's prologue and softmax
       epilogue (FlashAttention-2 Alg. 1 / FlashAttention-3 tiling): short sequences run below
       the kernel's long-sequence rate (FA3 paper Fig. 5: 0.5k causal at about half the 16k
       rate, the prior's 256 keys).  The calibration fits it: training runs lose more per
       block than the isolated kernel does.  Blackwell Ultra's faster exponentials (sfu_fwd,
       sfu_bwd, measured at long spans) speed the counted keys, not that per-block part:
       cuDNN's window-128 kernel gains only 1.04 forward on GB300 (tp_attn_sfu_rel) */
    double bk = x->cal->attn_block_keys, rate = x->h.attn_flops * wave_eff(ctas, x->h.sms);
    double t = flops * (kpq / x->h.sfu_fwd + bk) / kpq / rate;
    double tb = flops * (kpq / x->h.sfu_bwd + bk) / kpq / rate;
    c->fwd_attn += t;
    c->bwd_attn += tb * x->h.attn_bwd * fp8_window_bwd(x, layer, kpq);
    if (x->j->attn_impl == TP_ATTN_FLASH1) {
        /* FlashAttention 1.x runs where FlashAttention-2 would and differs from it in the kernel
           only: the step pays the difference of the two kernels' times as benchmarked alone
           (tp_flash1_kernel), not FA1's ratio of the calibrated FA2 time, whose fitted rate
           (attn_eff, attn_block_keys) also carries what is not the kernel.  Backward FLOPs are
           2.5x the forward's (five matmuls against two, the FA2 paper §4.1) */
        double ratio, share;
        tp_flash1_kernel(width / heads / 2, x->h.fa_async, &ratio, &share);
        double extra = flops / (x->h.fa_peak * share) * (1 / ratio - 1);
        c->fwd_attn += extra;
        c->bwd_attn += 2.5 * extra;
    }
    if (x->h.fp8_attn) { /* Q, K, V quantized before the kernel, dO before its backward */
        double cf, cb;
        tp_attn_fp8_cast_bytes(m, l->tp, &cf, &cb);
        c->fwd_mem += cf * x->tokens / x->h.mem_bw;
        c->bwd_mem += cb * x->tokens / x->h.mem_bw;
    }
}

/* Collective time of one TP all-reduce (or SP all-gather + reduce-scatter) of the block output. */
static double tp_collective(const struct ctx *x)
{
    const struct tp_layout *l = x->l;
    double bytes = x->tokens * x->m->hidden * x->h.act_bytes;
    /* FP8 TP (torchao Float8ColwiseParallel / Float8RowwiseParallel) casts before each
       all-gather: the input's forward and the output gradient's backward gather 1-byte
       elements; the reduce-scatters stay 16-bit */
    if (x->h.fp8_tp_gather)
        bytes *= 0.75;
    return tp_time_allreduce(x->c, x->cal, bytes, l->tp, x->g_tp);
}

/* SMs an NCCL collective holds while it runs: its CTAs, one per channel, do not share an SM
   with compute kernels (NVIDIA/nccl#689: "NCCL CTAs won't share an SM with compute kernels";
   16 SMs on a DGX); NCCL opens 24 ring channels among the 8 GPUs of an HGX A100 over NVSwitch
   (NVIDIA/nccl-tests#100, NCCL INFO "Channel 23/24") */
#define TP_NCCL_SMS 24.0

/* Whether the job runs each column-parallel linear's backward TP collective beside that
   linear's weight-gradient GEMM: Megatron-LM since 2021-09, Megatron-Core and Transformer
   Engine (the stack's tp_async_wgrad: LinearWithGradAccumulationAndAsyncCommunication.backward
   in megatron/core/tensor_parallel/layers.py issues the all-reduce, or with sequence
   parallelism the reduce-scatter, of grad_input with async_op=True, then the wgrad GEMM, then
   waits; TE's _Linear / _LayerNormLinear / _LayerNormMLP backward the same), unless the job
   turns it off (--no-async-tensor-model-parallel-allreduce; Megatron-LM before 2021-09).  Not
   with --tp-comm-overlap, whose userbuffers overlap is priced as a share of all the TP time
   (time.c tp_overlap). */
static bool tp_async_wgrad(const struct ctx *x)
{
    return x->l->tp > 1 && !x->j->tp_comm_overlap && !x->j->no_async_tp_allreduce &&
           tp_stack_get(x->j->framework)->tp_async_wgrad;
}

/* Seconds of one column-parallel linear's backward collective hidden behind its weight-gradient
   GEMM of `wgrad` seconds.  The part that overlaps is the input gradient's all-reduce (with
   sequence parallelism its reduce-scatter: half of the all-gather + reduce-scatter pair
   tp_collective prices; the row-parallel side's all-gather of the output gradient stays
   exposed).  While that collective of C seconds runs, NCCL holds s = TP_NCCL_SMS / SMs of
   the GPU and the GEMM advances at 1 - s; the pair ends at max(C, wgrad + s C), so the
   collective costs max(C - wgrad, s C) beyond the GEMM and hides min(wgrad, (1 - s) C). */
static double tp_async_hidden(const struct ctx *x, double coll, double wgrad)
{
    double share = x->l->sp ? coll / 2 : coll;
    double s = x->h.sms > TP_NCCL_SMS ? TP_NCCL_SMS / x->h.sms : 1;
    double hide = (1 - s) * share;
    return wgrad < hide ? wgrad : hide;
}

/* The share of the element-wise bytes a stack pays: all of them eagerly, the calibration's
   unfused share (1 - fused_elementwise) under the fused stacks (tp_block_cost). */
static double ew_share(const struct ctx *x)
{
    return x->eager ? 1 : 1 - x->cal->fused_elementwise;
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
    double ew = ew_share(x);
    struct linear a = {up * m->moe_ffn / etp, H, 1, rows, x->frozen, j->task == TP_TASK_QLORA,
                       lora && (lt & (TP_LORA_GATE | TP_LORA_UP)) != 0, ew};
    struct linear b = {H, m->moe_ffn / etp, 1, rows, x->frozen, j->task == TP_TASK_QLORA,
                       lora && (lt & TP_LORA_DOWN) != 0, ew};
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
           T x H for the zeros and a read-read-write for the sum; Ring/Ling 2.0's remote code
           does it over T x k rows with boolean masks (moe_hf.c) */
        c->bwd_mem += n_local * tp_hf_loop_bwd_bytes(m, x->tokens, x->h.act_bytes) / x->h.mem_bw;
    }
    double ops = eager ? cal->moe_eager_ops : cal->moe_eager_ops / 2;
    c->host_fwd += n_local * (ops * cal->eager_op_s + (eager ? cal->host_sync_s : 0));
    c->host_bwd += n_local * (2 * ops * cal->eager_op_s +
                              (eager ? tp_hf_loop_bwd_syncs(m) * cal->host_sync_s : 0));
    /* DeepSpeed ZeRO-2/3 runs a Python gradient hook on each expert's tensors (moe_hf.c
       [DS-HOOK]): in the loop's host-bound backward it adds to the host time whole; the
       block's other tensors are a handful, not priced */
    if (eager)
        c->host_bwd += n_local * (m->mlp == TP_MLP_GLU ? 3 : 2) * tp_ds_grad_hook_s(x);
}

/* One linear layer of a block: an N x K weight over `rows` tokens, `count` times; `bits` the
   LoRA targets it belongs to (adapted when the job's targets include one). */
static void lin(const struct ctx *x, struct cost *c, double n, double k, double count,
                double rows, uint32_t bits)
{
    const struct tp_job *j = x->j;
    bool lora = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    struct linear li = {n, k, count, rows, x->frozen, j->task == TP_TASK_QLORA,
                        lora && (bits & j->lora_targets) != 0, ew_share(x)};
    add_linear(&x->h, j, &li, c);
}

/* The weight-gradient GEMM's part of a linear's backward GEMM time `bwd`: half (dW = X^T dY
   and dX = dY W have the same FLOPs, as time.c's wgrad takes it); none for a frozen weight. */
static double wgrad_share(const struct ctx *x, double bwd)
{
    return x->frozen ? 0 : bwd / 2;
}

/* A Mamba-2 or gated-DeltaNet mixer (ssm.c): its projections as GEMMs (in_proj
   column-parallel, out_proj row-parallel, as Megatron-Core's MambaMixer and GatedDeltaNet split
   them), and the chunked scan as a kernel of its own at TP_SCAN_REL_EFF of the attention
   kernel's rate (ssm.c), or the bytes it moves over HBM when that takes longer. */
static void mixer_cost(const struct ctx *x, enum tp_mixer k, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_job *j = x->j;
    double tp = x->l->tp;
    struct tp_mixer_gemm g[TP_MIXER_GEMMS];
    size_t n = tp_mixer_gemms(m, k, g);
    for (size_t i = 0; i < n; i++) {
        double before = c->bwd_gemm;
        lin(x, c, g[i].column ? g[i].N / tp : g[i].N, g[i].column ? g[i].K : g[i].K / tp, 1,
            x->tokens, g[i].column ? TP_LORA_Q : TP_LORA_O);
        if (g[i].column)
            c->col_wgrad += wgrad_share(x, c->bwd_gemm - before);
    }
    double flops = tp_mixer_scan_flops(m, k, (double)j->seq, TP_ATTN_CAUSAL) * x->tokens / tp;
    double bytes = tp_mixer_scan_bytes(m, k) * x->tokens / tp;
    double t_flops = flops / (x->h.scan_flops * TP_SCAN_REL_EFF), t_bytes = bytes / x->h.mem_bw;
    double t = t_flops > t_bytes ? t_flops : t_bytes;
    c->fwd_attn += t;
    c->bwd_attn += t * x->cal->attn_bwd_ratio;
}

/* The token mixer's projections: column-parallel (split N) and row-parallel (split K); then
   the attention kernel of an attention block. */
static void mixer_block(const struct ctx *x, uint32_t layer, enum tp_mixer mixer, struct cost *c)
{
    const struct tp_model *m = x->m;
    double T = x->tokens, H = m->hidden, tp = x->l->tp;
    if (mixer == TP_MIXER_MAMBA2 || mixer == TP_MIXER_GDN) {
        mixer_cost(x, mixer, c);
    } else if (mixer == TP_MIXER_NONE) {
        /* an FFN-only block */
    } else if (m->attn == TP_ATTN_MLA) {
        double nq = m->n_heads, qk = (double)m->qk_nope_dim + m->qk_rope_dim;
        if (m->q_lora_rank) {
            lin(x, c, m->q_lora_rank, H, 1, T, TP_LORA_Q); /* down projections are replicated */
            lin(x, c, nq * qk / tp, m->q_lora_rank, 1, T, TP_LORA_Q);
        } else {
            lin(x, c, nq * qk / tp, H, 1, T, TP_LORA_Q);
        }
        lin(x, c, (double)m->kv_lora_rank + m->qk_rope_dim, H, 1, T, TP_LORA_K | TP_LORA_V);
        lin(x, c, nq * ((double)m->qk_nope_dim + m->v_head_dim) / tp, m->kv_lora_rank, 1, T,
            TP_LORA_K | TP_LORA_V);
        lin(x, c, H, nq * m->v_head_dim / tp, 1, T, TP_LORA_O);
    } else {
        double q = (double)m->n_heads * m->head_dim, kv = (double)m->n_kv_heads * m->head_dim;
        double gate = m->attn_out_gate ? q : 0; /* Qwen3-Next: q_proj also yields the gate */
        double before = c->bwd_gemm;
        lin(x, c, (q + gate + 2 * kv) / tp, H, 1, T, TP_LORA_Q | TP_LORA_K | TP_LORA_V);
        c->col_wgrad += wgrad_share(x, c->bwd_gemm - before);
        lin(x, c, H, q / tp, 1, T, TP_LORA_O);
    }
    if (mixer == TP_MIXER_ATTN)
        attention(x, layer, c);
}

/* The element-wise passes Megatron-Core's TEGroupedMLP adds around biased, clamped-GLU experts
   (gpt-oss: add_bias_linear, activation_func_clamp_value 7, glu_linear_offset 1, quick_gelu;
   Megatron-Bridge gpt_oss_provider.py / gpt_oss_bridge.py, v0.2.0 to v0.6.0), counted from the
   code that runs them [MCORE-GPTOSS] (megatron/core/transformer/moe/experts.py and
   fusions/fused_bias_geglu.py, core_v0.15.0 to the 2026-08 head), for `rows` routed rows of
   this rank:
   - the clamp: weighted_bias_quick_geglu_impl clamps the two halves of the fc1 output as eager
     ops before its fused activation: two clamps (read F, write F each) and a torch.cat of the
     halves (read 2F, write 2F): 8F element moves forward; backward the two clamps' masked
     gradients (read the gradient and the input, write one: 3F each) and the chunk's gradient
     concatenated (read 2F, write 2F): 10F.  Under recompute_modules moe_act the checkpoint
     wraps this function (bias_act_func), so the backward runs the 8F again, and the fused
     activation's forward after it (read 2F, write F: 3F).
   - the fc2 bias: linear_fc2 returns its bias (skip_bias_add) and _apply_bias adds it scaled
     by the routing probability, a Python loop over the local experts of torch.split,
     `t + b * p` and torch.cat: b * p writes H, the add reads 2H and writes H, the cat reads
     and writes H: 6H forward; backward the bias and probability gradients (grad * p and
     grad * b, each read H, write H, then a reduction reading H): 6H.  Counted in 16 bits
     (the probabilities in fp32 would add more).
   These are separate eager kernels under every fused stack, so they are paid whole, not at the
   calibration's unfused share of the counted element-wise bytes (ew_share).  The fc1 bias is
   the grouped GEMM's epilogue (TE GroupedLinear, skip_bias_add False) and costs no pass.
   Megatron-Core's fused expert MLP (use_transformer_engine_op_fuser: TE's ScaledClampedQGeGLU
   op with the cuDNN-frontend CuTe DSL grouped GEMM, Megatron-Bridge's
   cutedsl_fused_grouped_mlp recipes of 26.06 on) folds the clamp and the biases into its
   kernels (tp_job moe_fused_mlp): no passes. */
static void biased_expert_passes(const struct ctx *x, double rows, struct cost *c)
{
    const struct tp_model *m = x->m;
    if (!m->expert_bias || m->mlp != TP_MLP_GLU || x->j->framework != TP_FW_MEGATRON ||
        x->j->moe_fused_mlp)
        return;
    double F = m->moe_ffn / x->l->etp, H = m->hidden, b = x->h.act_bytes;
    bool clamp = m->expert_glu_clamp;
    double fwd = (clamp ? 8 * F : 0) + 6 * H, bwd = (clamp ? 10 * F : 0) + 6 * H;
    const struct tp_layout *l = x->l;
    if (clamp && l->recompute == TP_RECOMPUTE_SELECTIVE && (l->recompute_modules & TP_RC_MOE_ACT))
        bwd += 8 * F + 3 * F;
    c->fwd_mem += rows * fwd * b / x->h.mem_bw;
    c->bwd_mem += rows * bwd * b / x->h.mem_bw;
}

/* GPU time per GEMM of Transformer Engine's multi-stream grouped GEMM beyond its FLOPs: TE's
   GroupedLinear runs one cuBLAS GEMM per local expert, spread over 4 streams
   (nvte_multi_stream_cublas_gemm, common/gemm/cublaslt_gemm.cu), each with its own ramp-up and
   tail.  Measured on H100, BF16, `general_grouped_gemm` with TE 2.7 and CUDA 12.9 [TE-GG]
   (NVIDIA/TransformerEngine PR #2045, the maintainer's table): 8 GEMMs of 4096 x 768 x 2048
   at 627.9 TFLOP/s and 16 of 2048 x 768 x 2048 (the same FLOPs) at 553.9: 164 and 186 us, so
   t = F / R + n t0 gives t0 = 2.75 us per GEMM (R = 726 TFLOP/s) [derived]; TE 2.2's figures
   in the same table (508.8, 398.8) give 7.0 us.  The later release is priced: Megatron-Core's
   TEGroupedMLP, forward, data and weight gradient of fc1 and fc2 per local expert. */
#define TE_GROUPED_GEMM_FIXED_S 2.75e-6

/* An MoE FFN: router, experts (grouped GEMMs, the dense block or the expert loop), shared
   experts, and the all-to-all dispatch and combine.  Returns the TP collectives it adds. */
static double moe_block(const struct ctx *x, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    double T = x->tokens, H = m->hidden, tp = l->tp;
    double up = m->mlp == TP_MLP_GLU ? 2 : 1;
    double E = m->n_experts, k = m->top_k, ep = l->ep, etp = l->etp;
    double imb = tp_moe_load(j, m, l);
    /* the ep ranks of a group route T*k token copies each over E experts, so each of this
       rank's E/ep experts receives T*k*ep/E rows on average; the busiest rank carries `imb`
       times the mean (dropless) or at most the capacity factor.  Under sequence parallelism
       each TP rank routes its T/tp tokens, and the expert-TP group gathers its etp ranks'
       (Megatron-Core token_dispatcher.py: all-to-all over EP, then all-gather over ETP):
       T/tp * etp tokens' worth, T when etp = tp */
    double routed = tp_moe_routed_tokens(x);
    double per_expert = routed * etp * k * ep / E * imb;
    double ffn_before = c->fwd_gemm;
    lin(x, c, E, H, 1, T, 0); /* router */
    if (x->moe_impl == TP_MOE_GROUPED) {
        /* grouped expert GEMMs at their own rate (calibration grouped_gemm_scale) */
        struct ctx xg = *x;
        xg.h.gemm_flops *= x->cal->grouped_gemm_scale;
        xg.h.gemm16_flops *= x->cal->grouped_gemm_scale;
        double before = c->fwd_gemm;
        lin(&xg, c, up * m->moe_ffn / etp, H, E / ep, per_expert, TP_LORA_GATE | TP_LORA_UP);
        lin(&xg, c, H, m->moe_ffn / etp, E / ep, per_expert, TP_LORA_DOWN);
        if (tp_stack_get(j->framework)->te_grouped_gemm) { /* per-expert GEMMs: fc1, fc2 */
            double t0 = 2 * E / ep * TE_GROUPED_GEMM_FIXED_S;
            c->fwd_gemm += t0;
            c->bwd_gemm += (x->frozen ? 1 : 2) * t0;
        }
        c->moe_post_fwd = c->fwd_gemm - before; /* after the dispatcher's sync (moe_host.c) */
        biased_expert_passes(x, per_expert * E / ep, c);
    } else if (x->moe_impl == TP_MOE_DENSE) {
        /* every expert over all T tokens (zero-scaled where not routed), plus the E copies of
           the hidden states: repeat, scale, and the sum over experts of the outputs */
        expert_loop(x, E, T, c);
        double copies = 3 * E * T * H * x->h.act_bytes;
        c->fwd_mem += copies / x->h.mem_bw;
        c->bwd_mem += 2 * copies / x->h.mem_bw;
    } else {
        expert_loop(x, E / ep, T * k * ep / E, c);
    }
    if (m->shared_ffn) {
        double shared_before = c->fwd_gemm;
        lin(x, c, up * m->shared_ffn / tp, H, 1, T, TP_LORA_GATE | TP_LORA_UP);
        lin(x, c, H, m->shared_ffn / tp, 1, T, TP_LORA_DOWN);
        c->shared_fwd_gemm = c->fwd_gemm - shared_before;
    }
    c->ffn_fwd_gemm = c->fwd_gemm - ffn_before;
    /* dispatch and combine, forward and backward, as the job's dispatcher moves them */
    struct tp_moe_comm mc;
    tp_moe_comm(x, imb, &mc);
    c->ep_fwd = mc.fwd;
    c->ep_bwd = mc.bwd;
    c->moe_post_fwd += mc.fwd;
    c->ep_sm_share = mc.sm_share;
    /* the routed experts' expert-TP exchange is the dispatcher's (moe_comm.c); the shared
       experts' TP collectives are the block's */
    return m->shared_ffn ? 2 : 0;
}

/* Ring attention: each rank passes its K and V chunk around the ring (cp - 1 hops); the
   transfer hides behind the chunked attention compute ([derived] §4.6). */
static void ring_attention(const struct ctx *x, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    double kv = m->attn == TP_ATTN_MLA ? (double)m->n_heads * ((double)m->qk_nope_dim +
                                                                m->qk_rope_dim + m->v_head_dim)
                                       : 2.0 * m->n_kv_heads * m->head_dim;
    double bytes_kv = (l->cp - 1.0) * x->tokens * kv / l->tp * x->h.act_bytes;
    uint32_t nodes = tp_comm_nodes_of(l->cp, x->g_cp);
    double t = bytes_kv / tp_comm_bus_bw(x->c, x->cal, x->g_cp, nodes) +
               (l->cp - 1.0) * tp_comm_latency(x->cal, 1, nodes > 1);
    double fwd = t - c->fwd_attn, bwd = 2 * t - c->bwd_attn;
    c->cp_fwd = fwd > 0 ? fwd : 0;
    c->cp_bwd = bwd > 0 ? bwd : 0;
}

void tp_block_cost(const struct ctx *x, uint32_t layer, struct cost *c)
{
    const struct tp_model *m = x->m;
    const struct tp_layout *l = x->l;
    memset(c, 0, sizeof *c);
    double T = x->tokens, H = m->hidden, tp = l->tp;
    enum tp_mixer mixer = (enum tp_mixer)m->layer_mixer[layer];
    mixer_block(x, layer, mixer, c);

    /* the mixer: one all-reduce forward, one backward */
    double tp_colls = mixer == TP_MIXER_NONE ? 0 : 2, fc1_wgrad = 0;
    if (m->layer_no_ffn[layer]) {
        /* a mixer-only block (Nemotron-H) */
    } else if (!m->layer_moe[layer]) {
        double up = m->mlp == TP_MLP_GLU ? 2 : 1;
        double ffn_before = c->fwd_gemm, bwd_before = c->bwd_gemm;
        lin(x, c, up * m->ffn / tp, H, 1, T, TP_LORA_GATE | TP_LORA_UP);
        fc1_wgrad = wgrad_share(x, c->bwd_gemm - bwd_before);
        lin(x, c, H, m->ffn / tp, 1, T, TP_LORA_DOWN);
        c->ffn_fwd_gemm = c->fwd_gemm - ffn_before;
        tp_colls += 2;
    } else {
        tp_colls += moe_block(x, c);
    }
    double rep, split, expert;
    elementwise(x, layer, &rep, &split, &expert);
    bool sp = l->sp && l->tp > 1;
    double bytes = T * ((sp ? rep / tp : rep) + split / tp + expert / l->etp) * x->h.act_bytes *
                   ew_share(x);
    c->fwd_mem += bytes / x->h.mem_bw;
    c->bwd_mem += 2 * bytes / x->h.mem_bw;

    double coll = tp_collective(x);
    c->tp_fwd = tp_colls / 2 * coll;
    c->tp_bwd = tp_colls / 2 * coll;
    if (tp_async_wgrad(x)) {
        /* the two backward collectives of a block are its column-parallel linears' input
           gradients (the mixer's input projection, the MLP's fc1); each hides behind its own
           weight-gradient GEMM (tp_async_hidden); the row-parallel side stays exposed */
        if (mixer != TP_MIXER_NONE)
            c->tp_bwd -= tp_async_hidden(x, coll, c->col_wgrad);
        if (!m->layer_no_ffn[layer] && !m->layer_moe[layer])
            c->tp_bwd -= tp_async_hidden(x, coll, fc1_wgrad);
    }
    if (l->cp > 1 && mixer == TP_MIXER_ATTN)
        ring_attention(x, c);
    tp_host_block(x, layer, c); /* launches the GPU work does not cover (host.c) */
    c->host_fwd += tp_moe_sync_exposed(x, layer, c); /* the dropless dispatcher's wait */
}

/* HBM bytes per logit of the loss, forward and backward.  Megatron-DeepSpeed's vocab-parallel
   cross-entropy, counted from its code ([MDS-CODE] at c08e2cc2: megatron/model/gpt_model.py
   CrossEntropy and GPTModelPipe's float16_to_fp32 stage, post_language_model_processing's
   output.float() without the pipeline engine; megatron/core/tensor_parallel/cross_entropy.py
   _VocabParallelCrossEntropy), one kernel per op over fp32 logits: forward the cast of the
   16-bit logits (read 2, write 4), the max over the vocabulary (read 4), the subtraction of
   the max into a new tensor (read 4, write 4), exp in place (4 + 4), the sum (4), the
   division in place (4 + 4): 38; backward the gradient's mul_ in place (4 + 4) and its cast
   back to 16 bits (read 4, write 2): 14.  The MT-NLG-era code (megatron/mpu/cross_entropy.py)
   runs the same ops.  Other unfused stacks: 16 (fp32 softmax written and read once each way);
   a fused (chunked) loss avoids the fp32 round trips: 4. */
static void ce_bytes(const struct tp_job *j, double *fwd, double *bwd)
{
    if (j->fused_loss) {
        *fwd = *bwd = 2;
    } else if (j->framework == TP_FW_MEGATRON_DS) {
        *fwd = 38;
        *bwd = 14;
    } else {
        *fwd = *bwd = 8;
    }
}

/* Embedding (first stage) and LM head with the loss (last stage) for one micro-batch. */
void tp_outer_cost(const struct ctx *x, bool first, bool last, struct cost *c)
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
        /* Megatron pads the vocabulary to a multiple of 128 per TP rank
           (megatron/training/tokenizer: _vocab_size_with_padding, make_vocab_size_divisible_by
           128 times the TP size); the padding rows cost their FLOPs */
        enum tp_framework fw = x->j->framework;
        if (fw == TP_FW_MEGATRON || fw == TP_FW_MEGATRON_DS)
            V = ceil(V / (128 * tp)) * 128 * tp;
        struct linear head = {V / tp, H, 1, T, x->frozen, false, false, 0};
        /* the output layer stays in 16 bits under FP8/FP4 recipes: Megatron-Core builds it as
           tensor_parallel.ColumnParallelLinear, outside Transformer Engine's autocast
           (gpt_model.py); torchtitan's Float8 conversion filters out "output" */
        struct hw h16 = x->h;
        h16.gemm_flops = x->h.gemm16_flops;
        h16.fp8 = false;
        add_linear(&h16, x->j, &head, c);
        /* cross-entropy over T x V/tp logits (ce_bytes) */
        double ce_fwd, ce_bwd;
        ce_bytes(x->j, &ce_fwd, &ce_bwd);
        c->fwd_mem += T * V / tp * ce_fwd / x->h.mem_bw;
        c->bwd_mem += T * V / tp * ce_bwd / x->h.mem_bw;
        c->fwd_mem += T * H * 2 * x->h.act_bytes / x->h.mem_bw; /* final norm */
    }
}
