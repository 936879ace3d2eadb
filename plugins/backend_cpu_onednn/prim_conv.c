/* Convolution and transposed convolution (oneDNN convolution / deconvolution primitives):
 * forward with bias and fused post-ops (eltwise, residual sum, folded batch norm), backward
 * data, backward weights. Layouts are left to oneDNN (format "any").
 *
 * Transposed-convolution weights are [C,K,kh,kw] in the program (PyTorch's ConvTranspose2d)
 * and {K,C,kh,kw} for oneDNN's deconvolution: the same bytes with dimensions 0 and 1 swapped
 * logically, so operands are matched in program order and handed to oneDNN swapped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"

typedef struct conv_geo {
    int deconv;
    int64_t src[4], wei[4], dst[4]; /* oneDNN order: wei is {K,C,kh,kw} */
    int64_t k;                      /* output channels */
    dnnl_dims_t strides, dil, pl, pr;
} conv_geo;

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* Geometry from (input x, weights w, output y) in program terms. */
static xpb_status geometry(xpb_executable *exe, conv_geo *g, const xpb_op *op, uint32_t x,
                           uint32_t w, uint32_t y)
{
    const xpb_tensor_desc *tx = T(exe, x), *tw = T(exe, w), *ty = T(exe, y);
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    if (tx->ndim != 4 || tw->ndim != 4 || ty->ndim != 4)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: input, weights and output must be 4-D",
                        label);
    g->deconv = op->kind == XPB_OP_CONV_T2D || op->kind == XPB_OP_CONV_T2D_BWD_DATA ||
                op->kind == XPB_OP_CONV_T2D_BWD_WEIGHTS;
    memcpy(g->src, tx->dims, sizeof g->src);
    memcpy(g->wei, tw->dims, sizeof g->wei);
    memcpy(g->dst, ty->dims, sizeof g->dst);
    if (g->deconv) {
        g->wei[0] = tw->dims[1];
        g->wei[1] = tw->dims[0];
    }
    g->k = g->wei[0];
    if (g->wei[1] != g->src[1] || g->wei[0] != g->dst[1] || g->src[0] != g->dst[0])
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "%s: channel counts of input [%lld,%lld,..], weights and output "
                        "[%lld,%lld,..] do not match",
                        label, (long long)g->src[0], (long long)g->src[1], (long long)g->dst[0],
                        (long long)g->dst[1]);
    const xpb_op_attrs *a = &op->attrs;
    for (int i = 0; i < 2; i++) {
        int64_t s = a->stride[i] > 0 ? a->stride[i] : 1,
                d = a->dilation[i] > 0 ? a->dilation[i] : 1;
        int64_t ext = (g->wei[2 + i] - 1) * d + 1;
        g->strides[i] = s;
        g->dil[i] = d - 1; /* oneDNN counts dilation from 0 */
        g->pl[i] = a->pad[i];
        if (a->pad[i] < 0 || a->output_padding[i] < 0)
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: negative padding", label);
        if (g->deconv) /* OH = (H-1)s - pl - pr + ext: pr = pad - output_padding */
            g->pr[i] = a->pad[i] - a->output_padding[i];
        else /* exact right padding for the given output size (floor mode) */
            g->pr[i] = (g->dst[2 + i] - 1) * s + ext - g->src[2 + i] - a->pad[i];
    }
    return XPB_OK;
}

/* Backward convolutions on feature maps of at most 16x16 are where oneDNN 2.6's first choice
 * (AMX, bf16) can be several times slower than another implementation: those are timed at
 * compile (tune.c); larger maps keep oneDNN's choice, which is good there. */
static int small_maps(const conv_geo *g)
{
    return g->dst[2] * g->dst[3] <= 256 && g->src[2] * g->src[3] <= 1024;
}

/* Forward convolutions are timed on small maps (above), and in inference programs on maps up to
 * CIFAR's 32x32 too (outputs of at most 1024 pixels, inputs of at most 64x64), where the gain
 * was measured; in training the forward's layouts are also the backward's, whose cost the
 * timing does not see, and the ImageNet-size maps keep oneDNN's first choice untimed (each
 * candidate's run there takes a large share of a second at batch 64). */
