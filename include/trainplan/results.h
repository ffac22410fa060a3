/*
 * trainplan/results.h - what a run costs: memory per GPU and the changes that make it fit, the
 * calibration and time per step, the checkpoint plan, the wall-clock, and tp_evaluate, the one
 * evaluation every verb runs.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_RESULTS_H
#define TRAINPLAN_RESULTS_H

#include "cluster.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Memory per GPU                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* Which memory a figure is (docs/memory.md): what torch.cuda.max_memory_allocated reports (the
   tensors), max_memory_reserved (the caching allocator's segments: the tensors plus its
   rounding and fragmentation), or the device's used memory as nvidia-smi / rocm-smi show it
   (the reserved segments plus the CUDA/HIP context, the libraries' modules and workspaces and
   the NCCL/RCCL buffers).  TP_MEM_UNKNOWN: the source does not say (compared as device-used). */
enum tp_mem_kind { TP_MEM_UNKNOWN = 0, TP_MEM_ALLOCATED, TP_MEM_RESERVED, TP_MEM_DEVICE };
/* The phase of one optimizer step at which the allocated memory peaks (src/eval/mem_timeline.c). */
enum tp_mem_phase { TP_PHASE_BACKWARD = 0, TP_PHASE_OPTIMIZER };
/* The fit against the model's own measured error (src/eval/mem_margin.c): FITS with the
   margin to spare; TIGHT fits, but by less than the model's error for its class of run; NO_FIT
   does not fit. */
enum tp_mem_verdict { TP_MEM_FITS = 0, TP_MEM_TIGHT, TP_MEM_NO_FIT };

/* Bytes on one GPU of one pipeline stage at its peak over one optimizer step: the larger of the
   start of the last backward and the optimizer step (src/eval/mem_timeline.c). */
struct tp_memory {
    uint32_t stage;            /* 0-based pipeline stage */
    uint32_t first_layer, n_layers;
    double params;             /* parameters held on this GPU (after TP/PP/EP, before ZeRO) */
    double weights_bytes;      /* resident weights (incl. a frozen DPO reference / LoRA base) */
    double grads_bytes;
    double optimizer_bytes;    /* master weights + optimizer states */
    double gather_bytes;       /* ZeRO-3/FSDP transient unsharded units */
    double activations_bytes;  /* stored activations of the micro-batches in flight */
    double logits_bytes;       /* logits and loss buffers (last stage) */
    double comm_bytes;         /* communication buckets */
    double overhead_bytes;     /* context, NCCL, fragmentation */
    double total_bytes;
    double capacity_bytes;
    double headroom_bytes;     /* capacity - total (negative when it does not fit) */
    bool fits;
    double in_flight;          /* micro-batches whose activations are held */
    double host_bytes_per_node;/* CPU RAM the offload needs per node */
    /* the peak as each tool reports it (enum tp_mem_kind); device_bytes == total_bytes */
    double allocated_bytes, reserved_bytes, device_bytes;
    double allocator_bytes;    /* reserved - allocated: block rounding and fragmentation */
    double context_bytes;      /* CUDA/HIP context, library modules and workspaces */
    double nccl_bytes;         /* NCCL/RCCL channel buffers of the live communicators */
    /* the step's timeline: allocated at the start of the last backward and at the optimizer
       step (its temporaries), and which one is the peak */
    double backward_bytes, optimizer_step_bytes;
    double step_temp_bytes;    /* the optimizer step's temporaries */
    enum tp_mem_phase peak_phase;
    /* the fit against the model's measured error for the run's class (tp_memory_margin) */
    double margin;             /* fraction of the prediction the measured peaks exceeded it by */
    enum tp_mem_verdict verdict;
    const char *margin_class;  /* "torchtitan", "megatron", "hf" (static) */
};
/* The memory model's measured error for the class of `j` (a fraction: the 80th percentile of
   measured/predicted - 1 over the runs that report memory, compiled in from bench_memory), and
   the class's name. */
TP_API double tp_memory_margin(const struct tp_job *j, const char **cls);
/* The verdict of a total against a capacity with a margin (enum tp_mem_verdict). */
TP_API enum tp_mem_verdict tp_memory_verdict(double total_bytes, double capacity_bytes,
                                             double margin);
/* "fits", "tight" or "does not fit". */
TP_API const char *tp_mem_verdict_name(enum tp_mem_verdict v);
/* "allocated", "reserved", "device" or "unknown"; tp_mem_kind_parse the reverse (false when the
   name is none of them; "" is unknown). */
