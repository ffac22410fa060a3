/*
 * export_model.c - every model-defining field of a Hugging Face config and what each target
 * calls it: the table (tp_export_field_at), the fields struct tp_model does not carry (rope
 * theta, norm epsilon, rope scaling, router score function and scaling, ...) read from the
 * model's config.json or from the shipped presets' configs, and the Megatron-LM flags they
 * become, with a note for each field a target cannot express.
 *
 * Names: Megatron-LM megatron/training/arguments.py @ 67f3515c (--rotary-base :1674,
 * --norm-epsilon :1707, --use-rope-scaling / --rope-scaling-factor :1682-1684, --rotary-percent
 * :1676, --window-size :1651, --window-attn-skip-freq :1654, --softmax-type :1647,
 * --mtp-num-layers :1742, --rope-type :2196, --rotary-scaling-factor / --mscale /
 * --mscale-all-dim :3126-3130, --moe-router-score-function :3025, --moe-router-pre-softmax
 * :3034, --moe-router-num-groups / --moe-router-group-topk :3036-3039,
 * --moe-router-topk-scaling-factor :3041, --moe-shared-expert-gate :2993).  Megatron's llama3
 * rope scaling takes the factor only; low/high frequency factors 1 and 4 and the original
 * context 8192 are fixed (megatron/core/models/common/embeddings/rotary_pos_embedding.py:96-98).
 * torchtitan: the model config dataclasses (torchtitan/models/common/rope.py RoPE.Config,
 * moe.py, attention.py) @ b5bcd76c.  Axolotl loads the model's own config.json from
 * base_model (transformers AutoConfig), so every field reaches it through that one key.
 */
#include "export_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const struct tp_export_field FIELDS[] = {
    {"num_hidden_layers", "--num-layers", "n_layers"},
    {"hidden_size", "--hidden-size", "dim"},
    {"intermediate_size", "--ffn-hidden-size", "hidden_dim"},
    {"num_attention_heads", "--num-attention-heads", "n_heads"},
    {"num_key_value_heads", "--num-query-groups", "n_kv_heads"},
    {"head_dim", "--kv-channels", "head_dim"},
    {"vocab_size", NULL, "vocab_size"},
    {"max_position_embeddings", "--max-position-embeddings", "rope.max_context_length"},
    {"hidden_act", "--swiglu", NULL},
    {"tie_word_embeddings", "--untie-embeddings-and-output-weights", "tie_word_embeddings"},
    {"attention_bias", "--add-qkv-bias", NULL},
    {"qk_norm", "--qk-layernorm", "qk_norm"},
    {"rope_theta", "--rotary-base", "rope.theta"},
    {"rms_norm_eps", "--norm-epsilon", "norm.eps"},
    {"rope_scaling.llama3", "--use-rope-scaling --rope-scaling-factor", "rope.scaling_factor"},
    {"rope_scaling.yarn", "--rope-type yarn --rotary-scaling-factor --mscale --mscale-all-dim",
     "rope.rope_factor"},
    {"partial_rotary_factor", "--rotary-percent", NULL},
    {"sliding_window", "--window-size --window-attn-skip-freq", NULL},
    {"num_experts", "--num-experts", "moe.num_experts"},
    {"num_experts_per_tok", "--moe-router-topk", "moe.router.top_k"},
    {"moe_intermediate_size", "--moe-ffn-hidden-size", "moe.hidden_dim"},
    {"shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size",
     "moe.shared_experts"},
    {"shared_expert_gate", "--moe-shared-expert-gate", NULL},
    {"first_k_dense_replace", "--moe-layer-freq", "n_dense_layers"},
    {"scoring_func", "--moe-router-score-function", "moe.router.score_func"},
    {"norm_topk_prob", "--moe-router-pre-softmax", "moe.router.route_norm"},
    {"routed_scaling_factor", "--moe-router-topk-scaling-factor", "moe.router.route_scale"},
    {"n_group", "--moe-router-num-groups", "moe.router.num_expert_groups"},
    {"topk_group", "--moe-router-group-topk", "moe.router.num_limited_groups"},
    {"e_score_correction_bias", "--moe-router-enable-expert-bias", "moe.load_balance_coeff"},
    {"q_lora_rank", "--q-lora-rank", "q_lora_rank"},
    {"kv_lora_rank", "--kv-lora-rank", "kv_lora_rank"},
    {"qk_nope_head_dim", "--qk-head-dim", "qk_nope_head_dim"},
    {"qk_rope_head_dim", "--qk-pos-emb-head-dim", "qk_rope_head_dim"},
    {"v_head_dim", "--v-head-dim", "v_head_dim"},
    {"num_nextn_predict_layers", "--mtp-num-layers", NULL},
    {"attention_sinks", "--softmax-type learnable", "attention.sinks"},
    {"attention_chunk_size", NULL, NULL},
    {"no_rope_layers", NULL, NULL},
    {"attn_logit_softcapping", NULL, NULL},
    {"final_logit_softcapping", NULL, NULL},
    {"query_pre_attn_scalar", NULL, NULL},
    {"rope_local_base_freq", NULL, NULL},
    {"alibi", NULL, NULL},
    {"embedding_layernorm", NULL, NULL},
};
#define N_FIELDS (sizeof FIELDS / sizeof FIELDS[0])

