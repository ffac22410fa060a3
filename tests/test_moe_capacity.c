/*
 * test_moe_capacity.c - what a capacity factor does to the expert-parallel step under
 * Megatron-Core, padded or not, what full recompute does to the exchange, and the scale-up
 * links of the export parts (docs/moe.md "Capacity, padding and the held-out misses").
 *
 * Sources:
 *   [MCORE-CAP] NVIDIA/Megatron-LM 6a6cd47 (the Megatron-LM-250624 submodule of
 *            alibaba/Pai-Megatron-Patch 2b201af, which InternLM/xtuner's MoE benchmark ran):
 *            moe/moe_utils.py get_capacity = ceil(num_tokens / num_experts * capacity_factor),
 *            called by topk_softmax_with_capacity on the rank's own num_tokens * topk;
 *            moe/token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess under drop_and_pad:
 *            num_out_tokens = capacity * num_experts, every local expert's count
 *            capacity * tp_size * ep_size; transformer_config.py __post_init__:
 *            "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity",
 *            MoEFlexTokenDispatcher: "Flex token dispatcher does not support
 *            --moe-pad-expert-input-to-capacity"; transformer_block.py _checkpointed_forward:
 *            full recompute wraps each TransformerLayer in tensor_parallel.checkpoint (or
 *            te_checkpoint), so the backward reruns the layer's forward, the MoE layer's
 *            dispatch and combine included.
 *   [XTUNER-MOE] InternLM/xtuner docs/en/benchmark/megatron_moe_benchmark.md (4b10fa3ed), "EP Load
 *            Imbalance": Qwen3-235B-A22B on 256 H800 (80 GB), tp4, ep8, DeepEP, pp8, vpp4,
 *            real routing with --moe-expert-capacity-factor 1, 2, 3, 5: all four ran
 *            (644.92, 634.58, 609.82, 493.96 tokens/GPU/s); "If capacity is set to larger
 *            values, or directly using token dropless strategies, it will be even slower and
 *            easily OOM".
 *   [MCORE-RC] NVIDIA/Megatron-LM d98e8a64dd megatron/core/transformer/moe/moe_layer.py:
 *            MoELayer.forward wraps custom_forward (route, preprocess, dispatch,
 *            routed_experts_compute, combine, the shared experts) in tensor_parallel.checkpoint
 *            (te_checkpoint in FP8) when moe_layer_recompute ("moe" in recompute_modules);
 *            transformer_config.py: '"moe": recompute the MoE layer', normal checkpointing.
 *   [A800]   NVIDIA's A800 (Reuters via tweakers.net, 2022-11-08: "de bandbreedte van de
 *            NVLink-interconnect is beperkt tot 400GB/s ... bij de A100 600GB/s"); the H800 in
 *            [DSV3] §3.2.2: NVLink 160 GB/s achieved of the part's 400 GB/s (200 each way).
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

struct ep_case {
    double capacity, imbalance;
    bool pad;
    enum tp_recompute recompute;
    uint32_t modules; /* selective recompute's modules (0: the default, core_attn) */
};

/* Qwen3-30B-A3B (128 experts, top-8) on 16 H100, EP 8 over the alltoall dispatcher, Megatron,
   BF16, 4096 tokens per micro-batch: the step's exposed exchange and its GEMM seconds. */
static void qwen3_step(const struct ep_case *e, struct tp_time *t)
{
    fixture_run("qwen3-30b-a3b", "h100-sxm", 16);
    job.framework = TP_FW_MEGATRON;
    job.seq = 4096;
    job.moe_capacity = e->capacity;
    job.moe_imbalance = e->imbalance;
    job.moe_pad_capacity = e->pad;
    lay.dp = 16;
    lay.ep = 8;
    lay.zero = 1;
    lay.recompute = e->recompute;
    lay.recompute_modules = e->modules;
    fixture_check();
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, t), TP_OK);
}

/* [MCORE-CAP]: without padding the capacity is a cap on what each expert keeps, per source
   rank, so it never raises the busiest rank's load and a factor of 1 removes the skew; padded,
   every expert runs and every rank sends capacity rows whatever the routing: at factor 1 the
   balanced step, at factor 2 twice the exchange's bytes. */
