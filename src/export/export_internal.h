/*
 * export_internal.h - what the exporters (export*.c) share; not public.
 */
#ifndef TP_EXPORT_INTERNAL_H
#define TP_EXPORT_INTERNAL_H

#include "search_internal.h"
#include "trainplan_export.h"

#include <jansson.h>

/* A growing NUL-terminated string; `failed` latches an allocation failure. */
struct tp_sbuf {
    char *s;
    size_t len, cap;
    bool failed;
};
void tp_sbuf_printf(struct tp_sbuf *b, const char *fmt, ...) TP_PRINTF(2, 3);
void tp_sbuf_append(struct tp_sbuf *b, const char *text, size_t n);

/* The plan an exporter writes: the inputs plus the figures every format repeats. */
struct tp_export_plan {
    const struct tp_model *m;
    const struct tp_cluster *c;
    const struct tp_job *j;
    const struct tp_layout *l;
    const struct tp_export_opts *o;
    uint64_t gbs;   /* mbs * gas * dp: sequences per optimizer step */
    uint32_t nodes; /* n_gpus / gpus_per_node, rounded up */
    uint32_t gpus_per_node; /* GPUs each node runs (n_gpus when it is one node) */
    struct tp_export *out;
};

/* Appends "; note" to out->notes. */
void tp_export_note(struct tp_export *x, const char *fmt, ...) TP_PRINTF(2, 3);
/* Adds a file (takes `text`, malloc'd); TP_ENOMEM when text is NULL. */
enum tp_status tp_export_add(struct tp_export *x, const char *name, char *text,
                             struct tp_error *err);
/* Adds a file from a tp_sbuf (consumed). */
enum tp_status tp_export_add_sbuf(struct tp_export *x, const char *name, struct tp_sbuf *b,
                                  struct tp_error *err);

/* The DeepSpeed config document (export.c).  `hf`: read by the Hugging Face Trainer
   (Axolotl), whose integration fills "auto" values; `megatron`: Megatron-DeepSpeed's.
   NULL on allocation failure or, with *st set and err filled, when DeepSpeed cannot express
   the plan. */
json_t *tp_export_deepspeed_doc(const struct tp_export_plan *p, bool hf, bool megatron,
                                enum tp_status *st, struct tp_error *err);
/* DeepSpeed JSON text of `doc` (consumed) as a file named TP_EXPORT_DS_FILE. */
enum tp_status tp_export_add_json(struct tp_export *x, json_t *doc, struct tp_error *err);

/* Axolotl YAML + its DeepSpeed JSON (export_axolotl.c). */
enum tp_status tp_export_axolotl(const struct tp_export_plan *p, struct tp_error *err);
/* Megatron-LM / Megatron-DeepSpeed argument files (export_megatron.c). */
enum tp_status tp_export_megatron(const struct tp_export_plan *p, bool deepspeed,
                                  struct tp_error *err);
/* What the launch script runs. */
enum tp_export_stack {
    TP_STACK_MEGATRON,    /* pretrain_gpt.py with megatron_args.sh */
    TP_STACK_MEGATRON_DS, /* the same, Megatron-DeepSpeed, + ds_config.json */
    TP_STACK_AXOLOTL,     /* python -m axolotl.cli.train axolotl.yaml */
    TP_STACK_DEEPSPEED,   /* the user's script with --deepspeed_config ds_config.json */
    TP_STACK_TORCHTITAN,  /* torchtitan.train with the user's Trainer.Config and the plan's
                             --training / --parallelism options */
    TP_STACK_SCRIPT       /* the user's script (FSDP) */
};
/* The stack the plan's --framework names (export_launch.c). */
enum tp_export_stack tp_export_stack_of(const struct tp_export_plan *p);
/* torchrun / Slurm script first, then the stack's configs (export_launch.c). */
enum tp_status tp_export_launch(const struct tp_export_plan *p, bool slurm,
                                struct tp_error *err);
/* Appends the launch script (torchrun, or sbatch with `slurm`) of `stack` (export_launch.c). */
enum tp_status tp_export_add_launcher(const struct tp_export_plan *p, bool slurm,
                                      enum tp_export_stack stack, struct tp_error *err);

/* Command-line arguments, in the order written (a bash array of flags). */
enum { TP_MAX_ARGS = 128, TP_ARG_LEN = 320 };
struct tp_flags {
    const char *flag[TP_MAX_ARGS];
    char value[TP_MAX_ARGS][TP_ARG_LEN]; /* "" = a switch */
    size_t n;
    bool overflow; /* a flag or value did not fit: the file is not written */
};
/* A flag with a printf-formatted value; a switch (no value) (export_megatron.c). */
void tp_arg(struct tp_flags *a, const char *flag, const char *fmt, ...) TP_PRINTF(3, 4);
void tp_sw(struct tp_flags *a, const char *flag);

/* The model-defining fields of the Hugging Face config that struct tp_model does not carry
   (export_model.c): from the config.json the model was read from, or from the table of the
   shipped presets' configs.  0 / "" = the field is absent (the family's default). */
struct tp_hf_args {
    bool known;            /* a config or a preset row was found */
    char from[200];        /* where the values come from */
    double rope_theta;     /* rope_theta */
    double norm_eps;       /* rms_norm_eps / layer_norm_eps / layer_norm_epsilon */
    char rope_type[16];    /* rope_scaling.rope_type (or .type): llama3, yarn, linear, ... */
    double rope_factor, rope_low, rope_high; /* rope_scaling factor, low/high_freq_factor */
    uint32_t rope_orig;    /* rope_scaling.original_max_position_embeddings */
    double yarn_beta_fast, yarn_beta_slow, yarn_mscale, yarn_mscale_all;
    double partial_rotary; /* partial_rotary_factor (0 = 1) */
    char score_func[16];   /* scoring_func / score_function: softmax, sigmoid */
    double topk_scaling;   /* routed_scaling_factor (0 = none) */
    int norm_topk;         /* norm_topk_prob: -1 absent, 0, 1 */
    uint32_t n_group, topk_group;
    uint32_t chunk;        /* attention_chunk_size (Llama 4) */
    bool no_rope_layers;   /* Llama 4: every 4th block without RoPE (no_rope_layers) */
    double softcap_attn, softcap_final; /* Gemma 2 logit soft-capping */
    double query_scale;    /* query_pre_attn_scalar (Gemma) */
    double rope_local_theta; /* rope_local_base_freq (Gemma 3 sliding blocks) */
    char act[24];          /* hidden_act */
};
void tp_export_hf_args(const struct tp_model *m, struct tp_hf_args *a);
/* The Megatron-LM flags of the fields above, and a note for each one it cannot express
   (export_model.c). */
void tp_export_model_lm(const struct tp_export_plan *p, struct tp_flags *a);

/* The stopping point, learning rate and schedule, data and tokenizer of a Megatron-LM or
   Megatron-DeepSpeed run; the Axolotl keys of the same (export_train.c). */
void tp_export_train_lm(const struct tp_export_plan *p, struct tp_flags *a, bool deepspeed);
void tp_export_train_axolotl(const struct tp_export_plan *p, json_t *d);

/* A header comment line: "trainplan VERSION: MODEL on N x GPU; dp .. tp .. pp ..". */
void tp_export_summary(const struct tp_export_plan *p, char *buf, size_t len);

#endif
