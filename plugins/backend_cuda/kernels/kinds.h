/* What the host code and the own kernels agree on, in plain C (no CUDA header), so that the
 * planner (plan/, built on every machine) and the kernels (k_*.cu) share one definition: the
 * element types of device storage, the kernels by number (with their names for messages), the
 * flags a step passes to its kernel, and the per-phase record the kernels keep on the device
 * (status, fp16 loss scaler). */
#ifndef XPB_CUX_KINDS_H
#define XPB_CUX_KINDS_H

#include <stdint.h>

/* Element types of device storage. */
enum { CUX_F32 = 0, CUX_F16 = 1, CUX_BF16 = 2, CUX_I32 = 3 };

/* Bytes per element of a storage type. */
static inline uint32_t cux_type_size(int type)
{
    return type == CUX_F16 || type == CUX_BF16 ? 2u : 4u;
}

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
    X(PHASE_END, "phase end")                                                                      \
    /* op set 3 (k_shape.cu, k_seq.cu, k_lstm.cu; operands in kernels.h, "Op set 3") */            \
    X(PERMUTE, "permute")                                                                          \
    X(BCAST_ADD, "broadcast add")                                                                  \
    X(BCAST_MUL, "broadcast multiply")                                                             \
    X(EXPAND, "broadcast copy")                                                                    \
    X(SUM_TO, "sum to shape")                                                                      \
    X(SCALE, "scale")                                                                              \
    X(GELU, "GELU")                                                                                \
    X(GELU_BWD, "GELU backward")                                                                   \
    X(EMBED, "embedding")                                                                          \
    X(EMBED_BWD, "embedding backward")                                                             \
    X(SOFTMAX, "softmax")                                                                          \
    X(SOFTMAX_BWD, "softmax backward")                                                             \
    X(LN_FWD, "layer norm")                                                                        \
    X(LN_BWD, "layer norm backward")                                                               \
    X(ADAMW, "AdamW update")                                                                       \
    X(CLIP_SUMSQ, "gradient norm: sum of squares")                                                 \
    X(CLIP_NORM, "gradient norm")                                                                  \
    X(CLIP_APPLY, "gradient clipping")                                                             \
    X(LSTM_CELL, "LSTM cell")                                                                      \
    X(LSTM_CELL_BWD, "LSTM cell backward")

enum {
    CUX_K_NONE_ = 0,
#define CUX_K_ENUM_(name, text) CUX_K_##name,
    CUX_KERNEL_MAP(CUX_K_ENUM_)
#undef CUX_K_ENUM_
        CUX_K_COUNT_
};

/* The kernel's name for messages: static storage, "?" for numbers not in the map. */
static inline const char *cux_kernel_name(int kernel)
{
    switch (kernel) {
#define CUX_K_NAME_(name, text)                                                                    \
    case CUX_K_##name:                                                                             \
        return text;
        CUX_KERNEL_MAP(CUX_K_NAME_)
#undef CUX_K_NAME_
    }
    return "?";
}

/* Step flags. */
#define CUX_STEP_SCALED (1u << 0)    /* a loss backward: multiply by the loss scale (fp16) */
#define CUX_STEP_SKIPPABLE (1u << 1) /* an update: skipped when the loss scale overflowed */
/* ALL_REDUCE steps of one bucket (consecutive ops with one non-zero bucket number) are one
 * NCCL group: the first opens it (ncclGroupStart), the last closes it (ncclGroupEnd), which is
 * when NCCL launches the whole bucket. A step with neither flag is a bucket of its own. */
#define CUX_STEP_GROUP_BEGIN (1u << 2)
#define CUX_STEP_GROUP_END (1u << 3)

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
    CUX_ERR_INDEX = 3,    /* EMBEDDING(_BWD): err_a = position, err_b = index outside [0, V) */
};

#endif
