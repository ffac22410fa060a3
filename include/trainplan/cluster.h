/*
 * trainplan/cluster.h - the cluster, the job and the parallel layout: the GPU catalog, the
 * job's settings, the software stacks and the layout checks.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_CLUSTER_H
#define TRAINPLAN_CLUSTER_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Hardware catalog                                                                           */
/* ----------------------------------------------------------------------------------------- */

enum tp_dtype { TP_FP32 = 0, TP_TF32, TP_BF16, TP_FP8, TP_FP4, TP_DTYPE_COUNT };

/* One accelerator as its datasheet gives it.  Bandwidths are per GPU, per direction, in
   bytes/s; FLOP/s are dense (no sparsity); 0 = the device has no such mode. */
struct tp_gpu {
    const char *key;        /* stable lower-case key: "h100-sxm", "mi300x", ... */
    const char *label;      /* human name */
    const char *source;     /* datasheet citation */
    double peak_flops[TP_DTYPE_COUNT];
    double hbm_bytes;       /* memory capacity in bytes; a vendor's "80 GB" is 80 GiB of DRAM */
    double hbm_bw;          /* memory bandwidth */
    double intra_bw;        /* scale-up link per GPU (NVLink, xGMI, ...); PCIe when none */
    uint32_t gpus_per_node; /* typical GPUs per node / scale-up domain */
    double inter_bw;        /* default scale-out (NIC) bandwidth per GPU */
    double host_bw;         /* host link (PCIe) per direction */
    uint32_t sms;           /* streaming multiprocessors / compute units (0 = unknown) */
    /* Maximum achievable matmul FLOP/s as a fraction of the peak (large bf16 / fp8 GEMM sweeps,
       [MLE] "MAMF"); 0 = not measured (struct tp_calib supplies a default). */
    double mamf_bf16, mamf_fp8;
    /* Asynchronous warpgroup / tcgen05 tensor-core MMA (NVIDIA sm_90 Hopper, sm_100 data-centre
       Blackwell): kernels written for Ampere's mma.sync, such as FlashAttention-2, reach only
       part of the peak there (struct tp_calib fa2_ratio). */
    bool async_mma;
    /* Scale-up links of a point-to-point mesh (AMD Infinity Fabric / xGMI: 7 links per GPU in
       an 8-GPU node; Gaudi's RoCE all-to-all): a group of g ranks in a node uses g - 1 of them,
       so it reaches (g - 1) / links of intra_bw.  0 = a switch (NVSwitch): any group gets it
       all. */
    uint32_t mesh_links;
};

