/*
 * moe_hf.c - what DeepSpeed ZeRO-3 costs per parameter tensor on the Hugging Face stack, where
 * an MoE model built with transformers 4.x holds every expert's projections as tensors of
 * their own (docs/moe.md, "The Hugging Face stack").
 *
 * Sources:
 *   [DS-Z3STEP] deepspeedai/DeepSpeed deepspeed/runtime/zero/stage3.py (master, 2026-08):
 *             _create_fp16_sub_groups cuts the trainable tensors into sub-groups of at least
 *             sub_group_size elements each, so sub_group_size 0 makes one sub-group per tensor;
 *             step() runs, per sub-group, _prepare_fp32_grad_for_sub_group (flatten, cast to
 *             fp32, then zero_grad(set_to_none=True), which walks every trainable tensor of
 *             every group), unscale_and_clip_grads, the optimizer's step,
 *             _reassign_or_swap_out_partitioned_parameters (copy back) and the release, after
 *             one norm per sub-group (_get_norm_groups).  Issue #8586 (2026-09): "the optimizer
 *             step clears gradients for every parameter in every sub-group, once per sub-group
 *             ... visits grows as sub-groups x parameters"; fixing it saved 197.34 ms of a
 *             399.78 ms optimizer step (GLM-4.5-Air, ZeRO-3, 4 x 8 H200); PR #8625 (open)
 *             brings the visits to P.
 *   [AX-Z3]   axolotl-ai-cloud/axolotl deepspeed_configs/zero3.json, zero3_bf16.json and the
 *             two cpuoffload variants: "sub_group_size": 0 since PR #1192 (2024-01-24), in every
 *             release since.  DeepSpeed's own default (runtime/zero/config.py) is 1e9 elements.
 *   [HF-MOE]  transformers models/qwen3_moe/modeling_qwen3_moe.py (4.51-4.57):
 *             Qwen3MoeSparseMoeBlock holds nn.ModuleList of num_experts Qwen3MoeMLP, three
 *             nn.Linear (gate_proj, up_proj, down_proj) each, no biases; the same layout in
 *             mixtral, qwen2_moe, olmoe, deepseek_v3 and the remote-code bailing_moe.
 *             transformers 5 packs the experts into 3-D parameters (one or two per block).
 *   [BAILING] inclusionAI/Ling-V2 models/modeling_bailing_moe_v2.py (2025-09-10, the remote code
 *             Ring-mini-2.0 loads with trust_remote_code), BailingMoeV2SparseMoeBlock.forward,
 *             training branch: hidden_states.repeat_interleave(num_experts_per_tok, dim=0), then
 *             for every expert `y[flat_topk_idx == i] = expert(hidden_states[flat_topk_idx == i])`
 *             over the repeated T*k rows (moe_infer, the sorted loop, runs in eval mode only).
 *             Both sides index with a boolean mask (aten::index and aten::index_put_, each a
 *             nonzero with a device-to-host sync).  Autograd (PyTorch
 *             tools/autograd/derivatives.yaml): index's backward is
 *             index_backward(grad.new_zeros(self.sizes()), ...), a zero tensor of all T*k rows
 *             per expert summed into the input's gradient; index_put_'s backward for self is
 *             grad.index_put(indices, zeros_like(values)), an out-of-place copy of all T*k rows
 *             per expert.
 *   [DS-HOOK] deepspeedai/DeepSpeed v0.17.1 (2025-06-09, the release of the mid-2025 runs):
 *             runtime/zero/stage_1_and_2.py create_gradient_handling_hooks registers a
 *             post-accumulate-grad hook on every trainable tensor (register_grad_hook); each
 *             fires once per micro-batch's backward: process_gradients ->
 *             reduce_ready_partitions_and_remove_grads (every micro-batch when gradients are
 *             partitioned, ZeRO-2) -> reduce_independent_p_g_buckets_and_remove_grads: two
 *             report_ipg_memory_usage calls that each format an f-string before
 *             see_memory_usage returns, the bucket and already-reduced checks, then
 *             ipg_buffer.narrow, new_grad_tensor.copy_(grad.view(-1)) and
 *             grad.data = new_grad_tensor.data.view_as(grad), the bucket's list appends and
 *             is_moe_param; stage3.py's reduce_partition_and_remove_grads does the same per
 *             tensor (its bucket's narrow, copy_ and view_as).  TensorAuto/OpenTau issue #177
 *             (2026-04): the per-parameter hook path made an 8-rank ZeRO-2 backward 3,442 ms
 *             against 665 ms under DDP on the same A100s, "entirely host-side".
 *   [DEV-2611] measured for this file (2026-11-28, one H200 host, Python 3.12.3, PyTorch
 *             2.11.0; docs/moe.md "What the Ring-mini-2.0 run executed"): DeepSpeed's
 *             zero_grad loop body over 15,000 and 19,000 nn.Parameter carrying ZeRO-3's ds_*
 *             attributes, 0.125 and 0.128 us per visit; one sub-group's step body
 *             (flatten and cast, clip multiply, torch AdamW on one 202k-element partition as the
 *             second of two param groups, copy back, unflatten, its norm) 0.28-0.29 ms; the
 *             [BAILING] training loop of one block (256 experts of 512, H 2048, top-8, bf16):
 *             forward 0.086/0.082/0.090 s and backward 0.178/0.339/1.823 s at 2k/16k/131k
 *             tokens, against 0.082/0.067/0.111 s and 0.088/0.095/0.199 s for [HF-MOE]'s loop.
 */
#include "time_internal.h"

#include <math.h>
#include <string.h>

