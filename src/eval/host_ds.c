/*
 * host_ds.c - the host and synchronization work of DeepSpeed's engine under Megatron-DeepSpeed
 * (`--framework megatron-deepspeed`): what each micro-batch and each optimizer step does
 * beside the blocks' kernels (host.c prices those), read from the code the Megatron-DeepSpeed
 * example rows ran ([MDS-CODE] microsoft/Megatron-DeepSpeed at 7f7cea32 / c08e2cc2, 2023, on
 * [DS-CODE] microsoft/DeepSpeed v0.9.5, the release its rebase README names).  Every count is
 * taken from the code; its price is in eager ops (eager_op_s, host.c) except where a
 * collective's NCCL latency and bytes run on the GPU.
 *
 * A drain (`torch.cuda.synchronize()`, `.tolist()` / `.item()` / `float()` of a CUDA tensor,
 * a CUDA tensor built from a Python list: a pageable copy that PyTorch's non-blocking=False
 * copy follows with cudaStreamSynchronize) empties the GPU's queue: the host waits for the GPU,
 * then the GPU waits for the host's next launch.  Each drain costs its own call and the launch
 * the idle GPU waits for: 2 eager ops [measured: torch 2.11 on an H200 host, `torch.cuda.
 * synchronize()` on an idle device 8 us, `torch.tensor(0.0, device="cuda")` 17.5 us,
 * `float(x.float().sum())` 26 us, one in-place launch 10 us; docs/host.md gives the script].
 * Host work between a drain and the next kernel is exposed whole: the GPU has nothing queued.
 *
 * Per micro-batch, on every stage:
 *   - DeepSpeed's ThroughputTimer.start() (deepspeed/utils/timer.py) calls
 *     get_accelerator().synchronize() unconditionally once past its start_step (2); it runs at
 *     every micro-batch's forward: PipelineEngine._exec_forward_pass (runtime/pipe/engine.py)
 *     and, without the pipeline engine, DeepSpeedEngine.forward whenever the engine has no
 *     training dataloader of its own (runtime/engine.py: `if self.training_dataloader is
 *     None: self.tput_timer.start()`), which is Megatron's case: it passes its own iterator.
 *     One drain per micro-batch [counted].
 *   - Without the pipeline engine: loss_func (pretrain_gpt.py) averages the loss over the
 *     data-parallel group every micro-batch (average_losses_across_data_parallel_group: a cat,
 *     an all-reduce, a divide) [counted].
 * With the pipeline engine and TP > 1 (is_pipe_partitioned = is_grad_partitioned = TP > 1,
 * runtime/pipe/engine.py __init__), activations and their gradients travel as a
 * PartitionedTensor (runtime/utils.py): the sender splits the tensor over the TP ranks (a
 * narrow-clone) and encodes its layout with to_meta(): torch.LongTensor(meta).to(device), a
 * pageable copy and a drain; the receiver reads the layout back with from_meta(): meta.tolist(),
 * a drain, and rebuilds the tensor with full(): torch.zeros, a copy and an all-gather over the
 * TP group.  Per micro-batch [counted]:
 *   - forward, a stage with a next stage: one partition and to_meta (1 drain), 2 p2p sends
 *     (meta and data);
 *   - forward, a stage with a previous stage: 2 p2p receives and their clones, from_meta
 *     (1 drain), full() (2 launches and an all-gather);
 *   - backward, a stage with a next stage: 2 p2p receives, from_meta of the kept output and
 *     of the received gradient (2 drains), full() of each (2 x (2 launches + all-gather));
 *   - backward, a stage with a previous stage: partition and to_meta of the input's gradient
 *     (1 drain), 2 p2p sends.
 * Each p2p call and all-gather is a collective called from Python (TP_HOST_COLL_BESIDE_OPS
 * beside its launch, host.c); DeepSpeed v0.9.5's p2p.send/recv are
 * torch.distributed.send/recv wherever torch >= 1.8 (p2p.py can_send_recv), not the 2-rank broadcasts of its first versions.  The
 * p2p's own NCCL time is the pipeline's (time.c); the all-gathers' latency and bytes are here.
 * Not priced: the pipeline meta-data exchange of the first micro-batch (_send_tensor_meta:
 * once per run), _exec_reduce_tied_grads and _aggregate_total_loss (once per step: two small
 * collectives each).
 *
 * Per optimizer step, by the optimizer wrapper DeepSpeed picks (runtime/engine.py
 * _do_optimizer_sanity_check / _configure_optimizer):
 *   - ZeRO 0 in fp16: FP16_Optimizer (runtime/fp16/fused_optimizer.py) checks every 16-bit
 *     gradient for overflow: CheckOverflow.has_overflow_serial -> _has_inf_or_nan:
 *     `float(x.float().sum())` per tensor, a copy to fp32, a sum and a drain (runtime/utils.py),
 *     then the flag's all-reduce over the TP group; its norm is the flat fp32 buffer's (one
 *     tensor).
 *   - ZeRO 0 in bf16 runs BF16_Optimizer (runtime/bf16_optimizer.py, since v0.6.2, "bf16+
 *     pipeline parallelism" #1801): engine.py get_data_types accumulates bf16 gradients in fp32
 *     when ZeRO is off, and _do_optimizer_sanity_check then picks BFLOAT16.  ZeRO 1 in bf16
 *     keeps DeepSpeedZeroOptimizer with bf16 gradients unless the config sets grad_accum_dtype
 *     fp32 (v0.9.5's pipeline engine still sent every bf16 run to _bf16_reduce_grads, which
 *     only BF16_Optimizer serves; v0.14 asks `using_bf16_optimizer`): priced as ZeRO 1.  No
 *     loss scaler, no overflow probe; its
 *     step() takes get_global_norm_of_tensors (runtime/utils.py): `t.data.float().norm()
 *     .item()` per fp32 gradient tensor of the rank (a launch and a drain: 3 ops; 4 bytes per
 *     element read), a FloatTensor built from a list (a drain), its all-reduce and `.item()`;
 *     then clear_hp_grads zeroes the flat fp32 gradients (4 bytes per element written).
 *   - ZeRO 1 and 2 (DeepSpeedZeroOptimizer, runtime/zero/stage_1_and_2.py, any 16-bit type):
 *     step() -> check_overflow() -> has_overflow(partition_gradients=True) ->
 *     has_overflow_partitioned_grads_serial: the same probe per gradient of the rank's
 *     partition, the flag's all-reduce over DP and TP and `.item()`; then
 *     get_grad_norm_direct: `g.data.double().norm(2)` and `.item()` per gradient of the
 *     partition, the sum all-reduced over DP and TP and read with `.item()`.
 *   - ZeRO 3's optimizer (stage3.py) is another code path: not priced here.
 *   Each tensor costs 3 eager ops on the host (two launches and the drain) and its bytes on the
 *   GPU: the fp32 copy and the sum read 2 + 4 and write 4 bytes per element (10); the double
 *   copy and its norm 2 + 8 + 8 (18).  The tensors: Megatron's legacy GPT block holds 12
 *   (two LayerNorms' weight and bias, QKV, projection, fc1 and fc2 weight and bias:
 *   megatron/model/transformer.py), the first stage the word and position embeddings (2),
 *   the last the final LayerNorm (2) and, under the pipeline engine, the tied embedding (1).
 *
 * On the GPU, per micro-batch (tp_host_ds_grad_accum; the stack's ds_engine property):
 *   - Megatron-DeepSpeed computes each weight gradient as a new tensor: its
 *     LinearWithGradAccumulationAndAsyncCommunication.backward has the gradient-accumulation
 *     fusion commented out ("TODO: temporary commented", megatron/core/tensor_parallel/
 *     layers.py at c08e2cc2: `grad_weight = grad_output.t().matmul(total_input)`), and no
 *     Megatron DDP main_grad exists under DeepSpeed's engine.  Autograd's AccumulateGrad adds it
 *     into the parameter's 16-bit .grad from the second micro-batch of a step on (ZeRO 0 in fp16,
 *     ZeRO 1 in any 16-bit type: stage_1_and_2.py registers no reduce hooks at stage 1 unless
 *     overlap_comm, whose default is stage 3 only, zero/config.py overlap_comm_valid): read the
 *     new and the old gradient, write the sum, 3 x 2 bytes per parameter [counted].
 *   - BF16_Optimizer (above): the pipeline engine clears the 16-bit gradients before every
 *     backward and calls update_hp_grads after it (pipe/engine.py _exec_backward_pass; without
 *     the pipeline, BF16_Optimizer.backward does the same), which
 *     per tensor does `hp_grad.add_(lp.grad.to(float32))` (bf16_optimizer.py): read 2, write 4
 *     (the fp32 temporary), read 4 + 4, write 4: 18 bytes per parameter, every micro-batch
 *     [counted].
 * Per step on the GPU and the network (time.c):
 *   - the reduction after the last backward, nothing beside it: TrainSchedule issues
 *     ReduceTiedGrads, ReduceGrads and OptimizerStep after the last BackwardPass
 *     (runtime/pipe/schedule.py); without the pipeline, DeepSpeedEngine.backward calls
 *     allreduce_gradients after loss.backward() at the boundary (runtime/engine.py), and ZeRO
 *     0/1 have no overlapping hooks (overlap_comm defaults to stage 3 only); ZeRO 1's
 *     all-gather of the updated parameters runs inside its step().  In the 16-bit type
 *     (DeepSpeedZeroOptimizer's communication_data_type, FP16_Optimizer's flat buffers), fp32
 *     under BF16_Optimizer;
 *   - the tied embedding's gradient all-reduced between the first and the last stage
 *     (_exec_reduce_tied_grads -> PipelineModule.allreduce_tied_weight_gradients: V x h / tp
 *     16-bit elements over the 2-rank group), exposed on those two stages
 *     (tp_host_ds_tied_reduce).
 * Megatron-Core's gradient-accumulation fusion folds the same sum into the weight-gradient GEMM
 * (fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32; Transformer Engine's `accumulate` into
 * main_grad), priced there as the GEMM's fp32 read and write (hw_rates.c WGRAD_ACCUM_B), so
 * the other stacks pay none of it here.
 */
