/* Checks a parsed scenario against the plugins that loaded: every run's model exists and its
 * model parameters are declared and valid (errors). Runs on backends this machine lacks, and
 * runs that ask a backend for something it does not do, are warned about: they are reported
 * as unsupported or measure the same as another run, so one scenario serves every machine. */
#ifndef XPB_CORE_SCENARIO_CHECK_H
#define XPB_CORE_SCENARIO_CHECK_H

#include <stdio.h>

#include "plugin/loader.h"
#include "scenario/scenario.h"

/* XPB_OK, or XPB_NOT_FOUND / XPB_INVALID_ARGUMENT with "<file>:<line>: run '<id>': ..." */
xpb_status xpb_scenario_check_plugins(const xpb_scenario *s, const xpb_registry *r, xpb_err *err);

/* Prints "xpubench: warning: <file>:<line>: run '<id>': ..." lines to `f`:
 *   - for every run whose backend is not loaded (it will be reported as unsupported);
 *   - for a run with `fusion: false` (alone or in a sweep) on a backend without
 *     XPB_CAP_FUSION: fused and unfused runs measure the same thing;
 *   - for a run with `threads` other than 0 on a backend without XPB_CAP_THREADS.
 * The last two are printed once per scenario run (file and line) and backend, naming the
 * first run concerned. Returns the number of lines printed. */
size_t xpb_scenario_warn_backends(const xpb_scenario *s, const xpb_registry *r, FILE *f);

#endif
