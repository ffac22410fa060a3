/*
 * fuzz.h - what the libFuzzer targets (fuzz/fuzz_*.c) share: the entry point's prototype and
 * the check that turns a "lie" (a negative or non-finite figure after TP_OK) into a finding.
 *
 * Each target is built twice: with clang -fsanitize=fuzzer,address,undefined by `make fuzz`,
 * and with any compiler against fuzz/replay.c, the plain main that `make test` uses to replay
 * the committed reproducers (tests/fuzz-regressions/<name>/) and the seeds (fuzz/corpus/<name>/).
 */
#ifndef TP_FUZZ_H
#define TP_FUZZ_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A figure a successful call returned must be finite and >= 0 (NaN stands for "not stated"
   where `nan_ok`); anything else is a wrong answer printed as a normal one: abort. */
static inline void fuzz_sane(double v, int nan_ok, const char *what)
{
    if (isnan(v) && nan_ok)
        return;
    if (!isfinite(v) || v < 0) {
        fprintf(stderr, "fuzz: %s = %g after TP_OK\n", what, v);
        abort();
    }
}

#endif
