/*
 * runs_check.c - what a runs-file cell may hold (docs/runs-file.md, "What is refused"): plain
 * decimal numbers (no hex floats, inf or nan, no units), the values an enumerated column names
 * (no substring matching: "notfp8" is not fp8), booleans 0/1/true/false, and cells that agree
 * with one another (the global batch with micro-batch x accumulation x dp); and text echoed
 * back with its control characters escaped.
 */
#include "runs_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

size_t tp_text_escape(const char *s, char *out, size_t len)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t o = 0, written = 0;
    bool full = false; /* a unit did not fit: nothing after it is written (no cut sequence) */
    for (size_t i = 0; p[i];) {
        unsigned c = p[i];
        size_t n = 1;
        bool esc = c < 0x20 || c == 0x7f;
        if (c >= 0x80) { /* a UTF-8 sequence is kept whole; a stray byte or C1 control is not */
            n = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c <= 0xf4 ? 4
                                                                                          : 0;
            for (size_t k = 1; k < n; k++)
                if ((p[i + k] & 0xc0) != 0x80)
                    n = 0;
            esc = n == 0 || (c == 0xc2 && p[i + 1] < 0xa0); /* U+0080..U+009F: C1 controls */
            n = n ? n : 1;
        }
        char unit[32];
        size_t w = 0;
        for (size_t k = 0; k < n; k++) {
            if (esc)
                w += (size_t)snprintf(unit + w, sizeof unit - w, "\\x%02x", p[i + k]);
            else
                unit[w++] = (char)p[i + k];
        }
        full = full || o + w >= len;
        if (!full) {
            memcpy(out + o, unit, w);
            written = o + w;
        }
        o += w;
        i += n;
    }
    if (len)
        out[written] = '\0';
    return o;
}

bool tp_row_plain_number(const char *s)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        size_t exp = strspn(p, "0123456789");
        if (exp == 0)
            return false;
        p += exp;
    }
    return *p == '\0';
}

enum tp_status tp_row_enum(const struct row *r, const char *col, const char *const *names,
                           size_t n, int *out)
{
    const char *v = tp_row_cell(r, col);
    *out = -1;
    if (!*v)
        return TP_OK;
    for (size_t i = 0; i < n; i++) /* exact: the recipes compare the cell itself */
        if (strcmp(v, names[i]) == 0) {
            *out = (int)i;
            return TP_OK;
        }
    char list[320];
    size_t o = 0;
    for (size_t i = 0; i < n && o < sizeof list; i++) {
        int w = snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", names[i]);
        o += w > 0 ? (size_t)w : 0;
    }
    return tp_fail(r->err, TP_EINVAL, "%s \"%s\" is not a known value (%s)", col, v, list);
}

enum tp_status tp_row_bool(const struct row *r, const char *col, bool dflt, bool *out)
{
    const char *v = tp_row_cell(r, col);
    if (!*v)
        *out = dflt;
    else if (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0)
        *out = true;
    else if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0)
        *out = false;
    else
        return tp_fail(r->err, TP_EINVAL, "%s \"%s\" is not a boolean (1, 0, true or false)",
                       col, v);
    return TP_OK;
}

enum tp_status tp_row_check_batch(const struct row *r, const struct tp_run *run, uint32_t gbs)
{
    const struct tp_layout *l = &run->layout;
    if (!gbs || run->global_batch == (double)gbs)
        return TP_OK;
    /* a global batch the row states that its micro-batch, accumulation and data-parallel size
       do not make: a measured step time would be converted with the wrong batch */
    bool mb = *tp_row_cell(r, "micro_batch") != '\0', ga = *tp_row_cell(r, "grad_accum") != '\0';
    if (mb && ga)
        return tp_fail(r->err, TP_EINVAL, "global_batch %u differs from micro_batch x grad_accum "
                       "x dp = %u x %u x %u = %.0f", gbs, l->mbs, l->gas, l->dp,
                       run->global_batch);
    if (mb || ga)
        return tp_fail(r->err, TP_EINVAL, "global_batch %u is not a multiple of %s x dp = %u x "
                       "%u", gbs, mb ? "micro_batch" : "grad_accum", mb ? l->mbs : l->gas, l->dp);
    return tp_fail(r->err, TP_EINVAL, "global_batch %u is not a multiple of dp = %u", gbs, l->dp);
}
