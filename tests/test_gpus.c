/*
 * test_gpus.c - the accelerator catalog: required keys, aliases, lookup errors, row sanity and
 * spot checks of published figures.
 *
 * Expected values are the datasheet figures of docs/physics.md §5.5, each cited next to
 * the number.  Run from the repository root.
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
#include <string.h>

/* Keys the issue and the measured-runs files (validation/runs/README.md gpu_type) require. */
static const char *const REQUIRED[] = {
    "v100-32gb", "a100-40gb", "a100-80gb", "a800-80gb", "a6000",  "l40s",
    "rtx4090",   "rtx5090",   "h100-sxm",  "h100-pcie", "h100-96gb", "h200",
    "b200",      "b300",      "gb200",     "gb300",     "mi250x", "mi300x",
    "mi325x",    "mi355x",    "max1550-tile", "max1550", "gaudi2", "gaudi3",
};

static const struct tp_gpu *find(const char *name)
{
    struct tp_error err = {{0}, {0}};
    const struct tp_gpu *g = NULL;
    if (tp_gpu_find(name, &g, &err) != TP_OK)
        fail_msg("%s: %s", name, err.msg);
    assert_non_null(g);
    return g;
}

/* |got - want| within 0.05% of want */
static void near(const char *what, double got, double want)
{
    if (fabs(got - want) > 5e-4 * fabs(want))
        fail_msg("%s: %g, expected %g", what, got, want);
}

static void test_required_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof REQUIRED / sizeof REQUIRED[0]; i++) {
        const struct tp_gpu *g = find(REQUIRED[i]);
        assert_string_equal(g->key, REQUIRED[i]);
    }
    assert_true(tp_gpu_count() >= sizeof REQUIRED / sizeof REQUIRED[0]);
    assert_null(tp_gpu_get(tp_gpu_count()));
    assert_non_null(tp_gpu_get(0));
}

static void test_aliases_and_case(void **state)
{
    (void)state;
    assert_string_equal(find("h100")->key, "h100-sxm");
    assert_string_equal(find("a100")->key, "a100-80gb");
    assert_string_equal(find("mi300")->key, "mi300x");
    assert_string_equal(find("H100")->key, "h100-sxm");
    assert_string_equal(find("H100-SXM")->key, "h100-sxm");
    assert_string_equal(find("MI300X")->key, "mi300x");
    assert_string_equal(find("Max1550-Tile")->key, "max1550-tile");
    assert_string_equal(find("Gaudi-3")->key, "gaudi3");
    assert_string_equal(find("RTX-4090")->key, "rtx4090");
}

static void test_unknown(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    const struct tp_gpu *g = NULL;
    assert_int_equal(tp_gpu_find("h1000", &g, &err), TP_ENOTFOUND);
    assert_null(g);
    assert_non_null(strstr(err.msg, "unknown GPU \"h1000\""));
    assert_non_null(strstr(err.msg, "did you mean: "));
    assert_non_null(strstr(err.msg, "h100-sxm"));
    assert_non_null(strstr(err.msg, "h200"));
    assert_non_null(strstr(err.msg, "`trainplan gpus` lists them"));
    assert_null(strchr(err.msg, '\n'));

    /* a substring of a key suggests it */
    assert_int_equal(tp_gpu_find("Gaudi", &g, &err), TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "gaudi2"));
    assert_non_null(strstr(err.msg, "gaudi3"));

    /* nothing close: no suggestion list, still the hint */
    assert_int_equal(tp_gpu_find("zzzzzzzzzzzzzzzzzzzz", &g, &err), TP_ENOTFOUND);
    assert_null(strstr(err.msg, "did you mean"));
    assert_non_null(strstr(err.msg, "`trainplan gpus` lists them"));

    assert_int_equal(tp_gpu_find(NULL, &g, &err), TP_EINVAL);
    assert_int_equal(tp_gpu_find("h100", NULL, NULL), TP_EINVAL);
}

