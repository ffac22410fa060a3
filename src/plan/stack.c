/*
 * stack.c - the software stacks (--framework): what each can run and which kernels it runs.
 *
 * The capability of each stack comes from its own argument parser or config schema (docs/stacks.md
 * lists the versions read):
 *   megatron            Megatron-LM / Megatron-Core, NeMo, Megatron-Bridge
 *                       (megatron/training/arguments.py): --tensor-/--pipeline-model-parallel-size,
 *                       --num-virtual-stages-per-pipeline-rank, --context-parallel-size,
 *                       --expert-model-parallel-size, --sequence-parallel,
 *                       --decoder-first/last-pipeline-num-layers, --use-distributed-optimizer,
 *                       --use-megatron-fsdp (full sharding), --optimizer-cpu-offload; MoE through
 *                       TEGroupedMLP (grouped GEMMs).
 *   megatron-deepspeed  Megatron-DeepSpeed (megatron/arguments.py): TP, SP and PP on DeepSpeed's
 *                       pipeline engine, which runs ZeRO 0/1 only with pp > 1
 *                       (deepspeed/runtime/pipe/engine.py) and no interleaving; partition
 *                       methods count the embedding as a layer (uneven splits); MoE through
 *                       DeepSpeed-MoE (expert parallel, ZeRO <= 2).
 *   deepspeed           DeepSpeed's engine: ZeRO 0-3 with offload, its PipelineModule (ZeRO 0/1),
 *                       DeepSpeed-MoE with expert parallel but not under ZeRO-3 (engine.py:
 *                       "Native DeepSpeed MoE is not supported with ZeRO Stage 3").
 *   axolotl (hf)        Hugging Face Trainer / Axolotl / TRL / LLaMA-Factory on DeepSpeed or FSDP:
 *                       data parallel with ZeRO 0-3 or FSDP, ring-attention context parallel
 *                       (Axolotl sequence_parallel_degree), expert parallel only through
 *                       DeepSpeed-MoE / Tutel (ZeRO <= 2); the Hugging Face modules op by op.
 *   fsdp                PyTorch FSDP / FSDP2 with DTensor TP and CP (no pipeline).
 *   torchtitan          FSDP2 + TP (with sequence parallel) + PP (interleaved schedules) + CP + EP.
 * torchao's row-wise FP8 recipe runs on the torchao stacks, torchtitan and one's own FSDP
 * (torchtitan --quantize.linear.float8.recipe_name rowwise); Transformer Engine has none and
 * Axolotl builds torchao's tensor-wise config (core/trainers/base.py).  torchtitan's tensor-wise
 * Float8 TP gathers in FP8 (torchao float8_tensor_parallel.py); row-wise communicates in 16 bits
 * (torchtitan docs/float8.md).
 */
#include "plan_internal.h"
#include "stack_rules.h"

#include <assert.h>
#include <string.h>
#include <strings.h>

