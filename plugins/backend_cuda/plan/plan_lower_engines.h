/* Lowering of convolutions and linear layers (plan_lower_engines.c). */
#ifndef XPB_CUX_PLAN_LOWER_ENGINES_H
#define XPB_CUX_PLAN_LOWER_ENGINES_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Op `i` (a convolution of any mode, transposed or not) as a cuDNN step, with its conversions,
 * folding and bias gradient. */
xpb_status cux_lower_conv(cux_plan *plan, uint32_t i);
/* Op `i` (LINEAR, LINEAR_BWD_DATA, LINEAR_BWD_WEIGHTS) as a cuBLASLt step, with its bias
 * gradient. */
xpb_status cux_lower_linear(cux_plan *plan, uint32_t i);

/* db = the sum of dy over every dimension but 1 (a convolution's or a linear layer's bias
 * gradient; a rank-3 dy [B, S, F] is taken as the matrix [B*S, F]), one own-kernel step of
 * op `i`. */
xpb_status cux_lower_bias_grad(cux_plan *plan, uint32_t i, uint32_t dy, uint32_t db);
/* The same over a view `dy` (a scratch of the op's own steps, e.g. the LSTM's gate gradients). */
xpb_status cux_lower_bias_grad_of(cux_plan *plan, uint32_t i, cux_view dy, uint32_t db);

#endif
