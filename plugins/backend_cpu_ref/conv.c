/* Convolution kernels: CONV2D and CONV_T2D (PyTorch's Conv2d / ConvTranspose2d, groups 1),
 * forward, backward-data and backward-weights, all through im2col + ref_gemm.
 *
 * Everything is expressed with one convolution seen from the conv2d side: an "input" plane
 * set [in_c, in_h, in_w] (the larger side) and an "output" plane set [out_c, out_h, out_w],
 * related by a weight [out_c, in_c, kh, kw] and stride / pad / dilation:
 *
 *   out[k, oh, ow] = sum_{c,i,j} w[k, c, i, j] * in[c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
 *
 * Three routines do all the work:
 *   conv_forward:     out = W * im2col(in)                  (CONV2D, CONV_T2D_BWD_DATA)
 *   conv_adjoint:     in  = col2im(W^T * out)               (CONV2D_BWD_DATA, CONV_T2D)
 *   conv_weight_grad: dW  = sum_n out_n * im2col(in_n)^T    (both BWD_WEIGHTS)
 * A transposed convolution is exactly the adjoint of the conv2d whose weight is its own
 * weight [C, K, kh, kw] read as [out_c = C, in_c = K, kh, kw]: its x lives on the output
 * side and its y on the input side.
 *
 * im2col works on bands of output rows so that the column buffer stays below COL_BUDGET
 * floats whatever the image size. Compile's validation (the SDK's shape rules) has checked
 * every shape and attribute. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* Largest im2col buffer, in floats (16 MiB); a band is at least one output row. */
#define COL_BUDGET ((int64_t)1 << 22)

typedef struct conv_geom {
    int64_t batch;
    int64_t in_c, in_h, in_w;    /* conv2d input side */
    int64_t out_c, out_h, out_w; /* conv2d output side */
    int64_t kh, kw;
    int64_t sh, sw, ph, pw, dh, dw;
} conv_geom;

/* Geometry from the tensor on the input side ([N, in_c, in_h, in_w]), the tensor on the
 * output side ([N, out_c, out_h, out_w]) and any tensor shaped like the weight (kh, kw are its
 * last two dims). */
static conv_geom make_geom(const xpb_tensor_desc *in_side, const xpb_tensor_desc *out_side,
                           const xpb_tensor_desc *weight, const xpb_op_attrs *at)
{
    conv_geom g;
    g.batch = in_side->dims[0];
    g.in_c = in_side->dims[1];
    g.in_h = in_side->dims[2];
    g.in_w = in_side->dims[3];
    g.out_c = out_side->dims[1];
    g.out_h = out_side->dims[2];
    g.out_w = out_side->dims[3];
    g.kh = weight->dims[2];
    g.kw = weight->dims[3];
    g.sh = at->stride[0];
    g.sw = at->stride[1];
    g.ph = at->pad[0];
    g.pw = at->pad[1];
    g.dh = at->dilation[0];
    g.dw = at->dilation[1];
    return g;
}

/* Rows of the column matrix: one per (input channel, kernel row, kernel column). */
static int64_t col_rows(const conv_geom *g)
{
    return g->in_c * g->kh * g->kw;
}

/* Output rows per band, so that a band's column matrix fits in COL_BUDGET floats. */
static int64_t band_rows(const conv_geom *g)
{
    int64_t rows = COL_BUDGET / (col_rows(g) * g->out_w);
    if (rows < 1)
        rows = 1;
    return rows < g->out_h ? rows : g->out_h;
}

/* A column buffer for one band; NULL with a message in a->err when out of memory. The
 * caller owns the buffer and frees it. */
static float *alloc_col(const ref_op_args *a, const conv_geom *g)
{
    size_t floats = (size_t)(col_rows(g) * band_rows(g) * g->out_w);
    float *col = malloc(floats * sizeof *col);
    if (!col)
        snprintf(a->err, a->err_size, "%s (layer %s): out of memory for a %zu-float im2col buffer",
                 xpb_op_name(a->op->kind), a->op->layer ? a->op->layer : "?", floats);
    return col;
}

/* col[(c*kh + i)*kw + j][(oh - r0)*out_w + ow] = in[c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
 * (0 outside the image) for output rows oh in [r0, r1). `in` is one sample. */
static void im2col(const conv_geom *g, const float *in, int64_t r0, int64_t r1, float *col)
{
    int64_t band = (r1 - r0) * g->out_w;
    for (int64_t c = 0; c < g->in_c; c++) {
        const float *plane = in + c * g->in_h * g->in_w;
        for (int64_t i = 0; i < g->kh; i++) {
            for (int64_t j = 0; j < g->kw; j++) {
                float *dst = col + ((c * g->kh + i) * g->kw + j) * band;
                for (int64_t oh = r0; oh < r1; oh++) {
                    int64_t ih = oh * g->sh - g->ph + i * g->dh;
                    for (int64_t ow = 0; ow < g->out_w; ow++) {
                        int64_t iw = ow * g->sw - g->pw + j * g->dw;
                        int inside = ih >= 0 && ih < g->in_h && iw >= 0 && iw < g->in_w;
                        *dst++ = inside ? plane[ih * g->in_w + iw] : 0.0f;
                    }
                }
            }
        }
    }
}

