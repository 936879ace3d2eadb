/* Fused graphs of the cuDNN stand-in against naive loops: a forward convolution with a bias
 * broadcast from [1, K, 1, 1] and a ReLU (plain and leaky) through virtual tensors, a residual add
 * and tanh, a backward-data convolution followed by ReLU's backward, and a pointwise-only graph;
 * and the patterns no engine runs (a backward-filter convolution with an epilogue). */
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

static cudnnHandle_t handle;
/* X [2, 3, 6, 5] * W [4, 3, 3, 3], padding 1, stride 1 -> Y [2, 4, 6, 5] */
static const int64_t xd[4] = {2, 3, 6, 5}, wd[4] = {4, 3, 3, 3}, yd[4] = {2, 4, 6, 5},
                     bd[4] = {1, 4, 1, 1};
static const struct conv_geom same = {{1, 1}, {1, 1}, {1, 1}, {1, 1}, CUDNN_CROSS_CORRELATION};
enum { NX = 180, NW = 108, NY = 240 };

static float xv[NX], wv[NW], yv[NY], bv[4];

static int setup(void **state)
{
    (void)state;
    uint64_t s = 99;
    for (int i = 0; i < NX; i++)
        xv[i] = test_rand(&s);
    for (int i = 0; i < NW; i++)
        wv[i] = test_rand(&s);
    for (int i = 0; i < NY; i++)
        yv[i] = test_rand(&s);
    for (int i = 0; i < 4; i++)
        bv[i] = test_rand(&s);
    return cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cudnnDestroy(handle) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

/* The convolution forward of xv and wv (with `same`), dense NCHW. */
static void conv_ref(double *y)
{
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 4; k++)
            for (int p = 0; p < 6; p++)
                for (int q = 0; q < 5; q++) {
                    double s = 0.0;
                    for (int c = 0; c < 3; c++)
                        for (int r = 0; r < 3; r++)
                            for (int t = 0; t < 3; t++) {
                                int h = p - 1 + r, w = q - 1 + t;
                                if (h >= 0 && h < 6 && w >= 0 && w < 5)
                                    s += (double)xv[((n * 3 + c) * 6 + h) * 5 + w] *
                                         wv[((k * 3 + c) * 3 + r) * 3 + t];
                            }
                    y[((n * 4 + k) * 6 + p) * 5 + q] = s;
                }
}

/* The convolution backward data of yv (as dY) and wv, dense NCHW. */
static void dgrad_ref(double *dx)
{
    memset(dx, 0, NX * sizeof(double));
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 4; k++)
            for (int p = 0; p < 6; p++)
                for (int q = 0; q < 5; q++)
                    for (int c = 0; c < 3; c++)
                        for (int r = 0; r < 3; r++)
                            for (int t = 0; t < 3; t++) {
                                int h = p - 1 + r, w = q - 1 + t;
                                if (h >= 0 && h < 6 && w >= 0 && w < 5)
                                    dx[((n * 3 + c) * 6 + h) * 5 + w] +=
                                        (double)yv[((n * 4 + k) * 6 + p) * 5 + q] *
                                        wv[((k * 3 + c) * 3 + r) * 3 + t];
                            }
}

static desc_t t4(int64_t uid, const int64_t *d, bool v)
{
    int64_t s[4];
    packed_strides(4, d, s);
    return tensor(uid, CUDNN_DATA_FLOAT, 4, d, s, v);
}

static float *dev4(const int64_t *d, const float *vals)
{
    int64_t s[4];
    packed_strides(4, d, s);
    return device_tensor(4, d, s, vals);
}

/* Plans the graph on its heuristics' first engine and runs it; the result 'o' compared with
 * want (n elements, of dims od). */
static void run_and_check(int n_ops, desc_t *ops, int n, const int64_t *uids, void **ptrs,
                          const double *want, int64_t n_out, const int64_t *od, float *out)
{
    desc_t g = op_graph(n_ops, ops), plan = NULL;
    int64_t ws = 0;
    DNN_OK(plan_on(g, 0, &plan, &ws));
    DNN_OK(run_pack(handle, plan, n, uids, ptrs, NULL));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int64_t s[4];
    packed_strides(4, od, s);
    float *got = host_tensor(4, od, s, out);
    for (int64_t i = 0; i < n_out; i++)
        if (fabs(got[i] - want[i]) > 1e-5 * (1.0 + fabs(want[i]))) {
            fprintf(stderr, "element %ld: %.8g, want %.8g\n", (long)i, got[i], want[i]);
            fail();
        }
    free(got);
    cudnnBackendDestroyDescriptor(plan);
    cudnnBackendDestroyDescriptor(g);
}