static void test_capacity_and_padding(void **state)
{
    (void)state;
    struct tp_time dropless, balanced, cap1, cap5, pad1, pad2;
    qwen3_step(&(struct ep_case){0, 1.2, false, TP_RECOMPUTE_NONE, 0}, &dropless);
    qwen3_step(&(struct ep_case){0, 1.0, false, TP_RECOMPUTE_NONE, 0}, &balanced);
    qwen3_step(&(struct ep_case){1, 1.2, false, TP_RECOMPUTE_NONE, 0}, &cap1);
    qwen3_step(&(struct ep_case){5, 1.2, false, TP_RECOMPUTE_NONE, 0}, &cap5);
    qwen3_step(&(struct ep_case){1, 1.2, true, TP_RECOMPUTE_NONE, 0}, &pad1);
    qwen3_step(&(struct ep_case){2, 1.2, true, TP_RECOMPUTE_NONE, 0}, &pad2);
    assert_true(dropless.ep_comm_s > balanced.ep_comm_s);
    /* a cap above the skew binds nothing; a cap of 1 drops the busiest expert's excess */
    assert_float_equal(cap5.step_s, dropless.step_s, 1e-9 * dropless.step_s);
    assert_float_equal(cap1.step_s, balanced.step_s, 1e-9 * balanced.step_s);
    /* padded to a factor of 1: exactly the balanced rows, below the dropless skew; and no host
       wait for the split sizes ("no_sync" under drop_and_pad: src/eval/moe_host.c) */
    assert_float_equal(pad1.fwd_s + pad1.bwd_s, balanced.fwd_s + balanced.bwd_s,
                       1e-9 * balanced.step_s);
    assert_float_equal(pad1.ep_comm_s, balanced.ep_comm_s, 1e-9 * balanced.step_s);
    assert_true(pad1.step_s < balanced.step_s);
    /* padded to 2: twice the bytes (the per-message latency aside) and more GEMM time, the
       expert GEMMs run twice the rows */
    double ratio = pad2.ep_comm_s / pad1.ep_comm_s;
    assert_true(ratio > 1.9 && ratio <= 2.0);
    assert_true(pad2.gemm_s > pad1.gemm_s * 1.2);
}

/* [MCORE-CAP]: full recompute reruns each MoE layer's forward exchange in the backward: a
   dispatch and a combine forward, the same backward, and the forward's again, 6 of 4. */
static void test_full_recompute_reruns_the_exchange(void **state)
{
    (void)state;
    struct tp_time none, full;
    qwen3_step(&(struct ep_case){0, 1.0, false, TP_RECOMPUTE_NONE, 0}, &none);
    qwen3_step(&(struct ep_case){0, 1.0, false, TP_RECOMPUTE_FULL, 0}, &full);
    assert_float_equal(full.ep_comm_s / none.ep_comm_s, 1.5, 1e-9);
}

/* [MCORE-RC]: selective recompute of "moe" reruns the whole MoE layer in the backward, route,
   dispatch, the routed experts and combine, so it costs at least the experts' forward FLOPs at
   the GPU's dense peak beside the exchange it reruns (before, only the exchange was priced: 0
   GEMM seconds); "layernorm" reruns no GEMM.  Qwen3-30B-A3B: hidden 2048, 128 experts of 768,
   top-8, 48 MoE blocks; 4096 tokens per GPU per step; the forward's three expert GEMMs are
   2 * 3 * 2048 * 768 * 8 FLOPs per token and block. */
static void test_moe_module_recompute_reruns_the_experts(void **state)
{
    (void)state;
    struct tp_time ln, moe, none;
    qwen3_step(&(struct ep_case){0, 1.0, false, TP_RECOMPUTE_NONE, 0}, &none);
    qwen3_step(&(struct ep_case){0, 1.0, false, TP_RECOMPUTE_SELECTIVE, TP_RC_LAYERNORM}, &ln);
    qwen3_step(&(struct ep_case){0, 1.0, false, TP_RECOMPUTE_SELECTIVE,
                                 TP_RC_LAYERNORM | TP_RC_MOE}, &moe);
    double expert_fwd = 2.0 * 3 * 2048 * 768 * 8 * 48 * 4096 / 989e12;
    double rerun = moe.gemm_s - ln.gemm_s;
    assert_true(rerun >= expert_fwd);
    /* and no more than the whole forward's GEMMs (attention projections and router included) */
    assert_true(rerun <= none.gemm_s / 3 * 1.0001);
    assert_float_equal(ln.gemm_s, none.gemm_s, 1e-9 * none.gemm_s);
    /* the exchange again, as full recompute reruns it: 6 of 4 */
    assert_float_equal(moe.ep_comm_s / none.ep_comm_s, 1.5, 1e-9);
}

/* [A800], [DSV3] §3.2.2: both export parts carry 400 GB/s of NVLink in all, 200 each way, two thirds of
   the A100's 600 and under half the H100's 900. */
static void test_export_parts_nvlink(void **state)
{
    (void)state;
    static const struct {
        const char *gpu;
        double per_direction; /* GB/s */
    } G[] = {{"a800-80gb", 200}, {"h800", 200}, {"a100-80gb", 300}, {"h100-sxm", 450}};
    for (size_t i = 0; i < sizeof G / sizeof G[0]; i++) {
        struct tp_cluster c;
        struct tp_error err = {{0}, {0}};
        assert_int_equal(tp_cluster_init(&c, G[i].gpu, 8, &err), TP_OK);
        assert_float_equal(c.gpu.intra_bw, G[i].per_direction * 1e9, 1e-6);
    }
}

/* [MCORE-CAP]: unpadded, the dispatcher's buffers hold what arrives (num_out_tokens is the kept
   copies' count), so a factor above the skew costs no memory; padded, every expert holds its
   capacity.  At factor 5 the padded run holds more than the dropless one, the unpadded the
   same. */
