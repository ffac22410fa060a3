/*
 * mem_act.c - the activation and logit bytes of one pipeline stage (memory.c adds them to the
 * model states): each block's stored activations per token with the layout's TP / SP / CP /
 * EP splits and its recompute, the micro-batches a pipeline schedule holds in flight, and the
 * loss's logits by implementation.  Pure and allocation-free.
 *
 * Sources (docs/physics.md §3.7, docs/memory.md): activations [KOR22] Table 2 and §4,
 * generalised to the modern decoder; in-flight micro-batches [KOR22] §4 and [MEG-M]; the
 * attention block's buffers (mem_attn.c); the losses' bytes per logit as each implementation
 * keeps them (below).
 */
#include "eval_internal.h"
#include "time_internal.h" /* tp_moe_load */

#include <math.h>
#include <string.h>

/* Stored activation bytes per token of one block, with the splits of the layout
   ([KOR22] Table 2 for GPT blocks; docs/physics.md §3.7 for the modern decoder). */
struct act_terms {
    double replicated; /* H-sized terms: divided by tp only with sequence parallelism */
    double split;      /* divided by tp */
    double core;       /* eager attention s-sized terms (dropped by selective recompute) */
    double moe;        /* routed-expert terms (per token, after the imbalance factor) */
};

/* The modules a layout recomputes (selective: its list, else Megatron-Core's core_attn). */
static uint32_t recomputed(const struct tp_layout *l)
{
    if (l->recompute != TP_RECOMPUTE_SELECTIVE)
        return 0;
    return l->recompute_modules ? l->recompute_modules : TP_RC_CORE_ATTN;
}

/* torchtitan's op-level selective checkpointing (torchtitan/models/llama3/infra/
   parallelize.py _apply_ac_to_transformer_block, the "op" option its llama3 train configs set):
   the block input, the attention kernel's output and log-sum-exp, and the output of every
   other aten.mm in the block (the counter restarts per block: wq, wv, w1, w2 of wq wk wv wo w1
   w3 w2) are kept; everything else is rebuilt in backward.  Returns false for blocks the
   policy is not written for here (MoE, MLA, non-attention mixers): they keep the default
   terms. */
static bool per_op_activations(const struct tp_model *m, uint32_t layer, double q, double k,
                               double v, struct act_terms *a)
{
    if (m->layer_mixer[layer] != TP_MIXER_ATTN || m->layer_moe[layer] || m->layer_no_ffn[layer] ||
        m->attn == TP_ATTN_MLA)
        return false;
    double h = m->hidden, f = m->ffn;
    /* the matmul outputs in call order; column-parallel ones split by tp, row-parallel ones
       (wo, w2) replicated or sequence-split */
    double width[7] = {q, k, v, h, f, m->mlp == TP_MLP_GLU ? f : h, h};
    bool split[7] = {true, true, true, false, true, m->mlp == TP_MLP_GLU, false};
    size_t n = m->mlp == TP_MLP_GLU ? 7 : 6;
    memset(a, 0, sizeof *a);
    a->replicated = 2 * h; /* the checkpointed block's input */
    a->split = 2 * q + 4 * (double)m->n_heads; /* attention output (q wide) and fp32 lse */
    for (size_t i = 0; i < n; i += 2)
        *(split[i] ? &a->split : &a->replicated) += 2 * width[i];
    return true;
}

double tp_per_op_recomputed_share(const struct tp_model *m)
{
    double h = m->hidden, f = m->ffn, q = (double)m->n_heads * m->head_dim;
    double kv = (double)m->n_kv_heads * m->head_dim;
    bool glu = m->mlp == TP_MLP_GLU;
    /* in x out of wq wk wv wo w1 [w3] w2; kept: the 1st, 3rd, ...; rebuilt: the 2nd, 4th, ... */
    double mm[7] = {h * q, h * kv, h * kv, q * h, h * f, glu ? h * f : f * h, f * h};
    double all = 0, rebuilt = 0;
    for (size_t i = 0; i < (glu ? 7u : 6u); i++) {
        all += mm[i];
        rebuilt += i % 2 ? mm[i] : 0;
    }
    return rebuilt / all;
}

