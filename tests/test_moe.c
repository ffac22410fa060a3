/*
 * test_moe.c - MoE as large runs and the Hugging Face stack train it (docs/moe.md), against the
 * published figures the features come from.
 *
 * Sources:
 *   [DSV3]   DeepSeek-V3 Technical Report, arXiv:2412.19437: §3.1 "2.664M H800 GPU hours" for
 *            "14.8T tokens" on "2048 NVIDIA H800 GPUs"; §3.2 16-way PP, 64-way EP over 8 nodes,
 *            ZeRO-1 DP, DualPipe; §2.1.2 at most 4 nodes per token; §3.2.2 "each token can
 *            efficiently select an average of 3.2 experts per node", up to 13 experts at the
 *            same communication cost; Table 2 (DualPipe: bubble (PP/2-1)(F&B+B-3W), 2x
 *            parameters, PP+1 activations).
 *   [DEEPEP] deepseek-ai/DeepEP docs/legacy.md: intranode EP 8 on H800, 4096 tokens, hidden
 *            7168, top-8, FP8 dispatch: 153 GB/s (NVLink) bottleneck bandwidth.
 *   [A800-NET] NVIDIA/nccl-tests #156 (2023-07): "A800 * 8, RoCE 200Gb * 4 (for computing)",
 *            all-reduce over two nodes "reaches 96GB/s in bare metal" bus bandwidth; #133: two
 *            A800 nodes, four GPU-side RoCE ports each; #267 (NCCL's maintainer): an all-to-all
 *            "cannot aggregate the bandwidth of multiple NICs".
 *   users000 (data/runs/users_mi300x_runs.csv, notes 000/001): Qwen3-30B-A3B ZeRO-3 700 and
 *            ZeRO-2 + ep 2 1,759 trainable tokens/s per GPU, Ring-mini-2.0 2,600, 8 x MI300X.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include "ep_step.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* tp_call_json as the CLI's --format json: the document, or a failed test */
static json_t *call(const char *verb, const char *model, const char *const *keys,
                    const char *const *values, size_t n)
{
    char *out = NULL;
    struct tp_error err = {{0}, {0}};
    if (tp_call_json(verb, model, keys, values, n, &out, &err) != TP_OK)
        fail_msg("%s %s: %s", verb, model, err.msg);
    json_t *doc = json_loads(out, 0, NULL);
    tp_free(out);
    assert_non_null(doc);
    return doc;
}

static double num(const json_t *doc, const char *key)
{
    const json_t *v = json_object_get(doc, key);
    if (!json_is_number(v))
        fail_msg("no number \"%s\"", key);
    return json_number_value(v);
}

/* The report's run as `estimate` takes it (docs/moe.md "DeepSeek-V3 as its report ran it"). */
static const char *const DSV3_KEYS[] = {"gpu", "gpus", "pp", "pp_first", "ep", "zero", "seq",
                                        "gbs", "precision", "framework", "fused_loss",
                                        "schedule", "moe_dispatcher", "recompute_modules"};
static const char *const DSV3_VALUES[] = {"h800", "2048", "16", "1", "64", "1", "4096",
                                          "15360", "fp8", "megatron", "true",
                                          "dualpipe", "flex", "layernorm,mla_up_proj,moe_act"};
#define DSV3_N (sizeof DSV3_KEYS / sizeof DSV3_KEYS[0])

static void test_deepseek_v3_report(void **state)
{
    (void)state;
    /* [DSV3] §3.1: 14.8T tokens in 2.664M H800 GPU-hours */
    double report = 14.8e12 / (2.664e6 * 3600);
    assert_true(fabs(report - 1543.2) < 0.1);
    json_t *d = call("estimate", "deepseek-v3", DSV3_KEYS, DSV3_VALUES, DSV3_N);
    /* the published layout: 2048 GPUs as dp 128 x pp 16, ep 64 over 8 nodes, ZeRO-1 */
    const json_t *l = json_object_get(d, "layout");
    assert_int_equal((int)num(l, "dp"), 128);
    assert_int_equal((int)num(l, "pp"), 16);
    assert_int_equal((int)num(l, "ep"), 64);
    assert_int_equal((int)num(l, "zero"), 1);
    assert_true(json_is_true(json_object_get(d, "fits")));
    double t = num(d, "tokens_per_s_per_gpu");
    printf("  DeepSeek-V3 as its report ran it: %.0f tokens/s per GPU [%.0f - %.0f], report %.0f\n",
           t, num(d, "tokens_per_s_per_gpu_low"), num(d, "tokens_per_s_per_gpu_high"), report);
    assert_true(fabs(t / report - 1) <= 0.25);
    assert_true(num(d, "tokens_per_s_per_gpu_low") <= report &&
                report <= num(d, "tokens_per_s_per_gpu_high"));
    json_decref(d);
}

/* DualPipe against its Table 2: two copies of the parameters, PP + 1 micro-batches of
   activations, and a bubble well under 1F1B's (PP - 1)(F + B). */
