/* The planner's messages (plan_error.c). */
#ifndef XPB_CUX_PLAN_ERROR_H
#define XPB_CUX_PLAN_ERROR_H

#include <stddef.h>

#include "plan/plan_types.h"

/* "<fmt...>" into plan->err; returns `st`, so that a pass ends with
 * `return cux_fail(plan, XPB_UNSUPPORTED, ...)`. */
xpb_status cux_fail(cux_plan *plan, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "op 12 CONV2D (layer conv3)" of op `op` into buf (size bytes, owned by the caller); "(no op)"
 * for an index outside the program. */
void cux_op_label(const xpb_program *prog, uint32_t op, char *buf, size_t size);

#endif
