/* xpubench public SDK: programs, the unit of work a backend compiles and runs.
 *
 * The host derives a program from a model's forward graph (forward ops, the backward ops of
 * automatic differentiation, gradient accumulation, optimizer updates) and hands it to a
 * backend. A program is written once in fp32 semantics; the precision policy is a compile
 * option. docs/ops.md gives the exact maths of every op in PyTorch's terms; the reference
 * backend (plugins/backend_cpu_ref) implements exactly that.
 *
 * Tensors cross the boundary only through the backend's write/read calls, in the canonical
 * host layout: dense, row-major, NCHW for 4-D tensors, fp32 or int32. Inside, the backend is
 * free (layouts, fusion, memory reuse). */
#ifndef XPUBENCH_PROGRAM_H
#define XPUBENCH_PROGRAM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the op set below. Ops and attributes are only appended, each new one with the op
 * set that introduced it (xpb_op_opset, xpb_attr_opset). A program records the lowest op set its
 * ops and attributes need (xpb_program.opset), not the host's: an old backend still runs a
 * program that uses nothing new. A backend that meets an op or attribute it does not know
 * returns XPB_UNSUPPORTED naming the op (xpb_op_kind_name) and its layer. */
#define XPB_OPSET_VERSION 3

/* Array lengths frozen at ABI 1.0 (plugin.h's growth table). A tensor has at most XPB_MAX_DIMS
 * dims: a backend refuses a tensor whose ndim is larger (a later minor would append the
 * extra dims, never widen the array). xpb_op.inputs / outputs hold an op's first
 * XPB_MAX_OP_INPUTS / XPB_MAX_OP_OUTPUTS operands; since ABI 1.3 inputs_all / outputs_all hold
 * them all (read operands with xpb_op_input() and xpb_op_output()). */
#define XPB_MAX_DIMS 4
#define XPB_MAX_OP_INPUTS 6
#define XPB_MAX_OP_OUTPUTS 4
#define XPB_NO_TENSOR UINT32_MAX

typedef enum xpb_dtype {
    XPB_DTYPE_F32 = 1,
    XPB_DTYPE_I32 = 2,
} xpb_dtype;

/* X(name, number, op set, summary): every op with the op set that introduced it. Inputs ->
 * outputs; "[opt]" marks optional trailing tensors (present when n_inputs / n_outputs includes
 * them); "*" marks an input the op updates in place (a PERSISTENT tensor, except ALL_REDUCE's
 * gradient). Numbers are fixed. ALL_REDUCE (op set 2, ABI 1.2) averages a gradient over the
 * ranks of a data-parallel run (comm.h). (ABI 1.3 added the op-set column; X took three
 * arguments before.) */