static void test_rows_sane(void **state)
{
    (void)state;
    for (size_t i = 0; i < tp_gpu_count(); i++) {
        const struct tp_gpu *g = tp_gpu_get(i);
        assert_non_null(g);
        assert_non_null(g->key);
        assert_non_null(g->label);
        assert_non_null(g->source);
        if (g->label[0] == '\0' || g->source[0] == '\0')
            fail_msg("%s: empty label or source", g->key);
        for (const char *c = g->key; *c; c++)
            if ((*c >= 'A' && *c <= 'Z') || *c == ' ')
                fail_msg("%s: key must be lower-case without spaces", g->key);
        /* every row has a 16-bit training rate (V100: its FP16 tensor rate) */
        if (!(g->peak_flops[TP_BF16] > 0))
            fail_msg("%s: no 16-bit peak", g->key);
        for (int d = 0; d < TP_DTYPE_COUNT; d++)
            if (g->peak_flops[d] < 0 || g->peak_flops[d] > 1e17)
                fail_msg("%s: dtype %d peak %g out of range", g->key, d, g->peak_flops[d]);
        /* lower precision is never slower than BF16 where it exists */
        if (g->peak_flops[TP_FP8] > 0 && g->peak_flops[TP_FP8] < g->peak_flops[TP_BF16])
            fail_msg("%s: FP8 below BF16", g->key);
        if (g->peak_flops[TP_FP4] > 0 && g->peak_flops[TP_FP4] < g->peak_flops[TP_FP8])
            fail_msg("%s: FP4 below FP8", g->key);
        if (!(g->hbm_bytes >= 16e9 && g->hbm_bytes <= 1e12))
            fail_msg("%s: hbm_bytes %g", g->key, g->hbm_bytes);
        if (!(g->hbm_bw > 1e11 && g->hbm_bw < 1e14))
            fail_msg("%s: hbm_bw %g", g->key, g->hbm_bw);
        if (!(g->intra_bw > 0) || !(g->inter_bw > 0) || !(g->host_bw > 0))
            fail_msg("%s: a link bandwidth is not positive", g->key);
        if (g->gpus_per_node < 1)
            fail_msg("%s: gpus_per_node 0", g->key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(tp_gpu_get(j)->key, g->key) == 0)
                fail_msg("duplicate key %s", g->key);
    }
}

