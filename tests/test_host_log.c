/*
 * test_host_log.c - Megatron's per-step logging flags (src/eval/host_log.c, docs/host.md):
 * --log-params-norm and --log-num-zeros-in-grad priced from the code that runs them
 * ([MCORE-CI] NVIDIA/Megatron-LM d98e8a64dd: megatron/training/utils/common_utils.py
 * calc_params_l2_norm, megatron/core/optimizer/clip_grads.py count_zeros_fp32; [MDS-CODE]
 * microsoft/Megatron-DeepSpeed c08e2cc2 megatron/utils.py).
 *
 * The model is GPT-2 124M as Megatron builds it (12 blocks of LayerNorm + biased linears,
 * learned positions, tied head): per block the input norm's weight and bias, linear_qkv's
 * weight and bias, linear_proj's, the pre-MLP norm's, fc1's and fc2's = 12 tensors; with the
 * word and position embeddings and the final LayerNorm 148 on one stage.  The calibration is
 * the priors' (eager_op_s 12 us), so every figure follows from the counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>

#include "run_fixture.h"

#define TENSORS 148.0

static void setup_ci(void)
{
    fixture_run("gpt2", "a100-80gb", 8);
    tp_calib_prior(&cal);
    job.seq = 1024;
    lay.tp = 1;
    lay.pp = 1;
    lay.mbs = 4;
    lay.gas = 1;
}

/* The seconds the flags as set add to the optimizer's share of the step. */
static double added(enum tp_framework fw, bool norm, bool zeros)
{
    job.log_params_norm = false;
    job.log_num_zeros = false;
    double base = fixture_step(fw).optimizer_s;
    job.log_params_norm = norm;
    job.log_num_zeros = zeros;
    double with = fixture_step(fw).optimizer_s;
    job.log_params_norm = job.log_num_zeros = false;
    return with - base;
}

/* Off unless asked: Megatron's defaults (both flags store_true in arguments.py). */
static void test_off_by_default(void **state)
{
    (void)state;
    struct tp_job j;
    tp_job_init(&j);
    assert_false(j.log_params_norm);
    assert_false(j.log_num_zeros);
}

/* count_zeros_fp32 at ZeRO 0 visits every one of the 148 gradients: 5 eager ops each (the
   filters and detach, ne + sum of count_nonzero, numel - count, the running add), then its
   all-reduce (a launch and 3 ops) and .item() (2): 746 ops, and 6 bytes per parameter read
   and written on the GPU (under a millisecond here).  The host dominates: ~9 ms. */
static void test_zeros_every_tensor(void **state)
{
    (void)state;
    setup_ci();
    lay.zero = 0;
    double got = added(TP_FW_MEGATRON, false, true);
    double host = (TENSORS * 5 + 4 + 2) * cal.eager_op_s;
    if (!(got >= host && got <= host + 1e-3))
        fail_msg("got %.6g s, want %.6g s plus the bytes", got, host);
}

/* Under the distributed optimizer (ZeRO 1 over DP 8) the optimizer's parameters are the
   rank's shard: 148 / 8 + 1 tensors counted, an eighth of the bytes, and the count's
   all-reduce spans all 8 ranks (NCCL latency). */
static void test_zeros_shard(void **state)
{
    (void)state;
    setup_ci();
    lay.zero = 1;
    double got = added(TP_FW_MEGATRON, false, true);
    double host = ((TENSORS / 8 + 1) * 5 + 4 + 2) * cal.eager_op_s;
    if (!(got > host && got <= host + 5e-4))
        fail_msg("got %.6g s, want %.6g s plus bytes and latency", got, host);
    lay.zero = 0;
    assert_true(added(TP_FW_MEGATRON, false, true) > 5 * got);
}

/* calc_params_l2_norm (Megatron-Core): the Python walk over the 148 parameters (a quarter
   op each), 8 buckets' norm and square and 6 adds (22 ops), 6 all-reduces (4 ops each) and
   .item() (2): 85 ops, about 1 ms, plus 4 bytes per fp32 main parameter; no per-tensor copy
   (the optimizer's main_param exists). */
static void test_params_norm_mcore(void **state)
{
    (void)state;
    setup_ci();
    double got = added(TP_FW_MEGATRON, true, false);
    double host = (TENSORS * 0.25 + 22 + 6 * 4 + 2) * cal.eager_op_s;
    if (!(got >= host && got <= host + 5e-4))
        fail_msg("got %.6g s, want %.6g s plus the bytes", got, host);
}

/* Megatron-DeepSpeed's older calc_params_l2_norm copies every parameter to fp32 in bf16
   (param.data.float(): a launch each, and 2 + 4 + 4 bytes per parameter with the norm's read:
   1.24 GB, under 1.5 ms on an A100) and reads param.data directly in fp16; its zeros count
   is 0 under DeepSpeed's engine (train_step: num_zeros_in_grad = 0): nothing added. */
static void test_params_norm_mds(void **state)
{
    (void)state;
    setup_ci();
    job.precision = TP_PREC_BF16;
    double bf16 = added(TP_FW_MEGATRON_DS, true, false);
    double host = (TENSORS * 1.25 + 2 + 2 + 4 + 2) * cal.eager_op_s;
    if (!(bf16 >= host && bf16 <= host + 1.5e-3))
        fail_msg("bf16: got %.6g s, want %.6g s plus the bytes", bf16, host);
    job.precision = TP_PREC_FP16;
    double fp16 = added(TP_FW_MEGATRON_DS, true, false);
    assert_true(fp16 < bf16 - 100 * cal.eager_op_s);
    assert_true(added(TP_FW_MEGATRON_DS, false, true) == 0);
}

/* Only Megatron's stacks have the flags: another stack refuses them with the field named. */
static void test_other_stacks_refuse(void **state)
{
    (void)state;
    setup_ci();
    struct tp_error err = {{0}, {0}};
    job.framework = TP_FW_DEEPSPEED;
    job.log_params_norm = true;
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_EINVAL);
    job.log_params_norm = false;
    job.log_num_zeros = true;
    job.framework = TP_FW_FSDP;
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_EINVAL);
    job.framework = TP_FW_MEGATRON;
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_by_default),
        cmocka_unit_test(test_zeros_every_tensor),
        cmocka_unit_test(test_zeros_shard),
        cmocka_unit_test(test_params_norm_mcore),
        cmocka_unit_test(test_params_norm_mds),
        cmocka_unit_test(test_other_stacks_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
