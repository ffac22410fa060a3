/*
 * test_options.c - the one option table (src/api/option_table.c) and setting options by name
 * (src/api/options.c, src/api/args_run.c): every name and alias unique and findable, the
 * frameworks' spellings land on the same field, strict values, enums decoded to the library's
 * own values, one "did you mean", and the pooled search equal to one call.
 *
 * Known answer: Llama 3.1 8B, 8 H100 SXM, mbs 2, gbs 64 give gas 4 (64 / (2 x 8)) whether the
 * batch is spelt mbs/gbs or Megatron-LM's --micro-batch-size/--global-batch-size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "trainplan.h"

#include <stdlib.h>
#include <string.h>

/* Every name and alias names one option; the names are dashed, the keywords underscored. */
static void test_names_unique(void **state)
{
    (void)state;
    size_t n;
    const struct tp_option *t = tp_options(&n);
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        /* a name is one row per verb (calibrate's --explain, search's --explain) */
        assert_ptr_equal(tp_option_find_verb(t[i].name, t[i].verbs), &t[i]);
        for (size_t k = 0; k < i; k++)
            if (strcmp(t[k].name, t[i].name) == 0)
                assert_int_equal(t[k].verbs & t[i].verbs, 0);
        assert_null(strchr(t[i].name, '_'));
        assert_true(t[i].verbs != 0);
        assert_non_null(t[i].help);
        for (const char *p = t[i].aliases; p && *p;) {
            char a[64];
            size_t k = strcspn(p, "|");
            assert_true(k < sizeof a);
            memcpy(a, p, k);
            a[k] = '\0';
            assert_ptr_equal(tp_option_find_verb(a, t[i].verbs), &t[i]);
            p += k + (p[k] == '|');
        }
    }
    /* underscores are dashes: a binding's keyword, Hugging Face's --per_device_train_batch_size */
    assert_ptr_equal(tp_option_find("gpu_hour_price"), tp_option_find("gpu-hour-price"));
    assert_ptr_equal(tp_option_find("per_device_train_batch_size"), tp_option_find("mbs"));
    assert_null(tp_option_find("no-such-option"));
}

static struct tp_args *args(unsigned verb)
{
    struct tp_args *a = malloc(sizeof *a);
    assert_non_null(a);
    tp_args_init(verb, a);
    return a;
}

/* Megatron-LM's and DeepSpeed's spellings set the same fields, and resolve to the same run. */
static void test_framework_spellings(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct tp_args *a = args(TP_VERB_ESTIMATE), *b = args(TP_VERB_ESTIMATE);
    const char *ka[] = {"gpus", "mbs", "gbs", "zero", "tp"};
    const char *kb[] = {"num-gpus", "micro-batch-size", "global_batch_size", "zero-stage",
                        "tensor-model-parallel-size"};
    const char *v[] = {"8", "2", "64", "1", "1"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(tp_args_set(a, ka[i], v[i], true, &err), TP_OK);
        assert_int_equal(tp_args_set(b, kb[i], v[i], true, &err), TP_OK);
    }
    assert_int_equal(a->mbs, 2);
    assert_int_equal(b->mbs, 2);
    assert_int_equal(b->gbs, 64);
    assert_int_equal(b->zero, 1);
    struct tp_model m;
    assert_int_equal(tp_model_from_name("llama-3.1-8b", &m, &err), TP_OK);
    struct tp_request q;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_layout l;
    assert_int_equal(tp_args_request(b, &q, &err), TP_OK);
    assert_int_equal(tp_request_resolve(&q, &m, &c, &j, &l, &err), TP_OK);
    assert_int_equal(l.gas, 4); /* 64 / (2 x 8) */
    assert_int_equal(l.dp, 8);
    free(a);
    free(b);
}

/* Values: strict numbers in the table's range, flags from true/1/false/0 only, enums decoded
   into the library's values (framework: no "+1"), stack.c's aliases. */
