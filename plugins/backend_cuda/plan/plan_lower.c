/* Lowering: every op of every phase becomes one step (plus conversions where an engine needs
 * another element type or layout than a tensor's storage), in program order:
 *
 *   convolutions and transposed convolutions   a cuDNN operation graph (CUX_ENG_CONV), the
 *       transposed ones as the adjoint modes (forward = backward-data, backward-data = forward,
 *       weights = backward-filter with x and dy swapped); their bias gradient an own reduction
 *   linear layers                              a cuBLASLt matmul (CUX_ENG_MATMUL)
 *   everything else                            an own kernel (CUX_ENG_KERNEL), which reads and
 *       writes any storage type and layout, so it needs no conversion
 *   ALL_REDUCE (op set 2)                      an NCCL all-reduce (CUX_ENG_COLL) of the tensor's
 *       storage, in place, with ncclAvg; the ops of one bucket one NCCL group; nothing at all
 *       with one rank (the mean over one rank is the tensor itself)
 *
 * cuDNN reads its operands in the policy's type and the 4-D layout; cuBLASLt in the policy's
 * type, row-major. An operand stored otherwise is converted into a temporary before the step
 * (and the copy reused by later readers in the same phase until the tensor is written again);
 * an output that should be stored otherwise is written to a temporary and converted after the
 * step. RESHAPE shares its input's buffer when the bytes agree, else it is a conversion.
 *
 * Every phase starts with PHASE_BEGIN (resets the phase's status record) and ends with
 * PHASE_END (advances the dropout counters of the phase and, under fp16-mixed, the loss
 * scaler). Under fp16-mixed the loss backward steps multiply by the loss scale, and before the
 * first update of a phase one UNSCALE step per updated gradient divides by it and records a
 * non-finite value, in which case the updates of that step are skipped (CUX_STEP_SKIPPABLE). */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

typedef struct cux_copy {
    uint32_t tensor, buf, phase;
    uint8_t type, layout;
} cux_copy;

/* Tensor `id` / op `i` of the plan's program: owned by the program (borrowed by the plan). */
static const xpb_tensor_desc *T(const cux_plan *plan, uint32_t id)
{
    return xpb_program_tensor(plan->prog, id);
}

static const xpb_op *OP(const cux_plan *plan, uint32_t i)
{
    return xpb_program_op(plan->prog, i);
}

/* The activation an ACT / ACT_BWD op computes. */
static int act_of_kind(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_RELU:
    case XPB_OP_RELU_BWD:
        return CUX_ACT_RELU;
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_LEAKY_RELU_BWD:
        return CUX_ACT_LEAKY;
    default:
        return CUX_ACT_TANH;
    }
}

static cux_view no_view(void)
{
    cux_view v;
    memset(&v, 0, sizeof v);
    v.buf = CUX_NONE;
    v.tensor = CUX_NONE;
    return v;
}

/* A view of buffer `buf` holding tensor `tid`'s value in `type` / `layout`. */
static cux_view make_view(const cux_plan *plan, uint32_t buf, uint32_t tid, int type, int layout)
{
    cux_view v = no_view();
    const xpb_tensor_desc *t = T(plan, tid);
    v.buf = buf;
    v.tensor = tid;
    v.type = (uint8_t)type;
    v.layout = (uint8_t)(t->ndim == 4 ? layout : CUX_PLAIN);
    v.ndim = (uint8_t)t->ndim;
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        v.dims[d] = d < t->ndim ? t->dims[d] : 1;
    return v;
}

/* True when a tensor of these dims stored in layout `a` has the same bytes as in `b`. */
static int same_bytes(const xpb_tensor_desc *t, int a, int b)
{
    return a == b || t->ndim != 4 || cux_layouts_agree(t->dims[1], t->dims[2], t->dims[3]);
}

static int pinned_tensor(const cux_plan *plan, const xpb_tensor_desc *t)
{
    return plan->opt.keep_all || cux_host_visible(t);
}

