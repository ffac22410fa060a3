/*
 * st_parse.h - the safetensors header parser on crafted buffers, for the checkpoint tests
 * (test_checkpoint.c, test_ckpt_totals.c): a JSON header with its 8-byte length, and the one
 * problem a crafted fault must raise.
 */
#ifndef TP_TEST_ST_PARSE_H
#define TP_TEST_ST_PARSE_H

#include "trainplan.h"

#include <string.h>

static struct tp_st_header parse_text(const char *json, uint64_t data_bytes)
{
    static unsigned char buf[4096];
    size_t n = strlen(json);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(n >> (8 * i));
    memcpy(buf + 8, json, n);
    struct tp_st_header h;
    struct tp_error err;
    assert_int_equal(tp_st_parse(buf, 8 + n, 8 + n + data_bytes, &h, &err), TP_OK);
    return h;
}

static void assert_kind(struct tp_st_header *h, enum tp_ckpt_kind kind, const char *tensor)
{
    assert_int_equal(h->n_problems, 1);
    assert_int_equal(h->problems[0].kind, kind);
    assert_string_equal(h->problems[0].tensor, tensor);
    tp_st_header_free(h);
}

#endif
