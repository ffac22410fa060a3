/*
 * test_ckpt_totals.c - issue 41 in `trainplan checkpoint`: totals formed with checked adds and
 * without the tensors whose element count cannot be trusted, and an index naming thousands of
 * missing shards checked in linear time (a hash set of shard names).  Headers are written by
 * the test in the safetensors format (huggingface/safetensors README "Format": u64
 * little-endian header length, JSON header, data).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "st_parse.h"


static struct tp_ckpt *inspect(const char *path)
{
    struct tp_ckpt *c = NULL;
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_ckpt_inspect(path, NULL, NULL, 0, &c, &err);
    if (st != TP_OK)
        print_error("%s: %s\n", path, err.msg);
    assert_int_equal(st, TP_OK);
    return c;
}

/* Removes the files of a flat folder, then the folder. */
static void rmflat(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Issue 41: totals are formed with checked adds and without the tensors whose count cannot be
   trusted.  A tensor flagged size-mismatch used to be summed (saturating to 2^64 - 1, printed
   in JSON as -1); now it is left out and counted apart. */
static void test_totals(void **state)
{
    (void)state;
    /* a flagged tensor beside a good one: the total is the good one's 2 elements */
    struct tp_st_header h = parse_text(
        "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,6]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[6,14]}}", 14);
    assert_int_equal(h.n_problems, 1);
    assert_int_equal(h.problems[0].kind, TP_CK_SIZE_MISMATCH);
    assert_non_null(strstr(h.problems[0].detail, "not counted in the totals"));
    assert_int_equal(h.params, 2);
    assert_int_equal(h.n_excluded, 1);
    assert_true(h.tensors[0].excluded);
    assert_false(h.tensors[1].excluded);
    assert_false(h.params_overflow);
    tp_st_header_free(&h);
    /* the red-team header: a shape of 2^62 x 8 BF16 elements (the product wraps 64 bits) */
    h = parse_text("{\"a\":{\"dtype\":\"BF16\",\"shape\":[4611686018427387904,8],"
                   "\"data_offsets\":[0,8]}}", 8);
    assert_int_equal(h.params, 0);
    assert_int_equal(h.n_excluded, 1);
    tp_st_header_free(&h);
    /* 2^62 - 1 F4 elements need 2^61 bytes; (bits + 7) / 8 wrapped to 0, so a tensor of no
       bytes passed with 4.6e18 elements */
    h = parse_text("{\"a\":{\"dtype\":\"F4\",\"shape\":[4611686018427387903],"
                   "\"data_offsets\":[0,0]}}", 0);
    assert_kind(&h, TP_CK_SIZE_MISMATCH, "a");
    /* eight F4 tensors of 2^61 elements, each consistent with its 2^60 bytes: their sum is
       2^64, which does not fit; the total is marked overflowed, never wrapped to 0 */
    char json[1024];
    size_t at = 0;
    for (int i = 0; i < 8; i++)
        at += (size_t)snprintf(json + at, sizeof json - at,
                               "%s\"t%d\":{\"dtype\":\"F4\",\"shape\":[2305843009213693952],"
                               "\"data_offsets\":[0,1152921504606846976]}",
                               i ? "," : "{", i);
    snprintf(json + at, sizeof json - at, "}");
    h = parse_text(json, 0);
    assert_true(h.params_overflow);
    assert_true(h.params == UINT64_MAX);
    assert_int_equal(h.n_excluded, 0);
    tp_st_header_free(&h);
}

/* A whole checkpoint with a flagged tensor: the file's and the checkpoint's totals leave it out
   and say how many were left out. */
static void test_totals_inspect(void **state)
{
    (void)state;
    char dir[64] = "/tmp/tp-ckpt-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    const char *json = "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,6]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[6,14]}}";
    size_t n = strlen(json);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < 8; i++)
        fputc((int)((n >> (8 * i)) & 0xff), f);
    fputs(json, f);
    for (int i = 0; i < 14; i++)
        fputc(0, f);
    assert_int_equal(fclose(f), 0);
    struct tp_ckpt *c = inspect(dir);
    assert_int_equal(c->n_tensors, 2);
    assert_int_equal(c->total_params, 2);
    assert_int_equal(c->n_excluded, 1);
    assert_int_equal(c->files[0].params, 2);
    assert_int_equal(c->files[0].excluded, 1);
    assert_false(c->totals_overflow);
    tp_ckpt_free(c);
    rmflat(dir);
}

/* An index naming thousands of shards that are not there: one missing-shard line each with its
   tensor count, every tensor listed lost once, sorted (the check is linear: issue 41; the
   timing of 20,000 is bench_checkpoint's). */
static void test_many_missing_shards(void **state)
{
    (void)state;
    enum { N = 3000 };
    char dir[64] = "/tmp/tp-ckpt-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    json_t *map = json_object();
    for (int i = 0; i < N; i++) {
        char t[64], s[64];
        snprintf(t, sizeof t, "model.layers.%d.w", i);
        snprintf(s, sizeof s, "model-%05d-of-%05d.safetensors", i / 2, N / 2);
        json_object_set_new(map, t, json_string(s)); /* two tensors per shard */
    }
    json_t *doc = json_pack("{s:o}", "weight_map", map);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_decref(doc);
    struct tp_ckpt *c = inspect(dir);
    assert_int_equal(c->n_problems, N / 2);
    for (size_t i = 0; i < c->n_problems; i++) {
        assert_int_equal(c->problems[i].kind, TP_CK_MISSING_SHARD);
        assert_non_null(strstr(c->problems[i].detail, "for 2 tensors"));
    }
    assert_int_equal(c->n_files, N / 2);
    assert_int_equal(c->n_lost, N);
    for (size_t i = 1; i < c->n_lost; i++)
        assert_true(strcmp(c->lost[i - 1], c->lost[i]) < 0);
    tp_ckpt_free(c);
    rmflat(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_totals_inspect),
        cmocka_unit_test(test_many_missing_shards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
