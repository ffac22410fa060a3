/*
 * test_mem_lora.c - the memory of a LoRA run's frozen base (src/eval/mem_lora.c, memory.c).
 *
 * Expected values follow the sources' own rules (docs/memory.md "Adapters"):
 *  - a frozen linear keeps no input for backward: PyTorch's derivatives.yaml (mm's `self` is
 *    read only by mat2's gradient, saved under should_compute_output(1)), Transformer Engine's
 *    _Linear.forward / _LayerNormLinear.forward (saved_inputmat / ln_out only when the weight
 *    requires grad), bitsandbytes' MatMul4Bit (ctx.tensors = (None, B));
 *  - a targeted layer's input is kept by its adapter, in 16 bits (PEFT lora.Linear with
 *    lora_dropout 0.0: the same tensor; NeMo's ParallelLinearAdapter: megatron.core
 *    ColumnParallelLinear saves its 16-bit input);
 *  - the fused attention kernel keeps its output for its own backward;
 *  - FP8 parameters (NeMo PEFT fp8_params, Megatron-Core fp8_param_gather, TE fp8_model_init):
 *    a frozen GEMM weight is 1 byte.
 * Llama 3.1 8B shapes: hidden 4096, FFN 14336, 32 blocks, 32 query heads of 128;
 * 6,979,321,856 linear (GEMM) weights (docs/physics.md §3.6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run_fixture.h"

static void setup_run(uint32_t gpus)
{
    fixture_run("llama-3.1-8b", "h100-sxm", gpus);
    job.seq = 4096;
    lay.dp = gpus;
    lay.mbs = 1;
}

static struct tp_memory eval(void)
{
    return fixture_memory();
}

static void near(const char *what, double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("%s: got %.9g, expected %.9g (+-%g)", what, got, want, tol);
}

#define H 4096.0
#define FFN 14336.0
#define Q 4096.0 /* 32 heads x 128: the attention output, o_proj's input */
#define TOKENS_X_BLOCKS (4096.0 * 32)

/* bf16: a projection an adapter targets keeps the same input a trainable one would, so LoRA
   on all seven linears stores what full fine-tuning stores; adapting the attention alone frees
   the MLP's normed input (H) and the down projection's input (FFN), 2 bytes each. */
static void test_frozen_inputs_bf16(void **state)
{
    (void)state;
    setup_run(1);
    job.task = TP_TASK_SFT;
    double sft = eval().activations_bytes;
    job.task = TP_TASK_LORA;
    job.lora_targets = TP_LORA_ALL;
    near("lora all-linear = full fine-tuning", eval().activations_bytes, sft, 0);
    job.lora_targets = TP_LORA_Q | TP_LORA_K | TP_LORA_V | TP_LORA_O;
    double attn = eval().activations_bytes;
    near("attention-only frees the MLP's GEMM inputs", sft - attn,
         TOKENS_X_BLOCKS * 2 * (H + FFN), 0.5);
    /* NeMo 1.x's QKV-only LoRA: o_proj frozen, but the fused attention kernel keeps its output
       (flash-attn / TE FusedAttnFunc save `out`) */
    job.lora_targets = TP_LORA_Q | TP_LORA_K | TP_LORA_V;
    near("o_proj frozen, flash keeps O", eval().activations_bytes, attn, 0.5);
    /* eager attention: its matmuls keep the probabilities and V, not their product, so the
       frozen o_proj's input goes too */
    job.attn_impl = TP_ATTN_EAGER;
    double eager_qkv = eval().activations_bytes;
    job.lora_targets = TP_LORA_Q | TP_LORA_K | TP_LORA_V | TP_LORA_O;
    near("o_proj frozen, eager", eval().activations_bytes - eager_qkv, TOKENS_X_BLOCKS * 2 * Q,
         0.5);
}

/* FP8 (Transformer Engine under Megatron-Core): a trainable GEMM keeps its FP8 input (1 byte);
   a frozen one keeps none; an adapted one's adapter keeps the 16-bit input (2 bytes), and the
   fused norm + linear QKV, returning its normed output to the adapter, keeps its quantized
   ln_out too (1 byte); the fused attention keeps its 16-bit output.  Attention-only LoRA
   against full FP8 training, per token and block: QKV input 1 -> 3 bytes (+2H), o_proj input
   1 -> 2 (+Q), MLP normed input -H, fc2 input -FFN. */
static void test_frozen_inputs_fp8(void **state)
{
    (void)state;
    setup_run(8);
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_FP8;
    lay.zero = 1;
    job.task = TP_TASK_SFT;
    double sft = eval().activations_bytes;
    job.task = TP_TASK_LORA;
    job.lora_targets = TP_LORA_Q | TP_LORA_K | TP_LORA_V | TP_LORA_O;
    near("fp8 attention-only lora", eval().activations_bytes - sft,
         TOKENS_X_BLOCKS * (2 * H + Q - H - FFN), 0.5);
}

/* The frozen base under FP8 parameters: each of the 6,979,321,856 GEMM weights 1 byte instead
   of 2 (tensor-wise FP8: its scale is one number per tensor); the embedding, head and norms
   and the trainable adapters stay as they were. */
static void test_fp8_frozen_weights(void **state)
{
    (void)state;
    setup_run(8);
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_FP8;
    job.task = TP_TASK_LORA;
    lay.zero = 1;
    struct tp_memory bf16_base = eval();
    job.fp8_param_gather = true;
    struct tp_memory fp8_base = eval();
    near("fp8 frozen weights", bf16_base.weights_bytes - fp8_base.weights_bytes,
         6979321856.0 * (2 - 1), 1);
    near("adapter gradients unchanged", fp8_base.grads_bytes, bf16_base.grads_bytes, 0);
    near("adapter states unchanged", fp8_base.optimizer_bytes, bf16_base.optimizer_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frozen_inputs_bf16),
        cmocka_unit_test(test_frozen_inputs_fp8),
        cmocka_unit_test(test_fp8_frozen_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
