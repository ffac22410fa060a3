/*
 * util.c - error reporting and small string helpers used across the library.
 */
#include "base_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fail_v(struct tp_error *err, const char *field, const char *fmt, va_list ap)
    TP_PRINTF(3, 0);
static void fail_v(struct tp_error *err, const char *field, const char *fmt, va_list ap)
{
    tp_snprintf(err->field, sizeof err->field, "%s", field);
    tp_vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

enum tp_status tp_fail(struct tp_error *err, enum tp_status st, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        fail_v(err, "", fmt, ap);
        va_end(ap);
    }
    return st;
}

enum tp_status tp_fail_field(struct tp_error *err, enum tp_status st, const char *field,
                             const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        fail_v(err, field, fmt, ap);
        va_end(ap);
    }
    return st;
}

bool tp_streq_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

bool tp_in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, "|");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (p[len] == '|');
    }
    return false;
}

unsigned tp_edit_distance(const char *a, const char *b)
{
    enum { CAP = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= CAP || lb >= CAP)
        return 99;
    unsigned prev[CAP], cur[CAP];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
                                          tolower((unsigned char)b[j - 1]));
            unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(unsigned) * (lb + 1));
    }
    return prev[lb] > 99 ? 99 : prev[lb];
}

void *tp_grow(void *array, size_t n, size_t elem)
{
    if (n && (n & (n - 1)) != 0)
        return array;
    size_t cap = n ? 2 * n : 1;
    if (elem == 0 || cap > SIZE_MAX / elem)
        return NULL;
    return realloc(array, cap * elem);
}
