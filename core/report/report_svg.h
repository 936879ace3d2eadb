/* Pieces the two SVG chart renderers share (report_svg.c draws points and lines and holds
 * these, report_svg_bars.c draws bars): axes with "nice" ticks on linear, log2 and log10
 * scales, the palette, markers and labels. Coordinates are SVG user units (pixels). */
#ifndef XPB_CORE_REPORT_SVG_H
#define XPB_CORE_REPORT_SVG_H

#include <stdio.h>

#include "report/report_model.h"

#define XPB_SVG_MAX_TICKS 16
#define XPB_SVG_COLORS 7

/* Okabe & Ito's colour-blind-safe palette without its yellow (too light on white paper). */
extern const char *const xpb_svg_palette[XPB_SVG_COLORS];

typedef struct xpb_axis {
    double lo, hi; /* the range shown, display units */
    int log;       /* 0 linear, 2 or 10: logarithmic in that base */
    int integer;   /* linear ticks at whole numbers only (threads, steps) */
    double step;   /* linear: the distance between ticks */
    double p0, p1; /* the pixels of lo and hi */
    double ticks[XPB_SVG_MAX_TICKS];
    size_t n_ticks;
} xpb_axis;

/* An axis over the display values [lo, hi] (for a log axis, only values > 0 count), widened to
 * nice ticks (whole numbers when `integer`); a degenerate range is widened around its value. */
void xpb_axis_fit(xpb_axis *a, double lo, double hi, int log, int integer, double p0, double p1);

/* The pixel of display value v (NaN for a value a log axis cannot show). */
double xpb_axis_map(const xpb_axis *a, double v);

/* The label of tick v of axis a: on a linear axis with the decimals its step needs ("2.305"
 * for a step of 0.005), on a log axis integers in full and other values with four significant
 * digits and no trailing zeros ("0.1", "0.25"). */
void xpb_svg_tick_label(char *buf, size_t size, double v, const xpb_axis *a);

/* A marker of shape `k` (circle, square, triangle, diamond, ...) centred at x, y. */
void xpb_svg_marker(FILE *f, int k, double x, double y, const char *color);

/* <text> at x, y (anchor "start", "middle", "end"), escaped, cut to max_chars characters with
 * an ellipsis and the whole text as its tooltip when longer. */
void xpb_svg_text(FILE *f, double x, double y, const char *anchor, const char *text,
                  size_t max_chars);

/* The opening <svg> with its accessible title, and the closing figure around it. */
void xpb_svg_open(FILE *f, const xpb_chart *c, double width, double height);
void xpb_svg_close(FILE *f, const xpb_chart *c);

/* The bar chart (report_svg_bars.c). */
void xpb_svg_bars(FILE *f, const xpb_chart *c);

#endif
