/* The run index of a report and the cells that describe runs (see report_runs.h). */
#include "report/report_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string at path under obj, borrowed from it; "" when it is not a string. */
static const char *str_at(const json_t *obj, const char *path)
{
    const json_t *v = xpb_json_at(obj, path);
    return json_is_string(v) ? json_string_value(v) : "";
}

static long int_at(const json_t *obj, const char *path)
{
    const json_t *v = xpb_json_at(obj, path);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

const json_t *xpb_json_at(const json_t *obj, const char *dotted)
{
    char key[128];
    while (obj && *dotted) {
        size_t len = strcspn(dotted, ".");
        if (len >= sizeof key)
            return NULL;
        memcpy(key, dotted, len);
        key[len] = '\0';
        obj = json_object_get(obj, key);
        dotted += len + (dotted[len] == '.');
    }
    return obj;
}

/* 1 when the device lists capability "fusion", 0 when it lists others, -1 when it says none. */
static int device_fuses(const json_t *run)
{
    const json_t *caps = xpb_json_at(run, "device.capabilities");
    if (!json_is_array(caps))
        return -1;
    for (size_t i = 0; i < json_array_size(caps); i++)
        if (json_is_string(json_array_get(caps, i)) &&
            strcmp(json_string_value(json_array_get(caps, i)), "fusion") == 0)
            return 1;
    return 0;
}

static void read_run(xpb_rrun *x, const json_t *run, size_t doc, size_t index)
{
    x->run = run;
    x->config = json_object_get(run, "config");
    x->metrics = json_object_get(run, "metrics");
    x->doc = doc;
    x->index = index;
    x->id = str_at(run, "id");
    x->status = str_at(run, "status");
    x->model = str_at(x->config, "model");
    x->variant = str_at(x->config, "variant");
    x->mode = str_at(x->config, "mode");
    x->precision = str_at(x->config, "precision");
    x->backend = str_at(x->config, "backend");
    x->batch = int_at(x->config, "batch");
    x->threads = int_at(x->config, "threads");
    const json_t *fusion = json_object_get(x->config, "fusion");
    x->fusion = json_is_boolean(fusion) ? json_is_true(fusion) : -1;
    x->fuses = device_fuses(run);
    const json_t *prec = json_object_get(xpb_json_at(run, "device.precisions"), x->precision);
    x->emulated = json_is_string(prec) && strcmp(json_string_value(prec), "emulated") == 0;
    const json_t *tp = xpb_json_at(x->metrics, "throughput.median");
    x->throughput = json_is_number(tp) ? json_number_value(tp) : NAN;
    x->ok = strcmp(x->status, "ok") == 0 && x->throughput > 0;
    x->flagged = json_is_true(xpb_json_at(x->metrics, "interference.flagged"));
}

xpb_status xpb_rruns_build(xpb_report *r)
{
    size_t total = 0;
    for (size_t d = 0; d < r->n_docs; d++)
        total += json_array_size(json_object_get(r->docs[d], "runs"));
    xpb_rruns *rs = xpb_arena_alloc(&r->arena, sizeof *rs);
    xpb_rrun *items = xpb_arena_alloc(&r->arena, (total ? total : 1) * sizeof *items);
    if (!rs || !items)
        return XPB_OUT_OF_MEMORY;
    for (size_t d = 0; d < r->n_docs; d++) {
        const json_t *runs = json_object_get(r->docs[d], "runs");
        for (size_t i = 0; i < json_array_size(runs); i++)
            read_run(&items[rs->n++], json_array_get(runs, i), d, i);
    }
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

void xpb_rrun_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run, const char *path,
                   xpb_unit unit)
{
    const json_t *v = xpb_json_at(run->run, path);
    if (!json_is_number(v)) {
        xpb_cell_number(c, NAN, unit, NULL);
        return;
    }
    xpb_cell_number(c, json_number_value(v), unit, xpb_rrun_src(r, run, path));
}

void xpb_rrun_throughput_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run)
{
    xpb_rrun_cell(r, c, run, "metrics.throughput.median", XPB_UNIT_RATE);
    const json_t *lo = xpb_json_at(run->metrics, "throughput.ci95_low");
    const json_t *hi = xpb_json_at(run->metrics, "throughput.ci95_high");
    if (c->kind == XPB_CELL_NUMBER && json_is_number(lo) && json_is_number(hi)) {
        c->lo = json_number_value(lo);
        c->hi = json_number_value(hi);
    }
    if (run->flagged)
        c->flags |= XPB_CELL_FLAGGED;
}

double xpb_rrun_memory(const xpb_rrun *run, const char **path)
{
    static const char *const keys[] = {"metrics.memory.device_peak_bytes",
                                       "metrics.memory.host_run_peak_bytes"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = xpb_json_at(run->run, keys[i]);
        if (json_is_number(v)) {
            if (path)
                *path = keys[i];
            return json_number_value(v);
        }
    }
    if (path)
        *path = NULL;
    return NAN;
}

static int listed(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return strcmp(key, "extra") == 0;
}

int xpb_rrun_same_except(const xpb_rrun *a, const xpb_rrun *b, const char *const *keys,
                         size_t n_keys)
{
    const char *key;
    json_t *value;
    if (!json_is_object(a->config) || !json_is_object(b->config))
        return 0;
    json_object_foreach((json_t *)a->config, key, value)
    {
        if (!listed(key, keys, n_keys) && !json_equal(value, json_object_get(b->config, key)))
            return 0;
    }
    json_object_foreach((json_t *)b->config, key, value)
    {
        if (!listed(key, keys, n_keys) && !json_object_get(a->config, key))
            return 0;
    }
    return 1;
}

/* The integer value of config[key] used to sort a group; -1 when absent. */
static long key_value(const xpb_rrun *run, const char *key)
{
    const json_t *v = json_object_get(run->config, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
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
        g->distinct += !json_equal(json_object_get(g->runs[i]->config, key),
                                   json_object_get(g->runs[i - 1]->config, key));
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
