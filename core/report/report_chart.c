/* The report's charts (see report_chart.h): the point-and-line chart, drawn with the
 * primitives of render/svg.h, and bar charts handed to render/svg_bars.h. Charts use
 * presentation attributes, not classes, so that they look the same when printed or copied out
 * of the page. */
#include "report/report_chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/svg.h"
#include "render/svg_bars.h"

#define XY_WIDTH 720.0
#define XY_PLOT_HEIGHT 300.0
#define XY_LEFT 78.0
#define XY_RIGHT 24.0
#define XY_TOP 16.0
#define XY_AXIS 56.0   /* tick labels and the axis label under the plot */
#define XY_LEGEND 18.0 /* one legend line per series, under the axis */

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

static void xy_axes(struct xpb_text *t, const xpb_chart *c, const struct xpb_axis *ax,
                    const struct xpb_axis *ay)
{
    char label[48];
    xpb_text_puts(t, "<g stroke=\"#ddd\" stroke-width=\"1\">");
    for (size_t i = 0; i < ay->n_ticks; i++)
        xpb_text_printf(t, "<path d=\"M%.1f %.1fH%.1f\"/>", ax->p0, xpb_axis_map(ay, ay->ticks[i]),
                        ax->p1);
    xpb_text_puts(t, "</g><g>");
    for (size_t i = 0; i < ay->n_ticks; i++) {
        xpb_svg_tick_label(label, sizeof label, ay->ticks[i], ay);
        xpb_svg_text(t, ax->p0 - 6, xpb_axis_map(ay, ay->ticks[i]) + 4, "end", label, 12);
    }
    for (size_t i = 0; i < ax->n_ticks; i++) {
        double x = xpb_axis_map(ax, ax->ticks[i]);
        xpb_svg_tick_label(label, sizeof label, ax->ticks[i], ax);
        xpb_text_printf(t, "<path d=\"M%.1f %.1fv5\" stroke=\"#111\"/>", x, ay->p0);
        xpb_svg_text(t, x, ay->p0 + 18, "middle", label, 12);
    }
    xpb_text_printf(t, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#111\"/>", ax->p0,
                    ay->p1, ay->p0, ax->p1);
    xpb_svg_text(t, (ax->p0 + ax->p1) / 2, ay->p0 + 40, "middle", c->x_label, 90);
    xpb_text_printf(t, "<g transform=\"translate(16 %.1f) rotate(-90)\">", (ay->p0 + ay->p1) / 2);
    xpb_svg_text(t, 0, 0, "middle", c->y_label, 40);
    xpb_text_puts(t, "</g></g>");
}

static void xy_series(struct xpb_text *t, const xpb_chart *c, const xpb_chart_series *s,
                      const struct xpb_axis *ax, const struct xpb_axis *ay)
{
    double sx = xpb_unit_scale(c->x_unit), sy = xpb_unit_scale(c->y_unit);
    const char *color = xpb_svg_palette[s->color % XPB_SVG_COLORS];
    if (s->style & XPB_SERIES_BAND) { /* lo forwards, then hi backwards: one closed shape */
        xpb_text_printf(t, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"",
                        color);
        for (size_t i = 0; i < 2 * s->n; i++) {
            size_t k = i < s->n ? i : 2 * s->n - 1 - i;
            double x = xpb_axis_map(ax, s->x[k] * sx);
            double y = xpb_axis_map(ay, (i < s->n ? s->lo[k] : s->hi[k]) * sy);
            if (isfinite(x) && isfinite(y))
                xpb_text_printf(t, "%.1f,%.1f ", x, y);
        }
        xpb_text_puts(t, "\"/>");
        return;
    }
    if (s->style & XPB_SERIES_LINE) {
        xpb_text_printf(t, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                        color, s->style & XPB_SERIES_DASHED ? " stroke-dasharray=\"7 5\"" : "");
        for (size_t k = 0; k < s->n; k++) {
            double x = xpb_axis_map(ax, s->x[k] * sx), y = xpb_axis_map(ay, s->y[k] * sy);
            if (isfinite(x) && isfinite(y))
                xpb_text_printf(t, "%.1f,%.1f ", x, y);
        }
        xpb_text_puts(t, "\"/>");
    }
    for (size_t k = 0; k < s->n; k++) {
        double x = xpb_axis_map(ax, s->x[k] * sx), y = xpb_axis_map(ay, s->y[k] * sy);
        double lo = xpb_axis_map(ay, s->lo[k] * sy), hi = xpb_axis_map(ay, s->hi[k] * sy);
        if (!isfinite(x) || !isfinite(y))
            continue;
        if (isfinite(lo) && isfinite(hi))
            xpb_text_printf(t,
                            "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\" stroke=\"%s\" "
                            "stroke-width=\"1.5\"/>",
                            x, lo, hi, x - 4, lo, x - 4, hi, color);
        if (s->style & XPB_SERIES_POINTS)
            xpb_svg_marker(t, s->color, x, y, color);
    }
}