#define XPB_OP_MAP(X)                                                                              \
    X(CONV2D, 1, 1, "x, w[K,C,kh,kw], b[K] [opt] -> y")                                            \
    X(CONV2D_BWD_DATA, 2, 1, "dy, w -> dx")                                                        \
    X(CONV2D_BWD_WEIGHTS, 3, 1, "dy, x -> dw, db [opt]")                                           \
    X(CONV_T2D, 4, 1, "x, w[C,K,kh,kw], b[K] [opt] -> y")                                          \
    X(CONV_T2D_BWD_DATA, 5, 1, "dy, w -> dx")                                                      \
    X(CONV_T2D_BWD_WEIGHTS, 6, 1, "dy, x -> dw, db [opt]")                                         \
    X(LINEAR, 7, 1, "x[N,I], w[O,I], b[O] [opt] -> y[N,O]")                                        \
    X(LINEAR_BWD_DATA, 8, 1, "dy, w -> dx")                                                        \
    X(LINEAR_BWD_WEIGHTS, 9, 1, "dy, x -> dw, db [opt]")                                           \
    X(BATCHNORM_TRAIN, 10, 1, "x, gamma, beta, running_mean*, running_var* -> y, ws_mean, ws_var") \
    X(BATCHNORM_INFER, 11, 1, "x, gamma, beta, running_mean, running_var -> y")                    \
    X(BATCHNORM_BWD, 12, 1, "dy, x, gamma, ws_mean, ws_var -> dx, dgamma, dbeta")                  \
    X(INSTANCENORM, 13, 1, "x -> y, ws_mean, ws_var")                                              \
    X(INSTANCENORM_BWD, 14, 1, "dy, x, ws_mean, ws_var -> dx")                                     \
    X(RELU, 15, 1, "x -> y")                                                                       \
    X(RELU_BWD, 16, 1, "dy, y -> dx")                                                              \
    X(LEAKY_RELU, 17, 1, "x -> y")                                                                 \
    X(LEAKY_RELU_BWD, 18, 1, "dy, y -> dx")                                                        \
    X(TANH, 19, 1, "x -> y")                                                                       \
    X(TANH_BWD, 20, 1, "dy, y -> dx")                                                              \
    X(MAXPOOL, 21, 1, "x -> y, ws_index")                                                          \
    X(MAXPOOL_BWD, 22, 1, "dy, ws_index -> dx")                                                    \
    X(AVGPOOL, 23, 1, "x -> y")                                                                    \
    X(AVGPOOL_BWD, 24, 1, "dy -> dx")                                                              \
    X(GLOBAL_AVGPOOL, 25, 1, "x[N,C,H,W] -> y[N,C,1,1]")                                           \
    X(GLOBAL_AVGPOOL_BWD, 26, 1, "dy -> dx")                                                       \
    X(ADD, 27, 1, "a, b -> y")                                                                     \
    X(REFLECTION_PAD, 28, 1, "x -> y")                                                             \
    X(REFLECTION_PAD_BWD, 29, 1, "dy -> dx")                                                       \
    X(RESHAPE, 30, 1, "x -> y (same element count)")                                               \
    X(SOFTMAX_XENT, 31, 1, "logits[N,K], labels[N] i32 -> loss[1], ws_prob[N,K]")                  \
    X(SOFTMAX_XENT_BWD, 32, 1, "ws_prob, labels -> dlogits")                                       \
    X(MSE_LOSS, 33, 1, "x, target -> loss[1]")                                                     \
    X(MSE_LOSS_BWD, 34, 1, "x, target -> dx")                                                      \
    X(L1_LOSS, 35, 1, "x, target -> loss[1]")                                                      \
    X(L1_LOSS_BWD, 36, 1, "x, target -> dx")                                                       \
    X(DROPOUT, 37, 1, "x -> y, ws_mask")                                                           \
    X(DROPOUT_BWD, 38, 1, "dy, ws_mask -> dx")                                                     \
    X(SGD_UPDATE, 39, 1, "param*, grad, momentum_buf* ->")                                         \
    X(ADAM_UPDATE, 40, 1, "param*, grad, m*, v*, step*[1] ->")                                     \
    X(FILL, 41, 1, "-> y")                                                                         \
    X(COPY, 42, 1, "x -> y")                                                                       \
    X(ALL_REDUCE, 43, 2, "x* -> (x = mean of x over the ranks of the communicator)")               \
    X(MATMUL, 44, 3, "a[M,K], b[K,N], bias[N] [opt] -> y[M,N] (transpose: a[K,M], b[N,K])")        \
    X(MATMUL_BWD, 45, 3, "dy, a, b -> da [opt], db [opt], dbias [opt]")                            \
    X(BATCHED_MATMUL, 46, 3, "a[..,M,K], b[..,K,N] -> y[..,M,N] (batch dims broadcast)")           \
    X(BATCHED_MATMUL_BWD, 47, 3, "dy, a, b -> da [opt], db [opt]")                                 \
    X(PERMUTE, 48, 3, "x -> y (y dim d = x dim perm[d])")                                          \
    X(ADD_BROADCAST, 49, 3, "a, b -> y (numpy broadcasting)")                                      \
    X(MUL, 50, 3, "a, b -> y (numpy broadcasting)")                                                \
    X(SUM_TO, 51, 3, "x -> y (x summed down to y's shape, y broadcasts to x)")                     \
    X(SCALE, 52, 3, "x -> y (y = value * x)")                                                      \
    X(SOFTMAX, 53, 3, "x, mask[Sq,Sk] [opt] -> y (last axis, of scale * x + mask, causal)")        \
    X(SOFTMAX_BWD, 54, 3, "dy, y -> dx")                                                           \
    X(LAYER_NORM, 55, 3, "x, gamma[D], beta[D] -> y, ws_mean, ws_rstd (last axis)")                \
    X(LAYER_NORM_BWD, 56, 3, "dy, x, gamma, ws_mean, ws_rstd -> dx, dgamma, dbeta")                \
    X(GELU, 57, 3, "x -> y")                                                                       \
    X(GELU_BWD, 58, 3, "dy, x -> dx")                                                              \
    X(EMBEDDING, 59, 3, "indices i32, weight[V,D] -> y[.., D]")                                    \
    X(EMBEDDING_BWD, 60, 3, "dy, indices -> dweight[V,D]")                                         \
    X(LSTM, 61, 3, "x[T,B,I], w_ih, w_hh, b_ih, b_hh, h0 [opt], c0 [opt] -> y, h_n, c_n, ws")      \
    X(LSTM_BWD, 62, 3,                                                                             \
      "dy, dh_n [opt], dc_n [opt], x, w_ih, w_hh, y, ws, h0 [opt], c0 [opt] -> dx [opt], dw_ih, "  \
      "dw_hh, db_ih, db_hh, dh0 [opt], dc0 [opt]")                                                 \
    X(ADAMW_UPDATE, 63, 3, "param*, grad, m*, v*, step*[1] ->")                                    \
    X(CLIP_GRAD_NORM, 64, 3, "g1*, ..., gN* -> total_norm[1]")

