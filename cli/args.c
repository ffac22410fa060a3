/*
 * args.c - one option table drives parsing, validation and --help for every command.
 *
 * Numbers are parsed strictly (the whole token must be a number: "8x" is an error, never 8),
 * in range, and zero only where zero means something.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum opt_kind {
    OPT_INT,   /* int64 field, value in [lo, hi] */
    OPT_REAL,  /* double field, value in [lo, hi] */
    OPT_STR,   /* const char * field */
    OPT_ENUM,  /* int field, value one of `choices` (index, or `values` entry) */
    OPT_CONST  /* int field set to `lo` (no value) */
};

struct opt {
    const char *name;    /* long name without "--" */
    const char *alias;   /* second name or NULL */
    enum opt_kind kind;
    size_t offset;       /* field in struct cli_args */
    double lo, hi;       /* inclusive range (OPT_CONST: lo is the value set) */
    const char *choices; /* OPT_ENUM: '|'-separated names */
    const int *values;   /* OPT_ENUM: value per choice (NULL = index) */
    unsigned cmds;
    const char *metavar;
    const char *help;
};

#define F(field) offsetof(struct cli_args, field)
#define S(field) offsetof(struct cli_args, shape.field)
#define SHAPE_CMDS (CMD_PARAMS | CMD_MEMORY | CMD_ESTIMATE | CMD_SEARCH | CMD_LOGS | CMD_EXPORT)
/* logs takes the run options to describe the measured run (its runs-file row) */
#define RUN_CMDS (CMD_MEMORY | CMD_ESTIMATE | CMD_LOGS | CMD_EXPORT)
/* options that describe the job and the cluster, not the layout: search takes these */
#define JOB_CMDS (RUN_CMDS | CMD_SEARCH | CMD_SIZE)
/* search's knobs: export --best runs the search */
#define SEARCH_CMDS (CMD_SEARCH | CMD_EXPORT)
/* the job options the checkpoint plan uses */
#define CK_JOB_CMDS (JOB_CMDS | CMD_CHECKPOINT)
#define CK_RUN_CMDS (RUN_CMDS | CMD_CHECKPOINT)

static const int MLP_VALUES[] = {TP_MLP_GELU, TP_MLP_GLU, TP_MLP_GLU};
static const int NORM_VALUES[] = {TP_NORM_LAYER, TP_NORM_RMS};
static const int POS_VALUES[] = {TP_POS_LEARNED, TP_POS_ROPE, TP_POS_ALIBI};
static const int FSDP_VALUES[] = {1, 2, 3, 4}; /* cli_args.fsdp: 0 = not given */
/* cli_args.framework: 0 = not given (the stack the layout needs), else enum tp_framework + 1 */
static const int FW_VALUES[] = {TP_FW_DEEPSPEED + 1,   TP_FW_FSDP + 1,   TP_FW_MEGATRON + 1,
                                TP_FW_AXOLOTL + 1,     TP_FW_AXOLOTL + 1, TP_FW_TORCHTITAN + 1,
                                TP_FW_MEGATRON_DS + 1, TP_FW_MEGATRON + 1};
static const int MOE_VALUES[] = {TP_MOE_EAGER,     TP_MOE_GROUPED, TP_MOE_DEEPSPEED,
                                 TP_MOE_DEEPSPEED, TP_MOE_GROUPED, TP_MOE_DENSE};
static const int LOG_FORMAT_VALUES[] = {TP_LOG_MEGATRON, TP_LOG_MEGATRON_DS, TP_LOG_HF,
                                        TP_LOG_TORCHTITAN, TP_LOG_NANOGPT, TP_LOG_LLMC,
                                        TP_LOG_JSON};

