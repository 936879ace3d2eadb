/* core/render/, the text library of the report and the leaderboard: the growable buffer (its
 * cap, sticky failure and insertion), HTML and URL escaping (references, control characters,
 * invalid UTF-8, cuts at character boundaries), terminal escaping (control characters, escape
 * sequences, C1, bidirectional overrides, invalid UTF-8), the page number formats, the SVG
 * primitives (nice steps, axes, tick labels, shortened labels) and the bar chart in both of its
 * styles. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/escape.h"
#include "render/format.h"
#include "render/format_si.h"
#include "render/svg.h"
#include "render/svg_bars.h"
#include "render/svg_heatmap.h"
#include "render/svg_scatter.h"
#include "render/terminal.h"
#include "render/text.h"

/* The buffer TEXT_OF appends to, and its text after one call: a static copy, valid until the
 * next TEXT_OF. */
static struct xpb_text t_;

static const char *text_done(void)
{
    static char out[4096];
    assert_false(t_.failed);
    snprintf(out, sizeof out, "%s", t_.data ? t_.data : "");
    xpb_text_free(&t_);
    return out;
}

#define TEXT_OF(call) (xpb_text_free(&t_), (call), text_done())

static void test_text_grows_and_takes(void **state)
{
    (void)state;
    struct xpb_text t = {0};
    char *empty = xpb_text_take(&t, NULL);
    assert_string_equal(empty, ""); /* an empty buffer gives an empty string */
    free(empty);
    for (int i = 0; i < 1000; i++)
        xpb_text_printf(&t, "%04d,", i);
    xpb_text_puts(&t, NULL);
    xpb_text_putc(&t, '!');
    assert_int_equal(t.len, 5001);
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    xpb_text_printf(&t, "%s", big); /* longer than the small printf buffer */
    size_t len;
    char *s = xpb_text_take(&t, &len);
    assert_int_equal(len, 5001 + 599);
    assert_int_equal(strlen(s), len);
    assert_memory_equal(s, "0000,0001,", 10);
    assert_int_equal(s[5000], '!');
    free(s);
    assert_null(t.data);
    assert_int_equal(t.len, 0);
}

static void test_text_limit(void **state)
{
    (void)state;
    struct xpb_text t = {.limit = 10};
    xpb_text_puts(&t, "0123456789");
    assert_false(t.failed);
    xpb_text_putc(&t, 'x'); /* one past the cap: the content is incomplete from here on */
    assert_true(t.failed && t.too_large);
    xpb_text_puts(&t, "");
    assert_true(t.failed);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(xpb_text_write(&t, f), XPB_OUT_OF_MEMORY);
    assert_int_equal(ftell(f), 0);
    assert_null(xpb_text_take(&t, NULL));
    assert_int_equal(t.limit, 10); /* the limit stays */
    xpb_text_puts(&t, "ok");
    assert_int_equal(xpb_text_write(&t, f), XPB_OK);
    assert_int_equal(ftell(f), 2);
    fclose(f);
    xpb_text_free(&t);
}

/* Insertion moves what follows, keeps the NUL, and obeys the cap like an append. */
static void test_text_insert(void **state)
{
    (void)state;
    struct xpb_text t = {0};
    xpb_text_insert(&t, 0, "ab", 2); /* into a buffer that has no memory yet */
    assert_string_equal(t.data, "ab");
    xpb_text_puts(&t, "cdef");
    xpb_text_insert(&t, 2, "<>", 2);
    assert_string_equal(t.data, "ab<>cdef");
    xpb_text_insert(&t, t.len, "!", 1); /* at the end: an append */
    assert_string_equal(t.data, "ab<>cdef!");
    xpb_text_insert(&t, t.len + 1, "x", 1); /* past the end: nothing */
    assert_string_equal(t.data, "ab<>cdef!");
    assert_false(t.failed);
    xpb_text_free(&t);
    t.limit = 4;
    xpb_text_puts(&t, "abc");
    xpb_text_insert(&t, 0, "xy", 2);
    assert_true(t.failed && t.too_large);
    xpb_text_free(&t);
}