static void test_published_values(void **state)
{
    (void)state;
    const struct tp_gpu *g = find("h100-sxm");
    /* docs/physics.md §5.5: H100 SXM 989 TF BF16, 1979 FP8, 80 GB HBM3, 3.35 TB/s,
       NVLink4 450 GB/s per direction; §4.3: 400 Gb/s NDR = 50 GB/s per GPU */
    near("h100 bf16", g->peak_flops[TP_BF16], 989e12);
    near("h100 fp8", g->peak_flops[TP_FP8], 1979e12);
    assert_true(g->peak_flops[TP_FP4] == 0);
    near("h100 hbm", g->hbm_bytes, 80 * 1073741824.0);
    near("h100 bw", g->hbm_bw, 3.35e12);
    near("h100 nvlink", g->intra_bw, 450e9);
    near("h100 nic", g->inter_bw, 50e9);
    assert_int_equal(g->gpus_per_node, 8);
    assert_int_equal(g->sms, 132);

    /* A100 80GB: 312 TF BF16, 2.039 TB/s, 108 SMs, HDR 25 GB/s per GPU */
    g = find("a100-80gb");
    near("a100 bf16", g->peak_flops[TP_BF16], 312e12);
    near("a100 bw", g->hbm_bw, 2.039e12);
    near("a100 nic", g->inter_bw, 25e9);
    assert_int_equal(g->sms, 108);
    assert_true(g->peak_flops[TP_FP8] == 0);

    /* MI300X: 1307.4 TF BF16, 192 GB, 5.3 TB/s, xGMI 7 x 64 = 448 GB/s ([ROCm]) */
    g = find("mi300x");
    near("mi300x bf16", g->peak_flops[TP_BF16], 1307.4e12);
    near("mi300x hbm", g->hbm_bytes, 192 * 1073741824.0);
    near("mi300x bw", g->hbm_bw, 5.3e12);
    near("mi300x xgmi", g->intra_bw, 448e9);
    assert_int_equal(g->sms, 304);
    /* FP8 MAMF: AMD's max-achievable FLOPs, hipblaslt-bench (ROCm 6.3, hipBLASLt db8e93b):
       1273 TFLOP/s on MI300X ([AMD-MAF] Table 1), above Azure's ROCm 6.2 sweep (1159.54,
       [AZ-MI300X]); the FP8 share stays under the BF16 one ([MLE] 668 / 1307.4) */
    near("mi300x fp8 mamf", g->mamf_fp8 * g->peak_flops[TP_FP8], 1273e12);
    assert_true(g->mamf_fp8 > 1159.54e12 / g->peak_flops[TP_FP8]);
    assert_true(g->mamf_fp8 < g->mamf_bf16);
    /* MI325X (the same die at 1000 W): 1519 TFLOP/s FP8 ([AMD-MAF] Table 1), measured where the
       fallback 0.9 x mamf_bf16 stood; 1519 / 1273 = 1.19, the two GPUs' FP8 ratio */
    const struct tp_gpu *g325 = find("mi325x");
    near("mi325x fp8 mamf", g325->mamf_fp8 * g325->peak_flops[TP_FP8], 1519e12);
    near("mi325x / mi300x fp8", g325->mamf_fp8 / g->mamf_fp8, 1519.0 / 1273.0);
    near("mi325x fp8 = mi300x fp8 peak", g325->peak_flops[TP_FP8], g->peak_flops[TP_FP8]);
    /* MI355X (CDNA 4): the best FP8 GEMM of aiter's gfx950 tuning table, 2996.65 TFLOP/s at
       4096 x 16384 x 26624 ([AITER-GEMM]), of the 5000 TF peak; the table's Llama 2 70B shapes at
       8192 tokens run 2525.65-2971.97, below it (the real-shape loss is gemm_scale's), and its
       BF16 table's 1596.61 at 8192^3 sits 2.0% above [MLE]'s 1565, the catalog's mamf_bf16 */
    const struct tp_gpu *g355 = find("mi355x");
    near("mi355x fp8 mamf", g355->mamf_fp8 * g355->peak_flops[TP_FP8], 2996.65e12);
    assert_true(g355->mamf_fp8 * g355->peak_flops[TP_FP8] > 2971.97e12);
    assert_true(fabs(1596.61e12 / (g355->mamf_bf16 * g355->peak_flops[TP_BF16]) - 1) < 0.025);
    /* FP8 over BF16 as measured (2996.65 / 1565 = 1.91), not the fallback's 2 x 0.9 = 1.8 */
    assert_true(g355->mamf_fp8 * g355->peak_flops[TP_FP8] >
                1.85 * g355->mamf_bf16 * g355->peak_flops[TP_BF16]);

    /* H800 SXM5: H100 SXM5 compute and memory with NVLink cut to 400 GB/s total (NVIDIA H800
       datasheet), i.e. 200 GB/s per direction; the runs of Pai-Megatron-Patch issues #643 and
       #658 (data/runs/public_hf_stacks.csv) were measured on it */
    g = find("h800");
    near("h800 bf16", g->peak_flops[TP_BF16], 989e12);
    near("h800 hbm", g->hbm_bytes, 80 * 1073741824.0);
    near("h800 nvlink", g->intra_bw, 200e9);
    assert_string_equal(find("H800-SXM")->key, "h800");

    /* H20: the NVIDIA H20 datasheet's dense peaks, 148 TF BF16 and 296 TF FP8 (15% of the
       H100 SXM5's 989 / 1979), 96 GB HBM3 at 4.0 TB/s and the full 900 GB/s NVLink (450 per
       direction); the ms-swift H20 examples in data/runs/public_hf_stacks_more.csv ran on it */
    g = find("h20");
    near("h20 bf16", g->peak_flops[TP_BF16], 148e12);
    near("h20 fp8", g->peak_flops[TP_FP8], 296e12);
    near("h20 hbm", g->hbm_bytes, 96 * 1073741824.0);
    near("h20 bw", g->hbm_bw, 4.0e12);
    near("h20 nvlink", g->intra_bw, 450e9);
    assert_string_equal(find("H20-96GB")->key, "h20");
    /* its measured MAMF: BF16 torch.mm, best 142.25 TFLOP/s at 10240^3
       (zzc0721/torch-performance-test-data#77); block-scaled FP8, M 8192 x N 24576 x K 7168 in
       10207.52 us (vllm-project/vllm#49932), 2 x 8192 x 24576 x 7168 / 10207.52e-6 FLOP/s */
    near("h20 bf16 mamf", g->mamf_bf16 * g->peak_flops[TP_BF16], 142.25e12);
    near("h20 fp8 mamf", g->mamf_fp8 * g->peak_flops[TP_FP8],
         2.0 * 8192 * 24576 * 7168 / 10207.52e-6);
    /* a GPU with its own sweep reads it, not the calibration's default */
    assert_true(tp_gpu_mamf(g, false) > 0 && tp_gpu_mamf(g, true) > 0);

    /* H200: 141 GB HBM3e, 4.8 TB/s, H100 compute */
    g = find("h200");
    near("h200 hbm", g->hbm_bytes, 141 * 1073741824.0);
    near("h200 bw", g->hbm_bw, 4.8e12);
    near("h200 bf16", g->peak_flops[TP_BF16], 989e12);

    /* V100: no BF16; the 16-bit slot holds the FP16 tensor rate, 125 TF; no TF32 */
    g = find("v100-32gb");
    near("v100 fp16", g->peak_flops[TP_BF16], 125e12);
    assert_true(g->peak_flops[TP_TF32] == 0);

    /* MI250X is one GCD: 191.5 TF BF16 and 64 GB (half of the 383 TF, 128 GB card) */
    g = find("mi250x");
    near("mi250x bf16", g->peak_flops[TP_BF16], 191.5e12);
    near("mi250x hbm", g->hbm_bytes, 64 * 1073741824.0);
    assert_int_equal(g->sms, 110);

    /* Max 1550: Aurora tile 448 EU x 512 FLOP/clk x 1.3 GHz; the card is 2 tiles of 64 GB */
    near("pvc tile", find("max1550-tile")->peak_flops[TP_BF16], 448.0 * 512 * 1.3e9);
    near("pvc card hbm", find("max1550")->hbm_bytes, 2 * find("max1550-tile")->hbm_bytes);
    /* ALCF's Aurora node benchmarks (argonne-lcf/user-guides node-performance-overview, GPU
       clock 1.5 GHz): BF16 GEMM 2487 TF/s on the node's 12 tiles; cross-card tile-to-tile
       MPI writes 18.9 GB/s.  The card's GEMMs take the tiles' share of their clock's peak
       (448 EU x 512 x 1.5 GHz) and both tiles' links */
    const struct tp_gpu *tile = find("max1550-tile"), *card = find("max1550");
    near("pvc tile mamf", tile->mamf_bf16 * tile->peak_flops[TP_BF16], 2487e12 / 12);
    near("pvc card mamf", card->mamf_bf16, 2487e12 / 12 / (448.0 * 512 * 1.5e9));
    near("pvc xe link", tile->intra_bw, 18.9e9);
    near("pvc card xe link", card->intra_bw, 2 * 18.9e9);
    assert_true(tile->mamf_bf16 < find("h100-sxm")->mamf_bf16);

    /* §5.5 chosen datasheet values where sources disagree: B200 180 GB, MI355X 2500 TF,
       Gaudi 3 1835 TF */
    near("b200 hbm", find("b200")->hbm_bytes, 180 * 1073741824.0);
    near("mi355x bf16", find("mi355x")->peak_flops[TP_BF16], 2500e12);
    near("gaudi3 bf16", find("gaudi3")->peak_flops[TP_BF16], 1835e12);
    near("gb200 hbm", find("gb200")->hbm_bytes, 186 * 1073741824.0);
}

