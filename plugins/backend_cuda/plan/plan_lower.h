/* Lowering (plan_lower.c and the plan_lower_*.c it dispatches to). */
#ifndef XPB_CUX_PLAN_LOWER_H
#define XPB_CUX_PLAN_LOWER_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Every op of every phase into steps, the bookkeeping steps of each phase, and the state
 * buffer; the largest workspace an own kernel needs in plan->scratch_bytes. */
xpb_status cux_lower(cux_plan *plan);

#endif
