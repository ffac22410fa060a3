/*
 * test_bridge_qwen.c - what the Qwen3-30B-A3B rows of Megatron-Bridge's performance summary
 * (data/runs/megatron_bridge_moe_subset.csv) ran, release by release, as the runs reader maps
 * them (src/readers/runs_recipes.c, runs_graphs.c; docs/moe.md "Qwen3-30B-A3B in
 * Megatron-Bridge by release").
 *
 * Sources:
 *   [MB-REL] NVIDIA-NeMo/Megatron-Bridge release tags and their
 *            scripts/performance/configs/qwen/qwen3_workload_base_configs.py:
 *            - v0.3.1 (the 26.02.01 container): QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 is
 *              expert_model_parallel_size 16, no pipeline, moe_a2a_overlap False, HybridEP
 *              (f29a269f8, the r0.3.0 cherry-pick of #2477); the B200 presets micro-batch 4 with
 *              cuda_graph_scope [attn, moe_router, moe_preprocess];
 *            - v0.3.0 (26.02): the B200 presets micro-batch 1, no flex backend, cuda_graph_scope
 *              [moe_router, moe_preprocess];
 *            - v0.5.0 (26.06): the GB300, GB200 and B300 FP8_MX presets set moe_a2a_overlap True
 *              and full-iteration CUDA graphs.
 *   The published figures (docs/performance-summary-archive.md at 067f987): H100 FP8, 16 GPUs,
 *   gbs 1024, mbs 1: 9,058 tokens/s per GPU in 26.02.01 (printed PP 2, VP 12, EP 8), 8,901 in
 *   26.04 and 8,960 in 26.04.01 (printed EP 16, PP 1).
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

static const char *const FILES[] = {"data/runs/megatron_bridge_moe_subset.csv"};

static struct tp_runs runs;

static int load(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    return tp_runs_load(FILES, 1, &runs, &err) == TP_OK ? 0 : -1;
}

static int unload(void **state)
{
    (void)state;
    tp_runs_free(&runs);
    return 0;
}

static const struct tp_run *row(unsigned n)
{
    char id[64];
    snprintf(id, sizeof id, "megatron_bridge_perf_summary:%u", n);
    for (size_t i = 0; i < runs.n; i++)
        if (strcmp(runs.runs[i].row_id, id) == 0)
            return &runs.runs[i];
    fail_msg("row %s not mapped", id);
    return NULL;
}

/* 26.02.01's H100 row runs the v0.3.1 recipe's layout (EP 16, no pipeline, no overlap, no CUDA
   graphs), the layout the 26.04 and 26.04.01 rows print; the three published figures agree
   within 2% (9,058 against 8,901 and 8,960), where the same printed PP 2 x VP 12 layout measured
   5,113 in 26.02. */
static void test_h100_2602_01_recipe(void **state)
{
    (void)state;
    const struct tp_run *r = row(191), *a = row(147), *b = row(101);
    assert_int_equal(r->layout.ep, 16);
    assert_int_equal(r->layout.pp, 1);
    assert_int_equal(r->layout.dp, 16);
    assert_int_equal(r->layout.mbs, 1);
    assert_int_equal(r->layout.gas, 64);
    assert_false(r->job.moe_a2a_overlap); /* "moe_a2a_overlap=False" in the notes */
    assert_int_equal(r->job.cuda_graphs, TP_CUDA_GRAPHS_NONE);
    /* HybridEP, as the recipe sets it; across two H100 nodes priced as the all-to-all */
    assert_int_equal(r->job.moe_dispatcher, TP_MOE_DISPATCH_HYBRIDEP);
    for (const struct tp_run *o = a; o; o = o == a ? b : NULL) {
        assert_int_equal(o->layout.ep, r->layout.ep);
        assert_int_equal(o->layout.pp, r->layout.pp);
        assert_int_equal(o->layout.mbs, r->layout.mbs);
        assert_int_equal(o->job.moe_a2a_overlap, r->job.moe_a2a_overlap);
        assert_int_equal(o->job.cuda_graphs, r->job.cuda_graphs);
        assert_true(fabs(r->tokens_per_s_per_gpu / o->tokens_per_s_per_gpu - 1) < 0.02);
    }
    assert_true(fabs(r->tokens_per_s_per_gpu - 9058) < 0.5);
    /* the same printed layout in 26.02 measured 1.77x slower: not this recipe */
    assert_true(r->tokens_per_s_per_gpu / row(228)->tokens_per_s_per_gpu > 1.7);
}

/* The 26.02 H100 recipe (v0.3.0) asks for deep_ep, which its container lacks: what ran is not
   determinable and the row keeps the dropless all-to-all without the overlap. */
static void test_h100_2602_undetermined(void **state)
{
    (void)state;
    const struct tp_run *r = row(228);
    assert_int_equal(r->job.moe_dispatcher, TP_MOE_DISPATCH_ALLTOALL);
    assert_false(r->job.moe_a2a_overlap);
    assert_int_equal(r->layout.pp, 2);
    assert_int_equal(r->layout.ep, 8);
}

/* B200: micro-batch 1 with the router and preprocessing alone in TE's graphs (25.11, 26.02: the
   attention and the experts eager), micro-batch 4 with the attention in them from 26.02.01. */
static void test_b200_graph_scope(void **state)
{
    (void)state;
    static const unsigned eager[] = {258, 227}, graphed[] = {190, 146, 100};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(row(eager[i])->layout.mbs, 1);
        assert_int_equal(row(eager[i])->job.cuda_graphs, TP_CUDA_GRAPHS_NONE);
    }
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(row(graphed[i])->layout.mbs, 4);
        assert_int_equal(row(graphed[i])->job.cuda_graphs, TP_CUDA_GRAPHS_LAYER);
    }
}

/* 26.06 MXFP8 on GB300, GB200 and B300: the 1F1B all-to-all overlap on all three (B300 too),
   full-iteration graphs kept per layer over the dropless MoE (runs_graphs.c); 26.04.01's B300
   preset had neither. */
static void test_2606_mxfp8(void **state)
{
    (void)state;
    static const unsigned on[] = {47, 48, 49};
    for (size_t i = 0; i < 3; i++) {
        assert_true(row(on[i])->job.moe_a2a_overlap);
        assert_int_equal(row(on[i])->job.cuda_graphs, TP_CUDA_GRAPHS_LAYER);
    }
    assert_false(row(99)->job.moe_a2a_overlap);
    assert_int_equal(row(99)->job.cuda_graphs, TP_CUDA_GRAPHS_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h100_2602_01_recipe),
        cmocka_unit_test(test_h100_2602_undetermined),
        cmocka_unit_test(test_b200_graph_scope),
        cmocka_unit_test(test_2606_mxfp8),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
