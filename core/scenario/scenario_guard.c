/* The size of a scenario and the guard of big sweeps (scenario_guard.h). */
#include "scenario/scenario_guard.h"

#include <math.h>
#include <stdio.h>

#include "base/names.h"

size_t xpb_scenario_run_limit(const xpb_scenario *s)
{
    return s->max_runs ? s->max_runs : XPB_SCENARIO_CONFIRM_RUNS;
}

/* "45 s", "12 min 5 s", "3 h 20 min" into buf. */
static void duration(char *buf, size_t size, double seconds)
{
    double s = ceil(seconds);
    if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%.0f min %.0f s", floor(s / 60), fmod(s, 60));
    else
        snprintf(buf, size, "%.0f h %.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
}

char *xpb_scenario_size_text(char *buf, size_t size, const xpb_scenario *s)
{
    double seconds = 0;
    size_t tta = 0;
    for (size_t i = 0; i < s->n_runs; i++) {
        if (s->runs[i].mode == XPB_MODE_TTA)
            tta++;
        else
            seconds += s->runs[i].repeats * s->runs[i].min_time;
    }
    char time[64], more[64] = "";
    duration(time, sizeof time, seconds);
    if (tta)
        snprintf(more, sizeof more, " and %zu time-to-accuracy run%s", tta, tta == 1 ? "" : "s");
    snprintf(buf, size, "%zu run%s, at least %s of timed steps (repeats x min_time)%s", s->n_runs,
             s->n_runs == 1 ? "" : "s", time, more);
    return buf;
}

xpb_status xpb_scenario_guard(const xpb_scenario *s, int confirmed, xpb_err *err)
{
    size_t limit = xpb_scenario_run_limit(s);
    if (confirmed || s->n_runs <= limit)
        return XPB_OK;
    char size[160];
    return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                       "%s: scenario '%s' expands to %s, more than %zu%s: run it with --yes, or "
                       "set max_runs: %zu at the top of the scenario",
                       s->path, s->name, xpb_scenario_size_text(size, sizeof size, s), limit,
                       s->max_runs ? " (its max_runs)" : " (the guard of big sweeps)", s->n_runs);
}
