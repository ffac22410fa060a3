/*
 * trainplan/io.h - input and output: checkpoints, the enum name tables, a run as options by
 * name (tp_request), the JSON documents and tp_call_json, the ABI checks for bindings and the
 * SVG plots.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_IO_H
#define TRAINPLAN_IO_H

#include "runs.h"
#include "search.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Checkpoints (trainplan checkpoint): safetensors files, shard indexes, DeepSpeed ZeRO       */
/* folders, and the size of the checkpoints a run will save                                  */
/* ----------------------------------------------------------------------------------------- */

/* The largest safetensors header accepted (safetensors crate MAX_HEADER_SIZE, 100,000,000). */
#define TP_ST_MAX_HEADER 100000000u
/* Most dimensions one tensor may have. */
#define TP_ST_MAX_DIMS 8

/* safetensors dtypes (huggingface/safetensors src/tensor.rs `Dtype`); append only. */
enum tp_st_dtype {
    TP_ST_UNKNOWN = 0, TP_ST_BOOL, TP_ST_U8, TP_ST_I8, TP_ST_F8_E5M2, TP_ST_F8_E4M3,
    TP_ST_F8_E8M0, TP_ST_F4, TP_ST_F6_E2M3, TP_ST_F6_E3M2, TP_ST_I16, TP_ST_U16, TP_ST_F16,
    TP_ST_BF16, TP_ST_I32, TP_ST_U32, TP_ST_F32, TP_ST_C64, TP_ST_F64, TP_ST_I64, TP_ST_U64,
    TP_ST_DTYPE_COUNT
};
/* The name as a header writes it ("BF16"); "?" for TP_ST_UNKNOWN. */
TP_API const char *tp_st_dtype_name(enum tp_st_dtype d);
/* Bits per element (4 for F4, 6 for F6_*, 8 for F8_*, 128 for C64...); 0 when unknown. */
TP_API unsigned tp_st_dtype_bits(enum tp_st_dtype d);

/* What can be wrong with a checkpoint; append only.  Names (tp_ckpt_problem_name) are the
   JSON `kind` values. */
enum tp_ckpt_kind {
    TP_CK_BAD_HEADER = 0, /* "bad-header": no 8-byte length, a length past the limit, not JSON,
                             not an object, a tensor entry without dtype/shape/data_offsets */
    TP_CK_STUB,           /* "stub": a zero-length file, or every tensor has zero elements */
    TP_CK_TRUNCATED,      /* "truncated": the data section is shorter than the header says */
    TP_CK_OVERLAP,        /* "overlap": two tensors' byte ranges overlap */
    TP_CK_OUT_OF_BOUNDS,  /* "out-of-bounds": a tensor's range ends past the file */
    TP_CK_GAP,            /* "gap": bytes no tensor covers (the format has none) */
    TP_CK_SIZE_MISMATCH,  /* "size-mismatch": byte range != shape x dtype size */
    TP_CK_UNKNOWN_DTYPE,  /* "unknown-dtype" */
    TP_CK_BAD_INDEX,      /* "bad-index": model.safetensors.index.json unreadable or malformed */
    TP_CK_MISSING_SHARD,  /* "missing-shard": the index names a file that is not there */
    TP_CK_NOT_IN_SHARD,   /* "not-in-shard": the index maps a tensor to a file without it */
    TP_CK_NOT_IN_INDEX,   /* "not-in-index": a shard holds a tensor the index does not list */
    TP_CK_DUPLICATE,      /* "duplicate": two files hold the same tensor */
    TP_CK_MISSING_TENSOR, /* "missing-tensor": the model has it, the checkpoint does not */
    TP_CK_UNEXPECTED_TENSOR, /* "unexpected-tensor": the checkpoint has it, the model does not */
    TP_CK_SHAPE_MISMATCH, /* "shape-mismatch" */
    TP_CK_PARAM_MISMATCH, /* "param-mismatch": total parameters differ from the model's */
    TP_CK_MISSING_TAG,    /* "missing-tag": `latest` names a folder that is not there */
    TP_CK_MISSING_RANK,   /* "missing-rank": a ZeRO rank file is absent */
    TP_CK_SMALL_RANK,     /* "small-rank-file": a ZeRO rank file under half its planned size */
    TP_CK_KIND_COUNT
};
TP_API const char *tp_ckpt_problem_name(enum tp_ckpt_kind k);

struct tp_ckpt_problem {
    enum tp_ckpt_kind kind;
    char file[256];    /* path of the file concerned ("" when none) */
    char tensor[192];  /* tensor name ("" when the problem is the file's) */
    char detail[256];  /* one line */
};

/* One tensor entry of a safetensors header. */
struct tp_st_tensor {
    char *name;                      /* owned by the header */
    enum tp_st_dtype dtype;
    uint32_t ndim;
    uint64_t shape[TP_ST_MAX_DIMS];
    uint64_t elements;               /* product of the shape (UINT64_MAX when it overflows) */
    uint64_t begin, end;             /* data_offsets, relative to the data section */
    bool excluded;                   /* flagged size-mismatch or unknown-dtype: its element
                                        count is not trusted and is left out of params */
};

/* A parsed safetensors header and what is wrong with it. */
struct tp_st_header {
    uint64_t header_bytes;           /* N, the header length the first 8 bytes give */
    uint64_t data_bytes;             /* bytes of the file after 8 + N (0 when the file is
                                        shorter) */
    uint64_t params;                 /* sum of the elements of the tensors not excluded
                                        (UINT64_MAX when params_overflow) */
    bool params_overflow;            /* that sum does not fit 64 bits */
    size_t n_excluded;               /* tensors excluded from params */
    size_t n_tensors;
    struct tp_st_tensor *tensors;    /* in header order */
    size_t n_problems;
    struct tp_ckpt_problem *problems; /* `file` left empty: the caller knows the file */
};

/* Parses the header of a safetensors file from its first `len` bytes (`buf`), the file being
   `file_bytes` long; tensor data is never looked at.  Pure and bounded: the length prefix is
   checked against TP_ST_MAX_HEADER, `len` and `file_bytes` before anything is allocated, and
   offsets are checked, never trusted.  Faults are problems in `h`, not errors: TP_OK whenever
   the header could be examined; TP_ENOMEM only.  Free `h` with tp_st_header_free. */
TP_API enum tp_status tp_st_parse(const unsigned char *buf, size_t len, uint64_t file_bytes,
                           struct tp_st_header *h, struct tp_error *err);
