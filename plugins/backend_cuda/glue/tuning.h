/* The timing of engine candidates at compile (tuning.c). */
#ifndef XPB_CUX_TUNING_H
#define XPB_CUX_TUNING_H

#include <stddef.h>

#include "glue/exe.h"

/* Grows the tuning scratch to at least `bytes` (compile only). */
xpb_status cux_tune_scratch(xpb_executable *exe, void **ws, size_t *have, size_t bytes);
/* Whether compile times candidates (XPB_CUDA_NO_TUNE unset). */
int cux_tuning_on(void);

#endif
