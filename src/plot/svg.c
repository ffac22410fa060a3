/*
 * svg.c - the SVG document the charts write into: a growing string, XML escaping, scales with
 * round ticks (linear and log10), axes, marks and the legend.  No plotting dependency: SVG is
 * text, and a chart is a few rectangles, lines and labels.
 */
#include "svg_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *svg_colour(int i)
{
    /* Okabe & Ito (2008) in the order that keeps neighbours apart: blue, orange, bluish green,
       vermillion, sky blue, reddish purple, yellow, black */
    static const char *const OKABE_ITO[8] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                             "#56B4E9", "#CC79A7", "#F0E442", "#000000"};
    return OKABE_ITO[((i % 8) + 8) % 8];
}

void tp_svg_free(struct tp_svg *s)
{
    if (!s)
        return;
    free(s->data);
    s->data = NULL;
    s->len = s->cap = 0;
}

static bool grow(struct tp_svg *s, size_t need)
{
    if (s->failed)
        return false;
    if (s->len + need + 1 <= s->cap)
        return true;
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < s->len + need + 1) {
        if (cap > SIZE_MAX / 2) {
            s->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(s->data, cap);
    if (!p) {
        s->failed = true;
        return false;
    }
    s->data = p;
    s->cap = cap;
    return true;
}

void svg_put(struct tp_svg *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = tp_vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0 || !grow(s, (size_t)n))
        return;
    if ((size_t)n < sizeof small) {
        memcpy(s->data + s->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        tp_vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    s->len += (size_t)n;
}

void svg_text_escaped(struct tp_svg *s, const char *text)
{
    for (const char *p = text ? text : ""; *p; p++) {
        switch (*p) {
        case '&': svg_put(s, "&amp;"); break;
        case '<': svg_put(s, "&lt;"); break;
        case '>': svg_put(s, "&gt;"); break;
        case '"': svg_put(s, "&quot;"); break;
        case '\'': svg_put(s, "&apos;"); break;
        default:
            /* XML 1.0 forbids the other C0 controls even escaped */
            if ((unsigned char)*p >= 0x20 || *p == '\t' || *p == '\n')
                svg_put(s, "%c", *p);
        }
    }
}

void svg_text(struct tp_svg *s, double x, double y, const char *anchor, double size,
              const char *extra, const char *text)
{
    svg_put(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\"%s%s>", x, y,
            anchor, size, extra[0] ? " " : "", extra);
    svg_text_escaped(s, text);
    svg_put(s, "</text>\n");
}

void svg_begin(struct tp_svg *s, const char *title, int height)
{
    svg_put(s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
            "<title>",
            SVG_W, height, SVG_W, height);
    svg_text_escaped(s, title);
    svg_put(s, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
}

void svg_heading(struct tp_svg *s, const char *title, const char *subtitle)
{
    svg_text(s, SVG_LEFT, 28, "start", 18, "font-weight=\"bold\"", title);
    if (subtitle && subtitle[0])
        svg_text(s, SVG_LEFT, 50, "start", 13, "fill=\"#444444\"", subtitle);
}

void svg_end(struct tp_svg *s)
{
    svg_put(s, "</svg>\n");
}

static double nice_step(double span)
{
    double raw = span / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

void svg_scale_fit(struct svg_scale *sc, double min, double max, bool log, bool from_zero)
{
    sc->log = log;
    if (log) {
        double a = floor(log10(min)), b = ceil(log10(max));
        if (b <= a)
            b = a + 1;
        sc->lo = pow(10, a);
        sc->hi = pow(10, b);
        return;
    }
    if (from_zero && min > 0)
        min = 0;
    if (!(max > min)) {
        double d = fabs(min) > 0 ? fabs(min) * 0.1 : 1;
        min -= d;
        max += d;
    }
    double st = nice_step(max - min);
    sc->lo = floor(min / st) * st;
    sc->hi = ceil(max / st) * st;
}

double svg_map(const struct svg_scale *sc, double v)
{
    double f = sc->log ? (log10(v) - log10(sc->lo)) / (log10(sc->hi) - log10(sc->lo))
                       : (v - sc->lo) / (sc->hi - sc->lo);
    return sc->p0 + f * (sc->p1 - sc->p0);
}

void svg_tick_label(char *buf, size_t len, double v)
{
    static const struct {
        double f;
        const char *suffix;
    } SI[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e4, "k"}};
    double a = fabs(v);
    for (size_t i = 0; i < sizeof SI / sizeof SI[0]; i++)
        if (a >= SI[i].f) {
            double k = SI[i].f == 1e4 ? 1e3 : SI[i].f;
            tp_snprintf(buf, len, "%g%s", v / k, SI[i].suffix);
            return;
        }
    if (a != 0 && a < 1e-3)
        tp_snprintf(buf, len, "%.0e", v);
    else
        tp_snprintf(buf, len, "%.6g", v);
}

/* The tick values of a scale, at most `cap`. */
static size_t ticks(const struct svg_scale *sc, double *out, size_t cap)
{
    size_t n = 0;
    if (sc->log) {
        double decades = log10(sc->hi / sc->lo);
        static const double SUB[] = {1, 2, 5};
        size_t per = decades <= 2.5 ? 3 : 1;
        for (double d = sc->lo; d <= sc->hi * 1.0001 && n < cap; d *= 10)
            for (size_t i = 0; i < per && n < cap; i++)
                if (d * SUB[i] <= sc->hi * 1.0001)
                    out[n++] = d * SUB[i];
        return n;
    }
    double st = nice_step(sc->hi - sc->lo);
    for (double v = sc->lo; v <= sc->hi + st * 1e-6 && n < cap; v += st)
        out[n++] = fabs(v) < st * 1e-9 ? 0 : v;
    return n;
}

void svg_axis(struct tp_svg *s, const struct svg_scale *sc, bool vertical, const char *title)
{
    double t[64];
    size_t n = ticks(sc, t, 64);
    for (size_t i = 0; i < n; i++) {
        double p = svg_map(sc, t[i]);
        char lab[32];
        svg_tick_label(lab, sizeof lab, t[i]);
        if (vertical) {
            svg_put(s, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
                    SVG_LEFT, p, SVG_W - SVG_RIGHT, p);
            svg_text(s, SVG_LEFT - 6, p + 4, "end", 12, "", lab);
        } else {
            svg_put(s, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dddddd\"/>\n",
                    p, SVG_TOP, p, SVG_H - SVG_BOTTOM);
            svg_text(s, p, SVG_H - SVG_BOTTOM + 18, "middle", 12, "", lab);
        }
    }
    if (vertical) {
        svg_put(s, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
                SVG_LEFT, SVG_TOP, SVG_LEFT, SVG_H - SVG_BOTTOM);
        char rot[64];
        double cy = (SVG_TOP + SVG_H - SVG_BOTTOM) / 2.0;
        tp_snprintf(rot, sizeof rot, "transform=\"rotate(-90 18 %.1f)\"", cy);
        svg_text(s, 18, cy, "middle", 13, rot, title);
    } else {
        svg_put(s, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
                SVG_LEFT, SVG_H - SVG_BOTTOM, SVG_W - SVG_RIGHT, SVG_H - SVG_BOTTOM);
        svg_text(s, (SVG_LEFT + SVG_W - SVG_RIGHT) / 2.0, SVG_H - 14, "middle", 13, "", title);
    }
}

void svg_mark(struct tp_svg *s, double x, double y, enum tp_mark mark, int colour, bool hollow)
{
    const char *c = svg_colour(colour);
    char paint[80];
    tp_snprintf(paint, sizeof paint, "fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"",
             hollow ? "#ffffff" : c, c);
    switch (mark) {
    case TP_MARK_SQUARE:
        svg_put(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" %s/>\n", x - 4.5,
                y - 4.5, paint);
        break;
    case TP_MARK_DIAMOND:
        svg_put(s, "<path d=\"M%.1f %.1fl5.5 5.5l-5.5 5.5l-5.5 -5.5z\" %s/>\n", x, y - 5.5,
                paint);
        break;
    case TP_MARK_TRIANGLE:
        svg_put(s, "<path d=\"M%.1f %.1fl5.5 9.5h-11z\" %s/>\n", x, y - 6, paint);
        break;
    case TP_MARK_NONE:
        break;
    case TP_MARK_DOT:
    default:
        svg_put(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" %s/>\n", x, y, paint);
    }
}

void svg_legend_entry(struct svg_legend *lg, int kind, int colour, enum tp_mark mark,
                      bool hollow, const char *name)
{
    if (!name || !name[0])
        return;
    struct tp_svg *s = lg->s;
    const char *c = svg_colour(colour);
    if (kind == 0)
        svg_put(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
                lg->x, lg->y - 10, c);
    else if (kind == 1)
        svg_mark(s, lg->x + 6, lg->y - 4, mark, colour, hollow);
    else
        svg_put(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2.5\"%s/>\n",
                lg->x, lg->y - 4, lg->x + 14, lg->y - 4, c,
                hollow ? " stroke-dasharray=\"5 3\"" : "");
    char cut[27]; /* what fits beside the plot area at 12 px: 25 characters */
    size_t n = strlen(name);
    if (n >= sizeof cut - 4) {
        n = sizeof cut - 5;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--; /* not inside a UTF-8 sequence */
        memcpy(cut, name, n);
        memcpy(cut + n, "...", 4);
    } else {
        memcpy(cut, name, n + 1);
    }
    svg_text(s, lg->x + 20, lg->y, "start", 12, "", cut);
    lg->y += 19;
}
