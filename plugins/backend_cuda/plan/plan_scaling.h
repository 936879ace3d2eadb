/* fp16 loss scaling per phase and per op (plan_scaling.c). */
#ifndef XPB_CUX_PLAN_SCALING_H
#define XPB_CUX_PLAN_SCALING_H

#include "plan/plan_types.h"

/* The dynamic loss scale's start and growth interval (clean steps before it doubles). The start
 * is 2^10, not PyTorch's 2^16: the fp16 weight gradients of convolutions (sums over N*H*W
 * products, stored in fp16 before they become the fp32 gradient) reach 1.1 in ResNet18's first
 * layer and 17 in CycleGAN's generators at step 1, so 2^16 overflows there, the step is skipped
 * and a one-step comparison finds the optimizer state at zero; 2^10 keeps them below 2^15 while
 * gradients down to 6e-8 / 2^10 stay representable (tests/test_cuda_plan.c measures the margin
 * on cpu_ref; docs/backend-cuda.md). The scale still grows by doubling after 2000 clean steps. */
#define CUX_SCALE_INITIAL 1024.0f
#define CUX_SCALE_INTERVAL 2000u

/* Under fp16-mixed: which phases scale (plan->phase_scaled, plan->scaled) and which loss
 * backward ops and updates take part (plan->op_scaled); the scaler's start and interval
 * (plan->scale_initial, scale_interval: 1 and 0 with keep_all). After validation, before
 * lowering. XPB_OUT_OF_MEMORY with the message in the plan. */
xpb_status cux_plan_scaling(cux_plan *plan);

#endif
