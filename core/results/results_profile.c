/* The per-op profile report of a results document (see results.h): where a step's time goes,
 * by op kind and by op, and which ops a backend fused into others. Like the table, it reads
 * leniently: entries with missing or mistyped fields are skipped, never trusted. */
#include "results/results.h"

#include <stdlib.h>
#include <string.h>

typedef struct kind_sum {
    const char *op; /* borrowed from the document */
    unsigned ops, fused;
    double ms; /* per step */
} kind_sum;

typedef struct op_time {
    const char *op, *layer;
    double ms;
} op_time;

/* Milliseconds one step spends in the op of profile entry `e`; -1 when the entry is unusable. */
static double entry_ms(const json_t *e)
{
    const json_t *calls = json_object_get(e, "calls"), *sec = json_object_get(e, "seconds");
    if (!json_is_integer(calls) || !json_is_number(sec) || json_number_value(sec) < 0)
        return -1.0;
    json_int_t n = json_integer_value(calls);
    return n > 0 ? 1e3 * json_number_value(sec) / (double)n : 0.0;
}

static int by_ms_desc(const void *a, const void *b)
{
    double x = ((const op_time *)a)->ms, y = ((const op_time *)b)->ms;
    return (x < y) - (x > y);
}

static int kind_by_ms_desc(const void *a, const void *b)
{
    double x = ((const kind_sum *)a)->ms, y = ((const kind_sum *)b)->ms;
    return (x < y) - (x > y);
}

static const char *str_or(const json_t *v, const char *dflt)
{
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static xpb_status print_one(FILE *f, const json_t *run, const json_t *prof, unsigned top)
{
    size_t n = json_array_size(prof);
    kind_sum *kinds = calloc(n ? n : 1, sizeof *kinds);
    op_time *ops = calloc(n ? n : 1, sizeof *ops);
    if (!kinds || !ops) {
        free(kinds);
        free(ops);
        return XPB_OUT_OF_MEMORY;
    }
    size_t n_kinds = 0, n_ops = 0, n_fused = 0;
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(prof, i);
        const char *op = str_or(json_object_get(e, "op"), NULL);
        double ms = entry_ms(e);
        if (!op || ms < 0)
            continue;
        int fused = json_is_string(json_object_get(e, "fused_into"));
        size_t k = 0;
        while (k < n_kinds && strcmp(kinds[k].op, op) != 0)
            k++;
        if (k == n_kinds)
            kinds[n_kinds++].op = op;
        kinds[k].ops++;
        kinds[k].fused += (unsigned)fused;
        kinds[k].ms += ms;
        total += ms;
        n_fused += (size_t)fused;
        ops[n_ops++] = (op_time){op, str_or(json_object_get(e, "layer"), ""), ms};
    }
    qsort(kinds, n_kinds, sizeof *kinds, kind_by_ms_desc);
    qsort(ops, n_ops, sizeof *ops, by_ms_desc);
    const json_t *cfg = json_object_get(run, "config");
    fprintf(f,
            "\nprofile of %s (%s, %s, fusion %s): %.3f ms per step in the backend's kernels, "
            "%zu ops, %zu fused into others\n",
            str_or(json_object_get(run, "id"), "-"), str_or(json_object_get(cfg, "backend"), "-"),
            str_or(json_object_get(cfg, "precision"), "-"),
            json_is_false(json_object_get(cfg, "fusion")) ? "off" : "on", total, n_ops, n_fused);
    fprintf(f, "  %-26s %5s %6s %10s %7s\n", "by op kind", "ops", "fused", "ms/step", "share");
    for (size_t k = 0; k < n_kinds; k++)
        fprintf(f, "  %-26s %5u %6u %10.3f %6.1f%%\n", kinds[k].op, kinds[k].ops, kinds[k].fused,
                kinds[k].ms, total > 0 ? 100.0 * kinds[k].ms / total : 0.0);
    if (top > 0 && n_ops > 0) {
        fprintf(f, "  %-26s %-24s %10s %7s\n", "slowest ops", "layer", "ms/step", "share");
        for (size_t i = 0; i < n_ops && i < top && ops[i].ms > 0; i++)
            fprintf(f, "  %-26s %-24s %10.3f %6.1f%%\n", ops[i].op, ops[i].layer, ops[i].ms,
                    total > 0 ? 100.0 * ops[i].ms / total : 0.0);
    }
    free(kinds);
    free(ops);
    return XPB_OK;
}

xpb_status xpb_results_print_profiles(FILE *f, const json_t *doc, unsigned top, unsigned *printed)
{
    if (printed)
        *printed = 0;
    if (!f || !json_is_object(doc))
        return XPB_INVALID_ARGUMENT;
    const json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *run = json_array_get(runs, i);
        const json_t *prof = json_object_get(run, "profile");
        if (!json_is_array(prof))
            continue;
        xpb_status st = print_one(f, run, prof, top);
        if (st != XPB_OK)
            return st;
        if (printed)
            (*printed)++;
    }
    if (fflush(f) != 0 || ferror(f))
        return XPB_IO_ERROR;
    return XPB_OK;
}
