/*
 * memory.c - bytes per GPU for one pipeline stage: model states after TP/PP/EP and ZeRO
 * sharding, transient ZeRO-3 gathers, activations of the micro-batches in flight, logits,
 * communication buckets and framework overhead.  Pure and allocation-free.
 *
 * Sources (docs/physics.md §3): bytes per parameter [ZeRO] §3.1, [MEG-DO]; sharding [ZeRO]
 * §5.1 and [FSDP]; MoE expert-data-parallel groups [MEG-DO], [DS-MOE]; activations [KOR22] §4
 * generalised to the modern decoder (§3.7) and its TP/SP/CP splits; pipeline in-flight
 * micro-batches [KOR22] and [MEG-M]; QLoRA NF4 bytes [BNB]; LoRA [LoRA]; offload and host RAM
 * [DS-MEM]; overhead §3.8 [heuristic, explicit in struct tp_job]; an attention block's backward
 * buffers (torch's context-parallel ring, the fused kernel's workspace: mem_attn.c) and TRL's
 * chunked loss (trl/trainer/sft_trainer.py), docs/memory.md.
 */
#include "eval_internal.h"
#include "time_internal.h" /* tp_moe_load */

#include <math.h>
#include <string.h>

/* Megatron-Core fuses the query, key and value projections into one linear_qkv and a gated
   MLP's gate and up projections into one linear_fc1, the routed experts' too
   ([MEG-PEFT] megatron/core/models/gpt/gpt_layer_specs.py; megatron/core/transformer/mlp.py and
   moe/experts.py: fc1 of width 2 x ffn with gated_linear_unit), and an adapter wraps the fused
   module with a single lora_A over its input ([SWIFT-MCORE] swift/megatron/tuners/lora.py
   LoraParallelLinear.update_layer: lora_A in_features -> r, lora_B r -> out_features; NeMo's
   LoRA on linear_qkv / linear_fc1 alike).  A tensor fused behind a targeted one therefore adds
   only its share of lora_B, r x its output width. */
static bool lora_shares_input(const struct tp_model *m, const struct tp_tensor *t,
                              const struct tp_job *j)
{
    if (j->framework != TP_FW_MEGATRON)
        return false;
    uint32_t k = t->lora, on = j->lora_targets;
    return (k == TP_LORA_UP && (on & TP_LORA_GATE) && m->mlp == TP_MLP_GLU) ||
           (k == TP_LORA_K && (on & TP_LORA_Q)) ||
           (k == TP_LORA_V && (on & (TP_LORA_Q | TP_LORA_K)));
}

static void add_tensors(const struct tp_model *m, const struct tp_tensor *t, size_t n,
                        const struct tp_layout *l, const struct tp_job *j,
                        struct tp_shard_params *s, double *unit)
{
    for (size_t i = 0; i < n; i++) {
        double elems = (double)t[i].rows * (double)t[i].cols * t[i].count;
        double in = lora_shares_input(m, &t[i], j) ? 0 : (double)t[i].cols;
        double lora = j->lora_rank * ((double)t[i].rows + in) * t[i].count;
        double split;
        if (t[i].comp == TP_COMP_EXPERTS) {
            split = (double)l->ep * l->etp;
            s->expert += elems / split;
        } else {
            split = t[i].replicated ? 1.0 : (double)l->tp;
            s->dense += elems / split;
        }
        bool linear = t[i].cols > 1 && t[i].comp != TP_COMP_EMBEDDING &&
                      t[i].comp != TP_COMP_HEAD && t[i].comp != TP_COMP_POSITION;
        if (linear)
            s->quantizable += elems / split;
        if (linear && t[i].comp == TP_COMP_EXPERTS)
            s->quant_expert += elems / split;
        if (t[i].lora & j->lora_targets) {
            s->lora += lora / split;
            if (t[i].comp == TP_COMP_EXPERTS)
                s->lora_expert += lora / split;
        }
        *unit += elems / split;
    }
}

