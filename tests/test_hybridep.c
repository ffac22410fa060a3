/*
 * test_hybridep.c - DeepEP's HybridEP kernels as Megatron-Core's flex dispatcher runs them
 * (--moe-dispatcher hybridep; src/eval/moe_comm.c, docs/moe.md "HybridEP"), against the
 * bandwidths HybridEP's own benchmark publishes, and the runs reader's mapping of the
 * Megatron-Bridge recipes that set it.
 *
 * Sources:
 *   [HEP] deepseek-ai/DeepEP docs/README_Hybrid-EP.md at 41cad9444962, "Performance Results":
 *         4096 tokens per rank, hidden 7168, top-8 of 8 experts per rank, uniform random
 *         routing, BF16, Torch API at 16 SMs.  GB200 NVL72 (one NVLink domain): 8 ranks
 *         dispatch 550.10 / combine 538.44 GB/s, 32 ranks 485.50 / 423.19.  B200 (HGX, 8
 *         ranks): 535.94 / 530.86.  tests/test_hybrid_ep.py counts the "algorithm bandwidth"
 *         over NVLink as the tokens a rank receives (its own included) x hidden x 2 bytes.
 *   [MCORE] Megatron-LM transformer_config.py: moe_hybridep_num_sms = 16.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "ep_step.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TOKENS 4096.0
#define HIDDEN 7168.0

/* [HEP]'s benchmark as a BF16 training step on `gpus` of `gpu`: DeepSeek-V3's shapes with
   top-8 of 8 experts per rank, no routing groups, uniform load; returns the seconds of one
   dispatch plus one combine (the exposed EP seconds over the step's 2 x MoE blocks). */
static double hep_pair(const char *gpu, uint32_t gpus, enum tp_moe_dispatcher d)
{
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("deepseek-v3", &m, &err), TP_OK);
    m.n_experts = 8 * gpus;
    m.top_k = 8;
    m.router_groups = 0;
    m.router_group_topk = 0;
    double moe = m.n_layers - m.moe_first_dense;
    return ep_step_comm_on(&m, gpu, TP_PREC_BF16, gpus, gpus, d) / (2 * moe);
}

/* Expected distinct owners hit when 8 experts are drawn without replacement from n_owners
   groups of `per` experts each ([HEP] draws torch.randperm(E)[:8]). */
static double owners_hit(double n_owners, double per)
{
    double e = n_owners * per, miss = 1;
    for (int i = 0; i < 8; i++)
        miss *= (e - per - i) / (e - i);
    return n_owners * (1 - miss);
}

/* Seconds [HEP] measured for one dispatch and one combine at these byte counts. */
static double measured_pair(double bytes, double dispatch_gbs, double combine_gbs)
{
    return bytes / (dispatch_gbs * 1e9) + bytes / (combine_gbs * 1e9);
}

/* One NVLink domain: each rank receives one copy per token that picks any of its 8 experts. */
static void check_nvl(const char *gpu, uint32_t ranks, double dispatch_gbs, double combine_gbs)
{
    double bytes = TOKENS * owners_hit(ranks, 8) * HIDDEN * 2;
    double want = measured_pair(bytes, dispatch_gbs, combine_gbs);
    double got = hep_pair(gpu, ranks, TP_MOE_DISPATCH_HYBRIDEP);
    printf("  %s EP %u: dispatch + combine %.0f us, HybridEP measured %.0f us (%.1f%%)\n", gpu,
           ranks, got * 1e6, want * 1e6, (got / want - 1) * 100);
    assert_true(fabs(got / want - 1) < 0.05);
}

/* GB200 NVL72: the measured NVLink domain at 8 and 32 ranks. */
static void test_gb200_nvl72(void **state)
{
    (void)state;
    check_nvl("gb200", 8, 550.10, 538.44);
    check_nvl("gb200", 32, 485.50, 423.19);
}