TP_API size_t tp_gpu_count(void);
TP_API const struct tp_gpu *tp_gpu_get(size_t i);
/* Finds a GPU by key or alias (case-insensitive); TP_ENOTFOUND lists close keys. */
TP_API enum tp_status tp_gpu_find(const char *name, const struct tp_gpu **out, struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Cluster, job and parallel layout                                                           */
/* ----------------------------------------------------------------------------------------- */

struct tp_cluster {
    struct tp_gpu gpu;      /* a copy, so every figure can be overridden */
    uint32_t n_gpus;
    uint32_t gpus_per_node;
};

/* `n_gpus` of catalog GPU `gpu` (key or alias) with the catalog's GPUs per node;
   TP_ENOTFOUND as tp_gpu_find. */
TP_API enum tp_status tp_cluster_init(struct tp_cluster *c, const char *gpu, uint32_t n_gpus,
                               struct tp_error *err);

enum tp_task { TP_TASK_PRETRAIN = 0, TP_TASK_SFT, TP_TASK_DPO, TP_TASK_LORA, TP_TASK_QLORA };
enum tp_optimizer {
    TP_OPT_ADAMW = 0,  /* fp32 m and v */
    TP_OPT_ADAMW_8BIT, /* bitsandbytes blockwise 8-bit m and v (block 256, fp32 absmax) */
    TP_OPT_ADAMW_4BIT, /* torchao 4-bit m and v (block 128, fp32 scale) */
    TP_OPT_ADAFACTOR,  /* factored second moment, no first moment */
    TP_OPT_SGD,        /* no state */
    TP_OPT_SGD_MOMENTUM,
    TP_OPT_ADAMW_BF16  /* torch AdamW on 16-bit parameters without a mixed-precision wrapper
                          (a model loaded in bf16, no fp32 master): m and v in bf16, the
                          update applied to the bf16 weights (torch/optim/adamw.py keeps the
                          states in the parameter's dtype) */
};
enum tp_precision {
    TP_PREC_BF16 = 0,
    TP_PREC_FP16,
    TP_PREC_FP8,    /* per-tensor or blockwise scaled FP8 (Transformer Engine DelayedScaling,
                       Float8CurrentScaling, Float8BlockScaling) */
    TP_PREC_FP32,
    TP_PREC_MXFP8,  /* FP8 with 32-element E8M0 block scales (MXFP8BlockScaling): needs
                       block-scaled tensor cores (Blackwell, MI355X) */
    TP_PREC_NVFP4,  /* FP4 E2M1 with 16-element FP8 block scales and a per-tensor scale
                       (NVFP4BlockScaling): GEMMs at the FP4 rate */
    TP_PREC_MXFP4   /* FP4 E2M1 with 32-element E8M0 block scales (OCP MX) */
};
#define TP_PREC_COUNT 7
/* The tensor-core type a precision's GEMMs run in: TP_FP8 (fp8, mxfp8), TP_FP4 (nvfp4,
   mxfp4), TP_TF32 (fp32), else TP_BF16. */
TP_API enum tp_dtype tp_prec_gemm_dtype(enum tp_precision p);

/* The share of a GEMM's tensor-core rate left when an operand row is `width` elements of
   `elem_bytes` each: 1 on the 128-byte grid, less off it, less again off the 16-byte grid
   (align.c: NVIDIA's Tensor Core Requirements; 0.5 off the 16-byte grid from nanoGPT's
   vocabulary padding 50257 -> 50304, the square root of it between the grids). */
TP_API double tp_gemm_align_eff(double width, double elem_bytes);
/* A model dimension whose GEMM width (per TP rank) is off the 128-byte grid. */
struct tp_misalign {
    char what[32];   /* "hidden", "head_dim", "heads x head_dim", "ffn", ... */
    double dim;      /* the model's dimension */
    double width;    /* what one TP rank's GEMM sees (dim / tp where TP splits it) */
    double nearest;  /* the nearest value of the dimension on the grid */
    double eff;      /* tp_gemm_align_eff of the width */
};
/* The model's dimensions that run off the grid at TP size `tp` and precision `p`; fills at
   most `cap` and returns how many there are. */
TP_API size_t tp_model_misaligned(const struct tp_model *m, uint32_t tp, enum tp_precision p,
                                  struct tp_misalign *out, size_t cap);
/* Bytes per element of a GEMM input saved for backward in the precision's format (the
   quantized data plus its block scales): 1 fp8, 1 + 1/32 mxfp8, 0.5 + 1/16 nvfp4, 0.5 + 1/32
   mxfp4; 2 for 16-bit, 4 for fp32. */
TP_API double tp_prec_saved_bytes(enum tp_precision p);
/* Lower-case name ("bf16", "nvfp4", ...); "?" when out of range. */
TP_API const char *tp_prec_name(enum tp_precision p);
/* Whose bytes-per-parameter conventions: DeepSpeed/FSDP keep 16-bit gradients (2+2+12 = 16 B
   for AdamW); Megatron accumulates fp32 main gradients (2+4+12 = 18 B). */
enum tp_framework {
    TP_FW_DEEPSPEED = 0, TP_FW_FSDP, TP_FW_MEGATRON, TP_FW_AXOLOTL, TP_FW_TORCHTITAN,
    TP_FW_MEGATRON_DS, /* Megatron-DeepSpeed: Megatron-LM's TP/PP on DeepSpeed's engine */
    TP_FW_COUNT
};
/* How a stack runs the routed experts of an MoE block (docs/physics.md §5.5, docs/stacks.md).
   DEFAULT: the stack's own (tp_stack_moe_impl).  EAGER: Hugging Face modeling code's Python
   loop over the experts (one small GEMM chain per expert, a host sync to find its tokens,
   gather and index_add_); GROUPED: one grouped GEMM over all local experts with fused
   permute/unpermute (Megatron-Core/TE, MegaBlocks, torch._grouped_mm); DEEPSPEED: DeepSpeed-MoE
   / Tutel (capacity-padded dispatch, a loop over the local experts, expert parallel).  DENSE:
   every expert runs over every token, the unselected ones on zero-scaled input (transformers'
   Llama4TextMoe: hidden_states.repeat(num_experts, 1); Axolotl's linearized Llama 4 experts);
   a Hugging Face stack's default for the llama4 family. */
enum tp_moe_impl { TP_MOE_DEFAULT = 0, TP_MOE_EAGER, TP_MOE_GROUPED, TP_MOE_DEEPSPEED, TP_MOE_DENSE };
/* How an expert-parallel group moves tokens to their experts and back (docs/moe.md).
   ALLTOALL: Megatron-Core's MoEAlltoAllTokenDispatcher and DeepSpeed-MoE / Tutel: every routed
   copy of a token sent on its own, NCCL all-to-all, 16-bit (the default).  ALLGATHER:
   Megatron-Core's MoEAllGatherTokenDispatcher: the whole group's tokens all-gathered, the
   outputs reduce-scattered.  FLEX: Megatron-Core's flex dispatcher on DeepEP's normal kernels
   (--moe-token-dispatcher-type flex --moe-enable-deepep), as DeepSeek-V3 ran it: a token
   crosses the network once per node it reaches and is forwarded over NVLink to its ranks there
   (hierarchical), FP8 dispatch in FP8 runs, 16-bit combine; communication SMs taken from the
   GEMMs while it overlaps them.  HYBRIDEP: the flex dispatcher over DeepEP's HybridEP kernels
   (--moe-flex-dispatcher-backend hybridep), 16-bit both ways, priced from HybridEP's measured
   algorithm bandwidths (src/eval/moe_comm.c, docs/moe.md "HybridEP"). */
enum tp_moe_dispatcher { TP_MOE_DISPATCH_ALLTOALL = 0, TP_MOE_DISPATCH_ALLGATHER,
                         TP_MOE_DISPATCH_FLEX, TP_MOE_DISPATCH_HYBRIDEP };
/* What a learned router meets (src/eval/moe_skew.c, docs/moe.md "Routing skew").  AUTO: by the
   task (pretraining: CORPUS; fine-tuning: DATASET).  CORPUS: a router trained on the mixed
   corpus it routes, whose per-sequence skew averages over the sequences routed together.
   DATASET: a trained router fed one dataset (fine-tuning, or continued pretraining of a
   released model), whose hot experts stay hot.  FORCED: Megatron-Core's
   --moe-router-force-load-balancing (benchmarks): every rank the mean. */
enum tp_moe_routing { TP_MOE_ROUTING_AUTO = 0, TP_MOE_ROUTING_CORPUS, TP_MOE_ROUTING_DATASET,
                      TP_MOE_ROUTING_FORCED };
/* CUDA graphs (src/eval/host.c, docs/host.md).  LAYER: each transformer block's forward and
   backward captured and replayed as a graph (Megatron-Core --cuda-graph-impl local |
   transformer_engine, formerly --enable-cuda-graph / --external-cuda-graph; NeMo and
   Megatron-Bridge enable_cuda_graph / cuda_graph_impl).  FULL: the whole forward-backward of
   a step, every micro-batch, one graph (--cuda-graph-impl full_iteration, formerly
   --cuda-graph-scope full_iteration; MLPerf's FULL_CUDA_GRAPH=1); the optimizer step stays
   outside it. */
enum tp_cuda_graphs { TP_CUDA_GRAPHS_NONE = 0, TP_CUDA_GRAPHS_LAYER, TP_CUDA_GRAPHS_FULL };
/* How a LoRA run stores its frozen GEMM weights (tp_job.frozen_weights; docs/memory.md
   "Adapters").  AUTO: the precision's FP8 format under fp8_param_gather, else 16 bits. */
enum tp_frozen_format {
    TP_FROZEN_AUTO = 0,
    TP_FROZEN_16BIT, /* bf16 / fp16 */
    TP_FROZEN_FP8,   /* tensor-wise FP8: 1 byte + one fp32 scale per tensor */
    TP_FROZEN_MXFP8, /* E4M3 + one E8M0 scale per 32, row-wise and column-wise copies */
    TP_FROZEN_NVFP4, /* E2M1 + one E4M3 scale per 16 (+ fp32 per tensor), both copies */
};
/* Attention kernel.  TP_ATTN_FLASH is the framework's default fused kernel: Megatron-Core/NeMo
   run Transformer Engine's (cuDNN fused attention: native to Hopper and Blackwell), the others
   FlashAttention-2 (flash-attn, PyTorch SDPA's flash backend).  FLASH2 / FLASH3 name the kernel
   outright: FlashAttention-2, or an architecture-native one (FlashAttention-3, cuDNN, TE).  FLEX
   is PyTorch's FlexAttention (torch.nn.attention.flex_attention: Triton kernels generated from a
   score / block-mask function; Axolotl flex_attention, torchtitan use_flex_attn).  CUDNN919 is
   cuDNN's fused attention of the 2025-26 releases, the generation cuDNN 9.19.1's published
   benchmark measured: on Hopper it runs at struct tp_calib cudnn_gen_ratio of the anchored rate,
   which the cuDNN 9.0-9.1 kernel of 2024 (NeMo 24.03-24.07, Transformer Engine 1.4-1.8) and
   FlashAttention-3 carry (FLASH3, and FLASH under Megatron).  FLASH1 is FlashAttention 1.x
   (flash-attn < 2: flash_attn_unpadded_func, PyTorch 2.0-2.1's SDPA flash backend): FLASH2's
   time plus the difference of the two kernels' benchmarked times (kernel_rates.c,
   tp_flash1_kernel), on the GPUs and head dimensions it was built for (tp_flash1_check). */
enum tp_attn_impl { TP_ATTN_FLASH = 0, TP_ATTN_EAGER, TP_ATTN_FLASH2, TP_ATTN_FLASH3, TP_ATTN_FLEX,
                    TP_ATTN_CUDNN919, TP_ATTN_FLASH1 };
enum tp_offload { TP_OFFLOAD_NONE = 0, TP_OFFLOAD_OPTIMIZER, TP_OFFLOAD_PARAMS };
/* How an FP8 recipe scales its tensors (precision fp8 only).  TENSORWISE: one scale per tensor
   (Transformer Engine's delayed and current scaling, torchao's "tensorwise"): each operand is
   cast once and its FP8 copy transposed for the backward's other GEMM, on cuBLAS's kernels.
   ROWWISE: torchao's "rowwise" recipe (torchao/float8/config.py Float8LinearRecipeName
   .ROWWISE): one scale per row along the contraction axis, so the input, the weight and the
   output gradient are each cast twice (once per axis, the column-wise cast a reduction over
   the tokens); the forward GEMM runs PyTorch's CUTLASS row-wise kernel and the backward ones
   cuBLAS's tensor-wise kernel with a rescale of the output (float8_ops.py
   addmm_float8_unwrapped: "The rowwise CUTLASS-based kernel is so slow without fast-accum");
   FSDP all-gathers the weights in 16 bits (float8 all-gather is tensor-wise only). */
enum tp_fp8_recipe { TP_FP8_TENSORWISE = 0, TP_FP8_ROWWISE };

/* LoRA target modules (bit mask). */
enum {
    TP_LORA_Q = 1u << 0, TP_LORA_K = 1u << 1, TP_LORA_V = 1u << 2, TP_LORA_O = 1u << 3,
    TP_LORA_GATE = 1u << 4, TP_LORA_UP = 1u << 5, TP_LORA_DOWN = 1u << 6,
    TP_LORA_ALL = 0x7f
};

/* How a loss over the full logits holds them (with fused_loss false).  DEFAULT: the 16-bit
   logits and one fp32 copy for backward (Megatron-Core's vocab-parallel cross-entropy, whose
   backward writes the gradient into that copy).  16BIT: a kernel that reads the 16-bit logits
   and keeps only a per-token log-sum-exp (flash-attn's cross-entropy: llm-foundry's default
   loss_fn; Transformer Engine's, which writes the gradient into its input).  HF: Hugging Face
   modeling code with PyTorch's cross_entropy (transformers >= 4.45 ForCausalLMLoss): the model
   output keeps the 16-bit logits, the loss upcasts them and saves the fp32 log-softmax, whose
   backward holds two fp32 gradients at once.  HF_FP32_LOGITS: transformers <= 4.44, whose
   forward upcast the logits itself (logits = logits.float()) and returned the fp32 copy.
   UPCAST: PyTorch's cross_entropy over an fp32 copy of logits the caller frees before the
   backward (torchtitan's train.py of 2024: cross_entropy(pred.flatten(0, 1).float(), ...),
   uncompiled, then "del pred" before loss.backward()): the fp32 log-softmax and two fp32
   gradients at the log-softmax's backward, 12 bytes per logit.
   CHUNKED (with fused_loss): TRL's chunked_nll (trl/trainer/sft_trainer.py
   _chunked_cross_entropy_loss): the head's projection and the loss over checkpointed chunks
   of 256 tokens in fp32, with the head's weight upcast per chunk (src/eval/memory.c). */
enum tp_loss_impl { TP_LOSS_DEFAULT = 0, TP_LOSS_16BIT, TP_LOSS_HF, TP_LOSS_HF_FP32_LOGITS,
                    TP_LOSS_UPCAST, TP_LOSS_CHUNKED };

struct tp_job {
    enum tp_task task;
    enum tp_optimizer optimizer;
    enum tp_precision precision;
    enum tp_framework framework;
    enum tp_attn_impl attn_impl;
    uint64_t seq;              /* tokens per sample */
    uint32_t doc_len;          /* packed sequences: the mean length of the documents packed
                                  into a sample, each attending only within itself
                                  (FlashAttention varlen / Transformer Engine THD with
                                  cu_seqlens); 0 = one document fills the sample */
    uint32_t lora_rank;        /* LoRA / QLoRA adapter rank */
    uint32_t lora_targets;     /* TP_LORA_* mask */
    bool dropout;              /* activations keep dropout masks (GPT-2/3-era recipes) */
    bool fused_loss;           /* chunked/fused cross-entropy: no full fp32 logits copy */
    bool grad_16bit;           /* Megatron's main gradients and their reduction in 16 bits
                                  (grad_reduce_in_fp32 False: Megatron-Bridge and NeMo 2
                                  performance recipes); else fp32 where the stack keeps them */
    bool tp_comm_overlap;      /* TP collectives overlapped with GEMMs (Transformer Engine
                                  userbuffers: Megatron-Core --tp-comm-overlap, NeMo's
                                  tp_comm_overlap; torchtitan async TP) */
    bool no_async_tp_allreduce; /* the stack's async backward TP all-reduce beside the weight
                                  gradient off (Megatron --no-async-tensor-model-parallel-
                                  allreduce; Megatron-LM before 2021-09 had none) */
    bool fp8_param_gather;     /* the GEMM weights stored in the FP8 format (1 byte, 1 + 1/32
                                  with MXFP8's block scales) instead of 16 bits, and the
                                  data-parallel parameter all-gather in it; fp32 master weights
                                  stay in the optimizer (Megatron-Core --fp8-param-gather: "Keep
                                  the compute param in fp8 ... and perform the param all-gather
                                  in fp8", megatron/training/arguments.py; TE fp8_model_init).
                                  precision fp8 or mxfp8 only */
    bool fp8_attention;        /* the attention kernels (QK^T, PV and their backward) in FP8:
                                  Megatron-Core --fp8-dot-product-attention, Transformer
                                  Engine's fp8_dpa (cuDNN's FP8 fused attention).  An FP8 or
                                  FP4 precision on a GPU with FP8 tensor cores only */
    bool fp8_act_store;        /* the gated MLP's activation input kept in FP8 for its backward
                                  (Megatron-Core --activation-func-fp8-input-store; NeMo's and
                                  AMD's MLPerf FP8_ACT / FP8_ACTIVATION): memory only.  An FP8 or
                                  FP4 precision only */
    enum tp_frozen_format frozen_weights; /* task lora: the frozen GEMM weights' storage
                                  format (MLPerf's NVFP4 pre-quantized base); AUTO follows
                                  fp8_param_gather (memory only) */
    enum tp_fp8_recipe fp8_recipe; /* precision fp8: how the recipe scales its tensors */
    enum tp_loss_impl loss_impl; /* the loss over the full logits (unless fused_loss) */
    bool kbit_fp32;            /* QLoRA through PEFT's prepare_model_for_kbit_training (TRL's
                                  SFTTrainer for a 4-bit model outside FSDP): the non-quantized
                                  weights, the residual stream and the logits in fp32 */
    enum tp_moe_impl moe_impl; /* TP_MOE_DEFAULT: the stack's */
    bool zero_quant_weights;   /* DeepSpeed ZeRO++ qwZ (zero 3): the weights all-gathered as
                                  int8 blocks (zero_quantized_weights) */
    bool zero_quant_grads;     /* DeepSpeed ZeRO++ qgZ (zero 3): the gradients reduced by int4
                                  all-to-alls, within the node then across
                                  (zero_quantized_gradients) */
    bool z3_leaf;              /* ZeRO-3 fetches an MoE block's experts as one leaf module
                                  (deepspeed.utils.set_z3_leaf_modules), not expert by expert */
    bool fsdp_backend;         /* the Hugging Face / Axolotl stack shards with PyTorch FSDP2
                                  (Accelerate; Axolotl fsdp_version 2), not DeepSpeed ZeRO */
    bool moe_a2a_overlap;      /* Megatron-Core --overlap-moe-expert-parallel-comm: the combined
                                  1F1B schedule runs one micro-batch's forward with another's
                                  backward, each hiding the other's MoE all-to-all (model_parallel
                                  _config.py; since Megatron-Core 0.14, 2025-08) */
    bool moe_fused_mlp;        /* Megatron-Core's fused expert MLP (TE op fuser, the CuTe DSL
                                  grouped GEMM with the GLU and the biases): no eager passes
                                  around biased, clamped experts (time_block.c); set by the
                                  runs reader from a recipe's cutedsl_fused_grouped_mlp */
    double moe_capacity;       /* token-dropping capacity factor; 0 = dropless */
    bool moe_pad_capacity;     /* Megatron-Core --moe-pad-expert-input-to-capacity: every
                                  expert's input padded to its capacity (moe_comm.c) */
    enum tp_moe_dispatcher moe_dispatcher; /* how tokens reach their experts (moe_comm.c) */
    enum tp_cuda_graphs cuda_graphs; /* what the host replays as CUDA graphs (host.c) */
    bool log_params_norm;      /* Megatron's --log-params-norm: the parameters' L2 norm every
                                  step, a walk over every tensor, all-reduces and a host read
                                  (host_log.c) */
    bool log_num_zeros;        /* Megatron-Core's --log-num-zeros-in-grad: the zeros of every
                                  gradient tensor counted every step (host_log.c) */
    double moe_imbalance;      /* dropless: busiest EP rank's load over the mean (>= 1); 0 =
                                  derived from moe_routing (moe_skew.c) */
    enum tp_moe_routing moe_routing; /* what the router meets (moe_skew.c) */
    double trainable_frac;     /* share of the processed token slots the user's throughput
                                  counts (0 < f <= 1; 1 = every slot).  Axolotl >= 0.13 logs
                                  tokens_per_second_per_gpu over trainable tokens only (labels
                                  != -100: no prompt turns, no padding; axolotl PR #3072); the
                                  token budget counts the same tokens */
    /* Framework overhead (explicit and overridable; docs/physics.md §3.8 [heuristic]) */
    double overhead_base_bytes;   /* CUDA context, cuBLAS/flash workspaces */
    double overhead_comm_bytes;   /* per live NCCL communicator */
    double nccl_buffsize;         /* NCCL_BUFFSIZE: the Simple protocol's buffer per channel
                                     and peer, bytes (NCCL's default 4 MiB) */
    double overhead_frag;         /* allocator fragmentation, fraction of states + activations
                                     (logits included) */
    bool expandable_segments;     /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (torchtitan's
                                     run_train.sh sets it: implied for that stack) */
};

/* DUALPIPE: DeepSeek-V3's bidirectional pipeline (DeepSeek-V3 report §3.2.1, Table 2;
   github.com/deepseek-ai/DualPipe): rank i holds stage i and stage pp-1-i (two copies of the
   parameters), micro-batches enter from both ends, and each forward chunk runs beside another
   micro-batch's backward chunk so that either's all-to-all and pipeline transfers hide behind
   the other's compute; bubble (pp/2 - 1)(F&B + B - 3W), pp + 1 micro-batches of activations. */
enum tp_schedule { TP_SCHED_1F1B = 0, TP_SCHED_INTERLEAVED, TP_SCHED_GPIPE, TP_SCHED_DUALPIPE };

struct tp_layout {
    uint32_t dp, tp, pp, vpp, ep, etp, cp;
    bool sp;                   /* Megatron sequence parallelism (with tp > 1) */
    uint32_t zero;             /* 0..3: ZeRO stage / FSDP strategy (3 = FULL_SHARD) */
    uint32_t shard_group;      /* HSDP / MiCS: ranks per sharding group, the states replicated
                                  across groups (0 = the whole DP group) */
    uint32_t hpz;              /* DeepSpeed ZeRO++ hpZ (zero 3): ranks holding a secondary copy
                                  of the weights that the backward gathers from (0 or 1 = off);
                                  the states stay sharded over the whole DP group */
    uint32_t mbs, gas;         /* sequences per micro-batch; micro-batches per step */
    enum tp_recompute recompute;
    uint32_t recompute_layers; /* with TP_RECOMPUTE_FULL: only this many blocks per stage (0 = all) */
    uint32_t recompute_modules; /* with TP_RECOMPUTE_SELECTIVE: enum tp_recompute_module mask
                                   (0 = core_attn) */
    enum tp_offload offload;
    bool offload_activations;  /* the activations saved for backward are copied to host memory
                                  as they are made and back before they are used (transformers'
                                  gradient_checkpointing offload, torchtitan/TRL activation
                                  offloading, Megatron-Core fine-grained activation offloading) */
    uint32_t offload_layers;   /* with offload_activations: only the first this many blocks of a
                                  stage (Megatron-Core cpu_offloading_num_layers; 0 = all) */
    enum tp_schedule schedule;
    /* Uneven pipeline split (Megatron-Core --decoder-first/last-pipeline-num-layers), vpp == 1
       only: transformer blocks on the first / last stage, 0 = not given.  The stages not given
       share the remaining blocks equally (they must divide); both 0 = the default split. */
    uint32_t pp_first, pp_last;
    /* Megatron-Core's split per virtual stage (--pipeline-model-parallel-layout, or what
       --decoder-first/last-pipeline-num-layers and --account-for-embedding/loss-in-pipeline-split
       give with interleaving): pp_map[v] blocks on virtual stage v, which is chunk v / pp of
       rank v % pp, for pp_nv = pp * vpp stages in layer order; pp_nv 0 = no map (the split
       above).  Filled by tp_layout_pp_parse / tp_layout_pp_account, or by tp_layout_check from
       pp_first/pp_last when vpp > 1. */
    uint32_t pp_nv;
    uint16_t pp_map[TP_MAX_VSTAGES];
};

/* Fills a job with the defaults: pretrain, AdamW, bf16, DeepSpeed conventions, flash attention,
   seq 4096, LoRA rank 16 on all linear layers, dropless MoE with imbalance 1.2, overhead
   1.0 GB + 0.5 GB per communicator + 8% (docs/physics.md §3.8). */
TP_API void tp_job_init(struct tp_job *j);
/* Whether the job's attention kernel is native to async-MMA GPUs (FLASH3, or FLASH under
   Megatron-Core/NeMo, whose Transformer Engine runs cuDNN fused attention); FlashAttention-2
   and eager attention are not. */
TP_API bool tp_attn_native(const struct tp_job *j);
/* The length a job's attention spans: tp_job.doc_len where a kernel keeps packed documents
   apart (not eager attention, whose block-diagonal mask still fills s x s), else the sequence. */
TP_API double tp_attn_span(const struct tp_job *j);
/* The share of processed token slots the job's throughput and token budget count
   (tp_job.trainable_frac; 1 when unset). */
TP_API double tp_job_trainable_frac(const struct tp_job *j);

/* A software stack (--framework) as a first-class part of the model: what it can run and which
   kernels it runs (docs/stacks.md; each capability with the source it comes from). */
struct tp_stack {
    enum tp_framework fw;
    const char *key;        /* "megatron", "axolotl", ... */
    const char *aliases;    /* other names, comma-separated ("hf,trl" for axolotl) */
    const char *label;
    const char *source;     /* where the capabilities come from */
    bool tp, pp, vpp, cp, ep, sp, uneven_pp, offload;
    unsigned zero_mask;     /* bit z: ZeRO stage / FSDP sharding z the stack runs */
    bool ep_zero3;          /* expert parallel together with ZeRO-3 / full sharding */
    bool eager_modules;     /* Hugging Face modeling code op by op (no fused norms/rotary/GLU
                               unless a fused loss / Liger is on) */
    enum tp_moe_impl moe_impl; /* its MoE implementation (DEEPSPEED stacks: EAGER at ep 1) */
    bool fp32_grad_reduce;  /* reduces gradients in fp32 (Megatron main grads, FSDP2 default) */
    bool ds_zero;           /* its sharding is DeepSpeed's ZeRO (stage-2 per-micro-batch
                               reduce-scatter, bucket buffers, ZeRO-3 hooks per module) */
    bool fp8_rowwise;       /* runs torchao's row-wise FP8 recipe (tp_fp8_recipe) */
    bool fp8_tp_gather;     /* tensor-wise FP8 TP all-gathers its inputs in FP8 (torchao's
                               Float8ColwiseParallel / Float8RowwiseParallel) */
    bool ds_engine;         /* DeepSpeed's engine drives Megatron's model: unbatched blocking
                               pipeline p2p, the step's reduction after the last backward,
                               weight gradients accumulated outside the GEMM (host_ds.c) */
    bool tp_async_wgrad;    /* each column-parallel linear's backward TP collective runs beside
                               its weight-gradient GEMM (Megatron's async all-reduce) unless
                               the job sets no_async_tp_allreduce (time_block.c) */
    bool wgrad_main_grad;   /* weight-gradient GEMMs accumulate into the parameter's fp32
                               main_grad (gradient-accumulation fusion: hw_rates.c) */
    bool te_grouped_gemm;   /* grouped experts run Transformer Engine's GroupedLinear: one
                               cuBLAS GEMM per local expert over several streams (time_block.c) */
};
TP_API size_t tp_stack_count(void);
TP_API const struct tp_stack *tp_stack_get(enum tp_framework fw);
/* By key or alias, case-insensitive; TP_ENOTFOUND lists the keys. */
TP_API enum tp_status tp_stack_find(const char *name, const struct tp_stack **out, struct tp_error *err);
/* The MoE implementation a job runs: its own, else its stack's (DeepSpeed-MoE where the
   stack runs expert parallel through it and ep > 1; where the stack runs Hugging Face's modeling
   code, that code's own: dense over all experts for the llama4 family).  `m` may be NULL. */
TP_API enum tp_moe_impl tp_job_moe_impl(const struct tp_model *m, const struct tp_job *j,
                                        const struct tp_layout *l);
TP_API const char *tp_moe_impl_name(enum tp_moe_impl impl);
/* Whether the job shards the DeepSpeed way (ZeRO's buckets, per-micro-batch stage-2
   reduce-scatter, ZeRO-3 module hooks, ZeRO++): its stack's, unless the Hugging Face stack runs
   on FSDP2 (fsdp_backend). */
TP_API bool tp_job_ds_zero(const struct tp_job *j);
/* Whether DeepSpeed ZeRO-3 fetches the job's MoE blocks whole (set_z3_leaf_modules): --z3-leaf,
   or the Axolotl stack on ZeRO-3 for the model types Axolotl marks itself (MOE_ARCH_BLOCK).
   `m` may be NULL. */
TP_API bool tp_job_z3_leaf(const struct tp_model *m, const struct tp_job *j);
/* Whether the job's stack can run the layout; TP_EINVAL names the first thing it cannot
   ("axolotl runs no tensor parallelism (tp 4)"), for search and for layouts a user gives. */
TP_API enum tp_status tp_stack_check(const struct tp_model *m, const struct tp_job *j,
                              const struct tp_layout *l, struct tp_error *err);
/* dp = tp = pp = vpp = ep = cp = mbs = gas = 1 (0 for etp: = tp), zero 0, no recompute. */
TP_API void tp_layout_init(struct tp_layout *l);

/* Checks that layout, model, job and cluster fit together; derives dp (from n_gpus) when it is
   0 and etp when 0.  Messages say what does not divide what, with a hint. */
TP_API enum tp_status tp_layout_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, struct tp_layout *l, struct tp_error *err);
/* Checks the cluster's figures against the job: GPUs per node, finite non-negative peaks,
   bandwidths, and a tensor-core rate for the job's precision (fp8 on a GPU without FP8 units,
   or fp32 on one without fp32/tf32 rates, is TP_EINVAL, not a silent or infinite answer).
   tp_layout_check() calls it. */
