/* Fusion planning (compile option fusion = 1, keep_all off). Chains are matched in program
 * order starting at a convolution, transposed convolution, inner product or MATMUL:
 *
 *   CONV2D -> BATCHNORM_INFER     inference: the batch norm is folded into the convolution's
 *                                 weights and bias (prep steps recompute them after the host
 *                                 writes parameters), so it costs nothing per step;
 *          -> ADD(., other)       the residual add becomes a "sum" post-op accumulating onto
 *                                 the other addend's buffer (which must die at that ADD);
 *          -> RELU/LEAKY_RELU/TANH   an eltwise post-op (GELU too at inference).
 *
 * and BATCHNORM_INFER -> RELU (when not folded) uses oneDNN's fused norm+relu flag, as does
 * BATCHNORM_TRAIN -> RELU in training together with their backward ops. An
 * intermediate tensor is elided only when the next op of the chain is its only reader and the
 * host cannot see it; every op of a chain must belong to the same phase. Training programs
 * fuse conv/linear + activation (the backward ops read the activation's output, never the
 * convolution's), the sum when it applies, and batch norm + ReLU (plan_bn_relu_train).
 * MATMUL (op set 3) takes an activation post-op as LINEAR does. */
#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

static int host_visible(const xpb_executable *exe, uint32_t tid)
{
    return (T(exe, tid)->flags &
            (XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ)) != 0;
}

/* The only op reading tensor `tid` (searching after op `after`), or ODN_NONE. */
static uint32_t sole_consumer(const xpb_executable *exe, uint32_t tid, uint32_t after)
{
    if (exe->n_consumers[tid] != 1 || host_visible(exe, tid))
        return ODN_NONE;
    for (uint32_t j = after + 1; j < exe->prog->n_ops; j++) {
        const xpb_op *op = xpb_program_op(exe->prog, j);
        for (uint32_t k = 0; k < op->n_inputs; k++)
            if (xpb_op_input(exe->prog, op, k) == tid)
                return j;
    }
    return ODN_NONE;
}

static int reads(const xpb_program *p, const xpb_op *op, uint32_t tid)
{
    for (uint32_t k = 0; k < op->n_inputs; k++)
        if (xpb_op_input(p, op, k) == tid)
            return 1;
    return 0;
}

static int writes(const xpb_program *p, const xpb_op *op, uint32_t tid)
{
    for (uint32_t k = 0; k < op->n_outputs; k++)
        if (xpb_op_output(p, op, k) == tid)
            return 1;
    return 0;
}

/* The residual addend `o` may take the convolution's result (op i) for the ADD at op j: it is
 * an intermediate written before i, and nobody touches it between i and j or after j. */
static int addend_ok(const xpb_executable *exe, uint32_t o, uint32_t i, uint32_t j)
{
    const xpb_tensor_desc *t = T(exe, o);
    if (host_visible(exe, o) ||
        (t->role != XPB_ROLE_ACTIVATION && t->role != XPB_ROLE_ACTIVATION_GRAD))
        return 0;
    int written_before = 0;
    for (uint32_t k = 0; k < exe->prog->n_ops; k++) {
        const xpb_op *op = xpb_program_op(exe->prog, k);
        if (k < i)
            written_before |= writes(exe->prog, op, o);
        else if (k != j && (reads(exe->prog, op, o) || writes(exe->prog, op, o)))
            return 0;
    }
    return written_before;
}

/* Folding needs the conv's weights/bias and the norm's parameters to be read by nothing else. */
static int fold_ok(const xpb_executable *exe, const xpb_op *conv, const xpb_op *bn)
{
    uint32_t ids[6] = {conv->inputs[1], bn->inputs[1],
                       bn->inputs[2],   bn->inputs[3],
                       bn->inputs[4],   conv->n_inputs > 2 ? conv->inputs[2] : ODN_NONE};
    for (int k = 0; k < 6; k++) {
        if (ids[k] == ODN_NONE)
            continue;
        const xpb_tensor_desc *t = T(exe, ids[k]);
        if (exe->n_consumers[ids[k]] != 1 || t->dtype != XPB_DTYPE_F32 ||
            !(t->flags & XPB_TENSOR_PERSISTENT))
            return 0;
    }
    return bn->n_inputs >= 5;
}