static const struct opt OPTS[] = {
    {"help", "h", OPT_CONST, F(help), 1, 1, NULL, NULL, ~0u, NULL, "show this help and exit"},
    {"format", NULL, OPT_ENUM, F(format), 0, 0, "table|json|csv", NULL, ~0u, "FMT",
     "output format (default table)"},
    {"svg", NULL, OPT_STR, F(svg), 0, 0, NULL, NULL,
     CMD_MEMORY | CMD_ESTIMATE | CMD_SEARCH | CMD_VALIDATE | CMD_LOGS | CMD_SIZE, "FILE",
     "also write the plot as SVG: memory per stage, the step-time breakdown, time against "
     "GPU-hours (search --gpus A..B), predicted against measured, the log's steps (the first "
     "log), loss against parameters"},
    /* logs */
    {"skip-warmup", NULL, OPT_INT, F(skip_warmup), 0, 1e9, NULL, NULL, CMD_LOGS, "N",
     "logged steps to skip as warm-up (default: the first 10%, at least 1, from 5 steps on)"},
    {"log-format", NULL, OPT_ENUM, F(log_format), 0, 0,
     "megatron|megatron-deepspeed|hf|torchtitan|nanogpt|llm.c|json", LOG_FORMAT_VALUES,
     CMD_LOGS, "NAME", "read the logs as this format (default: detected from the content)"},
    {"model", NULL, OPT_STR, F(model), 0, 0, NULL, NULL, CMD_LOGS, "MODEL",
     "the model trained (preset, config.json or shape flags): model FLOPs, MFU and the "
     "estimate's prediction next to the log"},
    {"row-out", NULL, OPT_STR, F(row_out), 0, 0, NULL, NULL, CMD_LOGS, "FILE",
     "write a runs-file row per log (validation/runs format: for validate, calibrate); needs "
     "--model and --gpu"},
    /* checkpoint */
    {"config", NULL, OPT_STR, F(config), 0, 0, NULL, NULL, CMD_CHECKPOINT, "FILE",
     "the model's config.json to compare with (default: MODEL, else the config.json beside the "
     "checkpoint)"},
    {"storage-gbps", NULL, OPT_REAL, F(storage_gbps), 0.001, 1e6, NULL, NULL,
     CMD_ESTIMATE | CMD_CHECKPOINT, "X",
     "checkpoint write bandwidth in GB/s, all ranks together: the time per save"},
    {"ckpt-every", NULL, OPT_INT, F(ckpt_every), 1, 1e12, NULL, NULL, CMD_ESTIMATE, "STEPS",
     "a checkpoint every STEPS optimizer steps: saves in the wall-clock (needs --storage-gbps)"},
    {"eval-every", NULL, OPT_INT, F(eval_every), 1, 1e12, NULL, NULL, CMD_ESTIMATE, "STEPS",
     "an evaluation pass every STEPS optimizer steps (with --eval-tokens)"},
    {"eval-tokens", NULL, OPT_REAL, F(eval_tokens), 1, 1e15, NULL, NULL, CMD_ESTIMATE, "N",
     "tokens of one evaluation pass (forward only)"},
    {"startup-min", NULL, OPT_REAL, F(startup_min), 0, 1e5, NULL, NULL, CMD_ESTIMATE, "M",
     "minutes of launch, NCCL and ZeRO initialisation before the first step"},
    {"seq", "seq-len", OPT_INT, F(seq), 1, 1 << 24, NULL, NULL, CMD_PARAMS | JOB_CMDS, "N",
     "sequence length (default: the model's, else 4096)"},
    {"doc-len", NULL, OPT_INT, F(doc_len), 1, 1 << 24, NULL, NULL, JOB_CMDS, "N",
     "packed samples: the mean length of the documents packed into each, attending only "
     "within themselves (FlashAttention varlen / TE THD: Axolotl sample_packing, NeMo and "
     "Megatron-Bridge packed sequences, TRL padding_free); default: one document per sample"},
    {"recompute", NULL, OPT_ENUM, F(recompute), 0, 0, "none|selective|full", NULL,
     CMD_PARAMS | RUN_CMDS, "MODE", "activation recompute (default none)"},
    /* cluster */
    {"gpu", NULL, OPT_STR, F(gpu), 0, 0, NULL, NULL, JOB_CMDS, "NAME",
     "accelerator from the catalog (trainplan gpus); default h100-sxm"},
    {"gpus", "num-gpus", OPT_INT, F(gpus), 1, 1 << 20, NULL, NULL, CK_JOB_CMDS, "N",
     "GPUs in the job (default: tp*pp*cp*dp, else 8); search also takes a list (8,16,32) or a "
     "range (8..512: doubling)"},
    {"gpus-per-node", NULL, OPT_INT, F(gpus_per_node), 1, 1024, NULL, NULL, JOB_CMDS, "K",
     "GPUs per node (default: the catalog's)"},
    {"hbm-gb", NULL, OPT_REAL, F(hbm_gb), 0.001, 1e5, NULL, NULL, JOB_CMDS, "X",
     "memory per GPU as the vendor states it (\"80 GB\" = 80 GiB), overriding the catalog"},
    {"peak-tflops", NULL, OPT_REAL, F(peak_tflops), 0.001, 1000000, NULL, NULL, JOB_CMDS, "X",
     "dense peak TFLOP/s in the job's precision (bf16/fp16, fp8 or fp32), overriding the "
     "catalog"},
    {"hbm-tbps", NULL, OPT_REAL, F(hbm_tbps), 0.001, 1000, NULL, NULL, JOB_CMDS, "X",
     "memory bandwidth per GPU in TB/s, overriding the catalog"},
    {"intra-gbps", NULL, OPT_REAL, F(intra_gbps), 0.001, 100000, NULL, NULL, JOB_CMDS, "X",
     "scale-up link (NVLink, xGMI) per GPU per direction in GB/s, overriding the catalog"},
    {"inter-gbps", NULL, OPT_REAL, F(inter_gbps), 0.001, 100000, NULL, NULL, JOB_CMDS, "X",
     "scale-out network (NIC) per GPU per direction in GB/s, overriding the catalog"},
    {"host-gbps", NULL, OPT_REAL, F(host_gbps), 0.001, 100000, NULL, NULL, JOB_CMDS, "X",
     "host link (PCIe) per GPU per direction in GB/s, overriding the catalog"},
    /* time and cost */
    {"calibration", NULL, OPT_STR, F(calibration), 0, 0, NULL, NULL,
     CMD_ESTIMATE | SEARCH_CMDS | CMD_VALIDATE | CMD_LOGS | CMD_SIZE, "FILE",
     "efficiency parameters (JSON, as `trainplan calibrate` writes) instead of the built-in "
     "defaults"},
    /* validate and calibrate */
    {"base", NULL, OPT_STR, F(base), 0, 0, NULL, NULL, CMD_CALIBRATE, "FILE|prior",
     "start from and regularise toward this calibration (default: the built-in defaults; "
     "\"prior\": the uncalibrated physics priors, how data/calibration.json is made)"},
    {"output", "o", OPT_STR, F(output), 0, 0, NULL, NULL, CMD_CALIBRATE | CMD_EXPORT, "FILE",
     "calibrate: write the fitted calibration here (JSON); export: the directory to write every "
     "file into (created if missing)"},
    /* export */
    {"to", NULL, OPT_STR, F(to), 0, 0, NULL, NULL, CMD_EXPORT, "FORMAT",
     "deepspeed, axolotl, megatron, megatron-deepspeed, torchrun or slurm"},
    {"best", NULL, OPT_CONST, F(best), 1, 1, NULL, NULL, CMD_EXPORT, NULL,
     "run the search (with --gbs and the search options) and export its fastest layout"},
    {"force", NULL, OPT_CONST, F(force), 1, 1, NULL, NULL, CMD_EXPORT, NULL,
     "export a layout that does not fit in memory, and replace the files -o DIR already "
     "holds"},
    {"base-model", NULL, OPT_STR, F(base_model), 0, 0, NULL, NULL, CMD_EXPORT, "ID",
     "Axolotl base_model (default: the preset's Hugging Face id or the config's directory)"},
    {"job-name", NULL, OPT_STR, F(job_name), 0, 0, NULL, NULL, CMD_EXPORT, "NAME",
     "Slurm job name (default trainplan)"},
    {"steps", NULL, OPT_INT, F(steps), 1, 1e12, NULL, NULL, CMD_EXPORT, "N",
     "the stopping point in optimizer steps (--train-iters, max_steps; instead of --tokens)"},
    {"lr", NULL, OPT_REAL, F(lr), 1e-12, 10, NULL, NULL, CMD_EXPORT, "LR",
     "peak learning rate (default: the task's from its published recipe, see docs/export.md)"},
    {"no-cv", NULL, OPT_CONST, F(no_cv), 1, 1, NULL, NULL, CMD_CALIBRATE, NULL,
     "skip the leave-one-source-out cross-validation (one fit per source)"},
    {"no-per-gpu", NULL, OPT_CONST, F(no_per_gpu), 1, 1, NULL, NULL, CMD_CALIBRATE, NULL,
     "fit global parameters only, no per-GPU GEMM rates"},
    {"min-gpu-rows", NULL, OPT_INT, F(min_gpu_rows), 1, 100000, NULL, NULL, CMD_CALIBRATE, "N",
     "rows a GPU type needs for its own GEMM rate (default 5)"},
    {"prior-weight", NULL, OPT_REAL, F(prior_weight), 0, 100, NULL, NULL, CMD_CALIBRATE, "W",
     "pull toward the base values, worth W rows (default 0.4; larger keeps closer)"},
    {"max-evals", NULL, OPT_INT, F(max_evals), 10, 1000000, NULL, NULL, CMD_CALIBRATE, "N",
     "objective evaluations per least-squares run (default 2500)"},
    {"starts", NULL, OPT_INT, F(starts), 1, 16, NULL, NULL, CMD_CALIBRATE, "N",
     "fit starts: the base, then the best of 256 quasi-random points (default 1)"},
    {"fold-rows", NULL, OPT_INT, F(fold_rows), 0, 100000000, NULL, NULL, CMD_CALIBRATE, "N",
     "each leave-one-source-out fold fits on at most N of the other sources' rows, evenly "
     "spaced (default 512; 0: every row)"},
    {"fit-rows", NULL, OPT_INT, F(fit_rows), 0, 100000000, NULL, NULL, CMD_CALIBRATE, "N",
     "fit at most N of the rows, evenly spaced; every row is predicted before and after "
     "(default 4096; 0: every row)"},
    {"max-folds", NULL, OPT_INT, F(max_folds), 0, 100000000, NULL, NULL, CMD_CALIBRATE, "N",
     "at most N folds: with more sources each fold holds out every N-th source (default 16; "
     "0 or 1: one fold per source)"},
    {"summary", NULL, OPT_CONST, F(summary), 1, 1, NULL, NULL, CMD_VALIDATE, NULL,
     "table format: only the summary, not every row"},
    {"tokens", NULL, OPT_REAL, F(tokens), 1, 1e17, NULL, NULL,
     CMD_ESTIMATE | CMD_SEARCH | CMD_LOGS | CMD_EXPORT, "N",
     "training tokens, for the wall-clock time, GPU-hours and cost (7.86e8 works); export: the "
     "stopping point (--train-samples, max_steps)"},
    {"epochs", NULL, OPT_REAL, F(epochs), 0.001, 1000000, NULL, NULL, CMD_ESTIMATE, "E",
     "epochs over --dataset-tokens (instead of --tokens)"},
    {"dataset-tokens", NULL, OPT_REAL, F(dataset_tokens), 1, 1e17, NULL, NULL,
     CMD_ESTIMATE, "N", "tokens in one epoch of the dataset (with --epochs)"},
    /* size */
    {"flops", NULL, OPT_REAL, F(flops), 1e15, 1e32, NULL, NULL, CMD_SIZE, "C",
     "training compute budget in FLOPs (model FLOPs: exact, causal)"},
    {"days", NULL, OPT_REAL, F(days), 1e-4, 36500, NULL, NULL, CMD_SIZE, "D",
     "with --gpu and --gpus: wall-clock days of training (the budget comes from the cluster)"},
    {"gpu-hours", NULL, OPT_REAL, F(gpu_hours), 1e-3, 1e12, NULL, NULL, CMD_SIZE, "H",
     "with --gpu and --gpus: GPU-hours of training (days = H / 24 / GPUs)"},
    {"fit", NULL, OPT_STR, F(fit), 0, 0, NULL, NULL, CMD_SIZE, "NAME",
     "scaling-law fit: besiroglu (default; agrees with hoffmann-1 and -2), hoffmann-3 (as "
     "printed; misses Hoffmann's own Table A3), kaplan (loss laws), hoffmann-1, hoffmann-2, "
     "deepseek, llama3 (optimum only; shapes' loss then from besiroglu)"},
    {"family", NULL, OPT_STR, F(family), 0, 0, NULL, NULL, CMD_SIZE, "NAME",
     "architecture family of the grid: llama3 (default), qwen3, gpt"},
    /* search */
    {"top", NULL, OPT_INT, F(top), 1, 1000, NULL, NULL, CMD_SEARCH | CMD_SIZE, "K",
     "layouts (search) or shapes (size) to list (default 5)"},
    {"max-tp", NULL, OPT_INT, F(max_tp), 1, 1024, NULL, NULL, SEARCH_CMDS, "N",
     "largest tensor-parallel size tried (default: GPUs per node)"},
    {"max-pp", NULL, OPT_INT, F(max_pp), 1, 1024, NULL, NULL, SEARCH_CMDS, "N",
     "largest pipeline size tried (default: the layers)"},
    {"max-cp", NULL, OPT_INT, F(max_cp), 1, 1024, NULL, NULL, SEARCH_CMDS, "N",
     "largest context-parallel size tried (default 1)"},
    {"max-ep", NULL, OPT_INT, F(max_ep), 1, 4096, NULL, NULL, SEARCH_CMDS, "N",
     "largest expert-parallel size tried (default: no limit)"},
    {"max-mbs", NULL, OPT_INT, F(max_mbs), 1, 4096, NULL, NULL, SEARCH_CMDS, "N",
     "largest micro-batch tried (default 16)"},
    {"mem-headroom", NULL, OPT_REAL, F(mem_headroom), 0, 0.9, NULL, NULL, SEARCH_CMDS, "F",
     "fraction of GPU memory to keep free (default 0)"},
    {"explain", NULL, OPT_STR, F(explain), 0, 0, NULL, NULL, CMD_SEARCH, "\"K=V ...\"",
     "why this layout ranks where it does or fails, e.g. \"tp=8 pp=4 mbs=2\" (keys tp pp vpp cp "
     "ep zero mbs recompute offload; the rest as the best layout)"},
    {"no-offload", NULL, OPT_CONST, F(no_offload), 1, 1, NULL, NULL, SEARCH_CMDS, NULL,
     "never offload the optimizer to the CPU"},
    {"recompute-modes", NULL, OPT_STR, F(recompute_modes), 0, 0, NULL, NULL, SEARCH_CMDS, "LIST",
     "recompute modes to try: a comma list of none, selective, full, partial (full on N blocks "
     "per stage; needs full); default all four"},
    {"zero-stages", NULL, OPT_STR, F(zero_stages), 0, 0, NULL, NULL, SEARCH_CMDS, "LIST",
     "ZeRO stages to try: a comma list of 0-3 (default all the stack runs; 0 = none, 1 = the "
     "distributed optimizer, 3 = FSDP / ZeRO-3)"},
    {"even-pp", NULL, OPT_CONST, F(even_pp), 1, 1, NULL, NULL, SEARCH_CMDS, NULL,
     "only even pipeline splits (no stages shortened for the embedding and the head)"},
    {"quiet", "q", OPT_CONST, F(quiet), 1, 1, NULL, NULL, SEARCH_CMDS | CMD_CALIBRATE | CMD_SIZE, NULL,
     "no progress line on stderr (it shows only on a terminal anyway)"},
    {"threads", NULL, OPT_INT, F(threads), 1, 256, NULL, NULL, SEARCH_CMDS | CMD_SIZE, "N",
     "worker threads (default: the online CPUs); the result does not depend on it"},
    {"gpu-hour-price", NULL, OPT_REAL, F(price), 0, 1000000, NULL, NULL,
     CMD_ESTIMATE | CMD_SEARCH | CMD_LOGS | CMD_SIZE, "P",
     "price of one GPU-hour, for the cost"},
    /* layout */
    {"dp", NULL, OPT_INT, F(dp), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "data-parallel ranks (default: gpus / (tp*pp*cp))"},
    {"tp", NULL, OPT_INT, F(tp), 1, 1024, NULL, NULL, RUN_CMDS, "N", "tensor-parallel ranks"},
    {"pp", NULL, OPT_INT, F(pp), 1, 1024, NULL, NULL, RUN_CMDS, "N", "pipeline stages"},
    {"vpp", NULL, OPT_INT, F(vpp), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "virtual pipeline chunks per stage (interleaved 1F1B)"},
    {"ep", NULL, OPT_INT, F(ep), 1, 4096, NULL, NULL, RUN_CMDS, "N", "expert-parallel ranks"},
    {"etp", NULL, OPT_INT, F(etp), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "expert tensor-parallel ranks (default = tp)"},
    {"cp", NULL, OPT_INT, F(cp), 1, 1024, NULL, NULL, RUN_CMDS, "N", "context-parallel ranks"},
    {"sp", NULL, OPT_CONST, F(sp), 1, 1, NULL, NULL, RUN_CMDS, NULL,
     "Megatron sequence parallelism (with --tp)"},
    {"zero", NULL, OPT_INT, F(zero), 0, 3, NULL, NULL, CK_RUN_CMDS, "0-3",
     "ZeRO stage: 1 optimizer, 2 + gradients, 3 + parameters sharded"},
    {"fsdp", NULL, OPT_ENUM, F(fsdp), 0, 0, "no_shard|shard_grad_op|full_shard|hybrid_shard",
     FSDP_VALUES, RUN_CMDS, "MODE",
     "FSDP strategy (= --zero 0|2|3|3 with --shard-group); without --framework the fsdp stack "
     "(torchtitan with a pipeline); under --framework axolotl, FSDP2 instead of DeepSpeed"},
    {"distributed-optimizer", NULL, OPT_CONST, F(distopt), 1, 1, NULL, NULL, RUN_CMDS, NULL,
     "Megatron distributed optimizer (= --zero 1)"},
    {"shard-group", NULL, OPT_INT, F(shard_group), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "HSDP / MiCS: ranks per sharding group, the states replicated across groups (DeepSpeed "
     "mics_shard_size)"},
    {"hpz", NULL, OPT_INT, F(hpz), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "ZeRO++ hpZ (zero 3, DeepSpeed): a secondary copy of the weights over N ranks, which the "
     "backward gathers from (zero_hpz_partition_size)"},
    {"mbs", "micro-batch", OPT_INT, F(mbs), 1, 1 << 16, NULL, NULL, RUN_CMDS, "N",
     "sequences per micro-batch (default 1)"},
    {"gas", "grad-accum", OPT_INT, F(gas), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "micro-batches per step (default 1, or gbs / (mbs*dp))"},
    {"gbs", "global-batch", OPT_INT, F(gbs), 1, 1 << 26, NULL, NULL, JOB_CMDS, "N",
     "sequences per optimizer step"},
    {"recompute-layers", NULL, OPT_INT, F(recompute_layers), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "with --recompute full: only N blocks per stage (partial recompute)"},
    {"pp-first", NULL, OPT_INT, F(pp_first), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "blocks on the first pipeline rank (uneven split; the ranks not given share the rest "
     "equally, each rank's blocks split equally over its --vpp chunks)"},
    {"pp-last", NULL, OPT_INT, F(pp_last), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "blocks on the last pipeline stage (uneven split, as --pp-first)"},
    {"recompute-modules", NULL, OPT_STR, F(recompute_modules), 0, 0, NULL, NULL, RUN_CMDS,
     "LIST",
     "selective recompute of Megatron-Core modules: core_attn (the default), layernorm, "
     "moe_act, mlp, moe, shared_experts, mla_up_proj (implies --recompute selective)"},
    {"pp-layout", NULL, OPT_STR, F(pp_layout), 0, 0, NULL, NULL, RUN_CMDS, "LAYOUT",
     "blocks per virtual stage: Megatron's --pipeline-model-parallel-layout string "
     "(\"Et*3|(tt|)*29,m|L\"; sets vpp), or embedding, loss or embedding,loss (the "
     "--account-for-...-in-pipeline-split slots)"},
    {"offload", NULL, OPT_ENUM, F(offload), 0, 0, "none|optimizer|params", NULL, RUN_CMDS, "WHAT",
     "CPU offload (ZeRO-Offload / ZeRO-Infinity)"},
    {"offload-activations", NULL, OPT_CONST, F(offload_activations), 1, 1, NULL, NULL, RUN_CMDS,
     NULL, "keep the activations saved for backward in host memory (two blocks' worth stay on "
     "the GPU)"},
    {"offload-layers", NULL, OPT_INT, F(offload_layers), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "with --offload-activations: only the first N blocks of each stage (Megatron-Core "
     "--cpu-offloading-num-layers; implies --offload-activations)"},
    {"schedule", NULL, OPT_ENUM, F(schedule), 0, 0, "1f1b|interleaved|gpipe|dualpipe", NULL,
     RUN_CMDS, "S", "pipeline schedule (default 1f1b; interleaved with --vpp; dualpipe: "
     "DeepSeek-V3's bidirectional pipeline, two copies of the parameters, all-to-all hidden)"},
    /* job */
    {"task", NULL, OPT_ENUM, F(task), 0, 0, "pretrain|sft|dpo|lora|qlora", NULL, CK_JOB_CMDS, "T",
     "what is trained (default pretrain)"},
    {"lora-rank", NULL, OPT_INT, F(lora_rank), 1, 65536, NULL, NULL, CK_JOB_CMDS, "R",
     "LoRA / QLoRA adapter rank (default 16)"},
    {"lora-targets", NULL, OPT_STR, F(lora_targets), 0, 0, NULL, NULL, JOB_CMDS, "LIST",
     "adapted modules: all, or a comma list of q,k,v,o,gate,up,down (default all)"},
    {"optimizer", NULL, OPT_ENUM, F(optimizer), 0, 0,
     "adamw|adamw-8bit|adamw-4bit|adafactor|sgd|sgd-momentum|adamw-bf16", NULL, CK_JOB_CMDS, "OPT",
     "optimizer (default adamw)"},
    {"precision", NULL, OPT_ENUM, F(precision), 0, 0, "bf16|fp16|fp8|fp32|mxfp8|nvfp4|mxfp4",
     NULL, CK_JOB_CMDS, "P",
     "training precision (default bf16, fp32 master weights; mxfp8, nvfp4 and mxfp4 need "
     "block-scaled tensor cores: B200, B300, GB200, GB300, MI355X)"},
    {"framework", NULL, OPT_ENUM, F(framework), 0, 0,
     "deepspeed|fsdp|megatron|axolotl|hf|torchtitan|megatron-deepspeed|nemo", FW_VALUES,
     JOB_CMDS, "STACK",
     "software stack: what it can run, its kernels and byte conventions (docs/stacks.md); "
     "default: megatron when the layout needs tp/pp/cp/sp, else deepspeed"},
    {"moe-impl", NULL, OPT_ENUM, F(moe_impl), 0, 0,
     "eager|grouped|deepspeed|tutel|megablocks|dense", MOE_VALUES, JOB_CMDS, "IMPL",
     "MoE experts: eager (Hugging Face loop), grouped (grouped GEMM: Megatron/TE, MegaBlocks), "
     "deepspeed (DeepSpeed-MoE/Tutel), dense (every expert over every token: HF Llama 4); "
     "default: the stack's"},
    {"zero-quantized-weights", NULL, OPT_CONST, F(zero_quant_weights), 1, 1, NULL, NULL,
     JOB_CMDS, NULL, "ZeRO++ qwZ (zero 3, DeepSpeed): weights all-gathered as int8"},
    {"zero-quantized-gradients", NULL, OPT_CONST, F(zero_quant_grads), 1, 1, NULL, NULL,
     JOB_CMDS, NULL, "ZeRO++ qgZ (zero 3, DeepSpeed): gradients reduced by int4 all-to-alls"},
    {"z3-leaf", NULL, OPT_CONST, F(z3_leaf), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "ZeRO-3 fetches each MoE block's experts at once (deepspeed.utils.set_z3_leaf_modules)"},
    {"attention", NULL, OPT_ENUM, F(attn_impl), 0, 0, "flash|eager|flash2|flash3|flex", NULL,
     JOB_CMDS, "IMPL", "attention kernel: flash = the framework's (megatron: TE/cuDNN, native to "
     "Hopper and Blackwell; the others: FlashAttention-2), flash2, flash3 (FA3/cuDNN), flex "
     "(PyTorch FlexAttention), eager (stores the s x s scores)"},
    {"tp-comm-overlap", NULL, OPT_CONST, F(tp_comm_overlap), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "TP collectives overlapped with GEMMs (Megatron-Core --tp-comm-overlap, torchtitan async TP)"},
    {"moe-a2a-overlap", NULL, OPT_CONST, F(moe_a2a_overlap), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "MoE all-to-all overlapped with another micro-batch's compute (Megatron-Core "
     "--overlap-moe-expert-parallel-comm; needs ep > 1, vpp with pp > 1, no full recompute)"},
    {"fp8-param-gather", NULL, OPT_CONST, F(fp8_param_gather), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "GEMM weights kept in FP8 and all-gathered in FP8 (Megatron-Core --fp8-param-gather; "
     "precision fp8 or mxfp8)"},
    {"fp8-recipe", NULL, OPT_ENUM, F(fp8_recipe), 0, 0, "tensorwise|rowwise", NULL, JOB_CMDS,
     "RECIPE", "FP8 scaling (precision fp8): tensorwise (default: Transformer Engine, torchao "
     "tensorwise), rowwise (torchao's row-wise recipe: torchtitan, fsdp)"},
    {"dropout", NULL, OPT_CONST, F(dropout), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "training keeps dropout masks (GPT-2/3-era recipes)"},
    {"fused-loss", NULL, OPT_CONST, F(fused_loss), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "chunked/fused cross-entropy (no full fp32 logits)"},
    {"kbit-fp32", NULL, OPT_CONST, F(kbit_fp32), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "QLoRA through PEFT's prepare_model_for_kbit_training (TRL): non-quantized weights, "
     "activations and logits in fp32"},
    {"moe-capacity", NULL, OPT_REAL, F(moe_capacity), 0, 64, NULL, NULL, JOB_CMDS, "X",
     "token-dropping capacity factor (default: dropless)"},
    {"moe-dispatcher", NULL, OPT_ENUM, F(moe_dispatcher), 0, 0, "alltoall|allgather|flex", NULL,
     JOB_CMDS, "D", "how MoE tokens reach their experts (Megatron-Core --moe-token-dispatcher-type): "
     "alltoall (default), allgather, flex (DeepEP: once per node, then NVLink)"},
    {"moe-imbalance", NULL, OPT_REAL, F(moe_imbalance), 1, 64, NULL, NULL, JOB_CMDS, "X",
     "dropless: busiest expert's load over the mean (default 1.2)"},
    {"trainable-frac", NULL, OPT_REAL, F(trainable_frac), 1e-6, 1, NULL, NULL, JOB_CMDS, "F",
     "share of the token slots the throughput and --tokens count: Axolotl logs trainable "
     "tokens only (no prompt, no padding); default 1"},
    {"overhead-gb", NULL, OPT_REAL, F(overhead_gb), 0, 1e4, NULL, NULL, JOB_CMDS, "X",
     "CUDA context and workspaces per GPU (default 1.0)"},
    {"nccl-gb", NULL, OPT_REAL, F(nccl_gb), 0, 1e4, NULL, NULL, JOB_CMDS, "X",
     "NCCL memory per live communicator (default 0.5)"},
    {"fragmentation", NULL, OPT_REAL, F(frag), 0, 1, NULL, NULL, JOB_CMDS, "F",
     "allocator fragmentation, fraction of states + activations (default 0.08)"},
    {"expandable-segments", NULL, OPT_CONST, F(expandable_segments), 1, 1, NULL, NULL, JOB_CMDS,
     NULL, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: a quarter of the fragmentation "
     "(implied for torchtitan)"},
    {"per-stage", NULL, OPT_CONST, F(per_stage), 1, 1, NULL, NULL, RUN_CMDS, NULL,
     "report every pipeline stage, not only the worst"},
    {"attention-flops", NULL, OPT_ENUM, F(attn_conv), 0, 0, "causal|noncausal", NULL, CMD_PARAMS,
     "CONV", "count the causal half of attention (default) or the full square"},
    {"mtp", NULL, OPT_INT, F(mtp), 0, 16, NULL, NULL, CMD_PARAMS, "N",
     "multi-token-prediction modules trained along (default 0)"},
    {"per-layer", NULL, OPT_CONST, F(per_layer), 1, 1, NULL, NULL, CMD_PARAMS, NULL,
     "list every block instead of runs of identical blocks"},
    /* shape flags: describe a model alone, or override a preset / config.json */
    {"layers", NULL, OPT_INT, S(layers), 1, TP_MAX_LAYERS, NULL, NULL, SHAPE_CMDS, "N",
     "transformer blocks"},
    {"hidden", "hidden-size", OPT_INT, S(hidden), 1, 1 << 18, NULL, NULL, SHAPE_CMDS, "N",
     "model width H"},
    {"heads", NULL, OPT_INT, S(heads), 1, 1 << 14, NULL, NULL, SHAPE_CMDS, "N", "query heads"},
    {"kv-heads", NULL, OPT_INT, S(kv_heads), 1, 1 << 14, NULL, NULL, SHAPE_CMDS, "N",
     "key/value heads (GQA; default = heads)"},
    {"head-dim", NULL, OPT_INT, S(head_dim), 1, 1 << 12, NULL, NULL, SHAPE_CMDS, "N",
     "head dimension (default hidden/heads)"},
    {"ffn", "intermediate-size", OPT_INT, S(ffn), 1, 1 << 22, NULL, NULL, SHAPE_CMDS, "N",
     "dense MLP width (default 4H for gelu, 256*ceil(8H/3/256) for swiglu)"},
    {"vocab", "vocab-size", OPT_INT, S(vocab), 1, 1 << 24, NULL, NULL, SHAPE_CMDS | CMD_SIZE, "N",
     "vocabulary (embedding rows)"},
    {"max-positions", NULL, OPT_INT, S(max_positions), 1, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "rows of a learned position table (--pos learned)"},
    {"experts", NULL, OPT_INT, S(experts), 0, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "routed experts per MoE block (0 = dense)"},
    {"topk", "top-k", OPT_INT, S(topk), 1, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "routed experts per token"},
    {"moe-ffn", NULL, OPT_INT, S(moe_ffn), 1, 1 << 22, NULL, NULL, SHAPE_CMDS, "N",
     "width of one routed expert"},
    {"shared-experts", NULL, OPT_INT, S(shared_experts), 0, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "shared experts (each moe-ffn wide)"},
    {"dense-layers", NULL, OPT_INT, S(dense_layers), 0, TP_MAX_LAYERS, NULL, NULL, SHAPE_CMDS,
     "N", "leading blocks with a dense MLP instead of experts"},
    {"window", "sliding-window", OPT_INT, S(window), 0, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "sliding attention window on every block (0 = full attention)"},
    {"tied", NULL, OPT_CONST, S(tied), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "LM head shares the embedding"},
    {"untied", NULL, OPT_CONST, S(tied), 0, 0, NULL, NULL, SHAPE_CMDS, NULL,
     "separate LM head"},
    {"mlp", NULL, OPT_ENUM, S(mlp), 0, 0, "gelu|swiglu|geglu", MLP_VALUES, SHAPE_CMDS, "KIND",
     "gelu: 2 matrices; swiglu/geglu: 3 matrices"},
    {"norm", NULL, OPT_ENUM, S(norm), 0, 0, "layernorm|rmsnorm", NORM_VALUES, SHAPE_CMDS, "KIND",
     "LayerNorm (weight+bias) or RMSNorm (weight)"},
    {"bias", NULL, OPT_CONST, S(bias), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "biases on q, k, v, o and the MLP"},
    {"no-bias", NULL, OPT_CONST, S(bias), 0, 0, NULL, NULL, SHAPE_CMDS, NULL, "no linear biases"},
    {"qk-norm", NULL, OPT_CONST, S(qk_norm), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "per-head RMSNorm on q and k"},
    {"pos", NULL, OPT_ENUM, S(pos), 0, 0, "learned|rope|alibi", POS_VALUES, SHAPE_CMDS, "KIND",
     "position encoding"},
};

