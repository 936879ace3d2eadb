/* Scatter charts as inline SVG: points of several series on linear or log10 axes, each point a
 * marker whose area may stand for a quantity (the time an op takes), polylines through given
 * points (a roofline's ceilings, a reference at 1) with a label at their right end, and a legend
 * of the series. Every point and line is a <g> whose attributes a callback writes, so that a
 * page can carry each drawn number's exact value and where it came from. */
#ifndef XPB_CORE_RENDER_SVG_SCATTER_H
#define XPB_CORE_RENDER_SVG_SCATTER_H

#include <stddef.h>

#include "render/text.h"

#define XPB_SVG_SCATTER_MAX_R 22.0 /* the radius of the largest sized point */

struct xpb_svg_scatter_point {
    double x, y;         /* display units; a point a log axis cannot show is left out */
    double size;         /* > 0: the marker is a circle whose area is proportional to it (the
                            chart's largest gets XPB_SVG_SCATTER_MAX_R); else the series' marker */
    int series;          /* index into the chart's series: colour and marker shape */
    const char *label;   /* a short text next to the point, or NULL */
    const char *tooltip; /* its <title>, or NULL */
};

struct xpb_svg_scatter_line {
    size_t n;
    const double *x, *y; /* display units: a polyline (log axes: only points > 0) */
    const char *label;   /* written above its right end, or NULL */
    int dashed;
};

struct xpb_svg_scatter {
    const char *id, *title; /* the figure's id and caption */
    const char *note;       /* under the chart, or NULL */
    const char *x_label, *y_label;
    int x_log10, y_log10; /* the axis on a log10 scale */
    size_t n_series;
    const char *const *series_names; /* the legend, one line per series; NULL: no legend */
    size_t n_points;
    const struct xpb_svg_scatter_point *points;
    size_t n_lines;
    const struct xpb_svg_scatter_line *lines;
    /* Optional (NULL: none): write attributes (` data-x="1"`) into the <g> of point i or line
     * i; `ctx` is handed back. */
    void (*point_attrs)(struct xpb_text *t, size_t i, const void *ctx);
    void (*line_attrs)(struct xpb_text *t, size_t i, const void *ctx);
    const void *ctx;
};

/* Appends the chart as a figure with an inline <svg>. The axes cover every point and every
 * line's points. */
void xpb_svg_scatter(struct xpb_text *t, const struct xpb_svg_scatter *c);

/* The label of a log10 tick: integers below 10000 in full, then "1e4", "1e5" ...; below 0.001
 * "1e-4" ...; between them four significant digits ("0.01", "0.5"). Always NUL-terminated. */
void xpb_svg_log_label(char *buf, size_t size, double v);

#endif
