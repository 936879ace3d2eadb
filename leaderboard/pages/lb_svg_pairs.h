/* The comparison page's paired bar chart, rendered by the server and inlined: two bars per row
 * (submission A above B), colours from the stylesheet (classes "bar a", "bar b"), so that it
 * follows the page's light or dark theme. The one chart core's render/ room has no form of
 * (its bar charts, xpb_svg_bar_chart, draw one bar per row); every text goes through xpb_html. */
#ifndef LB_SVG_PAIRS_H
#define LB_SVG_PAIRS_H

#include <stddef.h>

#include "render/text.h"

struct lb_pair {
    const char *label;
    double a, b; /* NAN when that side has no value */
};

/* Two bars per row (A above B), scaled to the largest value, with a value label after each bar,
 * a light grid and a legend naming A and B. `title` is the accessible name. */
void lb_svg_pairs(struct xpb_text *b, const char *title, const char *unit, const char *name_a,
                  const char *name_b, const struct lb_pair *pairs, size_t n);

#endif
