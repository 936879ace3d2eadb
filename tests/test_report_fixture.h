/* Results documents made to order for the report tests (test_report_*.c): a valid document of
 * schema version 2 (or 1) with runs whose numbers the test chooses, and the comparisons the
 * runner would derive. Every function here fails the current test when something is wrong;
 * documents are the caller's (json_decref). */
#ifndef XPB_TEST_REPORT_FIXTURE_H
#define XPB_TEST_REPORT_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"

#include <jansson.h>

#include "results/interval.h"
#include "results/results.h"

#define FX_MAX_REPEATS 8

typedef struct fx_run {
    const char *id, *model, *mode, *backend, *precision;
    int batch, threads, fusion;
    double tp[FX_MAX_REPEATS]; /* repeat throughputs, samples/s; the rest 0 */
    double p50;                /* median step time, s; 0: batch / the median throughput */
    double device_peak;        /* bytes; < 0: null (the backend has no statistics) */
    double host_run_peak;      /* bytes; < 0: null */
    double joules, watts;      /* > 0: measured by "backend" */
    double other_share;        /* interference: flagged above 0.05 */
    int profile;               /* add a profile: fused runs with a RELU fused into the CONV2D */
    const char *status;        /* NULL: "ok" */
    const char *device_kind;   /* NULL: "cpu" */
} fx_run;

/* A version-2 document without runs; baseline NULL gives null. */
static inline json_t *fx_doc(const char *baseline)
{
    json_t *doc = json_pack(
        "{s:s, s:i, s:{s:s, s:s}, s:s, s:{s:s, s:s, s:s, s:[], s:o}, "
        "s:{s:s, s:s, s:{s:s, s:i, s:i, s:[s, s]}, s:I, s:s, s:{s:s}, s:[], "
        "s:[{s:s, s:s, s:s, s:s, s:s}]}, s:[], s:[]}",
        "schema", "xpubench-results", "schema_version", 2, "tool", "name", "xpubench", "version",
        "0.1.0", "created", "2026-11-21T12:00:00Z", "scenario", "path", "configs/t.yaml", "name",
        "t", "sha256", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "overrides", "baseline", baseline ? json_string(baseline) : json_null(), "environment",
        "os", "Debian GNU/Linux 12", "kernel", "Linux 6.1.0 x86_64", "cpu", "model", "Test CPU",
        "cores", 2, "logical_cpus", 4, "flags", "avx2", "fma", "memory_bytes",
        (json_int_t)17179869184LL, "compiler", "GNU 12.2.0", "libraries", "jansson", "2.14",
        "accelerators", "plugins", "name", "cpu_ref", "kind", "backend", "version", "1.1.0", "abi",
        "1.1", "path", "plugins/backend_cpu_ref.so", "runs", "comparisons");
    assert_non_null(doc);
    return doc;
}

static inline json_t *fx_config(const fx_run *r)
{
    json_t *c = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:f, s:i, "
                          "s:i, s:i, s:s, s:s, s:{}, s:b}",
                          "model", r->model ? r->model : "conv6", "variant", "cifar", "mode",
                          r->mode ? r->mode : "inference", "batch", r->batch ? r->batch : 16,
                          "precision", r->precision ? r->precision : "fp32", "backend",
                          r->backend ? r->backend : "cpu_ref", "fusion", r->fusion, "threads",
                          r->threads, "device", 0, "warmup", 1, "min_steps", 10, "min_time_s", 0.5,
                          "max_steps", 0, "repeats", 3, "seed", 42, "data", "synthetic", "transfer",
                          "resident", "params", "allow_emulated", 0);
    assert_non_null(c);
    if (r->mode && strcmp(r->mode, "train") == 0)
        json_object_set_new(c, "optimizer",
                            json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "kind", "sgd", "lr",
                                      0.01, "momentum", 0.9, "weight_decay", 0.0, "beta1", 0.9,
                                      "beta2", 0.999, "eps", 1e-8));
    return c;
}

static inline int fx_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline json_t *fx_null_or(double v)
{
    return v >= 0 ? json_integer((json_int_t)v) : json_null();
}

static inline json_t *fx_energy(const fx_run *r, double samples)
{
    if (r->joules > 0)
        return json_pack("{s:b, s:s, s:f, s:f, s:f, s:n}", "measured", 1, "source", "backend",
                         "joules", r->joules, "samples_per_joule", samples / r->joules, "watts",
                         r->watts, "reason");
    return json_pack("{s:b, s:n, s:n, s:n, s:n, s:s}", "measured", 0, "source", "joules",
                     "samples_per_joule", "watts", "reason", "no meter: test machine");
}

