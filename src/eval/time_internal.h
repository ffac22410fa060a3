/*
 * time_internal.h - what the step (time.c) and the cost of one block (time_block.c) share:
 * the resolved hardware rates, a block's cost, the evaluation context.  Private to src/eval.
 */
#ifndef TP_TIME_INTERNAL_H
#define TP_TIME_INTERNAL_H

#include "eval_internal.h"

/* The GEMM shapes of a run replayed (struct tp_time_plan): gemm() reads the next record instead
   of working out the tile and wave quantization again, or writes it when recording. */
struct tape {
    const struct tp_gemm_rec *play; /* replay from here (NULL: compute) */
    struct tp_gemm_rec *rec;        /* record into here (NULL: do not) */
    uint32_t pos, cap;
    bool overflow;                  /* more GEMMs than cap: the recording is unusable */
};

/* What one evaluation needs from the cluster and calibration, resolved once. */
struct hw {
    double gemm_flops;  /* GEMM dtype peak * MAMF * gemm_scale */
    double gemm16_flops; /* the same at 16 bits (GEMMs left out of FP8/FP4: the LM head) */
    double attn_flops;  /* 16-bit peak * attn_eff (times the FP8 kernel's ratio: fp8_attn) */
    double scan_flops;  /* the SSM scans' base rate: 16-bit peak * attn_eff, never FP8 */
    bool fp8_attn;      /* FP8 attention (tp_job.fp8_attention) on a GPU with FP8 tensor cores:
                           its quantization passes are priced (attn_fp8.c) */
    double attn_bwd;    /* the backward's time over the forward's (attn_bwd_ratio; FlexAttention
                           runs its backward further below the fused kernels than its forward) */
    double sfu_fwd, sfu_bwd; /* the native kernel's rate on the counted keys over attn_flops,
                                forward and backward (tp_attn_sfu_rel; 1 but on sm_103) */
    double fa_peak;     /* FlashAttention 1.x's pricing (tp_flash1_kernel): the 16-bit peak
                           times the GPU's mma.sync share over the H100's (tp_kernel_rel fa2) */
    bool fa_async;      /* the mma.sync kernels run on an async-MMA GPU (the H100 figure) */
    double mem_bw;      /* HBM bandwidth * mem_eff */
    double nf4_bw;      /* HBM bandwidth * bitsandbytes' NF4 dequantization share */
    double wgrad_out_b; /* bytes a weight-gradient GEMM moves per output element: 2, or
                           WGRAD_ACCUM_B into an fp32 main_grad (hw_rates.c) */
    double sms, tile_m, tile_n;
    bool fp8;           /* quantized GEMMs (fp8, mxfp8, nvfp4, mxfp4) with their casts */
    enum tp_dtype gemm_dtype;
    double cast_fwd, cast_bwd; /* bytes moved per element by the input / gradient casts */
    bool rowwise;       /* torchao's row-wise FP8 recipe (tp_fp8_recipe) */
    bool fp8_tp_gather; /* TP all-gathers in FP8 (tp_stack.fp8_tp_gather, tensor-wise FP8) */
    double rowwise_gemm; /* its forward GEMM's rate over the tensor-wise kernel's */
    double act_bytes;   /* bytes per activation element (2; 4 in fp32 training) */
    struct tape *tape;  /* NULL: every GEMM computed from its shape */
};

/* attn_fp8.c: the FP8 fused attention kernel's rate over the 16-bit kernel's on `g` at `span`
   keys per query, forward and backward (1 and false where not measured); the bytes per local
   token its quantization passes move, forward and backward. */
bool tp_attn_fp8_ratio(const struct tp_gpu *g, double span, double *fwd, double *bwd);
void tp_attn_fp8_cast_bytes(const struct tp_model *m, double tp, double *fwd, double *bwd);