/* The storage buffer of tensor `tid`, created on first use. */
static xpb_status tensor_buf(cux_plan *plan, uint32_t tid, uint32_t *out)
{
    cux_store *s = &plan->store[tid];
    if (s->buf == CUX_NONE) {
        const xpb_tensor_desc *t = T(plan, tid);
        uint64_t bytes = (uint64_t)xpb_tensor_numel(t) * cux_type_size(s->type);
        xpb_status st =
            cux_buf_new(&s->buf, plan, bytes, CUX_BUF_TENSOR, tid, pinned_tensor(plan, t));
        if (st != XPB_OK)
            return st;
    }
    *out = s->buf;
    return XPB_OK;
}

/* The view of tensor `tid` as it is stored (own kernels read and write any storage). */
static xpb_status stored(cux_plan *plan, uint32_t tid, cux_view *v)
{
    uint32_t buf;
    xpb_status st = tensor_buf(plan, tid, &buf);
    if (st == XPB_OK)
        *v = make_view(plan, buf, tid, plan->store[tid].type, plan->store[tid].layout);
    return st;
}

/* stored(), or an absent view for XPB_NO_TENSOR. */
static xpb_status stored_opt(cux_plan *plan, uint32_t tid, cux_view *v)
{
    if (tid == XPB_NO_TENSOR || tid == CUX_NONE) {
        *v = no_view();
        return XPB_OK;
    }
    return stored(plan, tid, v);
}

static xpb_status push(cux_step **list, uint32_t *n, uint32_t *cap, cux_plan *plan,
                       const cux_step *s)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 64;
        cux_step *l = realloc(*list, c * sizeof *l);
        if (!l)
            return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (steps)");
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = *s;
    return XPB_OK;
}

static cux_step new_step(const cux_plan *plan, uint32_t op, int engine, int kernel)
{
    cux_step s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.phase = op < plan->prog->n_ops ? plan->op_phase[op] : CUX_NONE;
    s.engine = (uint8_t)engine;
    s.kernel = (uint8_t)kernel;
    s.act = CUX_ACT_NONE;
    s.counter = CUX_NONE;
    for (int k = 0; k < CUX_MAX_IN; k++)
        s.in[k] = no_view();
    for (int k = 0; k < CUX_MAX_OUT; k++)
        s.out[k] = no_view();
    s.bias = s.resid = s.mask = s.extra = no_view();
    return s;
}

static cux_step convert_step(const cux_plan *plan, uint32_t op, cux_view from, cux_view to)
{
    cux_step s = new_step(plan, op, CUX_ENG_KERNEL, CUX_K_CONVERT);
    s.phase = plan->cur_op < plan->prog->n_ops ? plan->op_phase[plan->cur_op] : CUX_NONE;
    s.n_in = s.n_out = 1;
    s.in[0] = from;
    s.out[0] = to;
    return s;
}

/* Forgets converted copies of tensor `tid` (it is being written). */
static void invalidate(cux_plan *plan, uint32_t tid)
{
    for (uint32_t i = 0; i < plan->n_copies;)
        if (plan->copies[i].tensor == tid)
            plan->copies[i] = plan->copies[--plan->n_copies];
        else
            i++;
}

/* Tensor `tid` as an engine reads it: in `type` and `layout`. The storage when it matches,
 * else the parameter's shadow, else a converted copy made earlier in this phase, else a new
 * one (a conversion step appended now, before the step that reads it). */