static int fwd_tuned_maps(const xpb_executable *exe, const conv_geo *g)
{
    if (small_maps(g))
        return 1;
    return !exe->prog->training && g->dst[2] * g->dst[3] <= 1024 && g->src[2] * g->src[3] <= 4096;
}

static dnnl_data_type_t compute_dt(const xpb_executable *exe)
{
    return exe->bf16 ? dnnl_bf16 : dnnl_f32;
}

static void any4(dnnl_memory_desc_t *md, const int64_t *dims, dnnl_data_type_t dt)
{
    odn_md_tag(md, 4, dims, dt, dnnl_format_tag_any);
}

static void bias_md(dnnl_memory_desc_t *md, int64_t k)
{
    odn_md_tag(md, 1, &k, dnnl_f32, dnnl_a);
}

static xpb_status fwd_desc(xpb_executable *exe, void *out, const conv_geo *g, dnnl_prop_kind_t prop,
                           const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wei,
                           const dnnl_memory_desc_t *bias, const dnnl_memory_desc_t *dst)
{
    if (g->deconv)
        ODN_TRY(exe,
                dnnl_dilated_deconvolution_forward_desc_init(out, prop, dnnl_deconvolution_direct,
                                                             src, wei, bias, dst, g->strides,
                                                             g->dil, g->pl, g->pr),
                "deconvolution forward descriptor");
    else
        ODN_TRY(exe,
                dnnl_dilated_convolution_forward_desc_init(out, prop, dnnl_convolution_direct, src,
                                                           wei, bias, dst, g->strides, g->dil,
                                                           g->pl, g->pr),
                "convolution forward descriptor");
    return XPB_OK;
}

/* The forward primitive descriptor a backward op uses as its hint (plain "any" layouts, as
 * the forward op of the training program chose them). */
static xpb_status hint_pd(dnnl_primitive_desc_t *out, xpb_executable *exe, const conv_geo *g)
{
    dnnl_memory_desc_t src, wei, dst;
    dnnl_data_type_t dt = compute_dt(exe);
    any4(&src, g->src, dt);
    any4(&wei, g->wei, dt);
    any4(&dst, g->dst, dt);
    union {
        dnnl_convolution_desc_t c;
        dnnl_deconvolution_desc_t d;
    } desc;
    memset(&desc, 0, sizeof desc); /* compared bytewise by the tuning cache */
    xpb_status st = fwd_desc(exe, &desc, g, dnnl_forward_training, &src, &wei, NULL, &dst);
    return st != XPB_OK ? st : odn_pd_create(out, exe, &desc, NULL, NULL, "forward hint");
}

/* Adds a weights operand: `md` is oneDNN's descriptor (swapped for deconvolutions). */
static xpb_status weights_in(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                             const dnnl_memory_desc_t *md, int deconv)
{
    if (!deconv)
        return odn_in(exe, s, arg, tid, md);
    dnnl_memory_desc_t prog;
    odn_md_swap01(&prog, md);
    xpb_status st = odn_in(exe, s, arg, tid, &prog);
    if (st == XPB_OK)
        s->o[s->n - 1].md = *md;
    return st;
}

static xpb_status weights_out(xpb_executable *exe, odn_step *s, int arg, uint32_t tid,
                              const dnnl_memory_desc_t *md, int deconv)
{
    if (!deconv)
        return odn_out(exe, s, arg, tid, md);
    dnnl_memory_desc_t prog;
    odn_md_swap01(&prog, md);
    xpb_status st = odn_out(exe, s, arg, tid, &prog);
    if (st == XPB_OK)
        s->o[s->n - 1].md = *md;
    return st;
}

/* ---- folded batch norm (inference): w' = w*s, b' = (b - mean)*s + beta, s = gamma/sqrt(var+eps)
 */

static xpb_status fold_kernel(odn_step *s)
{
    const float *w = s->o[0].ptr, *gamma = s->o[1].ptr, *beta = s->o[2].ptr, *mean = s->o[3].ptr,
                *var = s->o[4].ptr;
    const float *b = s->p[2] ? s->o[7].ptr : NULL;
    float *wf = s->o[5].ptr, *bf = s->o[6].ptr;
    int64_t k_count = s->p[0], per = s->p[1];
    float eps = s->f[0];
#pragma omp parallel for
    for (int64_t k = 0; k < k_count; k++) {
        float sc = gamma[k] / sqrtf(var[k] + eps);
        for (int64_t i = 0; i < per; i++)
            wf[k * per + i] = w[k * per + i] * sc;
        bf[k] = ((b ? b[k] : 0.0f) - mean[k]) * sc + beta[k];
    }
    return XPB_OK;
}

