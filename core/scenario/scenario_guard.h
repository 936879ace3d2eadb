/* How big a scenario is, said before anything runs (docs/scenarios.md, "How many runs"): the
 * runs it expands to and the least time their timed steps take, and the guard that makes
 * `xpubench run` refuse more runs than XPB_SCENARIO_CONFIRM_RUNS (or the scenario's own
 * `max_runs`) unless told --yes, so that a range or a long list cannot start hours of work
 * by mistake. */
#ifndef XPB_CORE_SCENARIO_GUARD_H
#define XPB_CORE_SCENARIO_GUARD_H

#include <stddef.h>

#include "base/errmsg.h"
#include "scenario/scenario.h"

/* The runs of a scenario that `run` starts without --yes: its `max_runs`, else
 * XPB_SCENARIO_CONFIRM_RUNS. */
size_t xpb_scenario_run_limit(const xpb_scenario *s);

/* "24 runs, at least 2 min 24 s of timed steps" (repeats x min_time of each run; "and 2
 * time-to-accuracy runs" for those, whose length nobody knows before), into buf; returns buf. */
char *xpb_scenario_size_text(char *buf, size_t size, const xpb_scenario *s);

/* XPB_OK when s may start: no more runs than its limit, or `confirmed` (--yes). Otherwise
 * XPB_INVALID_ARGUMENT, and err says how many runs, the limit and how to allow them. */
xpb_status xpb_scenario_guard(const xpb_scenario *s, int confirmed, xpb_err *err);

#endif