/* Forward / backward cost of one block (or the embedding and head) for one micro-batch. */
struct cost {
    double fwd_gemm, bwd_gemm, fwd_attn, bwd_attn, fwd_mem, bwd_mem;
    double tp_fwd, tp_bwd;   /* TP/SP collectives (not yet reduced by overlap) */
    double cp_fwd, cp_bwd;   /* context-parallel KV exchange, exposed part */
    double ep_fwd, ep_bwd;   /* MoE all-to-all */
    double ep_sm_share;      /* SMs its kernels take from overlapped GEMMs (not summed) */
    double host_fwd, host_bwd; /* host-bound time of eager loops (launches, syncs) */
    double moe_post_fwd; /* GPU seconds of an MoE block's forward after its dispatcher's host
                            sync: the routed experts' GEMMs and the exchange (not summed) */
    double ffn_fwd_gemm;    /* the FFN's forward GEMMs: the dense MLP, or the MoE block's
                               router, routed and shared experts (selective recompute of
                               "mlp" / "moe"; not summed) */
    double shared_fwd_gemm; /* the shared experts' forward GEMMs ("shared_experts") */
    double col_wgrad;       /* the weight-gradient GEMM of the mixer's column-parallel input
                               projection(s) (QKV, Mamba's in_proj; 0 for MLA), which the
                               async backward TP all-reduce runs beside (not summed) */
};

struct ctx {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_layout *l;
    const struct tp_calib *cal;
    struct hw h;
    double tokens;   /* tokens of one micro-batch on this rank (after CP; DPO pairs) */
    double seqs;     /* sequences of one micro-batch (DPO: chosen + rejected) */
    double seq_local;/* tokens of one sequence on this rank */
    bool frozen;     /* LoRA/QLoRA: base weights get no gradient */
    bool eager;      /* Hugging Face modules op by op (no fused kernels, no fused loss) */
    enum tp_moe_impl moe_impl;
    uint32_t g_tp, g_cp, g_ep;
    const double *kpq; /* keys per query of each block kind (a plan's), or NULL */
    uint32_t tape_outer; /* where the head's GEMMs start in h.tape */
};

/* moe_hf.c: the trainable tensors of the model as transformers 4.x builds it (one per expert
   projection unless `grouped` kernels stack them), and the seconds DeepSpeed ZeRO-3's optimizer step spends per sub-group on this
   rank holding `local_params` trainable parameters (sub-group set-up and the zero_grad walk
   over every tensor once per sub-group: deepspeed issue #8586). */
double tp_hf_param_tensors(const struct tp_model *m, bool grouped);
double tp_z3_subgroup_step_s(const struct ctx *x, double local_params);
/* moe_hf.c: the Hugging Face expert loop's index traffic in the backward, bytes per expert per
   micro-batch of `tokens` on this rank, and the host syncs per expert it adds there. */
double tp_hf_loop_bwd_bytes(const struct tp_model *m, double tokens, double act_bytes);
double tp_hf_loop_bwd_syncs(const struct tp_model *m);
/* moe_hf.c: host seconds of DeepSpeed ZeRO-2/3's gradient hook on one trainable tensor, once
   per micro-batch's backward (0 under other stacks, ZeRO 0-1 and LoRA). */
double tp_ds_grad_hook_s(const struct ctx *x);

/* Block kinds: blocks with the same FFN, mixer and attention reach cost the same. */
static inline unsigned tp_kind_of(const struct tp_model *m, uint32_t layer)
{
    return tp_block_kind(m, layer);
}

/* The expert-parallel token exchange of one MoE block for one micro-batch (moe_comm.c):
   forward (dispatch + combine) and backward seconds, and the share of the SMs its kernels
   take from the GEMMs they overlap (DeepEP). */
struct tp_moe_comm {
    double fwd, bwd, sm_share;
};
/* SMs DeepEP's normal kernels occupy: "only 20 SMs are sufficient to fully utilize the
   bandwidths of IB and NVLink" (DeepSeek-V3 report §3.2.2, H800's 132 SMs). */
#define TP_MOE_COMM_SMS 20.0
void tp_moe_comm(const struct ctx *x, double imb, struct tp_moe_comm *out);
/* Tokens one rank routes to the experts (T/tp under sequence parallelism). */
double tp_moe_routed_tokens(const struct ctx *x);
/* Nodes a token may reach in an EP group spanning `nodes` nodes (group-limited routing). */
double tp_moe_node_limit(const struct tp_model *m, double nodes);
/* DualPipe's bubble from a chunk's forward, backward and weight-gradient seconds. */
double tp_dualpipe_bubble(uint32_t pp, double f, double b, double w);
/* Share of an MLA block's forward GEMMs in its up-projections (moe_comm.c). */
double tp_mla_up_share(const struct tp_model *m, bool moe);
/* Share of micro-batches whose chunks DualPipe overlaps with another's. */
double tp_dualpipe_paired(uint32_t pp, uint32_t gas);
/* Share of a stage's chunks that Megatron-Core's 1F1B all-to-all overlap pairs (moe_comm.c). */
double tp_a2a_overlap_paired(uint32_t pp, uint32_t vpp, uint32_t gas);