void tp_stage_params(const struct tp_model *m, const struct tp_job *j,
                         const struct tp_layout *l, uint32_t stage, struct tp_shard_params *s,
                         uint32_t *first, uint32_t *count)
{
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    memset(s, 0, sizeof *s);
    *first = UINT32_MAX;
    *count = 0;
    /* blocks differ only by their mixer and FFN (tp_block_kind): list each kind once */
    struct tp_shard_params kind[TP_BLOCK_KINDS];
    double kind_unit[TP_BLOCK_KINDS];
    bool have[TP_BLOCK_KINDS] = {false};
    uint32_t lo[TP_MAX_LAYERS], hi[TP_MAX_LAYERS];
    uint32_t ranges = tp_stage_ranges(m, l, stage, lo, hi);
    for (uint32_t r = 0; r < ranges; r++)
    for (uint32_t layer = lo[r]; layer < hi[r]; layer++) {
        if (*first == UINT32_MAX)
            *first = layer;
        (*count)++;
        unsigned k = tp_block_kind(m, layer);
        if (!have[k]) {
            memset(&kind[k], 0, sizeof kind[k]);
            kind_unit[k] = 0;
            add_tensors(m, t, tp_block_tensors(m, layer, t), l, j, &kind[k], &kind_unit[k]);
            have[k] = true;
        }
        s->dense += kind[k].dense;
        s->expert += kind[k].expert;
        s->quantizable += kind[k].quantizable;
        s->quant_expert += kind[k].quant_expert;
        s->lora += kind[k].lora;
        s->lora_expert += kind[k].lora_expert;
        if (kind_unit[k] > s->largest_block) {
            s->largest_block = kind_unit[k];
            s->largest_block_q = kind[k].quantizable;
        }
    }
    /* Outer tensors: the embedding on the first stage, the head on the last.  A tied head
       with pp > 1 keeps a copy of the embedding on the last stage (Megatron shares it by an
       all-reduce of the two copies' gradients). */
    size_t n = tp_outer_tensors(m, t);
    for (size_t i = 0; i < n; i++) {
        bool input = t[i].comp == TP_COMP_EMBEDDING || t[i].comp == TP_COMP_POSITION ||
                     (t[i].comp == TP_COMP_NORMS && strncmp(t[i].name, "embed", 5) == 0);
        bool keep = input ? stage == 0 : stage == l->pp - 1;
        double unit = 0;
        if (keep)
            add_tensors(m, &t[i], 1, l, j, s, &unit);
        if (m->tied && l->pp > 1 && t[i].comp == TP_COMP_EMBEDDING && stage == l->pp - 1)
            add_tensors(m, &t[i], 1, l, j, s, &unit);
        if (unit > s->largest_outer)
            s->largest_outer = unit;
    }
}

/* Model-state bytes per parameter (16-bit training; fp32 training doubles the 16-bit parts).
   `o` is the fp32 master copy plus the optimizer states.  Three conventions, switchable with
   the framework:
     ZeRO paper / FSDP ([ZeRO] §3.1, §5.1; [FSDP]):  2 + 2 + K, K = 4 + states
         stage 1: o sharded; stage 2 (SHARD_GRAD_OP): g, o sharded; stage 3 (FULL_SHARD): all.
         The Hugging Face stack on FSDP2 (fsdp_backend) counts the same 16 B: Accelerate
         upcasts the trainable weights to fp32 before fully_shard (fsdp_utils.py), so the fp32
         weights and gradients take the places of the 16-bit ones and the master copy
     DeepSpeed ([DS-MEM] estimators): stage 0 (BF16_Optimizer) adds fp32 gradients, 20 B;
         stages 1 and 2 (one implementation, stage_1_and_2.py) shard fp32 master, fp32
         gradients and states (4 + 4 + states); stage 1 keeps the 16-bit gradients whole
         (4 + 16/N), stage 2 only its partition of them (2 + 18/N: DeepSpeed's estimator since
         PR #5099, 2024-06); stage 3 shards 18 B = 2 + 16
     Megatron ([MEG-DO]): fp32 main gradients, 2 + 4 + K; the distributed optimizer (stage 1)
         shards K; with fp16 the fp32 main gradients move into the sharded part (2 + 2 + 16). */

