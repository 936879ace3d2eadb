/* Heat maps as inline SVG: a grid of cells, one per pair of a column value and a row value, each
 * filled by its value on a sequential colour scale (viridis: light to dark, readable by
 * colour-blind readers and in grey) with the number written in it, the columns and rows
 * labelled, and a colour bar with the scale's ends. A cell without a value is left white with a
 * dash. The number of each cell is a <text> whose attributes a callback writes, so that a page
 * can carry its exact value and where it came from. */
#ifndef XPB_CORE_RENDER_SVG_HEATMAP_H
#define XPB_CORE_RENDER_SVG_HEATMAP_H

#include <stddef.h>

#include "render/text.h"

struct xpb_svg_heatmap {
    const char *id, *title;                      /* the figure's id and caption */
    const char *note;                            /* under the chart, or NULL */
    const char *x_label, *y_label, *value_label; /* the columns', the rows' and the values' */
    size_t n_cols, n_rows;
    const char *const *col_labels; /* left to right */
    const char *const *row_labels; /* row 0 at the bottom, as a y axis grows upwards */
    const double *values;          /* n_rows x n_cols, row-major, display units; NaN: none */
    /* Optional (NULL: none): writes attributes into the <text> of cell (row, col). */
    void (*cell_attrs)(struct xpb_text *t, size_t row, size_t col, const void *ctx);
    /* Writes a cell's number (display units); NULL: four significant digits (format.h). */
    void (*value_text)(struct xpb_text *t, double v, const void *ctx);
    const void *ctx;
};

/* Appends the heat map as a figure with an inline <svg>. */
void xpb_svg_heatmap(struct xpb_text *t, const struct xpb_svg_heatmap *h);

/* The colour of position f in [0, 1] (clamped) of the scale, as "#rrggbb" into buf[8]; whether
 * text on it should be white (a dark colour). */
int xpb_svg_heat_color(char buf[8], double f);

#endif