TP_API const char *tp_mem_kind_name(enum tp_mem_kind k);
TP_API bool tp_mem_kind_parse(const char *name, enum tp_mem_kind *out);
/* The peak of `m` as a tool of kind `k` reports it (unknown: device-used). */
TP_API double tp_memory_as(const struct tp_memory *m, enum tp_mem_kind k);

/* Memory of pipeline stage `stage` (0..pp-1) for a checked layout. Pure, allocation-free.
   TP_EINVAL (NaN totals, fits false) when tp_run_check() rejects the inputs or stage >= pp. */
TP_API enum tp_status tp_memory_stage(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                     const struct tp_layout *l, uint32_t stage, struct tp_memory *out);
/* One setting of a change, as data: the field a request names (an option's keyword, tp_args_set, which the
   CLI renders as the flag "--recompute full" and python as the keyword recompute="full"), its
   value and the memory it saves.  A parallel size also gives the data-parallel size left. */
struct tp_setting {
    char field[24];           /* "mbs", "gas", "recompute", "zero", "optimizer", "fused_loss",
                                 "tp", "pp", "cp", "ep", "offload" */
    char value[24];           /* as tp_args_set takes it: "full", "3", "true" */
    uint32_t dp;              /* tp, pp, cp, ep: the data-parallel size with it; else 0 */
    const char *reason;       /* what it saves, e.g. "activations recomputed in the backward" */
};
#define TP_FIX_MAX_SETTINGS 4
/* A change that makes a run fit: its settings, in order, and the run with them. */
struct tp_fix {
    struct tp_setting set[TP_FIX_MAX_SETTINGS];
    size_t n_set;
    struct tp_job job;
    struct tp_layout layout;
    double total_bytes;       /* worst-stage total with the change */
};

/* Lists up to `cap` single changes (or pairs, when no single one works) after which the worst
   stage fits; cheapest in speed first.  Returns the number written. */
TP_API size_t tp_memory_suggest(const struct tp_model *m, const struct tp_cluster *c,
                         const struct tp_job *j, const struct tp_layout *l, struct tp_fix *out,
                         size_t cap);

/* A change that makes a fitting run faster (src/search/advise.c): its settings and the run with
   them (fix.total_bytes its worst stage), and the model's own figures for it. */
struct tp_speedup {
    struct tp_fix fix;
    double tokens_per_s_per_gpu; /* with the change */
    double gain;                 /* that over the run's own tokens/s per GPU (> 1) */
};
/* Up to `cap` changes the job's stack can run after which the run still fits and is faster
   (a larger micro-batch with the global batch kept, less recompute, offload off, a lower ZeRO
   stage or one with more expert parallelism, ZeRO-3 leaf modules, the EP all-to-all
   overlapped), each evaluated with tp_time_step under `cal`; fastest first, one per kind.
   Pure and allocation-free.  Returns the number written. */
TP_API size_t tp_time_suggest(const struct tp_model *m, const struct tp_cluster *c,
                              const struct tp_job *j, const struct tp_layout *l,
                              const struct tp_calib *cal, struct tp_speedup *out, size_t cap);

/* Inputs the user gave (bits of tp_defaults_that_matter's `given`); the others were defaults. */
enum {
    TP_GIVEN_MBS = 1u << 0,
    TP_GIVEN_GBS = 1u << 1,       /* --gbs or --gas */
    TP_GIVEN_GPUS_PER_NODE = 1u << 2,
    TP_GIVEN_FRAMEWORK = 1u << 3,
    TP_GIVEN_RECOMPUTE = 1u << 4,
    TP_GIVEN_ZERO = 1u << 5,
    TP_GIVEN_SEQ = 1u << 6,       /* else the model's context (or 4096) */
};
/* A default that moves the answer: the input, the value taken and the neighbouring value tried
   (as tp_request_set takes them), and the run with the neighbour. */