/* [EAGER-GLU]: a gated MLP written op by op, act_fn(gate_proj(x)) * up_proj(x) (transformers'
   LlamaMLP and its descendants, models/llama/modeling_llama.py, and the Qwen3-MoE experts,
   integrations/moe.py grouped_mm_experts_forward; torchtune's FeedForward; LitGPT's LLaMAMLP),
   keeps the activation's output as a tensor of its own: SiLU's backward needs its input (the
   gate), the product's needs both factors (the activation's output and the up projection), and
   down_proj needs the product.  A fused SwiGLU keeps its input only (Megatron-Core's
   bias_swiglu_impl, megatron/core/fusions/fused_bias_swiglu.py; Liger's LigerSiLUMulFunction,
   liger_kernel/ops/swiglu.py, which recomputes the SiLU in backward).  The Hugging Face and
   plain PyTorch stacks run the modules as written unless Liger is on (a fused loss other than
   TRL's chunked_nll, which replaces the loss only); torchtitan's rows run torch.compile. */
static bool eager_glu(const struct tp_job *j)
{
    bool hf = j->framework == TP_FW_FSDP || j->framework == TP_FW_AXOLOTL ||
              j->framework == TP_FW_DEEPSPEED;
    return hf && (!j->fused_loss || j->loss_impl == TP_LOSS_CHUNKED);
}

