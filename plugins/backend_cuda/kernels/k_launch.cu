// cux_launch (kernels.h): the one entry point of the host code into the own kernels, which
// hands a parameter block to the file that implements its kernel.
#include "kernels/k_common.cuh"

static_assert(CUX_CHUNK == CUX_THREADS, "k_partials_nchw reduces one chunk per block");
static_assert(sizeof(cux_phase_rec) == 64, "the phase record is 64 bytes (plan.h)");

extern "C" cudaError_t cux_launch(const cux_kparams *kp, cudaStream_t stream)
{
    switch (kp->kernel) {
    case CUX_K_CONVERT:
    case CUX_K_FILL:
    case CUX_K_ADD:
    case CUX_K_ACT:
    case CUX_K_ACT_BWD:
    case CUX_K_EPILOGUE:
    case CUX_K_DROPOUT:
    case CUX_K_DROPOUT_BWD:
        return cux_launch_elem(*kp, stream);
    case CUX_K_BIAS_GRAD:
    case CUX_K_BN_TRAIN:
    case CUX_K_BN_INFER:
    case CUX_K_BN_BWD:
    case CUX_K_BN_FOLD:
    case CUX_K_IN_FWD:
    case CUX_K_IN_BWD:
        return cux_launch_norm(*kp, stream);
    case CUX_K_MAXPOOL:
    case CUX_K_MAXPOOL_BWD:
    case CUX_K_AVGPOOL:
    case CUX_K_AVGPOOL_BWD:
    case CUX_K_GAP:
    case CUX_K_GAP_BWD:
    case CUX_K_PAD:
    case CUX_K_PAD_BWD:
        return cux_launch_pool(*kp, stream);
    case CUX_K_XENT:
    case CUX_K_XENT_BWD:
    case CUX_K_MSE:
    case CUX_K_MSE_BWD:
    case CUX_K_L1:
    case CUX_K_L1_BWD:
        return cux_launch_loss(*kp, stream);
    case CUX_K_PERMUTE:
    case CUX_K_BCAST_ADD:
    case CUX_K_BCAST_MUL:
    case CUX_K_EXPAND:
    case CUX_K_SUM_TO:
    case CUX_K_SCALE:
    case CUX_K_GELU:
    case CUX_K_GELU_BWD:
    case CUX_K_EMBED:
    case CUX_K_EMBED_BWD:
        return cux_launch_shape(*kp, stream);
    case CUX_K_SOFTMAX:
    case CUX_K_SOFTMAX_BWD:
    case CUX_K_LN_FWD:
    case CUX_K_LN_BWD:
    case CUX_K_CLIP_SUMSQ:
    case CUX_K_CLIP_NORM:
    case CUX_K_CLIP_APPLY:
        return cux_launch_seq(*kp, stream);
    case CUX_K_LSTM_CELL:
    case CUX_K_LSTM_CELL_BWD:
        return cux_launch_lstm(*kp, stream);
    case CUX_K_SGD:
    case CUX_K_ADAM:
    case CUX_K_ADAMW:
    case CUX_K_UNSCALE:
    case CUX_K_PHASE_BEGIN:
    case CUX_K_PHASE_END:
        return cux_launch_optim(*kp, stream);
    default:
        return cudaErrorInvalidValue;
    }
}
