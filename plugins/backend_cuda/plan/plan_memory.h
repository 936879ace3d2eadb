/* The device arena (plan_memory.c). */
#ifndef XPB_CUX_PLAN_MEMORY_H
#define XPB_CUX_PLAN_MEMORY_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Places every buffer in one arena by the steps that use it: offsets, arena and peak bytes. */
xpb_status cux_place_buffers(cux_plan *plan);

#endif
