/* SVG charts of the report (see report_writers.h and report_svg.h): axes, ticks and the
 * point-and-line chart; bars are in report_svg_bars.c. Charts use presentation attributes,
 * not classes, so that they look the same when printed or copied out of the page. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_svg.h"
#include "report/report_writers.h"

#define XY_WIDTH 720.0
#define XY_PLOT_HEIGHT 300.0
#define XY_LEFT 78.0
#define XY_RIGHT 24.0
#define XY_TOP 16.0
#define XY_AXIS 56.0   /* tick labels and the axis label under the plot */
#define XY_LEGEND 18.0 /* one legend line per series, under the axis */

const char *const xpb_svg_palette[XPB_SVG_COLORS] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                     "#E69F00", "#56B4E9", "#000000"};

/* 1, 2 or 5 times a power of ten, at least x. */
static double nice_step(double x)
{
    double p = pow(10, floor(log10(x))), m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void linear_ticks(xpb_axis *a)
{
    double step = nice_step((a->hi - a->lo) / 5);
    if (a->integer && step < 1)
        step = 1;
    a->step = step;
    a->lo = floor(a->lo / step + 1e-9) * step;
    a->hi = ceil(a->hi / step - 1e-9) * step;
    for (double t = a->lo; t <= a->hi + step / 2 && a->n_ticks < XPB_SVG_MAX_TICKS; t += step)
        a->ticks[a->n_ticks++] = fabs(t) < step * 1e-9 ? 0 : t;
}

static void log_ticks(xpb_axis *a)
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

void xpb_axis_fit(xpb_axis *a, double lo, double hi, int log, int integer, double p0, double p1)
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

double xpb_axis_map(const xpb_axis *a, double v)
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

void xpb_svg_tick_label(char *buf, size_t size, double v, const xpb_axis *a)
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

void xpb_svg_marker(FILE *f, int k, double x, double y, const char *color)
{
    switch (k % 6) {
    case 0:
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>", x, y, color);
        break;
    case 1:
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/>", x - 4,
                y - 4, color);
        break;
    case 2:
        fprintf(f, "<path d=\"M%.1f %.1fl5 9h-10z\" fill=\"%s\"/>", x, y - 5, color);
        break;
    case 3:
        fprintf(f, "<path d=\"M%.1f %.1fl5 5l-5 5l-5-5z\" fill=\"%s\"/>", x, y - 5, color);
        break;
    case 4:
        fprintf(f, "<path d=\"M%.1f %.1fl8 8m0-8l-8 8\" stroke=\"%s\" stroke-width=\"2\"/>", x - 4,
                y - 4, color);
        break;
    default:
        fprintf(f, "<path d=\"M%.1f %.1fl5-9h-10z\" fill=\"%s\"/>", x, y + 5, color);
    }
}