TP_API void tp_st_header_free(struct tp_st_header *h);

/* One file of a checkpoint. */
struct tp_ckpt_file {
    char path[512];
    uint64_t bytes;        /* size on disk (0 when missing) */
    uint64_t header_bytes;
    size_t tensors;
    uint64_t params;       /* elements of its tensors, the excluded ones left out */
    size_t excluded;       /* its tensors flagged size-mismatch or unknown-dtype */
    char dtypes[64];       /* the dtypes it holds, comma-separated ("BF16", "BF16,F32") */
    bool missing;          /* named by the index, not on disk */
    bool stub;             /* zero-length, or every tensor has zero elements */
};

/* One tensor of the checkpoint (stub files excluded), sorted by name. */
struct tp_ckpt_tensor {
    char *name;
    uint32_t file;         /* index into files */
    enum tp_st_dtype dtype;
    uint32_t ndim;
    uint64_t shape[TP_ST_MAX_DIMS];
    uint64_t elements;
    bool excluded;         /* left out of the totals (struct tp_st_tensor) */
};

/* A DeepSpeed ZeRO checkpoint file (`*_model_states.pt`, `*_optim_states.pt`): name and size
   only, the pickles are not opened. */
struct tp_zero_file {
    char name[128];
    uint64_t bytes;
    bool optim;            /* *_optim_states.pt, else *_model_states.pt */
    bool zero_rank;        /* zero_pp_rank_R_...: one per data-parallel rank */
    uint32_t dp_rank, mp_rank;
    double planned_bytes;  /* from tp_ckpt_plan when a model was given, else 0 */
};

struct tp_ckpt_zero {
    bool present;
    char latest[64];       /* the tag `latest` names ("" when no such file) */
    char tag_dir[512];     /* the folder inspected (global_stepN) */
    size_t n_tags;         /* global_step* folders beside it */
    char tags[8][64];      /* up to 8 of them, in name order */
    size_t n_files;
    struct tp_zero_file *files;
    uint32_t dp_ranks, mp_ranks; /* 1 + the largest rank numbers seen */
    uint32_t stage_hint;   /* 3 when per-rank model states exist, else 2 (stage 0-2 save
                              alike) */
    uint64_t model_bytes, optim_bytes;
};

/* An inspected checkpoint. */
struct tp_ckpt {
    char path[512];
    bool has_index;
    size_t n_files;
    struct tp_ckpt_file *files;
    size_t n_tensors;
    struct tp_ckpt_tensor *tensors;
    size_t n_problems;
    struct tp_ckpt_problem *problems;
    size_t n_lost;
    char **lost;                   /* tensors the index maps to shards that are not there,
                                      sorted (their missing-tensor lines are left out: the
                                      missing-shard line says it) */
    uint64_t total_params;         /* elements of every tensor, counted once; tensors flagged
                                      size-mismatch or unknown-dtype are left out */
    uint64_t total_bytes;          /* the safetensors files' sizes */
    size_t n_excluded;             /* tensors left out of the totals (their problems say why) */
    bool totals_overflow;          /* a total does not fit 64 bits: it is UINT64_MAX, and
                                      printed as unknown, never wrapped */
    uint64_t by_comp[TP_COMP_COUNT + 1]; /* by the component its name says; [TP_COMP_COUNT] =
                                            other (buffers, unknown names) */
    uint64_t by_dtype[TP_ST_DTYPE_COUNT]; /* parameters per dtype */
    /* against the model (compared = a model was given) */
    bool compared;
    bool names_compared;           /* the family's checkpoint names follow the params core */
    bool matches_config;
    uint64_t expected_params;      /* the model's params_checkpoint */
    size_t matched, missing, unexpected, shape_mismatches;
    bool head_in_checkpoint;       /* lm_head.weight is stored */
    struct tp_ckpt_zero zero;
};

/* Inspects `path`: a .safetensors file, a model.safetensors.index.json, or a folder (its
   *.safetensors files and index, and any DeepSpeed `latest` / global_stepN / *_states.pt).
   Only headers are read.  With `m` (may be NULL) compares the tensors with the model's and
   plans the ZeRO files' sizes for `n_gpus` ranks (0 = the ranks found) under job `j` (NULL:
   tp_job_init's).  TP_ENOTFOUND / TP_EIO when `path` cannot be read; every fault in the files
   is a problem in the result.  Free with tp_ckpt_free (NULL is fine). */
TP_API enum tp_status tp_ckpt_inspect(const char *path, const struct tp_model *m,
                               const struct tp_job *j, uint32_t n_gpus, struct tp_ckpt **out,
                               struct tp_error *err);
TP_API void tp_ckpt_free(struct tp_ckpt *c);
/* The component a Hugging Face tensor name belongs to (TP_COMP_COUNT: none of them). */
TP_API enum tp_component tp_ckpt_component(const char *name);

/* The names of the job and layout enums, one table each (src/base/names.c): what the CLI's
   options take, a binding's keywords take, and the JSON documents print. */
enum tp_names {
    TP_NAMES_TASK = 0,  /* enum tp_task: pretrain, sft, dpo, lora, qlora */
    TP_NAMES_OPTIMIZER, /* enum tp_optimizer: adamw, adamw-8bit, ... */
    TP_NAMES_PRECISION, /* enum tp_precision: bf16, fp16, fp8, fp32, mxfp8, nvfp4, mxfp4 */
    TP_NAMES_ATTENTION, /* enum tp_attn_impl: flash, eager, flash2, flash3, flex */
    TP_NAMES_RECOMPUTE, /* enum tp_recompute: none, selective, full */
    TP_NAMES_OFFLOAD,   /* enum tp_offload: none, optimizer, params */
    TP_NAMES_SCHEDULE,  /* enum tp_schedule: 1f1b, interleaved, gpipe, dualpipe */
    TP_NAMES_LAYER_ATTN, /* enum tp_layer_attn: full, sliding, chunked */
    TP_NAMES_ATTN_CONVENTION, /* enum tp_attn_convention: causal, noncausal */
    TP_NAMES_MIXER,     /* enum tp_mixer: attention, mamba2, gated_deltanet, none */
    TP_NAMES_FP8_RECIPE, /* enum tp_fp8_recipe: tensorwise, rowwise */
    TP_NAMES_MOE_DISPATCHER, /* enum tp_moe_dispatcher: alltoall, allgather, flex, hybridep */
    TP_NAMES_MOE_ROUTING, /* enum tp_moe_routing: auto, corpus, dataset, forced */
    TP_NAMES_COUNT
};
/* The name of `value` in table `t`; "?" when out of range. */
TP_API const char *tp_name(enum tp_names t, int value);
/* The value named `name` in table `t`, or -1. */
TP_API int tp_name_value(enum tp_names t, const char *name);
/* The table's names joined by '|' ("none|selective|full") into buf (NUL-terminated), for
   messages and help; returns the length needed. */
