/* The charts of a batch sweep (see report_batch_chart.h): per quantity, the measured points, the
 * fitted curve over the measured batches, its projection (dashed) up to XPB_BATCH_PROJECTION
 * times the largest batch, and the fit's 95% band shaded, widening with the extrapolation; for
 * memory the backend's plan and the process's growth together, and the budget when it is in
 * view. Batch is on a linear axis, on which a quantity linear in batch is a straight line (on
 * the log2 axis sweeps double along, a line bends upwards like an exponential). */
#include <math.h>

#include "report/report_batch_chart.h"

#define CURVE_POINTS 32

/* The curve of `f` from batch a to b, evenly spaced, into `line` and (when not NULL) its band
 * into `band` (not below zero: these are amounts). */
static int add_curve(xpb_report *r, xpb_chart_series *line, xpb_chart_series *band,
                     const xpb_fit *f, double a, double b)
{
    for (int i = 0; i <= CURVE_POINTS; i++) {
        double x = a + (b - a) * i / CURVE_POINTS, y = xpb_fit_eval(f, x);
        double w = xpb_fit_band(f, x);
        if (xpb_chart_point(r, line, x, y, NAN, NAN) != XPB_OK)
            return -1;
        if (band && isfinite(w) && xpb_chart_point(r, band, x, y, fmax(y - w, 0), y + w) != XPB_OK)
            return -1;
    }
    return 0;
}

/* The points y[] against the sweep's batches, the fit, its projection and band, as series of
 * colour `color` named after `what` ("" for a chart of one quantity). -1 when out of memory. */
static int add_fit(xpb_report *r, xpb_chart *c, const xpb_batch_sweep *w, const double *y,
                   const xpb_fit *f, const char *what, int color)
{
    const char *sep = what[0] ? ": " : "";
    xpb_chart_series *pts = xpb_chart_series_new(
        r, c, xpb_arena_printf(&r->arena, "%s%smeasured", what, sep), XPB_SERIES_POINTS, color);
    xpb_chart_series *band = xpb_chart_series_new(
        r, c, xpb_arena_printf(&r->arena, "%s%s95%% band", what, sep), XPB_SERIES_BAND, color);
    xpb_chart_series *fit = xpb_chart_series_new(
        r, c,
        xpb_arena_printf(&r->arena, "%s%sfit, degree %d, R² %.3f", what, sep, f->degree, f->r2),
        XPB_SERIES_LINE, color);
    xpb_chart_series *proj =
        xpb_chart_series_new(r, c,
                             xpb_arena_printf(&r->arena, "%s%sprojection, up to %ld×", what, sep,
                                              (long)XPB_BATCH_PROJECTION),
                             XPB_SERIES_LINE | XPB_SERIES_DASHED, color);
    if (!pts || !band || !fit || !proj)
        return -1;
    for (size_t i = 0; i < w->n; i++)
        if (isfinite(y[i]) && xpb_chart_point(r, pts, w->batch[i], y[i], NAN, NAN) != XPB_OK)
            return -1;
    double lo = (double)w->lo, hi = (double)w->hi;
    if ((hi > lo && add_curve(r, fit, band, f, lo, hi) != 0) ||
        add_curve(r, proj, band, f, hi, hi * (double)XPB_BATCH_PROJECTION) != 0)
        return -1;
    return 0;
}

/* An empty chart of `what` against batch, appended to s (owned by the report's arena); NULL
 * when out of memory. */
static xpb_chart *batch_chart(xpb_report *r, xpb_report_section *s, const char *suffix,
                              const char *title, xpb_unit unit)
{
    xpb_chart *c = xpb_report_chart_new(r, s, XPB_CHART_XY, suffix, title);
    if (!c)
        return NULL;
    c->x_label = "batch";
    c->y_label = xpb_unit_name(unit);
    c->x_unit = XPB_UNIT_COUNT;
    c->y_unit = unit;
    c->y_zero = 1;
    c->note = "shaded: the fit's 95% band, which widens beyond the measured batches";
    return c;
}

xpb_status xpb_batch_charts(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                            size_t index)
{
    if (w->plan.have || w->process.have) {
        xpb_chart *c = batch_chart(
            r, s, xpb_arena_printf(&r->arena, "memory-chart-%zu", index),
            xpb_arena_printf(&r->arena, "Memory against batch: %s", w->label), XPB_UNIT_MIB);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        const xpb_sweep_memory *ms[2] = {&w->plan, &w->process};
        double top = 0;
        for (int k = 0; k < 2; k++) {
            if (!ms[k]->have)
                continue;
            if (add_fit(r, c, w, ms[k]->y, &ms[k]->fit, ms[k]->name, k) != 0)
                return XPB_OUT_OF_MEMORY;
            top = fmax(top, xpb_fit_eval(&ms[k]->fit, (double)(w->hi * XPB_BATCH_PROJECTION)));
        }
        if (w->budget > 0 && w->budget <= 2 * top) {
            c->hline = w->budget;
            c->hline_label = "budget";
        } else if (w->budget > 0) {
            char gib[48];
            xpb_report_format_value(gib, sizeof gib, w->budget, XPB_UNIT_GIB);
            c->note = xpb_arena_printf(&r->arena,
                                       "shaded: the fit's 95%% band, which widens beyond the "
                                       "measured batches; the budget, %s GiB, is far above "
                                       "this chart",
                                       gib);
        }
    }
    if (w->have_step) {
        xpb_chart *c = batch_chart(
            r, s, xpb_arena_printf(&r->arena, "step-chart-%zu", index),
            xpb_arena_printf(&r->arena, "Step time against batch: %s", w->label), XPB_UNIT_MS);
        if (!c || add_fit(r, c, w, w->step, &w->step_fit, "", 0) != 0)
            return XPB_OUT_OF_MEMORY;
    }
    return XPB_OK;
}
