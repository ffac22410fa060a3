/*
 * host_step.c - the host work of one training step beside the blocks (issue 36: the per-step
 * overhead made physical), counted per stack from the code each stack runs; host.c prices the
 * blocks' launches, host_ds.c DeepSpeed's engine under Megatron-DeepSpeed, host_log.c
 * Megatron's per-step logging flags.  What no count explains stays in the calibration's
 * residual step_overhead_s (time.c).
 *
 * Sources: [STEP-CODE] (docs/references.md).
 * Units: an eager op is eager_op_s (host.c); a drain (`.item()` of a CUDA tensor) is its call
 * and the launch the idle GPU then waits for, 2 eager ops (host_ds.c's measurement); a
 * collective called from Python is its launch and 3 eager ops beside it (host.c
 * TP_HOST_COLL_BESIDE_OPS) plus its NCCL latency.
 *
 * Multi-tensor kernels (apex csrc/multi_tensor_apply.cuh, Transformer Engine's copy in
 * common/multi_tensor/, PyTorch's aten/src/ATen/native/cuda/MultiTensorApply.cuh): one launch
 * takes at most depth_to_max_tensors[depth - 1] = {110, 64, 48, 36, 30} tensors and
 * depth_to_max_blocks = 320 chunks of 65,536 elements (apex's and TE's FusedAdam chunk
 * 2048 x 32; PyTorch's kChunkSize 65536); a launch is issued when either fills.  Adam runs at
 * depth 4 (gradient, parameter, m, v), the L2 norm at depth 1, the scale at depth 2.
 *
 * Counted per optimizer step and rank:
 *   megatron (Megatron-Core / NeMo / Megatron-Bridge; [MCORE-CI] megatron/training/training.py
 *     train_step, megatron/core/optimizer/optimizer.py MixedPrecisionOptimizer.step,
 *     distrib_optimizer.py, clip_grads.py):
 *     - the optimizer's own shard of the tensors (the distributed optimizer: 1/dp of them and
 *       the one its boundary splits): a Python walk per tensor, the gradient's view as the fp32
 *       main gradient (`.float()` of an fp32 main_grad: no kernel) and the parameter's copy
 *       back (_copy_main_params_to_model_params): 1 op per tensor;
 *     - FusedAdam over the shard (multi-tensor, depth 4), get_grad_norm_fp32 (multi_tensor_
 *       l2norm, depth 1; the square, an all-reduce over the model-parallel group, and
 *       `total_norm.item()`: a drain), clip_grad_by_total_norm_fp32 (multi_tensor_scale,
 *       depth 2);
 *     - train_step's `optimizer.get_loss_scale().item()` (training.py: a drain) and the
 *       grad buffers' zeroing (zero_grad_buffer: one launch per bucket, a bucket about 40 M
 *       parameters: ddp_config.bucket_size max(40,000,000, 1,000,000 x dp)).
 *     Under full-iteration CUDA graphs (--cuda-graph-impl full_iteration, megatron/core/
 *     full_cuda_graph.py FullCudaGraphWrapper): the forward-backward of every micro-batch is
 *     one replay, "excluding optimizer": the optimizer's counts above stay; beside them one
 *     graph launch and, per micro-batch, StaticBufferLoader's copies of the batch (tokens,
 *     labels, loss mask, position ids: 4 copies) into the static buffers.
 *   torchtitan (torchtitan/train.py Trainer.train_step, components/optimizer.py,
 *     distributed/utils.py clip_grad_norm_): torch.optim.AdamW with implementation "fused"
 *     (torch._fused_adamw_: multi-tensor, depth 4); clip_grad_norm_ with foreach
 *     (torch._foreach_norm, depth 1; stack, vector_norm, the DTensor's full_tensor: an
 *     all-reduce over the mesh; torch._foreach_mul_, depth 1; the clamp): no `.item()` outside
 *     the log steps (log_freq, default 10).
 *   fsdp, deepspeed, axolotl (torch.optim.AdamW's default foreach path on CUDA, torch/optim/
 *     adamw.py _multi_tensor_adamw: 11 foreach ops per group of tensors, each a multi-tensor
 *     launch over up to 110 (depth 1) / 64 (depth 2) tensors; the step counters' add; the
 *     trainers' clip_grad_norm_ as torchtitan's).  Not counted here: Composer's
 *     DecoupledAdamW (llm-foundry's default optimizer), which loops over the tensors in Python
 *     with a `.item()` per tensor (composer/optim/decoupled_weight_decay.py since PR #2237,
 *     2023-05), because a job does not say which trainer ran (docs/host.md, "The step beside
 *     the blocks").
 *   megatron-deepspeed: DeepSpeed's engine, host_ds.c.
 * Per micro-batch, on the last pipeline stage (tp_host_loss_checks): Megatron-Core's loss_func
 * (pretrain_gpt.py) runs rerun_state_machine.validate_result twice on the loss under
 * --check-for-nan-in-loss-and-grad (the default): torch.isnan and torch.isinf, each read back by
 * `if result_rejected:` (megatron/core/rerun_state_machine.py validate_result), a drain each.
 * A full-iteration graph cannot hold a host read: Megatron-Core requires
 * --no-check-for-nan-in-loss-and-grad with it, and the MLPerf and Megatron-Bridge recipes that
 * run it turn the check off, so under full graphs nothing is paid.
 * Each count's host time is exposed where the GPU has nothing queued: a drain and what follows
 * it (the graph's copies and replay come after the optimizer's drains) whole, the optimizer's
 * launches past its GPU time (the same rule as host.c's blocks).
 */
