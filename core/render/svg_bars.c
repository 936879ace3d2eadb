/* Horizontal bar charts (see svg_bars.h). */
#include "render/svg_bars.h"

#include <math.h>
#include <string.h>

#include "render/escape.h"
#include "render/format.h"
#include "render/svg.h"

#define BAR_WIDTH 900.0
#define BAR_LABELS 420.0 /* the label column */
#define BAR_RIGHT 80.0   /* the value labels */
#define BAR_ROW 26.0
#define BAR_TOP 12.0
#define BAR_LEGEND 22.0
#define BAR_BOTTOM 48.0

/* The display-unit range of every bar end and whisker (and the reference). */
static void bar_range(const struct xpb_svg_bar_chart *c, double *lo, double *hi)
{
    double s = c->scale;
    *lo = c->log10 ? INFINITY : 0;
    *hi = c->log10 ? -INFINITY : 0;
    for (size_t i = 0; i < c->n_bars; i++) {
        const struct xpb_svg_bar *b = &c->bars[i];
        double total = 0;
        for (size_t k = 0; k < c->n_segments; k++)
            total += b->values[k];
        double v[3] = {total * s, b->lo * s, b->hi * s};
        for (int j = 0; j < 3; j++)
            if (isfinite(v[j]) && (!c->log10 || v[j] > 0)) {
                *lo = fmin(*lo, v[j]);
                *hi = fmax(*hi, v[j]);
            }
    }
    if (isfinite(c->ref)) {
        *lo = fmin(*lo, c->ref * s);
        *hi = fmax(*hi, c->ref * s);
    }
}