struct tp_default_effect {
    char field[24];          /* "mbs", "gas", "gpus_per_node", "framework", "recompute", "zero",
                                "seq" */
    char taken[24], tried[24];
    double ratio;            /* tokens/s per GPU with `tried` over with `taken` */
    double total_bytes;      /* the worst stage with `tried` */
    bool fits;               /* ... and whether it fits */
    bool moves_time;         /* ratio outside the estimate's relative 80% band
                                (tp_range_relative: the range less the between-source part) */
    bool moves_memory;       /* the fit verdict flips, or the worst stage moves by > 10% */
};
/* For each input not in `given` (TP_GIVEN_* bits), re-evaluates the run with its neighbouring
   values (mbs x1/2..x16, gas x1/2..x8, half the GPUs per node, every other stack that runs the
   layout, the other recompute modes and ZeRO stages, the sequence x1/2 and x2) and keeps, per input, the neighbour that
   moves tokens/s per GPU most among those that fit (else the nearest); writes those that move
   the answer (moves_time or moves_memory), largest move first.  Pure and allocation-free. */
TP_API size_t tp_defaults_that_matter(const struct tp_model *m, const struct tp_cluster *c,
                                      const struct tp_job *j, const struct tp_layout *l,
                                      const struct tp_calib *cal, unsigned given,
                                      struct tp_default_effect *out, size_t cap);

/* When the run does not fit (`mem` its worst stage) but would with a fused loss or another
   recompute mode (no layout size changes): that change (fused_loss true, recompute full, ...),
   the first in speed, and true; else false with out->n_set 0.  The memory and estimate
   documents' fits_with. */
TP_API bool tp_fit_hint(const struct tp_model *m, const struct tp_cluster *c,
                        const struct tp_job *j, const struct tp_layout *l,
                        const struct tp_memory *mem, struct tp_fix *out);

/* The stage with the largest total (the one that decides the fit); TP_EINVAL as
   tp_memory_stage(). */
TP_API enum tp_status tp_memory_worst(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, const struct tp_layout *l,
                               struct tp_memory *out);

/* ----------------------------------------------------------------------------------------- */
/* Time per step                                                                              */
/* ----------------------------------------------------------------------------------------- */

/* Most per-GPU entries a calibration may carry. */
#define TP_CALIB_MAX_GPUS 32

/* The inputs a calibration was fitted on. */
struct tp_calib_domain {
    uint32_t rows, sources;       /* 0 rows: unknown (hand-written file) */
    uint32_t stacks;              /* bit f: rows of framework f (enum tp_framework) measured;
                                     0: not recorded (a file before issue 36) */
    uint32_t n_gpus;
    struct {
        char key[24];
        uint32_t rows;
        uint32_t max_gpus;        /* largest cluster measured on this GPU */
        /* the highest model-FLOPs utilisation measured on this GPU, in this library's FLOP
           count against the dense 16-bit peak: [0] runs with 16- or 32-bit GEMMs, [1] with 8-
           or 4-bit GEMMs (0: none measured); and the row that measured it */
        double max_mfu[2];
        char max_mfu_row[2][56];
    } gpu[TP_CALIB_MAX_GPUS];
    double min_params, max_params; /* total parameters of the models measured */
    uint64_t max_seq;
};

/* Why an input lies outside a calibration's domain (flags of tp_calib_domain_check). */
enum {
    TP_DOMAIN_GPU = 1u << 0,     /* GPU type never measured */
    TP_DOMAIN_SCALE = 1u << 1,   /* more than 4x the GPUs of the largest run on that GPU */
    TP_DOMAIN_SIZE = 1u << 2,    /* model under 1/4 or over 4x the parameters measured */
    TP_DOMAIN_SEQ = 1u << 3,     /* sequence over 4x the longest measured */
    TP_DOMAIN_MAMF = 1u << 4,    /* no measured GEMM efficiency for the GPU (nor its die): the
                                    calibration's mamf_default stands in */
    TP_DOMAIN_MFU = 1u << 5,     /* the prediction itself: its MFU lies above the highest any run
                                    of its precision class measured on that GPU
                                    (tp_calib_mfu_check) */
    TP_DOMAIN_STACK = 1u << 6    /* software stack (--framework) never measured: its kernels,
                                    launches and overlap are the model's alone */
};

/* Per-GPU efficiencies a calibration may set (0 = keep the catalog's / the global default). */
struct tp_calib_gpu {
    char key[24];         /* catalog key ("h100-sxm") */
    double mamf_bf16, mamf_fp8, attn_eff, mem_eff;
};

/*
 * Every efficiency parameter of the time model, in one place (docs/design.md "Time model").
 * Physics (FLOPs, bytes, collective volumes) is computed; these numbers say how much of the
 * hardware's peak the software achieves.  Defaults come from tp_calib_init(); a calibration file
 * (tp_calib_from_json) overrides any subset.
 */