#include "time_internal.h"

#include <math.h>

#define MT_CHUNK 65536.0
#define MT_BLOCKS 320.0
/* StaticBufferLoader's copies per micro-batch: tokens, labels, loss mask, position ids */
#define GRAPH_BATCH_COPIES 4.0
/* validate_result calls on the loss per micro-batch: isnan, isinf */
#define LOSS_CHECKS 2.0

/* Launches of one multi-tensor op of `depth` lists over `tensors` tensors of `elems`
   elements in all (the header's rule). */
static double mt_launches(double tensors, double elems, unsigned depth)
{
    static const double MAX_TENSORS[] = {110, 64, 48, 36, 30};
    if (tensors <= 0)
        return 0;
    double by_t = ceil(tensors / MAX_TENSORS[depth - 1]);
    double by_c = ceil(elems / (MT_CHUNK * MT_BLOCKS));
    return fmax(1, fmax(by_t, by_c));
}

/* torch's clip_grad_norm_ with foreach over t tensors of p elements: _foreach_norm, stack,
   vector_norm, the all-reduce, clip_coef and its clamp, _foreach_mul_. */
static double clip_ops(double t, double p)
{
    return mt_launches(t, p, 1) + 2 + TP_HOST_COLL_OPS + 2 + mt_launches(t, p, 1);
}

double tp_host_step(const struct ctx *x, uint32_t stage, uint32_t blocks, double params,
                    double opt_gpu)
{
    const struct tp_job *j = x->j;
    const struct tp_layout *l = x->l;
    double op = x->cal->eager_op_s;
    double tensors = tp_host_stage_tensors(x, stage, blocks);
    bool sharded = l->zero >= 1 && l->dp > 1;
    double own_t = sharded ? tensors / l->dp + 1 : tensors;
    double own_p = sharded ? params / l->dp : params;
    double launches = 0, drains = 0, colls = 0, idle_ops = 0;
    switch (j->framework) {
    case TP_FW_MEGATRON: {
        double buckets = ceil(params / fmax(40e6, 1e6 * l->dp));
        launches = own_t + mt_launches(own_t, own_p, 4) + mt_launches(own_t, own_p, 1) + 1 +
                   mt_launches(own_t, own_p, 2) + buckets;
        drains = 2; /* the norm's .item() and the loss scale's */
        colls = 1;
        /* the batches' copies and the replay follow the optimizer's drains: the GPU is idle */
        if (j->cuda_graphs == TP_CUDA_GRAPHS_FULL)
            idle_ops = 1 + GRAPH_BATCH_COPIES * l->gas;
        break;
    }
    case TP_FW_TORCHTITAN:
        launches = mt_launches(own_t, own_p, 4) + clip_ops(own_t, own_p);
        break;
    case TP_FW_FSDP:
    case TP_FW_DEEPSPEED:
    case TP_FW_AXOLOTL:
        /* _multi_tensor_adamw: the step add, and 10 foreach ops at depth 1-2 */
        launches = mt_launches(own_t, own_p, 1) + 10 * mt_launches(own_t, own_p, 2) +
                   clip_ops(own_t, own_p);
        break;
    case TP_FW_MEGATRON_DS: /* host_ds.c */
    case TP_FW_COUNT:
        return 0;
    }
    double mp_allreduce = tp_host_small_allreduce(x, l->tp * l->pp, 1);
    double coll_host = colls * (TP_HOST_COLL_OPS * op + mp_allreduce);
    double host = launches * op;
    return fmax(0, host - opt_gpu) + (drains * TP_HOST_DRAIN_OPS + idle_ops) * op + coll_host;
}

double tp_host_loss_checks(const struct ctx *x)
{
    const struct tp_job *j = x->j;
    if (j->framework != TP_FW_MEGATRON || j->cuda_graphs == TP_CUDA_GRAPHS_FULL)
        return 0;
    return LOSS_CHECKS * TP_HOST_DRAIN_OPS * x->cal->eager_op_s;
}
