/* The deliberate faults of the stand-in build (tests/test_cuda_standin_faults.c,
 * docs/backend-cuda.md "What the stand-in proves"): broken variants of the plugin, chosen at run
 * time by the environment variable XPB_CUDA_STANDIN_FAULT, that show the stand-in and the
 * conformance suite catch each kind of mistake. Only the stand-in build (XPB_CUDA_STANDIN) has
 * the switch; in the GPU build this header is empty and every fault site compiles away.
 * In kernels/ (the lowest room) so that every room can ask. */
#ifndef XPB_CUX_FAULT_H
#define XPB_CUX_FAULT_H

#if defined(XPB_CUDA_STANDIN)
#include <stdlib.h>
#include <string.h>

/* True when the fault `name` is switched on (XPB_CUDA_STANDIN_FAULT=name). */
static inline int cux_fault(const char *name)
{
    const char *on = getenv("XPB_CUDA_STANDIN_FAULT");
    return on && strcmp(on, name) == 0;
}
#endif

#endif
