/*
 * test_mem_ds.c - the model states DeepSpeed's BF16_Optimizer keeps (src/eval/memory.c
 * ds_bf16_optimizer) and the frozen weights' storage formats of a LoRA base (memory.c
 * frozen_weight_bytes; docs/memory.md).
 *
 * Expected values follow the code's own allocations:
 *  - DeepSpeed runtime/bf16_optimizer.py (v0.9.5 and v0.16.4 alike): bf16_groups_flat (the
 *    16-bit weights), the parameters' bf16 .grad (cleared only before the next backward),
 *    fp32_groups_gradients_flat = torch.zeros_like(bf16_groups_flat, dtype=float32) (whole, on
 *    every rank), fp32_groups_flat_partition = bf16_dp_partitions[partition_id].clone().float()
 *    (1/dp of the fp32 master), and the wrapped Adam's exp_avg / exp_avg_sq over that partition:
 *    2 + 2 + 4 + (4 + 8) / dp bytes per parameter; engine.py get_data_types /
 *    _do_optimizer_sanity_check pick it for bf16 without ZeRO;
 *  - Transformer Engine's quantized tensors: MXFP8 1 byte + one E8M0 scale per 32 elements,
 *    NVFP4 half a byte + one E4M3 scale per 16, each kept row-wise and column-wise (MLPerf v5.1
 *    llama2_70b_lora custom_callbacks.py asserts both `_rowwise_data` and `_columnwise_data`);
 *    tensor-wise FP8 one byte.
 * Llama 3.1 8B: 8,030,261,248 parameters, 6,979,321,856 of them in the linear (GEMM) weights.
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

#define PARAMS 8030261248.0
#define GEMM 6979321856.0

static void near(const char *what, double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("%s: got %.9g, expected %.9g (+-%g)", what, got, want, tol);
}

/* Megatron-DeepSpeed in bf16 without ZeRO on 8 A100s, data parallel 8. */
static void setup_mds(uint32_t dp)
{
    fixture_run("llama-3.1-8b", "a100-80gb", dp);
    job.framework = TP_FW_MEGATRON_DS;
    job.precision = TP_PREC_BF16;
    job.seq = 2048;
    lay.dp = dp;
    lay.mbs = 1;
    lay.zero = 0;
}

static void test_bf16_optimizer_bytes(void **state)
{
    (void)state;
    setup_mds(8);
    struct tp_memory m = fixture_memory();
    near("every parameter on the GPU", m.params, PARAMS, 0);
    near("bf16 weights", m.weights_bytes, 2 * PARAMS, 1);
    near("bf16 .grad + fp32 gradient accumulators, whole", m.grads_bytes, (2 + 4) * PARAMS, 1);
    near("fp32 master + Adam m, v over the dp partition", m.optimizer_bytes, 12 * PARAMS / 8, 1);
    /* one rank: the partition is everything, 20 bytes per parameter */
    setup_mds(1);
    m = fixture_memory();
    near("dp 1: 2 + 6 + 12", m.weights_bytes + m.grads_bytes + m.optimizer_bytes, 20 * PARAMS,
         1);
}

/* fp16 runs FP16_Optimizer, and ZeRO 1 in bf16 DeepSpeedZeroOptimizer (engine.py
   get_data_types: bf16 gradients accumulate in bf16 once ZeRO is on): neither is
   BF16_Optimizer, so neither keeps its whole fp32 gradient buffer. */
static void test_bf16_optimizer_only_bf16_zero0(void **state)
{
    (void)state;
    setup_mds(8);
    double bf16_z0 = fixture_memory().grads_bytes;
    job.precision = TP_PREC_FP16;
    assert_true(fixture_memory().grads_bytes < bf16_z0);
    job.precision = TP_PREC_BF16;
    lay.zero = 1;
    assert_true(fixture_memory().grads_bytes < bf16_z0);
}

/* A LoRA base's frozen GEMM weights in each stored format, against 16 bits: each of the
   6,979,321,856 GEMM weights 2 bytes -> fp8 1, mxfp8 2 x (1 + 1/32), nvfp4 2 x (0.5 + 1/16);
   the embedding, the head and the norms stay 16-bit, the adapters' states do not move. */
static void test_frozen_formats(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "b200", 8);
    job.seq = 4096;
    lay.dp = 8;
    lay.mbs = 1;
    lay.zero = 1;
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_NVFP4;
    job.task = TP_TASK_LORA;
    struct tp_memory base = fixture_memory();
    static const struct {
        enum tp_frozen_format f;
        double bytes;
    } CASES[] = {
        {TP_FROZEN_16BIT, 2},
        {TP_FROZEN_FP8, 1},
        {TP_FROZEN_MXFP8, 2 * (1 + 1.0 / 32)},
        {TP_FROZEN_NVFP4, 2 * (0.5 + 1.0 / 16)},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        job.frozen_weights = CASES[i].f;
        struct tp_memory m = fixture_memory();
        char what[64];
        snprintf(what, sizeof what, "frozen format %d", (int)CASES[i].f);
        near(what, base.weights_bytes - m.weights_bytes, GEMM * (2 - CASES[i].bytes), 1);
        near("adapter gradients unchanged", m.grads_bytes, base.grads_bytes, 0);
        near("adapter states unchanged", m.optimizer_bytes, base.optimizer_bytes, 0);
    }
    /* auto follows fp8_param_gather: tensor-wise FP8 under precision fp8 */
    job.precision = TP_PREC_FP8;
    job.frozen_weights = TP_FROZEN_FP8;
    double fp8 = fixture_memory().weights_bytes;
    job.frozen_weights = TP_FROZEN_AUTO;
    job.fp8_param_gather = true;
    near("auto under fp8_param_gather = fp8", fixture_memory().weights_bytes, fp8, 0);
}

/* The storage format is a LoRA base's: any other task is refused. */
static void test_frozen_needs_lora(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "b200", 8);
    lay.dp = 8;
    job.frozen_weights = TP_FROZEN_NVFP4;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "frozen_weights needs task lora"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_optimizer_bytes),
        cmocka_unit_test(test_bf16_optimizer_only_bf16_zero0),
        cmocka_unit_test(test_frozen_formats),
        cmocka_unit_test(test_frozen_needs_lora),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
