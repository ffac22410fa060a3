/*
 * test_mds_era.c - the kernels of a Megatron-DeepSpeed run (`--framework megatron-deepspeed`)
 * that the time model prices from the stack's code rather than from a shared constant
 * (src/eval/time_block.c, docs/calibration.md "The Megatron-DeepSpeed era").
 *
 * The loss: Megatron-DeepSpeed's vocab-parallel cross-entropy runs one kernel per op over fp32
 * logits ([MDS-CODE] at c08e2cc2: megatron/model/gpt_model.py CrossEntropy after
 * GPTModelPipe's float16_to_fp32, megatron/core/tensor_parallel/cross_entropy.py):
 *   forward  cast 2 -> 4 (6), max (4), logits - max into a new tensor (8), exp_ (8), sum (4),
 *            div_ (8): 38 bytes per logit;
 *   backward mul_ (8), cast 4 -> 2 (6): 14 bytes per logit;
 * 52 in all, against the 16 the model keeps for the other unfused stacks.
 *
 * The weight gradients: Megatron-DeepSpeed computes each as a new tensor (its gradient-
 * accumulation fusion is commented out, megatron/core/tensor_parallel/layers.py at c08e2cc2)
 * and autograd's AccumulateGrad adds it into the fp16 .grad from the second micro-batch on:
 * 3 x 2 bytes per parameter of the rank (src/eval/host_ds.c).
 *
 * These two are the only differences between the two stacks' element-wise time at one layout
 * (the blocks' kernels are the same legacy fused ones), so they are checked on the step's
 * element-wise seconds.
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

/* Bytes per logit of the two losses, counted from the code (see the header). */
#define MDS_CE_BYTES (6.0 + 4 + 8 + 8 + 4 + 8 + 8 + 6)
#define UNFUSED_CE_BYTES 16.0
/* AccumulateGrad's in-place sum of two fp16 gradients: read 2 + 2, write 2 */
#define GRAD_ACCUM_BYTES (2.0 + 2 + 2)

/* got within a relative tol of want, with both figures in the failure */
static void near(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
}

static struct tp_time step(enum tp_framework fw)
{
    return fixture_step(fw);
}

/* GPT-2 small's shape (the toy example's GPT-3 125M: 12 x 768, vocabulary 50257) on one
   8-GPU A100 node, TP 2 x DP 4, micro-batch 2 of 1024 tokens, 8 micro-batches, fp16: the
   Megatron-DeepSpeed step spends gas x T x V/tp x (52 - 16) bytes more on the loss than the
   same layout under Megatron-LM's accounting, V padded to a multiple of 128 x TP (50432). */
static void test_cross_entropy_bytes(void **state)
{
    (void)state;
    fixture_run("gpt2", "a100-80gb", 8);
    job.seq = 1024;
    job.precision = TP_PREC_FP16;
    lay.tp = 2;
    lay.mbs = 2;
    lay.gas = 8;
    struct tp_time mds = step(TP_FW_MEGATRON_DS), mlm = step(TP_FW_MEGATRON);
    assert_true(MDS_CE_BYTES == 52);
    double logits = lay.gas * (2.0 * 1024) * (50432.0 / 2);
    double bw = cluster.gpu.hbm_bw * cal.mem_eff;
    const struct tp_calib_gpu *o = tp_calib_gpu_find(&cal, cluster.gpu.key);
    if (o && o->mem_eff > 0)
        bw = cluster.gpu.hbm_bw * o->mem_eff;
    struct tp_memory mem = fixture_memory(); /* the rank's parameters */
    double accum = (lay.gas - 1) * mem.params * GRAD_ACCUM_BYTES / bw;
    double want = logits * (MDS_CE_BYTES - UNFUSED_CE_BYTES) / bw + accum;
    near("loss bytes", mds.elementwise_s - mlm.elementwise_s, want, 1e-9);
    /* a fused (chunked) loss is the same 4 bytes per logit on either stack: the gradients'
       accumulation is left */
    job.fused_loss = true;
    mds = step(TP_FW_MEGATRON_DS);
    mlm = step(TP_FW_MEGATRON);
    near("fused loss", mds.elementwise_s - mlm.elementwise_s, accum, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross_entropy_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
