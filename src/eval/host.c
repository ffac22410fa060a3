/*
 * host.c - the host in the time model: the kernels a block launches per micro-batch and the
 * CPU time it takes to launch them, and the rule that a block takes at least that time.
 *
 * An eager PyTorch program issues every kernel from Python: the interpreter, the dispatcher,
 * autograd's recording and cudaLaunchKernel run on one CPU thread per rank, and the GPU runs
 * asynchronously behind it.  When each kernel's GPU work is longer than its launch the queue
 * stays full and the host is hidden; when it is shorter (small models, micro-batch 1, wide
 * tensor parallelism that divides every GEMM) the GPU waits for the host, and the block takes
 * the host's time.  So per block and direction: exposed host = max(0, host - GPU), where GPU is
 * the block's kernels and collectives on its stream.
 *
 * Host time per launch: eager_op_s (calibration; prior 12 us).  Published measurements:
 *   - pytorch/pytorch#41383 (2020): `y = 2*x` on a one-element tensor with autograd recording
 *     takes 6.8 s for 10^6 ops (6.8 us per op; 5 us without requires_grad), the CPU side alone,
 *     before any CUDA launch; ngimel there: "approx half of it is python parsing overhead (same
 *     operation called using c++ API would take about a microsecond)".
 *   - the CUDA launch on top: "~1-3 us on CUDA 12+ drivers", and ~5-25 us CPU-side per op in
 *     all for a bf16 matmul on H100 (J. Lin, "From PyTorch op to kernel launch", gpu kernel
 *     serving lesson 18, its per-layer table: Python ~1 us, pybind ~1 us, autograd 1-3 us,
 *     dispatcher 1-2 us, backend 1-5 us, driver 1-3 us).
 *   - nn.Module's own Python: 158 Python opcodes per Linear call after PR #50431's fixes, 218
 *     before (dev-discuss.pytorch.org "Overhead in nn.Module causing massive slowdowns").
 *   The prior 12 us sits inside the 5-25 us band; the fit moves it only within that band
 *   (src/fit/fit.c: a measured prior, log-sd 0.4).
 * Backward launches come from autograd's C++ engine: no interpreter, no recording; half the
 * forward's host time per launch (#41383: the C++ API call costs about half the Python one).
 *
 * Kernels per block forward, counted from each stack's block code (one kernel per op that
 * moves data; views are free); the backward launches about twice as many (each GEMM's data
 * and weight gradient, each element-wise op's backward and its gradient accumulation):
 *   fused (Megatron-Core + Transformer Engine, transformer_layer.py): LayerNormLinear (norm,
 *     GEMM), fused RoPE for q and k, fused attention, projection, bias-dropout-add, norm + fc1,
 *     fused activation, fc2, bias-dropout-add: 12 forward, 20 backward.
 *   legacy fused (Megatron-DeepSpeed, Megatron-LM before Core: megatron/model/transformer.py):
 *     apex LayerNorm, QKV addmm, baddbmm, fused scale-mask-softmax, attention dropout, bmm,
 *     permute-contiguous, dense GEMM, bias-dropout-add (jit, 2 kernels), LayerNorm, fc1, fused
 *     bias-GeLU, fc2, bias-dropout-add: 17 forward, 34 backward.
 *   eager PyTorch (torchtitan, FSDP or DeepSpeed user code, models/llama3/model.py):
 *     RMSNorm as ~5 kernels twice, q/k/v, complex RoPE (~3 each for q and k), SDPA and its
 *     transposes, wo, residual, w1/w3, SiLU, mul, w2, residual: 30 forward, 55 backward.
 *   Hugging Face eager (transformers modeling_llama.py LlamaDecoderLayer): LlamaRMSNorm's
 *     upcast, pow, mean, add, rsqrt, mul, downcast, weight (7, twice), q/k/v, apply_rotary_
 *     pos_emb (mul, rotate_half's neg and cat, mul, add for q and k: 10), repeat_kv, SDPA and
 *     its contiguous, o_proj, residual, gate, up, act, mul, down, residual: 40 forward, 75
 *     backward; with Liger's fused RMSNorm, RoPE and SwiGLU (fused_loss): 16 and 30.
 * Plus per block: each TP collective is a launch (and its Python in the TP region's autograd
 * function); an MoE block's router, top-k, permute and unpermute 10 more forward and 20 more
 * backward (its experts' own launches are the expert loop's, time_block.c, or, for Megatron-Core's
 * grouped experts, per local expert below: expert_host_ops); LoRA adds dropout, A, B, scale and
 * add per adapted linear (4 forward, 8 backward each; QLoRA's dequantize one more each way).
 * CUDA graphs (the job's cuda_graphs; Megatron-Core only, src/plan/stack.c says where they
 * cannot run).  A captured region's kernels are issued by one cudaGraphLaunch: no Python, no
 * dispatcher, no autograd recording and no per-kernel launch inside it.  Measured: a chain of
 * N kernels replayed as a graph costs the host ~15 us plus ~0.6 us per node against ~6.4 us per
 * kernel launched one by one ([CUDA-GRAPHS] ahrefs/ocannl#488, CUDA 13, 8-117 kernels; NVIDIA's
 * "Getting Started with CUDA Graphs" blog, 2019, shows the same: the per-kernel launch gap
 * gone, one launch per graph).  Per region then [derived, counted from the code]:
 *   - layer (Megatron-Core --cuda-graph-impl local, CudaGraphManager; transformer_engine, TE
 *     make_graphed_callables): each block's forward and its backward are one graph each,
 *     replayed from a Python autograd Function (cuda_graphs.py / TE graph.py Graphed) that
 *     first copies the block's input (forward) or output gradient (backward) into the graph's
 *     static buffer: 2 eager ops each way (the call with its replay, at the graph launch's
 *     ~15 us about one eager op, and the copy), the Function's backward Python, so full
 *     price.  The TP collectives are captured with the block.  An MoE block's dispatch stays
 *     eager (its shapes come from the host: moe_host.c): its 10 / 20 launches are priced as
 *     before, only the attention, router and preprocessing are in the graph (the documented
 *     --cuda-graph-modules attn moe_router moe_preprocess).
 *   - full (--cuda-graph-impl full_iteration, MLPerf FULL_CUDA_GRAPH=1): the whole
 *     forward-backward of a step, every micro-batch, is one graph (megatron/core/
 *     full_cuda_graph.py FullCudaGraphWrapper, "excluding optimizer"): no block host time at
 *     all; the one replay per step and the copies of each micro-batch into the static buffers
 *     (StaticBufferLoader) are outside the blocks and run before the replay.  What stays
 *     eager is the optimizer step, the data loading, logging and the Python loop: what the
 *     code shows of it is counted per stack in host_step.c (the optimizer's launches and
 *     drains, the replay and the batches' copies), the rest is the calibration's residual
 *     step_overhead_s (docs/host.md, "The step beside the blocks").
 * torch.compile's mode="reduce-overhead" (CUDA graphs of compiled regions) is not priced.
 *
 * Beside the launches, host time that no launch count shows (docs/host.md; sources [HOST-ISS],
 * [MDS-CODE]), each in units of eager_op_s so that one calibrated constant carries the CPU's
 * speed:
 *   - Python per module call: nn.Module.__call__ (_call_impl's hook checks, 158 Python opcodes
 *     per Linear call after pytorch/pytorch PR #50431, 218 before: dev-discuss.pytorch.org
 *     "Overhead in nn.Module causing massive slowdowns") and the module's own forward body: a
 *     quarter of a launch (about 3 us: 158 opcodes at ~20 ns each in CPython 3.8-3.11)
 *     [derived] per module, 12 modules per block in every stack counted
 *     (Megatron-DeepSpeed's ParallelTransformerLayer: the layer, 2 LayerNorms, attention, QKV,
 *     core attention, softmax, dropout, dense, MLP, fc1, fc2; torchtitan's TransformerBlock and
 *     Hugging Face's LlamaDecoderLayer likewise: norms, attention, 4 projections, MLP, 3
 *     projections).
 *   - Custom Python autograd Functions: their backward is Python too (the C++ engine calls it
 *     through PyNode under the GIL: torch/csrc/autograd/python_function.cpp), so their backward
 *     launches cost a forward one, not half.  Per block: Megatron-DeepSpeed 8 (apex
 *     FusedLayerNormAffineFunction x2, LinearWithGradAccumulationAndAsyncCommunication x4 in
 *     megatron/core/tensor_parallel/layers.py, ScaledUpperTriangMaskedSoftmax, GeLUFunction);
 *     Transformer Engine 5 (_LayerNormLinear, FusedAttnFunc, _Linear, _LayerNormMLP, fused
 *     RoPE); Liger 4 (RMSNorm x2, RoPE, SiLU-mul); eager torchtitan and Hugging Face none.
 *   - A tensor-parallel collective called from Python: Megatron's region autograd Function
 *     (megatron/core/tensor_parallel/mappings.py: _ReduceFromModelParallelRegion and kin, forward
 *     and backward both Python), torch.distributed.all_reduce's Python checks and work object,
 *     and ProcessGroupNCCL::collective's CUDA calls beside NCCL's kernel launch (an event
 *     recorded on the compute stream, the NCCL stream's wait on it, the end event): 3 launches'
 *     worth each way beside its own launch, the three layers costing about one eager op each
 *     (pytorch/pytorch#41383: an op's CPU time is about half Python, half C++ dispatch)
 *     [derived: no published per-call measurement was found].
 *   - Syncs that drain the queue.  Megatron-DeepSpeed's ParallelTransformerLayer.forward
 *     (megatron/model/transformer.py, since microsoft/Megatron-DeepSpeed#48, 2022) creates
 *     `moe_loss` and `mlp_bias` with torch.tensor(0.0, device=...) in every block, dense ones
 *     too: a copy from host memory with a cudaStreamSynchronize behind it (pytorch/pytorch#120996:
 *     torch.cuda.set_sync_debug_mode flags torch.tensor(3.14, device="cuda") as "a synchronizing
 *     CUDA operation"; pytorch/pytorch#190217).  The host waits there for everything it queued:
 *     when the host is ahead of nothing (host-bound), for the block's last collective, which
 *     cannot finish before the slowest rank of the TP group has issued it (NVIDIA/nccl#701,
 *     jbachan: a 228-byte all-reduce "took" 4 ms because "one GPU showed up 4ms later than its
 *     peers"); when the GPU is behind (GPU-bound), the drained GPU then waits for the host's next
 *     launch.  Each copy is also a host call of its own.  And per micro-batch, its data path
 *     (pretrain_gpt.py get_batch_pipe -> megatron/core/tensor_parallel/data.py broadcast_data)
 *     broadcasts the sizes and the tokens over the TP group, with two more drained syncs
 *     (LongTensor(sizes) on the device, sizes_cuda.cpu()).
 *   The jitter between the ranks' hosts, which the slowest rank turns into time at every
 *   collective the syncs expose, is not priced: no public measurement gives its size.
 */
