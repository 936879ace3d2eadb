/* Results documents: creation, writing, loading and derived comparisons (see results.h). */
#include "results/results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/atomic_file.h"
#include "results/interval.h"
#include "base/names.h"

#ifndef XPB_VERSION
#define XPB_VERSION "0.0.0" /* the build defines it from the project version */
#endif

/* Top-level keys in the order files show them, whatever order the runner filled them in. */
static const char *const top_level_order[] = {
    "schema",   "schema_version", "tool", "created",     "interrupted",
    "scenario", "environment",    "runs", "comparisons", "extra",
};

/* Sets doc[key] to a new reference; returns -1 (and drops it) when either is missing. */
static int set_new(json_t *obj, const char *key, json_t *value)
{
    return value ? json_object_set_new(obj, key, value) : -1;
}

json_t *xpb_results_new(void)
{
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return NULL;

    json_t *doc = json_object();
    json_t *tool = json_object();
    if (!doc || !tool)
        goto free_doc;
    if (set_new(tool, "name", json_string("xpubench")) != 0 ||
        set_new(tool, "version", json_string(XPB_VERSION)) != 0)
        goto free_doc;
    if (set_new(doc, "schema", json_string(XPB_RESULTS_SCHEMA)) != 0 ||
        set_new(doc, "schema_version", json_integer(XPB_RESULTS_SCHEMA_VERSION)) != 0 ||
        json_object_set(doc, "tool", tool) != 0 ||
        set_new(doc, "created", json_string(created)) != 0 ||
        set_new(doc, "environment", json_object()) != 0 ||
        set_new(doc, "runs", json_array()) != 0 || set_new(doc, "comparisons", json_array()) != 0)
        goto free_doc;
    json_decref(tool);
    return doc;
free_doc:
    json_decref(tool);
    json_decref(doc);
    return NULL;
}

xpb_status xpb_results_write(const json_t *doc, const char *path, xpb_err *err)
{
    xpb_status st = xpb_results_validate(doc, err);
    if (st != XPB_OK) {
        xpb_err_prefix(err, "%s: not written, the document is invalid", path);
        return st;
    }

    /* A shallow copy that only orders the top-level keys (values are shared references). */
    json_t *ordered = json_object();
    if (!ordered)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
    size_t n_order = sizeof top_level_order / sizeof top_level_order[0];
    for (size_t i = 0; i < n_order; i++) {
        json_t *v = json_object_get(doc, top_level_order[i]);
        if (v && json_object_set(ordered, top_level_order[i], v) != 0) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
            goto free_ordered;
        }
    }
    char *text = json_dumps(ordered, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    if (!text) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: cannot serialise the document", path);
        goto free_ordered;
    }
    size_t len = strlen(text);
    char *with_newline = realloc(text, len + 2);
    if (!with_newline) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
        goto free_text;
    }
    text = with_newline;
    text[len] = '\n';
    text[len + 1] = '\0';
    st = xpb_atomic_write(path, text, len + 1, err);
free_text:
    free(text);
free_ordered:
    json_decref(ordered);
    return st;
}

/* Reads at most limit bytes of f into a malloc'ed buffer; *too_big when there is more. */
static xpb_status read_limited(char **out, size_t *out_len, int *too_big, FILE *f, size_t limit)
{
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap);
    *too_big = 0;
    if (!buf)
        return XPB_OUT_OF_MEMORY;
    for (;;) {
        if (len == cap) {
            if (cap > limit) {
                *too_big = 1;
                break;
            }
            size_t next = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            char *grown = realloc(buf, next);
            if (!grown) {
                free(buf);
                return XPB_OUT_OF_MEMORY;
            }
            buf = grown;
            cap = next;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        return XPB_IO_ERROR;
    }
    if (len > limit)
        *too_big = 1;
    *out = buf;
    *out_len = len;
    return XPB_OK;
}