TP_API size_t tp_name_choices(enum tp_names t, char *buf, size_t len);

/* ----------------------------------------------------------------------------------------- */
/* A run as options (src/api/request.c): what the CLI's flags and a binding's keywords describe */
/* ----------------------------------------------------------------------------------------- */

/* A run's settings, from the options (tp_args_request).  TP_UNSET / 0 / negative leave the
   default, as each field says. */
struct tp_request {
    const char *gpu;                /* catalog key or alias; NULL = h100-sxm */
    int64_t gpus, gpus_per_node;    /* TP_UNSET: dp*tp*pp*cp when dp is given, else a node */
    double hbm_gb, peak_tflops, hbm_tbps, intra_gbps, inter_gbps, host_gbps; /* 0 = catalog */
    /* job: enums by value; framework an enum tp_framework, TP_UNSET: deepspeed, or megatron
       when the layout needs model parallelism */
    int task, optimizer, precision, framework, attn_impl, moe_impl;
    int fp8_recipe;                 /* enum tp_fp8_recipe (precision fp8) */
    int frozen_weights;             /* enum tp_frozen_format (task lora; 0: auto) */
    int moe_dispatcher;             /* enum tp_moe_dispatcher */
    int moe_routing;                /* enum tp_moe_routing (0: by the task) */
    int cuda_graphs;                /* enum tp_cuda_graphs */
    bool z3_leaf, dropout, fused_loss, tp_comm_overlap, kbit_fp32, fp8_param_gather;
    bool no_async_tp_allreduce; /* struct tp_job no_async_tp_allreduce */
    bool fp8_attention;             /* --fp8-attention (precision fp8, mxfp8, nvfp4, mxfp4) */
    bool fp8_act_store;             /* --fp8-act-store (precision fp8, mxfp8, nvfp4, mxfp4) */
    bool fsdp_backend;              /* framework axolotl on FSDP2, not DeepSpeed */
    bool expandable_segments;       /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True */
    bool moe_a2a_overlap;
    bool moe_pad_capacity;          /* --moe-pad-capacity (needs moe_capacity) */
    bool log_params_norm, log_num_zeros; /* Megatron's per-step logging (host_log.c) */
    bool zero_quant_weights, zero_quant_grads; /* ZeRO++ qwZ, qgZ */
    int64_t seq;                    /* TP_UNSET: the model's context, else 4096 */
    int64_t doc_len;                /* packed documents' mean length; 0 = unpacked */
    int64_t lora_rank;              /* TP_UNSET = 16 */
    uint32_t lora_targets;          /* TP_LORA_* mask; 0 = all */
    double moe_capacity, moe_imbalance, overhead_gb, nccl_gb, frag; /* < 0 = default */
    double nccl_buffsize;           /* NCCL_BUFFSIZE in bytes; < 0 = NCCL's 4 MiB */
    double trainable_frac; /* < 0 = every slot counts */
    /* layout (TP_UNSET = default or derived) */
    int64_t dp, tp, pp, vpp, ep, etp, cp, zero, shard_group, mbs, gas, gbs, recompute_layers;
    int64_t pp_first, pp_last;
    int64_t hpz;                    /* ZeRO++ hpZ group (TP_UNSET: off) */
    bool sp, hybrid_shard;          /* hybrid_shard: FSDP HYBRID_SHARD (shard within a node) */
    int recompute, offload, schedule;
    bool offload_activations;       /* --offload-activations */
    int64_t offload_layers;         /* --offload-layers (TP_UNSET: all) */
    const char *pp_layout;          /* Megatron's --pipeline-model-parallel-layout string, or
                                       embedding, loss, embedding,loss (NULL: none) */
    const char *recompute_modules;  /* "core_attn,moe_act,..." (implies recompute selective) */
    bool no_stack_check;            /* logs: a measured run may use what its stack cannot */
    bool gbs_is_target;             /* search, size: gbs is the search's, not the layout's */
};
TP_API void tp_request_init(struct tp_request *r);
/* The cluster, job and layout a request describes for model `m` (finalized), checked
   (tp_layout_check, tp_stack_check) and with gbs turned into gas. */
TP_API enum tp_status tp_request_resolve(const struct tp_request *r, const struct tp_model *m,
                                         struct tp_cluster *c, struct tp_job *j,
                                         struct tp_layout *l, struct tp_error *err);
/* A model by name, in this order: a config.json or a folder holding one when `name` exists; a
   Hugging Face id (ORG/NAME) whose config.json is in the local hub cache ($HF_HUB_CACHE, else
   $HF_HOME/hub, else ~/.cache/huggingface/hub; the revision refs/main names, else the newest
   snapshot; never the network); a preset by key, alias or Hugging Face id; else the error of a
   path (a '/', or ending ".json") or of an unknown preset. */
TP_API enum tp_status tp_model_from_name(const char *name, struct tp_model *m,
                                         struct tp_error *err);
/* "q,k,v" (or all, attention, mlp) as TP_LORA_* bits; 0 for an unknown name. */
TP_API uint32_t tp_lora_targets_parse(const char *list);

/* ----------------------------------------------------------------------------------------- */
/* The option schema (src/api/option_table.c: the one table; src/api/options.c: parsing)      */
/* ----------------------------------------------------------------------------------------- */

/* The verbs, as bits: which verbs an option applies to. */
enum tp_verb {
    TP_VERB_PARAMS = 1u << 0,
    TP_VERB_MODELS = 1u << 1,
    TP_VERB_MEMORY = 1u << 2,
    TP_VERB_GPUS = 1u << 3,
    TP_VERB_ESTIMATE = 1u << 4,
    TP_VERB_SEARCH = 1u << 5,
    TP_VERB_VALIDATE = 1u << 6,
    TP_VERB_CALIBRATE = 1u << 7,
    TP_VERB_LOGS = 1u << 8,
    TP_VERB_EXPORT = 1u << 9,
    TP_VERB_SIZE = 1u << 10,
    TP_VERB_CHECKPOINT = 1u << 11,
};
#define TP_VERB_ALL 0xfffu
/* "estimate" for TP_VERB_ESTIMATE ("?" for anything else); the bit of a verb's name, 0 when
   none has it. */
