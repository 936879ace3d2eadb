/* Server-rendered SVG charts, inlined in the pages: they need no script and no network, and
 * they print. Colours come from the stylesheet (classes), so the charts follow the page's
 * light or dark theme. Every text goes through lb_buf_html. */
#ifndef LB_SVG_H
#define LB_SVG_H

#include <stddef.h>

#include "text/lb_buf.h"

struct lb_bar {
    const char *label;  /* left of the bar (shortened when long; the tooltip has it whole) */
    const char *detail; /* tooltip line after the label, or NULL */
    double value;       /* bars with NAN or negative values are drawn empty */
    const char *href;   /* link of the bar (a local path), or NULL */
    const char *klass;  /* extra CSS class of the bar ("cpu", "acc"), or NULL */
};

/* A horizontal bar chart: one row per bar, in the given order, scaled to the largest value,
 * with a value label after each bar and a light grid. `title` is the accessible name. */
void lb_svg_bars(struct lb_buf *b, const char *title, const char *unit, const struct lb_bar *bars,
                 size_t n);

struct lb_pair {
    const char *label;
    double a, b; /* NAN when that side has no value */
};

/* Two bars per row (A above B), for comparing two submissions; a legend names A and B. */
void lb_svg_pairs(struct lb_buf *b, const char *title, const char *unit, const char *name_a,
                  const char *name_b, const struct lb_pair *pairs, size_t n);

/* A "nice" axis maximum >= v (1, 2 or 5 times a power of ten, in quarters); 1 for v <= 0. */
double lb_svg_nice_max(double v);

#endif