static void test_html(void **state)
{
    (void)state;
    assert_string_equal(TEXT_OF(xpb_html(&t_, "<script>alert('x')</script>&\"")),
                        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
    assert_string_equal(TEXT_OF(xpb_html(&t_, "a\x01"
                                              "b\tc\n\x7f\xff"
                                              "d \xc3\xbc \xe2\x80\x93")),
                        "ab\tc\n\xEF\xBF\xBD"
                        "d \xc3\xbc \xe2\x80\x93");
    /* a UTF-16 surrogate, an overlong form, a sequence cut short: not valid UTF-8 */
    assert_string_equal(TEXT_OF(xpb_html(&t_, "\xed\xa0\x80")),
                        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(TEXT_OF(xpb_html(&t_, "\xc0\xaf")), "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(TEXT_OF(xpb_html_n(&t_, "\xc3\xbc\xc3\xbc", 3)), "\xc3\xbc\xEF\xBF\xBD");
    assert_string_equal(TEXT_OF(xpb_html(&t_, NULL)), "");
}

static void test_cuts(void **state)
{
    (void)state;
    assert_string_equal(TEXT_OF(xpb_html_cut(&t_, "<<<<<<", 3)), "&lt;&lt;&lt;\xE2\x80\xA6");
    assert_string_equal(TEXT_OF(xpb_html_cut(&t_, "\xc3\xbc\xc3\xbc", 3)),
                        "\xc3\xbc\xE2\x80\xA6"); /* never inside a character */
    assert_string_equal(TEXT_OF(xpb_html_cut(&t_, "short", 10)), "short");
    assert_string_equal(TEXT_OF(xpb_html_cut(&t_, "exact", 5)), "exact");
    assert_int_equal(xpb_utf8_cut("a\xc3\xbc"
                                  "b",
                                  2),
                     1);
    assert_int_equal(xpb_utf8_cut("ab", 5), 2);
    assert_int_equal(xpb_utf8_chars("\xc3\xbc\xc3\xbc"
                                    "a\xe2\x80\x93",
                                    3),
                     5);
    assert_int_equal(xpb_utf8_chars("ab", 9), 2);
    assert_string_equal(TEXT_OF(xpb_url(&t_, "a b/\xc3\xbc&x=\"-._~")),
                        "a%20b%2F%C3%BC%26x%3D%22-._~");
}

/* What a terminal would obey comes out as visible text; everything else as it was. */
static void test_terminal(void **state)
{
    (void)state;
#define TERM(s, flags) TEXT_OF(xpb_term_escape(&t_, (s), strlen(s), (flags)))
    /* clear screen, window title (OSC 0, BEL), clipboard (OSC 52, ST), CR overwrite, DEL */
    assert_string_equal(TERM("a\x1b[2Jb", 0), "a\\x1b[2Jb");
    assert_string_equal(TERM("\x1b]0;owned\x07", 0), "\\x1b]0;owned\\x07");
    assert_string_equal(TERM("\x1b]52;c;ZWNobyBoaQ==\x1b\\", 0), "\\x1b]52;c;ZWNobyBoaQ==\\x1b\\");
    assert_string_equal(TERM("ok\rFAILED\x7f", 0), "ok\\rFAILED\\x7f");
    assert_string_equal(TERM("a\nb\tc\r\n", 0), "a\\nb\\tc\\r\\n");
    /* a block keeps its lines and tabs (and CR LF), nothing else */
    assert_string_equal(TERM("a\nb\tc\r\nd\re\x1b", XPB_TERM_LAYOUT), "a\nb\tc\r\nd\\re\\x1b");
    /* C1 controls as UTF-8 (CSI U+009B), bidirectional overrides and isolates, separators */
    assert_string_equal(TERM("\xc2\x9b"
                             "2J \xc2\x80",
                             0),
                        "\\u009b2J \\u0080");
    assert_string_equal(TERM("invoice\xe2\x80\xaegnp.exe", 0), "invoice\\u202egnp.exe");
    assert_string_equal(TERM("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0),
                        "\\u202a\\u202b\\u202c\\u202d");
    assert_string_equal(TERM("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0),
                        "\\u2066\\u2067\\u2068\\u2069");
    assert_string_equal(TERM("\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", 0), "\\u200f\\u061c\\u2028");
    /* invalid UTF-8 byte by byte: stray, cut short, overlong, surrogate, above U+10FFFF */
    assert_string_equal(TERM("\xff\x80", 0), "\\xff\\x80");
    assert_string_equal(TERM("\xc3", 0), "\\xc3");
    assert_string_equal(TERM("\xc0\xaf", 0), "\\xc0\\xaf");
    assert_string_equal(TERM("\xed\xa0\x80", 0), "\\xed\\xa0\\x80");
    assert_string_equal(TERM("\xf4\x90\x80\x80", 0), "\\xf4\\x90\\x80\\x80");
    /* text as it is: ASCII, accents, dashes, CJK, emoji, a backslash (so escaping is
     * idempotent) */
    const char *plain = "conv6 \xc3\xbc \xe2\x80\x93 \xe6\x97\xa5 \xf0\x9f\x98\x80 C:\\x";
    assert_string_equal(TERM(plain, 0), plain);
    const char *once = TERM("\x1b[31m\xe2\x80\xae\xff", 0);
    char again[4096];
    snprintf(again, sizeof again, "%s", once);
    assert_string_equal(TERM(again, 0), again);
    /* a field: cut at a character boundary, NULL as "" */
    char buf[8];
    assert_string_equal(xpb_term_field(buf, sizeof buf, "\x1b\x1b"), "\\x1b\\x1");
    assert_string_equal(xpb_term_field(buf, 6, "ab\xc3\xbc\xc3\xbc"), "ab\xc3\xbc");
    assert_string_equal(xpb_term_field(buf, sizeof buf, NULL), "");
    /* a message line: a quoted newline cannot start a line of its own */
    FILE *f = tmpfile();
    assert_non_null(f);
    xpb_term_line(f, "error: %s", "x\n\x1b[1Aall runs ok");
    rewind(f);
    char line[128] = "";
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "error: x\\n\\x1b[1Aall runs ok\n");
    fclose(f);
#undef TERM
}

static void test_page_numbers(void **state)
{
    (void)state;
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, 1234567.891, 1)), "1,234,567.9");
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, -1234.5, 0)), "-1,234"); /* half-even */
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, -0.0001, 2)), "0.00");
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, 999, 0)), "999");
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, NAN, 1)), "\xE2\x80\x94");
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, 1e63, 0)), "1.00e+63");
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, DBL_MAX, 1)), "1.80e+308");
    assert_string_equal(TEXT_OF(xpb_format_grouped(&t_, 999999999999999.0, 0)),
                        "999,999,999,999,999");
    assert_string_equal(TEXT_OF(xpb_format_ms(&t_, 0.01234)), "12.3 ms");
    assert_string_equal(TEXT_OF(xpb_format_ms(&t_, 2e-6)), "0.002 ms");
    assert_string_equal(TEXT_OF(xpb_format_si(&t_, 1.5e12, "FLOP/s")), "1.50 TFLOP/s");
    assert_string_equal(TEXT_OF(xpb_format_si(&t_, 950, "W")), "950 W");
    assert_string_equal(TEXT_OF(xpb_format_bytes(&t_, 1536.0 * 1024 * 1024)), "1.50 GiB");
    assert_string_equal(TEXT_OF(xpb_format_bytes(&t_, 512)), "512 B");
    assert_string_equal(TEXT_OF(xpb_format_ratio(&t_, 246.3)), "246\xC3\x97");
    assert_string_equal(TEXT_OF(xpb_format_ratio(&t_, 2.5)), "2.50\xC3\x97");
    assert_string_equal(TEXT_OF(xpb_format_ratio(&t_, 0.0012345)), "0.0012\xC3\x97");
    assert_string_equal(TEXT_OF(xpb_format_ratio(&t_, -1)), "\xE2\x80\x94");
    assert_string_equal(TEXT_OF(xpb_format_key(&t_, NAN)), "");
    assert_string_equal(TEXT_OF(xpb_format_key(&t_, 0.1)), "0.1");
}

