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
#define XPB_OPSET_VERSION 2

#define XPB_MAX_DIMS 4
#define XPB_MAX_OP_INPUTS 6
#define XPB_MAX_OP_OUTPUTS 4
#define XPB_NO_TENSOR UINT32_MAX

typedef enum xpb_dtype {
    XPB_DTYPE_F32 = 1,
    XPB_DTYPE_I32 = 2,
} xpb_dtype;

/* X(name, number, summary). Inputs -> outputs; "[opt]" marks optional trailing tensors
 * (present when n_inputs / n_outputs includes them); "*" marks an input the op updates in
 * place (a PERSISTENT tensor, except ALL_REDUCE's gradient). Numbers are fixed; COPY is the
 * last op of op set 1, ALL_REDUCE (op set 2, ABI 1.2) averages a gradient over the ranks of a
 * data-parallel run (comm.h). */
#define XPB_OP_MAP(X)                                                                              \
    X(CONV2D, 1, "x, w[K,C,kh,kw], b[K] [opt] -> y")                                               \
    X(CONV2D_BWD_DATA, 2, "dy, w -> dx")                                                           \
    X(CONV2D_BWD_WEIGHTS, 3, "dy, x -> dw, db [opt]")                                              \
    X(CONV_T2D, 4, "x, w[C,K,kh,kw], b[K] [opt] -> y")                                             \
    X(CONV_T2D_BWD_DATA, 5, "dy, w -> dx")                                                         \
    X(CONV_T2D_BWD_WEIGHTS, 6, "dy, x -> dw, db [opt]")                                            \
    X(LINEAR, 7, "x[N,I], w[O,I], b[O] [opt] -> y[N,O]")                                           \
    X(LINEAR_BWD_DATA, 8, "dy, w -> dx")                                                           \
    X(LINEAR_BWD_WEIGHTS, 9, "dy, x -> dw, db [opt]")                                              \
    X(BATCHNORM_TRAIN, 10, "x, gamma, beta, running_mean*, running_var* -> y, ws_mean, ws_var")    \
    X(BATCHNORM_INFER, 11, "x, gamma, beta, running_mean, running_var -> y")                       \
    X(BATCHNORM_BWD, 12, "dy, x, gamma, ws_mean, ws_var -> dx, dgamma, dbeta")                     \
    X(INSTANCENORM, 13, "x -> y, ws_mean, ws_var")                                                 \
    X(INSTANCENORM_BWD, 14, "dy, x, ws_mean, ws_var -> dx")                                        \
    X(RELU, 15, "x -> y")                                                                          \
    X(RELU_BWD, 16, "dy, y -> dx")                                                                 \
    X(LEAKY_RELU, 17, "x -> y")                                                                    \
    X(LEAKY_RELU_BWD, 18, "dy, y -> dx")                                                           \
    X(TANH, 19, "x -> y")                                                                          \
    X(TANH_BWD, 20, "dy, y -> dx")                                                                 \
    X(MAXPOOL, 21, "x -> y, ws_index")                                                             \
    X(MAXPOOL_BWD, 22, "dy, ws_index -> dx")                                                       \
    X(AVGPOOL, 23, "x -> y")                                                                       \
    X(AVGPOOL_BWD, 24, "dy -> dx")                                                                 \
    X(GLOBAL_AVGPOOL, 25, "x[N,C,H,W] -> y[N,C,1,1]")                                              \
    X(GLOBAL_AVGPOOL_BWD, 26, "dy -> dx")                                                          \
    X(ADD, 27, "a, b -> y")                                                                        \
    X(REFLECTION_PAD, 28, "x -> y")                                                                \
    X(REFLECTION_PAD_BWD, 29, "dy -> dx")                                                          \
    X(RESHAPE, 30, "x -> y (same element count)")                                                  \
    X(SOFTMAX_XENT, 31, "logits[N,K], labels[N] i32 -> loss[1], ws_prob[N,K]")                     \
    X(SOFTMAX_XENT_BWD, 32, "ws_prob, labels -> dlogits")                                          \
    X(MSE_LOSS, 33, "x, target -> loss[1]")                                                        \
    X(MSE_LOSS_BWD, 34, "x, target -> dx")                                                         \
    X(L1_LOSS, 35, "x, target -> loss[1]")                                                         \
    X(L1_LOSS_BWD, 36, "x, target -> dx")                                                          \
    X(DROPOUT, 37, "x -> y, ws_mask")                                                              \
    X(DROPOUT_BWD, 38, "dy, ws_mask -> dx")                                                        \
    X(SGD_UPDATE, 39, "param*, grad, momentum_buf* ->")                                            \
    X(ADAM_UPDATE, 40, "param*, grad, m*, v*, step*[1] ->")                                        \
    X(FILL, 41, "-> y")                                                                            \
    X(COPY, 42, "x -> y")                                                                          \
    X(ALL_REDUCE, 43, "x* -> (x = mean of x over the ranks of the communicator)")

typedef enum xpb_op_kind {
#define XPB_OP_ENUM_(name, num, sig) XPB_OP_##name = num,
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
#define XPB_OP_ATTR_MAP(X) X(BUCKET, 17, bucket, 2)

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

/* The op set that introduced op `kind`; 0 for numbers these headers do not know. */
static inline uint32_t xpb_op_opset(uint32_t kind)
{
    if (kind >= XPB_OP_CONV2D && kind <= XPB_OP_COPY)
        return 1u;
    return kind == XPB_OP_ALL_REDUCE ? 2u : 0u;
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

/* The op's upper-case name ("CONV2D"), static; "UNKNOWN" for numbers this header lacks. */
static inline const char *xpb_op_name(uint32_t kind)
{
    switch (kind) {
#define XPB_OP_NAME_(name, num, sig)                                                               \
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