TP_API const char *tp_verb_name(unsigned verb);
TP_API unsigned tp_verb_find(const char *name);

/* What an option's value is. */
enum tp_opt_kind {
    TP_OPT_INT,  /* int64_t field, a whole number in [lo, hi] ("7.86e8" is whole) */
    TP_OPT_REAL, /* double field, in [lo, hi] */
    TP_OPT_STR,  /* const char * field (the caller's text, not copied) */
    TP_OPT_ENUM, /* int field: one of `choices`, stored as its `values` entry (or its index) */
    TP_OPT_FLAG  /* int field set to `lo`; takes no value on the CLI, true/false in a binding */
};

/* One option: its names, its value and where it goes, the verbs that take it and its help. */
struct tp_option {
    const char *name;     /* the long name with dashes ("gpu-hour-price"); a binding's keyword
                             is the same with underscores (gpu_hour_price) */
    const char *aliases;  /* '|'-separated other names (the frameworks' own spellings), or NULL */
    enum tp_opt_kind kind;
    size_t offset;        /* its field in struct tp_args */
    double lo, hi;        /* TP_OPT_INT, TP_OPT_REAL: the inclusive range; TP_OPT_FLAG: lo is
                             the value set */
    const char *choices;  /* TP_OPT_ENUM: '|'-separated names */
    const int *values;    /* TP_OPT_ENUM: the value per choice (NULL: the index) */
    unsigned verbs;       /* enum tp_verb bits */
    const char *metavar;  /* the value's placeholder in help ("N", "FILE"), NULL for a flag */
    const char *help;
    bool cli_only;        /* the CLI's output and progress (format, svg, quiet, ...): no
                             binding takes it */
};

/* The one option table, in the order --help lists it. */
TP_API const struct tp_option *tp_options(size_t *n);
/* The option `name` names: its name or an alias, with dashes or underscores; NULL if none. */
TP_API const struct tp_option *tp_option_find(const char *name);
/* The same for verb(s) `verbs`: a name two verbs use differently (calibrate's --explain, a flag;
   search's, a layout) is one row per verb; the row of another verb when none is `verbs`'. */
TP_API const struct tp_option *tp_option_find_verb(const char *name, unsigned verbs);
/* The nearest option name of `verb` to an unknown `name` (edit distance <= 2, or a name that
   starts with it), dashed; NULL when none is near.  The CLI, bindings and the page all say
   "did you mean" with it. */
TP_API const char *tp_option_suggest(const char *name, unsigned verb);

#define TP_ARGS_MAX_FILES 64
#define TP_ARGS_MAX_SWEEPS 4
#define TP_ARGS_MAX_SWEEP_VALUES 64

/* An option given a list on memory or estimate: mbs 1,2,4,8, gpus 8..512. */
struct tp_sweep {
    const char *name;        /* the option, dashed */
    size_t offset;           /* its int64_t field in struct tp_args */
    int64_t values[TP_ARGS_MAX_SWEEP_VALUES];
    size_t n;
};

/* Every option's value, as the table fills it (unset fields hold TP_UNSET, 0 or -1 as each
   says: tp_args_init).  The CLI parses argv into it, a binding sets it by keyword. */
struct tp_args {
    unsigned cmd;            /* one enum tp_verb bit */
    const char *model;       /* positional MODEL: preset name, config.json or directory */
    const char *files[TP_ARGS_MAX_FILES]; /* positional files of validate, calibrate, logs,
                                             checkpoint */
    size_t n_files;
    int help;
    int format;              /* 0 table, 1 json, 2 csv */
    int64_t seq;             /* TP_UNSET = the model's */
    int64_t doc_len;         /* packed documents' mean length; 0 = unpacked */
    int recompute;           /* enum tp_recompute */
    int attn_conv;           /* enum tp_attn_convention */
    int64_t mtp;             /* MTP modules trained; TP_UNSET = 0 */
    int per_layer;           /* print every block */
    struct tp_shape shape;
    /* cluster */
    const char *gpu;
    int64_t gpus, gpus_per_node;
    double hbm_gb;           /* 0 = the catalog's (so are the next five) */
    double peak_tflops, hbm_tbps, intra_gbps, inter_gbps, host_gbps;
    /* time and cost */
    const char *calibration;
    /* validate, calibrate */
    const char *base, *output;
    int no_cv, no_per_gpu, summary;
    int64_t min_gpu_rows, max_evals, starts, fold_rows, max_folds, fit_rows;
    double prior_weight;     /* -1 = default */
    double tokens, epochs, dataset_tokens, price; /* price -1 = not given */
    /* search */
    int64_t top, max_tp, max_pp, max_cp, max_ep, max_mbs;
    double mem_headroom;
    int no_offload;
    int even_pp;             /* no uneven pipeline splits */
    int64_t threads;         /* TP_UNSET = the online CPUs */
    const char *explain;     /* search: the layout to explain, "tp=8 pp=4 mbs=2" */
    int explain_fit;         /* calibrate: what pins each parameter */
    unsigned given;          /* TP_GIVEN_* of the options given (tp_args_set): the inputs
                                tp_defaults_that_matter leaves alone */
    const char *recompute_modes; /* none,selective,full,partial */
    const char *zero_stages;     /* 0,1,2,3 */
    const char *gpus_list;   /* search's gpus as a list: 8,16,32 or 8..512 */
    int quiet;               /* no progress line */
    /* layout (TP_UNSET = default / derived) */
    int64_t dp, tp, pp, vpp, ep, etp, cp, zero, shard_group, hpz, mbs, gas, gbs, recompute_layers;
    int64_t pp_first, pp_last; /* uneven pipeline split */
    const char *pp_layout;   /* Megatron layout string or embedding,loss */
    const char *recompute_modules; /* core_attn,moe_act,... */
    int sp, offload, schedule;
    int offload_activations;
    int64_t offload_layers;
    int fsdp;                /* 0 not given, 1 no_shard, 2 shard_grad_op, 3 full_shard, 4 hybrid */
    int distopt;             /* the Megatron distributed optimizer (= zero 1) */
    int fsdp_backend;        /* the Hugging Face stack on FSDP2 instead of DeepSpeed */
    /* job */
    int task, optimizer, precision, attn_impl, dropout, fused_loss, tp_comm_overlap;
    int no_async_tp_allreduce; /* --no-async-tensor-model-parallel-allreduce */
    int framework;           /* enum tp_framework; TP_UNSET: the stack the layout needs */
    int expandable_segments; /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True */
    int kbit_fp32;
    int fp8_param_gather;
    int fp8_attention;       /* --fp8-attention */
    int fp8_act_store;       /* --fp8-act-store */
    int fp8_recipe;          /* enum tp_fp8_recipe */
    int frozen_weights;      /* enum tp_frozen_format: --frozen-weights */
    int moe_impl, z3_leaf;   /* moe_impl: 0 = the stack's (enum tp_moe_impl) */
    int moe_a2a_overlap;
    int moe_pad_capacity;    /* --moe-pad-capacity */
    int moe_dispatcher;      /* enum tp_moe_dispatcher */
    int moe_routing;         /* enum tp_moe_routing: --moe-routing */
    int cuda_graphs;         /* enum tp_cuda_graphs: --cuda-graphs */
    int log_params_norm;     /* --log-params-norm */
    int log_num_zeros;       /* --log-num-zeros-in-grad */
    int zero_quant_weights;  /* ZeRO++ qwZ */
    int zero_quant_grads;    /* ZeRO++ qgZ */
    int64_t lora_rank;
    const char *lora_targets;
    double moe_capacity, moe_imbalance, overhead_gb, nccl_gb, frag, trainable_frac;
    double nccl_buffsize;    /* --nccl-buffsize; < 0 = default */
    int per_stage;
    const char *svg;         /* the command's plot */
    /* logs */
    int64_t skip_warmup;     /* TP_UNSET = the default warm-up rule */
    int log_format;          /* enum tp_log_format; 0 = detect */
    const char *row_out;     /* runs-file rows */
    /* export */
    const char *to;
    const char *base_model;  /* Axolotl base_model */
    const char *job_name;    /* Slurm job name */
    int64_t steps;           /* the stopping point in optimizer steps; 0 = none */
    double lr;               /* peak learning rate; 0 = the task's default */
    int best, force;         /* force: replace the files -o DIR already holds */
    int allow_oom;           /* export a layout the memory model says does not fit */
    /* size */
    double flops, days, gpu_hours;
    const char *fit, *family;
    /* checkpoint */
    const char *config;      /* the model's config.json to compare with */
    double storage_gbps;     /* checkpoint write bandwidth, GB/s in total (0 = not given) */
    /* estimate: the wall-clock beyond the steps */
    int64_t ckpt_every, eval_every; /* TP_UNSET = none */
    double eval_tokens, startup_min;  /* 0 = none */
    /* memory, estimate: options given a list (the field holds the first value) */
    struct tp_sweep sweeps[TP_ARGS_MAX_SWEEPS];
    size_t n_sweeps;
};