void xpb_svg_text(FILE *f, double x, double y, const char *anchor, const char *text,
                  size_t max_chars)
{
    size_t len = strlen(text), cut = len;
    if (len > max_chars) { /* at a character boundary of UTF-8 */
        cut = max_chars > 1 ? max_chars - 1 : 0;
        while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
            cut--;
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    if (cut < len) {
        fputs("<title>", f);
        xpb_html_escape(f, text);
        fputs("</title>", f);
    }
    for (size_t i = 0; i < cut; i++) {
        char one[2] = {text[i], '\0'};
        xpb_html_escape(f, one);
    }
    fputs(cut < len ? "\xe2\x80\xa6</text>" : "</text>", f);
}

void xpb_svg_open(FILE *f, const xpb_chart *c, double width, double height)
{
    fputs("<figure id=\"", f);
    xpb_html_escape(f, c->id);
    fputs("\"><figcaption>", f);
    xpb_html_escape(f, c->title);
    fprintf(f,
            "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\"><title>",
            width, height, width, height);
    xpb_html_escape(f, c->title);
    fputs("</title>", f);
}

void xpb_svg_close(FILE *f, const xpb_chart *c)
{
    fputs("</svg>", f);
    if (c->note) {
        fputs("<p class=\"note\">", f);
        xpb_html_escape(f, c->note);
        fputs("</p>", f);
    }
    fputs("</figure>\n", f);
}

/* The display-unit ranges of every point, whisker and line of an XY chart. */
static void xy_ranges(const xpb_chart *c, double *x, double *y)
{
    double sx = xpb_unit_scale(c->x_unit), sy = xpb_unit_scale(c->y_unit);
    x[0] = y[0] = INFINITY;
    x[1] = y[1] = -INFINITY;
    for (size_t i = 0; i < c->n_series; i++) {
        const xpb_chart_series *s = &c->series[i];
        for (size_t k = 0; k < s->n; k++) {
            double v[3] = {s->y[k], s->lo[k], s->hi[k]};
            if (!isfinite(s->x[k]) || !isfinite(s->y[k]) || (c->x_log2 && !(s->x[k] > 0)))
                continue;
            x[0] = fmin(x[0], s->x[k] * sx);
            x[1] = fmax(x[1], s->x[k] * sx);
            for (int j = 0; j < 3; j++)
                if (isfinite(v[j])) {
                    y[0] = fmin(y[0], v[j] * sy);
                    y[1] = fmax(y[1], v[j] * sy);
                }
        }
    }
    if (isfinite(c->hline)) {
        y[0] = fmin(y[0], c->hline * sy);
        y[1] = fmax(y[1], c->hline * sy);
    }
    if (c->y_zero && y[0] > 0)
        y[0] = 0;
}

static void xy_axes(FILE *f, const xpb_chart *c, const xpb_axis *ax, const xpb_axis *ay)
{
    char label[48];
    fputs("<g stroke=\"#ddd\" stroke-width=\"1\">", f);
    for (size_t i = 0; i < ay->n_ticks; i++)
        fprintf(f, "<path d=\"M%.1f %.1fH%.1f\"/>", ax->p0, xpb_axis_map(ay, ay->ticks[i]), ax->p1);
    fputs("</g><g>", f);
    for (size_t i = 0; i < ay->n_ticks; i++) {
        xpb_svg_tick_label(label, sizeof label, ay->ticks[i], ay);
        xpb_svg_text(f, ax->p0 - 6, xpb_axis_map(ay, ay->ticks[i]) + 4, "end", label, 12);
    }
    for (size_t i = 0; i < ax->n_ticks; i++) {
        double x = xpb_axis_map(ax, ax->ticks[i]);
        xpb_svg_tick_label(label, sizeof label, ax->ticks[i], ax);
        fprintf(f, "<path d=\"M%.1f %.1fv5\" stroke=\"#111\"/>", x, ay->p0);
        xpb_svg_text(f, x, ay->p0 + 18, "middle", label, 12);
    }
    fprintf(f, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#111\"/>", ax->p0, ay->p1,
            ay->p0, ax->p1);
    xpb_svg_text(f, (ax->p0 + ax->p1) / 2, ay->p0 + 40, "middle", c->x_label, 90);
    fprintf(f, "<g transform=\"translate(16 %.1f) rotate(-90)\">", (ay->p0 + ay->p1) / 2);
    xpb_svg_text(f, 0, 0, "middle", c->y_label, 40);
    fputs("</g></g>", f);
}

static void xy_series(FILE *f, const xpb_chart *c, const xpb_chart_series *s, const xpb_axis *ax,
                      const xpb_axis *ay)
{
    double sx = xpb_unit_scale(c->x_unit), sy = xpb_unit_scale(c->y_unit);
    const char *color = xpb_svg_palette[s->color % XPB_SVG_COLORS];
    if (s->style & XPB_SERIES_LINE) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
                s->style & XPB_SERIES_DASHED ? " stroke-dasharray=\"7 5\"" : "");
        for (size_t k = 0; k < s->n; k++) {
            double x = xpb_axis_map(ax, s->x[k] * sx), y = xpb_axis_map(ay, s->y[k] * sy);
            if (isfinite(x) && isfinite(y))
                fprintf(f, "%.1f,%.1f ", x, y);
        }
        fputs("\"/>", f);
    }
    for (size_t k = 0; k < s->n; k++) {
        double x = xpb_axis_map(ax, s->x[k] * sx), y = xpb_axis_map(ay, s->y[k] * sy);
        double lo = xpb_axis_map(ay, s->lo[k] * sy), hi = xpb_axis_map(ay, s->hi[k] * sy);
        if (!isfinite(x) || !isfinite(y))
            continue;
        if (isfinite(lo) && isfinite(hi))
            fprintf(f,
                    "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\" stroke=\"%s\" "
                    "stroke-width=\"1.5\"/>",
                    x, lo, hi, x - 4, lo, x - 4, hi, color);
        if (s->style & XPB_SERIES_POINTS)
            xpb_svg_marker(f, s->color, x, y, color);
    }
}

static void xy_legend(FILE *f, const xpb_chart *c, double x, double y)
{
    for (size_t i = 0; i < c->n_series; i++, y += 18) {
        const xpb_chart_series *s = &c->series[i];
        const char *color = xpb_svg_palette[s->color % XPB_SVG_COLORS];
        if (s->style & XPB_SERIES_LINE)
            fprintf(f, "<path d=\"M%.1f %.1fh22\" stroke=\"%s\" stroke-width=\"2\"%s/>", x, y,
                    color, s->style & XPB_SERIES_DASHED ? " stroke-dasharray=\"7 5\"" : "");
        if (s->style & XPB_SERIES_POINTS)
            xpb_svg_marker(f, s->color, x + 11, y, color);
        xpb_svg_text(f, x + 28, y + 4, "start", s->label, 96);
    }
}

static void xy_chart(FILE *f, const xpb_chart *c)
{
    double xr[2], yr[2];
    xy_ranges(c, xr, yr);
    xpb_axis ax, ay;
    double bottom = XY_TOP + XY_PLOT_HEIGHT;
    xpb_axis_fit(&ax, xr[0], xr[1], c->x_log2 ? 2 : 0, c->x_unit == XPB_UNIT_COUNT, XY_LEFT,
                 XY_WIDTH - XY_RIGHT);
    xpb_axis_fit(&ay, yr[0], yr[1], 0, 0, bottom, XY_TOP);
    xpb_svg_open(f, c, XY_WIDTH, bottom + XY_AXIS + XY_LEGEND * (double)c->n_series + 4);
    xy_axes(f, c, &ax, &ay);
    if (isfinite(c->hline)) {
        double y = xpb_axis_map(&ay, c->hline * xpb_unit_scale(c->y_unit));
        fprintf(f, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#555\" stroke-dasharray=\"2 3\"/>", ax.p0,
                y, ax.p1);
        xpb_svg_text(f, ax.p1 - 4, y - 5, "end", c->hline_label ? c->hline_label : "", 30);
    }
    for (size_t i = 0; i < c->n_series; i++)
        xy_series(f, c, &c->series[i], &ax, &ay);
    xy_legend(f, c, XY_LEFT, bottom + XY_AXIS + XY_LEGEND / 2);
    xpb_svg_close(f, c);
}

void xpb_svg_chart(FILE *f, const xpb_chart *c)
{
    if (c->kind == XPB_CHART_BARS)
        xpb_svg_bars(f, c);
    else
        xy_chart(f, c);
}