/* The Blackwell rows against their sources: NVIDIA's HGX B200 / GB200 NVL72 / HGX B300 /
   GB300 NVL72 specifications via [MLE] (dense, per GPU), and the matmul rates.  B300 keeps
   [MLE]'s MAMF sweep (1769.0 of 2250, FP8 3353.3 of 4500; GB300 takes it, the same die).
   B200 / GB200 keep the sustained rate: Azure's cuBLASLt FP8 GEMMs with 10,000 warm-up
   iterations (Azure/AI-benchmarking-guide ND_GB200_v6_results.md: best 2906.9 TF) against
   [MLE]'s GB200 sweep (3615.6 of 5000) and B200's (0.776 / 0.763 of peak, docs/physics.md
   §5.1); the same method on H100 (ND_H100_v5_results.md: 1382.2 TF) lands on H100's sweep
   (0.709 x 1979), which so stays. */
static void test_blackwell_catalog(void **state)
{
    (void)state;
    const struct tp_gpu *b200 = find("b200"), *gb200 = find("gb200"), *b300 = find("b300"),
                        *gb300 = find("gb300");
    near("b200 bf16", b200->peak_flops[TP_BF16], 2250e12);
    near("b200 fp8", b200->peak_flops[TP_FP8], 4500e12);
    near("b200 hbm bw", b200->hbm_bw, 7.7e12);
    near("gb200 bf16", gb200->peak_flops[TP_BF16], 2500e12);
    near("gb200 fp8", gb200->peak_flops[TP_FP8], 5000e12);
    near("gb200 hbm bw", gb200->hbm_bw, 8.0e12);
    near("b300 bf16", b300->peak_flops[TP_BF16], 2250e12);
    near("b300 fp4", b300->peak_flops[TP_FP4], 13500e12);
    near("gb300 fp4", gb300->peak_flops[TP_FP4], 15000e12);
    assert_true(fabs(b200->intra_bw - 900e9) < 1e6); /* NVLink5 1.8 TB/s bidirectional */
    double sustained = 2906.9 / 3615.6; /* GB200 FP8: sustained over the sweep */
    assert_true(fabs(tp_gpu_mamf(gb200, true) - 2906.9 / 5000) < 0.001);
    assert_true(fabs(tp_gpu_mamf(gb200, false) - 1822.0 / 2500 * sustained) < 0.001);
    assert_true(fabs(tp_gpu_mamf(b200, false) - 0.776 * sustained) < 0.001);
    assert_true(fabs(tp_gpu_mamf(b200, true) - 0.763 * sustained) < 0.001);
    /* H100's sweep is its sustained rate to 2% (1382.2 TF against 0.709 x 1979) */
    const struct tp_gpu *h100 = find("h100-sxm");
    assert_true(fabs(1382.2 / (tp_gpu_mamf(h100, true) * h100->peak_flops[TP_FP8] / 1e12) - 1) <
                0.02);
    /* B300: ml-engineering's sweep (1769.0 of 2250 BF16, 3353.3 of 4500 FP8) at the same
       sustained-clock factor as the Blackwell die [derived] */
    assert_true(fabs(tp_gpu_mamf(b300, false) - 1769.0 / 2250 * sustained) < 0.001);
    assert_true(fabs(tp_gpu_mamf(b300, true) - 3353.3 / 4500 * sustained) < 0.001);
    /* GB300: GB200's sustained rates at its power limit, 1400 W against 1200 W ([MLE]'s power
       table), the clock as the cube root of the power (dynamic power ~ f^3) [derived] */
    double clock = cbrt(1400.0 / 1200);
    assert_true(fabs(tp_gpu_mamf(gb300, true) - 2906.9 / 5000 * clock) < 0.001);
    assert_true(fabs(tp_gpu_mamf(gb300, false) - 1822.0 / 2500 * sustained * clock) < 0.001);
    assert_true(tp_gpu_mamf(gb300, true) > tp_gpu_mamf(gb200, true));
}