struct tp_calib {
    /* GEMMs: time = FLOPs / (peak * mamf * gemm_scale * eta_tile * eta_wave), or the bytes over
       HBM bandwidth when that is longer (small dimensions) */
    double mamf_default;   /* MAMF fraction for GPUs the catalog has none for */
    double fp8_mamf_ratio; /* fp8 MAMF / bf16 MAMF when the fp8 one is unknown */
    double fp8_rowwise_ratio; /* PyTorch's CUTLASS row-wise FP8 GEMM over cuBLAS's tensor-wise
                                 one (torchao's row-wise recipe, tp_fp8_recipe) */
    double gemm_scale;     /* real training GEMMs relative to the MAMF sweep's best shapes */
    double grouped_gemm_scale; /* MoE grouped expert GEMMs (Megatron-Core/TE TEGroupedMLP,
                                  torchtitan's grouped_mm) relative to dense GEMMs of the same
                                  shape: their own kernels, their own rate */
    uint32_t tile_m, tile_n; /* output tile of one thread block (wave and tile quantization) */
    /* attention core (FlashAttention): forward at attn_eff of the 16-bit peak */
    double attn_eff;
    double attn_bwd_ratio; /* backward / forward time of the attention kernel */
    double attn_block_keys; /* uncounted keys of work per 128-query block (tile, prologue) */
    double fa2_ratio;      /* FlashAttention-2 over the native kernel on GPUs with async MMA
                              (Hopper, Blackwell: struct tp_gpu async_mma) */
    double cudnn_gen_ratio; /* cuDNN's fused attention of 2025-26 (TP_ATTN_CUDNN919) over the
                               2024 cuDNN 9.0-9.1 kernel the anchored attn_eff carries, Hopper */
    /* memory-bound kernels (norms, activations, rotary, residuals, casts, loss) */
    double mem_eff;        /* achieved fraction of HBM bandwidth */
    double fused_elementwise; /* share of element-wise traffic that fused kernels remove
                                 (Megatron/TE, torch.compile) */
    /* host-side overheads */
    double layer_overhead_s;  /* per block per micro-batch, forward + backward (launches) */
    double eager_op_s;        /* host time of one eager PyTorch op (dispatch + launch) */
    double host_sync_s;       /* one device-to-host sync with the GPU drained (torch.where) */
    double moe_eager_ops;     /* ops per expert forward in Hugging Face's expert loop */
    double z3_fetch_s;        /* one on-demand ZeRO-3 parameter fetch (hook, gather, wait) */
    double step_overhead_s;   /* per optimizer step (logging, scheduler, data, syncs) */
    /* network: achieved bus bandwidth over line rate, and NCCL latency terms */
    double eff_intra, eff_inter, eff_pcie;
    double lat_base_s, lat_intra_s, lat_inter_s;
    /* overlap: fraction of the covering compute that can hide a communication */
    double dp_overlap;     /* DP gradient reduction / parameter gather behind backward/forward */
    double fsdp_overlap;   /* ZeRO-3/FSDP per-micro-batch gathers behind compute (prefetch) */
    double tp_overlap;     /* TP collectives hidden behind GEMMs, in jobs that overlap them
                              (struct tp_job tp_comm_overlap); 0 in the others */
    double ep_overlap;     /* MoE all-to-all hidden behind the other micro-batch's compute, in
                              jobs that overlap them (struct tp_job moe_a2a_overlap); 0 in the
                              others */
    double pp_overlap;     /* pipeline send/recv hidden behind compute */
    double overlap_slowdown; /* compute slowdown per second of DP/ZeRO collective hidden
                                behind it (SM and HBM contention) */
    /* optimizer */
    double opt_eff;        /* HBM fraction the optimizer kernels reach */
    double host_adam_bw;   /* CPU Adam: host memory bytes/s per GPU (offloaded optimizer) */
    /* per-GPU overrides */
    struct tp_calib_gpu gpus[TP_CALIB_MAX_GPUS];
    size_t n_gpus;
    /* what the calibration was fitted on ("fit" in the file): inputs outside it are flagged */
    struct tp_calib_domain domain;
};

/* The physics priors: sourced constants and first-principles efficiencies before any fit
   (docs/design.md "Calibration").  `trainplan calibrate --base prior` starts from these. */