#include "time_internal.h"

/* Parameter tensors of one legacy Megatron GPT block (see the header). */
#define BLOCK_TENSORS 12.0

/* full(): the zeros, the copy of the local part, and the all-gather of the micro-batch's
   activations (or gradients) over the TP group, exposed whole after the drain before it. */
static double partition_full(const struct ctx *x)
{
    const struct tp_layout *l = x->l;
    double op = x->cal->eager_op_s;
    double bytes = x->tokens * x->m->hidden * x->h.act_bytes;
    return (2 + TP_HOST_COLL_OPS) * op + tp_time_allgather(x->c, x->cal, bytes, l->tp, x->g_tp);
}

double tp_host_ds_micro_batch(const struct ctx *x, uint32_t stage)
{
    if (x->j->framework != TP_FW_MEGATRON_DS)
        return 0;
    const struct tp_layout *l = x->l;
    double op = x->cal->eager_op_s;
    double t = TP_HOST_DRAIN_OPS * op; /* ThroughputTimer.start() at the forward */
    if (l->pp <= 1) {
        /* the loss averaged over the DP group: cat, all-reduce, divide */
        if (l->dp > 1)
            t += (2 + TP_HOST_COLL_OPS) * op +
                 tp_host_small_allreduce(x, l->dp, (uint64_t)l->tp * l->cp);
        return t;
    }
    if (l->tp <= 1)
        return t;
    bool next = stage + 1 < l->pp, prev = stage > 0;
    if (next) { /* forward: partition + to_meta, two sends; backward: two receives, two
                   from_meta, two full() */
        t += (1 + TP_HOST_DRAIN_OPS + 2 * TP_HOST_COLL_OPS) * op;
        t += 2 * TP_HOST_COLL_OPS * op + 2 * (TP_HOST_DRAIN_OPS * op + partition_full(x));
    }
    if (prev) { /* forward: two receives and their clones, from_meta, full(); backward:
                   partition + to_meta of the input's gradient, two sends */
        t += 2 * (TP_HOST_COLL_OPS + 1) * op + TP_HOST_DRAIN_OPS * op + partition_full(x);
        t += (1 + TP_HOST_DRAIN_OPS + 2 * TP_HOST_COLL_OPS) * op;
    }
    return t;
}

