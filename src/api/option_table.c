/*
 * option_table.c - THE option table: every option of every verb, once.  The CLI parses argv
 * and prints --help from it (cli/args.c), python/trainplan builds its keyword signatures from
 * it (tp_options_json) and tp_call_json sets its keywords through it (tp_args_set), and the
 * page (web/) builds its form from it.  tests/schema_check.sh fails if an option is declared
 * anywhere else.
 *
 * To add an option: one row here (.name, .aliases, .kind, .offset of its field, .lo/.hi,
 * .choices/.values, .verbs, .metavar, .help; .cli_only for an option of the CLI's output alone)
 * and its field in struct tp_args (include/trainplan/io.h), initialised in tp_args_init
 * (options.c) when 0 is a value; the verb reads the field.  Nothing else declares it: the
 * CLI's --help, python's keywords and the page's form follow.  Aliases are the frameworks' own spellings
 * of the same setting (Megatron-LM arguments.py, DeepSpeed's config keys, Hugging Face
 * TrainingArguments, Axolotl's config), listed only where the meaning is the same.
 */
#include "api_internal.h"

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
static const int CUDA_GRAPHS_VALUES[] = {0, 1, 2, 1, 1, 2}; /* Megatron-Core's names too */
static const int MOE_ROUTING_VALUES[] = {1, 2, 3}; /* enum tp_moe_routing; 0 = by the task */
/* enum tp_frozen_format; bf16 / fp16 name the 16-bit store */
static const int FROZEN_VALUES[] = {TP_FROZEN_AUTO,  TP_FROZEN_16BIT, TP_FROZEN_FP8,
                                    TP_FROZEN_MXFP8, TP_FROZEN_NVFP4, TP_FROZEN_16BIT,
                                    TP_FROZEN_16BIT};
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
    {.name = "help", .aliases = "h", .kind = TP_OPT_FLAG, .offset = F(help), .lo = 1, .hi = 1,
     .verbs = TP_VERB_ALL, .help = "show this help and exit", .cli_only = true},
    {.name = "format", .kind = TP_OPT_ENUM, .offset = F(format), .choices = "table|json|csv",
     .verbs = TP_VERB_ALL, .metavar = "FMT", .help = "output format (default table)",
     .cli_only = true},
    {.name = "svg", .kind = TP_OPT_STR, .offset = F(svg),
     .verbs = TP_VERB_MEMORY | TP_VERB_ESTIMATE | TP_VERB_SEARCH | TP_VERB_VALIDATE | TP_VERB_LOGS |
         TP_VERB_SIZE, .metavar = "FILE", .help = "also write the plot as SVG: memory per stage, "
     "the step-time breakdown, time against GPU-hours (search --gpus A..B), "
     "predicted against measured, the log's steps (the first log), loss "
     "against parameters", .cli_only = true},
    /* logs */
    {.name = "skip-warmup", .kind = TP_OPT_INT, .offset = F(skip_warmup), .lo = 0, .hi = 1e9,
     .verbs = TP_VERB_LOGS, .metavar = "N", .help = "logged steps to skip as warm-up (default: "
     "the first 10%, at least 1, from 5 steps on)"},
    {.name = "log-format", .kind = TP_OPT_ENUM, .offset = F(log_format),
     .choices = "megatron|megatron-deepspeed|hf|torchtitan|nanogpt|llm.c|json",
     .values = LOG_FORMAT_VALUES, .verbs = TP_VERB_LOGS, .metavar = "NAME",
     .help = "read the logs as this format (default: detected from the content)"},
    {.name = "model", .kind = TP_OPT_STR, .offset = F(model), .verbs = TP_VERB_LOGS,
     .metavar = "MODEL", .help = "the model trained (preset, config.json or shape flags): model "
     "FLOPs, MFU and the estimate's prediction next to the log"},
    {.name = "row-out", .kind = TP_OPT_STR, .offset = F(row_out), .verbs = TP_VERB_LOGS,
     .metavar = "FILE", .help = "write a runs-file row per log (validation/runs format: for "
     "validate, calibrate); needs --model and --gpu", .cli_only = true},
    /* checkpoint */
    {.name = "config", .kind = TP_OPT_STR, .offset = F(config), .verbs = TP_VERB_CHECKPOINT,
     .metavar = "FILE", .help = "the model's config.json to compare with (default: MODEL, else "
     "the config.json beside the checkpoint)"},
    {.name = "storage-gbps", .kind = TP_OPT_REAL, .offset = F(storage_gbps), .lo = 0.001, .hi = 1e6,
     .verbs = TP_VERB_ESTIMATE | TP_VERB_CHECKPOINT, .metavar = "X",
     .help = "checkpoint write bandwidth in GB/s, all ranks together: the time per save"},
    {.name = "ckpt-every", .kind = TP_OPT_INT, .offset = F(ckpt_every), .lo = 1, .hi = 1e12,
     .verbs = TP_VERB_ESTIMATE, .metavar = "STEPS", .help = "a checkpoint every STEPS optimizer "
     "steps: saves in the wall-clock (needs --storage-gbps)"},
    {.name = "eval-every", .kind = TP_OPT_INT, .offset = F(eval_every), .lo = 1, .hi = 1e12,
     .verbs = TP_VERB_ESTIMATE, .metavar = "STEPS", .help = "an evaluation pass every STEPS "
     "optimizer steps (with --eval-tokens)"},
    {.name = "eval-tokens", .kind = TP_OPT_REAL, .offset = F(eval_tokens), .lo = 1, .hi = 1e15,
     .verbs = TP_VERB_ESTIMATE, .metavar = "N", .help = "tokens of one evaluation pass (forward "
     "only)"},
    {.name = "startup-min", .kind = TP_OPT_REAL, .offset = F(startup_min), .lo = 0, .hi = 1e5,
     .verbs = TP_VERB_ESTIMATE, .metavar = "M", .help = "minutes of launch, NCCL and ZeRO "
     "initialisation before the first step"},
    {.name = "seq", .aliases = "seq-len|seq-length|sequence-len|max-seq-length", .kind = TP_OPT_INT,
     .offset = F(seq), .lo = 1, .hi = 1 << 24, .verbs = TP_VERB_PARAMS | JOB_CMDS, .metavar = "N",
     .help = "sequence length (default: the model's, else 4096)"},
    {.name = "doc-len", .kind = TP_OPT_INT, .offset = F(doc_len), .lo = 1, .hi = 1 << 24,
     .verbs = JOB_CMDS, .metavar = "N", .help = "packed samples: the mean length of the "
     "documents packed into each, attending only within themselves (FlashAttention varlen / TE "
     "THD: Axolotl sample_packing, NeMo and Megatron-Bridge packed sequences, TRL "
     "padding_free); default: one document per sample"},
    {.name = "recompute", .aliases = "recompute-granularity|recompute-mode", .kind = TP_OPT_ENUM,
     .offset = F(recompute), .choices = "none|selective|full", .verbs = TP_VERB_PARAMS | RUN_CMDS,
     .metavar = "MODE", .help = "activation recompute (default none)"},
    {.name = "gradient-checkpointing", .kind = TP_OPT_FLAG, .offset = F(recompute),
     .lo = TP_RECOMPUTE_FULL, .hi = TP_RECOMPUTE_FULL, .verbs = TP_VERB_PARAMS | RUN_CMDS,
     .help = "= --recompute full: every block recomputed in backward (Hugging Face "
     "TrainingArguments and Axolotl gradient_checkpointing)"},
    /* cluster */
    {.name = "gpu", .kind = TP_OPT_STR, .offset = F(gpu), .verbs = JOB_CMDS, .metavar = "NAME",
     .help = "accelerator from the catalog (trainplan gpus); default h100-sxm"},
    {.name = "gpus", .aliases = "num-gpus", .kind = TP_OPT_INT, .offset = F(gpus), .lo = 1,
     .hi = 1 << 20, .verbs = CK_JOB_CMDS, .metavar = "N", .help = "GPUs in the job (default: "
     "tp*pp*cp*dp, else 8); search also takes a list (8,16,32) or a range (8..512: doubling)"},
    {.name = "gpus-per-node", .kind = TP_OPT_INT, .offset = F(gpus_per_node), .lo = 1, .hi = 1024,
     .verbs = JOB_CMDS, .metavar = "K", .help = "GPUs per node (default: the catalog's)"},
    {.name = "hbm-gb", .kind = TP_OPT_REAL, .offset = F(hbm_gb), .lo = 0.001, .hi = 1e5,
     .verbs = JOB_CMDS, .metavar = "X", .help = "memory per GPU as the vendor states it (\"80 "
     "GB\" = 80 GiB), overriding the catalog"},
    {.name = "peak-tflops", .kind = TP_OPT_REAL, .offset = F(peak_tflops), .lo = 0.001,
     .hi = 1000000, .verbs = JOB_CMDS, .metavar = "X", .help = "dense peak TFLOP/s in the job's "
     "precision (bf16/fp16, fp8 or fp32), overriding the catalog"},
    {.name = "hbm-tbps", .kind = TP_OPT_REAL, .offset = F(hbm_tbps), .lo = 0.001, .hi = 1000,
     .verbs = JOB_CMDS, .metavar = "X", .help = "memory bandwidth per GPU in TB/s, overriding "
     "the catalog"},
    {.name = "intra-gbps", .kind = TP_OPT_REAL, .offset = F(intra_gbps), .lo = 0.001, .hi = 100000,
     .verbs = JOB_CMDS, .metavar = "X", .help = "scale-up link (NVLink, xGMI) per GPU per "
     "direction in GB/s, overriding the catalog"},
    {.name = "inter-gbps", .kind = TP_OPT_REAL, .offset = F(inter_gbps), .lo = 0.001, .hi = 100000,
     .verbs = JOB_CMDS, .metavar = "X", .help = "scale-out network (NIC) per GPU per direction "
     "in GB/s, overriding the catalog"},
    {.name = "host-gbps", .kind = TP_OPT_REAL, .offset = F(host_gbps), .lo = 0.001, .hi = 100000,
     .verbs = JOB_CMDS, .metavar = "X", .help = "host link (PCIe) per GPU per direction in GB/s, "
     "overriding the catalog"},
    /* time and cost */
    {.name = "calibration", .kind = TP_OPT_STR, .offset = F(calibration),
     .verbs = TP_VERB_ESTIMATE | SEARCH_CMDS | TP_VERB_VALIDATE | TP_VERB_LOGS | TP_VERB_SIZE,
     .metavar = "FILE", .help = "efficiency parameters (JSON, as `trainplan calibrate` writes) "
     "instead of the built-in defaults"},
    /* validate and calibrate */
    {.name = "base", .kind = TP_OPT_STR, .offset = F(base), .verbs = TP_VERB_CALIBRATE,
     .metavar = "FILE|prior", .help = "start from and regularise toward this calibration "
     "(default: the built-in defaults; \"prior\": the uncalibrated physics priors, how "
     "data/calibration.json is made)"},
    {.name = "output", .aliases = "o", .kind = TP_OPT_STR, .offset = F(output),
     .verbs = TP_VERB_CALIBRATE | TP_VERB_EXPORT, .metavar = "FILE",
     .help = "calibrate: write the fitted calibration here (JSON); export: the directory to "
     "write every file into (created if missing)"},
    /* export */
    {.name = "to", .kind = TP_OPT_STR, .offset = F(to), .verbs = TP_VERB_EXPORT,
     .metavar = "FORMAT", .help = "deepspeed, axolotl, megatron, megatron-deepspeed, torchrun or "
     "slurm"},
    {.name = "best", .kind = TP_OPT_FLAG, .offset = F(best), .lo = 1, .hi = 1,
     .verbs = TP_VERB_EXPORT, .help = "run the search (with --gbs and the search options) and "
     "export its fastest layout"},
    {.name = "force", .kind = TP_OPT_FLAG, .offset = F(force), .lo = 1, .hi = 1,
     .verbs = TP_VERB_EXPORT, .help = "replace the files -o DIR already holds"},
    {.name = "allow-oom", .kind = TP_OPT_FLAG, .offset = F(allow_oom), .lo = 1, .hi = 1,
     .verbs = TP_VERB_EXPORT, .help = "export a layout that the memory model says does not fit"},
    {.name = "base-model", .kind = TP_OPT_STR, .offset = F(base_model), .verbs = TP_VERB_EXPORT,
     .metavar = "ID", .help = "Axolotl base_model (default: the preset's Hugging Face id or the "
     "config's directory)"},
    {.name = "job-name", .kind = TP_OPT_STR, .offset = F(job_name), .verbs = TP_VERB_EXPORT,
     .metavar = "NAME", .help = "Slurm job name (default trainplan)"},
    {.name = "steps", .kind = TP_OPT_INT, .offset = F(steps), .lo = 1, .hi = 1e12,
     .verbs = TP_VERB_EXPORT, .metavar = "N", .help = "the stopping point in optimizer steps "
     "(--train-iters, max_steps; instead of --tokens)"},
    {.name = "lr", .kind = TP_OPT_REAL, .offset = F(lr), .lo = 1e-12, .hi = 10,
     .verbs = TP_VERB_EXPORT, .metavar = "LR", .help = "peak learning rate (default: the task's "
     "from its published recipe, see docs/export.md)"},
    {.name = "no-cv", .kind = TP_OPT_FLAG, .offset = F(no_cv), .lo = 1, .hi = 1,
     .verbs = TP_VERB_CALIBRATE, .help = "skip the leave-one-source-out cross-validation (one "
     "fit per source)"},
    {.name = "no-per-gpu", .kind = TP_OPT_FLAG, .offset = F(no_per_gpu), .lo = 1, .hi = 1,
     .verbs = TP_VERB_CALIBRATE, .help = "fit global parameters only, no per-GPU GEMM rates"},
    {.name = "min-gpu-rows", .kind = TP_OPT_INT, .offset = F(min_gpu_rows), .lo = 1, .hi = 100000,
     .verbs = TP_VERB_CALIBRATE, .metavar = "N", .help = "rows a GPU type needs for its own GEMM "
     "rate (default 5)"},
    {.name = "prior-weight", .kind = TP_OPT_REAL, .offset = F(prior_weight), .lo = 0, .hi = 100,
     .verbs = TP_VERB_CALIBRATE, .metavar = "W", .help = "pull toward the base values, worth W "
     "rows (default 0.4; larger keeps closer)"},
    {.name = "max-evals", .kind = TP_OPT_INT, .offset = F(max_evals), .lo = 10, .hi = 1000000,
     .verbs = TP_VERB_CALIBRATE, .metavar = "N", .help = "objective evaluations per "
     "least-squares run (default 2500)"},
    {.name = "starts", .kind = TP_OPT_INT, .offset = F(starts), .lo = 1, .hi = 16,
     .verbs = TP_VERB_CALIBRATE, .metavar = "N", .help = "fit starts: the base, then the best of "
     "256 quasi-random points (default 1)"},
    {.name = "fold-rows", .kind = TP_OPT_INT, .offset = F(fold_rows), .lo = 0, .hi = 100000000,
     .verbs = TP_VERB_CALIBRATE, .metavar = "N", .help = "each leave-one-source-out fold fits on "
     "at most N of the other sources' rows, evenly spaced (default 512; 0: every row)"},
    {.name = "fit-rows", .kind = TP_OPT_INT, .offset = F(fit_rows), .lo = 0, .hi = 100000000,
     .verbs = TP_VERB_CALIBRATE, .metavar = "N", .help = "fit at most N of the rows, evenly "
     "spaced; every row is predicted before and after (default 4096; 0: every row)"},
    {.name = "max-folds", .kind = TP_OPT_INT, .offset = F(max_folds), .lo = 0, .hi = 100000000,
     .verbs = TP_VERB_CALIBRATE, .metavar = "N", .help = "at most N folds: with more sources "
     "each fold holds out every N-th source (default 16; 0 or 1: one fold per source)"},
    {.name = "summary", .kind = TP_OPT_FLAG, .offset = F(summary), .lo = 1, .hi = 1,
     .verbs = TP_VERB_VALIDATE, .help = "table format: only the summary, not every row",
     .cli_only = true},
    {.name = "tokens", .kind = TP_OPT_REAL, .offset = F(tokens), .lo = 1, .hi = 1e17,
     .verbs = TP_VERB_ESTIMATE | TP_VERB_SEARCH | TP_VERB_LOGS | TP_VERB_EXPORT, .metavar = "N",
     .help = "training tokens, for the wall-clock time, GPU-hours and cost (7.86e8 works); "
     "export: the stopping point (--train-samples, max_steps)"},
    {.name = "epochs", .kind = TP_OPT_REAL, .offset = F(epochs), .lo = 0.001, .hi = 1000000,
     .verbs = TP_VERB_ESTIMATE, .metavar = "E", .help = "epochs over --dataset-tokens (instead "
     "of --tokens)"},
    {.name = "dataset-tokens", .kind = TP_OPT_REAL, .offset = F(dataset_tokens), .lo = 1,
     .hi = 1e17, .verbs = TP_VERB_ESTIMATE, .metavar = "N", .help = "tokens in one epoch of the "
     "dataset (with --epochs)"},
    /* size */
    {.name = "flops", .kind = TP_OPT_REAL, .offset = F(flops), .lo = 1e15, .hi = 1e32,
     .verbs = TP_VERB_SIZE, .metavar = "C", .help = "training compute budget in FLOPs (model "
     "FLOPs: exact, causal)"},
    {.name = "days", .kind = TP_OPT_REAL, .offset = F(days), .lo = 1e-4, .hi = 36500,
     .verbs = TP_VERB_SIZE, .metavar = "D", .help = "with --gpu and --gpus: wall-clock days of "
     "training (the budget comes from the cluster)"},
    {.name = "gpu-hours", .kind = TP_OPT_REAL, .offset = F(gpu_hours), .lo = 1e-3, .hi = 1e12,
     .verbs = TP_VERB_SIZE, .metavar = "H", .help = "with --gpu and --gpus: GPU-hours of "
     "training (days = H / 24 / GPUs)"},
    {.name = "fit", .kind = TP_OPT_STR, .offset = F(fit), .verbs = TP_VERB_SIZE, .metavar = "NAME",
     .help = "scaling-law fit: besiroglu (default; agrees with hoffmann-1 and -2), hoffmann-3 "
     "(as printed; misses Hoffmann's own Table A3), kaplan (loss laws), hoffmann-1, hoffmann-2, "
     "deepseek, llama3 (optimum only; shapes' loss then from besiroglu)"},
    {.name = "family", .kind = TP_OPT_STR, .offset = F(family), .verbs = TP_VERB_SIZE,
     .metavar = "NAME", .help = "architecture family of the grid: llama3 (default), qwen3, gpt"},
    /* search */
    {.name = "top", .kind = TP_OPT_INT, .offset = F(top), .lo = 1, .hi = 1000,
     .verbs = TP_VERB_SEARCH | TP_VERB_SIZE, .metavar = "K",
     .help = "layouts (search) or shapes (size) to list (default 5)"},
    {.name = "max-tp", .kind = TP_OPT_INT, .offset = F(max_tp), .lo = 1, .hi = 1024,
     .verbs = SEARCH_CMDS, .metavar = "N", .help = "largest tensor-parallel size tried (default: "
     "GPUs per node)"},
    {.name = "max-pp", .kind = TP_OPT_INT, .offset = F(max_pp), .lo = 1, .hi = 1024,
     .verbs = SEARCH_CMDS, .metavar = "N", .help = "largest pipeline size tried (default: the "
     "layers)"},
    {.name = "max-cp", .kind = TP_OPT_INT, .offset = F(max_cp), .lo = 1, .hi = 1024,
     .verbs = SEARCH_CMDS, .metavar = "N", .help = "largest context-parallel size tried (default "
     "1)"},
    {.name = "max-ep", .kind = TP_OPT_INT, .offset = F(max_ep), .lo = 1, .hi = 4096,
     .verbs = SEARCH_CMDS, .metavar = "N", .help = "largest expert-parallel size tried (default: "
     "no limit)"},
    {.name = "max-mbs", .kind = TP_OPT_INT, .offset = F(max_mbs), .lo = 1, .hi = 4096,
     .verbs = SEARCH_CMDS, .metavar = "N", .help = "largest micro-batch tried (default 16)"},
    {.name = "mem-headroom", .kind = TP_OPT_REAL, .offset = F(mem_headroom), .lo = 0, .hi = 0.9,
     .verbs = SEARCH_CMDS, .metavar = "F", .help = "fraction of GPU memory to keep free (default "
     "0)"},
    {.name = "explain", .kind = TP_OPT_STR, .offset = F(explain), .verbs = TP_VERB_SEARCH,
     .metavar = "\"K=V ...\"", .help = "why this layout ranks where it does or fails, e.g. "
     "\"tp=8 pp=4 mbs=2\" (keys tp pp vpp cp ep zero mbs recompute offload; "
     "the rest as the best layout)", .cli_only = true},
    {.name = "explain", .kind = TP_OPT_FLAG, .offset = F(explain_fit), .lo = 1, .hi = 1,
     .verbs = TP_VERB_CALIBRATE, .help = "also what pins each parameter: the rows and sources "
     "that move it, its standard error, its prior and whether it sits at a bound",
     .cli_only = true},
    {.name = "no-offload", .kind = TP_OPT_FLAG, .offset = F(no_offload), .lo = 1, .hi = 1,
     .verbs = SEARCH_CMDS, .help = "never offload the optimizer to the CPU"},
    {.name = "recompute-modes", .kind = TP_OPT_STR, .offset = F(recompute_modes),
     .verbs = SEARCH_CMDS, .metavar = "LIST", .help = "recompute modes to try: a comma list of "
     "none, selective, full, partial (full on N blocks per stage; needs full); default all four"},
    {.name = "zero-stages", .kind = TP_OPT_STR, .offset = F(zero_stages), .verbs = SEARCH_CMDS,
     .metavar = "LIST", .help = "ZeRO stages to try: a comma list of 0-3 (default all the stack "
     "runs; 0 = none, 1 = the distributed optimizer, 3 = FSDP / ZeRO-3)"},
    {.name = "even-pp", .kind = TP_OPT_FLAG, .offset = F(even_pp), .lo = 1, .hi = 1,
     .verbs = SEARCH_CMDS, .help = "only even pipeline splits (no stages shortened for the "
     "embedding and the head)"},
    {.name = "quiet", .aliases = "q", .kind = TP_OPT_FLAG, .offset = F(quiet), .lo = 1, .hi = 1,
     .verbs = SEARCH_CMDS | TP_VERB_CALIBRATE | TP_VERB_SIZE, .help = "no progress line on "
     "stderr (it shows "
     "only on a terminal anyway)", .cli_only = true},
    {.name = "threads", .kind = TP_OPT_INT, .offset = F(threads), .lo = 1, .hi = 256,
     .verbs = SEARCH_CMDS | TP_VERB_SIZE, .metavar = "N", .help = "worker threads (default: the "
     "online CPUs); the result does not depend on it", .cli_only = true},
    {.name = "gpu-hour-price", .kind = TP_OPT_REAL, .offset = F(price), .lo = 0, .hi = 1000000,
     .verbs = TP_VERB_ESTIMATE | TP_VERB_SEARCH | TP_VERB_LOGS | TP_VERB_SIZE, .metavar = "P",
     .help = "price of one GPU-hour, for the cost"},
    /* layout */
    {.name = "dp", .kind = TP_OPT_INT, .offset = F(dp), .lo = 1, .hi = 1 << 20, .verbs = RUN_CMDS,
     .metavar = "N", .help = "data-parallel ranks (default: gpus / (tp*pp*cp))"},
    {.name = "tp", .aliases = "tensor-model-parallel-size", .kind = TP_OPT_INT, .offset = F(tp),
     .lo = 1, .hi = 1024, .verbs = RUN_CMDS, .metavar = "N",
     .help = "tensor-parallel ranks"},
    {.name = "pp", .aliases = "pipeline-model-parallel-size", .kind = TP_OPT_INT, .offset = F(pp),
     .lo = 1, .hi = 1024, .verbs = RUN_CMDS, .metavar = "N",
     .help = "pipeline stages"},
    {.name = "vpp", .aliases = "virtual-pipeline-model-parallel-size", .kind = TP_OPT_INT,
     .offset = F(vpp), .lo = 1, .hi = 1024, .verbs = RUN_CMDS, .metavar = "N",
     .help = "virtual pipeline chunks per stage (interleaved 1F1B)"},
    {.name = "ep", .aliases = "expert-model-parallel-size", .kind = TP_OPT_INT, .offset = F(ep),
     .lo = 1, .hi = 4096, .verbs = RUN_CMDS, .metavar = "N",
     .help = "expert-parallel ranks"},
    {.name = "etp", .aliases = "expert-tensor-parallel-size", .kind = TP_OPT_INT, .offset = F(etp),
     .lo = 1, .hi = 1024, .verbs = RUN_CMDS, .metavar = "N",
     .help = "expert tensor-parallel ranks (default = tp)"},
    {.name = "cp", .aliases = "context-parallel-size", .kind = TP_OPT_INT, .offset = F(cp), .lo = 1,
     .hi = 1024, .verbs = RUN_CMDS, .metavar = "N", .help = "context-parallel ranks"},
    {.name = "sp", .aliases = "sequence-parallel", .kind = TP_OPT_FLAG, .offset = F(sp), .lo = 1,
     .hi = 1, .verbs = RUN_CMDS, .help = "Megatron sequence parallelism (with --tp)"},
    {.name = "zero", .aliases = "zero-stage", .kind = TP_OPT_INT, .offset = F(zero), .lo = 0,
     .hi = 3, .verbs = CK_RUN_CMDS, .metavar = "0-3", .help = "ZeRO stage: 1 optimizer, 2 + "
     "gradients, 3 + parameters sharded"},
    {.name = "fsdp", .kind = TP_OPT_ENUM, .offset = F(fsdp),
     .choices = "no_shard|shard_grad_op|full_shard|hybrid_shard", .values = FSDP_VALUES,
     .verbs = RUN_CMDS, .metavar = "MODE", .help = "FSDP strategy (= --zero 0|2|3|3 with "
     "--shard-group); without --framework the fsdp stack (torchtitan with a pipeline); under "
     "--framework axolotl, FSDP2 instead of DeepSpeed"},
    {.name = "fsdp-backend", .kind = TP_OPT_FLAG, .offset = F(fsdp_backend), .lo = 1, .hi = 1,
     .verbs = JOB_CMDS, .help = "the Hugging Face stack (axolotl, hf) on FSDP2 instead of "
     "DeepSpeed's ZeRO (what --fsdp means under --framework axolotl)"},
    {.name = "distributed-optimizer", .aliases = "use-distributed-optimizer", .kind = TP_OPT_FLAG,
     .offset = F(distopt), .lo = 1, .hi = 1, .verbs = RUN_CMDS,
     .help = "Megatron distributed optimizer (= --zero 1)"},
    {.name = "shard-group", .kind = TP_OPT_INT, .offset = F(shard_group), .lo = 1, .hi = 1 << 20,
     .verbs = RUN_CMDS, .metavar = "N", .help = "HSDP / MiCS: ranks per sharding group, the "
     "states replicated across groups (DeepSpeed mics_shard_size)"},
    {.name = "hpz", .kind = TP_OPT_INT, .offset = F(hpz), .lo = 1, .hi = 1 << 20, .verbs = RUN_CMDS,
     .metavar = "N", .help = "ZeRO++ hpZ (zero 3, DeepSpeed): a secondary copy of the weights "
     "over N ranks, which the backward gathers from (zero_hpz_partition_size)"},
    {.name = "mbs",
     .aliases = "micro-batch|micro-batch-size|per-device-train-batch-size|"
                "train-micro-batch-size-per-gpu",
     .kind = TP_OPT_INT, .offset = F(mbs), .lo = 1, .hi = 1 << 16, .verbs = RUN_CMDS,
     .metavar = "N", .help = "sequences per micro-batch (default 1)"},
    {.name = "gas", .aliases = "grad-accum|gradient-accumulation-steps", .kind = TP_OPT_INT,
     .offset = F(gas), .lo = 1, .hi = 1 << 20, .verbs = RUN_CMDS, .metavar = "N",
     .help = "micro-batches per step (default 1, or gbs / (mbs*dp))"},
    {.name = "gbs", .aliases = "global-batch|global-batch-size|train-batch-size",
     .kind = TP_OPT_INT, .offset = F(gbs), .lo = 1, .hi = 1 << 26, .verbs = JOB_CMDS,
     .metavar = "N", .help = "sequences per optimizer step"},
    {.name = "recompute-layers", .kind = TP_OPT_INT, .offset = F(recompute_layers), .lo = 1,
     .hi = 1024, .verbs = RUN_CMDS, .metavar = "N", .help = "with --recompute full: only N "
     "blocks per stage (partial recompute)"},
    {.name = "pp-first", .kind = TP_OPT_INT, .offset = F(pp_first), .lo = 1, .hi = 1024,
     .verbs = RUN_CMDS, .metavar = "N", .help = "blocks on the first pipeline rank (uneven "
     "split; the ranks not given share the rest equally, each rank's blocks split equally over "
     "its --vpp chunks)"},
    {.name = "pp-last", .kind = TP_OPT_INT, .offset = F(pp_last), .lo = 1, .hi = 1024,
     .verbs = RUN_CMDS, .metavar = "N", .help = "blocks on the last pipeline stage (uneven "
     "split, as --pp-first)"},
    {.name = "recompute-modules", .kind = TP_OPT_STR, .offset = F(recompute_modules),
     .verbs = RUN_CMDS, .metavar = "LIST", .help = "selective recompute of Megatron-Core "
     "modules: core_attn (the default), layernorm, moe_act, mlp, moe, shared_experts, "
     "mla_up_proj (implies --recompute selective)"},
    {.name = "pp-layout", .kind = TP_OPT_STR, .offset = F(pp_layout), .verbs = RUN_CMDS,
     .metavar = "LAYOUT", .help = "blocks per virtual stage: Megatron's "
     "--pipeline-model-parallel-layout string (\"Et*3|(tt|)*29,m|L\"; sets vpp), or embedding, "
     "loss or embedding,loss (the --account-for-...-in-pipeline-split slots)"},
    {.name = "offload", .kind = TP_OPT_ENUM, .offset = F(offload),
     .choices = "none|optimizer|params", .verbs = RUN_CMDS, .metavar = "WHAT",
     .help = "CPU offload (ZeRO-Offload / ZeRO-Infinity)"},
    {.name = "offload-activations", .kind = TP_OPT_FLAG, .offset = F(offload_activations), .lo = 1,
     .hi = 1, .verbs = RUN_CMDS, .help = "keep the activations saved for backward in host memory "
     "(two blocks' worth stay on the GPU)"},
    {.name = "offload-layers", .aliases = "cpu-offloading-num-layers", .kind = TP_OPT_INT,
     .offset = F(offload_layers), .lo = 1, .hi = 1024, .verbs = RUN_CMDS, .metavar = "N",
     .help = "with --offload-activations: only the first N blocks of each stage (Megatron-Core "
     "--cpu-offloading-num-layers; implies --offload-activations)"},
    {.name = "schedule", .kind = TP_OPT_ENUM, .offset = F(schedule),
     .choices = "1f1b|interleaved|gpipe|dualpipe", .verbs = RUN_CMDS, .metavar = "S",
     .help = "pipeline schedule (default 1f1b; interleaved with --vpp; dualpipe: DeepSeek-V3's "
     "bidirectional pipeline, two copies of the parameters, all-to-all hidden)"},
    /* job */
    {.name = "task", .kind = TP_OPT_ENUM, .offset = F(task),
     .choices = "pretrain|sft|dpo|lora|qlora", .verbs = CK_JOB_CMDS, .metavar = "T",
     .help = "what is trained (default pretrain)"},
    {.name = "lora-rank", .aliases = "lora-r", .kind = TP_OPT_INT, .offset = F(lora_rank), .lo = 1,
     .hi = 65536, .verbs = CK_JOB_CMDS, .metavar = "R", .help = "LoRA / QLoRA adapter rank "
     "(default 16)"},
    {.name = "lora-targets", .kind = TP_OPT_STR, .offset = F(lora_targets), .verbs = JOB_CMDS,
     .metavar = "LIST", .help = "adapted modules: all, or a comma list of q,k,v,o,gate,up,down "
     "(default all)"},
    {.name = "optimizer", .kind = TP_OPT_ENUM, .offset = F(optimizer),
     .choices = "adamw|adamw-8bit|adamw-4bit|adafactor|sgd|sgd-momentum|adamw-bf16",
     .verbs = CK_JOB_CMDS, .metavar = "OPT", .help = "optimizer (default adamw)"},
    {.name = "precision", .kind = TP_OPT_ENUM, .offset = F(precision),
     .choices = "bf16|fp16|fp8|fp32|mxfp8|nvfp4|mxfp4", .verbs = CK_JOB_CMDS, .metavar = "P",
     .help = "training precision (default bf16, fp32 master weights; mxfp8, nvfp4 and mxfp4 need "
     "block-scaled tensor cores: B200, B300, GB200, GB300, MI355X)"},
    {.name = "framework", .kind = TP_OPT_ENUM, .offset = F(framework),
     .choices = "deepspeed|fsdp|megatron|axolotl|hf|torchtitan|megatron-deepspeed|nemo",
     .values = FW_VALUES, .verbs = JOB_CMDS, .metavar = "STACK",
     .help = "software stack: what it can run, its kernels and byte conventions "
     "(docs/stacks.md); default: megatron when the layout needs tp/pp/cp/sp, else deepspeed"},
    {.name = "moe-impl", .kind = TP_OPT_ENUM, .offset = F(moe_impl),
     .choices = "eager|grouped|deepspeed|tutel|megablocks|dense", .values = MOE_VALUES,
     .verbs = JOB_CMDS, .metavar = "IMPL", .help = "MoE experts: eager (Hugging Face loop), "
     "grouped (grouped GEMM: Megatron/TE, MegaBlocks), deepspeed (DeepSpeed-MoE/Tutel), dense "
     "(every expert over every token: HF Llama 4); default: the stack's"},
    {.name = "zero-quantized-weights", .kind = TP_OPT_FLAG, .offset = F(zero_quant_weights),
     .lo = 1, .hi = 1, .verbs = JOB_CMDS, .help = "ZeRO++ qwZ (zero 3, DeepSpeed): weights "
     "all-gathered as int8"},
    {.name = "zero-quantized-gradients", .kind = TP_OPT_FLAG, .offset = F(zero_quant_grads),
     .lo = 1, .hi = 1, .verbs = JOB_CMDS, .help = "ZeRO++ qgZ (zero 3, DeepSpeed): gradients "
     "reduced by int4 all-to-alls"},
    {.name = "z3-leaf", .kind = TP_OPT_FLAG, .offset = F(z3_leaf), .lo = 1, .hi = 1,
     .verbs = JOB_CMDS, .help = "ZeRO-3 fetches each MoE block's experts at once "
     "(deepspeed.utils.set_z3_leaf_modules)"},
    {.name = "attention", .kind = TP_OPT_ENUM, .offset = F(attn_impl),
     .choices = "flash|eager|flash2|flash3|flex|cudnn9.19|flash1", .verbs = JOB_CMDS,
     .metavar = "IMPL",
     .help = "attention kernel: flash = the framework's (megatron: TE/cuDNN, native to Hopper "
     "and Blackwell; the others: FlashAttention-2), flash2, flash3 (FA3/cuDNN 9.0-9.1 of "
     "2024), cudnn9.19 (cuDNN's fused attention of 2025-26 releases, faster on Hopper), flash1 "
     "(FlashAttention 1.x, flash-attn < 2 or PyTorch 2.0-2.1 SDPA: A100-H100, head dim <= 128), "
     "flex (PyTorch FlexAttention), eager (stores the s x s scores)"},
    {.name = "tp-comm-overlap", .kind = TP_OPT_FLAG, .offset = F(tp_comm_overlap), .lo = 1, .hi = 1,
     .verbs = JOB_CMDS, .help = "TP collectives overlapped with GEMMs (Megatron-Core "
     "--tp-comm-overlap, torchtitan async TP)"},
    {.name = "no-async-tensor-model-parallel-allreduce", .kind = TP_OPT_FLAG,
     .offset = F(no_async_tp_allreduce), .lo = 1, .hi = 1, .verbs = JOB_CMDS,
     .help = "Megatron's backward TP all-reduce not overlapped with the weight-gradient GEMM "
     "(as Megatron-LM before 2021-09 and Megatron-DeepSpeed always ran it)"},
    {.name = "moe-a2a-overlap", .aliases = "overlap-moe-expert-parallel-comm", .kind = TP_OPT_FLAG,
     .offset = F(moe_a2a_overlap), .lo = 1, .hi = 1, .verbs = JOB_CMDS,
     .help = "MoE all-to-all overlapped with another micro-batch's compute (Megatron-Core "
     "--overlap-moe-expert-parallel-comm; needs ep > 1, vpp with pp > 1, no full recompute)"},
    {.name = "fp8-param-gather", .kind = TP_OPT_FLAG, .offset = F(fp8_param_gather), .lo = 1,
     .hi = 1, .verbs = JOB_CMDS, .help = "GEMM weights kept in FP8 and all-gathered in FP8 "
     "(Megatron-Core --fp8-param-gather; precision fp8 or mxfp8)"},
    {.name = "fp8-attention", .aliases = "fp8-dot-product-attention", .kind = TP_OPT_FLAG,
     .offset = F(fp8_attention), .lo = 1, .hi = 1, .verbs = JOB_CMDS,
     .help = "attention kernels in FP8 (Megatron-Core --fp8-dot-product-attention, Transformer "
     "Engine fp8_dpa; precision fp8, mxfp8, nvfp4 or mxfp4 on a GPU with FP8 tensor cores)"},
    {.name = "fp8-act-store", .aliases = "fp8-activation-store|activation-func-fp8-input-store",
     .kind = TP_OPT_FLAG, .offset = F(fp8_act_store), .lo = 1, .hi = 1, .verbs = JOB_CMDS,
     .help = "the gated MLP's activation input kept in FP8 for its backward (Megatron-Core "
     "--activation-func-fp8-input-store, NeMo activation_func_fp8_input_store; precision fp8, "
     "mxfp8, nvfp4 or mxfp4): memory"},
    {.name = "fp8-recipe", .kind = TP_OPT_ENUM, .offset = F(fp8_recipe),
     .choices = "tensorwise|rowwise", .verbs = JOB_CMDS, .metavar = "RECIPE",
     .help = "FP8 scaling (precision fp8): tensorwise (default: Transformer Engine, torchao "
     "tensorwise), rowwise (torchao's row-wise recipe: torchtitan, fsdp)"},
    {.name = "frozen-weights", .kind = TP_OPT_ENUM, .offset = F(frozen_weights),
     .choices = "auto|16bit|fp8|mxfp8|nvfp4|bf16|fp16", .values = FROZEN_VALUES,
     .verbs = JOB_CMDS, .metavar = "FMT",
     .help = "task lora: how the frozen GEMM weights are stored: auto (default: fp8 under "
     "--fp8-param-gather, else 16bit), 16bit, fp8 (tensor-wise), mxfp8 or nvfp4 (Transformer "
     "Engine's block-scaled tensors, row-wise and column-wise copies; MLPerf's pre-quantized "
     "NVFP4 base): memory"},
    {.name = "dropout", .kind = TP_OPT_FLAG, .offset = F(dropout), .lo = 1, .hi = 1,
     .verbs = JOB_CMDS, .help = "training keeps dropout masks (GPT-2/3-era recipes)"},
    {.name = "fused-loss", .kind = TP_OPT_FLAG, .offset = F(fused_loss), .lo = 1, .hi = 1,
     .verbs = JOB_CMDS, .help = "chunked/fused cross-entropy (no full fp32 logits)"},
    {.name = "kbit-fp32", .kind = TP_OPT_FLAG, .offset = F(kbit_fp32), .lo = 1, .hi = 1,
     .verbs = JOB_CMDS, .help = "QLoRA through PEFT's prepare_model_for_kbit_training (TRL): "
     "non-quantized weights, activations and logits in fp32"},
    {.name = "expandable-segments", .kind = TP_OPT_FLAG, .offset = F(expandable_segments),
     .lo = 1, .hi = 1, .verbs = JOB_CMDS, .help = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:"
     "True: a quarter of the fragmentation (implied for torchtitan)"},
    {.name = "moe-capacity", .kind = TP_OPT_REAL, .offset = F(moe_capacity), .lo = 0, .hi = 64,
     .verbs = JOB_CMDS, .metavar = "X", .help = "token-dropping capacity factor (default: "
     "dropless)"},
    {.name = "moe-pad-capacity", .aliases = "moe-pad-to-capacity|moe-pad-expert-input-to-capacity",
     .kind = TP_OPT_FLAG, .offset = F(moe_pad_capacity), .lo = 1, .hi = 1, .verbs = JOB_CMDS,
     .help = "every expert's input padded to its capacity (Megatron-Core "
     "--moe-pad-expert-input-to-capacity; needs --moe-capacity; not with --moe-dispatcher flex)"},
    {.name = "moe-dispatcher", .kind = TP_OPT_ENUM, .offset = F(moe_dispatcher),
     .choices = "alltoall|allgather|flex|hybridep", .verbs = JOB_CMDS, .metavar = "D",
     .aliases = "moe-token-dispatcher-type", .help = "how MoE tokens reach their experts "
     "(Megatron-Core --moe-token-dispatcher-type): alltoall (default), allgather, flex (DeepEP: "
     "once per node, then NVLink), hybridep (flex with --moe-flex-dispatcher-backend hybridep: "
     "DeepEP's HybridEP kernels at their measured bandwidth)"},
    {.name = "cuda-graphs", .kind = TP_OPT_ENUM, .offset = F(cuda_graphs),
     .choices = "none|layer|full|local|transformer_engine|full_iteration",
     .values = CUDA_GRAPHS_VALUES, .verbs = JOB_CMDS, .metavar = "G",
     .aliases = "cuda-graph-impl", .help = "CUDA graphs (Megatron-Core): none (default), layer "
     "(each block's forward and backward replayed: --cuda-graph-impl local|transformer_engine, "
     "--enable-cuda-graph), full (a step's whole forward-backward: --cuda-graph-impl "
     "full_iteration, MLPerf FULL_CUDA_GRAPH=1; not with dropless MoE)"},
    {.name = "log-params-norm", .kind = TP_OPT_FLAG, .offset = F(log_params_norm), .lo = 1,
     .hi = 1, .verbs = JOB_CMDS, .help = "the run logs the parameters' L2 norm every step "
     "(Megatron --log-params-norm: a walk over every tensor, all-reduces and a host read; "
     "framework megatron or megatron-deepspeed)"},
    {.name = "log-num-zeros-in-grad", .kind = TP_OPT_FLAG, .offset = F(log_num_zeros), .lo = 1,
     .hi = 1, .verbs = JOB_CMDS, .help = "the run counts the zeros of every gradient every step "
     "(Megatron-Core --log-num-zeros-in-grad: 4 kernels per tensor and a host read; framework "
     "megatron; megatron-deepspeed logs 0 without counting)"},
    {.name = "moe-imbalance", .kind = TP_OPT_REAL, .offset = F(moe_imbalance), .lo = 1, .hi = 64,
     .verbs = JOB_CMDS, .metavar = "X", .help = "dropless: busiest EP rank's load over the mean "
     "(default: derived from --moe-routing, the experts per rank and the EP size; docs/moe.md)"},
    {.name = "moe-routing", .kind = TP_OPT_ENUM, .offset = F(moe_routing),
     .choices = "corpus|dataset|forced", .values = MOE_ROUTING_VALUES, .verbs = JOB_CMDS,
     .metavar = "R", .help = "what the router meets, for the busiest EP rank's load: corpus (a "
     "router trained on the mixed corpus it routes; the default for pretrain), dataset (a "
     "trained router fed one dataset; the default for fine-tuning), forced (Megatron-Core "
     "--moe-router-force-load-balancing)"},
    {.name = "trainable-frac", .kind = TP_OPT_REAL, .offset = F(trainable_frac), .lo = 1e-6,
     .hi = 1, .verbs = JOB_CMDS, .metavar = "F", .help = "share of the token slots the "
     "throughput and --tokens count: Axolotl logs trainable tokens only (no prompt, no "
     "padding); default 1"},
    {.name = "overhead-gb", .kind = TP_OPT_REAL, .offset = F(overhead_gb), .lo = 0, .hi = 1e3,
     .verbs = JOB_CMDS, .metavar = "X", .help = "CUDA context and workspaces per GPU (default "
     "1.0)"},
    {.name = "nccl-gb", .kind = TP_OPT_REAL, .offset = F(nccl_gb), .lo = 0, .hi = 1e3,
     .verbs = JOB_CMDS, .metavar = "X", .help = "NCCL memory per live communicator (default 0.5)"},
    {.name = "nccl-buffsize", .kind = TP_OPT_REAL, .offset = F(nccl_buffsize), .lo = 4096,
     .hi = 1073741824, .verbs = JOB_CMDS, .metavar = "BYTES", .help = "NCCL_BUFFSIZE, the Simple "
     "protocol's buffer per channel and peer (default 4194304, NCCL's): scales --nccl-gb's "
     "Simple share"},
    {.name = "fragmentation", .aliases = "frag", .kind = TP_OPT_REAL, .offset = F(frag), .lo = 0,
     .hi = 1, .verbs = JOB_CMDS, .metavar = "F", .help = "allocator fragmentation, fraction of "
     "states + activations (default 0.08)"},
    {.name = "per-stage", .kind = TP_OPT_FLAG, .offset = F(per_stage), .lo = 1, .hi = 1,
     .verbs = RUN_CMDS, .help = "report every pipeline stage, not only the worst"},
    {.name = "attention-flops", .kind = TP_OPT_ENUM, .offset = F(attn_conv),
     .choices = "causal|noncausal", .verbs = TP_VERB_PARAMS, .metavar = "CONV",
     .help = "count the causal half of attention (default) or the full square"},
    {.name = "mtp", .kind = TP_OPT_INT, .offset = F(mtp), .lo = 0, .hi = 16,
     .verbs = TP_VERB_PARAMS, .metavar = "N", .help = "multi-token-prediction modules trained "
     "along (default 0)"},
    {.name = "per-layer", .kind = TP_OPT_FLAG, .offset = F(per_layer), .lo = 1, .hi = 1,
     .verbs = TP_VERB_PARAMS, .help = "list every block instead of runs of identical blocks"},
    /* shape flags: describe a model alone, or override a preset / config.json */
    {.name = "layers", .aliases = "num-layers|num-hidden-layers", .kind = TP_OPT_INT,
     .offset = S(layers), .lo = 1, .hi = TP_MAX_LAYERS, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "transformer blocks"},
    {.name = "hidden", .aliases = "hidden-size", .kind = TP_OPT_INT, .offset = S(hidden), .lo = 1,
     .hi = 1 << 18, .verbs = SHAPE_CMDS, .metavar = "N", .help = "model width H"},
    {.name = "heads", .aliases = "num-attention-heads", .kind = TP_OPT_INT, .offset = S(heads),
     .lo = 1, .hi = 1 << 14, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "query heads"},
    {.name = "kv-heads", .aliases = "num-key-value-heads|num-query-groups", .kind = TP_OPT_INT,
     .offset = S(kv_heads), .lo = 1, .hi = 1 << 14, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "key/value heads (GQA; default = heads)"},
    {.name = "head-dim", .aliases = "kv-channels", .kind = TP_OPT_INT, .offset = S(head_dim),
     .lo = 1, .hi = 1 << 12, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "head dimension (default hidden/heads)"},
    {.name = "ffn", .aliases = "intermediate-size|ffn-hidden-size", .kind = TP_OPT_INT,
     .offset = S(ffn), .lo = 1, .hi = 1 << 22, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "dense MLP width (default 4H for gelu, 256*ceil(8H/3/256) for swiglu)"},
    {.name = "vocab", .aliases = "vocab-size", .kind = TP_OPT_INT, .offset = S(vocab), .lo = 1,
     .hi = 1 << 24, .verbs = SHAPE_CMDS | TP_VERB_SIZE, .metavar = "N",
     .help = "vocabulary (embedding rows)"},
    {.name = "max-positions", .aliases = "max-position-embeddings", .kind = TP_OPT_INT,
     .offset = S(max_positions), .lo = 1, .hi = 1 << 24, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "rows of a learned position table (--pos learned)"},
    {.name = "experts", .aliases = "num-experts|num-local-experts", .kind = TP_OPT_INT,
     .offset = S(experts), .lo = 0, .hi = 4096, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "routed experts per MoE block (0 = dense)"},
    {.name = "topk", .aliases = "top-k|moe-router-topk|num-experts-per-tok", .kind = TP_OPT_INT,
     .offset = S(topk), .lo = 1, .hi = 4096, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "routed experts per token"},
    {.name = "moe-ffn", .aliases = "moe-intermediate-size|moe-ffn-hidden-size", .kind = TP_OPT_INT,
     .offset = S(moe_ffn), .lo = 1, .hi = 1 << 22, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "width of one routed expert"},
    {.name = "shared-experts", .kind = TP_OPT_INT, .offset = S(shared_experts), .lo = 0, .hi = 4096,
     .verbs = SHAPE_CMDS, .metavar = "N", .help = "shared experts (each moe-ffn wide)"},
    {.name = "dense-layers", .kind = TP_OPT_INT, .offset = S(dense_layers), .lo = 0,
     .hi = TP_MAX_LAYERS, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "leading blocks with a dense MLP instead of experts"},
    {.name = "window", .aliases = "sliding-window", .kind = TP_OPT_INT, .offset = S(window),
     .lo = 0, .hi = 1 << 24, .verbs = SHAPE_CMDS, .metavar = "N",
     .help = "sliding attention window on every block (0 = full attention)"},
    {.name = "tied", .kind = TP_OPT_FLAG, .offset = S(tied), .lo = 1, .hi = 1, .verbs = SHAPE_CMDS,
     .help = "LM head shares the embedding"},
    {.name = "untied", .kind = TP_OPT_FLAG, .offset = S(tied), .verbs = SHAPE_CMDS,
     .help = "separate LM head"},
    {.name = "mlp", .kind = TP_OPT_ENUM, .offset = S(mlp), .choices = "gelu|swiglu|geglu",
     .values = MLP_VALUES, .verbs = SHAPE_CMDS, .metavar = "KIND",
     .help = "gelu: 2 matrices; swiglu/geglu: 3 matrices"},
    {.name = "norm", .kind = TP_OPT_ENUM, .offset = S(norm), .choices = "layernorm|rmsnorm",
     .values = NORM_VALUES, .verbs = SHAPE_CMDS, .metavar = "KIND",
     .help = "LayerNorm (weight+bias) or RMSNorm (weight)"},
    {.name = "bias", .kind = TP_OPT_FLAG, .offset = S(bias), .lo = 1, .hi = 1, .verbs = SHAPE_CMDS,
     .help = "biases on q, k, v, o and the MLP"},
    {.name = "no-bias", .kind = TP_OPT_FLAG, .offset = S(bias), .verbs = SHAPE_CMDS,
     .help = "no linear biases"},
    {.name = "qk-norm", .kind = TP_OPT_FLAG, .offset = S(qk_norm), .lo = 1, .hi = 1,
     .verbs = SHAPE_CMDS, .help = "per-head RMSNorm on q and k"},
    {.name = "pos", .kind = TP_OPT_ENUM, .offset = S(pos), .choices = "learned|rope|alibi",
     .values = POS_VALUES, .verbs = SHAPE_CMDS, .metavar = "KIND",
     .help = "position encoding"},
};

const struct tp_option *tp_options(size_t *n)
{
    *n = sizeof OPTIONS / sizeof OPTIONS[0];
    return OPTIONS;
}
