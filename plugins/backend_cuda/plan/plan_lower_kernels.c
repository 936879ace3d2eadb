/* Lowering of the ops that run as own kernels (plan_lower.h): every op that is neither a
 * convolution, a linear layer nor a collective becomes one CUX_ENG_KERNEL step, which reads and
 * writes any storage type and layout, so it needs no conversion; and RESHAPE, which shares its
 * input's buffer when the bytes agree and is a conversion otherwise. */
#include "plan/plan_error.h"
#include "plan/plan_lower_kernels.h"
#include "plan/plan_step.h"

#include "kernels/seq_math.h"

static int kernel_of(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_BATCHNORM_TRAIN:
        return CUX_K_BN_TRAIN;
    case XPB_OP_BATCHNORM_INFER:
        return CUX_K_BN_INFER;
    case XPB_OP_BATCHNORM_BWD:
        return CUX_K_BN_BWD;
    case XPB_OP_INSTANCENORM:
        return CUX_K_IN_FWD;
    case XPB_OP_INSTANCENORM_BWD:
        return CUX_K_IN_BWD;
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
        return CUX_K_ACT;
    case XPB_OP_RELU_BWD:
    case XPB_OP_LEAKY_RELU_BWD:
    case XPB_OP_TANH_BWD:
        return CUX_K_ACT_BWD;
    case XPB_OP_MAXPOOL:
        return CUX_K_MAXPOOL;
    case XPB_OP_MAXPOOL_BWD:
        return CUX_K_MAXPOOL_BWD;
    case XPB_OP_AVGPOOL:
        return CUX_K_AVGPOOL;
    case XPB_OP_AVGPOOL_BWD:
        return CUX_K_AVGPOOL_BWD;
    case XPB_OP_GLOBAL_AVGPOOL:
        return CUX_K_GAP;
    case XPB_OP_GLOBAL_AVGPOOL_BWD:
        return CUX_K_GAP_BWD;
    case XPB_OP_ADD:
        return CUX_K_ADD;
    case XPB_OP_REFLECTION_PAD:
        return CUX_K_PAD;
    case XPB_OP_REFLECTION_PAD_BWD:
        return CUX_K_PAD_BWD;
    case XPB_OP_SOFTMAX_XENT:
        return CUX_K_XENT;
    case XPB_OP_SOFTMAX_XENT_BWD:
        return CUX_K_XENT_BWD;
    case XPB_OP_MSE_LOSS:
        return CUX_K_MSE;
    case XPB_OP_MSE_LOSS_BWD:
        return CUX_K_MSE_BWD;
    case XPB_OP_L1_LOSS:
        return CUX_K_L1;
    case XPB_OP_L1_LOSS_BWD:
        return CUX_K_L1_BWD;
    case XPB_OP_DROPOUT:
        return CUX_K_DROPOUT;
    case XPB_OP_DROPOUT_BWD:
        return CUX_K_DROPOUT_BWD;
    case XPB_OP_SGD_UPDATE:
        return CUX_K_SGD;
    case XPB_OP_ADAM_UPDATE:
        return CUX_K_ADAM;
    case XPB_OP_FILL:
        return CUX_K_FILL;
    case XPB_OP_COPY:
        return CUX_K_CONVERT;
    case XPB_OP_PERMUTE:
        return CUX_K_PERMUTE;
    case XPB_OP_ADD_BROADCAST:
        return CUX_K_BCAST_ADD;
    case XPB_OP_MUL:
        return CUX_K_BCAST_MUL;
    case XPB_OP_SUM_TO:
        return CUX_K_SUM_TO;
    case XPB_OP_SCALE:
        return CUX_K_SCALE;
    case XPB_OP_SOFTMAX:
        return CUX_K_SOFTMAX;
    case XPB_OP_SOFTMAX_BWD:
        return CUX_K_SOFTMAX_BWD;
    case XPB_OP_LAYER_NORM:
        return CUX_K_LN_FWD;
    case XPB_OP_LAYER_NORM_BWD:
        return CUX_K_LN_BWD;
    case XPB_OP_GELU:
        return CUX_K_GELU;
    case XPB_OP_GELU_BWD:
        return CUX_K_GELU_BWD;
    case XPB_OP_EMBEDDING:
        return CUX_K_EMBED;
    case XPB_OP_EMBEDDING_BWD:
        return CUX_K_EMBED_BWD;
    case XPB_OP_ADAMW_UPDATE:
        return CUX_K_ADAMW;
    default:
        return CUX_K_NONE_;
    }
}

