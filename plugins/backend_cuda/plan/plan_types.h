/* The plan's data model (see plan.h for how a program becomes a plan): what the planning passes
 * (plan_*.c) fill in and what the CUDA host code (glue/, abi/) reads. Types only, and the
 * offsets of the bookkeeping records, so that every pass includes this header and the driver
 * (plan.c) includes the passes: no pass needs the driver. Plain C, no CUDA header. */
#ifndef XPB_CUX_PLAN_TYPES_H
#define XPB_CUX_PLAN_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/backend.h> /* with plugin.h, program.h, status.h; not model.h */

#include "kernels/elem_math.h"  /* CUX_ACT_* */
#include "kernels/index_math.h" /* CUX_PLAIN, CUX_NHWC */
#include "kernels/kinds.h"      /* CUX_F32 ..., CUX_K_*, CUX_STEP_*, cux_phase_rec */

#define CUX_NONE UINT32_MAX
#define CUX_ERR_SIZE 1024
#define CUX_ALIGN 256u /* arena alignment of every buffer (cuDNN and cuBLASLt want 16) */

/* What the planner needs to know of the device. */
typedef struct cux_target {
    int cc_major, cc_minor; /* compute capability */
} cux_target;

/* The compile options, read from xpb_compile_options by the caller. */
typedef struct cux_options {
    uint32_t precision; /* xpb_precision */
    uint32_t fusion, profiling, keep_all, transfer;
    /* Data-parallel runs (ABI 1.2): the ranks ALL_REDUCE averages over (0 or 1: one process,
     * ALL_REDUCE is the identity), and whether this build can run collectives (it found NCCL's
     * header at build time; the library itself is loaded at compile, coll.h). */
    uint32_t ranks, collectives;
} cux_options;

/* A piece of the arena. */
enum {
    CUX_BUF_TENSOR = 1, /* the storage of a program tensor */
    CUX_BUF_SHADOW = 2, /* the 16-bit copy of an fp32 parameter read by cuDNN / cuBLASLt */
    CUX_BUF_TEMP = 3,   /* a converted copy or an engine's private output */
    CUX_BUF_FOLD = 4,   /* inference: a convolution's weights and bias with batch norm folded */
    CUX_BUF_STATE = 5,  /* bookkeeping: phase records (status, loss scaler), dropout counters */
};

typedef struct cux_buf {
    uint64_t bytes;
    uint32_t first, last; /* first and last step (global index) that use it; first > last: unused */
    uint8_t pinned;       /* lives as long as the executable */
    uint8_t kind;         /* CUX_BUF_* */
    uint32_t tensor;      /* the program tensor it stores (TENSOR, SHADOW), else CUX_NONE */
    uint64_t offset;      /* in the arena, set by plan_memory.c */
} cux_buf;

/* A buffer as one operand of a step sees it. */
typedef struct cux_view {
    uint32_t buf;    /* CUX_NONE: the operand is absent */
    uint32_t tensor; /* the program tensor whose value it holds, or CUX_NONE (scratch) */
    uint8_t type;    /* CUX_F32 ... */
    uint8_t layout;  /* CUX_PLAIN, CUX_NHWC */
    uint8_t ndim;
    int64_t dims[XPB_MAX_DIMS]; /* logical dims in program order (unused ones are 1) */
} cux_view;

/* Storage of one program tensor. */
typedef struct cux_store {
    uint32_t buf; /* CUX_NONE: never materialised (an intermediate fused away) */
    uint8_t type, layout;
    uint32_t shadow; /* mixed policies: buffer of the 16-bit copy (same layout), or CUX_NONE */
    uint8_t shadow_type;
    uint32_t alias; /* a RESHAPE that shares the buffer of this tensor, or CUX_NONE */
} cux_store;

/* What the fusion planner decided for one op (plan_fusion.c). */
typedef struct cux_fuse {
    uint32_t into;       /* op whose step does this op's work, or CUX_NONE */
    uint32_t act_op;     /* activation applied by this op's step, or CUX_NONE */
    uint32_t add_op;     /* residual ADD folded into this convolution's epilogue, or CUX_NONE */
    uint32_t add_other;  /* the other addend of add_op */
    uint32_t bn_op;      /* inference: BATCHNORM_INFER folded into this convolution, or CUX_NONE */
    uint32_t out_tensor; /* the tensor the fused chain finally writes */
    /* A norm's backward that also does the backward of the activation fused into its forward:
     * the ACT_BWD op it absorbs (its dy is that op's dy, masked by the activation's output). */
    uint32_t act_bwd_op;
} cux_fuse;

