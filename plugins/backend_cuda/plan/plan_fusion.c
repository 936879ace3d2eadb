/* Fusion planning (compile option fusion = 1, keep_all off). Chains are matched in program
 * order:
 *
 *   CONV2D -> BATCHNORM_INFER    inference: the norm is folded into the convolution's weights
 *                                and bias (prep steps recompute them after the host writes one
 *                                of their inputs), so it costs nothing per step;
 *          -> ADD(., other)      the residual sum joins the convolution's epilogue;
 *          -> RELU / LEAKY_RELU / TANH   so does the activation.
 *   CONV_T2D -> ADD -> activation   likewise (its forward is cuDNN's backward-data).
 *   LINEAR -> activation         a cuBLASLt epilogue (ReLU) or the own epilogue kernel.
 *   BATCHNORM_TRAIN / BATCHNORM_INFER / INSTANCENORM -> activation
 *                                the norm kernel applies the activation as it writes; in
 *                                training the activation's backward, when it feeds only the
 *                                norm's backward, is done by the norm backward kernel from the
 *                                activation's output (the "mask").
 *
 * A convolution's epilogue runs inside its cuDNN graph when cuDNN has an engine for the
 * pattern, else as one own kernel right after it (compile.c decides per step; the plan is the
 * same). An intermediate is elided only when the next op of the chain is its only reader and
 * the host cannot see it; every op of a chain belongs to the same phase. In training the
 * backward ops read an activation's output, never its input, so convolution + activation fuses
 * there too. */
#include "plan/plan_fusion.h"
#include "plan/plan_tensor.h"

/* The only op reading tensor `tid` (searching after op `after`) when the host cannot see the
 * tensor, else CUX_NONE. */
static uint32_t sole_reader(const cux_plan *plan, uint32_t tid, uint32_t after)
{
    if (tid == XPB_NO_TENSOR || plan->n_readers[tid] != 1 ||
        cux_host_visible(cux_tensor(plan, tid)))
        return CUX_NONE;
    for (uint32_t j = after + 1; j < plan->prog->n_ops; j++) {
        const xpb_op *op = cux_op(plan, j);
        for (uint32_t k = 0; k < op->n_inputs; k++)
            if (xpb_op_input(plan->prog, op, k) == tid)
                return j;
    }
    return CUX_NONE;
}

static int is_act_bwd(uint32_t kind)
{
    return kind == XPB_OP_RELU_BWD || kind == XPB_OP_LEAKY_RELU_BWD || kind == XPB_OP_TANH_BWD;
}

/* The op that writes tensor `tid` first, or CUX_NONE (host-written). */
static uint32_t writer_of(const cux_plan *plan, uint32_t tid)
{
    for (uint32_t j = 0; j < plan->prog->n_ops; j++) {
        const xpb_op *op = cux_op(plan, j);
        for (uint32_t k = 0; k < op->n_outputs; k++)
            if (xpb_op_output(plan->prog, op, k) == tid)
                return j;
    }
    return CUX_NONE;
}

/* Folding needs the convolution's weights and bias and the norm's parameters to be fp32
 * persistent tensors that nothing else reads. */
static int fold_ok(const cux_plan *plan, const xpb_op *conv, const xpb_op *bn)
{
    uint32_t ids[6] = {conv->inputs[1], bn->inputs[1],
                       bn->inputs[2],   bn->inputs[3],
                       bn->inputs[4],   conv->n_inputs > 2 ? conv->inputs[2] : CUX_NONE};
    if (bn->n_inputs < 5)
        return 0;
    for (int k = 0; k < 6; k++) {
        if (ids[k] == CUX_NONE)
            continue;
        const xpb_tensor_desc *t = cux_tensor(plan, ids[k]);
        if (plan->n_readers[ids[k]] != 1 || t->dtype != XPB_DTYPE_F32 ||
            !(t->flags & XPB_TENSOR_PERSISTENT))
            return 0;
    }
    return 1;
}

/* Absorbs the activation that alone reads `cur` (after op `i`, same phase) into op `i`;
 * returns the tensor the chain now ends with. */
static uint32_t take_act(cux_plan *plan, uint32_t i, uint32_t cur)
{
    uint32_t j = sole_reader(plan, cur, i);
    if (j == CUX_NONE || plan->op_phase[j] != plan->op_phase[i])
        return cur;
    const xpb_op *act = cux_op(plan, j);
    if (cux_act_of_kind(act->kind) == CUX_ACT_NONE || is_act_bwd(act->kind) ||
        act->inputs[0] != cur)
        return cur;
    plan->fuse[j].into = i;
    plan->fuse[i].act_op = j;
    return act->outputs[0];
}