#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

/* cli_error_capture: where errors go instead of stderr (a sweep's rows), NULL = stderr */
static char *capture_buf;
static size_t capture_len;

void cli_error_capture(char *buf, size_t len)
{
    capture_buf = buf;
    capture_len = len;
    if (buf && len)
        buf[0] = '\0';
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[4096], esc[4 * sizeof msg]; /* every byte escaped takes 4 */
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (capture_buf) {
        tp_text_escape(msg, capture_buf, capture_len);
        return;
    }
    tp_text_escape(msg, esc, sizeof esc); /* cli_escape's rule, without its buffer's bound */
    fprintf(stderr, "trainplan: error: %s\n", esc);
}

static const struct opt *find(const char *name)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(OPTS[i].name, name) == 0 || (OPTS[i].alias && strcmp(OPTS[i].alias, name) == 0))
            return &OPTS[i];
    return NULL;
}

bool cli_is_option(const char *name)
{
    for (size_t i = 0; i < N_OPTS; i++) /* names only: aliases such as hidden-size are also
                                           config.json fields */
        if (strcmp(OPTS[i].name, name) == 0)
            return true;
    return false;
}

/* Strict integer: optional '-', decimal digits, and optionally a fraction and an exponent
   ("7.86e8") when the value is whole.  No blanks, no hex, no suffixes: "8x" is an error, never
   8.  Returns 0 on success, 1 when not a number, 2 when out of the int64 range. */