double tp_optimizer_state_bytes(const struct tp_model *m, enum tp_optimizer o)
{
    return tp_optimizer_states(o) + (o == TP_OPT_ADAFACTOR ? 8.0 / (double)m->hidden : 0);
}

struct states {
    double w, g, o;
};

/* Adafactor's factored second moment: fp32 row and column statistics per matrix ([HF-ADAF]),
   about 8/H bytes per parameter of an H-wide matrix. */
static double adafactor_bytes_per_param(const struct tp_model *m)
{
    return 8.0 / (double)m->hidden;
}

/* Megatron-Core --fp8-param-gather: Transformer Engine's modules are built under
   fp8_model_init (megatron/training/training.py get_model; transformer_engine/pytorch/
   quantization.py), so each GEMM weight is a quantized tensor (Float8Tensor, MXFP8Tensor) whose
   bytes are the format's data plus its scales, and the distributed optimizer's parameter
   buffer holds those bytes (param_and_grad_buffer.py: param dtype uint8 for FP8 params); the
   norms, the embedding, the output layer and the router stay 16-bit.  The fp32 master weights
   are the optimizer's as before. */
double tp_gemm_weight_bytes(const struct tp_job *j, double half)
{
    return j->fp8_param_gather ? tp_prec_saved_bytes(j->precision) : half;
}

/* Adds the model states of `params` parameters sharded over `n` ranks. */
static void add_states(const struct tp_job *j, double extra_o, uint32_t zero, double params,
                       double n, struct states *st)
{
    double half = j->precision == TP_PREC_FP32 ? 4 : 2;      /* weights / 16-bit grads */
    double master = j->precision == TP_PREC_FP32 || j->optimizer == TP_OPT_ADAMW_BF16
                        ? 0 : 4;                             /* fp32 master copy */
    double k = master + tp_optimizer_states(j->optimizer) + extra_o;
    double w = half, g = half, wn = 0, gn = 0, on = k;       /* unsharded / sharded parts */
    double o = 0;
    if (j->framework == TP_FW_MEGATRON || j->framework == TP_FW_MEGATRON_DS) {
        g = j->precision == TP_PREC_FP16 || j->grad_16bit ? 2 : 4;
        if (j->precision == TP_PREC_FP16)
            on += 4;
    }
    if (zero >= 1) {
        o = 0;
    } else {
        o = on;
        on = 0;
    }
    /* DeepSpeed's own optimizers (Megatron-DeepSpeed keeps Megatron's main gradients, above) */
    bool ds = tp_job_ds_zero(j) && j->framework != TP_FW_MEGATRON_DS;
    if (ds && zero == 0) {
        g += master; /* BF16_Optimizer keeps fp32 gradients beside the 16-bit ones */
    } else if (ds && (zero == 1 || zero == 2)) {
        /* stage_1_and_2.py: each rank keeps an fp32 gradient partition for its optimizer
           shard.  Stage 1 accumulates the 16-bit gradients whole; stage 2
           (partition_gradients) clears every gradient outside the rank's partition once its
           bucket is reduced (clear_grad_attribute) and copies its own into the 16-bit
           grads_in_partition buffer (copy_grads_in_partition) */
        gn = master;
        if (zero == 2) {
            gn += g;
            g = 0;
        }
    } else if (zero == 2) {
        gn = g;
        g = 0;
    } else if (zero >= 3) {
        wn = w;
        gn = ds ? master : g;
        w = g = 0;
    }
    st->w += params * (w + wn / n);
    st->g += params * (g + gn / n);
    st->o += params * (o + on / n);
}

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
                                          const struct tp_layout *l, uint32_t layer, uint32_t rc)
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
    double glu = m->mlp == TP_MLP_GLU ? (eager_glu(j) ? 6.0 : 4.0) + fc2 : 2.0 + fc2;
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
    /* the busiest rank's routed copies: its skew, capped by an unpadded capacity factor (the
       buffers are sized by what arrives: token_dispatcher.py num_out_tokens), the factor when
       padded */
    double load = tp_moe_load(j, m, l);
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

