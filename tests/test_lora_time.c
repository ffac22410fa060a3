/*
 * test_lora_time.c - what a LoRA step prices beside its frozen base (src/eval/time_block.c,
 * lora_adapter and the frozen linears' casts), from the frameworks' code:
 *
 *   [TE-FROZEN] NVIDIA/TransformerEngine 2.x, transformer_engine/pytorch/module/linear.py and
 *   layernorm_linear.py: `backward_needs_input = is_grad_enabled and weight.requires_grad`, and
 *   the input quantizer's column-wise usage only under it: a frozen weight's input is cast
 *   row-wise alone.  Tensor-wise FP8 on Hopper already writes one copy of the input (3 B), so
 *   only the recipes that write both copies in one pass change: NVFP4 2 + 2 x 0.5625 B ->
 *   2 + 0.5625 (0.5 B per value and an E4M3 scale per 16).
 *
 *   [LORA-OPS] NeMo's ParallelLinearAdapter (`x = x * (self.alpha / self.dim)`) and
 *   Megatron-Bridge's LoRALinear (`linear_output + adapter_output`); PEFT's lora.Linear
 *   (`result = result + lora_B(lora_A(dropout(x))) * scaling`): per output element 4 B for the
 *   scale and 6 B for the add forward, 4 B for the scale's backward; per input element 6 B for
 *   the two gradients' sum.  The rank-r GEMMs stream their operands [CUBLASLT-TILE].
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "time_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run_fixture.h"

static void near_rel(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.9g, want %.9g (rel %g)", got, want, rel);
}

/* Llama 3.1 8B on 8 GPUs, data-parallel, one 4096-token sequence per GPU, LoRA rank 16 */
static void lora_run(const char *gpu, enum tp_precision p)
{
    fixture_run("llama-3.1-8b", gpu, 8);
    job.task = TP_TASK_LORA;
    job.precision = p;
    job.seq = 4096;
    job.framework = TP_FW_MEGATRON;
    lay.dp = 8;
    lay.mbs = 1;
    lay.gas = 1;
}

static struct hw resolved(void)
{
    struct hw h;
    tp_resolve_hw(&cluster, &job, &cal, &h);
    return h;
}

/* Adding an adapter to o_proj (K = N = 4096 here) adds its GEMMs' streamed bytes and its
   element-wise passes, block by block. */
static void test_adapter_bytes(void **state)
{
    (void)state;
    lora_run("h100-sxm", TP_PREC_BF16);
    job.lora_targets = TP_LORA_Q;
    struct tp_time q = fixture_step(TP_FW_MEGATRON);
    job.lora_targets = TP_LORA_Q | TP_LORA_O;
    struct tp_time qo = fixture_step(TP_FW_MEGATRON);
    struct hw h = resolved();
    double L = model.n_layers, M = 4096, K = 4096, N = 4096, r = 16;
    double ew = 1 - cal.fused_elementwise; /* a fused stack's unfused share */
    double elementwise = L * ew * (10 * M * N + 4 * M * N + 6 * M * K) / h.mem_bw;
    near_rel(qo.elementwise_s - q.elementwise_s, elementwise, 1e-9);
    double fwd = 2 * (M * K + r * K + 2 * M * r + r * N + M * N) / h.mem_bw;
    double bwd = 2 * (2 * M * N + 2 * M * K + 2 * r * N + 2 * r * K + 4 * M * r) / h.mem_bw;
    double flops = 2 * M * r * (K + N) / h.gemm16_flops;
    assert_true(fwd > flops); /* memory-bound at rank 16 */
    near_rel(qo.gemm_s - q.gemm_s, L * (fwd + bwd), 1e-9);
}

/* The adapter GEMMs' time does not depend on a 128-wide tile: rank 1 streams nearly the same
   bytes as rank 16, and neither pays the tile's quantization (r / 128 useful). */
static void test_adapter_rank(void **state)
{
    (void)state;
    lora_run("h100-sxm", TP_PREC_BF16);
    job.lora_targets = TP_LORA_O;
    job.lora_rank = 1;
    struct tp_time r1 = fixture_step(TP_FW_MEGATRON);
    job.lora_rank = 64;
    struct tp_time r64 = fixture_step(TP_FW_MEGATRON);
    struct hw h = resolved();
    double L = model.n_layers, M = 4096, K = 4096, N = 4096;
    /* 63 more rank columns: 2 B each over 2M + K + N (fwd) and 4M + 2K + 2N (bwd) elements */
    double extra = L * 2 * 63 * (6 * M + 3 * K + 3 * N) / h.mem_bw;
    near_rel(r64.gemm_s - r1.gemm_s, extra, 1e-9);
}

/* A frozen linear's input is cast row-wise only: NVFP4 on GB200 saves 0.5625 B per input
   element against the trained weight's two copies; Hopper's tensor-wise FP8 wrote one copy
   already. */
static void test_frozen_input_cast(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct tp_time base, lora;
    /* Blackwell NVFP4 under Transformer Engine */
    lora_run("gb200", TP_PREC_NVFP4);
    fixture_check();
    job.lora_rank = 0; /* no adapter: the frozen base alone */
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &lora), TP_OK);
    job.task = TP_TASK_PRETRAIN;
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_OK);
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &base), TP_OK);
    struct hw h = resolved();
    near_rel(h.cast_fwd, 2 + 2 * 0.5625, 1e-12);
    double L = model.n_layers, M = 4096, H = 4096, F = 14336;
    double k_sum = H + H + H + F; /* the inputs of qkv, o, gate-up and down */
    near_rel(base.elementwise_s - lora.elementwise_s, L * M * k_sum * 0.5625 / h.mem_bw, 1e-9);
    /* Hopper, tensor-wise FP8: 3 B either way */
    lora_run("h100-sxm", TP_PREC_FP8);
    fixture_check();
    job.lora_rank = 0;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &lora), TP_OK);
    job.task = TP_TASK_PRETRAIN;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &base), TP_OK);
    near_rel(base.elementwise_s, lora.elementwise_s, 1e-12);
}

/* --fp8-act-store: a Megatron FP8 run keeps the fused SwiGLU's 2 x F input in FP8, 1 byte per
   element fewer over every block and token; Hugging Face's eager MLP has no such option. */
static void test_fp8_act_store(void **state)
{
    (void)state;
    lora_run("h100-sxm", TP_PREC_FP8);
    struct tp_memory off = fixture_memory();
    job.fp8_act_store = true;
    struct tp_memory on = fixture_memory();
    double L = model.n_layers, T = 4096, F = 14336;
    near_rel(off.activations_bytes - on.activations_bytes, L * T * 2 * F * 1.0, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adapter_bytes),
        cmocka_unit_test(test_adapter_rank),
        cmocka_unit_test(test_frozen_input_cast),
        cmocka_unit_test(test_fp8_act_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
