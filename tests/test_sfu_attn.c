/*
 * test_sfu_attn.c - Blackwell Ultra's doubled exponential units (src/eval/kernel_rates.c
 * tp_attn_sfu_rel, priced in src/eval/time_block.c) against the measurements they come from:
 *
 *   [CUDNN-FE-SDPA] NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results (commit
 *   3929da2ef), cuDNN 9.22, frontend 1.21.1, BF16, batch 2, the same package peak (2500 TF)
 *   on both GPUs: the Llama 3.1 preset (64 query / 8 KV heads, head dim 128) at 2k-32k tokens,
 *   llama3.1/gb200/llama3.1_20260424_100750.csv and llama3.1/gb300/..._100757.csv, and the
 *   GPT-OSS preset (128 heads, head dim 64, window 128), gpt_oss/gb200 and gpt_oss/gb300.
 *   [BW-ULTRA] 10.7 against Blackwell's 5 TeraExponentials/s; [BWU-SOFTMAX] FP32 exp2 at
 *   10,024 against 4,943 Gop/s (GB300 against GB200).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "time_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_fixture.h"

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.6f, want %.6f (+- %g)", got, want, tol);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n GB300 / GB200 ratios. */
static double median_ratio(const double *gb300, const double *gb200, size_t n)
{
    double r[16];
    for (size_t i = 0; i < n; i++)
        r[i] = gb300[i] / gb200[i];
    qsort(r, n, sizeof r[0], cmp);
    return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

/* The figures are the published reference shape's (16k, non-causal), and that shape stands for
   the preset's ten (2k, 4k, 8k, 16k, 32k; no mask, then causal): within 1% forward and 3%
   backward of the medians.  Blackwell (sm_100) parts and the H100 are the reference: 1. */
static void test_published(void **state)
{
    (void)state;
    double f, b;
    tp_attn_sfu_rel(fixture_gpu("gb300"), &f, &b);
    near(f, 2014.0 / 1697, 1e-12);
    near(b, 1536.0 / 1374, 1e-12);
    double f3, b3;
    tp_attn_sfu_rel(fixture_gpu("b300"), &f3, &b3); /* the same die */
    near(f3, f, 0);
    near(b3, b, 0);
    const double fwd300[] = {1805, 1900, 2017, 2014, 1836, 1373, 1703, 1856, 1915, 1953};
    const double fwd200[] = {1433, 1599, 1771, 1697, 1634, 1097, 1408, 1574, 1708, 1622};
    const double bwd300[] = {1213, 1429, 1531, 1536, 1427, 967, 1248, 1435, 1507, 1490};
    const double bwd200[] = {1124, 1350, 1404, 1374, 1262, 885, 1148, 1332, 1328, 1226};
    near(median_ratio(fwd300, fwd200, 10), f, 0.01 * f);
    near(median_ratio(bwd300, bwd200, 10), b, 0.03 * b);
    /* the forward gains more than the backward: 4 d model FLOPs per exponential against 10 d */
    assert_true(f > b && b > 1);
    /* the exponential units doubled, the attention kernel far less: the MMAs bound it */
    assert_true(f < 10.7 / 5 && f < 10024.0 / 4943);
    const char *const ref[] = {"b200", "gb200", "h100-sxm", "h20", "mi300x"};
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
        tp_attn_sfu_rel(fixture_gpu(ref[i]), &f, &b);
        assert_true(f == 1 && b == 1);
    }
}

static struct tp_time step(void)
{
    return fixture_step(job.framework);
}

/* Llama 3.1 8B at 32k on GB300 under Megatron (cuDNN): the attention core's time falls by
   between the backward's and the forward's ratios against the same run priced without them
   (FlashAttention-2 under a Hugging Face stack keeps its mma.sync-bound rate: no gain). */
static void test_step(void **state)
{
    (void)state;
    fixture_run("llama-3.1-8b", "gb300", 8);
    job.framework = TP_FW_MEGATRON;
    job.seq = 32768;
    lay.dp = 8;
    lay.zero = 1;
    lay.mbs = 1;
    struct hw h;
    tp_resolve_hw(&cluster, &job, &cal, &h);
    near(h.sfu_fwd, 2014.0 / 1697, 1e-12);
    near(h.sfu_bwd, 1536.0 / 1374, 1e-12);
    struct tp_time t300 = step();
    /* the same GPU with sm_100's exponential units: GB200's tensor cores at GB300's peak */
    fixture_run("llama-3.1-8b", "gb200", 8);
    memcpy(cluster.gpu.peak_flops, fixture_gpu("gb300")->peak_flops, sizeof cluster.gpu.peak_flops);
    cluster.gpu.mamf_bf16 = tp_gpu_mamf(fixture_gpu("gb300"), false);
    cluster.gpu.mamf_fp8 = tp_gpu_mamf(fixture_gpu("gb300"), true);
    cluster.gpu.hbm_bw = fixture_gpu("gb300")->hbm_bw;
    job.framework = TP_FW_MEGATRON;
    job.seq = 32768;
    lay.dp = 8;
    lay.zero = 1;
    lay.mbs = 1;
    struct tp_time t200 = step();
    /* the kernel's per-block keys (attn_block_keys) do not speed up: the backward's gain on a
       causal query's 16k keys plus them is the floor */
    double keys = 32768.0 / 2, bk = cal.attn_block_keys;
    double floor = (keys + bk) / (keys / (1536.0 / 1374) + bk);
    double speed = t200.attn_s / t300.attn_s;
    assert_true(speed > floor && speed < 2014.0 / 1697);
    assert_true(t300.step_s < t200.step_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published),
        cmocka_unit_test(test_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
