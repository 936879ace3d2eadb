/* Convolutions of the cuDNN stand-in against naive loops: forward, backward data and backward
 * filter on an odd shape with asymmetric padding, stride and dilation, both convolution modes,
 * packed NCHW, NHWC and padded (non-packed) strides for every operand, alpha and beta, and
 * grouped convolution, on the fallback engine (exact fp32 inputs, fp32 accumulation). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "standin_dnn_util.h"

struct shape {
    int64_t n, c, h, w;  /* X */
    int64_t k, cg, r, s; /* W: [K, C / groups, R, S] */
    int64_t p, q;        /* Y's spatial size */
};

enum { FWD, BWD_DATA, BWD_FILTER };
enum { PACKED, NHWC, PADDED };

static cudnnHandle_t handle;

static int setup(void **state)
{
    (void)state;
    return cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cudnnDestroy(handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static struct shape make_shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t cg,
                               int64_t r, int64_t s, const struct conv_geom *g)
{
    struct shape sh = {n, c, h, w, k, cg, r, s, 0, 0};
    sh.p = 1 + (h + g->pre[0] + g->post[0] - ((r - 1) * g->dil[0] + 1)) / g->stride[0];
    sh.q = 1 + (w + g->pre[1] + g->post[1] - ((s - 1) * g->dil[1] + 1)) / g->stride[1];
    return sh;
}

static void strides_of(int layout, const int64_t *d, int64_t *s)
{
    if (layout == NHWC) {
        nhwc_strides(d, s);
    } else if (layout == PADDED) {
        s[3] = 1;
        s[2] = d[3] + 3;
        s[1] = s[2] * (d[2] + 1);
        s[0] = s[1] * d[1] + 5;
    } else {
        packed_strides(4, d, s);
    }
}

/* The tap of W that meets input offset (r, s) of the window, by mode. */
static int64_t tap(const struct shape *sh, const struct conv_geom *g, int64_t r, int64_t s)
{
    if (g->mode == CUDNN_CONVOLUTION) {
        r = sh->r - 1 - r;
        s = sh->s - 1 - s;
    }
    return r * sh->s + s;
}

/* The naive convolutions, dense NCHW arrays, double accumulation: out gets what `kind` computes
 * from a (X or dY) and b (W or dY). */
static void reference(int kind, const struct shape *sh, const struct conv_geom *g, const float *a,
                      const float *b, double *out)
{
    int64_t groups = sh->c / sh->cg, kg = sh->k / groups;
    int64_t xn = sh->c * sh->h * sh->w, yn = sh->k * sh->p * sh->q, wn = sh->cg * sh->r * sh->s;
    int64_t total = kind == FWD ? sh->n * yn : kind == BWD_DATA ? sh->n * xn : sh->k * wn;
    memset(out, 0, (size_t)total * sizeof(double));
    for (int64_t n = 0; n < sh->n; n++)
        for (int64_t k = 0; k < sh->k; k++)
            for (int64_t c = 0; c < sh->cg; c++)
                for (int64_t p = 0; p < sh->p; p++)
                    for (int64_t q = 0; q < sh->q; q++)
                        for (int64_t r = 0; r < sh->r; r++)
                            for (int64_t s = 0; s < sh->s; s++) {
                                int64_t ih = p * g->stride[0] - g->pre[0] + r * g->dil[0];
                                int64_t iw = q * g->stride[1] - g->pre[1] + s * g->dil[1];
                                if (ih < 0 || ih >= sh->h || iw < 0 || iw >= sh->w)
                                    continue;
                                int64_t ci = (k / kg) * sh->cg + c;
                                int64_t xi = n * xn + (ci * sh->h + ih) * sh->w + iw;
                                int64_t yi = n * yn + (k * sh->p + p) * sh->q + q;
                                int64_t wi = k * wn + c * sh->r * sh->s + tap(sh, g, r, s);
                                if (kind == FWD)
                                    out[yi] += (double)a[xi] * b[wi];
                                else if (kind == BWD_DATA)
                                    out[xi] += (double)a[yi] * b[wi];
                                else
                                    out[wi] += (double)a[xi] * b[yi];
                            }
}

static float *random_values(int64_t n, uint64_t seed)
{
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        v[i] = test_rand(&seed);
    return v;
}

/* Runs one convolution of `kind` on the stand-in (fallback engine) and compares it with the
 * reference; layouts of the image (X or dX), the filter and the response (Y or dY). */
static void run_case(int kind, const struct shape *sh, const struct conv_geom *g, int lx, int lw,
                     int ly, float alpha, float beta)
{
    int64_t xd[4] = {sh->n, sh->c, sh->h, sh->w}, wd[4] = {sh->k, sh->cg, sh->r, sh->s};
    int64_t yd[4] = {sh->n, sh->k, sh->p, sh->q}, xs[4], ws[4], ys[4];
    strides_of(lx, xd, xs);
    strides_of(lw, wd, ws);
    strides_of(ly, yd, ys);
    int64_t xn = sh->n * sh->c * sh->h * sh->w, wn = sh->k * sh->cg * sh->r * sh->s,
            yn = sh->n * sh->k * sh->p * sh->q;
    float *xv = random_values(xn, 11), *wv = random_values(wn, 22), *yv = random_values(yn, 33);
    /* operands and result by kind: the result's previous value is random too (for beta) */
    desc_t tx = tensor('x', CUDNN_DATA_FLOAT, 4, xd, xs, false);
    desc_t tw = tensor('w', CUDNN_DATA_FLOAT, 4, wd, ws, false);
    desc_t ty = tensor('y', CUDNN_DATA_FLOAT, 4, yd, ys, false);
    float *dx = device_tensor(4, xd, xs, xv), *dw = device_tensor(4, wd, ws, wv),
          *dy = device_tensor(4, yd, ys, yv);
    desc_t conv = conv_desc(g), op;
    if (kind == FWD)
        op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, tx, tw, ty, conv,
                          alpha, beta);
    else if (kind == BWD_DATA)
        op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, ty, tw, tx,
                          conv, alpha, beta);
    else
        op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, tx, ty,
                          tw, conv, alpha, beta);
    DNN_OK(cudnnBackendFinalize(op));
    desc_t graph = op_graph(1, &op), plan = NULL;
    int64_t ws_bytes = -1;
    DNN_OK(plan_on(graph, 0, &plan, &ws_bytes));
    assert_int_equal(ws_bytes, 0);
    int64_t uids[3] = {'x', 'w', 'y'};
    void *ptrs[3] = {dx, dw, dy};
    DNN_OK(run_pack(handle, plan, 3, uids, ptrs, NULL));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);

    int64_t n_out = kind == FWD ? yn : kind == BWD_DATA ? xn : wn;
    double *want = malloc((size_t)n_out * sizeof(double));
    const float *prev = kind == FWD ? yv : kind == BWD_DATA ? xv : wv;
    if (kind == FWD)
        reference(FWD, sh, g, xv, wv, want);
    else if (kind == BWD_DATA)
        reference(BWD_DATA, sh, g, yv, wv, want);
    else
        reference(BWD_FILTER, sh, g, xv, yv, want);
    float *got = kind == FWD        ? host_tensor(4, yd, ys, dy)
                 : kind == BWD_DATA ? host_tensor(4, xd, xs, dx)
                                    : host_tensor(4, wd, ws, dw);
    for (int64_t i = 0; i < n_out; i++) {
        double w = alpha * want[i] + beta * prev[i];
        if (fabs(got[i] - w) > 1e-5 * (1.0 + fabs(w))) {
            fprintf(stderr, "kind %d layouts %d/%d/%d mode %d: element %ld: %.8g, want %.8g\n",
                    kind, lx, lw, ly, g->mode, (long)i, got[i], w);
            fail();
        }
    }
    free(got);
    free(want);
    free(xv);
    free(wv);
    free(yv);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
    desc_t all[] = {tx, tw, ty, conv, op, graph, plan};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cudnnBackendDestroyDescriptor(all[i]);
}