double tp_host_ds_step(const struct ctx *x, uint32_t stage, uint32_t blocks, double params)
{
    const struct tp_job *j = x->j;
    const struct tp_layout *l = x->l;
    if (j->framework != TP_FW_MEGATRON_DS || x->frozen || l->zero >= 3)
        return 0;
    double op = x->cal->eager_op_s, bw = x->h.mem_bw;
    double tensors = BLOCK_TENSORS * blocks + (stage == 0 ? 2 : 0) +
                     (stage + 1 == l->pp ? 2 + (l->pp > 1 ? 1 : 0) : 0);
    if (tp_host_ds_bf16_optimizer(x)) /* the norm per tensor, its all-reduce, clear_hp_grads */
        return tensors * 3 * op + params * (4 + 4) / bw +
               (2 * TP_HOST_DRAIN_OPS + TP_HOST_COLL_OPS) * op;
    if (l->zero == 0 && j->precision != TP_PREC_FP16)
        return 0;
    double dp = l->dp > 1 ? l->dp : 1;
    if (l->zero == 0) /* FP16_Optimizer: every tensor probed, the flag all-reduced */
        return tensors * 3 * op + params * 10 / bw + (TP_HOST_COLL_OPS + TP_HOST_DRAIN_OPS) * op;
    /* ZeRO 1/2: the probe and the norm per gradient of the partition (a tensor that straddles
       a partition boundary counts on both sides: + 1), three all-reduces, two .item() */
    double part_t = tensors / dp + 1, part_p = params / dp;
    return part_t * 2 * 3 * op + part_p * (10 + 18) / bw +
           (3 * TP_HOST_COLL_OPS + 2 * TP_HOST_DRAIN_OPS) * op;
}