#define Z(a) (1u << (a))
static const struct tp_stack STACKS[] = {
    [TP_FW_DEEPSPEED] = {
        .fw = TP_FW_DEEPSPEED, .key = "deepspeed",
        .aliases = "zero",
        .label = "DeepSpeed",
        .source = "DeepSpeed runtime/engine.py, pipe/engine.py, moe/layer.py",
        /* the layouts it runs */
        .tp = false, .pp = true, .vpp = false, .cp = false, .ep = true, .sp = false,
        .uneven_pp = false, .offload = true,
        .zero_mask = Z(0) | Z(1) | Z(2) | Z(3), .ep_zero3 = false,
        /* the kernels and conventions it runs */
        .eager_modules = false, .moe_impl = TP_MOE_EAGER, .fp32_grad_reduce = false,
        .ds_zero = true, .fp8_rowwise = false, .fp8_tp_gather = false,
    },
    [TP_FW_FSDP] = {
        .fw = TP_FW_FSDP, .key = "fsdp",
        .aliases = "fsdp2",
        .label = "PyTorch FSDP / FSDP2",
        .source = "torch.distributed.fsdp (ShardingStrategy), torch.distributed.tensor.parallel",
        /* the layouts it runs */
        .tp = true, .pp = false, .vpp = false, .cp = true, .ep = true, .sp = false,
        .uneven_pp = false, .offload = true,
        .zero_mask = Z(0) | Z(2) | Z(3), .ep_zero3 = true,
        /* the kernels and conventions it runs */
        .eager_modules = false, .moe_impl = TP_MOE_GROUPED, .fp32_grad_reduce = false,
        .ds_zero = false, .fp8_rowwise = true, .fp8_tp_gather = false,
    },
    [TP_FW_MEGATRON] = {
        .fw = TP_FW_MEGATRON, .key = "megatron",
        .aliases = "megatron-core,megatron-lm,mcore,nemo,megatron-bridge",
        .label = "Megatron-Core / NeMo / Megatron-Bridge",
        .source = "Megatron-LM megatron/training/arguments.py",
        /* the layouts it runs */
        .tp = true, .pp = true, .vpp = true, .cp = true, .ep = true, .sp = true,
        .uneven_pp = true, .offload = true,
        .zero_mask = Z(0) | Z(1) | Z(3), .ep_zero3 = true,
        /* the kernels and conventions it runs */
        .eager_modules = false, .moe_impl = TP_MOE_GROUPED, .fp32_grad_reduce = true,
        .ds_zero = false, .fp8_rowwise = false, .fp8_tp_gather = false,
        /* each column-parallel linear's input-gradient all-reduce (SP: reduce-scatter) issued
           with async_op=True beside its weight-gradient GEMM: Megatron-LM from 2021-09 (merge
           b462d25 of cf7efd4f, mpu/layers.py; on unless --no-async-tensor-model-parallel-
           allreduce), Megatron-Core's LinearWithGradAccumulationAndAsyncCommunication
           (core/tensor_parallel/layers.py), Transformer Engine's linear modules' backward */
        .tp_async_wgrad = true,
        /* TE's Linear / GroupedLinear write each weight gradient into the fp32 main_grad
           (fuse_wgrad_accumulation, Megatron-LM's default gradient-accumulation fusion); its
           TEGroupedMLP runs TE's multi-stream grouped GEMM */
        .wgrad_main_grad = true, .te_grouped_gemm = true,
    },
    [TP_FW_AXOLOTL] = {
        .fw = TP_FW_AXOLOTL, .key = "axolotl",
        .aliases = "hf,huggingface,trl,transformers,llama-factory,llamafactory,"
                   "ms-swift,swift",
        .label = "Hugging Face Trainer / Axolotl (DeepSpeed or FSDP)",
        .source = "Axolotl src/axolotl/utils/schemas/config.py; transformers Trainer",
        /* the layouts it runs */
        .tp = false, .pp = false, .vpp = false, .cp = true, .ep = true, .sp = false,
        .uneven_pp = false, .offload = true,
        .zero_mask = Z(0) | Z(1) | Z(2) | Z(3), .ep_zero3 = false,
        /* the kernels and conventions it runs */
        .eager_modules = true, .moe_impl = TP_MOE_EAGER, .fp32_grad_reduce = false,
        .ds_zero = true, .fp8_rowwise = false, .fp8_tp_gather = false,
    },
    [TP_FW_TORCHTITAN] = {
        .fw = TP_FW_TORCHTITAN, .key = "torchtitan",
        .aliases = "titan",
        .label = "torchtitan",
        .source = "torchtitan torchtitan/config/job_config.py (Parallelism)",
        /* the layouts it runs */
        .tp = true, .pp = true, .vpp = true, .cp = true, .ep = true, .sp = true,
        .uneven_pp = true, .offload = false,
        .zero_mask = Z(0) | Z(2) | Z(3), .ep_zero3 = true,
        /* the kernels and conventions it runs */
        .eager_modules = false, .moe_impl = TP_MOE_GROUPED, .fp32_grad_reduce = true,
        .ds_zero = false, .fp8_rowwise = true, .fp8_tp_gather = true,
    },
    [TP_FW_MEGATRON_DS] = {
        .fw = TP_FW_MEGATRON_DS, .key = "megatron-deepspeed",
        .aliases = "megatron_deepspeed,mds,bigscience",
        .label = "Megatron-DeepSpeed",
        .source = "Megatron-DeepSpeed megatron/arguments.py; DeepSpeed pipe/engine.py",
        /* the layouts it runs */
        .tp = true, .pp = true, .vpp = false, .cp = false, .ep = true, .sp = true,
        .uneven_pp = true, .offload = true,
        .zero_mask = Z(0) | Z(1), .ep_zero3 = false,
        /* the kernels and conventions it runs */
        .eager_modules = false, .moe_impl = TP_MOE_DEEPSPEED,
        /* DeepSpeed's engine reduces the 16-bit .grad (stage_1_and_2.py communication_data_type
           is the model's type; FP16_Optimizer's buffered_allreduce_fallback), not Megatron's
           fp32 main grads; BF16_Optimizer's fp32 gradients are time.c's exception */
        .fp32_grad_reduce = false,
        .ds_zero = true, .fp8_rowwise = false, .fp8_tp_gather = false,
        /* DeepSpeed's PipelineEngine / DeepSpeedEngine on Megatron's GPT (host_ds.c) */
        .ds_engine = true,
        /* never overlaps the backward TP all-reduce: the fork predates Megatron-LM's async
           path (none on its main line before the 2023-07 rebase), and the rebase's
           megatron/arguments.py sets async_tensor_model_parallel_allreduce = False under
           --deepspeed (f90b8877, 2023-07-12) */
        .tp_async_wgrad = false,
    },
};
#undef Z
#define N_STACKS (sizeof STACKS / sizeof STACKS[0])
/* one row per framework, at its enum value (tp_stack_get) */
static_assert(N_STACKS == TP_FW_COUNT, "STACKS: one row per enum tp_framework value");

