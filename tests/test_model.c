/*
 * test_model.c - model validation, shape overrides and config.json error paths.
 *
 * Every bad input must come back as a status with a message that names the field; none may
 * crash.  Shape-flag models are checked against the same counts their real configs give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <string.h>

static struct tp_model model;

/* Parses `json`; expects `want` and, on failure, a message containing `needle`. */
static void parse_expect(const char *json, enum tp_status want, const char *needle)
{
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_model_from_hf_json(json, strlen(json), "config.json", &model, &err);
    if (st != want)
        fail_msg("status %d, expected %d (%s) for %s", st, want, err.msg, json);
    if (needle && !strstr(err.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
    if (st != TP_OK && strncmp(err.msg, "config.json", 11) != 0)
        fail_msg("message \"%s\" does not name the file", err.msg);
}

#define LLAMA_HEAD "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, "
#define LLAMA_REST "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"vocab_size\": 100"

static void test_config_errors(void **state)
{
    (void)state;
    parse_expect("{\"model_type\": \"llama\",}", TP_EINVAL, "malformed JSON");
    parse_expect("", TP_EINVAL, "malformed JSON");
    parse_expect("[1, 2]", TP_EINVAL, "top level must be a JSON object");
    parse_expect("{\"hidden_size\": 8}", TP_EINVAL, "\"model_type\" is missing");
    parse_expect("{\"model_type\": 3}", TP_EINVAL, "\"model_type\" must be a string");
    parse_expect("{\"model_type\": \"rwkv\"}", TP_EUNSUPPORTED, "shape flags");
    parse_expect("{\"model_type\": \"rwkv\"}", TP_EUNSUPPORTED, "qwen3_moe");
    parse_expect(LLAMA_HEAD LLAMA_REST "}", TP_EINVAL, "\"hidden_size\" is missing");
    parse_expect(LLAMA_HEAD "\"hidden_size\": \"32\", " LLAMA_REST "}", TP_EINVAL,
                 "\"hidden_size\" must be an integer (found a string)");
    parse_expect(LLAMA_HEAD "\"hidden_size\": -32, " LLAMA_REST "}", TP_EINVAL,
                 "\"hidden_size\" is -32, out of range");
    parse_expect(LLAMA_HEAD "\"hidden_size\": 0, " LLAMA_REST "}", TP_EINVAL,
                 "hidden_size must be positive");
    parse_expect(LLAMA_HEAD "\"hidden_size\": 32, \"num_key_value_heads\": 3, " LLAMA_REST "}",
                 TP_EINVAL, "num_key_value_heads=3 must divide num_attention_heads=4");
    parse_expect(LLAMA_HEAD "\"hidden_size\": 30, " LLAMA_REST "}", TP_EINVAL,
                 "not divisible by num_attention_heads");
    parse_expect(LLAMA_HEAD "\"hidden_size\": 32, \"tie_word_embeddings\": 1, " LLAMA_REST "}",
                 TP_EINVAL, "\"tie_word_embeddings\" must be true or false");
    parse_expect("{\"model_type\": \"llama4\", \"hidden_size\": 8}", TP_EINVAL,
                 "\"text_config\" is missing");
    parse_expect("{\"model_type\": \"mixtral\", \"num_hidden_layers\": 2, \"hidden_size\": 32, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"vocab_size\": 100, "
                 "\"num_local_experts\": 4, \"num_experts_per_tok\": 5}",
                 TP_EINVAL, "exceeds the number of experts");
    parse_expect("{\"model_type\": \"gemma2\", \"num_hidden_layers\": 2, \"hidden_size\": 32, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"vocab_size\": 100, "
                 "\"sliding_window\": 16, \"layer_types\": [\"full_attention\"]}",
                 TP_EINVAL, "has 1 entries but num_hidden_layers is 2");
    parse_expect("{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 2, \"hidden_size\": 32, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"vocab_size\": 100, "
                 "\"num_experts\": 4, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 8, "
                 "\"mlp_only_layers\": [7]}",
                 TP_EINVAL, "\"mlp_only_layers\" entry 0 must be a layer index in 0..1");
    parse_expect(LLAMA_HEAD "\"hidden_size\": 99999999, " LLAMA_REST "}", TP_EINVAL,
                 "out of range");
}

static void test_config_minimal_ok(void **state)
{
    (void)state;
    /* 2 blocks of (4*32*32 + 3*32*64 + 2*32) + 2*100*32 + 32 */
    parse_expect(LLAMA_HEAD "\"hidden_size\": 32, " LLAMA_REST "}", TP_OK, NULL);
    struct tp_params p;
    tp_count_params(&model, &p);
    assert_int_equal(p.total, 2 * (4 * 32 * 32 + 3 * 32 * 64 + 2 * 32) + 2 * 100 * 32 + 32);
    assert_int_equal(model.n_kv_heads, 4);
    assert_int_equal(model.head_dim, 8);
    /* reals that are whole numbers are accepted (some exporters write 4096.0) */
    parse_expect(LLAMA_HEAD "\"hidden_size\": 32.0, " LLAMA_REST "}", TP_OK, NULL);
    parse_expect(LLAMA_HEAD "\"hidden_size\": 32.5, " LLAMA_REST "}", TP_EINVAL,
                 "must be an integer (found a real number)");
}

static void test_validation(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    tp_model_init(&model);
    assert_int_equal(tp_model_finalize(&model, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "num_hidden_layers must be positive"));
    model.n_layers = 2000;
    model.hidden = 64;
    model.n_heads = 4;
    model.vocab = 10;
    model.ffn = 16;
    assert_int_equal(tp_model_finalize(&model, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "num_hidden_layers=2000 is out of range"));
    model.n_layers = 2;
    assert_int_equal(tp_model_finalize(&model, &err), TP_OK);
    model.pos = TP_POS_LEARNED;
    assert_int_equal(tp_model_finalize(&model, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "max_position_embeddings"));
}

static void shape_model(struct tp_shape *s, enum tp_status want, const char *needle)
{
    struct tp_error err = {{0}, {0}};
    char notes[256];
    tp_model_init(&model);
    enum tp_status st = tp_model_apply_shape(&model, s, notes, sizeof notes, &err);
    if (st != want)
        fail_msg("status %d, expected %d: %s", st, want, err.msg);
    if (needle && !strstr(err.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_shape_flags(void **state)
{
    (void)state;
    struct tp_shape s;
    struct tp_params p;
    /* GPT-2 small from shape flags: 124,439,808 like its config */
    tp_shape_init(&s);
    s.layers = 12;
    s.hidden = 768;
    s.heads = 12;
    s.vocab = 50257;
    s.mlp = TP_MLP_GELU;
    s.norm = TP_NORM_LAYER;
    s.bias = 1;
    s.pos = TP_POS_LEARNED;
    s.max_positions = 1024;
    s.tied = 1;
    shape_model(&s, TP_OK, NULL);
    tp_count_params(&model, &p);
    assert_int_equal(p.total, 124439808);
    assert_int_equal(model.ffn, 3072); /* 4H default for GELU */

    /* the Llama FFN rule: H 4096 -> 11008 (Llama 2 7B) */
    tp_shape_init(&s);
    s.layers = 32;
    s.hidden = 4096;
    s.heads = 32;
    s.vocab = 32000;
    shape_model(&s, TP_OK, NULL);
    assert_int_equal(model.ffn, 11008);
    tp_count_params(&model, &p);
    assert_int_equal(p.total, 6738415616ull); /* Llama-2-7B, §1.5 */

    /* MoE from flags: Mixtral 8x7B */
    s.kv_heads = 8;
    s.experts = 8;
    s.topk = 2;
    s.moe_ffn = 14336;
    shape_model(&s, TP_OK, NULL);
    tp_count_params(&model, &p);
    assert_int_equal(p.total, 46702792704ull);
    assert_int_equal(p.active, 12879925248ull);

    /* missing shapes, impossible ones */
    tp_shape_init(&s);
    s.layers = 4;
    s.hidden = 64;
    s.heads = 4;
    shape_model(&s, TP_EINVAL, "missing --vocab");
    s.vocab = 100;
    s.kv_heads = 3;
    shape_model(&s, TP_EINVAL, "num_key_value_heads=3 must divide");
    s.kv_heads = TP_UNSET;
    s.experts = 8;
    shape_model(&s, TP_EINVAL, "experts needs --topk");
    s.topk = 9;
    shape_model(&s, TP_EINVAL, "exceeds the number of experts 8");
    s.topk = 2;
    s.dense_layers = 5;
    shape_model(&s, TP_EINVAL, "dense_layers=5 exceeds num_hidden_layers=4");
}

static void test_overrides(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct tp_shape s;
    struct tp_params p;
    /* Llama 3.1 8B with 16 layers: half the blocks, same embedding and head */
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &model, &err), TP_OK);
    tp_shape_init(&s);
    s.layers = 16;
    assert_int_equal(tp_model_apply_shape(&model, &s, NULL, 0, &err), TP_OK);
    tp_count_params(&model, &p);
    assert_int_equal(p.total, 16ull * 218112000 + 2ull * 525336576 + 4096);
    /* a derived head_dim follows a new hidden size; an explicit one stays */
    tp_shape_init(&s);
    s.hidden = 2048;
    assert_int_equal(tp_model_apply_shape(&model, &s, NULL, 0, &err), TP_OK);
    assert_int_equal(model.head_dim, 64);
    assert_int_equal(tp_model_from_preset("qwen3-30b-a3b", &model, &err), TP_OK);
    s.hidden = 4096;
    assert_int_equal(tp_model_apply_shape(&model, &s, NULL, 0, &err), TP_OK);
    assert_int_equal(model.head_dim, 128);
    /* dense layers on an MoE preset */
    tp_shape_init(&s);
    s.dense_layers = 2;
    assert_int_equal(tp_model_apply_shape(&model, &s, NULL, 0, &err), TP_OK);
    tp_count_params(&model, &p);
    assert_int_equal(p.moe_layers, 46);
    /* experts added to a dense model read from a config (explicit layout) take effect */
    assert_int_equal(tp_model_from_hf_config("tests/fixtures/hf/llama-3.1-8b.json", &model, &err),
                     TP_OK);
    tp_shape_init(&s);
    s.experts = 8;
    s.topk = 2;
    assert_int_equal(tp_model_apply_shape(&model, &s, NULL, 0, &err), TP_OK);
    tp_count_params(&model, &p);
    assert_int_equal(p.moe_layers, 32);
}

static void test_unknown_preset(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("llama-3.1-8", &model, &err), TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "did you mean: llama-3.1-8b"));
    assert_int_equal(tp_model_from_preset("LLAMA3.1-8B", &model, &err), TP_OK); /* alias, any case */
    assert_int_equal(tp_model_from_hf_config("/nonexistent/config.json", &model, &err),
                     TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "/nonexistent/config.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_errors), cmocka_unit_test(test_config_minimal_ok),
        cmocka_unit_test(test_validation),    cmocka_unit_test(test_shape_flags),
        cmocka_unit_test(test_overrides),     cmocka_unit_test(test_unknown_preset),
    };
    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
