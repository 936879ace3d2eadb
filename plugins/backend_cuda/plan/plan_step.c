/* The steps of the lowering and the views of their operands (plan_step.h): a tensor's storage
 * buffer, created at its first use; the view of a tensor in the type and layout an engine reads
 * or writes, with the conversion steps that make it when the storage differs (a converted copy
 * is reused by later readers of the same phase until the tensor is written again); and the step
 * lists (plan->steps, plan->prep, and the conversions that follow the step being lowered). */
#include <stdlib.h>
#include <string.h>

#include "plan/plan_error.h"
#include "plan/plan_step.h"
#include "plan/plan_tensor.h"

/* A converted copy of a tensor valid in one phase (plan->copies). */
struct cux_copy {
    uint32_t tensor, buf, phase;
    uint8_t type, layout;
};

cux_view cux_no_view(void)
{
    cux_view v;
    memset(&v, 0, sizeof v);
    v.buf = CUX_NONE;
    v.tensor = CUX_NONE;
    return v;
}

/* A view of buffer `buf` holding tensor `tid`'s value in `type` / `layout`. */
cux_view cux_make_view(const cux_plan *plan, uint32_t buf, uint32_t tid, int type, int layout)
{
    cux_view v = cux_no_view();
    const xpb_tensor_desc *t = cux_tensor(plan, tid);
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
int cux_same_bytes(const xpb_tensor_desc *t, int a, int b)
{
    return a == b || t->ndim != 4 || cux_layouts_agree(t->dims[1], t->dims[2], t->dims[3]);
}

int cux_pinned_tensor(const cux_plan *plan, const xpb_tensor_desc *t)
{
    return plan->opt.keep_all || cux_host_visible(t);
}

/* The storage buffer of tensor `tid`, created on first use. */
xpb_status cux_tensor_buf(cux_plan *plan, uint32_t tid, uint32_t *out)
{
    cux_store *s = &plan->store[tid];
    if (s->buf == CUX_NONE) {
        const xpb_tensor_desc *t = cux_tensor(plan, tid);
        uint64_t bytes = (uint64_t)xpb_tensor_numel(t) * cux_type_size(s->type);
        xpb_status st =
            cux_buf_new(&s->buf, plan, bytes, CUX_BUF_TENSOR, tid, cux_pinned_tensor(plan, t));
        if (st != XPB_OK)
            return st;
    }
    *out = s->buf;
    return XPB_OK;
}

/* The view of tensor `tid` as it is stored (own kernels read and write any storage). */
xpb_status cux_stored(cux_plan *plan, uint32_t tid, cux_view *v)
{
    uint32_t buf;
    xpb_status st = cux_tensor_buf(plan, tid, &buf);
    if (st == XPB_OK)
        *v = cux_make_view(plan, buf, tid, plan->store[tid].type, plan->store[tid].layout);
    return st;
}

/* cux_stored(), or an absent view for XPB_NO_TENSOR. */
xpb_status cux_stored_opt(cux_plan *plan, uint32_t tid, cux_view *v)
{
    if (tid == XPB_NO_TENSOR || tid == CUX_NONE) {
        *v = cux_no_view();
        return XPB_OK;
    }
    return cux_stored(plan, tid, v);
}

xpb_status cux_push_step(cux_step **list, uint32_t *n, uint32_t *cap, cux_plan *plan,
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

cux_step cux_new_step(const cux_plan *plan, uint32_t op, int engine, int kernel)
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
        s.in[k] = cux_no_view();
    for (int k = 0; k < CUX_MAX_OUT; k++)
        s.out[k] = cux_no_view();
    s.bias = s.resid = s.mask = s.extra = cux_no_view();
    return s;
}

cux_step cux_convert_step(const cux_plan *plan, uint32_t op, cux_view from, cux_view to)
{
    cux_step s = cux_new_step(plan, op, CUX_ENG_KERNEL, CUX_K_CONVERT);
    s.phase = plan->cur_op < plan->prog->n_ops ? plan->op_phase[plan->cur_op] : CUX_NONE;
    s.n_in = s.n_out = 1;
    s.in[0] = from;
    s.out[0] = to;
    return s;
}

xpb_status cux_temp(cux_plan *plan, int type, uint32_t ndim, const int64_t *dims, cux_view *v)
{
    uint64_t n = 1;
    for (uint32_t d = 0; d < ndim; d++)
        n *= (uint64_t)dims[d];
    uint32_t buf;
    xpb_status st = cux_buf_new(&buf, plan, n * cux_type_size(type), CUX_BUF_TEMP, CUX_NONE, 0);
    if (st != XPB_OK)
        return st;
    *v = cux_no_view();
    v->buf = buf;
    v->type = (uint8_t)type;
    v->layout = CUX_PLAIN;
    v->ndim = (uint8_t)ndim;
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        v->dims[d] = d < ndim ? dims[d] : 1;
    return XPB_OK;
}

/* Forgets converted copies of tensor `tid` (it is being written). */
void cux_invalidate(cux_plan *plan, uint32_t tid)
{
    for (uint32_t i = 0; i < plan->n_copies;)
        if (plan->copies[i].tensor == tid)
            plan->copies[i] = plan->copies[--plan->n_copies];
        else
            i++;
}

/* The stored view of tensor `tid` into *stored, and a new temporary holding its value in `type`
 * and `layout` into *temp (the conversion between them is the caller's). */
static xpb_status temp_view(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *stored,
                            cux_view *temp)
{
    xpb_status st = cux_stored(plan, tid, stored);
    if (st != XPB_OK)
        return st;
    uint32_t buf;
    uint64_t bytes = (uint64_t)xpb_tensor_numel(cux_tensor(plan, tid)) * cux_type_size(type);
    if ((st = cux_buf_new(&buf, plan, bytes, CUX_BUF_TEMP, CUX_NONE, 0)) != XPB_OK)
        return st;
    *temp = cux_make_view(plan, buf, tid, type, layout);
    return XPB_OK;
}

/* Tensor `tid` as an engine reads it: in `type` and `layout`. The storage when it matches,
 * else the parameter's shadow, else a converted copy made earlier in this phase, else a new
 * one (a conversion step appended now, before the step that reads it). */
xpb_status cux_want(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *v)
{
    const xpb_tensor_desc *t = cux_tensor(plan, tid);
    cux_store *s = &plan->store[tid];
    if (s->type == type && cux_same_bytes(t, s->layout, layout))
        return cux_stored(plan, tid, v);
    if (s->shadow != CUX_NONE && s->shadow_type == type && cux_same_bytes(t, s->layout, layout)) {
        *v = cux_make_view(plan, s->shadow, tid, type, s->layout);
        return XPB_OK;
    }
    uint32_t phase = plan->op_phase[plan->cur_op];
    for (uint32_t i = 0; i < plan->n_copies; i++) {
        const struct cux_copy *c = &plan->copies[i];
        if (c->tensor == tid && c->type == type && c->layout == layout && c->phase == phase) {
            *v = cux_make_view(plan, c->buf, tid, type, layout);
            return XPB_OK;
        }
    }
    cux_view from;
    xpb_status st = temp_view(plan, tid, type, layout, &from, v);
    if (st != XPB_OK)
        return st;
    uint32_t buf = v->buf;
    cux_step cs = cux_convert_step(plan, plan->cur_op, from, *v);
    if ((st = cux_push_step(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, &cs)) != XPB_OK)
        return st;
    if (plan->n_copies == plan->cap_copies) {
        uint32_t cap = plan->cap_copies ? plan->cap_copies * 2 : 32;
        struct cux_copy *c = realloc(plan->copies, cap * sizeof *c);
        if (!c)
            return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (copies)");
        plan->copies = c;
        plan->cap_copies = cap;
    }
    struct cux_copy *c = &plan->copies[plan->n_copies++];
    c->tensor = tid;
    c->buf = buf;
    c->phase = phase;
    c->type = (uint8_t)type;
    c->layout = (uint8_t)layout;
    return XPB_OK;
}

/* Tensor `tid` as an engine writes it: in `type` and `layout`. The storage when it matches,
 * else a temporary converted into the storage right after the step. */
xpb_status cux_produce(cux_plan *plan, uint32_t tid, int type, int layout, cux_view *v)
{
    cux_invalidate(plan, tid);
    const xpb_tensor_desc *t = cux_tensor(plan, tid);
    cux_store *s = &plan->store[tid];
    if (s->type == type && cux_same_bytes(t, s->layout, layout))
        return cux_stored(plan, tid, v);
    cux_view to;
    xpb_status st = temp_view(plan, tid, type, layout, &to, v);
    if (st != XPB_OK)
        return st;
    cux_step cs = cux_convert_step(plan, plan->cur_op, *v, to);
    return cux_push_step(&plan->post, &plan->n_post, &plan->cap_post, plan, &cs);
}

/* Appends `s` and then the conversions its outputs asked for. */
xpb_status cux_commit(cux_plan *plan, const cux_step *s)
{
    xpb_status st = cux_push_step(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, s);
    for (uint32_t i = 0; st == XPB_OK && i < plan->n_post; i++)
        st = cux_push_step(&plan->steps, &plan->n_steps, &plan->cap_steps, plan, &plan->post[i]);
    plan->n_post = 0;
    return st;
}

/* The fused activation of op `i` onto step `s`. */
void cux_fused_act(const cux_plan *plan, uint32_t i, cux_step *s)
{
    uint32_t a = plan->fuse[i].act_op;
    if (a == CUX_NONE)
        return;
    const xpb_op *act = cux_op(plan, a);
    s->act = (uint8_t)cux_act_of_kind(act->kind);
    s->act_alpha = act->attrs.negative_slope;
}