static void test_values(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct tp_args *a = args(TP_VERB_MEMORY);
    assert_int_equal(a->framework, TP_UNSET);
    assert_int_equal(tp_args_set(a, "framework", "megatron", true, &err), TP_OK);
    assert_int_equal(a->framework, TP_FW_MEGATRON);
    assert_int_equal(tp_args_set(a, "framework", "trl", true, &err), TP_OK);
    assert_int_equal(a->framework, TP_FW_AXOLOTL);
    assert_int_equal(tp_args_set(a, "framework", "pytorch", true, &err), TP_EINVAL);
    assert_string_equal(err.field, "framework");
    assert_int_equal(tp_args_set(a, "recompute", "full", true, &err), TP_OK);
    assert_int_equal(a->recompute, TP_RECOMPUTE_FULL);
    assert_int_equal(tp_args_set(a, "gradient_checkpointing", "true", true, &err), TP_OK);
    assert_int_equal(a->recompute, TP_RECOMPUTE_FULL);
    assert_int_equal(tp_args_set(a, "seq", "7.86e3", true, &err), TP_OK);
    assert_int_equal(a->seq, 7860);
    static const char *const BAD_INT[] = {"8x", "0x10", " 12", "1.5", "", "inf"};
    for (size_t i = 0; i < sizeof BAD_INT / sizeof BAD_INT[0]; i++) {
        assert_int_equal(tp_args_set(a, "mbs", BAD_INT[i], true, &err), TP_EINVAL);
        assert_string_equal(err.field, "mbs");
    }
    assert_int_equal(tp_args_set(a, "overhead_gb", "1001", true, &err), TP_EINVAL);
    assert_string_equal(err.msg, "overhead_gb 1001 is out of range (0..1000)");
    assert_int_equal(tp_args_set(a, "per_stage", "1", true, &err), TP_OK);
    assert_int_equal(a->per_stage, 1);
    static const char *const BAD_BOOL[] = {"yes", "True", "2", "1.0", "", "on"};
    for (size_t i = 0; i < sizeof BAD_BOOL / sizeof BAD_BOOL[0]; i++) {
        assert_int_equal(tp_args_set(a, "fused_loss", BAD_BOOL[i], true, &err), TP_EINVAL);
        assert_string_equal(err.field, "fused_loss");
    }
    /* the CLI's output options are not a binding's keywords */
    assert_int_equal(tp_args_set(a, "format", "json", true, &err), TP_EINVAL);
    assert_int_equal(tp_args_set(a, "format", "json", false, &err), TP_OK);
    free(a);
}

/* The one "did you mean": near names of the verb's options only. */
static void test_suggest(void **state)
{
    (void)state;
    assert_string_equal(tp_option_suggest("mbz", TP_VERB_ESTIMATE), "mbs");
    assert_string_equal(tp_option_suggest("framwork", TP_VERB_SEARCH), "framework");
    assert_string_equal(tp_option_suggest("gradient-accum", TP_VERB_ESTIMATE), "gas");
    assert_null(tp_option_suggest("bogus", TP_VERB_PARAMS));
    assert_null(tp_option_suggest("mbz", TP_VERB_MODELS));
    struct tp_error err = {{0}, {0}};
    struct tp_args *a = args(TP_VERB_ESTIMATE);
    assert_int_equal(tp_args_set(a, "mbz", "2", true, &err), TP_EINVAL);
    assert_string_equal(err.field, "mbz");
    assert_string_equal(err.msg, "unknown option mbz for estimate (did you mean mbs?)");
    free(a);
}

/* The schema as JSON lists a verb's options, the CLI-only ones only when asked. */
static void test_options_json(void **state)
{
    (void)state;
    char *all = tp_options_json(TP_VERB_SEARCH, true), *bind = tp_options_json(TP_VERB_SEARCH,
                                                                                false);
    assert_non_null(all);
    assert_non_null(bind);
    assert_non_null(strstr(all, "\"name\": \"threads\""));
    assert_null(strstr(bind, "\"name\": \"threads\""));
    assert_non_null(strstr(bind, "\"keyword\": \"max_tp\""));
    assert_null(strstr(bind, "\"name\": \"tp\"")); /* a layout option: not search's */
    tp_free(all);
    tp_free(bind);
}

/* A pool that runs its tasks in reverse on the calling thread: the pooled search equals one
   call, hits and stats. */
static void reverse_run(void *ctx, unsigned n, void (*task)(void *arg, unsigned k), void *arg)
{
    (void)ctx;
    for (unsigned k = n; k-- > 0;)
        task(arg, k);
}

static void test_pool_search(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    struct tp_model m;
    struct tp_cluster c;
    struct tp_job j;
    struct tp_calib cal;
    assert_int_equal(tp_model_from_name("llama-3.1-70b", &m, &err), TP_OK);
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 64, &err), TP_OK);
    tp_job_init(&j);
    j.framework = TP_FW_MEGATRON;
    tp_calib_init(&cal);
    struct tp_search_opts o;
    tp_search_opts_init(&o);
    o.gbs = 256;
    enum { CAP = 8 };
    static struct tp_search_hit one[CAP], pooled[CAP];
    size_t n1 = 0, n2 = 0;
    struct tp_search_stats s1, s2;
    assert_int_equal(tp_search(&m, &c, &j, &o, &cal, one, CAP, &n1, &s1, &err), TP_OK);
    struct tp_pool pool = {3, reverse_run, NULL, NULL};
    assert_int_equal(tp_search_pool(&m, &c, &j, &o, &cal, &pool, pooled, CAP, &n2, &s2, &err),
                     TP_OK);
    assert_true(n1 > 0);
    assert_int_equal(n1, n2);
    assert_int_equal(s1.evaluated, s2.evaluated);
    for (size_t i = 0; i < n1; i++)
        assert_int_equal(tp_search_hit_cmp(&one[i], &pooled[i]), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_unique),   cmocka_unit_test(test_framework_spellings),
        cmocka_unit_test(test_values),         cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_options_json),   cmocka_unit_test(test_pool_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