/* B200's sustained GEMM rate, derived in the catalog from GB200's long run (0.763 x 0.804 of
   the FP8 peak), against two figures it was not built from: B200's own long run, cuBLASLt
   MXFP8 at M = N = 8192 after 10,000 warm-up and over 10,000 timed calls on a production HGX
   B200, 2886 TF at K 8192 and 2810 TF at K 16384 (tmoreau89/triton, python/
   triton_cublas_bench/RESULTS.md, 2025-10-10); and GB200's measured 2906.9 TF (Azure, 10,000
   warm-up iterations) at B200's 1,000 W against GB200's 1,200 W by the gb300 entry's cube law
   (the sustained clock as the cube root of the power limit). */
static void test_b200_sustained_rate(void **state)
{
    (void)state;
    const struct tp_gpu *b200 = find("b200");
    double fp8_tf = tp_gpu_mamf(b200, true) * b200->peak_flops[TP_FP8] / 1e12;
    /* at or below the long run's best, within 5% of it and within 2% of the K 16384 one */
    assert_true(fp8_tf <= 2886.0);
    assert_true(fp8_tf / 2886.0 > 0.95);
    assert_true(fabs(fp8_tf / 2810.0 - 1) < 0.02);
    /* GB200's long run at B200's power limit: 2736 TF, within 1% */
    double cube = 2906.9 * cbrt(1000.0 / 1200);
    assert_true(fabs(cube - 2735.5) < 0.5);
    assert_true(fabs(fp8_tf / cube - 1) < 0.01);
    /* the 16-bit share takes the same clock: B200's bf16 over fp8 share is its sweep's */
    assert_true(fabs(tp_gpu_mamf(b200, false) / tp_gpu_mamf(b200, true) - 0.776 / 0.763) < 0.001);
}

