/*
 * test_gptoss.c - GPT-OSS's attention as the kernels of the Megatron-Bridge containers run it
 * (docs/moe.md, "GPT-OSS in Megatron-Bridge by release"), against the measurements it comes
 * from:
 *
 *   [CUDNN-FE-SDPA] NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/gpt_oss/
 *   gb300/gpt_oss_20260424_100022.csv (cuDNN 9.22, commit 3929da2ef): batch 2, 128 heads, head
 *   dim 64, causal with a 128-token window (the GPT-OSS preset), time in ms by sequence length:
 *     bfloat16 backward  0.442 at 4096, 3.450 at 32768 (linear: the kernel keeps to the window)
 *     fp8 backward       1.480 at 4096, 74.763 at 32768 (quadratic: every causal tile visited)
 *     fp8 forward        0.167 at 4096, 1.296 at 32768 (linear)
 *
 * and the runs-file recipe rules: the a2a overlap and FP8 attention are read from a recipe's
 * words, while moe_flex_dispatcher_backend "hybridep" (the flex dispatcher in the code,
 * [MB-GPTOSS] flex_dispatcher_backend.py at v0.4.0) stays priced as the all-to-all: no HybridEP
 * bandwidth table is published, and DeepEP's tables put the Qwen3-30B-A3B rows 14-55% too fast
 * (docs/moe.md, "Qwen3-30B-A3B in Megatron-Bridge by release").
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

static struct tp_model model;
static struct tp_cluster cluster;
static struct tp_job job;
static struct tp_layout lay;
static struct tp_calib cal;

/* GPT-OSS 120B (its config.json: 36 blocks, window 128 on every other one, head dim 64) on
   64 GB300 at EP 64, MXFP8, one micro-batch of 4 sequences of `seq` tokens: the step's
   attention-kernel time, FP8 attention on or off. */
static double attn_time(double seq, bool fp8_attention)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_hf_config("tests/fixtures/hf/gpt-oss-120b.json", &model, &err) != TP_OK)
        fail_msg("%s", err.msg);
    if (tp_cluster_init(&cluster, "gb300", 64, &err) != TP_OK)
        fail_msg("%s", err.msg);
    tp_job_init(&job);
    tp_layout_init(&lay);
    tp_calib_init(&cal);
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_MXFP8;
    job.fp8_attention = fp8_attention;
    job.seq = (uint32_t)seq;
    lay.dp = 64;
    lay.ep = 64;
    lay.zero = 1;
    lay.mbs = 4;
    if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct tp_time t;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    return t.attn_s;
}

/* Every block windowed (--window 128 on all of them), 4096 and 32768 tokens: the FP8 kernels
   over the 16-bit ones, forward plus backward, as measured for one window block: at 4096
   (0.167 + 1.480) / (0.202 + 0.442) = 2.56 -- FP8 is slower, its backward visiting every causal
   tile -- and at 32768 (1.296 + 74.763) / (2.530 + 3.450) = 12.7.  Priced at the window, the FP8
   kernels would be faster than the 16-bit ones at both lengths. */
static double all_window_ratio(double seq)
{
    double t[2];
    for (int fp8 = 0; fp8 < 2; fp8++) {
        attn_time(seq, fp8);
        struct tp_error err = {{0}, {0}};
        struct tp_shape s;
        tp_shape_init(&s);
        s.window = 128;
        model.attn_full_every = 0; /* the window on every block */
        char notes[256] = "";
        if (tp_model_apply_shape(&model, &s, notes, sizeof notes, &err) != TP_OK)
            fail_msg("%s", err.msg);
        for (uint32_t l = 0; l < model.n_layers; l++)
            assert_int_equal(model.layer_attn[l], TP_LAYER_SLIDING);
        if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK)
            fail_msg("%s", err.msg);
        struct tp_time tt;
        assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &tt), TP_OK);
        t[fp8] = tt.attn_s;
    }
    return t[1] / t[0];
}

