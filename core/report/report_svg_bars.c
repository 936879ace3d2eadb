/* Horizontal bar charts (see report_svg.h): speedups on a log scale from a reference line at 1
 * with their intervals as whiskers (hollow when not significant), and stacked bars of where a
 * step's time goes, one segment per op kind. */
#include <math.h>
#include <string.h>

#include "report/report_svg.h"
#include "report/report_writers.h"

#define BAR_WIDTH 900.0
#define BAR_LABELS 420.0 /* the label column */
#define BAR_RIGHT 80.0   /* the value labels */
#define BAR_ROW 26.0
#define BAR_TOP 12.0
#define BAR_LEGEND 22.0
#define BAR_BOTTOM 48.0

/* The display-unit range of every bar end and whisker (and the reference). */
static void bar_range(const xpb_chart *c, double *lo, double *hi)
{
    double s = xpb_unit_scale(c->x_unit);
    *lo = c->x_log10 ? INFINITY : 0;
    *hi = c->x_log10 ? -INFINITY : 0;
    for (size_t i = 0; i < c->n_bars; i++) {
        const xpb_chart_bar *b = &c->bars[i];
        double total = 0;
        for (size_t k = 0; k < c->n_segments; k++)
            total += b->values[k];
        double v[3] = {total * s, b->lo * s, b->hi * s};
        for (int j = 0; j < 3; j++)
            if (isfinite(v[j]) && (!c->x_log10 || v[j] > 0)) {
                *lo = fmin(*lo, v[j]);
                *hi = fmax(*hi, v[j]);
            }
    }
    if (isfinite(c->ref)) {
        *lo = fmin(*lo, c->ref * s);
        *hi = fmax(*hi, c->ref * s);
    }
}

static void bar_axis(FILE *f, const xpb_chart *c, const xpb_axis *ax, double y0, double y1)
{
    char label[48];
    fputs("<g>", f);
    for (size_t i = 0; i < ax->n_ticks; i++) {
        double x = xpb_axis_map(ax, ax->ticks[i]);
        xpb_svg_tick_label(label, sizeof label, ax->ticks[i], ax);
        fprintf(f, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#ddd\"/>", x, y0, y1);
        xpb_svg_text(f, x, y1 + 16, "middle", label, 12);
    }
    fprintf(f, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#111\"/>", ax->p0, y1, ax->p1);
    xpb_svg_text(f, (ax->p0 + ax->p1) / 2, y1 + 38, "middle", c->x_label, 100);
    if (isfinite(c->ref)) {
        double x = xpb_axis_map(ax, c->ref * xpb_unit_scale(c->x_unit));
        fprintf(f, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"#111\" stroke-width=\"1.5\"/>", x, y0, y1);
    }
    fputs("</g>", f);
}

/* One bar: its segments (or one bar from the reference), whiskers and value label. */
static void bar(FILE *f, const xpb_chart *c, const xpb_chart_bar *b, const xpb_axis *ax, double y)
{
    double s = xpb_unit_scale(c->x_unit), start = isfinite(c->ref) ? c->ref * s : ax->lo;
    double total = 0;
    for (size_t k = 0; k < c->n_segments; k++) {
        double from = xpb_axis_map(ax, c->n_segments > 1 ? total * s : start);
        double to =
            xpb_axis_map(ax, c->n_segments > 1 ? (total + b->values[k]) * s : b->values[k] * s);
        total += b->values[k];
        const char *color = xpb_svg_palette[(c->n_segments > 1 ? k : 0) % XPB_SVG_COLORS];
        if (!isfinite(from) || !isfinite(to))
            continue;
        int hollow = b->flags & XPB_CELL_NOT_SIGNIFICANT;
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                "stroke=\"%s\" stroke-width=\"1.5\"/>",
                fmin(from, to), y + 4, fabs(to - from), BAR_ROW - 8, hollow ? "#fff" : color,
                color);
    }
    double lo = xpb_axis_map(ax, b->lo * s), hi = xpb_axis_map(ax, b->hi * s);
    if (isfinite(lo) && isfinite(hi))
        fprintf(f,
                "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fv10M%.1f %.1fv10\" stroke=\"#111\" "
                "stroke-width=\"1.5\"/>",
                lo, y + BAR_ROW / 2, hi, lo, y + BAR_ROW / 2 - 5, hi, y + BAR_ROW / 2 - 5);
    char value[48];
    xpb_report_format_number(value, sizeof value, total * s);
    double end = fmax(xpb_axis_map(ax, total * s), isfinite(hi) ? hi : 0);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s%s</text>", fmax(end, ax->p0) + 6,
            y + BAR_ROW / 2 + 4, value,
            c->x_unit == XPB_UNIT_SPEEDUP ? xpb_unit_name(c->x_unit) : "");
    xpb_svg_text(f, BAR_LABELS - 8, y + BAR_ROW / 2 + 4, "end", b->label, 60);
}

static void legend(FILE *f, const xpb_chart *c)
{
    double x = 10;
    for (size_t k = 0; c->segment_names && k < c->n_segments; k++) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x,
                BAR_TOP, xpb_svg_palette[k % XPB_SVG_COLORS]);
        xpb_svg_text(f, x + 16, BAR_TOP + 10, "start", c->segment_names[k], 16);
        x += 30 +
             7.0 * (double)(strlen(c->segment_names[k]) < 16 ? strlen(c->segment_names[k]) : 16);
    }
}

void xpb_svg_bars(FILE *f, const xpb_chart *c)
{
    double top = BAR_TOP + (c->n_segments > 1 ? BAR_LEGEND : 0);
    double height = top + BAR_ROW * (double)c->n_bars + BAR_BOTTOM;
    double lo, hi;
    bar_range(c, &lo, &hi);
    xpb_axis ax;
    xpb_axis_fit(&ax, lo, hi, c->x_log10 ? 10 : 0, 0, BAR_LABELS, BAR_WIDTH - BAR_RIGHT);
    xpb_svg_open(f, c, BAR_WIDTH, height);
    if (c->n_segments > 1)
        legend(f, c);
    bar_axis(f, c, &ax, top, top + BAR_ROW * (double)c->n_bars);
    for (size_t i = 0; i < c->n_bars; i++)
        bar(f, c, &c->bars[i], &ax, top + BAR_ROW * (double)i);
    xpb_svg_close(f, c);
}
