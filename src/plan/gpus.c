/*
 * gpus.c - the accelerator catalog, one row per device, every row citing its datasheet.
 *
 * Figures follow docs/physics.md §5.5 (vendor datasheet values as transcribed with links in
 * stas00/ml-engineering compute/accelerator/README.md [MLE] and network/README.md [MLE-net], the
 * torchtitan peak table [TT] and the ROCm architecture pages [ROCm]); rows the table lacks cite
 * their own source.  Conventions of every row:
 *   - FLOP/s are dense (no 2:4 sparsity).  TP_FP32 is the non-tensor (vector) rate, TP_TF32 the
 *     TF32/XF32 matrix rate, TP_BF16 the 16-bit matrix rate used for mixed-precision training
 *     (BF16 = FP16 on every datacenter part here; GeForce parts: the FP32-accumulate rate, which
 *     is half the FP16-accumulate one), TP_FP8 / TP_FP4 the FP8 / FP4 matrix rates; 0 = no such
 *     mode, except where a comment says the vendor publishes no figure.
 *   - Memory is the vendor's decimal figure; bandwidths are bytes/s per GPU per direction.
 *   - intra_bw is the scale-up link (NVLink, xGMI, Xe Link, Gaudi on-die RoCE) a GPU has inside
 *     its gpus_per_node domain; PCIe-only cards get their PCIe rate.  inter_bw is the default NIC
 *     bandwidth per GPU (a per-cluster input; override it).  PCIe per direction: Gen3 x16 15.75,
 *     Gen4 31.5, Gen5 63, Gen6 121 GB/s ([MLE-net]).
 *   - mamf_bf16 / mamf_fp8 are the maximum achievable matmul FLOP/s over this row's peak, from
 *     the MAMF sweeps in [MLE] (docs/physics.md §5.1), rescaled where [MLE] used another
 *     peak (MI300X 668/1307.4, MI325X 0.604 x 1300/1307.4, MI355X 1565/2500, Gaudi 3
 *     1243/1835).  H100 96GB takes the H100 SXM figures and H200 the H100 SXM bf16 one (same
 *     GH100 die; [MLE] lists only H200 fp8); H20 and RTX 4090 their own measurements
 *     ([H20-MM], [4090-MM], at their rows).
 *     0 = not measured: struct tp_calib's default.
 *   - async_mma: NVIDIA data-centre Hopper (sm_90) and Blackwell (sm_100/103) issue tensor-core
 *     work asynchronously (wgmma, tcgen05); Ampere-style mma.sync kernels such as
 *     FlashAttention-2 reach about half the peak there (FlashAttention-3, arXiv:2407.08608,
 *     Fig. 5: FA2 335-370 vs FA3 610-660 TFLOP/s, H100 bf16, head dim 128).  GeForce Blackwell
 *     (sm_120) keeps mma.sync.
 *   - "unverified" marks a figure not confirmed against a primary or transcribed datasheet;
 *     "[heuristic]" marks a default with no datasheet behind it.
 */
#include "plan_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define TF 1e12 /* FLOP/s */
#define GB 1e9  /* bytes, bytes/s */
#define TB 1e12 /* bytes/s */
/* Memory capacity: a vendor's "80 GB" of HBM or GDDR is 80 GiB of DRAM (nvidia-smi and
   rocm-smi report 80 GiB-class totals, e.g. 81559 MiB on H100 80GB), so capacities are GiB. */
#define GIB 1073741824.0

#define PCIE3 15.75e9
#define PCIE4 31.5e9
#define PCIE5 63e9
#define PCIE6 121e9

/* peak_flops in TP_FP32, TP_TF32, TP_BF16, TP_FP8, TP_FP4 order, in TFLOP/s */
#define PEAK(fp32, tf32, bf16, fp8, fp4)                                                          \
    {(fp32) * TF, (tf32) * TF, (bf16) * TF, (fp8) * TF, (fp4) * TF}