typedef enum xpb_op_kind {
#define XPB_OP_ENUM_(name, num, opset, sig) XPB_OP_##name = num,
    XPB_OP_MAP(XPB_OP_ENUM_)
#undef XPB_OP_ENUM_
        XPB_OP_KIND_END_ /* one past the last number; not an op */
} xpb_op_kind;

/* Attributes of an op. One flat struct for every op; each op reads only the members
 * docs/ops.md lists for it, the rest are zero. Pairs are (height, width).
 * Frozen at its ABI 1.0 layout (it sits inside xpb_op before `layer`): attributes added by a
 * later op set are appended to xpb_op itself, each with an XPB_ATTR() bit. */
typedef struct xpb_op_attrs {
    int32_t kernel[2];         /* pooling window */
    int32_t stride[2];         /* convolution and pooling stride */
    int32_t pad[2];            /* symmetric zero padding (conv, pool) or reflection padding */
    int32_t dilation[2];       /* convolution dilation (1 = none) */
    int32_t output_padding[2]; /* transposed convolution: extra rows/cols on one side */
    int32_t count_include_pad; /* average pooling: divide by the full window (PyTorch default 1) */
    float negative_slope;      /* LEAKY_RELU(_BWD) */
    float eps;                 /* norms: variance epsilon; ADAM_UPDATE: denominator epsilon */
    float momentum;            /* BATCHNORM_TRAIN: running-stat momentum; SGD_UPDATE: momentum */
    float scale;               /* loss backward ops: d(total)/d(loss), i.e. the loss weight */
    float value;               /* FILL: the value */
    float lr;                  /* SGD_UPDATE, ADAM_UPDATE */
    float beta1, beta2;        /* ADAM_UPDATE */
    float weight_decay; /* SGD_UPDATE, ADAM_UPDATE (L2 added to the gradient, PyTorch style) */
    float dropout_p;    /* DROPOUT(_BWD): probability of zeroing */
    uint64_t seed;      /* DROPOUT: mask stream seed (see docs/ops.md) */
} xpb_op_attrs;