/* Engines. */
enum {
    CUX_ENG_CONV = 1,   /* a cuDNN operation graph: convolution (+ bias, residual, activation) */
    CUX_ENG_MATMUL = 2, /* cuBLASLt: linear layers (+ bias and ReLU epilogues) */
    CUX_ENG_KERNEL = 3, /* an own CUDA kernel (k_*.cu) */
    CUX_ENG_COLL = 4,   /* an NCCL collective: ALL_REDUCE, the mean over the ranks, in place */
};

/* cuDNN convolution modes. A transposed convolution is the adjoint of a convolution: its
 * forward is a backward-data, its backward-data a forward, its weights' gradient a
 * backward-filter with the roles of x and dy swapped (plan_lower.c). */
enum { CUX_CONV_FWD = 1, CUX_CONV_BWD_DATA = 2, CUX_CONV_BWD_FILTER = 3 };

/* A matrix product on cuBLASLt, as every CUX_ENG_MATMUL step describes it (linear layers in
 * plan_lower_engines.c, op set 3's products in plan_lower_matmul.c, the LSTM's in
 * plan_lower_lstm.c): D = op(A) op(B), or D += op(A) op(B) with
 * `accumulate`, for `batch` matrices, every operand row-major as the program stores it. A is
 * the step's in[0], B its in[1], D its out[0]; each operand's matrix i starts at element
 * off + i * stride of its view (stride 0: one matrix read by every product) and its rows are ld
 * elements apart. op(A) is [m, k] (A holds [k, m] when ta), op(B) [k, n] (B holds [n, k] when
 * tb), D [m, n]. A bias (the step's bias view, n elements) is added to every row of D. */
typedef struct cux_mm_form {
    uint8_t ta, tb;     /* A holds op(A)^T; B holds op(B)^T */
    uint8_t accumulate; /* D += op(A) op(B) (beta 1) instead of D = */
    int64_t m, n, k;
    int64_t lda, ldb, ldd;
    int64_t batch;
    int64_t stride_a, stride_b, stride_d;
    int64_t off_a, off_b, off_d;
} cux_mm_form;

#define CUX_MAX_IN XPB_MAX_OP_INPUTS
#define CUX_MAX_OUT XPB_MAX_OP_OUTPUTS

/* One unit of execution. Operands mirror the op's: in[k] is the view of op input k (or of a
 * converted copy of it), out[k] of op output k (buf CUX_NONE: not wanted); a fused chain's
 * head writes the chain's final output to out[0]. Conversions have in[0] -> out[0]. */
typedef struct cux_step {
    uint32_t op;    /* program op whose work this is; CUX_NONE for bookkeeping steps */
    uint32_t phase; /* CUX_NONE for prep steps */
    uint8_t engine; /* CUX_ENG_* */
    uint8_t kernel; /* CUX_K_* for CUX_ENG_KERNEL */
    uint8_t conv;   /* CUX_CONV_* for CUX_ENG_CONV */
    uint8_t act;    /* CUX_ACT_* applied last (fused activation), or NONE */
    float act_alpha;
    uint32_t flags; /* CUX_STEP_* */
    uint32_t n_in, n_out;
    cux_view in[CUX_MAX_IN];
    cux_view out[CUX_MAX_OUT];
    cux_view bias;       /* conv / matmul: the bias added in the epilogue (absent: none) */
    cux_view resid;      /* conv: the residual addend of the epilogue (absent: none) */
    cux_view mask;       /* norm backward with a fused activation: the activation's output y */
    cux_view extra;      /* update: the parameter's shadow to refresh; unscale: (unused) */
    uint32_t counter;    /* DROPOUT: its counter; PHASE_END: first counter of the phase */
    uint32_t n_counters; /* PHASE_END: counters the phase bumps */
    uint64_t scratch;    /* bytes of the shared workspace an own kernel needs */
    int64_t index;       /* LSTM_CELL(_BWD): the time step; CLIP_SUMSQ: the gradient's place */
    cux_mm_form mm;      /* CUX_ENG_MATMUL: the product */
} cux_step;