/* An activation a post-op can do: RELU, LEAKY_RELU, TANH (their backward ops read the
 * activation's output), and at inference GELU (in training GELU_BWD reads its input, the
 * output of the op that would absorb it). */
static int is_eltwise(uint32_t kind, uint32_t training)
{
    return kind == XPB_OP_RELU || kind == XPB_OP_LEAKY_RELU || kind == XPB_OP_TANH ||
           (kind == XPB_OP_GELU && !training);
}

/* Training: BATCHNORM_TRAIN b -> RELU r, whose RELU_BWD rb feeds only the BATCHNORM_BWD bb of
 * b. oneDNN's fused norm+relu writes r's output with a mask workspace, and its backward
 * applies the mask itself: r and rb need no kernels and b's output and rb's output are never
 * stored. */
static void plan_bn_relu_train(xpb_executable *exe, uint32_t b)
{
    const xpb_program *p = exe->prog;
    const xpb_op *bn = xpb_program_op(p, b);
    if (bn->n_outputs < 3 || bn->outputs[1] == XPB_NO_TENSOR || bn->outputs[2] == XPB_NO_TENSOR)
        return;
    uint32_t r = sole_consumer(exe, bn->outputs[0], b);
    if (r == ODN_NONE || exe->op_phase[r] != exe->op_phase[b])
        return;
    const xpb_op *relu = xpb_program_op(p, r);
    if (relu->kind != XPB_OP_RELU || relu->inputs[0] != bn->outputs[0])
        return;
    uint32_t y = relu->outputs[0], rb = ODN_NONE;
    for (uint32_t j = r + 1; j < p->n_ops && rb == ODN_NONE; j++) {
        const xpb_op *o = xpb_program_op(p, j);
        if (o->kind == XPB_OP_RELU_BWD && o->n_inputs > 1 && o->inputs[1] == y)
            rb = j;
    }
    if (rb == ODN_NONE)
        return;
    const xpb_op *rbw = xpb_program_op(p, rb);
    uint32_t bb = sole_consumer(exe, rbw->outputs[0], rb);
    if (bb == ODN_NONE || exe->op_phase[bb] != exe->op_phase[rb])
        return;
    const xpb_op *bwd = xpb_program_op(p, bb);
    if (bwd->kind != XPB_OP_BATCHNORM_BWD || bwd->inputs[0] != rbw->outputs[0] ||
        bwd->inputs[3] != bn->outputs[1] || bwd->inputs[4] != bn->outputs[2] ||
        exe->fuse[bb].into != ODN_NONE)
        return;
    exe->fuse[r].into = b;
    exe->fuse[b].eltwise_op = r;
    exe->fuse[b].out_tensor = y;
    exe->fuse[rb].into = bb;
    exe->fuse[bb].relu_bwd_op = rb;
    exe->fuse[bb].bn_fwd_op = b;
}