static void test_fp8_window_backward(void **state)
{
    (void)state;
    double r4 = all_window_ratio(4096), r32 = all_window_ratio(32768);
    double m4 = (0.167 + 1.480) / (0.202 + 0.442), m32 = (1.296 + 74.763) / (2.530 + 3.450);
    assert_true(r4 > m4 / 1.35 && r4 < m4 * 1.35);
    assert_true(r32 > m32 / 1.6 && r32 < m32 * 1.6);
    assert_true(r32 > 3 * r4);
}

/* GPT-OSS as configured (every other block windowed), FP8 attention, 4096 tokens: the window
   blocks' FP8 backward is priced as a full block's, so the step's attention time lies between
   half of the all-full model's (the windowed forwards cost next to nothing) and all of it. */
static void test_fp8_window_as_full(void **state)
{
    (void)state;
    double win = attn_time(4096, true);
    struct tp_error err = {{0}, {0}};
    /* the same run with the window removed (every block full attention) */
    if (tp_model_from_hf_config("tests/fixtures/hf/gpt-oss-120b.json", &model, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct tp_shape s;
    tp_shape_init(&s);
    s.window = 0;
    char notes[256] = "";
    if (tp_model_apply_shape(&model, &s, notes, sizeof notes, &err) != TP_OK)
        fail_msg("%s", err.msg);
    if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct tp_time t;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    assert_true(win < t.attn_s);
    assert_true(win > 0.5 * t.attn_s);
}

/* A GPT-OSS 120B row of the Megatron-Bridge summary (26.06, GB300, EP 16, MXFP8) whose notes
   quote its recipe in the configs' words ([MB-GPTOSS] gpt_oss_workload_base_configs.py at v0.5.0,
   GPT_OSS_120B_PRETRAIN_CONFIG_GB300_FP8_MX_V2): the a2a overlap and FP8 attention are read from
   its words, HybridEP is priced as the all-to-all (no published HybridEP table); without the
   words, neither. */
static const char *const COLS[] = {
    "row_id", "source", "arch", "n_layers", "hidden", "n_heads", "kv_heads", "head_dim",
    "vocab", "ffn_hidden", "moe_num_experts", "moe_topk", "moe_ffn_hidden", "tied",
    "dense_layers", "seq_len", "gpu_type", "num_gpus", "gpus_per_node", "tp", "pp", "dp", "ep",
    "zero_or_fsdp", "micro_batch", "global_batch", "precision", "framework_key",
    "source_version_or_date", "notes"};
enum { N_COLS = sizeof COLS / sizeof COLS[0] };

static void bridge_row(const char *notes, struct tp_run *run)
{
    const char *cells[N_COLS] = {"mb:44", "NVIDIA Megatron-Bridge performance summary", "gpt_oss",
                                 "36", "2880", "64", "8", "64", "201088", "2880", "128", "4",
                                 "2880", "0", "0", "4096", "gb300", "64", "4", "1", "1", "64",
                                 "16", "megatron-distopt", "4", "1280", "mxfp8", "nemo", "26.06",
                                 notes};
    struct tp_error err = {{0}, {0}};
    if (tp_run_from_row(COLS, cells, N_COLS, run, &err) != TP_OK)
        fail_msg("%s", err.msg);
}

static void test_bridge_recipe_row(void **state)
{
    (void)state;
    static struct tp_run run;
    bridge_row("Recipe: moe_flex_dispatcher_backend hybridep, moe_a2a_overlap True, "
               "fp8_dot_product_attention=True",
               &run);
    assert_int_equal(run.job.moe_dispatcher, TP_MOE_DISPATCH_HYBRIDEP); /* test_hybridep.c */
    assert_true(run.job.fp8_attention);
    assert_true(run.job.moe_a2a_overlap);
    bridge_row("force-balance", &run);
    assert_int_equal(run.job.moe_dispatcher, TP_MOE_DISPATCH_ALLTOALL);
    assert_false(run.job.fp8_attention);
    assert_false(run.job.moe_a2a_overlap);
}

/* The eager passes around GPT-OSS's biased, clamped-GLU experts under Megatron-Core's
   TEGroupedMLP, counted from its code ([MCORE-GPTOSS] megatron/core/transformer/moe/experts.py
   and fusions/fused_bias_geglu.py, core_v0.15.0): the clamp of the fc1 output's halves (two
   clamps and a cat: 8F forward; two masked gradients and the chunk's cat: 10F backward) and the
   fc2 bias added per local expert scaled by the routing probability (6H each way), 2 bytes per
   element, for every routed row (tokens x top-k at an even load); recompute_modules moe_act
   runs the clamp and the fused activation forward again (8F + 3F).  The fused expert MLP (the
   cutedsl_fused_grouped_mlp recipes) pays none of them, nor does a model without expert
   biases. */
static double expert_elementwise(bool fused, bool bias, bool recompute)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_hf_config("tests/fixtures/hf/gpt-oss-120b.json", &model, &err) != TP_OK)
        fail_msg("%s", err.msg);
    model.expert_bias = bias;
    if (tp_cluster_init(&cluster, "b300", 64, &err) != TP_OK)
        fail_msg("%s", err.msg);
    tp_job_init(&job);
    tp_layout_init(&lay);
    tp_calib_init(&cal);
    job.framework = TP_FW_MEGATRON;
    job.precision = TP_PREC_BF16;
    job.seq = 4096;
    job.moe_imbalance = 1.0;
    job.moe_fused_mlp = fused;
    lay.dp = 64;
    lay.ep = 8;
    lay.zero = 1;
    lay.mbs = 4;
    lay.gas = 5;
    if (recompute) {
        lay.recompute = TP_RECOMPUTE_SELECTIVE;
        lay.recompute_modules = TP_RC_LAYERNORM | TP_RC_MOE_ACT;
    }
    if (tp_layout_check(&model, &cluster, &job, &lay, &err) != TP_OK)
        fail_msg("%s", err.msg);
    struct tp_time t;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    return t.elementwise_s + t.recompute_s;
}

