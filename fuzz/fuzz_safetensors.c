/*
 * fuzz_safetensors.c - libFuzzer target over tp_st_parse, the safetensors header parser that
 * `trainplan checkpoint` runs on every file it is given.  The input is the start of a file; it
 * is parsed as the whole file, and again as the head of a longer one (the data section larger
 * than the bytes at hand), so both the truncated and the in-bounds paths run.  Seeds:
 * fuzz/corpus/safetensors/.
 *
 *   clang -fsanitize=fuzzer,address,undefined -Iinclude fuzz/fuzz_safetensors.c \
 *         build/libtrainplan.a -ljansson -lgsl -lgslcblas -lcsv -lm
 */
#include "trainplan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The header's total is the sum of the tensors not excluded, or marked overflowed; never a
   wrapped sum, never one that counts a flagged tensor (issue 41). */
static void check_totals(const struct tp_st_header *h)
{
    uint64_t sum = 0;
    size_t excluded = 0;
    int overflow = 0;
    for (size_t i = 0; i < h->n_tensors; i++) {
        const struct tp_st_tensor *t = &h->tensors[i];
        if (t->excluded) {
            excluded++;
        } else if (t->elements > UINT64_MAX - sum) {
            overflow = 1;
            sum = UINT64_MAX;
        } else if (!overflow) {
            sum += t->elements;
        }
    }
    if (excluded != h->n_excluded || overflow != (int)h->params_overflow || sum != h->params) {
        fprintf(stderr, "fuzz: total %llu (overflow %d, %zu excluded) != %llu (%d, %zu)\n",
                (unsigned long long)h->params, (int)h->params_overflow, h->n_excluded,
                (unsigned long long)sum, overflow, excluded);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tp_st_header h;
    struct tp_error err;
    if (tp_st_parse(data, size, size, &h, &err) == TP_OK) {
        check_totals(&h);
        tp_st_header_free(&h);
    }
    if (tp_st_parse(data, size, (uint64_t)size + 4096, &h, &err) == TP_OK) {
        check_totals(&h);
        tp_st_header_free(&h);
    }
    return 0;
}
