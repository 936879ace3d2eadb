/* The charts of a batch sweep (see report_batch_chart.h): the measured points, the fitted curve
 * over the measured batches, its projection (dashed) up to four times the largest batch, and for
 * memory the budget when it is in view. Batch is on a log2 axis, as sweeps double it. */
#include <math.h>

#include "report/report_batch_chart.h"

#define CURVE_POINTS 32
#define PROJECTION_FACTOR 4.0

/* The curve of `f` from batch a to b, sampled evenly on the log axis. */
static int add_curve(xpb_report *r, xpb_chart_series *s, const xpb_fit *f, double a, double b)
{
    for (int i = 0; i <= CURVE_POINTS; i++) {
        double x = a * pow(b / a, (double)i / CURVE_POINTS);
        if (xpb_chart_point(r, s, x, xpb_fit_eval(f, x), NAN, NAN) != XPB_OK)
            return -1;
    }
    return 0;
}

/* One chart: points y[] against the sweep's batches, the fit and its projection, appended to s
 * (owned by the report's arena); NULL when out of memory. */
static xpb_chart *fit_chart(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                            const char *suffix, const char *title, const double *y,
                            const xpb_fit *f, xpb_unit unit)
{
    xpb_chart *c = xpb_report_chart_new(r, s, XPB_CHART_XY, suffix, title);
    if (!c)
        return NULL;
    c->x_label = "batch (log scale)";
    c->y_label = xpb_unit_name(unit);
    c->x_unit = XPB_UNIT_COUNT;
    c->y_unit = unit;
    c->x_log2 = 1;
    c->y_zero = 1;
    xpb_chart_series *pts = xpb_chart_series_new(r, c, "measured", XPB_SERIES_POINTS, 0);
    xpb_chart_series *fit = xpb_chart_series_new(
        r, c, xpb_arena_printf(&r->arena, "fit, degree %d", f->degree), XPB_SERIES_LINE, 1);
    xpb_chart_series *proj =
        xpb_chart_series_new(r, c, "projection", XPB_SERIES_LINE | XPB_SERIES_DASHED, 1);
    if (!pts || !fit || !proj)
        return NULL;
    for (size_t i = 0; i < w->n; i++)
        if (isfinite(y[i]) && xpb_chart_point(r, pts, w->batch[i], y[i], NAN, NAN) != XPB_OK)
            return NULL;
    double lo = (double)w->lo, hi = (double)w->hi;
    if ((hi > lo && add_curve(r, fit, f, lo, hi) != 0) ||
        add_curve(r, proj, f, hi, hi * PROJECTION_FACTOR) != 0)
        return NULL;
    return c;
}

xpb_status xpb_batch_charts(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                            size_t index)
{
    if (w->have_memory) {
        xpb_chart *c = fit_chart(r, s, w, xpb_arena_printf(&r->arena, "memory-chart-%zu", index),
                                 xpb_arena_printf(&r->arena, "Memory against batch: %s", w->label),
                                 w->memory, &w->memory_fit, XPB_UNIT_MIB);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        double top = xpb_fit_eval(&w->memory_fit, w->hi * PROJECTION_FACTOR);
        if (w->budget > 0 && w->budget <= 2 * top) {
            c->hline = w->budget;
            c->hline_label = "budget";
        } else if (w->budget > 0) {
            char gib[48];
            xpb_report_format_value(gib, sizeof gib, w->budget, XPB_UNIT_GIB);
            c->note =
                xpb_arena_printf(&r->arena, "the budget, %s GiB, is far above this chart", gib);
        }
    }
    if (w->have_step &&
        !fit_chart(r, s, w, xpb_arena_printf(&r->arena, "step-chart-%zu", index),
                   xpb_arena_printf(&r->arena, "Step time against batch: %s", w->label), w->step,
                   &w->step_fit, XPB_UNIT_MS))
        return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}
