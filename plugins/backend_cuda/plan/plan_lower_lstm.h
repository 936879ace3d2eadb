/* Lowering of the LSTM layer (op set 3) into cuBLASLt products and the own cell kernels
 * (plan_lower_lstm.c). */
#ifndef XPB_CUX_PLAN_LOWER_LSTM_H
#define XPB_CUX_PLAN_LOWER_LSTM_H

#include <stdint.h>

#include "plan/plan_types.h"

/* Op `i` (LSTM or LSTM_BWD) as a sequence of steps: the products as CUX_ENG_MATMUL steps
 * described by cux_mm_form, the element-wise work of every time step as one LSTM_CELL(_BWD)
 * kernel step, with the conversions their operands need. */
xpb_status cux_lower_lstm(cux_plan *plan, uint32_t i);

#endif