typedef struct cux_plan {
    const xpb_program *prog; /* borrowed */
    cux_options opt;
    cux_target target;
    uint8_t act_type;        /* storage type of activations: F32, or F16 / BF16 (mixed) */
    uint8_t layout4d;        /* layout of every 4-D tensor */
    int scaled;              /* fp16-mixed and some phase scales its loss (plan_scaling.c) */
    uint8_t *phase_scaled;   /* per phase: it scales (its PHASE_END advances the scaler) */
    uint8_t *op_scaled;      /* per op: a loss backward that multiplies by the scale, or an
                              * update whose gradient is unscaled first and that is skipped on
                              * overflow */
    float scale_initial;     /* the scale every phase record starts with (1 with keep_all) */
    uint32_t scale_interval; /* clean steps before the scale doubles (0: fixed) */
    cux_store *store;        /* per tensor */
    cux_fuse *fuse;          /* per op */
    uint32_t *op_phase;      /* per op: its phase, or CUX_NONE */
    uint32_t *n_readers;     /* per tensor: ops that read it */
    uint32_t *dropout_of;    /* per op: its dropout counter, or CUX_NONE */
    uint32_t n_counters;
    cux_buf *bufs;
    uint32_t n_bufs, cap_bufs;
    cux_step *steps; /* every phase's steps, in program order */
    uint32_t n_steps, cap_steps;
    uint32_t *phase_begin, *phase_end; /* step range of each phase */
    cux_step *prep; /* recompute folded weights after the host wrote one of their inputs */
    uint32_t n_prep, cap_prep;
    uint32_t state_buf;     /* the STATE buffer (phase records, counters) */
    uint64_t scratch_bytes; /* the largest workspace an own kernel needs */
    uint64_t arena_bytes;   /* end of the highest placed buffer */
    uint64_t peak_bytes;    /* most bytes live at one step: a lower bound of arena_bytes */
    /* Where lifetimes end (plan_memory.c): the buffers whose last use is step g are
     * end_bufs[end_first[g] .. end_first[g + 1]) (pinned buffers never end). The CPU stand-in
     * build poisons them after step g (abi/exec.c), so that a plan that lets two live buffers
     * share bytes, or reads one after its end, computes NaN. */
    uint32_t *end_first; /* n_steps + 1 entries */
    uint32_t *end_bufs;
    uint32_t n_coll;   /* ALL_REDUCE steps (0 with one rank: the identity has no step) */
    uint32_t n_groups; /* NCCL group calls among them (buckets of more than one op) */
    /* lowering state (plan_lower.c) */
    struct cux_copy *copies; /* converted copies valid in the current phase */
    uint32_t n_copies, cap_copies;
    cux_step *post; /* conversions to append after the step being lowered */
    uint32_t n_post, cap_post;
    uint32_t cur_op;
    char err[CUX_ERR_SIZE];
} cux_plan;

/* Offsets in the STATE buffer: the phase records, then one uint64 counter per dropout op. */
static inline uint64_t cux_rec_offset(uint32_t phase)
{
    return (uint64_t)phase * sizeof(cux_phase_rec);
}

static inline uint64_t cux_counter_offset(const cux_plan *plan, uint32_t counter)
{
    return (uint64_t)plan->prog->n_phases * sizeof(cux_phase_rec) +
           (uint64_t)counter * sizeof(uint64_t);
}

/* Tensor `id` / op `i` of the plan's program: owned by the program (borrowed by the plan). */
static inline const xpb_tensor_desc *cux_tensor(const cux_plan *plan, uint32_t id)
{
    return xpb_program_tensor(plan->prog, id);
}

static inline const xpb_op *cux_op(const cux_plan *plan, uint32_t i)
{
    return xpb_program_op(plan->prog, i);
}

/* The activation an activation op or its backward computes (CUX_ACT_NONE for other kinds). */
static inline int cux_act_of_kind(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_RELU:
    case XPB_OP_RELU_BWD:
        return CUX_ACT_RELU;
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_LEAKY_RELU_BWD:
        return CUX_ACT_LEAKY;
    case XPB_OP_TANH:
    case XPB_OP_TANH_BWD:
        return CUX_ACT_TANH;
    default:
        return CUX_ACT_NONE;
    }
}

static inline int cux_is_update(uint32_t kind)
{
    return kind == XPB_OP_SGD_UPDATE || kind == XPB_OP_ADAM_UPDATE || kind == XPB_OP_ADAMW_UPDATE;
}

static inline int cux_is_loss_bwd(uint32_t kind)
{
    return kind == XPB_OP_SOFTMAX_XENT_BWD || kind == XPB_OP_MSE_LOSS_BWD ||
           kind == XPB_OP_L1_LOSS_BWD;
}

#endif
