/* The run index of a report and the cells of a run's numbers (see report_runs.h). */
#include "report/report_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/view_config.h"

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static void read_run(xpb_rrun *x, const struct xpb_results_run *v, size_t doc)
{
    const struct xpb_results_config *c = &v->config;
    x->v = v;
    x->doc = doc;
    x->index = v->index;
    x->id = or_empty(v->id);
    x->status = or_empty(v->status);
    x->model = or_empty(c->model);
    x->variant = or_empty(c->variant);
    x->mode = or_empty(c->mode);
    x->precision = or_empty(c->precision);
    x->backend = or_empty(c->backend);
    x->batch = c->batch != XPB_RESULTS_NO_INT ? (long)c->batch : -1;
    x->threads = c->threads != XPB_RESULTS_NO_INT ? (long)c->threads : -1;
    x->fusion = c->fusion;
    x->fuses = xpb_results_run_fuses(v);
    x->emulated = xpb_results_run_emulated(v);
    x->throughput = v->metrics.throughput.median;
    x->ok = xpb_results_run_finished(v);
    x->flagged = v->metrics.interference.flagged == 1;
}

xpb_status xpb_rruns_build(xpb_report *r)
{
    size_t total = 0;
    for (size_t d = 0; d < r->n_docs; d++)
        total += r->views[d].n_runs;
    xpb_rruns *rs = xpb_arena_alloc(&r->arena, sizeof *rs);
    xpb_rrun *items = xpb_arena_alloc(&r->arena, (total ? total : 1) * sizeof *items);
    if (!rs || !items)
        return XPB_OUT_OF_MEMORY;
    for (size_t d = 0; d < r->n_docs; d++)
        for (size_t i = 0; i < r->views[d].n_runs; i++)
            read_run(&items[rs->n++], &r->views[d].runs[i], d);
    rs->items = items;
    r->runs = rs;
    return XPB_OK;
}

const xpb_rrun *xpb_rruns_find(const xpb_report *r, size_t doc, const char *id)
{
    for (size_t i = 0; i < r->runs->n; i++)
        if (r->runs->items[i].doc == doc && strcmp(r->runs->items[i].id, id) == 0)
            return &r->runs->items[i];
    return NULL;
}

const char *xpb_rrun_src(xpb_report *r, const xpb_rrun *run, const char *path)
{
    return xpb_arena_printf(&r->arena, "f%zu:runs[%zu].%s", run->doc, run->index, path);
}

void xpb_rrun_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run,
                   enum xpb_results_field field, xpb_unit unit)
{
    double v = xpb_results_field(run->v, field);
    if (isnan(v)) {
        xpb_cell_number(c, NAN, unit, NULL);
        return;
    }
    xpb_cell_number(c, v, unit, xpb_rrun_src(r, run, xpb_results_field_path(field)));
}

void xpb_rrun_throughput_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run)
{
    xpb_rrun_cell(r, c, run, XPB_RF_THROUGHPUT_MEDIAN, XPB_UNIT_RATE);
    double lo = run->v->metrics.throughput.ci95_low, hi = run->v->metrics.throughput.ci95_high;
    if (c->kind == XPB_CELL_NUMBER && !isnan(lo) && !isnan(hi)) {
        c->lo = lo;
        c->hi = hi;
    }
    if (run->flagged)
        c->flags |= XPB_CELL_FLAGGED;
}

double xpb_rrun_memory(const xpb_rrun *run, enum xpb_results_field *field)
{
    static const enum xpb_results_field fields[] = {XPB_RF_DEVICE_PEAK, XPB_RF_HOST_RUN_PEAK};
    for (size_t i = 0; i < 2; i++) {
        double v = xpb_results_field(run->v, fields[i]);
        if (!isnan(v)) {
            if (field)
                *field = fields[i];
            return v;
        }
    }
    if (field)
        *field = XPB_RF_COUNT;
    return NAN;
}

int xpb_rrun_same_except(const xpb_rrun *a, const xpb_rrun *b, const char *const *keys,
                         size_t n_keys)
{
    return a->v->has_config && b->v->has_config &&
           xpb_results_config_same_except(&a->v->config, &b->v->config, keys, n_keys, 0);
}

/* The integer value of config[key] used to sort a group; -1 when absent. */
static long key_value(const xpb_rrun *run, const char *key)
{
    int64_t v = xpb_results_config_int(&run->v->config, key);
    return v != XPB_RESULTS_NO_INT ? (long)v : -1;
}

/* Insertion sort of a group by key value (stable: ties keep run order). */
static void sort_group(xpb_rgroup *g, const char *key)
{
    for (size_t i = 1; i < g->n; i++) {
        const xpb_rrun *x = g->runs[i];
        size_t j = i;
        for (; j > 0 && key_value(g->runs[j - 1], key) > key_value(x, key); j--)
            g->runs[j] = g->runs[j - 1];
        g->runs[j] = x;
    }
    g->distinct = g->n > 0;
    for (size_t i = 1; i < g->n; i++)
        g->distinct += !xpb_results_config_same_key(&g->runs[i]->v->config,
                                                    &g->runs[i - 1]->v->config, key, 0);
}

xpb_status xpb_rruns_groups(xpb_report *r, xpb_rgroup **groups, size_t *n_groups, const char *key,
                            size_t min_values)
{
    const xpb_rruns *rs = r->runs;
    size_t cap = 0;
    int *taken = calloc(rs->n ? rs->n : 1, sizeof *taken);
    if (!taken)
        return XPB_OUT_OF_MEMORY;
    *groups = NULL;
    *n_groups = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (taken[i] || !rs->items[i].ok)
            continue;
        xpb_rgroup g = {0};
        g.runs = xpb_arena_alloc(&r->arena, (rs->n - i) * sizeof *g.runs);
        if (!g.runs)
            goto free_taken;
        for (size_t j = i; j < rs->n; j++)
            if (!taken[j] && rs->items[j].ok && rs->items[j].doc == rs->items[i].doc &&
                xpb_rrun_same_except(&rs->items[i], &rs->items[j], &key, 1)) {
                taken[j] = 1;
                g.runs[g.n++] = &rs->items[j];
            }
        sort_group(&g, key);
        if (g.distinct < min_values)
            continue;
        xpb_rgroup *slot = xpb_arena_push(&r->arena, (void **)groups, n_groups, &cap, sizeof g);
        if (!slot)
            goto free_taken;
        *slot = g;
    }
    free(taken);
    return XPB_OK;
free_taken:
    free(taken);
    return XPB_OUT_OF_MEMORY;
}