static void test_report_numbers(void **state)
{
    (void)state;
    char buf[48];
    xpb_report_format_number(buf, sizeof buf, 9.99996);
    assert_string_equal(buf, "10.00"); /* one decade up: one decimal fewer */
    xpb_report_format_value(buf, sizeof buf, 1572864, XPB_UNIT_MIB);
    assert_string_equal(buf, "1.500");
    assert_string_equal(xpb_unit_name(XPB_UNIT_SPEEDUP), "\xc3\x97");
}

static void test_nice_axes(void **state)
{
    (void)state;
    assert_true(xpb_svg_nice_step(0.7) == 1 && xpb_svg_nice_step(1.5) == 2);
    assert_true(xpb_svg_nice_step(3) == 5 && xpb_svg_nice_step(7) == 10);
    assert_true(xpb_svg_nice_step(0.003) == 0.005);
    assert_true(xpb_svg_nice_max(0, 4) == 1 && xpb_svg_nice_max(NAN, 4) == 1);
    assert_true(xpb_svg_nice_max(7, 4) == 8);
    assert_true(xpb_svg_nice_max(1234, 4) == 1500);
    assert_true(xpb_svg_nice_max(100, 4) == 100);

    struct xpb_axis a;
    xpb_axis_fit(&a, 0.3, 9.2, 0, 0, 0, 100);
    assert_true(a.lo == 0 && a.hi == 10 && a.step == 2);
    assert_int_equal(a.n_ticks, 6);
    assert_true(xpb_axis_map(&a, 5) == 50);
    xpb_axis_fit(&a, 0.8, 9, 10, 0, 0, 90); /* two decades: 2 and 5 too */
    assert_true(fabs(a.lo - 0.1) < 1e-15 && fabs(a.hi - 10) < 1e-12);
    assert_int_equal(a.n_ticks, 7);
    assert_true(fabs(a.ticks[1] - 0.2) < 1e-15 && fabs(a.ticks[2] - 0.5) < 1e-15);
    assert_true(isnan(xpb_axis_map(&a, 0)));
    xpb_axis_fit(&a, 4, 4, 0, 1, 0, 10); /* degenerate: widened, whole numbers */
    assert_true(a.lo < 4 && a.hi > 4 && a.step >= 1);
    char label[48];
    xpb_axis_fit(&a, 2.300, 2.322, 0, 0, 0, 10);
    xpb_svg_tick_label(label, sizeof label, a.ticks[1], &a);
    assert_string_equal(label, "2.305");
    xpb_axis_fit(&a, 0.1, 1, 10, 0, 0, 10);
    xpb_svg_tick_label(label, sizeof label, 0.25, &a);
    assert_string_equal(label, "0.25");
}