static const struct tp_gpu GPUS[] = {
    /* ---- NVIDIA Volta.  V100 SXM2 32 GB datasheet: 15.7 TF FP32, 125 TF FP16 tensor, 900 GB/s,
       NVLink2 300 GB/s total = 150 uni.  No BF16 and no TF32: the TP_BF16 slot holds the 16-bit
       tensor rate (FP16; no BF16), because the slot means "16-bit training".  Node: DGX-2
       (16 GPUs on NVSwitch, 8 x 100 Gb/s EDR = 6.25 GB/s per GPU; unverified), the layout of
       the Megatron-LM 2019/2020 runs; host PCIe Gen3 x16; 80 SMs. */
    {"v100-32gb", "NVIDIA V100 SXM2 32GB",
     "NVIDIA V100 datasheet via [MLE]; docs/physics.md §5.5",
     PEAK(15.7, 0, 125, 0, 0), 32 * GIB, 0.9 * TB, 150 * GB, 16, 6.25 * GB, PCIE3, 80, 0, 0, false, 0},
    /* ---- NVIDIA Ampere.  A100 SXM datasheet: 19.5 TF FP32, 156 TF TF32, 312 TF BF16, no FP8;
       40 GB HBM2 1.555 TB/s or 80 GB HBM2e 2.039 TB/s; NVLink3 600 GB/s total = 300 uni; PCIe
       Gen4; 108 SMs.  NIC: A100 pods are typically 8 x 200 Gb/s HDR = 25 GB/s per GPU. */
    {"a100-40gb", "NVIDIA A100 SXM4 40GB",
     "NVIDIA A100 datasheet via [MLE]; docs/physics.md §5.5 and §4.3",
     PEAK(19.5, 156, 312, 0, 0), 40 * GIB, 1.555 * TB, 300 * GB, 8, 25 * GB, PCIE4, 108, 0.869, 0, false, 0},
    {"a100-80gb", "NVIDIA A100 SXM4 80GB",
     "NVIDIA A100 datasheet via [MLE]; docs/physics.md §5.5 (PCIe card: 1.935 TB/s)",
     PEAK(19.5, 156, 312, 0, 0), 80 * GIB, 2.039 * TB, 300 * GB, 8, 25 * GB, PCIE4, 108, 0.869, 0, false, 0},
    /* A800: the export variant of the A100 80GB with NVLink cut to 400 GB/s total (200 uni),
       against the A100's 600; compute and memory as A100 80GB ([A800]: Reuters, 2022-11, "the
       NVLink interconnect is limited to 400GB/s ... the A100 600GB/s", otherwise identical).
       NIC: 4 x 200 Gb/s RoCE per 8-GPU node = 12.5 GB/s per GPU, not the DGX A100's 8 x 200:
       the published A800 nodes carry four compute NICs ([A800-NET]: NVIDIA/nccl-tests #156,
       "A800 * 8, RoCE 200Gb * 4 (for computing)", 96 GB/s all-reduce bus bandwidth over two
       bare-metal nodes, i.e. 100 GB/s per node; #133, two A800 nodes with four GPU-side RoCE
       ports each).  Two GPUs share a NIC, and an all-to-all "cannot aggregate the bandwidth of
       multiple NICs" (nccl-tests #267), so a GPU's share is half a NIC. */
    {"a800-80gb", "NVIDIA A800 SXM4 80GB",
     "NVIDIA A800 (NVLink 400 GB/s against the A100's 600: Reuters 2022-11, "
     "docs/references.md [A800]); NIC 4 x 200 Gb/s RoCE per node [A800-NET]; A100 80GB figures otherwise",
     PEAK(19.5, 156, 312, 0, 0), 80 * GIB, 2.039 * TB, 200 * GB, 8, 12.5 * GB, PCIE4, 108, 0.869, 0, false, 0},
    /* RTX A6000 (GA102, Ampere whitepaper): 38.7 TF FP32, 77.4 TF TF32 (unverified), 154.8 TF
       BF16/FP16 with FP32 accumulate (professional parts run it at full rate), 48 GB GDDR6
       768 GB/s, 84 SMs.  The NVLink bridge (112.5 GB/s bidirectional) joins only pairs, so the
       node-wide link is PCIe Gen4.  NIC: [heuristic] 100 Gb/s per GPU, no reference platform. */
    {"a6000", "NVIDIA RTX A6000 48GB",
     "NVIDIA RTX A6000 datasheet / Ampere GA102 whitepaper; docs/physics.md §5.5",
     PEAK(38.7, 77.4, 154.8, 0, 0), 48 * GIB, 0.768 * TB, PCIE4, 8, 12.5 * GB, PCIE4, 84, 0, 0, false, 0},
    /* ---- NVIDIA Ada.  L40S datasheet: 91.6 TF FP32, 183 TF TF32, 362 TF BF16, 733 TF FP8,
       48 GB GDDR6 864 GB/s, PCIe Gen4 x16, no NVLink; 142 SMs.  NIC: [heuristic] 200 Gb/s
       per GPU. */
    {"l40s", "NVIDIA L40S 48GB",
     "NVIDIA L40S datasheet via [MLE] and [TT]; docs/physics.md §5.5",
     PEAK(91.6, 183, 362, 733, 0), 48 * GIB, 0.864 * TB, PCIE4, 8, 25 * GB, PCIE4, 142, 0, 0, false, 0},
    /* RTX 4090 (Ada whitepaper): 82.6 TF FP32 and TF32, 165.2 TF FP16/BF16 with FP32
       accumulate (330.3 with FP16 accumulate), FP8 330.3 with FP32 accumulate (unverified),
       24 GB GDDR6X 1.008 TB/s, 128 SMs, PCIe Gen4 x16, no NVLink.  NIC: [heuristic].
       mamf_bf16 0.998, measured [4090-MM]: the BF16 torch.mm sweep of [H20-MM]'s script on a
       4090, best 164.81 TFLOP/s (at 2048^3; 160.17 at 8192^3) of the 165.2 peak: GeForce
       parts boost above the clock their datasheet peak assumes.  Without it the 0.80 default
       priced the 12 Hugging Face runs on 4090s in data/runs/public_hf_finetune.csv a median 32%
       too slow; with it, 23% (data/runs/README.md, "public_hf_finetune.csv"); with the 4090's
       kernel and dequantization rates of src/eval/kernel_rates.c, 8.4%; 19% once the LoRA
       adapters' element-wise passes were priced, 16.6% with FlashAttention-2's measured 4090
       share (docs/calibration.md, "The RTX 4090 and QLoRA"). */
    {"rtx4090", "NVIDIA GeForce RTX 4090 24GB",
     "NVIDIA Ada (AD102) whitepaper; docs/physics.md §5.5 (FP8 unverified); MAMF [4090-MM]",
     PEAK(82.6, 82.6, 165.2, 330.3, 0), 24 * GIB, 1.008 * TB, PCIE4, 8, 12.5 * GB, PCIE4, 128, 0.998, 0, false, 0},
    /* ---- NVIDIA Blackwell (GeForce).  RTX 5090: 104.8 TF FP32, 209.5 TF BF16/FP16 with FP32
       accumulate (838.4 = FP16-accumulate sparse), 32 GB GDDR7 1.792 TB/s, 170 SMs, PCIe Gen5
       x16 (spec pages: 170 SMs, 838.4 FP16 sparse, 3352 FP4 sparse "AI TOPS").  TF32 = FP32
       rate, FP8 419 (FP32 accumulate: half of the 838 dense FP16-accumulate rate, by analogy
       with the 4090) and FP4 1676 (3352 / 2 sparsity) are unverified. */
    {"rtx5090", "NVIDIA GeForce RTX 5090 32GB",
     "NVIDIA RTX 5090 specifications; docs/physics.md §5.5 (TF32/FP8/FP4 unverified)",
     PEAK(104.8, 104.8, 209.5, 419, 1676), 32 * GIB, 1.792 * TB, PCIE5, 8, 12.5 * GB, PCIE5, 170, 0, 0, false, 0},
    /* ---- NVIDIA Hopper.  H100 SXM datasheet: 67 TF FP32, 494.5 TF TF32, 989 TF BF16 (989.4 at
       the boost clock; the datasheet and [TT] use 989), 1979 TF FP8; 80 GB HBM3 3.35 TB/s;
       NVLink4 900 GB/s total = 450 uni; PCIe Gen5; 132 SMs.  DGX/HGX H100: 8 x 400 Gb/s NDR
       = 50 GB/s per GPU ([MLE-net]). */
    {"h100-sxm", "NVIDIA H100 SXM5 80GB",
     "NVIDIA H100 datasheet via [MLE] and [TT]; docs/physics.md §5.5 and §4.3",
     PEAK(67, 494.5, 989, 1979, 0), 80 * GIB, 3.35 * TB, 450 * GB, 8, 50 * GB, PCIE5, 132, 0.803, 0.709, true, 0},
    /* H800 SXM5: the export variant of the H100 SXM5 with NVLink cut to 400 GB/s total (200
       uni); compute, memory and SM count as H100 SXM5 (same GH100 die, so the H100 MAMF
       figures).  NVLink figure from the NVIDIA H800 datasheet, unverified here; DeepSeek-V3
       (arXiv:2412.19437 §3.2.2) measures about 160 GB/s of NVLink and 50 GB/s of InfiniBand
       per GPU on its H800 cluster (400 Gb/s NIC, the catalog's H100 default). */
    {"h800", "NVIDIA H800 SXM5 80GB",
     "NVIDIA H800 datasheet (NVLink 400 GB/s; unverified); H100 SXM5 figures otherwise; arXiv:2412.19437",
     PEAK(67, 494.5, 989, 1979, 0), 80 * GIB, 3.35 * TB, 200 * GB, 8, 50 * GB, PCIE5, 132, 0.803, 0.709, true, 0},
    /* H100 PCIe datasheet: 51 TF FP32, 378 TF TF32, 756 TF BF16, 1513 TF FP8; 80 GB HBM2e
       2.0 TB/s; 114 SMs.  Its NVLink bridge (600 GB/s bidirectional, unverified) joins only
       pairs, so the node-wide link is PCIe Gen5.  NIC: [heuristic] 200 Gb/s per GPU. */
    {"h100-pcie", "NVIDIA H100 PCIe 80GB",
     "NVIDIA H100 datasheet via [MLE] and [TT]; docs/physics.md §5.5",
     PEAK(51, 378, 756, 1513, 0), 80 * GIB, 2.0 * TB, PCIE5, 8, 25 * GB, PCIE5, 114, 0, 0, true, 0},
    /* H100 HBM2e 94-96 GB variant (Meta Grand Teton, torchtitan's benchmark fleet): 96 GB
       HBM2e at 2.4 TB/s, 8 GPUs fully connected with NVLink, 400 Gb/s per GPU, 500 W default
       power limit.  torchtitan: "actual peak TFLOPs should be between SXM and NVL, and we don't
       know the exact value"; we keep the SXM peaks (what torchtitan's MFU uses) - unverified
       for this part, as is the SM count (SXM5 132 assumed). */
    {"h100-96gb", "NVIDIA H100 96GB HBM2e (Grand Teton, 500 W)",
     "torchtitan docs (Grand Teton: 96GB HBM2e, 2.4 TB/s, 400 Gb/s/GPU, 500 W); arXiv:2410.06511",
     PEAK(67, 494.5, 989, 1979, 0), 96 * GIB, 2.4 * TB, 450 * GB, 8, 50 * GB, PCIE5, 132, 0.803, 0.709, true, 0},
    /* H200 SXM datasheet: H100 compute (989 TF BF16) with 141 GB HBM3e 4.8 TB/s; NVLink4 450 uni;
       8 x 400 Gb/s NDR per HGX node; 132 SMs. */
    {"h200", "NVIDIA H200 SXM 141GB",
     "NVIDIA H200 datasheet via [MLE] and [TT]; docs/physics.md §5.5",
     PEAK(67, 494.5, 989, 1979, 0), 141 * GIB, 4.8 * TB, 450 * GB, 8, 50 * GB, PCIE5, 132, 0.803, 0.734, true, 0},
    /* H20: the export-compliant Hopper (GH100) for China.  NVIDIA H20 datasheet figures: 44 TF
       FP32, 74 TF TF32, 148 TF BF16/FP16 and 296 TF FP8 dense; 96 GB HBM3 at 4.0 TB/s; NVLink4
       900 GB/s total = 450 uni (the H100 SXM fabric, 8 per HGX board); PCIe Gen5; 400 W.  SM
       count 78 (Geekbench 6 listing, not on the datasheet; unverified).  NIC: the H100 default.
       async_mma as sm_90.  The ms-swift H20 examples (data/runs/public_hf_stacks_more.csv)
       were measured on it.
       MAMF, measured [H20-MM]: BF16 torch.mm sweep over square sizes 1024-10240 (6 warm-up,
       30 timed calls): best 142.25 TFLOP/s at 10240^3 (zzc0721/torch-performance-test-data
       issue #77, torch 2.7 cu128; the repository's database.md row: 141.86), 0.961 of 148.
       The same script on H100 SXM gives 797.51 (issue #79) and 789.24 (database.md), 0.806 /
       0.798 of 989, beside [MLE]'s 0.803: the method reads as [MLE]'s sweep does.  FP8:
       block-scaled (128 x 128) e4m3 GEMMs on H20, per-call time, M 8192 x N 24576 x K 7168:
       torch 10207.52 us = 282.8 TFLOP/s, cutlass 278.3, DeepGEMM 279.0; N 7168 x K 16384:
       282.7 (vllm-project/vllm#49932, comment of 2026-08-03), 0.955 of 296 (per-tensor
       scaling does no more work).  The compute-cut part runs its tensor cores nearer their
       peak than the H100 (0.803 / 0.709) does: see tp_kernel_rel (kernel_rates.c). */
    {"h20", "NVIDIA H20 96GB",
     "NVIDIA H20 datasheet (148 TF BF16, 296 TF FP8, 96 GB HBM3 4.0 TB/s, NVLink 900 GB/s); SMs unverified; MAMF [H20-MM]",
     PEAK(44, 74, 148, 296, 0), 96 * GIB, 4.0 * TB, 450 * GB, 8, 50 * GB, PCIE5, 78, 0.961, 0.955, true, 0},
    /* ---- NVIDIA Blackwell.  B200 (HGX): 80 TF FP32, 1125 TF TF32, 2250 TF BF16, 4500 TF FP8,
       9000 TF FP4 dense ([MLE], [TT]); 180 GB HBM3e 7.7 TB/s per the current HGX B200 datasheet
       (launch spec: 192 GB / 8 TB/s); NVLink5 1.8 TB/s total = 900 uni; 148 SMs.  NIC: HGX/DGX
       B200 carry 8 x ConnectX-7 at 400 Gb/s = 50 GB/s per GPU (HGX B200 "networking 0.8 TB/s");
       host PCIe Gen5.
       MAMF: the sustained rate, not the sweep's.  The [MLE] sweep (0.776 BF16, 0.763 FP8 of
       peak; docs/physics.md §5.1) runs each shape briefly; under back-to-back GEMMs a
       Blackwell package settles at its power-limited clock.  Azure's cuBLASLt FP8 runs with
       10,000 warm-up iterations and random data (Azure/AI-benchmarking-guide, Azure_Results/
       ND_GB200_v6_results.md, commit 2a370be): best 2906.9 TF (16384^3) on GB200, 0.804 of
       [MLE]'s GB200 sweep (3615.6); the same method on H100 SXM gives 1382.2 TF (32768^3,
       ND_H100_v5_results.md), 0.985 of the sweep (0.709 x 1979), so the H100's figure stands
       and the Blackwell die's drops by 0.804.  B200, the same die at 1,000 W against GB200's
       1,200 W, takes the same factor [derived]: 0.776 x 0.804 = 0.624, 0.763 x 0.804 = 0.613.
       Two checks, neither fitted (tests/test_gpus.c): B200's own long run, cuBLASLt MXFP8 at
       M = N = 8192 after 10,000 warm-up and over 10,000 timed calls on a production HGX B200,
       2886 TF at K 8192 and 2810 at K 16384 (tmoreau89/triton, python/triton_cublas_bench/
       RESULTS.md, 2025-10-10: 0.641 / 0.624 of 4500; 0.613 is 4.4% / 1.8% below); and GB200's
       measured 2906.9 TF at B200's power limit by the cube law of the gb300 entry below,
       2906.9 x (1000 / 1200)^(1/3) = 2736 TF (0.608), 0.8% below.  A B200 capped below
       1,000 W (nvidia-smi -pl) settles lower by the same law [derived]: a bf16 run passes
       --peak-tflops 2250 x (P / 1000)^(1/3), 2045 at 750 W (docs/calibration.md, "B200 as it
       trains"; in an fp8 run the override moves the FP8 GEMMs only). */
    {"b200", "NVIDIA B200 (HGX) 180GB",
     "NVIDIA HGX B200 datasheet via [MLE]/[TT]; docs/physics.md §5.5 (alt. 192 GB, 8 TB/s)",
     PEAK(80, 1125, 2250, 4500, 9000), 180 * GIB, 7.7 * TB, 900 * GB, 8, 50 * GB, PCIE5, 148, 0.624, 0.613, true, 0},
    /* B300 / Blackwell Ultra (HGX B300): per GPU = HGX figures / 8: FP32 600/8 = 75 TF, TF32
       18 PF sparse -> 1125, BF16 36 PF sparse -> 2250, FP8 72 PF sparse -> 4500, FP4 108 PF
       dense -> 13500 (one transcription gives 13125); 288 GB HBM3e (2.3 TB per node), 8 TB/s;
       NVLink5 900 uni; 8 x ConnectX-8 at 800 Gb/s = 100 GB/s per GPU; PCIe Gen6.  148 SMs as
       device queries report ("B300 SXM6 AC, 148 SMs"); unverified against a datasheet.  MAMF
       ([MLE] table, commit 744d01e, 2026-08): BF16 1769.0 of 2250 (0.786), FP8 3353.3 of 4500
       (0.745): the sweep's short runs.  The catalog keeps the sustained, power-limited rate as
       for B200 (see there): no sustained B300 run is published, and Blackwell Ultra is the
       Blackwell die at 1.1-1.4 kW, so it takes GB200's measured 0.804 [derived]: 0.786 x
       0.804 = 0.632, 0.745 x 0.804 = 0.599 (GB300 has its own, from GB200's: see there).  A per-GPU transcription of the Blackwell Ultra datasheet lists the
       HGX B300 at 14 PF FP4, 4.5 PF FP8, 2.25 PF BF16, 270 GB, 7.7 TB/s and 1.1 kW (unverified
       against the datasheet itself; the node figures above are kept).  The exponential units
       ([BW-ULTRA]: 10.7 against Blackwell's 5 TeraExponentials/s) price the attention kernels:
       src/eval/kernel_rates.c tp_attn_sfu_rel. */
    {"b300", "NVIDIA B300 / Blackwell Ultra (HGX) 288GB",
     "NVIDIA HGX B300 specifications (per GPU = node / 8); glennklockwood.com/garden B300",
     PEAK(75, 1125, 2250, 4500, 13500), 288 * GIB, 8.0 * TB, 900 * GB, 8, 100 * GB, PCIE6, 148, 0.632, 0.599, true, 0},
    /* GB200 NVL72, per GPU: 80 TF FP32, 1250 TF TF32, 2500 TF BF16, 5000 TF FP8, 10000 TF FP4
       ([MLE]); 186 GB HBM3e 8.0 TB/s (MLPerf system descriptions list "GB200 186GB");
       NVLink5 900 uni across the 72-GPU NVLink domain (gpus_per_node = the domain; a compute
       tray holds 4 GPUs).  NIC: ConnectX-7 400 Gb/s per GPU (4 per tray) = 50 GB/s.  Host:
       NVLink-C2C 900 GB/s bidirectional between one Grace and its two GPUs; the per-GPU share
       (225 GB/s per direction) is unverified.  148 SMs assumed as B200 (unverified).  MAMF
       ([MLE] table, commit 744d01e, 2026-08): BF16 1822.0 of 2500, FP8 3615.6 of 5000; the
       catalog keeps the sustained rate (see B200): FP8 2906.9 of 5000 = 0.581 measured (Azure,
       10,000 warm-up iterations), BF16 1822.0 x 0.804 / 2500 = 0.586 [derived: the same
       power-limited clock drives both tensor-core modes]. */
    {"gb200", "NVIDIA GB200 NVL72 (per GPU) 186GB",
     "NVIDIA GB200 NVL72 specifications via [MLE]; docs/physics.md §5.5; NVIDIA MNNVL guide",
     PEAK(80, 1250, 2500, 5000, 10000), 186 * GIB, 8.0 * TB, 900 * GB, 72, 50 * GB, 225 * GB, 148, 0.586, 0.581, true, 0},
    /* GB300 NVL72, per GPU = rack / 72: FP32 6 PF -> 83.3 TF, TF32 180 PF sparse -> 1250, BF16
       360 PF sparse -> 2500, FP8 720 PF sparse -> 5000, FP4 1080 PF dense -> 15000; 288 GB
       HBM3e (about 20 TB per rack), 576 TB/s / 72 = 8 TB/s; NVLink5 900 uni over 72 GPUs;
       72 ConnectX-8 at 800 Gb/s = 100 GB/s per GPU.  NVIDIA's Blackwell Ultra architecture
       blog [BW-ULTRA] confirms the GPU's 15 PF dense NVFP4, 288 GB HBM3e at 8 TB/s and
       NVLink 5 at 1.8 TB/s bidirectional (160 SMs on the full die).  Host C2C share and SM
       count as GB200 / B300 (unverified).
       MAMF: GB200's sustained, power-limited rate (see there: FP8 2906.9 of 5000 measured, BF16
       0.586 derived) at GB300's power limit.  The two packages carry the same 16-bit and FP8
       peaks (2500 / 5000 TF) on the same NVL72 tray and differ in the GPU's power limit: 1400 W
       against 1200 W ([MLE]'s power table, "per-GPU maximum power", from NVIDIA Mission
       Control 2.3.0's power-management FAQ, whose GB300 rack-planning example budgets four
       1.4 kW GPUs per tray).  Under back-to-back GEMMs the clock settles where the dynamic power
       C V^2 f meets the limit; with the voltage following the clock in the DVFS range that is
       f^3, so the sustained clock rises as the cube root of the power [derived; the whole
       limit taken as dynamic, the smaller of the gains: static power would make it larger]:
       (1400 / 1200)^(1/3) = 1.0527, giving 0.586 x 1.0527 = 0.617 BF16 and 0.581 x 1.0527 =
       0.612 FP8.  B300's [MLE] sweep (the short runs of an HGX part at 1.0-1.1 kW) no longer
       stands in for it.  No sustained GB300 GEMM run is published; the same pairs of measured
       runs on GB300 and GB200 (docs/calibration.md, "GB300 against GB200") ran GB300 1.02 to
       1.19x (median 1.11, 16 pairs) faster relative to GB200 than the model gives, with B300's
       figures and with these: the clock explains little of it (the BF16 share even falls,
       0.632 -> 0.617). */
    {"gb300", "NVIDIA GB300 NVL72 (per GPU) 288GB",
     "NVIDIA GB300 NVL72 specifications (per GPU = rack / 72); glennklockwood.com/garden B300; "
     "power limit via [MLE]",
     PEAK(83.3, 1250, 2500, 5000, 15000), 288 * GIB, 8.0 * TB, 900 * GB, 72, 100 * GB, 225 * GB,
     148, 0.617, 0.612, true, 0},
    /* ---- AMD CDNA 2.  mi250x is ONE GCD, the device torch/ROCm sees and num_gpus counts: an
       MI250X card is 2 GCDs (383 TF BF16, 47.9 TF FP32, 128 GB, 3.2768 TB/s per card; [MLE],
       [TT] 191.5 per GCD).  Per GCD: 23.95 TF FP32, no TF32 or FP8, 191.5 TF BF16, 64 GB
       HBM2e, 1.6384 TB/s, 110 CUs.  Node: Frontier, 4 cards = 8 GCDs; GCD-GCD 200 GB/s inside
       a card, 50-100 GB/s (1-2 Infinity Fabric links of 50) across cards (OLCF Frontier guide):
       intra_bw is the slowest hop, one 50 GB/s link.  Host: 36 GB/s per direction per GCD
       (Infinity Fabric CPU-GPU, OLCF); NIC: 4 x Slingshot 200 Gb/s per node = 12.5 GB/s per
       GCD.  MAMF 147.0 of 191.5 TF on one GCD, ROCm 6.2 (ml-engineering's table, commit
       359ee1c, 2024-08-20, "add MI250X via Elio"; the 2025 re-run of the table has no MI250X
       row): 0.767. */
    {"mi250x", "AMD Instinct MI250X, one GCD (half a card)",
     "AMD MI250X spec via [MLE]/[TT]; ROCm mi250.md; OLCF Frontier user guide; MAMF [MLE] 2024-08",
     PEAK(23.95, 0, 191.5, 0, 0), 64 * GIB, 1.6384 * TB, 50 * GB, 8, 12.5 * GB, 36 * GB, 110, 0.767, 0, false, 0},
    /* ---- AMD CDNA 3.  MI300X: 163.4 TF FP32, 653.7 TF TF32, 1307.4 TF BF16, 2614.9 TF FP8;
       192 GB HBM3 5.3 TB/s; xGMI 7 peers x 64 GB/s = 448 uni; 304 CUs; PCIe Gen5 x16 host
       ([ROCm] mi300.md).  NIC: 400 Gb/s per GPU = 50 GB/s.  mamf_fp8: AMD's max-achievable
       FLOPs table ([AMD-MAF], Table 1: hipblaslt-bench at M 4096 x N 3648 x K 32896, FP8
       e4m3fnuz, trig_float data, cold caches, thermally settled; ROCm 6.3 with hipBLASLt
       db8e93b, the library of ROCm 6.4 / 7.0 that AMD's 2025 MLPerf containers ship):
       1273 TF at a median 1230 MHz, 1273 / 2614.9 = 0.4868.  (Its footnote pairs the same
       figures the other way, 1223.6 TF at 1273 MHz; the table's pairing is 83% of the clock's
       FP8 rate, 304 CUs x 4096 FLOP x 1.23 GHz, as MI325X's is 84%, the footnote's 77%.)
       Azure's hipBLASLt sweep of ROCm 6.2 measured 1159.54 ([AZ-MI300X], 0.4434): the older
       library.  [MLE] has no AMD FP8 row; mamf_bf16 stays [MLE]'s 668 (AMD's table: 708). */
    {"mi300x", "AMD Instinct MI300X 192GB",
     "AMD MI300X datasheet; ROCm mi300.md; [MLE]; docs/physics.md §5.5; FP8 MAF [AMD-MAF]",
     PEAK(163.4, 653.7, 1307.4, 2614.9, 0), 192 * GIB, 5.3 * TB, 448 * GB, 8, 50 * GB, PCIE5, 304, 0.511, 0.4868, false, 7},
    /* MI325X: MI300X compute with 256 GB HBM3e 6.0 TB/s; same xGMI, CUs and host link.
       mamf_fp8: [AMD-MAF] Table 1, the same hipblaslt-bench run as MI300X's at 1000 W: 1519 TF
       at a median 1464 MHz (footnote: 1527.7), 1519 / 2614.9 = 0.5809; it replaces the
       fallback 0.9 x mamf_bf16 = 0.541.  mamf_bf16 stays [MLE]'s (AMD's table: 843 TF). */
    {"mi325x", "AMD Instinct MI325X 256GB",
     "AMD MI325X datasheet via [MLE]/[TT]; docs/physics.md §5.5; FP8 MAF [AMD-MAF]",
     PEAK(163.4, 653.7, 1307.4, 2614.9, 0), 256 * GIB, 6.0 * TB, 448 * GB, 8, 50 * GB, PCIE5, 304, 0.601, 0.5809, false, 7},
    /* ---- AMD CDNA 4.  MI355X: 2500 TF BF16, 5000 TF FP8, 10000 TF FP4 (MXFP4) per AMD's spec
       ([MLE] lists 2300 / 4600 / 9200 as theoretical); 288 GB HBM3e 8.0 TB/s; xGMI 7 x 76.5 =
       535.5 uni; 256 CUs (8 XCDs x 32); 8 x Pollara 400 NICs per node = 50 GB/s per GPU (ROCm
       MI355X cluster guide).  FP32 157.3 TF unverified; no TF32 (CDNA 4 lists none;
       unverified).  mamf_fp8: the best tensor-scaled FP8 GEMM (e4m3, BF16 out) of aiter's tuned
       GEMM table for gfx950 with 256 CUs ([AITER-GEMM] a8w8_bpreshuffle_tuned_gemm.csv, 481
       shapes, each the fastest of the CK, CK-tile and FlyDSL kernels the tuner timed): 2996.65
       TF at M 4096 x N 16384 x K 26624, 2996.65 / 5000 = 0.5993; it replaces the fallback 0.9 x
       mamf_bf16 = 0.563.  The same table at Llama 2 70B's shapes with 8192 tokens: N 8192 x K
       28672 2972 TF, N 57344 x K 8192 2639, N 10240 x K 8192 2575, N 8192 x K 8192 2526 (the
       real-shape loss gemm_scale prices).  Its BF16 table agrees with [MLE]'s sweep (1596.6 TF
       at 8192^3 in [AITER-GEMM] model_configs/llama70B_bf16_tuned_gemm.csv against [MLE]'s
       1565, 2.0% above it), so the two tables measure on one scale. */
    {"mi355x", "AMD Instinct MI355X 288GB",
     "AMD MI355X spec; docs/physics.md §5.5 (alt. [MLE] 2300 TF); ROCm MI355X guides; FP8 GEMM [AITER-GEMM]",
     PEAK(157.3, 0, 2500, 5000, 10000), 288 * GIB, 8.0 * TB, 535.5 * GB, 8, 50 * GB, PCIE5, 256, 0.626, 0.5993, false, 7},
    /* ---- Intel Data Center GPU Max 1550 (Ponte Vecchio): 2 stacks (tiles) per card, each 64 GB
       HBM2e at 1.6384 TB/s; 512 BF16 and 256 TF32 FLOP/clk/EU.  max1550-tile is one stack as
       Aurora runs it, the unit Aurora counts as a GPU: 448 active EUs at 1.3 GHz ->
       448 x 512 x 1.3e9 = 298.2 TF BF16 ([TT]; the full 512 EU at 1.6 GHz would be 419), TF32
       149.1 and FP32 18.6 (32 FLOP/clk/EU) derived the same way (unverified); 56 Xe cores.
       Aurora node: 6 cards = 12 tiles, 8 Slingshot-11 NICs of 200 Gb/s -> 16.7 GB/s per tile
       (ALCF Aurora guide).
       Measured on an Aurora node ([ALCF-NODE], GPU clock 1.5 GHz, one rank per tile):
       - BF16 GEMM (oneMKL): 256 TF/s on one tile, 2487 TF/s on all 12 (207.3 per tile: the
         node's power shared); training keeps every tile busy, so mamf_bf16 = 207.3 / 298.2 =
         0.695 of this row's peak.  The same GEMM over the clock's peak, 448 x 512 x 1.5e9 =
         344.1 TF, is 0.602: the card row below takes that share of its own clock's peak.
       - Tile to tile across cards (Xe Link, MPI between ranks on different cards): 18.9 GB/s
         writing, 15.8 reading, 15 in the summary table; tiles of one card 158-185 GB/s (the
         inter-stack bridge).  A ring over the node's tiles crosses cards, so intra_bw is the
         cross-card write rate, 18.9 GB/s: the collective model's link efficiency (eff_intra)
         brings it near the table's 15 GB/s.  The faster hop between a card's own tiles is not
         modelled (a TP 2 group on one card is priced as if it crossed cards).
       - Triad 1 TB/s per tile against the 1.64 of the datasheet (hbm_bw stays the datasheet's,
         as in every row; the memory-bound kernels are a small share of a training step).
       host_bw: a half share of the card's PCIe Gen5 x16 (measured H2D 54 GB/s on one tile). */
    {"max1550-tile", "Intel Data Center GPU Max 1550, one tile/stack (Aurora: 448 EU, 1.3 GHz)",
     "torchtitan get_peak_flops (PVC); ALCF Aurora machine overview and node benchmarks "
     "([ALCF-NODE]); docs/physics.md §5.5",
     PEAK(18.6, 149.1, 298.2, 0, 0), 64 * GIB, 1.6384 * TB, 18.9 * GB, 12, 200 * GB / 12,
     31.5 * GB, 56, 207.25 / 298.2, 0, false, 0},
    /* max1550 is the whole card at the datasheet clock: 1024 EUs (128 Xe cores) at 1.6 GHz ->
       838.9 TF BF16, 419.4 TF TF32, 52.4 TF FP32; no FP8; 128 GB HBM2e 3.2768 TB/s; PCIe Gen5
       x16.  Aurora: 6 cards per node, 33.3 GB/s NIC per card.  Its GEMMs at the tiles'
       measured share of their clock's peak, 207.3 / 344.1 = 0.602 ([ALCF-NODE], above);
       card to card, both tiles' Xe Links: 2 x 18.9 = 37.8 GB/s [derived]. */
    {"max1550", "Intel Data Center GPU Max 1550, full card (2 tiles, 1.6 GHz)",
     "Intel Max 1550 product spec (1024 EU, 1.6 GHz) via docs/physics.md §5.5; ALCF Aurora "
     "node benchmarks ([ALCF-NODE])",
     PEAK(52.4, 419.4, 838.9, 0, 0), 128 * GIB, 3.2768 * TB, 2 * 18.9 * GB, 6, 200 * GB / 6,
     PCIE5, 128, 207.25 / (448.0 * 512 * 1.5e9 / TF), 0, false, 0},
    /* ---- Intel Gaudi.  Gaudi 2: 432 TF BF16, 865 TF FP8 (MME; [MLE]); FP32/TF32 MME rates are
       not published (0 here means "no figure", not "no mode"); 96 GB HBM2e 2.46 TB/s; 24 x
       100 GbE on-die RoCE: 21 ports (3 per peer) inside an 8-card HLS-2 box = 262.5 GB/s uni,
       3 scale-out ports = 37.5 GB/s, by analogy with Gaudi 3's documented 21/3 split
       (unverified for Gaudi 2); PCIe Gen4 x16 host; no SMs (24 TPCs + 2 MMEs). */
    {"gaudi2", "Intel Gaudi 2 96GB",
     "Intel Gaudi 2 spec via [MLE]; docs/physics.md §5.5 (port split unverified)",
     PEAK(0, 0, 432, 865, 0), 96 * GIB, 2.46 * TB, 262.5 * GB, 8, 37.5 * GB, PCIE4, 0, 0.969, 0, false, 7},
    /* Gaudi 3: 1835 TF BF16 and FP8 per the Intel white paper (1750 MHz MME clock; [MLE] gives
       1677 at the shipping 1600 MHz); FP32 229 and TF32 459 TF ([MLE]; clock basis
       unverified); 128 GB HBM2e 3.67 TB/s; 24 x 200 GbE: 21 scale-up ports = 525 GB/s uni,
       3 scale-out = 75 GB/s per direction (Intel Gaudi network configuration docs); PCIe Gen5
       x16 host; no SMs (64 TPCs + 8 MMEs). */
    {"gaudi3", "Intel Gaudi 3 128GB",
     "Intel Gaudi 3 white paper via [MLE] (alt. 1677 TF); docs.habana.ai network configuration",
     PEAK(229, 459, 1835, 1835, 0), 128 * GIB, 3.67 * TB, 525 * GB, 8, 75 * GB, PCIE5, 0, 0.677, 0, false, 7},
};

