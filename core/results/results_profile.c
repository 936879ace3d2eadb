/* The per-op profile report of a results document (see results.h): where a step's time goes,
 * by op kind and by op, and which ops a backend fused into others. Like the table, it reads
 * the document's typed view: entries with missing or mistyped fields are skipped. */
#include "results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/terminal.h"
#include "results/view.h"

typedef struct kind_sum {
    const char *op; /* borrowed from the document */
    unsigned ops, fused;
    double ms; /* per step */
} kind_sum;

typedef struct op_time {
    const char *op, *layer;
    double ms;
    double flops, bytes; /* per call; NaN when the document does not say (before version 3) */
} op_time;

/* The roofline of a run's device: its peak FLOP/s for the run's precision and its memory
 * bandwidth (NaN when unknown), so that ridge = peak / bandwidth FLOPs per byte. */
typedef struct roof {
    double peak, bandwidth;
} roof;

static roof run_roof(const struct xpb_results_run *run)
{
    roof r = {NAN, run->device.memory_bandwidth > 0 ? run->device.memory_bandwidth : NAN};
    for (size_t i = 0; i < run->device.n_peak_flops; i++)
        if (run->config.precision &&
            strcmp(run->device.peak_flops[i].key, run->config.precision) == 0 &&
            run->device.peak_flops[i].value > 0)
            r.peak = run->device.peak_flops[i].value;
    return r;
}

/* "  12.3  4.56  0.81 compute  41%": an op's achieved GFLOP/s and GB/s, its intensity, the roof
 * that binds it at that intensity, and its share of the attainable rate; dashes for what is
 * unknown. */
static void roof_cells(char *buf, size_t size, const op_time *o, const roof *r)
{
    double s = o->ms * 1e-3;
    if (!(s > 0) || !isfinite(o->flops) || !isfinite(o->bytes) || o->bytes <= 0) {
        snprintf(buf, size, "%9s %8s %8s %-8s %6s", "-", "-", "-", "-", "-");
        return;
    }
    double flops = o->flops / s, bytes = o->bytes / s, ai = o->flops / o->bytes;
    char bound[16] = "-", share[16] = "-";
    if (isfinite(r->peak) && isfinite(r->bandwidth)) {
        double attainable = fmin(r->peak, r->bandwidth * ai);
        snprintf(bound, sizeof bound, "%s", r->bandwidth * ai < r->peak ? "memory" : "compute");
        /* a memory-bound op with no FLOPs: its share of the bandwidth */
        double got = o->flops > 0 ? flops / attainable : bytes / r->bandwidth;
        snprintf(share, sizeof share, "%.0f%%", 100.0 * got);
    }
    snprintf(buf, size, "%9.2f %8.2f %8.3f %-8s %6s", flops * 1e-9, bytes * 1e-9, ai, bound, share);
}

/* Milliseconds one step spends in the op of profile entry `e`; -1 when the entry is unusable. */
static double entry_ms(const struct xpb_results_profile_entry *e)
{
    if (e->calls == XPB_RESULTS_NO_INT || isnan(e->seconds) || e->seconds < 0)
        return -1.0;
    return e->calls > 0 ? 1e3 * e->seconds / (double)e->calls : 0.0;
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

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static xpb_status print_one(FILE *f, const struct xpb_results_run *run, unsigned top)
{
    size_t n = run->n_profile;
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
        const struct xpb_results_profile_entry *e = &run->profile[i];
        const char *op = e->op;
        double ms = entry_ms(e);
        if (!op || ms < 0)
            continue;
        int fused = e->fused_into != NULL;
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
        ops[n_ops++] = (op_time){op, str_or(e->layer, ""), ms,
                                 e->flops == XPB_RESULTS_NO_INT ? NAN : (double)e->flops,
                                 e->bytes == XPB_RESULTS_NO_INT ? NAN : (double)e->bytes};
    }
    qsort(kinds, n_kinds, sizeof *kinds, kind_by_ms_desc);
    qsort(ops, n_ops, sizeof *ops, by_ms_desc);
    const struct xpb_results_config *cfg = &run->config;
    char id[160], backend[160], precision[160], op[160], layer[160]; /* escaped (terminal.h) */
    fprintf(f,
            "\nprofile of %s (%s, %s, fusion %s): %.3f ms per step in the backend's kernels, "
            "%zu ops, %zu fused into others\n",
            xpb_term_field(id, sizeof id, str_or(run->id, "-")),
            xpb_term_field(backend, sizeof backend, str_or(cfg->backend, "-")),
            xpb_term_field(precision, sizeof precision, str_or(cfg->precision, "-")),
            cfg->fusion == 0 ? "off" : "on", total, n_ops, n_fused);
    fprintf(f, "  %-26s %5s %6s %10s %7s\n", "by op kind", "ops", "fused", "ms/step", "share");
    for (size_t k = 0; k < n_kinds; k++)
        fprintf(f, "  %-26s %5u %6u %10.3f %6.1f%%\n", xpb_term_field(op, sizeof op, kinds[k].op),
                kinds[k].ops, kinds[k].fused, kinds[k].ms,
                total > 0 ? 100.0 * kinds[k].ms / total : 0.0);
    if (top > 0 && n_ops > 0) {
        roof r = run_roof(run);
        char cells[96], src1[128], src2[128];
        if (isfinite(r.peak) && isfinite(r.bandwidth))
            fprintf(f,
                    "  roofline: peak %.1f GFLOP/s (%s), memory %.2f GB/s (%s), ridge %.2f "
                    "FLOP/byte\n",
                    r.peak * 1e-9,
                    xpb_term_field(src1, sizeof src1,
                                   str_or(run->device.peak_flops_source, "the backend's")),
                    r.bandwidth * 1e-9,
                    xpb_term_field(src2, sizeof src2,
                                   str_or(run->device.memory_bandwidth_source, "measured")),
                    r.peak / r.bandwidth);
        fprintf(f, "  %-26s %-24s %10s %7s %9s %8s %8s %-8s %6s\n", "slowest ops", "layer",
                "ms/step", "share", "GFLOP/s", "GB/s", "FLOP/B", "bound", "roof");
        for (size_t i = 0; i < n_ops && i < top && ops[i].ms > 0; i++) {
            roof_cells(cells, sizeof cells, &ops[i], &r);
            fprintf(f, "  %-26s %-24s %10.3f %6.1f%% %s\n",
                    xpb_term_field(op, sizeof op, ops[i].op),
                    xpb_term_field(layer, sizeof layer, ops[i].layer), ops[i].ms,
                    total > 0 ? 100.0 * ops[i].ms / total : 0.0, cells);
        }
        fprintf(f, "  GFLOP/s and GB/s: the op's FLOPs and least bytes per call over its time; "
                   "FLOP/B: its arithmetic intensity; bound: the roof that limits it at that "
                   "intensity (memory below the ridge); roof: its share of the attainable rate "
                   "min(peak, bandwidth x FLOP/B) (of the bandwidth for an op without FLOPs)\n");
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
    struct xpb_results_doc v;
    xpb_status st = xpb_results_view(&v, doc);
    for (size_t i = 0; st == XPB_OK && i < v.n_runs; i++) {
        if (!v.runs[i].has_profile)
            continue;
        st = print_one(f, &v.runs[i], top);
        if (st == XPB_OK && printed)
            (*printed)++;
    }
    xpb_results_view_free(&v);
    if (st != XPB_OK)
        return st;
    if (fflush(f) != 0 || ferror(f))
        return XPB_IO_ERROR;
    return XPB_OK;
}
