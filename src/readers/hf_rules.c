/*
 * hf_rules.c - the shapes a config.json may not have, as Hugging Face transformers would refuse
 * them (issue 41): one table, each row naming the transformers file and function the rule
 * comes from (paths under src/transformers/models/ of huggingface/transformers).
 *
 * The readers in hf_config.c give a missing field its family's default; before this table an
 * explicit 0 was taken for "missing" in places (num_key_value_heads: 0 became full multi-head
 * attention, 8.84B parameters for a Llama 3.1 8B shape; gemma3 sliding_window_pattern: 0 made
 * every block sliding) where transformers divides by the value.  The table is checked on the
 * file's fields before any family reader runs, so every family gets the same rules; a field
 * that is absent or null is left to the family's default, and a field of the wrong type to the
 * reader's type error.  Messages name the file, the field and the rule in one line.
 */
#include "hf_internal.h"

#include <math.h>
#include <string.h>

enum rule_kind {
    POSITIVE,   /* field > 0 */
    DIVIDES,    /* other % field == 0 */
    SPLITS,     /* field % other == 0 (the width split into heads) */
    TOPK        /* field <= other (the experts routed to, of the experts there are) */
};

struct rule {
    const char *field;
    enum rule_kind kind;
    const char *other;      /* DIVIDES, SPLITS, TOPK: the field compared with */
    const char *types;      /* the model_types the row applies to (" a b "), NULL: all */
    const char *when_true;  /* the row applies only when this boolean field is true */
    const char *source;     /* transformers file and function */
    const char *why;        /* what transformers does with the value */
    const char *unless_set; /* the row does not apply when this field is given (not null) */
};

#define QWEN " qwen2 qwen3 qwen2_moe qwen3_moe qwen3_next "

static const struct rule RULES[] = {
    /* heads (a zero depth, width, vocabulary or head count is tp_model_finalize's range check,
       shared with the shape flags) */
    {"num_key_value_heads", POSITIVE, NULL, NULL, NULL,
     "llama/modeling_llama.py LlamaAttention.__init__",
     "num_key_value_groups = num_attention_heads // num_key_value_heads (null, not 0, means "
     "one per query head)", NULL},
    {"num_key_value_heads", DIVIDES, "num_attention_heads", NULL, NULL,
     "llama/modeling_llama.py repeat_kv",
     "each key/value head is repeated for num_attention_heads / num_key_value_heads query heads",
     NULL},
    {"head_dim", POSITIVE, NULL, NULL, NULL,
     "llama/modeling_llama.py LlamaAttention.__init__",
     "q_proj has num_attention_heads x \"head_dim\" outputs (null, not 0, means hidden_size "
     "// num_attention_heads)", NULL},
    {"attention_head_dim", POSITIVE, NULL, NULL, NULL,
     "nemotron_h/modeling_nemotron_h.py NemotronHAttention.__init__",
     "q_proj has num_attention_heads x \"head_dim\" outputs", NULL},
    /* hidden_size not divisible by num_attention_heads without head_dim: Llama-like models are
       tp_model_finalize's check (after the range checks; transformers' LlamaAttention takes
       hidden_size // num_attention_heads and drops the remainder, it does not refuse) */
    {"n_embd", SPLITS, "n_head", NULL, NULL, "gpt2/modeling_gpt2.py GPT2Attention.__init__",
     "raises ValueError: embed_dim must be divisible by num_heads", NULL},
    {"hidden_size", SPLITS, "n_head", " bloom ", NULL,
     "bloom/modeling_bloom.py BloomAttention.__init__",
     "raises ValueError: hidden_size must be divisible by num_heads", NULL},
    {"n_embed", SPLITS, "n_head", " bloom ", NULL,
     "bloom/modeling_bloom.py BloomAttention.__init__",
     "raises ValueError: hidden_size must be divisible by num_heads", NULL},
    /* windows, chunks and block patterns */
    {"sliding_window", POSITIVE, NULL, " mistral phi3 gemma2 gemma3 gemma3_text gpt_oss ", NULL,
     "masking_utils.py sliding_window_overlay",
     "a block attends to the keys with kv_idx > q_idx - sliding_window: 0 attends to none "
     "(null means no window)", NULL},
    {"sliding_window", POSITIVE, NULL, QWEN, "use_sliding_window",
     "masking_utils.py sliding_window_overlay",
     "with use_sliding_window a block attends to kv_idx > q_idx - sliding_window: 0 attends "
     "to none", NULL},
    {"sliding_window_pattern", POSITIVE, NULL, " gemma3 gemma3_text ", NULL,
     "gemma3/configuration_gemma3.py Gemma3TextConfig.__init__",
     "layer_types[i] is sliding iff (i + 1) % sliding_window_pattern: 0 divides by zero",
     "layer_types"},
    {"attention_chunk_size", POSITIVE, NULL, " llama4 llama4_text ", NULL,
     "masking_utils.py chunked_causal_mask_function",
     "a block attends within kv_idx // attention_chunk_size == q_idx // attention_chunk_size "
     "(null means no chunking)", NULL},
    {"full_attention_interval", POSITIVE, NULL, " qwen3_next ", NULL,
     "qwen3_next/configuration_qwen3_next.py Qwen3NextConfig.__init__",
     "layer_types[i] is full attention iff (i + 1) % full_attention_interval == 0",
     "layer_types"},
    /* experts */
    {"decoder_sparse_step", POSITIVE, NULL, QWEN, NULL,
     "qwen2_moe/modeling_qwen2_moe.py Qwen2MoeDecoderLayer.__init__",
     "a block is sparse iff (layer_idx + 1) % decoder_sparse_step == 0", NULL},
    {"interleave_moe_layer_step", POSITIVE, NULL, " llama4 llama4_text ", NULL,
     "llama4/configuration_llama4.py Llama4TextConfig.__init__",
     "moe_layers = range(interleave_moe_layer_step - 1, num_hidden_layers, "
     "interleave_moe_layer_step): a step of 0 raises ValueError", NULL},
    {"moe_layer_freq", POSITIVE, NULL, NULL, NULL,
     "deepseek_v3/modeling_deepseek_v3.py DeepseekV3DecoderLayer.__init__ (DeepSeek's "
     "modeling_deepseek.py)",
     "a block is MoE iff layer_idx % moe_layer_freq == 0", NULL},
    {"num_experts_per_tok", POSITIVE, NULL, NULL, NULL,
     "mixtral/modeling_mixtral.py MixtralSparseMoeBlock.forward",
     "torch.topk(router_logits, top_k) routes each token to top_k experts", NULL},
    {"experts_per_token", POSITIVE, NULL, NULL, NULL,
     "gpt_oss/modeling_gpt_oss.py GptOssTopKRouter.forward",
     "torch.topk(router_logits, top_k) routes each token to top_k experts", NULL},
    {"num_experts_per_tok", TOPK, "num_local_experts", NULL, NULL,
     "mixtral/modeling_mixtral.py MixtralSparseMoeBlock.forward",
     "torch.topk cannot pick more experts than there are (selected index k out of range)", NULL},
    {"experts_per_token", TOPK, "num_local_experts", NULL, NULL,
     "gpt_oss/modeling_gpt_oss.py GptOssTopKRouter.forward",
     "torch.topk cannot pick more experts than there are (selected index k out of range)", NULL},
    {"num_experts_per_tok", TOPK, "num_experts", NULL, NULL,
     "qwen2_moe/modeling_qwen2_moe.py Qwen2MoeSparseMoeBlock.forward",
     "torch.topk cannot pick more experts than there are (selected index k out of range)", NULL},
    {"num_experts_per_tok", TOPK, "n_routed_experts", NULL, NULL,
     "deepseek_v3/modeling_deepseek_v3.py DeepseekV3TopkRouter",
     "torch.topk cannot pick more experts than there are (selected index k out of range)", NULL},
};

