/* SVG primitives shared by the charts of the report and of the leaderboard's pages: "nice"
 * axis steps and ticks on linear, log2 and log10 scales, tick labels, the colour palette,
 * markers, escaped and shortened labels, and the figure an inline <svg> sits in. Coordinates
 * are SVG user units (pixels); every text goes through xpb_html. */
#ifndef XPB_CORE_RENDER_SVG_H
#define XPB_CORE_RENDER_SVG_H

#include <stddef.h>

#include "render/text.h"

#define XPB_SVG_MAX_TICKS 16
#define XPB_SVG_COLORS 7

/* Okabe & Ito's colour-blind-safe palette without its yellow (too light on white paper). */
extern const char *const xpb_svg_palette[XPB_SVG_COLORS];

/* 1, 2 or 5 times a power of ten, at least x (x > 0). */
double xpb_svg_nice_step(double x);

/* A "nice" axis maximum >= v whose `parts` equal divisions are nice steps ("0, 25, 50, 75,
 * 100" for parts 4); 1 for v <= 0, NaN or infinity. */
double xpb_svg_nice_max(double v, int parts);

struct xpb_axis {
    double lo, hi; /* the range shown, display units */
    int log;       /* 0 linear, 2 or 10: logarithmic in that base */
    int integer;   /* linear ticks at whole numbers only (threads, steps) */
    double step;   /* linear: the distance between ticks */
    double p0, p1; /* the pixels of lo and hi */
    double ticks[XPB_SVG_MAX_TICKS];
    size_t n_ticks;
};

/* An axis over the display values [lo, hi] (for a log axis, only values > 0 count), widened to
 * nice ticks (whole numbers when `integer`); a degenerate range is widened around its value. */
void xpb_axis_fit(struct xpb_axis *a, double lo, double hi, int log, int integer, double p0,
                  double p1);

/* The pixel of display value v (NaN for a value a log axis cannot show). */
double xpb_axis_map(const struct xpb_axis *a, double v);

/* The label of tick v of axis a: on a linear axis with the decimals its step needs ("2.305"
 * for a step of 0.005), on a log axis integers in full and other values with four significant
 * digits and no trailing zeros ("0.1", "0.25"). Always NUL-terminated. */
void xpb_svg_tick_label(char *buf, size_t size, double v, const struct xpb_axis *a);

/* A marker of shape `k` (circle, square, triangle, diamond, ...) centred at x, y. */
void xpb_svg_marker(struct xpb_text *t, int k, double x, double y, const char *color);

/* <text> at x, y (anchor "start", "middle", "end"), escaped, cut to max_bytes bytes (at a
 * character boundary, with an ellipsis and the whole text as its tooltip) when longer. */
void xpb_svg_text(struct xpb_text *t, double x, double y, const char *anchor, const char *text,
                  size_t max_bytes);

/* A figure with its id and caption around an inline <svg> of the given size whose accessible
 * title is the caption; and its end, with a note under the chart (NULL: none). */
void xpb_svg_open(struct xpb_text *t, const char *id, const char *title, double width,
                  double height);

/* xpb_svg_open with a class on the <svg> element (NULL: none), for a page whose stylesheet
 * styles its charts (the leaderboard's "chart bars"). */
void xpb_svg_open_class(struct xpb_text *t, const char *id, const char *css_class,
                        const char *title, double width, double height);
void xpb_svg_close(struct xpb_text *t, const char *note);

#endif
