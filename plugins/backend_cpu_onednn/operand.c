/* Storage decisions and step operands: every tensor gets one layout and data type (the first
 * op that writes it decides, or for host-written tensors the first op that reads it), and an
 * op that needs something else gets a reorder into a temporary buffer. This is the only place
 * that inserts layout and precision conversions between ops. */
#include <stdlib.h>
#include <string.h>

#include "odn.h"

const dnnl_memory_desc_t *odn_tensor_md(const xpb_executable *exe, uint32_t tid)
{
    return exe->t[tid].decided ? &exe->t[tid].md : NULL;
}

/* Tensors the host may see, or that keep their value, never share memory. */
static int tensor_pinned(const xpb_executable *exe, uint32_t tid)
{
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tid);
    return exe->keep_all ||
           (t->flags & (XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ));
}

xpb_status odn_decide(xpb_executable *exe, uint32_t tid, const dnnl_memory_desc_t *md)
{
    odn_tensor *t = &exe->t[tid];
    if (md->format_kind == dnnl_format_kind_any)
        return odn_fail(exe, XPB_INTERNAL, "tensor %u: storage left undecided", tid);
    xpb_status st =
        odn_buf_new(&t->buf, exe, dnnl_memory_desc_get_size(md), tensor_pinned(exe, tid));
    if (st != XPB_OK)
        return st;
    t->md = *md;
    t->decided = 1;
    return XPB_OK;
}

xpb_status odn_alias(xpb_executable *exe, uint32_t tid, uint32_t other,
                     const dnnl_memory_desc_t *md)
{
    odn_tensor *t = &exe->t[tid];
    t->md = *md;
    t->buf = exe->t[other].buf;
    t->decided = 1;
    t->aliased = exe->t[other].aliased = 1;
    if (tensor_pinned(exe, tid))
        exe->bufs[t->buf].pinned = 1;
    return XPB_OK;
}

/* Two descriptors of one type and shape that both place every element where row-major does
 * (e.g. nChw16c and NCHW when H = W = 1): a reorder between them would copy the bytes as
 * they are. */
