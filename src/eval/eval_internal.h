/*
 * eval_internal.h - what the evaluation floor (memory, time, communication, ranges, wall
 * clock, checkpoint plan, measured-throughput conventions, calibration lookups, validation)
 * shares with the floors above it.  Not installed, not public.
 */
#ifndef TP_EVAL_INTERNAL_H
#define TP_EVAL_INTERNAL_H

#include "plan_internal.h"

/* comm.c: the network primitives time.c composes. */
/* Ranks of a group of n with stride `stride` that share a node of gpn. */
uint32_t tp_comm_per_node(uint32_t n, uint64_t stride, uint32_t gpn);
/* The node's scale-up link is no faster than its host link (PCIe only). */
bool tp_comm_pcie_only(const struct tp_cluster *c);
/* Achieved scale-up bandwidth per rank for a group with g ranks in a node (mesh-aware). */
double tp_comm_intra_bw(const struct tp_cluster *c, const struct tp_calib *cal, uint32_t g);
/* Achieved per-rank bus bandwidth of a group over `nodes` nodes with g ranks in each. */
double tp_comm_bus_bw(const struct tp_cluster *c, const struct tp_calib *cal, uint32_t g,
                      uint32_t nodes);
/* NCCL ring latency: a base plus a per-step cost, inter-node steps costing more. */
double tp_comm_latency(const struct tp_calib *cal, double steps, double inter_steps);
/* Nodes a group of n spans with g ranks in each. */
uint32_t tp_comm_nodes_of(uint32_t n, uint32_t g);

/* The GEMM fractions a calibration gives GPU `g`: its own entry's, else the measured MAMF (the
   GPU's or its die's), else mamf_default (fp8: mamf * fp8_mamf_ratio). */
void tp_calib_gemm_rates(const struct tp_calib *c, const struct tp_gpu *g, double *mamf,
                         double *mamf8);
/* The precision class a calibration's highest measured MFU is kept by (struct
   tp_calib_domain's max_mfu): 0 for 16- or 32-bit GEMMs, 1 for 8- or 4-bit. */
int tp_mfu_class(enum tp_precision p);
/* The index of GPU `key`'s entry in a calibration domain; d->n_gpus when it has none. */
uint32_t tp_calib_domain_gpu(const struct tp_calib_domain *d, const char *key);

/* Parameters one GPU of a pipeline stage holds, split by how they shard (memory.c). */
struct tp_shard_params {
    double dense;     /* non-expert, after TP split (replicated tensors whole) */
    double expert;    /* routed experts, after EP * ETP split */
    double quantizable;  /* linear weights QLoRA stores in NF4 (subset of dense + expert) */
    double quant_expert; /* the routed experts' share of quantizable */
    double lora;      /* LoRA adapter parameters on the targeted weights */
    double lora_expert; /* the routed experts' share of lora (after EP * ETP split) */
    double largest_block; /* the largest block: a ZeRO-3/FSDP gather unit */
    double largest_block_q; /* its linear (GEMM) weights */
    double largest_outer; /* the embedding or the head: separate gather units */
};
/* Bytes per element of a GEMM weight stored by the job: the FP8 format's (tp_prec_saved_bytes)
   with fp8_param_gather, else `half` (memory.c). */
double tp_gemm_weight_bytes(const struct tp_job *j, double half);
/* DeepSpeed's BF16_Optimizer runs (memory.c): bf16 without ZeRO under a stack DeepSpeed's engine
   always drives (Megatron-DeepSpeed); memory.c counts its states, host_ds.c its step. */
bool tp_ds_bf16_optimizer(const struct tp_job *j, uint32_t zero);
/* Bytes per QLoRA linear weight as bitsandbytes stores it (memory.c): NF4 with its
   double-quantized absmax constants. */
