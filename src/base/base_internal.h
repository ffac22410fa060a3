/*
 * base_internal.h - what the base floor (util.c, numfmt.c, names.c, abi.c) gives every file
 * of the library: errors, locale-independent numbers, checked arithmetic, growing arrays,
 * strings.  Not installed, not public.
 */
#ifndef TP_BASE_INTERNAL_H
#define TP_BASE_INTERNAL_H

#include "trainplan.h"

#include <stdarg.h>

#if defined(__GNUC__) || defined(__clang__)
#define TP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TP_PRINTF(a, b)
#endif

/* Writes a formatted one-line message into err (if not NULL) and returns st. */
enum tp_status tp_fail(struct tp_error *err, enum tp_status st, const char *fmt, ...) TP_PRINTF(3, 4);
/* Locale-independent number conversions (numfmt.c): strtod, snprintf and vsnprintf in the C
   locale whatever the calling thread's LC_NUMERIC is.  The library uses nothing else. */
double tp_strtod(const char *s, char **end);
int tp_snprintf(char *buf, size_t len, const char *fmt, ...) TP_PRINTF(3, 4);
int tp_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap) TP_PRINTF(3, 0);
/* tp_fail naming the input field the error is about (struct tp_error.field). */
enum tp_status tp_fail_field(struct tp_error *err, enum tp_status st, const char *field,
                             const char *fmt, ...) TP_PRINTF(4, 5);

/* Returns from the calling function when `expr` (an enum tp_status) is not TP_OK. */
#define TRY(expr)                                                                                 \
    do {                                                                                          \
        enum tp_status st_ = (expr);                                                              \
        if (st_ != TP_OK)                                                                         \
            return st_;                                                                           \
    } while (0)

/* a * b into *out unless it wraps 64 bits (then false, *out untouched). */
static inline bool tp_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b && a > UINT64_MAX / b)
        return false;
    *out = a * b;
    return true;
}

/* *sum += v unless it wraps 64 bits (then false and *sum = UINT64_MAX, so a total that cannot
   be formed stays visibly unknown instead of wrapping).  C11 has no checked arithmetic
   (__builtin_add_overflow is a GCC/Clang extension). */
static inline bool tp_add_u64(uint64_t *sum, uint64_t v)
{
    if (v > UINT64_MAX - *sum) {
        *sum = UINT64_MAX;
        return false;
    }
    *sum += v;
    return true;
}


/* a * b, or UINT32_MAX when it does not fit: a width computed from two counts then fails the
   range check instead of wrapping to a small (or zero) number. */
static inline uint32_t tp_mul_u32_sat(uint32_t a, uint32_t b)
{
    uint64_t p = (uint64_t)a * b;
    return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

/* Room for one more element in an array of n elements of elem bytes that grows by doubling:
   reallocated only when n is 0 or a power of two (its capacity then), so appending n elements
   costs O(n) copies, not O(n^2) as a fixed increment does on files of 10^5 entries.  Returns
   the array (moved or not), or NULL when out of memory or the size would overflow (the array
   is then unchanged and still owned by the caller). */
void *tp_grow(void *array, size_t n, size_t elem);

/* Case-insensitive ASCII string equality. */
bool tp_streq_ci(const char *a, const char *b);
/* Whether `name` is one of the '|'-separated entries of `list` (exact, case-sensitive): the
   catalog-key lists of the kernel tables ("h200|h100-sxm|h800"). */
bool tp_in_list(const char *list, const char *name);
/* Levenshtein distance between two short ASCII strings (case-insensitive), capped at 99. */
unsigned tp_edit_distance(const char *a, const char *b);

#endif
