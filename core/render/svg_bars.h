/* Horizontal bar charts as inline SVG: one row per bar with its label on the left and its
 * value after it; a linear axis from 0 or a log10 axis, a reference line that bars grow from
 * (1 for speedups), stacked segments with a legend (where a step's time goes), whiskers for an
 * interval, hollow bars (no significant difference). Bars may link somewhere and carry a
 * tooltip, and may take their colour from a CSS class instead of the palette, for pages with
 * a stylesheet (a light or dark theme). */
#ifndef XPB_CORE_RENDER_SVG_BARS_H
#define XPB_CORE_RENDER_SVG_BARS_H

#include <stddef.h>

#include "render/text.h"

struct xpb_svg_bar {
    const char *label;
    double *values; /* the chart's n_segments values, stacked, in the values' unit */
    double lo, hi;  /* whiskers of a one-segment bar (NaN: none) */
    int hollow;     /* drawn as an outline */
    /* Optional (NULL: none): a link around the row, a tooltip for the row, and the CSS class
     * of the bar's rectangles (then they have no fill or stroke of their own). */
    const char *href, *tooltip, *css_class;
};

struct xpb_svg_bar_chart {
    const char *id, *title; /* the figure's id and caption */
    const char *css_class;  /* the class of the <svg> element, or NULL (xpb_svg_open_class) */
    const char *note;       /* under the chart, or NULL */
    const char *axis_label;
    double scale;             /* from the values' unit to the axis' (display) unit */
    const char *value_suffix; /* after each bar's value ("×"), or NULL */
    /* Writes a bar's total (display unit) after the bar; NULL: four significant digits
     * (format.h) and the suffix. */
    void (*value_text)(struct xpb_text *t, double v, const void *ctx);
    const void *value_ctx;
    int log10;  /* the value axis on a log10 scale */
    double ref; /* a reference line the bars start from (display unit / scale), NaN: none */
    size_t n_segments;
    const char *const *segment_names; /* the legend (NULL: none, for one segment) */
    size_t n_bars;
    const struct xpb_svg_bar *bars;
};

/* Appends the chart as a figure with an inline <svg>. */
void xpb_svg_bar_chart(struct xpb_text *t, const struct xpb_svg_bar_chart *c);

#endif
