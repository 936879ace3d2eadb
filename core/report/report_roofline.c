/* Rooflines of profiled runs (see report_sections.h): for every finished run with a profile
 * whose device says both its peak FLOP/s at the run's precision and its memory bandwidth, a
 * log-log chart of achieved GFLOP/s against arithmetic intensity (FLOPs per byte of the least
 * traffic, op_cost.c) under both ceilings, min(peak, bandwidth x intensity): one point per op
 * kind, its area the time a step spends in it, and the whole step as one point; and a table with
 * the same numbers, so that the Markdown and CSV reports have them. An op kind without FLOPs
 * (copies, elementwise ops counted as data movement only) has no place on a FLOP/s axis: the
 * table lists it with its bandwidth share, the chart's note counts it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_BACKEND)

/* One op kind of a profile, summed over its ops (fused ops take no time of their own). */
typedef struct kind_sum {
    const char *op;
    size_t ops;
    double seconds, flops, bytes; /* per step */
} kind_sum;

/* What the chart's callbacks read: its points' numbers in the JSON's units. */
typedef struct roof_ctx {
    const kind_sum *kinds; /* n_kinds, then the whole step */
    size_t n_kinds;
    double peak, bandwidth;
    const char *step_src; /* where the whole step's FLOP/s is in the input */
} roof_ctx;

/* The run's peak FLOP/s at its precision (NaN: unknown). */
static double run_peak(const struct xpb_results_run *run)
{
    for (size_t i = 0; i < run->device.n_peak_flops; i++)
        if (run->config.precision &&
            strcmp(run->device.peak_flops[i].key, run->config.precision) == 0 &&
            run->device.peak_flops[i].value > 0)
            return run->device.peak_flops[i].value;
    return NAN;
}

/* Sums the profile by op kind into kinds[] (arena, n_profile + 1 slots: the last free for the
 * whole step); returns the number of kinds, or (size_t)-1 when out of memory. */
static size_t sum_kinds(xpb_report *r, kind_sum **out, const struct xpb_results_run *run)
{
    kind_sum *k = xpb_arena_alloc(&r->arena, (run->n_profile + 1) * sizeof *k);
    if (!k)
        return (size_t)-1;
    size_t n = 0;
    for (size_t i = 0; i < run->n_profile; i++) {
        const struct xpb_results_profile_entry *e = &run->profile[i];
        if (!e->op || e->fused_into || e->calls == XPB_RESULTS_NO_INT || e->calls <= 0 ||
            !(e->seconds >= 0) || e->flops == XPB_RESULTS_NO_INT || e->bytes == XPB_RESULTS_NO_INT)
            continue;
        size_t j = 0;
        while (j < n && strcmp(k[j].op, e->op) != 0)
            j++;
        if (j == n)
            k[n++] = (kind_sum){.op = e->op};
        k[j].ops++;
        k[j].seconds += e->seconds / (double)e->calls;
        k[j].flops += (double)e->flops;
        k[j].bytes += (double)e->bytes;
    }
    *out = k;
    return n;
}

static void point_attrs(struct xpb_text *t, size_t i, const void *ctx)
{
    const roof_ctx *c = ctx;
    const kind_sum *k = &c->kinds[i];
    xpb_text_printf(t,
                    " data-op=\"%s\" data-flops-per-s=\"%.17g\" data-intensity=\"%.17g\" "
                    "data-seconds=\"%.17g\"",
                    i < c->n_kinds ? k->op : "step", k->flops / k->seconds, k->flops / k->bytes,
                    k->seconds);
    if (i == c->n_kinds && c->step_src)
        xpb_text_printf(t, " data-src=\"%s\"", c->step_src);
}

static void line_attrs(struct xpb_text *t, size_t i, const void *ctx)
{
    const roof_ctx *c = ctx;
    if (i == 0)
        xpb_text_printf(t, " data-roof=\"memory\" data-bandwidth=\"%.17g\"", c->bandwidth);
    else
        xpb_text_printf(t, " data-roof=\"compute\" data-peak=\"%.17g\"", c->peak);
}