/* One visit of the zero_grad loop [DS-Z3STEP]: a Python for-loop step, `if set_to_none`, a read
   of p.grad and a write of p.grad = None, both through PyTorch's C property with its
   __torch_function__ check on a Parameter.  No published per-visit time exists ([DS-Z3STEP]
   times the whole clear without its visit count); measured: 0.125-0.128 us [DEV-2611]. */
#define TP_Z3_VISIT_S 0.13e-6

/* One further sub-group's pass in step() [DS-Z3STEP]: its norm, the flatten and the cast to
   fp32, the unscale/clip multiply, the optimizer's update, the copy back to 16-bit and the
   unflatten.  Measured, host-bound: 0.28-0.29 ms per sub-group of a 202k-element partition
   [DEV-2611], which is 23 eager ops at the 12 us the eager_op_s prior holds; counted in those
   ops so that the calibrated host speed carries it (six device kernels, the count this had
   before the measurement, left the Python between them out). */
#define TP_Z3_SUBGROUP_OPS (0.28e-3 / 12e-6)

/* Host time of one gradient hook [DS-HOOK], in eager ops [derived, counted from the code]: the
   Python of the hook chain with its two formatted strings, about one op; narrow, view_as and
   the .data swap through the dispatcher, about one; the copy_ kernel's launch, one. */
#define TP_DS_HOOK_OPS 3.0

double tp_ds_grad_hook_s(const struct ctx *x)
{
    const struct tp_layout *l = x->l;
    if (l->zero < 2 || !tp_job_ds_zero(x->j) || x->frozen)
        return 0;
    return TP_DS_HOOK_OPS * x->cal->eager_op_s;
}

/* DeepSpeed's sub_group_size the stack's ZeRO-3 config sets: Axolotl's shipped files 0
   [AX-Z3], elsewhere DeepSpeed's default 1e9. */
static double sub_group_elements(const struct tp_job *j)
{
    return j->framework == TP_FW_AXOLOTL ? 0 : 1e9;
}

/* Whether the routed experts are one module per expert: transformers 4.x's loop [HF-MOE],
   except gpt-oss and llama4, which pack them into 3-D parameters already; grouped kernels
   (MegaBlocks, grouped GEMMs) hold them stacked too. */
static bool experts_unpacked(const struct tp_model *m, bool grouped)
{
    return !grouped && strcmp(m->family, "gpt_oss") != 0 && strcmp(m->family, "llama4") != 0;
}

double tp_hf_param_tensors(const struct tp_model *m, bool grouped)
{
    /* the checkpoint's tensor list (model/params.c), routed experts one per index where the
       modeling code builds one module per expert */
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    bool unpacked = experts_unpacked(m, grouped);
    double n = 0;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        size_t k = tp_block_tensors(m, l, t);
        for (size_t i = 0; i < k; i++)
            n += t[i].comp == TP_COMP_EXPERTS && unpacked ? t[i].count : 1;
    }
    return n + (double)tp_outer_tensors(m, t);
}

double tp_z3_subgroup_step_s(const struct ctx *x, double local_params)
{
    const struct tp_layout *l = x->l;
    const struct tp_job *j = x->j;
    if (l->zero != 3 || !tp_job_ds_zero(j) || x->frozen)
        return 0;
    double tensors = tp_hf_param_tensors(x->m, x->moe_impl == TP_MOE_GROUPED) / l->pp;
    double size = sub_group_elements(j);
    double groups = size > 0 ? ceil(local_params / size) : tensors;
    /* one sub-group is a plain optimizer step (its walk and kernels are the step every stack
       takes, priced with the optimizer); each further one repeats the set-up and, unless the
       optimizer is offloaded (the swap path, which does not clear [DS-Z3STEP]), the walk over
       all `tensors`: what issue #8586's fix saves is the (G - 1) x P extra visits */
    double extra = groups > 1 ? groups - 1 : 0;
    double walk = l->offload == TP_OFFLOAD_NONE ? tensors * TP_Z3_VISIT_S : 0;
    return extra * (walk + TP_Z3_SUBGROUP_OPS * x->cal->eager_op_s);
}

/* Whether the modeling code's training loop indexes the repeated T*k rows with boolean masks
   ([BAILING]: the remote-code bailing_moe of Ling/Ring 2.0) instead of gathering each expert's
   T rows by index ([HF-MOE]). */
static bool repeated_rows(const struct tp_model *m)
{
    return strcmp(m->family, "bailing_moe") == 0;
}

double tp_hf_loop_bwd_bytes(const struct tp_model *m, double tokens, double act_bytes)
{
    double full = tokens * m->hidden * act_bytes;
    /* [HF-MOE]: index's zeros over the T rows (a write) and their sum into the input's
       gradient (read, read, write).  [BAILING]: the same over T*k rows, plus index_put_'s copy
       of the output's gradient (a read and a write): 6 x T*k*H, which the block's measured
       backward shows (1.823 - 0.178 s over 256 experts of 4.3 GB at about 4.3 TB/s is 6.4 x;
       [HF-MOE]'s 0.199 - 0.088 s is 3.4 x T*H) [DEV-2611] */
    if (repeated_rows(m))
        return 6 * full * (m->top_k > 0 ? m->top_k : 1);
    return 4 * full;
}

double tp_hf_loop_bwd_syncs(const struct tp_model *m)
{
    /* [BAILING]'s backward indexes with the boolean masks again (each a nonzero and a sync);
       measured, its backward's host time per expert is about twice [HF-MOE]'s [DEV-2611] */
    return repeated_rows(m) ? 2 : 0;
}