#define N_GPUS (sizeof GPUS / sizeof GPUS[0])

/* Other names users type; each maps to one key above.  Kept here, not in struct tp_gpu. */
static const struct {
    const char *alias;
    const char *key;
} ALIASES[] = {
    {"v100", "v100-32gb"},          {"v100-sxm2", "v100-32gb"},
    {"a100", "a100-80gb"},          {"a100-sxm", "a100-80gb"},
    {"a100-sxm4-80gb", "a100-80gb"}, {"a100-sxm4-40gb", "a100-40gb"},
    {"a800", "a800-80gb"},          {"rtx-a6000", "a6000"},
    {"rtx-4090", "rtx4090"},        {"4090", "rtx4090"},
    {"rtx-5090", "rtx5090"},        {"5090", "rtx5090"},
    {"h100", "h100-sxm"},           {"h100-sxm5", "h100-sxm"},
    {"h100-80gb", "h100-sxm"},      {"h100-95gb", "h100-96gb"},
    {"h800-sxm", "h800"},
    {"h20-96gb", "h20"},            {"h20-sxm", "h20"},
    {"h200-sxm", "h200"},           {"b200-sxm", "b200"},
    {"b300-sxm", "b300"},           {"gb200-nvl72", "gb200"},
    {"gb300-nvl72", "gb300"},       {"mi250x-gcd", "mi250x"},
    {"mi300", "mi300x"},            {"mi325", "mi325x"},
    {"mi355", "mi355x"},            {"max1550-stack", "max1550-tile"},
    {"pvc-tile", "max1550-tile"},   {"pvc", "max1550"},
    {"gaudi-2", "gaudi2"},          {"gaudi-3", "gaudi3"},
    /* the names on datasheets and in cloud instance listings (A100-SXM-80GB, H100 SXM5 80GB) */
    {"a100-sxm-80gb", "a100-80gb"}, {"a100-sxm-40gb", "a100-40gb"},
    {"a100-80gb-sxm", "a100-80gb"}, {"a100-40gb-sxm", "a100-40gb"},
    {"h100-sxm-80gb", "h100-sxm"},  {"h100-sxm5-80gb", "h100-sxm"},
    {"h100-pcie-80gb", "h100-pcie"}, {"h100-nvl", "h100-96gb"},
    {"h200-141gb", "h200"},         {"h200-sxm-141gb", "h200"},
    {"b200-180gb", "b200"},         {"mi300x-192gb", "mi300x"},
    {"mi325x-256gb", "mi325x"},     {"mi355x-288gb", "mi355x"},
};