double tp_host_ds_tied_reduce(const struct ctx *x, uint32_t stage)
{
    const struct tp_layout *l = x->l;
    const struct tp_model *m = x->m;
    if (!tp_stack_get(x->j->framework)->ds_engine || x->frozen || l->pp <= 1 || !m->tied ||
        (stage != 0 && stage + 1 != l->pp))
        return 0;
    /* the first and the last stage: pp - 1 stages of tp x dp ranks apart, on one node only
       when the whole pipeline fits in one */
    double bytes = (double)m->vocab * m->hidden / l->tp * x->h.act_bytes;
    uint64_t apart = (uint64_t)(l->pp - 1) * l->tp * l->cp * l->dp;
    uint32_t g = apart < x->c->gpus_per_node ? 2 : 1;
    return tp_time_allreduce(x->c, x->cal, bytes, 2, g);
}

bool tp_host_ds_bf16_optimizer(const struct ctx *x)
{
    return !x->frozen && tp_ds_bf16_optimizer(x->j, x->l->zero);
}

double tp_host_ds_grad_accum(const struct ctx *x, double params)
{
    const struct tp_job *j = x->j;
    const struct tp_layout *l = x->l;
    if (!tp_stack_get(j->framework)->ds_engine || x->frozen || params <= 0)
        return 0;
    if (tp_host_ds_bf16_optimizer(x)) /* update_hp_grads after every backward */
        return params * 18 / x->h.mem_bw;
    double gas = l->gas > 1 ? l->gas : 1; /* AccumulateGrad from the second micro-batch on */
    return (gas - 1) / gas * params * 3 * x->h.act_bytes / x->h.mem_bw;
}
