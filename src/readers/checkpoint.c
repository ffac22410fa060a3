/*
 * checkpoint.c - a checkpoint on disk: its safetensors files, shard index and tensors, the
 * faults people hit (stubs, missing shards, duplicates, ...), and the comparison with a model.
 *
 * Only headers are read: the first 8 bytes, then the header length they give once it has been
 * checked against the file's size and the format's limit (safetensors.c parses it).  Tensor data
 * is never read; a file's data section is measured by its size.  The index
 * (model.safetensors.index.json, transformers' sharded save: {"metadata": {"total_size"},
 * "weight_map": {tensor: shard}}) is read with jansson after a size check.  DeepSpeed folders
 * are ckpt_zero.c's.  Not here: tensor values, .bin/.pt pickles.
 */
#include "ckpt_internal.h"

#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool tp_ck_problem(struct tp_ckpt *c, enum tp_ckpt_kind kind, const char *file,
                   const char *tensor, const char *fmt, ...)
{
    struct tp_ckpt_problem *p = tp_grow(c->problems, c->n_problems, sizeof *p);
    if (!p)
        return false;
    c->problems = p;
    p = &c->problems[c->n_problems++];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    tp_snprintf(p->file, sizeof p->file, "%s", file ? file : "");
    tp_snprintf(p->tensor, sizeof p->tensor, "%s", tensor ? tensor : "");
    va_list ap;
    va_start(ap, fmt);
    tp_vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    /* names come from the files: a newline in one must not split the problem's line */
    char *fields[3] = {p->file, p->tensor, p->detail};
    for (int i = 0; i < 3; i++)
        for (char *ch = fields[i]; *ch; ch++)
            if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
                *ch = '?';
    return true;
}

static struct tp_ckpt_file *add_file(struct tp_ckpt *c, const char *path)
{
    struct tp_ckpt_file *f = tp_grow(c->files, c->n_files, sizeof *f);
    if (!f)
        return NULL;
    c->files = f;
    f = &c->files[c->n_files++];
    memset(f, 0, sizeof *f);
    tp_snprintf(f->path, sizeof f->path, "%s", path);
    return f;
}

static bool add_tensor(struct tp_ckpt *c, struct tp_st_tensor *t, uint32_t file)
{
    struct tp_ckpt_tensor *v = tp_grow(c->tensors, c->n_tensors, sizeof *v);
    if (!v)
        return false;
    c->tensors = v;
    struct tp_ckpt_tensor *d = &c->tensors[c->n_tensors++];
    d->name = t->name; /* ownership moves here */
    t->name = NULL;
    d->file = file;
    d->dtype = t->dtype;
    d->ndim = t->ndim;
    memcpy(d->shape, t->shape, sizeof d->shape);
    d->elements = t->elements;
    d->excluded = t->excluded;
    return true;
}

/* The dtypes of a header, comma-separated, each once, in enum order. */
static void dtype_list(const struct tp_st_header *h, char *buf, size_t len)
{
    bool seen[TP_ST_DTYPE_COUNT] = {false};
    for (size_t i = 0; i < h->n_tensors; i++)
        seen[h->tensors[i].dtype] = true;
    buf[0] = '\0';
    for (unsigned d = 0; d < TP_ST_DTYPE_COUNT; d++)
        if (seen[d]) {
            size_t n = strlen(buf);
            tp_snprintf(buf + n, len - n, "%s%s", n ? "," : "", tp_st_dtype_name((enum tp_st_dtype)d));
        }
}