static void test_svg_text(void **state)
{
    (void)state;
    assert_string_equal(TEXT_OF(xpb_svg_text(&t_, 1, 2, "end", "a<b", 10)),
                        "<text x=\"1.0\" y=\"2.0\" text-anchor=\"end\">a&lt;b</text>");
    /* longer than 5 bytes: 4 bytes kept (not inside the "ü"), an ellipsis, the whole text as
     * the tooltip */
    assert_string_equal(TEXT_OF(xpb_svg_text(&t_, 0, 0, "start",
                                             "abc\xc3\xbc"
                                             "def",
                                             5)),
                        "<text x=\"0.0\" y=\"0.0\" text-anchor=\"start\"><title>abc\xc3\xbc"
                        "def</title>abc\xe2\x80\xa6</text>");
    const char *fig = TEXT_OF(xpb_svg_open(&t_, "id\"", "T&", 10, 20));
    assert_non_null(strstr(fig, "<figure id=\"id&quot;\"><figcaption>T&amp;</figcaption>"));
    assert_non_null(strstr(fig, "viewBox=\"0 0 10 20\"><title>T&amp;</title>"));
    assert_string_equal(TEXT_OF(xpb_svg_close(&t_, "n<")),
                        "</svg><p class=\"note\">n&lt;</p></figure>\n");
}

/* Two speedup bars on a log axis from 1, one hollow with whiskers. */
static void test_bars_report_style(void **state)
{
    (void)state;
    double v0 = 12.5, v1 = 1.02;
    struct xpb_svg_bar bars[2] = {
        {.label = "cuda <fast>", .values = &v0, .lo = NAN, .hi = NAN},
        {.label = "onednn", .values = &v1, .lo = 0.95, .hi = 1.1, .hollow = 1},
    };
    struct xpb_svg_bar_chart c = {.id = "s-chart",
                                  .title = "Speedups",
                                  .axis_label = "speedup",
                                  .scale = 1,
                                  .value_suffix = "\xc3\x97",
                                  .log10 = 1,
                                  .ref = 1,
                                  .n_segments = 1,
                                  .n_bars = 2,
                                  .bars = bars};
    const char *svg = TEXT_OF(xpb_svg_bar_chart(&t_, &c));
    assert_non_null(strstr(svg, "<figure id=\"s-chart\"><figcaption>Speedups</figcaption>"));
    assert_non_null(strstr(svg, ">12.50\xc3\x97</text>"));
    assert_non_null(strstr(svg, ">cuda &lt;fast&gt;</text>"));
    assert_non_null(strstr(svg, "fill=\"#0072B2\" stroke=\"#0072B2\""));
    assert_non_null(strstr(svg, "fill=\"#fff\" stroke=\"#0072B2\""));       /* hollow */
    assert_non_null(strstr(svg, "stroke=\"#111\" stroke-width=\"1.5\"/>")); /* whiskers, ref */
    assert_null(strstr(svg, "<a "));
    assert_null(strstr(svg, "class="));
}

