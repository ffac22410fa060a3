/*
 * mem_runtime.c - the memory beside the model's tensors (docs/memory.md): the framework's
 * communication buffers (allocated tensors), the caching allocator's rounding and fragmentation
 * (reserved, not allocated), and what lives outside the allocator: the CUDA/HIP context, the
 * libraries' modules and workspaces, NCCL/RCCL's channel buffers (device-used).  Pure and
 * allocation-free.
 *
 * Sources: PyTorch c10/cuda/CUDACachingAllocator.cpp (kMinBlockSize 512, kSmallSize 1 MiB,
 * kSmallBuffer 2 MiB, kMinLargeAlloc 10 MiB, kLargeBuffer 20 MiB, kRoundLarge 2 MiB;
 * expandable_segments maps one segment per stream in pages and grows it in place);
 * DeepSpeed deepspeed/runtime/zero/config.py (reduce_bucket_size and allgather_bucket_size
 * default 5e8 elements, lines 109 and 128; stage3_prefetch_bucket_size 5e7, line 208;
 * stage3_param_persistence_threshold 1e5, line 214; stage3_max_live_parameters 1e9, line 231;
 * overlap_comm defaults to true for stage 3 only, line 353); transformers
 * integrations/deepspeed.py (the "auto" values the Hugging Face stacks fill in: reduce_bucket_size
 * hidden^2, stage3_prefetch_bucket_size 0.9 hidden^2, stage3_param_persistence_threshold
 * 10 hidden); NCCL src/init.cc lines 810-813 (per channel and peer: Simple NCCL_BUFFSIZE 4 MiB,
 * LL128 120 x 640 x 8 steps x 8 B = 4.69 MiB, LL 8 x 512 x 8 steps x 16 B = 0.5 MiB) and
 * src/include/device.h (NCCL_STEPS 8, MAXCHANNELS 64); docs/physics.md §3.8 (CUDA context
 * 426 MiB measured on H100 with lazy loading; 0.5-0.7 GB per communicator on A100, NCCL #964).
 */
#include "eval_internal.h"

/* NCCL's buffers per channel and connected peer, all three protocols (src/init.cc): Simple
   NCCL_BUFFSIZE, LL128 and LL. */
#define NCCL_SIMPLE_BYTES 4194304.0
#define NCCL_LL_BYTES (120.0 * 640 * 8 * 8 + 8.0 * 512 * 8 * 16)
#define NCCL_CHANNEL_PEER_BYTES (NCCL_SIMPLE_BYTES + NCCL_LL_BYTES)

double tp_nccl_channel_peer_bytes(void)
{
    return NCCL_CHANNEL_PEER_BYTES;
}

/* Live NCCL communicators: one per parallel dimension with more than one rank. */
static double communicators(const struct tp_layout *l)
{
    return (l->tp > 1) + (l->pp > 1) + (l->dp * l->cp > 1) + (l->ep > 1) + (l->cp > 1);
}

/* The framework's communication buffers, allocated through the caching allocator (so in
   max_memory_allocated): DeepSpeed's reduce and all-gather buckets in 16 bits, and the MoE
   all-to-all send/receive buffers.  The Hugging Face stacks fill DeepSpeed's "auto" bucket
   sizes with hidden^2 elements (transformers integrations/deepspeed.py); the ZeRO-3 prefetch
   bucket and the gathered modules are gather_bytes.  Megatron's distributed optimizer buckets
   are views into its contiguous gradient and parameter buffers (megatron/core/distributed/
   param_and_grad_buffer.py): nothing beside the states. */
double tp_mem_framework_buffers(const struct tp_model *m, const struct tp_job *j,
                                const struct tp_layout *l)
{
    double bytes = 0;
    if (tp_job_ds_zero(j) && l->dp * l->cp > 1 && j->framework == TP_FW_DEEPSPEED && l->zero >= 1)
        /* DeepSpeed's own defaults: the gradient bucket (contiguous_gradients) is one
           reduce_bucket_size buffer of 16-bit elements, 5e8 (stage_1_and_2.py backward: ipg_buffer,
           a second one only with overlap_comm, off below stage 3; stage3.py: the flat
           __ipg_bucket_flat_buffer) */
        bytes += 5e8 * 2;
    else if (tp_job_ds_zero(j) && l->dp * l->cp > 1)
        bytes += 2.0 * m->hidden * m->hidden * 2; /* "auto": reduce + all-gather, hidden^2 each */
    if (l->ep > 1)
        bytes += 2.0 * l->mbs * (double)j->seq / l->cp * m->top_k * m->hidden * 2;
    return bytes;
}

