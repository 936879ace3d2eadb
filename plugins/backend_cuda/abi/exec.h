/* Enqueueing steps and capturing phases (exec.c). */
#ifndef XPB_CUX_EXEC_H
#define XPB_CUX_EXEC_H

#include <stdint.h>

#include "glue/exe.h"

/* Enqueues step `rs` on the backend's stream. */
xpb_status cux_enqueue(xpb_executable *exe, cux_run_step *rs);
/* Enqueues plan step `g` (exe->steps[g]) and ends the lifetimes of the buffers it used last
 * (`capturing`: the stream is being captured into a graph). */
xpb_status cux_enqueue_step(xpb_executable *exe, uint32_t g, int capturing);
/* Enqueues every step of phase `phase` (and, profiling, the events around them) and the copy of
 * its record to the host; on failure *failed (may be NULL) is the step that failed, or CUX_NONE. */
xpb_status cux_enqueue_phase(xpb_executable *exe, uint32_t phase, int with_events, int capturing,
                             uint32_t *failed);
/* One CUDA graph per phase (exe->graphs, graph_exec), instantiated and uploaded; a phase whose
 * fused convolution refuses the capture is captured again unfused, a phase that still cannot be
 * captured runs eagerly (its graph_exec entry NULL, counted in exe->n_eager, logged). */
xpb_status cux_capture(xpb_executable *exe);
/* Runs the prep steps (batch-norm folding) now. */
xpb_status cux_run_prep(xpb_executable *exe);

#endif
