/* Fusion planning (plan_fusion.c). */
#ifndef XPB_CUX_PLAN_FUSION_H
#define XPB_CUX_PLAN_FUSION_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Which ops another op's step absorbs (plan->fuse); nothing without fusion or with keep_all. */
xpb_status cux_plan_fusion(cux_plan *plan);

#endif