/* The native attention kernel's share of the peak on the Blackwell die against Hopper's, from
   one benchmark (NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results, the Llama
   3.1 preset: 64 query / 8 KV heads, head dim 128, 8k, bf16): causal forward / backward 1574 /
   1332 TFLOP/s on GB200 (cuDNN 9.22) against 644 / 541 on H200 (cuDNN 9.19); non-causal 1771
   / 1404 against 691 / 594.  B200's `attn` lies inside the four ratios (0.94-1.01). */
static void test_blackwell_attention_share(void **state)
{
    (void)state;
    double attn, gemm, fa2, mamf4;
    const double gb200 = 2500, h200 = 989;
    const double ratio[] = {(1574 / gb200) / (644 / h200), (1332 / gb200) / (541 / h200),
                            (1771 / gb200) / (691 / h200), (1404 / gb200) / (594 / h200)};
    double lo = ratio[0], hi = ratio[0];
    for (size_t i = 1; i < sizeof ratio / sizeof ratio[0]; i++) {
        lo = fmin(lo, ratio[i]);
        hi = fmax(hi, ratio[i]);
    }
    assert_true(lo > 0.93 && hi < 1.02);
    tp_kernel_rel(find("b200"), &attn, &gemm, &fa2, &mamf4);
    assert_true(attn >= lo && attn <= hi);
    tp_kernel_rel(find("gb200"), &attn, &gemm, &fa2, &mamf4);
    assert_true(attn >= lo && attn <= hi);
}

/* Per-GPU kernel rates on Blackwell (tp_kernel_rel): the native attention kernel keeps the
   H100's share of the peak (FA4 causal, head dim 128, 8k: 1418.1 of 2250 TF on B200,
   Dao-AILab/flash-attention#2280, against FA3's 625 of 989 on H100, FA3 paper Fig. 5);
   FlashAttention-2 (mma.sync) runs at the H100's absolute rate, not at Blackwell's peak
   (forward, head dim 128, 2k-8k keys: 352.1 / 353.9 / 361.6 TF on B200, meta-pytorch/
   tritonbench#171, against 335-370 on H100), so FA2 over the native kernel is
   356 / 1534.8 on B200 against 352 / 635 on H100. */
static void test_blackwell_kernel_rates(void **state)
{
    (void)state;
    double attn, gemm, fa2, mamf4;
    const char *const keys[] = {"b200", "gb200", "b300", "gb300"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        tp_kernel_rel(find(keys[i]), &attn, &gemm, &fa2, &mamf4);
        assert_true(fabs(attn - (1418.1 / 2250) / (625.0 / 989)) < 0.01);
        assert_true(gemm == 1);
        assert_true(fabs(fa2 - (356.0 / 1534.8) / (352.0 / 635)) < 0.01);
    }
    /* so FA2 on B200 runs within 6% of its measured absolute rate against the H100's */
    tp_kernel_rel(find("b200"), &attn, &gemm, &fa2, &mamf4);
    double b200_over_h100 =
        find("b200")->peak_flops[TP_BF16] * fa2 / find("h100-sxm")->peak_flops[TP_BF16];
    assert_true(fabs(b200_over_h100 / (356.0 / 352) - 1) < 0.06);
    /* the H100, where the calibration measures the rates, is the reference */
    /* GB200's sustained NVFP4 GEMMs: 7627.6 of 10000 TF (Azure, 10,000 warm-up iterations);
       B200 the same die; B300 / GB300 unmeasured */
    tp_kernel_rel(find("gb200"), &attn, &gemm, &fa2, &mamf4);
    assert_true(fabs(mamf4 - 7627.6 / 10000) < 0.001);
    tp_kernel_rel(find("b200"), &attn, &gemm, &fa2, &mamf4);
    assert_true(fabs(mamf4 - 7627.6 / 10000) < 0.001);
    tp_kernel_rel(find("gb300"), &attn, &gemm, &fa2, &mamf4);
    assert_true(mamf4 == 0);
    tp_kernel_rel(find("h100-sxm"), &attn, &gemm, &fa2, &mamf4);
    assert_true(attn == 1 && gemm == 1 && fa2 == 1 && mamf4 == 0);
}