/* B200 (HGX, 900 GB/s NVLink like GB200): priced at GB200's measured share of the link, it
   lands on B200's own measurement. */
static void test_b200_from_gb200_share(void **state)
{
    (void)state;
    check_nvl("b200", 8, 535.94, 530.86);
}

/* Across NVLink domains (H100 EP 16 over two nodes) HybridEP keeps the plain all-to-all's
   price: its RDMA leg is measured at hidden 7168 only (docs/moe.md "HybridEP"). */
static void test_across_domains(void **state)
{
    (void)state;
    double h = hep_pair("h100", 16, TP_MOE_DISPATCH_HYBRIDEP);
    double a = hep_pair("h100", 16, TP_MOE_DISPATCH_ALLTOALL);
    assert_true(fabs(h / a - 1) < 1e-12);
}

/* Where HybridEP stands against the plain all-to-all price inside GB200's NVLink domain: the
   measured kernels reach 0.61 of the link at EP 8 and 0.52 at EP 32 (dispatch), where NCCL's
   all-to-all of every copy is priced at the calibrated 0.795; at top-8 one copy per rank hit
   (5.25 of 8 ranks at EP 8) offsets part of that. */
static void test_against_alltoall(void **state)
{
    (void)state;
    double h8 = hep_pair("gb200", 8, TP_MOE_DISPATCH_HYBRIDEP);
    double a8 = hep_pair("gb200", 8, TP_MOE_DISPATCH_ALLTOALL);
    double h = hep_pair("gb200", 32, TP_MOE_DISPATCH_HYBRIDEP);
    double a = hep_pair("gb200", 32, TP_MOE_DISPATCH_ALLTOALL);
    printf("  GB200 HybridEP / all-to-all: EP 8 %.2f, EP 32 %.2f\n", h8 / a8, h / a);
    assert_true(h / a > 1);
}

/* The runs reader: the recipe's own "moe_flex_dispatcher_backend hybridep" maps to HybridEP;
   a mention in passing (row 227's "before ... use hybridep+flex dispatcher") does not. */
static void test_runs_reader(void **state)
{
    (void)state;
    static const char *const FILES[] = {"data/runs/megatron_bridge_moe_subset.csv"};
    struct tp_runs runs;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_runs_load(FILES, 1, &runs, &err), TP_OK);
    static const struct {
        const char *id;
        enum tp_moe_dispatcher d;
    } WANT[] = {{"megatron_bridge_perf_summary:93", TP_MOE_DISPATCH_HYBRIDEP},
                {"megatron_bridge_perf_summary:191", TP_MOE_DISPATCH_HYBRIDEP},
                {"megatron_bridge_perf_summary:98", TP_MOE_DISPATCH_HYBRIDEP},
                {"megatron_bridge_perf_summary:227", TP_MOE_DISPATCH_ALLTOALL},
                {"megatron_bridge_perf_summary:92", TP_MOE_DISPATCH_ALLTOALL}};
    for (size_t w = 0; w < sizeof WANT / sizeof WANT[0]; w++) {
        const struct tp_run *r = NULL;
        for (size_t i = 0; i < runs.n; i++)
            if (strcmp(runs.runs[i].row_id, WANT[w].id) == 0)
                r = &runs.runs[i];
        assert_non_null(r);
        assert_int_equal(r->job.moe_dispatcher, WANT[w].d);
    }
    tp_runs_free(&runs);
}

/* The CLI name and the stacks that run it. */
static void test_names_and_stacks(void **state)
{
    (void)state;
    assert_string_equal(tp_name(TP_NAMES_MOE_DISPATCHER, TP_MOE_DISPATCH_HYBRIDEP), "hybridep");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gb200_nvl72),       cmocka_unit_test(test_b200_from_gb200_share),
        cmocka_unit_test(test_across_domains),           cmocka_unit_test(test_against_alltoall),
        cmocka_unit_test(test_runs_reader),       cmocka_unit_test(test_names_and_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