TP_API enum tp_status tp_cluster_check(const struct tp_cluster *c, const struct tp_job *j,
                                struct tp_error *err);
/* Checks a run as the functions that take a checked layout need it (finalized model, cluster,
   job, layout sizes and world size, calibration unless NULL), without changing anything: what
   tp_time_step(), tp_memory_stage() and tp_run_evaluate() run first. */
struct tp_calib;
TP_API enum tp_status tp_run_check(const struct tp_model *m, const struct tp_cluster *c,
                            const struct tp_job *j, const struct tp_layout *l,
                            const struct tp_calib *cal, struct tp_error *err);
/* The dense peak the job's GEMMs run at and MFU is measured against: the 16-bit peak, or for
   fp32 jobs the TF32 tensor-core peak where the GPU has one (else its FP32 peak). */
TP_API double tp_job_peak_flops(const struct tp_cluster *c, const struct tp_job *j);
/* Parses Megatron-Core's --pipeline-model-parallel-layout string (pipeline_parallel_layer_
   layout.py: 'E' embedding, 't' a decoder block, 'm' an MTP block, 'L' the loss, '|' between
   virtual stages, "(..)*n" and "x*n" repeat, ',' cosmetic; e.g. "Et*3|(tt|)*29,m|L") into
   l->pp_map for the layout's pp (set l->pp first): the stage count fixes vpp (it must be a
   multiple of pp, and match a vpp > 1 already set), the embedding must come first and the loss
   last, exactly once each, and the 't's must number n_layers.  TP_EINVAL names what is wrong. */