/* A table row: op kind, ops, ms/step, GFLOP/s, FLOP/B, attainable GFLOP/s, share of it. */
static xpb_status row(xpb_report *r, xpb_report_table *t, const char *name, double ops,
                      const kind_sum *k, double peak, double bandwidth)
{
    xpb_report_cell *c = xpb_report_row(r, t);
    if (!c)
        return XPB_OUT_OF_MEMORY;
    xpb_cell_text(&c[0], name);
    if (ops > 0)
        xpb_cell_number(&c[1], ops, XPB_UNIT_COUNT, NULL);
    xpb_cell_number(&c[2], k->seconds, XPB_UNIT_MS, NULL);
    double ai = k->flops / k->bytes;
    if (k->flops > 0) {
        xpb_cell_number(&c[3], k->flops / k->seconds, XPB_UNIT_GFLOPS, NULL);
        xpb_cell_number(&c[4], ai, XPB_UNIT_NONE, NULL);
        double attainable = fmin(peak, bandwidth * ai);
        xpb_cell_number(&c[5], attainable, XPB_UNIT_GFLOPS, NULL);
        xpb_cell_number(&c[6], k->flops / k->seconds / attainable, XPB_UNIT_PERCENT, NULL);
    } else if (k->bytes > 0) { /* no FLOPs: its share of the bandwidth */
        xpb_cell_number(&c[6], k->bytes / k->seconds / bandwidth, XPB_UNIT_PERCENT, NULL);
        c[6].title = "of the memory bandwidth: the op does no floating-point work";
    }
    return XPB_OK;
}