size_t tp_stack_count(void)
{
    return N_STACKS;
}

const struct tp_stack *tp_stack_get(enum tp_framework fw)
{
    for (size_t i = 0; i < N_STACKS; i++)
        if (STACKS[i].fw == fw)
            return &STACKS[i];
    return &STACKS[0];
}

static bool alias_of(const char *aliases, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = aliases; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncasecmp(p, name, n) == 0)
            return true;
        p += len + (e != NULL);
    }
    return false;
}

enum tp_status tp_stack_find(const char *name, const struct tp_stack **out, struct tp_error *err)
{
    for (size_t i = 0; i < N_STACKS; i++)
        if (strcasecmp(STACKS[i].key, name) == 0 || alias_of(STACKS[i].aliases, name)) {
            *out = &STACKS[i];
            return TP_OK;
        }
    char keys[256] = "";
    for (size_t i = 0; i < N_STACKS; i++)
        tp_snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", i ? ", " : "",
                 STACKS[i].key);
    return tp_fail(err, TP_ENOTFOUND, "unknown framework \"%s\" (known: %s)", name, keys);
}

enum tp_moe_impl tp_job_moe_impl(const struct tp_model *m, const struct tp_job *j,
                                 const struct tp_layout *l)
{
    if (j->moe_impl != TP_MOE_DEFAULT)
        return j->moe_impl;
    const struct tp_stack *s = tp_stack_get(j->framework);
    /* DeepSpeed-MoE is how the DeepSpeed stacks run expert parallel */
    if (s->moe_impl == TP_MOE_EAGER && l && l->ep > 1)
        return TP_MOE_DEEPSPEED;
    /* transformers' Llama4TextMoe (modeling_llama4.py) repeats the hidden states once per
       expert and runs all of them; Axolotl's linearized experts keep that layout */
    if (s->moe_impl == TP_MOE_EAGER && m && strcmp(m->family, "llama4") == 0)
        return TP_MOE_DENSE;
    return s->moe_impl;
}

bool tp_job_ds_zero(const struct tp_job *j)
{
    return tp_stack_get(j->framework)->ds_zero && !j->fsdp_backend;
}

/* Axolotl marks an architecture's MoE block a DeepSpeed ZeRO-3 leaf module by itself [AX-Z3]:
   with ZeRO-3 on, ModelLoader._set_z3_leaf_modules calls deepspeed.utils.set_z3_leaf_modules
   for the model types of MOE_ARCH_BLOCK.  qwen3_moe is there from PR #2596 (2025-04-30), in
   every release from v0.10.0, before the users' runs (docs/moe.md); the rest as the table
   stands on main (2026-07) for the families trainplan knows.  bailing_moe (Ling/Ring 2.0) is in
   no version.  The other stacks leave it to --z3-leaf. */
static const char *const AXOLOTL_LEAF[] = {
    "dbrx",        "jamba",       "jetmoe",   "mixtral",  "phimoe",
    "qwen2_moe",   "qwen3_moe",   "qwen3_vl_moe", "deepseek_v2", "deepseek_v3",
    "gpt_oss",     "glm4_moe",    "lfm2_moe", "minimax_m2", "nemotron_h"};

bool tp_job_z3_leaf(const struct tp_model *m, const struct tp_job *j)
{
    if (j->z3_leaf)
        return true;
    if (j->framework != TP_FW_AXOLOTL || !tp_job_ds_zero(j) || !m || m->n_experts == 0)
        return false;
    for (size_t i = 0; i < sizeof AXOLOTL_LEAF / sizeof AXOLOTL_LEAF[0]; i++)
        if (strcmp(m->family, AXOLOTL_LEAF[i]) == 0)
            return true;
    return false;
}

