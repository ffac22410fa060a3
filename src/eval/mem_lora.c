/*
 * mem_lora.c - what a block keeps for the backward of a linear layer whose weight is frozen
 * (LoRA, QLoRA; docs/memory.md "Adapters: the frozen linears' inputs").  Bytes per element of
 * the layer's input; pure and allocation-free.
 *
 * A linear layer needs its input in backward only for its weight's gradient (dW = dY^T X; the
 * input's gradient dX = dY W needs the weight).  So a frozen weight keeps no input
 * ([FROZEN-LIN]):
 *  - PyTorch autograd: tools/autograd/derivatives.yaml, `mm(Tensor self, Tensor mat2)`:
 *    `mat2: mm_mat2_backward(grad, self, ...)` is the only formula that reads `self`, and the
 *    generated VariableType code (tools/autograd/gen_variable_type.py) saves `self` for the
 *    node only under `grad_fn->should_compute_output(1)`, i.e. when mat2 (the weight) requires
 *    grad; aten::linear and aten::addmm alike (`mat2: mm_mat2_backward(...)` in both);
 *  - Transformer Engine: transformer_engine/pytorch/module/linear.py `_Linear.forward` sets
 *    `saved_inputmat` only under `weight.requires_grad` (1.x) / `backward_needs_input`
 *    (is_grad_enabled and weight.requires_grad, 2.x), and layernorm_linear.py
 *    `_LayerNormLinear.forward` keeps its normed output `ln_out` on the same condition (the
 *    norm's own backward reads its input and rsigma, which the block counts apart);
 *  - bitsandbytes' 4-bit matmul (bitsandbytes/autograd/_functions.py MatMul4Bit.forward) keeps
 *    `ctx.tensors = (None, B)`: no input, the frozen NF4 weight only.
 * A targeted layer's input stays, saved by its adapter: PEFT's lora.Linear.forward runs
 * `lora_A(dropout(x))`, and lora_dropout defaults to 0.0 (peft/tuners/lora/config.py
 * LoraConfig), so dropout is nn.Identity and lora_A saves x itself, the same tensor the base
 * would have kept; Megatron/NeMo adapters (NeMo's ParallelLinearAdapter, nemo/collections/nlp/
 * modules/common/megatron/adapters/parallel_adapters.py: linear_in a megatron.core
 * ColumnParallelLinear, whose LinearWithGradAccumulationAndAsyncCommunication.forward does
 * ctx.save_for_backward(input, weight)) save the 16-bit input, not the FP8 copy a trainable TE
 * layer would have kept.  Megatron-Core's fused norm + linear (TE's LayerNormLinear: linear_qkv,
 * linear_fc1) hands the adapter its normed input through return_layernorm_output, which NeMo's
 * MCoreSelfAttentionMixin / MCoreMLPMixin.mcore_register_adapters and Megatron-Bridge's
 * SelfAttentionLinearQKVLoRA set; layernorm_linear.py then keeps `ln_out` even for a frozen
 * weight (`if not weight.requires_grad: if not return_layernorm_output: ln_out = None`), and in
 * FP8 that saved `ln_out` is the quantized copy, beside the 16-bit one the adapter keeps (in 16
 * bits they are one tensor).  The attention kernel keeps its output O for its own backward
 * (flash-attn's and Transformer Engine's FusedAttnFunc save out, with q, k, v and the softmax
 * statistics), 16-bit, whether o_proj keeps it or not; an eager attention's matmuls keep the
 * probabilities and V, not their product.
 */
#include "eval_internal.h"

static bool adapters(const struct tp_job *j)
{
    return j->task == TP_TASK_LORA || j->task == TP_TASK_QLORA;
}

/* The input of a linear layer whose LoRA target bits are `bits`: `gin` (the GEMM's saved
   input: 1 byte in FP8, 2 in 16 bits) when its weight trains, the adapter's 16-bit input when
   an adapter targets it (plus Megatron's quantized `ln_out` where the layer is a fused norm +
   linear, `ln_fused`, and the GEMM runs below 16 bits), nothing when it is frozen and
   untargeted. */
double tp_mem_linear_input_bytes(const struct tp_job *j, uint32_t bits, double gin, bool ln_fused)
{
    if (!adapters(j))
        return gin;
    if (!(bits & j->lora_targets))
        return 0.0;
    return 2.0 + (ln_fused && j->framework == TP_FW_MEGATRON && gin < 2 ? gin : 0.0);
}

/* The attention output (o_proj's input): the kernel's own saved output when it is fused (16
   bits), else what o_proj keeps by the rule above. */
double tp_mem_attn_out_bytes(const struct tp_job *j, double gin)
{
    if (!adapters(j))
        return gin;
    if (j->attn_impl != TP_ATTN_EAGER)
        return 2.0;
    return tp_mem_linear_input_bytes(j, TP_LORA_O, gin, false);
}
