/* Storage decisions and step operands: every tensor gets one layout and data type (the first
 * op that writes it decides, or for host-written tensors the first op that reads it), and an
 * op that needs something else gets a reorder into a temporary buffer. This is the only place
 * that inserts layout and precision conversions between ops. */
#include <stdlib.h>
#include <string.h>

#include "odn.h"

int odn_channel_runs_of(const dnnl_memory_desc_t *md, odn_channel_runs *l)
{
    if (md->format_kind != dnnl_blocked || md->ndims != 4)
        return 0;
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    l->sn = b->strides[0];
    l->sh = b->strides[2];
    l->sw = b->strides[3];
    l->sg = b->strides[1];
    if (b->inner_nblks == 0) {
        int nhwc = b->strides[1] == 1 && md->dims[1] > 1; /* channels innermost */
        l->groups = nhwc ? 1 : md->padded_dims[1];
        l->vec = nhwc ? md->padded_dims[1] : 1;
        return 1;
    }
    if (b->inner_nblks == 1 && b->inner_idxs[0] == 1) {
        l->vec = b->inner_blks[0];
        l->groups = md->padded_dims[1] / l->vec;
        return 1;
    }
    return 0;
}

void odn_md_tag(dnnl_memory_desc_t *md, int ndims, const int64_t *dims, dnnl_data_type_t dt,
                dnnl_format_tag_t tag)
{
    dnnl_dims_t d = {0};
    for (int i = 0; i < ndims; i++)
        d[i] = dims[i];
    dnnl_memory_desc_init_by_tag(md, ndims, d, dt, tag);
}

static dnnl_format_tag_t plain_tag(int ndims)
{
    static const dnnl_format_tag_t tags[] = {dnnl_a,   dnnl_a,    dnnl_ab,
                                             dnnl_abc, dnnl_abcd, dnnl_abcde};
    return ndims >= 1 && ndims <= 5 ? tags[ndims] : dnnl_a;
}

void odn_md_plain(dnnl_memory_desc_t *md, const xpb_tensor_desc *t, dnnl_data_type_t dt)
{
    odn_md_tag(md, (int)t->ndim, t->dims, dt, plain_tag((int)t->ndim));
}

/* Element offset of logical index idx in a blocked descriptor. */
static int64_t blocked_offset(const dnnl_memory_desc_t *md, const int64_t *idx)
{
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    int64_t block[DNNL_MAX_NDIMS], off = md->offset0;
    for (int d = 0; d < md->ndims; d++)
        block[d] = 1;
    for (int j = 0; j < b->inner_nblks; j++)
        block[b->inner_idxs[j]] *= b->inner_blks[j];
    for (int d = 0; d < md->ndims; d++)
        off += idx[d] / block[d] * b->strides[d];
    /* inside the innermost block: a mixed-radix number over the blocks, the last fastest */
    int64_t rem[DNNL_MAX_NDIMS] = {0}, inner = 0;
    for (int d = 0; d < md->ndims; d++)
        rem[d] = idx[d] % block[d];
    for (int j = 0; j < b->inner_nblks; j++) {
        int d = (int)b->inner_idxs[j];
        block[d] /= b->inner_blks[j];
        inner = inner * b->inner_blks[j] + rem[d] / block[d];
        rem[d] %= block[d];
    }
    return off + inner;
}