static const struct conv_geom odd = {{1, 0}, {2, 1}, {2, 1}, {1, 2}, CUDNN_CROSS_CORRELATION};

static void all_layouts(int kind, struct conv_geom g)
{
    struct shape sh = make_shape(2, 3, 7, 6, 4, 3, 3, 2, &g);
    assert_int_equal(sh.p, 4);
    assert_int_equal(sh.q, 5);
    const int layouts[][3] = {{PACKED, PACKED, PACKED},
                              {NHWC, NHWC, NHWC},
                              {PADDED, NHWC, PADDED},
                              {NHWC, PADDED, PACKED}};
    for (int m = 0; m < 2; m++) {
        g.mode = m ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
            run_case(kind, &sh, &g, layouts[l][0], layouts[l][1], layouts[l][2], 1.0f, 0.0f);
    }
}

static void test_forward(void **state)
{
    (void)state;
    all_layouts(FWD, odd);
}

static void test_backward_data(void **state)
{
    (void)state;
    all_layouts(BWD_DATA, odd);
}

static void test_backward_filter(void **state)
{
    (void)state;
    all_layouts(BWD_FILTER, odd);
}

static void test_alpha_beta(void **state)
{
    (void)state;
    struct shape sh = make_shape(2, 3, 7, 6, 4, 3, 3, 2, &odd);
    for (int kind = FWD; kind <= BWD_FILTER; kind++)
        run_case(kind, &sh, &odd, NHWC, PACKED, PADDED, 0.5f, 0.25f);
}

static void test_groups(void **state)
{
    (void)state;
    struct conv_geom g = {{1, 1}, {1, 1}, {1, 1}, {1, 1}, CUDNN_CROSS_CORRELATION};
    struct shape sh = make_shape(2, 4, 5, 5, 6, 2, 3, 3, &g); /* 2 groups */
    for (int kind = FWD; kind <= BWD_FILTER; kind++)
        run_case(kind, &sh, &g, PACKED, PACKED, NHWC, 1.0f, 0.0f);
}

static void test_stride_larger_than_window(void **state)
{
    (void)state;
    struct conv_geom g = {{0, 2}, {0, 0}, {3, 4}, {1, 1}, CUDNN_CONVOLUTION};
    struct shape sh = make_shape(1, 2, 8, 9, 3, 2, 2, 1, &g);
    for (int kind = FWD; kind <= BWD_FILTER; kind++)
        run_case(kind, &sh, &g, PADDED, PACKED, PACKED, 1.0f, 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward),         cmocka_unit_test(test_backward_data),
        cmocka_unit_test(test_backward_filter), cmocka_unit_test(test_alpha_beta),
        cmocka_unit_test(test_groups),          cmocka_unit_test(test_stride_larger_than_window),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
