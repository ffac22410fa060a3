/*
 * test_outer_tp.c - the tensor-parallel collectives outside the blocks (src/eval/outer_tp.c):
 * per micro-batch, the vocabulary-parallel embedding's all-reduce of the hidden states
 * (forward), the output layer's all-reduce of its input's gradient (backward) and the
 * vocabulary-parallel cross-entropy's three all-reduces of one fp32 value per token (the
 * logits' maximum, the target's logit, the sum of the exponentials), counted from
 * [MDS-CODE] megatron/core/tensor_parallel/layers.py VocabParallelEmbedding.forward,
 * megatron/model/language_model.py parallel_lm_logits and
 * megatron/core/tensor_parallel/cross_entropy.py _VocabParallelCrossEntropy.forward at c08e2cc2.
 *
 * Each collective is the model's NCCL ring (docs/physics.md §4.3, src/eval/comm.c): an
 * all-reduce over n ranks of one node takes lat_base + 2 (n - 1) lat_intra + 2 (n - 1) / n x
 * bytes / (NVLink bandwidth x eff_intra).  A block runs two all-reduces of the hidden states
 * each way (after attention and after the MLP, Megatron-LM [SHO19] §3), so one stage holding
 * the whole model pays (4 L + 2) of them and 3 small ones per micro-batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <stdio.h>

#include "run_fixture.h"

/* The collectives counted from the code (see the header): hidden-state all-reduces per block
   (two each way), outside the blocks (embedding forward, head backward), and the loss's
   per-token fp32 all-reduces. */
#define BLOCK_ALLREDUCES 4.0
#define OUTER_ALLREDUCES 2.0
#define CE_ALLREDUCES 3.0

static void near(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
}

/* An all-reduce of `bytes` over n GPUs of one NVLink node, from the calibration's constants. */
static double ring_allreduce(double bytes, double n)
{
    double lat = cal.lat_base_s + 2 * (n - 1) * cal.lat_intra_s;
    return lat + 2 * (n - 1) / n * bytes / (cluster.gpu.intra_bw * cal.eff_intra);
}

/* GPT-2 small (12 x 768) on one 8-GPU A100 node, TP 2 x DP 4, micro-batch 2 of 1024 tokens,
   8 micro-batches, fp16, no recompute, the Megatron-DeepSpeed example's stack without the
   pipeline: the exposed TP time is 8 x ((4 x 12 + 2) hidden-state all-reduces + 3 of 2048
   fp32 values). */
static void test_single_stage(void **state)
{
    (void)state;
    fixture_run("gpt2", "a100-80gb", 8);
    job.seq = 1024;
    job.precision = TP_PREC_FP16;
    lay.tp = 2;
    lay.mbs = 2;
    lay.gas = 8;
    struct tp_time t = fixture_step(TP_FW_MEGATRON_DS);
    double tokens = 2.0 * 1024, hidden = ring_allreduce(tokens * 768 * 2, 2);
    double small = ring_allreduce(tokens * 4, 2);
    double per_mb = (BLOCK_ALLREDUCES * 12 + OUTER_ALLREDUCES) * hidden + CE_ALLREDUCES * small;
    near("TP time", t.tp_comm_s, lay.gas * per_mb, 1e-9);
    /* the same on Megatron-Core's stack (Megatron-Core's VocabParallelEmbedding and
       vocab_parallel_cross_entropy run the same collectives), its async backward all-reduce
       beside the weight gradient off (--no-async-tensor-model-parallel-allreduce:
       test_async_tp.c prices it) */
    job.no_async_tp_allreduce = true;
    struct tp_time mc = fixture_step(TP_FW_MEGATRON);
    near("TP time, megatron", mc.tp_comm_s, lay.gas * per_mb, 1e-9);
    /* sequence parallelism turns each all-reduce into a reduce-scatter and an all-gather of
       the same ring volume: the same time on one stage */
    lay.sp = true;
    struct tp_time sp = fixture_step(TP_FW_MEGATRON);
    near("TP time, SP", sp.tp_comm_s, lay.gas * per_mb, 1e-9);
}

/* Without tensor parallelism nothing is added (and the stage runs no collective). */
static void test_no_tp(void **state)
{
    (void)state;
    fixture_run("gpt2", "a100-80gb", 8);
    job.seq = 1024;
    lay.mbs = 2;
    lay.gas = 8;
    struct tp_time t = fixture_step(TP_FW_MEGATRON_DS);
    assert_true(t.tp_comm_s == 0);
}

/* The last of two pipeline stages holds the head and the loss; at TP 4 on one node it pays
   (4 x 6 + 1) hidden-state all-reduces (its six blocks and the head's backward) and the
   loss's three per micro-batch. */
static void test_last_stage(void **state)
{
    (void)state;
    fixture_run("gpt2", "a100-80gb", 8);
    job.seq = 1024;
    job.precision = TP_PREC_FP16;
    lay.tp = 4;
    lay.pp = 2;
    lay.mbs = 1;
    lay.gas = 16;
    job.no_async_tp_allreduce = true; /* the collectives alone (test_async_tp.c) */
    struct tp_time t = fixture_step(TP_FW_MEGATRON);
    double tokens = 1024, hidden = ring_allreduce(tokens * 768 * 2, 4);
    double small = ring_allreduce(tokens * 4, 4);
    double last = (BLOCK_ALLREDUCES * 6 + 1) * hidden + CE_ALLREDUCES * small;
    double first = (BLOCK_ALLREDUCES * 6 + 1) * hidden;
    assert_true(last > first); /* the slowest stage is the last */
    near("TP time, last stage", t.tp_comm_s, lay.gas * last, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_stage),
        cmocka_unit_test(test_no_tp),
        cmocka_unit_test(test_last_stage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
