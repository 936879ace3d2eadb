/* The rules of the results schema that tie fields together (see schema_rules.h), checked after
 * the walker has checked every field's own type and range: docs/results.md, "Rules across
 * fields". */
#include "results/schema_rules.h"

#include <string.h>

/* ---- rules across fields ---- */

static const char *str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* A run over several ranks: metrics.parallel matches config.world_size (one entry per rank,
 * in rank order), a baseline throughput or the reason there is none, and an efficiency only
 * with a baseline. `ok`: the run finished (then metrics.parallel is required). Called with
 * the path at the run. */
static int check_parallel(struct xpb_schema_walk *c, const json_t *run, int ok)
{
    const json_t *config = json_object_get(run, "config");
    const json_t *par = json_object_get(json_object_get(run, "metrics"), "parallel");
    const json_t *ws = json_object_get(config, "world_size");
    json_int_t world = ws ? json_integer_value(ws) : 1;
    size_t old = xpb_schema_push_key(c, "metrics");
    xpb_schema_push_key(c, "parallel");
    if (!par && ok && world > 1)
        return xpb_schema_fail(c,
                               "required when config.world_size is above 1 and status is \"ok\"");
    if (!par) {
        xpb_schema_pop(c, old);
        return 0;
    }
    if (json_integer_value(json_object_get(par, "world_size")) != world || world < 2)
        return xpb_schema_fail(c,
                               "world_size %" JSON_INTEGER_FORMAT
                               " must equal config.world_size (%" JSON_INTEGER_FORMAT
                               ") and be at least 2",
                               json_integer_value(json_object_get(par, "world_size")), world);
    const json_t *ranks = json_object_get(par, "ranks");
    if ((json_int_t)json_array_size(ranks) != world)
        return xpb_schema_fail(
            c, "ranks has %zu entries, expected one per rank (%" JSON_INTEGER_FORMAT ")",
            json_array_size(ranks), world);
    for (size_t r = 0; r < json_array_size(ranks); r++)
        if (json_integer_value(json_object_get(json_array_get(ranks, r), "rank")) !=
            (json_int_t)r) {
            xpb_schema_push_key(c, "ranks");
            xpb_schema_push_index(c, r);
            return xpb_schema_fail(c, "rank must be %zu (entries in rank order)", r);
        }
    const json_t *b = json_object_get(par, "baseline");
    int have = json_is_number(json_object_get(b, "throughput"));
    if (have == !json_is_null(json_object_get(b, "reason")))
        return xpb_schema_fail(
            c, "baseline.reason must be null exactly when baseline.throughput is a number");
    if (!have && !json_is_null(json_object_get(par, "scaling_efficiency")))
        return xpb_schema_fail(c, "scaling_efficiency must be null without a baseline throughput");
    xpb_schema_pop(c, old);
    return 0;
}

