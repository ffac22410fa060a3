/*
 * kernel_rates.c - measured kernel rates the time model scales its calibrated ones by, one table
 * per physical thing (moved out of time_block.c): how near its peak each GPU's tensor-core
 * kernels run against the H100's (tp_kernel_rel), bitsandbytes' NF4 dequantization kernel
 * (tp_nf4_dequant_rel) and the ROCm attention kernels per stack (tp_rocm_attn; in training,
 * tp_rocm_attn_trained).  Pure look-ups,
 * no allocation: tp_resolve_hw calls them once per evaluated run.
 */
#include "time_internal.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* How much nearer its peak a GPU's tensor-core kernels run than the H100's, where the
   calibration's attention rate (attn_eff) and real-shape GEMM loss (gemm_scale) are measured:
   1 for every GPU but those with a measurement against the H100, attention and GEMMs apart.

   H20 (GH100 cut to 148 TF bf16 over 78 SMs, with 4.0 TB/s): each SM's tensor cores run at
   about a quarter of the H100 SM's rate (148/78 against 989/132 TF) while its softmax units,
   load pipes and HBM do not, so the non-matmul work of a tile hides behind the slower MMAs.
   FlashAttention-3's forward, head dim 128, 2k keys, non-causal: 126.2 TFLOP/s of 148 on H20
   (0.853, Dao-AILab/flash-attention#1310; cuDNN 129.1, 0.872) against 625 of 989 on H100
   (0.632, FA3 paper arXiv:2407.08608 Fig. 5; cuDNN 617, 0.624): 1.35.  The GEMMs' loss
   against the MAMF sweep (gemm_scale) has the same origin (epilogues, wave tails and
   operand loads not hidden behind the MMAs) and shrinks by the same factor [derived]; with
   the H20's measured sweep (0.961 BF16, 0.955 FP8 of peak, src/plan/gpus.c [H20-MM])
   gemm_scale x 1.35 passes 1, so its GEMMs are priced at the sweep's rate.  Block-scaled
   FP8 GEMMs at real shapes stay within 3% of that rate on H20 (M 1024 x N 24576 x K 7168:
   276 TFLOP/s, 0.93 of 296; N 32768 x K 512 at M 8192: 274, 0.93; vllm-project/vllm#49932).
   FlashAttention-2 on H20, the same benchmark (#1310, forward, head dim 128, 2k keys,
   non-causal): 83.7 TFLOP/s against FA3's 126.2, 0.663 of the native kernel (causal 65.9 /
   107.8 = 0.611; head dim 64: 0.681 and 0.708), against 352 / 635 = 0.554 on H100 (FA3
   paper Fig. 5), where fa2_ratio is measured: fa2 = 0.663 / 0.554 = 1.20.  So mma.sync is
   cut nearly as deeply as wgmma (1.07 TFLOP/s per SM against the H100's 2.67): FA2 over the
   native kernel rises from 0.554 to 0.663, not towards 1.  Forward only; FA2's backward on
   H20 is not measured.

   AMD CDNA 3 (MI300X, MI325X), kernels without a measurement (tp_rocm_attn has the measured
   ones): the attention kernel is two GEMMs and a softmax on the same matrix cores, and those
   cores reach a smaller share of their peak than the H100's do: the MAMF sweeps ([MLE], the
   catalog's mamf_bf16) measure 668 of 1307.4 TF on MI300X (0.511) and 0.601 of peak on MI325X
   against 0.803 on H100 SXM, so attention runs at 0.511 / 0.803 = 0.64 (MI325X 0.75) of the
   H100's share of peak [derived bound; the CK v3 kernel's measured forward confirms it, 0.640].
   The GEMMs carry the catalog's MAMF already (gemm 1).  Intel Max 1550 (Xe matrix engines) by
   the same rule: Aurora's measured GEMM, 0.695 of the tile's peak with all 12 tiles busy and
   0.602 of the card's clock-derived peak (src/plan/gpus.c, [ALCF-NODE]), against 0.803:
   attention at 0.87 and 0.75 of the H100's share [derived bound].

   NVIDIA Blackwell (B200, GB200 on the same die; B300, GB300): the native kernels (cuDNN, FA4,
   tcgen05) keep the H100's share of the peak: FlashAttention-4, head dim 128, causal, 8k keys,
   forward 1418.1 TFLOP/s of 2250 on B200 (0.630, Dao-AILab/flash-attention#2280) against
   FA3's 0.632 on H100 (attn 1).  FlashAttention-2 does not: its Ampere-style mma.sync runs
   on sm_100 at about the rate it has on the H100, not at the tcgen05 peak -- 352-362
   TFLOP/s forward, head dim 128, 2k-8k keys, non-causal, on B200 (meta-pytorch/tritonbench
   #171; 300-346 fwd + bwd at head dim 64, Dao-AILab/flash-attention#1589) against 335-370 on
   H100 (FA3 paper Fig. 5).  FA2 over the native kernel is so 356 / 1534.8 (FA4, the same
   shape, #2280) = 0.232 on B200 against 352 / 635 = 0.555 on H100, where fa2_ratio is
   measured: fa2 = 0.232 / 0.555 = 0.42 [derived].  PyTorch's SDPA picks FlashAttention-2
   first on every GPU (its fixed priority order, pytorch/pytorch#138907), so eager and
   torch.compile stacks without a `cudnn` attention label run it.  Not everywhere: torchtitan
   puts cuDNN first on sm >= 100 from 2025-05-14 (pytorch/torchtitan 3b85aa31, #1196), and its
   per-op SAC did not save that kernel's output until 2025-12-01 (b39377f9, #2095), so its
   B200 runs between the two ran cuDNN and recomputed the attention forward; later PyTorch
   builds prefer cuDNN on sm90 / sm100 themselves (check_prefer_cudnn_attention in
   aten/src/ATen/native/transformers/cuda/sdp_utils.cpp).  NVIDIA's B200 benchmark of PyTorch
   2.8's SDPA (cuDNN 9.10.2; causal, 128 query / 8 KV heads, head dim 128, 8k: cuDNN 1211 /
   945 TFLOP/s forward / backward, FlashAttention-2 376 / 309; NVIDIA/cudnn-frontend f937055,
   benchmark/sdpa_benchmark_bf16_training) puts FA2 at 0.31 of cuDNN forward, 0.33 backward,
   against 0.232 here (docs/calibration.md, "B200 as it trains": not applied).  B300 / GB300 (sm_103) have
   no FA2 measurement and take B200's figures [unverified]; their native kernels' share of
   the peak is B200's times tp_attn_sfu_rel (Blackwell Ultra's exponential units).  Azure's FlashAttention-2 run
   (head dim 128, batch 2, 8k) agrees: 373.9 TFLOP/s on GB200 against 327.9 on H100
   (Azure/AI-benchmarking-guide ND_GB200_v6_results.md, ND_H100_v5_results.md).

   mamf4: the sustained FP4 matmul rate over the FP4 peak where it was measured (0: the
   FP8 share times fp8_mamf_ratio).  GB200, cuBLASLt NVFP4 after 10,000 warm-up iterations,
   random data: best 7627.6 TF of 10000 (16384^3; the same file), 0.763 -- above the FP8 share
   (2906.9 of 5000, 0.581): the narrower operands draw less power, so the power-limited clock
   falls less.  B200 is the same die and takes it [derived]; B300 / GB300 have no FP4 run.

   GeForce Ada (RTX 4090), against the A100, the reference of the mma.sync kernels (attn_eff
   and gemm_scale apply to the A100 unscaled): GeForce runs 16-bit MMAs with FP32 accumulate at
   half the FP16-accumulate rate (Ada whitepaper: 165.2 against 330.3 TFLOP/s), so each SM
   issues 165.2e12 / (128 SMs x 2.52 GHz boost) = 512 MMA FLOP per clock against the A100's
   312e12 / (108 x 1.41 GHz) = 2049: a quarter, while its load pipes, softmax and epilogue
   instructions run per clock as the A100's, so the non-matmul work of a tile hides behind the
   slower MMAs.  Measured on the 4090 [4090-FA2]: FlashAttention-2's forward (flash-attn's
   benchmark_flash_attention.py, head dim 64, non-causal, batch x seqlen = 16k) reaches 150.9 /
   154.5 / 171.8 / 172.8 / 173.0 / 173.0 TFLOP/s at 512 to 16k tokens, 1.05 of the 165.2 peak
   at 8k.  Its backward has no 4090 measurement; the same script on an RTX A5000 (GA102, the
   same 99 KB opt-in shared memory per block: FA2's backward picks its tiles by
   max_smem_per_block >= 144 KB alone, csrc/flash_attn/src/flash_bwd_launch_template.h, so
   sm86 and sm89 run the same kernels; [A5000-FA2]) runs the backward at 77.42 / 81.86 = 0.946 of its forward at 8k tokens (0.862
   at 2k).  GA102 with FP32 accumulate issues 1024 MMA FLOP per SM clock (111.1 TF over 64 SMs
   at 1.695 GHz), twice the 4090's, so the 4090's backward, whose extra non-matmul work hides
   behind the slower MMAs, is at least that share of its forward [derived bound]: forward +
   backward (backward FLOPs 2.5x, [FA2] §4.1) 3.5 / (1 / 172.96 + 2.5 / (0.946 x 172.96)) =
   166.2 TFLOP/s, 1.006 of the peak, against the A100's FA2 forward + backward at head dim 64
   and 8k tokens, 165 of 312 ([FA2] Fig. 4, tp_flash1_kernel): 1.006 / 0.529 = 1.90 for
   attention, where the H20's factor (1.35) stood in by analogy before.  GEMMs: the torch.mm
   sweep reaches 0.998 of the peak ([4090-MM], gpus.c) against the A100's 0.869, and the H20's
   1.35 lifts gemm_scale past 1, so real shapes run at the sweep's rate less their tile and wave
   quantization (any factor above 1 / gemm_scale gives the same).

   RTX A6000 (GA102, professional: FP32 accumulate at the full 16-bit rate, 154.8 TF over 84 SMs
   at 1.80 GHz = 1024 MMA FLOP per SM clock, as the RTX A5000's 111.1 TF over 64 SMs at 1.695
   GHz): the A5000's FlashAttention-2 measured whole [A5000-FA2], forward + backward 78.64
   TFLOP/s at head dim 64 and 8k tokens, 0.708 of its peak, against the A100's 0.529 (above):
   1.34 for attention [derived: the same die and per-SM rates, the same sm8x kernels].  Both
   ratios take the A100's causal figure (Fig. 4c; the non-causal benchmark runs a few percent
   faster on the A100, not read here), so they are upper bounds by that much.  GEMMs keep the
   catalog's default MAMF (no A6000 sweep). */
void tp_kernel_rel(const struct tp_gpu *g, double *attn, double *gemm, double *fa2,
                   double *mamf4)
{
    static const struct {
        const char *key;
        double attn, gemm, fa2, mamf4;
    } REL[] = {{"h20", 1.35, 1.35, 1.20, 0},  {"mi300x", 0.64, 1, 1, 0},
               {"mi325x", 0.75, 1, 1, 0},     {"b200", 1, 1, 0.42, 0.763},
               {"gb200", 1, 1, 0.42, 0.763},  {"b300", 1, 1, 0.42, 0},
               {"gb300", 1, 1, 0.42, 0},      {"max1550-tile", 0.87, 1, 1, 0},
               {"max1550", 0.75, 1, 1, 0},    {"rtx4090", 1.90, 1.35, 1, 0},
               {"a6000", 1.34, 1, 1, 0}};
    *attn = *gemm = *fa2 = 1;
    *mamf4 = 0;
    for (size_t i = 0; i < sizeof REL / sizeof REL[0]; i++)
        if (strcmp(g->key, REL[i].key) == 0) {
            *attn = REL[i].attn;
            *gemm = REL[i].gemm;
            *fa2 = REL[i].fa2;
            *mamf4 = REL[i].mamf4;
        }
}

/* Blackwell Ultra (B300, GB300; sm_103) doubles the special-function units' MUFU.EX2 rate
   over Blackwell (sm_100): 10.7 against 5 TeraExponentials/s per GPU at nearly the same
   tensor-core peak ([BW-ULTRA]: the Blackwell Ultra architecture blog's table and datasheet;
   NVIDIA's MUFU.EX2 micro-benchmark measures 10,024 against 4,943 Gop/s of FP32 exp2 on GB300
   and GB200, 2.03x, [BWU-SOFTMAX]).  Why it moves attention [derived]: a 16-bit tcgen05 MMA
   does 8192 FLOP per clock per SM (2500 TF / 148 SMs / 2.06 GHz) and MUFU 16 exp2 per clock
   per SM on sm_100 (5 T/s / 148 / 2.1 GHz), 32 on sm_103 (10.7 T/s / 160 / 2.1 GHz).  The
   forward does 4 d FLOP per score and one exponential: at head dim 128, 512 / 8192 = 1/16
   clock of MMA against 1/16 clock of MUFU on sm_100 (the FlashAttention-4 paper's case for
   exponentials emulated on the FMA units), 1/32 on sm_103.  The backward does 10 d FLOP per
   recomputed exponential, so MUFU is 0.4 of its MMA time on sm_100 and 0.2 on sm_103: the
   forward gains more than the backward.  The kernels do not overlap MUFU with the MMAs
   fully, so the gain is taken as measured, not from this bound.
   Measured [CUDNN-FE-SDPA]: cuDNN 9.22 (frontend 1.21.1) SDPA training benchmark, BF16, the
   Llama 3.1 preset (64 query / 8 KV heads, head dim 128), batch 2, the same package peak
   (2500 TF) on both: at the reference shape of the anchored rate (16k, non-causal, as
   tp_rocm_attn) forward 2014 TFLOP/s on GB300 against 1697 on GB200 (1.187), backward 1536
   against 1374 (1.118); over its ten shapes (2k-32k, causal and not) the median ratios are
   1.188 and 1.092.  FlashAttention-4 agrees: its BF16 forward keeps the tensor pipe 99.9%
   busy on B300 against 87.7% on B200 (Nsight Compute, Dao-AILab/flash-attention#2701), 1.14,
   and FA4 drops the emulated exp2 on sm_103 (flash_attn/cute/flash_fwd_sm100.py).  Short
   spans gain little: the same benchmark's GPT-OSS preset (head dim 64, 128 heads, window 128,
   causal) runs 1.04 forward and 1.06 backward on GB300 over GB200 (median of 2k-32k tokens:
   165 / 172 and 187 / 198 TFLOP/s at 8k), where the per-block work, not the exponentials,
   bounds the kernel; time_block.c applies these ratios to the counted keys only, not to
   the fitted per-block keys (attn_block_keys).
   B300 is the same die as GB300 at a lower power limit and takes GB300's ratios [derived:
   the MMA / MUFU balance is per clock].  Applies to the native kernels (cuDNN, FA3/FA4-class);
   FlashAttention-2's mma.sync stays far below the MUFU limit (tp_kernel_rel fa2).  1 and 1
   elsewhere. */
void tp_attn_sfu_rel(const struct tp_gpu *g, double *fwd, double *bwd)
{
    *fwd = *bwd = 1;
    if (strcmp(tp_gpu_die(g->key), "b300") == 0) {
        *fwd = 2014.0 / 1697;
        *bwd = 1536.0 / 1374;
    }
}

/* bitsandbytes' NF4 dequantization kernel (kDequantizeBlockwise, csrc/kernels.cu, launched by
   functional.dequantize_4bit) as a share of the GPU's HBM peak, its bytes counted as 0.5 B read
   and 2 B written per weight.  `lut`: the branchless kernel of bitsandbytes >= 0.48 ([BNB-1746],
   merged 2025-09-18: the 4-bit code as an index into a lookup table); otherwise the kernel of
   bitsandbytes <= 0.47, which every QLoRA run of 2023 to mid-2025 executed, decoding each
   nibble through a tree of branches (dDequantizeNF4), whose divergence holds the kernel far
   from the HBM roofline.
   LUT kernel, measured [BNB-NF4-A100]: dequantize_4bit of a 16384 x 16384 NF4 tensor (block 64,
   nested absmax, bf16 out) on an A100 (108 SMs; the 80 GB SXM4's 2.039 TB/s assumed) in
   1.241162 ms, torch.cuda.Event over 100 calls: 2.5 B x 2^28 / 1.241 ms = 541 GB/s, 0.265 of the
   peak (0.348 were it the 40 GB card).
   Branching kernel: [BNB-1747] (bitsandbytes PR #1747, the same LUT idea through warp shuffles,
   benchmarked against the branching kernel with CUDA 12.8 on P100, A100 40GB and H100 80GB):
   "between 1.36x - 2.07x faster" across all problem sizes; the geometric middle, 1.68x
   [derived]: 0.265 / 1.68 = 0.158.  PR #1746's own before/after tables were not quotable here.
   Other GPUs take the A100's share [derived]: both kernels issue-bound, their rate follows
   SMs x clock, and H100 SXM's over A100's (132 x 1.98 GHz / 108 x 1.41 GHz = 1.72) tracks the
   HBM ratio (3.35 / 2.039 = 1.64) within 5%; ROCm's HIP build of the same kernel has no
   measurement [unverified]. */
double tp_nf4_dequant_rel(bool lut)
{
    const double a100_hbm = 2.039e12, weights = 16384.0 * 16384.0, seconds = 1.241162e-3;
    double lut_rel = 2.5 * weights / seconds / a100_hbm;
    return lut ? lut_rel : lut_rel / sqrt(1.36 * 2.07);
}

/* The NF4 dequantization's rate in bytes/s (0.5 B read + 2 B written per weight) on `g`.  The
   kernel is issue-bound (above): its rate follows SMs x clock, which the HBM share stands in
   for where the two ratios agree (the data-centre parts).  Where they do not, the A100's rate
   scales by SMs x boost clock, capped at the DRAM peak [derived]: the RTX 4090 (128 SMs at
   2.52 GHz, Ada whitepaper) issues 2.12 x the A100's 108 at 1.41 GHz (A100 whitepaper) from
   0.49 x its bandwidth, so its dequantization runs at 0.67 of its 1.008 TB/s, where the HBM
   share alone would give 0.16 (4.3x slower: 0.9 s of a Yi-34B QLoRA step on two 4090s).  The
   A100 40GB is the measured A100's die (108 SMs at 1.41 GHz, A100 whitepaper) with HBM2 at
   1.555 TB/s instead of the 80 GB card's 2.039: the same issue rate, so the same bytes/s, not
   0.76 of them (Answer.AI's Llama-2 70B QLoRA on 2-8 A100 40GB: 3 uses x 68.5G weights x 2.5 B
   per micro-batch, 2.1 s at the HBM share against 1.6 s). */
double tp_nf4_dequant_bw(const struct tp_gpu *g, bool lut)
{
    static const struct {
        const char *key;
        double ghz;
    } CLOCK[] = {{"rtx4090", 2.52}, {"a100-40gb", 1.41}};
    const double a100_bw = 2.039e12, a100_issue = 108 * 1.41;
    double bw = g->hbm_bw * tp_nf4_dequant_rel(lut);
    for (size_t i = 0; i < sizeof CLOCK / sizeof CLOCK[0]; i++)
        if (strcmp(g->key, CLOCK[i].key) == 0) {
            bw = a100_bw * tp_nf4_dequant_rel(lut) * g->sms * CLOCK[i].ghz / a100_issue;
            bw = bw < g->hbm_bw ? bw : g->hbm_bw;
        }
    return bw;
}

/* ROCm attention kernels, measured: forward and backward TFLOP/s, BF16, head dim 128,
   non-causal, seqlen 16384, the shape of the H100 reference the anchored rate is scaled from
   (FlashAttention-3 on H100 SXM: 648 forward, 561 backward of 989 TF, FA3 paper
   arXiv:2407.08608 Figs. 5-6; attn_eff itself is fitted to NeMo's 2024 H100 rows).

   native: Transformer Engine ROCm's CK fused attention with the v3 (aiter assembly) kernels,
   the kernel NeMo, Megatron-Core and Primus run on ROCm (NVTE_CK_USES_FWD_V3 /
   NVTE_CK_USES_BWD_V3; AMD's MLPerf Training configs set both, v5.0 the backward only).
   [AITER-MHA] (ROCm/aiter op_tests/cpp/mha/README.md, "the asm kernel performance of the
   attention forwards and attention backwards", BF16, BSHD, batch mode), batch 1, 64 query
   heads, 8 and 4 KV heads, seqlen 16384: MI300X forward 547.78 / 549.09, backward with fp32
   dQ atomics 441.55 / 448.83 (a32: NVTE_CK_IS_V3_ATOMIC_FP32 defaults to 1 in TE ROCm's
   fused_attn_ck.cpp).  The 16-bit-atomic backward (a16) some recipes select runs faster
   (MI300X 519.21 / 516.26) and is not the default.  The same table's causal rows at 8k tokens
   are within 2% of these forward and 3% backward (MI300X 540 / 433).
   fa2: FlashAttention-2's Composable Kernel build (ROCm/flash-attention, flash-attn's ROCm
   backend), the kernel the Hugging Face stacks call (attn_implementation flash_attention_2):
   [ROCM-FA142] (ROCm/flash-attention#142), MI300X, ROCm 6.3.2, batch 1 / 2 / 4 / 8 at
   seqlen 16384: forward 353.22 / 355.51 / 339.62 / 309.60, backward 194.43 / 202.12 / 205.43 /
   206.66, medians 346.4 and 203.8.
   MI325X is MI300X's die at 1000 W against 750 W: the same kernels faster by its sustained
   clock, the MAMF share ratio 0.601 / 0.511 [derived].  MI355X (gfx950): the same [AITER-MHA]
   rows, forward 1437.62 / 1432.94, backward a32 843.54 / 843.24 (a16 1212.72 / 1200.31);
   no FlashAttention-2 CK build measurement, so the Hugging Face stacks there keep
   tp_kernel_rel's figures.  Returns false for a GPU (or, not `native`, a stack) without a
   measured ROCm kernel (the fallback is tp_kernel_rel). */
bool tp_rocm_attn(const struct tp_gpu *g, bool native, double *fwd_tflops, double *bwd_tflops)
{
    static const struct {
        const char *key;
        double fwd, bwd, fa2_fwd, fa2_bwd, clock;
    } ROCM[] = {
        {"mi300x", (547.78 + 549.09) / 2, (441.55 + 448.83) / 2, (339.62 + 353.22) / 2,
         (202.12 + 205.43) / 2, 1},
        {"mi325x", (547.78 + 549.09) / 2, (441.55 + 448.83) / 2, (339.62 + 353.22) / 2,
         (202.12 + 205.43) / 2, 0.601 / 0.511},
        {"mi355x", (1437.62 + 1432.94) / 2, (843.54 + 843.24) / 2, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof ROCM / sizeof ROCM[0]; i++)
        if (strcmp(g->key, ROCM[i].key) == 0) {
            if (!native && !(ROCM[i].fa2_fwd > 0))
                return false;
            *fwd_tflops = (native ? ROCM[i].fwd : ROCM[i].fa2_fwd) * ROCM[i].clock;
            *bwd_tflops = (native ? ROCM[i].bwd : ROCM[i].fa2_bwd) * ROCM[i].clock;
            return true;
        }
    return false;
}

/* A measured ROCm kernel's rates relative to the anchored (H100) ones: its share of its GPU's
   16-bit peak over FlashAttention-3's on the H100 at the same shape, forward and backward
   apart (tp_rocm_attn).  False where none was measured. */
bool tp_rocm_attn_rel(const struct tp_gpu *g, bool native, double *fwd, double *bwd)
{
    double f, b, p16 = g->peak_flops[TP_BF16] / 1e12;
    if (!(p16 > 0) || !tp_rocm_attn(g, native, &f, &b))
        return false;
    *fwd = f / p16 / (648.0 / 989);
    *bwd = b / p16 / (561.0 / 989);
    return true;
}

/* FlashAttention 1.x (flash-attn < 2; the kernel of flash_attn_unpadded_func, and of PyTorch
   2.0-2.1's SDPA flash backend: PyTorch 2.2 "now supports FlashAttention-2, yielding around 2x
   speedups compared to previous versions", pytorch.org/blog/pytorch2-2) against
   FlashAttention-2, by the FA1 kernel the head dimension dispatches to.  FA1 builds three
   kernels (flash-attn v1.0.9 csrc/flash_attn/fmha_api.cpp run_fmha_fwd: d <= 32, <= 64, <= 128;
   head dims multiples of 8 up to 128).  Both are Ampere-style mma.sync kernels.

   [FA2] (arXiv:2307.08691) Fig. 4, forward + backward TFLOP/s on A100 80GB SXM4 (312 TF), causal
   mask, batch x seqlen = 16k tokens, hidden 2048, seqlen 512 / 1k / 2k / 4k / 8k / 16k (the
   figure is Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png):
     head dim 64  (4c): FlashAttention 58 70 77 87 92 97,  FlashAttention-2 88 119 140 156 165 171
     head dim 128 (4d): FlashAttention 55 62 69 76 80 83,  FlashAttention-2 99 133 155 173 182 189
   FA1 / FA2 per length: 0.659 0.588 0.550 0.558 0.558 0.567 (median 0.5625) and 0.556 0.466
   0.445 0.439 0.440 0.439 (median 0.4424); FA2's medians 148 and 164 TFLOP/s, 0.474 and 0.526
   of the peak.  The same benchmark on H100 80GB SXM5 (989 TF; assets/flash2_h100_fwd_bwd_
   benchmark.png, the FA2 README's H100 figure; causal, head dim 64: FA1 104 123 136 138 149 156
   against FA2 141 192 232 257 273 284; head dim 128: 98 109 108 126 135 137 against 163 221 265
   294 308 328): FA1 / FA2 medians 0.568 and 0.433, within 1% and 2% of the A100's, so one ratio
   per kernel serves both GPUs (tests/test_flash1.c); FA2's medians 244.5 and 279.5 TFLOP/s,
   0.247 and 0.283 of the peak.  The figures give forward + backward together: the ratio and the
   share serve both directions (the paper's forward-only and backward-only Figs. 5-6 were not
   read here).  The head-dim-32 kernel has no measurement and takes head dim 64's figures, the
   sm86 / sm89 parts the A100's share of their own peak [unverified].  Head dims between two
   kernels run the larger one padded (FA1: 80 -> 128; FA2: 80 -> 96); neither is priced. */
void tp_flash1_kernel(double head_dim, bool async, double *ratio, double *fa2_share)
{
    bool small = head_dim <= 64;
    *ratio = small ? 0.5625 : 0.4424;
    *fa2_share = async ? (small ? 244.5 / 989 : 279.5 / 989) : (small ? 148.0 / 312 : 164.0 / 312);
}

/* Transformer Engine's CK v3 kernels as they run in training: at their benchmarked rate, not at
   the share the calibration fits to NVIDIA's training runs (attn_eff, about half of FA3's
   benchmarked share of the H100's peak) scaled by the kernels' ratio (tp_rocm_attn_rel).
   Measured [AIINFRA-TRACE]: NeMo's MLPerf Llama 2 70B LoRA step on 8 MI355X (MBS 1, seq
   8192, 64 query / 8 KV heads, head dim 128, causal; kernel times from a torch profiler
   trace): aiter::fmha_fwd_hd128_bf16_causal 1.173 ms and aiter::fmha_bwd_hd128_bf16_causal_a16
   2.771 ms per block, i.e. 937 and 992 TFLOP/s (1.0995e12 causal FLOP forward, 2.5x that
   backward), against [AITER-MHA]'s 1300.1 and 1064.6 for the same shape in isolation: 0.72 and
   0.93 of the benchmark (0.87 of the two passes' time), where attn_eff's share would give
   0.4-0.55.  Priced: the long-span reference rate (tp_rocm_attn, 16k non-causal) as the
   kernel's rate, slowed per 128-query block by the calibration's attn_block_keys like every
   fused kernel (time_block.c); at that trace's shape forward 1169 and backward (a16) 983
   TFLOP/s, the two passes 5% faster than measured.  MI300X and MI325X run the same aiter
   assembly family (gfx942 builds) and take the same rule [derived: no in-training trace].
   *fwd_share: the forward rate over the 16-bit peak; *bwd_time: backward seconds per forward
   second at equal FLOPs (fwd / bwd rate).  False where no native ROCm kernel is measured. */
bool tp_rocm_attn_trained(const struct tp_gpu *g, double *fwd_share, double *bwd_time)
{
    double f, b, p16 = g->peak_flops[TP_BF16] / 1e12;
    if (!(p16 > 0) || !tp_rocm_attn(g, true, &f, &b))
        return false;
    *fwd_share = f / p16;
    *bwd_time = f / b;
    return true;
}