/* torch.distributed.pipelining's receive buffers (torchtitan, and the fsdp stack with a
   pipeline): a PipelineStage allocates them once for every micro-batch of the step and keeps
   them (torch/distributed/pipelining/stage.py: _prepare_forward_infra makes a _RecvInfo per
   micro-batch, _prepare_backward_infra a grad_recv_info per micro-batch, each buffer a
   torch.empty of the stage's input or output shape, _make_tensor_from_meta).  Per stage held by
   the rank (vpp with a multi-stage schedule): the activations it receives (not on pipeline stage
   0), less the in-flight micro-batches, whose received input the activations count as their
   first block's input; the output gradients it receives (not on the last stage), all of them.
   One buffer is a micro-batch's hidden state in 16 bits, split by tp under sequence
   parallelism. */
double tp_mem_pipeline_buffers(const struct tp_model *m, const struct tp_job *j,
                               const struct tp_layout *l, uint32_t stage, double in_flight)
{
    if (l->pp <= 1 || (j->framework != TP_FW_TORCHTITAN && j->framework != TP_FW_FSDP))
        return 0;
    double v = l->vpp > 1 ? l->vpp : 1, mb = l->gas;
    double buffer = (double)l->mbs * (double)j->seq / l->cp * m->hidden * 2 /
                    (l->sp && l->tp > 1 ? (double)l->tp : 1.0);
    /* virtual stage c of rank `stage` is pipeline stage c * pp + stage: the first is stage 0
       on rank 0 only, the last is on rank pp - 1 only */
    double receivers = v - (stage == 0), senders = v - (stage == l->pp - 1);
    double idle = mb - in_flight / v; /* micro-batches per virtual stage not in flight */
    return buffer * (receivers * (idle > 0 ? idle : 0) + senders * mb);
}

/* reserved - allocated, the context and the NCCL buffers of a stage whose tensors at the peak
   are `tensors` bytes (states, activations and logits: what the allocator splits and frees). */
void tp_mem_runtime(const struct tp_job *j, const struct tp_layout *l, double tensors,
                    struct tp_memory *out)
{
    /* Fragmentation: blocks freed between the forward, the backward and the optimizer step
       (the first step allocates the optimizer states lazily into a pool the activations have
       cut up) cannot serve larger requests, and every large request is rounded up to 2 MiB
       (kRoundLarge) inside 20 MiB segments (kLargeBuffer): overhead_frag of the tensors
       [heuristic, docs/physics.md §3.8: 5-15%].  expandable_segments maps pages into one
       growing segment per stream, so a freed range serves any later request: what remains is
       the page rounding and the per-stream pools (FSDP's all-gather stream) [heuristic: a
       quarter of the default]. */
    bool expandable = j->expandable_segments || j->framework == TP_FW_TORCHTITAN;
    double frag = expandable ? j->overhead_frag / 4 : j->overhead_frag;
    out->allocator_bytes = frag * tensors;
    /* Outside the allocator: the CUDA/HIP context with the libraries' kernel modules and
       workspaces (overhead_base_bytes), and NCCL's buffers per live communicator
       (overhead_comm_bytes: about 2 peers x 16-32 channels x NCCL_CHANNEL_PEER_BYTES on an
       NVLink node, 0.3-0.6 GB, as NCCL #964 measures) */
    out->context_bytes = j->overhead_base_bytes;
    /* NCCL_BUFFSIZE sets the Simple protocol's buffer of every channel and peer (NCCL's
       environment variables documentation: "NCCL_BUFFSIZE ... Default 4194304 (4 MiB)"; the
       LL and LL128 buffers do not move with it): overhead_comm_bytes is priced at the default,
       so its Simple share scales */
    double buffsize = j->nccl_buffsize > 0 ? j->nccl_buffsize : NCCL_SIMPLE_BYTES;
    double scale = (buffsize + NCCL_LL_BYTES) / NCCL_CHANNEL_PEER_BYTES;
    out->nccl_bytes = j->overhead_comm_bytes * scale * communicators(l);
    out->overhead_bytes = out->allocator_bytes + out->context_bytes + out->nccl_bytes;
}
