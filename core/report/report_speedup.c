/* Backend speedups in the study's shape (see report_sections.h): one row per configuration
 * (model, mode, batch, precision, fusion, threads) and its baseline run, one column per
 * backend, each cell the backend's speedup over the baseline with its 95% interval. */
#include <math.h>
#include <string.h>

#include "report/report_comparisons.h"
#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_FUSION | XPB_COL_THREADS)
#define MAX_BACKENDS 32

typedef struct shape {
    const char *backends[MAX_BACKENDS];
    size_t n_backends;
    const xpb_rrun **bases; /* one per row */
    size_t n_rows;
} shape;

static void add_backend(shape *sh, const char *name)
{
    for (size_t i = 0; i < sh->n_backends; i++)
        if (strcmp(sh->backends[i], name) == 0)
            return;
    if (sh->n_backends < MAX_BACKENDS)
        sh->backends[sh->n_backends++] = name;
}

/* The backends (columns) and baseline runs (rows) of the comparisons. */
static xpb_status find_shape(xpb_report *r, shape *sh, const xpb_rcmp *cmps, size_t n)
{
    memset(sh, 0, sizeof *sh);
    sh->bases = xpb_arena_alloc(&r->arena, (n ? n : 1) * sizeof *sh->bases);
    if (!sh->bases)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        add_backend(sh, cmps[i].base->backend);
        add_backend(sh, cmps[i].cand->backend);
        size_t j = 0;
        while (j < sh->n_rows && sh->bases[j] != cmps[i].base)
            j++;
        if (j == sh->n_rows)
            sh->bases[sh->n_rows++] = cmps[i].base;
    }
    return XPB_OK;
}

/* The first comparison of baseline `base` whose candidate runs on `backend` (an element of
 * cmps), or NULL. */
static const xpb_rcmp *find_cmp(const xpb_rcmp *cmps, size_t n, const xpb_rrun *base,
                                const char *backend)
{
    for (size_t i = 0; i < n; i++)
        if (cmps[i].base == base && strcmp(cmps[i].cand->backend, backend) == 0)
            return &cmps[i];
    return NULL;
}

static xpb_status speedup_table(xpb_report *r, xpb_report_section *s, const shape *sh,
                                const xpb_rcmp *cmps, size_t n)
{
    const char *headers[9 + 2 + MAX_BACKENDS];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    headers[nd] = "baseline";
    headers[nd + 1] = "baseline samples/s";
    for (size_t b = 0; b < sh->n_backends; b++)
        if (!(headers[nd + 2 + b] = xpb_arena_printf(&r->arena, "%s ×", sh->backends[b])))
            return XPB_OUT_OF_MEMORY;
    xpb_report_table *t = xpb_report_table_new(r, s, "table", "Speedup over the baseline backend",
                                               headers, nd + 2 + sh->n_backends);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "× = how many times the baseline's throughput the backend reached (ratio of the "
              "geometric means of the repeats' throughputs), with its 95% interval in brackets; "
              "n.s. = no significant difference (the interval contains 1)";
    for (size_t i = 0; i < sh->n_rows; i++) {
        const xpb_rrun *base = sh->bases[i];
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, base, DESC);
        for (size_t k = 0; k < nd; k++) /* a row is a configuration of several backends */
            if (strcmp(headers[k], "fusion") == 0 && base->fuses == 0)
                xpb_cell_text(&c[k], xpb_arena_printf(&r->arena, "n/a for %s, %s for the others",
                                                      base->backend,
                                                      base->fusion == 1   ? "on"
                                                      : base->fusion == 0 ? "off"
                                                                          : "-"));
        xpb_cell_text(&c[nd], base->backend);
        xpb_rrun_throughput_cell(r, &c[nd + 1], base);
        for (size_t b = 0; b < sh->n_backends; b++) {
            xpb_report_cell *cell = &c[nd + 2 + b];
            const xpb_rcmp *k = find_cmp(cmps, n, base, sh->backends[b]);
            if (strcmp(sh->backends[b], base->backend) == 0) {
                xpb_cell_text(cell, "base");
                cell->flags |= XPB_CELL_STRONG;
            } else if (k) {
                xpb_rcmp_speedup_cell(r, cell, k);
            }
        }
    }
    return XPB_OK;
}

static xpb_status speedup_chart(xpb_report *r, xpb_report_section *s, const xpb_rcmp *cmps,
                                size_t n)
{
    xpb_chart *c = xpb_report_chart_new(r, s, XPB_CHART_BARS, "chart",
                                        "Speedup over the baseline backend (log scale)");
    if (!c)
        return XPB_OUT_OF_MEMORY;
    c->x_label = "speedup ×, 95% interval as whiskers; hollow: no significant difference";
    c->x_unit = XPB_UNIT_SPEEDUP;
    c->x_log10 = 1;
    c->ref = 1;
    for (size_t i = 0; i < n; i++) {
        xpb_report_cell cell = xpb_cell_empty();
        xpb_rcmp_speedup_cell(r, &cell, &cmps[i]);
        if (cell.kind != XPB_CELL_NUMBER)
            continue;
        const char *what = xpb_rrun_label(r, cmps[i].cand, DESC & ~(unsigned)XPB_COL_FUSION);
        const char *label =
            what ? xpb_arena_printf(&r->arena, "%s: %s", cmps[i].cand->backend, what) : NULL;
        struct xpb_svg_bar *bar = label ? xpb_chart_bar_new(r, c, label) : NULL;
        if (!bar)
            return XPB_OUT_OF_MEMORY;
        bar->values[0] = cell.v;
        bar->lo = cell.lo;
        bar->hi = cell.hi;
        bar->hollow = (cell.flags & XPB_CELL_NOT_SIGNIFICANT) != 0;
    }
    return XPB_OK;
}

xpb_status xpb_report_speedups(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "speedups", "Speedups between backends");
    xpb_rcmp *cmps;
    size_t n;
    shape sh;
    if (!s || xpb_rcmps_of(r, "backend", &cmps, &n) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    if (n == 0)
        return xpb_report_text(r, s,
                               "No backend comparison: no two finished runs of one file "
                               "differ only in their backend.");
    if (xpb_report_text(r, s,
                        "Each row is one configuration run on several backends; each backend's "
                        "column says how many times faster than the baseline it ran (the "
                        "scenario's baseline: key, else the fastest CPU backend).") != 0 ||
        find_shape(r, &sh, cmps, n) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    xpb_status st = speedup_table(r, s, &sh, cmps, n);
    return st == XPB_OK ? speedup_chart(r, s, cmps, n) : st;
}