#define N_ALIASES (sizeof ALIASES / sizeof ALIASES[0])

/* Entries built on another entry's die: the same tensor cores and kernels, in a package with
   its own power and clocks (which its peak figures carry).  The calibration fits one GEMM
   factor per die, so rows of either tell it and both take it (src/fit/fit.c). */
static const struct {
    const char *key;
    const char *die;
} DIES[] = {
    {"gb200", "b200"}, /* Grace Blackwell: B200 GPUs at 1,200 W */
    {"gb300", "b300"}, /* Grace Blackwell Ultra: B300 GPUs */
};

const char *tp_gpu_die(const char *key)
{
    for (size_t i = 0; i < sizeof DIES / sizeof DIES[0]; i++)
        if (tp_streq_ci(DIES[i].key, key))
            return DIES[i].die;
    return key;
}

size_t tp_gpu_count(void)
{
    return N_GPUS;
}

const struct tp_gpu *tp_gpu_get(size_t i)
{
    return i < N_GPUS ? &GPUS[i] : NULL;
}

static const struct tp_gpu *by_key(const char *key)
{
    for (size_t i = 0; i < N_GPUS; i++)
        if (tp_streq_ci(GPUS[i].key, key))
            return &GPUS[i];
    return NULL;
}

/* The measured GEMM fraction (MAMF) of `g`, or of the catalog entry of its die when the
   package has none (GB300 takes B300's); 0 when neither was measured. */
