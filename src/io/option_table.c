/*
 * option_table.c - THE option table: every option of every verb, once.  The CLI parses argv
 * and prints --help from it (cli/args.c), python/trainplan builds its keyword signatures from
 * it (tp_options_json) and tp_call_json sets its keywords through it (tp_args_set), and the
 * page (web/) builds its form from it.  tests/schema_check.sh fails if an option is declared
 * anywhere else.
 *
 * To add an option: one row here (name, aliases, kind, field, range, choices, verbs, metavar,
 * help; `true` last for an option of the CLI's output alone) and its field in struct tp_args
 * (include/trainplan/io.h), initialised in tp_args_init (options.c) when 0 is a value; the
 * verb reads the field.  Nothing else declares it.  Aliases are the frameworks' own spellings
 * of the same setting (Megatron-LM arguments.py, DeepSpeed's config keys, Hugging Face
 * TrainingArguments, Axolotl's config), listed only where the meaning is the same.
 */
#include "internal.h"

#include <stddef.h>

#define F(field) offsetof(struct tp_args, field)
#define S(field) offsetof(struct tp_args, shape.field)
#define SHAPE_CMDS (TP_VERB_PARAMS | TP_VERB_MEMORY | TP_VERB_ESTIMATE | TP_VERB_SEARCH | \
                    TP_VERB_LOGS | TP_VERB_EXPORT)
/* logs takes the run options to describe the measured run (its runs-file row) */
#define RUN_CMDS (TP_VERB_MEMORY | TP_VERB_ESTIMATE | TP_VERB_LOGS | TP_VERB_EXPORT)
/* options that describe the job and the cluster, not the layout: search takes these */
#define JOB_CMDS (RUN_CMDS | TP_VERB_SEARCH | TP_VERB_SIZE)
/* search's knobs: export --best runs the search */
#define SEARCH_CMDS (TP_VERB_SEARCH | TP_VERB_EXPORT)
/* the job options the checkpoint plan uses */
#define CK_JOB_CMDS (JOB_CMDS | TP_VERB_CHECKPOINT)
#define CK_RUN_CMDS (RUN_CMDS | TP_VERB_CHECKPOINT)

static const int MLP_VALUES[] = {TP_MLP_GELU, TP_MLP_GLU, TP_MLP_GLU};
static const int NORM_VALUES[] = {TP_NORM_LAYER, TP_NORM_RMS};
static const int POS_VALUES[] = {TP_POS_LEARNED, TP_POS_ROPE, TP_POS_ALIBI};
static const int FSDP_VALUES[] = {1, 2, 3, 4}; /* tp_args.fsdp: 0 = not given */
/* the stacks by the names --help lists; tp_args_set also takes stack.c's aliases (trl, mcore,
   megatron-core: tp_stack_find) */
static const int FW_VALUES[] = {TP_FW_DEEPSPEED, TP_FW_FSDP,       TP_FW_MEGATRON,
                                TP_FW_AXOLOTL,   TP_FW_AXOLOTL,    TP_FW_TORCHTITAN,
                                TP_FW_MEGATRON_DS, TP_FW_MEGATRON};
static const int MOE_VALUES[] = {TP_MOE_EAGER,     TP_MOE_GROUPED, TP_MOE_DEEPSPEED,
                                 TP_MOE_DEEPSPEED, TP_MOE_GROUPED, TP_MOE_DENSE};
static const int LOG_FORMAT_VALUES[] = {TP_LOG_MEGATRON, TP_LOG_MEGATRON_DS, TP_LOG_HF,
                                        TP_LOG_TORCHTITAN, TP_LOG_NANOGPT, TP_LOG_LLMC,
                                        TP_LOG_JSON};