static void test_dualpipe_table2(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_calib cal;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("deepseek-v3", &m, &err), TP_OK);
    assert_int_equal(tp_cluster_init(&c, "h800", 2048, &err), TP_OK);
    tp_job_init(&j);
    tp_layout_init(&l);
    tp_calib_init(&cal);
    j.framework = TP_FW_MEGATRON;
    j.precision = TP_PREC_FP8;
    j.seq = 4096;
    j.fused_loss = true;
    l.dp = 128;
    l.pp = 16;
    l.pp_first = 1;
    l.ep = 64;
    l.zero = 1;
    l.mbs = 1;
    l.gas = 120;
    l.recompute = TP_RECOMPUTE_FULL;
    assert_int_equal(tp_layout_check(&m, &c, &j, &l, &err), TP_OK);
    struct tp_memory a, b;
    struct tp_time ta, tb;
    /* a middle stage: its mirror (15 - 8 = 7) holds the same blocks */
    assert_int_equal(tp_memory_stage(&m, &c, &j, &l, 8, &a), TP_OK);
    assert_int_equal(tp_time_step(&m, &c, &j, &l, &cal, &ta), TP_OK);
    l.schedule = TP_SCHED_DUALPIPE;
    assert_int_equal(tp_stack_check(&m, &j, &l, &err), TP_OK);
    assert_int_equal(tp_memory_stage(&m, &c, &j, &l, 8, &b), TP_OK);
    assert_int_equal(tp_time_step(&m, &c, &j, &l, &cal, &tb), TP_OK);
    assert_true(fabs(b.weights_bytes / a.weights_bytes - 2) < 1e-9);  /* "2x" */
    assert_true(fabs(b.grads_bytes / a.grads_bytes - 2) < 1e-9);
    assert_true(fabs(b.optimizer_bytes / a.optimizer_bytes - 1) < 1e-9); /* ZeRO-1 over 2dp */
    assert_true(fabs(b.in_flight - 17) < 1e-9);                       /* "PP+1" */
    /* (PP/2 - 1)(F&B + B - 3W) over (PP - 1)(F + B) at PP 16 with B = 2F: 7 (5F - 3W) over
       45 F, from 0.31 (W = F: every block all GEMMs) to 0.78 (W = 0) */
    double r = tb.bubble_s / ta.bubble_s;
    printf("  DualPipe bubble %.3f s, 1F1B %.3f s (%.2f)\n", tb.bubble_s, ta.bubble_s, r);
    assert_true(r > 0.30 && r < 0.78);
    /* its rules: an even pipeline, >= 2 pp micro-batches (DualPipe dualpipe.py step()) */
    l.gas = 30;
    assert_int_equal(tp_stack_check(&m, &j, &l, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "at least 2 x pp"));
    l.gas = 120;
    j.framework = TP_FW_DEEPSPEED;
    assert_int_equal(tp_stack_check(&m, &j, &l, &err), TP_EINVAL);
}

/* The token exchange priced by where tokens go ([DSV3] §2.1.2, §3.2.2; [DEEPEP]). */
static double ep_comm(struct tp_model *m, uint32_t topk, uint32_t groups, uint32_t gpus,
                      uint32_t ep, enum tp_moe_dispatcher d)
{
    m->top_k = topk;
    m->router_groups = groups;
    m->router_group_topk = groups ? 4 : 0;
    return ep_step_comm(m, gpus, ep, d);
}

static void test_dispatch(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("deepseek-v3", &m, &err), TP_OK);
    double moe = m.n_layers - m.moe_first_dense; /* 58 MoE blocks */
    /* intranode EP 8, DeepEP's setting: one FP8 dispatch and one BF16 combine each way per
       block; each token reaches distinct ranks 8 (1 - (7/8)^8) = 5.25, 7/8 of them remote */
    double ranks = 8 * (1 - pow(7.0 / 8, 8)) * 7 / 8;
    double bytes = 4096 * ranks * 7168 * ((1 + 4.0 / 128) + 2); /* dispatch + combine */
    double t = ep_comm(&m, 8, 8, 8, 8, TP_MOE_DISPATCH_FLEX) / (2 * moe);
    double gbs = bytes / t / 1e9;
    printf("  DeepEP intranode EP 8: %.0f GB/s over NVLink (measured 153 / 158)\n", gbs);
    assert_true(fabs(gbs / 155 - 1) < 0.15);
    /* node-limited routing: a token reaches at most 4 of the 8 nodes of EP 64, so up to 13
       experts per token cost about what 8 do ([DSV3] §3.2.2); without the limit they spread
       over more nodes and the InfiniBand traffic grows */
    double k8 = ep_comm(&m, 8, 8, 64, 64, TP_MOE_DISPATCH_FLEX);
    double k13 = ep_comm(&m, 13, 8, 64, 64, TP_MOE_DISPATCH_FLEX);
    double free13 = ep_comm(&m, 13, 0, 64, 64, TP_MOE_DISPATCH_FLEX);
    printf("  EP 64, node-limited: top-13 / top-8 %.2f; top-13 unlimited / limited %.2f\n",
           k13 / k8, free13 / k13);
    assert_true(k13 / k8 < 1.10);
    assert_true(free13 / k13 > 1.4);
    /* Megatron-Core's alltoall dispatcher sends every routed copy, in 16 bits, and pays for
       the copies a hierarchical dispatch folds into one crossing per node */
    double naive = ep_comm(&m, 8, 8, 64, 64, TP_MOE_DISPATCH_ALLTOALL);
    assert_true(naive > 2 * k8);
}

