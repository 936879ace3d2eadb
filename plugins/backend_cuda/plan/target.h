/* What the planner needs to know of the device, and the precision policies it honours
 * (target.c). Plain C. */
#ifndef XPB_CUX_TARGET_H
#define XPB_CUX_TARGET_H

#include <stdint.h>

#include "plan/plan_types.h"

/* The precision policies `target` can run (XPB_PRECISION_BIT mask), and a sentence saying why
 * `precision` cannot run there (static; NULL when it can). */
uint32_t cux_target_precisions(const cux_target *target);
const char *cux_target_refusal(const cux_target *target, uint32_t precision);

#endif