/* What block `layer` stores per token when the modules in `rc` are recomputed instead. */
static struct act_terms block_activations(const struct tp_model *m, const struct tp_job *j,
                                          const struct tp_layout *l, uint32_t layer, uint32_t rc,
                                          double load)
{
    struct act_terms a = {0, 0, 0, 0};
    double h = m->hidden, nq = m->n_heads, s = (double)j->seq;
    /* widths of the saved Q, K, V and attention output (o_proj input) */
    double q, k, v, o;
    if (m->attn == TP_ATTN_MLA) {
        q = k = nq * ((double)m->qk_nope_dim + m->qk_rope_dim);
        v = o = nq * m->v_head_dim;
        a.split += 2.0 * ((double)m->q_lora_rank + m->kv_lora_rank + m->qk_rope_dim); /* latents */
        if (rc & TP_RC_MLA_UP) /* rebuilt from the latents in backward */
            q = k = v = 0;
    } else {
        q = o = nq * m->head_dim;
        k = v = (double)m->n_kv_heads * m->head_dim;
    }
    if ((rc & TP_RC_OP) && per_op_activations(m, layer, q, k, v, &a))
        return a;
    /* Inputs saved for a GEMM's backward are kept in the GEMM's precision: Transformer
       Engine's fp8 Linear/LayerNormLinear save the quantized input (1 byte, plus 1/32 of a
       byte of block scales for MXFP8); attention's Q, K, V and the activation function's
       input stay 16-bit. */
    double gin = tp_prec_saved_bytes(j->precision);
    gin = gin < 2 ? gin : 2; /* (fp32 runs are counted with 16-bit activations, as before) */
    /* fc1 output + fc2 input, and the activation's own output in an eager gated MLP; a frozen
       linear keeps no input unless an adapter reads it (mem_lora.c) */
    double fc2 = tp_mem_linear_input_bytes(j, TP_LORA_DOWN, gin, false);
    /* the fused SwiGLU's saved input (2 x F wide) in FP8 with activation_func_fp8_input_store:
       Megatron-Core's SwiGLUFunction / BiasSwiGLUFunction save `input.to(torch.float8_e4m3fn)`
       (megatron/core/fusions/fused_bias_swiglu.py; TE's quantizer with its scale in later
       releases), 1 byte per element [MEG-ACT8] */
    double act_in = j->fp8_act_store && !eager_glu(j) ? 1.0 : 2.0;
    double glu = m->mlp == TP_MLP_GLU ? (eager_glu(j) ? 6.0 : 2 * act_in) + fc2 : 2.0 + fc2;
    double normed = rc & TP_RC_LAYERNORM ? 0 : gin * h;
    /* the normed inputs of QKV and of a dense MLP (a MoE layer's router and dispatch keep
       theirs) */
    const uint32_t qkv = TP_LORA_Q | TP_LORA_K | TP_LORA_V;
    double qkv_in = rc & TP_RC_LAYERNORM ? 0 : tp_mem_linear_input_bytes(j, qkv, gin, true) * h;
    double fc1_in = rc & TP_RC_LAYERNORM || m->layer_moe[layer]
                        ? normed
                        : tp_mem_linear_input_bytes(j, TP_LORA_GATE | TP_LORA_UP, gin, true) * h;
    /* hybrid blocks (ssm.c): a Mamba-2 / DeltaNet mixer in place of attention, or none; no FFN
       where the layout says so (Nemotron-H's blocks hold one module) */
    enum tp_mixer mixer = (enum tp_mixer)m->layer_mixer[layer];
    double subs = (mixer != TP_MIXER_NONE) + !m->layer_no_ffn[layer];
    /* norm inputs (2H each), the normed inputs of QKV and of the MLP, dropout masks after
       attention and MLP (1 byte per element) */
    a.replicated = 2 * h * m->norms_per_block + (j->dropout ? subs * h : 0);
    a.replicated += (mixer == TP_MIXER_ATTN ? qkv_in : mixer != TP_MIXER_NONE ? normed : 0) +
                    (m->layer_no_ffn[layer] ? 0 : fc1_in);
    if (mixer == TP_MIXER_ATTN) {
        if (m->attn_out_gate)
            a.split += 2 * q; /* the sigmoid output gate's input */
        a.split += tp_mem_attn_qkv_bytes(j, rc) * (q + k + v) +
                   tp_mem_attn_out_bytes(j, gin) * o;
        if (j->attn_impl != TP_ATTN_EAGER)
            a.split += 4 * nq; /* softmax log-sum-exp, fp32 */
        else
            a.core = nq * s * (j->dropout ? 5.0 : 6.0); /* [KOR22] 5as (softmax, mask, dropout
                                                           output); without dropout fp32
                                                           softmax output + bf16
                                                           probabilities [derived] */
    } else {
        a.split = tp_mixer_activations(m, mixer, gin);
    }
    if (m->layer_no_ffn[layer])
        return a;
    if (!m->layer_moe[layer]) {
        a.split += rc & TP_RC_MLP ? 0 : glu * m->ffn;
        return a;
    }
    if (rc & TP_RC_MOE)
        return a; /* the whole MoE layer is rebuilt from its input */
    /* the busiest rank's routed copies (`load`: its skew, capped by an unpadded capacity factor,
       the buffers being sized by what arrives: token_dispatcher.py num_out_tokens; the factor
       when padded) */
    a.replicated += 4.0 * m->n_experts; /* router logits, fp32 */
    /* per routed copy: the permuted fc1 input (all-gathered over the expert-TP group), fc1
       output and fc2 input (not with moe_act recomputed), split by etp, and what the routing
       weights need: Megatron-Core multiplies them in the activation function
       (TEGroupedMLP.activation_func_with_probs, megatron/core/transformer/moe/experts.py), which
       keeps the fp32 weight per copy; a loop over experts that weights each expert's output
       (HF's `expert_layer(x) * routing_weights`, DeepSpeed MoE's combine) keeps the fc2 output,
       reduce-scattered over etp first */
    double expert = rc & TP_RC_MOE_ACT ? glu - gin : glu;
    /* FP8 runs that recompute the experts' activation keep its input (the fc1 output) in FP8:
       DeepSeek-V3 (arXiv:2412.19437 §3.3, "we cache the inputs of the SwiGLU operator and
       recompute its output in the backward pass. These activations are also stored in FP8"),
       Megatron-Core 0.14 ("FP8 support for Fine-grained Recomputations", moe/README.md) */
    if ((rc & TP_RC_MOE_ACT) && gin < 2)
        expert = (m->mlp == TP_MLP_GLU ? 2.0 : 1.0) * gin;
    bool mcore = j->framework == TP_FW_MEGATRON;
    double weights = mcore ? 4.0 : 2 * h / l->etp;
    a.moe = load * m->top_k * (gin * h + expert * m->moe_ffn / l->etp + weights);
    /* under sequence parallelism a rank routes T/tp tokens and its expert-TP group gathers etp
       ranks' worth (moe_comm.c tp_moe_routed_tokens): etp/tp of the micro-batch's copies */
    if (l->sp && l->tp > 1)
        a.moe *= (double)l->etp / l->tp;
    a.split += rc & TP_RC_SHARED ? 0 : glu * m->shared_ffn;
    return a;
}