/* Prep steps that fold batch-norm op `bn` into the weights and bias of the current conv;
 * *wbuf / *bbuf receive buffers holding them in `wei_md` / plain f32 [K]. */
static xpb_status fold_prep(xpb_executable *exe, const conv_geo *g, uint32_t w, uint32_t b,
                            uint32_t bn, const dnnl_memory_desc_t *wei_md, uint32_t *wbuf,
                            uint32_t *bbuf)
{
    const xpb_op *bop = xpb_program_op(exe->prog, bn);
    xpb_status st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = fold_kernel;
    dnnl_memory_desc_t wplain, vec;
    odn_md_plain(&wplain, T(exe, w), dnnl_f32);
    bias_md(&vec, g->k);
    uint32_t ins[5] = {w, bop->inputs[1], bop->inputs[2], bop->inputs[3], bop->inputs[4]};
    for (int i = 0; i < 5; i++) {
        odn_tensor *t = &exe->t[ins[i]];
        const dnnl_memory_desc_t *want = i == 0 ? &wplain : &vec;
        if (!t->decided && (st = odn_decide(exe, ins[i], want)) != XPB_OK)
            return st;
        if (!dnnl_memory_desc_equal(&t->md, want))
            return odn_fail(exe, XPB_INTERNAL, "folding: tensor %u already stored otherwise",
                            ins[i]);
        odn_buf_operand(&s, i, t->buf, &t->md);
    }
    uint32_t wf = ODN_NONE, bf = ODN_NONE;
    if ((st = odn_buf_new(&wf, exe, dnnl_memory_desc_get_size(&wplain), 1)) != XPB_OK ||
        (st = odn_buf_new(&bf, exe, dnnl_memory_desc_get_size(&vec), 1)) != XPB_OK)
        return st;
    odn_buf_operand(&s, 5, wf, &wplain);
    odn_buf_operand(&s, 6, bf, &vec);
    s.p[0] = g->k;
    s.p[1] = g->wei[1] * g->wei[2] * g->wei[3];
    s.p[2] = b != ODN_NONE;
    s.f[0] = bop->attrs.eps;
    if (b != ODN_NONE) {
        odn_tensor *t = &exe->t[b];
        if (!t->decided && (st = odn_decide(exe, b, &vec)) != XPB_OK)
            return st;
        odn_buf_operand(&s, 7, t->buf, &t->md);
    }
    if ((st = odn_push_step(exe, ODN_LIST_PREP, &s)) != XPB_OK)
        return st;
    if ((st = odn_buf_new(wbuf, exe, dnnl_memory_desc_get_size(wei_md), 1)) != XPB_OK)
        return st;
    *bbuf = bf;
    return odn_emit_reorder(exe, ODN_LIST_PREP, wf, &wplain, *wbuf, wei_md);
}

