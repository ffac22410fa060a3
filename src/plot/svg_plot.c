/*
 * svg_plot.c - the two charts every plot of the CLI and the page is made of: x-y (lines,
 * points, ranges, labels, identity bands, marker lines; linear or log axes) and stacked bars
 * (vertical or horizontal, with a limit line).  The document primitives are in svg.c.
 */
#include "svg_internal.h"

#include <math.h>

static bool drawable(double v, bool log)
{
    return isfinite(v) && (!log || v > 0);
}

/* The range of the drawable values of every series, x and y; false when there is none. */
static bool xy_extent(const struct tp_plot_xy *p, double *x0, double *x1, double *y0,
                      double *y1)
{
    *x0 = *y0 = INFINITY;
    *x1 = *y1 = -INFINITY;
    for (size_t k = 0; k < p->n_series; k++) {
        const struct tp_plot_series *se = &p->series[k];
        for (size_t i = 0; i < se->n; i++) {
            if (!drawable(se->x[i], p->x_log) || !drawable(se->y[i], p->y_log))
                continue;
            *x0 = fmin(*x0, se->x[i]);
            *x1 = fmax(*x1, se->x[i]);
            double lo = se->y[i], hi = se->y[i];
            if (se->y_lo && drawable(se->y_lo[i], p->y_log))
                lo = fmin(lo, se->y_lo[i]);
            if (se->y_hi && drawable(se->y_hi[i], p->y_log))
                hi = fmax(hi, se->y_hi[i]);
            *y0 = fmin(*y0, lo);
            *y1 = fmax(*y1, hi);
        }
    }
    return *x0 <= *x1;
}

/* y = x with the +-10% and +-25% bands, clipped to the plot area. */
static void identity_bands(struct tp_svg *s, const struct svg_scale *xs,
                           const struct svg_scale *ys, size_t panel)
{
    static const double BAND[2] = {0.25, 0.10};
    static const char *const FILL[2] = {"#e8e8e8", "#cfcfcf"};
    for (int b = 0; b < 2; b++) {
        double lo = 1 - BAND[b], hi = 1 + BAND[b];
        double a = xs->lo, z = xs->hi;
        svg_put(s,
                "<path clip-path=\"url(#plot%zu)\" fill=\"%s\" d=\"M%.1f %.1fL%.1f %.1fL%.1f "
                "%.1fL%.1f %.1fz\"/>\n",
                panel, FILL[b], svg_map(xs, a), svg_map(ys, a * lo), svg_map(xs, z), svg_map(ys, z * lo),
                svg_map(xs, z), svg_map(ys, z * hi), svg_map(xs, a), svg_map(ys, a * hi));
    }
    svg_put(s,
            "<line clip-path=\"url(#plot%zu)\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
            "y2=\"%.1f\" stroke=\"#555555\" stroke-width=\"1.2\"/>\n",
            panel, svg_map(xs, xs->lo), svg_map(ys, xs->lo), svg_map(xs, xs->hi), svg_map(ys, xs->hi));
}

static void clip_plot_area(struct tp_svg *s, size_t panel)
{
    svg_put(s,
            "<defs><clipPath id=\"plot%zu\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
            "</clipPath></defs>\n",
            panel, SVG_LEFT, SVG_TOP, SVG_W - SVG_LEFT - SVG_RIGHT, SVG_H - SVG_TOP - SVG_BOTTOM);
}

