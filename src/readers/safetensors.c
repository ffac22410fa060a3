/*
 * safetensors.c - the header of a safetensors file, parsed from a bounded buffer.
 *
 * Format (huggingface/safetensors, README "Format"): 8 bytes, a little-endian u64 N; N bytes
 * of UTF-8 JSON, an object mapping each tensor name to {"dtype", "shape", "data_offsets":
 * [begin, end]} (offsets relative to the byte after the header), plus an optional
 * "__metadata__" object of strings; then the data.  The reference reader refuses N above
 * 100,000,000 (MAX_HEADER_SIZE), a header that does not start with '{', duplicate keys, byte
 * ranges that are not exactly shape x dtype size, and offsets that leave holes or do not end
 * at the end of the buffer (SafeTensorError InvalidHeaderStart, HeaderTooLarge,
 * TensorInvalidInfo, InvalidOffset, MetadataIncompleteBuffer).
 *
 * Files are hostile here: nothing is allocated from the length prefix before it is checked
 * against the limit and the bytes at hand, every offset is checked, and every fault becomes a
 * problem with the tensor it concerns instead of an error.  No I/O: the caller reads the
 * first 8 + N bytes (checkpoint.c) or hands a fuzzer's input.
 */
#include "logs_internal.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned bits;
} DTYPES[TP_ST_DTYPE_COUNT] = {
    [TP_ST_UNKNOWN] = {"?", 0},        [TP_ST_BOOL] = {"BOOL", 8},
    [TP_ST_U8] = {"U8", 8},            [TP_ST_I8] = {"I8", 8},
    [TP_ST_F8_E5M2] = {"F8_E5M2", 8},  [TP_ST_F8_E4M3] = {"F8_E4M3", 8},
    [TP_ST_F8_E8M0] = {"F8_E8M0", 8},  [TP_ST_F4] = {"F4", 4},
    [TP_ST_F6_E2M3] = {"F6_E2M3", 6},  [TP_ST_F6_E3M2] = {"F6_E3M2", 6},
    [TP_ST_I16] = {"I16", 16},         [TP_ST_U16] = {"U16", 16},
    [TP_ST_F16] = {"F16", 16},         [TP_ST_BF16] = {"BF16", 16},
    [TP_ST_I32] = {"I32", 32},         [TP_ST_U32] = {"U32", 32},
    [TP_ST_F32] = {"F32", 32},         [TP_ST_C64] = {"C64", 64},
    [TP_ST_F64] = {"F64", 64},         [TP_ST_I64] = {"I64", 64},
    [TP_ST_U64] = {"U64", 64}};

const char *tp_st_dtype_name(enum tp_st_dtype d)
{
    return (unsigned)d < TP_ST_DTYPE_COUNT ? DTYPES[d].name : "?";
}

unsigned tp_st_dtype_bits(enum tp_st_dtype d)
{
    return (unsigned)d < TP_ST_DTYPE_COUNT ? DTYPES[d].bits : 0;
}

static enum tp_st_dtype dtype_find(const char *s)
{
    for (unsigned i = 1; i < TP_ST_DTYPE_COUNT; i++)
        if (strcmp(DTYPES[i].name, s) == 0)
            return (enum tp_st_dtype)i;
    return TP_ST_UNKNOWN;
}

const char *tp_ckpt_problem_name(enum tp_ckpt_kind k)
{
    static const char *const names[TP_CK_KIND_COUNT] = {
        "bad-header",     "stub",          "truncated",        "overlap",
        "out-of-bounds",  "gap",           "size-mismatch",    "unknown-dtype",
        "bad-index",      "missing-shard", "not-in-shard",     "not-in-index",
        "duplicate",      "missing-tensor", "unexpected-tensor", "shape-mismatch",
        "param-mismatch", "missing-tag",   "missing-rank",     "small-rank-file"};
    return (unsigned)k < TP_CK_KIND_COUNT ? names[k] : "?";
}

/* Appends a problem; false when out of memory. */
static bool add_problem(struct tp_st_header *h, enum tp_ckpt_kind kind, const char *tensor,
                        const char *fmt, ...) TP_PRINTF(4, 5);

static bool add_problem(struct tp_st_header *h, enum tp_ckpt_kind kind, const char *tensor,
                        const char *fmt, ...)
{
    struct tp_ckpt_problem *p = tp_grow(h->problems, h->n_problems, sizeof *p);
    if (!p)
        return false;
    h->problems = p;
    p = &h->problems[h->n_problems++];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    tp_snprintf(p->tensor, sizeof p->tensor, "%s", tensor ? tensor : "");
    va_list ap;
    va_start(ap, fmt);
    tp_vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    for (char *c = p->detail; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    return true;
}

void tp_st_header_free(struct tp_st_header *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n_tensors; i++)
        free(h->tensors[i].name);
    free(h->tensors);
    free(h->problems);
    memset(h, 0, sizeof *h);
}