double tp_gpu_mamf(const struct tp_gpu *g, bool fp8)
{
    double own = fp8 ? g->mamf_fp8 : g->mamf_bf16;
    if (own > 0)
        return own;
    const char *die = tp_gpu_die(g->key);
    const struct tp_gpu *d = strcmp(die, g->key) != 0 ? by_key(die) : NULL;
    return d ? (fp8 ? d->mamf_fp8 : d->mamf_bf16) : 0;
}

/* How far name is from key, smaller = closer: the edit distance to the whole key or to its first
   strlen(name) characters (a prefix typed with a typo), +1 when the first letters differ
   (typos are rarely there); a key containing name, or name starting with a key, counts as 1.
   name is lower-case. */
static unsigned closeness(const char *name, const char *key)
{
    unsigned d = tp_edit_distance(name, key);
    char head[64];
    size_t n = strlen(name), k = strlen(key);
    if (n < k && n < sizeof head) {
        memcpy(head, key, n);
        head[n] = '\0';
        unsigned p = tp_edit_distance(name, head);
        d = p < d ? p : d;
    }
    if (name[0] != key[0])
        d++;
    if (n > 0 && (strstr(key, name) != NULL || strncmp(name, key, k) == 0))
        d = d < 1 ? d : 1;
    return d;
}