/* The adjoint of im2col: adds every column entry back to the input pixel it came from. */
static void col2im_add(const conv_geom *g, const float *col, int64_t r0, int64_t r1, float *in)
{
    int64_t band = (r1 - r0) * g->out_w;
    for (int64_t c = 0; c < g->in_c; c++) {
        float *plane = in + c * g->in_h * g->in_w;
        for (int64_t i = 0; i < g->kh; i++) {
            for (int64_t j = 0; j < g->kw; j++) {
                const float *src = col + ((c * g->kh + i) * g->kw + j) * band;
                for (int64_t oh = r0; oh < r1; oh++) {
                    int64_t ih = oh * g->sh - g->ph + i * g->dh;
                    for (int64_t ow = 0; ow < g->out_w; ow++, src++) {
                        int64_t iw = ow * g->sw - g->pw + j * g->dw;
                        if (ih >= 0 && ih < g->in_h && iw >= 0 && iw < g->in_w)
                            plane[ih * g->in_w + iw] += *src;
                    }
                }
            }
        }
    }
}

/* out[n] = W[out_c, in_c*kh*kw] * im2col(in[n]) for every sample (out is overwritten). */
static xpb_status conv_forward(const ref_op_args *a, const conv_geom *g, const float *in,
                               const float *w, float *out)
{
    float *col = alloc_col(a, g);
    if (!col)
        return XPB_OUT_OF_MEMORY;
    int64_t rows = col_rows(g), band = band_rows(g);
    int64_t in_size = g->in_c * g->in_h * g->in_w, out_plane = g->out_h * g->out_w;
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t r0 = 0; r0 < g->out_h; r0 += band) {
            int64_t r1 = r0 + band < g->out_h ? r0 + band : g->out_h;
            int64_t cols = (r1 - r0) * g->out_w;
            im2col(g, in + n * in_size, r0, r1, col);
            /* out[n][:, r0*out_w .. r1*out_w) = W * col */
            ref_gemm(0, 0, g->out_c, cols, rows, 1.0f, w, rows, col, cols, 0.0f,
                     out + n * g->out_c * out_plane + r0 * g->out_w, out_plane);
        }
    }
    free(col);
    return XPB_OK;
}

/* in[n] = col2im(W^T * out[n]) for every sample (in is overwritten). */
static xpb_status conv_adjoint(const ref_op_args *a, const conv_geom *g, const float *out,
                               const float *w, float *in)
{
    float *col = alloc_col(a, g);
    if (!col)
        return XPB_OUT_OF_MEMORY;
    int64_t rows = col_rows(g), band = band_rows(g);
    int64_t in_size = g->in_c * g->in_h * g->in_w, out_plane = g->out_h * g->out_w;
    memset(in, 0, (size_t)(g->batch * in_size) * sizeof *in);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t r0 = 0; r0 < g->out_h; r0 += band) {
            int64_t r1 = r0 + band < g->out_h ? r0 + band : g->out_h;
            int64_t cols = (r1 - r0) * g->out_w;
            /* col = W^T * out[n][:, r0*out_w .. r1*out_w) */
            ref_gemm(1, 0, rows, cols, g->out_c, 1.0f, w, rows,
                     out + n * g->out_c * out_plane + r0 * g->out_w, out_plane, 0.0f, col, cols);
            col2im_add(g, col, r0, r1, in + n * in_size);
        }
    }
    free(col);
    return XPB_OK;
}

/* dw[out_c, in_c*kh*kw] = sum_n out[n] * im2col(in[n])^T (dw is overwritten). */
static xpb_status conv_weight_grad(const ref_op_args *a, const conv_geom *g, const float *out,
                                   const float *in, float *dw)
{
    float *col = alloc_col(a, g);
    if (!col)
        return XPB_OUT_OF_MEMORY;
    int64_t rows = col_rows(g), band = band_rows(g);
    int64_t in_size = g->in_c * g->in_h * g->in_w, out_plane = g->out_h * g->out_w;
    memset(dw, 0, (size_t)(g->out_c * rows) * sizeof *dw);
    for (int64_t n = 0; n < g->batch; n++) {
        for (int64_t r0 = 0; r0 < g->out_h; r0 += band) {
            int64_t r1 = r0 + band < g->out_h ? r0 + band : g->out_h;
            int64_t cols = (r1 - r0) * g->out_w;
            im2col(g, in + n * in_size, r0, r1, col);
            /* dw += out[n][:, band] * col^T */
            ref_gemm(0, 1, g->out_c, rows, cols, 1.0f,
                     out + n * g->out_c * out_plane + r0 * g->out_w, out_plane, col, cols, 1.0f, dw,
                     rows);
        }
    }
    free(col);
    return XPB_OK;
}