/* The Hugging Face stack on FSDP2 (Accelerate's FullyShardedDataParallelPlugin, Axolotl's
   fsdp_version 2): FSDP shards by strategy (no_shard, shard_grad_op, full_shard, hybrid) with
   no optimizer-only stage, and DeepSpeed's extensions do not exist there.  Expert parallel in
   this stack is DeepSpeed-MoE's (ZeRO <= 2); Axolotl's later DeepEP integration for FSDP2
   (integrations/expert_parallel, 2026) is not modelled. */
static enum tp_status fsdp_backend_check(const struct tp_job *j, const struct tp_layout *l,
                                         struct tp_error *err)
{
    if (!j->fsdp_backend)
        return TP_OK;
    if (j->framework != TP_FW_AXOLOTL)
        return tp_fail_field(err, TP_EINVAL, "fsdp_backend",
                             "fsdp_backend chooses FSDP2 under the Hugging Face / Axolotl stack "
                             "(framework axolotl), not %s", tp_stack_get(j->framework)->key);
    if (l->zero == 1)
        return tp_fail_field(err, TP_EINVAL, "fsdp_backend",
                             "FSDP has no optimizer-only sharding (zero 1): no_shard, "
                             "shard_grad_op or full_shard");
    if (l->ep > 1)
        return tp_fail_field(err, TP_EINVAL, "fsdp_backend",
                             "axolotl on FSDP2: expert parallel (ep %u) is modelled through "
                             "DeepSpeed-MoE under DeepSpeed ZeRO 0-2 only", l->ep);
    if (j->z3_leaf)
        return tp_fail_field(err, TP_EINVAL, "z3_leaf",
                             "z3_leaf is DeepSpeed ZeRO-3's (set_z3_leaf_modules); FSDP2 gathers "
                             "each wrapped block whole");
    return TP_OK;
}

const char *tp_moe_impl_name(enum tp_moe_impl impl)
{
    static const char *const NAMES[] = {
        [TP_MOE_DEFAULT] = "default", [TP_MOE_EAGER] = "eager", [TP_MOE_GROUPED] = "grouped",
        [TP_MOE_DEEPSPEED] = "deepspeed", [TP_MOE_DENSE] = "dense",
    };
    static_assert(sizeof NAMES / sizeof NAMES[0] == TP_MOE_DENSE + 1,
                  "NAMES: one per enum tp_moe_impl value");
    return (unsigned)impl < sizeof NAMES / sizeof NAMES[0] ? NAMES[impl] : "?";
}

/* Megatron-LM --optimizer-cpu-offload asserts --use-precision-aware-optimizer (arguments.py),
   which runs only with the distributed optimizer (core/optimizer/__init__.py), and it moves the
   optimizer, never the parameters.  The other stacks that offload at all (DeepSpeed's
   ZeRO-Offload and ZeRO-Infinity, FSDP's CPUOffload) are not restricted here. */
bool tp_stack_offloads(const struct tp_job *j, uint32_t zero, enum tp_offload mode)
{
    if (mode == TP_OFFLOAD_NONE)
        return true;
    if (!tp_stack_get(j->framework)->offload)
        return false;
    if (j->framework == TP_FW_MEGATRON)
        return mode == TP_OFFLOAD_OPTIMIZER && zero == 1;
    return true;
}

/* Megatron-Core's EP A2A overlap (--overlap-moe-expert-parallel-comm) is Megatron's and needs
   an MoE model, and the recomputed modules may not hold the MoE block it overlaps; what
   TransformerConfig.__post_init__ asserts about the layout (ep, vpp, full recompute, 16-bit)
   is in the rules table (stack_rules.c). */
static enum tp_status a2a_overlap_check(const struct tp_model *m, const struct tp_job *j,
                                        const struct tp_layout *l, struct tp_error *err)
{
    if (!j->moe_a2a_overlap)
        return TP_OK;
    const char *what = "moe_a2a_overlap (--overlap-moe-expert-parallel-comm)";
    if (j->framework != TP_FW_MEGATRON)
        return tp_fail_field(err, TP_EINVAL, "moe_a2a_overlap",
                             "%s is Megatron-Core's: framework megatron, not %s", what,
                             tp_stack_get(j->framework)->key);
    if (m->n_experts == 0)
        return tp_fail_field(err, TP_EINVAL, "moe_a2a_overlap", "%s needs an MoE model", what);
    if (l->recompute == TP_RECOMPUTE_SELECTIVE && (l->recompute_modules & TP_RC_MOE))
        return tp_fail_field(err, TP_EINVAL, "moe_a2a_overlap",
                             "%s runs without moe among the recomputed modules", what);
    return TP_OK;
}

