/*
 * numfmt.c - numbers read and written the same in every locale.
 *
 * strtod and printf follow LC_NUMERIC: a host program (a Python session, a GUI) that selects a
 * comma-decimal locale would make the library read "8412.3" as 8412 and write "0,5" into JSON
 * and runs files.  Every conversion in the library goes through these, which switch the calling
 * thread alone to the C locale for the call (POSIX uselocale: no process-wide state changes, so
 * other threads keep theirs).
 */
#include "base_internal.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The calling thread in the C numeric locale until c_leave(); (locale_t)0 when newlocale
   failed, and then the conversion runs in the thread's own locale. */
static locale_t c_enter(locale_t *old)
{
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    *old = c ? uselocale(c) : (locale_t)0;
    return c;
}

static void c_leave(locale_t c, locale_t old)
{
    if (c) {
        uselocale(old);
        freelocale(c);
    }
}

double tp_strtod(const char *s, char **end)
{
    locale_t old, c = c_enter(&old);
    double v = strtod(s, end);
    c_leave(c, old);
    return v;
}

int tp_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
    locale_t old, c = c_enter(&old);
    int n = vsnprintf(buf, len, fmt, ap);
    c_leave(c, old);
    return n;
}

int tp_snprintf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = tp_vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n;
}

void tp_fmt_count(char *buf, size_t len, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    if (len)
        buf[o] = '\0';
}

void tp_fmt_si(char *buf, size_t len, double v)
{
    static const char *const suffix[] = {"", "K", "M", "B", "T", "P"};
    int i = 0;
    double x = fabs(v);
    while (x >= 999.995 && i < 5) {
        x /= 1000;
        i++;
    }
    tp_snprintf(buf, len, "%s%.*f%s", v < 0 ? "-" : "", i == 0 ? 0 : 2, x, suffix[i]);
}
