/* Memory and step time against batch (see report_sections.h and report_sweep.h): for every
 * batch sweep (finished runs of one file that differ only in batch, at least three batches),
 * the fits of memory (the backend's plan and the process's growth) and of step time with what
 * each is worth (R², residual SD, the extrapolation to the largest projected batch), the
 * hold-out check, the largest batch that fits the memory budget with its band and the memory
 * it comes from, where throughput saturates (only from a fit that explains its points, of runs
 * nobody disturbed), a table of measured and projected points, and the charts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_batch_chart.h"
#include "report/report_sections.h"

#define MIN_BATCHES 3

/* The fitted polynomial as text in display units, "28.06 + 2.081·b" (b: the batch); an arena
 * string (NULL when out of memory). */
static const char *formula(xpb_report *r, const xpb_fit *f, xpb_unit unit)
{
    char buf[256] = "", num[48];
    size_t len = 0;
    for (int k = 0; k <= f->degree && len < sizeof buf; k++) {
        double c = f->coef[k] * xpb_unit_scale(unit);
        if (k > 0 && c == 0)
            continue;
        xpb_report_format_number(num, sizeof num, fabs(c));
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s%s%s",
                                len == 0 ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + "), num,
                                k == 0 ? "" : "·b",
                                k < 2    ? ""
                                : k == 2 ? "²"
                                         : "³");
    }
    return xpb_arena_strdup(&r->arena, buf);
}

/* A derived amount (memory, time) with the fit's band at x as its interval, not below 0. */
static void banded_cell(xpb_report_cell *c, const xpb_fit *f, double x, xpb_unit unit)
{
    double v = xpb_fit_eval(f, x), band = xpb_fit_band(f, x);
    xpb_cell_number(c, v, unit, NULL);
    if (isfinite(band)) {
        c->lo = fmax(v - band, 0);
        c->hi = v + band;
    }
}

/* What every fit says of itself: degree, how it was chosen, R², residual SD, the formula and
 * the fit at the largest projected batch with its band and how far that extrapolates. */
static void fit_cells(xpb_report *r, xpb_report_cell *c, const xpb_fit *f, long hi, xpb_unit unit)
{
    double far = (double)(hi * XPB_BATCH_PROJECTION);
    xpb_cell_number(&c[0], f->degree, XPB_UNIT_COUNT, NULL);
    xpb_cell_text(&c[1], f->rule == XPB_FIT_AICC ? "AICc" : "line unless rejected");
    xpb_cell_number(&c[2], f->r2, XPB_UNIT_NONE, NULL);
    xpb_cell_number(&c[3], f->resid_sd, unit, NULL);
    xpb_cell_text(&c[4], formula(r, f, unit));
    banded_cell(&c[5], f, far, unit);
    xpb_cell_number(&c[6], xpb_fit_extrapolation(f, far), XPB_UNIT_COUNT, NULL);
}

#define FIT_COLS 7
#define MAX_COLS 20

/* A table of fits titled `title` with `note` under it: the columns lead[0..n_lead), the fit's
 * (fit_cells, in `unit`, "MiB" or "ms"), then more[0..n_more). NULL when out of memory. */
static xpb_report_table *fits_table(xpb_report *r, xpb_report_section *s, const char *suffix,
                                    const char *title, const char *note, const char *const *lead,
                                    size_t n_lead, const char *unit, const char *const *more,
                                    size_t n_more)
{
    const char *headers[MAX_COLS];
    size_t n = 0;
    for (size_t i = 0; i < n_lead; i++)
        headers[n++] = lead[i];
    headers[n++] = "degree";
    headers[n++] = "chosen by";
    headers[n++] = "R²";
    headers[n++] = xpb_arena_printf(&r->arena, "residual SD %s", unit);
    headers[n++] = xpb_arena_printf(&r->arena, "fit %s (b = batch)", unit);
    headers[n++] = xpb_arena_printf(&r->arena, "%s at 4× the largest batch", unit);
    headers[n++] = "extrapolation ×";
    for (size_t i = 0; i < n_more; i++)
        headers[n++] = more[i];
    for (size_t i = 0; i < n; i++)
        if (!headers[i])
            return NULL;
    xpb_report_table *t = xpb_report_table_new(r, s, suffix, title, headers, n);
    if (t)
        t->note = note;
    return t;
}