/* CUDA graphs (host.c) are priced for Megatron-Core, whose assertions say where they cannot
   run (NVIDIA/Megatron-LM d98e8a64, 2026-08: megatron/core/transformer/transformer_config.py
   __post_init__ and docs/user-guide/features/cuda_graph.md):
   - per-layer graphs with full recompute: "full recompute is only supported with full
     iteration CUDA graph."; with CPU offloading: "CUDA graphs not supported with CPU
     offloading." (full_iteration excepted);
   - a whole iteration over a dropless MoE: "MoE expert dispatch involves dynamic shapes and
     cannot be captured" (cuda_graph.md; the dispatcher copies its split sizes to the host:
     moe_host.c), so full_iteration needs static shapes: a capacity factor with padding
     (--moe-pad-expert-input-to-capacity; "moe cuda graph is only supported with
     drop-padding MoE.") or the paged stash of the dev branch, not priced here. */
static enum tp_status cuda_graphs_check(const struct tp_model *m, const struct tp_job *j,
                                        const struct tp_layout *l, struct tp_error *err)
{
    if (j->cuda_graphs == TP_CUDA_GRAPHS_NONE)
        return TP_OK;
    const char *g = j->cuda_graphs == TP_CUDA_GRAPHS_FULL ? "full" : "layer";
    if (j->framework != TP_FW_MEGATRON)
        return tp_fail_field(err, TP_EINVAL, "cuda_graphs",
                             "cuda_graphs %s is priced for Megatron-Core (--cuda-graph-impl): "
                             "framework megatron, not %s", g, tp_stack_get(j->framework)->key);
    if (j->cuda_graphs == TP_CUDA_GRAPHS_FULL)
        return m->n_experts > 0 && !j->moe_pad_capacity
                   ? tp_fail_field(err, TP_EINVAL, "cuda_graphs",
                                   "cuda_graphs full cannot capture a dropless MoE (its "
                                   "dispatcher's shapes come from the host): use "
                                   "--moe-capacity with --moe-pad-capacity, or cuda_graphs layer")
                   : TP_OK;
    if (l->recompute == TP_RECOMPUTE_FULL)
        return tp_fail_field(err, TP_EINVAL, "cuda_graphs",
                             "cuda_graphs layer does not run with full recompute (Megatron-Core: "
                             "\"full recompute is only supported with full iteration CUDA "
                             "graph.\"): use cuda_graphs full");
    if (l->offload_activations)
        return tp_fail_field(err, TP_EINVAL, "cuda_graphs",
                             "cuda_graphs layer does not run with activation offloading "
                             "(Megatron-Core: \"CUDA graphs not supported with CPU offloading.\")");
    return TP_OK;
}

/* DualPipe (deepseek-ai/DualPipe dualpipe.py step(): "assert num_ranks % 2 == 0", "num_chunks
   % 2 == 0 and num_chunks >= num_ranks * 2") runs its own two chunks per rank, so no
   interleaving.  Who runs it: DeepSeek's own trainer; Megatron-LM carries the schedule
   (megatron/core/pipeline_parallel/dualpipe, PR #5254) and Megatron forks wire it in
   (FlagScale use_dualpipev); torchtitan through torch.distributed.pipelining's DualPipeV.
   The MoE dispatchers: allgather and flex (DeepEP) are Megatron-Core's
   (--moe-token-dispatcher-type); torchtitan runs DeepEP too
   (parallelism.expert_parallel_comm_backend). */
