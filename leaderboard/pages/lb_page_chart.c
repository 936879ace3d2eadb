/* The pages' bar chart of throughputs (see lb_pages.h): core's xpb_svg_bar_chart in the
 * stylesheet's style. */
#include <math.h>
#include <stdlib.h>

#include "pages/lb_pages.h"
#include "render/format_si.h"
#include "render/svg_bars.h"

/* A bar's value after it: samples/s with an SI prefix ("1.50 ksamples/s"). */
static void si_value(struct xpb_text *t, double v, const void *unit)
{
    xpb_format_si(t, v, unit);
}

/* The class of a bar on a device of this kind (lb.css: rect.bar.cpu, .unk, .acc). */
static const char *bar_class(const char *device_kind)
{
    const char *kind = lb_page_kind_class(device_kind);
    return kind[0] == 'c' ? "bar cpu" : kind[0] == 'u' ? "bar unk" : "bar acc";
}

void lb_page_bars(struct xpb_text *b, const char *id, const char *title,
                  const struct lb_page_bar *bars, size_t n)
{
    struct xpb_svg_bar *svg = calloc(n ? n : 1, sizeof *svg);
    double *values = calloc(n ? n : 1, sizeof *values);
    if (!svg || !values) {
        b->failed = 1; /* the page is incomplete: the server answers 500 */
        goto done_arrays;
    }
    for (size_t i = 0; i < n; i++) {
        values[i] = bars[i].value;
        svg[i] = (struct xpb_svg_bar){.label = bars[i].label,
                                      .values = &values[i],
                                      .lo = NAN,
                                      .hi = NAN,
                                      .href = bars[i].href,
                                      .tooltip = bars[i].tooltip,
                                      .css_class = bar_class(bars[i].device_kind)};
    }
    struct xpb_svg_bar_chart chart = {.id = id,
                                      .title = title,
                                      .css_class = "chart bars",
                                      .axis_label = "samples/s",
                                      .scale = 1,
                                      .value_text = si_value,
                                      .value_ctx = "samples/s",
                                      .ref = NAN,
                                      .n_segments = 1,
                                      .n_bars = n,
                                      .bars = svg};
    xpb_svg_bar_chart(b, &chart);
done_arrays:
    free(values);
    free(svg);
}