double tp_nf4_weight_bytes(void);
/* The parameters of stage `stage`; `first`/`count` receive its block range (memory.c). */
void tp_stage_params(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                     uint32_t stage, struct tp_shard_params *s, uint32_t *first, uint32_t *count);
/* The memory beside the tensors (mem_runtime.c) and the step's timeline (mem_timeline.c). */
double tp_nccl_channel_peer_bytes(void);
double tp_mem_framework_buffers(const struct tp_model *m, const struct tp_job *j,
                                const struct tp_layout *l);
void tp_mem_runtime(const struct tp_job *j, const struct tp_layout *l, double tensors,
                    struct tp_memory *out);
double tp_mem_step_temporaries(const struct tp_job *j, const struct tp_layout *l, double shard);
double tp_mem_pipeline_buffers(const struct tp_model *m, const struct tp_job *j,
                               const struct tp_layout *l, uint32_t stage, double in_flight);
void tp_mem_timeline(const struct tp_job *j, const struct tp_layout *l, double shard,
                     struct tp_memory *out);
/* An attention block's backward, bytes per local token (mem_attn.c): whether the run's context
   parallelism is torch's ring, the ring's buffers, the fused kernel's workspace. */
bool tp_mem_torch_ring_cp(const struct tp_job *j, const struct tp_layout *l);
double tp_mem_ring_bytes(const struct tp_model *m, const struct tp_layout *l);
/* mem_attn.c: bytes per element of the saved Q, K, V (1 under FP8 attention unless the core
   is recomputed, else 2). */
double tp_mem_attn_qkv_bytes(const struct tp_job *j, uint32_t rc);
double tp_mem_attn_workspace(const struct tp_model *m, const struct tp_job *j,
                             const struct tp_layout *l);
/* Bytes per element a block keeps for a linear layer's input, frozen or adapted under LoRA /
   QLoRA (mem_lora.c), and for the attention output o_proj reads. */
double tp_mem_linear_input_bytes(const struct tp_job *j, uint32_t bits, double gin, bool ln_fused);
double tp_mem_attn_out_bytes(const struct tp_job *j, double gin);

/* A run's calibration-independent part of tp_time_step, worked out once (time.c): the checks,
   each stage's parameters and whether it repeats the stage before, the FLOPs per token, each
   block kind's first block and keys per query, and every GEMM's shape figures (FLOPs, tile and
   wave efficiency, bytes) as a tape to replay.  calibrate's fit prices each row thousands of
   times with moving efficiencies: tp_time_planned gives what tp_time_step gives, to the bit,
   without redoing that part.  A plan points at the run's structs (they must outlive it) and is
   only read by tp_time_planned: threads may share it. */
#define TP_TIME_KINDS TP_BLOCK_KINDS
#define TP_TIME_TAPE 512  /* GEMMs recorded per run; a run with more is priced without a tape */
struct tp_gemm_rec {
    double flops, eta, bytes; /* eta 0: an empty GEMM */
};
struct tp_stage_blocks {
    uint32_t n[TP_TIME_KINDS], full[TP_TIME_KINDS]; /* blocks of each kind; fully recomputed */
    uint32_t blocks, moe_blocks;
};
struct tp_time_stage {
    struct tp_shard_params sp;
    struct tp_stage_blocks blocks;
    bool same_as_prev; /* costs what the stage before costs */
};
struct tp_time_plan {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_layout *l;
    struct tp_time_stage *stages; /* l->pp entries, the caller's */
    bool ok, flops_ok, taped;
    double model_flops, hw_flops, megatron_flops; /* per token */
    uint32_t kind_layer[TP_TIME_KINDS]; /* first block of each kind (UINT32_MAX: none) */
    double kpq[TP_TIME_KINDS];          /* its keys per query */
    uint32_t kind_at[TP_TIME_KINDS], outer_at; /* where each kind's and the head's GEMMs start */
    double tile_m, tile_n;              /* the GEMM tiles the tape was recorded with */
    struct tp_gemm_rec rec[TP_TIME_TAPE];
};
/* TP_EINVAL when tp_run_check rejects the run (tp_time_planned then gives NaN figures); `cal`
   gives the GEMM tiles to record with (a calibration with other tiles is priced untaped). */