static int parse_int(const char *s, int64_t *out)
{
    const char *p = s + (*s == '-');
    size_t digits = strspn(p, "0123456789");
    if (digits == 0)
        return 1;
    if (p[digits] == '\0') {
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == ERANGE)
            return 2;
        *out = v;
        return 0;
    }
    const char *q = p + digits;
    if (*q == '.') {
        q++;
        size_t frac = strspn(q, "0123456789");
        if (frac == 0)
            return 1;
        q += frac;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        q += (*q == '+' || *q == '-');
        size_t exp = strspn(q, "0123456789");
        if (exp == 0)
            return 1;
        q += exp;
    }
    if (*q != '\0')
        return 1;
    double d = strtod(s, NULL);
    if (!isfinite(d) || fabs(d) > 9e18)
        return 2;
    if (d != floor(d))
        return 1;
    *out = (int64_t)d;
    return 0;
}

static int set_enum(const struct opt *o, const char *val, struct cli_args *a)
{
    const char *p = o->choices;
    for (int idx = 0; *p; idx++) {
        size_t n = strcspn(p, "|");
        if (strlen(val) == n && strncmp(p, val, n) == 0) {
            *(int *)((char *)a + o->offset) = o->values ? o->values[idx] : idx;
            return EXIT_OK;
        }
        p += n + (p[n] == '|');
    }
    cli_error("--%s %s: expected one of %s", o->name, val, o->choices);
    return EXIT_USAGE;
}