TP_API void tp_calib_prior(struct tp_calib *c);
/* The built-in defaults: the priors plus data/calibration.json (fitted by `trainplan calibrate`
   over data/runs and compiled in). */
TP_API void tp_calib_init(struct tp_calib *c);
/* Reads a calibration JSON document (keys as the struct's field names, "gpus": {"key": {...}});
   keys not given keep their current value; unknown keys are an error. */
TP_API enum tp_status tp_calib_from_json(const char *json, size_t len, struct tp_calib *c,
                                  struct tp_error *err);
TP_API enum tp_status tp_calib_from_file(const char *path, struct tp_calib *c, struct tp_error *err);
/* Writes the calibration as JSON into buf (NUL-terminated); returns the length needed. */
TP_API size_t tp_calib_to_json(const struct tp_calib *c, char *buf, size_t len);
/* The per-GPU entry for `key`, or NULL. */
TP_API const struct tp_calib_gpu *tp_calib_gpu_find(const struct tp_calib *c, const char *key);
/* Flags (TP_DOMAIN_*) for the ways a run lies outside the calibration's domain, and a
   one-line explanation in `why` (empty when inside, or when the domain is unknown).  `mfu` is
   the prediction's MFU (tp_calib_mfu_check), NAN before there is one. */
TP_API unsigned tp_calib_domain_check(const struct tp_calib *c, const struct tp_model *m,
                               const struct tp_cluster *cl, const struct tp_job *j, double mfu,
                               char *why, size_t len);
/* TP_DOMAIN_MFU when a predicted `mfu` of the job on cl's GPU lies above the highest MFU any run
   of the job's precision class measured there (struct tp_calib_domain's max_mfu), else 0; the
   reason is appended to the NUL-terminated `why` ("; " after earlier text).  A prediction
   beyond every measurement is an extrapolation: tp_time_range widens its range as for an
   input outside the domain. */
TP_API unsigned tp_calib_mfu_check(const struct tp_calib *c, const struct tp_cluster *cl,
                                   const struct tp_job *j, double mfu, char *why, size_t len);

/* Step time of a checked layout, broken down.  Times are seconds per optimizer step on the
   critical path (the slowest pipeline stage); "exposed" communication is what compute does not
   hide. */
struct tp_time {
    double step_s;
    /* compute of all micro-batches on the slowest stage */
    double fwd_s, bwd_s, recompute_s;
    double gemm_s, attn_s, elementwise_s; /* the same compute split by kernel kind */
    double overhead_s;      /* launch overhead per layer and per step */
    /* exposed communication per step */
    double tp_comm_s, cp_comm_s, ep_comm_s, pp_comm_s, dp_comm_s;
    double dp_comm_total_s; /* DP/ZeRO traffic before overlap */
    double bubble_s;        /* pipeline fill and drain */
    double optimizer_s;     /* optimizer step and gradient clipping (GPU or CPU Adam) */
    double offload_s;       /* host transfers of an offloaded optimizer or parameters */
    uint32_t slowest_stage;
    /* throughput */
    double tokens_per_step, samples_per_step;  /* tokens counted as the job counts them
                                                  (tp_job.trainable_frac of the slots) */
    double tokens_per_s, tokens_per_s_per_gpu, samples_per_s;
    double slots_per_s_per_gpu; /* token slots processed (padding and masked tokens included):
                                   the FLOP rates and MFU use these */
    /* FLOPs per token (task-aware: frozen weights have no weight gradients; DPO adds the
       reference forward) and the rates they give */
    double model_flops_per_token, hw_flops_per_token;
    double peak_flops;      /* the MFU basis: tp_job_peak_flops (fp32 runs: the TF32 peak) */
    double model_tflops_per_gpu, mfu, hw_tflops_per_gpu, hfu;
    double megatron_tflops_per_gpu;  /* what Megatron-LM logs: causal model FLOPs */
    double deepspeed_tflops_per_gpu; /* Megatron-DeepSpeed's throughput formula (GPT shape,
                                        x4/3 with full recompute) */
};

/* Time per step of a checked layout (tp_layout_check) with `cal`.  Pure and allocation-free.
   TP_EINVAL (and NaN figures) when tp_run_check() rejects the inputs. */
TP_API enum tp_status tp_time_step(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                  const struct tp_layout *l, const struct tp_calib *cal, struct tp_time *out);