#include "time_internal.h"

#include <math.h>

enum kstyle { K_TE_FUSED, K_LEGACY_FUSED, K_EAGER_TORCH, K_HF_EAGER, K_HF_LIGER };

unsigned tp_kernel_style_of(enum tp_framework fw)
{
    switch (fw) {
    case TP_FW_MEGATRON:
        return K_TE_FUSED;
    case TP_FW_MEGATRON_DS:
        return K_LEGACY_FUSED;
    case TP_FW_AXOLOTL:
        return K_HF_EAGER;
    case TP_FW_DEEPSPEED:
    case TP_FW_FSDP:
    case TP_FW_TORCHTITAN:
    case TP_FW_COUNT:
        break;
    }
    return K_EAGER_TORCH;
}

static enum kstyle kernel_style(const struct ctx *x)
{
    enum kstyle s = (enum kstyle)tp_kernel_style_of(x->j->framework);
    return s == K_HF_EAGER && !x->eager ? K_HF_LIGER : s;
}

/* An MoE block's own launches (the header's counts): the router, top-k, permute and unpermute;
   under layer CUDA graphs the dispatch among them stays eager. */
#define MOE_EAGER_FWD 10.0
#define MOE_EAGER_BWD 20.0

/* Forward and backward launches of one block per micro-batch (see the header's counts). */
void tp_host_launches(const struct ctx *x, uint32_t layer, double *fwd, double *bwd)
{
    static const double FWD[] = {12, 17, 30, 40, 16}, BWD[] = {20, 34, 55, 75, 30};
    enum kstyle s = kernel_style(x);
    double f = FWD[s], b = BWD[s];
    const struct tp_model *m = x->m;
    if (m->layer_moe[layer]) {
        f += MOE_EAGER_FWD;
        b += MOE_EAGER_BWD;
    }
    if (x->l->tp > 1) { /* two collectives each way (sequence parallel: gather + scatter) */
        f += 2;
        b += 2;
    }
    if (x->frozen) {
        double targets = 0;
        for (uint32_t t = x->j->lora_targets; t; t &= t - 1)
            targets++;
        double q = x->j->task == TP_TASK_QLORA ? 1 : 0;
        f += targets * (4 + q);
        b += targets * (8 + q);
    }
    *fwd = f;
    *bwd = b;
}