/* The chart and table of one run. */
static xpb_status one_run(xpb_report *r, xpb_report_section *s, const xpb_rrun *run, size_t nth)
{
    const struct xpb_results_run *v = run->v;
    double peak = run_peak(v), bw = v->device.memory_bandwidth;
    kind_sum *k;
    size_t n = sum_kinds(r, &k, v);
    if (n == (size_t)-1)
        return XPB_OUT_OF_MEMORY;
    /* the whole step: the run's FLOP/s and bytes/s over the same steps */
    double step_flops = v->metrics.flops_per_s, step_bytes = v->metrics.bytes_per_s;
    k[n] = (kind_sum){.op = "whole step", .seconds = 1, .flops = step_flops, .bytes = step_bytes};
    struct xpb_svg_scatter *c = xpb_arena_alloc(&r->arena, sizeof *c);
    struct xpb_svg_scatter_point *p = xpb_arena_alloc(&r->arena, (n + 1) * sizeof *p);
    struct xpb_svg_scatter_line *l = xpb_arena_alloc(&r->arena, 2 * sizeof *l);
    double *xy = xpb_arena_alloc(&r->arena, 8 * sizeof *xy);
    roof_ctx *ctx = xpb_arena_alloc(&r->arena, sizeof *ctx);
    const char *label = xpb_rrun_label(r, run, DESC);
    if (!c || !p || !l || !xy || !ctx || !label)
        return XPB_OUT_OF_MEMORY;
    size_t drawn = 0, flopless = 0;
    double lo = peak / bw, hi = peak / bw; /* the intensities the axis must cover */
    for (size_t i = 0; i <= n; i++) {
        if (!(k[i].flops > 0) || !(k[i].bytes > 0) || !(k[i].seconds > 0)) {
            flopless += i < n;
            continue;
        }
        double ai = k[i].flops / k[i].bytes;
        lo = fmin(lo, ai);
        hi = fmax(hi, ai);
        p[drawn] = (struct xpb_svg_scatter_point){
            .x = ai,
            .y = k[i].flops / k[i].seconds * 1e-9,
            .size = i < n ? k[i].seconds : 0,
            .series = i < n ? 0 : 1,
            .label = i < n ? k[i].op : "step",
            .tooltip = xpb_arena_printf(&r->arena, "%s: %.4g GFLOP/s at %.4g FLOP/byte%s", k[i].op,
                                        k[i].flops / k[i].seconds * 1e-9, ai,
                                        i < n ? "" : " (the run's FLOP/s and bytes/s)")};
        if (drawn != i) /* the callbacks index kinds by point: keep them aligned */
            k[drawn] = k[i];
        drawn++;
    }
    size_t kinds_drawn = drawn - (drawn > 0 && p[drawn - 1].series == 1);
    lo /= 4;
    hi *= 4;
    xy[0] = lo, xy[1] = peak / bw, xy[2] = bw * lo * 1e-9, xy[3] = peak * 1e-9;
    xy[4] = peak / bw, xy[5] = hi, xy[6] = peak * 1e-9, xy[7] = peak * 1e-9;
    l[0] = (struct xpb_svg_scatter_line){2, &xy[0], &xy[2], NULL, 1};
    l[1] = (struct xpb_svg_scatter_line){2, &xy[4], &xy[6], NULL, 0};
    l[0].label = xpb_arena_printf(&r->arena, "memory %.3g GB/s", bw * 1e-9);
    l[1].label = xpb_arena_printf(&r->arena, "peak %.4g GFLOP/s", peak * 1e-9);
    *ctx = (roof_ctx){k, kinds_drawn, peak, bw,
                      xpb_rrun_src(r, run, xpb_results_field_path(XPB_RF_FLOPS_PER_S))};
    static const char *const series[2] = {"op kind (area: its time per step)", "whole step"};
    *c = (struct xpb_svg_scatter){
        .id = xpb_arena_printf(&r->arena, "%s-chart-%zu", s->id, nth),
        .title = xpb_arena_printf(&r->arena, "Roofline of %s (%s)", run->id, label),
        .note = xpb_arena_printf(
            &r->arena,
            "ceilings: memory %.3g GB/s (%s), peak %.4g GFLOP/s (%s); ridge %.3g FLOP/byte. "
            "%zu op kind%s without FLOPs not drawn (in the table)",
            bw * 1e-9, v->device.memory_bandwidth_source ? v->device.memory_bandwidth_source : "",
            peak * 1e-9, v->device.peak_flops_source ? v->device.peak_flops_source : "", peak / bw,
            flopless, flopless == 1 ? "" : "s"),
        .x_label = "arithmetic intensity, FLOP/byte",
        .y_label = "GFLOP/s",
        .x_log10 = 1,
        .y_log10 = 1,
        .n_series = 2,
        .series_names = series,
        .n_points = drawn,
        .points = p,
        .n_lines = 2,
        .lines = l,
        .point_attrs = point_attrs,
        .line_attrs = line_attrs,
        .ctx = ctx};
    if (!c->id || !c->title || !c->note || !l[0].label || !l[1].label ||
        xpb_report_scatter(r, s, c) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    static const char *const headers[7] = {"op kind",
                                           "ops",
                                           "ms/step",
                                           "GFLOP/s",
                                           "FLOP/B",
                                           "attainable GFLOP/s",
                                           "share of the roof %"};
    char suffix[32];
    snprintf(suffix, sizeof suffix, "table-%zu", nth);
    xpb_report_table *t = xpb_report_table_new(r, s, suffix, c->title, headers, 7);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "per step, from the profile; attainable = min(peak, bandwidth x FLOP/B); an op "
              "kind without FLOPs: its bytes/s as a share of the bandwidth";
    kind_sum *all = NULL;
    size_t n_all = sum_kinds(r, &all, v); /* again: the drawn list above left some out */
    if (n_all == (size_t)-1)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < n_all; i++)
        if (all[i].seconds > 0 && row(r, t, all[i].op, (double)all[i].ops, &all[i], peak, bw))
            return XPB_OUT_OF_MEMORY;
    if (step_flops > 0 && step_bytes > 0) {
        kind_sum step = {
            .op = "whole step", .seconds = 1, .flops = step_flops, .bytes = step_bytes};
        if (row(r, t, "whole step (per second)", 0, &step, peak, bw) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
        /* the step's numbers are the file's: point the cells at them */
        xpb_report_cell *last = &t->cells[(t->n_rows - 1) * t->n_cols];
        last[2] = (xpb_report_cell){.kind = XPB_CELL_EMPTY, .v = NAN, .lo = NAN, .hi = NAN};
        xpb_rrun_cell(r, &last[3], run, XPB_RF_FLOPS_PER_S, XPB_UNIT_GFLOPS);
    }
    return XPB_OK;
}

xpb_status xpb_report_roofline(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "roofline", "Rooflines of profiled runs");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    size_t nth = 0;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        const struct xpb_results_run *v = run->v;
        if (!run->ok || !v->has_profile || v->n_profile == 0 || !(run_peak(v) > 0) ||
            !(v->device.memory_bandwidth > 0))
            continue;
        if (one_run(r, s, run, nth++) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    }
    if (nth == 0)
        return xpb_report_text(r, s,
                               "No roofline: no finished run has a profile (profile: true) on a "
                               "device that states both its peak FLOP/s and its memory "
                               "bandwidth.");
    return XPB_OK;
}