/* A JSON integer in [0, 2^63). */
static bool get_u64(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* Reads one tensor entry; returns "" when it is well formed, else what is wrong. */
static const char *read_entry(const json_t *v, struct tp_st_tensor *t, char *dtype_text,
                              size_t dtype_len)
{
    if (!json_is_object(v))
        return "the entry is not an object";
    const json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape");
    const json_t *off = json_object_get(v, "data_offsets");
    if (!json_is_string(dt))
        return "\"dtype\" is missing or not a string";
    if (!json_is_array(shape))
        return "\"shape\" is missing or not a list";
    if (!json_is_array(off) || json_array_size(off) != 2)
        return "\"data_offsets\" is missing or not a list of two offsets";
    if (json_array_size(shape) > TP_ST_MAX_DIMS)
        return "\"shape\" has more than 8 dimensions";
    tp_snprintf(dtype_text, dtype_len, "%s", json_string_value(dt));
    t->dtype = dtype_find(json_string_value(dt));
    t->ndim = (uint32_t)json_array_size(shape);
    t->elements = 1;
    for (uint32_t d = 0; d < t->ndim; d++) {
        if (!get_u64(json_array_get(shape, d), &t->shape[d]))
            return "\"shape\" holds something that is not a non-negative integer";
        if (t->shape[d] != 0 && t->elements > UINT64_MAX / t->shape[d])
            t->elements = UINT64_MAX;
        else if (t->elements != UINT64_MAX)
            t->elements *= t->shape[d];
    }
    if (!get_u64(json_array_get(off, 0), &t->begin) || !get_u64(json_array_get(off, 1), &t->end))
        return "\"data_offsets\" holds something that is not a non-negative integer";
    if (t->end < t->begin)
        return "\"data_offsets\" end comes before begin";
    return "";
}

/* Checks one entry's bytes against its shape and dtype. */
static bool check_entry_size(struct tp_st_header *h, const struct tp_st_tensor *t,
                             const char *dtype_text)
{
    if (t->dtype == TP_ST_UNKNOWN)
        return add_problem(h, TP_CK_UNKNOWN_DTYPE, t->name,
                           "dtype \"%s\" is not a safetensors dtype; not counted in the totals",
                           dtype_text);
    unsigned bits = tp_st_dtype_bits(t->dtype);
    uint64_t have = t->end - t->begin;
    if (t->elements == UINT64_MAX || t->elements > UINT64_MAX / bits)
        return add_problem(h, TP_CK_SIZE_MISMATCH, t->name,
                           "the shape's element count overflows; not counted in the totals");
    uint64_t nbits = t->elements * bits; /* fits: checked just above */
    uint64_t want = nbits / 8 + (nbits % 8 != 0); /* (nbits + 7) / 8 could wrap */
    if (have != want)
        return add_problem(h, TP_CK_SIZE_MISMATCH, t->name,
                           "data_offsets span %llu bytes; the shape and %s need %llu; not "
                           "counted in the totals",
                           (unsigned long long)have, tp_st_dtype_name(t->dtype),
                           (unsigned long long)want);
    return true;
}

static int by_begin(const void *a, const void *b)
{
    const struct tp_st_tensor *x = *(const struct tp_st_tensor *const *)a;
    const struct tp_st_tensor *y = *(const struct tp_st_tensor *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Overlaps, holes, ranges past the data section, and a cut-off file.  A file whose ranges
   tile [0, E) without overlap but whose data section is shorter than E was cut short
   ("truncated", one line); ranges past the end in a layout that does not tile are
   "out-of-bounds", one line per tensor. */
static bool check_layout(struct tp_st_header *h)
{
    size_t n = h->n_tensors;
    if (n == 0)
        return true;
    const struct tp_st_tensor **v = malloc(n * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < n; i++)
        v[i] = &h->tensors[i];
    qsort(v, n, sizeof *v, by_begin);
    bool ok = true, tiles = v[0]->begin == 0;
    uint64_t reach = 0; /* largest end so far */
    const char *reach_name = v[0]->name;
    for (size_t i = 0; i < n && ok; i++) {
        if (i > 0 && v[i]->begin < reach) {
            tiles = false;
            ok = add_problem(h, TP_CK_OVERLAP, v[i]->name,
                             "bytes %llu..%llu overlap \"%s\" (ends at %llu)",
                             (unsigned long long)v[i]->begin, (unsigned long long)v[i]->end,
                             reach_name, (unsigned long long)reach);
        } else if (v[i]->begin > reach) {
            tiles = false;
            ok = add_problem(h, TP_CK_GAP, v[i]->name,
                             "%llu bytes before it belong to no tensor (from offset %llu)",
                             (unsigned long long)(v[i]->begin - reach),
                             (unsigned long long)reach);
        }
        if (v[i]->end > reach) {
            reach = v[i]->end;
            reach_name = v[i]->name;
        }
    }
    if (ok && reach > h->data_bytes && tiles) {
        ok = add_problem(h, TP_CK_TRUNCATED, reach_name,
                         "the data section holds %llu bytes; the header's tensors need %llu",
                         (unsigned long long)h->data_bytes, (unsigned long long)reach);
    } else if (ok && reach > h->data_bytes) {
        for (size_t i = 0; i < n && ok; i++)
            if (v[i]->end > h->data_bytes)
                ok = add_problem(h, TP_CK_OUT_OF_BOUNDS, v[i]->name,
                                 "bytes %llu..%llu end past the data section (%llu bytes)",
                                 (unsigned long long)v[i]->begin,
                                 (unsigned long long)v[i]->end,
                                 (unsigned long long)h->data_bytes);
    } else if (ok && reach < h->data_bytes) {
        ok = add_problem(h, TP_CK_GAP, "", "%llu bytes after the last tensor belong to none",
                         (unsigned long long)(h->data_bytes - reach));
    }
    free(v);
    return ok;
}

/* Reads every entry of the header object into h->tensors. */
static bool read_entries(struct tp_st_header *h, json_t *root)
{
    size_t cap = json_object_size(root);
    h->tensors = calloc(cap ? cap : 1, sizeof *h->tensors);
    if (!h->tensors)
        return false;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (strcmp(key, "__metadata__") == 0)
            continue;
        struct tp_st_tensor t = {0};
        char dtype_text[32] = "";
        const char *why = read_entry(v, &t, dtype_text, sizeof dtype_text);
        if (why[0]) {
            if (!add_problem(h, TP_CK_BAD_HEADER, key, "%s", why))
                return false;
            continue;
        }
        t.name = strdup(key);
        if (!t.name)
            return false;
        h->tensors[h->n_tensors++] = t;
        size_t before = h->n_problems;
        if (!check_entry_size(h, &h->tensors[h->n_tensors - 1], dtype_text))
            return false;
        /* a tensor whose shape, dtype and bytes disagree has no trustworthy element count:
           it stays listed (its name, its problem) but is left out of the total */
        if (h->n_problems > before) {
            h->tensors[h->n_tensors - 1].excluded = true;
            h->n_excluded++;
        } else if (!tp_add_u64(&h->params, t.elements)) {
            h->params_overflow = true;
        }
    }
    return true;
}

/* The length prefix and the JSON document; NULL (with a problem added) when unusable. */
static json_t *load_header(struct tp_st_header *h, const unsigned char *buf, size_t len,
                           uint64_t file_bytes, bool *oom)
{
    *oom = false;
    if (file_bytes == 0) {
        *oom = !add_problem(h, TP_CK_STUB, "", "zero-length file");
        return NULL;
    }
    if (len < 8 || file_bytes < 8) {
        *oom = !add_problem(h, TP_CK_BAD_HEADER, "",
                            "%llu bytes: shorter than the 8-byte header length",
                            (unsigned long long)(file_bytes < len ? file_bytes : len));
        return NULL;
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | buf[i];
    h->header_bytes = n;
    if (n > TP_ST_MAX_HEADER) {
        *oom = !add_problem(h, TP_CK_BAD_HEADER, "",
                            "header length %llu is over the format's limit (100,000,000): not a "
                            "safetensors file",
                            (unsigned long long)n);
        return NULL;
    }
    if (n > file_bytes - 8 || n > len - 8) {
        *oom = !add_problem(h, TP_CK_TRUNCATED, "",
                            "the header length says %llu bytes; the file holds %llu after it",
                            (unsigned long long)n, (unsigned long long)(file_bytes - 8));
        return NULL;
    }
    h->data_bytes = file_bytes - 8 - n;
    if (n == 0 || buf[8] != '{') {
        *oom = !add_problem(h, TP_CK_BAD_HEADER, "", "the header does not start with '{'");
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)n, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        *oom = !add_problem(h, TP_CK_BAD_HEADER, "", "the header is not JSON: %s (byte %d)",
                            je.text, je.position);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        *oom = !add_problem(h, TP_CK_BAD_HEADER, "", "the header is not a JSON object");
        return NULL;
    }
    return root;
}

enum tp_status tp_st_parse(const unsigned char *buf, size_t len, uint64_t file_bytes,
                           struct tp_st_header *h, struct tp_error *err)
{
    memset(h, 0, sizeof *h);
    bool oom;
    json_t *root = load_header(h, buf, len, file_bytes, &oom);
    bool ok = !oom;
    if (root) {
        ok = read_entries(h, root) && check_layout(h);
        json_decref(root);
    }
    if (ok && h->n_tensors > 0) {
        bool all_empty = true;
        for (size_t i = 0; i < h->n_tensors && all_empty; i++)
            all_empty = h->tensors[i].elements == 0;
        if (all_empty)
            ok = add_problem(h, TP_CK_STUB, "",
                             "all %zu tensors have zero elements (a placeholder, e.g. a ZeRO-3 "
                             "save's model file): loaders read it instead of the real weights",
                             h->n_tensors);
    }
    if (!ok) {
        tp_st_header_free(h);
        return tp_fail(err, TP_ENOMEM, "out of memory reading a safetensors header");
    }
    return TP_OK;
}