static void test_unpadded_capacity_memory(void **state)
{
    (void)state;
    fixture_run("qwen3-30b-a3b", "h100-sxm", 16);
    job.framework = TP_FW_MEGATRON;
    job.seq = 4096;
    lay.dp = 16;
    lay.ep = 8;
    lay.zero = 1;
    struct tp_memory dropless = fixture_memory();
    job.moe_capacity = 5;
    struct tp_memory cap5 = fixture_memory();
    job.moe_pad_capacity = true;
    struct tp_memory pad5 = fixture_memory();
    assert_float_equal(cap5.total_bytes, dropless.total_bytes, 1e-9 * dropless.total_bytes);
    assert_true(pad5.total_bytes > dropless.total_bytes * 1.05);
}

/* One row of [XTUNER-MOE]'s capacity sweep as the runs file carries it: the Qwen3-235B-A22B
   shape of its Hugging Face config.json, the table's layout, and the notes' quotes. */
static const char *const XT_COLS[] = {
    "row_id", "arch", "n_layers", "hidden", "n_heads", "kv_heads", "head_dim", "vocab",
    "ffn_hidden", "moe_num_experts", "moe_topk", "moe_ffn_hidden", "tied", "dense_layers",
    "seq_len", "gpu_type", "num_gpus", "gpus_per_node", "tp", "pp", "dp", "ep", "vpp",
    "zero_or_fsdp", "micro_batch", "global_batch", "precision", "framework_key",
    "source_version_or_date", "notes", "moe_capacity"};
enum { XT_N = sizeof XT_COLS / sizeof XT_COLS[0], XT_NOTES = XT_N - 2 };

static void xtuner_row(const char *notes, const char *capacity, struct tp_run *run,
                       enum tp_status want)
{
    const char *cells[XT_N] = {"xt:1", "qwen3_moe", "94", "4096", "64", "4", "128", "151936",
                               "12288", "128", "8", "1536", "0", "0", "4096", "h800", "256",
                               "8", "4", "8", "8", "8", "4", "megatron-distopt", "1", "2048",
                               "bf16", "megatron", "2025-10-28", notes, capacity};
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_run_from_row(XT_COLS, cells, XT_N, run, &err), want);
    if (want != TP_OK)
        assert_non_null(strstr(err.msg, "moe_capacity"));
}

/* The factor as the rows quote it: the table's "capacity=3", Megatron-Core's flag, its config
   field; a moe_capacity cell decides over the notes (0: dropless); a value Megatron-Core would
   not take is an error naming the column.  All four of [XTUNER-MOE]'s runs ran on 80 GB: the
   unpadded factor costs no memory beyond the skew, so each is predicted to fit. */
static void test_row_capacity(void **state)
{
    (void)state;
    static struct tp_run run;
    static const struct {
        const char *notes;
        double cf;
    } N[] = {{"'tp4, ep8, deepep, pp8, vpp4, capacity=3 | 4096 | 2048 | 256 | 53.734 | 609.82'", 3},
             {"real routing: --moe-expert-capacity-factor 5 (token dropping); DeepEP", 5},
             {"token dropping: --moe-expert-capacity-factor 1.0 (routing not forced)", 1},
             {"moe_expert_capacity_factor=2", 2},
             {"moe_expert_capacity_factor None (dropless)", 0},
             {"no capacity factor", 0}};
    for (size_t i = 0; i < sizeof N / sizeof N[0]; i++) {
        xtuner_row(N[i].notes, "", &run, TP_OK);
        assert_float_equal(run.job.moe_capacity, N[i].cf, 0);
        assert_false(run.job.moe_pad_capacity);
        assert_true((strstr(run.assumptions, "capacity factor the notes quote") != NULL) ==
                    (N[i].cf > 0));
    }
    xtuner_row("--moe-expert-capacity-factor 1", "2", &run, TP_OK);
    assert_float_equal(run.job.moe_capacity, 2, 0);
    xtuner_row("--moe-expert-capacity-factor 1", "0", &run, TP_OK);
    assert_float_equal(run.job.moe_capacity, 0, 0);
    xtuner_row("", "-1", &run, TP_EINVAL);
    xtuner_row("", "65", &run, TP_EINVAL);
    static const char *const CF[] = {"1", "2", "3", "5"};
    for (size_t i = 0; i < sizeof CF / sizeof CF[0]; i++) {
        xtuner_row("real (unbalanced) routing; DeepEP token dispatcher", CF[i], &run, TP_OK);
        struct tp_memory m;
        tp_memory_worst(&run.model, &run.cluster, &run.job, &run.layout, &m);
        assert_true(m.total_bytes < 80.0 * 1024 * 1024 * 1024);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unpadded_capacity_memory),
        cmocka_unit_test(test_row_capacity),
        cmocka_unit_test(test_capacity_and_padding),
        cmocka_unit_test(test_full_recompute_reruns_the_exchange),
        cmocka_unit_test(test_moe_module_recompute_reruns_the_experts),
        cmocka_unit_test(test_export_parts_nvlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
