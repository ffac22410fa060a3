/*
 * test_pp_layout.c - Megatron-Core's pipeline layouts per virtual stage.
 *
 * Expected values: the layout string of Megatron-LM's docs/user-guide/features/
 * pipeline_parallel_layout.md ("Et*3|(tt|)*29,m|L": DeepSeek-V3's 61 blocks on PP16 x VPP2),
 * the parser of megatron/core/transformer/pipeline_parallel_layer_layout.py, and
 * get_num_layers_to_build of megatron/core/transformer/transformer_block.py (uneven first/last
 * ranks split equally over their chunks; the embedding and the loss each taking one slot, as
 * Pai-Megatron-Patch runs Qwen3-235B's 94 blocks on PP32 x VPP3, issue #658).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <string.h>

static void test_deepseek_layout_string(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("deepseek-v3", &m, &err), TP_OK);
    struct tp_layout l;
    tp_layout_init(&l);
    l.pp = 16;
    assert_int_equal(tp_layout_pp_parse("Et*3|(tt|)*29,m|L", m.n_layers, &l, &err), TP_OK);
    assert_int_equal(l.vpp, 2);
    assert_int_equal(l.pp_nv, 32);
    /* rank 0: stage 0 (3) + stage 16 (2); ranks 14, 15 hold the MTP and loss stages */
    assert_int_equal(tp_stage_blocks(&m, &l, 0), 5);
    assert_int_equal(tp_stage_blocks(&m, &l, 1), 4);
    assert_int_equal(tp_stage_blocks(&m, &l, 14), 2);
    assert_int_equal(tp_stage_blocks(&m, &l, 15), 2);
    char text[256];
    tp_layout_pp_format(&m, &l, text, sizeof text);
    assert_string_equal(text, "Et*3|(t*2|)*29|L");
    /* what we write parses back to the same map */
    struct tp_layout back;
    tp_layout_init(&back);
    back.pp = 16;
    assert_int_equal(tp_layout_pp_parse(text, m.n_layers, &back, &err), TP_OK);
    assert_memory_equal(back.pp_map, l.pp_map, sizeof l.pp_map);
    /* errors name what is wrong */
    tp_layout_init(&back);
    back.pp = 16;
    assert_int_equal(tp_layout_pp_parse("t*61|(|)*31,L", m.n_layers, &back, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "must start with the embedding"));
    back.pp = 5;
    assert_int_equal(tp_layout_pp_parse("Et*3|(tt|)*29,m|L", m.n_layers, &back, &err),
                     TP_EINVAL);
    assert_non_null(strstr(err.msg, "32 virtual stages, not a multiple of pp=5"));
    back.pp = 16;
    assert_int_equal(tp_layout_pp_parse("Et*3|(tt|*29,m|L", m.n_layers, &back, &err),
                     TP_EINVAL);
    assert_non_null(strstr(err.msg, "'(' is not a layer"));
    assert_int_equal(tp_layout_pp_parse("E(t|)*99999,L", m.n_layers, &back, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "expands to more than"));
}

static void test_account_embedding_loss(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("qwen3-30b-a3b", &m, &err), TP_OK);
    m.n_layers = 94; /* Qwen3-235B-A22B's depth; only the count matters here */
    struct tp_layout l;
    tp_layout_init(&l);
    l.pp = 32;
    l.vpp = 3;
    assert_int_equal(tp_layout_pp_account(94, true, true, &l, &err), TP_OK);
    assert_int_equal(tp_stage_blocks(&m, &l, 0), 2);
    assert_int_equal(tp_stage_blocks(&m, &l, 1), 3);
    assert_int_equal(tp_stage_blocks(&m, &l, 31), 2);
    /* PP8 x VPP4 (XTuner's benchmark): 96 slots, 12 per rank, 3 per chunk */
    tp_layout_init(&l);
    l.pp = 8;
    l.vpp = 4;
    assert_int_equal(tp_layout_pp_account(94, true, true, &l, &err), TP_OK);
    assert_int_equal(tp_stage_blocks(&m, &l, 0), 11);
    assert_int_equal(tp_stage_blocks(&m, &l, 3), 12);
    assert_int_equal(tp_stage_blocks(&m, &l, 7), 11);
    tp_layout_init(&l);
    l.pp = 16;
    l.vpp = 4; /* 96 slots over 64 virtual stages */
    assert_int_equal(tp_layout_pp_account(94, true, true, &l, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "96 slots do not split evenly over pp*vpp = 64"));
}

static void test_uneven_interleaved(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("llama-3.1-70b", &m, &err), TP_OK);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 32, &err), TP_OK);
    tp_job_init(&j);
    j.framework = TP_FW_MEGATRON;
    struct tp_layout l;
    tp_layout_init(&l);
    l.tp = 8;
    l.pp = 4;
    l.vpp = 2;
    l.pp_first = l.pp_last = 18;
    assert_int_equal(tp_layout_check(&m, &c, &j, &l, &err), TP_OK);
    /* ranks hold 18, 22, 22, 18: chunks of 9 and 11 in layer order 9|11|11|9|9|11|11|9 */
    assert_int_equal(tp_stage_blocks(&m, &l, 0), 18);
    assert_int_equal(tp_stage_blocks(&m, &l, 1), 22);
    assert_int_equal(tp_stage_blocks(&m, &l, 3), 18);
    struct tp_memory mem;
    assert_int_equal(tp_memory_stage(&m, &c, &j, &l, 1, &mem), TP_OK);
    assert_int_equal(mem.first_layer, 9);
    assert_int_equal(mem.n_layers, 22);
    tp_layout_init(&l);
    l.tp = 8;
    l.pp = 4;
    l.vpp = 2;
    l.pp_first = 19;
    l.pp_last = 19;
    assert_int_equal(tp_layout_check(&m, &c, &j, &l, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "pipeline rank 0 holds 19 blocks"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek_layout_string),
        cmocka_unit_test(test_account_embedding_loss),
        cmocka_unit_test(test_uneven_interleaved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