/* y[n, k, :] += b[k] over planes of `plane` elements. */
static void add_bias(float *y, const float *b, int64_t batch, int64_t channels, int64_t plane)
{
    for (int64_t n = 0; n < batch; n++)
        for (int64_t k = 0; k < channels; k++) {
            float *p = y + (n * channels + k) * plane;
            for (int64_t i = 0; i < plane; i++)
                p[i] += b[k];
        }
}

/* db[k] = sum over n and the plane of dy[n, k, :], accumulated in double. */
static void bias_grad(float *db, const float *dy, int64_t batch, int64_t channels, int64_t plane)
{
    for (int64_t k = 0; k < channels; k++) {
        double sum = 0.0;
        for (int64_t n = 0; n < batch; n++) {
            const float *p = dy + (n * channels + k) * plane;
            for (int64_t i = 0; i < plane; i++)
                sum += p[i];
        }
        db[k] = (float)sum;
    }
}

/* CONV2D(x, w[K,C,kh,kw], b[K] opt) -> y */
xpb_status ref_conv2d(const ref_op_args *a)
{
    conv_geom g = make_geom(a->in_desc[0], a->out_desc[0], a->in_desc[1], &a->op->attrs);
    xpb_status st = conv_forward(a, &g, a->in[0], a->in[1], a->out[0]);
    if (st == XPB_OK && a->op->n_inputs > 2)
        add_bias(a->out[0], a->in[2], g.batch, g.out_c, g.out_h * g.out_w);
    return st;
}

/* CONV2D_BWD_DATA(dy, w) -> dx */
xpb_status ref_conv2d_bwd_data(const ref_op_args *a)
{
    conv_geom g = make_geom(a->out_desc[0], a->in_desc[0], a->in_desc[1], &a->op->attrs);
    return conv_adjoint(a, &g, a->in[0], a->in[1], a->out[0]);
}

/* CONV2D_BWD_WEIGHTS(dy, x) -> dw, db opt */
xpb_status ref_conv2d_bwd_weights(const ref_op_args *a)
{
    conv_geom g = make_geom(a->in_desc[1], a->in_desc[0], a->out_desc[0], &a->op->attrs);
    xpb_status st = conv_weight_grad(a, &g, a->in[0], a->in[1], a->out[0]);
    if (st == XPB_OK && a->op->n_outputs > 1 && a->out[1])
        bias_grad(a->out[1], a->in[0], g.batch, g.out_c, g.out_h * g.out_w);
    return st;
}

/* CONV_T2D(x[N,C,H,W], w[C,K,kh,kw], b[K] opt) -> y[N,K,OH,OW]: the adjoint of the conv2d
 * from y's geometry to x's geometry. */
xpb_status ref_conv_t2d(const ref_op_args *a)
{
    conv_geom g = make_geom(a->out_desc[0], a->in_desc[0], a->in_desc[1], &a->op->attrs);
    xpb_status st = conv_adjoint(a, &g, a->in[0], a->in[1], a->out[0]);
    if (st == XPB_OK && a->op->n_inputs > 2)
        add_bias(a->out[0], a->in[2], g.batch, g.in_c, g.in_h * g.in_w);
    return st;
}

/* CONV_T2D_BWD_DATA(dy[N,K,OH,OW], w[C,K,kh,kw]) -> dx[N,C,H,W]: a conv2d of dy with w. */
xpb_status ref_conv_t2d_bwd_data(const ref_op_args *a)
{
    conv_geom g = make_geom(a->in_desc[0], a->out_desc[0], a->in_desc[1], &a->op->attrs);
    return conv_forward(a, &g, a->in[0], a->in[1], a->out[0]);
}

/* CONV_T2D_BWD_WEIGHTS(dy[N,K,OH,OW], x[N,C,H,W]) -> dw[C,K,kh,kw], db[K] opt:
 * dw[c, k, i, j] = sum x[n, c, h, w] * dy[n, k, h*sh - ph + i*dh, w*sw - pw + j*dw]. */
xpb_status ref_conv_t2d_bwd_weights(const ref_op_args *a)
{
    conv_geom g = make_geom(a->in_desc[0], a->in_desc[1], a->out_desc[0], &a->op->attrs);
    xpb_status st = conv_weight_grad(a, &g, a->in[1], a->in[0], a->out[0]);
    if (st == XPB_OK && a->op->n_outputs > 1 && a->out[1])
        bias_grad(a->out[1], a->in[0], g.batch, g.in_c, g.in_h * g.in_w);
    return st;
}
