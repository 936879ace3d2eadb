/* The reference backend's op table: the kernel of every op kind of op sets 1 and 2. What an op may
 * take (counts, dtypes, shapes, attributes) is checked before any kernel runs, at compile, by
 * the SDK's rules (xpb_program_validate, include/xpubench/shapes.h), so kernels trust every
 * shape they see. */
#include "ref.h"

ref_kernel_fn ref_kernel_for(uint32_t kind)
{
    static const ref_kernel_fn kernels[XPB_OP_KIND_END_] = {
        [XPB_OP_CONV2D] = ref_conv2d,
        [XPB_OP_CONV2D_BWD_DATA] = ref_conv2d_bwd_data,
        [XPB_OP_CONV2D_BWD_WEIGHTS] = ref_conv2d_bwd_weights,
        [XPB_OP_CONV_T2D] = ref_conv_t2d,
        [XPB_OP_CONV_T2D_BWD_DATA] = ref_conv_t2d_bwd_data,
        [XPB_OP_CONV_T2D_BWD_WEIGHTS] = ref_conv_t2d_bwd_weights,
        [XPB_OP_LINEAR] = ref_linear,
        [XPB_OP_LINEAR_BWD_DATA] = ref_linear_bwd_data,
        [XPB_OP_LINEAR_BWD_WEIGHTS] = ref_linear_bwd_weights,
        [XPB_OP_BATCHNORM_TRAIN] = ref_batchnorm_train,
        [XPB_OP_BATCHNORM_INFER] = ref_batchnorm_infer,
        [XPB_OP_BATCHNORM_BWD] = ref_batchnorm_bwd,
        [XPB_OP_INSTANCENORM] = ref_instancenorm,
        [XPB_OP_INSTANCENORM_BWD] = ref_instancenorm_bwd,
        [XPB_OP_RELU] = ref_relu,
        [XPB_OP_RELU_BWD] = ref_relu_bwd,
        [XPB_OP_LEAKY_RELU] = ref_leaky_relu,
        [XPB_OP_LEAKY_RELU_BWD] = ref_leaky_relu_bwd,
        [XPB_OP_TANH] = ref_tanh,
        [XPB_OP_TANH_BWD] = ref_tanh_bwd,
        [XPB_OP_MAXPOOL] = ref_maxpool,
        [XPB_OP_MAXPOOL_BWD] = ref_maxpool_bwd,
        [XPB_OP_AVGPOOL] = ref_avgpool,
        [XPB_OP_AVGPOOL_BWD] = ref_avgpool_bwd,
        [XPB_OP_GLOBAL_AVGPOOL] = ref_global_avgpool,
        [XPB_OP_GLOBAL_AVGPOOL_BWD] = ref_global_avgpool_bwd,
        [XPB_OP_ADD] = ref_add,
        [XPB_OP_REFLECTION_PAD] = ref_reflection_pad,
        [XPB_OP_REFLECTION_PAD_BWD] = ref_reflection_pad_bwd,
        [XPB_OP_RESHAPE] = ref_reshape,
        [XPB_OP_SOFTMAX_XENT] = ref_softmax_xent,
        [XPB_OP_SOFTMAX_XENT_BWD] = ref_softmax_xent_bwd,
        [XPB_OP_MSE_LOSS] = ref_mse_loss,
        [XPB_OP_MSE_LOSS_BWD] = ref_mse_loss_bwd,
        [XPB_OP_L1_LOSS] = ref_l1_loss,
        [XPB_OP_L1_LOSS_BWD] = ref_l1_loss_bwd,
        [XPB_OP_DROPOUT] = ref_dropout,
        [XPB_OP_DROPOUT_BWD] = ref_dropout_bwd,
        [XPB_OP_SGD_UPDATE] = ref_sgd_update,
        [XPB_OP_ADAM_UPDATE] = ref_adam_update,
        [XPB_OP_FILL] = ref_fill,
        [XPB_OP_COPY] = ref_copy,
        [XPB_OP_ALL_REDUCE] = ref_all_reduce,
    };
    return kind < XPB_OP_KIND_END_ ? kernels[kind] : NULL;
}
