/*
 * export_launch.c - the launch scripts of a plan: torchrun on every node (launch.sh) or a Slurm
 * batch script that runs it there (train.sbatch), with the environment the plan assumes.
 *
 * torchrun flags are those of torch/distributed/run.py (--nnodes, --nproc-per-node,
 * --standalone, --rdzv-backend, --rdzv-endpoint, --rdzv-id, -m); #SBATCH options those of
 * sbatch(1) (--job-name, --nodes, --ntasks-per-node, --gpus-per-node, --exclusive).
 */
#include "export_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum tp_export_stack tp_export_stack_of(const struct tp_export_plan *p)
{
    switch (p->j->framework) {
    case TP_FW_MEGATRON: return TP_STACK_MEGATRON;
    case TP_FW_AXOLOTL: return TP_STACK_AXOLOTL;
    case TP_FW_MEGATRON_DS: return TP_STACK_MEGATRON_DS;
    case TP_FW_DEEPSPEED:
        /* tp > 1 is only Megatron-DeepSpeed's; DeepSpeed's own pipeline engine runs pp */
        return p->l->tp > 1 ? TP_STACK_MEGATRON_DS : TP_STACK_DEEPSPEED;
    case TP_FW_TORCHTITAN: return TP_STACK_TORCHTITAN;
    case TP_FW_FSDP:
    case TP_FW_COUNT: break;
    }
    return TP_STACK_SCRIPT;
}

/* The environment the plan assumes.  Megatron-LM asks for CUDA_DEVICE_MAX_CONNECTIONS=1 with
   tensor or context parallelism (so TP/CP communication kernels are scheduled ahead of the
   GEMMs they overlap) and forbids it with Megatron-FSDP (megatron/training/arguments.py,
   validate_args); the EP all-to-all overlap wants a larger value ("1 or 32, which depends on
   which parallelization you want to prioritize"): the plan priced that overlap, so 32. */
static void environment(const struct tp_export_plan *p, enum tp_export_stack stack,
                        struct tp_sbuf *b)
{
    const struct tp_layout *l = p->l;
    bool megatron = stack == TP_STACK_MEGATRON || stack == TP_STACK_MEGATRON_DS;
    if (stack == TP_STACK_MEGATRON && p->j->moe_a2a_overlap)
        tp_sbuf_printf(b, "export CUDA_DEVICE_MAX_CONNECTIONS=32  # the EP all-to-all overlap's "
                          "streams run side by side\n");
    else if (megatron && (l->tp > 1 || l->cp > 1) && !(stack == TP_STACK_MEGATRON && l->zero >= 2))
        tp_sbuf_printf(b, "export CUDA_DEVICE_MAX_CONNECTIONS=1  # TP/CP communication "
                          "ordered before the GEMMs it overlaps\n");
    if (megatron)
        tp_sbuf_printf(b, "source ./%s\n", TP_EXPORT_MEGATRON_FILE);
    /* Axolotl trains on the datasets its YAML lists: none there is a start-up failure */
    if (stack == TP_STACK_AXOLOTL)
        tp_sbuf_printf(b, "grep -q '^datasets:' %s || { echo \"add datasets to %s\" >&2; "
                          "exit 2; }\n", TP_EXPORT_AXOLOTL_FILE, TP_EXPORT_AXOLOTL_FILE);
}

/* torchtitan's command-line options (torchtitan/config/configs.py @ b5bcd76c, TrainingConfig
   and ParallelismConfig; frozen but accepted): the plan's steps, token slots and degrees.  The
   model, optimizer and learning rate are the user's Trainer.Config (--module, --config). */