enum tp_status tp_time_plan_init(struct tp_time_plan *p, const struct tp_model *m,
                                 const struct tp_cluster *c, const struct tp_job *j,
                                 const struct tp_layout *l, const struct tp_calib *cal,
                                 struct tp_time_stage *stages);
enum tp_status tp_time_planned(const struct tp_time_plan *p, const struct tp_calib *cal,
                               struct tp_time *out);

/* Optimizer-state bytes per parameter beside the fp32 master copy: fp32 m and v for AdamW,
   ... (memory.c; the checkpoint plan uses it too). */
double tp_optimizer_state_bytes(const struct tp_model *m, enum tp_optimizer o);
/* The optimizer table (optimizer.c): state bytes per parameter beside the fp32 master copy
   (Adafactor's factored moments excluded), and bytes one step moves per parameter. */
double tp_optimizer_states(enum tp_optimizer o);
double tp_optimizer_step_bytes(enum tp_optimizer o);
/* The FLOP conventions of a runs file's tflops_convention column, in its order
   (runs_measured.c: their names; tp_convention_flops_per_token what each counts). */
enum tp_flop_convention {
    TP_CONV_MEGATRON_HFU_2021, TP_CONV_KORTHIKANTI_MFU, TP_CONV_MEGATRON_CORE, TP_CONV_NEMO_MODEL,
    TP_CONV_LLM_FOUNDRY, TP_CONV_TORCHTITAN, TP_CONV_DGXC_FORMULA, TP_CONV_OTHER, TP_CONV_COUNT
};
extern const char *const TP_FLOP_CONVENTIONS[TP_CONV_COUNT];
/* The checkpoint plan for `world` ranks, `mp` model-parallel ranks (tp x pp) and ZeRO stage
   `zero`: tp_ckpt_plan's arithmetic, also what a ZeRO folder's files should hold (ckpt_plan.c). */
void tp_ckpt_plan_core(const struct tp_model *m, const struct tp_job *j, uint32_t world,
                       uint32_t mp, uint32_t zero, double storage_bps, struct tp_ckpt_plan *o);
/* mem_act.c: a stage's stored activation bytes (with the micro-batches its schedule holds in
   flight, and what activation offload moves to the host), the loss's logit bytes, and whether
   QLoRA's prepare_model_for_kbit_training leaves the embedding, norms and head in fp32. */
double tp_mem_activations(const struct tp_model *m, const struct tp_job *j,
                          const struct tp_layout *l, uint32_t stage, double *in_flight_out,
                          double *offloaded);
double tp_mem_logits(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l);
bool tp_mem_kbit_fp32(const struct tp_job *j, const struct tp_layout *l);
/* torchtitan's op-level selective checkpointing (TP_RC_OP): the share of a dense attention
   block's GEMM FLOPs that backward recomputes (the matmuls whose outputs it does not keep). */
double tp_per_op_recomputed_share(const struct tp_model *m);
/* The busiest expert's rows over the mean: the skew (an explicit moe_imbalance, else the
   learned router's, tp_moe_skew), capped by a capacity factor, or the capacity itself when
   every expert is padded to it (moe_skew.c; the step and the memory). */
double tp_moe_load(const struct tp_job *j, const struct tp_model *m, const struct tp_layout *l);
/* moe_skew.c: the busiest EP rank's load over the mean under a learned router (1 with one EP
   rank); the expected largest of n standard normals (Blom); the largest of n log-normal loads
   of mean 1 and coefficient of variation cv. */
double tp_moe_skew(const struct tp_job *j, const struct tp_model *m, const struct tp_layout *l);
double tp_moe_expected_max_z(double n);
double tp_moe_lognormal_max(double cv, double n);
/* validate's source-balanced figures from the sources' median |error| (n of them) and the sum of
   their shares inside the 80% range; `scratch` holds n doubles (NULL: out of memory, NAN). */
void tp_validation_balance(const double *medians, size_t n, double share_sum, double *scratch,
                           struct tp_validation_summary *s);

#endif
