/* Memory and step time against batch size (see report_sections.h and report_sweep.h): for
 * every batch sweep (finished runs of one file that differ only in batch, at least three
 * batches), least-squares polynomials of memory and step time against batch (report_fit.h),
 * the projection to larger batches, a hold-out check of the memory fit (fitted without the
 * largest batch, it predicts that batch), the largest batch that fits the memory budget and
 * where throughput saturates. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_batch_chart.h"
#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_PRECISION | XPB_COL_BACKEND |           \
     XPB_COL_FUSION | XPB_COL_THREADS)
#define MIN_BATCHES 3
#define HOLDOUT_MIN_BATCHES 4

/* The memory every run of the group has: the backend's peak when all report it, else the
 * host's per-run peak when all have it; XPB_RF_COUNT otherwise. */
static enum xpb_results_field memory_source(const xpb_rgroup *g)
{
    static const enum xpb_results_field keys[] = {XPB_RF_DEVICE_PEAK, XPB_RF_HOST_RUN_PEAK};
    for (size_t k = 0; k < 2; k++) {
        size_t have = 0;
        for (size_t i = 0; i < g->n; i++)
            have += !isnan(xpb_results_field(g->runs[i]->v, keys[k]));
        if (have == g->n)
            return keys[k];
    }
    return XPB_RF_COUNT;
}

/* Fits memory on the batches below the largest and predicts the largest. */
static void holdout(xpb_batch_sweep *w)
{
    size_t m = 0;
    double sum = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->batch[i] < (double)w->hi)
            m++;
        else
            sum += w->memory[i];
    xpb_fit f;
    if (w->group->distinct < HOLDOUT_MIN_BATCHES ||
        xpb_fit_poly(&f, w->batch, w->memory, m, XPB_FIT_MAX_DEGREE) != XPB_OK)
        return; /* the points are sorted by batch: the first m are the smaller batches */
    w->have_holdout = 1;
    w->holdout_batch = w->hi;
    w->holdout_predicted = xpb_fit_eval(&f, (double)w->hi);
    w->holdout_measured = sum / (double)(w->n - m);
}

static xpb_status analyse(xpb_report *r, xpb_batch_sweep *w, const xpb_rgroup *g)
{
    memset(w, 0, sizeof *w);
    w->group = g;
    w->n = g->n;
    w->label = xpb_rrun_label(r, g->runs[0], DESC);
    w->batch = xpb_arena_alloc(&r->arena, 3 * g->n * sizeof *w->batch);
    if (!w->batch || !w->label)
        return XPB_OUT_OF_MEMORY;
    w->memory = w->batch + g->n;
    w->step = w->batch + 2 * g->n;
    w->memory_key = memory_source(g);
    w->lo = g->runs[0]->batch;
    w->hi = g->runs[g->n - 1]->batch;
    size_t steps = 0;
    for (size_t i = 0; i < g->n; i++) {
        double p50 = g->runs[i]->v->metrics.step_time_s.p50;
        w->batch[i] = (double)g->runs[i]->batch;
        w->memory[i] = xpb_results_field(g->runs[i]->v, w->memory_key); /* NaN for none */
        w->step[i] = p50;
        steps += !isnan(p50);
    }
    w->have_memory =
        w->memory_key != XPB_RF_COUNT &&
        xpb_fit_poly(&w->memory_fit, w->batch, w->memory, w->n, XPB_FIT_MAX_DEGREE) == XPB_OK;
    if (w->have_memory)
        holdout(w);
    int64_t mem = r->views[g->runs[0]->doc].environment.memory_bytes;
    w->budget = r->opts.memory_budget_bytes > 0 ? r->opts.memory_budget_bytes
                : mem != XPB_RESULTS_NO_INT     ? (double)mem
                                                : 0;
    w->largest = w->have_memory && w->budget > 0
                     ? xpb_fit_largest_within(&w->memory_fit, w->budget, XPB_BATCH_LIMIT)
                     : -1;
    w->have_step = steps == w->n && xpb_fit_poly(&w->step_fit, w->batch, w->step, w->n,
                                                 XPB_FIT_MAX_DEGREE) == XPB_OK;
    w->have_saturation =
        w->have_step && xpb_fit_saturation(&w->saturation, &w->step_fit, w->lo, w->hi) == XPB_OK;
    return XPB_OK;
}

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

