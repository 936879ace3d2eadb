/* The timed calls and what they report (run.c). */
#ifndef XPB_CUX_RUN_H
#define XPB_CUX_RUN_H

#include <stdint.h>

#include "glue/exe.h"

xpb_status cux_run(xpb_executable *exe, uint32_t phase);
xpb_status cux_synchronize(xpb_executable *exe);
xpb_status cux_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                            uint32_t *count);
xpb_status cux_memory_stats(xpb_executable *exe, xpb_memory_stats *out);

#endif
