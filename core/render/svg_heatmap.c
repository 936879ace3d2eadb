/* Heat maps (see svg_heatmap.h). */
#include "render/svg_heatmap.h"

#include <math.h>
#include <stdio.h>

#include "render/format.h"
#include "render/svg.h"

#define HM_LEFT 120.0 /* row labels and the rows' axis label */
#define HM_TOP 12.0
#define HM_CELL_W 78.0 /* at most; narrower when there are many columns */
#define HM_CELL_H 34.0
#define HM_MAX_PLOT 760.0
#define HM_BOTTOM 64.0 /* column labels and the columns' axis label */
#define HM_BAR 110.0   /* the colour bar at the right */

/* Viridis at nine evenly spaced points (matplotlib's table), interpolated linearly. */
static const unsigned char viridis[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},
                                            {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                                            {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};

int xpb_svg_heat_color(char buf[8], double f)
{
    f = isfinite(f) ? fmin(1, fmax(0, f)) : 0;
    double at = f * 8;
    int i = (int)fmin(7, floor(at));
    double w = at - i;
    int rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(viridis[i][k] * (1 - w) + viridis[i + 1][k] * w);
    snprintf(buf, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    return f < 0.55; /* the lower half of viridis is dark */
}

static void default_text(struct xpb_text *t, double v, const void *ctx)
{
    (void)ctx;
    char buf[48];
    xpb_report_format_number(buf, sizeof buf, v);
    xpb_text_puts(t, buf);
}

/* The range of the values; lo == hi when there is one value, NaN when none. */
static void value_range(const struct xpb_svg_heatmap *h, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < h->n_rows * h->n_cols; i++)
        if (isfinite(h->values[i])) {
            *lo = fmin(*lo, h->values[i]);
            *hi = fmax(*hi, h->values[i]);
        }
    if (!isfinite(*lo))
        *lo = *hi = NAN;
}

static void cells(struct xpb_text *t, const struct xpb_svg_heatmap *h, double cw, double lo,
                  double hi)
{
    void (*text)(struct xpb_text *, double, const void *) =
        h->value_text ? h->value_text : default_text;
    for (size_t r = 0; r < h->n_rows; r++)
        for (size_t c = 0; c < h->n_cols; c++) {
            double v = h->values[r * h->n_cols + c];
            double x = HM_LEFT + (double)c * cw,
                   y = HM_TOP + (double)(h->n_rows - 1 - r) * HM_CELL_H;
            char fill[8] = "#ffffff";
            int white = isfinite(v) && xpb_svg_heat_color(fill, hi > lo ? (v - lo) / (hi - lo) : 1);
            xpb_text_printf(t,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"%s\" stroke=\"#fff\"/>",
                            x, y, cw, HM_CELL_H, fill);
            xpb_text_printf(t,
                            "<text class=\"cell\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\"%s",
                            x + cw / 2, y + HM_CELL_H / 2 + 4, white ? " style=\"fill:#fff\"" : "");
            if (h->cell_attrs && isfinite(v))
                h->cell_attrs(t, r, c, h->ctx);
            xpb_text_puts(t, ">");
            if (isfinite(v))
                text(t, v, h->ctx);
            else
                xpb_text_puts(t, "\xe2\x80\x93");
            xpb_text_puts(t, "</text>");
        }
}

static void labels(struct xpb_text *t, const struct xpb_svg_heatmap *h, double cw)
{
    double bottom = HM_TOP + (double)h->n_rows * HM_CELL_H;
    for (size_t r = 0; r < h->n_rows; r++)
        xpb_svg_text(t, HM_LEFT - 6, HM_TOP + (double)(h->n_rows - 1 - r) * HM_CELL_H + 21, "end",
                     h->row_labels[r], 14);
    for (size_t c = 0; c < h->n_cols; c++)
        xpb_svg_text(t, HM_LEFT + ((double)c + 0.5) * cw, bottom + 16, "middle", h->col_labels[c],
                     cw >= 60 ? 12 : 7);
    xpb_svg_text(t, HM_LEFT + (double)h->n_cols * cw / 2, bottom + 40, "middle",
                 h->x_label ? h->x_label : "", 80);
    xpb_text_printf(t, "<g transform=\"translate(16 %.1f) rotate(-90)\">",
                    HM_TOP + (double)h->n_rows * HM_CELL_H / 2);
    xpb_svg_text(t, 0, 0, "middle", h->y_label ? h->y_label : "", 40);
    xpb_text_puts(t, "</g>");
}

/* The colour bar: the scale from the smallest value (bottom) to the largest (top). */
static void color_bar(struct xpb_text *t, const struct xpb_svg_heatmap *h, double x, double lo,
                      double hi)
{
    enum { STEPS = 16 };
    double height = fmax(HM_CELL_H * 2, (double)h->n_rows * HM_CELL_H), step = height / STEPS;
    char fill[8], text[48];
    for (int i = 0; i < STEPS; i++) {
        xpb_svg_heat_color(fill, (i + 0.5) / STEPS);
        xpb_text_printf(t, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"%s\"/>",
                        x, HM_TOP + height - (i + 1) * step, step + 0.5, fill);
    }
    if (isfinite(lo)) {
        xpb_report_format_number(text, sizeof text, hi);
        xpb_svg_text(t, x + 20, HM_TOP + 10, "start", text, 16);
        xpb_report_format_number(text, sizeof text, lo);
        xpb_svg_text(t, x + 20, HM_TOP + height, "start", text, 16);
    }
    xpb_svg_text(t, x, HM_TOP + height + 18, "start", h->value_label ? h->value_label : "", 20);
}

void xpb_svg_heatmap(struct xpb_text *t, const struct xpb_svg_heatmap *h)
{
    double lo, hi;
    value_range(h, &lo, &hi);
    double cw = h->n_cols ? fmin(HM_CELL_W, HM_MAX_PLOT / (double)h->n_cols) : HM_CELL_W;
    double width = HM_LEFT + (double)h->n_cols * cw + HM_BAR;
    double height = HM_TOP + fmax(HM_CELL_H * 2, (double)h->n_rows * HM_CELL_H) + HM_BOTTOM;
    xpb_svg_open(t, h->id, h->title, width, height);
    cells(t, h, cw, lo, hi);
    labels(t, h, cw);
    color_bar(t, h, HM_LEFT + (double)h->n_cols * cw + 16, lo, hi);
    xpb_svg_close(t, h->note);
}