/* The load the busiest expert-parallel rank carries, over the mean, that the step and the
   memory of a checked MoE layout price (src/eval/moe_skew.c, docs/moe.md "Routing skew"): an
   explicit j->moe_imbalance, else the learned router's skew; capped by a capacity factor, or
   the factor itself when padded; 1 without expert parallelism.  `routing` (may be NULL) gets
   the routing it assumed: j->moe_routing, or by the task when that is AUTO. */
TP_API double tp_moe_busiest_load(const struct tp_model *m, const struct tp_job *j,
                                  const struct tp_layout *l, enum tp_moe_routing *routing);

/* An 80% range on a throughput estimate: the 10th and 90th percentiles of a predictive
   distribution of measured / predicted tokens/s for the class (stack kind, GPU vendor, dense or
   MoE), with the spread between sources and a term per way the run lies away from the
   calibration data (src/eval/range.c, docs/calibration.md "Ranges").  tokens/s low =
   predicted * lo, high = predicted * hi; a step time or a wall-clock divides by them. */
struct tp_range {
    double lo, hi;
    double sd, q;          /* the distribution's sd in log space, and the quantile the range
                              spans: log(hi / lo) = 2 q sd (q 1.2816 for a normal, Student's t
                              where the spread was estimated from few runs) */
    double within, tau, distance; /* sd's parts (sd^2 = within^2 + tau^2 + distance^2): the
                              class's spread of runs inside one source, the spread between
                              sources, and the terms for lying away from the calibration data */
    char cls[32];          /* "fused/nvidia/dense", "hf/other/moe", ... */
    uint32_t rows;         /* held-out runs behind it (0: borrowed from a nearer class) */
    const char *basis;     /* where the range comes from, in words */
    bool widened;          /* outside the calibrated domain (TP_DOMAIN_* given) */
};
TP_API void tp_time_range(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                   const struct tp_layout *l, unsigned domain, struct tp_range *out);
/* The 80% band of a RELATIVE comparison (two layouts or settings on one cluster and stack):
   exp(q sqrt(within^2 + distance^2)), the range without its between-source part, which both
   share.  Two predictions whose ratio lies inside [1 / band, band] are not told apart. */
TP_API double tp_range_relative(const struct tp_range *rg);

/* Collective times (seconds) for `bytes` over n ranks, `per_node` of them in each node, with the
   cluster's links and the calibration's efficiencies (docs/physics.md §4.1-4.3). */
TP_API double tp_time_allreduce(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                         uint32_t n, uint32_t per_node);
TP_API double tp_time_allgather(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                         uint32_t n, uint32_t per_node);
TP_API double tp_time_alltoall(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                        uint32_t n, uint32_t per_node);
/* Pipeline bubble as a fraction of the ideal time: (p-1)/(v m) ([NAR21] §2.2). */
TP_API double tp_bubble_fraction(uint32_t pp, uint32_t vpp, uint32_t micro_batches);
/* The checkpoints a run saves (docs/checkpoint.md), in bytes. */
struct tp_ckpt_plan {
    double params;                 /* parameters saved: params_checkpoint (LoRA: adapters) */
    double weights_bytes;          /* the model in the training precision (16-bit, fp32) */
    double master_bytes;           /* the fp32 master copy (0 when training in fp32) */
    double moments_bytes;          /* optimizer states (AdamW: fp32 m and v) */
    double save_bytes;             /* one save: weights + master + moments */
    uint32_t model_files;          /* files holding the weights (one per model-parallel rank;
                                      every rank under ZeRO-3) */
    uint32_t optim_files;          /* files holding master + moments */
    double model_file_bytes, optim_file_bytes; /* each */
    double consolidated_fp32_bytes, consolidated_bf16_bytes; /* one model file after merging */
    double zero_to_fp32_ram_bytes; /* host RAM zero_to_fp32 peaks at */
    double zero_to_fp32_disk_bytes;/* free disk it writes */
    double save_s;                 /* one save at storage_bps (0 when not given) */
};
/* Plans the checkpoint of a checked run; `storage_bps` (bytes/s, 0 = not given) is the
   aggregate write bandwidth. */
TP_API void tp_ckpt_plan(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                  const struct tp_layout *l, double storage_bps, struct tp_ckpt_plan *out);

/* ----------------------------------------------------------------------------------------- */
/* Wall-clock as users measure it (src/eval/wallclock.c)                                       */
/* ----------------------------------------------------------------------------------------- */