static xpb_status want(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *v)
{
    const xpb_tensor_desc *t = T(plan, tid);
    cux_store *s = &plan->store[tid];
    if (s->type == type && same_bytes(t, s->layout, layout))
        return stored(plan, tid, v);
    if (s->shadow != CUX_NONE && s->shadow_type == type && same_bytes(t, s->layout, layout)) {
        *v = make_view(plan, s->shadow, tid, type, s->layout);
        return XPB_OK;
    }
    uint32_t phase = plan->op_phase[plan->cur_op];
    for (uint32_t i = 0; i < plan->n_copies; i++) {
        const cux_copy *c = &plan->copies[i];
        if (c->tensor == tid && c->type == type && c->layout == layout && c->phase == phase) {
            *v = make_view(plan, c->buf, tid, type, layout);
            return XPB_OK;
        }
    }
    cux_view from;
    xpb_status st = stored(plan, tid, &from);
    if (st != XPB_OK)
        return st;
    uint32_t buf;
    uint64_t bytes = (uint64_t)xpb_tensor_numel(t) * cux_type_size(type);
    if ((st = cux_buf_new(&buf, plan, bytes, CUX_BUF_TEMP, CUX_NONE, 0)) != XPB_OK)
        return st;
    *v = make_view(plan, buf, tid, type, layout);
    cux_step cs = convert_step(plan, plan->cur_op, from, *v);
    if ((st = push(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, &cs)) != XPB_OK)
        return st;
    if (plan->n_copies == plan->cap_copies) {
        uint32_t cap = plan->cap_copies ? plan->cap_copies * 2 : 32;
        cux_copy *c = realloc(plan->copies, cap * sizeof *c);
        if (!c)
            return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (copies)");
        plan->copies = c;
        plan->cap_copies = cap;
    }
    cux_copy *c = &plan->copies[plan->n_copies++];
    c->tensor = tid;
    c->buf = buf;
    c->phase = phase;
    c->type = (uint8_t)type;
    c->layout = (uint8_t)layout;
    return XPB_OK;
}

/* Tensor `tid` as an engine writes it: in `type` and `layout`. The storage when it matches,
 * else a temporary converted into the storage right after the step. */
static xpb_status produce(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *v)
{
    invalidate(plan, tid);
    const xpb_tensor_desc *t = T(plan, tid);
    cux_store *s = &plan->store[tid];
    if (s->type == type && same_bytes(t, s->layout, layout))
        return stored(plan, tid, v);
    cux_view to;
    xpb_status st = stored(plan, tid, &to);
    if (st != XPB_OK)
        return st;
    uint32_t buf;
    uint64_t bytes = (uint64_t)xpb_tensor_numel(t) * cux_type_size(type);
    if ((st = cux_buf_new(&buf, plan, bytes, CUX_BUF_TEMP, CUX_NONE, 0)) != XPB_OK)
        return st;
    *v = make_view(plan, buf, tid, type, layout);
    cux_step cs = convert_step(plan, plan->cur_op, *v, to);
    return push(&plan->post, &plan->n_post, &plan->cap_post, plan, &cs);
}

/* Appends `s` and then the conversions its outputs asked for. */
static xpb_status commit(cux_plan *plan, const cux_step *s)
{
    xpb_status st = push(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, s);
    for (uint32_t i = 0; st == XPB_OK && i < plan->n_post; i++)
        st = push(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, &plan->post[i]);
    plan->n_post = 0;
    return st;
}

/* The fused activation of op `i` onto step `s`. */
static void fused_act(const cux_plan *plan, uint32_t i, cux_step *s)
{
    uint32_t a = plan->fuse[i].act_op;
    if (a == CUX_NONE)
        return;
    const xpb_op *act = OP(plan, a);
    s->act = (uint8_t)act_of_kind(act->kind);
    s->act_alpha = act->attrs.negative_slope;
}

/* ---- bias gradients and batch-norm folding ---- */

/* db = sum of dy over every dimension but 1 (conv and linear backward-weights). */
static xpb_status bias_grad(cux_plan *plan, uint32_t i, uint32_t dy, uint32_t db)
{
    cux_step s = new_step(plan, i, CUX_ENG_KERNEL, CUX_K_BIAS_GRAD);
    s.n_in = s.n_out = 1;
    xpb_status st;
    if ((st = stored(plan, dy, &s.in[0])) != XPB_OK ||
        (st = produce(plan, db, CUX_F32, CUX_PLAIN, &s.out[0])) != XPB_OK)
        return st;
    const xpb_tensor_desc *d = T(plan, dy);
    int64_t n = d->dims[0], c = d->ndim > 1 ? d->dims[1] : 1;
    s.scratch = cux_norm_scratch(n, c, xpb_tensor_numel(d) / (n * c));
    return commit(plan, &s);
}

/* Inference: private buffers for the weights and bias of convolution `i` with batch norm
 * `bn` folded in, and the prep step that computes them from the masters. */
