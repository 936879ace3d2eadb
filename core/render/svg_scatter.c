/* Scatter charts (see svg_scatter.h). */
#include "render/svg_scatter.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/escape.h"
#include "render/svg.h"

#define SC_WIDTH 720.0
#define SC_PLOT_HEIGHT 320.0
#define SC_LEFT 78.0
#define SC_RIGHT 24.0
#define SC_TOP 24.0
#define SC_AXIS 56.0   /* tick labels and the axis label under the plot */
#define SC_LEGEND 18.0 /* one legend line per series */
#define SC_MIN_R 3.0   /* the smallest sized point stays visible */

void xpb_svg_log_label(char *buf, size_t size, double v)
{
    double e = round(log10(fabs(v)));
    if (v > 0 && fabs(v - pow(10, e)) <= 1e-9 * v && (e >= 4 || e <= -4)) {
        snprintf(buf, size, "1e%.0f", e);
        return;
    }
    struct xpb_axis a = {.log = 10};
    xpb_svg_tick_label(buf, size, v, &a);
}

/* Whether display value v can be drawn on an axis (log: positive). */
static int drawable(double v, int log)
{
    return isfinite(v) && (!log || v > 0);
}

static void widen(double *r, double v, int log)
{
    if (drawable(v, log)) {
        r[0] = fmin(r[0], v);
        r[1] = fmax(r[1], v);
    }
}

/* The display ranges of every point and line point. */
static void ranges(const struct xpb_svg_scatter *c, double *x, double *y)
{
    x[0] = y[0] = INFINITY;
    x[1] = y[1] = -INFINITY;
    for (size_t i = 0; i < c->n_points; i++)
        if (drawable(c->points[i].x, c->x_log10) && drawable(c->points[i].y, c->y_log10)) {
            widen(x, c->points[i].x, c->x_log10);
            widen(y, c->points[i].y, c->y_log10);
        }
    for (size_t i = 0; i < c->n_lines; i++)
        for (size_t k = 0; k < c->lines[i].n; k++)
            if (drawable(c->lines[i].x[k], c->x_log10) && drawable(c->lines[i].y[k], c->y_log10)) {
                widen(x, c->lines[i].x[k], c->x_log10);
                widen(y, c->lines[i].y[k], c->y_log10);
            }
}

static void tick_label(char *buf, size_t size, double v, const struct xpb_axis *a)
{
    if (a->log)
        xpb_svg_log_label(buf, size, v);
    else
        xpb_svg_tick_label(buf, size, v, a);
}

static void axes(struct xpb_text *t, const struct xpb_svg_scatter *c, const struct xpb_axis *ax,
                 const struct xpb_axis *ay)
{
    char label[48];
    xpb_text_puts(t, "<g stroke=\"#ddd\" stroke-width=\"1\">");
    for (size_t i = 0; i < ay->n_ticks; i++)
        xpb_text_printf(t, "<path d=\"M%.1f %.1fH%.1f\"/>", ax->p0, xpb_axis_map(ay, ay->ticks[i]),
                        ax->p1);
    for (size_t i = 0; i < ax->n_ticks; i++)
        xpb_text_printf(t, "<path d=\"M%.1f %.1fV%.1f\"/>", xpb_axis_map(ax, ax->ticks[i]), ay->p0,
                        ay->p1);
    xpb_text_puts(t, "</g><g>");
    for (size_t i = 0; i < ay->n_ticks; i++) {
        tick_label(label, sizeof label, ay->ticks[i], ay);
        xpb_svg_text(t, ax->p0 - 6, xpb_axis_map(ay, ay->ticks[i]) + 4, "end", label, 12);
    }
    for (size_t i = 0; i < ax->n_ticks; i++) {
        tick_label(label, sizeof label, ax->ticks[i], ax);
        xpb_svg_text(t, xpb_axis_map(ax, ax->ticks[i]), ay->p0 + 18, "middle", label, 12);
    }
    xpb_text_printf(t, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#111\"/>", ax->p0,
                    ay->p1, ay->p0, ax->p1);
    xpb_svg_text(t, (ax->p0 + ax->p1) / 2, ay->p0 + 40, "middle", c->x_label ? c->x_label : "", 90);
    xpb_text_printf(t, "<g transform=\"translate(16 %.1f) rotate(-90)\">", (ay->p0 + ay->p1) / 2);
    xpb_svg_text(t, 0, 0, "middle", c->y_label ? c->y_label : "", 50);
    xpb_text_puts(t, "</g></g>");
}

