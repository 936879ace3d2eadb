/* Validation of a program and the compile options (plan_check.c). */
#ifndef XPB_CUX_PLAN_CHECK_H
#define XPB_CUX_PLAN_CHECK_H

#include "plan/plan_types.h"

/* The options against the device, the program's structure, and every op: the first problem in
 * plan->err (XPB_UNSUPPORTED, XPB_INVALID_ARGUMENT). */
xpb_status cux_check_program(cux_plan *plan);

/* After storage is decided: ALL_REDUCE only of tensors stored in fp32. */
xpb_status cux_check_all_reduce_storage(cux_plan *plan);

#endif