/* Reads the first 8 + N bytes of `path` (N checked first) and parses them. */
static enum tp_status read_header(const char *path, uint64_t *size, struct tp_st_header *h,
                                  struct tp_error *err)
{
    struct stat st;
    /* stat first: opening a FIFO or a device would block or never end */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return tp_fail(err, TP_EIO, "%s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return tp_fail(err, TP_EIO, "%s: cannot open", path);
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return tp_fail(err, TP_EIO, "%s: not a regular file", path);
    }
    *size = (uint64_t)st.st_size;
    unsigned char prefix[8];
    size_t got = fread(prefix, 1, 8, f);
    unsigned char *buf = prefix;
    if (got == 8) {
        uint64_t n = 0;
        for (int i = 7; i >= 0; i--)
            n = n << 8 | prefix[i];
        /* allocate only for a length the limit and the file's size allow */
        if (n <= TP_ST_MAX_HEADER && *size >= 8 && n <= *size - 8) {
            buf = malloc((size_t)n + 8);
            if (!buf) {
                fclose(f);
                return tp_fail(err, TP_ENOMEM, "%s: out of memory for a %llu-byte header", path,
                               (unsigned long long)n);
            }
            memcpy(buf, prefix, 8);
            got += fread(buf + 8, 1, (size_t)n, f);
        }
    }
    bool bad = ferror(f);
    fclose(f);
    enum tp_status st_ = bad ? tp_fail(err, TP_EIO, "%s: read error", path)
                             : tp_st_parse(buf, got, *size, h, err);
    if (buf != prefix)
        free(buf);
    return st_;
}

enum tp_status tp_ck_read_file(struct tp_ckpt *c, const char *path, struct tp_error *err)
{
    struct tp_st_header h;
    uint64_t size = 0;
    TRY(read_header(path, &size, &h, err));
    struct tp_ckpt_file *f = add_file(c, path);
    bool ok = f != NULL;
    if (ok) {
        f->bytes = size;
        f->header_bytes = h.header_bytes;
        f->tensors = h.n_tensors;
        f->params = h.params;
        f->excluded = h.n_excluded;
        dtype_list(&h, f->dtypes, sizeof f->dtypes);
        if (!tp_add_u64(&c->total_bytes, size) || h.params_overflow)
            c->totals_overflow = true;
    }
    for (size_t i = 0; ok && i < h.n_problems; i++) {
        if (h.problems[i].kind == TP_CK_STUB)
            f->stub = true;
        ok = tp_ck_problem(c, h.problems[i].kind, path, h.problems[i].tensor, "%s",
                           h.problems[i].detail);
    }
    for (size_t i = 0; ok && f && !f->stub && i < h.n_tensors; i++)
        ok = add_tensor(c, &h.tensors[i], (uint32_t)(c->n_files - 1));
    tp_st_header_free(&h);
    return ok ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
}

static int by_name(const void *a, const void *b)
{
    const struct tp_ckpt_tensor *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x->file > y->file) - (x->file < y->file);
}

/* Sorts the tensors, reports tensors held by two files (one line per pair of files), and
   totals the parameters of each name once, with checked adds (a sum past 2^64 - 1 sets
   totals_overflow instead of wrapping); tensors flagged excluded are counted apart. */
static bool dedupe(struct tp_ckpt *c)
{
    if (c->n_tensors > 0)
        qsort(c->tensors, c->n_tensors, sizeof *c->tensors, by_name);
    struct pair {
        uint32_t a, b;
        size_t count;
        const char *first;
    } pairs[32];
    size_t n_pairs = 0, more = 0;
    c->total_params = 0;
    c->n_excluded = 0;
    memset(c->by_comp, 0, sizeof c->by_comp);
    memset(c->by_dtype, 0, sizeof c->by_dtype);
    for (size_t i = 0; i < c->n_tensors; i++) {
        const struct tp_ckpt_tensor *t = &c->tensors[i];
        if (i > 0 && strcmp(t->name, c->tensors[i - 1].name) == 0) {
            uint32_t a = c->tensors[i - 1].file, b = t->file;
            size_t k = 0;
            while (k < n_pairs && !(pairs[k].a == a && pairs[k].b == b))
                k++;
            if (k == n_pairs && n_pairs < 32)
                pairs[n_pairs++] = (struct pair){a, b, 0, t->name};
            if (k < n_pairs)
                pairs[k].count++;
            else
                more++;
            continue;
        }
        if (t->excluded) { /* its problem line says why */
            c->n_excluded++;
            continue;
        }
        if (!tp_add_u64(&c->total_params, t->elements) ||
            !tp_add_u64(&c->by_comp[tp_ckpt_component(t->name)], t->elements) ||
            !tp_add_u64(&c->by_dtype[t->dtype], t->elements))
            c->totals_overflow = true;
    }
    for (size_t k = 0; k < n_pairs; k++)
        if (!tp_ck_problem(c, TP_CK_DUPLICATE, c->files[pairs[k].b].path, pairs[k].first,
                           "%zu tensor%s also in %s", pairs[k].count,
                           pairs[k].count == 1 ? "" : "s", c->files[pairs[k].a].path))
            return false;
    if (more && !tp_ck_problem(c, TP_CK_DUPLICATE, "", "",
                               "%zu more tensors held twice by other pairs of files", more))
        return false;
    return true;
}

