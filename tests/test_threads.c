/*
 * test_threads.c - the library keeps no global mutable state: two threads evaluating at once
 * get exactly the single-threaded answers, and the documents do not depend on LC_NUMERIC.
 *
 * Runs tp_call_json (resolution, evaluation, JSON) on several runs, and tp_call_runs_json
 * (validate, calibrate) on runs files, from two POSIX threads, a
 * few rounds each, and compares the text byte for byte with the answers computed first on one
 * thread.  The figures themselves are checked against published values elsewhere
 * (test_time.c, test_memory.c); here one known answer anchors the runs: Llama 3.1 8B's model
 * FLOPs per token at seq 8192, 51.470 GFLOP (the params verb's exact count, README).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "trainplan.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct job {
    const char *verb, *model;
    const char *keys[6], *values[6];
    size_t n;
};
static const struct job JOBS[] = {
    {"estimate", "llama-3.1-8b", {"gpus", "seq"}, {"8", "8192"}, 2},
    {"estimate", "llama-3.1-70b", {"gpus", "tp", "pp", "gbs", "recompute", "tokens"},
     {"64", "8", "2", "128", "full", "1e9"}, 6},
    {"estimate", "qwen3-30b-a3b", {"gpus", "ep", "zero"}, {"16", "8", "1"}, 3},
    {"memory", "llama-3.1-70b", {"gpus"}, {"8"}, 1},
    /* size's branch and bound, each shape searched on the calling thread (tp_call_json) */
    {"size", NULL, {"gpu", "gpus", "days", "seq", "top"}, {"a100-80gb", "8", "15", "2048", "3"},
     5},
    /* the verbs over runs files: `model` is the file */
    {"validate", "tests/fixtures/runs/mini.csv", {0}, {0}, 0},
#ifndef TP_NO_GSL /* make NO_GSL=1 has no fit */
    {"calibrate", "tests/cli/fixtures/runs-two.csv", {"no_cv", "max_evals"}, {"true", "60"}, 2},
#endif
};
enum { N_JOBS = sizeof JOBS / sizeof JOBS[0], ROUNDS = 4 };
static char *want[N_JOBS];

static char *run(const struct job *j)
{
    char *out = NULL;
    struct tp_error err = {{0}, {0}};
    bool runs = strcmp(j->verb, "validate") == 0 || strcmp(j->verb, "calibrate") == 0;
    if ((runs ? tp_call_runs_json(j->verb, &j->model, 1, j->keys, j->values, j->n, &out, &err)
              : tp_call_json(j->verb, j->model, j->keys, j->values, j->n, &out, &err)) != TP_OK) {
        fprintf(stderr, "%s %s: %s\n", j->verb, j->model ? j->model : "-", err.msg);
        return NULL;
    }
    return out;
}

static void *worker(void *arg)
{
    size_t *mismatches = arg;
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < N_JOBS; i++) {
            char *got = run(&JOBS[i]);
            *mismatches += !got || strcmp(got, want[i]) != 0;
            tp_free(got);
        }
    return NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_JOBS; i++)
        assert_non_null(want[i] = run(&JOBS[i]));
    /* the anchor: 51.470 GFLOP per token */
    const char *f = strstr(want[0], "\"model_flops_per_token\": ");
    assert_non_null(f);
    assert_true(fabs(strtod(f + 25, NULL) / 1e9 - 51.470) < 5e-4);
    pthread_t t[2];
    size_t mismatches[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&t[k], NULL, worker, &mismatches[k]), 0);
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_join(t[k], NULL), 0);
    assert_int_equal(mismatches[0] + mismatches[1], 0);
}

static void test_comma_locale(void **state)
{
    (void)state;
    if (!setlocale(LC_ALL, "de_DE.UTF-8") && !setlocale(LC_ALL, "de_DE.utf8")) {
        printf("  no de_DE locale installed: skipped (scripts/deps.sh installs it)\n");
        return;
    }
    for (size_t i = 0; i < N_JOBS; i++) {
        char *got = run(&JOBS[i]);
        assert_non_null(got);
        assert_string_equal(got, want[i]);
        tp_free(got);
    }
    setlocale(LC_ALL, "C");
    printf("  de_DE.UTF-8: the same documents, byte for byte\n");
}

static void test_abi(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(TP_ABI_CHECK(&err), TP_OK);
    assert_string_equal(tp_version(), TP_VERSION);
    assert_int_equal(tp_struct_size("tp_model"), sizeof(struct tp_model));
    assert_int_equal(tp_struct_size("tp_fix"), sizeof(struct tp_fix));
    assert_int_equal(tp_struct_size("tp_runs"), sizeof(struct tp_runs));
    assert_int_equal(tp_struct_size("no_such_struct"), 0);
    assert_int_equal(tp_abi_check("0.0.0", sizeof(struct tp_model), sizeof(struct tp_cluster),
                                  sizeof(struct tp_job), sizeof(struct tp_layout),
                                  sizeof(struct tp_calib), sizeof(struct tp_evaluation), &err),
                     TP_EUNSUPPORTED);
    assert_int_equal(tp_abi_check(TP_VERSION, sizeof(struct tp_model) + 8,
                                  sizeof(struct tp_cluster), sizeof(struct tp_job),
                                  sizeof(struct tp_layout), sizeof(struct tp_calib),
                                  sizeof(struct tp_evaluation), &err),
                     TP_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "tp_model"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_comma_locale),
        cmocka_unit_test(test_abi),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (size_t i = 0; i < N_JOBS; i++)
        tp_free(want[i]);
    return rc;
}