static xpb_status fold_buffers(cux_plan *plan, uint32_t i, cux_view *w, cux_view *b)
{
    const xpb_op *conv = OP(plan, i);
    uint32_t bn = plan->fuse[i].bn_op;
    const xpb_op *norm = OP(plan, bn);
    const xpb_tensor_desc *wt = T(plan, conv->inputs[1]);
    uint32_t wbuf, bbuf;
    uint64_t wbytes = (uint64_t)xpb_tensor_numel(wt) * cux_type_size(plan->act_type);
    uint64_t bbytes = (uint64_t)wt->dims[0] * cux_type_size(plan->act_type);
    xpb_status st;
    if ((st = cux_buf_new(&wbuf, plan, wbytes, CUX_BUF_FOLD, CUX_NONE, 1)) != XPB_OK ||
        (st = cux_buf_new(&bbuf, plan, bbytes, CUX_BUF_FOLD, CUX_NONE, 1)) != XPB_OK)
        return st;
    *w = make_view(plan, wbuf, conv->inputs[1], plan->act_type, plan->layout4d);
    w->tensor = CUX_NONE; /* not the parameter's value: the folded one */
    *b = no_view();
    b->buf = bbuf;
    b->type = plan->act_type;
    b->layout = CUX_PLAIN;
    b->ndim = 1;
    b->dims[0] = wt->dims[0];
    b->dims[1] = b->dims[2] = b->dims[3] = 1;
    /* prep: BN_FOLD(w, b [opt], gamma, beta, rm, rv) -> w', b' with the norm's eps */
    cux_step s = new_step(plan, bn, CUX_ENG_KERNEL, CUX_K_BN_FOLD);
    s.phase = CUX_NONE;
    s.n_in = 6;
    s.n_out = 2;
    if ((st = stored(plan, conv->inputs[1], &s.in[0])) != XPB_OK ||
        (st = stored_opt(plan, conv->n_inputs > 2 ? conv->inputs[2] : XPB_NO_TENSOR, &s.in[1])) !=
            XPB_OK)
        return st;
    for (uint32_t k = 1; k < 5; k++)
        if ((st = stored(plan, norm->inputs[k], &s.in[k + 1])) != XPB_OK)
            return st;
    s.out[0] = *w;
    s.out[1] = *b;
    return push(&plan->prep, &plan->n_prep, &plan->cap_prep, plan, &s);
}

/* ---- convolutions ---- */

static xpb_status lower_conv(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = OP(plan, i);
    const cux_fuse *f = &plan->fuse[i];
    int A = plan->act_type, L = plan->layout4d;
    cux_step s = new_step(plan, i, CUX_ENG_CONV, 0);
    s.n_in = op->n_inputs < 2 ? op->n_inputs : 2;
    s.n_out = 1;
    xpb_status st;
    switch (op->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
        s.conv = op->kind == XPB_OP_CONV2D ? CUX_CONV_FWD : CUX_CONV_BWD_DATA;
        if ((st = want(plan, op->inputs[0], A, L, &s.in[0])) != XPB_OK)
            return st;
        if (f->bn_op != CUX_NONE) {
            if ((st = fold_buffers(plan, i, &s.in[1], &s.bias)) != XPB_OK)
                return st;
        } else {
            if ((st = want(plan, op->inputs[1], A, L, &s.in[1])) != XPB_OK)
                return st;
            if (op->n_inputs > 2 &&
                (st = want(plan, op->inputs[2], A, CUX_PLAIN, &s.bias)) != XPB_OK)
                return st;
        }
        if (f->add_op != CUX_NONE && (st = want(plan, f->add_other, A, L, &s.resid)) != XPB_OK)
            return st;
        fused_act(plan, i, &s);
        if ((st = produce(plan, f->out_tensor, A, L, &s.out[0])) != XPB_OK)
            return st;
        return commit(plan, &s);
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_DATA:
        s.conv = op->kind == XPB_OP_CONV2D_BWD_DATA ? CUX_CONV_BWD_DATA : CUX_CONV_FWD;
        if ((st = want(plan, op->inputs[0], A, L, &s.in[0])) != XPB_OK ||
            (st = want(plan, op->inputs[1], A, L, &s.in[1])) != XPB_OK ||
            (st = produce(plan, op->outputs[0], A, L, &s.out[0])) != XPB_OK)
            return st;
        return commit(plan, &s);
    case XPB_OP_CONV2D_BWD_WEIGHTS:
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        s.conv = CUX_CONV_BWD_FILTER;
        if ((st = want(plan, op->inputs[0], A, L, &s.in[0])) != XPB_OK ||
            (st = want(plan, op->inputs[1], A, L, &s.in[1])) != XPB_OK ||
            (st = produce(plan, op->outputs[0], A, L, &s.out[0])) != XPB_OK ||
            (st = commit(plan, &s)) != XPB_OK)
            return st;
        if (op->n_outputs > 1 && op->outputs[1] != XPB_NO_TENSOR)
            return bias_grad(plan, i, op->inputs[0], op->outputs[1]);
        return XPB_OK;
    default:
        return cux_fail(plan, XPB_INTERNAL, "lower_conv: op %u is not a convolution", i);
    }
}