static void lines(struct xpb_text *t, const struct xpb_svg_scatter *c, const struct xpb_axis *ax,
                  const struct xpb_axis *ay)
{
    for (size_t i = 0; i < c->n_lines; i++) {
        const struct xpb_svg_scatter_line *l = &c->lines[i];
        double ex = NAN, ey = NAN;
        xpb_text_puts(t, "<g class=\"line\"");
        if (c->line_attrs)
            c->line_attrs(t, i, c->ctx);
        xpb_text_printf(t,
                        "><polyline fill=\"none\" stroke=\"#333\" stroke-width=\"2\"%s points=\"",
                        l->dashed ? " stroke-dasharray=\"7 5\"" : "");
        for (size_t k = 0; k < l->n; k++) {
            double x = xpb_axis_map(ax, l->x[k]), y = xpb_axis_map(ay, l->y[k]);
            if (isfinite(x) && isfinite(y)) {
                xpb_text_printf(t, "%.1f,%.1f ", x, y);
                ex = x;
                ey = y;
            }
        }
        xpb_text_puts(t, "\"/>");
        if (l->label && isfinite(ex))
            xpb_svg_text(t, ex - 4, ey - 6, "end", l->label, 60);
        xpb_text_puts(t, "</g>");
    }
}

/* The radius of point p (sized: by the square root of its share of the largest size). */
static double radius(const struct xpb_svg_scatter_point *p, double largest)
{
    if (!(p->size > 0) || !(largest > 0))
        return 0;
    return fmax(SC_MIN_R, XPB_SVG_SCATTER_MAX_R * sqrt(p->size / largest));
}

static void points(struct xpb_text *t, const struct xpb_svg_scatter *c, const struct xpb_axis *ax,
                   const struct xpb_axis *ay)
{
    double largest = 0;
    for (size_t i = 0; i < c->n_points; i++)
        if (c->points[i].size > largest && isfinite(c->points[i].size))
            largest = c->points[i].size;
    for (size_t i = 0; i < c->n_points; i++) {
        const struct xpb_svg_scatter_point *p = &c->points[i];
        double x = xpb_axis_map(ax, p->x), y = xpb_axis_map(ay, p->y);
        if (!drawable(p->x, c->x_log10) || !drawable(p->y, c->y_log10))
            continue;
        const char *color = xpb_svg_palette[p->series % XPB_SVG_COLORS];
        double r = radius(p, largest);
        xpb_text_puts(t, "<g class=\"point\"");
        if (c->point_attrs)
            c->point_attrs(t, i, c->ctx);
        xpb_text_puts(t, ">");
        if (p->tooltip) {
            xpb_text_puts(t, "<title>");
            xpb_html(t, p->tooltip);
            xpb_text_puts(t, "</title>");
        }
        if (r > 0) /* the area for the size, the series' marker at its centre for the shape */
            xpb_text_printf(t,
                            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
                            "fill-opacity=\"0.3\" stroke=\"%s\" stroke-width=\"1.5\"/>",
                            x, y, r, color, color);
        xpb_svg_marker(t, p->series, x, y, color);
        if (p->label)
            xpb_svg_text(t, x + fmax(r, 5) + 3, y + 4, "start", p->label, 24);
        xpb_text_puts(t, "</g>");
    }
}

void xpb_svg_scatter(struct xpb_text *t, const struct xpb_svg_scatter *c)
{
    double xr[2], yr[2];
    ranges(c, xr, yr);
    struct xpb_axis ax, ay;
    double bottom = SC_TOP + SC_PLOT_HEIGHT;
    size_t legend = c->series_names ? c->n_series : 0;
    xpb_axis_fit(&ax, xr[0], xr[1], c->x_log10 ? 10 : 0, 0, SC_LEFT, SC_WIDTH - SC_RIGHT);
    xpb_axis_fit(&ay, yr[0], yr[1], c->y_log10 ? 10 : 0, 0, bottom, SC_TOP);
    xpb_svg_open(t, c->id, c->title, SC_WIDTH, bottom + SC_AXIS + SC_LEGEND * (double)legend + 4);
    axes(t, c, &ax, &ay);
    lines(t, c, &ax, &ay);
    points(t, c, &ax, &ay);
    double y = bottom + SC_AXIS + SC_LEGEND / 2;
    for (size_t i = 0; i < legend; i++, y += SC_LEGEND) {
        const char *color = xpb_svg_palette[i % XPB_SVG_COLORS];
        xpb_svg_marker(t, (int)i, SC_LEFT + 11, y, color);
        xpb_svg_text(t, SC_LEFT + 28, y + 4, "start", c->series_names[i], 96);
    }
    xpb_svg_close(t, c->note);
}
