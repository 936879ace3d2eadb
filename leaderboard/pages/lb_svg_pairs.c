/* The paired bar chart (see lb_svg_pairs.h). */
#include "pages/lb_svg_pairs.h"

#include <math.h>
#include <string.h>

#include "render/escape.h"
#include "render/format_si.h"
#include "render/svg.h"

#define WIDTH 880
#define LABEL_W 290
#define VALUE_W 130
#define ROW_H 26
#define TOP 28
#define LABEL_MAX 34

/* Appends at most LABEL_MAX characters of s (escaped), cut at a character boundary, with an
 * ellipsis when shortened. */
static void short_label(struct xpb_text *b, const char *s)
{
    size_t cut = xpb_utf8_chars(s, LABEL_MAX);
    xpb_html_n(b, s, cut);
    if (cut < strlen(s))
        xpb_text_puts(b, "\xE2\x80\xA6");
}

/* Grid lines at quarters of `max`, labelled with one SI prefix for the whole axis ("0",
 * "25 k", "50 k", ... "100 k samples/s"). */
static void grid(struct xpb_text *b, double max, int height, const char *unit)
{
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P"};
    int p = 0;
    double scale = 1;
    while (max / scale >= 1000 && p < 5) {
        scale *= 1000;
        p++;
    }
    double plot_w = WIDTH - LABEL_W - VALUE_W;
    for (int i = 0; i <= 4; i++) {
        double x = LABEL_W + plot_w * i / 4;
        xpb_text_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
                        TOP - 6, x, height - 4);
        xpb_text_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%.3g", x,
                        TOP - 10, i == 0 ? "start" : "middle", max * i / 4 / scale);
        if (i > 0 && (*prefixes[p] || i == 4))
            xpb_text_printf(b, " %s", prefixes[p]);
        if (i == 4)
            xpb_text_puts(b, unit);
        xpb_text_puts(b, "</text>");
    }
}

static void open_svg(struct xpb_text *b, const char *title, int height, const char *klass)
{
    xpb_text_printf(b,
                    "<svg class=\"chart %s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                    "role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>",
                    klass, WIDTH, height, WIDTH, height);
    xpb_html(b, title);
    xpb_text_puts(b, "</title>");
}

/* One bar with its value label; y is the bar's top. */
static void bar(struct xpb_text *b, double y, double h, double value, double max, const char *klass,
                const char *unit)
{
    double plot_w = WIDTH - LABEL_W - VALUE_W;
    double w = (value > 0 && max > 0) ? plot_w * value / max : 0;
    if (w > 0 && w < 1.5)
        w = 1.5;
    xpb_text_printf(b,
                    "<rect class=\"bar %s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "rx=\"3\"/>",
                    klass ? klass : "", LABEL_W, y, w, h);
    xpb_text_printf(b, "<text class=\"val\" x=\"%.1f\" y=\"%.1f\">", LABEL_W + w + 6, y + h - 3);
    if (value >= 0)
        xpb_format_si(b, value, unit);
    else
        xpb_text_puts(b, "\xE2\x80\x94");
    xpb_text_puts(b, "</text>");
}

void lb_svg_pairs(struct xpb_text *b, const char *title, const char *unit, const char *name_a,
                  const char *name_b, const struct lb_pair *pairs, size_t n)
{
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].a > max)
            max = pairs[i].a;
        if (pairs[i].b > max)
            max = pairs[i].b;
    }
    max = xpb_svg_nice_max(max, 4);
    const int row = 2 * ROW_H - 8, legend = 22;
    int height = TOP + legend + (int)n * row + 6;
    open_svg(b, title, height, "pairs");
    /* legend */
    xpb_text_printf(b,
                    "<rect class=\"bar a\" x=\"%d\" y=\"4\" width=\"12\" height=\"12\" rx=\"2\"/>"
                    "<text class=\"lbl\" x=\"%d\" y=\"14\">",
                    LABEL_W, LABEL_W + 18);
    short_label(b, name_a);
    xpb_text_printf(b,
                    "</text><rect class=\"bar b\" x=\"%d\" y=\"4\" width=\"12\" height=\"12\" "
                    "rx=\"2\"/><text class=\"lbl\" x=\"%d\" y=\"14\">",
                    LABEL_W + 250, LABEL_W + 268);
    short_label(b, name_b);
    xpb_text_puts(b, "</text><g transform=\"translate(0,22)\">");
    grid(b, max, height - legend, unit);
    for (size_t i = 0; i < n; i++) {
        double y = TOP + (double)i * row;
        xpb_text_puts(b, "<g><title>");
        xpb_html(b, pairs[i].label);
        xpb_text_puts(b, "</title>");
        xpb_text_printf(b, "<text class=\"lbl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                        LABEL_W - 8, y + row / 2.0 + 4);
        short_label(b, pairs[i].label);
        xpb_text_puts(b, "</text>");
        bar(b, y + 2, (row - 8) / 2.0, isnan(pairs[i].a) ? -1 : pairs[i].a, max, "a", unit);
        bar(b, y + 4 + (row - 8) / 2.0, (row - 8) / 2.0, isnan(pairs[i].b) ? -1 : pairs[i].b, max,
            "b", unit);
        xpb_text_puts(b, "</g>");
    }
    xpb_text_puts(b, "</g></svg>");
}
