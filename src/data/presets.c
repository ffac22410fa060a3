/*
 * presets.c - built-in models, one row each, every row citing where its shape comes from.
 *
 * Rows hold only shapes; counts are always computed (params.c), never stored.  Fields left out
 * take tp_model_init()'s defaults: RMSNorm, gated (GLU) MLP, RoPE, untied head, no biases,
 * 2 norms per block.  A preset's default_seq is the context length the model was pre-trained at,
 * as its source states (long-context extensions are not the default for per-token FLOPs).
 */
#include "data_internal.h"

#include <stdio.h>
#include <string.h>

struct preset {
    struct tp_preset_info info;
    struct tp_model m; /* shapes; name/source/layout are filled by the builder */
};

#define GPT2(L, H, A)                                                                             \
    {.family = "gpt2", .n_layers = L, .hidden = H, .n_heads = A, .ffn = 4 * (H), .vocab = 50257,  \
     .max_positions = 1024, .default_seq = 1024, .mlp = TP_MLP_GELU, .norm = TP_NORM_LAYER,     \
     .pos = TP_POS_LEARNED, .tied = true, .qkv_bias = true, .o_bias = true, .mlp_bias = true}

#define LLAMA(L, H, A, KV, I, V, TIED, SEQ)                                                       \
    {.family = "llama", .n_layers = L, .hidden = H, .n_heads = A, .n_kv_heads = KV, .ffn = I,     \
     .vocab = V, .tied = TIED, .default_seq = SEQ}

