/* Plausibility bounds on a run's numbers (see lb_store.h). The schema accepts any finite
 * number >= 0; a ranking cannot: one absurd throughput (1e300 samples/s) would top every
 * table and turn every speedup against it into 0.00x. The bounds sit far above anything a
 * machine of today or of the next decades measures on these models, so they refuse only what
 * cannot be a measurement (docs/leaderboard.md, "Bounds", gives the reasons). The numbers and
 * their paths come from core's typed view of the run (results/view_fields.h). */
#include <math.h>
#include <stdio.h>

#include "results/view_fields.h"
#include "store/lb_store.h"

struct bound {
    enum xpb_results_field field;
    double min, max; /* -INFINITY: only the maximum is checked (and stated) */
    const char *unit;
};

/* Seconds of a time to accuracy: 1e7 s, 116 days of training to one target. */
#define TTA_SECONDS 1e7
/* Joules of a time to accuracy: 1e14 J, a thousand machines of 10 kW for those 116 days. */
#define TTA_JOULES 1e14
/* Epochs: a million passes over the training data. */
#define TTA_EPOCHS 1e6
/* Runs of one time-to-accuracy result (MLPerf asks for 5 to 10). */
#define TTA_RUNS 10000

static const struct bound bounds[] = {
    /* 1e9 samples/s: a thousand times the fastest inference of these models on a whole
     * accelerator cluster */
    {XPB_RF_THROUGHPUT_MEDIAN, -INFINITY, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_MIN, -INFINITY, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_MAX, -INFINITY, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_CI95_LOW, -INFINITY, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_CI95_HIGH, -INFINITY, 1e9, "samples/s"},
    /* 1e19 FLOP/s: ten exaFLOP/s, above the largest supercomputer */
    {XPB_RF_FLOPS_PER_S, -INFINITY, 1e19, "FLOP/s"},
    /* 1e9 samples/J: a sample of the smallest model costs ~1e5 FLOP, and no device does 1e14
     * FLOP per joule */
    {XPB_RF_SAMPLES_PER_JOULE, -INFINITY, 1e9, "samples/J"},
    /* 2^24 samples per step, 65536 threads or ranks */
    {XPB_RF_BATCH, -INFINITY, 16777216, "samples"},
    {XPB_RF_THREADS, -INFINITY, 65536, "threads"},
    {XPB_RF_WORLD_SIZE, -INFINITY, 65536, "ranks"},
    /* time to accuracy: an accuracy is a fraction; times, energies and epochs are not
     * negative and stay below the bounds above */
    {XPB_RF_TTA_TARGET, 0, 1, "(accuracy)"},
    {XPB_RF_TTA_EVAL_EVERY, 0, TTA_EPOCHS, "epochs"},
    {XPB_RF_TTA_MAX_EPOCHS, 1, TTA_EPOCHS, "epochs"},
    {XPB_RF_TTA_REFERENCE_EPOCHS, 0, TTA_EPOCHS, "epochs"},
    {XPB_RF_TTA_SECONDS_MEAN, 0, TTA_SECONDS, "s"},
    {XPB_RF_TTA_SECONDS_MIN, 0, TTA_SECONDS, "s"},
    {XPB_RF_TTA_SECONDS_MAX, 0, TTA_SECONDS, "s"},
    {XPB_RF_TTA_SECONDS_STDEV, 0, TTA_SECONDS, "s"},
    {XPB_RF_TTA_SECONDS_RUNS, 0, TTA_RUNS, "runs"},
    {XPB_RF_TTA_JOULES_MEAN, 0, TTA_JOULES, "J"},
    {XPB_RF_TTA_JOULES_MIN, 0, TTA_JOULES, "J"},
    {XPB_RF_TTA_JOULES_MAX, 0, TTA_JOULES, "J"},
    {XPB_RF_TTA_JOULES_STDEV, 0, TTA_JOULES, "J"},
    {XPB_RF_TTA_JOULES_RUNS, 0, TTA_RUNS, "runs"},
};

static xpb_status refuse(size_t index, const char *path, double v, double min, double max,
                         const char *unit, xpb_err *err)
{
    if (isinf(min) && min < 0)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "runs[%zu].%s: %g %s is not plausible (the leaderboard accepts at "
                           "most %g)",
                           index, path, v, unit, max);
    return xpb_err_set(err, XPB_PARSE_ERROR,
                       "runs[%zu].%s: %g %s is not plausible (the leaderboard accepts %g to %g)",
                       index, path, v, unit, min, max);
}

/* Checks v (NAN: absent, nothing to check) against [min, max]; the path is "<prefix>[k].<key>"
 * below the run. */
static xpb_status check(size_t index, const char *prefix, size_t k, const char *key, double v,
                        double min, double max, const char *unit, xpb_err *err)
{
    if (isnan(v) || (v >= min && v <= max))
        return XPB_OK;
    char path[96];
    snprintf(path, sizeof path, "%s[%zu].%s", prefix, k, key);
    return refuse(index, path, v, min, max, unit, err);
}