/* Up to 5 keys closest to name (closeness, then whole-key edit distance, then table order),
   comma-separated into out; only keys within min(3, max(1, strlen(name) / 2)). */
static void close_keys(const char *name, char *out, size_t len)
{
    out[0] = '\0';
    char lower[64];
    size_t n = strlen(name);
    if (n >= sizeof lower)
        n = sizeof lower - 1;
    for (size_t i = 0; i < n; i++)
        lower[i] = (char)tolower((unsigned char)name[i]);
    lower[n] = '\0';
    if (n == 0)
        return;
    unsigned limit = n / 2 < 1 ? 1 : n / 2 > 3 ? 3 : (unsigned)(n / 2);

    unsigned best[5] = {99, 99, 99, 99, 99}, tie[5] = {99, 99, 99, 99, 99};
    size_t idx[5] = {0};
    for (size_t i = 0; i < N_GPUS; i++) {
        unsigned d = closeness(lower, GPUS[i].key), t = tp_edit_distance(lower, GPUS[i].key);
        for (size_t j = 0; j < 5; j++) {
            if (d < best[j] || (d == best[j] && t < tie[j])) {
                memmove(best + j + 1, best + j, (4 - j) * sizeof best[0]);
                memmove(tie + j + 1, tie + j, (4 - j) * sizeof tie[0]);
                memmove(idx + j + 1, idx + j, (4 - j) * sizeof idx[0]);
                best[j] = d;
                tie[j] = t;
                idx[j] = i;
                break;
            }
        }
    }
    size_t used = 0;
    for (size_t j = 0; j < 5 && best[j] <= limit; j++) {
        int w = tp_snprintf(out + used, len - used, "%s%s", j ? ", " : "", GPUS[idx[j]].key);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
}

/* A name as people type it, reduced for comparison: lower case, no vendor or family word
   ("NVIDIA", "AMD", "Instinct", "Intel"), and no separators, so "H100 SXM", "h100_sxm" and
   "nvidia-h100-sxm" all read "h100sxm". */
static void squeeze(const char *name, char *out, size_t len)
{
    static const char *const VENDOR[] = {"nvidia", "amd", "instinct", "intel", "tesla"};
    char lower[96];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof lower; p++)
        lower[n++] = (char)tolower((unsigned char)*p);
    lower[n] = '\0';
    const char *p = lower;
    for (bool again = true; again;) {
        again = false;
        while (*p == ' ' || *p == '-' || *p == '_')
            p++;
        for (size_t i = 0; i < sizeof VENDOR / sizeof VENDOR[0]; i++) {
            size_t k = strlen(VENDOR[i]);
            if (strncmp(p, VENDOR[i], k) == 0 && (p[k] == ' ' || p[k] == '-' || p[k] == '_')) {
                p += k;
                again = true;
            }
        }
    }
    size_t o = 0;
    for (; *p && o + 1 < len; p++)
        if (*p != ' ' && *p != '-' && *p != '_')
            out[o++] = *p;
    out[o] = '\0';
}