static inline json_t *fx_metrics(const fx_run *r)
{
    double tp[FX_MAX_REPEATS];
    size_t n = 0;
    json_t *reps = json_array();
    int batch = r->batch ? r->batch : 16;
    for (; n < FX_MAX_REPEATS && r->tp[n] > 0; n++) {
        tp[n] = r->tp[n];
        json_array_append_new(reps, json_pack("{s:i, s:f, s:f}", "steps", 10, "seconds",
                                              10.0 * batch / r->tp[n], "throughput", r->tp[n]));
    }
    assert_true(n >= 1);
    xpb_interval ci;
    assert_int_equal(xpb_interval_geomean(&ci, tp, n, 0.95), 0);
    qsort(tp, n, sizeof *tp, fx_cmp_double);
    double median = n % 2 ? tp[n / 2] : (tp[n / 2 - 1] + tp[n / 2]) / 2;
    double p50 = r->p50 > 0 ? r->p50 : batch / median;
    json_t *m = json_pack(
        "{s:i, s:{s:f, s:f, s:f, s:s, s:o, s:o}, s:o, s:{s:f, s:f, s:f, s:f, s:f}, s:f, s:n, "
        "s:{s:i, s:n, s:o, s:o}, s:o, s:{s:f, s:f, s:[{s:i, s:f}, {s:i, s:f}, {s:i, s:f}]}, "
        "s:f, s:{s:f, s:f, s:f, s:b}}",
        "timed_steps", (int)(10 * n), "throughput", "median", median, "min", tp[0], "max",
        tp[n - 1], "unit", "samples/s", "ci95_low", n > 1 ? json_real(ci.low) : json_null(),
        "ci95_high", n > 1 ? json_real(ci.high) : json_null(), "repeats", reps, "step_time_s",
        "mean", p50, "p50", p50, "p95", p50 * 1.05, "p99", p50 * 1.1, "cv", 0.02, "flops_per_s",
        median * 3e8, "peak_fraction", "memory", "host_peak_rss_bytes", 100000000,
        "device_bytes_in_use", "device_peak_bytes", fx_null_or(r->device_peak),
        "host_run_peak_bytes", fx_null_or(r->host_run_peak), "energy",
        fx_energy(r, 10.0 * (double)n * batch), "loss", "first", 2.30, "last", 2.10, "series",
        "step", 10, "loss", 2.30, "step", 20, "loss", 2.20, "step", 30, "loss", 2.10,
        "host_overhead_fraction", 0.01, "interference", "other_cpu_share", r->other_share,
        "steal_share", 0.0, "load_1m", 1.0, "flagged", r->other_share > 0.05);
    assert_non_null(m);
    return m;
}

static inline json_t *fx_profile(const fx_run *r)
{
    double conv = r->fusion ? 0.8 : 1.0, relu = r->fusion ? 0.0 : 0.2;
    return json_pack("[{s:s, s:s, s:i, s:f, s:n}, {s:s, s:s, s:i, s:f, s:o}, "
                     "{s:s, s:s, s:i, s:f, s:n}]",
                     "op", "CONV2D", "layer", "conv1", "calls", 10, "seconds", conv * 0.01,
                     "fused_into", "op", "RELU", "layer", "conv1", "calls", 10, "seconds",
                     relu * 0.01, "fused_into",
                     r->fusion ? json_string("CONV2D conv1") : json_null(), "op", "LINEAR", "layer",
                     "fc", "calls", 10, "seconds", 0.001, "fused_into");
}

/* Appends run r to doc. */
static inline void fx_add(json_t *doc, const fx_run *r)
{
    const char *status = r->status ? r->status : "ok";
    int ok = strcmp(status, "ok") == 0;
    const char *backend = r->backend ? r->backend : "cpu_ref";
    int fuses = strcmp(backend, "cpu_ref") != 0;
    json_t *run = json_pack(
        "{s:s, s:s, s:o, s:{s:i, s:I, s:I, s:i}, s:{s:s, s:s, s:s, s:i, s:{}, s:s, s:{s:s, s:s}, "
        "s:o}, s:{s:b, s:n, s:s, s:n, s:s}}",
        "id", r->id, "status", status, "config", fx_config(r), "model", "parameters", 1000,
        "flops_per_sample_forward", (json_int_t)300000000, "flops_per_sample_train",
        (json_int_t)(r->mode && strcmp(r->mode, "train") == 0 ? 900000000 : 0), "layers", 9,
        "device", "name", "Test CPU", "driver", "", "libraries", "", "threads",
        r->threads ? r->threads : 2, "peak_flops", "kind", r->device_kind ? r->device_kind : "cpu",
        "precisions", "fp32", "native", "bf16-mixed", "emulated", "capabilities",
        fuses ? json_pack("[s, s, s]", "fusion", "threads", "memory_stats")
              : json_pack("[s]", "memory_stats"),
        "verification", "requested", 0, "verified", "reference", "cpu_ref", "max_rel_error",
        "message", "");
    assert_non_null(run);
    if (ok)
        json_object_set_new(run, "metrics", fx_metrics(r));
    else
        json_object_set_new(run, "error", json_string("the backend cannot run this"));
    if (ok && r->profile)
        json_object_set_new(run, "profile", fx_profile(r));
    json_array_append_new(json_object_get(doc, "runs"), run);
}

