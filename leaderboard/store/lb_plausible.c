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
    double max;
    const char *unit;
};

static const struct bound bounds[] = {
    /* 1e9 samples/s: a thousand times the fastest inference of these models on a whole
     * accelerator cluster */
    {XPB_RF_THROUGHPUT_MEDIAN, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_MIN, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_MAX, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_CI95_LOW, 1e9, "samples/s"},
    {XPB_RF_THROUGHPUT_CI95_HIGH, 1e9, "samples/s"},
    /* 1e19 FLOP/s: ten exaFLOP/s, above the largest supercomputer */
    {XPB_RF_FLOPS_PER_S, 1e19, "FLOP/s"},
    /* 1e9 samples/J: a sample of the smallest model costs ~1e5 FLOP, and no device does 1e14
     * FLOP per joule */
    {XPB_RF_SAMPLES_PER_JOULE, 1e9, "samples/J"},
    /* 2^24 samples per step, 65536 threads or ranks */
    {XPB_RF_BATCH, 16777216, "samples"},
    {XPB_RF_THREADS, 65536, "threads"},
    {XPB_RF_WORLD_SIZE, 65536, "ranks"},
};

static xpb_status refuse(size_t index, const char *path, double v, double max, const char *unit,
                         xpb_err *err)
{
    return xpb_err_set(err, XPB_PARSE_ERROR,
                       "runs[%zu].%s: %g %s is not plausible (the leaderboard accepts at most "
                       "%g)",
                       index, path, v, unit, max);
}

xpb_status lb_plausible(const struct xpb_results_run *run, size_t index, xpb_err *err)
{
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        double v = xpb_results_field(run, bounds[i].field);
        if (!isnan(v) && !(v <= bounds[i].max))
            return refuse(index, xpb_results_field_path(bounds[i].field), v, bounds[i].max,
                          bounds[i].unit, err);
    }
    for (size_t k = 0; k < run->metrics.n_repeats; k++) {
        double v = run->metrics.repeats[k].throughput;
        if (!isnan(v) && !(v <= 1e9)) {
            char path[64];
            snprintf(path, sizeof path, "metrics.repeats[%zu].throughput", k);
            return refuse(index, path, v, 1e9, "samples/s", err);
        }
    }
    return XPB_OK;
}