size_t tp_export_field_count(void)
{
    return N_FIELDS;
}

const struct tp_export_field *tp_export_field_at(size_t i)
{
    return i < N_FIELDS ? &FIELDS[i] : NULL;
}

/* ---- the shipped presets' configs -------------------------------------------------------- */

/* The fields struct tp_model does not carry, of each preset with a Hugging Face config: the
   values of that config.json (the Hugging Face id, as the preset's source names it).  A field
   the config leaves out is the transformers class default (rope_theta 10000 for Llama 2). */
struct preset_args {
    const char *id;
    double theta, eps;
    const char *rope_type;
    double factor;         /* llama3: factor (low 1, high 4, original 8192); yarn: factor */
    const char *score;     /* router score function */
    double scaling;        /* routed_scaling_factor */
    uint32_t groups, group_topk;
    double partial;        /* partial_rotary_factor */
};

static const struct preset_args PRESET_ARGS[] = {
    /* openai-community/gpt2*: layer_norm_epsilon 1e-05, learned positions */
    {"openai-community/gpt2", 0, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    {"openai-community/gpt2-medium", 0, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    {"openai-community/gpt2-large", 0, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    {"openai-community/gpt2-xl", 0, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    {"bigscience/bloom", 0, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    {"meta-llama/Llama-2-7b-hf", 10000, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    /* Llama 3.1 / 3.3: rope_scaling {rope_type llama3, factor 8, low 1, high 4, original 8192};
       Llama 3.2: factor 32 */
    {"meta-llama/Llama-3.1-8B", 500000, 1e-5, "llama3", 8, NULL, 0, 0, 0, 0},
    {"meta-llama/Llama-3.1-70B", 500000, 1e-5, "llama3", 8, NULL, 0, 0, 0, 0},
    {"meta-llama/Llama-3.1-405B", 500000, 1e-5, "llama3", 8, NULL, 0, 0, 0, 0},
    {"meta-llama/Llama-3.2-3B", 500000, 1e-5, "llama3", 32, NULL, 0, 0, 0, 0},
    {"meta-llama/Llama-3.3-70B-Instruct", 500000, 1e-5, "llama3", 8, NULL, 0, 0, 0, 0},
    {"microsoft/phi-4", 250000, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    {"mistralai/Mistral-7B-v0.1", 10000, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
    /* Mixtral: softmax over the experts, top-2 renormalized (modeling_mixtral.py) */
    {"mistralai/Mixtral-8x7B-v0.1", 1000000, 1e-5, NULL, 0, "softmax", 0, 0, 0, 0},
    {"Qwen/Qwen3-8B", 1000000, 1e-6, NULL, 0, NULL, 0, 0, 0, 0},
    {"Qwen/Qwen3-30B-A3B", 1000000, 1e-6, NULL, 0, "softmax", 0, 0, 0, 0},
    /* DeepSeek-V3: yarn factor 40 (original 4096, beta 32/1, mscale 1/1), sigmoid router,
       routed_scaling_factor 2.5, 8 groups, top-4 groups */
    {"deepseek-ai/DeepSeek-V3", 10000, 1e-6, "yarn", 40, "sigmoid", 2.5, 8, 4, 0},
    /* GLM-4.5-Air: Glm4MoeTopkRouter scores with a sigmoid (modeling_glm4_moe.py) */
    {"zai-org/GLM-4.5-Air", 1000000, 1e-5, NULL, 0, "sigmoid", 1.0, 1, 1, 0.5},
    {"meta-llama/Llama-4-Scout-17B-16E", 500000, 1e-5, "llama3", 8, "sigmoid", 0, 0, 0, 0},
    {"inclusionAI/Ring-mini-2.0", 600000, 1e-6, NULL, 0, "sigmoid", 2.5, 8, 4, 0.5},
    {"Qwen/Qwen3-Next-80B-A3B-Instruct", 10000000, 1e-6, NULL, 0, "softmax", 0, 0, 0, 0.25},
    {"nvidia/Nemotron-H-8B-Base-8K", 0, 1e-5, NULL, 0, NULL, 0, 0, 0, 0},
};

static void from_preset(const struct preset_args *r, struct tp_hf_args *a)
{
    a->known = true;
    tp_snprintf(a->from, sizeof a->from, "%s config.json", r->id);
    a->rope_theta = r->theta;
    a->norm_eps = r->eps;
    if (r->rope_type) {
        tp_snprintf(a->rope_type, sizeof a->rope_type, "%s", r->rope_type);
        a->rope_factor = r->factor;
        if (strcmp(r->rope_type, "llama3") == 0) {
            a->rope_low = 1;
            a->rope_high = 4;
            a->rope_orig = 8192;
        } else { /* DeepSeek-V3's yarn */
            a->rope_orig = 4096;
            a->yarn_beta_fast = 32;
            a->yarn_beta_slow = 1;
            a->yarn_mscale = 1;
            a->yarn_mscale_all = 1;
        }
    }
    if (r->score)
        tp_snprintf(a->score_func, sizeof a->score_func, "%s", r->score);
    a->topk_scaling = r->scaling;
    a->norm_topk = r->score ? 1 : -1;
    a->n_group = r->groups;
    a->topk_group = r->group_topk;
    a->partial_rotary = r->partial;
    if (strstr(r->id, "Llama-4")) {
        a->chunk = 8192; /* attention_chunk_size */
        a->no_rope_layers = true;
    }
}

/* ---- a config.json ----------------------------------------------------------------------- */

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static void str(json_t *o, const char *key, char *buf, size_t len)
{
    json_t *v = json_object_get(o, key);
    if (json_is_string(v) && buf[0] == '\0')
        tp_snprintf(buf, len, "%s", json_string_value(v));
}

static void from_config(json_t *root, const char *path, struct tp_hf_args *a)
{
    json_t *c = json_object_get(root, "text_config");
    if (!json_is_object(c))
        c = root;
    a->known = true;
    tp_snprintf(a->from, sizeof a->from, "%s", path);
    a->rope_theta = num(c, "rope_theta");
    const char *eps[] = {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"};
    for (size_t i = 0; i < 4 && a->norm_eps == 0; i++)
        a->norm_eps = num(c, eps[i]);
    json_t *rs = json_object_get(c, "rope_scaling");
    if (json_is_object(rs)) {
        str(rs, "rope_type", a->rope_type, sizeof a->rope_type);
        str(rs, "type", a->rope_type, sizeof a->rope_type);
        a->rope_factor = num(rs, "factor");
        a->rope_low = num(rs, "low_freq_factor");
        a->rope_high = num(rs, "high_freq_factor");
        a->rope_orig = (uint32_t)num(rs, "original_max_position_embeddings");
        a->yarn_beta_fast = num(rs, "beta_fast");
        a->yarn_beta_slow = num(rs, "beta_slow");
        a->yarn_mscale = num(rs, "mscale");
        a->yarn_mscale_all = num(rs, "mscale_all_dim");
    }
    a->partial_rotary = num(c, "partial_rotary_factor");
    str(c, "scoring_func", a->score_func, sizeof a->score_func);
    str(c, "score_function", a->score_func, sizeof a->score_func);
    a->topk_scaling = num(c, "routed_scaling_factor");
    json_t *nt = json_object_get(c, "norm_topk_prob");
    a->norm_topk = json_is_boolean(nt) ? json_is_true(nt) : -1;
    a->n_group = (uint32_t)num(c, "n_group");
    a->topk_group = (uint32_t)num(c, "topk_group");
    a->chunk = (uint32_t)num(c, "attention_chunk_size");
    a->no_rope_layers = json_is_array(json_object_get(c, "no_rope_layers"));
    a->softcap_attn = num(c, "attn_logit_softcapping");
    a->softcap_final = num(c, "final_logit_softcapping");
    a->query_scale = num(c, "query_pre_attn_scalar");
    a->rope_local_theta = num(c, "rope_local_base_freq");
    str(c, "hidden_act", a->act, sizeof a->act);
    str(c, "hidden_activation", a->act, sizeof a->act);
}

/* The router score function of the families whose config.json leaves it to the modeling code
   (transformers): Glm4MoeTopkRouter and Llama4Router score with a sigmoid
   (modeling_glm4_moe.py, modeling_llama4.py); Mixtral, Qwen2/3-MoE and gpt-oss with a softmax
   (modeling_mixtral.py, modeling_qwen3_moe.py, modeling_gpt_oss.py). */
static const char *family_score(const char *family)
{
    static const struct {
        const char *family, *score;
    } map[] = {{"glm4_moe", "sigmoid"}, {"llama4", "sigmoid"},   {"mixtral", "softmax"},
               {"qwen2_moe", "softmax"}, {"qwen3_moe", "softmax"}, {"qwen3_next", "softmax"},
               {"gpt_oss", "softmax"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].family, family) == 0)
            return map[i].score;
    return NULL;
}

void tp_export_hf_args(const struct tp_model *m, struct tp_hf_args *a)
{
    memset(a, 0, sizeof *a);
    a->norm_topk = -1;
    /* a config path (tp_model_from_hf_config keeps it as the source) */
    char path[sizeof m->source + 16];
    struct stat sb;
    tp_snprintf(path, sizeof path, "%s", m->source);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        tp_snprintf(path, sizeof path, "%s/config.json", m->source);
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        json_t *root = json_load_file(path, 0, NULL);
        if (json_is_object(root))
            from_config(root, path, a);
        json_decref(root);
        if (a->known) {
            const char *score = family_score(m->family);
            if (!a->score_func[0] && score)
                tp_snprintf(a->score_func, sizeof a->score_func, "%s", score);
            return;
        }
    }
    /* a preset: its source starts with the Hugging Face id */
    size_t word = strcspn(m->source, " ");
    for (size_t i = 0; i < sizeof PRESET_ARGS / sizeof PRESET_ARGS[0]; i++)
        if (strlen(PRESET_ARGS[i].id) == word &&
            strncmp(PRESET_ARGS[i].id, m->source, word) == 0) {
            from_preset(&PRESET_ARGS[i], a);
            return;
        }
}

/* ---- Megatron-LM ------------------------------------------------------------------------- */

static void rope_lm(const struct tp_export_plan *p, const struct tp_hf_args *h, struct tp_args *a)
{
    const struct tp_model *m = p->m;
    if (m->pos != TP_POS_ROPE)
        return;
    if (h->rope_theta > 0) {
        /* --rotary-base is an int (arguments.py:1674) */
        if (h->rope_theta != (double)(long long)h->rope_theta)
            tp_export_note(p->out, "rope_theta %g is not an integer: Megatron's --rotary-base "
                                   "takes an int (%lld written)", h->rope_theta,
                           (long long)h->rope_theta);
        tp_arg(a, "--rotary-base", "%lld", (long long)h->rope_theta);
    } else {
        tp_export_note(p->out, "rope_theta: %s; Megatron's default --rotary-base 10000 applies",
                       h->known ? "not in the config" : "the model's config is not known");
    }
    if (h->partial_rotary > 0 && h->partial_rotary < 1)
        tp_arg(a, "--rotary-percent", "%g", h->partial_rotary);
    if (strcmp(h->rope_type, "llama3") == 0) {
        tp_sw(a, "--use-rope-scaling");
        tp_arg(a, "--rope-scaling-factor", "%g", h->rope_factor);
        if (h->rope_low != 1 || h->rope_high != 4 || h->rope_orig != 8192)
            tp_export_note(p->out, "rope_scaling llama3 with low/high frequency factors %g/%g "
                                   "and original context %u: Megatron fixes 1/4/8192",
                           h->rope_low, h->rope_high, h->rope_orig);
    } else if (strcmp(h->rope_type, "yarn") == 0) {
        if (m->attn != TP_ATTN_MLA) /* MLA takes yarn by default (arguments.py:2196) */
            tp_arg(a, "--rope-type", "yarn");
        tp_arg(a, "--rotary-scaling-factor", "%g", h->rope_factor);
        if (h->yarn_mscale > 0)
            tp_arg(a, "--mscale", "%g", h->yarn_mscale);
        if (h->yarn_mscale_all > 0)
            tp_arg(a, "--mscale-all-dim", "%g", h->yarn_mscale_all);
        if (h->rope_orig != 4096 || (h->yarn_beta_fast && h->yarn_beta_fast != 32) ||
            (h->yarn_beta_slow && h->yarn_beta_slow != 1))
            tp_export_note(p->out, "rope_scaling yarn original context %u, beta %g/%g: "
                                   "Megatron's parser has no flag for them (its defaults "
                                   "4096, 32/1)", h->rope_orig, h->yarn_beta_fast,
                           h->yarn_beta_slow);
    } else if (h->rope_type[0] && strcmp(h->rope_type, "default") != 0) {
        tp_export_note(p->out, "rope_scaling %s (factor %g): not expressible in Megatron-LM",
                       h->rope_type, h->rope_factor);
    }
    if (h->no_rope_layers)
        tp_export_note(p->out, "no_rope_layers (Llama 4: every 4th block without RoPE): not "
                               "written; Megatron's --no-rope-freq takes such a pattern");
    if (h->rope_local_theta > 0)
        tp_export_note(p->out, "rope_local_base_freq %g (the sliding blocks' own RoPE base): not "
                               "expressible in Megatron-LM", h->rope_local_theta);
}

static void router_lm(const struct tp_export_plan *p, const struct tp_hf_args *h,
                      struct tp_args *a)
{
    const struct tp_model *m = p->m;
    if (!m->n_experts)
        return;
    bool sigmoid = strcmp(h->score_func, "sigmoid") == 0;
    if (h->score_func[0])
        tp_arg(a, "--moe-router-score-function", "%s", sigmoid ? "sigmoid" : "softmax");
    else
        tp_export_note(p->out, "scoring_func: not in the config nor known for model_type %s: "
                               "Megatron's softmax applies", m->family);
    /* softmax over all experts, then top-k unnormalized (norm_topk_prob false) is Megatron's
       --moe-router-pre-softmax; top-k then softmax (normalized) its default */
    if (!sigmoid && h->norm_topk == 0 && m->top_k > 1)
        tp_sw(a, "--moe-router-pre-softmax");
    if (sigmoid && h->norm_topk == 0 && m->top_k > 1)
        tp_export_note(p->out, "norm_topk_prob false with a sigmoid router: Megatron normalizes "
                               "the top-k sigmoid scores");
    if (h->topk_scaling > 0 && h->topk_scaling != 1)
        tp_arg(a, "--moe-router-topk-scaling-factor", "%g", h->topk_scaling);
    if (h->n_group > 1) {
        tp_arg(a, "--moe-router-num-groups", "%u", h->n_group);
        tp_arg(a, "--moe-router-group-topk", "%u", h->topk_group);
    }
    if (m->shared_expert_gate)
        tp_sw(a, "--moe-shared-expert-gate");
    if (m->router_bias || m->expert_bias)
        tp_export_note(p->out, "router or expert biases (gpt-oss): Megatron's router and "
                               "grouped experts have none");
}

void tp_export_model_lm(const struct tp_export_plan *p, struct tp_args *a)
{
    const struct tp_model *m = p->m;
    struct tp_hf_args h;
    tp_export_hf_args(m, &h);
    rope_lm(p, &h, a);
    if (h.norm_eps > 0)
        tp_arg(a, "--norm-epsilon", "%g", h.norm_eps);
    else
        tp_export_note(p->out, "rms_norm_eps: %s; Megatron's default --norm-epsilon 1e-5 "
                               "applies", h.known ? "not in the config" : "the model's config is "
                                                                            "not known");
    router_lm(p, &h, a);
    if (m->window) {
        /* (left, right) window; the full-attention blocks every attn_full_every-th
           (--window-attn-skip-freq N: every N-th block full) */
        tp_arg(a, "--window-size", "\"(%u,0)\"", m->window);
        if (m->attn_full_every > 1)
            tp_arg(a, "--window-attn-skip-freq", "%u", m->attn_full_every);
    }
    if (m->mtp_layers)
        tp_arg(a, "--mtp-num-layers", "%u", m->mtp_layers);
    if (m->attn_sinks)
        tp_arg(a, "--softmax-type", "learnable");
    if (m->embed_norm)
        tp_export_note(p->out, "embedding_layernorm (BLOOM): not in Megatron-LM's parser");
    if (m->pos == TP_POS_ALIBI)
        tp_export_note(p->out, "alibi: not in Megatron-LM's --position-embedding-type choices: "
                               "the run gets no position embedding");
    if (m->chunk || h.chunk)
        tp_export_note(p->out, "attention_chunk_size %u (chunked local attention): not "
                               "expressible in Megatron-LM", m->chunk ? m->chunk : h.chunk);
    if (h.softcap_attn > 0 || h.softcap_final > 0)
        tp_export_note(p->out, "attn_logit_softcapping %g, final_logit_softcapping %g: not "
                               "expressible in Megatron-LM", h.softcap_attn, h.softcap_final);
    if (h.query_scale > 0 && h.query_scale != m->head_dim)
        tp_export_note(p->out, "query_pre_attn_scalar %g (softmax scale 1/sqrt of it, not of "
                               "head_dim %u): not expressible in Megatron-LM", h.query_scale,
                       m->head_dim);
    if (m->mlp == TP_MLP_GLU && h.act[0] && strcmp(h.act, "silu") != 0 &&
        strcmp(h.act, "swish") != 0)
        tp_export_note(p->out, "hidden_act %s with a gated MLP: Megatron's --swiglu is SiLU",
                       h.act);
    if (m->norms_per_block == 4)
        tp_export_note(p->out, "sandwich norms (4 per block): not expressible in Megatron-LM");
    /* Megatron sizes the embedding from the tokenizer (HuggingFaceTokenizer vocab_size),
       padded to a multiple of --make-vocab-size-divisible-by (arguments.py:1701) */
    tp_export_note(p->out, "vocab_size %u: Megatron builds the embedding from the tokenizer's "
                           "vocabulary padded to a multiple of 128; a checkpoint converted "
                           "from Hugging Face keeps its own %u rows", m->vocab, m->vocab);
}
