/* The sizes a scenario may have: what loading (scenario.c) and sweep expansion
 * (scenario_runs.c) refuse, so that a small file cannot ask for unbounded work. */
#ifndef XPB_CORE_SCENARIO_LIMITS_H
#define XPB_CORE_SCENARIO_LIMITS_H

#define XPB_SCENARIO_MAX_BYTES (1024u * 1024u) /* larger files are refused */
#define XPB_SCENARIO_MAX_RUNS 100000u          /* larger sweeps are refused */
/* ... and so are sweeps whose expanded runs would take more memory than this (ids, names,
 * model parameters): 1 MiB of YAML could otherwise ask for gigabytes. */
#define XPB_SCENARIO_MAX_EXPANDED_BYTES (256u * 1024u * 1024u)
/* `xpubench run` starts a scenario of more runs than this only with --yes or the scenario's
 * own `max_runs` (scenario_guard.h): a range can turn one line into thousands of runs. */
#define XPB_SCENARIO_CONFIRM_RUNS 100u

#endif