static int set_real(const struct opt *o, const char *val, struct cli_args *a)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (!*val || *end || errno || !isfinite(v) || strspn(val, "0123456789.eE+-") != strlen(val)) {
        cli_error("--%s %s: expected a number", o->name, val);
        return EXIT_USAGE;
    }
    if (v < o->lo || v > o->hi) {
        cli_error("--%s %s is out of range (%g..%g)", o->name, val, o->lo, o->hi);
        return EXIT_USAGE;
    }
    *(double *)((char *)a + o->offset) = v;
    return EXIT_OK;
}

static int set_opt(const struct opt *o, const char *val, struct cli_args *a)
{
    if (o->kind == OPT_REAL)
        return set_real(o, val, a);
    if (o->kind == OPT_STR) {
        *(const char **)((char *)a + o->offset) = val;
        return EXIT_OK;
    }
    if (o->kind == OPT_CONST) {
        *(int *)((char *)a + o->offset) = (int)o->lo;
        return EXIT_OK;
    }
    if (o->kind == OPT_ENUM)
        return set_enum(o, val, a);
    int64_t v = 0;
    int bad = parse_int(val, &v);
    if (bad == 1) {
        cli_error("--%s %s: expected a whole number", o->name, val);
        return EXIT_USAGE;
    }
    if (bad == 2 || (double)v < o->lo || (double)v > o->hi) {
        cli_error("--%s %s is out of range (%.0f..%.0f)", o->name, val, o->lo, o->hi);
        return EXIT_USAGE;
    }
    *(int64_t *)((char *)a + o->offset) = v;
    return EXIT_OK;
}