static enum tp_status moe_schedule_check(const struct tp_job *j, const struct tp_layout *l,
                                         struct tp_error *err)
{
    const char *k = tp_stack_get(j->framework)->key;
    bool mcore = j->framework == TP_FW_MEGATRON, titan = j->framework == TP_FW_TORCHTITAN;
    if (j->moe_dispatcher == TP_MOE_DISPATCH_ALLGATHER && !mcore)
        return tp_fail_field(err, TP_EINVAL, "moe_dispatcher",
                             "moe_dispatcher allgather is Megatron-Core's: framework megatron, "
                             "not %s", k);
    if (j->moe_dispatcher == TP_MOE_DISPATCH_FLEX && !mcore && !titan)
        return tp_fail_field(err, TP_EINVAL, "moe_dispatcher",
                             "moe_dispatcher flex (DeepEP) runs under megatron or torchtitan, "
                             "not %s", k);
    /* HybridEP: Megatron-Core's flex dispatcher backend (--moe-flex-dispatcher-backend
       hybridep) and torchtitan's (its DeepEP / HybridEP expert-parallel backends) */
    if (j->moe_dispatcher == TP_MOE_DISPATCH_HYBRIDEP && !mcore && !titan)
        return tp_fail_field(err, TP_EINVAL, "moe_dispatcher",
                             "moe_dispatcher hybridep (DeepEP's HybridEP) runs under megatron or "
                             "torchtitan, not %s", k);
    /* Megatron-Core's padding to capacity (transformer_config.py __post_init__:
       "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity";
       token_dispatcher.py MoEFlexTokenDispatcher: "Flex token dispatcher does not support
       --moe-pad-expert-input-to-capacity"); DeepSpeed-MoE pads by itself (time_block.c) */
    if (j->moe_pad_capacity && !mcore)
        return tp_fail_field(err, TP_EINVAL, "moe_pad_capacity",
                             "moe_pad_capacity (--moe-pad-expert-input-to-capacity) is "
                             "Megatron-Core's: framework megatron, not %s", k);
    if (j->moe_pad_capacity && !(j->moe_capacity > 0))
        return tp_fail_field(err, TP_EINVAL, "moe_pad_capacity",
                             "moe_pad_capacity pads each expert to its capacity: it needs a "
                             "capacity factor (moe_capacity)");
    if (j->moe_pad_capacity && j->moe_dispatcher == TP_MOE_DISPATCH_FLEX)
        return tp_fail_field(err, TP_EINVAL, "moe_pad_capacity",
                             "moe_pad_capacity does not run with moe_dispatcher flex (Megatron-Core: "
                             "\"Flex token dispatcher does not support "
                             "--moe-pad-expert-input-to-capacity\")");
    if (l->schedule != TP_SCHED_DUALPIPE)
        return TP_OK;
    if (!mcore && !titan)
        return tp_fail_field(err, TP_EINVAL, "schedule",
                             "schedule dualpipe runs under megatron or torchtitan, not %s", k);
    if (l->pp < 2 || l->pp % 2)
        return tp_fail_field(err, TP_EINVAL, "schedule",
                             "schedule dualpipe needs an even pipeline of 2 or more stages (pp %u)",
                             l->pp);
    if (l->vpp > 1)
        return tp_fail_field(err, TP_EINVAL, "schedule",
                             "schedule dualpipe runs two chunks per rank of its own: no vpp (%u)",
                             l->vpp);
    if (!tp_dualpipe_gas_ok(l))
        return tp_fail_field(err, TP_EINVAL, "schedule",
                             "schedule dualpipe needs an even number of micro-batches, at least "
                             "2 x pp = %u (gas %u)", 2 * l->pp, l->gas);
    return TP_OK;
}

bool tp_dualpipe_gas_ok(const struct tp_layout *l)
{
    return l->schedule != TP_SCHED_DUALPIPE || (l->gas % 2 == 0 && l->gas >= 2 * l->pp);
}

/* FlashAttention 1.x (--attention flash1) where its kernels exist ([FA1-CODE]).  flash-attn
   v1.0.9 (the last 1.x release) compiles sm_75, sm_80 and sm_90 code only (setup.py,
   -gencode ...,code=sm_XX, no PTX) and its mha_fwd / mha_bwd refuse other devices (fmha_api.cpp:
   TORCH_CHECK(is_sm90 || is_sm8x || is_sm75)), fp16 and bf16 inputs only, head dims multiples of
   8 up to 128 (TORCH_CHECK((head_size % 8 == 0) && (head_size <= 128))) and one head dim for
   q, k and v; its README: "Head dim > 64 backward requires A100 or H100" (the sm86 / sm89
   backward kernels run out of shared memory).  No FP8 kernel.  So: A100 / A800 (sm80), A6000
   (sm86), L40S and RTX 4090 (sm89) at head dim <= 64, the Hopper parts (sm90); not V100 (sm70),
   Blackwell (sm100, sm103, sm120), nor AMD, Intel or Gaudi (the ROCm port of the 1.x interface is
   another kernel, not measured). */
