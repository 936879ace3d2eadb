/* SVG primitives (see svg.h). Charts use presentation attributes, not classes, unless a
 * renderer asks for classes, so that they look the same when printed or copied out of a page. */
#include "render/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/escape.h"
#include "render/format.h"

const char *const xpb_svg_palette[XPB_SVG_COLORS] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                     "#E69F00", "#56B4E9", "#000000"};

double xpb_svg_nice_step(double x)
{
    double p = pow(10, floor(log10(x))), m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

double xpb_svg_nice_max(double v, int parts)
{
    if (!(v > 0) || isinf(v) || parts < 1)
        return 1;
    double step = xpb_svg_nice_step(v / parts);
    return ceil(v / step - 1e-9) * step;
}

static void linear_ticks(struct xpb_axis *a)
{
    double step = xpb_svg_nice_step((a->hi - a->lo) / 5);
    if (a->integer && step < 1)
        step = 1;
    a->step = step;
    a->lo = floor(a->lo / step + 1e-9) * step;
    a->hi = ceil(a->hi / step - 1e-9) * step;
    for (double t = a->lo; t <= a->hi + step / 2 && a->n_ticks < XPB_SVG_MAX_TICKS; t += step)
        a->ticks[a->n_ticks++] = fabs(t) < step * 1e-9 ? 0 : t;
}

static void log_ticks(struct xpb_axis *a)
{
    double b = a->log;
    a->lo = pow(b, floor(log(a->lo) / log(b) + 1e-9));
    a->hi = pow(b, ceil(log(a->hi) / log(b) - 1e-9));
    if (a->hi <= a->lo)
        a->hi = a->lo * b;
    int decades = (int)lround(log(a->hi / a->lo) / log(b));
    int every = decades > 10 ? (decades + 9) / 10 : 1;
    for (int i = 0; i <= decades && a->n_ticks < XPB_SVG_MAX_TICKS; i += every) {
        double t = a->lo * pow(b, i);
        a->ticks[a->n_ticks++] = t;
        if (b == 10 && decades <= 2 && i < decades) { /* few decades: 2 and 5 too */
            if (a->n_ticks < XPB_SVG_MAX_TICKS)
                a->ticks[a->n_ticks++] = 2 * t;
            if (a->n_ticks < XPB_SVG_MAX_TICKS)
                a->ticks[a->n_ticks++] = 5 * t;
        }
    }
}

void xpb_axis_fit(struct xpb_axis *a, double lo, double hi, int log, int integer, double p0,
                  double p1)
{
    memset(a, 0, sizeof *a);
    a->log = log;
    a->integer = integer;
    a->p0 = p0;
    a->p1 = p1;
    if (!(lo <= hi) || (log && !(lo > 0))) { /* nothing to show */
        lo = log ? 1 : 0;
        hi = log ? 10 : 1;
    }
    if (hi == lo) {
        double w = lo != 0 ? fabs(lo) * 0.1 : 1;
        lo = log ? lo / 2 : lo - w;
        hi = log ? hi * 2 : hi + w;
    }
    a->lo = lo;
    a->hi = hi;
    if (log)
        log_ticks(a);
    else
        linear_ticks(a);
}

double xpb_axis_map(const struct xpb_axis *a, double v)
{
    double t;
    if (a->log) {
        if (!(v > 0))
            return NAN;
        t = log(v / a->lo) / log(a->hi / a->lo);
    } else {
        t = (v - a->lo) / (a->hi - a->lo);
    }
    return a->p0 + t * (a->p1 - a->p0);
}

void xpb_svg_tick_label(char *buf, size_t size, double v, const struct xpb_axis *a)
{
    if (!a->log && a->step > 0 && a->step < 1e15) { /* as many decimals as the step has */
        int decimals = (int)ceil(-log10(a->step) - 1e-9);
        snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, v);
        return;
    }
    if (fabs(v) < 1e15 && v == floor(v)) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    xpb_report_format_number(buf, size, v);
    if (strchr(buf, '.') && !strchr(buf, 'e')) { /* 0.1000 -> 0.1: ticks are round numbers */
        size_t len = strlen(buf);
        while (len > 0 && buf[len - 1] == '0')
            buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '.')
            buf[--len] = '\0';
    }
}

void xpb_svg_marker(struct xpb_text *t, int k, double x, double y, const char *color)
{
    switch (k % 6) {
    case 0:
        xpb_text_printf(t, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>", x, y, color);
        break;
    case 1:
        xpb_text_printf(t, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/>",
                        x - 4, y - 4, color);
        break;
    case 2:
        xpb_text_printf(t, "<path d=\"M%.1f %.1fl5 9h-10z\" fill=\"%s\"/>", x, y - 5, color);
        break;
    case 3:
        xpb_text_printf(t, "<path d=\"M%.1f %.1fl5 5l-5 5l-5-5z\" fill=\"%s\"/>", x, y - 5, color);
        break;
    case 4:
        xpb_text_printf(t, "<path d=\"M%.1f %.1fl8 8m0-8l-8 8\" stroke=\"%s\" stroke-width=\"2\"/>",
                        x - 4, y - 4, color);
        break;
    default:
        xpb_text_printf(t, "<path d=\"M%.1f %.1fl5-9h-10z\" fill=\"%s\"/>", x, y + 5, color);
    }
}

void xpb_svg_text(struct xpb_text *t, double x, double y, const char *anchor, const char *text,
                  size_t max_bytes)
{
    size_t len = strlen(text), cut = len;
    if (len > max_bytes) /* room for the ellipsis, at a character boundary */
        cut = xpb_utf8_cut(text, max_bytes > 1 ? max_bytes - 1 : 0);
    xpb_text_printf(t, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    if (cut < len) {
        xpb_text_puts(t, "<title>");
        xpb_html(t, text);
        xpb_text_puts(t, "</title>");
    }
    xpb_html_n(t, text, cut);
    xpb_text_puts(t, cut < len ? "\xe2\x80\xa6</text>" : "</text>");
}

void xpb_svg_open(struct xpb_text *t, const char *id, const char *title, double width,
                  double height)
{
    xpb_svg_open_class(t, id, NULL, title, width, height);
}

void xpb_svg_open_class(struct xpb_text *t, const char *id, const char *css_class,
                        const char *title, double width, double height)
{
    xpb_text_puts(t, "<figure id=\"");
    xpb_html(t, id);
    xpb_text_puts(t, "\"><figcaption>");
    xpb_html(t, title);
    xpb_text_puts(t, "</figcaption>\n<svg ");
    if (css_class) {
        xpb_text_puts(t, "class=\"");
        xpb_html(t, css_class);
        xpb_text_puts(t, "\" ");
    }
    xpb_text_printf(t,
                    "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
                    "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\"><title>",
                    width, height, width, height);
    xpb_html(t, title);
    xpb_text_puts(t, "</title>");
}

void xpb_svg_close(struct xpb_text *t, const char *note)
{
    xpb_text_puts(t, "</svg>");
    if (note) {
        xpb_text_puts(t, "<p class=\"note\">");
        xpb_html(t, note);
        xpb_text_puts(t, "</p>");
    }
    xpb_text_puts(t, "</figure>\n");
}