/* The options memory and estimate sweep over (one row per combination of their values). */
static const char *const SWEEPABLE[] = {"mbs", "seq", "gpus", "gbs", "gas", "tp", "pp", "dp",
                                        "cp", "ep", "zero"};

/* --mbs 1,2,4 or --gpus 8..512: checks every value as the option would, keeps the list for
   cli_sweep and the first value for the rest of the parse. */
static int add_sweep(const struct opt *o, const char *val, struct cli_args *a)
{
    bool ok = false;
    for (size_t i = 0; i < sizeof SWEEPABLE / sizeof SWEEPABLE[0]; i++)
        ok = ok || strcmp(SWEEPABLE[i], o->name) == 0;
    if (!ok) {
        cli_error("--%s %s: only --mbs, --seq, --gpus, --gbs, --gas, --tp, --pp, --dp, --cp, "
                  "--ep and --zero take a list", o->name, val);
        return EXIT_USAGE;
    }
    if (a->n_sweeps == CLI_MAX_SWEEPS) {
        cli_error("--%s %s: at most %d options take a list at once", o->name, val,
                  CLI_MAX_SWEEPS);
        return EXIT_USAGE;
    }
    struct cli_sweep *sw = &a->sweeps[a->n_sweeps];
    int rc = cli_parse_list(o->name, val, (int64_t)o->lo, (int64_t)o->hi, sw->values,
                            CLI_MAX_SWEEP_VALUES, &sw->n);
    if (rc != EXIT_OK)
        return rc;
    sw->name = o->name;
    sw->offset = o->offset;
    *(int64_t *)((char *)a + o->offset) = sw->values[0];
    a->n_sweeps++;
    return EXIT_OK;
}