static void xy_legend(struct xpb_text *t, const xpb_chart *c, double x, double y)
{
    for (size_t i = 0; i < c->n_series; i++, y += 18) {
        const xpb_chart_series *s = &c->series[i];
        const char *color = xpb_svg_palette[s->color % XPB_SVG_COLORS];
        if (s->style & XPB_SERIES_BAND)
            xpb_text_printf(t,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"22\" height=\"10\" fill=\"%s\" "
                            "fill-opacity=\"0.18\"/>",
                            x, y - 5, color);
        if (s->style & XPB_SERIES_LINE)
            xpb_text_printf(t, "<path d=\"M%.1f %.1fh22\" stroke=\"%s\" stroke-width=\"2\"%s/>", x,
                            y, color,
                            s->style & XPB_SERIES_DASHED ? " stroke-dasharray=\"7 5\"" : "");
        if (s->style & XPB_SERIES_POINTS)
            xpb_svg_marker(t, s->color, x + 11, y, color);
        xpb_svg_text(t, x + 28, y + 4, "start", s->label, 96);
    }
}

static void xy_chart(struct xpb_text *t, const xpb_chart *c)
{
    double xr[2], yr[2];
    xy_ranges(c, xr, yr);
    struct xpb_axis ax, ay;
    double bottom = XY_TOP + XY_PLOT_HEIGHT;
    xpb_axis_fit(&ax, xr[0], xr[1], c->x_log2 ? 2 : 0, c->x_unit == XPB_UNIT_COUNT, XY_LEFT,
                 XY_WIDTH - XY_RIGHT);
    xpb_axis_fit(&ay, yr[0], yr[1], 0, 0, bottom, XY_TOP);
    xpb_svg_open(t, c->id, c->title, XY_WIDTH,
                 bottom + XY_AXIS + XY_LEGEND * (double)c->n_series + 4);
    xy_axes(t, c, &ax, &ay);
    if (isfinite(c->hline)) {
        double y = xpb_axis_map(&ay, c->hline * xpb_unit_scale(c->y_unit));
        xpb_text_printf(t, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#555\" stroke-dasharray=\"2 3\"/>",
                        ax.p0, y, ax.p1);
        xpb_svg_text(t, ax.p1 - 4, y - 5, "end", c->hline_label ? c->hline_label : "", 30);
    }
    for (int bands = 1; bands >= 0; bands--) /* bands first, under the lines and points */
        for (size_t i = 0; i < c->n_series; i++)
            if (!(c->series[i].style & XPB_SERIES_BAND) == !bands)
                xy_series(t, c, &c->series[i], &ax, &ay);
    xy_legend(t, c, XY_LEFT, bottom + XY_AXIS + XY_LEGEND / 2);
    xpb_svg_close(t, c->note);
}

/* A bar chart: the report's bars drawn by render/svg_bars.h. */
static void bar_chart(struct xpb_text *t, const xpb_chart *c)
{
    struct xpb_svg_bar_chart b = {
        .id = c->id,
        .title = c->title,
        .note = c->note,
        .axis_label = c->x_label,
        .scale = xpb_unit_scale(c->x_unit),
        .value_suffix = c->x_unit == XPB_UNIT_SPEEDUP ? xpb_unit_name(c->x_unit) : "",
        .log10 = c->x_log10,
        .ref = c->ref,
        .n_segments = c->n_segments,
        .segment_names = c->segment_names,
        .n_bars = c->n_bars,
        .bars = c->bars,
    };
    xpb_svg_bar_chart(t, &b);
}

void xpb_report_chart(struct xpb_text *t, const xpb_chart *c)
{
    if (c->kind == XPB_CHART_BARS)
        bar_chart(t, c);
    else
        xy_chart(t, c);
}