/* H20's kernels against the H100's share of the peak (tp_kernel_rel), both from one benchmark
   (Dao-AILab/flash-attention#1310, forward, head dim 128, 2k keys, non-causal): FA3 126.2 of
   148 TF on H20 against 625 of 989 on H100 (FA3 paper Fig. 5); FlashAttention-2 83.7 of FA3's
   126.2 on H20 against 352 / 635 on H100, so FA2's mma.sync is cut with the wgmma path
   rather than kept at the H100's per-SM rate. */
static void test_h20_kernel_rates(void **state)
{
    (void)state;
    double attn, gemm, fa2, mamf4;
    tp_kernel_rel(find("h20"), &attn, &gemm, &fa2, &mamf4);
    assert_true(fabs(attn - (126.2 / 148) / (625.0 / 989)) < 0.01);
    assert_true(fabs(fa2 - (83.7 / 126.2) / (352.0 / 635)) < 0.01);
    assert_true(mamf4 == 0);
}

/* RTX 4090 against the A100 (tp_kernel_rel): a quarter of the A100's MMA FLOP per SM clock
   (165.2 TF over 128 SMs at 2.52 GHz against 312 over 108 at 1.41, Ada and A100 whitepapers).
   Attention from measurements, not the H20's factor: FlashAttention-2's forward on the 4090 at
   8k tokens, head dim 64 (172.96 TFLOP/s, [4090-FA2]), its backward at the RTX A5000's share of
   the forward (77.42 / 81.86, the same sm8x kernels, [A5000-FA2]), forward + backward over the
   A100's (165 of 312 at head dim 64 and 8k, [FA2] Fig. 4); the priced rate stays below the
   measured forward.  GEMMs at the torch.mm sweep's rate (gemm_scale x gemm >= 1). */
static void test_4090_kernel_rates(void **state)
{
    (void)state;
    double attn, gemm, fa2, mamf4;
    const struct tp_gpu *g = find("rtx4090");
    double per_clk = g->peak_flops[TP_BF16] / (g->sms * 2.52e9);
    double a100_clk = find("a100-80gb")->peak_flops[TP_BF16] / (108 * 1.41e9);
    assert_true(fabs(per_clk / a100_clk - 0.25) < 0.01);
    tp_kernel_rel(g, &attn, &gemm, &fa2, &mamf4);
    double fwd = 172.96, bwd = fwd * 77.42 / 81.86;
    double share = 3.5 / (1 / fwd + 2.5 / bwd) / (g->peak_flops[TP_BF16] / 1e12);
    assert_true(fabs(attn - share / (165.0 / 312)) < 0.01);
    assert_true(fabs(attn - 1.90) < 0.01);
    assert_true(fa2 == 1 && mamf4 == 0);
    struct tp_calib cal;
    tp_calib_init(&cal);
    assert_true(cal.attn_eff * attn * 165.2 < 171.8);
    assert_true(cal.gemm_scale * gemm >= 1);
    /* the RTX A6000 (GA102 at 1024 MMA FLOP per SM clock, as the A5000): the A5000's measured
       forward + backward share (78.64 of 111.1 TF at 8k, [A5000-FA2]) over the A100's */
    const struct tp_gpu *a6 = find("a6000");
    assert_true(fabs(a6->peak_flops[TP_BF16] / (a6->sms * 1.80e9) - 111.1e12 / (64 * 1.695e9)) <
                10);
    tp_kernel_rel(a6, &attn, &gemm, &fa2, &mamf4);
    assert_true(fabs(attn - (78.64 / 111.1) / (165.0 / 312)) < 0.01);
    assert_true(gemm == 1 && fa2 == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_keys),   cmocka_unit_test(test_aliases_and_case),
        cmocka_unit_test(test_unknown),         cmocka_unit_test(test_rows_sane),
        cmocka_unit_test(test_published_values), cmocka_unit_test(test_blackwell_catalog),
        cmocka_unit_test(test_blackwell_kernel_rates), cmocka_unit_test(test_h20_kernel_rates),
        cmocka_unit_test(test_b200_sustained_rate),
        cmocka_unit_test(test_blackwell_attention_share),
        cmocka_unit_test(test_4090_kernel_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
