/* Linear layers on cuBLASLt (matmul.c). */
#ifndef XPB_CUX_MATMUL_H
#define XPB_CUX_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "glue/exe.h"

/* Describes step `g`'s matmul (with cuBLASLt's epilogue when it has one for the step) and
 * chooses its algorithm among those that run on the real operands (timed once per shape and
 * process, plan/tune_cache.h); sets rs->epilogue when an own epilogue kernel must follow. */
xpb_status cux_mm_prepare(xpb_executable *exe, uint32_t g);
xpb_status cux_mm_enqueue(xpb_executable *exe, cux_run_step *rs);
void cux_mm_free(cux_mm_run *m);

#endif
