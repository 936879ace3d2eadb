/* Convolutions on cuDNN's graph API (conv.c). */
#ifndef XPB_CUX_CONV_H
#define XPB_CUX_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "glue/exe.h"

/* Builds step `g`'s cuDNN graph (with its epilogue when an engine fuses it), chooses its
 * execution plan (timed once per shape and process, tune_cache.h) using `tune_ws` as scratch
 * (grown as needed, owned by the caller), and records the workspace it needs. */
xpb_status cux_conv_prepare(xpb_executable *exe, uint32_t g, void **tune_ws, size_t *tune_bytes);
/* Binds the variant pack to the arena and the final workspace. */
xpb_status cux_conv_bind(xpb_executable *exe, cux_run_step *rs);
xpb_status cux_conv_enqueue(xpb_executable *exe, cux_run_step *rs);
void cux_conv_free(cux_conv_run *c);

#endif