/* ---- linear layers: cuBLASLt reads A-typed row-major operands and writes fp32 or A ---- */

static xpb_status lower_linear(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = OP(plan, i);
    const cux_fuse *f = &plan->fuse[i];
    int A = plan->act_type;
    cux_step s = new_step(plan, i, CUX_ENG_MATMUL, 0);
    s.n_in = 2;
    s.n_out = 1;
    xpb_status st;
    if ((st = want(plan, op->inputs[0], A, CUX_PLAIN, &s.in[0])) != XPB_OK ||
        (st = want(plan, op->inputs[1], A, CUX_PLAIN, &s.in[1])) != XPB_OK)
        return st;
    uint32_t y = op->kind == XPB_OP_LINEAR ? f->out_tensor : op->outputs[0];
    int ytype = plan->store[y].type; /* F32 or A: cuBLASLt writes either */
    if (op->kind == XPB_OP_LINEAR) {
        if (op->n_inputs > 2 &&
            (st = want(plan, op->inputs[2], ytype, CUX_PLAIN, &s.bias)) != XPB_OK)
            return st;
        fused_act(plan, i, &s);
    }
    if ((st = produce(plan, y, ytype, CUX_PLAIN, &s.out[0])) != XPB_OK ||
        (st = commit(plan, &s)) != XPB_OK)
        return st;
    if (op->kind == XPB_OP_LINEAR_BWD_WEIGHTS && op->n_outputs > 1 &&
        op->outputs[1] != XPB_NO_TENSOR)
        return bias_grad(plan, i, op->inputs[0], op->outputs[1]);
    return XPB_OK;
}

/* ---- own kernels ---- */

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
            T(plan, op->inputs[kernel == CUX_K_BN_BWD || kernel == CUX_K_IN_BWD ? 1 : 0]);
        int64_t n = x->dims[0], c = x->dims[1], s = xpb_tensor_numel(x) / (n * c);
        return cux_norm_scratch(n, c, s);
    }
    case CUX_K_XENT:
        return (uint64_t)T(plan, op->inputs[0])->dims[0] * sizeof(double);
    case CUX_K_MSE:
    case CUX_K_L1:
        return (uint64_t)cux_sum_blocks(xpb_tensor_numel(T(plan, op->inputs[0]))) * sizeof(double);
    default:
        return 0;
    }
}

static int is_update(uint32_t kind)
{
    return kind == XPB_OP_SGD_UPDATE || kind == XPB_OP_ADAM_UPDATE;
}

static int is_loss_bwd(uint32_t kind)
{
    return kind == XPB_OP_SOFTMAX_XENT_BWD || kind == XPB_OP_MSE_LOSS_BWD ||
           kind == XPB_OP_L1_LOSS_BWD;
}

