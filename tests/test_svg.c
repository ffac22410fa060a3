/*
 * test_svg.c - the SVG charts (src/plot/svg.c, src/plot/svg_plot.c): the document's content for known
 * inputs, XML escaping, the Okabe-Ito colours, round log ticks, and the inputs refused.
 *
 * The colours are Okabe & Ito (2008), "Color Universal Design (CUD): how to make figures and
 * presentations that are friendly to colorblind people", https://jfly.uni-koeln.de/color/ :
 * blue #0072B2, orange #E69F00, bluish green #009E73.  Validity as XML is checked on the
 * CLI's files by tests/svg/check.sh (make test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainplan.h"

#include <math.h>
#include <string.h>

static void has(const struct tp_svg *s, const char *text)
{
    if (!s->data || !strstr(s->data, text))
        fail_msg("'%s' not in the document", text);
}

static void lacks(const struct tp_svg *s, const char *text)
{
    if (s->data && strstr(s->data, text))
        fail_msg("'%s' in the document", text);
}

static void test_bars_content(void **state)
{
    (void)state;
    static const char *const BARS[1] = {"stage 0"};
    static const char *const SEGS[3] = {"weights", "unused", "activations"};
    const double v[3] = {2, 0, 1};
    struct tp_plot_bars p = {"a<b & \"c\"", "sub", "GB", BARS, 1, SEGS, 3, v, 4.5,
                             "capacity 4.5 GB", false};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_svg_bars(&p, &doc, &err), TP_OK);
    assert_true(strncmp(doc.data, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    assert_int_equal(strlen(doc.data), doc.len);
    has(&doc, "<title>a&lt;b &amp; &quot;c&quot;</title>");
    has(&doc, ">3</text>");              /* the bar's total, 2 + 1 */
    has(&doc, ">capacity 4.5 GB</text>");
    has(&doc, "fill=\"#0072B2\"");       /* first segment drawn: Okabe-Ito blue */
    has(&doc, "fill=\"#E69F00\"");       /* second segment drawn: orange, not the unused one's */
    lacks(&doc, "#009E73");
    lacks(&doc, ">unused</text>");       /* a segment no bar uses is not in the legend */
    has(&doc, ">activations</text>");
    has(&doc, "</svg>\n");
    tp_svg_free(&doc);
    assert_null(doc.data);
}

static void test_bars_refused(void **state)
{
    (void)state;
    static const char *const BARS[1] = {"step"};
    static const char *const SEGS[2] = {"forward", "backward"};
    const double v[2] = {1, NAN};
    struct tp_plot_bars p = {"t", "", "s", BARS, 1, SEGS, 2, v, NAN, NULL, true};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_svg_bars(&p, &doc, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "'backward'"));
    const double neg[2] = {1, -0.5};
    p.values = neg;
    assert_int_equal(tp_svg_bars(&p, &doc, &err), TP_EINVAL);
    p.n_bars = 0;
    assert_int_equal(tp_svg_bars(&p, &doc, &err), TP_EINVAL);
    tp_svg_free(&doc);
}

static void test_xy_log_ticks_and_bands(void **state)
{
    (void)state;
    const double x[3] = {3, 300, 3000}, y[3] = {3.3, 250, 3100};
    struct tp_plot_series se = {"source A", x, y, NULL, NULL, NULL, 3, TP_MARK_DOT, false, false,
                                -1};
    struct tp_plot_xy p = {"predicted", "", "measured", "predicted", true, true, true, &se, 1,
                           NULL, 0};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_svg_xy(&p, &doc, &err), TP_OK);
    /* 3..3100 on log axes: whole decades 1..10000, labelled 1, 10, 100, 1000, 10k */
    has(&doc, ">1</text>");
    has(&doc, ">1000</text>");
    has(&doc, ">10k</text>");
    lacks(&doc, ">100k</text>");
    has(&doc, ">within 10%</text>");
    has(&doc, ">within 25%</text>");
    has(&doc, ">source A</text>");
    tp_svg_free(&doc);
}

static void test_xy_refused(void **state)
{
    (void)state;
    const double x[2] = {-1, 0}, y[2] = {1, 2};
    struct tp_plot_series se = {"s", x, y, NULL, NULL, NULL, 2, TP_MARK_DOT, false, false, 0};
    struct tp_plot_xy p = {"t", "", "x", "y", true, false, false, &se, 1, NULL, 0};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_svg_xy(&p, &doc, &err), TP_EINVAL);
    assert_non_null(strstr(err.msg, "positive"));
    p.n_series = 0;
    assert_int_equal(tp_svg_xy(&p, &doc, &err), TP_EINVAL);
    tp_svg_free(&doc);
}

static void test_panels(void **state)
{
    (void)state;
    const double x[2] = {1, 2}, y[2] = {5, 6};
    struct tp_plot_series se = {"s", x, y, NULL, NULL, NULL, 2, TP_MARK_NONE, true, false, 0};
    struct tp_plot_xy p[2] = {{"one", "", "x", "y", false, false, false, &se, 1, NULL, 0},
                              {"two", "", "x", "y", false, false, false, &se, 1, NULL, 0}};
    struct tp_svg doc = {0};
    struct tp_error err = {{0}, {0}};
    assert_int_equal(tp_svg_panels(p, 2, &doc, &err), TP_OK);
    has(&doc, "height=\"1040\"");        /* two 520-pixel charts */
    has(&doc, "id=\"plot0\"");
    has(&doc, "id=\"plot1\"");
    has(&doc, ">two</text>");
    tp_svg_free(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bars_content),
        cmocka_unit_test(test_bars_refused),
        cmocka_unit_test(test_xy_log_ticks_and_bands),
        cmocka_unit_test(test_xy_refused),
        cmocka_unit_test(test_panels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