/* An integer field (4096.0 counts, as the readers accept it); false when absent, null, or not
   an integral number (the reader reports those). */
static bool int_field(const json_t *obj, const char *key, long long *out)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double r = json_real_value(v);
        if (r == floor(r) && fabs(r) < 9e15) {
            *out = (long long)r;
            return true;
        }
    }
    return false;
}

static bool applies(const struct rule *r, const struct cfg *c, const char *type)
{
    if (r->types) {
        char word[64];
        int n = tp_snprintf(word, sizeof word, " %s ", type);
        if (n < 0 || (size_t)n >= sizeof word || !strstr(r->types, word))
            return false;
    }
    if (r->when_true && !json_is_true(json_object_get(c->obj, r->when_true)))
        return false;
    if (r->unless_set) {
        const json_t *v = json_object_get(c->obj, r->unless_set);
        if (v && !json_is_null(v))
            return false;
    }
    return true;
}

enum tp_status hf_check_rules(const struct cfg *c, const char *type)
{
    for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++) {
        const struct rule *r = &RULES[i];
        long long v, w = 0;
        if (!applies(r, c, type) || !int_field(c->obj, r->field, &v))
            continue;
        if (r->kind != POSITIVE && (!int_field(c->obj, r->other, &w) || w <= 0 || v <= 0))
            continue; /* the other field's own row (or its reader) reports it */
        char what[160];
        if (r->kind == POSITIVE && v <= 0)
            tp_snprintf(what, sizeof what, "field \"%s\" must be positive (got %lld)", r->field,
                        v);
        else if (r->kind == DIVIDES && w % v != 0)
            tp_snprintf(what, sizeof what, "%s=%lld must divide %s=%lld", r->field, v,
                        r->other, w);
        else if (r->kind == SPLITS && v % w != 0)
            tp_snprintf(what, sizeof what, "%s=%lld is not divisible by %s=%lld", r->field, v,
                        r->other, w);
        else if (r->kind == TOPK && v > w)
            tp_snprintf(what, sizeof what, "%s=%lld exceeds the number of experts %lld (%s)",
                        r->field, v, w, r->other);
        else
            continue;
        return tp_fail(c->err, TP_EINVAL, "%s: %s; transformers %s: %s", c->label, what,
                       r->source, r->why);
    }
    return TP_OK;
}
