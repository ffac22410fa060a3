/*
 * bench_checkpoint.c - speed of `trainplan checkpoint`: a preset's full tensor list written as
 * a sharded safetensors save (headers, an index, sparse data sections: no disk used for the
 * data), then inspected and compared with the model, repeated.  Prints tensors per second and
 * milliseconds per inspection; never passes or fails on time.
 *   bench_checkpoint           Qwen3-30B-A3B (18,867 tensors in 16 shards), 5 inspections;
 *                              then an index naming 20,000 shards none of which is on disk
 *   bench_checkpoint --smoke   Llama 3.2 3B, one inspection, and 2,000 missing shards
 * The missing shards were checked in O(N^2) (20,000 took ~10 s); a hash set makes it linear
 * (issue 41).
 */
#include "trainplan.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { SHARDS = 16 };

struct save {
    json_t *hdr[SHARDS];
    uint64_t off[SHARDS];
    json_t *map;
    size_t n;
};

static void put(struct save *s, const char *name, uint64_t rows, uint64_t cols)
{
    int k = (int)(s->n++ % SHARDS);
    uint64_t bytes = 2 * rows * cols;
    json_t *shape = cols == 1 ? json_pack("[I]", (json_int_t)rows)
                              : json_pack("[I, I]", (json_int_t)rows, (json_int_t)cols);
    json_object_set_new(s->hdr[k], name,
                        json_pack("{s:s, s:o, s:[I, I]}", "dtype", "BF16", "shape", shape,
                                  "data_offsets", (json_int_t)s->off[k],
                                  (json_int_t)(s->off[k] + bytes)));
    char shard[64];
    snprintf(shard, sizeof shard, "model-%05d-of-%05d.safetensors", k + 1, SHARDS);
    json_object_set_new(s->map, name, json_string(shard));
    s->off[k] += bytes;
}

/* The model's tensors under Llama-style checkpoint names (routed experts one per index). */
static void list(struct save *s, const struct tp_model *m)
{
    struct tp_tensor t[TP_MAX_BLOCK_TENSORS];
    char name[256];
    for (uint32_t l = 0; l < m->n_layers; l++) {
        size_t n = tp_block_tensors(m, l, t);
        for (size_t i = 0; i < n; i++) {
            bool stacked = t[i].comp == TP_COMP_EXPERTS && t[i].count > 1;
            for (uint32_t e = 0; e < (stacked ? t[i].count : 1); e++) {
                if (stacked)
                    snprintf(name, sizeof name, "model.layers.%u.mlp.experts.%u.%s", l, e,
                             t[i].name + strlen("mlp.experts."));
                else
                    snprintf(name, sizeof name, "model.layers.%u.%s", l, t[i].name);
                put(s, name, t[i].rows, t[i].cols);
            }
        }
    }
    size_t n = tp_outer_tensors(m, t);
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%s", t[i].comp == TP_COMP_HEAD ? "" : "model.", t[i].name);
        put(s, name, t[i].rows, t[i].cols);
    }
}

static int write_save(const char *dir, const struct tp_model *m, size_t *tensors)
{
    static struct save s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < SHARDS; k++)
        s.hdr[k] = json_object();
    s.map = json_object();
    list(&s, m);
    *tensors = s.n;
    char path[512];
    for (int k = 0; k < SHARDS; k++) {
        char *text = json_dumps(s.hdr[k], JSON_COMPACT);
        size_t len = strlen(text);
        snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", dir, k + 1, SHARDS);
        FILE *f = fopen(path, "wb");
        unsigned char le[8];
        for (int i = 0; i < 8; i++)
            le[i] = (unsigned char)((uint64_t)len >> (8 * i));
        int bad = !f || fwrite(le, 1, 8, f) != 8 || fwrite(text, 1, len, f) != len ||
                  fflush(f) != 0 || ftruncate(fileno(f), (off_t)(8 + len + s.off[k])) != 0;
        free(text);
        json_decref(s.hdr[k]);
        if (f)
            fclose(f);
        if (bad)
            return 1;
    }
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    json_t *doc = json_pack("{s:{}, s:o}", "metadata", "weight_map", s.map);
    int rc = json_dump_file(doc, path, JSON_COMPACT);
    json_decref(doc);
    return rc != 0;
}

static void cleanup(const char *dir)
{
    char path[512];
    for (int k = 0; k < SHARDS; k++) {
        snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", dir, k + 1, SHARDS);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    unlink(path);
    rmdir(dir);
}

/* An index of n tensors in n shards, none on disk, inspected once: the missing-shard check. */
static int missing_shards(size_t n)
{
    char dir[] = "/tmp/tp-bench-ckpt-XXXXXX", path[512];
    if (!mkdtemp(dir))
        return 2;
    json_t *map = json_object();
    for (size_t i = 0; i < n; i++) {
        char t[64], s[64];
        snprintf(t, sizeof t, "model.layers.%zu.weight", i);
        snprintf(s, sizeof s, "model-%06zu-of-%06zu.safetensors", i + 1, n);
        json_object_set_new(map, t, json_string(s));
    }
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    json_t *doc = json_pack("{s:{}, s:o}", "metadata", "weight_map", map);
    int rc = json_dump_file(doc, path, JSON_COMPACT) != 0;
    json_decref(doc);
    struct tp_ckpt *c = NULL;
    struct tp_error err;
    double t0 = now();
    rc = rc || tp_ckpt_inspect(dir, NULL, NULL, 0, &c, &err) != TP_OK || c->n_problems != n;
    double dt = now() - t0;
    tp_ckpt_free(c);
    unlink(path);
    rmdir(dir);
    if (rc) {
        fprintf(stderr, "bench_checkpoint: the missing-shard index did not inspect as written\n");
        return 2;
    }
    printf("bench_checkpoint: an index naming %zu missing shards checked in %.3f s\n", n, dt);
    return 0;
}

int main(int argc, char **argv)
{
    int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    const char *preset = smoke ? "llama-3.2-3b" : "qwen3-30b-a3b";
    int reps = smoke ? 1 : 5;
    struct tp_model m;
    struct tp_error err;
    if (tp_model_from_preset(preset, &m, &err) != TP_OK) {
        fprintf(stderr, "bench_checkpoint: %s\n", err.msg);
        return 2;
    }
    char dir[] = "/tmp/tp-bench-ckpt-XXXXXX";
    size_t tensors = 0;
    if (!mkdtemp(dir) || write_save(dir, &m, &tensors) != 0) {
        fprintf(stderr, "bench_checkpoint: cannot write the save under /tmp\n");
        cleanup(dir);
        return 2;
    }
    double t0 = now();
    int ok = 1;
    uint64_t total = 0;
    for (int r = 0; r < reps && ok; r++) {
        struct tp_ckpt *c = NULL;
        ok = tp_ckpt_inspect(dir, &m, NULL, 0, &c, &err) == TP_OK && c->matches_config &&
             c->n_problems == 0;
        total = ok ? c->total_params : 0;
        tp_ckpt_free(c);
    }
    double dt = now() - t0;
    cleanup(dir);
    if (!ok) {
        fprintf(stderr, "bench_checkpoint: the written save did not inspect clean\n");
        return 2;
    }
    printf("bench_checkpoint: %s, %zu tensors in %d shards + index, %llu parameters\n", preset,
           tensors, SHARDS, (unsigned long long)total);
    printf("bench_checkpoint: %.1f ms per inspection with the model comparison (%d runs), "
           "%.0f tensors/s\n", 1e3 * dt / reps, reps, (double)tensors * reps / dt);
    return missing_shards(smoke ? 2000 : 20000);
}