static const struct tp_option OPTIONS[] = {
    {"help", "h", TP_OPT_FLAG, F(help), 1, 1, NULL, NULL, TP_VERB_ALL, NULL, "show this help and exit",
     true},
    {"format", NULL, TP_OPT_ENUM, F(format), 0, 0, "table|json|csv", NULL, TP_VERB_ALL, "FMT",
     "output format (default table)", true},
    {"svg", NULL, TP_OPT_STR, F(svg), 0, 0, NULL, NULL,
     TP_VERB_MEMORY | TP_VERB_ESTIMATE | TP_VERB_SEARCH | TP_VERB_VALIDATE | TP_VERB_LOGS | TP_VERB_SIZE, "FILE",
     "also write the plot as SVG: memory per stage, the step-time breakdown, time against "
     "GPU-hours (search --gpus A..B), predicted against measured, the log's steps (the first "
     "log), loss against parameters", true},
    /* logs */
    {"skip-warmup", NULL, TP_OPT_INT, F(skip_warmup), 0, 1e9, NULL, NULL, TP_VERB_LOGS, "N",
     "logged steps to skip as warm-up (default: the first 10%, at least 1, from 5 steps on)",
     false},
    {"log-format", NULL, TP_OPT_ENUM, F(log_format), 0, 0,
     "megatron|megatron-deepspeed|hf|torchtitan|nanogpt|llm.c|json", LOG_FORMAT_VALUES,
     TP_VERB_LOGS, "NAME", "read the logs as this format (default: detected from the content)",
     false},
    {"model", NULL, TP_OPT_STR, F(model), 0, 0, NULL, NULL, TP_VERB_LOGS, "MODEL",
     "the model trained (preset, config.json or shape flags): model FLOPs, MFU and the "
     "estimate's prediction next to the log", false},
    {"row-out", NULL, TP_OPT_STR, F(row_out), 0, 0, NULL, NULL, TP_VERB_LOGS, "FILE",
     "write a runs-file row per log (validation/runs format: for validate, calibrate); needs "
     "--model and --gpu", true},
    /* checkpoint */
    {"config", NULL, TP_OPT_STR, F(config), 0, 0, NULL, NULL, TP_VERB_CHECKPOINT, "FILE",
     "the model's config.json to compare with (default: MODEL, else the config.json beside the "
     "checkpoint)", false},
    {"storage-gbps", NULL, TP_OPT_REAL, F(storage_gbps), 0.001, 1e6, NULL, NULL,
     TP_VERB_ESTIMATE | TP_VERB_CHECKPOINT, "X",
     "checkpoint write bandwidth in GB/s, all ranks together: the time per save", false},
    {"ckpt-every", NULL, TP_OPT_INT, F(ckpt_every), 1, 1e12, NULL, NULL, TP_VERB_ESTIMATE, "STEPS",
     "a checkpoint every STEPS optimizer steps: saves in the wall-clock (needs --storage-gbps)",
     false},
    {"eval-every", NULL, TP_OPT_INT, F(eval_every), 1, 1e12, NULL, NULL, TP_VERB_ESTIMATE, "STEPS",
     "an evaluation pass every STEPS optimizer steps (with --eval-tokens)", false},
    {"eval-tokens", NULL, TP_OPT_REAL, F(eval_tokens), 1, 1e15, NULL, NULL, TP_VERB_ESTIMATE, "N",
     "tokens of one evaluation pass (forward only)", false},
    {"startup-min", NULL, TP_OPT_REAL, F(startup_min), 0, 1e5, NULL, NULL, TP_VERB_ESTIMATE, "M",
     "minutes of launch, NCCL and ZeRO initialisation before the first step", false},
    {"seq", "seq-len|seq-length|sequence-len|max-seq-length", TP_OPT_INT, F(seq), 1, 1 << 24, NULL, NULL, TP_VERB_PARAMS | JOB_CMDS, "N",
     "sequence length (default: the model's, else 4096)", false},
    {"doc-len", NULL, TP_OPT_INT, F(doc_len), 1, 1 << 24, NULL, NULL, JOB_CMDS, "N",
     "packed samples: the mean length of the documents packed into each, attending only "
     "within themselves (FlashAttention varlen / TE THD: Axolotl sample_packing, NeMo and "
     "Megatron-Bridge packed sequences, TRL padding_free); default: one document per sample",
     false},
    {"recompute", "recompute-granularity|recompute-mode", TP_OPT_ENUM, F(recompute), 0, 0, "none|selective|full", NULL,
     TP_VERB_PARAMS | RUN_CMDS, "MODE", "activation recompute (default none)", false},
    {"gradient-checkpointing", NULL, TP_OPT_FLAG, F(recompute), TP_RECOMPUTE_FULL,
     TP_RECOMPUTE_FULL, NULL, NULL, TP_VERB_PARAMS | RUN_CMDS, NULL,
     "= --recompute full: every block recomputed in backward (Hugging Face TrainingArguments "
     "and Axolotl gradient_checkpointing)", false},
    /* cluster */
    {"gpu", NULL, TP_OPT_STR, F(gpu), 0, 0, NULL, NULL, JOB_CMDS, "NAME",
     "accelerator from the catalog (trainplan gpus); default h100-sxm", false},
    {"gpus", "num-gpus", TP_OPT_INT, F(gpus), 1, 1 << 20, NULL, NULL, CK_JOB_CMDS, "N",
     "GPUs in the job (default: tp*pp*cp*dp, else 8); search also takes a list (8,16,32) or a "
     "range (8..512: doubling)", false},
    {"gpus-per-node", NULL, TP_OPT_INT, F(gpus_per_node), 1, 1024, NULL, NULL, JOB_CMDS, "K",
     "GPUs per node (default: the catalog's)", false},
    {"hbm-gb", NULL, TP_OPT_REAL, F(hbm_gb), 0.001, 1e5, NULL, NULL, JOB_CMDS, "X",
     "memory per GPU as the vendor states it (\"80 GB\" = 80 GiB), overriding the catalog", false},
    {"peak-tflops", NULL, TP_OPT_REAL, F(peak_tflops), 0.001, 1000000, NULL, NULL, JOB_CMDS, "X",
     "dense peak TFLOP/s in the job's precision (bf16/fp16, fp8 or fp32), overriding the "
     "catalog", false},
    {"hbm-tbps", NULL, TP_OPT_REAL, F(hbm_tbps), 0.001, 1000, NULL, NULL, JOB_CMDS, "X",
     "memory bandwidth per GPU in TB/s, overriding the catalog", false},
    {"intra-gbps", NULL, TP_OPT_REAL, F(intra_gbps), 0.001, 100000, NULL, NULL, JOB_CMDS, "X",
     "scale-up link (NVLink, xGMI) per GPU per direction in GB/s, overriding the catalog", false},
    {"inter-gbps", NULL, TP_OPT_REAL, F(inter_gbps), 0.001, 100000, NULL, NULL, JOB_CMDS, "X",
     "scale-out network (NIC) per GPU per direction in GB/s, overriding the catalog", false},
    {"host-gbps", NULL, TP_OPT_REAL, F(host_gbps), 0.001, 100000, NULL, NULL, JOB_CMDS, "X",
     "host link (PCIe) per GPU per direction in GB/s, overriding the catalog", false},
    /* time and cost */
    {"calibration", NULL, TP_OPT_STR, F(calibration), 0, 0, NULL, NULL,
     TP_VERB_ESTIMATE | SEARCH_CMDS | TP_VERB_VALIDATE | TP_VERB_LOGS | TP_VERB_SIZE, "FILE",
     "efficiency parameters (JSON, as `trainplan calibrate` writes) instead of the built-in "
     "defaults", false},
    /* validate and calibrate */
    {"base", NULL, TP_OPT_STR, F(base), 0, 0, NULL, NULL, TP_VERB_CALIBRATE, "FILE|prior",
     "start from and regularise toward this calibration (default: the built-in defaults; "
     "\"prior\": the uncalibrated physics priors, how data/calibration.json is made)", false},
    {"output", "o", TP_OPT_STR, F(output), 0, 0, NULL, NULL, TP_VERB_CALIBRATE | TP_VERB_EXPORT, "FILE",
     "calibrate: write the fitted calibration here (JSON); export: the directory to write every "
     "file into (created if missing)", false},
    /* export */
    {"to", NULL, TP_OPT_STR, F(to), 0, 0, NULL, NULL, TP_VERB_EXPORT, "FORMAT",
     "deepspeed, axolotl, megatron, megatron-deepspeed, torchrun or slurm", false},
    {"best", NULL, TP_OPT_FLAG, F(best), 1, 1, NULL, NULL, TP_VERB_EXPORT, NULL,
     "run the search (with --gbs and the search options) and export its fastest layout", false},
    {"force", NULL, TP_OPT_FLAG, F(force), 1, 1, NULL, NULL, TP_VERB_EXPORT, NULL,
     "export a layout that does not fit in memory", false},
    {"base-model", NULL, TP_OPT_STR, F(base_model), 0, 0, NULL, NULL, TP_VERB_EXPORT, "ID",
     "Axolotl base_model (default: the preset's Hugging Face id or the config's directory)", false},
    {"job-name", NULL, TP_OPT_STR, F(job_name), 0, 0, NULL, NULL, TP_VERB_EXPORT, "NAME",
     "Slurm job name (default trainplan)", false},
    {"no-cv", NULL, TP_OPT_FLAG, F(no_cv), 1, 1, NULL, NULL, TP_VERB_CALIBRATE, NULL,
     "skip the leave-one-source-out cross-validation (one fit per source)", false},
    {"no-per-gpu", NULL, TP_OPT_FLAG, F(no_per_gpu), 1, 1, NULL, NULL, TP_VERB_CALIBRATE, NULL,
     "fit global parameters only, no per-GPU GEMM rates", false},
    {"min-gpu-rows", NULL, TP_OPT_INT, F(min_gpu_rows), 1, 100000, NULL, NULL, TP_VERB_CALIBRATE, "N",
     "rows a GPU type needs for its own GEMM rate (default 5)", false},
    {"prior-weight", NULL, TP_OPT_REAL, F(prior_weight), 0, 100, NULL, NULL, TP_VERB_CALIBRATE, "W",
     "pull toward the base values, worth W rows (default 0.4; larger keeps closer)", false},
    {"max-evals", NULL, TP_OPT_INT, F(max_evals), 10, 1000000, NULL, NULL, TP_VERB_CALIBRATE, "N",
     "objective evaluations per least-squares run (default 2500)", false},
    {"starts", NULL, TP_OPT_INT, F(starts), 1, 16, NULL, NULL, TP_VERB_CALIBRATE, "N",
     "fit starts: the base, then the best of 256 quasi-random points (default 1)", false},
    {"fold-rows", NULL, TP_OPT_INT, F(fold_rows), 0, 100000000, NULL, NULL, TP_VERB_CALIBRATE, "N",
     "each leave-one-source-out fold fits on at most N of the other sources' rows, evenly "
     "spaced (default 512; 0: every row)", false},
    {"fit-rows", NULL, TP_OPT_INT, F(fit_rows), 0, 100000000, NULL, NULL, TP_VERB_CALIBRATE, "N",
     "fit at most N of the rows, evenly spaced; every row is predicted before and after "
     "(default 4096; 0: every row)", false},
    {"max-folds", NULL, TP_OPT_INT, F(max_folds), 0, 100000000, NULL, NULL, TP_VERB_CALIBRATE, "N",
     "at most N folds: with more sources each fold holds out every N-th source (default 16; "
     "0 or 1: one fold per source)", false},
    {"summary", NULL, TP_OPT_FLAG, F(summary), 1, 1, NULL, NULL, TP_VERB_VALIDATE, NULL,
     "table format: only the summary, not every row", true},
    {"tokens", NULL, TP_OPT_REAL, F(tokens), 1, 1e17, NULL, NULL,
     TP_VERB_ESTIMATE | TP_VERB_SEARCH | TP_VERB_LOGS, "N",
     "training tokens, for the wall-clock time, GPU-hours and cost (7.86e8 works)", false},
    {"epochs", NULL, TP_OPT_REAL, F(epochs), 0.001, 1000000, NULL, NULL, TP_VERB_ESTIMATE, "E",
     "epochs over --dataset-tokens (instead of --tokens)", false},
    {"dataset-tokens", NULL, TP_OPT_REAL, F(dataset_tokens), 1, 1e17, NULL, NULL,
     TP_VERB_ESTIMATE, "N", "tokens in one epoch of the dataset (with --epochs)", false},
    /* size */
    {"flops", NULL, TP_OPT_REAL, F(flops), 1e15, 1e32, NULL, NULL, TP_VERB_SIZE, "C",
     "training compute budget in FLOPs (model FLOPs: exact, causal)", false},
    {"days", NULL, TP_OPT_REAL, F(days), 1e-4, 36500, NULL, NULL, TP_VERB_SIZE, "D",
     "with --gpu and --gpus: wall-clock days of training (the budget comes from the cluster)",
     false},
    {"gpu-hours", NULL, TP_OPT_REAL, F(gpu_hours), 1e-3, 1e12, NULL, NULL, TP_VERB_SIZE, "H",
     "with --gpu and --gpus: GPU-hours of training (days = H / 24 / GPUs)", false},
    {"fit", NULL, TP_OPT_STR, F(fit), 0, 0, NULL, NULL, TP_VERB_SIZE, "NAME",
     "scaling-law fit: hoffmann-3 (default), besiroglu, kaplan (loss laws), hoffmann-1, "
     "hoffmann-2, deepseek, llama3 (optimum only; shapes' loss then from hoffmann-3)", false},
    {"family", NULL, TP_OPT_STR, F(family), 0, 0, NULL, NULL, TP_VERB_SIZE, "NAME",
     "architecture family of the grid: llama3 (default), qwen3, gpt", false},
    /* search */
    {"top", NULL, TP_OPT_INT, F(top), 1, 1000, NULL, NULL, TP_VERB_SEARCH | TP_VERB_SIZE, "K",
     "layouts (search) or shapes (size) to list (default 5)", false},
    {"max-tp", NULL, TP_OPT_INT, F(max_tp), 1, 1024, NULL, NULL, SEARCH_CMDS, "N",
     "largest tensor-parallel size tried (default: GPUs per node)", false},
    {"max-pp", NULL, TP_OPT_INT, F(max_pp), 1, 1024, NULL, NULL, SEARCH_CMDS, "N",
     "largest pipeline size tried (default: the layers)", false},
    {"max-cp", NULL, TP_OPT_INT, F(max_cp), 1, 1024, NULL, NULL, SEARCH_CMDS, "N",
     "largest context-parallel size tried (default 1)", false},
    {"max-ep", NULL, TP_OPT_INT, F(max_ep), 1, 4096, NULL, NULL, SEARCH_CMDS, "N",
     "largest expert-parallel size tried (default: no limit)", false},
    {"max-mbs", NULL, TP_OPT_INT, F(max_mbs), 1, 4096, NULL, NULL, SEARCH_CMDS, "N",
     "largest micro-batch tried (default 16)", false},
    {"mem-headroom", NULL, TP_OPT_REAL, F(mem_headroom), 0, 0.9, NULL, NULL, SEARCH_CMDS, "F",
     "fraction of GPU memory to keep free (default 0)", false},
    {"explain", NULL, TP_OPT_STR, F(explain), 0, 0, NULL, NULL, TP_VERB_SEARCH, "\"K=V ...\"",
     "why this layout ranks where it does or fails, e.g. \"tp=8 pp=4 mbs=2\" (keys tp pp vpp cp "
     "ep zero mbs recompute offload; the rest as the best layout)", true},
    {"no-offload", NULL, TP_OPT_FLAG, F(no_offload), 1, 1, NULL, NULL, SEARCH_CMDS, NULL,
     "never offload the optimizer to the CPU", false},
    {"recompute-modes", NULL, TP_OPT_STR, F(recompute_modes), 0, 0, NULL, NULL, SEARCH_CMDS, "LIST",
     "recompute modes to try: a comma list of none, selective, full, partial (full on N blocks "
     "per stage; needs full); default all four", false},
    {"zero-stages", NULL, TP_OPT_STR, F(zero_stages), 0, 0, NULL, NULL, SEARCH_CMDS, "LIST",
     "ZeRO stages to try: a comma list of 0-3 (default all the stack runs; 0 = none, 1 = the "
     "distributed optimizer, 3 = FSDP / ZeRO-3)", false},
    {"even-pp", NULL, TP_OPT_FLAG, F(even_pp), 1, 1, NULL, NULL, SEARCH_CMDS, NULL,
     "only even pipeline splits (no stages shortened for the embedding and the head)", false},
    {"quiet", "q", TP_OPT_FLAG, F(quiet), 1, 1, NULL, NULL, SEARCH_CMDS | TP_VERB_CALIBRATE, NULL,
     "no progress line on stderr (it shows only on a terminal anyway)", true},
    {"threads", NULL, TP_OPT_INT, F(threads), 1, 256, NULL, NULL, SEARCH_CMDS | TP_VERB_SIZE, "N",
     "worker threads (default: the online CPUs); the result does not depend on it", true},
    {"gpu-hour-price", NULL, TP_OPT_REAL, F(price), 0, 1000000, NULL, NULL,
     TP_VERB_ESTIMATE | TP_VERB_SEARCH | TP_VERB_LOGS | TP_VERB_SIZE, "P",
     "price of one GPU-hour, for the cost", false},
    /* layout */
    {"dp", NULL, TP_OPT_INT, F(dp), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "data-parallel ranks (default: gpus / (tp*pp*cp))", false},
    {"tp", "tensor-model-parallel-size", TP_OPT_INT, F(tp), 1, 1024, NULL, NULL, RUN_CMDS, "N", "tensor-parallel ranks",
     false},
    {"pp", "pipeline-model-parallel-size", TP_OPT_INT, F(pp), 1, 1024, NULL, NULL, RUN_CMDS, "N", "pipeline stages",
     false},
    {"vpp", "virtual-pipeline-model-parallel-size", TP_OPT_INT, F(vpp), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "virtual pipeline chunks per stage (interleaved 1F1B)", false},
    {"ep", "expert-model-parallel-size", TP_OPT_INT, F(ep), 1, 4096, NULL, NULL, RUN_CMDS, "N", "expert-parallel ranks",
     false},
    {"etp", "expert-tensor-parallel-size", TP_OPT_INT, F(etp), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "expert tensor-parallel ranks (default = tp)", false},
    {"cp", "context-parallel-size", TP_OPT_INT, F(cp), 1, 1024, NULL, NULL, RUN_CMDS, "N", "context-parallel ranks",
     false},
    {"sp", "sequence-parallel", TP_OPT_FLAG, F(sp), 1, 1, NULL, NULL, RUN_CMDS, NULL,
     "Megatron sequence parallelism (with --tp)", false},
    {"zero", "zero-stage", TP_OPT_INT, F(zero), 0, 3, NULL, NULL, CK_RUN_CMDS, "0-3",
     "ZeRO stage: 1 optimizer, 2 + gradients, 3 + parameters sharded", false},
    {"fsdp", NULL, TP_OPT_ENUM, F(fsdp), 0, 0, "no_shard|shard_grad_op|full_shard|hybrid_shard",
     FSDP_VALUES, RUN_CMDS, "MODE",
     "FSDP strategy (= --zero 0|2|3|3 with --shard-group); without --framework the fsdp stack "
     "(torchtitan with a pipeline); under --framework axolotl, FSDP2 instead of DeepSpeed", false},
    {"fsdp-backend", NULL, TP_OPT_FLAG, F(fsdp_backend), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "the Hugging Face stack (axolotl, hf) on FSDP2 instead of DeepSpeed's ZeRO (what --fsdp "
     "means under --framework axolotl)", false},
    {"distributed-optimizer", "use-distributed-optimizer", TP_OPT_FLAG, F(distopt), 1, 1, NULL, NULL, RUN_CMDS, NULL,
     "Megatron distributed optimizer (= --zero 1)", false},
    {"shard-group", NULL, TP_OPT_INT, F(shard_group), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "HSDP / MiCS: ranks per sharding group, the states replicated across groups (DeepSpeed "
     "mics_shard_size)", false},
    {"hpz", NULL, TP_OPT_INT, F(hpz), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "ZeRO++ hpZ (zero 3, DeepSpeed): a secondary copy of the weights over N ranks, which the "
     "backward gathers from (zero_hpz_partition_size)", false},
    {"mbs", "micro-batch|micro-batch-size|per-device-train-batch-size|train-micro-batch-size-per-gpu", TP_OPT_INT, F(mbs), 1, 1 << 16, NULL, NULL, RUN_CMDS, "N",
     "sequences per micro-batch (default 1)", false},
    {"gas", "grad-accum|gradient-accumulation-steps", TP_OPT_INT, F(gas), 1, 1 << 20, NULL, NULL, RUN_CMDS, "N",
     "micro-batches per step (default 1, or gbs / (mbs*dp))", false},
    {"gbs", "global-batch|global-batch-size|train-batch-size", TP_OPT_INT, F(gbs), 1, 1 << 26, NULL, NULL, JOB_CMDS, "N",
     "sequences per optimizer step", false},
    {"recompute-layers", NULL, TP_OPT_INT, F(recompute_layers), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "with --recompute full: only N blocks per stage (partial recompute)", false},
    {"pp-first", NULL, TP_OPT_INT, F(pp_first), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "blocks on the first pipeline rank (uneven split; the ranks not given share the rest "
     "equally, each rank's blocks split equally over its --vpp chunks)", false},
    {"pp-last", NULL, TP_OPT_INT, F(pp_last), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "blocks on the last pipeline stage (uneven split, as --pp-first)", false},
    {"recompute-modules", NULL, TP_OPT_STR, F(recompute_modules), 0, 0, NULL, NULL, RUN_CMDS,
     "LIST",
     "selective recompute of Megatron-Core modules: core_attn (the default), layernorm, "
     "moe_act, mlp, moe, shared_experts, mla_up_proj (implies --recompute selective)", false},
    {"pp-layout", NULL, TP_OPT_STR, F(pp_layout), 0, 0, NULL, NULL, RUN_CMDS, "LAYOUT",
     "blocks per virtual stage: Megatron's --pipeline-model-parallel-layout string "
     "(\"Et*3|(tt|)*29,m|L\"; sets vpp), or embedding, loss or embedding,loss (the "
     "--account-for-...-in-pipeline-split slots)", false},
    {"offload", NULL, TP_OPT_ENUM, F(offload), 0, 0, "none|optimizer|params", NULL, RUN_CMDS, "WHAT",
     "CPU offload (ZeRO-Offload / ZeRO-Infinity)", false},
    {"offload-activations", NULL, TP_OPT_FLAG, F(offload_activations), 1, 1, NULL, NULL, RUN_CMDS,
     NULL, "keep the activations saved for backward in host memory (two blocks' worth stay on "
     "the GPU)", false},
    {"offload-layers", "cpu-offloading-num-layers", TP_OPT_INT, F(offload_layers), 1, 1024, NULL, NULL, RUN_CMDS, "N",
     "with --offload-activations: only the first N blocks of each stage (Megatron-Core "
     "--cpu-offloading-num-layers; implies --offload-activations)", false},
    {"schedule", NULL, TP_OPT_ENUM, F(schedule), 0, 0, "1f1b|interleaved|gpipe", NULL, RUN_CMDS,
     "S", "pipeline schedule (default 1f1b; interleaved with --vpp)", false},
    /* job */
    {"task", NULL, TP_OPT_ENUM, F(task), 0, 0, "pretrain|sft|dpo|lora|qlora", NULL, CK_JOB_CMDS, "T",
     "what is trained (default pretrain)", false},
    {"lora-rank", "lora-r", TP_OPT_INT, F(lora_rank), 1, 65536, NULL, NULL, CK_JOB_CMDS, "R",
     "LoRA / QLoRA adapter rank (default 16)", false},
    {"lora-targets", NULL, TP_OPT_STR, F(lora_targets), 0, 0, NULL, NULL, JOB_CMDS, "LIST",
     "adapted modules: all, or a comma list of q,k,v,o,gate,up,down (default all)", false},
    {"optimizer", NULL, TP_OPT_ENUM, F(optimizer), 0, 0,
     "adamw|adamw-8bit|adamw-4bit|adafactor|sgd|sgd-momentum|adamw-bf16", NULL, CK_JOB_CMDS, "OPT",
     "optimizer (default adamw)", false},
    {"precision", NULL, TP_OPT_ENUM, F(precision), 0, 0, "bf16|fp16|fp8|fp32|mxfp8|nvfp4|mxfp4",
     NULL, CK_JOB_CMDS, "P",
     "training precision (default bf16, fp32 master weights; mxfp8, nvfp4 and mxfp4 need "
     "block-scaled tensor cores: B200, B300, GB200, GB300, MI355X)", false},
    {"framework", NULL, TP_OPT_ENUM, F(framework), 0, 0,
     "deepspeed|fsdp|megatron|axolotl|hf|torchtitan|megatron-deepspeed|nemo", FW_VALUES,
     JOB_CMDS, "STACK",
     "software stack: what it can run, its kernels and byte conventions (docs/stacks.md); "
     "default: megatron when the layout needs tp/pp/cp/sp, else deepspeed", false},
    {"moe-impl", NULL, TP_OPT_ENUM, F(moe_impl), 0, 0,
     "eager|grouped|deepspeed|tutel|megablocks|dense", MOE_VALUES, JOB_CMDS, "IMPL",
     "MoE experts: eager (Hugging Face loop), grouped (grouped GEMM: Megatron/TE, MegaBlocks), "
     "deepspeed (DeepSpeed-MoE/Tutel), dense (every expert over every token: HF Llama 4); "
     "default: the stack's", false},
    {"zero-quantized-weights", NULL, TP_OPT_FLAG, F(zero_quant_weights), 1, 1, NULL, NULL,
     JOB_CMDS, NULL, "ZeRO++ qwZ (zero 3, DeepSpeed): weights all-gathered as int8", false},
    {"zero-quantized-gradients", NULL, TP_OPT_FLAG, F(zero_quant_grads), 1, 1, NULL, NULL,
     JOB_CMDS, NULL, "ZeRO++ qgZ (zero 3, DeepSpeed): gradients reduced by int4 all-to-alls",
     false},
    {"z3-leaf", NULL, TP_OPT_FLAG, F(z3_leaf), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "ZeRO-3 fetches each MoE block's experts at once (deepspeed.utils.set_z3_leaf_modules)",
     false},
    {"attention", NULL, TP_OPT_ENUM, F(attn_impl), 0, 0, "flash|eager|flash2|flash3|flex", NULL,
     JOB_CMDS, "IMPL", "attention kernel: flash = the framework's (megatron: TE/cuDNN, native to "
     "Hopper and Blackwell; the others: FlashAttention-2), flash2, flash3 (FA3/cuDNN), flex "
     "(PyTorch FlexAttention), eager (stores the s x s scores)", false},
    {"tp-comm-overlap", NULL, TP_OPT_FLAG, F(tp_comm_overlap), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "TP collectives overlapped with GEMMs (Megatron-Core --tp-comm-overlap, torchtitan async TP)",
     false},
    {"moe-a2a-overlap", "overlap-moe-expert-parallel-comm", TP_OPT_FLAG, F(moe_a2a_overlap), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "MoE all-to-all overlapped with another micro-batch's compute (Megatron-Core "
     "--overlap-moe-expert-parallel-comm; needs ep > 1, vpp with pp > 1, no full recompute)",
     false},
    {"fp8-param-gather", NULL, TP_OPT_FLAG, F(fp8_param_gather), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "GEMM weights kept in FP8 and all-gathered in FP8 (Megatron-Core --fp8-param-gather; "
     "precision fp8 or mxfp8)", false},
    {"fp8-recipe", NULL, TP_OPT_ENUM, F(fp8_recipe), 0, 0, "tensorwise|rowwise", NULL, JOB_CMDS,
     "RECIPE", "FP8 scaling (precision fp8): tensorwise (default: Transformer Engine, torchao "
     "tensorwise), rowwise (torchao's row-wise recipe: torchtitan, fsdp)", false},
    {"dropout", NULL, TP_OPT_FLAG, F(dropout), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "training keeps dropout masks (GPT-2/3-era recipes)", false},
    {"fused-loss", NULL, TP_OPT_FLAG, F(fused_loss), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "chunked/fused cross-entropy (no full fp32 logits)", false},
    {"kbit-fp32", NULL, TP_OPT_FLAG, F(kbit_fp32), 1, 1, NULL, NULL, JOB_CMDS, NULL,
     "QLoRA through PEFT's prepare_model_for_kbit_training (TRL): non-quantized weights, "
     "activations and logits in fp32", false},
    {"moe-capacity", NULL, TP_OPT_REAL, F(moe_capacity), 0, 64, NULL, NULL, JOB_CMDS, "X",
     "token-dropping capacity factor (default: dropless)", false},
    {"moe-imbalance", NULL, TP_OPT_REAL, F(moe_imbalance), 1, 64, NULL, NULL, JOB_CMDS, "X",
     "dropless: busiest expert's load over the mean (default 1.2)", false},
    {"trainable-frac", NULL, TP_OPT_REAL, F(trainable_frac), 1e-6, 1, NULL, NULL, JOB_CMDS, "F",
     "share of the token slots the throughput and --tokens count: Axolotl logs trainable "
     "tokens only (no prompt, no padding); default 1", false},
    {"overhead-gb", NULL, TP_OPT_REAL, F(overhead_gb), 0, 1e3, NULL, NULL, JOB_CMDS, "X",
     "CUDA context and workspaces per GPU (default 1.0)", false},
    {"nccl-gb", NULL, TP_OPT_REAL, F(nccl_gb), 0, 1e3, NULL, NULL, JOB_CMDS, "X",
     "NCCL memory per live communicator (default 0.5)", false},
    {"fragmentation", "frag", TP_OPT_REAL, F(frag), 0, 1, NULL, NULL, JOB_CMDS, "F",
     "allocator fragmentation, fraction of states + activations (default 0.08)", false},
    {"per-stage", NULL, TP_OPT_FLAG, F(per_stage), 1, 1, NULL, NULL, RUN_CMDS, NULL,
     "report every pipeline stage, not only the worst", false},
    {"attention-flops", NULL, TP_OPT_ENUM, F(attn_conv), 0, 0, "causal|noncausal", NULL, TP_VERB_PARAMS,
     "CONV", "count the causal half of attention (default) or the full square", false},
    {"mtp", NULL, TP_OPT_INT, F(mtp), 0, 16, NULL, NULL, TP_VERB_PARAMS, "N",
     "multi-token-prediction modules trained along (default 0)", false},
    {"per-layer", NULL, TP_OPT_FLAG, F(per_layer), 1, 1, NULL, NULL, TP_VERB_PARAMS, NULL,
     "list every block instead of runs of identical blocks", false},
    /* shape flags: describe a model alone, or override a preset / config.json */
    {"layers", "num-layers|num-hidden-layers", TP_OPT_INT, S(layers), 1, TP_MAX_LAYERS, NULL, NULL, SHAPE_CMDS, "N",
     "transformer blocks", false},
    {"hidden", "hidden-size", TP_OPT_INT, S(hidden), 1, 1 << 18, NULL, NULL, SHAPE_CMDS, "N",
     "model width H", false},
    {"heads", "num-attention-heads", TP_OPT_INT, S(heads), 1, 1 << 14, NULL, NULL, SHAPE_CMDS, "N", "query heads",
     false},
    {"kv-heads", "num-key-value-heads|num-query-groups", TP_OPT_INT, S(kv_heads), 1, 1 << 14, NULL, NULL, SHAPE_CMDS, "N",
     "key/value heads (GQA; default = heads)", false},
    {"head-dim", "kv-channels", TP_OPT_INT, S(head_dim), 1, 1 << 12, NULL, NULL, SHAPE_CMDS, "N",
     "head dimension (default hidden/heads)", false},
    {"ffn", "intermediate-size|ffn-hidden-size", TP_OPT_INT, S(ffn), 1, 1 << 22, NULL, NULL, SHAPE_CMDS, "N",
     "dense MLP width (default 4H for gelu, 256*ceil(8H/3/256) for swiglu)", false},
    {"vocab", "vocab-size", TP_OPT_INT, S(vocab), 1, 1 << 24, NULL, NULL, SHAPE_CMDS | TP_VERB_SIZE, "N",
     "vocabulary (embedding rows)", false},
    {"max-positions", "max-position-embeddings", TP_OPT_INT, S(max_positions), 1, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "rows of a learned position table (--pos learned)", false},
    {"experts", "num-experts|num-local-experts", TP_OPT_INT, S(experts), 0, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "routed experts per MoE block (0 = dense)", false},
    {"topk", "top-k|moe-router-topk|num-experts-per-tok", TP_OPT_INT, S(topk), 1, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "routed experts per token", false},
    {"moe-ffn", "moe-intermediate-size|moe-ffn-hidden-size", TP_OPT_INT, S(moe_ffn), 1, 1 << 22, NULL, NULL, SHAPE_CMDS, "N",
     "width of one routed expert", false},
    {"shared-experts", NULL, TP_OPT_INT, S(shared_experts), 0, 4096, NULL, NULL, SHAPE_CMDS, "N",
     "shared experts (each moe-ffn wide)", false},
    {"dense-layers", NULL, TP_OPT_INT, S(dense_layers), 0, TP_MAX_LAYERS, NULL, NULL, SHAPE_CMDS,
     "N", "leading blocks with a dense MLP instead of experts", false},
    {"window", "sliding-window", TP_OPT_INT, S(window), 0, 1 << 24, NULL, NULL, SHAPE_CMDS, "N",
     "sliding attention window on every block (0 = full attention)", false},
    {"tied", NULL, TP_OPT_FLAG, S(tied), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "LM head shares the embedding", false},
    {"untied", NULL, TP_OPT_FLAG, S(tied), 0, 0, NULL, NULL, SHAPE_CMDS, NULL,
     "separate LM head", false},
    {"mlp", NULL, TP_OPT_ENUM, S(mlp), 0, 0, "gelu|swiglu|geglu", MLP_VALUES, SHAPE_CMDS, "KIND",
     "gelu: 2 matrices; swiglu/geglu: 3 matrices", false},
    {"norm", NULL, TP_OPT_ENUM, S(norm), 0, 0, "layernorm|rmsnorm", NORM_VALUES, SHAPE_CMDS, "KIND",
     "LayerNorm (weight+bias) or RMSNorm (weight)", false},
    {"bias", NULL, TP_OPT_FLAG, S(bias), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "biases on q, k, v, o and the MLP", false},
    {"no-bias", NULL, TP_OPT_FLAG, S(bias), 0, 0, NULL, NULL, SHAPE_CMDS, NULL, "no linear biases",
     false},
    {"qk-norm", NULL, TP_OPT_FLAG, S(qk_norm), 1, 1, NULL, NULL, SHAPE_CMDS, NULL,
     "per-head RMSNorm on q and k", false},
    {"pos", NULL, TP_OPT_ENUM, S(pos), 0, 0, "learned|rope|alibi", POS_VALUES, SHAPE_CMDS, "KIND",
     "position encoding", false},
};

const struct tp_option *tp_options(size_t *n)
{
    *n = sizeof OPTIONS / sizeof OPTIONS[0];
    return OPTIONS;
}