static void bar_axis(struct xpb_text *t, const struct xpb_svg_bar_chart *c,
                     const struct xpb_axis *ax, double y0, double y1)
{
    char label[48];
    xpb_text_puts(t, "<g>");
    for (size_t i = 0; i < ax->n_ticks; i++) {
        double x = xpb_axis_map(ax, ax->ticks[i]);
        xpb_svg_tick_label(label, sizeof label, ax->ticks[i], ax);
        xpb_text_printf(t, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#ddd\"/>", x, y0, y1);
        xpb_svg_text(t, x, y1 + 16, "middle", label, 12);
    }
    xpb_text_printf(t, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#111\"/>", ax->p0, y1, ax->p1);
    xpb_svg_text(t, (ax->p0 + ax->p1) / 2, y1 + 38, "middle", c->axis_label ? c->axis_label : "",
                 100);
    if (isfinite(c->ref)) {
        double x = xpb_axis_map(ax, c->ref * c->scale);
        xpb_text_printf(t, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#111\" stroke-width=\"1.5\"/>", x,
                        y0, y1);
    }
    xpb_text_puts(t, "</g>");
}

/* The segments of bar b (or one bar from the reference); returns its total. */
static double segments(struct xpb_text *t, const struct xpb_svg_bar_chart *c,
                       const struct xpb_svg_bar *b, const struct xpb_axis *ax, double y)
{
    double s = c->scale, start = isfinite(c->ref) ? c->ref * s : ax->lo;
    double total = 0;
    for (size_t k = 0; k < c->n_segments; k++) {
        double from = xpb_axis_map(ax, c->n_segments > 1 ? total * s : start);
        double to =
            xpb_axis_map(ax, c->n_segments > 1 ? (total + b->values[k]) * s : b->values[k] * s);
        total += b->values[k];
        const char *color = xpb_svg_palette[(c->n_segments > 1 ? k : 0) % XPB_SVG_COLORS];
        if (!isfinite(from) || !isfinite(to))
            continue;
        xpb_text_puts(t, "<rect ");
        if (b->css_class) { /* first, so that a page's tests find a bar by its class */
            xpb_text_puts(t, "class=\"");
            xpb_html(t, b->css_class);
            xpb_text_puts(t, "\" ");
        }
        xpb_text_printf(t, "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", fmin(from, to),
                        y + 4, fabs(to - from), BAR_ROW - 8);
        if (b->css_class)
            xpb_text_puts(t, "/>");
        else
            xpb_text_printf(t, " fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>",
                            b->hollow ? "#fff" : color, color);
    }
    return total;
}

/* One bar: its segments, whiskers, value label and label, in a link and a group with its
 * tooltip when it has them. */
static void bar(struct xpb_text *t, const struct xpb_svg_bar_chart *c, const struct xpb_svg_bar *b,
                const struct xpb_axis *ax, double y)
{
    double s = c->scale;
    if (b->href) {
        xpb_text_puts(t, "<a href=\"");
        xpb_html(t, b->href);
        xpb_text_puts(t, "\">");
    }
    if (b->tooltip) {
        xpb_text_puts(t, "<g><title>");
        xpb_html(t, b->tooltip);
        xpb_text_puts(t, "</title>");
    }
    double total = segments(t, c, b, ax, y);
    double lo = xpb_axis_map(ax, b->lo * s), hi = xpb_axis_map(ax, b->hi * s);
    if (isfinite(lo) && isfinite(hi))
        xpb_text_printf(t,
                        "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fv10M%.1f %.1fv10\" stroke=\"#111\" "
                        "stroke-width=\"1.5\"/>",
                        lo, y + BAR_ROW / 2, hi, lo, y + BAR_ROW / 2 - 5, hi, y + BAR_ROW / 2 - 5);
    double end = fmax(xpb_axis_map(ax, total * s), isfinite(hi) ? hi : 0);
    xpb_text_printf(t, "<text x=\"%.1f\" y=\"%.1f\">", fmax(end, ax->p0) + 6, y + BAR_ROW / 2 + 4);
    if (c->value_text) {
        c->value_text(t, total * s, c->value_ctx);
    } else {
        char value[48];
        xpb_report_format_number(value, sizeof value, total * s);
        xpb_text_puts(t, value);
        xpb_text_puts(t, c->value_suffix);
    }
    xpb_text_puts(t, "</text>");
    xpb_svg_text(t, BAR_LABELS - 8, y + BAR_ROW / 2 + 4, "end", b->label, 60);
    if (b->tooltip)
        xpb_text_puts(t, "</g>");
    if (b->href)
        xpb_text_puts(t, "</a>");
}

static void legend(struct xpb_text *t, const struct xpb_svg_bar_chart *c)
{
    double x = 10;
    for (size_t k = 0; c->segment_names && k < c->n_segments; k++) {
        size_t len = strlen(c->segment_names[k]);
        xpb_text_printf(t, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>",
                        x, BAR_TOP, xpb_svg_palette[k % XPB_SVG_COLORS]);
        xpb_svg_text(t, x + 16, BAR_TOP + 10, "start", c->segment_names[k], 16);
        x += 30 + 7.0 * (double)(len < 16 ? len : 16);
    }
}

void xpb_svg_bar_chart(struct xpb_text *t, const struct xpb_svg_bar_chart *c)
{
    double top = BAR_TOP + (c->n_segments > 1 ? BAR_LEGEND : 0);
    double height = top + BAR_ROW * (double)c->n_bars + BAR_BOTTOM;
    double lo, hi;
    bar_range(c, &lo, &hi);
    struct xpb_axis ax;
    xpb_axis_fit(&ax, lo, hi, c->log10 ? 10 : 0, 0, BAR_LABELS, BAR_WIDTH - BAR_RIGHT);
    xpb_svg_open_class(t, c->id, c->css_class, c->title, BAR_WIDTH, height);
    if (c->n_segments > 1)
        legend(t, c);
    bar_axis(t, c, &ax, top, top + BAR_ROW * (double)c->n_bars);
    for (size_t i = 0; i < c->n_bars; i++)
        bar(t, c, &c->bars[i], &ax, top + BAR_ROW * (double)i);
    xpb_svg_close(t, c->note);
}
