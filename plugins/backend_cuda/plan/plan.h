/* The cuda backend's plan: every decision compile makes about a program, in plain C without
 * any CUDA header, so that the test suite checks it on machines without a GPU
 * (tests/test_cuda_plan.c). The CUDA side (compile.c and friends) only turns a plan into
 * cuDNN graphs, cuBLASLt matmuls, kernel launches and CUDA graphs.
 *
 * How a program becomes a plan (cux_plan_build, in this order):
 *   1. plan_check.c    validates the program and the options against the device (precision
 *                      policies the device cannot honour are refused here);
 *   2. plan_tensor.c   decides each tensor's storage: element type (fp32, or the policy's
 *                      16-bit type for activations under a mixed policy) and layout (NHWC for
 *                      4-D tensors under tensor-core policies, canonical NCHW otherwise);
 *   3. plan_fusion.c   decides which ops another op's step absorbs;
 *   4. plan_lower.c    turns every op into steps: a cuDNN convolution graph, a cuBLASLt matmul
 *                      or an own kernel, with the views of its operands, inserting conversions
 *                      where an engine needs another type or layout than the storage, the
 *                      bookkeeping steps of each phase, and the low-precision shadows of
 *                      parameters;
 *                      ALL_REDUCE becomes one NCCL step per gradient, a bucket one NCCL group
 *                      (nothing with one rank: the mean over one rank is the identity);
 *   5. plan_memory.c   places every buffer in one arena by the steps that use it.
 * Tensors cross the host boundary in the canonical layout (fp32 or int32, NCHW); transfer.c
 * converts to and from the storage. */
#ifndef XPB_CUX_PLAN_H
#define XPB_CUX_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/backend.h> /* with plugin.h, program.h, status.h; not model.h */

#include "kernels/elem_math.h"  /* CUX_ACT_* */
#include "kernels/index_math.h" /* CUX_PLAIN, CUX_NHWC */

#define CUX_NONE UINT32_MAX
#define CUX_ERR_SIZE 1024
#define CUX_ALIGN 256u /* arena alignment of every buffer (cuDNN and cuBLASLt want 16) */

/* Element types of device storage. */
enum { CUX_F32 = 0, CUX_F16 = 1, CUX_BF16 = 2, CUX_I32 = 3 };

/* Bytes per element of a storage type. */
static inline uint32_t cux_type_size(int type)
{
    return type == CUX_F16 || type == CUX_BF16 ? 2u : 4u;
}

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

/* Own kernels (k_*.cu; cux_kernel_name for messages). */
#define CUX_KERNEL_MAP(X)                                                                          \
    X(CONVERT, "convert") /* type / layout conversion, COPY */                                     \
    X(FILL, "fill")                                                                                \
    X(ADD, "add")                                                                                  \
    X(ACT, "activation")                                                                           \
    X(ACT_BWD, "activation backward")                                                              \
    X(EPILOGUE, "bias/residual/activation epilogue")                                               \
    X(BIAS_GRAD, "bias gradient")                                                                  \
    X(BN_TRAIN, "batch norm training")                                                             \
    X(BN_INFER, "batch norm inference")                                                            \
    X(BN_BWD, "batch norm backward")                                                               \
    X(BN_FOLD, "batch norm folding")                                                               \
    X(IN_FWD, "instance norm")                                                                     \
    X(IN_BWD, "instance norm backward")                                                            \
    X(MAXPOOL, "max pooling")                                                                      \
    X(MAXPOOL_BWD, "max pooling backward")                                                         \
    X(AVGPOOL, "average pooling")                                                                  \
    X(AVGPOOL_BWD, "average pooling backward")                                                     \
    X(GAP, "global average pooling")                                                               \
    X(GAP_BWD, "global average pooling backward")                                                  \
    X(PAD, "reflection padding")                                                                   \
    X(PAD_BWD, "reflection padding backward")                                                      \
    X(XENT, "softmax cross-entropy")                                                               \
    X(XENT_BWD, "softmax cross-entropy backward")                                                  \
    X(MSE, "MSE loss")                                                                             \
    X(MSE_BWD, "MSE loss backward")                                                                \
    X(L1, "L1 loss")                                                                               \
    X(L1_BWD, "L1 loss backward")                                                                  \
    X(DROPOUT, "dropout")                                                                          \
    X(DROPOUT_BWD, "dropout backward")                                                             \
    X(SGD, "SGD update")                                                                           \
    X(ADAM, "Adam update")                                                                         \
    X(UNSCALE, "loss-scale unscale and check")                                                     \
    X(PHASE_BEGIN, "phase begin")                                                                  \
    X(PHASE_END, "phase end")

enum {
    CUX_K_NONE_ = 0,
#define CUX_K_ENUM_(name, text) CUX_K_##name,
    CUX_KERNEL_MAP(CUX_K_ENUM_)
#undef CUX_K_ENUM_
        CUX_K_COUNT_
};

/* The kernel's name for messages: static storage, "?" for numbers not in the map. */
const char *cux_kernel_name(int kernel);

/* Step flags. */
#define CUX_STEP_SCALED (1u << 0)    /* a loss backward: multiply by the loss scale (fp16) */
#define CUX_STEP_SKIPPABLE (1u << 1) /* an update: skipped when the loss scale overflowed */
/* ALL_REDUCE steps of one bucket (consecutive ops with one non-zero bucket number) are one
 * NCCL group: the first opens it (ncclGroupStart), the last closes it (ncclGroupEnd), which is
 * when NCCL launches the whole bucket. A step with neither flag is a bucket of its own. */