/* Convolution chains: [BATCHNORM_INFER folded] -> [ADD] -> [activation]. */
static void plan_conv(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    cux_fuse *f = &plan->fuse[i];
    uint32_t cur = op->outputs[0], j;
    if (op->kind == XPB_OP_CONV2D) {
        j = sole_reader(plan, cur, i);
        const xpb_op *bn = j != CUX_NONE ? cux_op(plan, j) : NULL;
        if (bn && plan->op_phase[j] == plan->op_phase[i] && bn->kind == XPB_OP_BATCHNORM_INFER &&
            bn->inputs[0] == cur && fold_ok(plan, op, bn)) {
            plan->fuse[j].into = i;
            f->bn_op = j;
            cur = bn->outputs[0];
        }
    }
    j = sole_reader(plan, cur, i);
    const xpb_op *add = j != CUX_NONE ? cux_op(plan, j) : NULL;
    if (add && plan->op_phase[j] == plan->op_phase[i] && add->kind == XPB_OP_ADD &&
        add->inputs[0] != add->inputs[1]) {
        uint32_t other = add->inputs[0] == cur ? add->inputs[1] : add->inputs[0];
        uint32_t w = writer_of(plan, other);
        /* the epilogue reads `other` when the convolution runs: it must hold its value then */
        if (w == CUX_NONE || w < i) {
            plan->fuse[j].into = i;
            f->add_op = j;
            f->add_other = other;
            cur = add->outputs[0];
        }
    }
    f->out_tensor = take_act(plan, i, cur);
}

/* Training: the activation fused into norm op `i` (forward) has its backward `rb` feeding only
 * the norm's backward `bb`: `bb` does `rb` too. */
static void plan_norm_bwd(cux_plan *plan, uint32_t i)
{
    const xpb_program *p = plan->prog;
    const xpb_op *norm = cux_op(plan, i);
    uint32_t a = plan->fuse[i].act_op;
    uint32_t y = cux_op(plan, a)->outputs[0], rb = CUX_NONE;
    for (uint32_t j = a + 1; j < p->n_ops && rb == CUX_NONE; j++) {
        const xpb_op *o = cux_op(plan, j);
        if (is_act_bwd(o->kind) &&
            cux_act_of_kind(o->kind) == cux_act_of_kind(cux_op(plan, a)->kind) && o->n_inputs > 1 &&
            o->inputs[1] == y)
            rb = j;
    }
    if (rb == CUX_NONE)
        return;
    const xpb_op *rbw = cux_op(plan, rb);
    uint32_t bb = sole_reader(plan, rbw->outputs[0], rb);
    if (bb == CUX_NONE || plan->op_phase[bb] != plan->op_phase[rb] ||
        plan->fuse[bb].into != CUX_NONE)
        return;
    const xpb_op *bwd = cux_op(plan, bb);
    int match;
    if (norm->kind == XPB_OP_BATCHNORM_TRAIN)
        match = bwd->kind == XPB_OP_BATCHNORM_BWD && bwd->inputs[1] == norm->inputs[0];
    else
        match = bwd->kind == XPB_OP_INSTANCENORM_BWD && bwd->inputs[1] == norm->inputs[0];
    if (!match || bwd->inputs[0] != rbw->outputs[0])
        return;
    plan->fuse[rb].into = bb;
    plan->fuse[bb].act_bwd_op = rb;
}

xpb_status cux_plan_fusion(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    if (!plan->opt.fusion || plan->opt.keep_all)
        return XPB_OK;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = cux_op(plan, i);
        cux_fuse *f = &plan->fuse[i];
        if (f->into != CUX_NONE || op->n_outputs < 1 || op->outputs[0] == XPB_NO_TENSOR ||
            plan->op_phase[i] == CUX_NONE)
            continue;
        switch (op->kind) {
        case XPB_OP_CONV2D:
        case XPB_OP_CONV_T2D:
            plan_conv(plan, i);
            break;
        case XPB_OP_LINEAR:
            f->out_tensor = take_act(plan, i, op->outputs[0]);
            break;
        case XPB_OP_BATCHNORM_TRAIN:
        case XPB_OP_INSTANCENORM:
            f->out_tensor = take_act(plan, i, op->outputs[0]);
            if (f->act_op != CUX_NONE)
                plan_norm_bwd(plan, i);
            break;
        case XPB_OP_BATCHNORM_INFER:
            f->out_tensor = take_act(plan, i, op->outputs[0]);
            break;
        default:
            break;
        }
    }
    return XPB_OK;
}
