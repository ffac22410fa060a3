/*
 * test_hybrid.c - hybrid models (Mamba-2: Nemotron-H; gated DeltaNet: Qwen3-Next) and MLA read
 * from its fields (Kimi K2): counts, layouts, scan FLOPs and bad configs.
 *
 * Configs are the published config.json files in tests/fixtures/hf/ (SOURCES.md).  Per-tensor
 * shapes follow the Hugging Face modeling code (modeling_nemotron_h.py, modeling_qwen3_next.py,
 * modeling_deepseek_v3.py); each expected number is worked out next to it.
 * Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <stdio.h>
#include <string.h>

#define FIX "tests/fixtures/hf/"

static struct tp_model model, other; /* large: keep off the stack */

static void load(const char *path, struct tp_params *p)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_hf_config(path, &model, &err) != TP_OK)
        fail_msg("%s: %s", path, err.msg);
    tp_count_params(&model, p);
}

static void preset(const char *name, struct tp_params *p)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_preset(name, &other, &err) != TP_OK)
        fail_msg("%s: %s", name, err.msg);
    tp_count_params(&other, p);
}

/* Nemotron-H-8B-Base-8K: 24 Mamba-2 + 24 MLP + 4 attention blocks, one RMSNorm each. */
static void test_nemotron_h_8b(void **state)
{
    (void)state;
    struct tp_params p;
    load(FIX "nemotron-h-8b.json", &p);
    /* Mamba-2 block: d_in = 128*64 = 8192, conv_dim = 8192 + 2*8*128 = 10240;
       in_proj 4096 x (8192 + 10240 + 128) = 76,021,760; conv1d 10240*4 + bias 10240;
       dt_bias, A_log, D 3*128; norm 8192; out_proj 8192*4096 = 33,554,432; block norm 4096 */
    assert_int_equal(tp_block_params(&model, 0, false),
                     76021760ull + 40960 + 10240 + 384 + 8192 + 33554432 + 4096);
    /* MLP block: up and down 2 * 4096 * 21504 + norm */
    assert_int_equal(tp_block_params(&model, 1, false), 2ull * 4096 * 21504 + 4096);
    /* attention block 7 ("M*" at 6-7): q, o 4096^2; k, v 1024 x 4096 each; norm */
    assert_int_equal(model.layer_mixer[7], TP_MIXER_ATTN);
    assert_int_equal(tp_block_params(&model, 7, false), 2ull * 4096 * 4096 + 2ull * 1024 * 4096 + 4096);
    unsigned mamba = 0, attn = 0, mlp = 0;
    for (uint32_t l = 0; l < model.n_layers; l++) {
        mamba += model.layer_mixer[l] == TP_MIXER_MAMBA2;
        attn += model.layer_mixer[l] == TP_MIXER_ATTN;
        mlp += model.layer_mixer[l] == TP_MIXER_NONE && !model.layer_no_ffn[l];
    }
    /* Nemotron-H paper (arXiv:2504.03624) §2.1: the 8B model has 24 Mamba-2, 24 MLP and 4
       self-attention layers */
    assert_int_equal(mamba, 24);
    assert_int_equal(mlp, 24);
    assert_int_equal(attn, 4);
    /* 24 * 109,640,064 + 24 * 176,164,864 + 4 * 41,947,136 + 2 * 131072 * 4096 (embedding and
       untied head) + 4096 (final norm) = 8,100,852,736: the Hub's "8.1B params" */
    assert_int_equal(p.total, 8100852736ull);
    assert_int_equal(p.active, p.total);
    struct tp_params q;
    preset("nemotron-h-8b", &q);
    assert_int_equal(q.total, p.total);
    assert_memory_equal(other.layer_mixer, model.layer_mixer, model.n_layers);
}

