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
 */
#include "time_internal.h"

#include <math.h>
#include <string.h>

/* One visit of the zero_grad loop [DS-Z3STEP]: a Python for-loop step, `if set_to_none`, a read
   of p.grad and a write of p.grad = None, both through PyTorch's C property with its
   __torch_function__ check on a Parameter.  No published per-visit time exists ([DS-Z3STEP]
   times the whole clear without its visit count); 0.2 us is the order of two C-property calls
   and three interpreter steps (pytorch/pytorch#41383: ~1 us for the Python side of a whole
   tensor op, of which argument parsing is half) [estimate]. */
#define TP_Z3_VISIT_S 0.2e-6

/* Device kernels per sub-group in step() [DS-Z3STEP]: its norm, the flatten and the cast to fp32,
   the unscale/clip multiply, the optimizer's update, the copy back to 16-bit. */
#define TP_Z3_SUBGROUP_OPS 6.0

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
