/*
 * mem_timeline.c - the peak over one optimizer step, not a sum: the allocated memory at the
 * start of the last backward and at the optimizer step, and the larger of the two
 * (docs/memory.md "The step's timeline").  Pure and allocation-free.
 *
 * The phases, in the order a steady-state step meets them:
 *   forward      the weights, gradients (accumulated, or None after zero_grad(set_to_none),
 *                PyTorch's default since 2.0) and optimizer states, the gathered ZeRO-3/FSDP
 *                units and the activations as they are saved;
 *   loss         the logits and the loss's fp32 copy on top of every saved activation;
 *   backward     its start is the peak of the two: every activation and the logits' gradient
 *                are alive, and recompute rebuilds one block at a time beside them (the
 *                activations' working term); the backward then frees activations faster than
 *                it writes gradients;
 *   optimizer    no activations, but the update's temporaries: torch.optim.AdamW's foreach
 *                implementation (the default on CUDA; torch/optim/adamw.py _multi_tensor_adamw)
 *                materialises sqrt(v) for the whole parameter list (torch._foreach_sqrt, one
 *                fp32 tensor per parameter); the fused kernels (apex / Transformer Engine
 *                FusedAdam in Megatron-LM and DeepSpeed, torchtitan's default
 *                implementation = "fused", bitsandbytes' 8-bit AdamW) update in place;
 *                gradient clipping's foreach norms are one scalar per tensor, and fp16's
 *                GradScaler unscales in place (torch._amp_foreach_non_finite_check_and_unscale_);
 *                the fp32 master weights and DeepSpeed's / Megatron's fp32 gradient partitions
 *                are states already counted.
 * The first step allocates the optimizer states lazily at its optimizer phase, after a backward
 * that ran without them: its peak is no higher than a later step's (it moves the reserved pool,
 * mem_runtime.c).
 */
#include "eval_internal.h"

/* Bytes of the optimizer step's temporaries on a GPU that updates `shard` parameters. */
double tp_mem_step_temporaries(const struct tp_job *j, const struct tp_layout *l, double shard)
{
    if (l->offload != TP_OFFLOAD_NONE) /* the host's CPU Adam updates the states */
        return 0;
    if (j->optimizer != TP_OPT_ADAMW && j->optimizer != TP_OPT_ADAMW_BF16)
        return 0;
    switch (j->framework) {
    case TP_FW_FSDP:      /* torch.optim.AdamW, foreach */
    case TP_FW_AXOLOTL: { /* the Hugging Face Trainer's adamw_torch: the same optimizer, which
                             DeepSpeed wraps as a client optimizer; ZeRO-3 steps it one
                             sub-group at a time (sub_group_size, default 1e9 elements:
                             deepspeed/runtime/zero/config.py line 168) */
        double n = l->zero >= 3 && tp_job_ds_zero(j) && shard > 1e9 ? 1e9 : shard;
        return (j->optimizer == TP_OPT_ADAMW ? 4.0 : 2.0) * n;
    }
    default:              /* fused, in place */
        return 0;
    }
}

/* Sets the timeline of `out` (weights, gradients, optimizer, gather, activations, logits and
   comm set) and its allocated peak; `shard` is the parameters this GPU's optimizer updates. */
void tp_mem_timeline(const struct tp_job *j, const struct tp_layout *l, double shard,
                     struct tp_memory *out)
{
    double states = out->weights_bytes + out->grads_bytes + out->optimizer_bytes;
    out->backward_bytes = states + out->gather_bytes + out->activations_bytes +
                          out->logits_bytes + out->comm_bytes;
    out->step_temp_bytes = tp_mem_step_temporaries(j, l, shard);
    out->optimizer_step_bytes = states + out->step_temp_bytes + out->comm_bytes;
    bool step = out->optimizer_step_bytes > out->backward_bytes;
    out->peak_phase = step ? TP_PHASE_OPTIMIZER : TP_PHASE_BACKWARD;
    out->allocated_bytes = step ? out->optimizer_step_bytes : out->backward_bytes;
}