/* Qwen3-Next-80B-A3B: 36 gated DeltaNets + 12 gated attention blocks, every block MoE. */
static void test_qwen3_next(void **state)
{
    (void)state;
    struct tp_params p;
    load(FIX "qwen3-next-80b-a3b.json", &p);
    /* full_attention_interval 4: blocks 3, 7, ..., 47 attend, the rest are DeltaNets */
    assert_int_equal(model.layer_mixer[0], TP_MIXER_GDN);
    assert_int_equal(model.layer_mixer[3], TP_MIXER_ATTN);
    assert_int_equal(model.layer_mixer[47], TP_MIXER_ATTN);
    /* DeltaNet: key_dim 16*128 = 2048, value_dim 32*128 = 4096; in_proj_qkvz 2048 x 12288,
       in_proj_ba 2048 x 64, conv1d 8192*4, dt_bias + A_log 64, norm 128, out_proj 4096 x 2048 */
    uint64_t gdn = 25165824ull + 131072 + 32768 + 64 + 128 + 8388608;
    /* MoE: router 512 x 2048; 512 experts of 3 * 2048 * 512; shared 3 * 2048 * 512; gate 2048;
       two block norms */
    uint64_t moe = 1048576ull + 512ull * 3145728 + 3145728 + 2048 + 2 * 2048;
    assert_int_equal(tp_block_params(&model, 0, false), gdn + moe);
    /* gated attention: q_proj 2048 -> 2 * 16 * 256 (query and gate), k, v 2048 -> 512,
       o 4096 -> 2048, q/k norms 256 each */
    uint64_t attn = 16777216ull + 2 * 1048576 + 8388608 + 512;
    assert_int_equal(tp_block_params(&model, 3, false), attn + moe);
    assert_int_equal(p.total, 36 * (gdn + moe) + 12 * (attn + moe) + 2ull * 151936 * 2048 + 2048);
    assert_int_equal(p.total, 79674391296ull);
    /* The MTP layer (pre_fc norms 2 * 2048, fc 4096 -> 2048, norm 2048, one attention + MoE
       block) makes the Hub's safetensors count of Qwen/Qwen3-Next-80B-A3B-Instruct,
       81,324,862,720 parameters (Hub API "safetensors.total", recorded with the repository
       name in a public model registry, code-search id 70911651117) */
    assert_int_equal(p.mtp, 3ull * 2048 + 2ull * 2048 * 2048 + attn + moe);
    assert_int_equal(p.total + p.mtp, 81324862720ull);
    /* "A3B": 10 of 512 experts per token; active excl. embedding 3.56B */
    assert_int_equal(p.active_excl_embedding, 3563764480ull);
    struct tp_params q;
    preset("qwen3-next-80b-a3b", &q);
    assert_int_equal(q.total, p.total);
    assert_int_equal(q.mtp, p.mtp);
    assert_memory_equal(other.layer_mixer, model.layer_mixer, model.n_layers);
}

/* Nemotron 3 Nano 30B-A3B (the Megatron-Bridge recipe's shape): model card
   (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16): "31.6B total parameters, approximately 3.2B
   active (3.6B including embeddings)". */
static void test_nemotron_3_nano(void **state)
{
    (void)state;
    struct tp_params p;
    preset("nemotron-3-nano-30b-a3b", &p);
    /* Mamba-2 block: d_in 4096, conv_dim 4096 + 2*8*128 = 6144; in_proj 2688 x (4096 + 6144
       + 64), conv 6144*4 + 6144, 3*64, norm 4096, out_proj 4096 x 2688, block norm 2688 */
    assert_int_equal(tp_block_params(&other, 0, false),
                     2688ull * 10304 + 6144 * 5 + 192 + 4096 + 4096ull * 2688 + 2688);
    /* MoE block: router 128 x 2688, 128 experts of up + down 2 * 2688 * 1856, shared
       2 * 2688 * 3712, block norm */
    assert_int_equal(tp_block_params(&other, 1, false),
                     128ull * 2688 + 128ull * 2 * 2688 * 1856 + 2ull * 2688 * 3712 + 2688);
    assert_int_equal(p.moe_layers, 23);
    assert_int_equal(p.buffers, 23 * 128);
    /* the card's figures to its 0.1B */
    assert_int_equal((p.total + 50000000) / 100000000, 316);
    assert_int_equal((p.active_excl_embedding + 50000000) / 100000000, 32);
    assert_int_equal((p.active + 50000000) / 100000000, 36);
}

/* MLA is read from kv_lora_rank, whatever the model_type (Kimi K2: "kimi_k2"). */
static void test_kimi_k2_mla(void **state)
{
    (void)state;
    struct tp_params p;
    load(FIX "kimi-k2.json", &p);
    assert_int_equal(model.attn, TP_ATTN_MLA);
    assert_string_equal(model.family, "kimi_k2");
    /* DeepSeek-V3 shapes with 64 heads, 384 experts and one dense block: MLA block
       q_a 1536x7168, q_b 12288x1536, kv_a 576x7168, kv_b 16384x512, o 7168x8192 + norms
       1536 + 512 = 72,286,208 ... summed over the tensor list: 1,026,408,209,408 trainable
       parameters + 60 * 384 e_score_correction_bias floats.  Model card (moonshotai/
       Kimi-K2-Instruct): "1T total parameters, 32B activated parameters". */
    assert_int_equal(p.total, 1026408209408ull);
    assert_int_equal(p.buffers, 60ull * 384);
    assert_int_equal(p.active, 32861477888ull);
    assert_int_equal(p.moe_layers, 60);
    /* the same fields under another model_type are still MLA */
    static const char json[] =
        "{\"model_type\": \"my_mla\", \"hidden_size\": 1024, \"num_hidden_layers\": 2,"
        " \"num_attention_heads\": 8, \"intermediate_size\": 2048, \"vocab_size\": 1000,"
        " \"kv_lora_rank\": 128, \"q_lora_rank\": 256, \"qk_nope_head_dim\": 64,"
        " \"qk_rope_head_dim\": 32, \"v_head_dim\": 64}";
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_hf_json(json, sizeof json - 1, "mla.json", &other, &err), TP_OK);
    assert_int_equal(other.attn, TP_ATTN_MLA);
}

