/* What the steps point at, and the unfused fallback of a convolution step (bind.c). */
#ifndef XPB_CUX_BIND_H
#define XPB_CUX_BIND_H

#include <stdint.h>

#include "glue/exe.h"

/* Fills every own-kernel step's parameter block (and the epilogue blocks after engines, the
 * prep steps') and binds every convolution's variant pack, to the arena and exe->workspace. */
xpb_status cux_bind_steps(xpb_executable *exe);

/* True when step `g` is a convolution whose epilogue runs inside its cuDNN plan. */
int cux_fused_conv(const xpb_executable *exe, uint32_t g);

/* Replaces fused convolution step `g`'s plan, which failed `why` ("at the warm-up: ...", "in a
 * stream capture: ..."), by the convolution alone and the epilogue kernel, logging it; grows the
 * workspace when the new plan needs more (*grew 1: every step was bound again, so graphs
 * captured before point at the old workspace). Compile only; the failure must not have lost the
 * device's context. */
xpb_status cux_unfuse(xpb_executable *exe, uint32_t g, const char *why, int *grew);

#endif
