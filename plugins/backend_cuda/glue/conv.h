/* Convolutions on cuDNN's graph API (conv.c). */
#ifndef XPB_CUX_CONV_H
#define XPB_CUX_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "glue/exe.h"

/* Builds step `g`'s cuDNN graph (with its epilogue when `allow_fused` and an engine runs it,
 * else the convolution alone and rs->epilogue set), chooses its execution plan among those that
 * run on the real operands (timed once per shape and process, plan/tune_cache.h) with the
 * executable's tuning scratch, and records the workspace it needs; whatever the step held
 * before is freed first. XPB_UNSUPPORTED: no engine runs it; XPB_INTERNAL: cuDNN refused our
 * descriptors; XPB_DEVICE_ERROR: a candidate lost the device's context. */
xpb_status cux_conv_prepare(xpb_executable *exe, uint32_t g, int allow_fused);
/* (Re)binds the step's variant pack to the arena and exe->workspace. */
xpb_status cux_conv_bind(xpb_executable *exe, cux_run_step *rs);
xpb_status cux_conv_enqueue(xpb_executable *exe, cux_run_step *rs);
void cux_conv_free(cux_conv_run *c);

#endif
