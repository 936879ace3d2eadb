/* Linear layers on cuBLASLt (matmul.c). */
#ifndef XPB_CUX_MATMUL_H
#define XPB_CUX_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "glue/exe.h"

xpb_status cux_mm_prepare(xpb_executable *exe, uint32_t g, void **tune_ws, size_t *tune_bytes);
xpb_status cux_mm_enqueue(xpb_executable *exe, cux_run_step *rs);
void cux_mm_free(cux_mm_run *m);

#endif