/* Scan FLOPs: Nemotron-H-8B at 8192 tokens.  SSD per head (Dao & Gu 2024 §6): chunk 128 holds
   on average 64.5 earlier-or-same positions; 2 * 128 heads * (64.5 * (128 + 64) + 2 * 128 * 64)
   = 7,364,608 FLOP per token per Mamba-2 block. */
static void test_scan_flops(void **state)
{
    (void)state;
    struct tp_params p;
    load(FIX "nemotron-h-8b.json", &p);
    struct tp_flops f;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_flops_per_token(&model, 8192, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f,
                                        &err),
                     TP_OK);
    assert_float_equal(f.fwd_scan, 24 * 7364608.0, 1e-3);
    /* GEMMs: 24 * (in_proj + out_proj) + 24 MLPs + 4 attention blocks + the LM head */
    double w = 24 * (76021760.0 + 33554432) + 24 * 176160768.0 + 4 * 41943040.0 + 536870912.0;
    assert_float_equal(f.fwd_dense, 2 * w, 1e-3);
    /* attention core of the 4 attention blocks only: 2 * 32 * (128 + 128) * 4096 each */
    assert_float_equal(f.fwd_attn, 4 * 2.0 * 32 * 256 * 4096, 1e-3);
    assert_float_equal(f.fwd, f.fwd_dense + f.fwd_attn + f.fwd_scan, 1e-3);
    /* Gated DeltaNet (Yang et al. 2024 §3.3), Qwen3-Next at 4096 tokens: chunks of 64 (32.5
       positions on average), 32 value heads: 2 * 32 * (32.5 * (3*128 + 2*128) + 3*128*128) */
    load(FIX "qwen3-next-80b-a3b.json", &p);
    assert_int_equal(tp_flops_per_token(&model, 4096, TP_ATTN_CAUSAL, TP_RECOMPUTE_NONE, 0, &f,
                                        &err),
                     TP_OK);
    assert_float_equal(f.fwd_scan, 36 * 2.0 * 32 * (32.5 * 640 + 3 * 16384), 1e-3);
}

static enum tp_status parse(const char *json, struct tp_error *err)
{
    return tp_model_from_hf_json(json, strlen(json), "bad.json", &other, err);
}

#define NEMOTRON(extra, pattern)                                                                  \
    "{\"model_type\": \"nemotron_h\", \"hidden_size\": 256, \"num_hidden_layers\": 4,"            \
    " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": 512,"        \
    " \"vocab_size\": 1000, \"mamba_num_heads\": 8, \"mamba_head_dim\": 32,"                      \
    " \"ssm_state_size\": 16, " extra " \"hybrid_override_pattern\": \"" pattern "\"}"

static void test_bad_hybrid_configs(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(parse(NEMOTRON("\"n_groups\": 2,", "M*M-"), &err), TP_OK);
    assert_int_equal(parse(NEMOTRON("\"n_groups\": 2,", "M*X-"), &err), TP_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "hybrid_override_pattern block 2 is 'X'"));
    assert_int_equal(parse(NEMOTRON("\"n_groups\": 2,", "M*-"), &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "has 3 blocks but num_hidden_layers is 4"));
    assert_int_equal(parse(NEMOTRON("\"n_groups\": 3,", "M*M-"), &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "n_groups=3 must divide mamba_num_heads=8"));
    assert_int_equal(parse(NEMOTRON("\"n_groups\": 2,", "M*ME"), &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "no experts"));
    assert_int_equal(parse(NEMOTRON("\"ssm_state_size\": 0, \"n_groups\": 2,", "M*M-"), &err),
                     TP_EINVAL);
    /* a DeltaNet block without its shapes names the missing field */
    assert_int_equal(parse("{\"model_type\": \"qwen3\", \"hidden_size\": 256,"
                           " \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
                           " \"intermediate_size\": 512, \"vocab_size\": 1000,"
                           " \"layer_types\": [\"linear_attention\", \"full_attention\"]}",
                           &err),
                     TP_EINVAL);
    assert_non_null(strstr(err.msg, "linear_num_key_heads"));
    /* the depth of a pattern model cannot be changed by a shape flag */
    assert_int_equal(tp_model_from_preset("nemotron-h-8b", &other, &err), TP_OK);
    struct tp_shape s;
    tp_shape_init(&s);
    s.layers = 40;
    assert_int_equal(tp_model_apply_shape(&other, &s, NULL, 0, &err), TP_EINVAL);
    assert_string_equal(err.field, "layers");
    /* nor its layout rebuilt from a rule it does not have */
    assert_int_equal(tp_model_from_preset("nemotron-h-8b", &other, &err), TP_OK);
    tp_shape_init(&s);
    s.experts = 8;
    s.topk = 2;
    assert_int_equal(tp_model_apply_shape(&other, &s, NULL, 0, &err), TP_EINVAL);
    assert_string_equal(err.field, "experts");
    /* Qwen3-Next's layout has a rule (every 4th block attends): a new depth keeps it */
    assert_int_equal(tp_model_from_preset("qwen3-next-80b-a3b", &other, &err), TP_OK);
    tp_shape_init(&s);
    s.layers = 24;
    assert_int_equal(tp_model_apply_shape(&other, &s, NULL, 0, &err), TP_OK);
    assert_int_equal(other.layer_mixer[22], TP_MIXER_GDN);
    assert_int_equal(other.layer_mixer[23], TP_MIXER_ATTN);
}

