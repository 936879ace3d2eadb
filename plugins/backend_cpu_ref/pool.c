/* Pooling kernels (PyTorch's MaxPool2d, AvgPool2d, AdaptiveAvgPool2d(1)) and their backward
 * ops, floor mode. Windows start at oh*stride - pad; padding is -inf for max pooling and zero
 * for average pooling. Sums are accumulated in double, as PyTorch's CPU kernels do.
 * Compile's validation (the SDK's shape rules) has checked every shape and attribute
 * (pad <= kernel / 2, so every window holds at least one input element). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref.h"

/* Pooling geometry of one op: planes = N*C, input planes [h, w], output planes [oh, ow]. */
typedef struct pool_geom {
    int64_t planes;
    int64_t h, w, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw;
} pool_geom;

static pool_geom make_geom(const xpb_tensor_desc *in, const xpb_tensor_desc *out,
                           const xpb_op_attrs *at)
{
    pool_geom g;
    g.planes = in->dims[0] * in->dims[1];
    g.h = in->dims[2];
    g.w = in->dims[3];
    g.oh = out->dims[2];
    g.ow = out->dims[3];
    g.kh = at->kernel[0];
    g.kw = at->kernel[1];
    g.sh = at->stride[0];
    g.sw = at->stride[1];
    g.ph = at->pad[0];
    g.pw = at->pad[1];
    return g;
}

/* The window of output (oy, ox) clipped to the image: rows [*h0, *h1), cols [*w0, *w1). */
static void window(const pool_geom *g, int64_t oy, int64_t ox, int64_t *h0, int64_t *h1,
                   int64_t *w0, int64_t *w1)
{
    int64_t hs = oy * g->sh - g->ph, ws = ox * g->sw - g->pw;
    *h0 = hs > 0 ? hs : 0;
    *w0 = ws > 0 ? ws : 0;
    *h1 = hs + g->kh < g->h ? hs + g->kh : g->h;
    *w1 = ws + g->kw < g->w ? ws + g->kw : g->w;
}

/* MAXPOOL(x) -> y, ws_index opt (I32, h*W + w of the maximum within its plane). The first
 * maximum in row-major window order wins; a NaN wins over numbers (PyTorch's rule). */
xpb_status ref_maxpool(const ref_op_args *a)
{
    pool_geom g = make_geom(a->in_desc[0], a->out_desc[0], &a->op->attrs);
    const float *x = a->in[0];
    float *y = a->out[0];
    int32_t *index = a->op->n_outputs > 1 ? (int32_t *)(void *)a->out[1] : NULL;
    for (int64_t p = 0; p < g.planes; p++) {
        const float *xp = x + p * g.h * g.w;
        for (int64_t oy = 0; oy < g.oh; oy++) {
            for (int64_t ox = 0; ox < g.ow; ox++) {
                int64_t h0, h1, w0, w1;
                window(&g, oy, ox, &h0, &h1, &w0, &w1);
                float best = -INFINITY;
                int64_t best_at = h0 * g.w + w0;
                for (int64_t i = h0; i < h1; i++)
                    for (int64_t j = w0; j < w1; j++) {
                        float v = xp[i * g.w + j];
                        if (v > best || isnan(v)) {
                            best = v;
                            best_at = i * g.w + j;
                        }
                    }
                int64_t o = (p * g.oh + oy) * g.ow + ox;
                y[o] = best;
                if (index)
                    index[o] = (int32_t)best_at;
            }
        }
    }
    return XPB_OK;
}

/* MAXPOOL_BWD(dy, ws_index) -> dx: dx[plane][index] += dy. */
xpb_status ref_maxpool_bwd(const ref_op_args *a)
{
    pool_geom g = make_geom(a->out_desc[0], a->in_desc[0], &a->op->attrs);
    const float *dy = a->in[0];
    const int32_t *index = (const int32_t *)(const void *)a->in[1];
    float *dx = a->out[0];
    int64_t plane = g.h * g.w, out_plane = g.oh * g.ow;
    memset(dx, 0, (size_t)(g.planes * plane) * sizeof *dx);
    for (int64_t p = 0; p < g.planes; p++) {
        for (int64_t o = 0; o < out_plane; o++) {
            int32_t at = index[p * out_plane + o];
            if (at < 0 || at >= plane) {
                snprintf(a->err, a->err_size,
                         "MAXPOOL_BWD (layer '%s'): ws_index %ld at element %lld is outside the "
                         "%lldx%lld input plane",
                         a->op->layer ? a->op->layer : "?", (long)at,
                         (long long)(p * out_plane + o), (long long)g.h, (long long)g.w);
                return XPB_INVALID_ARGUMENT;
            }
            dx[p * plane + at] += dy[p * out_plane + o];
        }
    }
    return XPB_OK;
}

