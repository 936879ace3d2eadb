/* Lowering of the matrix products of op set 3 and of gradient clipping (plan_lower_matmul.c). */
#ifndef XPB_CUX_PLAN_LOWER_MATMUL_H
#define XPB_CUX_PLAN_LOWER_MATMUL_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Op `i` (MATMUL, MATMUL_BWD, BATCHED_MATMUL, BATCHED_MATMUL_BWD) as cuBLASLt steps described by
 * cux_mm_form, with the broadcast copies, batch sums and bias gradient it needs. */
xpb_status cux_lower_matmul(cux_plan *plan, uint32_t i);

/* CLIP_GRAD_NORM op `i`: the sum of squares of every gradient, the norm, then each gradient
 * scaled in place. */
xpb_status cux_lower_clip(cux_plan *plan, uint32_t i);

#endif
