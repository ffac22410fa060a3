/*
 * internal.h - helpers shared by the library's source files; not installed, not public.
 */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include "trainplan.h"

#include <stdarg.h>

#if defined(__GNUC__) || defined(__clang__)
#define TP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TP_PRINTF(a, b)
/* Optimizer-state bytes per parameter beside the fp32 master copy: fp32 m and v for AdamW,
   ... (memory.c; the checkpoint plan uses it too). */
double tp_optimizer_state_bytes(const struct tp_model *m, enum tp_optimizer o);

#endif

/* Writes a formatted one-line message into err (if not NULL) and returns st. */
enum tp_status tp_fail(struct tp_error *err, enum tp_status st, const char *fmt, ...) TP_PRINTF(3, 4);
/* Locale-independent number conversions (numfmt.c): strtod, snprintf and vsnprintf in the C
   locale whatever the calling thread's LC_NUMERIC is.  The library uses nothing else. */
double tp_strtod(const char *s, char **end);
int tp_snprintf(char *buf, size_t len, const char *fmt, ...) TP_PRINTF(3, 4);
int tp_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap) TP_PRINTF(3, 0);
/* tp_fail naming the input field the error is about (struct tp_error.field). */
enum tp_status tp_fail_field(struct tp_error *err, enum tp_status st, const char *field,
                             const char *fmt, ...) TP_PRINTF(4, 5);

/* Returns from the calling function when `expr` (an enum tp_status) is not TP_OK. */
#define TRY(expr)                                                                                 \
    do {                                                                                          \
        enum tp_status st_ = (expr);                                                              \
        if (st_ != TP_OK)                                                                         \
            return st_;                                                                           \
    } while (0)

/* a * b into *out unless it wraps 64 bits (then false, *out untouched). */
static inline bool tp_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b && a > UINT64_MAX / b)
        return false;
    *out = a * b;
    return true;
}

/* *sum += v unless it wraps 64 bits (then false and *sum = UINT64_MAX, so a total that cannot
   be formed stays visibly unknown instead of wrapping).  C11 has no checked arithmetic
   (__builtin_add_overflow is a GCC/Clang extension). */
static inline bool tp_add_u64(uint64_t *sum, uint64_t v)
{
    if (v > UINT64_MAX - *sum) {
        *sum = UINT64_MAX;
        return false;
    }
    *sum += v;
    return true;
}

/* Drops (sets NaN) and counts the physically impossible figures of parsed log steps and of the
   log's run facts; returns how many, also added to info->n_implausible. */
size_t tp_log_drop_implausible(struct tp_log_step *steps, size_t n, struct tp_log_info *info);

/* a * b, or UINT32_MAX when it does not fit: a width computed from two counts then fails the
   range check instead of wrapping to a small (or zero) number. */