static double act_bytes(struct act_terms a, const struct tp_layout *l, bool drop_core)
{
    double tp = l->tp, rep = l->sp && l->tp > 1 ? a.replicated / tp : a.replicated;
    return rep + a.split / tp + a.moe + (drop_core ? 0 : a.core / tp);
}

/* Micro-batches whose activations stage `stage` holds at its peak ([KOR22] §4: stage i of a
   1F1B pipeline holds min(p - i, m); [MEG-M]: interleaving multiplies by 1 + (p-1)/(p v);
   GPipe holds all m). */
static double in_flight(const struct tp_layout *l, uint32_t stage)
{
    double m = l->gas, p = l->pp;
    if (l->pp == 1)
        return 1;
    if (l->schedule == TP_SCHED_GPIPE)
        return m;
    if (l->schedule == TP_SCHED_DUALPIPE) /* PP + 1 on every rank (DeepSeek-V3 Table 2) */
        return p + 1 < m ? p + 1 : m;
    double held = p - stage < m ? p - stage : m;
    if (l->schedule == TP_SCHED_INTERLEAVED)
        held *= 1 + (p - 1) / (p * l->vpp);
    return held;
}

double tp_mem_activations(const struct tp_model *m, const struct tp_job *j,
                          const struct tp_layout *l, uint32_t stage, double *in_flight_out,
                          double *offloaded)
{
    double tokens = (double)l->mbs * (double)j->seq / l->cp;
    if (j->task == TP_TASK_DPO)
        tokens *= 2; /* chosen and rejected sequence per example */
    double stored = 0, working = 0, off = 0, largest = 0; /* off: what may go to the host */
    uint32_t seen = 0;
    /* each kind's bytes once: kept, rebuilt by selective recompute, rebuilt whole (the
       search prices a stage's blocks for every layout it tries) */
    double full_k[TP_BLOCK_KINDS], back_k[TP_BLOCK_KINDS], whole_k[TP_BLOCK_KINDS];
    double attn_k[TP_BLOCK_KINDS];
    double ring = tp_mem_torch_ring_cp(j, l) ? tp_mem_ring_bytes(m, l) : 0;
    double ws = tp_mem_attn_workspace(m, j, l); /* the attention kernel's backward (mem_attn.c) */
    bool have[TP_BLOCK_KINDS] = {false};
    uint32_t rc = recomputed(l);
    double load = m->n_experts > 1 ? tp_moe_load(j, m, l) : 1; /* once: moe_skew.c */
    uint32_t lo[TP_MAX_LAYERS], hi[TP_MAX_LAYERS];
    uint32_t ranges = tp_stage_ranges(m, l, stage, lo, hi);
    for (uint32_t r = 0; r < ranges; r++)
    for (uint32_t layer = lo[r]; layer < hi[r]; layer++) {
        unsigned k = tp_block_kind(m, layer);
        if (!have[k]) {
            struct act_terms kind = block_activations(m, j, l, layer, rc, load);
            struct act_terms whole = block_activations(m, j, l, layer, 0, load);
            full_k[k] = act_bytes(kind, l, (rc & TP_RC_CORE_ATTN) != 0);
            back_k[k] = act_bytes(whole, l, (rc & TP_RC_CORE_ATTN) != 0) - full_k[k];
            whole_k[k] = act_bytes(whole, l, false);
            /* the block without its FFN: what a rebuilt block holds at its attention's backward */
            attn_k[k] = act_bytes(block_activations(m, j, l, layer,
                                                    TP_RC_MLP | TP_RC_MOE | TP_RC_SHARED, load),
                                  l, false);
            have[k] = true;
        }
        double full = full_k[k];
        if (rc) { /* one block's recomputed modules are rebuilt at a time in backward (the
                     attention core's transient is not counted, as [KOR22] Table 2) */
            double back = back_k[k];
            working = back > working ? back : working;
        }
        bool ckpt = l->recompute == TP_RECOMPUTE_FULL &&
                    (l->recompute_layers == 0 || seen < l->recompute_layers);
        if ((ring > 0 || ckpt) && m->layer_mixer[layer] == TP_MIXER_ATTN) {
            /* at a rebuilt block's attention backward, or the ring's: its buffers and the
               kernel's workspace beside what the block still holds there, its attention's
               saved tensors when it is rebuilt (the MLP's are freed by then), nothing more when
               it was stored (stored counts it).  A stored block's attention backward without
               the ring comes after the logits are freed, below the start of the backward */
            double attn = (ckpt ? attn_k[k] : 0) + ring + ws;
            working = attn > working ? attn : working;
        }
        bool offload = l->offload_activations && (l->offload_layers == 0 ||
                                                  seen < l->offload_layers);
        seen++;
        double kept = full;
        if (ckpt) {
            /* only the block input is kept (/t with SP); the block is rebuilt in backward */
            kept = 2 * m->hidden / (l->sp && l->tp > 1 ? (double)l->tp : 1.0);
            double rebuilt = whole_k[k];
            working = rebuilt > working ? rebuilt : working;
        }
        *(offload ? &off : &stored) += kept;
        largest = offload && kept > largest ? kept : largest;
    }
    double held = in_flight(l, stage);
    /* Megatron-Core's EP A2A overlap runs micro-batch i + 1's forward beside micro-batch i's
       backward (combined_1f1b.py), layer k of the one with layer L - k of the other: what the
       forward stores the backward has freed, so one micro-batch's worth stays alive.  An
       interleaved pipeline warms up one more virtual micro-batch (schedules.py: the warm-up
       count + 1 under overlap_moe_expert_parallel_comm): one more 1/vpp chunk of the stage */
    if (j->moe_a2a_overlap && l->gas > 1 && l->pp > 1)
        held += 1.0 / l->vpp;
    *in_flight_out = held;
    /* offloaded activations: each block's saved tensors are copied to pinned host memory as the
       forward makes them and fetched back one block ahead of the backward
       (torch.autograd.graph.save_on_cpu; transformers' gradient_checkpointing offload, which
       huggingface/trl PR #6846 needs to fit Qwen3-8B at 1M tokens on 8 H100; Megatron-Core's
       cpu_offloading for its first cpu_offloading_num_layers blocks).  The GPU holds the block
       in use and the one in transfer [derived]. */
    double resident = off * held < 2 * largest ? off * held : 2 * largest;
    *offloaded = tokens * (off * held - resident);
    return tokens * (stored * held + resident + working);
}