int cli_parse_list(const char *name, const char *text, int64_t lo, int64_t hi, int64_t *out,
                   size_t cap, size_t *n)
{
    *n = 0;
    const char *dots = strstr(text, "..");
    char *end;
    errno = 0;
    if (dots) {
        long long a = strtoll(text, &end, 10), b;
        if (end != dots || a < lo || a < 1 || (b = strtoll(dots + 2, &end, 10)) < a || *end ||
            b > hi || errno) {
            cli_error("--%s %s: expected LOW..HIGH (doubling) with %lld <= LOW <= HIGH <= %lld",
                      name, text, (long long)(lo > 1 ? lo : 1), (long long)hi);
            return EXIT_USAGE;
        }
        for (long long v = a; v <= b && *n < cap; v *= 2)
            out[(*n)++] = v;
        if (out[*n - 1] != b && *n < cap)
            out[(*n)++] = b;
        return EXIT_OK;
    }
    for (const char *p = text; *p;) {
        long long v = strtoll(p, &end, 10);
        if (end == p || v < lo || v > hi || errno || (*end && *end != ',') || *n == cap ||
            (*end == ',' && !end[1])) {
            cli_error("--%s %s: expected a list of up to %zu whole numbers in %lld..%lld "
                      "(1,2,4) or a range (8..512: doubling)", name, text, cap, (long long)lo,
                      (long long)hi);
            return EXIT_USAGE;
        }
        out[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    return EXIT_OK;
}

static const char *cmd_name(unsigned cmd)
{
    return cmd == CMD_PARAMS   ? "params"
           : cmd == CMD_MODELS ? "models"
           : cmd == CMD_MEMORY ? "memory"
           : cmd == CMD_GPUS   ? "gpus"
           : cmd == CMD_ESTIMATE ? "estimate"
           : cmd == CMD_SEARCH ? "search"
           : cmd == CMD_VALIDATE ? "validate"
           : cmd == CMD_CALIBRATE ? "calibrate"
           : cmd == CMD_LOGS ? "logs"
           : cmd == CMD_EXPORT ? "export"
           : cmd == CMD_SIZE ? "size"
           : cmd == CMD_CHECKPOINT ? "checkpoint"
                               : "?";
}

/* Every field unset: what the user did not give is told apart from a value. */
static void args_init(unsigned cmd, struct cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->seq = TP_UNSET;
    a->mtp = TP_UNSET;
    a->gpus = a->gpus_per_node = TP_UNSET;
    a->dp = a->tp = a->pp = a->vpp = a->ep = a->etp = a->cp = a->zero = TP_UNSET;
    a->shard_group = a->mbs = a->gas = a->gbs = a->recompute_layers = a->lora_rank = TP_UNSET;
    a->hpz = TP_UNSET;
    a->offload_layers = TP_UNSET;
    a->moe_capacity = a->moe_imbalance = a->overhead_gb = a->nccl_gb = a->frag = -1;
    a->trainable_frac = -1;
    a->price = a->prior_weight = -1;
    a->min_gpu_rows = a->max_evals = a->starts = a->fold_rows = TP_UNSET;
    a->max_folds = a->fit_rows = TP_UNSET;
    a->skip_warmup = TP_UNSET;
    a->top = a->max_tp = a->max_pp = a->max_cp = a->max_ep = a->max_mbs = TP_UNSET;
    a->threads = a->pp_first = a->pp_last = TP_UNSET;
    a->ckpt_every = a->eval_every = TP_UNSET;
    tp_shape_init(&a->shape);
}

/* argv[*i], an option: the option it names in *out and its value in *val (the next
   argument when not given with '=', *i moved past it); an unknown option, a missing or an
   unwanted value is an error. */
static int option_at(int argc, char **argv, int *i, unsigned cmd, const struct opt **out,
                     const char **val)
{
    const char *arg = argv[*i];
    const char *name = arg + 1 + (arg[1] == '-');
    char key[64];
    const char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (n >= sizeof key) {
        cli_error("unknown option %s", arg);
        return EXIT_USAGE;
    }
    memcpy(key, name, n);
    key[n] = '\0';
    const struct opt *o = find(key);
    if (!o || !(o->cmds & cmd)) {
        cli_error("unknown option --%s for `trainplan %s` (see trainplan %s --help)", key,
                  cmd_name(cmd), cmd_name(cmd));
        return EXIT_USAGE;
    }
    *val = NULL;
    if (o->kind != OPT_CONST) {
        if (eq) {
            *val = eq + 1;
        } else if (*i + 1 < argc) {
            *val = argv[++*i];
        } else {
            cli_error("--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
            return EXIT_USAGE;
        }
    } else if (eq) {
        cli_error("--%s takes no value", o->name);
        return EXIT_USAGE;
    }
    *out = o;
    return EXIT_OK;
}

int cli_parse(int argc, char **argv, unsigned cmd, struct cli_args *a)
{
    args_init(cmd, a);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if ((arg[0] != '-' || arg[1] == '\0') && (cmd & FILES_CMDS)) {
            if (a->n_files == CLI_MAX_FILES) {
                cli_error("more than %d files", CLI_MAX_FILES);
                return EXIT_USAGE;
            }
            a->files[a->n_files++] = arg;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->model) {
                cli_error("unexpected argument \"%s\" (MODEL is already \"%s\")", arg, a->model);
                return EXIT_USAGE;
            }
            a->model = arg;
            continue;
        }
        const struct opt *o;
        const char *val;
        int orc = option_at(argc, argv, &i, cmd, &o, &val);
        if (orc != EXIT_OK)
            return orc;
        if (cmd == CMD_SEARCH && o->offset == F(gpus) && strpbrk(val, ",.")) {
            a->gpus_list = val; /* "8,16,32" or "8..512": cmd_search parses it */
            continue;
        }
        if ((cmd & (CMD_MEMORY | CMD_ESTIMATE)) && o->kind == OPT_INT &&
            (strchr(val, ',') || strstr(val, ".."))) {
            int rc = add_sweep(o, val, a);
            if (rc != EXIT_OK)
                return rc;
            continue;
        }
        int rc = set_opt(o, val, a);
        if (rc != EXIT_OK)
            return rc;
        if (a->help)
            return EXIT_OK;
    }
    return EXIT_OK;
}

void cli_print_options(FILE *out, unsigned cmd)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt *o = &OPTS[i];
        if (!(o->cmds & cmd))
            continue;
        if (o == find("gpu"))
            fprintf(out, "\ncluster, layout and job:\n");
        if (o == find("layers"))
            fprintf(out, "\nshape flags (a model alone, or overriding a preset or config.json):\n");
        char left[64];
        const char *meta = o->kind == OPT_ENUM ? o->choices : o->metavar;
        snprintf(left, sizeof left, "--%s%s%s", o->name, meta ? " " : "", meta ? meta : "");
        fprintf(out, "  %-32s %s\n", left, o->help);
    }
}