enum tp_status tp_flash1_check(const struct tp_model *m, const struct tp_cluster *c,
                               const struct tp_job *j, struct tp_error *err)
{
    if (j->attn_impl != TP_ATTN_FLASH1)
        return TP_OK;
    const char *key = c->gpu.key ? c->gpu.key : "";
    bool full = tp_in_list("a100-40gb|a100-80gb|a800-80gb|h100-sxm|h800|h100-pcie|h100-96gb|"
                           "h200|h20",
                           key),
         small = tp_in_list("a6000|l40s|rtx4090", key);
    if (!full && !small)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1: FlashAttention 1.x has kernels for sm75, sm8x and "
                             "sm90 only (flash-attn 1.0.9), not %s: use flash2 or flash3",
                             *key ? key : "this GPU");
    if (j->precision == TP_PREC_FP32)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1: FlashAttention 1.x runs fp16 or bf16, not fp32");
    if (j->fp8_attention)
        return tp_fail_field(err, TP_EINVAL, "fp8_attention",
                             "fp8_attention runs cuDNN's fused attention or FlashAttention-3, not "
                             "attention flash1 (FlashAttention 1.x has no FP8 kernel)");
    if (!m)
        return TP_OK;
    if (m->attn == TP_ATTN_MLA)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1: FlashAttention 1.x takes one head dim for q, k and "
                             "v; multi-head latent attention's differ (use flash2 or flash3)");
    uint32_t d = m->head_dim;
    if (d == 0 || d % 8 || d > 128)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1: FlashAttention 1.x runs head dims that are "
                             "multiples of 8 up to 128, not %u (use flash2)", d);
    if (small && d > 64)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1: FlashAttention 1.x's backward for head dim %u "
                             "(> 64) needs an A100 or H100, not %s", d, key);
    return TP_OK;
}

