/* Plausibility bounds on a run's numbers (see lb_store.h). The schema accepts any finite
 * number >= 0; a ranking cannot: one absurd throughput (1e300 samples/s) would top every
 * table and turn every speedup against it into 0.00x. The bounds sit far above anything a
 * machine of today or of the next decades measures on these models, so they refuse only what
 * cannot be a measurement (docs/leaderboard.md, "Bounds", gives the reasons). */
#include <stdio.h>

#include "store/lb_store.h"

struct bound {
    const char *path; /* dotted path below the run */
    double max;
    const char *unit;
};

static const struct bound bounds[] = {
    /* 1e9 samples/s: a thousand times the fastest inference of these models on a whole
     * accelerator cluster */
    {"metrics.throughput.median", 1e9, "samples/s"},
    {"metrics.throughput.min", 1e9, "samples/s"},
    {"metrics.throughput.max", 1e9, "samples/s"},
    {"metrics.throughput.ci95_low", 1e9, "samples/s"},
    {"metrics.throughput.ci95_high", 1e9, "samples/s"},
    /* 1e19 FLOP/s: ten exaFLOP/s, above the largest supercomputer */
    {"metrics.flops_per_s", 1e19, "FLOP/s"},
    /* 1e9 samples/J: a sample of the smallest model costs ~1e5 FLOP, and no device does 1e14
     * FLOP per joule */
    {"metrics.energy.samples_per_joule", 1e9, "samples/J"},
    /* 2^24 samples per step, 65536 threads or ranks */
    {"config.batch", 16777216, "samples"},
    {"config.threads", 65536, "threads"},
    {"config.world_size", 65536, "ranks"},
};

/* The value at a dotted path below obj, or NULL. */
static const json_t *at(const json_t *obj, const char *path)
{
    char key[64];
    while (obj && *path) {
        size_t n = 0;
        while (path[n] && path[n] != '.' && n + 1 < sizeof key) {
            key[n] = path[n];
            n++;
        }
        key[n] = '\0';
        obj = json_object_get(obj, key);
        path += n + (path[n] == '.');
    }
    return obj;
}

static xpb_status refuse(size_t index, const char *path, double v, double max, const char *unit,
                         xpb_err *err)
{
    return xpb_err_set(err, XPB_PARSE_ERROR,
                       "runs[%zu].%s: %g %s is not plausible (the leaderboard accepts at most "
                       "%g)",
                       index, path, v, unit, max);
}

xpb_status lb_plausible(const json_t *run, size_t index, xpb_err *err)
{
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        const json_t *v = at(run, bounds[i].path);
        if (json_is_number(v) && !(json_number_value(v) <= bounds[i].max))
            return refuse(index, bounds[i].path, json_number_value(v), bounds[i].max,
                          bounds[i].unit, err);
    }
    const json_t *repeats = at(run, "metrics.repeats");
    for (size_t k = 0; k < json_array_size(repeats); k++) {
        const json_t *v = json_object_get(json_array_get(repeats, k), "throughput");
        if (json_is_number(v) && !(json_number_value(v) <= 1e9)) {
            char path[64];
            snprintf(path, sizeof path, "metrics.repeats[%zu].throughput", k);
            return refuse(index, path, json_number_value(v), 1e9, "samples/s", err);
        }
    }
    return XPB_OK;
}
