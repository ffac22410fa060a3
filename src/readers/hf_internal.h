/*
 * hf_internal.h - what the config.json readers share (hf_config.c, hf_config_hybrid.c).
 */
#ifndef TP_HF_INTERNAL_H
#define TP_HF_INTERNAL_H

#include "logs_internal.h"

#include <jansson.h>

struct cfg {
    const json_t *root; /* the whole file */
    const json_t *obj;  /* the language-model object: root or root.text_config */
    const char *label;  /* file name for messages */
    struct tp_error *err;
};

/* "<file>: field \"key\" <what>" as TP_EINVAL. */
enum tp_status hf_field_error(const struct cfg *c, const char *key, const char *what);
/* A non-negative integer field; missing or null gives dflt unless required. */
enum tp_status hf_get_u32(const struct cfg *c, const char *key, bool required, uint32_t dflt,
                          uint32_t *out);
enum tp_status hf_get_bool(const struct cfg *c, const char *key, bool dflt, bool *out);
/* The model's own training context (default_seq). */
enum tp_status hf_read_context(const struct cfg *c, struct tp_model *m);
/* Fields shared by the Llama-like families; vocab_default 0 = vocab_size is required. */
enum tp_status hf_read_llama_like(const struct cfg *c, struct tp_model *m, bool tie_default,
                                  uint32_t vocab_default);
/* Qwen2/3-MoE experts and mlp_only_layers / decoder_sparse_step. */
enum tp_status hf_qwen_moe(const struct cfg *c, struct tp_model *m, bool *explicit_moe);

/* hf_config_hybrid.c: NVIDIA Nemotron-H (Mamba-2 hybrids) and Qwen3-Next (gated DeltaNet). */
enum tp_status hf_fam_nemotron_h(const struct cfg *c, struct tp_model *m, bool *explicit_mixer);
enum tp_status hf_fam_qwen3_next(const struct cfg *c, struct tp_model *m, bool *explicit_attn,
                                 bool *explicit_moe);

/* hf_rules.c: the shapes transformers refuses (zero or non-dividing heads and kv heads, zero
   windows, chunks and patterns, top-k past the experts), from one table citing the
   transformers file of each rule; checked on the file's fields before the family reader. */
enum tp_status hf_check_rules(const struct cfg *c, const char *type);

/* hf_cache.c: the config.json of Hugging Face id `id` (ORG/NAME) in the local hub cache, the
   revision refs/main names or else the newest snapshot, into `out`; false when there is none.
   `looked` (may be NULL) receives the glob of where it looked. */
bool tp_hf_cache_config(const char *id, char *out, size_t len, char *looked, size_t looked_len);

#endif