enum tp_status tp_stack_check(const struct tp_model *m, const struct tp_job *j,
                              const struct tp_layout *l, struct tp_error *err)
{
    const struct tp_stack *s = tp_stack_get(j->framework);
    const char *k = s->key;
    if (fsdp_backend_check(j, l, err) != TP_OK || moe_schedule_check(j, l, err) != TP_OK)
        return TP_EINVAL;
    if (j->precision == TP_PREC_FP8 && j->fp8_recipe == TP_FP8_ROWWISE && !s->fp8_rowwise)
        return tp_fail_field(err, TP_EINVAL, "fp8_recipe",
                             "fp8_recipe rowwise is torchao's recipe: framework torchtitan or "
                             "fsdp, not %s (Transformer Engine and Axolotl scale tensor-wise)", k);
    /* FlashAttention 1.x: Megatron-DeepSpeed (--use-flash-attn at c08e2cc2 imports
       flash_attn_unpadded_func, --use-flash-attn-v1 since cc3a94c6), Megatron-LM's legacy model
       (megatron/legacy/model/transformer.py imports flash_attn_unpadded_func first), the
       Hugging Face / DeepSpeed / FSDP stacks on PyTorch 2.0-2.1 (SDPA's flash backend) or
       flash-attn 1.x patches; torchtitan began on PyTorch nightlies of 2024 (2.3+), whose SDPA
       runs FlashAttention-2.  Context parallelism's ring kernels (Transformer Engine's CP,
       ring-flash-attn, torch's ring attention) call FlashAttention-2 or cuDNN. */
    if (j->attn_impl == TP_ATTN_FLASH1 && j->framework == TP_FW_TORCHTITAN)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1: torchtitan runs on PyTorch 2.3 or newer, whose "
                             "SDPA flash backend is FlashAttention-2 (use flash2)");
    if (j->attn_impl == TP_ATTN_FLASH1 && l->cp > 1)
        return tp_fail_field(err, TP_EINVAL, "attention",
                             "attention flash1 with cp %u: context parallelism's ring attention "
                             "calls FlashAttention-2 or cuDNN, not FlashAttention 1.x", l->cp);
    if (l->tp > 1 && !s->tp)
        return tp_fail(err, TP_EINVAL, "%s runs no tensor parallelism (tp %u)", k, l->tp);
    if (l->pp > 1 && !s->pp)
        return tp_fail(err, TP_EINVAL, "%s runs no pipeline parallelism (pp %u)", k, l->pp);
    if (l->vpp > 1 && !s->vpp)
        return tp_fail(err, TP_EINVAL, "%s runs no interleaved pipeline (vpp %u)", k, l->vpp);
    if (l->cp > 1 && !s->cp)
        return tp_fail(err, TP_EINVAL, "%s runs no context parallelism (cp %u)", k, l->cp);
    if (l->ep > 1 && !s->ep)
        return tp_fail(err, TP_EINVAL, "%s runs no expert parallelism (ep %u)", k, l->ep);
    if (l->sp && l->tp > 1 && !s->sp)
        return tp_fail(err, TP_EINVAL, "%s runs no Megatron sequence parallelism", k);
    if ((l->pp_first || l->pp_last) && !s->uneven_pp)
        return tp_fail(err, TP_EINVAL, "%s runs no uneven pipeline split", k);
    if (l->offload != TP_OFFLOAD_NONE && !s->offload)
        return tp_fail(err, TP_EINVAL, "%s runs no CPU offload", k);
    if (l->offload != TP_OFFLOAD_NONE && !tp_stack_offloads(j, l->zero, l->offload))
        return j->framework == TP_FW_MEGATRON && l->offload == TP_OFFLOAD_PARAMS
                   ? tp_fail(err, TP_EINVAL, "%s offloads the optimizer, not the parameters "
                             "(--optimizer-cpu-offload)", k)
                   : tp_fail(err, TP_EINVAL, "%s: --optimizer-cpu-offload needs the "
                             "distributed optimizer (zero 1, not %u)", k, l->zero);
    if (l->zero > 3 || !(s->zero_mask & (1u << l->zero)))
        return tp_fail(err, TP_EINVAL, "%s runs no ZeRO stage / sharding %u", k, l->zero);
    /* ZeRO++ (qwZ, hpZ, qgZ) and MiCS are DeepSpeed ZeRO-3 features (runtime/zero/config.py:
       zero_quantized_weights, zero_hpz_partition_size, zero_quantized_gradients,
       mics_shard_size) */
    bool zpp = l->hpz > 1 || j->zero_quant_weights || j->zero_quant_grads;
    if (zpp && !tp_job_ds_zero(j))
        return tp_fail(err, TP_EINVAL, "%s%s runs no ZeRO++ (hpz, quantized weights or gradients "
                       "are DeepSpeed ZeRO-3 options)", k, j->fsdp_backend ? " on FSDP2" : "");
    if (zpp && l->zero != 3)
        return tp_fail(err, TP_EINVAL, "%s: ZeRO++ (hpz, quantized weights or gradients) needs "
                       "ZeRO-3 (zero %u)", k, l->zero);
    /* Megatron-FSDP (--use-megatron-fsdp, optim_grads_params) runs with TP, EP and CP, not with
       a pipeline (Megatron-Core developer guide, "Megatron FSDP", key features, M-Core 0.14) */
    if (j->framework == TP_FW_MEGATRON && l->zero == 3 && l->pp > 1)
        return tp_fail(err, TP_EINVAL,
                       "%s: Megatron-FSDP (full sharding) runs with tp, ep and cp but no pipeline "
                       "(zero 3 with pp %u)", k, l->pp);
    /* torchtitan's models and Megatron-DeepSpeed's GPT have no Mamba-2 or gated-DeltaNet
       blocks; Megatron-Core runs them (MambaModel, --hybrid-override-pattern; GatedDeltaNet) and
       the Hugging Face stacks through the modeling code */
    if ((j->framework == TP_FW_TORCHTITAN || j->framework == TP_FW_MEGATRON_DS) &&
        tp_model_hybrid(m))
        return tp_fail(err, TP_EINVAL,
                       "%s has no Mamba-2 / gated-DeltaNet blocks: hybrid models run on megatron "
                       "or the Hugging Face stacks (axolotl, deepspeed, fsdp)", k);
    if (m->n_experts > 0 && l->ep > 1) {
        enum tp_moe_impl impl = tp_job_moe_impl(m, j, l);
        if (impl == TP_MOE_EAGER || impl == TP_MOE_DENSE)
            return tp_fail(err, TP_EINVAL,
                           "the Hugging Face expert loop runs no expert parallelism (ep %u): "
                           "use the deepspeed or grouped MoE implementation", l->ep);
        /* DeepSpeed-MoE itself: rule deepspeed-moe-zero3 (stack_rules.c) */
        if (l->zero == 3 && impl != TP_MOE_DEEPSPEED && !s->ep_zero3)
            return tp_fail(err, TP_EINVAL,
                           "%s: DeepSpeed-MoE expert parallelism does not run under ZeRO-3 "
                           "(ep %u with zero 3)", k, l->ep);
    }
    TRY(a2a_overlap_check(m, j, l, err));
    TRY(cuda_graphs_check(m, j, l, err));
    /* Megatron's per-step logging flags (host_log.c): only its stacks have them */
    if ((j->log_params_norm || j->log_num_zeros) && j->framework != TP_FW_MEGATRON &&
        j->framework != TP_FW_MEGATRON_DS)
        return tp_fail_field(err, TP_EINVAL, j->log_params_norm ? "log_params_norm" : "log_num_zeros",
                             "%s is Megatron-LM's flag: framework megatron or megatron-deepspeed, "
                             "not %s",
                             j->log_params_norm ? "--log-params-norm" : "--log-num-zeros-in-grad",
                             tp_stack_get(j->framework)->key);
    /* the framework's own assertions about the layout, with their sources */
    return tp_stack_rules_check(m, j, l, err);
}
