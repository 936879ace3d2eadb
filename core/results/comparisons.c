/* Comparisons of runs (see comparisons.h), read from the document's typed view. */
#include "results/comparisons.h"

#include <math.h>
#include <string.h>

#include "base/names.h"
#include "results/schema_version.h"
#include "results/view_config.h"

/* The axes a comparison varies, in the order of its kinds. */
static const char *const axes[] = {"backend", "fusion", "precision"};
#define N_AXES 3

/* The median throughput of a finished run with an id, or 0 when it has none. */
static double run_throughput(const struct xpb_results_run *run)
{
    double median = run->metrics.throughput.median;
    return run->id && run->ok && !isnan(median) ? median : 0;
}

size_t xpb_results_repeat_throughputs(double *out, size_t cap, const struct xpb_results_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->metrics.n_repeats && n < cap; i++)
        if (run->metrics.repeats[i].throughput > 0)
            out[n++] = run->metrics.repeats[i].throughput;
    return n;
}

int xpb_results_speedup(xpb_interval *out, const struct xpb_results_run *baseline,
                        const struct xpb_results_run *candidate)
{
    double a[XPB_RESULTS_MAX_REPEATS], b[XPB_RESULTS_MAX_REPEATS];
    size_t na = xpb_results_repeat_throughputs(a, XPB_RESULTS_MAX_REPEATS, baseline);
    size_t nb = xpb_results_repeat_throughputs(b, XPB_RESULTS_MAX_REPEATS, candidate);
    if (na && nb)
        return xpb_interval_ratio(out, a, na, b, nb, 0.95);
    /* no repeats listed: the medians, without an interval */
    double ta = run_throughput(baseline), tb = run_throughput(candidate);
    out->low = out->high = NAN;
    out->estimate = ta > 0 && tb > 0 ? tb / ta : NAN;
    return ta > 0 && tb > 0 ? 0 : -1;
}

/* Whether two runs' configs agree on every key but the axes. */
static int same_except_axes(const struct xpb_results_run *a, const struct xpb_results_run *b)
{
    return a->has_config && b->has_config &&
           xpb_results_config_same_except(&a->config, &b->config, axes, N_AXES, 0);
}

/* The backend every run like `run` (same config but the backend) is compared with: the
 * document's named baseline, else the fastest finished run on a CPU among them, else (a
 * document whose devices do not say their kind) the reference backend. Static or borrowed
 * from the document; NULL when there is none. */
static const char *baseline_backend(const struct xpb_results_doc *v,
                                    const struct xpb_results_run *run)
{
    if (v->scenario.baseline)
        return v->scenario.baseline;
    const char *best = NULL;
    double best_tp = 0;
    int kinds_known = 0;
    for (size_t i = 0; i < v->n_runs; i++) {
        const struct xpb_results_run *r = &v->runs[i];
        if (!same_except_axes(r, run) ||
            !xpb_results_config_same_key(&r->config, &run->config, "fusion", 0) ||
            !xpb_results_config_same_key(&r->config, &run->config, "precision", 0))
            continue;
        const char *kind = r->device.kind;
        kinds_known |= kind != NULL && strcmp(kind, "unknown") != 0;
        double tp = run_throughput(r);
        if (kind && strcmp(kind, "cpu") == 0 && tp > best_tp) {
            best_tp = tp;
            best = r->config.backend;
        }
    }
    return best ? best : kinds_known ? NULL : XPB_REFERENCE_BACKEND;
}

/* The kind of comparison with `base` as baseline and `cand` as candidate, or NULL. */
static const char *comparison_kind(const struct xpb_results_doc *v,
                                   const struct xpb_results_run *base,
                                   const struct xpb_results_run *cand)
{
    if (!same_except_axes(base, cand))
        return NULL;
    int differing = -1;
    for (int i = 0; i < N_AXES; i++) {
        if (xpb_results_config_same_key(&base->config, &cand->config, axes[i], 0))
            continue;
        if (differing >= 0)
            return NULL;
        differing = i;
    }
    const struct xpb_results_config *bc = &base->config;
    switch (differing) {
    case 0: {
        const char *want = baseline_backend(v, cand);
        return want && bc->backend && strcmp(bc->backend, want) == 0 ? "backend" : NULL;
    }
    case 1: /* only between runs of a backend that fuses (or documents that do not say) */
        if (xpb_results_run_fuses(base) == 0 || xpb_results_run_fuses(cand) == 0)
            return NULL;
        return bc->fusion == 0 && cand->config.fusion == 1 ? "fusion" : NULL;
    case 2:
        return bc->precision && strcmp(bc->precision, "fp32") == 0 ? "precision" : NULL;
    default:
        return NULL;
    }
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* One comparison object (a new reference); json null when the runs have no speedup (cannot
 * happen for runs with a throughput: skipped), NULL when out of memory. */
static json_t *comparison_json(const char *kind, const struct xpb_results_run *base,
                               const struct xpb_results_run *cand, int64_t version)
{
    xpb_interval iv;
    if (xpb_results_speedup(&iv, base, cand) != 0 || !(iv.estimate > 0))
        return json_null();
    json_t *cmp = json_pack("{s:s, s:s, s:s, s:s, s:f}", "kind", kind, "baseline", base->id,
                            "candidate", cand->id, "metric", "throughput", "speedup", iv.estimate);
    if (cmp && version >= 2) {
        json_object_set_new(cmp, "ci95_low", num_or_null(iv.low));
        json_object_set_new(cmp, "ci95_high", num_or_null(iv.high));
        json_object_set_new(cmp, "significant", json_boolean(xpb_interval_significant(&iv)));
    }
    return cmp;
}

/* The comparisons of the runs of `v` into `list`. XPB_OUT_OF_MEMORY or XPB_OK. */
static xpb_status derive(json_t *list, const struct xpb_results_doc *v)
{
    int64_t version =
        v->schema_version != XPB_RESULTS_NO_INT ? v->schema_version : XPB_RESULTS_SCHEMA_VERSION;
    for (size_t j = 0; j < v->n_runs; j++) {
        const struct xpb_results_run *cand = &v->runs[j];
        if (run_throughput(cand) <= 0)
            continue;
        for (size_t i = 0; i < v->n_runs; i++) {
            const struct xpb_results_run *base = &v->runs[i];
            const char *kind =
                i == j || run_throughput(base) <= 0 ? NULL : comparison_kind(v, base, cand);
            if (!kind)
                continue;
            json_t *cmp = comparison_json(kind, base, cand, version);
            if (json_is_null(cmp))
                continue;
            if (!cmp || json_array_append_new(list, cmp) != 0)
                return XPB_OUT_OF_MEMORY;
        }
    }
    return XPB_OK;
}

xpb_status xpb_results_add_comparisons(json_t *doc)
{
    struct xpb_results_doc v;
    json_t *list = NULL;
    xpb_status st = xpb_results_view(&v, doc);
    if (st == XPB_OK && !v.has_runs)
        st = XPB_INVALID_ARGUMENT;
    if (st == XPB_OK && !(list = json_array()))
        st = XPB_OUT_OF_MEMORY;
    if (st == XPB_OK)
        st = derive(list, &v);
    xpb_results_view_free(&v);
    if (st != XPB_OK) {
        json_decref(list);
        return st;
    }
    return json_object_set_new(doc, "comparisons", list) != 0 ? XPB_OUT_OF_MEMORY : XPB_OK;
}