/* A run's fields that depend on its status and mode (types are already checked). */
int xpb_schema_check_run(struct xpb_schema_walk *c, const json_t *run)
{
    const char *status = str_at(run, "status");
    int ok = strcmp(status, "ok") == 0;
    const json_t *config = json_object_get(run, "config");
    const json_t *metrics = json_object_get(run, "metrics");
    size_t old;

    if (ok && json_object_get(run, "error")) {
        old = xpb_schema_push_key(c, "error");
        return xpb_schema_fail(c, "must be absent when status is \"ok\"");
    }
    if (!ok && !json_object_get(run, "error")) {
        old = xpb_schema_push_key(c, "error");
        return xpb_schema_fail(c, "required when status is \"%s\"", status);
    }
    if (ok && !json_object_get(run, "model")) {
        old = xpb_schema_push_key(c, "model");
        return xpb_schema_fail(c, "required when status is \"ok\"");
    }
    int tta = strcmp(str_at(config, "mode"), "tta") == 0;
    if (tta && c->version < 3) {
        old = xpb_schema_push_key(c, "config");
        xpb_schema_push_key(c, "mode");
        return xpb_schema_fail(c, "\"tta\" needs schema_version 3, found %d", (int)c->version);
    }
    if (ok && !tta && !metrics) {
        old = xpb_schema_push_key(c, "metrics");
        return xpb_schema_fail(c, "required when status is \"ok\"");
    }
    if (ok && tta && !json_object_get(run, "tta")) {
        old = xpb_schema_push_key(c, "tta");
        return xpb_schema_fail(c, "required when status is \"ok\" and mode is \"tta\"");
    }
    if (json_object_get(config, "optimizer") && strcmp(str_at(config, "mode"), "train") != 0 &&
        !tta) {
        old = xpb_schema_push_key(c, "config");
        xpb_schema_push_key(c, "optimizer");
        return xpb_schema_fail(c, "only allowed when mode is \"train\"");
    }

    const json_t *verification = json_object_get(run, "verification");
    if (!json_is_true(json_object_get(verification, "requested")) &&
        !json_is_null(json_object_get(verification, "verified"))) {
        old = xpb_schema_push_key(c, "verification");
        xpb_schema_push_key(c, "verified");
        return xpb_schema_fail(c, "must be null when requested is false");
    }

    if (c->version >= 2 && check_parallel(c, run, ok) != 0)
        return -1;
    if (!metrics)
        return 0;
    old = xpb_schema_push_key(c, "metrics");

    const json_t *tp = json_object_get(metrics, "throughput");
    double lo = json_number_value(json_object_get(tp, "min"));
    double med = json_number_value(json_object_get(tp, "median"));
    double hi = json_number_value(json_object_get(tp, "max"));
    if (!(lo <= med && med <= hi)) {
        xpb_schema_push_key(c, "throughput");
        return xpb_schema_fail(c, "min <= median <= max does not hold (min %g, median %g, max %g)",
                               lo, med, hi);
    }

    const json_t *clo = json_object_get(tp, "ci95_low"), *chi = json_object_get(tp, "ci95_high");
    if (json_is_null(clo) != json_is_null(chi) ||
        (json_is_number(clo) && json_number_value(clo) > json_number_value(chi))) {
        xpb_schema_push_key(c, "throughput");
        return xpb_schema_fail(c,
                               "ci95_low and ci95_high are both null, or numbers with low <= high");
    }

    const json_t *st = json_object_get(metrics, "step_time_s");
    double p50 = json_number_value(json_object_get(st, "p50"));
    double p95 = json_number_value(json_object_get(st, "p95"));
    double p99 = json_number_value(json_object_get(st, "p99"));
    if (!(p50 <= p95 && p95 <= p99)) {
        xpb_schema_push_key(c, "step_time_s");
        return xpb_schema_fail(c, "p50 <= p95 <= p99 does not hold (p50 %g, p95 %g, p99 %g)", p50,
                               p95, p99);
    }

    size_t n_repeats = json_array_size(json_object_get(metrics, "repeats"));
    json_int_t want = json_integer_value(json_object_get(config, "repeats"));
    if ((json_int_t)n_repeats > want || (ok && (json_int_t)n_repeats != want)) {
        xpb_schema_push_key(c, "repeats");
        return xpb_schema_fail(c, "%zu entries, config.repeats is %" JSON_INTEGER_FORMAT "%s",
                               n_repeats, want,
                               ok ? " (a finished run has one entry per repeat)" : "");
    }

    const json_t *energy = json_object_get(metrics, "energy");
    int measured = json_is_true(json_object_get(energy, "measured"));
    static const char *const energy_keys[] = {"source", "joules", "samples_per_joule"};
    if (c->version >= 2 && measured == !json_is_null(json_object_get(energy, "reason"))) {
        xpb_schema_push_key(c, "energy");
        xpb_schema_push_key(c, "reason");
        return xpb_schema_fail(c, measured ? "must be null when measured is true"
                                           : "must say why when measured is false");
    }
    for (size_t i = 0; i < 3; i++) {
        const json_t *v = json_object_get(energy, energy_keys[i]);
        if (measured != !json_is_null(v)) {
            xpb_schema_push_key(c, "energy");
            xpb_schema_push_key(c, energy_keys[i]);
            return xpb_schema_fail(c, measured ? "must not be null when measured is true"
                                               : "must be null when measured is false");
        }
    }
    xpb_schema_pop(c, old);
    return 0;
}