static inline uint32_t tp_mul_u32_sat(uint32_t a, uint32_t b)
{
    uint64_t p = (uint64_t)a * b;
    return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

/* comm.c: the network primitives time.c composes. */
/* Ranks of a group of n with stride `stride` that share a node of gpn. */
uint32_t tp_comm_per_node(uint32_t n, uint64_t stride, uint32_t gpn);
/* The node's scale-up link is no faster than its host link (PCIe only). */
bool tp_comm_pcie_only(const struct tp_cluster *c);
/* Whether the job's stack runs ZeRO stage `zero` with `mode` offloaded (stack.c). */
bool tp_stack_offloads(const struct tp_job *j, uint32_t zero, enum tp_offload mode);
/* DualPipe's micro-batch rule: an even count, at least 2 x pp (stack.c; true for the others). */
bool tp_dualpipe_gas_ok(const struct tp_layout *l);
/* Achieved scale-up bandwidth per rank for a group with g ranks in a node (mesh-aware). */
double tp_comm_intra_bw(const struct tp_cluster *c, const struct tp_calib *cal, uint32_t g);
/* Achieved per-rank bus bandwidth of a group over `nodes` nodes with g ranks in each. */
double tp_comm_bus_bw(const struct tp_cluster *c, const struct tp_calib *cal, uint32_t g,
                      uint32_t nodes);
/* NCCL ring latency: a base plus a per-step cost, inter-node steps costing more. */
double tp_comm_latency(const struct tp_calib *cal, double steps, double inter_steps);
/* Nodes a group of n spans with g ranks in each. */
uint32_t tp_comm_nodes_of(uint32_t n, uint32_t g);

/* check.c: the model has been finalized (layers, hidden, heads, head_dim, vocab set). */
enum tp_status tp_model_shape_check(const struct tp_model *m, struct tp_error *err);

/* Room for one more element in an array of n elements of elem bytes that grows by doubling:
   reallocated only when n is 0 or a power of two (its capacity then), so appending n elements
   costs O(n) copies, not O(n^2) as a fixed increment does on files of 10^5 entries.  Returns
   the array (moved or not), or NULL when out of memory or the size would overflow (the array
   is then unchanged and still owned by the caller). */
void *tp_grow(void *array, size_t n, size_t elem);

/* suggest.c: fills one setting of a change (struct tp_setting); what the fit hint's settings
   save. */
extern const char TP_REASON_RECOMPUTE[], TP_REASON_FUSED_LOSS[];
void tp_setting_set(struct tp_setting *s, const char *field, const char *value, uint32_t dp,
                    const char *reason);

/* Case-insensitive ASCII string equality. */
bool tp_streq_ci(const char *a, const char *b);
/* The catalog key of the entry whose die `key` is built on (gb200 -> b200); else `key`. */
const char *tp_gpu_die(const char *key);
/* The measured MAMF of a GPU, or of its die's catalog entry; 0 when none was measured. */
double tp_gpu_mamf(const struct tp_gpu *g, bool fp8);
/* The GEMM fractions a calibration gives GPU `g`: its own entry's, else the measured MAMF (the
   GPU's or its die's), else mamf_default (fp8: mamf * fp8_mamf_ratio). */
void tp_calib_gemm_rates(const struct tp_calib *c, const struct tp_gpu *g, double *mamf,
                         double *mamf8);
/* The precision class a calibration's highest measured MFU is kept by (struct
   tp_calib_domain's max_mfu): 0 for 16- or 32-bit GEMMs, 1 for 8- or 4-bit. */
int tp_mfu_class(enum tp_precision p);
/* The index of GPU `key`'s entry in a calibration domain; d->n_gpus when it has none. */
uint32_t tp_calib_domain_gpu(const struct tp_calib_domain *d, const char *key);

/* Levenshtein distance between two short ASCII strings (case-insensitive), capped at 99. */
unsigned tp_edit_distance(const char *a, const char *b);

/* Mean number of keys one query of block `layer` attends to at sequence length s (flops.c). */
double tp_keys_per_query(const struct tp_model *m, uint32_t layer, double s,
                         enum tp_attn_convention conv);
/* tp_flops_per_token with the causal convention and no MTP, without the comparison
   conventions (which count parameters): the evaluation core's fast path (flops.c). */
enum tp_status tp_flops_model(const struct tp_model *m, uint64_t seq, enum tp_recompute rc,
                              struct tp_flops *f);
/* n_q * (d_qk + d_v): the attention core's width summed over query heads (flops.c). */
double tp_head_widths(const struct tp_model *m);

/* Parameters one GPU of a pipeline stage holds, split by how they shard (memory.c). */
struct tp_shard_params {
    double dense;     /* non-expert, after TP split (replicated tensors whole) */
    double expert;    /* routed experts, after EP * ETP split */
    double quantizable;  /* linear weights QLoRA stores in NF4 (subset of dense + expert) */
    double quant_expert; /* the routed experts' share of quantizable */
    double lora;      /* LoRA adapter parameters on the targeted weights */
    double largest_block; /* the largest block: a ZeRO-3/FSDP gather unit */
    double largest_block_q; /* its linear (GEMM) weights */
    double largest_outer; /* the embedding or the head: separate gather units */
};
/* The blocks of stage `stage` of a checked layout as ranges [lo[i], hi[i]); returns how many
   (memory.c).  lo and hi hold TP_MAX_LAYERS entries. */
/* Bytes per element of a GEMM weight stored by the job: the FP8 format's (tp_prec_saved_bytes)
   with fp8_param_gather, else `half` (memory.c). */
double tp_gemm_weight_bytes(const struct tp_job *j, double half);
uint32_t tp_stage_ranges(const struct tp_model *m, const struct tp_layout *l, uint32_t stage,
                         uint32_t *lo, uint32_t *hi);
/* Whether middle stage s (neither the first two nor the last) holds the blocks of stage s - 1
   in the same order, with no pp_layout map: then it has the same parameters, block costs and
   activations per micro-batch (memory.c). */
bool tp_stage_same_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t s);
/* The memory beside the tensors (mem_runtime.c) and the step's timeline (mem_timeline.c). */
double tp_nccl_channel_peer_bytes(void);
double tp_mem_framework_buffers(const struct tp_model *m, const struct tp_job *j,
                                const struct tp_layout *l);
void tp_mem_runtime(const struct tp_job *j, const struct tp_layout *l, double tensors,
                    struct tp_memory *out);
double tp_mem_step_temporaries(const struct tp_job *j, const struct tp_layout *l, double shard);
void tp_mem_timeline(const struct tp_job *j, const struct tp_layout *l, double shard,
                     struct tp_memory *out);
/* pp_first/pp_last with vpp > 1 as Megatron-Core builds them, into l->pp_map (pp_layout.c). */
enum tp_status tp_layout_pp_uneven(uint32_t n_layers, struct tp_layout *l, struct tp_error *err);
/* The uneven-split part of tp_layout_check (pp_first, pp_last) (layout.c). */
enum tp_status tp_layout_check_split(const struct tp_model *m, const struct tp_layout *l,
                                     struct tp_error *err);
/* The parameters of stage `stage`; `first`/`count` receive its block range (memory.c). */
void tp_stage_params(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                     uint32_t stage, struct tp_shard_params *s, uint32_t *first, uint32_t *count);