/* Backward launches cost this share of a forward launch's host time (the C++ engine). */
#define BWD_HOST_SHARE 0.5
/* Host time per nn.Module call, in launches (see the header), and modules per block. */
#define MODULE_OPS 0.25
#define BLOCK_MODULES 12.0
/* Megatron-DeepSpeed's torch.tensor(0.0, device=...) copies per block forward. */
#define MDS_BLOCK_SYNCS 2.0

/* Custom Python autograd Functions per block (their backward runs Python). */
static double python_functions(enum kstyle s)
{
    static const double PYFN[] = {5, 8, 0, 0, 4};
    return PYFN[s];
}

/* Host ops per direction of one block replayed as a graph (layer): the graphed Function's
   call with its replay, and the copy into the static buffer (see the header). */
#define GRAPH_OPS 2.0

/* Host work per local expert of Megatron-Core's grouped experts (TEGroupedMLP: two Transformer
   Engine GroupedLinear modules, fc1 and fc2, each keeping one Parameter per expert, weight0 ..
   weightN-1) per micro-batch, in eager ops [counted: TE v2.4 transformer_engine/pytorch/module/
   grouped_linear.py, common/gemm/cublaslt_gemm.cu; Megatron-LM 6a6cd478 megatron/core/
   distributed/distributed_data_parallel.py]:
     forward, per GroupedLinear: one cuBLAS GEMM from general_grouped_gemm's C++ loop
       (nvte_multi_stream_cublas_gemm: descriptors, heuristic, launch), half an eager op (a C++
       call costs about half the Python one, pytorch/pytorch#41383);
     backward, per GroupedLinear: the data- and weight-gradient GEMMs from the same C++ loop
       (half an op each); handle_custom_ddp_from_mcore's torch.empty of a dummy gradient the
       size of the weight, called from Python for Megatron's DDP (no kernel: half an op); the
       weight's AccumulateGrad and Megatron DDP's Python post-hook (_make_backward_post_hook:
       the bucket lookup, `param.grad = None`, register_grad_ready), half an op.
   They join the block's host time, which the GPU covers when it is longer; moe_host.c takes
   the forward's from here for the part after the dispatcher's wait. */