/* Every field unset, for verb `cmd` (one enum tp_verb bit). */
TP_API void tp_args_init(unsigned cmd, struct tp_args *a);
/* Sets option `name` (any of its names, dashes or underscores) from text, as the CLI's flag
   and a binding's keyword: numbers strict and in range, enums decoded, a flag on from NULL
   (the CLI's bare flag), "true" or "1", off from "false" or "0", and nothing else; memory and estimate take a list of whole numbers for
   the sweepable options (1,2,4 or 8..512), search a list of GPU counts.  `value` NULL is an
   error for all but flags.  TP_EINVAL with err->field the option's name (underscored) and a
   message that starts with it; an option of another verb or none says so, with
   tp_option_suggest's "did you mean"; `binding` refuses the CLI-only options. */
TP_API enum tp_status tp_args_set(struct tp_args *a, const char *name, const char *value,
                                  bool binding, struct tp_error *err);
/* "8,16,32" or "8..512" (doubling from LOW, HIGH included) into at most `cap` values in
   [lo, hi]; TP_EINVAL naming `key` when it is not one. */
TP_API enum tp_status tp_parse_list(const char *key, const char *text, int64_t lo, int64_t hi,
                                    int64_t *out, size_t cap, size_t *n, struct tp_error *err);
/* The run the options describe, as a request (tp_request_resolve resolves it): --zero, --fsdp
   and --distributed-optimizer at most one, --fsdp's stack, lora targets parsed. */
TP_API enum tp_status tp_args_request(const struct tp_args *a, struct tp_request *q,
                                      struct tp_error *err);
/* The model the options name: MODEL (a preset, a config.json or a folder holding one) and the
   shape options over it, or the shape options alone; `notes` gets the assumptions made. */
TP_API enum tp_status tp_args_model(const struct tp_args *a, struct tp_model *m, char *notes,
                                    size_t len, struct tp_error *err);
/* The search's enumeration from the options (max_tp ... max_mbs, mem_headroom, no_offload,
   even_pp, recompute_modes, zero_stages) for the global batch `gbs`; TP_EINVAL naming the
   list that does not parse. */
TP_API enum tp_status tp_args_search_opts(const struct tp_args *a, uint64_t gbs,
                                          struct tp_search_opts *o, struct tp_error *err);
/* estimate's budget and wall-clock from the options (tokens, or epochs with dataset_tokens;
   gpu_hour_price; storage_gbps, ckpt_every, eval_every with eval_tokens, startup_min), each
   needing what it needs. */
TP_API enum tp_status tp_args_eval_opts(const struct tp_args *a, struct tp_eval_opts *o,
                                        struct tp_error *err);
/* calibrate's fit from the options (prior_weight, min_gpu_rows, max_evals, starts, fold_rows,
   max_folds, fit_rows, no_per_gpu). */
TP_API void tp_args_fit_opts(const struct tp_args *a, struct tp_fit_opts *o);
/* The options of `verb` as JSON text (free with tp_free): [{"name", "keyword", "aliases",
   "kind", "lo", "hi", "choices", "metavar", "help"}, ...] without the CLI-only ones unless
   `cli`: what a binding builds its signatures and the page its form from.  NULL when out of
   memory. */
TP_API char *tp_options_json(unsigned verb, bool cli);

/* ----------------------------------------------------------------------------------------- */
/* JSON documents (src/reports/report_json.c, src/reports/report_run_json.c, src/api/call.c)   */
/* ----------------------------------------------------------------------------------------- */

/* The documents `--format json` prints, as jansson objects (json_t, new references; NULL when
   out of memory) for C callers, and as text for bindings.  Keys and numbers are the CLI's. */
