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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tp_st_header h;
    struct tp_error err;
    if (tp_st_parse(data, size, size, &h, &err) == TP_OK)
        tp_st_header_free(&h);
    if (tp_st_parse(data, size, (uint64_t)size + 4096, &h, &err) == TP_OK)
        tp_st_header_free(&h);
    return 0;
}