/* Derives the comparisons and checks that the document is valid. */
static inline void fx_finish(json_t *doc)
{
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_add_comparisons(doc), XPB_OK);
    if (xpb_results_validate(doc, &err) != XPB_OK)
        fail_msg("fixture invalid: %s", err.msg);
}

/* The document as schema version 1: every key version 2 added removed. */
static inline void fx_to_v1(json_t *doc)
{
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_del(json_object_get(doc, "scenario"), "baseline");
    json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *run = json_array_get(runs, i), *m = json_object_get(run, "metrics");
        json_object_del(json_object_get(run, "config"), "allow_emulated");
        json_t *dev = json_object_get(run, "device");
        json_object_del(dev, "kind");
        json_object_del(dev, "precisions");
        json_object_del(dev, "capabilities");
        if (!m)
            continue;
        json_object_del(m, "interference");
        json_object_del(json_object_get(m, "loss"), "series");
        json_object_del(json_object_get(m, "memory"), "host_run_peak_bytes");
        json_t *e = json_object_get(m, "energy");
        json_object_del(e, "watts");
        json_object_del(e, "reason");
        json_object_del(json_object_get(m, "throughput"), "ci95_low");
        json_object_del(json_object_get(m, "throughput"), "ci95_high");
    }
    json_t *cmps = json_object_get(doc, "comparisons");
    for (size_t i = 0; i < json_array_size(cmps); i++) {
        json_t *c = json_array_get(cmps, i);
        json_object_del(c, "ci95_low");
        json_object_del(c, "ci95_high");
        json_object_del(c, "significant");
    }
    xpb_err err = {{0}};
    if (xpb_results_validate(doc, &err) != XPB_OK)
        fail_msg("fixture v1 invalid: %s", err.msg);
}

/* ---- the HTML page's numbers (report_html.c) ---- */

/* The value of attribute `name` in the tag starting at `tag` (up to its '>'), or NULL. */
static inline const char *fx_attr(const char *tag, const char *name, char *out, size_t size)
{
    const char *end = strchr(tag, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(tag, key);
    if (!at || at > end)
        return NULL;
    at += strlen(key);
    size_t n = (size_t)(strchr(at, '"') - at);
    snprintf(out, size, "%.*s", (int)n, at);
    return out;
}

/* The number a source names in the document ("f0:runs[3].metrics.throughput.median"). */
static inline const json_t *fx_resolve(const json_t *doc, const char *src)
{
    const char *p = strchr(src, ':') + 1;
    while (*p && doc) {
        char key[64];
        size_t len = strcspn(p, ".[");
        snprintf(key, sizeof key, "%.*s", (int)len, p);
        if (len)
            doc = json_object_get(doc, key);
        p += len;
        if (*p == '[') {
            doc = json_array_get(doc, strtoul(p + 1, NULL, 10));
            p = strchr(p, ']') + 1;
        }
        p += *p == '.';
    }
    return doc;
}

/* Checks one numeric cell `<td class="n..." ...>TEXT...`: value and source, and the text. */
static inline void fx_check_number_cell(const json_t *doc, const char *td)
{
    char v[64], scale[64], src[256], is_int[8];
    assert_non_null(fx_attr(td, "data-v", v, sizeof v));
    assert_non_null(fx_attr(td, "data-scale", scale, sizeof scale));
    double value = strtod(v, NULL), k = strtod(scale, NULL);
    if (fx_attr(td, "data-src", src, sizeof src)) {
        const json_t *j = fx_resolve(doc, src);
        if (!json_is_number(j) || json_number_value(j) != value)
            fail_msg("%s: %s in the page, %g in the file", src, v, json_number_value(j));
    } else {
        assert_non_null(fx_attr(td, "data-derived", src, sizeof src));
    }
    const char *text = strchr(td, '>') + 1;
    char want[64];
    if (fx_attr(td, "data-int", is_int, sizeof is_int))
        snprintf(want, sizeof want, "%.0f", value);
    else
        xpb_report_format_number(want, sizeof want, value * k);
    if (strncmp(text, want, strlen(want)) != 0)
        fail_msg("cell shows '%.30s', expected '%s' (value %s x %s)", text, want, v, scale);
    /* independently of the formatter: the shown number is the value to four digits */
    double shown = strtod(text, NULL), exact = value * k;
    assert_true(fabs(shown - exact) <= 5e-4 * fabs(exact) + 0.5 * (fabs(exact) >= 1000));
}

#endif