/* One bit per attribute, for xpb_op.attrs_set (ABI 1.1): the host sets the bit of every
 * attribute whose value is not all-zero bytes. An attribute added after op set 1 is defined so
 * that zero keeps the op's earlier meaning; a backend that finds a bit it does not know
 * (xpb_op_unknown_attrs) must refuse the op, because that attribute changes what it computes.
 * Numbers are fixed. */
#define XPB_ATTR_MAP(X)                                                                            \
    X(KERNEL, 0, kernel)                                                                           \
    X(STRIDE, 1, stride)                                                                           \
    X(PAD, 2, pad)                                                                                 \
    X(DILATION, 3, dilation)                                                                       \
    X(OUTPUT_PADDING, 4, output_padding)                                                           \
    X(COUNT_INCLUDE_PAD, 5, count_include_pad)                                                     \
    X(NEGATIVE_SLOPE, 6, negative_slope)                                                           \
    X(EPS, 7, eps)                                                                                 \
    X(MOMENTUM, 8, momentum)                                                                       \
    X(SCALE, 9, scale)                                                                             \
    X(VALUE, 10, value)                                                                            \
    X(LR, 11, lr)                                                                                  \
    X(BETA1, 12, beta1)                                                                            \
    X(BETA2, 13, beta2)                                                                            \
    X(WEIGHT_DECAY, 14, weight_decay)                                                              \
    X(DROPOUT_P, 15, dropout_p)                                                                    \
    X(SEED, 16, seed)

/* Attributes added after op set 1 live in xpb_op itself, after kind_name:
 * X(name, bit, member of xpb_op, op set that introduced it). */
#define XPB_OP_ATTR_MAP(X)                                                                         \
    X(BUCKET, 17, bucket, 2)                                                                       \
    X(TRANSPOSE, 18, transpose, 3)                                                                 \
    X(PERM, 19, perm, 3)                                                                           \
    X(CAUSAL, 20, causal, 3)                                                                       \
    X(APPROXIMATE, 21, approximate, 3)                                                             \
    X(INDEX_FLAGS, 22, index_flags, 3)                                                             \
    X(PADDING_IDX, 23, padding_idx, 3)                                                             \
    X(IGNORE_INDEX, 24, ignore_index, 3)                                                           \
    X(LABEL_SMOOTHING, 25, label_smoothing, 3)                                                     \
    X(MAX_NORM, 26, max_norm, 3)

/* Values of the op-set-3 attributes. */
#define XPB_TRANSPOSE_A 1u   /* MATMUL(_BWD), BATCHED_MATMUL(_BWD): a holds op(a)^T */
#define XPB_TRANSPOSE_B 2u   /* ... b holds op(b)^T */
#define XPB_GELU_TANH 1u     /* GELU(_BWD) approximate: PyTorch's approximate='tanh' */
#define XPB_INDEX_PADDING 1u /* index_flags: padding_idx is set (EMBEDDING(_BWD)) */
#define XPB_INDEX_IGNORE 2u  /* index_flags: ignore_index is set (SOFTMAX_XENT(_BWD)) */

