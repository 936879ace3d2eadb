/* The runs of a scenario: preparation, sweep limits and expansion (scenario_runs.h). */
#include "scenario/scenario_runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario_limits.h"
#include "scenario/scenario_expand.h"
#include "scenario/scenario_ids.h"

void xpb_sruns_free(struct xpb_sruns *r)
{
    for (size_t i = 0; i < r->n; i++)
        xpb_sfields_free(&r->items[i].own);
    free(r->items);
    r->items = NULL;
    r->n = r->total = 0;
}

/* Fails when a required key (`model`) is in neither the run, the defaults nor --set. */
static xpb_status check_required(const struct xpb_sfields *merged, const struct xpb_ynode *run,
                                 const struct xpb_yorigin *origin, xpb_err *err)
{
    size_t n_keys;
    const struct xpb_skey *keys = xpb_skey_table(&n_keys);
    for (size_t k = 0; k < n_keys; k++) {
        if (!keys[k].required || xpb_sfields_find(merged, &keys[k], NULL))
            continue;
        char where[512];
        xpb_yorigin_where(where, sizeof where, origin, run->line, run->column);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: %s: expected %s in the run or in defaults, found none", where,
                           keys[k].name, keys[k].required);
    }
    return XPB_OK;
}

/* Converts run `node` into *run and sizes it: *bytes receives the memory one of its expanded
 * runs takes. */
static xpb_status prepare_one(struct xpb_srun *run, uint64_t *bytes, const struct xpb_ynode *node,
                              const struct xpb_sruns *r, xpb_err *err)
{
    char where[512], found[256];
    struct xpb_sfields merged = {0};
    run->node = node;
    if (node->kind != XPB_YNODE_MAPPING)
        return xpb_err_set(
            err, XPB_PARSE_ERROR, "%s: runs: expected a mapping for each run, found %s",
            xpb_yorigin_where(where, sizeof where, r->origin, node->line, node->column),
            xpb_ynode_describe(found, sizeof found, node));
    xpb_status st = xpb_sfields_from_map(&run->own, &run->label, node, 0, r->origin, err);
    if (st != XPB_OK)
        return st;
    if (xpb_sfields_merge(&merged, r->defaults, &run->own, r->overrides) != XPB_OK)
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (st == XPB_OK)
        st = check_required(&merged, node, r->origin, err);
    if (st == XPB_OK) {
        run->count = xpb_sfields_count(&merged);
        *bytes = xpb_sfields_run_bytes(&merged, &run->label, strlen(r->origin->file));
    }
    xpb_sfields_free(&merged);
    return st;
}

/* Adds with saturation at UINT64_MAX. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static const char *count_text(char *buf, size_t size, uint64_t n)
{
    if (n == UINT64_MAX)
        snprintf(buf, size, "more than %llu", (unsigned long long)(UINT64_MAX - 1));
    else
        snprintf(buf, size, "%llu", (unsigned long long)n);
    return buf;
}

/* The sweep limits, checked once every run is known to be valid: the error names the run
 * that crossed the limit and the total of all runs. */
static xpb_status check_limits(const struct xpb_sruns *r, const uint64_t *bytes, xpb_err *err)
{
    uint64_t sum = 0, total_bytes = 0;
    const struct xpb_ynode *over_runs = NULL, *over_bytes = NULL;
    for (size_t i = 0; i < r->n; i++) {
        sum = add_sat(sum, r->items[i].count);
        total_bytes = add_sat(total_bytes, mul_sat(r->items[i].count, bytes[i]));
        if (sum > XPB_SCENARIO_MAX_RUNS && !over_runs)
            over_runs = r->items[i].node;
        if (total_bytes > XPB_SCENARIO_MAX_EXPANDED_BYTES && !over_bytes)
            over_bytes = r->items[i].node;
    }
    char where[512], many[64];
    if (over_runs)
        return xpb_err_set(
            err, XPB_PARSE_ERROR, "%s: sweep too large: %s runs, expected at most %u",
            xpb_yorigin_where(where, sizeof where, r->origin, over_runs->line, over_runs->column),
            count_text(many, sizeof many, sum), XPB_SCENARIO_MAX_RUNS);
    if (over_bytes)
        return xpb_err_set(
            err, XPB_PARSE_ERROR,
            "%s: sweep too large: %s runs would take about %llu MiB, expected at "
            "most %u MiB",
            xpb_yorigin_where(where, sizeof where, r->origin, over_bytes->line, over_bytes->column),
            count_text(many, sizeof many, sum), (unsigned long long)(total_bytes >> 20),
            XPB_SCENARIO_MAX_EXPANDED_BYTES >> 20);
    return XPB_OK;
}

xpb_status xpb_sruns_prepare(struct xpb_sruns *out, const struct xpb_ynode *runs,
                             const struct xpb_sfields *defaults,
                             const struct xpb_sfields *overrides, const struct xpb_yorigin *origin,
                             xpb_err *err)
{
    xpb_status st = XPB_OK;
    memset(out, 0, sizeof *out);
    out->defaults = defaults;
    out->overrides = overrides;
    out->origin = origin;
    uint64_t *bytes = calloc(runs->n_items, sizeof *bytes);
    if (!bytes || !(out->items = calloc(runs->n_items, sizeof *out->items))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto free_bytes;
    }
    for (size_t i = 0; i < runs->n_items && st == XPB_OK; i++, out->n++)
        st = prepare_one(&out->items[i], &bytes[i], runs->items[i], out, err);
    if (st == XPB_OK)
        st = check_limits(out, bytes, err);
    for (size_t i = 0; st == XPB_OK && i < out->n; i++)
        out->total += (size_t)out->items[i].count;
free_bytes:
    free(bytes);
    return st;
}

xpb_status xpb_sruns_expand(xpb_run_config *out, const struct xpb_sruns *r, xpb_err *err)
{
    size_t at = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct xpb_srun *run = &r->items[i];
        struct xpb_sfields merged = {0};
        xpb_status st = xpb_sfields_merge(&merged, r->defaults, &run->own, r->overrides) != XPB_OK
                            ? xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory")
                            : xpb_expand_run(&out[at], &merged, &run->label, r->origin->file,
                                             run->node->line, err);
        xpb_sfields_free(&merged);
        if (st != XPB_OK)
            return st;
        at += (size_t)run->count;
    }
    return xpb_run_ids_unique(out, at, err);
}