static void draw_series(struct tp_svg *s, const struct tp_plot_xy *p, size_t k,
                        const struct svg_scale *xs, const struct svg_scale *ys)
{
    const struct tp_plot_series *se = &p->series[k];
    int col = se->colour >= 0 ? se->colour : (int)k;
    const char *c = svg_colour(col);
    if (se->line) {
        bool pen = false;
        svg_put(s, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" d=\"", c);
        for (size_t i = 0; i < se->n; i++) {
            if (!drawable(se->x[i], p->x_log) || !drawable(se->y[i], p->y_log)) {
                pen = false;
                continue;
            }
            svg_put(s, "%s%.1f %.1f", pen ? "L" : "M", svg_map(xs, se->x[i]),
                    svg_map(ys, se->y[i]));
            pen = true;
        }
        svg_put(s, "\"/>\n");
    }
    for (size_t i = 0; i < se->n; i++) {
        if (!drawable(se->x[i], p->x_log) || !drawable(se->y[i], p->y_log))
            continue;
        double x = svg_map(xs, se->x[i]), y = svg_map(ys, se->y[i]);
        if (se->y_lo && se->y_hi && drawable(se->y_lo[i], p->y_log) &&
            drawable(se->y_hi[i], p->y_log))
            svg_put(s,
                    "<path stroke=\"%s\" stroke-width=\"1.2\" d=\"M%.1f %.1fV%.1fM%.1f "
                    "%.1fh8M%.1f %.1fh8\"/>\n",
                    c, x, svg_map(ys, se->y_lo[i]), svg_map(ys, se->y_hi[i]), x - 4,
                    svg_map(ys, se->y_lo[i]), x - 4, svg_map(ys, se->y_hi[i]));
        svg_mark(s, x, y, se->mark, col, se->hollow);
        if (se->labels && se->labels[i] && se->labels[i][0])
            svg_text(s, x + 7, y - 7, "start", 10, "fill=\"#222222\"", se->labels[i]);
    }
}

static enum tp_status xy_check(const struct tp_plot_xy *p, struct tp_error *err)
{
    if (!p->series || p->n_series == 0)
        return tp_fail(err, TP_EINVAL, "plot: no series to draw");
    for (size_t k = 0; k < p->n_series; k++)
        if (!p->series[k].x || !p->series[k].y)
            return tp_fail(err, TP_EINVAL, "plot: series %zu has no points", k);
    double x0, x1, y0, y1;
    if (!xy_extent(p, &x0, &x1, &y0, &y1))
        return tp_fail(err, TP_EINVAL, "plot '%s': no point to draw%s", p->title ? p->title : "",
                       p->x_log || p->y_log ? " (log axes need positive values)" : "");
    return TP_OK;
}

/* One x-y chart in the panel's own coordinates. */
static void draw_xy(struct tp_svg *out, const struct tp_plot_xy *p, size_t panel)
{
    double x0, x1, y0, y1;
    xy_extent(p, &x0, &x1, &y0, &y1);
    for (size_t v = 0; v < p->n_vlines; v++)
        if (drawable(p->vlines[v].x, p->x_log)) {
            x0 = fmin(x0, p->vlines[v].x);
            x1 = fmax(x1, p->vlines[v].x);
        }
    struct svg_scale xs = {.p0 = SVG_LEFT, .p1 = SVG_W - SVG_RIGHT};
    struct svg_scale ys = {.p0 = SVG_H - SVG_BOTTOM, .p1 = SVG_TOP};
    if (p->identity_bands) { /* one range on both axes, so y = x is the diagonal */
        x0 = y0 = fmin(x0, y0);
        x1 = y1 = fmax(x1, y1);
    }
    svg_scale_fit(&xs, x0, x1, p->x_log, false);
    svg_scale_fit(&ys, y0, y1, p->y_log, false);
    svg_heading(out, p->title, p->subtitle);
    clip_plot_area(out, panel);
    svg_axis(out, &xs, false, p->x_label);
    svg_axis(out, &ys, true, p->y_label);
    struct svg_legend lg = {out, SVG_W - SVG_RIGHT + 16, SVG_TOP + 10};
    if (p->identity_bands) {
        identity_bands(out, &xs, &ys, panel);
        svg_put(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#cfcfcf\"/>\n",
                lg.x, lg.y - 10);
        svg_text(out, lg.x + 20, lg.y, "start", 12, "", "within 10%");
        lg.y += 19;
        svg_put(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#e8e8e8\"/>\n",
                lg.x, lg.y - 10);
        svg_text(out, lg.x + 20, lg.y, "start", 12, "", "within 25%");
        lg.y += 19;
    }
    for (size_t v = 0; v < p->n_vlines; v++) {
        if (!drawable(p->vlines[v].x, p->x_log))
            continue;
        double x = svg_map(&xs, p->vlines[v].x);
        svg_put(out,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#555555\" "
                "stroke-dasharray=\"6 4\"/>\n",
                x, SVG_TOP, x, SVG_H - SVG_BOTTOM);
        svg_text(out, x + 4, SVG_TOP + 12 + 14.0 * (double)v, "start", 11, "fill=\"#333333\"",
                 p->vlines[v].label);
    }
    for (size_t k = 0; k < p->n_series; k++) {
        const struct tp_plot_series *se = &p->series[k];
        draw_series(out, p, k, &xs, &ys);
        if (lg.y > SVG_H - 24)
            continue; /* the legend is full; the points are drawn */
        int col = se->colour >= 0 ? se->colour : (int)k;
        svg_legend_entry(&lg, se->mark == TP_MARK_NONE ? 2 : 1, col, se->mark, se->hollow,
                         se->name);
    }
}