/* XPB_ATTR_BIT_KERNEL = 0 ...: bit numbers; XPB_ATTR(KERNEL) is the mask. */
#define XPB_ATTR_BIT_(name, bit, member) XPB_ATTR_BIT_##name = bit,
#define XPB_OP_ATTR_BIT_(name, bit, member, opset) XPB_ATTR_BIT_##name = bit,
enum xpb_attr_bit { XPB_ATTR_MAP(XPB_ATTR_BIT_) XPB_OP_ATTR_MAP(XPB_OP_ATTR_BIT_) };
#undef XPB_ATTR_BIT_
#undef XPB_OP_ATTR_BIT_
#define XPB_ATTR(name) (1ull << XPB_ATTR_BIT_##name)
/* Every attribute bit these headers know. */
#define XPB_ATTR_BIT_OR_(name, bit, member) | XPB_ATTR(name)
#define XPB_OP_ATTR_BIT_OR_(name, bit, member, opset) | XPB_ATTR(name)
#define XPB_ATTRS_KNOWN (0ull XPB_ATTR_MAP(XPB_ATTR_BIT_OR_) XPB_OP_ATTR_MAP(XPB_OP_ATTR_BIT_OR_))

/* What a tensor is for. Decides who may read or write it and how long it lives. */
typedef enum xpb_tensor_role {
    XPB_ROLE_INPUT = 1,      /* batch data (images, labels): written by the host before a run */
    XPB_ROLE_PARAM = 2,      /* trainable weight: persistent, written at init, readable */
    XPB_ROLE_STATE = 3,      /* persistent non-trainable state: running stats, optimizer state */
    XPB_ROLE_ACTIVATION = 4, /* intermediate value of one run */
    XPB_ROLE_GRAD = 5,       /* gradient of a PARAM (grad_of names it) */
    XPB_ROLE_ACTIVATION_GRAD = 6, /* gradient of an activation or input */
    XPB_ROLE_LOSS = 7,            /* scalar loss [1]: readable after the run of its phase */
    XPB_ROLE_OUTPUT = 8,          /* model output (logits, images): readable after the run */
    XPB_ROLE_WORKSPACE = 9,       /* contents defined by the backend: produced by a forward op and
                                     consumed only by its backward op; never read by the host */
} xpb_tensor_role;

/* Tensor flags. */
#define XPB_TENSOR_PERSISTENT (1u << 0) /* keeps its value across runs (PARAM, STATE) */
#define XPB_TENSOR_HOST_WRITE (1u << 1) /* the host may write it between runs */
#define XPB_TENSOR_HOST_READ (1u << 2)  /* the host may read it between runs */

typedef struct xpb_tensor_desc {
    const char *name;  /* unique in the program, e.g. "conv1.weight", "conv1.weight.grad" */
    const char *layer; /* layer that produced it, for messages and profiles ("" for inputs) */
    uint32_t dtype;    /* xpb_dtype */
    uint32_t role;     /* xpb_tensor_role */
    uint32_t flags;    /* XPB_TENSOR_* */
    uint32_t ndim;     /* 1..XPB_MAX_DIMS */
    int64_t dims[XPB_MAX_DIMS]; /* logical shape; unused dims are 1 */
    uint32_t grad_of;           /* for GRAD / ACTIVATION_GRAD: the tensor it is the gradient of */
    /* Lifetime, as indices into program.ops (ops of all phases in execution order):
     * first_op writes it first, last_op reads it last. For PERSISTENT and host-written
     * tensors the lifetime is the whole program (0 .. n_ops-1). */
    uint32_t first_op;
    uint32_t last_op;
} xpb_tensor_desc;