/* A table of one fit of every sweep that has it: the sweep's label, then the columns
 * headers[0..n_headers) that `row` fills. */
typedef struct fits_table {
    const char *suffix, *title, *note;
    const char *const *headers;
    size_t n_headers;
    int (*has)(const xpb_batch_sweep *w);
    void (*row)(xpb_report *r, xpb_report_cell *c, const xpb_batch_sweep *w);
} fits_table;

static xpb_status fits(xpb_report *r, xpb_report_section *s, const fits_table *f,
                       const xpb_batch_sweep *ws, size_t n)
{
    const char *headers[1 + 16] = {"sweep"};
    memcpy(headers + 1, f->headers, f->n_headers * sizeof *headers);
    xpb_report_table *t =
        xpb_report_table_new(r, s, f->suffix, f->title, headers, 1 + f->n_headers);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = f->note;
    for (size_t i = 0; i < n; i++) {
        if (!f->has(&ws[i]))
            continue;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(c, ws[i].label);
        f->row(r, c + 1, &ws[i]);
    }
    return XPB_OK;
}

static int has_memory(const xpb_batch_sweep *w)
{
    return w->have_memory;
}

static void memory_row(xpb_report *r, xpb_report_cell *c, const xpb_batch_sweep *w)
{
    xpb_cell_text(&c[0], w->memory_key == XPB_RF_DEVICE_PEAK ? "backend peak" : "host run peak");
    xpb_cell_number(&c[1], w->memory_fit.degree, XPB_UNIT_COUNT, NULL);
    xpb_cell_number(&c[2], w->memory_fit.r2, XPB_UNIT_NONE, NULL);
    xpb_cell_text(&c[3], formula(r, &w->memory_fit, XPB_UNIT_MIB));
    xpb_cell_number(&c[4], w->memory_fit.loo_rmse, XPB_UNIT_MIB, NULL);
    if (w->have_holdout) {
        xpb_cell_number(&c[5], (double)w->holdout_batch, XPB_UNIT_COUNT, NULL);
        xpb_cell_number(&c[6], w->holdout_predicted, XPB_UNIT_MIB, NULL);
        xpb_cell_number(&c[7], w->holdout_measured, XPB_UNIT_MIB, NULL);
        xpb_cell_number(&c[8], w->holdout_predicted / w->holdout_measured - 1, XPB_UNIT_PERCENT,
                        NULL);
    }
    if (w->budget > 0)
        xpb_cell_number(&c[9], w->budget, XPB_UNIT_GIB, NULL);
    if (w->largest == XPB_BATCH_LIMIT)
        xpb_cell_text(&c[10], "65536 or more");
    else if (w->largest >= 0)
        xpb_cell_number(&c[10], (double)w->largest, XPB_UNIT_COUNT, NULL);
}

static int has_step(const xpb_batch_sweep *w)
{
    return w->have_step;
}

static void step_row(xpb_report *r, xpb_report_cell *c, const xpb_batch_sweep *w)
{
    xpb_cell_number(&c[0], w->step_fit.degree, XPB_UNIT_COUNT, NULL);
    xpb_cell_number(&c[1], w->step_fit.r2, XPB_UNIT_NONE, NULL);
    xpb_cell_text(&c[2], formula(r, &w->step_fit, XPB_UNIT_MS));
    if (!w->have_saturation)
        return;
    xpb_cell_number(&c[3], (double)w->saturation.batch, XPB_UNIT_COUNT, NULL);
    xpb_cell_number(&c[4], w->saturation.best, XPB_UNIT_RATE, NULL);
    xpb_cell_number(&c[5], w->saturation.last_gain, XPB_UNIT_PERCENT, NULL);
    xpb_cell_text(&c[6], w->saturation.saturated ? "saturated" : "still rising");
}

static const char *const memory_headers[] = {"memory",
                                             "degree",
                                             "R²",
                                             "fit MiB (b = batch)",
                                             "LOO error MiB",
                                             "hold-out batch",
                                             "predicted MiB",
                                             "measured MiB",
                                             "error %",
                                             "budget GiB",
                                             "largest batch that fits"};

