/* Checks a parsed scenario against the plugins that loaded: every run's model exists and its
 * model parameters are declared and valid; runs on backends this machine lacks are warned
 * about (they are reported as unsupported, so one scenario serves every machine). */
#ifndef XPB_CORE_SCENARIO_CHECK_H
#define XPB_CORE_SCENARIO_CHECK_H

#include <stdio.h>

#include "loader.h"
#include "scenario.h"

/* XPB_OK, or XPB_NOT_FOUND / XPB_INVALID_ARGUMENT with "<file>:<line>: run '<id>': ..." */
xpb_status xpb_scenario_check_plugins(const xpb_scenario *s, const xpb_registry *r, xpb_err *err);

/* Prints a warning to `f` for every run whose backend is not loaded; returns their number. */
size_t xpb_scenario_warn_backends(const xpb_scenario *s, const xpb_registry *r, FILE *f);

#endif