static void si_value(struct xpb_text *t, double v, const void *ctx)
{
    xpb_format_si(t, v, ctx);
}

/* Stacked segments with a legend, links, tooltips, classes and a value formatter of its own. */
static void test_bars_page_style(void **state)
{
    (void)state;
    double a[2] = {1500, 500}, b[2] = {NAN, NAN};
    const char *names[] = {"conv", "relu"};
    struct xpb_svg_bar bars[2] = {
        {.label = "run a",
         .values = a,
         .lo = NAN,
         .hi = NAN,
         .href = "/s?id=1&x=2",
         .tooltip = "a \"run\"",
         .css_class = "bar cpu"},
        {.label = "run b", .values = b, .lo = NAN, .hi = NAN},
    };
    struct xpb_svg_bar_chart c = {.id = "p",
                                  .title = "Per run",
                                  .css_class = "chart bars",
                                  .scale = 1,
                                  .value_text = si_value,
                                  .value_ctx = "samples/s",
                                  .ref = NAN,
                                  .n_segments = 2,
                                  .segment_names = names,
                                  .n_bars = 2,
                                  .bars = bars};
    const char *svg = TEXT_OF(xpb_svg_bar_chart(&t_, &c));
    assert_non_null(strstr(svg, "<a href=\"/s?id=1&amp;x=2\"><g><title>a &quot;run&quot;"));
    assert_non_null(strstr(svg, "<svg class=\"chart bars\" xmlns="));
    assert_non_null(strstr(svg, "<rect class=\"bar cpu\" x=\""));
    assert_non_null(strstr(svg, ">2.00 ksamples/s</text>"));
    assert_non_null(strstr(svg, ">conv</text>")); /* the legend */
    assert_non_null(strstr(svg, "</g></a>"));
    /* a bar without values draws no rectangle, and says so */
    assert_non_null(strstr(svg, ">\xE2\x80\x94</text>"));
}

static void cell_attrs(struct xpb_text *t, size_t row, size_t col, const void *ctx)
{
    (void)ctx;
    xpb_text_printf(t, " data-cell=\"%zu,%zu\"", row, col);
}

/* Viridis from dark (0) to yellow (1), clamped; every valued cell written with its number and
 * its attributes, an empty one as a dash without them; rows from the bottom. */
static void test_heatmap(void **state)
{
    (void)state;
    char c[8];
    assert_int_equal(xpb_svg_heat_color(c, 0), 1);
    assert_string_equal(c, "#440154");
    assert_int_equal(xpb_svg_heat_color(c, 1), 0);
    assert_string_equal(c, "#fde725");
    xpb_svg_heat_color(c, 7); /* clamped */
    assert_string_equal(c, "#fde725");
    xpb_svg_heat_color(c, NAN);
    assert_string_equal(c, "#440154");
    static const char *const cols[3] = {"32", "64", "128"}, *const rows[2] = {"2", "4"};
    const double values[6] = {10, 20, 30, 40, NAN, 60};
    struct xpb_svg_heatmap h = {.id = "hm",
                                .title = "fraction of peak",
                                .x_label = "nodes",
                                .y_label = "layers",
                                .value_label = "%",
                                .n_cols = 3,
                                .n_rows = 2,
                                .col_labels = cols,
                                .row_labels = rows,
                                .values = values,
                                .cell_attrs = cell_attrs};
    struct xpb_text t = {0};
    xpb_svg_heatmap(&t, &h);
    assert_false(t.failed);
    const char *svg = t.data;
    assert_non_null(strstr(svg, "id=\"hm\""));
    assert_non_null(strstr(svg, "data-cell=\"0,0\">10.00</text>"));
    assert_non_null(strstr(svg, "data-cell=\"1,2\">60.00</text>"));
    assert_null(strstr(svg, "data-cell=\"1,1\"")); /* no value: no attributes */
    assert_non_null(strstr(svg, "\xe2\x80\x93</text>"));
    /* the largest value is the lightest, the smallest the darkest */
    assert_non_null(strstr(svg, "fill=\"#fde725\""));
    assert_non_null(strstr(svg, "fill=\"#440154\""));
    /* row 0 ("2") is below row 1 ("4"): a larger y */
    const char *r0 = strstr(svg, "data-cell=\"0,0\""), *r1 = strstr(svg, "data-cell=\"1,0\"");
    assert_non_null(r0);
    assert_non_null(r1);
    double y0 = strtod(strstr(r0 - 80, "y=\"") + 3, NULL);
    double y1 = strtod(strstr(r1 - 80, "y=\"") + 3, NULL);
    assert_true(y0 > y1);
    xpb_text_free(&t);
}