static void torchtitan_args(const struct tp_export_plan *p, struct tp_sbuf *b)
{
    const struct tp_layout *l = p->l;
    uint64_t seq = p->j->seq;
    uint64_t steps = p->o->steps ? p->o->steps
                     : p->o->tokens > 0 ? (uint64_t)ceil(p->o->tokens / ((double)p->gbs * seq))
                                        : 0;
    /* FSDP over the shard group (HSDP) or all of dp; DDP (zero 0) replicates */
    uint32_t shard = l->zero == 0 ? 1
                     : l->shard_group && l->shard_group < l->dp * l->cp && l->shard_group >= l->cp
                         ? l->shard_group / l->cp
                         : l->dp;
    tp_sbuf_printf(b, "    -m torchtitan.train \\\n"
                      "    --module \"${TORCHTITAN_MODULE:?set TORCHTITAN_MODULE to the module of "
                      "your Trainer.Config function}\" \\\n"
                      "    --config \"${TORCHTITAN_CONFIG:?set TORCHTITAN_CONFIG to that "
                      "function}\" \\\n");
    if (steps)
        tp_sbuf_printf(b, "    --training.steps %llu \\\n", (unsigned long long)steps);
    tp_sbuf_printf(b, "    --training.max_context_length %llu \\\n", (unsigned long long)seq);
    tp_sbuf_printf(b, "    --training.num_tokens_per_microbatch_per_dp_rank %llu \\\n",
                   (unsigned long long)(l->mbs * seq));
    tp_sbuf_printf(b, "    --training.num_tokens_per_train_step %llu \\\n",
                   (unsigned long long)(p->gbs * seq));
    tp_sbuf_printf(b, "    --parallelism.data_parallel_replicate_degree %u \\\n", l->dp / shard);
    tp_sbuf_printf(b, "    --parallelism.data_parallel_shard_degree %u \\\n", shard);
    tp_sbuf_printf(b, "    --parallelism.tensor_parallel_degree %u \\\n", l->tp);
    tp_sbuf_printf(b, "    --parallelism.pipeline_parallel_degree %u \\\n", l->pp);
    if (l->pp > 1) {
        tp_sbuf_printf(b, "    --parallelism.pipeline_parallel_schedule %s \\\n",
                       l->vpp > 1 ? "Interleaved1F1B" : "1F1B");
        tp_sbuf_printf(b, "    --parallelism.num_pp_microbatches %u \\\n", l->gas);
    }
    tp_sbuf_printf(b, "    --parallelism.context_parallel_degree %u \\\n", l->cp);
    tp_sbuf_printf(b, "    --parallelism.expert_parallel_degree %u \\\n", l->ep);
}

/* The program torchrun starts on every GPU, with its arguments and then the script's own
   ("$@": launch.sh ARGS, sbatch train.sbatch ARGS). */
static void entry(const struct tp_export_plan *p, enum tp_export_stack stack, struct tp_sbuf *b)
{
    const char *rest = " \"$@\"";
    switch (stack) {
    case TP_STACK_TORCHTITAN:
        torchtitan_args(p, b);
        tp_sbuf_printf(b, "   %s\n", rest);
        break;
    case TP_STACK_MEGATRON:
    case TP_STACK_MEGATRON_DS:
        tp_sbuf_printf(b, "    \"${MEGATRON_DIR:-.}/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"%s\n",
                       rest);
        break;
    case TP_STACK_AXOLOTL:
        tp_sbuf_printf(b, "    -m axolotl.cli.train %s%s\n", TP_EXPORT_AXOLOTL_FILE, rest);
        break;
    case TP_STACK_DEEPSPEED:
        tp_sbuf_printf(b, "    \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT to your training script}\" "
                          "--deepspeed --deepspeed_config %s%s\n", TP_EXPORT_DS_FILE, rest);
        break;
    case TP_STACK_SCRIPT:
        tp_sbuf_printf(b, "    \"${TRAIN_SCRIPT:?set TRAIN_SCRIPT to your training script}\"%s\n",
                       rest);
        break;
    }
}

static void torchrun_script(const struct tp_export_plan *p, enum tp_export_stack stack,
                            const char *summary, struct tp_sbuf *b)
{
    tp_sbuf_printf(b, "#!/bin/bash\n# torchrun launch, planned by %s\n", summary);
    if (p->nodes > 1)
        tp_sbuf_printf(b, "# Run on each of the %u nodes with MASTER_ADDR = the first node's "
                          "address.\n", p->nodes);
    tp_sbuf_printf(b, "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n");
    environment(p, stack, b);
    tp_sbuf_printf(b, "torchrun \\\n");
    if (p->nodes == 1) {
        tp_sbuf_printf(b, "    --standalone \\\n    --nnodes 1 \\\n");
    } else {
        tp_sbuf_printf(b, "    --nnodes %u \\\n", p->nodes);
    }
    tp_sbuf_printf(b, "    --nproc-per-node %u \\\n", p->gpus_per_node);
    if (p->nodes > 1)
        tp_sbuf_printf(b, "    --rdzv-backend c10d \\\n"
                          "    --rdzv-endpoint \"${MASTER_ADDR:?set MASTER_ADDR to the first "
                          "node}:${MASTER_PORT:-29500}\" \\\n"
                          "    --rdzv-id \"${RDZV_ID:-trainplan}\" \\\n");
    entry(p, stack, b);
}