struct json_t;
TP_API struct json_t *tp_json_layout(const struct tp_layout *l);
TP_API struct json_t *tp_json_memory(const struct tp_memory *m);
TP_API struct json_t *tp_json_ckpt_plan(const struct tp_ckpt_plan *p);
/* A change that makes a run fit (struct tp_fix): "settings" an object of the request's keys
   and values ({"recompute": "full", "zero": 3}: python's keywords), "dp" the data-parallel size
   with it, "reasons" what its settings save, "total_bytes" the worst stage with it. */
TP_API struct json_t *tp_json_fix(const struct tp_fix *f);
/* The changes that make a run faster (tp_time_suggest): tp_json_fix each with "gain" (tokens/s
   per GPU with it over without) and "tokens_per_s_per_gpu". */
struct tp_speedup;
TP_API struct json_t *tp_json_speedups(const struct tp_speedup *s, size_t n);
/* The defaults that move the answer (tp_defaults_that_matter): {input, taken, tried,
   tokens_per_s_ratio, total_bytes, fits, moves_time, moves_memory} each. */
struct tp_default_effect;
TP_API struct json_t *tp_json_default_effects(const struct tp_default_effect *e, size_t n);
/* An array of tp_json_fix. */
TP_API struct json_t *tp_json_fixes(const struct tp_fix *f, size_t n);
/* `trainplan estimate`'s document; `calibration` names the file (NULL: the built-in one). */
TP_API struct json_t *tp_json_estimate(const struct tp_model *m, const struct tp_cluster *c,
                                       const struct tp_job *j, const struct tp_layout *l,
                                       const struct tp_eval_opts *o,
                                       const struct tp_evaluation *ev, const char *calibration,
                                       const char *notes);
/* `trainplan memory`'s document: the worst stage, every stage with per_stage, the fixes. */
TP_API struct json_t *tp_json_memory_report(const struct tp_model *m, const struct tp_cluster *c,
                                            const struct tp_job *j, const struct tp_layout *l,
                                            const struct tp_memory *worst, bool per_stage,
                                            const struct tp_fix *fixes, size_t n_fixes,
                                            const char *notes);
/* `trainplan search`'s document (one hit: a result row, also used by the sweep over counts).
   Each hit carries the stack it runs on; `tie` marks the hits within `band` (relative time per
   token, tp_search_tie_band) of hits[0], `differs_most` the step-time term that separates a hit
   from hits[0] (tp_search_differs); "nearest" the changes after which a layout is feasible
   when none is (tp_search_nearest; tp_json_fix each). */
struct tp_search_stats;
struct tp_stack_hit;
TP_API struct json_t *tp_json_search_hit(const struct tp_stack_hit *h,
                                         const struct tp_stack_hit *best, double band);
TP_API struct json_t *tp_json_search(const struct tp_model *m, const struct tp_cluster *c,
                                     const struct tp_job *j, uint64_t gbs,
                                     const struct tp_search_stats *st,
                                     const struct tp_stack_hit *hits, size_t n,
                                     const char *outside, double band,
                                     const struct tp_fix *nearest, size_t n_nearest);
/* `trainplan params`: counts, FLOPs per token and the blocks in runs of equal counts. */
struct tp_block_run {
    uint32_t first, last;       /* blocks first..last, each with the counts below */
    bool moe;
    uint8_t attn;               /* enum tp_layer_attn */
    uint64_t params, active;
    uint8_t mixer;              /* enum tp_mixer */
    bool no_ffn;                /* the blocks have no FFN */
};
struct tp_params_report {
    struct tp_model m;          /* the caller's, finalized */
    struct tp_params p;
    struct tp_flops f;
    enum tp_attn_convention conv;
    enum tp_recompute rc;
    uint32_t mtp;
    char notes[512];            /* the caller's assumptions (shape overrides) */
    struct tp_block_run runs[TP_MAX_LAYERS];
    size_t n_runs;
};
/* Fills r->p, r->f and r->runs for r->m at `seq` tokens (0: the model's context, else 4096);
   `per_layer` gives one run per block.  TP_EINVAL as tp_flops_per_token. */
TP_API enum tp_status tp_params_report(struct tp_params_report *r, uint64_t seq,
                                       enum tp_attn_convention conv, enum tp_recompute rc,
                                       uint32_t mtp, bool per_layer, struct tp_error *err);
/* `trainplan params`'s document. */
TP_API struct json_t *tp_json_params(const struct tp_params_report *r);
/* `trainplan validate`'s document: every row, the skipped rows, the summary; `calibration`
   names the file (NULL: the built-in one). */
struct tp_validation;
struct tp_calibration;
TP_API struct json_t *tp_json_validate(const struct tp_validation *v, const char *calibration);
/* The pieces of that document for a streaming validation (tp_validate_stream): one row's
   object, and the summary object with the counts of rows not compared. */
TP_API struct json_t *tp_json_validate_row(const struct tp_run *run, const struct tp_run_eval *e);
TP_API struct json_t *tp_json_validate_stream_summary(const struct tp_validate_stream *v,
                                                      size_t skipped, size_t duplicates,
                                                      size_t unmeasured);
/* `trainplan calibrate`'s document (`base_name` as tp_calib_base gives it, `output` the file
   written or NULL), and its parameters alone (its CSV: one row each). */
TP_API struct json_t *tp_json_calibrate(const struct tp_calibration *r, const char *base_name,
                                        const char *output);
TP_API struct json_t *tp_json_fit_params(const struct tp_fit_result *res);
/* `trainplan models`'s document (every preset: key, aliases, label, family, counts, source)
   and `trainplan gpus`'s (the catalog); NULL when out of memory. */
TP_API struct json_t *tp_json_models(struct tp_error *err);
TP_API struct json_t *tp_json_gpus(void);
/* `trainplan export`'s document: the run, whether it fits, the target's notes and its files
   (name, path under `output` or null, content).  struct tp_export: trainplan_export.h. */
struct tp_export;
TP_API struct json_t *tp_json_export(const struct tp_model *m, const struct tp_cluster *c,
                                     const struct tp_layout *l, const char *to,
                                     const struct tp_export *x, const struct tp_memory *mem,
                                     const char *output);
/* `doc` (consumed; NULL gives NULL) as the CLI prints it: indented by 2, keys in order, reals
   with `digits` significant digits (0: the shortest round-trip form).  Free with tp_free. */