static bool same_name(const char *typed_squeezed, const char *catalog)
{
    char c[96];
    squeeze(catalog, c, sizeof c);
    return strcmp(typed_squeezed, c) == 0;
}

enum tp_status tp_gpu_find(const char *name, const struct tp_gpu **out, struct tp_error *err)
{
    if (name == NULL || out == NULL)
        return tp_fail(err, TP_EINVAL, "tp_gpu_find: name and out must not be NULL");
    const struct tp_gpu *g = by_key(name);
    for (size_t i = 0; g == NULL && i < N_ALIASES; i++)
        if (tp_streq_ci(ALIASES[i].alias, name))
            g = by_key(ALIASES[i].key);
    /* then as typed: any case, blanks or underscores for hyphens, a vendor word in front */
    char sq[96];
    squeeze(name, sq, sizeof sq);
    for (size_t i = 0; g == NULL && sq[0] && i < N_GPUS; i++)
        if (same_name(sq, GPUS[i].key))
            g = &GPUS[i];
    for (size_t i = 0; g == NULL && sq[0] && i < N_ALIASES; i++)
        if (same_name(sq, ALIASES[i].alias))
            g = by_key(ALIASES[i].key);
    if (g != NULL) {
        *out = g;
        return TP_OK;
    }
    char close[256];
    close_keys(name, close, sizeof close);
    return tp_fail(err, TP_ENOTFOUND, "unknown GPU \"%s\"%s%s%s (`trainplan gpus` lists them)",
                   name, close[0] ? " (did you mean: " : "", close, close[0] ? ")" : "");
}

enum tp_status tp_cluster_init(struct tp_cluster *c, const char *gpu, uint32_t n_gpus,
                               struct tp_error *err)
{
    const struct tp_gpu *g;
    TRY(tp_gpu_find(gpu, &g, err));
    c->gpu = *g;
    c->n_gpus = n_gpus;
    c->gpus_per_node = g->gpus_per_node;
    return TP_OK;
}