/* Each run of a time-to-accuracy result and each evaluation of its curve. */
static xpb_status tta_runs(const struct xpb_results_tta *t, size_t index, xpb_err *err)
{
    xpb_status st = XPB_OK;
    for (size_t k = 0; k < t->n_runs && st == XPB_OK; k++) {
        const struct xpb_results_tta_run *r = &t->runs[k];
        const char *at = "tta.runs";
        if ((st = check(index, at, k, "seconds", r->seconds, 0, TTA_SECONDS, "s", err)) ||
            (st = check(index, at, k, "epochs", r->epochs, 0, TTA_EPOCHS, "epochs", err)) ||
            (st = check(index, at, k, "joules", r->joules, 0, TTA_JOULES, "J", err)) ||
            (st = check(index, at, k, "init_seconds", r->init_seconds, 0, TTA_SECONDS, "s", err)) ||
            (st = check(index, at, k, "data_wait_seconds", r->data_wait_seconds, 0, TTA_SECONDS,
                        "s", err)) ||
            (st =
                 check(index, at, k, "final_accuracy", r->final_accuracy, 0, 1, "(accuracy)", err)))
            break;
        char curve[48];
        snprintf(curve, sizeof curve, "tta.runs[%zu].curve", k);
        for (size_t p = 0; p < r->n_curve && st == XPB_OK; p++) {
            const struct xpb_results_tta_point *pt = &r->curve[p];
            if ((st = check(index, curve, p, "epochs", pt->epochs, 0, TTA_EPOCHS, "epochs", err)) ||
                (st = check(index, curve, p, "seconds", pt->seconds, 0, TTA_SECONDS, "s", err)))
                break;
            st = check(index, curve, p, "accuracy", pt->accuracy, 0, 1, "(accuracy)", err);
        }
    }
    return st;
}

/* A score (tta.seconds or tta.joules) that its runs contradict: more runs scored than the
 * result lists, more converged or averaged than scored, a mean outside the spread. */
static xpb_status tta_score(const struct xpb_results_tta_score *s, const char *name, size_t n_runs,
                            size_t index, xpb_err *err)
{
    if (s->runs != XPB_RESULTS_NO_INT && s->runs != (int64_t)n_runs)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "runs[%zu].tta.%s.runs: %lld runs scored, but tta.runs lists %zu", index,
                           name, (long long)s->runs, n_runs);
    if ((s->converged != XPB_RESULTS_NO_INT && s->converged > (int64_t)n_runs) ||
        (s->used != XPB_RESULTS_NO_INT && s->used > (int64_t)n_runs))
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "runs[%zu].tta.%s: %lld converged and %lld averaged of %zu runs is "
                           "not plausible",
                           index, name, (long long)s->converged, (long long)s->used, n_runs);
    double slack = 1e-9 * fmax(fabs(s->min), fabs(s->max)); /* the mean's own rounding */
    if (!isnan(s->mean) && !isnan(s->min) && !isnan(s->max) &&
        !(s->min - slack <= s->mean && s->mean <= s->max + slack))
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "runs[%zu].tta.%s.mean: %g is not plausible outside its runs' "
                           "spread %g to %g",
                           index, name, s->mean, s->min, s->max);
    return XPB_OK;
}

/* The runs that say they converged, against the score's count. */
static xpb_status tta_converged(const struct xpb_results_tta *t, size_t index, xpb_err *err)
{
    int64_t converged = 0;
    for (size_t k = 0; k < t->n_runs; k++)
        converged += t->runs[k].converged == 1;
    if (t->seconds.converged != XPB_RESULTS_NO_INT && t->seconds.converged != converged)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "runs[%zu].tta.seconds.converged: %lld, but %lld of tta.runs "
                           "converged",
                           index, (long long)t->seconds.converged, (long long)converged);
    return XPB_OK;
}

xpb_status lb_plausible(const struct xpb_results_run *run, size_t index, xpb_err *err)
{
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        double v = xpb_results_field(run, bounds[i].field);
        if (!isnan(v) && !(v >= bounds[i].min && v <= bounds[i].max))
            return refuse(index, xpb_results_field_path(bounds[i].field), v, bounds[i].min,
                          bounds[i].max, bounds[i].unit, err);
    }
    for (size_t k = 0; k < run->metrics.n_repeats; k++) {
        double v = run->metrics.repeats[k].throughput;
        if (!isnan(v) && !(v <= 1e9)) {
            char path[64];
            snprintf(path, sizeof path, "metrics.repeats[%zu].throughput", k);
            return refuse(index, path, v, -INFINITY, 1e9, "samples/s", err);
        }
    }
    if (!run->has_tta)
        return XPB_OK;
    const struct xpb_results_tta *t = &run->tta;
    xpb_status st;
    if ((st = tta_runs(t, index, err)) ||
        (st = tta_score(&t->seconds, "seconds", t->n_runs, index, err)) ||
        (st = tta_score(&t->joules, "joules", t->n_runs, index, err)))
        return st;
    return tta_converged(t, index, err);
}