/* The divisor of window (oy, ox): kh*kw with count_include_pad (the window clipped to the
 * padded image, which in floor mode is always the full window), otherwise the number of
 * in-bounds elements. */
static double avg_divisor(const pool_geom *g, const xpb_op_attrs *at, int64_t oy, int64_t ox)
{
    int64_t h0, h1, w0, w1;
    if (at->count_include_pad) {
        int64_t hs = oy * g->sh - g->ph, ws = ox * g->sw - g->pw;
        int64_t he = hs + g->kh < g->h + g->ph ? hs + g->kh : g->h + g->ph;
        int64_t we = ws + g->kw < g->w + g->pw ? ws + g->kw : g->w + g->pw;
        return (double)((he - hs) * (we - ws));
    }
    window(g, oy, ox, &h0, &h1, &w0, &w1);
    return (double)((h1 - h0) * (w1 - w0));
}

/* AVGPOOL(x) -> y */
xpb_status ref_avgpool(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    pool_geom g = make_geom(a->in_desc[0], a->out_desc[0], at);
    const float *x = a->in[0];
    float *y = a->out[0];
    for (int64_t p = 0; p < g.planes; p++) {
        const float *xp = x + p * g.h * g.w;
        for (int64_t oy = 0; oy < g.oh; oy++) {
            for (int64_t ox = 0; ox < g.ow; ox++) {
                int64_t h0, h1, w0, w1;
                window(&g, oy, ox, &h0, &h1, &w0, &w1);
                double sum = 0.0;
                for (int64_t i = h0; i < h1; i++)
                    for (int64_t j = w0; j < w1; j++)
                        sum += xp[i * g.w + j];
                y[(p * g.oh + oy) * g.ow + ox] = (float)(sum / avg_divisor(&g, at, oy, ox));
            }
        }
    }
    return XPB_OK;
}

/* AVGPOOL_BWD(dy) -> dx: every element of a window receives dy / divisor. */
xpb_status ref_avgpool_bwd(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    pool_geom g = make_geom(a->out_desc[0], a->in_desc[0], at);
    const float *dy = a->in[0];
    float *dx = a->out[0];
    memset(dx, 0, (size_t)(g.planes * g.h * g.w) * sizeof *dx);
    for (int64_t p = 0; p < g.planes; p++) {
        float *dxp = dx + p * g.h * g.w;
        for (int64_t oy = 0; oy < g.oh; oy++) {
            for (int64_t ox = 0; ox < g.ow; ox++) {
                int64_t h0, h1, w0, w1;
                window(&g, oy, ox, &h0, &h1, &w0, &w1);
                float share =
                    (float)(dy[(p * g.oh + oy) * g.ow + ox] / avg_divisor(&g, at, oy, ox));
                for (int64_t i = h0; i < h1; i++)
                    for (int64_t j = w0; j < w1; j++)
                        dxp[i * g.w + j] += share;
            }
        }
    }
    return XPB_OK;
}

/* GLOBAL_AVGPOOL(x[N,C,H,W]) -> y[N,C,1,1]: the mean of each plane. */
xpb_status ref_global_avgpool(const ref_op_args *a)
{
    const xpb_tensor_desc *d = a->in_desc[0];
    int64_t planes = d->dims[0] * d->dims[1], plane = d->dims[2] * d->dims[3];
    const float *x = a->in[0];
    float *y = a->out[0];
    for (int64_t p = 0; p < planes; p++) {
        double sum = 0.0;
        for (int64_t i = 0; i < plane; i++)
            sum += x[p * plane + i];
        y[p] = (float)(sum / (double)plane);
    }
    return XPB_OK;
}

/* GLOBAL_AVGPOOL_BWD(dy[N,C,1,1]) -> dx[N,C,H,W] = dy / (H*W). */
xpb_status ref_global_avgpool_bwd(const ref_op_args *a)
{
    const xpb_tensor_desc *d = a->out_desc[0];
    int64_t planes = d->dims[0] * d->dims[1], plane = d->dims[2] * d->dims[3];
    const float *dy = a->in[0];
    float *dx = a->out[0];
    for (int64_t p = 0; p < planes; p++) {
        float share = (float)((double)dy[p] / (double)plane);
        for (int64_t i = 0; i < plane; i++)
            dx[p * plane + i] = share;
    }
    return XPB_OK;
}