TP_API char *tp_json_dumps(struct json_t *doc, int digits);
TP_API void tp_free(void *p);
/* Fixes a memory report lists, as `trainplan memory` does. */
#define TP_MAX_FIXES 6

/* One verb, its options named as the CLI's flags (underscores or dashes: tp_args_set, with
   binding true), its document as the CLI's --format json prints it: the entry point of
   bindings (ctypes, WebAssembly).  verb "params", "memory", "estimate", "search", "export"
   (the run is MODEL, a preset or config.json, and/or the shape options; search needs gbs, runs
   one thread and gives the same hits as the CLI's threaded search; export returns the files'
   contents), "models" or "gpus" (model NULL).
   Every option the verb's CLI takes is a key (tp_options_json lists them) but the CLI's output
   options; one value each (no sweep lists).  *out (free with tp_free) on TP_OK; err names the
   field otherwise.  Thread-safe: nothing is shared between calls. */
TP_API enum tp_status tp_call_json(const char *verb, const char *model, const char *const *keys,
                                   const char *const *values, size_t n, char **out,
                                   struct tp_error *err);
/* tp_call_json's export: the options already set (to, best, force, base_model, job_name,
   the run's and the search's); the document without writing a file. */
TP_API enum tp_status tp_call_export(const struct tp_args *a, char **out, struct tp_error *err);
/* export's checks of its own options before anything is resolved: with best, no layout option
   (the search chooses them) and the global batch given.  err names the option (field "tp",
   "pp_first", "gbs"); the CLI and tp_call_export both call it. */
TP_API enum tp_status tp_export_args_check(const struct tp_args *a, struct tp_error *err);
/* `trainplan checkpoint PATH [MODEL]` as a report (src/api/call_checkpoint.c): the model
   compared with (files[1], config, else the config.json beside PATH), the checkpoint read
   (tp_ckpt_inspect), the saves' plan (gpus, zero, storage_gbps: else the ZeRO folder's, else
   8 GPUs and ZeRO 0). */
struct tp_ckpt_report {
    const char *path;
    struct tp_model m;
    bool have_model;
    char model_source[600];
    char model_note[600];   /* why the config.json beside the checkpoint was not used */
    struct tp_job j;
    struct tp_ckpt *ck;
    bool planned;
    struct tp_ckpt_plan plan;
    uint32_t plan_gpus, plan_zero;
    const char *gpus_from, *zero_from; /* where each came from: "given", "the ZeRO folder",
                                          "assumed" */
    double storage_gbps;
};
TP_API enum tp_status tp_checkpoint_report(const struct tp_args *a, struct tp_ckpt_report *r,
                                           struct tp_error *err);
TP_API void tp_checkpoint_report_free(struct tp_ckpt_report *r);
/* Its document, as the CLI's --format json prints it. */
TP_API struct json_t *tp_json_checkpoint(const struct tp_ckpt_report *r);
/* `trainplan size` as a report (src/api/call_size.c): the budget (flops, else the cluster
   gpu x gpus over days or gpu_hours), the fit (fit, default besiroglu; the loss from
   besiroglu's law when the chosen fit has none), the family grid (family, vocab, seq), the
   ranked shapes (top, default 5; with a cluster each searched for its fastest layout on
   `pool`, NULL: the calling thread) and the marked alternatives.  Large: allocate it. */
enum { TP_SIZE_MARKS = 4, TP_SIZE_TOP_MAX = 1000 };
struct tp_size_report {
    struct tp_size_grid g;
    const struct tp_scaling_fit *fit, *loss_fit;
    bool hoffmann3;                  /* the chosen fit is approach 3 as printed (a caveat) */
    bool cluster;
    struct tp_model m;               /* unused (the request's resolution fills it) */
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    struct tp_calib cal;
    struct tp_search_opts o;         /* o.gbs: the global batch, given or DeepSeek's B_opt */
    struct tp_size_req req;
    struct tp_size_state st;
    double flops;                    /* the budget given (0: from the cluster) */
    double seconds;                  /* the deadline (cluster, no flops) */
    double nominal;                  /* FLOPs for the fits' optima */
    double price;                    /* per GPU-hour, < 0 when not given */
    double tie_compute;              /* the tie band as a fraction of compute */
    size_t top[TP_SIZE_TOP_MAX];     /* the ranked shapes, indices into st.shapes */
    size_t n_top;
    long marks[TP_SIZE_MARKS];       /* best, d20n, half, quarter; -1: none in the grid */
    size_t n_tie;                    /* the first n_tie of top tie (within req.tie_band) */
    double low;                      /* the list's lowest loss */
};
TP_API enum tp_status tp_size_report(const struct tp_args *a, const struct tp_pool *pool,
                                     struct tp_size_report *r, struct tp_error *err);
TP_API void tp_size_report_free(struct tp_size_report *r);
/* The mark of shape i (best, d20n, half, quarter) or NULL; a mark's name and meaning. */
TP_API const char *tp_size_mark_of(const struct tp_size_report *r, size_t i);
TP_API const char *tp_size_mark_name(int mark);
TP_API const char *tp_size_mark_text(int mark);
/* How ties are ordered, as printed. */
TP_API const char *tp_size_tie_breaker(const struct tp_size_report *r);
/* Its document, as the CLI's --format json prints it; tp_call_size: the report on the
   calling thread, dumped (tp_call_json's size). */
TP_API struct json_t *tp_json_size(const struct tp_size_report *r);
TP_API enum tp_status tp_call_size(const struct tp_args *a, char **out, struct tp_error *err);
/* `trainplan logs FILE...` as results (src/api/call_logs.c).  tp_logs_check: the options
   together (files given, row_out and model need the model and the GPU, gpu_hour_price needs
   tokens).  tp_logs_result_eval: log `index` (r->path set, the rest zeroed) read, parsed and
   evaluated; *steps (the parsed steps, free with free(); NULL on error) for a plot. */
struct tp_logs_result {
    const char *path;
    struct tp_log_info info;
    struct tp_log_steady st;
    double steps, train_s, gpu_hours, cost; /* budget; NaN when not applicable */
    bool modelled;                          /* the run described: the figures below */
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    double flops_per_token, model_tflops, mfu, peak_tflops;
    struct tp_time pred;
    double pred_mem_gib;
    char assumed[160];  /* run facts neither the log nor the options gave */
    char row_id[160];
};
TP_API enum tp_status tp_logs_check(const struct tp_args *a, struct tp_error *err);
TP_API enum tp_status tp_logs_result_eval(const struct tp_args *a, const struct tp_calib *cal,
                                          struct tp_logs_result *r, size_t index,
                                          struct tp_log_step **steps, size_t *n_steps,
                                          struct tp_error *err);
