/* Fused against unfused runs (see report_sections.h): per configuration the two throughputs,
 * the speedup with its interval and the step time fusion saves with its interval and marks (the
 * study's "latency fusion saves"), and, where both runs were profiled (profile: true), where the
 * step goes by op kind in each: a table and a stacked bar chart. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_comparisons.h"
#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_BACKEND | XPB_COL_THREADS)
#define CHART_KINDS 6 /* op kinds drawn as their own segment; the rest is "other" */

typedef struct kind_sum {
    const char *op;
    unsigned ops[2], fused; /* [0] unfused run, [1] fused run; ops of the fused run fused away */
    double seconds[2];      /* per step */
} kind_sum;

/* The step time fusion saves, 1 - 1 / speedup, with the speedup's interval and marks (not
 * significant, recomputed, disturbed). */
static void saving_cell(xpb_report_cell *c, const xpb_report_cell *speedup)
{
    if (speedup->kind != XPB_CELL_NUMBER || !(speedup->v > 0))
        return;
    xpb_cell_number(c, 1 - 1 / speedup->v, XPB_UNIT_PERCENT, NULL);
    if (xpb_cell_has_interval(speedup) && speedup->lo > 0) {
        c->lo = 1 - 1 / speedup->lo;
        c->hi = 1 - 1 / speedup->hi;
    }
    c->flags |=
        speedup->flags & (XPB_CELL_NOT_SIGNIFICANT | XPB_CELL_RECOMPUTED | XPB_CELL_FLAGGED);
}

static xpb_status pairs_table(xpb_report *r, xpb_report_section *s, const xpb_rcmp *cmps, size_t n)
{
    const char *headers[9 + 6];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    static const char *const more[] = {"unfused samples/s", "fused samples/s", "speedup ×",
                                       "unfused p50 ms",    "fused p50 ms",    "step time saved %"};
    memcpy(headers + nd, more, sizeof more);
    xpb_report_table *t =
        xpb_report_table_new(r, s, "table", "Fused against unfused", headers, nd + 6);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "step time saved = 1 - 1 / speedup: the share of the mean step time fusion saves "
              "(mean step time = batch / throughput), with the speedup's 95% interval from the "
              "repeats; n.s. = no significant saving; ! = a run other processes disturbed";
    for (size_t i = 0; i < n; i++) {
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, cmps[i].cand, DESC);
        xpb_rrun_throughput_cell(r, &c[nd], cmps[i].base);
        xpb_rrun_throughput_cell(r, &c[nd + 1], cmps[i].cand);
        xpb_rcmp_speedup_cell(r, &c[nd + 2], &cmps[i]);
        xpb_rrun_cell(r, &c[nd + 3], cmps[i].base, XPB_RF_STEP_P50, XPB_UNIT_MS);
        xpb_rrun_cell(r, &c[nd + 4], cmps[i].cand, XPB_RF_STEP_P50, XPB_UNIT_MS);
        saving_cell(&c[nd + 5], &c[nd + 2]);
    }
    return XPB_OK;
}

/* Adds the profile of one run (side 0 unfused, 1 fused) to the kind sums. */
static size_t sum_profile(kind_sum *kinds, size_t n_kinds, const struct xpb_results_run *run,
                          int side)
{
    for (size_t i = 0; i < run->n_profile; i++) {
        const struct xpb_results_profile_entry *e = &run->profile[i];
        const char *op = e->op;
        if (!op || e->calls == XPB_RESULTS_NO_INT || isnan(e->seconds))
            continue;
        size_t k = 0;
        while (k < n_kinds && strcmp(kinds[k].op, op) != 0)
            k++;
        if (k == n_kinds)
            kinds[n_kinds++] = (kind_sum){.op = op};
        kinds[k].ops[side]++;
        kinds[k].fused += side == 1 && e->fused_into;
        if (e->calls > 0)
            kinds[k].seconds[side] += e->seconds / (double)e->calls;
    }
    return n_kinds;
}

static int by_unfused_desc(const void *a, const void *b)
{
    const kind_sum *x = a, *y = b;
    double u = x->seconds[0] + x->seconds[1], v = y->seconds[0] + y->seconds[1];
    return (u < v) - (u > v);
}