int odn_md_is_plain(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked)
        return 0;
    dnnl_memory_desc_t p;
    odn_md_tag(&p, md->ndims, md->dims, md->data_type, plain_tag(md->ndims));
    if (dnnl_memory_desc_equal(&p, md))
        return 1;
    /* Other descriptors may still place every element where row-major would, e.g. nChw16c
     * with H = W = 1 and C a multiple of 16 (a flattened feature map): check small ones. */
    int64_t n = 1;
    for (int d = 0; d < md->ndims; d++) {
        if (md->padded_dims[d] != md->dims[d])
            return 0;
        n *= md->dims[d];
    }
    if (n > (1 << 22) || dnnl_memory_desc_get_size(md) != dnnl_memory_desc_get_size(&p))
        return 0;
    int64_t idx[DNNL_MAX_NDIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        if (blocked_offset(md, idx) != i)
            return 0;
        for (int d = md->ndims - 1; d >= 0; d--) { /* next index, row-major */
            if (++idx[d] < md->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return 1;
}

void odn_md_swap01(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in)
{
    static const int perm[DNNL_MAX_NDIMS] = {1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    if (in->format_kind == dnnl_format_kind_any) {
        int64_t d[DNNL_MAX_NDIMS];
        for (int i = 0; i < in->ndims; i++)
            d[i] = in->dims[perm[i]];
        odn_md_tag(out, in->ndims, d, in->data_type, dnnl_format_tag_any);
        return;
    }
    dnnl_memory_desc_permute_axes(out, in, perm);
}

void odn_md_like(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *ref, int ndims,
                 const int64_t *dims, dnnl_data_type_t dt)
{
    static const dnnl_format_tag_t tags4[] = {dnnl_abcd, dnnl_aBcd16b, dnnl_aBcd8b,
                                              dnnl_acdb, dnnl_aBcd32b, dnnl_aBcd4b};
    static const dnnl_format_tag_t tags2[] = {dnnl_ab, dnnl_ba};
    const dnnl_format_tag_t *tags = ndims == 4 ? tags4 : tags2;
    size_t n = ndims == 4   ? sizeof tags4 / sizeof tags4[0]
               : ndims == 2 ? sizeof tags2 / sizeof tags2[0]
                            : 0;
    for (size_t i = 0; ref && ref->ndims == ndims && i < n; i++) {
        dnnl_memory_desc_t cand;
        int64_t rd[DNNL_MAX_NDIMS];
        for (int k = 0; k < ndims; k++)
            rd[k] = ref->dims[k];
        odn_md_tag(&cand, ndims, rd, ref->data_type, tags[i]);
        if (dnnl_memory_desc_equal(&cand, ref)) {
            odn_md_tag(out, ndims, dims, dt, tags[i]);
            return;
        }
    }
    odn_md_tag(out, ndims, dims, dt, plain_tag(ndims));
}

void odn_md_retype(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in, dnnl_data_type_t dt)
{
    *out = *in;
    out->data_type = dt; /* strides count elements: the layout stays the same */
}

const dnnl_memory_desc_t *odn_tensor_md(const xpb_executable *exe, uint32_t tid)
{
    return exe->t[tid].decided ? &exe->t[tid].md : NULL;
}

xpb_status odn_buf_new(uint32_t *out, xpb_executable *exe, size_t bytes, int pinned)
{
    if (exe->n_bufs == exe->cap_bufs) {
        uint32_t cap = exe->cap_bufs ? 2 * exe->cap_bufs : 256;
        odn_buf *b = realloc(exe->bufs, cap * sizeof *b);
        if (!b)
            return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory (buffers)");
        exe->bufs = b;
        exe->cap_bufs = cap;
    }
    odn_buf *b = &exe->bufs[exe->n_bufs];
    memset(b, 0, sizeof *b);
    b->bytes = bytes ? bytes : 1;
    b->first = UINT32_MAX;
    b->last = 0;
    b->pinned = pinned;
    *out = exe->n_bufs++;
    return XPB_OK;
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

void odn_step_init(odn_step *s, xpb_executable *exe, uint32_t kind)
{
    memset(s, 0, sizeof *s);
    s->op = exe->cur_op;
    s->kind = kind;
}

void odn_buf_operand(odn_step *s, int arg, uint32_t buf, const dnnl_memory_desc_t *md)
{
    odn_operand *o = &s->o[s->n++];
    o->arg = arg;
    o->buf = buf;
    o->md = *md;
}

xpb_status odn_push_step(xpb_executable *exe, int list, odn_step *s)
{
    odn_step **arr = list == ODN_LIST_POST   ? &exe->post
                     : list == ODN_LIST_PREP ? &exe->prep
                                             : &exe->steps;
    uint32_t *n = list == ODN_LIST_POST   ? &exe->n_post
                  : list == ODN_LIST_PREP ? &exe->n_prep
                                          : &exe->n_steps;
    uint32_t *cap = list == ODN_LIST_POST   ? &exe->cap_post
                    : list == ODN_LIST_PREP ? &exe->cap_prep
                                            : &exe->cap_steps;
    if (*n == *cap) {
        uint32_t c = *cap ? 2 * *cap : 64;
        odn_step *a = realloc(*arr, c * sizeof *a);
        if (!a) {
            if (s->pd)
                dnnl_primitive_desc_destroy(s->pd);
            s->pd = NULL;
            return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory (steps)");
        }
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = *s;
    return XPB_OK;
}

xpb_status odn_pd_create(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *op_desc,
                         const_dnnl_post_ops_t post_ops, const_dnnl_primitive_desc_t hint,
                         const char *what)
{
    dnnl_primitive_attr_t attr;
    *out = NULL;
    ODN_TRY(exe, dnnl_primitive_attr_create(&attr), "primitive attributes");
    dnnl_status_t s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success && post_ops)
        s = dnnl_primitive_attr_set_post_ops(attr, post_ops);
    if (s == dnnl_success)
        s = dnnl_primitive_desc_create(out, op_desc, attr, exe->be->engine, hint);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) {
        *out = NULL;
        return odn_dnnl_fail(exe, s, what);
    }
    return XPB_OK;
}

static const char *impl_name(const_dnnl_primitive_desc_t pd)
{
    const char *s = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s);
    return s ? s : "";
}

void odn_pd_prefer(xpb_executable *exe, dnnl_primitive_desc_t *pd, const void *alt_desc,
                   const_dnnl_primitive_desc_t hint)
{
    dnnl_primitive_desc_t alt = NULL;
    char saved[ODN_ERR_SIZE];
    memcpy(saved, exe->err, sizeof saved);
    if (odn_pd_create(&alt, exe, alt_desc, NULL, hint, "alternative") == XPB_OK) {
        if (strcmp(impl_name(alt), impl_name(*pd)) == 0) {
            dnnl_primitive_desc_destroy(*pd);
            *pd = alt;
        } else {
            dnnl_primitive_desc_destroy(alt);
        }
    }
    memcpy(exe->err, saved, sizeof saved);
}

const dnnl_memory_desc_t *odn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what)
{
    return dnnl_primitive_desc_query_md(pd, what, 0);
}

xpb_status odn_emit_reorder(xpb_executable *exe, int list, uint32_t src_buf,
                            const dnnl_memory_desc_t *src_md, uint32_t dst_buf,
                            const dnnl_memory_desc_t *dst_md)
{
    dnnl_primitive_attr_t attr;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    ODN_TRY(exe, dnnl_primitive_attr_create(&attr), "reorder attributes");
    dnnl_status_t st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success)
        st = dnnl_reorder_primitive_desc_create(&s.pd, src_md, exe->be->engine, dst_md,
                                                exe->be->engine, attr);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return odn_dnnl_fail(exe, st, "reorder");
    odn_buf_operand(&s, DNNL_ARG_FROM, src_buf, src_md);
    odn_buf_operand(&s, DNNL_ARG_TO, dst_buf, dst_md);
    return odn_push_step(exe, list, &s);
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

xpb_status odn_commit(xpb_executable *exe, odn_step *s)
{
    xpb_status st = odn_push_step(exe, ODN_LIST_STEPS, s);
    for (uint32_t i = 0; i < exe->n_post; i++) {
        if (st == XPB_OK)
            st = odn_push_step(exe, ODN_LIST_STEPS, &exe->post[i]);
        else if (exe->post[i].pd)
            dnnl_primitive_desc_destroy(exe->post[i].pd);
    }
    exe->n_post = 0;
    return st;
}
