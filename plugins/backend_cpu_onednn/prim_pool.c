/* Max, average and global average pooling and their backward ops on oneDNN's pooling
 * primitive. Max pooling's WORKSPACE tensor holds oneDNN's own workspace (argmax in its
 * format): the backward op reuses the forward primitive descriptor as its hint so the two
 * agree. Padding: max ignores padded cells (PyTorch pads with -inf); average divides by the
 * full window (count_include_pad) or by the in-bounds cells. Floor mode: the right padding is
 * derived from the output size. */
#include <string.h>

#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

typedef struct pool_geo {
    dnnl_alg_kind_t alg;
    dnnl_dims_t strides, kernel, pl, pr;
} pool_geo;

/* Geometry of pooling input x -> output y of op `op`. */
static xpb_status geometry(xpb_executable *exe, pool_geo *g, const xpb_op *op,
                           const xpb_tensor_desc *x, const xpb_tensor_desc *y)
{
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    if (x->ndim != 4 || y->ndim != 4 || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: expects [N,C,H,W] -> [N,C,OH,OW]", label);
    int global = op->kind == XPB_OP_GLOBAL_AVGPOOL || op->kind == XPB_OP_GLOBAL_AVGPOOL_BWD;
    int max = op->kind == XPB_OP_MAXPOOL || op->kind == XPB_OP_MAXPOOL_BWD;
    g->alg = max                                     ? dnnl_pooling_max
             : global || op->attrs.count_include_pad ? dnnl_pooling_avg_include_padding
                                                     : dnnl_pooling_avg_exclude_padding;
    for (int i = 0; i < 2; i++) {
        int64_t in = x->dims[2 + i], out = y->dims[2 + i];
        int64_t k = global ? in : op->attrs.kernel[i];
        int64_t s = global ? 1 : (op->attrs.stride[i] > 0 ? op->attrs.stride[i] : k);
        int64_t p = global ? 0 : op->attrs.pad[i];
        if (k < 1 || p < 0 || (global && out != 1))
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: bad kernel %lld / pad %lld", label,
                            (long long)k, (long long)p);
        g->kernel[i] = k;
        g->strides[i] = s;
        g->pl[i] = p;
        g->pr[i] = (out - 1) * s + k - in - p;
    }
    return XPB_OK;
}

static xpb_status fwd_desc(xpb_executable *exe, dnnl_pooling_desc_t *d, const pool_geo *g,
                           dnnl_prop_kind_t prop, const dnnl_memory_desc_t *src,
                           const dnnl_memory_desc_t *dst)
{
    ODN_TRY(exe,
            dnnl_pooling_forward_desc_init(d, prop, g->alg, src, dst, g->strides, g->kernel, g->pl,
                                           g->pr),
            "pooling descriptor");
    return XPB_OK;
}

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    uint32_t x = op->inputs[0], y = op->outputs[0];
    pool_geo g;
    xpb_status st = geometry(exe, &g, op, T(exe, x), T(exe, y));
    if (st != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    if ((st = odn_in(exe, &s, DNNL_ARG_SRC, x, NULL)) != XPB_OK)
        return st;
    dnnl_memory_desc_t src = s.o[0].md, dst;
    odn_md_tag(&dst, 4, T(exe, y)->dims, src.data_type, dnnl_format_tag_any);
    int with_ws = op->kind == XPB_OP_MAXPOOL && exe->prog->training && op->n_outputs > 1 &&
                  op->outputs[1] != XPB_NO_TENSOR;
    dnnl_pooling_desc_t d;
    if ((st = fwd_desc(exe, &d, &g, with_ws ? dnnl_forward_training : dnnl_forward_inference, &src,
                       &dst)) != XPB_OK ||
        (st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "pooling")) != XPB_OK)
        return st;
    if ((st = odn_out(exe, &s, DNNL_ARG_DST, y, odn_pd_md(s.pd, dnnl_query_dst_md))) != XPB_OK)
        goto fail;
    if (with_ws) {
        uint32_t ws = op->outputs[1];
        const dnnl_memory_desc_t *wmd = odn_pd_md(s.pd, dnnl_query_workspace_md);
        if (exe->t[ws].decided) {
            st = odn_fail(exe, XPB_INTERNAL, "max-pool workspace written twice");
            goto fail;
        }
        if ((st = odn_out(exe, &s, DNNL_ARG_WORKSPACE, ws, wmd)) != XPB_OK)
            goto fail;
        exe->t[ws].producer_step = exe->n_steps;
    }
    return odn_commit(exe, &s);
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

/* The storage of the input of the forward op that backward op `op` belongs to (the autodiff
 * gives both the same layer name), when it has dx's shape; NULL when there is none. */