static const struct preset PRESETS[] = {
    /* ---- GPT-2 family: openai-community/gpt2{,-medium,-large,-xl} config.json; Radford et al.
       2019 Table 2.  Learned positions (1024), tied head, LayerNorm, GELU, biases everywhere. */
    {{"gpt2", "gpt2-small gpt2-124m", "GPT-2 small (124M)",
      "openai-community/gpt2 config.json; Radford et al. 2019"},
     GPT2(12, 768, 12)},
    {{"gpt2-medium", "gpt2-355m", "GPT-2 medium (355M)",
      "openai-community/gpt2-medium config.json"},
     GPT2(24, 1024, 16)},
    {{"gpt2-large", "gpt2-774m", "GPT-2 large (774M)", "openai-community/gpt2-large config.json"},
     GPT2(36, 1280, 20)},
    {{"gpt2-xl", "gpt2-1.5b", "GPT-2 XL (1.5B)", "openai-community/gpt2-xl config.json"},
     GPT2(48, 1600, 25)},
    /* ---- GPT-3 175B: Brown et al. 2020 Table 2.1 (96 layers, d_model 12288, 96 heads of 128,
       context 2048, GPT-2 BPE vocabulary 50257; Megatron runs pad it to 51200: --vocab 51200). */
    {{"gpt3-175b", "gpt-3 gpt3 davinci", "GPT-3 175B", "Brown et al. 2020 (arXiv:2005.14165) Table 2.1"},
     {.family = "gpt2", .n_layers = 96, .hidden = 12288, .n_heads = 96, .ffn = 49152,
      .vocab = 50257, .max_positions = 2048, .default_seq = 2048, .mlp = TP_MLP_GELU,
      .norm = TP_NORM_LAYER, .pos = TP_POS_LEARNED, .tied = true, .qkv_bias = true,
      .o_bias = true, .mlp_bias = true}},
    /* ---- BLOOM-176B: bigscience/bloom config.json (n_layer 70, hidden 14336, n_head 112,
       vocab 250880), ALiBi, LayerNorm after the embedding, tied head; Scao et al. 2022. */
    {{"bloom-176b", "bloom", "BLOOM 176B", "bigscience/bloom config.json; arXiv:2211.05100"},
     {.family = "bloom", .n_layers = 70, .hidden = 14336, .n_heads = 112, .ffn = 57344,
      .vocab = 250880, .default_seq = 2048, .mlp = TP_MLP_GELU, .norm = TP_NORM_LAYER,
      .pos = TP_POS_ALIBI, .tied = true, .embed_norm = true, .qkv_bias = true, .o_bias = true,
      .mlp_bias = true}},
    /* ---- Llama 2 / 3.x: meta-llama/<model> config.json; contexts from the model cards. */
    {{"llama-2-7b", "llama2-7b", "Llama 2 7B", "meta-llama/Llama-2-7b-hf config.json"},
     LLAMA(32, 4096, 32, 32, 11008, 32000, false, 4096)},
    {{"llama-3.1-8b", "llama3.1-8b llama-3-8b", "Llama 3.1 8B",
      "meta-llama/Llama-3.1-8B config.json (pre-training context 8192)"},
     LLAMA(32, 4096, 32, 8, 14336, 128256, false, 8192)},
    {{"llama-3.1-70b", "llama3.1-70b llama-3-70b", "Llama 3.1 70B",
      "meta-llama/Llama-3.1-70B config.json"},
     LLAMA(80, 8192, 64, 8, 28672, 128256, false, 8192)},
    {{"llama-3.1-405b", "llama3.1-405b", "Llama 3.1 405B", "meta-llama/Llama-3.1-405B config.json"},
     LLAMA(126, 16384, 128, 8, 53248, 128256, false, 8192)},
    {{"llama-3.2-3b", "llama3.2-3b", "Llama 3.2 3B (tied head)",
      "meta-llama/Llama-3.2-3B config.json"},
     LLAMA(28, 3072, 24, 8, 8192, 128256, true, 8192)},
    {{"llama-3.3-70b", "llama3.3-70b llama-3.3-70b-instruct", "Llama 3.3 70B",
      "meta-llama/Llama-3.3-70B-Instruct config.json"},
     LLAMA(80, 8192, 64, 8, 28672, 128256, false, 8192)},
    /* ---- Phi-4: microsoft/phi-4 config.json (phi3 architecture, fused qkv and gate_up). */
    {{"phi-4", "phi4 phi-4-14b", "Phi-4 (14B)", "microsoft/phi-4 config.json"},
     {.family = "phi3", .n_layers = 40, .hidden = 5120, .n_heads = 40, .n_kv_heads = 10,
      .ffn = 17920, .vocab = 100352, .default_seq = 16384}},
    /* ---- Mistral / Mixtral: mistralai/<model> config.json. */
    {{"mistral-7b", "mistral-7b-v0.1", "Mistral 7B v0.1 (sliding window 4096)",
      "mistralai/Mistral-7B-v0.1 config.json"},
     {.family = "mistral", .n_layers = 32, .hidden = 4096, .n_heads = 32, .n_kv_heads = 8,
      .ffn = 14336, .vocab = 32000, .window = 4096, .default_seq = 8192}},
    {{"mixtral-8x7b", "mixtral", "Mixtral 8x7B", "mistralai/Mixtral-8x7B-v0.1 config.json"},
     {.family = "mixtral", .n_layers = 32, .hidden = 4096, .n_heads = 32, .n_kv_heads = 8,
      .vocab = 32000, .n_experts = 8, .top_k = 2, .moe_ffn = 14336, .default_seq = 32768}},
    /* ---- Qwen3: Qwen/<model> config.json; pre-training context 4096 (Qwen3 report §3). */
    {{"qwen3-8b", "", "Qwen3 8B", "Qwen/Qwen3-8B config.json"},
     {.family = "qwen3", .n_layers = 36, .hidden = 4096, .n_heads = 32, .n_kv_heads = 8,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 12288, .vocab = 151936,
      .qk_norm = true, .default_seq = 4096}},
    {{"qwen3-30b-a3b", "qwen3-30b qwen3-moe", "Qwen3 30B-A3B (MoE)",
      "Qwen/Qwen3-30B-A3B config.json"},
     {.family = "qwen3_moe", .n_layers = 48, .hidden = 2048, .n_heads = 32, .n_kv_heads = 4,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 6144, .vocab = 151936,
      .qk_norm = true, .n_experts = 128, .top_k = 8, .moe_ffn = 768, .default_seq = 4096}},
    /* ---- DeepSeek-V3: deepseek-ai/DeepSeek-V3 config.json; MLA, 3 dense blocks, 1 shared
       expert, noaux_tc routing (correction-bias buffer), one MTP module; pre-training 4096. */
    {{"deepseek-v3", "deepseek-v3-671b dsv3", "DeepSeek-V3 (671B)",
      "deepseek-ai/DeepSeek-V3 config.json; arXiv:2412.19437"},
     {.family = "deepseek_v3", .n_layers = 61, .hidden = 7168, .n_heads = 128,
      .n_kv_heads = 128, .attn = TP_ATTN_MLA, .q_lora_rank = 1536, .kv_lora_rank = 512,
      .qk_nope_dim = 128, .qk_rope_dim = 64, .v_head_dim = 128, .head_dim = 192,
      .head_dim_explicit = true, .ffn = 18432, .vocab = 129280, .n_experts = 256, .top_k = 8,
      .moe_ffn = 2048, .n_shared_experts = 1, .moe_first_dense = 3, .router_score_bias = true,
      .router_groups = 8, .router_group_topk = 4, .mtp_layers = 1, .default_seq = 4096}},
    /* ---- GLM-4.5-Air: zai-org/GLM-4.5-Air config.json; q/k/v biases, no q/k norm, 1 dense
       block, 1 shared expert, correction-bias buffer, one MTP module (not counted in 106B). */
    {{"glm-4.5-air", "glm4.5-air glm-air", "GLM-4.5-Air (106B-A12B)",
      "zai-org/GLM-4.5-Air config.json"},
     {.family = "glm4_moe", .n_layers = 46, .hidden = 4096, .n_heads = 96, .n_kv_heads = 8,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 10944, .vocab = 151552,
      .qkv_bias = true, .n_experts = 128, .top_k = 8, .moe_ffn = 1408, .n_shared_experts = 1,
      .moe_first_dense = 1, .router_score_bias = true, .mtp_layers = 1, .default_seq = 4096}},
    /* ---- Llama 4 Scout: meta-llama/Llama-4-Scout-17B-16E config.json text_config; every
       block MoE (16 experts, top-1, one shared expert of 8192), chunked attention (8192) on
       three of every four blocks.  Text model only (the vision tower is not trained here). */
    {{"llama-4-scout", "llama4-scout llama-4-scout-17b-16e", "Llama 4 Scout 17B-16E (text)",
      "meta-llama/Llama-4-Scout-17B-16E config.json (text_config)"},
     {.family = "llama4", .n_layers = 48, .hidden = 5120, .n_heads = 40, .n_kv_heads = 8,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 16384, .vocab = 202048,
      .n_experts = 16, .top_k = 1, .moe_ffn = 8192, .n_shared_experts = 1, .shared_ffn = 8192,
      .chunk = 8192, .attn_full_every = 4, .default_seq = 8192}},
    /* ---- Ring-mini-2.0 (inclusionAI; BailingMoeV2, same architecture as Ling-mini-2.0):
       20 blocks, the first dense, 256 experts top-8 of width 512, one shared expert, per-head
       q/k norm, no biases, untied; published 16.26B total / 1.43B active (Ling-mini-2.0). */
    {{"ring-mini-2.0", "ring-mini ling-mini-2.0", "Ring-mini-2.0 (16B-A1.4B)",
      "inclusionAI/Ring-mini-2.0 and Ling-mini-2.0 config.json"},
     {.family = "bailing_moe", .n_layers = 20, .hidden = 2048, .n_heads = 16, .n_kv_heads = 4,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 5120, .vocab = 157184, .qk_norm = true,
      .n_experts = 256, .top_k = 8, .moe_ffn = 512, .n_shared_experts = 1,
      .moe_first_dense = 1, .router_score_bias = true}},
    /* ---- Qwen3-Next-80B-A3B: Qwen/Qwen3-Next-80B-A3B-Instruct config.json; 48 blocks, three
       gated DeltaNets (16 key / 32 value heads of 128, conv 4) then one gated attention (16
       q heads of 256 with an output gate, 2 kv heads, q/k norm) repeated; every block MoE:
       512 experts top-10 of width 512, one gated shared expert of 512; one MTP layer.  The
       Hub counts 81,324,862,720 parameters (main model + MTP layer). */
    {{"qwen3-next-80b-a3b", "qwen3-next qwen3-next-80b", "Qwen3-Next 80B-A3B (hybrid MoE)",
      "Qwen/Qwen3-Next-80B-A3B-Instruct config.json"},
     {.family = "qwen3_next", .n_layers = 48, .hidden = 2048, .n_heads = 16, .n_kv_heads = 2,
      .head_dim = 256, .head_dim_explicit = true, .ffn = 5120, .vocab = 151936,
      .qk_norm = true, .attn_out_gate = true, .n_experts = 512, .top_k = 10, .moe_ffn = 512,
      .n_shared_experts = 1, .shared_ffn = 512, .shared_expert_gate = true, .mtp_layers = 1,
      .gdn_k_heads = 16, .gdn_v_heads = 32, .gdn_k_dim = 128, .gdn_v_dim = 128, .gdn_conv = 4,
      .gdn_chunk = 64, .linear_full_every = 4}},
    /* ---- Nemotron-H-8B: nvidia/Nemotron-H-8B-Base-8K config.json; 52 blocks of one module
       each behind one RMSNorm: 24 Mamba-2 (128 heads of 64, 8 groups, state 128, conv 4,
       chunk 128), 4 attention (32 q / 8 kv heads of 128), 24 squared-ReLU MLPs of 21504;
       untied head; pre-trained at 8192 tokens (arXiv:2504.03624). */
    {{"nemotron-h-8b", "nemotron-h-8b-base nemotron-h", "Nemotron-H 8B (hybrid Mamba-2)",
      "nvidia/Nemotron-H-8B-Base-8K config.json; arXiv:2504.03624"},
     {.family = "nemotron_h", .n_layers = 52, .hidden = 4096, .n_heads = 32, .n_kv_heads = 8,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 21504, .vocab = 131072,
      .mlp = TP_MLP_GELU, .norms_per_block = 1, .ssm_heads = 128, .ssm_head_dim = 64,
      .ssm_state = 128, .ssm_groups = 8, .ssm_conv = 4, .ssm_chunk = 128,
      .ssm_conv_bias = true, .default_seq = 8192}},
    /* ---- Nemotron 3 Nano 30B-A3B: nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B config.json and
       Megatron-Bridge's recipe (recipes/nemotronh/nemotron_3_nano.py): 52 blocks, 23 Mamba-2
       (64 heads of 64, 8 groups, state 128), 6 attention (32 q / 2 kv heads of 128), 23 MoE
       (128 squared-ReLU experts of 1856, top-6, one shared expert of 3712, sigmoid routing
       with a correction bias); pre-trained at 8192 tokens. */
    {{"nemotron-3-nano-30b-a3b", "nemotron-3-nano nemotron_3_nano", "Nemotron 3 Nano 30B-A3B (hybrid MoE)",
      "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B config.json; Megatron-Bridge nemotron_3_nano recipe"},
     {.family = "nemotron_h", .n_layers = 52, .hidden = 2688, .n_heads = 32, .n_kv_heads = 2,
      .head_dim = 128, .head_dim_explicit = true, .ffn = 1856, .vocab = 131072,
      .mlp = TP_MLP_GELU, .norms_per_block = 1, .n_experts = 128, .top_k = 6, .moe_ffn = 1856,
      .n_shared_experts = 1, .shared_ffn = 3712, .router_score_bias = true, .ssm_heads = 64,
      .ssm_head_dim = 64, .ssm_state = 128, .ssm_groups = 8, .ssm_conv = 4, .ssm_chunk = 128,
      .ssm_conv_bias = true, .default_seq = 8192}},
    /* ---- From-scratch designs in the users' notes (users' notes 002): untied heads. */
    {{"llama2-1.36b", "llama-2-1.36b", "LLaMA-2 18L-2304D (users' \"1.36B\")",
      "users' notes 002 (config/full_llama_1.36b.py: 18L-18H-2304D-6144ff, LLaMA-2 vocab 32000)"},
     LLAMA(18, 2304, 18, 18, 6144, 32000, false, 2048)},
    {{"llama3-1.5b", "llama-3-1.5b", "LLaMA-3 1.5B 18L-2048D GQA 8",
      "users' notes 002 (LLaMA 3 Optimal: 18L-16H-2048D-7168ff, 8 KV heads, vocab 128256)"},
     LLAMA(18, 2048, 16, 8, 7168, 128256, false, 2048)},
    {{"llama3-2.2b", "llama-3-2.2b", "LLaMA-3 2.2B 30L-2048D GQA 8",
      "users' notes 002 (LLaMA 3 Chinchilla: 30L-16H-2048D-7168ff, 8 KV heads, vocab 128256)"},
     LLAMA(30, 2048, 16, 8, 7168, 128256, false, 2048)},
    {{"qwen3-1.8b", "qwen3-1.8b-scratch", "Qwen3 1.8B 24L-2048D GQA 8",
      "users' notes 002 (Qwen3 Optimal: 24L-16H-2048D-6144ff, 8 KV heads, q/k norm, vocab 151643)"},
     {.family = "qwen3", .n_layers = 24, .hidden = 2048, .n_heads = 16, .n_kv_heads = 8,
      .ffn = 6144, .vocab = 151643, .qk_norm = true, .default_seq = 2048}},
};

