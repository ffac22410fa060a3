/*
 * test_cuda_graphs.c - CUDA graphs in the time model (src/eval/host.c), where they cannot run
 * (src/plan/stack.c), and a runs file's column and notes (src/readers/runs_graphs.c).
 *
 * Sources:
 *   [CUDA-GRAPHS] ahrefs/ocannl#488 (2026-07-30): a chain of N no-op kernels, launched one by one
 *             or stream-captured and replayed as a graph (CUDA 13.3, median of 200): ~6.4 us
 *             of host per individual launch; a graph replay ~15 us fixed plus ~0.58 us per
 *             node (N = 8: 19.4 us; N = 36: 37.9 us).
 *   [MB-CG]   NVIDIA-NeMo/Megatron-Bridge docs/training/cuda-graphs.md (PR #3868, 2026-05-18):
 *             Qwen3 30B A3B, 16 H100, EP 16, MBS 1, GBS 1024, BF16, all-to-all dispatcher:
 *             41.36 s per step eager, 42.00 s with TE-scoped CUDA graphs of attn, moe_router
 *             and moe_preprocess.
 *   [MCORE]   NVIDIA/Megatron-LM d98e8a64 (2026-08-22): transformer_config.py __post_init__
 *             ("full recompute is only supported with full iteration CUDA graph.") and
 *             docs/user-guide/features/cuda_graph.md ("MoE expert dispatch involves dynamic
 *             shapes and cannot be captured"; full_iteration "excluding optimizer").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <string.h>

#include "run_fixture.h"

/* GPT-2 124M under Megatron-Core on one H100, micro-batch 1 of 128 tokens: the blocks' GPU work
   is tens of microseconds.  `op` is the host time of one eager op (the calibration's
   eager_op_s); the host counts are read back from the exposed time at a slow host, where every
   block is host-bound. */
static struct tp_time gpt2_step(enum tp_cuda_graphs g, double op)
{
    fixture_run("gpt2", "h100-sxm", 1);
    job.framework = TP_FW_MEGATRON;
    job.seq = 128;
    job.cuda_graphs = g;
    lay.mbs = 1;
    lay.gas = 1;
    cal.eager_op_s = op;
    fixture_check();
    struct tp_time t;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    return t;
}

/* Host ops of one block, forward and backward together, at a host slow enough (1 ms per op)
   that every block is host-bound: overhead = step overhead + L (H_f + H_b) - GPU. */
static double block_ops(enum tp_cuda_graphs g)
{
    const double op = 1e-3;
    struct tp_time t = gpt2_step(g, op);
    double exposed = t.overhead_s - cal.step_overhead_s;
    return (exposed + t.fwd_s + t.bwd_s) / (model.n_layers * op);
}

/* [CUDA-GRAPHS]: a graphed block costs the host one replay, about what 15 us + 0.58 us per node
   gives for a Transformer Engine block's 12 forward and 20 backward kernels (22 and 27 us),
   at the eager-op prior of 12 us; its eager launches cost at least their 6.4 us each, before
   any Python. */
static void test_graph_replay_against_launch_figures(void **state)
{
    (void)state;
    const double prior = 12e-6;
    double graphed = block_ops(TP_CUDA_GRAPHS_LAYER) * prior;
    double measured = (15e-6 + 0.58e-6 * 12) + (15e-6 + 0.58e-6 * 20);
    assert_true(graphed > measured / 1.5 && graphed < measured * 1.5);
    double eager = block_ops(TP_CUDA_GRAPHS_NONE) * prior;
    assert_true(eager > (12 + 20) * 6.4e-6);
    assert_true(eager > 4 * graphed);
}

/* [MCORE]: a full iteration leaves no host time in the blocks, at any host speed; what stays
   eager (the optimizer, data, logging, the loop) is the per-step overhead, kept whole. */
static void test_full_iteration_no_block_host(void **state)
{
    (void)state;
    struct tp_time slow = gpt2_step(TP_CUDA_GRAPHS_FULL, 1e-3);
    assert_true(fabs(slow.overhead_s - cal.step_overhead_s) < 1e-12);
    struct tp_time layer = gpt2_step(TP_CUDA_GRAPHS_LAYER, 1e-3);
    struct tp_time eager = gpt2_step(TP_CUDA_GRAPHS_NONE, 1e-3);
    assert_true(eager.step_s > layer.step_s && layer.step_s > slow.step_s);
    /* the GPU work is the same kernels either way */
    assert_true(fabs(eager.fwd_s - slow.fwd_s) <= 1e-12 && fabs(eager.bwd_s - slow.bwd_s) <= 1e-12);
}

/* [MB-CG]: on an exchange-bound MoE run the per-layer graphs of the attention and router moved
   the step by +1.5% (41.36 -> 42.00 s): the host before the dispatch is off the critical path,
   so graphing it may not shorten the predicted step by more than that. */