typedef struct xpb_op {
    uint32_t kind; /* xpb_op_kind */
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t inputs[XPB_MAX_OP_INPUTS]; /* tensor ids; unused slots are XPB_NO_TENSOR */
    uint32_t outputs[XPB_MAX_OP_OUTPUTS];
    xpb_op_attrs attrs;
    const char *layer; /* the model layer this op belongs to, e.g. "conv3" */

    /* ---- ABI 1.1 (present when the program's op_stride covers them: XPB_OP_HAS) ---- */
    uint32_t opset;        /* the op set that defines this op with the attributes it sets */
    uint32_t reserved_;    /* zero */
    uint64_t attrs_set;    /* XPB_ATTR() bits of the attributes whose value is not zero */
    const char *kind_name; /* the op's name as the host knows it, so that a backend older than
                              the op can still name it; owned by the program */

    /* ---- ABI 1.2: attributes of op set 2 (XPB_OP_ATTR_MAP) ---- */
    /* ALL_REDUCE: ops with the same non-zero bucket are consecutive and may be reduced as one
     * collective once the bucket's last op is reached; 0: a bucket of its own. */
    uint32_t bucket;
    uint32_t reserved2_; /* zero */

    /* ---- ABI 1.3 ---- */
    /* Every operand, when there are more than the inline arrays hold: n_inputs input and
     * n_outputs output tensor ids (the first ones also in inputs[] / outputs[]), owned by the
     * program; NULL when they all fit inline. Read operands with xpb_op_input() /
     * xpb_op_output(), which handle both. */
    const uint32_t *inputs_all;
    const uint32_t *outputs_all;

    /* ---- ABI 1.3: attributes of op set 3 (XPB_OP_ATTR_MAP; docs/ops.md) ---- */
    uint32_t transpose;    /* XPB_TRANSPOSE_A | XPB_TRANSPOSE_B */
    uint8_t perm[4];       /* PERMUTE: output dim d is input dim perm[d] (first ndim used) */
    uint32_t causal;       /* SOFTMAX: 1 masks key j > query i (the last two dims) */
    uint32_t approximate;  /* GELU(_BWD): 0 exact erf, XPB_GELU_TANH */
    uint32_t index_flags;  /* XPB_INDEX_PADDING, XPB_INDEX_IGNORE */
    int32_t padding_idx;   /* EMBEDDING(_BWD): this row gets no gradient (with the flag) */
    int32_t ignore_index;  /* SOFTMAX_XENT(_BWD): rows with this label count for nothing */
    float label_smoothing; /* SOFTMAX_XENT(_BWD): in [0, 1] */
    float max_norm;        /* CLIP_GRAD_NORM: > 0 */
    uint32_t reserved3_;   /* zero */
    /* Attributes of later op sets are appended here. */
} xpb_op;

/* A phase is a contiguous run of ops executed by one run() call. A classifier's training
 * program has one phase; CycleGAN's has two (generators, then discriminators). Walk phases
 * with xpb_program_phase(): since ABI 1.1 they have a stride and may grow at the end. */
typedef struct xpb_phase {
    const char *name;
    uint32_t first_op;
    uint32_t n_ops;
} xpb_phase;

typedef struct xpb_program {
    size_t struct_size;
    /* The lowest op-set version that defines every op and attribute of the program (the host
     * computes it from the ops; it is 1 for any program of op-set-1 ops, whatever the host's
     * own version). Before ABI 1.1 hosts wrote their own XPB_OPSET_VERSION here. */
    uint32_t opset;
    uint32_t training; /* 1 for a training program, 0 for inference */
    uint32_t n_tensors;
    uint32_t n_ops;
    uint32_t n_phases;
    /* Element strides of the arrays below (sizeof as the host compiled them), so that a later
     * minor version may append members to xpb_tensor_desc and xpb_op. Index with
     * xpb_program_tensor() and xpb_program_op(). */
    size_t tensor_stride;
    size_t op_stride;
    const xpb_tensor_desc *tensors;
    const xpb_op *ops;
    const xpb_phase *phases;

    /* ---- ABI 1.1 ---- */
    size_t phase_stride; /* element stride of `phases`; use xpb_program_phase() */
} xpb_program;

/* True when the program's ops carry `member` of xpb_op (the host's op_stride covers it). */
#define XPB_OP_HAS(prog, member)                                                                   \
    ((prog)->op_stride >= offsetof(xpb_op, member) + sizeof(((xpb_op *)0)->member))

/* The i-th tensor / op of a program (no bounds check; i < n_tensors / n_ops). The pointer is
 * owned by the program and valid as long as it is. */
