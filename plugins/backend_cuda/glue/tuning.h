/* Trying and timing engine candidates at compile (tuning.c): glue/conv.c's cuDNN execution plans
 * and glue/matmul.c's cuBLASLt algorithms. */
#ifndef XPB_CUX_TUNING_H
#define XPB_CUX_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "glue/exe.h"

/* Whether compile times candidates (XPB_CUDA_NO_TUNE unset or 0). */
int cux_tuning_on(void);

/* Grows the executable's tuning scratch (exe->tune_ws, device memory the candidates run with)
 * to at least `bytes`; the old contents are not kept. Compile only. */
xpb_status cux_tune_scratch(xpb_executable *exe, size_t bytes);
/* Frees the tuning scratch (end of compile, destroy). */
void cux_tune_release(xpb_executable *exe);

/* Enqueues one run of a candidate on the backend's stream: XPB_OK, or the library's failure
 * (message in exe->err). */
typedef xpb_status (*cux_candidate_run)(xpb_executable *exe, void *ctx);

/* Tries a candidate for op `op`: one run (the trial: the call must succeed and the stream must
 * finish without an error), then, when `timed` > 0, that many runs between two events, of which
 * *seconds gets the fastest (0 when not timed). XPB_OK when it ran; XPB_UNSUPPORTED when it did
 * not (it is not chosen: the message is in exe->err), XPB_INTERNAL when the library called its
 * parameters invalid (they are ours), XPB_OUT_OF_MEMORY; XPB_DEVICE_ERROR when the failure lost
 * the device's context (a sticky error: compile must stop). The runtime's error state is clean
 * after a candidate that failed without losing the context. */
xpb_status cux_try_candidate(xpb_executable *exe, uint32_t op, cux_candidate_run run, void *ctx,
                             int timed, double *seconds);

#endif