/* How much nearer its peak a GPU's attention, GEMMs and FlashAttention-2-class (mma.sync)
   kernels run than the H100's, where the calibration measures them: 1 each but where a
   kernel benchmark says otherwise; mamf4 the measured sustained FP4 matmul share of the FP4
   peak, 0 where none was measured (time_block.c). */
void tp_kernel_rel(const struct tp_gpu *g, double *attn, double *gemm, double *fa2,
                   double *mamf4);
/* Blackwell Ultra's doubled exponential units: the native attention kernel's forward and
   backward rates over Blackwell's at the same peak (measured, kernel_rates.c); 1 elsewhere. */
void tp_attn_sfu_rel(const struct tp_gpu *g, double *fwd, double *bwd);
/* A measured ROCm attention kernel (hw_rates.c): the stack's own (`native`: Transformer
   Engine's CK v3) or FlashAttention-2's CK build, forward and backward TFLOP/s at the
   reference shape; false where none was measured. */
bool tp_rocm_attn(const struct tp_gpu *g, bool native, double *fwd_tflops, double *bwd_tflops);
/* The same kernel's forward and backward rates relative to the H100's anchored ones. */
bool tp_rocm_attn_rel(const struct tp_gpu *g, bool native, double *fwd, double *bwd);
/* The stack's native ROCm kernel (TE's CK v3) as it runs in training, at its measured rate:
   the forward's share of the 16-bit peak and the backward's time per forward time at equal
   FLOPs (kernel_rates.c); false where none was measured. */
bool tp_rocm_attn_trained(const struct tp_gpu *g, double *fwd_share, double *bwd_time);
/* FlashAttention 1.x against FlashAttention-2 at a head dimension, both kernels benchmarked
   alone (FA2 paper Figs. 4 and 7; kernel_rates.c): FA1's rate over FA2's, and FA2's forward +
   backward rate as a share of the 16-bit peak on Ampere or (`async`) on the H100. */
void tp_flash1_kernel(double head_dim, bool async, double *ratio, double *fa2_share);
/* bitsandbytes' NF4 dequantization kernel's share of the HBM peak: the branchless lookup-table
   kernel of bitsandbytes >= 0.48 (`lut`) or the branching one before it (time_block.c). */
double tp_nf4_dequant_rel(bool lut);
/* The dequantization's rate in bytes/s on `g` (SMs x clock where the HBM share misleads). */
double tp_nf4_dequant_bw(const struct tp_gpu *g, bool lut);
/* The hardware rates of the run's GPU, precision and calibration (hw_rates.c). */
void tp_resolve_hw(const struct tp_cluster *c, const struct tp_job *j,
                   const struct tp_calib *cal, struct hw *h);
/* The cost of block `layer` for one micro-batch (time_block.c). */
void tp_block_cost(const struct ctx *x, uint32_t layer, struct cost *c);
/* The embedding (first stage) and the head with the loss (last stage) (time_block.c). */
void tp_outer_cost(const struct ctx *x, bool first, bool last, struct cost *c);
/* Adds to c->tp_fwd / tp_bwd the TP collectives of the vocabulary-parallel embedding (first
   stage), output layer and cross-entropy (last stage) for one micro-batch (outer_tp.c). */
void tp_outer_tp(const struct ctx *x, bool first, bool last, struct cost *c);
/* The kernel style of a stack's blocks (host.c): stacks of one style run the same kernels and
   launches, so rows of one vouch for the others (tp_calib_domain_check). */
unsigned tp_kernel_style_of(enum tp_framework fw);
/* Kernels block `layer` launches per micro-batch, forward and backward, by stack (host.c). */
void tp_host_launches(const struct ctx *x, uint32_t layer, double *fwd, double *bwd);
/* Adds to c->host_fwd / host_bwd the host time of the block's launches that its GPU work does
   not cover (host.c); c holds the block's GPU costs. */