static void slurm_script(const struct tp_export_plan *p, enum tp_export_stack stack,
                         const char *summary, struct tp_sbuf *b)
{
    const char *name = p->o->job_name ? p->o->job_name : "trainplan";
    tp_sbuf_printf(b, "#!/bin/bash\n");
    tp_sbuf_printf(b, "#SBATCH --job-name=%s\n", name);
    tp_sbuf_printf(b, "#SBATCH --nodes=%u\n", p->nodes);
    tp_sbuf_printf(b, "#SBATCH --ntasks-per-node=1\n");
    tp_sbuf_printf(b, "#SBATCH --gpus-per-node=%u\n", p->gpus_per_node);
    tp_sbuf_printf(b, "#SBATCH --exclusive\n");
    tp_sbuf_printf(b, "# Slurm batch script, planned by %s\n", summary);
    tp_sbuf_printf(b, "# Submit from this directory: sbatch %s\n", TP_EXPORT_SLURM_FILE);
    tp_sbuf_printf(b, "set -euo pipefail\n");
    environment(p, stack, b);
    tp_sbuf_printf(b, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
                      "head -n 1)\n");
    tp_sbuf_printf(b, "srun torchrun \\\n");
    tp_sbuf_printf(b, "    --nnodes %u \\\n", p->nodes);
    tp_sbuf_printf(b, "    --nproc-per-node %u \\\n", p->gpus_per_node);
    tp_sbuf_printf(b, "    --rdzv-backend c10d \\\n");
    tp_sbuf_printf(b, "    --rdzv-endpoint \"$MASTER_ADDR:29500\" \\\n");
    tp_sbuf_printf(b, "    --rdzv-id \"$SLURM_JOB_ID\" \\\n");
    entry(p, stack, b);
}

enum tp_status tp_export_add_launcher(const struct tp_export_plan *p, bool slurm,
                                      enum tp_export_stack stack, struct tp_error *err)
{
    struct tp_sbuf b = {0};
    char summary[512];
    tp_export_summary(p, summary, sizeof summary);
    if (slurm)
        slurm_script(p, stack, summary, &b);
    else
        torchrun_script(p, stack, summary, &b);
    return tp_export_add_sbuf(p->out, slurm ? TP_EXPORT_SLURM_FILE : TP_EXPORT_TORCHRUN_FILE,
                              &b, err);
}

enum tp_status tp_export_launch(const struct tp_export_plan *p, bool slurm,
                                struct tp_error *err)
{
    enum tp_export_stack stack = tp_export_stack_of(p);
    TRY(tp_export_add_launcher(p, slurm, stack, err));
    switch (stack) {
    case TP_STACK_MEGATRON:
    case TP_STACK_MEGATRON_DS:
        return tp_export_megatron(p, stack == TP_STACK_MEGATRON_DS, err);
    case TP_STACK_AXOLOTL:
        return tp_export_axolotl(p, err);
    case TP_STACK_DEEPSPEED: {
        enum tp_status st;
        json_t *d = tp_export_deepspeed_doc(p, false, false, &st, err);
        if (!d)
            return st != TP_OK ? st : tp_fail(err, TP_ENOMEM, "out of memory");
        return tp_export_add_json(p->out, d, err);
    }
    case TP_STACK_TORCHTITAN:
        tp_export_note(p->out, "torchtitan: the model, optimizer and learning rate are your "
                               "Trainer.Config (TORCHTITAN_MODULE, TORCHTITAN_CONFIG); the "
                               "launcher passes the plan's steps, token slots and degrees");
        if (p->l->sp != (p->l->tp > 1))
            tp_export_note(p->out, "sequence parallelism off with tp %u: set "
                                   "parallelism.enable_sequence_parallel False in your "
                                   "Trainer.Config", p->l->tp);
        break;
    case TP_STACK_SCRIPT:
        tp_export_note(p->out, "FSDP: the launcher runs your TRAIN_SCRIPT; trainplan writes no "
                               "FSDP config");
        break;
    }
    return TP_OK;
}