static int same_bytes(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b)
{
    if (a->format_kind != dnnl_blocked || b->format_kind != dnnl_blocked ||
        a->data_type != b->data_type || a->ndims != b->ndims)
        return 0;
    for (int d = 0; d < a->ndims; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return odn_md_is_plain(a) && odn_md_is_plain(b);
}

/* The descriptor a tensor must be stored with when its first reader wants `want` (NULL or
 * format "any": dense row-major). */
static void first_storage(const xpb_executable *exe, uint32_t tid, const dnnl_memory_desc_t *want,
                          dnnl_memory_desc_t *md)
{
    if (want && want->format_kind != dnnl_format_kind_any) {
        *md = *want;
        return;
    }
    odn_md_plain(md, xpb_program_tensor(exe->prog, tid),
                 want ? want->data_type : odn_pref_dt(exe, tid));
}

/* Decides a tensor at its first read. An fp32 parameter that a bf16 primitive reads keeps an
 * fp32 master in the same layout plus a bf16 shadow. */
static xpb_status decide_for_read(xpb_executable *exe, uint32_t tid, const dnnl_memory_desc_t *want)
{
    const xpb_tensor_desc *d = xpb_program_tensor(exe->prog, tid);
    odn_tensor *t = &exe->t[tid];
    dnnl_memory_desc_t md;
    first_storage(exe, tid, want, &md);
    if (md.data_type == dnnl_bf16 && odn_keeps_master(d)) {
        dnnl_memory_desc_t master;
        odn_md_retype(&master, &md, dnnl_f32);
        xpb_status st = odn_decide(exe, tid, &master);
        if (st != XPB_OK)
            return st;
        t->shadow_md = md;
        return odn_buf_new(&t->shadow_buf, exe, dnnl_memory_desc_get_size(&md), 1);
    }
    return odn_decide(exe, tid, &md);
}

xpb_status odn_in(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                  const dnnl_memory_desc_t *want)
{
    odn_tensor *t = &exe->t[tid];
    xpb_status st;
    if (!t->decided && (st = decide_for_read(exe, tid, want)) != XPB_OK)
        return st;
    if (!want || dnnl_memory_desc_equal(&t->md, want)) {
        odn_buf_operand(s, arg, t->buf, &t->md);
        return XPB_OK;
    }
    if (t->shadow_buf != ODN_NONE && dnnl_memory_desc_equal(&t->shadow_md, want)) {
        odn_buf_operand(s, arg, t->shadow_buf, &t->shadow_md);
        return XPB_OK;
    }
    if (same_bytes(&t->md, want)) { /* another description of the same layout */
        odn_buf_operand(s, arg, t->buf, want);
        return XPB_OK;
    }
    dnnl_memory_desc_t target = *want;
    if (want->format_kind == dnnl_format_kind_any) {
        if (want->data_type == t->md.data_type) {
            odn_buf_operand(s, arg, t->buf, &t->md);
            return XPB_OK;
        }
        odn_md_retype(&target, &t->md, want->data_type);
    }
    uint32_t phase = exe->cur_op < exe->prog->n_ops ? exe->op_phase[exe->cur_op] : ODN_NONE;
    for (uint32_t i = 0; i < exe->n_copies; i++) {
        const odn_copy *c = &exe->copies[i];
        if (c->tensor == tid && c->phase == phase && phase != ODN_NONE &&
            dnnl_memory_desc_equal(&c->md, &target)) {
            odn_buf_operand(s, arg, c->buf, &target);
            return XPB_OK;
        }
    }
    uint32_t tmp = ODN_NONE;
    if ((st = odn_buf_new(&tmp, exe, dnnl_memory_desc_get_size(&target), 0)) != XPB_OK)
        return st;
    int from_shadow = t->shadow_buf != ODN_NONE && target.data_type == dnnl_bf16;
    st = odn_emit_reorder(exe, ODN_LIST_STEPS, from_shadow ? t->shadow_buf : t->buf,
                          from_shadow ? &t->shadow_md : &t->md, tmp, &target);
    if (st != XPB_OK)
        return st;
    odn_buf_operand(s, arg, tmp, &target);
    if (exe->n_copies == exe->cap_copies) {
        uint32_t cap = exe->cap_copies ? 2 * exe->cap_copies : 32;
        odn_copy *c = realloc(exe->copies, cap * sizeof *c);
        if (!c)
            return XPB_OK; /* no reuse, still correct */
        exe->copies = c;
        exe->cap_copies = cap;
    }
    exe->copies[exe->n_copies++] = (odn_copy){tid, phase, tmp, target};
    return XPB_OK;
}

/* Copies of tensor `tid` go stale when it is written. */
static void forget_copies(xpb_executable *exe, uint32_t tid)
{
    for (uint32_t i = 0; i < exe->n_copies;)
        if (exe->copies[i].tensor == tid)
            exe->copies[i] = exe->copies[--exe->n_copies];
        else
            i++;
}

xpb_status odn_out(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                   const dnnl_memory_desc_t *have)
{
    odn_tensor *t = &exe->t[tid];
    xpb_status st;
    forget_copies(exe, tid);
    if (!t->decided) {
        if ((st = odn_decide(exe, tid, have)) != XPB_OK)
            return st;
    }
    if (dnnl_memory_desc_equal(&t->md, have) || same_bytes(&t->md, have)) {
        odn_buf_operand(s, arg, t->buf, have);
        return XPB_OK;
    }
    uint32_t tmp = ODN_NONE;
    if ((st = odn_buf_new(&tmp, exe, dnnl_memory_desc_get_size(have), 0)) != XPB_OK)
        return st;
    if ((st = odn_emit_reorder(exe, ODN_LIST_POST, tmp, have, t->buf, &t->md)) != XPB_OK)
        return st;
    odn_buf_operand(s, arg, tmp, have);
    return XPB_OK;
}

xpb_status odn_inout(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                     const dnnl_memory_desc_t *want)
{
    odn_tensor *t = &exe->t[tid];
    xpb_status st;
    forget_copies(exe, tid);
    if (!t->decided && (st = decide_for_read(exe, tid, want)) != XPB_OK)
        return st;
    if (!want || want->format_kind == dnnl_format_kind_any ||
        dnnl_memory_desc_equal(&t->md, want)) {
        if (want && want->format_kind == dnnl_format_kind_any && want->data_type != t->md.data_type)
            return odn_fail(exe, XPB_INTERNAL, "tensor %u: in-place operand of another type", tid);
        odn_buf_operand(s, arg, t->buf, &t->md);
        return XPB_OK;
    }
    uint32_t tmp = ODN_NONE;
    if ((st = odn_buf_new(&tmp, exe, dnnl_memory_desc_get_size(want), 0)) != XPB_OK)
        return st;
    if ((st = odn_emit_reorder(exe, ODN_LIST_STEPS, t->buf, &t->md, tmp, want)) != XPB_OK ||
        (st = odn_emit_reorder(exe, ODN_LIST_POST, tmp, want, t->buf, &t->md)) != XPB_OK)
        return st;
    odn_buf_operand(s, arg, tmp, want);
    return XPB_OK;
}

xpb_status odn_out_opt(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                       const dnnl_memory_desc_t *have)
{
    if (tid == XPB_NO_TENSOR)
        return odn_scratch_operand(exe, s, arg, have);
    return odn_out(exe, s, arg, tid, have);
}

xpb_status odn_scratch_operand(xpb_executable *exe, odn_step *s, int arg,
                               const dnnl_memory_desc_t *md)
{
    uint32_t b = ODN_NONE;
    xpb_status st = odn_buf_new(&b, exe, dnnl_memory_desc_get_size(md), 0);
    if (st != XPB_OK)
        return st;
    odn_buf_operand(s, arg, b, md);
    return XPB_OK;
}

/* ---- views of dense row-major storage (op set 3) ---- */

/* Tensor `tid`'s own shape, dense row-major, in data type `dt`. */
static void plain_of(const xpb_executable *exe, uint32_t tid, dnnl_data_type_t dt,
                     dnnl_memory_desc_t *md)
{
    odn_md_plain(md, xpb_program_tensor(exe->prog, tid), dt);
}

xpb_status odn_in_as(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                     const dnnl_memory_desc_t *view, const dnnl_memory_desc_t *want)
{
    dnnl_memory_desc_t plain;
    plain_of(exe, tid, view->data_type, &plain);
    odn_step probe; /* odn_in's reorder or copy, if any, lands in exe->steps */
    odn_step_init(&probe, exe, ODN_STEP_KERNEL);
    xpb_status st = odn_in(exe, &probe, 0, tid, &plain);
    if (st != XPB_OK)
        return st;
    uint32_t buf = probe.o[0].buf;
    if (!want || dnnl_memory_desc_equal(want, view)) {
        odn_buf_operand(s, arg, buf, view);
        return XPB_OK;
    }
    uint32_t tmp = ODN_NONE;
    if ((st = odn_buf_new(&tmp, exe, dnnl_memory_desc_get_size(want), 0)) != XPB_OK ||
        (st = odn_emit_reorder(exe, ODN_LIST_STEPS, buf, view, tmp, want)) != XPB_OK)
        return st;
    odn_buf_operand(s, arg, tmp, want);
    return XPB_OK;
}

xpb_status odn_out_as(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                      const dnnl_memory_desc_t *view, const dnnl_memory_desc_t *have)
{
    if (!have)
        have = view;
    if (tid == XPB_NO_TENSOR)
        return odn_scratch_operand(exe, s, arg, have);
    dnnl_memory_desc_t plain;
    plain_of(exe, tid, view->data_type, &plain);
    odn_tensor *t = &exe->t[tid];
    xpb_status st;
    forget_copies(exe, tid);
    if (!t->decided && (st = odn_decide(exe, tid, &plain)) != XPB_OK)
        return st;
    /* where the elements go in `plain`: the tensor's buffer, or a temporary reordered into
     * its storage after the step (the reorders below run in the order they are added) */
    int direct = dnnl_memory_desc_equal(&t->md, &plain) || same_bytes(&t->md, &plain);
    uint32_t target = t->buf;
    if (!direct && (st = odn_buf_new(&target, exe, dnnl_memory_desc_get_size(&plain), 0)) != XPB_OK)
        return st;
    if (dnnl_memory_desc_equal(have, view)) {
        odn_buf_operand(s, arg, target, view);
    } else {
        uint32_t tmp = ODN_NONE;
        if ((st = odn_buf_new(&tmp, exe, dnnl_memory_desc_get_size(have), 0)) != XPB_OK ||
            (st = odn_emit_reorder(exe, ODN_LIST_POST, tmp, have, target, view)) != XPB_OK)
            return st;
        odn_buf_operand(s, arg, tmp, have);
    }
    if (!direct)
        return odn_emit_reorder(exe, ODN_LIST_POST, target, &plain, t->buf, &t->md);
    return XPB_OK;
}