#define EXPERT_FWD_OPS (2 * 0.5)
#define EXPERT_BWD_OPS (2 * (0.5 + 0.5 + 0.5 + 0.5))

void tp_host_expert_ops(const struct ctx *x, uint32_t layer, double *f, double *b)
{
    *f = *b = 0;
    if (!x->m->layer_moe[layer] || x->moe_impl != TP_MOE_GROUPED ||
        !tp_stack_get(x->j->framework)->te_grouped_gemm)
        return;
    double n_local = (double)x->m->n_experts / x->l->ep;
    *f = n_local * EXPERT_FWD_OPS;
    *b = n_local * EXPERT_BWD_OPS;
}

/* Host time of one block under CUDA graphs, forward and backward (see the header). */
static void graphed_block(const struct ctx *x, uint32_t layer, double *host_f, double *host_b)
{
    double op = x->cal->eager_op_s;
    if (x->j->cuda_graphs == TP_CUDA_GRAPHS_FULL) {
        *host_f = *host_b = 0;
        return;
    }
    bool moe = x->m->layer_moe[layer] != 0;
    double ef, eb; /* the experts stay eager too (their shapes come from the host) */
    tp_host_expert_ops(x, layer, &ef, &eb);
    *host_f = (GRAPH_OPS + (moe ? MOE_EAGER_FWD : 0) + ef) * op;
    *host_b = (GRAPH_OPS + (moe ? MOE_EAGER_BWD * BWD_HOST_SHARE : 0) + eb) * op;
}

