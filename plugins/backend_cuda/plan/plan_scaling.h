/* fp16 loss scaling per phase and per op (plan_scaling.c). */
#ifndef XPB_CUX_PLAN_SCALING_H
#define XPB_CUX_PLAN_SCALING_H

#include "plan/plan_types.h"

/* The dynamic loss scale's start and growth interval (clean steps before it doubles):
 * PyTorch's GradScaler defaults. */
#define CUX_SCALE_INITIAL 65536.0f
#define CUX_SCALE_INTERVAL 2000u

/* Under fp16-mixed: which phases scale (plan->phase_scaled, plan->scaled) and which loss
 * backward ops and updates take part (plan->op_scaled); the scaler's start and interval
 * (plan->scale_initial, scale_interval: 1 and 0 with keep_all). After validation, before
 * lowering. XPB_OUT_OF_MEMORY with the message in the plan. */
xpb_status cux_plan_scaling(cux_plan *plan);

#endif