static const fits_table memory_fits = {
    "memory",
    "Memory against batch: the fits",
    "degree chosen by leave-one-out error (LOO error: the RMS error predicting each point from "
    "the others); hold-out: the fit without the largest batch, predicting it; largest batch that "
    "fits: where the fitted memory first exceeds the budget",
    memory_headers,
    sizeof memory_headers / sizeof memory_headers[0],
    has_memory,
    memory_row};

static const char *const step_headers[] = {"degree",
                                           "R²",
                                           "fit ms (b = batch)",
                                           "saturates at batch",
                                           "best samples/s (fit)",
                                           "last doubling gained %",
                                           "throughput"};

static const fits_table step_fits = {
    "step",
    "Step time against batch: the fits",
    "fitted on the median step times; throughput = batch / fitted step time; saturates at: the "
    "smallest measured-range batch reaching 90% of the best fitted throughput; saturated when "
    "doubling the largest batch's half gained under 5%",
    step_headers,
    sizeof step_headers / sizeof step_headers[0],
    has_step,
    step_row};

/* One row of a sweep's points: measured (run) or projected (run NULL, at batch b). */
static xpb_status point_row(xpb_report *r, xpb_report_table *t, const xpb_batch_sweep *w,
                            const xpb_rrun *run, double b)
{
    xpb_report_cell *c = xpb_report_row(r, t);
    if (!c)
        return XPB_OUT_OF_MEMORY;
    xpb_cell_text(&c[0], run ? "measured" : "projection");
    if (run) {
        xpb_rrun_cell(r, &c[1], run, XPB_RF_BATCH, XPB_UNIT_COUNT);
        if (w->memory_key != XPB_RF_COUNT)
            xpb_rrun_cell(r, &c[2], run, w->memory_key, XPB_UNIT_MIB);
        xpb_rrun_cell(r, &c[4], run, XPB_RF_STEP_P50, XPB_UNIT_MS);
        xpb_rrun_throughput_cell(r, &c[6], run);
    } else {
        xpb_cell_number(&c[1], b, XPB_UNIT_COUNT, NULL);
    }
    if (w->have_memory)
        xpb_cell_number(&c[3], xpb_fit_eval(&w->memory_fit, b), XPB_UNIT_MIB, NULL);
    if (w->have_step)
        xpb_cell_number(&c[5], xpb_fit_eval(&w->step_fit, b), XPB_UNIT_MS, NULL);
    return XPB_OK;
}

static xpb_status points_table(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                               size_t index)
{
    static const char *const headers[] = {"point",  "batch",     "memory MiB", "fitted MiB",
                                          "p50 ms", "fitted ms", "samples/s"};
    xpb_report_table *t =
        xpb_report_table_new(r, s, xpb_arena_printf(&r->arena, "points-%zu", index),
                             xpb_arena_printf(&r->arena, "Batch sweep: %s", w->label), headers, 7);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = w->memory_key == XPB_RF_DEVICE_PEAK ? "memory: the backend's peak (device_peak_bytes)"
              : w->memory_key == XPB_RF_HOST_RUN_PEAK
                  ? "memory: the run's own host memory (host_run_peak_bytes)"
                  : "memory: not reported for every run, no fit";
    for (size_t i = 0; i < w->n; i++)
        if (point_row(r, t, w, w->group->runs[i], w->batch[i]) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    for (long b = 2 * w->hi; b <= 4 * w->hi && b <= XPB_BATCH_LIMIT; b *= 2)
        if (point_row(r, t, w, NULL, (double)b) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    return XPB_OK;
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
        if (analyse(r, &ws[i], &groups[i]) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    xpb_status st = fits(r, s, &memory_fits, ws, n);
    if (st == XPB_OK)
        st = fits(r, s, &step_fits, ws, n);
    for (size_t i = 0; st == XPB_OK && i < n; i++) {
        st = points_table(r, s, &ws[i], i);
        if (st == XPB_OK)
            st = xpb_batch_charts(r, s, &ws[i], i);
    }
    return st;
}