static void test_bridge_moe_layer_graphs(void **state)
{
    (void)state;
    struct tp_time t[2];
    for (int g = 0; g < 2; g++) {
        fixture_run("qwen3-30b-a3b", "h100-sxm", 16);
        job.framework = TP_FW_MEGATRON;
        job.precision = TP_PREC_BF16;
        job.seq = 4096;
        job.moe_imbalance = 1.0;
        job.cuda_graphs = g ? TP_CUDA_GRAPHS_LAYER : TP_CUDA_GRAPHS_NONE;
        lay.dp = 16;
        lay.ep = 16;
        lay.mbs = 1;
        lay.gas = 64;
        lay.zero = 1;
        fixture_check();
        assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t[g]), TP_OK);
    }
    assert_true(t[1].step_s <= t[0].step_s);
    assert_true(t[0].step_s - t[1].step_s < (42.00 - 41.36) / 41.36 * t[0].step_s);
}

/* [MCORE]: where Megatron-Core refuses the graphs, so does the plan, with a reason. */
static void test_where_graphs_cannot_run(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    fixture_run("qwen3-30b-a3b", "h100-sxm", 16);
    job.framework = TP_FW_MEGATRON;
    lay.ep = 16;
    lay.dp = 16;
    job.cuda_graphs = TP_CUDA_GRAPHS_FULL; /* dropless: the dispatcher's shapes are the host's */
    assert_int_equal(tp_layout_check(&model, &cluster, &job, &lay, &err), TP_OK);
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "dropless"));
    job.moe_capacity = 1.0;
    job.moe_pad_capacity = true;
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_OK);
    job.cuda_graphs = TP_CUDA_GRAPHS_LAYER;
    lay.recompute = TP_RECOMPUTE_FULL;
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "full recompute"));
    job.cuda_graphs = TP_CUDA_GRAPHS_FULL; /* full recompute inside a full iteration runs */
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_OK);
    job.framework = TP_FW_FSDP;
    lay.recompute = TP_RECOMPUTE_NONE;
    lay.ep = 1;
    job.moe_capacity = 0;
    job.moe_pad_capacity = false;
    job.cuda_graphs = TP_CUDA_GRAPHS_LAYER;
    assert_int_equal(tp_stack_check(&model, &job, &lay, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "Megatron-Core"));
}

/* The runs file: the cuda_graphs column decides; else the notes' flags on Megatron-Core rows
   (MLPerf's FULL_CUDA_GRAPH, --enable-cuda-graph, ...), a router-only scope and a dropless
   full iteration as runs_graphs.c says. */
static void test_row_cuda_graphs(void **state)
{
    (void)state;
    const char *cols[] = {"row_id", "arch", "n_layers", "hidden", "n_heads", "kv_heads", "vocab",
                          "ffn_hidden", "moe_num_experts", "moe_topk", "moe_ffn_hidden",
                          "head_dim", "seq_len", "gpu_type", "num_gpus", "tp", "pp", "ep",
                          "micro_batch", "global_batch", "precision", "framework_key", "notes",
                          "cuda_graphs"};
    const char *cells[] = {"c:1", "llama", "32", "4096", "32", "8", "128256", "14336", "", "",
                           "", "128", "8192", "gb200", "72", "1", "1", "1", "1", "72", "fp8",
                           "nemo", "full-iteration CUDA graphs (FULL_CUDA_GRAPH=1)", ""};
    enum { N = sizeof cols / sizeof cols[0], NOTES = 22, COL = 23 };
    static struct tp_run run;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_FULL);
    cells[NOTES] = "FULL_CUDA_GRAPH=1, MCORE_CUDA_GRAPH=1, but FULL_CUDA_GRAPH=0 in this config";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_LAYER);
    cells[NOTES] = "run with --enable-cuda-graph";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_LAYER);
    cells[NOTES] = "cuda_graph_impl transformer_engine, scope [moe_router, moe_preprocess]";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_NONE);
    cells[NOTES] = "no CUDA graphs";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_NONE);
    cells[COL] = "full_iteration"; /* the column decides */
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_FULL);
    cells[COL] = "sometimes";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "cuda_graphs"));
    /* a dropless MoE row whose notes say full iteration keeps per-layer graphs */
    cells[COL] = "";
    cells[NOTES] = "Full-Iter CUDA Graphs";
    cells[0] = "q:1";
    cells[1] = "qwen3_moe";
    cells[2] = "48";
    cells[3] = "2048";
    cells[5] = "4";
    cells[6] = "151936";
    cells[7] = "6144";
    cells[8] = "128";
    cells[9] = "8";
    cells[10] = "768";
    cells[12] = "4096";
    cells[14] = "8";
    cells[17] = "8";
    cells[19] = "512";
    cells[20] = "bf16";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_LAYER);
    assert_non_null(strstr(run.assumptions, "dropless MoE"));
    /* not a Megatron-Core row: the notes are not read */
    cells[NOTES] = "FULL_CUDA_GRAPH=1";
    cells[21] = "torchtitan";
    cells[8] = "";
    cells[9] = "";
    cells[10] = "";
    cells[17] = "1";
    assert_int_equal(tp_run_from_row(cols, cells, N, &run, &err), TP_OK);
    assert_int_equal(run.job.cuda_graphs, TP_CUDA_GRAPHS_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_replay_against_launch_figures),
        cmocka_unit_test(test_full_iteration_no_block_host),
        cmocka_unit_test(test_bridge_moe_layer_graphs),
        cmocka_unit_test(test_where_graphs_cannot_run),
        cmocka_unit_test(test_row_cuda_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