static const dnnl_memory_desc_t *forward_input_md(const xpb_executable *exe, const xpb_op *op,
                                                  uint32_t dx)
{
    uint32_t fwd_kind = op->kind == XPB_OP_AVGPOOL_BWD ? XPB_OP_AVGPOOL : XPB_OP_GLOBAL_AVGPOOL;
    for (uint32_t j = exe->cur_op; j-- > 0;) {
        const xpb_op *f = xpb_program_op(exe->prog, j);
        if (f->kind != fwd_kind || !f->layer || !op->layer || strcmp(f->layer, op->layer) != 0)
            continue;
        const xpb_tensor_desc *a = T(exe, f->inputs[0]), *b = T(exe, dx);
        if (a->ndim == b->ndim && memcmp(a->dims, b->dims, sizeof a->dims) == 0)
            return odn_tensor_md(exe, f->inputs[0]);
        return NULL;
    }
    return NULL;
}

static xpb_status compile_bwd(xpb_executable *exe, const xpb_op *op)
{
    int max = op->kind == XPB_OP_MAXPOOL_BWD;
    uint32_t dy = op->inputs[0], dx = op->outputs[0];
    pool_geo g;
    xpb_status st = geometry(exe, &g, op, T(exe, dx), T(exe, dy));
    if (st != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    dnnl_primitive_desc_t hint = NULL;
    int own_hint = 0;
    dnnl_memory_desc_t dsrc, ddst;
    if (max) {
        uint32_t ws = op->inputs[1];
        uint32_t ps = exe->t[ws].producer_step;
        if (op->n_inputs < 2 || ps == ODN_NONE) {
            char label[256];
            odn_op_label(exe, exe->cur_op, label, sizeof label);
            return odn_fail(exe, XPB_UNSUPPORTED,
                            "%s: its workspace must come from a MAXPOOL of the same program "
                            "(cpu_onednn keeps oneDNN's argmax there)",
                            label);
        }
        hint = exe->steps[ps].pd;
        dsrc = *odn_pd_md(hint, dnnl_query_src_md);
        ddst = *odn_pd_md(hint, dnnl_query_dst_md);
    } else {
        /* the hint: a forward pooling over dx's shape in the layout the forward op's input
         * had (so that dx comes out where the next backward op wants it), else dy's */
        const dnnl_memory_desc_t *dmd = odn_tensor_md(exe, dy);
        const dnnl_memory_desc_t *xmd = forward_input_md(exe, op, dx);
        dnnl_data_type_t dt = dmd ? dmd->data_type : odn_pref_dt(exe, dy);
        odn_md_like(&dsrc, xmd ? xmd : dmd, 4, T(exe, dx)->dims, dt);
        odn_md_like(&ddst, xmd ? &dsrc : dmd, 4, T(exe, dy)->dims, dt);
        dnnl_pooling_desc_t fd;
        if ((st = fwd_desc(exe, &fd, &g, dnnl_forward_training, &dsrc, &ddst)) != XPB_OK ||
            (st = odn_pd_create(&hint, exe, &fd, NULL, NULL, "pooling")) != XPB_OK)
            return st;
        own_hint = 1;
    }
    dnnl_pooling_desc_t bd;
    dnnl_status_t r =
        dnnl_pooling_backward_desc_init(&bd, g.alg, &dsrc, &ddst, g.strides, g.kernel, g.pl, g.pr);
    if (r != dnnl_success)
        st = odn_dnnl_fail(exe, r, "pooling backward descriptor");
    else
        st = odn_pd_create(&s.pd, exe, &bd, NULL, hint, "pooling backward");
    if (own_hint)
        dnnl_primitive_desc_destroy(hint);
    if (st != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, dy, odn_pd_md(s.pd, dnnl_query_diff_dst_md))) !=
            XPB_OK ||
        (max && (st = odn_in(exe, &s, DNNL_ARG_WORKSPACE, op->inputs[1],
                             odn_pd_md(s.pd, dnnl_query_workspace_md))) != XPB_OK) ||
        (st = odn_out(exe, &s, DNNL_ARG_DIFF_SRC, dx, odn_pd_md(s.pd, dnnl_query_diff_src_md))) !=
            XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

xpb_status odn_compile_pool(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    if (op->n_inputs < 1 || op->n_outputs < 1) {
        char label[256];
        odn_op_label(exe, exe->cur_op, label, sizeof label);
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: missing input or output", label);
    }
    switch (op->kind) {
    case XPB_OP_MAXPOOL:
    case XPB_OP_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL:
        return compile_fwd(exe, op);
    default:
        return compile_bwd(exe, op);
    }
}