xpb_status xpb_results_load(json_t **out, const char *path, xpb_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (unsigned long long)sb.st_size > XPB_RESULTS_MAX_BYTES) {
        fclose(f);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: %lld bytes is larger than the %u MiB a results file may have", path,
                           (long long)sb.st_size, XPB_RESULTS_MAX_BYTES >> 20);
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return xpb_err_set(err, XPB_IO_ERROR, "%s: is a directory", path);
    }
    char *buf = NULL;
    size_t len = 0;
    int too_big = 0;
    xpb_status st = read_limited(&buf, &len, &too_big, f, XPB_RESULTS_MAX_BYTES);
    int read_errno = errno;
    fclose(f);
    if (st == XPB_OUT_OF_MEMORY)
        return xpb_err_set(err, st, "%s: out of memory", path);
    if (st != XPB_OK)
        return xpb_err_set(err, st, "%s: cannot read: %s", path, strerror(read_errno));
    if (too_big) {
        free(buf);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: larger than the %u MiB a results file may have", path,
                           XPB_RESULTS_MAX_BYTES >> 20);
    }

    json_error_t jerr;
    json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    free(buf);
    if (!doc) {
        if (len == 0)
            return xpb_err_set(err, XPB_PARSE_ERROR, "%s: empty file, expected a JSON object",
                               path);
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s:%d:%d: %s", path, jerr.line, jerr.column,
                           jerr.text);
    }
    if ((st = xpb_results_validate(doc, err)) != XPB_OK) {
        xpb_err_prefix(err, "%s", path);
        json_decref(doc);
        return st;
    }
    *out = doc;
    return XPB_OK;
}

/* ---- comparisons ---- */

/* The axis a comparison varies. */
static const char *const axes[] = {"backend", "fusion", "precision"};
#define N_AXES 3

static int is_axis_or_extra(const char *key)
{
    for (size_t i = 0; i < N_AXES; i++)
        if (strcmp(key, axes[i]) == 0)
            return 1;
    return strcmp(key, "extra") == 0;
}

/* Whether every config key but the axes and "extra" is equal in a and b (absent in both is
 * equal). */
static int same_except_axes(const json_t *a, const json_t *b)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)a, key, value)
    {
        if (!is_axis_or_extra(key) && !json_equal(value, json_object_get(b, key)))
            return 0;
    }
    json_object_foreach((json_t *)b, key, value)
    {
        if (!is_axis_or_extra(key) && !json_object_get(a, key))
            return 0;
    }
    return 1;
}

/* The median throughput of a finished run with an id, or 0 when it has none. */
static double run_throughput(const json_t *run)
{
    if (!json_is_string(json_object_get(run, "id")) ||
        !json_is_string(json_object_get(run, "status")) ||
        strcmp(json_string_value(json_object_get(run, "status")), "ok") != 0)
        return 0;
    const json_t *median =
        json_object_get(json_object_get(json_object_get(run, "metrics"), "throughput"), "median");
    return json_is_number(median) ? json_number_value(median) : 0;
}

size_t xpb_results_repeat_throughputs(double *out, size_t cap, const json_t *run)
{
    const json_t *reps = json_object_get(json_object_get(run, "metrics"), "repeats");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(reps) && n < cap; i++) {
        const json_t *t = json_object_get(json_array_get(reps, i), "throughput");
        if (json_is_number(t) && json_number_value(t) > 0)
            out[n++] = json_number_value(t);
    }
    return n;
}

int xpb_results_speedup(xpb_interval *out, const json_t *baseline, const json_t *candidate)
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

static const char *config_str(const json_t *run, const char *key)
{
    return json_string_value(json_object_get(json_object_get(run, "config"), key));
}

/* The kind of device a run's backend said it drives ("cpu", "gpu" ...), or NULL. */
static const char *device_kind(const json_t *run)
{
    return json_string_value(json_object_get(json_object_get(run, "device"), "kind"));
}

/* Whether two runs differ in nothing but (possibly) their backend. */
static int same_but_backend(const json_t *a, const json_t *b)
{
    const json_t *ca = json_object_get(a, "config"), *cb = json_object_get(b, "config");
    return json_is_object(ca) && json_is_object(cb) && same_except_axes(ca, cb) &&
           json_equal(json_object_get(ca, "fusion"), json_object_get(cb, "fusion")) &&
           json_equal(json_object_get(ca, "precision"), json_object_get(cb, "precision"));
}

/* The backend every run like `run` (same config but the backend) is compared with: the
 * document's named baseline, else the fastest finished run on a CPU among them, else (a
 * document whose devices do not say their kind) the reference backend. Static or owned by
 * the document; NULL when there is none. */
static const char *baseline_backend(const json_t *doc, const json_t *run)
{
    const char *named =
        json_string_value(json_object_get(json_object_get(doc, "scenario"), "baseline"));
    if (named)
        return named;
    const json_t *runs = json_object_get(doc, "runs");
    const char *best = NULL;
    double best_tp = 0;
    int kinds_known = 0;
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *r = json_array_get(runs, i);
        if (!same_but_backend(r, run))
            continue;
        const char *kind = device_kind(r);
        kinds_known |= kind != NULL && strcmp(kind, "unknown") != 0;
        double tp = run_throughput(r);
        if (kind && strcmp(kind, "cpu") == 0 && tp > best_tp) {
            best_tp = tp;
            best = config_str(r, "backend");
        }
    }
    return best ? best : kinds_known ? NULL : XPB_REFERENCE_BACKEND;
}

