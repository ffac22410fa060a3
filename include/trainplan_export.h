/*
 * trainplan_export.h - from a plan to the files a training framework runs (trainplan export).
 *
 * A checked plan (model, cluster, job, layout) becomes the framework's own files: a DeepSpeed
 * config JSON (built with jansson), an Axolotl YAML (libyaml's emitter), Megatron-LM or
 * Megatron-DeepSpeed arguments, and a torchrun or Slurm launch script.  Every key and flag is
 * one the target's own parser or schema knows (docs/export.md names the versions; test_export
 * pins each name with the file it comes from).  The library builds the texts in memory and
 * never writes a file: the CLI does.
 */
#ifndef TRAINPLAN_EXPORT_H
#define TRAINPLAN_EXPORT_H

#include "trainplan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tp_export_format {
    TP_EXPORT_DEEPSPEED = 0, /* DeepSpeed config JSON (ds_config.json) */
    TP_EXPORT_AXOLOTL,       /* Axolotl YAML (+ the DeepSpeed JSON it points at) */
    TP_EXPORT_MEGATRON,      /* Megatron-LM arguments (Megatron-DeepSpeed's with --framework
                                megatron-deepspeed) as a bash array */
    TP_EXPORT_MEGATRON_DS,   /* Megatron-DeepSpeed arguments + its DeepSpeed JSON */
    TP_EXPORT_TORCHRUN,      /* torchrun launch script (+ the stack's config files) */
    TP_EXPORT_SLURM,         /* sbatch script running torchrun on every node (+ configs) */
    TP_EXPORT_FORMAT_COUNT
};

/* "deepspeed", "axolotl", "megatron", "megatron-deepspeed", "torchrun", "slurm". */
TP_API const char *tp_export_format_name(enum tp_export_format f);
/* A format by name; TP_ENOTFOUND lists the names. */
TP_API enum tp_status tp_export_format_find(const char *name, enum tp_export_format *out,
                                     struct tp_error *err);

/* File names the exports use and refer to each other by. */
#define TP_EXPORT_DS_FILE "ds_config.json"
#define TP_EXPORT_AXOLOTL_FILE "axolotl.yaml"
#define TP_EXPORT_MEGATRON_FILE "megatron_args.sh"
#define TP_EXPORT_TORCHRUN_FILE "launch.sh"
#define TP_EXPORT_SLURM_FILE "train.sbatch"

enum { TP_EXPORT_MAX_FILES = 4 };

struct tp_export_file {
    char name[32]; /* file name, no directory */
    char *text;    /* NUL-terminated contents (malloc'd; tp_export_free) */
};

struct tp_export_opts {
    const char *base_model; /* Axolotl base_model (HF id or path); NULL = tp_export_base_model */
    const char *job_name;   /* Slurm job name; NULL = "trainplan" */
    /* The stopping point: training tokens (Megatron --train-samples = tokens / seq, rounded
       up; Axolotl max_steps = tokens / (global batch x seq), rounded up) or optimizer steps;
       0 for both = none given (the exports say so in a note). */
    double tokens;
    uint64_t steps;
    /* Peak learning rate; 0 = the documented default of the task (tp_export_default_lr). */
    double lr;
};
TP_API void tp_export_opts_init(struct tp_export_opts *o);

struct tp_export {
    /* files[0] is the file the format names; the others are what it refers to (the DeepSpeed
       JSON an Axolotl YAML points at, the launcher's configs) and a launch script */
    struct tp_export_file files[TP_EXPORT_MAX_FILES];
    size_t n_files;
    /* what the target cannot say as the plan has it, '; '-separated (empty: nothing) */
    char notes[1024];
};

/* Builds the files of format `f` for a checked layout (tp_layout_check).  TP_EUNSUPPORTED,
   with the reason, when the target cannot run the layout as planned (e.g. tensor parallelism
   under Axolotl + DeepSpeed, ZeRO-3 under Megatron-DeepSpeed's pipeline); TP_ENOMEM.  On
   failure `out` holds no file. */