/* A tensor by name (the first file holding it), or NULL. */
static const struct tp_ckpt_tensor *find_tensor(const struct tp_ckpt *c, const char *name)
{
    size_t lo = 0, hi = c->n_tensors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(c->tensors[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n_tensors && strcmp(c->tensors[lo].name, name) == 0 ? &c->tensors[lo] : NULL;
}

static bool name_ends(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcmp(path + n - k, suffix) == 0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether dir/name is a regular file (a FIFO, device or folder named *.safetensors is not
   read). */
static bool regular(const char *dir, const char *name)
{
    char path[1024];
    struct stat st;
    int k = tp_snprintf(path, sizeof path, "%s/%s", dir, name);
    return k > 0 && (size_t)k < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The *.safetensors files (and the first *.safetensors.index.json) of folder `dir`, sorted. */
static enum tp_status list_dir(const char *dir, char ***names, size_t *n, char *index,
                               size_t index_len, struct tp_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return tp_fail(err, TP_EIO, "%s: cannot open the folder", dir);
    *names = NULL;
    *n = 0;
    index[0] = '\0';
    struct dirent *e;
    enum tp_status st = TP_OK;
    while (st == TP_OK && (e = readdir(d)) != NULL) {
        if (name_ends(e->d_name, ".safetensors.index.json") && regular(dir, e->d_name)) {
            if (!index[0] || strcmp(e->d_name, index) < 0)
                tp_snprintf(index, index_len, "%s", e->d_name);
            continue;
        }
        if (!name_ends(e->d_name, ".safetensors") || !regular(dir, e->d_name))
            continue;
        char **v = tp_grow(*names, *n, sizeof *v);
        char *copy = v ? strdup(e->d_name) : NULL;
        if (v)
            *names = v;
        if (!copy)
            st = tp_fail(err, TP_ENOMEM, "out of memory listing %s", dir);
        else
            (*names)[(*n)++] = copy;
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return st;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static enum tp_status join(char *buf, size_t len, const char *dir, const char *name,
                           struct tp_error *err)
{
    int k = tp_snprintf(buf, len, "%s%s%s", dir, name_ends(dir, "/") ? "" : "/", name);
    if (k < 0 || (size_t)k >= len)
        return tp_fail(err, TP_EINVAL, "%s/%s: path too long", dir, name);
    return TP_OK;
}

/* Reads the safetensors files of folder `dir` and its index. */
static enum tp_status read_dir(struct tp_ckpt *c, const char *dir, struct tp_error *err)
{
    char **names = NULL;
    size_t n = 0;
    char index[256], path[1024];
    TRY(list_dir(dir, &names, &n, index, sizeof index, err));
    enum tp_status st = TP_OK;
    for (size_t i = 0; st == TP_OK && i < n; i++) {
        st = join(path, sizeof path, dir, names[i], err);
        if (st == TP_OK)
            st = tp_ck_read_file(c, path, err);
    }
    free_names(names, n);
    if (st == TP_OK && !dedupe(c))
        st = tp_fail(err, TP_ENOMEM, "out of memory");
    if (st == TP_OK && index[0] && (st = join(path, sizeof path, dir, index, err)) == TP_OK)
        st = tp_ck_check_index(c, dir, path, false, err);
    return st;
}

static void dir_of(const char *path, char *buf, size_t len)
{
    const char *s = strrchr(path, '/');
    if (!s)
        tp_snprintf(buf, len, ".");
    else if (s == path)
        tp_snprintf(buf, len, "/");
    else
        tp_snprintf(buf, len, "%.*s", (int)(s - path), path);
}

/* An index given as the path: read the shards it names (each once), then check it. */
static enum tp_status read_index_path(struct tp_ckpt *c, const char *path, struct tp_error *err)
{
    char dir[1024];
    dir_of(path, dir, sizeof dir);
    return tp_ck_check_index(c, dir, path, true, err);
}

void tp_ckpt_free(struct tp_ckpt *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_tensors; i++)
        free(c->tensors[i].name);
    free(c->tensors);
    free(c->files);
    free(c->problems);
    free(c->zero.files);
    for (size_t i = 0; i < c->n_lost; i++)
        free(c->lost[i]);
    free(c->lost);
    free(c);
}

enum tp_status tp_ckpt_inspect(const char *path, const struct tp_model *m,
                               const struct tp_job *j, uint32_t n_gpus, struct tp_ckpt **out,
                               struct tp_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return tp_fail(err, TP_ENOTFOUND, "%s: no such file or folder", path);
    struct tp_ckpt *c = calloc(1, sizeof *c);
    if (!c)
        return tp_fail(err, TP_ENOMEM, "out of memory");
    tp_snprintf(c->path, sizeof c->path, "%s", path);
    enum tp_status s;
    if (S_ISDIR(st.st_mode)) {
        s = read_dir(c, path, err);
        if (s == TP_OK)
            s = tp_ck_zero_scan(c, path, m, j, n_gpus, err);
    } else if (name_ends(path, ".json") && !name_ends(path, ".index.json")) {
        s = tp_fail(err, TP_EINVAL, "%s: not a checkpoint (give its folder, a .safetensors file "
                    "or a *.safetensors.index.json)", path);
    } else if (name_ends(path, ".json")) {
        s = read_index_path(c, path, err);
    } else {
        s = tp_ck_read_file(c, path, err);
        if (s == TP_OK && !dedupe(c))
            s = tp_fail(err, TP_ENOMEM, "out of memory");
    }
    if (s == TP_OK && m && c->n_files > 0)
        s = tp_ck_compare(c, m, err);
    if (s != TP_OK) {
        tp_ckpt_free(c);
        return s;
    }
    *out = c;
    return TP_OK;
}

/* ---- the index ---------------------------------------------------------------------------- */

static int by_first(const void *a, const void *b)
{
    return strcmp(((const char *const *)a)[0], ((const char *const *)b)[0]);
}

/* Whether a shard name from an index is a plain file name (no folders, no "..", no NUL). */
static bool plain_name(const char *s)
{
    return s[0] && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* Loads the index's weight_map as pairs {tensor, shard} sorted by tensor; NULL with a
   bad-index problem added (*oom on allocation failure). */
static const char **load_map(struct tp_ckpt *c, const char *path, json_t **doc, size_t *n,
                             bool *oom)
{
    *oom = false;
    *doc = NULL;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)TP_ST_MAX_HEADER) {
        *oom = !tp_ck_problem(c, TP_CK_BAD_INDEX, path, "", "larger than %u bytes or unreadable",
                              TP_ST_MAX_HEADER);
        return NULL;
    }
    json_error_t je;
    *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    const json_t *map = *doc ? json_object_get(*doc, "weight_map") : NULL;
    if (!json_is_object(map)) {
        *oom = !tp_ck_problem(c, TP_CK_BAD_INDEX, path, "", "%s",
                              *doc ? "no \"weight_map\" object" : je.text);
        return NULL;
    }
    const char **pairs = malloc((json_object_size(map) + 1) * 2 * sizeof *pairs);
    if (!pairs) {
        *oom = true;
        return NULL;
    }
    *n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)map, key, v) {
        if (!json_is_string(v) || !plain_name(json_string_value(v))) {
            *oom = !tp_ck_problem(c, TP_CK_BAD_INDEX, path, key,
                                  "the shard is not a plain file name in the index's folder");
            if (*oom)
                break;
            continue;
        }
        pairs[2 * *n] = key;
        pairs[2 * *n + 1] = json_string_value(v);
        (*n)++;
    }
    qsort(pairs, *n, 2 * sizeof *pairs, by_first);
    return pairs;
}

/* The files read so far by base name (-> index into c->files); false when out of memory.
   `more` is room for the files still to be added. */
static bool file_set(const struct tp_ckpt *c, size_t more, struct tp_ck_names *set)
{
    if (!tp_ck_names_init(set, c->n_files + more))
        return false;
    for (size_t i = 0; i < c->n_files; i++)
        if (tp_ck_names_get(set, base_name(c->files[i].path)) == TP_CK_NO_NAME &&
            !tp_ck_names_put(set, base_name(c->files[i].path), (uint32_t)i))
            return false;
    return true;
}

/* The index's shards: each distinct shard name -> its number, and how many tensors it maps to
   each (counts[number]). */
static bool shard_set(const char **pairs, size_t n, struct tp_ck_names *set, size_t **counts)
{
    *counts = calloc(n + 1, sizeof **counts);
    if (!*counts || !tp_ck_names_init(set, n))
        return false;
    for (size_t k = 0; k < n; k++) {
        uint32_t id = tp_ck_names_get(set, pairs[2 * k + 1]);
        if (id == TP_CK_NO_NAME && !tp_ck_names_put(set, pairs[2 * k + 1], id = (uint32_t)set->n))
            return false;
        (*counts)[id]++;
    }
    return true;
}

/* Records, sorted, the tensors the index maps to shards that are not on disk (c->lost). */
static bool lose(struct tp_ckpt *c, const char **pairs, size_t n, const struct tp_ck_names *files)
{
    for (size_t k = 0; k < n; k++) {
        uint32_t f = tp_ck_names_get(files, pairs[2 * k + 1]);
        if (f == TP_CK_NO_NAME || !c->files[f].missing)
            continue;
        char **v = tp_grow(c->lost, c->n_lost, sizeof *v);
        if (!v)
            return false;
        c->lost = v;
        if (!(v[c->n_lost] = strdup(pairs[2 * k])))
            return false;
        c->n_lost++;
    }
    if (c->n_lost)
        qsort(c->lost, c->n_lost, sizeof *c->lost, cmp_str);
    return true;
}

/* Reads the shards named by the index that are not read yet (when `read_shards`), and reports
   the missing ones: one line each, with the number of tensors the index maps to it.  Every
   look-up is in a hash set, so N shards cost O(N), not O(N^2). */
static enum tp_status index_shards(struct tp_ckpt *c, const char *dir, const char **pairs,
                                   size_t n, bool read_shards, struct tp_error *err)
{
    struct tp_ck_names files = {0}, shards = {0};
    size_t *counts = NULL;
    bool ok = file_set(c, n, &files) && shard_set(pairs, n, &shards, &counts);
    enum tp_status st = ok ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
    char path[1024];
    for (size_t i = 0; st == TP_OK && i < n; i++) {
        const char *shard = pairs[2 * i + 1];
        if (tp_ck_names_get(&files, shard) != TP_CK_NO_NAME)
            continue;
        if ((st = join(path, sizeof path, dir, shard, err)) != TP_OK)
            break;
        struct stat sb;
        if (read_shards && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            st = tp_ck_read_file(c, path, err);
        } else {
            size_t count = counts[tp_ck_names_get(&shards, shard)];
            struct tp_ckpt_file *f = add_file(c, path);
            if (!f || !tp_ck_problem(c, TP_CK_MISSING_SHARD, path, pairs[2 * i],
                                     "named by the index for %zu tensor%s; not on disk", count,
                                     count == 1 ? "" : "s"))
                st = tp_fail(err, TP_ENOMEM, "out of memory");
            else
                f->missing = true;
        }
        if (st == TP_OK && !tp_ck_names_put(&files, shard, (uint32_t)(c->n_files - 1)))
            st = tp_fail(err, TP_ENOMEM, "out of memory");
    }
    if (st == TP_OK && !lose(c, pairs, n, &files))
        st = tp_fail(err, TP_ENOMEM, "out of memory");
    tp_ck_names_free(&files);
    tp_ck_names_free(&shards);
    free(counts);
    return st;
}

static bool index_mappings(struct tp_ckpt *c, const char *path, const char **pairs, size_t n)
{
    struct tp_ck_names files = {0}, shards = {0};
    size_t *counts = NULL;
    bool ok = file_set(c, 0, &files) && shard_set(pairs, n, &shards, &counts);
    for (size_t i = 0; ok && i < n; i++) {
        uint32_t k = tp_ck_names_get(&files, pairs[2 * i + 1]);
        const struct tp_ckpt_file *f = k == TP_CK_NO_NAME ? NULL : &c->files[k];
        if (!f || f->missing || f->stub)
            continue;
        const struct tp_ckpt_tensor *t = find_tensor(c, pairs[2 * i]);
        bool there = false;
        for (const struct tp_ckpt_tensor *u = t; u && u < c->tensors + c->n_tensors &&
                                                 strcmp(u->name, pairs[2 * i]) == 0;
             u++)
            there = there || &c->files[u->file] == f;
        if (!there)
            ok = tp_ck_problem(c, TP_CK_NOT_IN_SHARD, f->path, pairs[2 * i],
                               "the index puts it here; %s%s", t ? "it is in " : "no file holds it",
                               t ? c->files[t->file].path : "");
    }
    /* a file the index names nowhere: one line for the file, not one per tensor */
    bool *unnamed = ok ? calloc(c->n_files + 1, sizeof *unnamed) : NULL;
    ok = ok && unnamed;
    for (size_t k = 0; ok && k < c->n_files; k++) {
        const struct tp_ckpt_file *f = &c->files[k];
        bool named = tp_ck_names_get(&shards, base_name(f->path)) != TP_CK_NO_NAME;
        if (named || f->missing || f->stub || f->tensors == 0)
            continue;
        unnamed[k] = true;
        ok = tp_ck_problem(c, TP_CK_NOT_IN_INDEX, f->path, "",
                           "%s names none of its %zu tensors, so loaders never read it",
                           base_name(path), f->tensors);
    }
    for (size_t i = 0; ok && i < c->n_tensors; i++) {
        const struct tp_ckpt_tensor *t = &c->tensors[i];
        const char *key = t->name;
        if (unnamed[t->file])
            continue;
        if (bsearch(&key, pairs, n, 2 * sizeof *pairs, by_first) == NULL)
            ok = tp_ck_problem(c, TP_CK_NOT_IN_INDEX, c->files[t->file].path, t->name,
                               "%s does not list it, so loaders never read it", base_name(path));
    }
    free(unnamed);
    tp_ck_names_free(&files);
    tp_ck_names_free(&shards);
    free(counts);
    return ok;
}

enum tp_status tp_ck_check_index(struct tp_ckpt *c, const char *dir, const char *path,
                                 bool read_shards, struct tp_error *err)
{
    c->has_index = true;
    json_t *doc;
    size_t n = 0;
    bool oom;
    const char **pairs = load_map(c, path, &doc, &n, &oom);
    enum tp_status st = oom ? tp_fail(err, TP_ENOMEM, "out of memory") : TP_OK;
    if (pairs && st == TP_OK)
        st = index_shards(c, dir, pairs, n, read_shards, err);
    if (pairs && st == TP_OK && read_shards && !dedupe(c))
        st = tp_fail(err, TP_ENOMEM, "out of memory");
    if (pairs && st == TP_OK && !index_mappings(c, path, pairs, n))
        st = tp_fail(err, TP_ENOMEM, "out of memory");
    free(pairs);
    json_decref(doc);
    return st;
}
