/* Numerics of the stand-in: fp16, bf16 and TF32 rounding of known values (round to nearest, ties
 * to even, overflow to infinity, subnormals), and what each cuDNN engine does to the numbers: the
 * fallback engine accumulates exact inputs in fp32, the tensor-core engine rounds fp32 inputs to
 * TF32 (from sm_80), the reduced-precision-reduction engine rounds its partial sums to fp16 or
 * bf16 and is measurably less accurate, and bf16 needs sm_80. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmath>
#include <cstring>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "src/numerics.hpp"
#include "standin_dnn_util.h"
#include "xpbsi/standin.h"

using xpbsi::elem;

static float f(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static void test_half_rounding(void **state)
{
    (void)state;
    assert_int_equal(xpbsi::float_to_half(1.0f), 0x3C00);
    assert_int_equal(xpbsi::float_to_half(1.0f + 0x1p-11f), 0x3C00);     // tie: to even
    assert_int_equal(xpbsi::float_to_half(1.0f + 3 * 0x1p-11f), 0x3C02); // tie: to even
    assert_int_equal(xpbsi::float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
    assert_int_equal(xpbsi::float_to_half(65504.0f), 0x7BFF); // largest
    assert_int_equal(xpbsi::float_to_half(65519.0f), 0x7BFF);
    assert_int_equal(xpbsi::float_to_half(65520.0f), 0x7C00); // overflow
    assert_int_equal(xpbsi::float_to_half(0x1p-24f), 0x0001); // subnormal
    assert_int_equal(xpbsi::float_to_half(0x1p-25f), 0x0000); // tie to 0
    assert_int_equal(xpbsi::float_to_half(3 * 0x1p-25f), 0x0002);
    assert_int_equal(xpbsi::float_to_half(-0.0f), 0x8000);
    assert_true(std::isnan(xpbsi::half_to_float(xpbsi::float_to_half(NAN))));
    assert_true(xpbsi::half_to_float(0x3C01) == 1.0f + 0x1p-10f);
    assert_true(xpbsi::half_to_float(0xFFFF) != xpbsi::half_to_float(0xFFFF)); // poison is NaN
}

static void test_bf16_and_tf32_rounding(void **state)
{
    (void)state;
    assert_int_equal(xpbsi::float_to_bf16(1.0f + 0x1p-8f), 0x3F80);     // tie: to even
    assert_int_equal(xpbsi::float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82); // tie: to even
    assert_int_equal(xpbsi::float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
    assert_int_equal(xpbsi::float_to_bf16(f(0x7F7FFFFFu)), 0x7F80); // FLT_MAX rounds to inf
    assert_true(xpbsi::bf16_to_float(0x3F81) == 1.0f + 0x1p-7f);
    assert_true(xpbsi::round_tf32(1.0f + 0x1p-11f) == 1.0f);
    assert_true(xpbsi::round_tf32(1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f);
    assert_true(xpbsi::round_tf32(1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f);
    assert_true(std::isinf(xpbsi::round_tf32(INFINITY)));
    // load and store round once
    uint16_t h[1];
    xpbsi::store(elem::f16, h, 0, 1.0f + 3 * 0x1p-11f);
    assert_true(xpbsi::load(elem::f16, h, 0) == 1.0f + 0x1p-9f);
}

// ---- cuDNN engines ----

static cudnnHandle_t handle;
static const int64_t xd[4] = {1, 64, 6, 6}, wd[4] = {4, 64, 3, 3}, yd[4] = {1, 4, 4, 4};
static const struct conv_geom valid = {{0, 0}, {0, 0}, {1, 1}, {1, 1}, CUDNN_CROSS_CORRELATION};

static size_t count(const int64_t *d)
{
    return (size_t)(d[0] * d[1] * d[2] * d[3]);
}

// A device tensor of type `e` holding vals rounded to it (packed NCHW).
static void *upload(elem e, const std::vector<float> &vals)
{
    std::vector<unsigned char> h(vals.size() * xpbsi::elem_size(e));
    for (size_t i = 0; i < vals.size(); i++)
        xpbsi::store(e, h.data(), (int64_t)i, vals[i]);
    void *d = nullptr;
    cudaMalloc(&d, h.size());
    cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice);
    return d;
}

static std::vector<float> download(elem e, const void *d, size_t n)
{
    std::vector<unsigned char> h(n * xpbsi::elem_size(e));
    cudaMemcpy(h.data(), d, h.size(), cudaMemcpyDeviceToHost);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = xpbsi::load(e, h.data(), (int64_t)i);
    return v;
}

// Runs the forward convolution of x and w in type `dt` on engine `engine` (status on failure),
// and its largest relative error against the exact result of the rounded inputs.
static cudnnStatus_t conv_error(cudnnDataType_t dt, int64_t engine, double *max_err,
                                std::vector<float> *out)
{
    elem e = dt == CUDNN_DATA_HALF ? elem::f16 : dt == CUDNN_DATA_BFLOAT16 ? elem::bf16 : elem::f32;
    std::vector<float> x(count(xd)), w(count(wd));
    uint64_t seed = 5;
    for (float &v : x)
        v = xpbsi::round_to(e, 0.5f + 0.5f * test_rand(&seed)); // positive: sums grow
    for (float &v : w)
        v = xpbsi::round_to(e, 0.5f + 0.5f * test_rand(&seed));
    int64_t xs[4], ws[4], ys[4];
    packed_strides(4, xd, xs);
    packed_strides(4, wd, ws);
    packed_strides(4, yd, ys);
    desc_t tx = tensor('x', dt, 4, xd, xs, false), tw = tensor('w', dt, 4, wd, ws, false),
           ty = tensor('y', dt, 4, yd, ys, false);
    desc_t op = conv_op_desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, tx, tw, ty,
                             conv_desc(&valid), 1.0f, 0.0f);
    DNN_OK(cudnnBackendFinalize(op));
    desc_t plan = nullptr;
    int64_t wsize = 0;
    cudnnStatus_t s = plan_on(op_graph(1, &op), engine, &plan, &wsize);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    void *dx = upload(e, x), *dw = upload(e, w), *dy = upload(e, std::vector<float>(count(yd)));
    void *space = nullptr;
    if (wsize)
        cudaMalloc(&space, (size_t)wsize);
    int64_t uids[3] = {'x', 'w', 'y'};
    void *ptrs[3] = {dx, dw, dy};
    DNN_OK(run_pack(handle, plan, 3, uids, ptrs, space));
    *out = download(e, dy, count(yd));
    *max_err = 0.0;
    for (int64_t k = 0; k < yd[1]; k++)
        for (int64_t p = 0; p < 4; p++)
            for (int64_t q = 0; q < 4; q++) {
                double exact = 0.0;
                for (int64_t c = 0; c < xd[1]; c++)
                    for (int64_t r = 0; r < 3; r++)
                        for (int64_t t = 0; t < 3; t++)
                            exact += (double)x[(size_t)((c * 6 + p + r) * 6 + q + t)] *
                                     w[(size_t)(((k * 64 + c) * 3 + r) * 3 + t)];
                double got = (*out)[(size_t)((k * 4 + p) * 4 + q)];
                *max_err = std::fmax(*max_err, std::fabs(got - exact) / exact);
            }
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
    cudaFree(space);
    return CUDNN_STATUS_SUCCESS;
}

static void test_fp32_engines(void **state)
{
    (void)state;
    double exact_err = 1, tf32_err = 1;
    std::vector<float> a, b;
    DNN_OK(conv_error(CUDNN_DATA_FLOAT, 0, &exact_err, &a));
    assert_true(exact_err < 576 * 0x1p-24); // 576 fp32 additions
    cudnnStatus_t s = conv_error(CUDNN_DATA_FLOAT, 1, &tf32_err, &b);
    if (xpbsi_compute_capability() < 80) {
        assert_int_equal(s, CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH); // no TF32 before Ampere
        return;
    }
    DNN_OK(s);
    fprintf(stderr, "fp32 convolution: exact inputs %.3g, TF32 inputs %.3g\n", exact_err, tf32_err);
    assert_true(tf32_err > 10 * exact_err && tf32_err < 2e-3);
    assert_true(a != b);
}

static void test_half_engines(void **state)
{
    (void)state;
    double fallback = 1, reduced = 1;
    std::vector<float> a, b;
    DNN_OK(conv_error(CUDNN_DATA_HALF, 0, &fallback, &a));
    DNN_OK(conv_error(CUDNN_DATA_HALF, 2, &reduced, &b));
    fprintf(stderr, "fp16 convolution: fp32 accumulation %.3g, reduced precision %.3g\n", fallback,
            reduced);
    assert_true(fallback <= 0x1p-11 * 1.01); // one rounding to fp16
    assert_true(reduced > 2 * fallback);
}

static void test_bf16_engines(void **state)
{
    (void)state;
    double fallback = 1, reduced = 1;
    std::vector<float> a;
    cudnnStatus_t s = conv_error(CUDNN_DATA_BFLOAT16, 0, &fallback, &a);
    if (xpbsi_compute_capability() < 80) {
        assert_int_equal(s, CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH);
        return;
    }
    DNN_OK(s);
    DNN_OK(conv_error(CUDNN_DATA_BFLOAT16, 2, &reduced, &a));
    assert_true(fallback <= 0x1p-8 * 1.01);
    assert_true(reduced > 2 * fallback);
}

int main(void)
{
    if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_rounding), cmocka_unit_test(test_bf16_and_tf32_rounding),
        cmocka_unit_test(test_fp32_engines),  cmocka_unit_test(test_half_engines),
        cmocka_unit_test(test_bf16_engines),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    cudnnDestroy(handle);
    return failed;
}