TP_API enum tp_status tp_export_build(enum tp_export_format f, const struct tp_model *m,
                               const struct tp_cluster *c, const struct tp_job *j,
                               const struct tp_layout *l, const struct tp_export_opts *o,
                               struct tp_export *out, struct tp_error *err);
TP_API void tp_export_free(struct tp_export *x);

/* Narrows a search (export --best) to the layouts format f's files can run for the job's
   stack: data parallel only (tp = pp = cp = ep = 1) for a DeepSpeed config or Axolotl
   (DeepSpeed-MoE's ep_size lives in the model code, not the config), no uneven or interleaved
   pipeline for Megatron-DeepSpeed.  The stack's own rules are the search's already
   (tp_stack_check). */
TP_API void tp_export_search_limits(enum tp_export_format f, const struct tp_job *j,
                                    struct tp_search_opts *o);

/* export --best's answer: the fastest layout format `f` runs, and a note naming the faster
   layout of the unrestricted search when the target cannot run it (empty when none). */
struct tp_export_best {
    bool found;                  /* false: no layout of the `evaluated` fits */
    struct tp_layout layout;
    unsigned long long evaluated;
    char note[512];
};
/* The search narrowed to what `f` expresses (tp_export_search_limits), on `pool` (NULL: the
   calling thread), its first hits built in turn; the first that builds is the answer.
   TP_EUNSUPPORTED (field "best") when layouts fit but none can be exported to `to`. */
TP_API enum tp_status tp_export_best(enum tp_export_format f, const char *to,
                                     const struct tp_model *m, const struct tp_cluster *c,
                                     const struct tp_job *j, const struct tp_search_opts *all,
                                     const struct tp_calib *cal, const struct tp_pool *pool,
                                     struct tp_export_best *out, struct tp_error *err);

/* The peak learning rate an export writes when none is given, with its source: pre-training
   (Megatron) 3e-4 up to 20B parameters and 1.5e-4 above (Llama 2, Touvron et al. 2023, §2.2,
   Table 1: AdamW 0.9/0.95, cosine to 10%, 2000 warm-up steps, weight decay 0.1); full
   fine-tuning 2e-5 (Llama 2 §3.1 SFT); LoRA/QLoRA 2e-4 up to 20B and 1e-4 above (Dettmers et
   al. 2023, QLoRA, Appendix B.2); DPO 5e-7 (Tunstall et al. 2023, Zephyr, §4).  The learning
   rate and its schedule are the user's to choose: the files say so. */
TP_API double tp_export_default_lr(const struct tp_model *m, const struct tp_job *j,
                                   bool pretraining, const char **source);

/* One model-defining field of a Hugging Face config.json and what each target calls it.  The
   Megatron-LM export writes the flag of every field the model has, or a note where `megatron`
   is NULL or the value is not expressible; Axolotl loads the checkpoint's own config.json
   (base_model), so it carries every field. */
struct tp_export_field {
    const char *hf;         /* config.json field ("rope_theta") */
    const char *megatron;   /* Megatron-LM flag(s) ("--rotary-base"); NULL: none (a note) */
    const char *torchtitan; /* torchtitan model-config field ("rope.theta"); NULL: none */
};
TP_API size_t tp_export_field_count(void);
TP_API const struct tp_export_field *tp_export_field_at(size_t i);

/* What tp_export_base_model found. */
enum tp_base_kind {
    TP_BASE_HUB,  /* a Hugging Face id: the model's tokenizer can be loaded by it */
    TP_BASE_PATH, /* the config's local directory */
    TP_BASE_NONE  /* neither (a preset described, not named by an id): the model's name */
};
/* The Hugging Face id (or local directory) of the model: "meta-llama/Llama-3.3-70B-Instruct"
   from a preset's source, "zai-org/GLM-4.5-Air" from a hub-cache path
   (.../models--zai-org--GLM-4.5-Air/snapshots/...), else the config's directory; for a preset
   without an id, its name (TP_BASE_NONE). */
TP_API enum tp_base_kind tp_export_base_model(const struct tp_model *m, char *buf, size_t len);

#endif
