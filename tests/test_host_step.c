/*
 * test_host_step.c - the host work of a training step beside the blocks (src/eval/host_step.c,
 * docs/host.md "The step beside the blocks"), counted from the code each stack runs:
 *   - Megatron-Core's full-iteration CUDA graph (megatron/core/full_cuda_graph.py) replays the
 *     forward-backward "excluding optimizer"; before each replay StaticBufferLoader copies every
 *     micro-batch's tokens, labels, loss mask and position ids into the static buffers: after
 *     the optimizer's .item() drains the GPU is idle, so the replay's launch and the 4 copies
 *     per micro-batch are exposed whole.
 *   - torch.optim.AdamW's foreach path (_multi_tensor_adamw: the step add and 10 foreach ops)
 *     launches one multi-tensor kernel per 65,536 x 320 elements at depth 2
 *     (MultiTensorApply.cuh), against torchtitan's fused AdamW, one launch per chunk at
 *     depth 4; both run the same foreach clip_grad_norm_.
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

/* Llama 3.1 8B on 8 H100s, TP 1, micro-batch 1 x 4096 tokens, 4 micro-batches a step: its
   blocks are GPU-bound, and the full graph's step pays 1 + 4 x 4 = 17 eager ops more beside the
   optimizer than the eager step. */
static void test_full_graph_copies(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "h100-sxm", 8);
    job.seq = 4096;
    lay.mbs = 1;
    lay.gas = 4;
    struct tp_time eager = fixture_step(TP_FW_MEGATRON);
    job.cuda_graphs = TP_CUDA_GRAPHS_FULL;
    struct tp_time full = fixture_step(TP_FW_MEGATRON);
    double extra = full.optimizer_s - eager.optimizer_s;
    printf("  full-iteration graph, beside the optimizer: %.1f us\n", extra * 1e6);
    assert_true(fabs(extra - 17 * cal.eager_op_s) < 1e-12);
    /* a step of more micro-batches copies more batches */
    lay.gas = 16;
    struct tp_time full16 = fixture_step(TP_FW_MEGATRON);
    job.cuda_graphs = TP_CUDA_GRAPHS_NONE;
    struct tp_time eager16 = fixture_step(TP_FW_MEGATRON);
    assert_true(fabs(full16.optimizer_s - eager16.optimizer_s - 65 * cal.eager_op_s) < 1e-12);
}

/* GPT-2 124M on one H100 at ZeRO 0: 148 tensors (Megatron-Core's names, test_host_log.c) of
   124 M parameters.  torch's foreach AdamW: one step add (depth 1) and 10 foreach ops at depth
   2, each max(ceil(148 / 64), ceil(124e6 / (65536 x 320))) = 6 launches: 66 launches more than
   torchtitan's fused AdamW (6 at depth 4), priced past the optimizer's GPU pass when they
   outlast it: here the unsharded pass over 124 M parameters (16 bytes each at 0.8 of HBM,
   ~1.6 ms) covers both stacks' ~1 ms of launches, so neither adds anything. */
static void test_foreach_adamw(void **state)
{
    (void)state;
    fixture_run("gpt2", "h100-sxm", 1);
    job.seq = 1024;
    lay.mbs = 1;
    lay.gas = 1;
    struct tp_time titan = fixture_step(TP_FW_TORCHTITAN);
    struct tp_time fsdp = fixture_step(TP_FW_FSDP);
    double op = cal.eager_op_s;
    /* torchtitan: 6 fused launches + the clip's 2 x 6 + 8, hidden behind the GPU pass */
    double clip = 2 * 6 + 2 + 4 + 2;
    assert_true((6 + clip) * op < titan.optimizer_s);
    double want = fmax(0, (6 + 10 * 6 + clip) * op - titan.optimizer_s);
    printf("  foreach AdamW past the GPU pass: %.1f us (GPU %.1f us)\n",
           (fsdp.optimizer_s - titan.optimizer_s) * 1e6, titan.optimizer_s * 1e6);
    assert_true(want == 0);
    assert_true(fabs(fsdp.optimizer_s - titan.optimizer_s) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_graph_copies),
        cmocka_unit_test(test_foreach_adamw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