struct tp_wallclock_opts {
    double startup_s;     /* launch, NCCL and ZeRO initialisation (given; 0 = left out) */
    double storage_bps;   /* aggregate storage bandwidth: reading the weights, writing saves */
    uint64_t ckpt_every;  /* optimizer steps between saves (0 = no saves) */
    uint64_t eval_every;  /* optimizer steps between evaluations (0 = none) */
    double eval_tokens;   /* tokens of one evaluation pass */
};
struct tp_wallclock {
    double steps, train_s;  /* optimizer steps for the tokens and their time */
    double startup_s, load_s, ckpt_s, eval_s;
    double saves, evals;
    double total_s;
    double goodput;         /* train_s / total_s */
};
TP_API void tp_wallclock_opts_init(struct tp_wallclock_opts *o);
/* The wall-clock of training `tokens` with the step time `t`; `ck` (may be NULL) gives the
   bytes of the weights and of one save (tp_ckpt_plan with o->storage_bps). */
TP_API void tp_wallclock(const struct tp_time *t, const struct tp_ckpt_plan *ck, double tokens,
                  const struct tp_wallclock_opts *o, struct tp_wallclock *out);

/* ----------------------------------------------------------------------------------------- */
/* One evaluation of a run (src/eval/evaluate.c): what every verb that prices a run calls      */
/* ----------------------------------------------------------------------------------------- */

struct tp_eval_opts {
    double tokens;          /* token budget (0 = none): steps, wall-clock, GPU-hours */
    double gpu_hour_price;  /* price of one GPU-hour (< 0 = not priced) */
    double storage_bps;     /* aggregate checkpoint write bandwidth, bytes/s (0 = not given) */
    struct tp_wallclock_opts wall; /* the wall-clock beyond the steps (a token budget's) */
};
struct tp_evaluation {
    struct tp_memory memory;   /* the worst pipeline stage */
    struct tp_time time;
    struct tp_range range;     /* the 80% range of the throughput */
    unsigned domain;           /* TP_DOMAIN_* flags: outside the calibration's domain */
    char outside[320];         /* why, in one line (empty when inside) */
    struct tp_ckpt_plan ckpt;
    struct tp_wallclock wall;  /* all zero without a token budget */
    double gpu_hours;          /* of the whole wall-clock; 0 without a token budget */
    double cost;               /* gpu_hours x price; 0 when not priced */
};
TP_API void tp_eval_opts_init(struct tp_eval_opts *o);
/* The whole evaluation of a checked run: memory of the worst stage, time per step, its range,
   the domain check, the checkpoint plan, and with a token budget the wall-clock, GPU-hours and
   cost.  Pure and allocation-free (tp_calib_init gives the built-in calibration).  TP_EINVAL (NaN
   figures, the reason in err) when tp_run_check() rejects the run. */
TP_API enum tp_status tp_evaluate(const struct tp_model *m, const struct tp_cluster *c,
                                  const struct tp_job *j, const struct tp_layout *l,
                                  const struct tp_calib *cal, const struct tp_eval_opts *o,
                                  struct tp_evaluation *out, struct tp_error *err);

/* Model FLOPs utilisation: flops_per_token x tokens/s per GPU over `peak_flops` (the MFU basis,
   tp_job_peak_flops); NaN when the peak is not positive. */
TP_API double tp_mfu(double flops_per_token, double tokens_per_s_per_gpu, double peak_flops);
/* Optimizer steps a token budget takes at `tokens_per_step` (whole steps). */
TP_API double tp_budget_steps(double tokens, double tokens_per_step);
/* GPU-hours of `seconds` on `gpus` GPUs. */
TP_API double tp_gpu_hours(double seconds, uint32_t gpus);
/* The gradient accumulation a global batch of `gbs` samples gives a checked layout
   (gbs = mbs x dp x gas); when `gas_given`, l->gas must agree.  Sets l->gas; TP_EINVAL with
   err->field "gbs" when gbs is not a multiple of mbs x dp or disagrees with the given gas. */
TP_API enum tp_status tp_layout_set_gbs(struct tp_layout *l, uint64_t gbs, bool gas_given,
                                        struct tp_error *err);
/* Marks the Pareto front of n points, smaller being better in both a and b: front[i] is true
   when valid[i] and no other valid point is at least as good in both and better in one. */
TP_API void tp_pareto_front(const double *a, const double *b, const bool *valid, size_t n,
                            bool *front);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_RESULTS_H */
