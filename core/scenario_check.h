/* Checks a parsed scenario against the plugins that loaded: every run's model and backend
 * exist and its model parameters are declared and valid. */
#ifndef XPB_CORE_SCENARIO_CHECK_H
#define XPB_CORE_SCENARIO_CHECK_H

#include "loader.h"
#include "scenario.h"

/* XPB_OK, or XPB_NOT_FOUND / XPB_INVALID_ARGUMENT with "<file>:<line>: run '<id>': ..." */
xpb_status xpb_scenario_check_plugins(const xpb_scenario *s, const xpb_registry *r, xpb_err *err);

#endif