/* The memory table: a row per sweep and memory (plan, process). */
static xpb_status memory_table(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *ws,
                               size_t n)
{
    static const char *const lead[] = {"sweep", "memory"};
    static const char *const more[] = {"hold-out batch", "predicted MiB", "measured MiB",
                                       "error %",        "budget GiB",    "largest batch that fits",
                                       "decides"};
    xpb_report_table *t = fits_table(
        r, s, "memory", "Memory against batch: the fits",
        "backend plan: the backend's peak (device_peak_bytes); process: how much the process "
        "grew during the run (host_run_peak_bytes, without the first run of a backend in "
        "the file, which also pays one-time costs); a line unless the data reject it; "
        "[brackets]: the 95% band, which widens beyond the measured batches; hold-out: "
        "the fit without the largest batch, predicting it; largest batch that fits: where "
        "the fit (its band's edges in brackets) first exceeds the budget; decides: the "
        "memory that allows the fewest samples, which the largest batch comes from",
        lead, 2, "MiB", more, 7);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        const xpb_sweep_memory *ms[2] = {&ws[i].plan, &ws[i].process};
        for (int k = 0; k < 2; k++) {
            const xpb_sweep_memory *m = ms[k];
            if (!m->have)
                continue;
            xpb_report_cell *c = xpb_report_row(r, t);
            if (!c)
                return XPB_OUT_OF_MEMORY;
            xpb_cell_text(&c[0], ws[i].label);
            xpb_cell_text(&c[1], m->name);
            fit_cells(r, c + 2, &m->fit, ws[i].hi, XPB_UNIT_MIB);
            c += 2 + FIT_COLS;
            if (m->have_holdout) {
                xpb_cell_number(&c[0], (double)m->holdout_batch, XPB_UNIT_COUNT, NULL);
                xpb_cell_number(&c[1], m->holdout_predicted, XPB_UNIT_MIB, NULL);
                xpb_cell_number(&c[2], m->holdout_measured, XPB_UNIT_MIB, NULL);
                xpb_cell_number(&c[3], m->holdout_predicted / m->holdout_measured - 1,
                                XPB_UNIT_PERCENT, NULL);
            }
            if (ws[i].budget > 0)
                xpb_cell_number(&c[4], ws[i].budget, XPB_UNIT_GIB, NULL);
            if (m->largest == XPB_BATCH_LIMIT) {
                xpb_cell_text(&c[5], "65536 or more");
            } else if (m->largest >= 0) {
                xpb_cell_number(&c[5], (double)m->largest, XPB_UNIT_COUNT, NULL);
                c[5].lo = (double)m->largest_lo;
                c[5].hi = (double)m->largest_hi;
            } else {
                xpb_cell_text(&c[5], xpb_arena_printf(&r->arena, "none: %s", m->no_conclusion));
            }
            xpb_cell_text(&c[6], ws[i].decides == m ? "yes" : "no");
        }
    }
    return XPB_OK;
}

/* The step-time table: a row per sweep. */
static xpb_status step_table(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *ws,
                             size_t n)
{
    static const char *const lead[] = {"sweep"};
    static const char *const more[] = {"saturates at batch", "best samples/s (fit)",
                                       "last doubling gained %", "throughput"};
    xpb_report_table *t = fits_table(
        r, s, "step", "Step time against batch: the fits",
        "fitted on the median step times, degree by AICc; throughput = batch / fitted step "
        "time; saturates at: the smallest measured-range batch reaching 90% of the best "
        "fitted throughput; saturated when doubling the largest batch's half gained under "
        "5%; no conclusion from a fit with R² under 0.9 or from runs other processes "
        "disturbed",
        lead, 1, "ms", more, 4);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        const xpb_batch_sweep *w = &ws[i];
        if (!w->have_step)
            continue;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(&c[0], w->label);
        fit_cells(r, c + 1, &w->step_fit, w->hi, XPB_UNIT_MS);
        c += 1 + FIT_COLS;
        if (!w->have_saturation) {
            xpb_cell_text(&c[3], w->no_conclusion);
            continue;
        }
        xpb_cell_number(&c[0], (double)w->saturation.batch, XPB_UNIT_COUNT, NULL);
        xpb_cell_number(&c[1], w->saturation.best, XPB_UNIT_RATE, NULL);
        xpb_cell_number(&c[2], w->saturation.last_gain, XPB_UNIT_PERCENT, NULL);
        xpb_cell_text(&c[3], w->saturation.saturated ? "saturated" : "still rising");
    }
    return XPB_OK;
}

