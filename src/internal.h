/*
 * internal.h - helpers shared by the library's source files; not installed, not public.
 */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include "trainplan.h"

#if defined(__GNUC__) || defined(__clang__)
#define TP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TP_PRINTF(a, b)
#endif

/* Writes a formatted one-line message into err (if not NULL) and returns st. */
enum tp_status tp_fail(struct tp_error *err, enum tp_status st, const char *fmt, ...) TP_PRINTF(3, 4);

/* Returns from the calling function when `expr` (an enum tp_status) is not TP_OK. */
#define TRY(expr)                                                                                 \
    do {                                                                                          \
        enum tp_status st_ = (expr);                                                              \
        if (st_ != TP_OK)                                                                         \
            return st_;                                                                           \
    } while (0)

/* Case-insensitive ASCII string equality. */
bool tp_streq_ci(const char *a, const char *b);

/* Levenshtein distance between two short ASCII strings (case-insensitive), capped at 99. */
unsigned tp_edit_distance(const char *a, const char *b);

#endif