static void point_attrs(struct xpb_text *t, size_t i, const void *ctx)
{
    (void)ctx;
    xpb_text_printf(t, " data-i=\"%zu\"", i);
}

/* Log labels; a point a log axis cannot show is left out; sized points are circles whose area
 * goes with their size, the largest at the maximum radius; lines drawn with their labels. */
static void test_scatter(void **state)
{
    (void)state;
    char b[32];
    xpb_svg_log_label(b, sizeof b, 100);
    assert_string_equal(b, "100");
    xpb_svg_log_label(b, sizeof b, 1e5);
    assert_string_equal(b, "1e5");
    xpb_svg_log_label(b, sizeof b, 0.5);
    assert_string_equal(b, "0.5");
    xpb_svg_log_label(b, sizeof b, 1e-4);
    assert_string_equal(b, "1e-4");
    const struct xpb_svg_scatter_point p[4] = {
        {.x = 1, .y = 10, .size = 4, .label = "A"},
        {.x = 10, .y = 50, .size = 1},
        {.x = 0, .y = 5, .size = 1}, /* x 0: not on a log axis */
        {.x = 5, .y = 20, .series = 1},
    };
    const double lx[2] = {0.5, 20}, ly[2] = {100, 100};
    const struct xpb_svg_scatter_line l = {2, lx, ly, "peak 100", 0};
    struct xpb_svg_scatter c = {.id = "sc",
                                .title = "roof",
                                .x_log10 = 1,
                                .y_log10 = 1,
                                .n_points = 4,
                                .points = p,
                                .n_lines = 1,
                                .lines = &l,
                                .point_attrs = point_attrs};
    struct xpb_text t = {0};
    xpb_svg_scatter(&t, &c);
    assert_false(t.failed);
    const char *svg = t.data;
    assert_non_null(strstr(svg, "data-i=\"0\""));
    assert_non_null(strstr(svg, "data-i=\"1\""));
    assert_null(strstr(svg, "data-i=\"2\""));
    assert_non_null(strstr(svg, "data-i=\"3\""));
    assert_non_null(strstr(svg, "peak 100"));
    const char *big = strstr(strstr(svg, "data-i=\"0\""), " r=\"");
    const char *small = strstr(strstr(svg, "data-i=\"1\""), " r=\"");
    assert_true(fabs(strtod(big + 4, NULL) - XPB_SVG_SCATTER_MAX_R) < 0.06);
    assert_true(fabs(strtod(small + 4, NULL) - XPB_SVG_SCATTER_MAX_R / 2) < 0.06);
    xpb_text_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_grows_and_takes),
        cmocka_unit_test(test_text_limit),
        cmocka_unit_test(test_text_insert),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_cuts),
        cmocka_unit_test(test_terminal),
        cmocka_unit_test(test_page_numbers),
        cmocka_unit_test(test_report_numbers),
        cmocka_unit_test(test_nice_axes),
        cmocka_unit_test(test_svg_text),
        cmocka_unit_test(test_bars_report_style),
        cmocka_unit_test(test_bars_page_style),
        cmocka_unit_test(test_heatmap),
        cmocka_unit_test(test_scatter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
