/*
 * test_checkpoint.c - checkpoints written by the test in the safetensors format (huggingface/
 * safetensors README "Format": u64 little-endian header length, JSON header, data), for a
 * small Llama-style model whose tensor names and shapes are those of transformers'
 * LlamaForCausalLM state dict (listed here by hand, not by the code under test): a clean
 * sharded folder with its index, then each fault people hit (stub, missing shard, truncated
 * file, duplicate tensor, bad header) with its verdict and line; the header parser on crafted
 * buffers; preset-sized headers over sparse files whose totals must equal the published
 * parameter counts; a DeepSpeed ZeRO folder; and the checkpoint plan's known sizes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"
#include "st_parse.h" /* the parser on crafted buffers: one fault each */

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct spec {
    char name[96];
    const char *dtype;
    uint32_t ndim;
    uint64_t shape[2];
    int shard; /* 0 or 1 */
};

struct specs {
    struct spec v[20000];
    size_t n;
};

static void push(struct specs *s, const char *name, uint32_t ndim, uint64_t a, uint64_t b)
{
    assert_true(s->n < sizeof s->v / sizeof s->v[0]);
    struct spec *t = &s->v[s->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = "BF16";
    t->ndim = ndim;
    t->shape[0] = a;
    t->shape[1] = b;
    t->shard = 0;
}

struct shape {
    unsigned layers;
    uint64_t hidden, heads, kv, head_dim, ffn, vocab;
    bool tied, qk_norm;
    unsigned experts;
    uint64_t moe_ffn;
};

/* LlamaForCausalLM / Qwen3MoeForCausalLM state dict names and shapes ([out, in] weights). */
static void llama_specs(struct specs *s, const struct shape *m)
{
    char n[96];
    s->n = 0;
    push(s, "model.embed_tokens.weight", 2, m->vocab, m->hidden);
    uint64_t q = m->heads * m->head_dim, kv = m->kv * m->head_dim;
    for (unsigned l = 0; l < m->layers; l++) {
        static const char *const proj[4] = {"q", "k", "v", "o"};
        for (int i = 0; i < 4; i++) {
            snprintf(n, sizeof n, "model.layers.%u.self_attn.%s_proj.weight", l, proj[i]);
            push(s, n, 2, i == 0 ? q : i == 3 ? m->hidden : kv, i == 3 ? q : m->hidden);
        }
        if (m->qk_norm) {
            snprintf(n, sizeof n, "model.layers.%u.self_attn.q_norm.weight", l);
            push(s, n, 1, m->head_dim, 0);
            snprintf(n, sizeof n, "model.layers.%u.self_attn.k_norm.weight", l);
            push(s, n, 1, m->head_dim, 0);
        }
        unsigned copies = m->experts ? m->experts : 1;
        uint64_t width = m->experts ? m->moe_ffn : m->ffn;
        if (m->experts) {
            snprintf(n, sizeof n, "model.layers.%u.mlp.gate.weight", l);
            push(s, n, 2, m->experts, m->hidden);
        }
        for (unsigned e = 0; e < copies; e++) {
            char pre[64];
            if (m->experts)
                snprintf(pre, sizeof pre, "model.layers.%u.mlp.experts.%u", l, e);
            else
                snprintf(pre, sizeof pre, "model.layers.%u.mlp", l);
            snprintf(n, sizeof n, "%s.gate_proj.weight", pre);
            push(s, n, 2, width, m->hidden);
            snprintf(n, sizeof n, "%s.up_proj.weight", pre);
            push(s, n, 2, width, m->hidden);
            snprintf(n, sizeof n, "%s.down_proj.weight", pre);
            push(s, n, 2, m->hidden, width);
        }
        snprintf(n, sizeof n, "model.layers.%u.input_layernorm.weight", l);
        push(s, n, 1, m->hidden, 0);
        snprintf(n, sizeof n, "model.layers.%u.post_attention_layernorm.weight", l);
        push(s, n, 1, m->hidden, 0);
    }
    push(s, "model.norm.weight", 1, m->hidden, 0);
    if (!m->tied)
        push(s, "lm_head.weight", 2, m->vocab, m->hidden);
}

static uint64_t elements(const struct spec *t)
{
    return t->ndim == 1 ? t->shape[0] : t->shape[0] * t->shape[1];
}

enum write_mode { W_FULL, W_SPARSE, W_STUB };

/* Writes the specs of `shard` (-1: all) as a safetensors file; `cut` bytes short. */
static void write_st(const char *path, const struct specs *s, int shard, enum write_mode mode,
                     uint64_t cut)
{
    json_t *h = json_object();
    uint64_t off = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct spec *t = &s->v[i];
        if (shard >= 0 && t->shard != shard)
            continue;
        uint64_t bytes = mode == W_STUB ? 0 : 2 * elements(t);
        json_t *shape = json_array();
        if (mode == W_STUB) {
            json_array_append_new(shape, json_integer(0));
        } else {
            for (uint32_t d = 0; d < t->ndim; d++)
                json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
        }
        json_object_set_new(h, t->name,
                            json_pack("{s:s, s:o, s:[I, I]}", "dtype", t->dtype, "shape", shape,
                                      "data_offsets", (json_int_t)off,
                                      (json_int_t)(off + bytes)));
        off += bytes;
    }
    char *text = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(h);
    size_t n = strlen(text), padded = (n + 7) / 8 * 8; /* spaces pad to 8, as safetensors does */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    fwrite(len, 1, 8, f);
    fwrite(text, 1, n, f);
    for (size_t i = n; i < padded; i++)
        fputc(' ', f);
    free(text);
    uint64_t data = off - cut;
    if (mode == W_SPARSE) {
        fflush(f);
        assert_int_equal(ftruncate(fileno(f), (off_t)(8 + padded + data)), 0);
    } else {
        static const unsigned char zeros[4096];
        for (uint64_t w = 0; w < data; w += sizeof zeros)
            fwrite(zeros, 1, data - w < sizeof zeros ? (size_t)(data - w) : sizeof zeros, f);
    }
    assert_int_equal(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static const char *const SHARD[2] = {"model-00001-of-00002.safetensors",
                                     "model-00002-of-00002.safetensors"};

static void write_index(const char *dir, const struct specs *s)
{
    json_t *map = json_object();
    uint64_t total = 0;
    for (size_t i = 0; i < s->n; i++) {
        json_object_set_new(map, s->v[i].name, json_string(SHARD[s->v[i].shard]));
        total += 2 * elements(&s->v[i]);
    }
    json_t *doc = json_pack("{s:{s:I}, s:o}", "metadata", "total_size", (json_int_t)total,
                            "weight_map", map);
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    assert_int_equal(json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    json_decref(doc);
}

static void rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rmtree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The small model: 4 layers, hidden 256, 4 heads (2 kv, head_dim 64), ffn 688, vocab 2048,
   untied.  Parameters by hand: embedding and head 2 x 2048 x 256 = 1,048,576; per layer q, o
   2 x 256 x 256 = 131,072, k, v 2 x 128 x 256 = 65,536, MLP 3 x 688 x 256 = 528,384, norms 512
   -> 725,504, x 4 = 2,902,016; final norm 256.  Total 3,950,848 (7.9 MB in bf16). */
static const struct shape SMALL = {4, 256, 4, 2, 64, 688, 2048, false, false, 0, 0};
#define SMALL_PARAMS 3950848u

static const char SMALL_CONFIG[] =
    "{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_attention_heads\": 4,\n"
    " \"num_key_value_heads\": 2, \"intermediate_size\": 688, \"num_hidden_layers\": 4,\n"
    " \"vocab_size\": 2048, \"tie_word_embeddings\": false, \"max_position_embeddings\": 2048}\n";

static struct specs S; /* large: static */

struct fixture {
    char dir[64];
    struct tp_model m;
};

/* A clean two-shard folder with its index and config.json: layers 0-1 and the embedding in
   shard 1, the rest in shard 2. */
static void make_clean(struct fixture *fx)
{
    snprintf(fx->dir, sizeof fx->dir, "/tmp/tp-ckpt-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    llama_specs(&S, &SMALL);
    for (size_t i = 0; i < S.n; i++)
        S.v[i].shard = i >= S.n / 2;
    char path[512];
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", fx->dir, SHARD[k]);
        write_st(path, &S, k, W_FULL, 0);
    }
    write_index(fx->dir, &S);
    snprintf(path, sizeof path, "%s/config.json", fx->dir);
    write_text(path, SMALL_CONFIG);
    struct tp_error err;
    assert_int_equal(tp_model_from_hf_config(path, &fx->m, &err), TP_OK);
}

static struct tp_ckpt *inspect(const char *path, const struct tp_model *m)
{
    struct tp_ckpt *c = NULL;
    struct tp_error err = {{0}, {0}};
    enum tp_status st = tp_ckpt_inspect(path, m, NULL, 0, &c, &err);
    if (st != TP_OK)
        print_error("%s: %s\n", path, err.msg);
    assert_int_equal(st, TP_OK);
    return c;
}

/* Exactly one problem, of kind `kind`, whose file ends with `file` and names `tensor`. */
static void assert_one(const struct tp_ckpt *c, enum tp_ckpt_kind kind, const char *file,
                       const char *tensor)
{
    for (size_t i = 0; i < c->n_problems; i++)
        print_message("problem %s | %s | %s | %s\n", tp_ckpt_problem_name(c->problems[i].kind),
                      c->problems[i].file, c->problems[i].tensor, c->problems[i].detail);
    assert_int_equal(c->n_problems, 1);
    const struct tp_ckpt_problem *p = &c->problems[0];
    assert_int_equal(p->kind, kind);
    size_t n = strlen(p->file), k = strlen(file);
    assert_true(n >= k && strcmp(p->file + n - k, file) == 0);
    assert_string_equal(p->tensor, tensor);
    assert_true(p->detail[0] != '\0');
}

static void test_clean(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    struct tp_ckpt *c = inspect(fx.dir, &fx.m);
    assert_int_equal(c->n_problems, 0);
    assert_true(c->has_index);
    assert_int_equal(c->n_files, 2);
    assert_int_equal(c->n_tensors, S.n);
    assert_int_equal(c->total_params, SMALL_PARAMS);
    assert_int_equal(c->files[0].params + c->files[1].params, SMALL_PARAMS);
    assert_true(c->compared && c->names_compared && c->matches_config);
    assert_int_equal(c->matched, S.n);
    assert_int_equal(c->expected_params, SMALL_PARAMS);
    assert_true(c->head_in_checkpoint);
    assert_int_equal(c->by_comp[TP_COMP_EMBEDDING], 2048 * 256);
    assert_int_equal(c->by_comp[TP_COMP_HEAD], 2048 * 256);
    assert_int_equal(c->by_comp[TP_COMP_MLP], 4 * 528384);
    assert_int_equal(c->by_dtype[TP_ST_BF16], SMALL_PARAMS);
    /* the index file as the path reads the same shards */
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", fx.dir);
    struct tp_ckpt *d = inspect(path, &fx.m);
    assert_int_equal(d->n_problems, 0);
    assert_int_equal(d->total_params, SMALL_PARAMS);
    tp_ckpt_free(d);
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

/* users' notes 001: a model.safetensors whose tensors are all torch.Size([0]) beside the shards */
static void test_stub(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", fx.dir);
    write_st(path, &S, -1, W_STUB, 0);
    struct tp_ckpt *c = inspect(fx.dir, &fx.m);
    assert_one(c, TP_CK_STUB, "/model.safetensors", "");
    assert_int_equal(c->total_params, SMALL_PARAMS); /* the stub counts for nothing */
    assert_true(c->matches_config);
    tp_ckpt_free(c);
    /* a zero-length file is a stub too */
    write_text(path, "");
    c = inspect(fx.dir, NULL);
    assert_one(c, TP_CK_STUB, "/model.safetensors", "");
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

static void test_missing_shard(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx.dir, SHARD[1]);
    unlink(path);
    struct tp_ckpt *c = inspect(fx.dir, NULL);
    /* the first tensor (by name) the index maps to the missing shard */
    assert_one(c, TP_CK_MISSING_SHARD, SHARD[1], "lm_head.weight");
    assert_true(c->files[c->n_files - 1].missing);
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

static void test_truncated(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx.dir, SHARD[1]);
    write_st(path, &S, 1, W_FULL, 100); /* a copy interrupted 100 bytes before the end */
    struct tp_ckpt *c = inspect(fx.dir, NULL);
    assert_one(c, TP_CK_TRUNCATED, SHARD[1], "lm_head.weight"); /* the last tensor written */
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

static void test_duplicate(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    /* shard 2 holds model.norm.weight; shard 1 gets a copy of it too (index unchanged) */
    llama_specs(&S, &SMALL);
    for (size_t i = 0; i < S.n; i++)
        S.v[i].shard = i >= S.n / 2;
    size_t n = S.n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(S.v[i].name, "model.norm.weight") == 0) {
            S.v[S.n] = S.v[i];
            S.v[S.n++].shard = 0;
        }
    assert_int_equal(S.n, n + 1);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx.dir, SHARD[0]);
    write_st(path, &S, 0, W_FULL, 0);
    struct tp_ckpt *c = inspect(fx.dir, &fx.m);
    /* one duplicate line; the index puts the tensor in shard 2, so shard 1's copy is not read */
    assert_one(c, TP_CK_DUPLICATE, SHARD[1], "model.norm.weight");
    assert_int_equal(c->total_params, SMALL_PARAMS); /* counted once */
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

static void test_bad_header(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx.dir, SHARD[0]);
    /* a length of 9, then 9 bytes that are not JSON */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite("\x09\0\0\0\0\0\0\0{not json", 1, 17, f);
    fclose(f);
    struct tp_ckpt *c = inspect(path, NULL);
    assert_one(c, TP_CK_BAD_HEADER, SHARD[0], "");
    assert_non_null(strstr(c->problems[0].detail, "not JSON"));
    tp_ckpt_free(c);
    /* an HTML error page saved under the name: the length prefix is absurd */
    write_text(path, "<html><body>404 Not Found</body></html>");
    c = inspect(path, NULL);
    assert_one(c, TP_CK_BAD_HEADER, SHARD[0], "");
    tp_ckpt_free(c);
    rmtree(fx.dir);
}


static void test_parser(void **state)
{
    (void)state;
    struct tp_st_header h = parse_text(
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
        "\"__metadata__\":{\"format\":\"pt\"}}", 24);
    assert_int_equal(h.n_problems, 0);
    assert_int_equal(h.n_tensors, 1);
    assert_int_equal(h.params, 6);
    tp_st_header_free(&h);
    h = parse_text("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
                   "\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[4,12]}}", 12);
    assert_kind(&h, TP_CK_OVERLAP, "b");
    h = parse_text("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
                   "\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[1000,1008]}}", 8);
    /* a hole, and b past the end */
    assert_int_equal(h.n_problems, 2);
    assert_int_equal(h.problems[0].kind, TP_CK_GAP);
    assert_int_equal(h.problems[1].kind, TP_CK_OUT_OF_BOUNDS);
    assert_string_equal(h.problems[1].tensor, "b");
    tp_st_header_free(&h);
    h = parse_text("{\"a\":{\"dtype\":\"Q4_K\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8);
    assert_kind(&h, TP_CK_UNKNOWN_DTYPE, "a");
    h = parse_text("{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,6]}}", 6);
    assert_kind(&h, TP_CK_SIZE_MISMATCH, "a");
    h = parse_text("{\"a\":{\"dtype\":\"BF16\",\"shape\":[-4],\"data_offsets\":[0,8]}}", 8);
    assert_kind(&h, TP_CK_BAD_HEADER, "a");
    h = parse_text("{\"a\":1,\"a\":2}", 0);
    assert_kind(&h, TP_CK_BAD_HEADER, ""); /* duplicate keys: jansson refuses them */
    h = parse_text("[1,2]", 0);
    assert_kind(&h, TP_CK_BAD_HEADER, "");
    /* F4 packs two elements per byte (safetensors Dtype::F4 is 4 bits) */
    h = parse_text("{\"a\":{\"dtype\":\"F4\",\"shape\":[6],\"data_offsets\":[0,3]}}", 3);
    assert_int_equal(h.n_problems, 0);
    tp_st_header_free(&h);
    /* a length over the 100,000,000-byte limit: nothing allocated, one line */
    unsigned char big[16] = {0x00, 0xe1, 0xf5, 0x05, 0x01, 0, 0, 0, '{'};
    struct tp_error err;
    assert_int_equal(tp_st_parse(big, sizeof big, 1u << 30, &h, &err), TP_OK);
    assert_kind(&h, TP_CK_BAD_HEADER, "");
    /* a length longer than the file */
    unsigned char shortf[12] = {100, 0, 0, 0, 0, 0, 0, 0, '{', '"', 'a', '"'};
    assert_int_equal(tp_st_parse(shortf, sizeof shortf, sizeof shortf, &h, &err), TP_OK);
    assert_kind(&h, TP_CK_TRUNCATED, "");
}

/* Thousands of faults in one header: every one recorded (the problem list grows by doubling;
   it grew by one, copying the whole list each time, which took 9 s on a 9 MB header). */
static void test_many_problems(void **state)
{
    (void)state;
    enum { N = 3000 };
    static char json[N * 64];
    size_t at = 0;
    json[at++] = '{';
    for (int i = 0; i < N; i++)
        at += (size_t)snprintf(json + at, sizeof json - at,
                               "%s\"t%04d\":{\"dtype\":\"F16\",\"shape\":[4],"
                               "\"data_offsets\":[0,8]}", i ? "," : "", i);
    json[at++] = '}';
    size_t n = at;
    unsigned char *buf = malloc(8 + n);
    assert_non_null(buf);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(n >> (8 * i));
    memcpy(buf + 8, json, n);
    struct tp_st_header h;
    struct tp_error err;
    assert_int_equal(tp_st_parse(buf, 8 + n, 8 + n + 8, &h, &err), TP_OK);
    assert_int_equal(h.n_tensors, N);
    /* all share bytes 0..8: each tensor after the first overlaps */
    assert_int_equal(h.n_problems, N - 1);
    for (size_t i = 0; i < h.n_problems; i++)
        assert_int_equal(h.problems[i].kind, TP_CK_OVERLAP);
    tp_st_header_free(&h);
    free(buf);
}

/* A header for every tensor of a preset over a sparse file of the right size: the total must
   be the published count and the params core's. */
static void preset_case(const char *preset, const struct shape *m, uint64_t published)
{
    char dir[64] = "/tmp/tp-ckpt-XXXXXX", path[512];
    assert_non_null(mkdtemp(dir));
    llama_specs(&S, m);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    write_st(path, &S, -1, W_SPARSE, 0);
    struct tp_model model;
    struct tp_error err;
    assert_int_equal(tp_model_from_preset(preset, &model, &err), TP_OK);
    struct tp_params p;
    tp_count_params(&model, &p);
    struct tp_ckpt *c = inspect(dir, &model);
    assert_int_equal(c->n_problems, 0);
    assert_int_equal(c->total_params, published);
    assert_int_equal(c->total_params, p.total);
    assert_true(c->matches_config);
    tp_ckpt_free(c);
    rmtree(dir);
}

static void test_presets(void **state)
{
    (void)state;
    /* meta-llama/Llama-3.2-3B: 28 layers, 3072, 24 heads (8 kv, 128), ffn 8192, vocab 128256,
       tied; 3,212,749,824 parameters (its safetensors index: total_size 6,425,499,648 B) */
    static const struct shape l32 = {28, 3072, 24, 8, 128, 8192, 128256, true, false, 0, 0};
    preset_case("llama-3.2-3b", &l32, 3212749824u);
    /* Qwen/Qwen3-30B-A3B: 48 layers, 2048, 32 heads (4 kv, 128), q/k norm, 128 experts of 768,
       vocab 151936, untied; 30,532,122,624 parameters (model card: 30.5B) */
    static const struct shape q3 = {48, 2048, 32, 4, 128, 0, 151936, false, true, 128, 768};
    preset_case("qwen3-30b-a3b", &q3, 30532122624u);
}

/* A model file that is another model: a shape and a name differ. */
static void test_mismatch(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    struct tp_model other = fx.m;
    struct tp_shape sh;
    tp_shape_init(&sh);
    sh.ffn = 512;
    sh.tied = 1;
    struct tp_error err;
    assert_int_equal(tp_model_apply_shape(&other, &sh, NULL, 0, &err), TP_OK);
    struct tp_ckpt *c = inspect(fx.dir, &other);
    assert_false(c->matches_config);
    assert_int_equal(c->shape_mismatches, 4 * 3); /* every MLP weight */
    assert_int_equal(c->unexpected, 1);           /* lm_head.weight of a tied model */
    assert_int_equal(c->missing, 0);
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

/* DeepSpeed: latest -> global_step5 with rank 2 of 4 missing. */
static void test_zero(void **state)
{
    (void)state;
    struct fixture fx;
    make_clean(&fx);
    char path[512];
    snprintf(path, sizeof path, "%s/latest", fx.dir);
    write_text(path, "global_step5\n");
    snprintf(path, sizeof path, "%s/global_step5", fx.dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/global_step5/mp_rank_00_model_states.pt", fx.dir);
    write_text(path, "x");
    for (int r = 0; r < 4; r++) {
        if (r == 2)
            continue;
        snprintf(path, sizeof path,
                 "%s/global_step5/bf16_zero_pp_rank_%d_mp_rank_00_optim_states.pt", fx.dir, r);
        write_text(path, "x");
    }
    struct tp_ckpt *c = NULL;
    struct tp_error err;
    assert_int_equal(tp_ckpt_inspect(fx.dir, &fx.m, NULL, 4, &c, &err), TP_OK);
    assert_true(c->zero.present);
    assert_string_equal(c->zero.latest, "global_step5");
    assert_int_equal(c->zero.dp_ranks, 4);
    assert_int_equal(c->zero.mp_ranks, 1);
    assert_int_equal(c->zero.n_files, 4);
    /* one missing rank; every 1-byte file is far under its plan */
    size_t missing = 0, small = 0;
    for (size_t i = 0; i < c->n_problems; i++) {
        missing += c->problems[i].kind == TP_CK_MISSING_RANK;
        small += c->problems[i].kind == TP_CK_SMALL_RANK;
        if (c->problems[i].kind == TP_CK_MISSING_RANK)
            assert_non_null(strstr(c->problems[i].file,
                                   "bf16_zero_pp_rank_2_mp_rank_00_optim_states.pt"));
    }
    assert_int_equal(missing, 1);
    assert_int_equal(small, 4);
    /* planned: 16-bit weights 2 B/param in the module file; fp32 master + m + v = 12 B/param
       over 4 ranks */
    assert_true(c->zero.files[0].planned_bytes == 12.0 * SMALL_PARAMS / 4);
    tp_ckpt_free(c);
    rmtree(fx.dir);
}

/* `latest` naming a path elsewhere, then an empty tag folder: one line each, nothing read
   outside the folder. */
static void test_zero_tags(void **state)
{
    (void)state;
    char dir[64] = "/tmp/tp-ckpt-XXXXXX", path[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/global_step3", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/latest", dir);
    write_text(path, "../global_step3\n");
    struct tp_ckpt *c = inspect(dir, NULL);
    assert_one(c, TP_CK_MISSING_TAG, "/latest", "");
    tp_ckpt_free(c);
    write_text(path, "global_step3\n");
    c = inspect(dir, NULL);
    assert_one(c, TP_CK_MISSING_RANK, "/global_step3", "");
    assert_string_equal(c->zero.latest, "global_step3");
    tp_ckpt_free(c);
    rmtree(dir);
}

/* Llama 3.1 8B, bf16 AdamW: ZeRO [Rajbhandari 2020] §3.1: 2 B fp16 weights + 12 B optimizer
   states (fp32 weights, momentum, variance) per parameter; the consolidated bf16 model is the
   Hub's 16,060,522,496 B (meta-llama/Llama-3.1-8B index total_size = 2 x 8,030,261,248). */
static void test_plan(void **state)
{
    (void)state;
    struct tp_model m;
    struct tp_error err;
    assert_int_equal(tp_model_from_preset("llama-3.1-8b", &m, &err), TP_OK);
    struct tp_cluster c;
    assert_int_equal(tp_cluster_init(&c, "h100-sxm", 64, &err), TP_OK);
    struct tp_job j;
    tp_job_init(&j);
    struct tp_layout l;
    tp_layout_init(&l);
    l.dp = 64;
    l.zero = 2;
    struct tp_ckpt_plan p;
    tp_ckpt_plan(&m, &c, &j, &l, 10e9, &p);
    const double n = 8030261248.0;
    assert_true(p.params == n);
    assert_true(p.consolidated_bf16_bytes == 16060522496.0);
    assert_true(p.consolidated_fp32_bytes == 4 * n);
    assert_true(p.save_bytes == 14 * n);
    assert_int_equal(p.model_files, 1);
    assert_int_equal(p.optim_files, 64);
    assert_true(p.optim_file_bytes == 12 * n / 64);
    assert_true(p.zero_to_fp32_ram_bytes == 8 * n + 12 * n / 64);
    assert_true(p.zero_to_fp32_disk_bytes == 4 * n);
    assert_true(p.save_s == 14 * n / 10e9);
    /* ZeRO-3: no 16-bit module weights, a module file per rank */
    l.zero = 3;
    tp_ckpt_plan(&m, &c, &j, &l, 0, &p);
    assert_true(p.save_bytes == 12 * n);
    assert_int_equal(p.model_files, 64);
    assert_true(p.save_s == 0);
}

static void test_missing_path(void **state)
{
    (void)state;
    struct tp_ckpt *c = NULL;
    struct tp_error err;
    assert_int_equal(tp_ckpt_inspect("/nonexistent/ckpt", NULL, NULL, 0, &c, &err),
                     TP_ENOTFOUND);
    assert_null(c);
    assert_non_null(strstr(err.msg, "/nonexistent/ckpt"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),     cmocka_unit_test(test_stub),
        cmocka_unit_test(test_missing_shard), cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_duplicate), cmocka_unit_test(test_bad_header),
        cmocka_unit_test(test_parser),    cmocka_unit_test(test_many_problems),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_mismatch),  cmocka_unit_test(test_zero),
        cmocka_unit_test(test_zero_tags),
        cmocka_unit_test(test_plan),      cmocka_unit_test(test_missing_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