enum tp_status tp_svg_panels(const struct tp_plot_xy *p, size_t n, struct tp_svg *out,
                             struct tp_error *err)
{
    if (!p || n == 0 || !out)
        return tp_fail(err, TP_EINVAL, "plot: no chart to draw");
    for (size_t i = 0; i < n; i++)
        TRY(xy_check(&p[i], err));
    svg_begin(out, p[0].title, SVG_H * (int)n);
    for (size_t i = 0; i < n; i++) {
        svg_put(out, "<svg y=\"%d\" width=\"%d\" height=\"%d\">\n", SVG_H * (int)i, SVG_W,
                SVG_H);
        draw_xy(out, &p[i], i);
        svg_put(out, "</svg>\n");
    }
    svg_end(out);
    return out->failed ? tp_fail(err, TP_ENOMEM, "plot: out of memory") : TP_OK;
}

enum tp_status tp_svg_xy(const struct tp_plot_xy *p, struct tp_svg *out, struct tp_error *err)
{
    return tp_svg_panels(p, 1, out, err);
}



static enum tp_status bars_check(const struct tp_plot_bars *p, struct tp_error *err)
{
    if (!p || !p->values || !p->bar_names || !p->seg_names || p->n_bars == 0 || p->n_segs == 0)
        return tp_fail(err, TP_EINVAL, "plot: no bars to draw");
    for (size_t i = 0; i < p->n_bars * p->n_segs; i++)
        if (!isfinite(p->values[i]) || p->values[i] < 0)
            return tp_fail(err, TP_EINVAL, "plot '%s': segment '%s' of bar '%s' is %g",
                           p->title ? p->title : "", p->seg_names[i % p->n_segs],
                           p->bar_names[i / p->n_segs], p->values[i]);
    return TP_OK;
}

/* A segment's colour: its rank among the segments some bar uses, so that the segments drawn
   take the palette's first colours and no two of the first eight share one. */
static int seg_colour(const struct tp_plot_bars *p, size_t k)
{
    int rank = 0;
    for (size_t j = 0; j < k; j++)
        for (size_t b = 0; b < p->n_bars; b++)
            if (p->values[b * p->n_segs + j] > 0) {
                rank++;
                break;
            }
    return rank;
}

/* One bar's segments from the value axis' zero; `at` is the bar's centre across. */
static void bar_segments(struct tp_svg *s, const struct tp_plot_bars *p, size_t b,
                         const struct svg_scale *vs, double at, double width, double total)
{
    double acc = 0;
    for (size_t k = 0; k < p->n_segs; k++) {
        double v = p->values[b * p->n_segs + k];
        if (v <= 0)
            continue;
        double a = svg_map(vs, acc), z = svg_map(vs, acc + v);
        acc += v;
        double x, y, w, h;
        if (p->horizontal) {
            x = a, w = z - a, y = at - width / 2, h = width;
        } else {
            x = at - width / 2, w = width, y = z, h = a - z;
        }
        svg_put(s,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                "stroke=\"#ffffff\" stroke-width=\"0.8\"><title>",
                x, y, w, h, svg_colour(seg_colour(p, k)));
        svg_text_escaped(s, p->seg_names[k]);
        svg_put(s, ": %.4g (%.1f%%)</title></rect>\n", v, 100 * v / total);
        double share = 100 * v / total;
        if (p->horizontal && w > 46 && share >= 1) {
            char lab[24];
            tp_snprintf(lab, sizeof lab, "%.0f%%", share);
            int c = seg_colour(p, k) % 8; /* dark text on the light colours */
            svg_text(s, x + w / 2, y + h / 2 + 4, "middle", 11,
                     c == 1 || c == 4 || c == 6 ? "fill=\"#000000\"" : "fill=\"#ffffff\"", lab);
        }
    }
}