xpb_status odn_plan_fusion(xpb_executable *exe)
{
    const xpb_program *p = exe->prog;
    if (!exe->fusion || exe->keep_all)
        return XPB_OK;
    const uint32_t *phase = exe->op_phase;
    for (uint32_t i = 0; i < p->n_ops; i++) {
        const xpb_op *op = xpb_program_op(p, i);
        odn_fuse *f = &exe->fuse[i];
        if (f->into != ODN_NONE || op->n_outputs < 1)
            continue;
        uint32_t cur = op->outputs[0], j;
        int conv = op->kind == XPB_OP_CONV2D || op->kind == XPB_OP_CONV_T2D;
        if (op->kind == XPB_OP_BATCHNORM_TRAIN) {
            plan_bn_relu_train(exe, i);
            continue;
        }
        if (op->kind == XPB_OP_BATCHNORM_INFER) {
            j = sole_consumer(exe, cur, i);
            if (j != ODN_NONE && phase[j] == phase[i] &&
                xpb_program_op(p, j)->kind == XPB_OP_RELU &&
                xpb_program_op(p, j)->inputs[0] == cur) {
                exe->fuse[j].into = i;
                f->eltwise_op = j;
                f->out_tensor = xpb_program_op(p, j)->outputs[0];
            }
            continue;
        }
        if (!conv && op->kind != XPB_OP_LINEAR && op->kind != XPB_OP_MATMUL)
            continue;
        if (op->kind == XPB_OP_CONV2D && !p->training) {
            j = sole_consumer(exe, cur, i);
            const xpb_op *bn = j != ODN_NONE ? xpb_program_op(p, j) : NULL;
            if (bn && phase[j] == phase[i] && bn->kind == XPB_OP_BATCHNORM_INFER &&
                bn->inputs[0] == cur && fold_ok(exe, op, bn)) {
                exe->fuse[j].into = i;
                f->bn_op = j;
                cur = bn->outputs[0];
            }
        }
        if (conv) {
            j = sole_consumer(exe, cur, i);
            const xpb_op *add = j != ODN_NONE ? xpb_program_op(p, j) : NULL;
            if (add && phase[j] == phase[i] && add->kind == XPB_OP_ADD && add->n_inputs == 2 &&
                add->inputs[0] != add->inputs[1]) {
                uint32_t other = add->inputs[0] == cur ? add->inputs[1] : add->inputs[0];
                if (addend_ok(exe, other, i, j)) {
                    exe->fuse[j].into = i;
                    f->sum_op = j;
                    f->sum_tensor = other;
                    cur = add->outputs[0];
                }
            }
        }
        j = sole_consumer(exe, cur, i);
        const xpb_op *act = j != ODN_NONE ? xpb_program_op(p, j) : NULL;
        if (act && phase[j] == phase[i] && is_eltwise(act->kind, p->training) &&
            act->inputs[0] == cur) {
            exe->fuse[j].into = i;
            f->eltwise_op = j;
            cur = act->outputs[0];
        }
        f->out_tensor = cur;
    }
    return XPB_OK;
}

xpb_status odn_fused_post_ops(dnnl_post_ops_t *out, xpb_executable *exe, uint32_t op)
{
    const odn_fuse *f = &exe->fuse[op];
    *out = NULL;
    if (f->sum_op == ODN_NONE && f->eltwise_op == ODN_NONE)
        return XPB_OK;
    dnnl_post_ops_t po;
    ODN_TRY(exe, dnnl_post_ops_create(&po), "post-ops");
    dnnl_status_t s = dnnl_success;
    if (f->sum_op != ODN_NONE)
        s = dnnl_post_ops_append_sum(po, 1.0f);
    if (s == dnnl_success && f->eltwise_op != ODN_NONE) {
        const xpb_op *e = xpb_program_op(exe->prog, f->eltwise_op);
        dnnl_alg_kind_t alg = e->kind == XPB_OP_TANH            ? dnnl_eltwise_tanh
                              : e->kind != XPB_OP_GELU          ? dnnl_eltwise_relu
                              : e->approximate == XPB_GELU_TANH ? dnnl_eltwise_gelu_tanh
                                                                : dnnl_eltwise_gelu_erf;
        float alpha = e->kind == XPB_OP_LEAKY_RELU ? e->attrs.negative_slope : 0.0f;
        s = dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, 0.0f);
    }
    if (s != dnnl_success) {
        dnnl_post_ops_destroy(po);
        return odn_dnnl_fail(exe, s, "post-ops");
    }
    *out = po;
    return XPB_OK;
}
