/*
 * svg_internal.h - the SVG document, scales, axes and legend shared by the charts (svg.c) and
 * the charts themselves (svg_plot.c).  Not public.
 */
#ifndef TP_SVG_INTERNAL_H
#define TP_SVG_INTERNAL_H

#include "base_internal.h"

/* The canvas: a chart fills W x H pixels; the plot area leaves room for the title and
   subtitle above, the x axis below, the y axis left and the legend right. */
enum { SVG_W = 880, SVG_H = 520, SVG_LEFT = 84, SVG_RIGHT = 220, SVG_TOP = 72, SVG_BOTTOM = 60 };

/* Okabe & Ito (2008), "Color Universal Design": eight colours told apart under the common
   colour-vision deficiencies. */
const char *svg_colour(int i);

/* Appends printf-formatted text; on a failed allocation marks the document failed. */
void svg_put(struct tp_svg *s, const char *fmt, ...) TP_PRINTF(2, 3);
/* Appends text with &, <, >, " and ' escaped for XML. */
void svg_text_escaped(struct tp_svg *s, const char *text);
/* <text x y anchor size weight>escaped text</text>; `extra` is more attributes or "". */
void svg_text(struct tp_svg *s, double x, double y, const char *anchor, double size,
              const char *extra, const char *text);

/* The document's start (size, font, title, white background) and end; a chart's title and
   subtitle above its plot area. */
void svg_begin(struct tp_svg *s, const char *title, int height);
void svg_heading(struct tp_svg *s, const char *title, const char *subtitle);
void svg_end(struct tp_svg *s);

/* A linear or log10 axis from data [lo, hi] to pixels [p0, p1]. */
struct svg_scale {
    double lo, hi, p0, p1;
    bool log;
};
/* Picks a round range holding [min, max] (log: whole decades; linear: nice ticks, from 0 when
   `from_zero`). */
void svg_scale_fit(struct svg_scale *sc, double min, double max, bool log, bool from_zero);
double svg_map(const struct svg_scale *sc, double v);
/* A tick label: 0.25, 12, 3.5k, 70B, 1e-05. */
void svg_tick_label(char *buf, size_t len, double v);
/* Grid lines, ticks and their labels, and the axis title; `vertical`: a y axis. */
void svg_axis(struct tp_svg *s, const struct svg_scale *sc, bool vertical, const char *title);

/* Legend entries down the right margin, from y; `kind` 0: a filled square, 1: a mark of
   `mark` (hollow or not), 2: a line (dashed when `hollow`). */
struct svg_legend {
    struct tp_svg *s;
    double x, y;
};
void svg_legend_entry(struct svg_legend *lg, int kind, int colour, enum tp_mark mark,
                      bool hollow, const char *name);
/* One mark centred on (x, y). */
void svg_mark(struct tp_svg *s, double x, double y, enum tp_mark mark, int colour, bool hollow);

#endif