void tp_host_block(const struct ctx *x, uint32_t layer, struct cost *c)
{
    double gpu_f = c->fwd_gemm + c->fwd_attn + c->fwd_mem + c->tp_fwd + c->cp_fwd + c->ep_fwd;
    double gpu_b = c->bwd_gemm + c->bwd_attn + c->bwd_mem + c->tp_bwd + c->cp_bwd + c->ep_bwd;
    if (x->j->cuda_graphs != TP_CUDA_GRAPHS_NONE) {
        double gh_f, gh_b;
        graphed_block(x, layer, &gh_f, &gh_b);
        c->host_fwd += fmax(0, gh_f - gpu_f);
        c->host_bwd += fmax(0, gh_b - gpu_b);
        return;
    }
    double f, b;
    tp_host_launches(x, layer, &f, &b);
    enum kstyle s = kernel_style(x);
    bool tp = x->l->tp > 1;
    double colls = tp ? 2 : 0; /* each way, as tp_host_launches counts them */
    bool syncs = x->j->framework == TP_FW_MEGATRON_DS;
    double op = x->cal->eager_op_s;
    double ops_f = f + BLOCK_MODULES * MODULE_OPS + colls * TP_HOST_COLL_BESIDE_OPS +
                   (syncs ? MDS_BLOCK_SYNCS : 0);
    double ops_b = b * BWD_HOST_SHARE + python_functions(s) * (1 - BWD_HOST_SHARE) +
                   colls * TP_HOST_COLL_BESIDE_OPS;
    double ef, eb;
    tp_host_expert_ops(x, layer, &ef, &eb);
    ops_f += ef;
    ops_b += eb;
    double host_f = ops_f * op, host_b = ops_b * op;
    double exposed_f = fmax(0, host_f - gpu_f);
    if (syncs) {
        /* the first copy waits for the queue: host-bound, for the last collective (the slowest
           rank's); GPU-bound, the drained GPU waits for the next launch; the second copy
           finds the queue empty and the GPU waits for the launch after it */
        double tail = tp ? c->tp_fwd / colls : 0;
        exposed_f += (host_f >= gpu_f ? tail : op) + op;
    }
    c->host_fwd += exposed_f;
    c->host_bwd += fmax(0, host_b - gpu_b);
}

double tp_host_small_allreduce(const struct ctx *x, uint32_t n, uint64_t stride)
{
    if (n <= 1)
        return 0;
    uint32_t g = tp_comm_per_node(n, stride, x->c->gpus_per_node);
    uint32_t nodes = tp_comm_nodes_of(n, g);
    return tp_comm_latency(x->cal, 2 * (n - 1.0), 2 * (nodes - 1.0));
}

double tp_host_micro_batch(const struct ctx *x)
{
    if (x->j->framework != TP_FW_MEGATRON_DS)
        return 0;
    /* broadcast_data: two drained syncs (each a host call and a launch the GPU waits for) and,
       with TP, two broadcasts over the TP group: their host calls and their NCCL latency, the
       GPU idle behind the syncs */
    double op = x->cal->eager_op_s, t = 2 * TP_HOST_DRAIN_OPS * op;
    if (x->l->tp > 1) {
        uint32_t nodes = tp_comm_nodes_of(x->l->tp, x->g_tp);
        t += 2 * (TP_HOST_COLL_OPS * op +
                  tp_comm_latency(x->cal, x->l->tp - 1.0, nodes - 1.0));
    }
    return t;
}
