/*
 * test_nf4.c - QLoRA's NF4 dequantization priced at bitsandbytes' measured kernel rate
 * (tp_nf4_dequant_rel, kernel_rates.c), not at the calibration's generic HBM efficiency.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "time_internal.h"

#include <math.h>

#include "run_fixture.h"

static void near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.6g, want %.6g (+-%.2g%%)", got, want, 100 * rel);
}

/* The lookup-table kernel (bitsandbytes >= 0.48) reproduces its measurement: a 16384 x 16384
   NF4 tensor dequantized on an A100 80GB in 1.241162 ms ([BNB-NF4-A100]); the branching kernel
   before it (bitsandbytes <= 0.47) runs 1.36x - 2.07x slower ([BNB-1747]). */
static void test_kernel_rates(void **state)
{
    (void)state;
    double lut = tp_nf4_dequant_rel(true), tree = tp_nf4_dequant_rel(false);
    double weights = 16384.0 * 16384.0;
    near(2.5 * weights / (lut * 2.039e12), 1.241162e-3, 1e-9);
    near(lut, 0.265, 0.005);
    assert_true(lut / tree >= 1.36 && lut / tree <= 2.07);
    near(tree, 0.158, 0.01);
    /* both far below a streaming kernel's share of the HBM peak (the fitted mem_eff) */
    tp_calib_init(&cal);
    assert_true(lut < cal.mem_eff);
}

/* The issue-bound kernel on a GPU whose SMs x clock and DRAM disagree: the RTX 4090 (128 SMs
   at 2.52 GHz) issues 2.12x the A100's (108 at 1.41 GHz) from half its bandwidth, so its
   dequantization runs at 2.12x the A100's bytes/s, not at the A100's share of its 1.008 TB/s;
   the data-centre parts keep the HBM share, but for the A100 40GB (the A100's issue rate). */
static void test_dequant_issue_rate(void **state)
{
    (void)state;
    struct tp_cluster c;
    assert_int_equal(tp_cluster_init(&c, "rtx4090", 2, NULL), TP_OK);
    double a100 = 2.039e12 * tp_nf4_dequant_rel(false);
    near(tp_nf4_dequant_bw(&c.gpu, false), a100 * 128 * 2.52 / (108 * 1.41), 1e-9);
    assert_true(tp_nf4_dequant_bw(&c.gpu, false) < c.gpu.hbm_bw);
    assert_true(tp_nf4_dequant_bw(&c.gpu, true) <= c.gpu.hbm_bw);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 8, NULL), TP_OK);
    near(tp_nf4_dequant_bw(&c.gpu, false), 3.35e12 * tp_nf4_dequant_rel(false), 1e-9);
    /* the A100 40GB is the measured A100's die (108 SMs at 1.41 GHz) on 1.555 TB/s of HBM2: the
       same issue rate, so the 80 GB card's bytes/s, not 0.76 of them */
    assert_int_equal(tp_cluster_init(&c, "a100-40gb", 8, NULL), TP_OK);
    near(tp_nf4_dequant_bw(&c.gpu, false), a100, 1e-9);
    assert_int_equal(tp_cluster_init(&c, "a100-80gb", 8, NULL), TP_OK);
    near(tp_nf4_dequant_bw(&c.gpu, false), a100, 1e-9);
}

/* Elementwise time of one step of the fixture's run with `task`. */
static double mem_s(enum tp_task task, double mem_eff)
{
    job.task = task;
    cal.mem_eff = mem_eff;
    fixture_check();
    struct tp_time t;
    assert_int_equal(tp_time_step(&model, &cluster, &job, &lay, &cal, &t), TP_OK);
    assert_true(t.recompute_s == 0);
    return t.elementwise_s;
}

/* QLoRA over LoRA on one H100: every frozen linear weight of Llama-3.1-8B (32 blocks of
   q, k, v, o at 4096 x 4096, 4096 x 1024 twice, 4096 x 4096, and gate, up, down at
   4096 x 14336) dequantized forward and again for the backward's data gradient, 2.5 B per
   weight at the branching kernel's share of 3.35 TB/s; the same whatever mem_eff says. */
static void test_qlora_dequant_time(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "h100-sxm", 1);
    job.seq = 4096;
    job.framework = TP_FW_AXOLOTL;
    double per_block = 4096.0 * (4096 + 1024 + 1024 + 4096) + 3 * 4096.0 * 14336;
    double want = 2 * 32 * per_block * 2.5 / (3.35e12 * tp_nf4_dequant_rel(false));
    near(mem_s(TP_TASK_QLORA, 0.5) - mem_s(TP_TASK_LORA, 0.5), want, 1e-6);
    near(mem_s(TP_TASK_QLORA, 0.8) - mem_s(TP_TASK_LORA, 0.8), want, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_rates),
        cmocka_unit_test(test_dequant_issue_rate),
        cmocka_unit_test(test_qlora_dequant_time),
    };
    return cmocka_run_group_tests_name("nf4", tests, NULL, NULL);
}