static xpb_status profile_chart(xpb_report *r, xpb_report_section *s, const kind_sum *kinds,
                                size_t n_kinds, const char *label, size_t pair)
{
    xpb_chart *c = xpb_report_chart_new(
        r, s, XPB_CHART_BARS, xpb_arena_printf(&r->arena, "profile-chart-%zu", pair),
        xpb_arena_printf(&r->arena, "Where the step goes: %s", label));
    size_t shown = n_kinds < CHART_KINDS ? n_kinds : CHART_KINDS;
    if (!c || !(c->segment_names = xpb_arena_alloc(&r->arena, (shown + 1) * sizeof(char *))))
        return XPB_OUT_OF_MEMORY;
    c->x_label = "ms per step in the backend's kernels";
    c->x_unit = XPB_UNIT_MS;
    c->n_segments = shown + (n_kinds > shown);
    for (size_t k = 0; k < shown; k++)
        c->segment_names[k] = kinds[k].op;
    if (n_kinds > shown)
        c->segment_names[shown] = "other";
    for (int side = 0; side < 2; side++) {
        struct xpb_svg_bar *bar = xpb_chart_bar_new(r, c, side ? "fused" : "unfused");
        if (!bar)
            return XPB_OUT_OF_MEMORY;
        for (size_t k = 0; k < n_kinds; k++)
            bar->values[k < shown ? k : shown] += kinds[k].seconds[side];
    }
    return XPB_OK;
}

static xpb_status profile_table(xpb_report *r, xpb_report_section *s, const xpb_rcmp *k,
                                size_t pair)
{
    const struct xpb_results_run *pa = k->base->v, *pb = k->cand->v;
    size_t n = pa->n_profile + pb->n_profile, n_kinds = 0;
    kind_sum *kinds = calloc(n ? n : 1, sizeof *kinds);
    if (!kinds)
        return XPB_OUT_OF_MEMORY;
    n_kinds = sum_profile(kinds, n_kinds, pa, 0);
    n_kinds = sum_profile(kinds, n_kinds, pb, 1);
    qsort(kinds, n_kinds, sizeof *kinds, by_unfused_desc);
    static const char *const headers[] = {"op kind",   "unfused ops",       "unfused ms/step",
                                          "fused ops", "fused into others", "fused ms/step"};
    const char *label = xpb_rrun_label(r, k->cand, DESC);
    xpb_report_table *t =
        label ? xpb_report_table_new(r, s, xpb_arena_printf(&r->arena, "profile-%zu", pair),
                                     xpb_arena_printf(&r->arena, "Where the step goes: %s", label),
                                     headers, 6)
              : NULL;
    xpb_status st = t ? XPB_OK : XPB_OUT_OF_MEMORY;
    double total[2] = {0, 0};
    for (size_t i = 0; st == XPB_OK && i <= n_kinds; i++) {
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c) {
            st = XPB_OUT_OF_MEMORY;
            break;
        }
        int sum = i == n_kinds; /* the last row: the totals */
        xpb_cell_text(&c[0], sum ? "all kernels" : kinds[i].op);
        for (int side = 0; side < 2; side++) {
            unsigned ops = 0;
            for (size_t j = 0; j < n_kinds; j++)
                ops += sum || j == i ? kinds[j].ops[side] : 0;
            xpb_cell_number(&c[side ? 3 : 1], ops, XPB_UNIT_COUNT, NULL);
            xpb_cell_number(&c[side ? 5 : 2], sum ? total[side] : kinds[i].seconds[side],
                            XPB_UNIT_MS, NULL);
            total[side] += sum ? 0 : kinds[i].seconds[side];
        }
        unsigned fused = 0;
        for (size_t j = 0; j < n_kinds; j++)
            fused += sum || j == i ? kinds[j].fused : 0;
        xpb_cell_number(&c[4], fused, XPB_UNIT_COUNT, NULL);
        for (size_t col = 0; sum && col < 6; col++)
            c[col].flags |= XPB_CELL_STRONG;
    }
    if (st == XPB_OK)
        st = profile_chart(r, s, kinds, n_kinds, label, pair);
    free(kinds);
    return st;
}

xpb_status xpb_report_fusion(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "fusion", "Fusion on and off");
    xpb_rcmp *cmps;
    size_t n;
    if (!s || xpb_rcmps_of(r, "fusion", &cmps, &n) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    if (n == 0)
        return xpb_report_text(r, s,
                               "No fusion comparison: no two finished runs of a backend "
                               "that fuses differ only in fusion.");
    xpb_status st = pairs_table(r, s, cmps, n);
    size_t profiled = 0;
    for (size_t i = 0; st == XPB_OK && i < n; i++)
        if (cmps[i].base->v->has_profile && cmps[i].cand->v->has_profile)
            st = profile_table(r, s, &cmps[i], profiled++);
    if (st == XPB_OK && profiled == 0)
        st = xpb_report_text(r, s,
                             "Where the step goes: no pair has both runs profiled (run "
                             "the scenario with profile: true).");
    return st;
}