static xpb_status lower_kernel(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = OP(plan, i);
    const cux_fuse *f = &plan->fuse[i];
    int kernel = kernel_of(op->kind);
    if (kernel == CUX_K_NONE_) {
        char label[256];
        cux_op_label(plan->prog, i, label, sizeof label);
        return cux_fail(plan, XPB_UNSUPPORTED, "%s: not supported by the cuda backend", label);
    }
    cux_step s = new_step(plan, i, CUX_ENG_KERNEL, kernel);
    s.n_in = op->n_inputs;
    s.n_out = op->n_outputs;
    xpb_status st;
    for (uint32_t k = 0; k < op->n_inputs; k++)
        if ((st = stored(plan, op->inputs[k], &s.in[k])) != XPB_OK)
            return st;
    if (f->act_bwd_op != CUX_NONE) { /* dy of the activation, masked by its output */
        const xpb_op *rb = OP(plan, f->act_bwd_op);
        if ((st = stored(plan, rb->inputs[0], &s.in[0])) != XPB_OK ||
            (st = stored(plan, rb->inputs[1], &s.mask)) != XPB_OK)
            return st;
        s.act = (uint8_t)act_of_kind(rb->kind);
        s.act_alpha = rb->attrs.negative_slope;
    }
    for (uint32_t k = 0; k < op->n_outputs; k++) {
        uint32_t tid = k == 0 && f->act_op != CUX_NONE ? f->out_tensor : op->outputs[k];
        if (tid == XPB_NO_TENSOR) {
            s.out[k] = no_view();
            continue;
        }
        invalidate(plan, tid);
        if ((st = stored(plan, tid, &s.out[k])) != XPB_OK)
            return st;
    }
    if (kernel == CUX_K_ACT || kernel == CUX_K_ACT_BWD) {
        s.act = (uint8_t)act_of_kind(op->kind);
        s.act_alpha = op->attrs.negative_slope;
    } else {
        fused_act(plan, i, &s);
    }
    if (kernel == CUX_K_DROPOUT)
        s.counter = plan->dropout_of[i];
    if (plan->scaled && is_loss_bwd(op->kind))
        s.flags |= CUX_STEP_SCALED;
    if (plan->scaled && is_update(op->kind))
        s.flags |= CUX_STEP_SKIPPABLE;
    if (is_update(op->kind)) {
        const cux_store *ps = &plan->store[op->inputs[0]];
        if (ps->shadow != CUX_NONE)
            s.extra = make_view(plan, ps->shadow, op->inputs[0], ps->shadow_type, ps->layout);
        invalidate(plan, op->inputs[0]);
    }
    s.scratch = kernel_scratch(plan, op, kernel);
    return commit(plan, &s);
}

/* ---- data movement ---- */

static xpb_status lower_reshape(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = OP(plan, i);
    uint32_t x = op->inputs[0], y = op->outputs[0];
    const xpb_tensor_desc *xt = T(plan, x), *yt = T(plan, y);
    cux_store *sx = &plan->store[x], *sy = &plan->store[y];
    invalidate(plan, y);
    /* Share the bytes when both are row-major equivalent and of one type; a persistent input
     * is never shared (it changes in place). */
    if (sx->type == sy->type && sy->buf == CUX_NONE && same_bytes(xt, sx->layout, CUX_PLAIN) &&
        same_bytes(yt, sy->layout, CUX_PLAIN) && !(xt->flags & XPB_TENSOR_PERSISTENT)) {
        uint32_t buf;
        xpb_status st = tensor_buf(plan, x, &buf);
        if (st != XPB_OK)
            return st;
        sy->buf = buf;
        sy->alias = x;
        if (pinned_tensor(plan, yt))
            plan->bufs[buf].pinned = 1;
        return XPB_OK;
    }
    cux_view from, to;
    xpb_status st;
    if ((st = stored(plan, x, &from)) != XPB_OK || (st = stored(plan, y, &to)) != XPB_OK)
        return st;
    cux_step s = convert_step(plan, i, from, to);
    return commit(plan, &s);
}

/* ---- fp16 loss scaling: unscale every gradient the phase's updates read ---- */

