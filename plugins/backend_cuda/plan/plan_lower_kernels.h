/* Lowering of the ops that run as own kernels, and of RESHAPE (plan_lower_kernels.c). */
#ifndef XPB_CUX_PLAN_LOWER_KERNELS_H
#define XPB_CUX_PLAN_LOWER_KERNELS_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Op `i` as one own-kernel step (XPB_UNSUPPORTED, naming the op, for a kind it has none for). */
xpb_status cux_lower_kernel(cux_plan *plan, uint32_t i);
/* RESHAPE op `i`: the input's buffer shared when the bytes agree, else a conversion step. */
xpb_status cux_lower_reshape(cux_plan *plan, uint32_t i);

#endif