/* ---- forward ---- */

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    const odn_fuse *f = &exe->fuse[exe->cur_op];
    uint32_t x = op->inputs[0], w = op->inputs[1], b = op->n_inputs > 2 ? op->inputs[2] : ODN_NONE;
    uint32_t y = f->out_tensor;
    conv_geo g;
    xpb_status st = geometry(exe, &g, op, x, w, y);
    if (st != XPB_OK)
        return st;
    int fold = f->bn_op != ODN_NONE;
    dnnl_data_type_t dt = compute_dt(exe);
    dnnl_memory_desc_t src, wei, bias, dst;
    any4(&src, g.src, dt);
    any4(&wei, g.wei, dt);
    bias_md(&bias, g.k);
    const dnnl_memory_desc_t *fixed =
        f->sum_tensor != ODN_NONE ? odn_tensor_md(exe, f->sum_tensor) : odn_tensor_md(exe, y);
    if (fixed)
        dst = *fixed;
    else
        any4(&dst, g.dst, odn_pref_dt(exe, y));
    union {
        dnnl_convolution_desc_t c;
        dnnl_deconvolution_desc_t d;
    } desc;
    memset(&desc, 0, sizeof desc); /* compared bytewise by the tuning cache */
    dnnl_prop_kind_t prop = exe->prog->training ? dnnl_forward_training : dnnl_forward_inference;
    int has_bias = b != ODN_NONE || fold;
    if ((st = fwd_desc(exe, &desc, &g, prop, &src, &wei, has_bias ? &bias : NULL, &dst)) != XPB_OK)
        return st;
    dnnl_post_ops_t po = NULL;
    if ((st = odn_fused_post_ops(&po, exe, exe->cur_op)) != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    /* oneDNN 2.6's first choice on small maps in fp32 (brgconv, NHWC) runs at a third of its
     * own blocked jit kernel's speed on VGG16's 2x2 maps (130 vs 364 GFLOP/s, 512 channels,
     * batch 128) and at 60% on 4x4, and at 91% on ResNet-18's 32x32 maps on an AMD Zen 5 (44.3
     * vs 40.5 ms, 64 channels, batch 128): fwd_tuned_maps says which are timed, in every
     * precision. */
    const char *what = g.deconv ? "deconvolution" : "convolution";
    const int targs[1] = {DNNL_ARG_SRC};
    const dnnl_memory_desc_t *twant[1] = {odn_tensor_md(exe, x)};
    st = fwd_tuned_maps(exe, &g) ? odn_pd_tuned(&s.pd, exe, &desc, sizeof desc, po, ODN_TUNE_FP32,
                                                NULL, targs, twant, 1, what)
                                 : odn_pd_create(&s.pd, exe, &desc, po, NULL, what);
    if (po)
        dnnl_post_ops_destroy(po);
    if (st != XPB_OK)
        return st;
    const dnnl_memory_desc_t *pw = odn_pd_md(s.pd, dnnl_query_weights_md);
    if ((st = odn_in(exe, &s, DNNL_ARG_SRC, x, odn_pd_md(s.pd, dnnl_query_src_md))) != XPB_OK)
        goto fail;
    if (fold) {
        uint32_t wbuf = ODN_NONE, bbuf = ODN_NONE;
        if ((st = fold_prep(exe, &g, w, b, f->bn_op, pw, &wbuf, &bbuf)) != XPB_OK)
            goto fail;
        odn_buf_operand(&s, DNNL_ARG_WEIGHTS, wbuf, pw);
        odn_buf_operand(&s, DNNL_ARG_BIAS, bbuf, &bias);
    } else {
        if ((st = weights_in(exe, &s, DNNL_ARG_WEIGHTS, w, pw, g.deconv)) != XPB_OK)
            goto fail;
        if (b != ODN_NONE && (st = odn_in(exe, &s, DNNL_ARG_BIAS, b, &bias)) != XPB_OK)
            goto fail;
    }
    const dnnl_memory_desc_t *pdst = odn_pd_md(s.pd, dnnl_query_dst_md);
    if (f->sum_tensor != ODN_NONE) {
        /* The result accumulates onto the other addend's buffer, which becomes y's. When that
         * buffer is shared with a view, y gets its own copy of the addend first. */
        const odn_tensor *o = &exe->t[f->sum_tensor];
        if (!o->decided || !dnnl_memory_desc_equal(&o->md, pdst)) {
            st = odn_fail(exe, XPB_INTERNAL, "residual sum: addend stored otherwise");
            goto fail;
        }
        if (!o->aliased && !exe->t[y].decided) {
            st = odn_alias(exe, y, f->sum_tensor, pdst);
            exe->t[y].aliased = exe->t[f->sum_tensor].aliased = 0;
        } else {
            if (!exe->t[y].decided && (st = odn_decide(exe, y, pdst)) != XPB_OK)
                goto fail;
            if (!dnnl_memory_desc_equal(&exe->t[y].md, pdst)) {
                st = odn_fail(exe, XPB_INTERNAL, "residual sum: output stored otherwise");
                goto fail;
            }
            st = odn_emit_reorder(exe, ODN_LIST_STEPS, o->buf, &o->md, exe->t[y].buf, pdst);
        }
        if (st != XPB_OK)
            goto fail;
        odn_buf_operand(&s, DNNL_ARG_DST, exe->t[y].buf, pdst);
    } else if ((st = odn_out(exe, &s, DNNL_ARG_DST, y, pdst)) != XPB_OK) {
        goto fail;
    }
    return odn_commit(exe, &s);
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

/* ---- backward data ---- */

static xpb_status compile_bwd_data(xpb_executable *exe, const xpb_op *op)
{
    uint32_t dy = op->inputs[0], w = op->inputs[1], dx = op->outputs[0];
    conv_geo g;
    xpb_status st = geometry(exe, &g, op, dx, w, dy);
    if (st != XPB_OK)
        return st;
    dnnl_data_type_t dt = compute_dt(exe);
    dnnl_memory_desc_t dsrc, wei, ddst;
    any4(&dsrc, g.src, dt);
    any4(&wei, g.wei, dt);
    any4(&ddst, g.dst, dt);
    union {
        dnnl_convolution_desc_t c;
        dnnl_deconvolution_desc_t d;
    } desc;
    memset(&desc, 0, sizeof desc); /* compared bytewise by the tuning cache */
    if (g.deconv)
        ODN_TRY(exe,
                dnnl_dilated_deconvolution_backward_data_desc_init(
                    &desc.d, dnnl_deconvolution_direct, &dsrc, &wei, &ddst, g.strides, g.dil, g.pl,
                    g.pr),
                "deconvolution backward-data descriptor");
    else
        ODN_TRY(exe,
                dnnl_dilated_convolution_backward_data_desc_init(&desc.c, dnnl_convolution_direct,
                                                                 &dsrc, &wei, &ddst, g.strides,
                                                                 g.dil, g.pl, g.pr),
                "convolution backward-data descriptor");
    dnnl_primitive_desc_t hint;
    if ((st = hint_pd(&hint, exe, &g)) != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    const int targs[1] = {DNNL_ARG_DIFF_DST};
    const dnnl_memory_desc_t *twant[1] = {odn_tensor_md(exe, dy)};
    st = small_maps(&g) ? odn_pd_tuned(&s.pd, exe, &desc, sizeof desc, NULL, 0, hint, targs, twant,
                                       1, "backward data")
                        : odn_pd_create(&s.pd, exe, &desc, NULL, hint, "backward data");
    dnnl_primitive_desc_destroy(hint);
    if (st != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, dy, odn_pd_md(s.pd, dnnl_query_diff_dst_md))) !=
            XPB_OK ||
        (st = weights_in(exe, &s, DNNL_ARG_WEIGHTS, w, odn_pd_md(s.pd, dnnl_query_weights_md),
                         g.deconv)) != XPB_OK ||
        (st = odn_out(exe, &s, DNNL_ARG_DIFF_SRC, dx, odn_pd_md(s.pd, dnnl_query_diff_src_md))) !=
            XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

/* ---- backward weights ---- */

static xpb_status bwd_weights_desc(xpb_executable *exe, void *desc, const conv_geo *g,
                                   const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dwei,
                                   const dnnl_memory_desc_t *dbias, const dnnl_memory_desc_t *ddst)
{
    if (g->deconv)
        ODN_TRY(exe,
                dnnl_dilated_deconvolution_backward_weights_desc_init(
                    desc, dnnl_deconvolution_direct, src, dwei, dbias, ddst, g->strides, g->dil,
                    g->pl, g->pr),
                "deconvolution backward-weights descriptor");
    else
        ODN_TRY(exe,
                dnnl_dilated_convolution_backward_weights_desc_init(
                    desc, dnnl_convolution_direct, src, dwei, dbias, ddst, g->strides, g->dil,
                    g->pl, g->pr),
                "convolution backward-weights descriptor");
    return XPB_OK;
}

static xpb_status compile_bwd_weights(xpb_executable *exe, const xpb_op *op)
{
    uint32_t dy = op->inputs[0], x = op->inputs[1], dw = op->outputs[0];
    uint32_t db = op->n_outputs > 1 ? op->outputs[1] : ODN_NONE;
    conv_geo g;
    xpb_status st = geometry(exe, &g, op, x, dw, dy);
    if (st != XPB_OK)
        return st;
    dnnl_data_type_t dt = compute_dt(exe);
    dnnl_memory_desc_t src, dwei, dbias, ddst;
    any4(&src, g.src, dt);
    any4(&dwei, g.wei, dnnl_f32);
    any4(&ddst, g.dst, dt);
    bias_md(&dbias, g.k);
    union {
        dnnl_convolution_desc_t c;
        dnnl_deconvolution_desc_t d;
    } desc;
    memset(&desc, 0, sizeof desc); /* compared bytewise by the tuning cache */
    dnnl_primitive_desc_t hint;
    if ((st = bwd_weights_desc(exe, &desc, &g, &src, &dwei, db != ODN_NONE ? &dbias : NULL,
                               &ddst)) != XPB_OK ||
        (st = hint_pd(&hint, exe, &g)) != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    const int targs[2] = {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC};
    const dnnl_memory_desc_t *twant[2] = {odn_tensor_md(exe, dy), odn_tensor_md(exe, x)};
    st = small_maps(&g) ? odn_pd_tuned(&s.pd, exe, &desc, sizeof desc, NULL, 0, hint, targs, twant,
                                       2, "backward weights")
                        : odn_pd_create(&s.pd, exe, &desc, NULL, hint, "backward weights");
    if (st != XPB_OK) {
        dnnl_primitive_desc_destroy(hint);
        return st;
    }
    if (!g.deconv && small_maps(&g)) {
        odn_conv_shape c = {g.src[0],     g.src[1], g.src[2], g.src[3],     g.k,
                            g.wei[2],     g.wei[3], g.dst[2], g.dst[3],     g.strides[0],
                            g.strides[1], g.pl[0],  g.pl[1],  g.dil[0] + 1, g.dil[1] + 1};
        if (odn_lowered_bwdw_wins(exe, &c, dt, odn_tensor_md(exe, x), odn_tensor_md(exe, dy),
                                  db != ODN_NONE, s.pd)) {
            dnnl_primitive_desc_destroy(hint);
            dnnl_primitive_desc_destroy(s.pd);
            return odn_emit_lowered_bwdw(exe, &c, dt, dy, x, dw, db);
        }
    }
    /* Prefer writing the gradient straight in its parameter's layout, so that the optimizer
     * needs no reorder, when oneDNN has the same implementation for it. */
    const xpb_tensor_desc *tdw = T(exe, dw);
    uint32_t param = tdw->grad_of;
    const dnnl_memory_desc_t *pmd =
        param < exe->prog->n_tensors && !exe->t[dw].decided ? odn_tensor_md(exe, param) : NULL;
    if (pmd && pmd->data_type == dnnl_f32) {
        dnnl_memory_desc_t forced = *pmd;
        if (g.deconv)
            odn_md_swap01(&forced, pmd);
        union {
            dnnl_convolution_desc_t c;
            dnnl_deconvolution_desc_t d;
        } d2;
        if (bwd_weights_desc(exe, &d2, &g, &src, &forced, db != ODN_NONE ? &dbias : NULL, &ddst) ==
            XPB_OK)
            odn_pd_prefer(exe, &s.pd, &d2, hint);
    }
    dnnl_primitive_desc_destroy(hint);
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, dy, odn_pd_md(s.pd, dnnl_query_diff_dst_md))) !=
            XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_SRC, x, odn_pd_md(s.pd, dnnl_query_src_md))) != XPB_OK ||
        (st = weights_out(exe, &s, DNNL_ARG_DIFF_WEIGHTS, dw,
                          odn_pd_md(s.pd, dnnl_query_diff_weights_md), g.deconv)) != XPB_OK ||
        (db != ODN_NONE && (st = odn_out(exe, &s, DNNL_ARG_DIFF_BIAS, db, &dbias)) != XPB_OK)) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

xpb_status odn_compile_conv(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    if (op->n_inputs < 2 || op->n_outputs < 1)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: %u inputs / %u outputs", label,
                        op->n_inputs, op->n_outputs);
    switch (op->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
        return compile_fwd(exe, op);
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_DATA:
        return compile_bwd_data(exe, op);
    default:
        return compile_bwd_weights(exe, op);
    }
}