/* Workspace bytes an own kernel of op `op` needs (the reductions' partial sums). */
static uint64_t kernel_scratch(const cux_plan *plan, const xpb_op *op, int kernel)
{
    switch (kernel) {
    case CUX_K_BN_TRAIN:
    case CUX_K_BN_INFER:
    case CUX_K_BN_BWD:
    case CUX_K_IN_FWD:
    case CUX_K_IN_BWD: {
        const xpb_tensor_desc *x =
            cux_tensor(plan, op->inputs[kernel == CUX_K_BN_BWD || kernel == CUX_K_IN_BWD ? 1 : 0]);
        int64_t n = x->dims[0], c = x->dims[1], s = xpb_tensor_numel(x) / (n * c);
        return cux_norm_scratch(n, c, s);
    }
    case CUX_K_XENT:
        return cux_xent_scratch(cux_tensor(plan, op->inputs[0])->dims[0]);
    case CUX_K_XENT_BWD:
        return cux_xent_bwd_scratch(XPB_OP_HAS(plan->prog, index_flags) &&
                                    (op->index_flags & XPB_INDEX_IGNORE));
    case CUX_K_LN_BWD: {
        const xpb_tensor_desc *x = cux_tensor(plan, op->inputs[1]);
        int64_t d = x->dims[x->ndim - 1];
        return cux_ln_bwd_scratch(xpb_tensor_numel(x) / d, d);
    }
    case CUX_K_MSE:
    case CUX_K_L1:
        return (uint64_t)cux_sum_blocks(xpb_tensor_numel(cux_tensor(plan, op->inputs[0]))) *
               sizeof(double);
    default:
        return 0;
    }
}

xpb_status cux_lower_kernel(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    const cux_fuse *f = &plan->fuse[i];
    int kernel = kernel_of(op->kind);
    if (kernel == CUX_K_NONE_) {
        char label[256];
        cux_op_label(plan->prog, i, label, sizeof label);
        return cux_fail(plan, XPB_UNSUPPORTED, "%s: not supported by the cuda backend", label);
    }
    cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, kernel);
    s.n_in = op->n_inputs;
    s.n_out = op->n_outputs;
    xpb_status st;
    if (op->n_inputs > CUX_MAX_IN || op->n_outputs > CUX_MAX_OUT)
        return cux_fail(plan, XPB_INTERNAL, "lower_kernel: op %u has %u inputs and %u outputs", i,
                        op->n_inputs, op->n_outputs);
    for (uint32_t k = 0; k < op->n_inputs; k++) /* an absent optional operand: an absent view */
        if ((st = cux_stored_opt(plan, op->inputs[k], &s.in[k])) != XPB_OK)
            return st;
    if (f->act_bwd_op != CUX_NONE) { /* dy of the activation, masked by its output */
        const xpb_op *rb = cux_op(plan, f->act_bwd_op);
        if ((st = cux_stored(plan, rb->inputs[0], &s.in[0])) != XPB_OK ||
            (st = cux_stored(plan, rb->inputs[1], &s.mask)) != XPB_OK)
            return st;
        s.act = (uint8_t)cux_act_of_kind(rb->kind);
        s.act_alpha = rb->attrs.negative_slope;
    }
    for (uint32_t k = 0; k < op->n_outputs; k++) {
        uint32_t tid = k == 0 && f->act_op != CUX_NONE ? f->out_tensor : op->outputs[k];
        if (tid == XPB_NO_TENSOR) {
            s.out[k] = cux_no_view();
            continue;
        }
        cux_invalidate(plan, tid);
        if ((st = cux_stored(plan, tid, &s.out[k])) != XPB_OK)
            return st;
    }
    if (kernel == CUX_K_ACT || kernel == CUX_K_ACT_BWD) {
        s.act = (uint8_t)cux_act_of_kind(op->kind);
        s.act_alpha = op->attrs.negative_slope;
    } else {
        cux_fused_act(plan, i, &s);
    }
    if (kernel == CUX_K_DROPOUT)
        s.counter = plan->dropout_of[i];
    if (plan->op_scaled[i] && cux_is_loss_bwd(op->kind))
        s.flags |= CUX_STEP_SCALED;
    if (plan->op_scaled[i] && cux_is_update(op->kind))
        s.flags |= CUX_STEP_SKIPPABLE;
    if (cux_is_update(op->kind)) {
        const cux_store *ps = &plan->store[op->inputs[0]];
        if (ps->shadow != CUX_NONE)
            s.extra = cux_make_view(plan, ps->shadow, op->inputs[0], ps->shadow_type, ps->layout);
        cux_invalidate(plan, op->inputs[0]);
    }
    s.scratch = kernel_scratch(plan, op, kernel);
    return cux_commit(plan, &s);
}

/* ---- data movement ---- */

xpb_status cux_lower_reshape(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    uint32_t x = op->inputs[0], y = op->outputs[0];
    const xpb_tensor_desc *xt = cux_tensor(plan, x), *yt = cux_tensor(plan, y);
    cux_store *sx = &plan->store[x], *sy = &plan->store[y];
    cux_invalidate(plan, y);
    /* Share the bytes when both are row-major equivalent and of one type; a persistent input
     * is never shared (it changes in place). */
    if (sx->type == sy->type && sy->buf == CUX_NONE && cux_same_bytes(xt, sx->layout, CUX_PLAIN) &&
        cux_same_bytes(yt, sy->layout, CUX_PLAIN) && !(xt->flags & XPB_TENSOR_PERSISTENT)) {
        uint32_t buf;
        xpb_status st = cux_tensor_buf(plan, x, &buf);
        if (st != XPB_OK)
            return st;
        sy->buf = buf;
        sy->alias = x;
        if (cux_pinned_tensor(plan, yt))
            plan->bufs[buf].pinned = 1;
        return XPB_OK;
    }
    cux_view from, to;
    xpb_status st;
    if ((st = cux_stored(plan, x, &from)) != XPB_OK || (st = cux_stored(plan, y, &to)) != XPB_OK)
        return st;
    cux_step s = cux_convert_step(plan, i, from, to);
    return cux_commit(plan, &s);
}
