/* The interface between the host code (C) and the own CUDA kernels (k_*.cu): one parameter
 * block per kernel launch, filled at compile with device pointers and shapes, and one entry
 * point that enqueues a kernel (or the few kernels of one step) on a stream. Nothing here
 * allocates or synchronises, so a launch can be captured into a CUDA graph. */
#ifndef XPB_CUX_KERNELS_H
#define XPB_CUX_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include <xpubench/program.h> /* xpb_op_attrs */

#include "kernels/kinds.h" /* CUX_K_*, CUX_F32 ..., cux_phase_rec, CUX_STEP_* */

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor as a kernel sees it: a pointer, the storage type and layout, and the logical shape
 * as [n, c, h, w] (a 1-D tensor [d0] is [d0, 1, 1, 1], 2-D [d0, d1, 1, 1], 3-D [d0, d1, d2, 1]).
 * p is NULL for an absent operand. */
typedef struct cux_tview {
    void *p;
    int32_t type, layout;
    int64_t n, c, h, w;
} cux_tview;

/* Operand slots of cux_kparams.t: the step's views in a fixed order. */
enum {
    CUX_T_IN = 0,     /* op inputs 0..5 */
    CUX_T_OUT = 6,    /* op outputs 0..3 */
    CUX_T_BIAS = 10,  /* epilogue bias (per channel) */
    CUX_T_RESID = 11, /* epilogue residual addend */
    CUX_T_MASK = 12,  /* norm backward: the fused activation's output */
    CUX_T_EXTRA = 13, /* update: the parameter's 16-bit shadow */
    CUX_T_COUNT = 14
};

typedef struct cux_kparams {
    int32_t kernel;     /* CUX_K_* */
    int32_t op;         /* program op (for error records); -1 for bookkeeping */
    int32_t act;        /* CUX_ACT_* */
    float alpha;        /* LeakyReLU slope */
    uint32_t flags;     /* CUX_STEP_* */
    xpb_op_attrs attrs; /* the op's attributes, as the program gave them */
    cux_tview t[CUX_T_COUNT];
    void *scratch;          /* the executable's workspace (reductions' partial sums) */
    uint64_t scratch_bytes; /* its size */
    cux_phase_rec *rec;     /* the phase's record (status, loss scaler) */
    uint64_t *counters;     /* DROPOUT: its counter; PHASE_END: the phase's first counter */
    uint32_t n_counters;    /* PHASE_END: how many counters to advance */
    int32_t sm_count;       /* multiprocessors of the device (grid sizes) */
} cux_kparams;

/* Enqueues the kernel(s) of `kp` on `stream` and returns cudaGetLastError() of the launch. */
cudaError_t cux_launch(const cux_kparams *kp, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