static xpb_status unscale_grads(cux_plan *plan, uint32_t first_update)
{
    uint32_t phase = plan->op_phase[first_update];
    const xpb_phase *ph = xpb_program_phase(plan->prog, phase);
    for (uint32_t j = first_update; j < ph->first_op + ph->n_ops; j++) {
        const xpb_op *op = OP(plan, j);
        if (!is_update(op->kind))
            continue;
        cux_step s = new_step(plan, j, CUX_ENG_KERNEL, CUX_K_UNSCALE);
        s.n_in = s.n_out = 1;
        xpb_status st = stored(plan, op->inputs[1], &s.in[0]);
        if (st != XPB_OK)
            return st;
        s.out[0] = s.in[0]; /* in place */
        if ((st = commit(plan, &s)) != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* ---- collectives ---- */

/* The bucket number of op `i` (0: a bucket of its own; read only when the program's ops have
 * the member, ABI 1.2). */
static uint32_t bucket_of(const cux_plan *plan, uint32_t i)
{
    return XPB_OP_HAS(plan->prog, bucket) ? OP(plan, i)->bucket : 0;
}

/* True when op `j` is an ALL_REDUCE of op `i`'s bucket: a non-zero bucket number, the same
 * phase (shapes.h checked that a bucket's ops are consecutive and in one phase). */
static int same_bucket(const cux_plan *plan, uint32_t i, uint32_t j)
{
    return j < plan->prog->n_ops && OP(plan, j)->kind == XPB_OP_ALL_REDUCE &&
           bucket_of(plan, i) != 0 && bucket_of(plan, j) == bucket_of(plan, i) &&
           plan->op_phase[j] == plan->op_phase[i];
}

/* ALL_REDUCE op `i`: one NCCL step over the tensor's storage, in place. Its view names the
 * gradient's buffer, so the memory plan keeps the gradient alive (and its bytes unshared) from
 * the backward op that writes it through this step to the update that reads it; everything
 * runs on one stream, so the reduce sees the finished gradient and the update the reduced one.
 * The steps of a bucket are consecutive (the ops are, and none needs a conversion) and form one
 * NCCL group: no memory-plan constraint (a bucket's gradients need not be contiguous) and no
 * packing copies, while NCCL still launches the whole bucket at once. */
static xpb_status lower_all_reduce(cux_plan *plan, uint32_t i, int seen_update)
{
    if (plan->opt.ranks <= 1)
        return XPB_OK; /* the identity: no step */
    const xpb_op *op = OP(plan, i);
    if (plan->scaled && seen_update) {
        /* the phase's updates run on gradients unscaled per rank before this reduce: a
         * non-finite gradient on one rank would skip the update there only */
        char label[256];
        cux_op_label(plan->prog, i, label, sizeof label);
        return cux_fail(plan, XPB_UNSUPPORTED,
                        "%s: comes after an optimizer update of its phase; under fp16-mixed the "
                        "cuda backend needs every ALL_REDUCE of a phase before its first update "
                        "(as the host emits them)",
                        label);
    }
    cux_step s = new_step(plan, i, CUX_ENG_COLL, 0);
    s.n_in = s.n_out = 1;
    xpb_status st = stored(plan, op->inputs[0], &s.in[0]);
    if (st != XPB_OK)
        return st;
    invalidate(plan, op->inputs[0]); /* written in place: converted copies are stale */
    s.out[0] = s.in[0];
    int first = !(i > 0 && same_bucket(plan, i, i - 1)), last = !same_bucket(plan, i, i + 1);
    if (!(first && last)) {
        if (first) {
            s.flags |= CUX_STEP_GROUP_BEGIN;
            plan->n_groups++;
        }
        if (last)
            s.flags |= CUX_STEP_GROUP_END;
    }
    plan->n_coll++;
    return commit(plan, &s);
}

/* ---- phases ---- */

static int phase_updates(const cux_plan *plan, uint32_t phase)
{
    const xpb_phase *ph = xpb_program_phase(plan->prog, phase);
    for (uint32_t j = ph->first_op; j < ph->first_op + ph->n_ops; j++)
        if (is_update(OP(plan, j)->kind))
            return 1;
    return 0;
}

static xpb_status bookkeeping(cux_plan *plan, uint32_t phase, int kernel, uint32_t first_counter,
                              uint32_t n_counters)
{
    cux_step s = new_step(plan, CUX_NONE, CUX_ENG_KERNEL, kernel);
    s.phase = phase;
    s.counter = first_counter;
    s.n_counters = n_counters;
    if (kernel == CUX_K_PHASE_END && plan->scaled && phase_updates(plan, phase))
        s.flags |= CUX_STEP_SCALED; /* advance the loss scaler */
    return push(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, &s);
}

static xpb_status lower_op(cux_plan *plan, uint32_t i, int *seen_update)
{
    const xpb_op *op = OP(plan, i);
    plan->cur_op = i;
    if (plan->fuse[i].into != CUX_NONE)
        return XPB_OK; /* another op's step does this one's work */
    switch (op->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV2D_BWD_WEIGHTS:
    case XPB_OP_CONV_T2D:
    case XPB_OP_CONV_T2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        return lower_conv(plan, i);
    case XPB_OP_LINEAR:
    case XPB_OP_LINEAR_BWD_DATA:
    case XPB_OP_LINEAR_BWD_WEIGHTS:
        return lower_linear(plan, i);
    case XPB_OP_RESHAPE:
        return lower_reshape(plan, i);
    case XPB_OP_ALL_REDUCE:
        return lower_all_reduce(plan, i, *seen_update);
    case XPB_OP_SGD_UPDATE:
    case XPB_OP_ADAM_UPDATE:
        if (plan->scaled && !*seen_update) {
            *seen_update = 1;
            xpb_status st = unscale_grads(plan, i);
            if (st != XPB_OK)
                return st;
        }
        return lower_kernel(plan, i);
    default:
        return lower_kernel(plan, i);
    }
}

xpb_status cux_lower(cux_plan *plan)
{
    const xpb_program *p = plan->prog;
    xpb_status st;
    for (uint32_t k = 0; k < p->n_phases; k++) {
        const xpb_phase *ph = xpb_program_phase(p, k);
        plan->n_copies = 0; /* converted copies do not cross phases */
        plan->phase_begin[k] = plan->n_steps;
        uint32_t first_counter = CUX_NONE, n_counters = 0;
        for (uint32_t j = ph->first_op; j < ph->first_op + ph->n_ops; j++)
            if (plan->dropout_of[j] != CUX_NONE) {
                if (first_counter == CUX_NONE)
                    first_counter = plan->dropout_of[j];
                n_counters++;
            }
        plan->cur_op = ph->n_ops ? ph->first_op : CUX_NONE;
        if ((st = bookkeeping(plan, k, CUX_K_PHASE_BEGIN, CUX_NONE, 0)) != XPB_OK)
            return st;
        int seen_update = 0;
        for (uint32_t j = ph->first_op; j < ph->first_op + ph->n_ops; j++)
            if ((st = lower_op(plan, j, &seen_update)) != XPB_OK)
                return st;
        if ((st = bookkeeping(plan, k, CUX_K_PHASE_END, first_counter, n_counters)) != XPB_OK)
            return st;
        plan->phase_end[k] = plan->n_steps;
    }
    plan->cur_op = CUX_NONE;
    /* Tensors no step touches still get storage when the host may write or read them. */
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        uint32_t buf;
        if (plan->store[i].buf == CUX_NONE && pinned_tensor(plan, T(plan, i)) &&
            (st = tensor_buf(plan, i, &buf)) != XPB_OK)
            return st;
    }
    uint64_t state = (uint64_t)p->n_phases * sizeof(cux_phase_rec) +
                     (uint64_t)plan->n_counters * sizeof(uint64_t);
    if ((st = cux_buf_new(&plan->state_buf, plan, state, CUX_BUF_STATE, CUX_NONE, 1)) != XPB_OK)
        return st;
    for (uint32_t g = 0; g < plan->n_steps; g++)
        if (plan->steps[g].scratch > plan->scratch_bytes)
            plan->scratch_bytes = plan->steps[g].scratch;
    return XPB_OK;
}

uint64_t cux_counter_offset(const cux_plan *plan, uint32_t counter)
{
    return (uint64_t)plan->prog->n_phases * sizeof(cux_phase_rec) +
           (uint64_t)counter * sizeof(uint64_t);
}
