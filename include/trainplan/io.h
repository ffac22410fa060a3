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

/* The names of the job and layout enums, one table each (src/core/names.c): what the CLI's
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
    TP_NAMES_MOE_DISPATCHER, /* enum tp_moe_dispatcher: alltoall, allgather, flex */
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
/* A run as options (src/io/request.c): what the CLI's flags and a binding's keywords describe */
/* ----------------------------------------------------------------------------------------- */

/* Options named as the CLI's flags without dashes ("gpus_per_node" is --gpus-per-node and a
   binding's gpus_per_node=).  TP_UNSET / 0 / negative leave the default, as each field says. */
struct tp_request {
    const char *gpu;                /* catalog key or alias; NULL = h100-sxm */
    int64_t gpus, gpus_per_node;    /* TP_UNSET: dp*tp*pp*cp when dp is given, else a node */
    double hbm_gb, peak_tflops, hbm_tbps, intra_gbps, inter_gbps, host_gbps; /* 0 = catalog */
    /* job: enums by value; framework is 1 + enum tp_framework (0 = deepspeed, or megatron when
       the layout needs model parallelism) */
    int task, optimizer, precision, framework, attn_impl, moe_impl;
    int fp8_recipe;                 /* enum tp_fp8_recipe (precision fp8) */
    int moe_dispatcher;             /* enum tp_moe_dispatcher */
    bool z3_leaf, dropout, fused_loss, tp_comm_overlap, kbit_fp32, fp8_param_gather;
    bool fsdp_backend;              /* framework axolotl on FSDP2, not DeepSpeed */
    bool expandable_segments;       /* PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True */
    bool moe_a2a_overlap;
    bool zero_quant_weights, zero_quant_grads; /* ZeRO++ qwZ, qgZ */
    int64_t seq;                    /* TP_UNSET: the model's context, else 4096 */
    int64_t doc_len;                /* packed documents' mean length; 0 = unpacked */
    int64_t lora_rank;              /* TP_UNSET = 16 */
    uint32_t lora_targets;          /* TP_LORA_* mask; 0 = all */
    double moe_capacity, moe_imbalance, overhead_gb, nccl_gb, frag; /* < 0 = default */
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
/* Sets one option from text by its name ("gpu", "gpus", "tp", "zero", "recompute" ...; dashes
   or underscores).  TP_EINVAL with err->field set for an unknown name or a bad value. */
TP_API enum tp_status tp_request_set(struct tp_request *r, const char *key, const char *value,
                                     struct tp_error *err);
/* The cluster, job and layout a request describes for model `m` (finalized), checked
   (tp_layout_check, tp_stack_check) and with gbs turned into gas. */
TP_API enum tp_status tp_request_resolve(const struct tp_request *r, const struct tp_model *m,
                                         struct tp_cluster *c, struct tp_job *j,
                                         struct tp_layout *l, struct tp_error *err);
/* A model by name: a config.json or a folder holding one when `name` exists or looks like a
   path (a '/', or ending ".json"), else a preset. */
TP_API enum tp_status tp_model_from_name(const char *name, struct tp_model *m,
                                         struct tp_error *err);
/* "q,k,v" (or all, attention, mlp) as TP_LORA_* bits; 0 for an unknown name. */
TP_API uint32_t tp_lora_targets_parse(const char *list);

/* ----------------------------------------------------------------------------------------- */
/* JSON documents (src/io/report_json.c, src/io/report_run_json.c, src/io/call.c)              */
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
/* `doc` (consumed; NULL gives NULL) as the CLI prints it: indented by 2, keys in order, reals
   with `digits` significant digits (0: the shortest round-trip form).  Free with tp_free. */
TP_API char *tp_json_dumps(struct json_t *doc, int digits);
TP_API void tp_free(void *p);
/* Fixes a memory report lists, as `trainplan memory` does. */
#define TP_MAX_FIXES 6

/* One verb, its options named as the CLI's flags, its document as the CLI's --format json
   prints it: the entry point of bindings (ctypes, WebAssembly).  verb "estimate" or "memory":
   keys as tp_request_set takes them, plus "tokens", "gpu_hour_price" and "calibration" (a file)
   for estimate, "per_stage" for memory; verb "params": "seq", "recompute", "attention_flops",
   "mtp", "per_layer"; verb "search": the run's keys with "gbs" (required), "top", "max_tp",
   "max_pp", "max_cp", "max_ep", "max_mbs", "mem_headroom", "no_offload", "even_pp",
   "calibration" (one thread: the same hits as the CLI's threaded search).  *out (free with tp_free) on TP_OK; err names the field
   otherwise.  Thread-safe: nothing is shared between calls. */
TP_API enum tp_status tp_call_json(const char *verb, const char *model, const char *const *keys,
                                   const char *const *values, size_t n, char **out,
                                   struct tp_error *err);
/* The verbs over runs files (src/io/call_runs.c), as tp_call_json: verb "validate" with the
   key "calibration" (a file); verb "calibrate" with "base" (a file or "prior"), "no_cv",
   "no_per_gpu", "min_gpu_rows", "prior_weight", "max_evals", "starts", "fold_rows",
   "max_folds", "fit_rows" and "output" (the calibration file to write); "quiet" is taken and ignored (the library prints no
   progress).  Flags take "true"/"1" or "false"/"0". */
TP_API enum tp_status tp_call_runs_json(const char *verb, const char *const *files, size_t n_files,
                                        const char *const *keys, const char *const *values,
                                        size_t n, char **out, struct tp_error *err);

/* ----------------------------------------------------------------------------------------- */
/* Version and layout checks for bindings (src/core/abi.c)                                     */
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