enum tp_status tp_svg_bars(const struct tp_plot_bars *p, struct tp_svg *out, struct tp_error *err)
{
    TRY(bars_check(p, err));
    if (!out)
        return tp_fail(err, TP_EINVAL, "plot: no document");
    double max = 0;
    for (size_t b = 0; b < p->n_bars; b++) {
        double t = 0;
        for (size_t k = 0; k < p->n_segs; k++)
            t += p->values[b * p->n_segs + k];
        max = fmax(max, t);
    }
    bool limit = isfinite(p->limit) && p->limit > 0;
    if (limit)
        max = fmax(max, p->limit);
    struct svg_scale vs;
    if (p->horizontal)
        vs = (struct svg_scale){.p0 = SVG_LEFT, .p1 = SVG_W - SVG_RIGHT};
    else
        vs = (struct svg_scale){.p0 = SVG_H - SVG_BOTTOM, .p1 = SVG_TOP};
    svg_scale_fit(&vs, 0, max > 0 ? max * 1.04 : 1, false, true);
    svg_begin(out, p->title, SVG_H);
    svg_heading(out, p->title, p->subtitle);
    svg_axis(out, &vs, !p->horizontal, p->value_label);
    double span = p->horizontal ? SVG_H - SVG_TOP - SVG_BOTTOM : SVG_W - SVG_LEFT - SVG_RIGHT;
    double slot = span / (double)p->n_bars, width = fmin(slot * 0.6, 90);
    for (size_t b = 0; b < p->n_bars; b++) {
        double total = 0;
        for (size_t k = 0; k < p->n_segs; k++)
            total += p->values[b * p->n_segs + k];
        double at = (p->horizontal ? SVG_TOP : SVG_LEFT) + slot * ((double)b + 0.5);
        if (total > 0)
            bar_segments(out, p, b, &vs, at, width, total);
        char lab[32];
        if (total < 1e4)
            tp_snprintf(lab, sizeof lab, "%.4g", total);
        else
            svg_tick_label(lab, sizeof lab, total);
        if (p->horizontal) {
            svg_text(out, SVG_LEFT - 6, at + 4, "end", 12, "", p->bar_names[b]);
            svg_text(out, svg_map(&vs, total) + 4, at - width / 2 - 4, "end", 12,
                     "font-weight=\"bold\"", lab);
        } else {
            svg_text(out, at, SVG_H - SVG_BOTTOM + 34, "middle", 12, "", p->bar_names[b]);
            svg_text(out, at, svg_map(&vs, total) - 5, "middle", 12, "font-weight=\"bold\"", lab);
        }
    }
    if (limit) {
        double v = svg_map(&vs, p->limit);
        if (p->horizontal)
            svg_put(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"", v, SVG_TOP, v,
                    SVG_H - SVG_BOTTOM);
        else
            svg_put(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"", SVG_LEFT, v,
                    SVG_W - SVG_RIGHT, v);
        svg_put(out, " stroke=\"#000000\" stroke-width=\"2\" stroke-dasharray=\"8 4\"/>\n");
        if (p->horizontal)
            svg_text(out, v - 4, SVG_TOP - 6, "end", 12, "font-weight=\"bold\"", p->limit_label);
        else
            svg_text(out, SVG_W - SVG_RIGHT - 4, v - 6, "end", 12, "font-weight=\"bold\"",
                     p->limit_label);
    }
    struct svg_legend lg = {out, SVG_W - SVG_RIGHT + 16, SVG_TOP + 10};
    for (size_t k = p->n_segs; k-- > 0;) { /* top of the stack first */
        bool used = false;
        for (size_t b = 0; b < p->n_bars; b++)
            used = used || p->values[b * p->n_segs + k] > 0;
        if (used && lg.y <= SVG_H - 24)
            svg_legend_entry(&lg, 0, seg_colour(p, k), TP_MARK_DOT, false, p->seg_names[k]);
    }
    svg_end(out);
    return out->failed ? tp_fail(err, TP_ENOMEM, "plot: out of memory") : TP_OK;
}
