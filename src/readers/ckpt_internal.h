/*
 * ckpt_internal.h - what the checkpoint sources share (checkpoint.c, ckpt_model.c,
 * ckpt_zero.c); not public.
 */
#ifndef TP_CKPT_INTERNAL_H
#define TP_CKPT_INTERNAL_H

#include "logs_internal.h"

/* Appends a problem to c; false when out of memory. */
bool tp_ck_problem(struct tp_ckpt *c, enum tp_ckpt_kind kind, const char *file,
                   const char *tensor, const char *fmt, ...) TP_PRINTF(5, 6);
/* Reads one safetensors file's header into c (its tensors unless it is a stub). */
enum tp_status tp_ck_read_file(struct tp_ckpt *c, const char *path, struct tp_error *err);
/* Checks the index at `path` (in folder `dir`) against the files read; with `read_shards`
   reads the shards it names first. */
enum tp_status tp_ck_check_index(struct tp_ckpt *c, const char *dir, const char *path,
                                 bool read_shards, struct tp_error *err);
/* Compares the tensors with model m (ckpt_model.c). */
enum tp_status tp_ck_compare(struct tp_ckpt *c, const struct tp_model *m, struct tp_error *err);
/* DeepSpeed ZeRO files under folder `dir` (ckpt_zero.c). */
enum tp_status tp_ck_zero_scan(struct tp_ckpt *c, const char *dir, const struct tp_model *m,
                               const struct tp_job *j, uint32_t n_gpus, struct tp_error *err);

/* ckpt_names.c: names (copied) -> numbers, for the index checks' look-ups in O(1). */
#define TP_CK_NO_NAME UINT32_MAX
struct tp_ck_names {
    char **keys;
    uint32_t *vals;
    size_t cap, n, limit; /* limit: the most names put (the table stays at most half full) */
};
/* A set for up to `expect` names; false when out of memory. */
bool tp_ck_names_init(struct tp_ck_names *s, size_t expect);
void tp_ck_names_free(struct tp_ck_names *s);
/* The number stored for `key`, or TP_CK_NO_NAME. */
uint32_t tp_ck_names_get(const struct tp_ck_names *s, const char *key);
/* Stores key -> val (replacing); false when out of memory or past `expect` names. */
bool tp_ck_names_put(struct tp_ck_names *s, const char *key, uint32_t val);

#endif