static inline const xpb_tensor_desc *xpb_program_tensor(const xpb_program *p, uint32_t i)
{
    return (const xpb_tensor_desc *)((const char *)p->tensors + (size_t)i * p->tensor_stride);
}

static inline const xpb_op *xpb_program_op(const xpb_program *p, uint32_t i)
{
    return (const xpb_op *)((const char *)p->ops + (size_t)i * p->op_stride);
}

/* Input / output operand i of op `op` of program `p` (i < n_inputs / n_outputs): from
 * inputs_all / outputs_all when the host wrote them (ABI 1.3), else from the inline arrays;
 * XPB_NO_TENSOR when i is beyond what either holds. */
static inline uint32_t xpb_op_input(const xpb_program *p, const xpb_op *op, uint32_t i)
{
    if (i >= op->n_inputs)
        return XPB_NO_TENSOR;
    if (XPB_OP_HAS(p, inputs_all) && op->inputs_all)
        return op->inputs_all[i];
    return i < XPB_MAX_OP_INPUTS ? op->inputs[i] : XPB_NO_TENSOR;
}

static inline uint32_t xpb_op_output(const xpb_program *p, const xpb_op *op, uint32_t i)
{
    if (i >= op->n_outputs)
        return XPB_NO_TENSOR;
    if (XPB_OP_HAS(p, outputs_all) && op->outputs_all)
        return op->outputs_all[i];
    return i < XPB_MAX_OP_OUTPUTS ? op->outputs[i] : XPB_NO_TENSOR;
}

/* The i-th phase (i < n_phases), owned by the program. A host older than ABI 1.1 wrote no
 * phase_stride: its phases are ABI 1.0's xpb_phase. */
static inline const xpb_phase *xpb_program_phase(const xpb_program *p, uint32_t i)
{
    size_t stride = sizeof(xpb_phase);
    if (p->struct_size >= offsetof(xpb_program, phase_stride) + sizeof p->phase_stride &&
        p->phase_stride >= sizeof(xpb_phase))
        stride = p->phase_stride;
    return (const xpb_phase *)((const char *)p->phases + (size_t)i * stride);
}

/* The op set that introduced op `kind` (XPB_OP_MAP's column); 0 for numbers these headers do
 * not know. */
static inline uint32_t xpb_op_opset(uint32_t kind)
{
    switch (kind) {
#define XPB_OP_OPSET_(name, num, opset, sig)                                                       \
    case XPB_OP_##name:                                                                            \
        return opset;
        XPB_OP_MAP(XPB_OP_OPSET_)
#undef XPB_OP_OPSET_
    }
    return 0u;
}

/* The op set that introduced attribute mask `attr` (one XPB_ATTR() bit); 0 when unknown. */
static inline uint32_t xpb_attr_opset(uint64_t attr)
{
#define XPB_OP_ATTR_OPSET_(name, bit, member, opset)                                               \
    if (attr == XPB_ATTR(name))                                                                    \
        return opset;
    XPB_OP_ATTR_MAP(XPB_OP_ATTR_OPSET_)
#undef XPB_OP_ATTR_OPSET_
    return (attr & XPB_ATTRS_KNOWN) == attr && attr ? 1u : 0u;
}

/* The XPB_ATTR() bits that op `op` of program `p` sets and that these headers do not know
 * (0 when none, or when the host wrote no attrs_set: a host of ABI 1.0 knew only op set 1). A
 * backend refuses an op with unknown bits: those attributes change what the op computes. */
static inline uint64_t xpb_op_unknown_attrs(const xpb_program *p, const xpb_op *op)
{
    return XPB_OP_HAS(p, attrs_set) ? op->attrs_set & ~(uint64_t)XPB_ATTRS_KNOWN : 0;
}

/* Element count and byte size of a tensor in the canonical host layout. */
static inline int64_t xpb_tensor_numel(const xpb_tensor_desc *t)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < t->ndim; d++)
        n *= t->dims[d];
    return n;
}

