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
    int32_t ndim; /* the logical rank (1..4; 0 for an absent operand): broadcasting aligns the
                     last dims, and [d0, d1, d2] is n, c, h with w 1 */
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

/* The attributes op set 3 appended to xpb_op (program.h), as the kernels read them; zero for
 * ops of hosts that lack them. */
typedef struct cux_attrs3 {
    uint32_t transpose;    /* XPB_TRANSPOSE_A | XPB_TRANSPOSE_B */
    uint8_t perm[4];       /* PERMUTE: output dim d is input dim perm[d] */
    uint32_t causal;       /* SOFTMAX */
    uint32_t approximate;  /* GELU(_BWD): 0 erf, XPB_GELU_TANH */
    uint32_t index_flags;  /* XPB_INDEX_PADDING, XPB_INDEX_IGNORE */
    int32_t padding_idx;   /* EMBEDDING_BWD (with XPB_INDEX_PADDING) */
    int32_t ignore_index;  /* SOFTMAX_XENT(_BWD) (with XPB_INDEX_IGNORE) */
    float label_smoothing; /* SOFTMAX_XENT(_BWD) */
    float max_norm;        /* CLIP_GRAD_NORM */
} cux_attrs3;

/* Op set 3: the operands of each kernel (slots of cux_kparams.t; every operand of these kernels
 * is stored row-major, CUX_PLAIN, since plan_tensor.c keeps the tensors of op-set-3 ops so):
 *   PERMUTE       in0 x -> out0 y (a3.perm; any type, int32 copied bit for bit)
 *   BCAST_ADD/MUL in0 a, in1 b -> out0 y (numpy broadcasting by ndim)
 *   EXPAND        in0 x -> out0 y (x broadcast to y's shape)
 *   SUM_TO        in0 x -> out0 y (x summed down to y's shape)
 *   SCALE         in0 x -> out0 y = attrs.value * x
 *   GELU          in0 x -> out0 y;  GELU_BWD in0 dy, in1 x -> out0 dx (a3.approximate)
 *   EMBED         in0 indices (I32), in1 weight[V,D] -> out0 y[.., D]
 *   EMBED_BWD     in0 dy[.., D], in1 indices -> out0 dweight[V,D] (a3.index_flags, padding_idx)
 *   SOFTMAX       in0 x, in1 mask[Sq,Sk] (absent: none) -> out0 y (attrs.scale, a3.causal)
 *   SOFTMAX_BWD   in0 dy, in1 y -> out0 dx (attrs.scale)
 *   LN_FWD        in0 x, in1 gamma, in2 beta -> out0 y, out1 mean, out2 rstd (attrs.eps)
 *   LN_BWD        in0 dy, in1 x, in2 gamma, in3 mean, in4 rstd -> out0 dx, out1 dgamma,
 *                 out2 dbeta (each output may be absent)
 *   XENT/XENT_BWD as before, plus a3.ignore_index (with XPB_INDEX_IGNORE) and label_smoothing
 *   ADAMW         as ADAM (param, grad, m, v, step; shadow in EXTRA), decoupled weight decay
 *   CLIP_SUMSQ    in0 g -> out0 acc (one double): acc = (index ? acc : 0) + sum(g^2)
 *   CLIP_NORM     in0 acc -> out0 total_norm[1] = sqrt(acc)
 *   CLIP_APPLY    in0 g, in1 total_norm -> out0 g (in place), scaled as clip_grad_norm_
 *   LSTM_CELL     step t = `index`: in0 b_ih, in1 b_hh, in2 c0 (t = 0; absent: zeros) -> out0 y
 *                 (y[t]), out1 h_n, out2 c_n (t = T-1; each may be absent), out3 ws[T,B,5H]
 *                 fp32 in place (gate sums -> gates i,f,g,o and c_t), EXTRA h_t [B,H] (absent:
 *                 none); k_lstm.cu has the details
 *   LSTM_CELL_BWD step t: in0 dy, in1 dh (t = T-1: dh_n), in2 dc (t = T-1: dc_n), in3 ws, in4
 *                 c0 (t = 0) (absent: zeros) -> out0 dG[T,B,4H] (dG[t]), out1 dc of c_{t-1}
 *                 (may be in2; t = 0: dc0), out2 a tensor to zero (dw_hh when T = 1, no h0) */

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
    cux_attrs3 a3;          /* the op's op-set-3 attributes */
    int64_t index;          /* LSTM_CELL(_BWD): the time step; CLIP_SUMSQ: the gradient's place */
} cux_kparams;

/* Enqueues the kernel(s) of `kp` on `stream` and returns cudaGetLastError() of the launch. */
cudaError_t cux_launch(const cux_kparams *kp, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