/* A version-2 comparison's interval holds its speedup, and `significant` says whether it
 * excludes 1 (no interval: not significant). */
static int check_interval(struct xpb_schema_walk *c, const json_t *cmp, size_t k)
{
    const json_t *lo = json_object_get(cmp, "ci95_low"), *hi = json_object_get(cmp, "ci95_high");
    double speedup = json_number_value(json_object_get(cmp, "speedup"));
    int significant = json_is_true(json_object_get(cmp, "significant"));
    xpb_schema_push_key(c, "comparisons");
    xpb_schema_push_index(c, k);
    if (json_is_null(lo) != json_is_null(hi))
        return xpb_schema_fail(c, "ci95_low and ci95_high are both numbers or both null");
    if (json_is_null(lo)) {
        if (significant)
            return xpb_schema_fail(c, "significant is true without an interval");
        return 0;
    }
    double l = json_number_value(lo), h = json_number_value(hi);
    /* the relative slack covers the 17-digit round trip of the three numbers */
    if (!(l <= speedup * (1 + 1e-12) && speedup <= h * (1 + 1e-12)))
        return xpb_schema_fail(c, "ci95_low <= speedup <= ci95_high does not hold (%g, %g, %g)", l,
                               speedup, h);
    if (significant != (l > 1 || h < 1))
        return xpb_schema_fail(c, "significant is %s but the interval [%g, %g] %s 1",
                               significant ? "true" : "false", l, h,
                               significant ? "contains" : "excludes");
    return 0;
}

/* Unique run ids and comparisons that name two different existing runs. */
int xpb_schema_check_ids(struct xpb_schema_walk *c, const json_t *doc)
{
    const json_t *runs = json_object_get(doc, "runs");
    size_t n = json_array_size(runs);
    for (size_t i = 0; i < n; i++) {
        const char *id = str_at(json_array_get(runs, i), "id");
        for (size_t j = 0; j < i; j++) {
            if (strcmp(id, str_at(json_array_get(runs, j), "id")) == 0) {
                xpb_schema_push_key(c, "runs");
                xpb_schema_push_index(c, i);
                xpb_schema_push_key(c, "id");
                return xpb_schema_fail(c, "duplicate run id \"%s\" (also runs[%zu].id)", id, j);
            }
        }
    }
    const json_t *comparisons = json_object_get(doc, "comparisons");
    for (size_t k = 0; k < json_array_size(comparisons); k++) {
        const json_t *cmp = json_array_get(comparisons, k);
        static const char *const roles[] = {"baseline", "candidate"};
        for (size_t r = 0; r < 2; r++) {
            const char *id = str_at(cmp, roles[r]);
            size_t i = 0;
            while (i < n && strcmp(id, str_at(json_array_get(runs, i), "id")) != 0)
                i++;
            if (i == n) {
                xpb_schema_push_key(c, "comparisons");
                xpb_schema_push_index(c, k);
                xpb_schema_push_key(c, roles[r]);
                return xpb_schema_fail(c, "no run has id \"%s\"", id);
            }
        }
        if (strcmp(str_at(cmp, "baseline"), str_at(cmp, "candidate")) == 0) {
            xpb_schema_push_key(c, "comparisons");
            xpb_schema_push_index(c, k);
            return xpb_schema_fail(c, "baseline and candidate are the same run");
        }
        if (c->version >= 2 && check_interval(c, cmp, k) != 0)
            return -1;
    }
    return 0;
}