/* QLoRA through PEFT's prepare_model_for_kbit_training (peft/utils/other.py: "cast all non
   INT8 parameters to fp32"), which TRL's SFTTrainer calls for a 4-bit model unless FSDP shards
   it (Axolotl casts the norms and embeddings back to 16 bits for FlashAttention): the
   embedding, the norms and the head turn fp32, so the residual stream, bitsandbytes' outputs
   (cast back to the input's dtype) and the logits are fp32 too (transformers warns that
   FlashAttention's inputs "seem to be silently casted in float32"). */
bool tp_mem_kbit_fp32(const struct tp_job *j, const struct tp_layout *l)
{
    return j->task == TP_TASK_QLORA && j->kbit_fp32 && l->zero < 3;
}

double tp_mem_logits(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l)
{
    double tokens = (double)l->mbs * (double)j->seq / l->cp * (j->task == TP_TASK_DPO ? 2 : 1);
    double elems = tokens * m->vocab / l->tp;
    /* bf16 logits + the fp32 copy the loss keeps for backward ([MEG-M] budgets 4 s b V);
       a fused/chunked cross-entropy materialises about one chunk in eight [heuristic].
       flash-attn's fused cross-entropy (flash_attn/ops/triton/cross_entropy.py) saves the
       16-bit logits and an fp32 log-sum-exp per token (ctx.save_for_backward(logits, lse,
       labels)), no fp32 copy. */
    if (j->loss_impl == TP_LOSS_CHUNKED) {
        /* TRL's chunked_nll (trl/trainer/sft_trainer.py _chunked_cross_entropy_loss, chunks of
           _CHUNKED_LM_HEAD_CHUNK_SIZE = 256 tokens, each under torch.utils.checkpoint): per
           token, the valid tokens' hidden states gathered in a new order (hidden[order], which
           the chunks' checkpoints keep), and their gradient accumulated over the chunks beside
           each chunk's full-size slice gradient, 2 + 2 + 2 bytes per hidden element; once, the
           chunk's backward rebuilding the head's weight in fp32 (w.float()), its fp32 gradient
           and that gradient cast to the weight's dtype (4 + 4 + 2 bytes per weight), and the
           chunk's fp32 logits, log-softmax and their gradients (4 x 4 bytes per logit) */
        double v = (double)m->vocab / l->tp, chunk = 256;
        return tokens * 6 * m->hidden + v * m->hidden * 10 + chunk * v * 16;
    }
    /* A fused cross-entropy does not serve DPO: TRL's DPOTrainer.concatenated_forward calls
       the model without labels (trl/trainer/dpo_trainer.py) and takes the log-probabilities
       from the full logits (selective_log_softmax, trl/trainer/utils.py), and Liger's patched
       forward skips the logits only when labels are given (liger_kernel/transformers/model/
       llama.py lce_forward: skip_logits = training and labels is not None), which is the
       forward Axolotl's LigerPlugin installs (src/axolotl/integrations/liger/plugin.py).
       Only a fused DPO loss (Liger's LigerFusedLinearDPOLoss through TRL's use_liger_loss)
       would avoid them; none is modelled. */
    if (j->fused_loss && j->task != TP_TASK_DPO)
        return elems * 2 / 8;
    /* TRL's DPO (the Hugging Face stack: Axolotl's rl: dpo runs TRL's DPOTrainer) on 16-bit
       logits: selective_log_softmax (trl/trainer/utils.py, since TRL 0.15, PR #2799) takes
       log_softmax one sequence at a time in the logits' own dtype and gathers the labels'
       entries; each row's 16-bit log-softmax is saved for its backward, and the logits
       themselves are freed when concatenated_forward returns (log_softmax saves its output,
       unbind and gather save no input).  At the backward the rows' 16-bit gradients are
       stacked into the logits' gradient while the saved rows not yet processed remain: 2 + 2
       bytes per logit, no fp32 copy (6 for the generic bf16-logits-plus-fp32-copy loss) */
    if (j->task == TP_TASK_DPO && j->framework == TP_FW_AXOLOTL &&
        j->loss_impl == TP_LOSS_DEFAULT && j->precision != TP_PREC_FP32)
        return elems * (2 + 2);
    enum tp_loss_impl impl = j->loss_impl;
    if (tp_mem_kbit_fp32(j, l) && impl == TP_LOSS_HF) /* the head itself returns fp32 logits */
        impl = TP_LOSS_HF_FP32_LOGITS;
    switch (impl) {
    case TP_LOSS_16BIT: return elems * 2 + tokens * 4;
    case TP_LOSS_HF: return elems * (2 + 4 + 4 + 4); /* at the log-softmax's backward */
    case TP_LOSS_HF_FP32_LOGITS: return elems * (4 + 4 + 4 + 4);
    case TP_LOSS_UPCAST:
        /* log-softmax output, its gradient in and out, fp32; no 16-bit logits (torchtitan
           deletes pred before backward, train.py).  Under torchtitan's loss parallelism (on
           whenever tp > 1: parallel_dims.py loss_parallel_enabled) DTensor's handler computes
           the backward as (grad_input + torch.exp(x)) * grad_output on the local shard
           (torch/distributed/tensor/parallel/loss.py _nll_loss_and_log_softmax_backward):
           the zeros_like grad_input, exp(x) and their sum are fp32 tensors alive at once
           beside the saved output, one more than aten's fused _log_softmax_backward_data */
        if (j->framework == TP_FW_TORCHTITAN && l->tp > 1)
            return elems * (4 + 4 + 4 + 4);
        return elems * (4 + 4 + 4);
    case TP_LOSS_DEFAULT:
    case TP_LOSS_CHUNKED: /* above */
        break;
    }
    return elems * (2 + 4);
}