/* The users' three MoE SFT runs, with the flags their notes give, inside their range
   (users000:1-3). */
/* [A800-NET]: an A800 node's scale-out link as the published nodes carry it.  The model's
   achieved inter-node bus bandwidth of a two-node all-reduce (physics.md §4.3: the node's NICs at
   the calibrated eff_inter) against the 96 GB/s measured on bare metal; the DGX A100's eight
   NICs (the A100 default) would price twice that.  Each GPU's share, what a cross-node
   all-to-all gets, is half a 200 Gb/s NIC. */
static void test_a800_fabric(void **state)
{
    (void)state;
    struct tp_cluster c, a100;
    struct tp_calib cal;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_cluster_init(&c, "a800-80gb", 16, &err), TP_OK);
    assert_int_equal(tp_cluster_init(&a100, "a100-80gb", 16, &err), TP_OK);
    tp_calib_init(&cal);
    double node = cal.eff_inter * c.gpu.inter_bw * c.gpus_per_node / 1e9;
    printf("  A800 two-node all-reduce bus bandwidth: %.1f GB/s (measured 96 bare metal)\n", node);
    assert_true(fabs(node / 96 - 1) < 0.10);
    assert_float_equal(c.gpu.inter_bw * 8 / 1e9, 200 / 2.0, 1e-9); /* Gb/s per GPU: half a NIC */
    assert_true(a100.gpu.inter_bw / c.gpu.inter_bw > 1.9);
}

static void test_users_hf_moe(void **state)
{
    (void)state;
    static const struct {
        const char *model, *zero, *ep;
        double measured;
    } RUNS[] = {{"qwen3-30b-a3b", "3", "1", 700},
                {"qwen3-30b-a3b", "2", "2", 1759},
                {"ring-mini-2.0", "3", "1", 2600}};
    for (size_t i = 0; i < sizeof RUNS / sizeof RUNS[0]; i++) {
        const char *keys[] = {"framework", "gpu", "gpus", "optimizer", "recompute", "fused_loss",
                              "task", "seq", "mbs", "trainable_frac", "zero", "ep"};
        const char *values[] = {"axolotl", "mi300x", "8", "adamw-8bit", "full", "true", "sft",
                                "8192", "16", "0.61", RUNS[i].zero, RUNS[i].ep};
        json_t *d = call("estimate", RUNS[i].model, keys, values, sizeof keys / sizeof keys[0]);
        double lo = num(d, "tokens_per_s_per_gpu_low"), hi = num(d, "tokens_per_s_per_gpu_high");
        printf("  %s zero %s ep %s: %.0f [%.0f - %.0f], measured %.0f\n", RUNS[i].model,
               RUNS[i].zero, RUNS[i].ep, num(d, "tokens_per_s_per_gpu"), lo, hi,
               RUNS[i].measured);
        /* the range's width is an accuracy figure (printed above, and by bench/users_runs.sh;
           docs/moe.md).  Ring-mini-2.0 is printed, not asserted: its notes leave its MoE kernels
           and ZeRO stage open ("may not describe this reference run"); its stock remote-code
           loop cannot reach the 2,600 measured and grouped kernels overshoot it, so it is left
           out of the range and lies outside it (docs/moe.md "What the Ring-mini-2.0 run
           executed") */
        if (strcmp(RUNS[i].model, "ring-mini-2.0") != 0)
            assert_true(lo <= RUNS[i].measured && RUNS[i].measured <= hi);
        json_decref(d);
    }
}

/* search puts DeepSeek-V3's experts in parallel on the report's cluster */
static void test_search_ep(void **state)
{
    (void)state;
    const char *keys[] = {"gpu", "gpus", "gbs", "seq", "precision", "framework", "top"};
    const char *values[] = {"h800", "2048", "15360", "4096", "fp8", "megatron", "3"};
    json_t *d = call("search", "deepseek-v3", keys, values, sizeof keys / sizeof keys[0]);
    const json_t *best = json_array_get(json_object_get(d, "results"), 0);
    assert_non_null(best);
    printf("  search: pp %.0f ep %.0f zero %.0f %s\n", num(best, "pp"), num(best, "ep"),
           num(best, "zero"), json_string_value(json_object_get(best, "schedule")));
    assert_true(num(best, "ep") >= 8);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek_v3_report),
        cmocka_unit_test(test_dualpipe_table2),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_a800_fabric),
        cmocka_unit_test(test_users_hf_moe),
        cmocka_unit_test(test_search_ep),
    };
    return cmocka_run_group_tests_name("moe", tests, NULL, NULL);
}