#define CUX_STEP_GROUP_BEGIN (1u << 2)
#define CUX_STEP_GROUP_END (1u << 3)

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
} cux_step;

/* Bookkeeping records in the STATE buffer: one per phase, then one uint64 counter per dropout
 * op. The phase record is reset by PHASE_BEGIN and copied to the host at the end of the
 * phase's graph, so that synchronize() sees data-dependent errors without another sync. */
typedef struct cux_phase_rec {
    uint32_t err_code; /* 0, or CUX_ERR_* of the first failure in the phase */
    uint32_t err_op;   /* program op that failed */
    int64_t err_a, err_b;
    float scale;          /* fp16-mixed: the dynamic loss scale */
    uint32_t good_steps;  /* clean steps since the scale last changed */
    uint32_t found_inf;   /* set by UNSCALE when a gradient is not finite */
    uint32_t overflows;   /* steps skipped because of an overflow, since compile */
    uint32_t interval;    /* growth interval of the scale (0: fixed) */
    uint32_t steps;       /* completed runs of the phase */
    uint32_t reserved[4]; /* pads the record to 64 bytes */
} cux_phase_rec;

/* Data-dependent errors (ops.md "Errors at run time"). */
enum {
    CUX_ERR_LABEL = 1,    /* err_a = sample, err_b = label (outside [0, classes)) */
    CUX_ERR_WS_INDEX = 2, /* err_a = element, err_b = index outside the input plane */
};

typedef struct cux_plan {
    const xpb_program *prog; /* borrowed */
    cux_options opt;
    cux_target target;
    uint8_t act_type;     /* storage type of activations: F32, or F16 / BF16 (mixed) */
    uint8_t layout4d;     /* layout of every 4-D tensor */
    int training;         /* the program has update ops */
    int scaled;           /* fp16-mixed with dynamic loss scaling */
    cux_store *store;     /* per tensor */
    cux_fuse *fuse;       /* per op */
    uint32_t *op_phase;   /* per op: its phase, or CUX_NONE */
    uint32_t *n_readers;  /* per tensor: ops that read it */
    uint32_t *dropout_of; /* per op: its dropout counter, or CUX_NONE */
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
    uint32_t n_coll;        /* ALL_REDUCE steps (0 with one rank: the identity has no step) */
    uint32_t n_groups;      /* NCCL group calls among them (buckets of more than one op) */
    /* lowering state (plan_lower.c) */
    struct cux_copy *copies; /* converted copies valid in the current phase */
    uint32_t n_copies, cap_copies;
    cux_step *post; /* conversions to append after the step being lowered */
    uint32_t n_post, cap_post;
    uint32_t cur_op;
    char err[CUX_ERR_SIZE];
} cux_plan;

/* Builds the plan of `prog` (borrowed: it must outlive the plan) for `opt` on `target`.
 * *out is owned by the caller (cux_plan_free). On failure *out is NULL, the status is
 * XPB_UNSUPPORTED (an op, attribute or policy the backend or device cannot do),
 * XPB_INVALID_ARGUMENT (a malformed program) or XPB_OUT_OF_MEMORY, and `err` (err_size
 * bytes) holds a message naming the op and its layer. */
xpb_status cux_plan_build(cux_plan **out, const xpb_program *prog, const cux_options *opt,
                          const cux_target *target, char *err, size_t err_size);
void cux_plan_free(cux_plan *plan);

/* The precision policies `target` can run (XPB_PRECISION_BIT mask), and a sentence saying why
 * `precision` cannot run there (static; NULL when it can). */
uint32_t cux_target_precisions(const cux_target *target);
const char *cux_target_refusal(const cux_target *target, uint32_t precision);

/* Offsets in the STATE buffer. */
static inline uint64_t cux_rec_offset(uint32_t phase)
{
    return (uint64_t)phase * sizeof(cux_phase_rec);
}
uint64_t cux_counter_offset(const cux_plan *plan, uint32_t counter);

/* "op 12 CONV2D (layer conv3)" of op `op` into buf (owned by the caller). */
void cux_op_label(const xpb_program *prog, uint32_t op, char *buf, size_t size);

/* ---- internal: shared by the plan_*.c files ---- */

xpb_status cux_fail(cux_plan *plan, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
xpb_status cux_check_program(cux_plan *plan);            /* plan_check.c */
xpb_status cux_decide_storage(cux_plan *plan);           /* plan_tensor.c */
xpb_status cux_check_all_reduce_storage(cux_plan *plan); /* plan_check.c, after storage */
xpb_status cux_plan_fusion(cux_plan *plan);              /* plan_fusion.c */
xpb_status cux_decide_shadows(cux_plan *plan);           /* plan_tensor.c, after fusion */
xpb_status cux_lower(cux_plan *plan);                    /* plan_lower.c */
xpb_status cux_place_buffers(cux_plan *plan);            /* plan_memory.c */
xpb_status cux_buf_new(uint32_t *out, cux_plan *plan, uint64_t bytes, int kind, uint32_t tensor,
                       int pinned);             /* plan_tensor.c */
int cux_host_visible(const xpb_tensor_desc *t); /* persistent or host-transferred */

#endif
