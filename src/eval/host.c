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
 * backward (its experts' own launches are the expert loop's, time_block.c); LoRA adds dropout,
 * A, B, scale and add per adapted linear (4 forward, 8 backward each; QLoRA's dequantize one
 * more each way).
 * CUDA graphs (Megatron-Core --enable-cuda-graph, torch.compile mode reduce-overhead) replace a
 * block's launches by one graph launch: no job here says so yet, so no stack is priced that way.
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

/* Forward and backward launches of one block per micro-batch (see the header's counts). */
void tp_host_launches(const struct ctx *x, uint32_t layer, double *fwd, double *bwd)
{
    static const double FWD[] = {12, 17, 30, 40, 16}, BWD[] = {20, 34, 55, 75, 30};
    enum kstyle s = kernel_style(x);
    double f = FWD[s], b = BWD[s];
    const struct tp_model *m = x->m;
    if (m->layer_moe[layer]) {
        f += 10;
        b += 20;
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

void tp_host_block(const struct ctx *x, uint32_t layer, struct cost *c)
{
    double f, b;
    tp_host_launches(x, layer, &f, &b);
    double op = x->cal->eager_op_s;
    double host_f = f * op, host_b = b * op * BWD_HOST_SHARE;
    double gpu_f = c->fwd_gemm + c->fwd_attn + c->fwd_mem + c->tp_fwd + c->cp_fwd + c->ep_fwd;
    double gpu_b = c->bwd_gemm + c->bwd_attn + c->bwd_mem + c->tp_bwd + c->cp_bwd + c->ep_bwd;
    c->host_fwd += fmax(0, host_f - gpu_f);
    c->host_bwd += fmax(0, host_b - gpu_b);
}