/* Tensor parallelism splits Mamba-2 heads and B/C groups (Megatron-Core MambaMixer): a tp
   that divides the attention heads but not n_groups is refused, naming the field. */
static void test_mixer_tp(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    static const char json[] = NEMOTRON("\"n_groups\": 2,", "M*M-");
    assert_int_equal(parse(json, &err), TP_OK);
    assert_int_equal(other.n_kv_heads, 2);
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 8, &err), TP_OK);
    tp_job_init(&j);
    tp_layout_init(&l);
    l.tp = 2;
    assert_int_equal(tp_layout_check(&other, &c, &j, &l, &err), TP_OK);
    other.n_heads = other.n_kv_heads = 4; /* attention now splits 4 ways; the groups do not */
    other.head_dim = 64;
    tp_layout_init(&l);
    l.tp = 4;
    assert_int_equal(tp_layout_check(&other, &c, &j, &l, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "must divide n_groups=2"));
}

/* A Nemotron-H checkpoint's names (modeling_nemotron_h.py: backbone.embeddings, layers.{i}.norm,
   layers.{i}.mixer.<module>, norm_f) sort into the same components as the core's tensors. */
static void test_nemotron_h_checkpoint_names(void **state)
{
    (void)state;
    assert_int_equal(tp_ckpt_component("backbone.embeddings.weight"), TP_COMP_EMBEDDING);
    assert_int_equal(tp_ckpt_component("backbone.layers.0.norm.weight"), TP_COMP_NORMS);
    assert_int_equal(tp_ckpt_component("backbone.layers.0.mixer.in_proj.weight"),
                     TP_COMP_ATTENTION);
    assert_int_equal(tp_ckpt_component("backbone.layers.0.mixer.A_log"), TP_COMP_ATTENTION);
    assert_int_equal(tp_ckpt_component("backbone.layers.0.mixer.norm.weight"), TP_COMP_ATTENTION);
    assert_int_equal(tp_ckpt_component("backbone.layers.1.mixer.up_proj.weight"), TP_COMP_MLP);
    assert_int_equal(tp_ckpt_component("backbone.layers.7.mixer.q_proj.weight"),
                     TP_COMP_ATTENTION);
    assert_int_equal(tp_ckpt_component("backbone.layers.1.mixer.experts.5.down_proj.weight"),
                     TP_COMP_EXPERTS);
    assert_int_equal(tp_ckpt_component("backbone.layers.1.mixer.shared_experts.up_proj.weight"),
                     TP_COMP_SHARED);
    assert_int_equal(tp_ckpt_component("backbone.layers.1.mixer.gate.weight"), TP_COMP_ROUTER);
    assert_int_equal(tp_ckpt_component("backbone.norm_f.weight"), TP_COMP_NORMS);
    assert_int_equal(tp_ckpt_component("model.layers.0.linear_attn.in_proj_qkvz.weight"),
                     TP_COMP_ATTENTION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nemotron_h_8b),     cmocka_unit_test(test_qwen3_next),
        cmocka_unit_test(test_nemotron_3_nano),   cmocka_unit_test(test_kimi_k2_mla),
        cmocka_unit_test(test_scan_flops),
        cmocka_unit_test(test_bad_hybrid_configs), cmocka_unit_test(test_mixer_tp),
        cmocka_unit_test(test_nemotron_h_checkpoint_names),
    };
    return cmocka_run_group_tests_name("hybrid", tests, NULL, NULL);
}