static void test_biased_expert_passes(void **state)
{
    (void)state;
    double F = 2880, H = 2880, rows = 4.0 * 4096 * 4, steps = 36.0 * 5;
    double unfused = expert_elementwise(false, true, false);
    double bw = cluster.gpu.hbm_bw * cal.mem_eff; /* B300 HBM3e, 8.0 TB/s */
    double fused = expert_elementwise(true, true, false);
    double want = steps * rows * ((8 * F + 6 * H) + (10 * F + 6 * H)) * 2 / bw;
    assert_float_equal(unfused - fused, want, want * 1e-6);
    double rc = expert_elementwise(false, true, true) - expert_elementwise(true, true, true);
    assert_float_equal(rc - (unfused - fused), steps * rows * 11 * F * 2 / bw, want * 1e-6);
    /* no expert biases (Qwen3, DeepSeek-V3): nothing to add */
    assert_float_equal(expert_elementwise(false, false, false),
                       expert_elementwise(true, false, false), 1e-12);
}

/* The runs reader takes the fused expert MLP from a recipe's words. */
static void test_bridge_fused_mlp_row(void **state)
{
    (void)state;
    static struct tp_run run;
    bridge_row("Recipe: cuda_graph_impl full_iteration, cutedsl_fused_grouped_mlp True", &run);
    assert_true(run.job.moe_fused_mlp);
    bridge_row("Recipe: moe_flex_dispatcher_backend hybridep", &run);
    assert_false(run.job.moe_fused_mlp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp8_window_backward),
        cmocka_unit_test(test_fp8_window_as_full),
        cmocka_unit_test(test_bridge_recipe_row),
        cmocka_unit_test(test_biased_expert_passes),
        cmocka_unit_test(test_bridge_fused_mlp_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