void tp_host_block(const struct ctx *x, uint32_t layer, struct cost *c);
/* Host units shared by host.c, host_ds.c, host_step.c and host_log.c, in eager ops
   (eager_op_s): a drain (a `.item()` of a CUDA tensor: its call and the launch the idle GPU
   then waits for), and a collective called from Python (its launch and the Python and c10d
   work beside it, TP_HOST_COLL_BESIDE_OPS). */
#define TP_HOST_DRAIN_OPS 2.0
#define TP_HOST_COLL_BESIDE_OPS 3.0
#define TP_HOST_COLL_OPS (1 + TP_HOST_COLL_BESIDE_OPS)
/* Latency of one small all-reduce over n ranks spaced `stride` apart (host.c): a norm's,
   a flag's or a loss's, called from the host. */
double tp_host_small_allreduce(const struct ctx *x, uint32_t n, uint64_t stride);
/* Host ops (eager_op_s units) of one block's local experts per micro-batch, forward and
   backward: Megatron-Core's grouped experts on Transformer Engine (tp_stack.te_grouped_gemm),
   0 elsewhere; the eager loops price their own (time_block.c expert_loop) (host.c). */
void tp_host_expert_ops(const struct ctx *x, uint32_t layer, double *f, double *b);
/* Host time of one micro-batch outside the blocks that no GPU work hides (host.c): the
   Megatron-DeepSpeed data path's syncs and TP broadcasts. */
double tp_host_micro_batch(const struct ctx *x);
/* Megatron-DeepSpeed's DeepSpeed engine (host_ds.c): per micro-batch on pipeline stage `stage`,
   its drains (ThroughputTimer, PartitionedTensor meta), the partitioned activations'
   all-gathers and p2p calls, and the loss's DP all-reduce without the pipeline engine. */
double tp_host_ds_micro_batch(const struct ctx *x, uint32_t stage);
/* Per optimizer step (host_ds.c): the loss scaler's per-tensor overflow probes and ZeRO 1/2's
   per-tensor gradient norms on a stage of `blocks` blocks holding `params` parameters per rank. */
double tp_host_ds_step(const struct ctx *x, uint32_t stage, uint32_t blocks, double params);
/* The weight gradients' accumulation between micro-batches under DeepSpeed's engine (ds_engine
   stacks): seconds per micro-batch, averaged over the step's micro-batches (host_ds.c). */
double tp_host_ds_grad_accum(const struct ctx *x, double params);
/* Whether DeepSpeed runs the job with BF16_Optimizer (fp32 gradient accumulation and
   reduction): a ds_engine stack in bf16 without ZeRO (host_ds.c). */
bool tp_host_ds_bf16_optimizer(const struct ctx *x);
/* Seconds of the tied embedding's gradient all-reduce between the first and the last pipeline
   stage at the step's end under DeepSpeed's pipeline engine, on those stages (host_ds.c). */
double tp_host_ds_tied_reduce(const struct ctx *x, uint32_t stage);
/* Per optimizer step (host_log.c): Megatron's --log-params-norm and --log-num-zeros-in-grad on
   a stage of `blocks` blocks holding `params` trainable parameters per rank, exposed whole. */
double tp_host_log_step(const struct ctx *x, uint32_t stage, uint32_t blocks, double params);
/* The parameter tensors, as Megatron-Core names them, of pipeline stage `stage` holding
   `blocks` blocks on one rank (host_log.c). */
double tp_host_stage_tensors(const struct ctx *x, uint32_t stage, uint32_t blocks);
/* Per optimizer step (host_step.c): the host work each stack's training step runs beside the
   blocks (its optimizer's launches and host syncs, the trainer's per-step syncs, under
   full-iteration CUDA graphs the replay and the batches' copies), exposed past `opt_gpu`, the
   optimizer's GPU time, on a stage of `blocks` blocks holding `params` trainable parameters
   per rank. */
double tp_host_step(const struct ctx *x, uint32_t stage, uint32_t blocks, double params,
                    double opt_gpu);
/* Per micro-batch on the last pipeline stage (host_step.c): Megatron-Core's NaN/Inf checks of
   the loss, two drains; none under full-iteration CUDA graphs. */
double tp_host_loss_checks(const struct ctx *x);
/* Seconds that Megatron-Core's dropless dispatcher's host wait for its split sizes adds to
   one forward of block `layer` (moe_host.c; 0 for other blocks and stacks); c holds the
   block's GPU costs. */
double tp_moe_sync_exposed(const struct ctx *x, uint32_t layer, const struct cost *c);

#endif