static double activations(const struct tp_model *m, const struct tp_job *j,
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
    uint32_t lo[TP_MAX_LAYERS], hi[TP_MAX_LAYERS];
    uint32_t ranges = tp_stage_ranges(m, l, stage, lo, hi);
    for (uint32_t r = 0; r < ranges; r++)
    for (uint32_t layer = lo[r]; layer < hi[r]; layer++) {
        unsigned k = tp_block_kind(m, layer);
        if (!have[k]) {
            struct act_terms kind = block_activations(m, j, l, layer, rc);
            struct act_terms whole = block_activations(m, j, l, layer, 0);
            full_k[k] = act_bytes(kind, l, (rc & TP_RC_CORE_ATTN) != 0);
            back_k[k] = act_bytes(whole, l, (rc & TP_RC_CORE_ATTN) != 0) - full_k[k];
            whole_k[k] = act_bytes(whole, l, false);
            /* the block without its FFN: what a rebuilt block holds at its attention's backward */
            attn_k[k] = act_bytes(block_activations(m, j, l, layer,
                                                    TP_RC_MLP | TP_RC_MOE | TP_RC_SHARED),
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
static bool kbit_fp32(const struct tp_job *j, const struct tp_layout *l)
{
    return j->task == TP_TASK_QLORA && j->kbit_fp32 && l->zero < 3;
}

static double logits(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l)
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
    if (j->fused_loss)
        return elems * 2 / 8;
    enum tp_loss_impl impl = j->loss_impl;
    if (kbit_fp32(j, l) && impl == TP_LOSS_HF) /* the head itself returns fp32 logits */
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

/* The model states of a stage on its GPU (16-bit weights, gradients, optimizer states)
   sharded over n_dense / n_expert ranks, and what offload moves to the host. */
static void stage_states(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l,
                         const struct tp_shard_params *spp, double n_dense, double n_expert,
                         struct tp_memory *out)
{
    const struct tp_shard_params sp = *spp;
    double extra_o = j->optimizer == TP_OPT_ADAFACTOR ? adafactor_bytes_per_param(m) : 0;
    double half = j->precision == TP_PREC_FP32 ? 4 : 2;
    struct states st = {0, 0, 0};
    bool adapters = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    if (adapters) {
        /* frozen base: 16-bit, or NF4 with double-quantized constants for the linear weights
           (0.5 + 1/64 + 4/(64*256) B/param; embeddings, head and norms stay 16-bit) [BNB] */
        double base = out->params * half;
        /* ... whose GEMM weights are FP8 when the job keeps FP8 parameters: NeMo's PEFT
           fp8_params / Megatron-Core fp8_param_gather build the frozen linears under Transformer
           Engine's fp8_model_init (tp_gemm_weight_bytes), so each is the format's bytes plus
           its scales, with no 16-bit copy beside it (no master weights: nothing trains) */
        if (j->task == TP_TASK_LORA)
            base -= sp.quantizable * (half - tp_gemm_weight_bytes(j, half));
        if (j->task == TP_TASK_QLORA)
            base = (out->params - sp.quantizable) * (kbit_fp32(j, l) ? 4 : 2) +
                   sp.quantizable * (0.5 + 1.0 / 64 + 4.0 / (64 * 256));
        st.w = l->zero >= 3 ? base / n_dense : base;
        /* adapters: fp32 weights and gradients plus Adam m and v, 16 B/param ([LoRA];
           docs/physics.md §3.6) */
        struct tp_job aj = *j;
        aj.precision = TP_PREC_FP32;
        aj.framework = TP_FW_FSDP;
        if (j->framework == TP_FW_MEGATRON && j->precision != TP_PREC_FP32) {
            /* Megatron ([SWIFT-MCORE] swift/megatron/tuners/lora.py, NeMo/Megatron-Bridge
               PEFT): the adapters are injected inside the model provider
               ([SWIFT-MCORE] swift/megatron/trainers/base.py setup_model_and_optimizer:
               new_model_provider_func calls prepare_mcore_model), before get_model wraps the
               model in Float16Module, whose __init__ casts every parameter with
               module.bfloat16() ([MEG-PEFT] megatron/core/transformer/module.py): the adapters
               train as the base does, 16-bit weights, fp32 main gradients in DDP's buffer, and
               the distributed optimizer's fp32 master and Adam states, 2 + 4 + 12 B.  DDP puts
               the expert parameters in buffers of their own over the expert-data-parallel group
               ([MEG-PEFT] distributed_data_parallel.py: expert_parallel_buffers), so the
               routed experts' adapters shard over n_expert, not n_dense */
            aj = *j;
            add_states(&aj, extra_o, l->zero, sp.lora - sp.lora_expert, n_dense, &st);
            add_states(&aj, extra_o, l->zero, sp.lora_expert, n_expert, &st);
        } else {
            add_states(&aj, extra_o, l->zero, sp.lora, n_dense, &st);
        }
    } else {
        add_states(j, extra_o, l->zero, sp.dense, n_dense, &st);
        add_states(j, extra_o, l->zero, sp.expert, n_expert, &st);
        /* FP8 GEMM weights: what they save on the 16-bit copy, sharded as the weights are */
        double saved = half - tp_gemm_weight_bytes(j, half);
        st.w -= saved * ((sp.quantizable - sp.quant_expert) / (l->zero >= 3 ? n_dense : 1) +
                         sp.quant_expert / (l->zero >= 3 ? n_expert : 1));
        if (j->task == TP_TASK_DPO) /* frozen reference policy: weights only, sharded alike */
            st.w += half * (sp.dense / (l->zero >= 3 ? n_dense : 1) +
                            sp.expert / (l->zero >= 3 ? n_expert : 1));
    }
    double w = st.w, g = st.g, o = st.o;
    if (l->offload != TP_OFFLOAD_NONE && j->framework == TP_FW_MEGATRON) {
        /* Megatron-Core --optimizer-cpu-offload (HybridDeviceOptimizer) moves the distributed
           optimizer's shard only: DDP's gradient buffer stays on the GPU, and the step copies
           this rank's share of it into pinned host tensors (cpu_offloading/hybrid_optimizer.py
           _set_sub_optimizer_grads), fp32 as the host copy of the master weights */
        double shard = sp.dense / n_dense + sp.expert / (n_expert ? n_expert : 1);
        out->host_bytes_per_node = (4 * shard + o) * c->gpus_per_node;
        o = 0;
    } else if (l->offload != TP_OFFLOAD_NONE) {
        /* ZeRO-Offload: fp32 master, states and gradients live on the host; ZeRO-Infinity
           (params) moves the sharded weights too */
        out->host_bytes_per_node = (g + o) * c->gpus_per_node;
        g = 0;
        o = 0;
        if (l->offload == TP_OFFLOAD_PARAMS) {
            out->host_bytes_per_node += w * c->gpus_per_node;
            w = 0;
        }
        out->host_bytes_per_node *= 1.5; /* [DS-MEM] additional buffer factor */
    }
    out->weights_bytes = w;
    out->grads_bytes = g;
    out->optimizer_bytes = o;
}

/* ZeRO-3/FSDP: the unit being computed is gathered whole (16-bit weights and gradients,
   [DS-MEM]); a block is prefetched while the previous one computes [derived]; the embedding
   and the head are units of their own. */
static double gathered_bytes(const struct tp_job *j, const struct tp_layout *l,
                             const struct tp_shard_params *sp, double params)
{
    if (l->zero < 3)
        return 0;
    double half = j->precision == TP_PREC_FP32 ? 4 : 2;
    bool adapters = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
    bool block = 2 * sp->largest_block > sp->largest_outer;
    double unit = block ? 2 * sp->largest_block : sp->largest_outer;
    double gemm = block ? 2 * sp->largest_block_q : 0; /* the embedding and head: 16-bit */
    /* FSDP under pipeline parallelism does not reshard between micro-batches (torchtitan sets
       reshard_after_forward=False with PP): the stage's weights stay gathered and its
       gradients accumulate unsharded until the step ends */
    bool fsdp = j->framework == TP_FW_FSDP || j->framework == TP_FW_TORCHTITAN;
    double grad = half;
    if (fsdp && l->pp > 1) {
        unit = params;
        gemm = sp->quantizable;
        /* ... in the reduce dtype: the pipeline schedule turns gradient sync off for all but
           the last micro-batch (torch/distributed/pipelining/stage.py backward_maybe_with_nosync:
           set_requires_gradient_sync), and FSDP2 then accumulates the unsharded gradient
           upcast to MixedPrecisionPolicy.reduce_dtype (_fsdp_param.py
           to_accumulated_grad_if_needed), fp32 where the stack reduces in fp32 (torchtitan's
           mixed_precision_reduce "float32") */
        if (tp_stack_get(j->framework)->fp32_grad_reduce && !j->grad_16bit && !adapters)
            grad = 4;
    }
    double fp8_saved = half - tp_gemm_weight_bytes(j, half); /* per GEMM weight */
    if (adapters) /* the frozen weights only, their GEMMs' in FP8 under fp8_param_gather */
        return half * unit - (j->task == TP_TASK_LORA ? gemm * fp8_saved : 0);
    /* gradients, and the weights with the GEMMs' in their FP8 format (fp8_param_gather:
       Megatron-FSDP and torch FSDP2 gather the quantized shards) */
    return (half + grad) * unit - gemm * fp8_saved;
}

/* One stage of a checked run. */
static void stage_memory(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l, uint32_t stage,
                         struct tp_memory *out)
{
    memset(out, 0, sizeof *out);
    struct tp_shard_params sp;
    tp_stage_params(m, j, l, stage, &sp, &out->first_layer, &out->n_layers);
    out->stage = stage;
    out->params = sp.dense + sp.expert;

    double n_dense = l->shard_group ? l->shard_group : (double)l->dp * l->cp;
    double n_expert = (double)l->tp * l->cp * l->dp / ((double)l->ep * l->etp);
    if (l->shard_group && l->shard_group < n_expert)
        n_expert = l->shard_group;
    stage_states(m, c, j, l, &sp, n_dense, n_expert, out);
    uint32_t mirror = l->pp - 1 - stage;
    bool dualpipe = l->schedule == TP_SCHED_DUALPIPE && l->pp > 1;
    if (dualpipe) {
        /* DualPipe's two copies of the parameters (DeepSeek-V3 report Table 2: "2x"): rank s
           holds stage s and stage pp - 1 - s, each with its gradients (the embedding and the
           head on the same rank, §3.2.1); what a ZeRO stage shards spreads over the 2 x dp
           ranks holding a copy of a stage, so per rank it is the sum over its two stages
           halved */
        struct tp_shard_params msp;
        struct tp_memory mo;
        uint32_t first, count;
        tp_stage_params(m, j, l, mirror, &msp, &first, &count);
        memset(&mo, 0, sizeof mo);
        mo.params = msp.dense + msp.expert;
        stage_states(m, c, j, l, &msp, n_dense, n_expert, &mo);
        out->weights_bytes = (out->weights_bytes + mo.weights_bytes) / (l->zero >= 3 ? 2 : 1);
        out->grads_bytes = (out->grads_bytes + mo.grads_bytes) / (l->zero >= 2 ? 2 : 1);
        out->optimizer_bytes = (out->optimizer_bytes + mo.optimizer_bytes) /
                               (l->zero >= 1 ? 2 : 1);
        out->host_bytes_per_node = (out->host_bytes_per_node + mo.host_bytes_per_node) / 2;
    }
    /* ZeRO++ hpZ: the secondary partition, the weights over the hpZ group, 16-bit (int8 with
       qwZ) (partition_parameters.py _partition_param_sec) */
    if (l->zero == 3 && l->hpz > 1)
        out->weights_bytes += out->params * (j->zero_quant_weights ? 1 : 2) / l->hpz;
    out->gather_bytes = gathered_bytes(j, l, &sp, out->params);

    double act_host;
    out->activations_bytes = activations(m, j, l, stage, &out->in_flight, &act_host);
    if (dualpipe) { /* pp + 1 micro-batches of its two stages' chunks, in equal numbers */
        double mirror_host, mirror_act = activations(m, j, l, mirror, &out->in_flight,
                                                     &mirror_host);
        out->activations_bytes = (out->activations_bytes + mirror_act) / 2;
        act_host = (act_host + mirror_host) / 2;
    }
    if (kbit_fp32(j, l)) { /* the saved tensors in 4 bytes, not 2 [derived] */
        out->activations_bytes *= 2;
        act_host *= 2;
    }
    out->host_bytes_per_node += act_host * c->gpus_per_node;
    if (stage == l->pp - 1 || (dualpipe && mirror == l->pp - 1))
        out->logits_bytes = logits(m, j, l);
    out->comm_bytes = tp_mem_framework_buffers(m, j, l) +
                      tp_mem_pipeline_buffers(m, j, l, stage, out->in_flight);
    /* the peak over the step (mem_timeline.c): the optimizer updates its shard of the stage */
    double shard = sp.dense / n_dense + sp.expert / (n_expert > 0 ? n_expert : 1);
    if (j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA)
        shard = j->framework == TP_FW_MEGATRON
                    ? (sp.lora - sp.lora_expert) / n_dense +
                          sp.lora_expert / (n_expert > 0 ? n_expert : 1)
                    : sp.lora / n_dense;
    if (l->zero == 0)
        shard = j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA ? sp.lora : out->params;
    tp_mem_timeline(j, l, shard, out);
    /* what the allocator splits and frees: the states, the activations and the logits (the
       logits are activations to the allocator too); then the context and NCCL (mem_runtime.c) */
    double w = out->weights_bytes, g = out->grads_bytes, o = out->optimizer_bytes;
    tp_mem_runtime(j, l, w + g + o + out->activations_bytes + out->logits_bytes, out);
    out->reserved_bytes = out->allocated_bytes + out->allocator_bytes;
    out->device_bytes = out->reserved_bytes + out->context_bytes + out->nccl_bytes;
    out->total_bytes = out->device_bytes;
    out->capacity_bytes = c->gpu.hbm_bytes;
    out->headroom_bytes = out->capacity_bytes - out->total_bytes;
    out->fits = out->headroom_bytes >= 0;
    out->margin = tp_memory_margin(j, &out->margin_class);
    out->verdict = tp_memory_verdict(out->total_bytes, out->capacity_bytes, out->margin);
}

enum tp_status tp_memory_stage(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_layout *l, uint32_t stage,
                               struct tp_memory *out)
{
    if (tp_run_check(m, c, j, l, NULL, NULL) != TP_OK || stage >= l->pp) {
        memset(out, 0, sizeof *out);
        out->total_bytes = out->headroom_bytes = NAN;
        return TP_EINVAL;
    }
    stage_memory(m, c, j, l, stage, out);
    return TP_OK;
}

/* The run is checked once, not once per stage, and a stage that repeats the one before is
   skipped (a 126-stage pipeline of a 126-block model checked its shape 126 times and priced
   124 identical stages). */
enum tp_status tp_memory_worst(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_layout *l,
                               struct tp_memory *out)
{
    struct tp_memory cur;
    TRY(tp_memory_stage(m, c, j, l, 0, out));
    for (uint32_t s = 1; s < l->pp; s++) {
        /* a middle stage holding the blocks of the one before, in their order, holds as
           much per micro-batch and no more micro-batches (in_flight never grows with the
           stage): it cannot be the worst */
        if (tp_stage_same_blocks(m, l, s))
            continue;
        stage_memory(m, c, j, l, s, &cur);
        if (cur.total_bytes > out->total_bytes)
            *out = cur;
    }
    return TP_OK;
}