/* A run's calibration-independent part of tp_time_step, worked out once (time.c): the checks,
   each stage's parameters and whether it repeats the stage before, the FLOPs per token, each
   block kind's first block and keys per query, and every GEMM's shape figures (FLOPs, tile and
   wave efficiency, bytes) as a tape to replay.  calibrate's fit prices each row thousands of
   times with moving efficiencies: tp_time_planned gives what tp_time_step gives, to the bit,
   without redoing that part.  A plan points at the run's structs (they must outlive it) and is
   only read by tp_time_planned: threads may share it. */
/* Block kinds that cost the same: FFN (dense, MoE, none) x mixer (attention full / sliding /
   chunked, Mamba-2, gated DeltaNet, none); tp_block_kind (ssm.c) numbers them. */
#define TP_BLOCK_KINDS 18
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
/* The calibration's efficiencies are positive (the part of tp_run_check about it; check.c). */
enum tp_status tp_calib_check(const struct tp_calib *cal, struct tp_error *err);

/* Optimizer-state bytes per parameter beside the fp32 master copy: fp32 m and v for AdamW,
   ... (memory.c; the checkpoint plan uses it too). */
double tp_optimizer_state_bytes(const struct tp_model *m, enum tp_optimizer o);
/* torchtitan's op-level selective checkpointing (TP_RC_OP): the share of a dense attention
   block's GEMM FLOPs that backward recomputes (the matmuls whose outputs it does not keep). */
double tp_per_op_recomputed_share(const struct tp_model *m);

/* The block an MTP module copies (params.c). */
uint32_t tp_mtp_template_layer(const struct tp_model *m);

/* ---- hybrid token mixers (ssm.c) ---- */
/* The block's kind, 0 .. TP_BLOCK_KINDS - 1. */
unsigned tp_block_kind(const struct tp_model *m, uint32_t layer);
/* The parameters of all blocks, summed in double (so no count wraps), each block kind's
   tensors listed once (params.c). */
double tp_blocks_params_total(const struct tp_model *m);
/* A block that is not attention + FFN: a Mamba-2 or DeltaNet mixer, or no mixer or FFN. */
bool tp_model_hybrid(const struct tp_model *m);
/* One GEMM of a mixer: N x K weight; `column` = split by tp along N (else along K). */
struct tp_mixer_gemm {
    double N, K;
    bool column;
};
#define TP_MIXER_GEMMS 2
size_t tp_mixer_gemms(const struct tp_model *m, enum tp_mixer k, struct tp_mixer_gemm *g);
size_t tp_mixer_tensors(const struct tp_model *m, enum tp_mixer k, struct tp_tensor *out);
double tp_mixer_gemm_weights(const struct tp_model *m, enum tp_mixer k);
uint64_t tp_ssm_inner(const struct tp_model *m);
/* Forward scan FLOPs per token of one mixer at sequence length s. */
double tp_mixer_scan_flops(const struct tp_model *m, enum tp_mixer k, double s,
                           enum tp_attn_convention conv);
/* The chunked-scan kernels' FLOP rate relative to the attention kernel's.  Dao & Gu 2024
   (arXiv:2405.21060) §9.3, Fig. 10: the SSD kernel (chunk 256, state 64, head dim 64) takes as
   long as FlashAttention-2 (head dim 64) at 2K tokens, where SSD does 2*(256*(64+64) + 2*64*64)
   = 81,920 FLOP per token per head against attention's 4*2048*64 = 524,288: 0.15625 of the
   rate.  Yang et al. 2024 (arXiv:2412.06464) Fig. 3 measure Gated DeltaNet's training
   throughput close to Mamba-2's, so its chunk kernels take the same factor. */
#define TP_SCAN_REL_EFF (81920.0 / 524288.0)
/* HBM bytes the scan kernel moves per token (forward). */
double tp_mixer_scan_bytes(const struct tp_model *m, enum tp_mixer k);
/* Elements moved per token by the conv and gated norm (forward, split by tp). */
double tp_mixer_elementwise(const struct tp_model *m, enum tp_mixer k);
/* Bytes per token a mixer stores for backward (split by tp); gin = bytes of a GEMM input. */
double tp_mixer_activations(const struct tp_model *m, enum tp_mixer k, double gin);
/* What tensor parallelism must divide in the model's mixers (at most 4 entries). */
struct tp_mixer_split {
    const char *field;
    uint32_t count;
};
size_t tp_mixer_tp_splits(const struct tp_model *m, struct tp_mixer_split *out);
bool tp_mixer_tp_ok(const struct tp_model *m, uint32_t tp);
/* Shape checks of the mixers the layout uses (finalize). */
enum tp_status tp_mixer_check(const struct tp_model *m, struct tp_error *err);
/* Applies a Nemotron-H hybrid_override_pattern ("M-M*-E..."): one character per block. */
enum tp_status tp_model_set_pattern(struct tp_model *m, const char *pattern,
                                    struct tp_error *err);

#endif