/* One row of a sweep's points: measured (run, its index i) or projected (run NULL, batch b). */
static xpb_status point_row(xpb_report *r, xpb_report_table *t, const xpb_batch_sweep *w,
                            const xpb_rrun *run, size_t i, double b)
{
    xpb_report_cell *c = xpb_report_row(r, t);
    if (!c)
        return XPB_OUT_OF_MEMORY;
    const xpb_sweep_memory *ms[2] = {&w->plan, &w->process};
    int left_out = run && ms[1]->have && ms[1]->left_out == run->batch && isnan(ms[1]->y[i]);
    xpb_cell_text(&c[0], !run       ? "projection"
                         : left_out ? "measured (process not fitted: the first run of its "
                                      "backend in the file, which pays one-time costs)"
                                    : "measured");
    if (run) {
        xpb_rrun_cell(r, &c[1], run, XPB_RF_BATCH, XPB_UNIT_COUNT);
        for (int k = 0; k < 2; k++)
            xpb_rrun_cell(r, &c[2 + 2 * k], run, ms[k]->key, XPB_UNIT_MIB);
        xpb_rrun_cell(r, &c[6], run, XPB_RF_STEP_P50, XPB_UNIT_MS);
        xpb_rrun_throughput_cell(r, &c[8], run);
    } else {
        xpb_cell_number(&c[1], b, XPB_UNIT_COUNT, NULL);
        xpb_cell_number(&c[9], b / (double)w->hi, XPB_UNIT_COUNT, NULL);
    }
    for (int k = 0; k < 2; k++)
        if (ms[k]->have)
            banded_cell(&c[3 + 2 * k], &ms[k]->fit, b, XPB_UNIT_MIB);
    if (w->have_step)
        banded_cell(&c[7], &w->step_fit, b, XPB_UNIT_MS);
    return XPB_OK;
}

static xpb_status points_table(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                               size_t index)
{
    static const char *const headers[] = {
        "point",  "batch",     "plan MiB",  "fitted plan MiB", "process MiB", "fitted process MiB",
        "p50 ms", "fitted ms", "samples/s", "extrapolation ×"};
    xpb_report_table *t =
        xpb_report_table_new(r, s, xpb_arena_printf(&r->arena, "points-%zu", index),
                             xpb_arena_printf(&r->arena, "Batch sweep: %s", w->label), headers, 10);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "plan: the backend's peak (device_peak_bytes); process: the process's growth during "
              "the run (host_run_peak_bytes); fitted values with their 95% band in brackets; "
              "extrapolation: the batch over the largest measured one";
    for (size_t i = 0; i < w->n; i++)
        if (point_row(r, t, w, w->group->runs[i], i, w->batch[i]) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    for (long b = 2 * w->hi; b <= XPB_BATCH_PROJECTION * w->hi && b <= XPB_BATCH_LIMIT; b *= 2)
        if (point_row(r, t, w, NULL, 0, (double)b) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}

/* A paragraph per sweep with a conclusion on memory: the largest batch that fits, from
 * which memory, and what the other memory would allow. */
static xpb_status largest_text(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w)
{
    const xpb_sweep_memory *d = w->decides, *other = d == &w->plan ? &w->process : &w->plan;
    if (!d)
        return XPB_OK;
    char gib[48];
    xpb_report_format_value(gib, sizeof gib, w->budget, XPB_UNIT_GIB);
    const char *rest =
        other->largest >= 0 ? xpb_arena_printf(&r->arena, "; the %s alone would allow %ld",
                                               other->name, other->largest)
        : other->have       ? xpb_arena_printf(&r->arena, "; the %s: %s", other->name,
                                         other->no_conclusion ? other->no_conclusion : "-")
        : d == &w->plan ? "; the process's growth was not measured for every run, and a process "
                          "needs more than its backend's plan"
                        : "";
    if (!rest)
        return XPB_OUT_OF_MEMORY;
    return xpb_report_text(r, s,
                           "%s: the largest batch that fits %s GiB is %ld (%ld to %ld by the "
                           "fit's band, %.0f times the largest measured batch), from the %s%s.",
                           w->label, gib, d->largest, d->largest_lo, d->largest_hi,
                           (double)d->largest / (double)w->hi,
                           d == &w->process ? "process's growth (host_run_peak_bytes)"
                                            : "backend's plan (device_peak_bytes)",
                           rest);
}

xpb_status xpb_report_batch(xpb_report *r)
{
    xpb_report_section *s =
        xpb_report_section_new(r, "batch", "Memory and step time against batch");
    xpb_rgroup *groups;
    size_t n;
    if (!s || xpb_rruns_groups(r, &groups, &n, "batch", MIN_BATCHES) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    if (n == 0)
        return xpb_report_text(r, s,
                               "No batch sweep: no %d finished runs of one file differ only "
                               "in their batch size.",
                               MIN_BATCHES);
    xpb_batch_sweep *ws = xpb_arena_alloc(&r->arena, n * sizeof *ws);
    if (!ws)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++)
        if (xpb_batch_sweep_analyse(r, &ws[i], &groups[i]) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    xpb_status st = memory_table(r, s, ws, n);
    for (size_t i = 0; st == XPB_OK && i < n; i++)
        st = largest_text(r, s, &ws[i]);
    if (st == XPB_OK)
        st = step_table(r, s, ws, n);
    for (size_t i = 0; st == XPB_OK && i < n; i++) {
        st = points_table(r, s, &ws[i], i);
        if (st == XPB_OK)
            st = xpb_batch_charts(r, s, &ws[i], i);
    }
    return st;
}