/* 0 when the run's device says its backend does not fuse (device.capabilities without
 * "fusion"), 1 otherwise. */
static int backend_may_fuse(const json_t *run)
{
    const json_t *caps = json_object_get(json_object_get(run, "device"), "capabilities");
    if (!json_is_array(caps))
        return 1;
    for (size_t i = 0; i < json_array_size(caps); i++)
        if (json_is_string(json_array_get(caps, i)) &&
            strcmp(json_string_value(json_array_get(caps, i)), "fusion") == 0)
            return 1;
    return 0;
}

/* The kind of comparison with `base` as baseline and `cand` as candidate, or NULL. */
static const char *comparison_kind(const json_t *doc, const json_t *base, const json_t *cand)
{
    const json_t *bc = json_object_get(base, "config");
    const json_t *cc = json_object_get(cand, "config");
    if (!json_is_object(bc) || !json_is_object(cc) || !same_except_axes(bc, cc))
        return NULL;
    int differing = -1;
    for (int i = 0; i < N_AXES; i++) {
        if (json_equal(json_object_get(bc, axes[i]), json_object_get(cc, axes[i])))
            continue;
        if (differing >= 0)
            return NULL;
        differing = i;
    }
    if (differing < 0)
        return NULL;
    const json_t *bv = json_object_get(bc, axes[differing]);
    switch (differing) {
    case 0: {
        const char *want = baseline_backend(doc, cand);
        return want && json_is_string(bv) && strcmp(json_string_value(bv), want) == 0 ? "backend"
                                                                                      : NULL;
    }
    case 1: /* only between runs of a backend that fuses (or documents that do not say) */
        if (!backend_may_fuse(base) || !backend_may_fuse(cand))
            return NULL;
        return json_is_false(bv) && json_is_true(json_object_get(cc, "fusion")) ? "fusion" : NULL;
    default:
        return json_is_string(bv) && strcmp(json_string_value(bv), "fp32") == 0 ? "precision"
                                                                                : NULL;
    }
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* One comparison object; NULL when out of memory. */
static json_t *comparison_json(const char *kind, const json_t *base, const json_t *cand,
                               int version)
{
    xpb_interval iv;
    if (xpb_results_speedup(&iv, base, cand) != 0 || !(iv.estimate > 0))
        return json_null(); /* cannot happen for runs with a throughput; skipped */
    json_t *cmp = json_pack("{s:s, s:O, s:O, s:s, s:f}", "kind", kind, "baseline",
                            json_object_get(base, "id"), "candidate", json_object_get(cand, "id"),
                            "metric", "throughput", "speedup", iv.estimate);
    if (cmp && version >= 2) {
        json_object_set_new(cmp, "ci95_low", num_or_null(iv.low));
        json_object_set_new(cmp, "ci95_high", num_or_null(iv.high));
        json_object_set_new(cmp, "significant", json_boolean(xpb_interval_significant(&iv)));
    }
    return cmp;
}

xpb_status xpb_results_add_comparisons(json_t *doc)
{
    const json_t *runs = json_object_get(doc, "runs");
    if (!json_is_array(runs))
        return XPB_INVALID_ARGUMENT;
    json_t *list = json_array();
    if (!list)
        return XPB_OUT_OF_MEMORY;
    const json_t *ver = json_object_get(doc, "schema_version");
    int version = json_is_integer(ver) ? (int)json_integer_value(ver) : XPB_RESULTS_SCHEMA_VERSION;
    size_t n = json_array_size(runs);
    for (size_t j = 0; j < n; j++) {
        const json_t *cand = json_array_get(runs, j);
        if (run_throughput(cand) <= 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            const json_t *base = json_array_get(runs, i);
            const char *kind =
                i == j || run_throughput(base) <= 0 ? NULL : comparison_kind(doc, base, cand);
            if (!kind)
                continue;
            json_t *cmp = comparison_json(kind, base, cand, version);
            if (json_is_null(cmp))
                continue;
            if (!cmp || json_array_append_new(list, cmp) != 0) {
                json_decref(list);
                return XPB_OUT_OF_MEMORY;
            }
        }
    }
    if (json_object_set_new(doc, "comparisons", list) != 0)
        return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}
