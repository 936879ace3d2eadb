/* Storage decisions and the plan's buffers (plan_tensor.c). */
#ifndef XPB_CUX_PLAN_TENSOR_H
#define XPB_CUX_PLAN_TENSOR_H

#include <stdint.h>

#include "plan/plan_types.h"

/* The element type and layout of every tensor (before fusion). */
xpb_status cux_decide_storage(cux_plan *plan);

/* After fusion: the 16-bit shadows of the parameters cuDNN or cuBLASLt read (mixed policies). */
xpb_status cux_decide_shadows(cux_plan *plan);

/* A new buffer of `bytes` (CUX_BUF_* `kind`, storing `tensor` or CUX_NONE, pinned for the whole
 * executable or not) appended to plan->bufs; its index in *out. XPB_OUT_OF_MEMORY with the
 * message in the plan. */
xpb_status cux_buf_new(uint32_t *out, cux_plan *plan, uint64_t bytes, int kind, uint32_t tensor,
                       int pinned);

/* True when the host may see tensor `t` (persistent, or host-written, or host-read). */
int cux_host_visible(const xpb_tensor_desc *t);

#endif
