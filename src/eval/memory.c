/*
 * memory.c - bytes per GPU for one pipeline stage: model states after TP/PP/EP and ZeRO
 * sharding, transient ZeRO-3 gathers, activations of the micro-batches in flight and logits
 * (mem_act.c), communication buckets and framework overhead.  Pure and allocation-free.
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

/* 4 bits per weight, an 8-bit absmax per block of 64 and an fp32 constant per 256 of those
   blocks (bitsandbytes' double quantization, [BNB]): 0.5 + 1/64 + 4/(64 x 256) B. */
double tp_nf4_weight_bytes(void)
{
    return 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
}

/* The bytes of one frozen GEMM weight of a LoRA run (tp_job.frozen_weights), 16 bits being
   `half`.  Transformer Engine's quantized tensors ([TE-QT] transformer_engine/pytorch/tensor/):
   Float8Tensor holds 1-byte data and one fp32 scale_inv per tensor; MXFP8Tensor and
   NVFP4Tensor hold `_rowwise_data` / `_columnwise_data`, each with its block scales
   (`_rowwise_scale_inv`, `_columnwise_scale_inv`), because their blocks run along one
   dimension and a GEMM needs them along its reduction dimension: the forward (Y = X W^T) reads
   the row-wise copy, the input's gradient (dX = dY W), which a frozen weight still computes,
   the column-wise one; the weight's quantizer asks for both while gradients are enabled
   ([TE-QT] module/base.py reset_parameters: quantizer.set_usage(rowwise=True,
   columnwise=torch.is_grad_enabled())).  MXFP8 ([OCP-MX] §5, the concrete formats): E4M3 +
   one E8M0 scale per 32 elements; NVFP4 ([NVFP4]): E2M1 (4 bits) +
   one E4M3 scale per 16 + one fp32 scale per tensor (tp_prec_saved_bytes gives one copy; the
   per-tensor scales are bytes per tensor, not per element).  MLPerf Training v5.1's NVIDIA
   llama2_70b_lora (PRE_QUANTIZED_MODEL=True: custom_callbacks.py _pre_quantize_model) replaces
   each TE Linear / LayerNormLinear weight by such an NVFP4 tensor with both copies.
   Tensor-wise FP8 stays 1 byte: Blackwell's GEMMs read the same data transposed, and Hopper's
   transpose (Float8Tensor's transpose cache) is built in the backward, a layer at a time. */
static double frozen_weight_bytes(const struct tp_job *j, double half)
{
    switch (j->frozen_weights) {
    case TP_FROZEN_16BIT:
        return half;
    case TP_FROZEN_FP8:
        return tp_prec_saved_bytes(TP_PREC_FP8);
    case TP_FROZEN_MXFP8:
        return 2 * tp_prec_saved_bytes(TP_PREC_MXFP8);
    case TP_FROZEN_NVFP4:
        return 2 * tp_prec_saved_bytes(TP_PREC_NVFP4);
    case TP_FROZEN_AUTO:
        break;
    }
    if (!j->fp8_param_gather)
        return half;
    return j->precision == TP_PREC_MXFP8 ? 2 * tp_prec_saved_bytes(TP_PREC_MXFP8)
                                         : tp_gemm_weight_bytes(j, half);
}

/* DeepSpeed's BF16_Optimizer ([DS-BF16] runtime/bf16_optimizer.py, v0.9.5 to v0.16): what
   DeepSpeed runs for bf16 without ZeRO (engine.py get_data_types: bf16 gradients accumulate in
   fp32 when ZeRO is off; _do_optimizer_sanity_check then returns BFLOAT16), Megatron-DeepSpeed's
   pipeline engine included (the stacks that always run DeepSpeed's engine: ds_engine).  Per
   parameter: the bf16 weights (bf16_groups_flat) and their bf16 .grad, which backward writes and clear_lp_grads frees only before the next backward (2 + 2); the
   fp32 gradient accumulators of every parameter, one flat buffer the size of the bf16 weights
   (fp32_groups_gradients_flat = torch.zeros_like(bf16_groups_flat, dtype=float32): 4, not
   partitioned, since every rank all-reduces them whole: _bf16_reduce_grads); the fp32 master
   weights of this rank's partition only (fp32_groups_flat_partition = bf16_dp_partitions
   [partition_id].clone().float(): 4 / dp) and the optimizer's states over that partition
   (the wrapped optimizer's param_groups hold the partition alone).  update_lp_params copies
   the partition back and all-gathers the bf16 weights in place.  2 + 2 + 4 + (4 + K) / dp. */
bool tp_ds_bf16_optimizer(const struct tp_job *j, uint32_t zero)
{
    /* the stacks DeepSpeed's engine always drives (Megatron-DeepSpeed: stack.c ds_engine); a
       Hugging Face row without ZeRO is plain DDP (accelerate without a DeepSpeed config) */
    return tp_stack_get(j->framework)->ds_engine && j->precision == TP_PREC_BF16 && zero == 0;
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
    if (tp_ds_bf16_optimizer(j, zero)) {
        /* BF16_Optimizer (above), Megatron-DeepSpeed's too: 16-bit and fp32 gradients whole,
           the fp32 master and the states over the data-parallel partition */
        g = half + 4;
        on = o + (master ? 0 : 4);
        o = 0;
    } else if (ds && zero == 0) {
        g += master; /* FP16_Optimizer's fp32 gradients beside the 16-bit ones */
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
            base -= sp.quantizable * (half - frozen_weight_bytes(j, half));
        if (j->task == TP_TASK_QLORA)
            base = (out->params - sp.quantizable) * (tp_mem_kbit_fp32(j, l) ? 4 : 2) +
                   sp.quantizable * tp_nf4_weight_bytes();
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
    if (adapters) /* the frozen weights only, their GEMMs' in their stored format */
        return half * unit -
               (j->task == TP_TASK_LORA ? gemm * (half - frozen_weight_bytes(j, half)) : 0);
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
    out->activations_bytes = tp_mem_activations(m, j, l, stage, &out->in_flight, &act_host);
    if (dualpipe) { /* pp + 1 micro-batches of its two stages' chunks, in equal numbers */
        double mirror_host, mirror_act = tp_mem_activations(m, j, l, mirror, &out->in_flight,
                                                     &mirror_host);
        out->activations_bytes = (out->activations_bytes + mirror_act) / 2;
        act_host = (act_host + mirror_host) / 2;
    }
    if (tp_mem_kbit_fp32(j, l)) { /* the saved tensors in 4 bytes, not 2 [derived] */
        out->activations_bytes *= 2;
        act_host *= 2;
    }
    out->host_bytes_per_node += act_host * c->gpus_per_node;
    if (stage == l->pp - 1 || (dualpipe && mirror == l->pp - 1))
        out->logits_bytes = tp_mem_logits(m, j, l);
    out->comm_bytes = tp_mem_framework_buffers(m, j, l) +
                      tp_mem_pipeline_buffers(m, j, l, stage, out->in_flight);
    /* the peak over the step (mem_timeline.c): the optimizer updates its shard of the stage */
    double shard = sp.dense / n_dense + sp.expert / (n_expert > 0 ? n_expert : 1);
    if (j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA)
        shard = j->framework == TP_FW_MEGATRON
                    ? (sp.lora - sp.lora_expert) / n_dense +
                          sp.lora_expert / (n_expert > 0 ? n_expert : 1)
                    : sp.lora / n_dense;
    if (l->zero == 0 && !tp_ds_bf16_optimizer(j, 0)) /* BF16_Optimizer steps its partition */
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