TP_API enum tp_status tp_layout_pp_parse(const char *text, uint32_t n_layers, struct tp_layout *l,
                                         struct tp_error *err);
/* Megatron-Core's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-
   split: the embedding and/or the loss take one block's slot, so (n_layers + embedding + loss)
   must divide by pp * vpp; the first (last) virtual stage builds one block fewer.  Fills
   l->pp_map for l->pp and l->vpp. */
TP_API enum tp_status tp_layout_pp_account(uint32_t n_layers, bool embedding, bool loss,
                                           struct tp_layout *l, struct tp_error *err);
/* Writes l->pp_map as a layout string Megatron-Core parses ("Et*3|(t*2|)*29|t|L"); the
   default split of m (may be NULL: then "") when pp_nv is 0.  Returns what snprintf would. */
TP_API int tp_layout_pp_format(const struct tp_model *m, const struct tp_layout *l, char *buf,
                               size_t len);
/* Transformer blocks pipeline stage `stage` (0..pp-1) of a checked layout holds (all its
   interleaved chunks together).  Without pp_first/pp_last, stage s holds blocks
   [s L / pp, (s+1) L / pp): an uneven depth spreads its remainder over the later stages. */
TP_API uint32_t tp_stage_blocks(const struct tp_model *m, const struct tp_layout *l, uint32_t stage);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_CLUSTER_H */
