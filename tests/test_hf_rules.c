/*
 * test_hf_rules.c - config.json shapes refused as Hugging Face transformers refuses them
 * (src/readers/hf_rules.c, issue 41).  Each refused file is a published config with one field
 * broken; the same file unbroken must still load with its published parameter count, so a rule
 * that refused too much fails here as surely as one that refused too little.
 *
 * Published counts: Llama 3.1 8B 8,030,261,248 (meta-llama/Llama-3.1-8B safetensors total,
 * pinned in tests/cli/cases.txt); Mixtral 8x7B 46,702,792,704 (mistralai/Mixtral-8x7B-v0.1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <stdio.h>
#include <string.h>

/* meta-llama/Llama-3.1-8B config.json (the fields the reader uses), kv heads as given */
static const char LLAMA[] =
    "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
    "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": %s, "
    "\"vocab_size\": 128256, \"tie_word_embeddings\": false, \"max_position_embeddings\": 8192}";

/* mistralai/Mixtral-8x7B-v0.1 config.json, top-k as given */
static const char MIXTRAL[] =
    "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
    "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, "
    "\"vocab_size\": 32000, \"num_local_experts\": 8, \"num_experts_per_tok\": %s, "
    "\"sliding_window\": null, \"max_position_embeddings\": 32768}";

/* google/gemma-3-1b-pt text config (tests/fixtures/hf/gemma-3-1b.json), the pattern and the
   window as given */
static const char GEMMA3[] =
    "{\"model_type\": \"gemma3_text\", \"hidden_size\": 1152, \"intermediate_size\": 6912, "
    "\"num_attention_heads\": 4, \"num_hidden_layers\": 26, \"num_key_value_heads\": 1, "
    "\"head_dim\": 256, \"vocab_size\": 262144, \"sliding_window\": %s, "
    "\"sliding_window_pattern\": %s, \"max_position_embeddings\": 32768}";

static enum tp_status load(const char *json, struct tp_model *m, struct tp_error *err)
{
    return tp_model_from_hf_json(json, strlen(json), "config.json", m, err);
}

/* The file is refused with one line naming the file, the field and the transformers source. */
static void refused(const char *json, const char *field, const char *source)
{
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(load(json, &m, &err), TP_EINVAL);
    if (!strstr(err.msg, field) || !strstr(err.msg, source) ||
        strncmp(err.msg, "config.json: ", 13) != 0 || strchr(err.msg, '\n'))
        print_error("message: %s\n", err.msg);
    assert_true(strncmp(err.msg, "config.json: ", 13) == 0);
    assert_non_null(strstr(err.msg, field));
    assert_non_null(strstr(err.msg, source));
    assert_null(strchr(err.msg, '\n'));
}

static uint64_t total(const char *json)
{
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    if (load(json, &m, &err) != TP_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(load(json, &m, &err), TP_OK);
    struct tp_params p;
    tp_count_params(&m, &p);
    return p.total;
}

static void test_kv_heads(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof json, LLAMA, "8");
    assert_int_equal(total(json), 8030261248u);
    /* 0 was read as "missing" and became 32 kv heads: 8.84B parameters, without a word */
    snprintf(json, sizeof json, LLAMA, "0");
    refused(json, "\"num_key_value_heads\" must be positive (got 0)", "modeling_llama.py");
    snprintf(json, sizeof json, LLAMA, "3");
    refused(json, "num_key_value_heads=3 must divide num_attention_heads=32", "repeat_kv");
    /* null is transformers' "one kv head per query head" (LlamaConfig): full MHA is right */
    snprintf(json, sizeof json, LLAMA, "null");
    struct tp_model m;
    struct tp_error err;
    assert_int_equal(load(json, &m, &err), TP_OK);
    assert_int_equal(m.n_kv_heads, 32);
}

static void test_topk(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof json, MIXTRAL, "2");
    assert_int_equal(total(json), 46702792704u);
    snprintf(json, sizeof json, MIXTRAL, "9");
    refused(json, "num_experts_per_tok=9 exceeds the number of experts 8", "modeling_mixtral.py");
    snprintf(json, sizeof json, MIXTRAL, "0");
    refused(json, "\"num_experts_per_tok\" must be positive", "torch.topk");
}

static void test_gemma3_pattern_and_window(void **state)
{
    (void)state;
    char json[1024];
    struct tp_model m;
    struct tp_error err;
    snprintf(json, sizeof json, GEMMA3, "512", "6");
    assert_int_equal(load(json, &m, &err), TP_OK);
    /* Gemma3TextConfig: block i is full attention iff (i + 1) % 6 == 0 */
    for (uint32_t l = 0; l < m.n_layers; l++)
        assert_int_equal(m.layer_attn[l], (l + 1) % 6 ? TP_LAYER_SLIDING : TP_LAYER_FULL);
    /* 0 made every block sliding; transformers divides by it */
    snprintf(json, sizeof json, GEMMA3, "512", "0");
    refused(json, "\"sliding_window_pattern\" must be positive (got 0)",
            "configuration_gemma3.py");
    snprintf(json, sizeof json, GEMMA3, "0", "6");
    refused(json, "\"sliding_window\" must be positive (got 0)", "sliding_window_overlay");
    snprintf(json, sizeof json, GEMMA3, "-512", "6");
    refused(json, "\"sliding_window\" must be positive (got -512)", "sliding_window_overlay");
}

static const char QWEN2[] =
    "{\"model_type\": \"qwen2\", \"hidden_size\": 64, \"intermediate_size\": 128, "
    "\"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"vocab_size\": 1000, "
    "\"sliding_window\": 0, \"use_sliding_window\": %s}";

/* A Qwen window is read only with use_sliding_window (Qwen2Config): 0 is refused only then. */
static void test_qwen_window_flag(void **state)
{
    (void)state;
    char json[512];
    struct tp_model m;
    struct tp_error err;
    snprintf(json, sizeof json, QWEN2, "false");
    assert_int_equal(load(json, &m, &err), TP_OK);
    assert_int_equal(m.window, 0);
    snprintf(json, sizeof json, QWEN2, "true");
    refused(json, "\"sliding_window\" must be positive", "sliding_window_overlay");
}

static void test_gpt2_heads(void **state)
{
    (void)state;
    const char *json = "{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, "
                       "\"n_head\": 7, \"vocab_size\": 50257, \"n_positions\": 1024}";
    refused(json, "n_embd=768 is not divisible by n_head=7", "GPT2Attention.__init__");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_heads),
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_gemma3_pattern_and_window),
        cmocka_unit_test(test_qwen_window_flag),
        cmocka_unit_test(test_gpt2_heads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