static inline size_t xpb_tensor_bytes(const xpb_tensor_desc *t)
{
    return (size_t)xpb_tensor_numel(t) * 4u; /* f32 and i32 are both 4 bytes */
}

/* Functions of this header that device code may call as well (a CUDA backend's kernels). */
#ifdef __CUDACC__
#define XPB_HOST_DEVICE __host__ __device__
#else
#define XPB_HOST_DEVICE
#endif

/* DROPOUT's mask stream (docs/ops.md), here so that every backend draws the same mask bit for
 * bit, on the host or in device code: xpb_dropout_stream once per execution of the op
 * (call_index = earlier executions of it in this executable), then xpb_dropout_factor per
 * row-major element index i: the factor y[i] = x[i] * factor, 0 or 1 / (1 - p). */
static inline XPB_HOST_DEVICE uint64_t xpb_splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline XPB_HOST_DEVICE uint64_t xpb_dropout_stream(uint64_t seed, uint64_t call_index)
{
    return xpb_splitmix64(seed + 0x9E3779B97F4A7C15ull * (call_index + 1));
}

static inline XPB_HOST_DEVICE float xpb_dropout_factor(uint64_t stream, int64_t i, float p)
{
    float u = (float)(xpb_splitmix64(stream + (uint64_t)i) >> 40) * 0x1p-24f; /* exact in fp32 */
    return u >= p ? 1.0f / (1.0f - p) : 0.0f; /* u < 1, so p >= 1 drops everything, never 1/0 */
}

/* One row of SOFTMAX_XENT (docs/ops.md) over logits z[0..k): the row's loss
 * logsumexp(z) - z[label], computed in double as log sum exp(z - m) - (z[label] - m) with
 * m = max z, so that huge logits neither overflow nor lose the answer; softmax(z) into prob
 * when prob is not NULL. Here so that every backend computes the loss the same way: cpu_ref calls
 * it; the backends that parallelise a row follow the same steps in their own code (cuda one
 * warp per row, in double; cpu_onednn vectorised, with an fp32 exp), within the op's tolerance. */
static inline XPB_HOST_DEVICE double xpb_softmax_xent_row(const float *z, int64_t k, int32_t label,
                                                          float *prob)
{
    double m = z[0];
    for (int64_t j = 1; j < k; j++)
        if (z[j] > m)
            m = z[j];
    double sum = 0.0;
    for (int64_t j = 0; j < k; j++)
        sum += exp(z[j] - m);
    double log_sum = log(sum);
    if (prob)
        for (int64_t j = 0; j < k; j++)
            prob[j] = (float)exp(z[j] - m - log_sum);
    return log_sum - (z[label] - m);
}

/* The op's upper-case name ("CONV2D"), static; "UNKNOWN" for numbers this header lacks. */
static inline const char *xpb_op_name(uint32_t kind)
{
    switch (kind) {
#define XPB_OP_NAME_(name, num, opset, sig)                                                        \
    case XPB_OP_##name:                                                                            \
        return #name;
        XPB_OP_MAP(XPB_OP_NAME_)
#undef XPB_OP_NAME_
    }
    return "UNKNOWN";
}

/* The name of op `op` of program `p` for messages: this header's name when it knows the kind,
 * else the name the host wrote into the op (ABI 1.1), else "UNKNOWN". Static or owned by the
 * program. Use it when refusing an op, so that a user reads "ALL_REDUCE", not a number. */
static inline const char *xpb_op_kind_name(const xpb_program *p, const xpb_op *op)
{
    if (xpb_op_opset(op->kind) != 0)
        return xpb_op_name(op->kind);
    if (XPB_OP_HAS(p, kind_name) && op->kind_name && op->kind_name[0])
        return op->kind_name;
    return "UNKNOWN";
}

#ifdef __cplusplus
}
#endif
#endif