/* Where a log's answer changes its basis without the user asking: at most TP_LOGS_MAX_NOTES
   one-line notes (the tokens counted: slots against the log's own rate; with `memory`, which
   peak memory; the log's TFLOP/s against what the model implies).  Returns how many. */
enum { TP_LOGS_MAX_NOTES = 3, TP_LOGS_NOTE_LEN = 320 };
/* A count with thousands separators: 8,030,261,248. */
TP_API void tp_fmt_count(char *buf, size_t len, uint64_t v);
/* A figure with an SI suffix to two decimals: 8.03B, 124.44M, 512. */
TP_API void tp_fmt_si(char *buf, size_t len, double v);
TP_API size_t tp_logs_notes(const struct tp_logs_result *r, char notes[][TP_LOGS_NOTE_LEN],
                            bool memory);
/* `trainplan logs`'s document over n results. */
TP_API struct json_t *tp_json_logs(const struct tp_args *a, const struct tp_logs_result *res,
                                   size_t n);
/* The verbs over files, as tp_call_json: "validate" and "calibrate" (runs files) with their
   options (calibration; base, output, no_cv, no_per_gpu, min_gpu_rows, prior_weight,
   max_evals, starts, fold_rows, max_folds, fit_rows), "checkpoint" (files: PATH and at most
   one MODEL; config, gpus, zero, task, optimizer, precision, lora_rank, storage_gbps), "logs"
   (log files; model, gpu and the run's options, skip_warmup, log_format, tokens, ...). */
TP_API enum tp_status tp_call_runs_json(const char *verb, const char *const *files, size_t n_files,
                                        const char *const *keys, const char *const *values,
                                        size_t n, char **out, struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Version and layout checks for bindings (src/base/abi.c)                                     */
/* ----------------------------------------------------------------------------------------- */

/* The library's version, TP_VERSION as it was built. */
TP_API const char *tp_version(void);
/* sizeof a public struct as the library was built, by its name without "struct " ("tp_model",
   "tp_evaluation", ...); 0 for a name it does not know.  A binding compares it with its own. */
TP_API size_t tp_struct_size(const char *name);
/* TP_OK when the caller was compiled against the header the library was built from: call it as
   TP_ABI_CHECK(&err).  TP_EUNSUPPORTED, naming the first mismatch, otherwise. */
TP_API enum tp_status tp_abi_check(const char *version, size_t model, size_t cluster, size_t job,
                                   size_t layout, size_t calib, size_t evaluation,
                                   struct tp_error *err);
#define TP_ABI_CHECK(err)                                                                       \
    tp_abi_check(TP_VERSION, sizeof(struct tp_model), sizeof(struct tp_cluster),                \
                 sizeof(struct tp_job), sizeof(struct tp_layout), sizeof(struct tp_calib),      \
                 sizeof(struct tp_evaluation), (err))

/* ----------------------------------------------------------------------------------------- */
/* SVG plots (src/plot/svg.c: the document, axes, legend; src/plot/svg_plot.c: the charts)              */
/* ----------------------------------------------------------------------------------------- */

/* A growing SVG document (malloc'd; tp_svg_free releases it).  `data` is NUL-terminated. */
struct tp_svg {
    char *data;
    size_t len, cap;
    bool failed;           /* an allocation failed: the document is incomplete */
};
TP_API void tp_svg_free(struct tp_svg *s);

/* How a series' points are drawn. */
enum tp_mark { TP_MARK_DOT = 0, TP_MARK_SQUARE, TP_MARK_DIAMOND, TP_MARK_TRIANGLE, TP_MARK_NONE };

/* One series of an x-y chart: n points, optional vertical ranges and labels per point. */
struct tp_plot_series {
    const char *name;            /* legend entry (NULL: none) */
    const double *x, *y;         /* non-finite or (log axis) non-positive points are skipped */
    const double *y_lo, *y_hi;   /* a vertical range per point (NULL: none) */
    const char *const *labels;   /* a label per point (NULL: none; a NULL entry: no label) */
    size_t n;
    enum tp_mark mark;
    bool line;                   /* joins the points in order */
    bool hollow;                 /* open marks (e.g. the points off a Pareto front) */
    int colour;                  /* palette index 0..7; -1: the series' index */
};

/* A vertical marker line across an x-y chart (warm-up end, an optimum). */
struct tp_plot_vline {
    double x;
    const char *label;
};

/* An x-y chart.  With `identity_bands` the chart is predicted (y) against measured (x): the
   y = x line and the +-10% and +-25% bands are drawn under the points. */
struct tp_plot_xy {
    const char *title, *subtitle;
    const char *x_label, *y_label;
    bool x_log, y_log;
    bool identity_bands;
    const struct tp_plot_series *series;
    size_t n_series;
    const struct tp_plot_vline *vlines;
    size_t n_vlines;
};

/* Stacked bars: n_bars bars of n_segs segments each, values[bar * n_segs + seg] (>= 0, in the
   unit of `value_label`), with an optional limit line (a GPU's capacity). */
struct tp_plot_bars {
    const char *title, *subtitle;
    const char *value_label;     /* the value axis' label, with its unit */
    const char *const *bar_names;
    size_t n_bars;
    const char *const *seg_names;
    size_t n_segs;
    const double *values;
    double limit;                /* NaN or <= 0: none */
    const char *limit_label;
    bool horizontal;             /* bars along x (one long bar reads better so) */
};

/* Renders a chart into `out` (initialised to {0}; appended to).  Okabe-Ito colours, text in
   the SVG (titles, ticks, legend) so it reads without explanation.  TP_EINVAL when the chart
   has nothing to draw or a value is out of range; TP_ENOMEM when an allocation failed. */
TP_API enum tp_status tp_svg_xy(const struct tp_plot_xy *p, struct tp_svg *out, struct tp_error *err);
TP_API enum tp_status tp_svg_bars(const struct tp_plot_bars *p, struct tp_svg *out,
                                  struct tp_error *err);
/* n x-y charts one above the other in one document (a log's step time and its tokens/s). */
TP_API enum tp_status tp_svg_panels(const struct tp_plot_xy *p, size_t n, struct tp_svg *out,
                                    struct tp_error *err);

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_IO_H */