static void conv_bias_act(cudnnPointwiseMode_t act, double slope)
{
    desc_t conv =
        conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, t4('x', xd, false),
                     t4('w', wd, false), t4('c', yd, true), conv_desc(&same), 1.0f, 0.0f);
    DNN_OK(cudnnBackendFinalize(conv));
    desc_t bias = pointwise_op(CUDNN_POINTWISE_ADD, t4('c', yd, true), t4('b', bd, false),
                               t4('s', yd, true), 0.0);
    desc_t relu = pointwise_op(act, t4('s', yd, true), NULL, t4('o', yd, false), slope);
    desc_t ops[3] = {relu, conv, bias}; /* any order: the graph orders them */
    float *x = dev4(xd, xv), *w = dev4(wd, wv), *b = dev4(bd, bv), *o = dev4(yd, NULL);
    double want[NY];
    conv_ref(want);
    for (int i = 0; i < NY; i++) {
        double v = want[i] + bv[(i / 30) % 4];
        want[i] = act == CUDNN_POINTWISE_TANH_FWD ? tanh(v) : v > 0 ? v : slope * v;
    }
    int64_t uids[4] = {'x', 'w', 'b', 'o'};
    void *ptrs[4] = {x, w, b, o};
    run_and_check(3, ops, 4, uids, ptrs, want, NY, yd, o);
    cudaFree(x);
    cudaFree(w);
    cudaFree(b);
    cudaFree(o);
}

static void test_conv_bias_relu(void **state)
{
    (void)state;
    conv_bias_act(CUDNN_POINTWISE_RELU_FWD, 0.0);
    conv_bias_act(CUDNN_POINTWISE_RELU_FWD, 0.2); /* leaky */
    conv_bias_act(CUDNN_POINTWISE_TANH_FWD, 0.0);
}

static void test_conv_residual(void **state)
{
    (void)state;
    desc_t conv =
        conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, t4('x', xd, false),
                     t4('w', wd, false), t4('c', yd, true), conv_desc(&same), 1.0f, 0.0f);
    DNN_OK(cudnnBackendFinalize(conv));
    desc_t add = pointwise_op(CUDNN_POINTWISE_ADD, t4('c', yd, true), t4('r', yd, false),
                              t4('o', yd, false), 0.0);
    desc_t ops[2] = {conv, add};
    float *x = dev4(xd, xv), *w = dev4(wd, wv), *r = dev4(yd, yv), *o = dev4(yd, NULL);
    double want[NY];
    conv_ref(want);
    for (int i = 0; i < NY; i++)
        want[i] += yv[i];
    int64_t uids[4] = {'x', 'w', 'r', 'o'};
    void *ptrs[4] = {x, w, r, o};
    run_and_check(2, ops, 4, uids, ptrs, want, NY, yd, o);
    cudaFree(x);
    cudaFree(w);
    cudaFree(r);
    cudaFree(o);
}

static void test_dgrad_relu_backward(void **state)
{
    (void)state;
    /* dX = relu'(X) * conv_bwd_data(dY, W), with the forward input X (xv) */
    desc_t dgrad = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                t4('y', yd, false), t4('w', wd, false), t4('d', xd, true),
                                conv_desc(&same), 1.0f, 0.0f);
    DNN_OK(cudnnBackendFinalize(dgrad));
    desc_t drelu = pointwise_op(CUDNN_POINTWISE_RELU_BWD, t4('x', xd, false), t4('d', xd, true),
                                t4('o', xd, false), 0.0);
    desc_t ops[2] = {dgrad, drelu};
    float *x = dev4(xd, xv), *w = dev4(wd, wv), *y = dev4(yd, yv), *o = dev4(xd, NULL);
    double want[NX];
    dgrad_ref(want);
    for (int i = 0; i < NX; i++)
        want[i] = xv[i] > 0.0f ? want[i] : 0.0;
    int64_t uids[4] = {'x', 'w', 'y', 'o'};
    void *ptrs[4] = {x, w, y, o};
    run_and_check(2, ops, 4, uids, ptrs, want, NX, xd, o);
    cudaFree(x);
    cudaFree(w);
    cudaFree(y);
    cudaFree(o);
}

static void test_pointwise_only_and_unsupported(void **state)
{
    (void)state;
    desc_t mul = pointwise_op(CUDNN_POINTWISE_MUL, t4('y', yd, false), t4('b', bd, false),
                              t4('o', yd, false), 0.0);
    float *y = dev4(yd, yv), *b = dev4(bd, bv), *o = dev4(yd, NULL);
    double want[NY];
    for (int i = 0; i < NY; i++)
        want[i] = (double)yv[i] * bv[(i / 30) % 4];
    int64_t uids[3] = {'y', 'b', 'o'};
    void *ptrs[3] = {y, b, o};
    run_and_check(1, &mul, 3, uids, ptrs, want, NY, yd, o);
    /* a backward-filter convolution does not fuse: no engine */
    desc_t wgrad = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                                t4('x', xd, false), t4('y', yd, false), t4('d', wd, true),
                                conv_desc(&same), 1.0f, 0.0f);
    DNN_OK(cudnnBackendFinalize(wgrad));
    desc_t scale =
        pointwise_op(CUDNN_POINTWISE_IDENTITY, t4('d', wd, true), NULL, t4('o', wd, false), 0.0);
    desc_t ops[2] = {wgrad, scale}, g = op_graph(2, ops), h;
    h = make_desc(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set_attr(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    set_attr(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    DNN_OK(cudnnBackendFinalize(h));
    int64_t n = -1;
    DNN_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                    0, &n, NULL));
    assert_int_equal(n, 0);
    desc_t plan = NULL;
    int64_t ws = 0;
    assert_int_equal(plan_on(g, 0, &plan, &ws), CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN);
    cudaFree(y);
    cudaFree(b);
    cudaFree(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_bias_relu),
        cmocka_unit_test(test_conv_residual),
        cmocka_unit_test(test_dgrad_relu_backward),
        cmocka_unit_test(test_pointwise_only_and_unsupported),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
