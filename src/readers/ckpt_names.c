/*
 * ckpt_names.c - a set of names, each with a number: what the index checks look shard names up
 * in (checkpoint.c).  An index naming N shards used to be checked by scanning the list of files
 * for each of them (O(N^2): 20,000 missing shards took ~10 s, 100,000 took 414 s; issue 41);
 * with this table each look-up is O(1) on average.
 *
 * Open addressing with linear probing (Knuth, TAOCP vol. 3, 6.4, Algorithm L) in a table of a
 * power-of-two size at most half full, sized once from the number of names the caller expects
 * (it never grows); FNV-1a 64-bit as the hash (Fowler, Noll, Vo; the parameters of
 * http://www.isthe.com/chongo/tech/comp/fnv/).  The names are copied.
 */
#include "ckpt_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a 64-bit offset basis */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211u; /* FNV 64-bit prime */
    }
    return h;
}

bool tp_ck_names_init(struct tp_ck_names *s, size_t expect)
{
    memset(s, 0, sizeof *s);
    size_t cap = 16;
    while (cap / 2 < expect) {
        if (cap > SIZE_MAX / 4 / sizeof *s->keys)
            return false;
        cap *= 2;
    }
    s->keys = calloc(cap, sizeof *s->keys);
    s->vals = calloc(cap, sizeof *s->vals);
    s->cap = cap;
    s->limit = expect;
    if (!s->keys || !s->vals) {
        tp_ck_names_free(s);
        return false;
    }
    return true;
}

void tp_ck_names_free(struct tp_ck_names *s)
{
    for (size_t i = 0; s->keys && i < s->cap; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->vals);
    memset(s, 0, sizeof *s);
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t slot(const struct tp_ck_names *s, const char *key)
{
    size_t i = (size_t)fnv1a(key) & (s->cap - 1);
    while (s->keys[i] && strcmp(s->keys[i], key) != 0)
        i = (i + 1) & (s->cap - 1);
    return i;
}

uint32_t tp_ck_names_get(const struct tp_ck_names *s, const char *key)
{
    if (!s->keys)
        return TP_CK_NO_NAME;
    size_t i = slot(s, key);
    return s->keys[i] ? s->vals[i] : TP_CK_NO_NAME;
}

bool tp_ck_names_put(struct tp_ck_names *s, const char *key, uint32_t val)
{
    size_t i = slot(s, key);
    if (s->keys[i]) {
        s->vals[i] = val;
        return true;
    }
    if (s->n >= s->limit) /* more names than the caller said: the table would fill */
        return false;
    if (!(s->keys[i] = strdup(key)))
        return false;
    s->vals[i] = val;
    s->n++;
    return true;
}
