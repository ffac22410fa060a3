/*
 * test_hf_cache.c - models by Hugging Face id: the local hub cache (refs/main, else the newest
 * snapshot), then the preset with that id, else an error naming where it looked.
 *
 * Counts: Llama 3.1 8B has 8,030,261,248 parameters (the Hub's safetensors total for
 * meta-llama/Llama-3.1-8B); the fixture's other snapshot is the same config with 16 layers,
 * 4,540,469,248 (16 blocks of 218,112,000 fewer).  Qwen3 8B: 8,190,735,360 (Qwen/Qwen3-8B's
 * safetensors total).  tests/fixtures/hf-cache/README.md describes the fixture.
 * Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE "tests/fixtures/hf-cache"
#define REPO CACHE "/models--meta-llama--Llama-3.1-8B"
#define REV_MAIN "1111111111111111111111111111111111111111"
#define REV_16L "2222222222222222222222222222222222222222"

static struct tp_model model; /* large: keep off the stack */

static uint64_t total_of(const char *name)
{
    struct tp_error err = {{0}, {0}};
    if (tp_model_from_name(name, &model, &err) != TP_OK)
        fail_msg("%s: %s", name, err.msg);
    struct tp_params p;
    tp_count_params(&model, &p);
    return p.total;
}

static void env_only(const char *hub_cache, const char *hf_home)
{
    unsetenv("HF_HUB_CACHE");
    unsetenv("HF_HOME");
    if (hub_cache)
        setenv("HF_HUB_CACHE", hub_cache, 1);
    if (hf_home)
        setenv("HF_HOME", hf_home, 1);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* A snapshot folder `rev` of the temporary repo holding fixture snapshot `src`'s config,
   modified at `mtime` (seconds since the epoch). */
static void snapshot(const char *repo, const char *rev, const char *src, time_t mtime)
{
    char dir[512], file[600], from[512];
    snprintf(dir, sizeof dir, "%s/snapshots/%s", repo, rev);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/config.json", dir);
    snprintf(from, sizeof from, REPO "/snapshots/%s/config.json", src);
    copy_file(from, file);
    struct timespec t[2] = {{mtime, 0}, {mtime, 0}};
    assert_int_equal(utimensat(AT_FDCWD, dir, t, 0), 0);
}

static void test_refs_main(void **state)
{
    (void)state;
    env_only(CACHE, NULL);
    assert_int_equal(total_of("meta-llama/Llama-3.1-8B"), 8030261248ull);
    assert_non_null(strstr(model.source, REV_MAIN));
    assert_string_equal(model.name, "meta-llama/Llama-3.1-8B");
    /* the id is matched as the Hub spells it: another case is another cache folder, so the
       preset answers (same shape) */
    assert_int_equal(total_of("META-LLAMA/llama-3.1-8b"), 8030261248ull);
    assert_null(strstr(model.source, REV_MAIN));
}

/* No refs/main (or one naming a snapshot that is not there): the newest snapshot; found
   through HF_HOME/hub. */
static void test_newest_snapshot(void **state)
{
    (void)state;
    char home[] = "/tmp/tp-hfcache-XXXXXX";
    assert_non_null(mkdtemp(home));
    char path[512], repo[200];
    snprintf(repo, sizeof repo, "%s/hub", home);
    snprintf(path, sizeof path, "%s", repo);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(repo, sizeof repo, "%s/hub/models--meta-llama--Llama-3.1-8B", home);
    assert_int_equal(mkdir(repo, 0700), 0);
    snprintf(path, sizeof path, "%s/snapshots", repo);
    assert_int_equal(mkdir(path, 0700), 0);
    snapshot(repo, "aaaa", REV_MAIN, 1600000000);
    snapshot(repo, "bbbb", REV_16L, 1700000000);
    env_only(NULL, home);
    assert_int_equal(total_of("meta-llama/Llama-3.1-8B"), 4540469248ull);
    assert_non_null(strstr(model.source, "/bbbb/"));

    /* the other one newer: it is taken */
    snprintf(path, sizeof path, "%s/snapshots/aaaa", repo);
    struct timespec t[2] = {{1800000000, 0}, {1800000000, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
    assert_int_equal(total_of("meta-llama/Llama-3.1-8B"), 8030261248ull);

    /* refs/main naming a revision with no snapshot: the newest still */
    snprintf(path, sizeof path, "%s/refs", repo);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/refs/main", repo);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("cccc\n", f);
    fclose(f);
    assert_int_equal(total_of("meta-llama/Llama-3.1-8B"), 8030261248ull);
    /* ... and naming the older one: that one */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("bbbb\n", f);
    fclose(f);
    assert_int_equal(total_of("meta-llama/Llama-3.1-8B"), 4540469248ull);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
    assert_int_equal(system(cmd), 0);
}

/* Not in the cache: the preset whose source is that id; else an error naming the folder. */
static void test_preset_by_id(void **state)
{
    (void)state;
    env_only("/nonexistent/hub", NULL);
    assert_int_equal(total_of("meta-llama/Llama-3.1-8B"), 8030261248ull);
    assert_string_equal(model.name, "Llama 3.1 8B");
    assert_int_equal(total_of("Qwen/Qwen3-8B"), 8190735360ull);
    assert_int_equal(total_of("qwen/qwen3-8b"), 8190735360ull);

    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_name("meta-llama/Llama-3.1-8X", &model, &err), TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "/nonexistent/hub/models--meta-llama--Llama-3.1-8X/snapshots"));
    assert_non_null(strstr(err.msg, "did you mean: llama-3.1-8b"));
    /* a path that looks like one stays a path */
    assert_int_equal(tp_model_from_name("./meta-llama/Llama-3.1-8B", &model, &err), TP_ENOTFOUND);
    assert_null(strstr(err.msg, "Hugging Face cache"));
}

/* Near misses of preset names get "did you mean". */
static void test_did_you_mean(void **state)
{
    (void)state;
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_model_from_preset("llama-3.1-8", &model, &err), TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "did you mean: llama-3.1-8b"));
    const struct tp_gpu *g = NULL;
    assert_int_equal(tp_gpu_find("h100-sxn", &g, &err), TP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "did you mean"));
    assert_non_null(strstr(err.msg, "h100-sxm"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refs_main),
        cmocka_unit_test(test_newest_snapshot),
        cmocka_unit_test(test_preset_by_id),
        cmocka_unit_test(test_did_you_mean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