#define N_PRESETS (sizeof PRESETS / sizeof PRESETS[0])

/* The block-by-block layouts of the hybrid presets (config.json hybrid_override_pattern). */
static const struct {
    const char *key, *pattern;
} PATTERNS[] = {
    {"nemotron-h-8b", "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"},
    {"nemotron-3-nano-30b-a3b", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"},
};

static const char *pattern_of(const char *key)
{
    for (size_t i = 0; i < sizeof PATTERNS / sizeof PATTERNS[0]; i++)
        if (strcmp(PATTERNS[i].key, key) == 0)
            return PATTERNS[i].pattern;
    return NULL;
}

size_t tp_preset_count(void)
{
    return N_PRESETS;
}

const struct tp_preset_info *tp_preset_get(size_t i)
{
    return i < N_PRESETS ? &PRESETS[i].info : NULL;
}

/* The Hugging Face id a preset's source cites first ("meta-llama/Llama-3.1-8B" of
   "meta-llama/Llama-3.1-8B config.json (...)"): its first word when that is ORG/NAME; else "". */
static void hub_id(const struct tp_preset_info *p, char *out, size_t len)
{
    size_t n = strcspn(p->source, " ;,");
    const char *slash = memchr(p->source, '/', n);
    out[0] = '\0';
    if (slash && slash != p->source && n < len && memchr(slash + 1, '/', n - 1 -
                                                          (size_t)(slash - p->source)) == NULL) {
        memcpy(out, p->source, n);
        out[n] = '\0';
    }
}

/* True when `name` equals the key, one of the space-separated aliases or the Hugging Face id
   the preset's shape comes from (any case). */
static bool matches(const struct tp_preset_info *p, const char *name)
{
    if (tp_streq_ci(p->key, name))
        return true;
    char id[128];
    hub_id(p, id, sizeof id);
    if (id[0] && tp_streq_ci(id, name))
        return true;
    char word[64];
    for (const char *a = p->aliases; *a;) {
        size_t n = strcspn(a, " ");
        if (n > 0 && n < sizeof word) {
            memcpy(word, a, n);
            word[n] = '\0';
            if (tp_streq_ci(word, name))
                return true;
        }
        a += n;
        a += strspn(a, " ");
    }
    return false;
}

static void close_names(const char *name, char *out, size_t len)
{
    out[0] = '\0';
    unsigned best[5] = {99, 99, 99, 99, 99};
    size_t idx[5] = {0};
    /* a Hugging Face id is compared by its name part too ("meta-llama/Llama-3.1-8X") */
    const char *slash = strrchr(name, '/');
    for (size_t i = 0; i < N_PRESETS; i++) {
        unsigned d = tp_edit_distance(name, PRESETS[i].info.key);
        if (strstr(PRESETS[i].info.key, name) != NULL)
            d = d < 2 ? d : 2;
        if (slash) {
            char id[128];
            hub_id(&PRESETS[i].info, id, sizeof id);
            unsigned di = id[0] ? tp_edit_distance(name, id) : 99;
            unsigned dk = tp_edit_distance(slash + 1, PRESETS[i].info.key);
            d = di < d ? di : d;
            d = dk < d ? dk : d;
        }
        for (size_t j = 0; j < 5; j++) {
            if (d < best[j]) {
                memmove(best + j + 1, best + j, (4 - j) * sizeof best[0]);
                memmove(idx + j + 1, idx + j, (4 - j) * sizeof idx[0]);
                best[j] = d;
                idx[j] = i;
                break;
            }
        }
    }
    size_t used = 0;
    for (size_t j = 0; j < 5 && best[j] <= 6; j++) {
        int n = tp_snprintf(out + used, len - used, "%s%s", j ? ", " : "", PRESETS[idx[j]].info.key);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

enum tp_status tp_model_from_preset(const char *name, struct tp_model *m, struct tp_error *err)
{
    for (size_t i = 0; i < N_PRESETS; i++) {
        if (!matches(&PRESETS[i].info, name))
            continue;
        *m = PRESETS[i].m;
        tp_snprintf(m->name, sizeof m->name, "%s", PRESETS[i].info.label);
        tp_snprintf(m->source, sizeof m->source, "%s", PRESETS[i].info.source);
        if (m->norms_per_block == 0)
            m->norms_per_block = 2;
        if (m->moe_step == 0)
            m->moe_step = 1;
        m->layers_explicit = false;
        const char *pattern = pattern_of(PRESETS[i].info.key);
        if (!pattern)
            return tp_model_finalize(m, err);
        TRY(tp_model_finalize(m, err));
        TRY(tp_model_set_pattern(m, pattern, err));
        return tp_model_finalize(m, err);
    }
    char close[256];
    close_names(name, close, sizeof close);
    return tp_fail(err, TP_ENOTFOUND,
                   "unknown model \"%s\": not a preset, a config.json or a directory holding one%s%s%s "
                   "(`trainplan models` lists the presets)",
                   name, close[0] ? " (did you mean: " : "", close, close[0] ? ")" : "");
}
