/* The per-element and index maths of the cuda backend's own kernels (plugins/backend_cuda/
 * kernels/elem_math.h, index_math.h), compiled here as C, against the reference backend's
 * kernels and against brute force: activations and their backward, dropout's mask stream
 * (program.h's xpb_dropout_*, indexed canonically whatever the storage layout), the losses'
 * backward and the optimizer steps, batch and instance norm forward and backward (the kernels'
 * shifted statistics and coefficient form, also on badly conditioned data), pooling windows and
 * their inverse, reflection padding and its inverse, the layouts' addressing, and the fp16 loss
 * scaler.
 *
 * What is exact and what is within an ulp. Compiled for the host (this test, and the CPU
 * stand-in build of the plugin, which g++ compiles for x86-64 without FMA) the formulas give
 * cpu_ref's numbers bit for bit: activations and their backward, dropout, the losses' backward,
 * SGD and Adam. On the GPU nvcc contracts a*b+c into one fused multiply-add (its default,
 * --fmad=true), which rounds once instead of twice, and the device's tanhf is not glibc's: there
 * ReLU, LeakyReLU, their backward, dropout and the losses' backward stay exact (no product is
 * added to anything), while SGD, Adam, tanh's backward and the norms' element pass differ by at
 * most about one ulp of their largest term per multiply-add, and tanh by the device's few ulps
 * (test_contraction below bounds the contracted forms). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/elem_math.h"
#include "kernels/index_math.h"
#include "ref.h"

/* ---- helpers ---- */

static uint64_t rng_state = 0x1234567;

static float frand(float lo, float hi)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)(rng_state >> 40) * 0x1p-24f;
}

static xpb_tensor_desc desc(uint32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    xpb_tensor_desc t;
    memset(&t, 0, sizeof t);
    t.name = "t";
    t.layer = "test";
    t.dtype = XPB_DTYPE_F32;
    t.ndim = ndim;
    t.dims[0] = d0;
    t.dims[1] = d1;
    t.dims[2] = d2;
    t.dims[3] = d3;
    return t;
}

static xpb_op op_of(uint32_t kind, uint32_t n_in, uint32_t n_out)
{
    xpb_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.n_inputs = n_in;
    op.n_outputs = n_out;
    op.layer = "test";
    return op;
}

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* max |a - b| / max(max |b|, floor) */
static double rel_err(const float *a, const float *b, int64_t n, double floor)
{
    double worst = 0.0, big = floor;
    for (int64_t i = 0; i < n; i++)
        if (fabs(b[i]) > big)
            big = fabs(b[i]);
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / big;
        if (d > worst)
            worst = d;
    }
    return worst;
}

/* ---- activations ---- */

static void test_activations(void **state)
{
    (void)state;
    enum { N = 1000 };
    float x[N], y[N], dy[N], dx[N];
    for (int i = 0; i < N; i++) {
        x[i] = i % 10 == 0 ? 0.0f : frand(-4, 4);
        dy[i] = frand(-1, 1);
    }
    xpb_tensor_desc d = desc(1, N, 1, 1, 1);
    static const struct {
        uint32_t fwd, bwd;
        int act;
    } acts[3] = {{XPB_OP_RELU, XPB_OP_RELU_BWD, CUX_ACT_RELU},
                 {XPB_OP_LEAKY_RELU, XPB_OP_LEAKY_RELU_BWD, CUX_ACT_LEAKY},
                 {XPB_OP_TANH, XPB_OP_TANH_BWD, CUX_ACT_TANH}};
    for (int k = 0; k < 3; k++) {
        xpb_op op = op_of(acts[k].fwd, 1, 1);
        op.attrs.negative_slope = 0.2f;
        char err[256];
        ref_op_args a = {.op = &op,
                         .in_desc = {&d},
                         .out_desc = {&d},
                         .in = {x},
                         .out = {y},
                         .err = err,
                         .err_size = sizeof err};
        assert_int_equal(ref_kernel_for(op.kind)(&a), XPB_OK);
        for (int i = 0; i < N; i++)
            if (!same_bits(cux_act_fwd(acts[k].act, 0.2f, x[i]), y[i]))
                fail_msg("activation %d of %g: %g, reference %g", acts[k].act, (double)x[i],
                         (double)cux_act_fwd(acts[k].act, 0.2f, x[i]), (double)y[i]);
        xpb_op bop = op_of(acts[k].bwd, 2, 1);
        bop.attrs.negative_slope = 0.2f;
        ref_op_args b = {.op = &bop,
                         .in_desc = {&d, &d},
                         .out_desc = {&d},
                         .in = {dy, y},
                         .out = {dx},
                         .err = err,
                         .err_size = sizeof err};
        assert_int_equal(ref_kernel_for(bop.kind)(&b), XPB_OK);
        for (int i = 0; i < N; i++)
            assert_true(same_bits(cux_act_bwd(acts[k].act, 0.2f, dy[i], y[i]), dx[i]));
    }
    assert_true(cux_act_fwd(CUX_ACT_NONE, 0.0f, -3.0f) == -3.0f);
}

/* ---- GELU ---- */

/* cux_gelu and cux_gelu_grad (GELU_BWD with dy) against cpu_ref's gelu.c at 601 points of
 * [-12, 12] and a few beyond, both forms. The kernels' fp32 forms avoid the cancellation of
 * 1 + erf and 1 + tanh (elem_math.h), so their error is what fp32 rounding of the argument
 * becomes through the function: within (4 + cond(x)) ulps of the result, cond(x) = x^2 (erf
 * form) or 2 sqrt(2/pi) |x| (1 + 3 * 0.044715 x^2) (tanh form), the function's relative
 * condition number far left, where the result is tiny. For the derivative the ulps are of the
 * size of its terms (s + |the second term|; it crosses 0 at x = -0.75, so its own size is no
 * measure). The reference evaluates the textbook forms in double, which cancel too: it is
 * allowed 4 double ulps of 1 + |x| more (and 2^-120, for results fp32 holds as subnormals). */
static double gelu_cond(double x, int tanh_approx)
{
    return tanh_approx ? 2.0 * 0.7978845608028654 * fabs(x) * (1.0 + 3.0 * 0.044715 * x * x)
                       : x * x;
}

/* The size of the derivative's terms, in double. */
static double gelu_grad_terms(double x, int tanh_approx)
{
    if (tanh_approx) {
        double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        double s = 1.0 / (1.0 + exp(-2.0 * u)), sc = 1.0 / (1.0 + exp(2.0 * u));
        return s + fabs(2.0 * x * s * sc * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x));
    }
    return 0.5 * erfc(-x * 0.7071067811865476) + fabs(x * 0.3989422804014327 * exp(-0.5 * x * x));
}

static void test_gelu(void **state)
{
    (void)state;
    enum { GRID = 601, N = GRID + 10 };
    static const float extra[N - GRID] = {0.0f,    1e-30f, -1e-30f, 1e-3f,  -1e-3f,
                                          -0.752f, -13.5f, 20.0f,   -40.0f, 100.0f};
    float x[N], dy[N], y[N], dx[N];
    for (int i = 0; i < N; i++) {
        x[i] = i < GRID ? -12.0f + 24.0f * (float)i / (float)(GRID - 1) : extra[i - GRID];
        dy[i] = frand(0.5f, 2.0f);
    }
    xpb_tensor_desc d = desc(1, N, 1, 1, 1);
    char err[256];
    for (int t = 0; t < 2; t++) {
        xpb_op op = op_of(XPB_OP_GELU, 1, 1), bop = op_of(XPB_OP_GELU_BWD, 2, 1);
        op.approximate = bop.approximate = t ? XPB_GELU_TANH : 0u;
        ref_op_args a = {.op = &op,
                         .in_desc = {&d},
                         .out_desc = {&d},
                         .in = {x},
                         .out = {y},
                         .err = err,
                         .err_size = sizeof err};
        assert_int_equal(ref_gelu(&a), XPB_OK);
        ref_op_args b = {.op = &bop,
                         .in_desc = {&d, &d},
                         .out_desc = {&d},
                         .in = {dy, x},
                         .out = {dx},
                         .err = err,
                         .err_size = sizeof err};
        assert_int_equal(ref_gelu_bwd(&b), XPB_OK);
        for (int i = 0; i < N; i++) {
            double xi = x[i], ulps = 4.0 + gelu_cond(xi, t);
            double floor = 4.0 * 0x1p-53 * (1.0 + fabs(xi)) + 0x1p-120;
            double fy = cux_gelu(x[i], t), fdx = cux_gelu_bwd(dy[i], x[i], t);
            double tol_y = ulps * 0x1p-23 * fabs((double)y[i]) + floor;
            double tol_dx = (ulps + 1.0) * 0x1p-23 * dy[i] * gelu_grad_terms(xi, t) + dy[i] * floor;
            if (fabs(fy - y[i]) > tol_y)
                fail_msg("GELU (approximate %d) of %.9g: %.9g, reference %.9g", t, xi, fy,
                         (double)y[i]);
            if (fabs(fdx - dx[i]) > tol_dx)
                fail_msg("GELU_BWD (approximate %d) of %.9g, dy %.9g: %.9g, reference %.9g", t, xi,
                         (double)dy[i], fdx, (double)dx[i]);
        }
        /* exact where the forms are: 0 at 0, slope 1/2 there, the identity far right */
        assert_true(cux_gelu(0.0f, t) == 0.0f && cux_gelu_grad(0.0f, t) == 0.5f);
        assert_true(cux_gelu(100.0f, t) == 100.0f && cux_gelu_grad(100.0f, t) == 1.0f);
        assert_true(isnan(cux_gelu(NAN, t)) && isnan(cux_gelu_grad(NAN, t)));
    }
}

/* ---- dropout ---- */

/* The kernels call program.h's xpb_dropout_* themselves (compiled for the device); what is
 * checked here is the part of docs/ops.md a port most easily gets wrong: the boundary u == p
 * keeps the element, p = 0 keeps all with factor 1, p = 1 drops all without dividing by 0. */
static void test_dropout_stream(void **state)
{
    (void)state;
    uint64_t h = xpb_dropout_stream(9, 3);
    float u = (float)(xpb_splitmix64(h + 5) >> 40) * 0x1p-24f;
    assert_true(xpb_dropout_factor(h, 5, u) > 0.0f);
    assert_true(xpb_dropout_factor(h, 5, nextafterf(u, 2.0f)) == 0.0f);
    for (int64_t i = 0; i < 1000; i++) {
        assert_true(xpb_dropout_factor(h, i, 0.0f) == 1.0f);
        assert_true(xpb_dropout_factor(h, i, 1.0f) == 0.0f);
    }
    assert_true(xpb_dropout_stream(9, 3) != xpb_dropout_stream(9, 4));
}

/* The kernel indexes the mask stream canonically: an NHWC tensor gets the mask cpu_ref draws
 * for the same logical elements. */
static void test_dropout_layouts(void **state)
{
    (void)state;
    enum { N = 2, C = 3, H = 5, W = 7, T = N * C * H * W };
    float x[T], y[T], mask[T], nhwc[T];
    for (int i = 0; i < T; i++)
        x[i] = frand(-1, 1);
    xpb_tensor_desc d = desc(4, N, C, H, W);
    xpb_op op = op_of(XPB_OP_DROPOUT, 1, 2);
    op.attrs.dropout_p = 0.3f;
    op.attrs.seed = 1234;
    char err[256];
    ref_op_args a = {.op = &op,
                     .in_desc = {&d},
                     .out_desc = {&d, &d},
                     .in = {x},
                     .out = {y, mask},
                     .call_index = 1,
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_dropout(&a), XPB_OK);
    uint64_t h = xpb_dropout_stream(1234, 1);
    for (int64_t i = 0; i < T; i++) { /* i: NHWC storage offset, as the kernel walks */
        int64_t n, c, hh, w;
        cux_coords(CUX_NHWC, C, H, W, i, &n, &c, &hh, &w);
        int64_t f = ((n * C + c) * H + hh) * W + w;
        nhwc[i] = xpb_dropout_factor(h, f, 0.3f);
    }
    for (int64_t f = 0; f < T; f++) {
        int64_t n, c, hh, w;
        cux_coords(CUX_PLAIN, C, H, W, f, &n, &c, &hh, &w);
        assert_true(same_bits(nhwc[cux_offset(CUX_NHWC, C, H, W, n, c, hh, w)], mask[f]));
    }
}

/* ---- losses ---- */

static void test_losses(void **state)
{
    (void)state;
    enum { N = 6, K = 5 };
    float x[N * K], t[N * K], dx[N * K], prob[N * K], dz[N * K];
    int32_t labels[N];
    for (int i = 0; i < N * K; i++) {
        x[i] = frand(-2, 2);
        t[i] = i % 7 == 0 ? x[i] : frand(-2, 2); /* some exact ties: sign(0) = 0 */
        prob[i] = frand(0, 1);
    }
    for (int n = 0; n < N; n++)
        labels[n] = n % K;
    xpb_tensor_desc d = desc(2, N, K, 1, 1), l = desc(1, N, 1, 1, 1);
    l.dtype = XPB_DTYPE_I32;
    char err[256];
    xpb_op mse = op_of(XPB_OP_MSE_LOSS_BWD, 2, 1), l1 = op_of(XPB_OP_L1_LOSS_BWD, 2, 1);
    mse.attrs.scale = l1.attrs.scale = 0.5f;
    ref_op_args a = {.op = &mse,
                     .in_desc = {&d, &d},
                     .out_desc = {&d},
                     .in = {x, t},
                     .out = {dx},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_mse_loss_bwd(&a), XPB_OK);
    double f = 2.0 * 0.5 / (double)(N * K);
    for (int i = 0; i < N * K; i++)
        assert_true(same_bits(cux_mse_bwd(f, x[i], t[i]), dx[i]));
    a.op = &l1;
    assert_int_equal(ref_l1_loss_bwd(&a), XPB_OK);
    float fl = (float)(0.5 / (double)(N * K));
    for (int i = 0; i < N * K; i++)
        assert_true(same_bits(cux_l1_bwd(fl, x[i], t[i]), dx[i]));
    xpb_op xb = op_of(XPB_OP_SOFTMAX_XENT_BWD, 2, 1);
    xb.attrs.scale = 2.0f;
    ref_op_args b = {.op = &xb,
                     .in_desc = {&d, &l},
                     .out_desc = {&d},
                     .in = {prob, (float *)(void *)labels},
                     .out = {dz},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_softmax_xent_bwd(&b), XPB_OK);
    double fx = 2.0 / (double)N;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            assert_true(
                same_bits(cux_xent_bwd(fx, prob[n * K + k], k == labels[n]), dz[n * K + k]));
}

/* ---- optimizers ---- */

/* cux_adam (decoupled 0) or cux_adamw with cux_adamw_decay (1), with cux_adam_coeffs: cpu_ref's
 * ref_adam_update / ref_adamw_update bit for bit over three steps, the moments too, with an F32
 * and an I32 step counter. */
static void check_adam(int decoupled, float lr, float b1, float b2, float eps, float wd)
{
    enum { N = 257 };
    float p_ref[N], g[N], p[N];
    for (int i = 0; i < N; i++) {
        p_ref[i] = p[i] = frand(-1, 1);
        g[i] = frand(-0.1f, 0.1f);
    }
    xpb_tensor_desc d = desc(1, N, 1, 1, 1);
    char err[256];
    for (int i32 = 0; i32 < 2; i32++) {
        float m_ref[N] = {0}, v_ref[N] = {0}, m[N] = {0}, v[N] = {0};
        union {
            float f;
            int32_t i;
        } step = {0};
        xpb_tensor_desc sd = desc(1, 1, 1, 1, 1);
        sd.dtype = i32 ? XPB_DTYPE_I32 : XPB_DTYPE_F32;
        xpb_op op = op_of(decoupled ? XPB_OP_ADAMW_UPDATE : XPB_OP_ADAM_UPDATE, 5, 0);
        op.attrs.lr = lr;
        op.attrs.beta1 = b1;
        op.attrs.beta2 = b2;
        op.attrs.eps = eps;
        op.attrs.weight_decay = wd;
        for (int t = 1; t <= 3; t++) {
            ref_op_args a = {.op = &op,
                             .in_desc = {&d, &d, &d, &d, &sd},
                             .in = {p_ref, g, m_ref, v_ref, &step.f},
                             .err = err,
                             .err_size = sizeof err};
            assert_int_equal(decoupled ? ref_adamw_update(&a) : ref_adam_update(&a), XPB_OK);
            float step_size, bc2, decay = cux_adamw_decay(lr, wd);
            cux_adam_coeffs(lr, b1, b2, (double)t, &step_size, &bc2);
            for (int i = 0; i < N; i++)
                p[i] = decoupled
                           ? cux_adamw(p[i], g[i], &m[i], &v[i], b1, b2, eps, decay, step_size, bc2)
                           : cux_adam(p[i], g[i], &m[i], &v[i], b1, b2, eps, wd, step_size, bc2);
            for (int i = 0; i < N; i++)
                assert_true(same_bits(p[i], p_ref[i]) && same_bits(m[i], m_ref[i]) &&
                            same_bits(v[i], v_ref[i]));
        }
        assert_true(i32 ? step.i == 3 : step.f == 3.0f);
    }
}

static void test_optimizers(void **state)
{
    (void)state;
    enum { N = 257 };
    float p_ref[N], g[N], buf_ref[N], p[N], buf[N];
    for (int i = 0; i < N; i++) {
        p_ref[i] = p[i] = frand(-1, 1);
        g[i] = frand(-0.1f, 0.1f);
        buf_ref[i] = buf[i] = 0.0f;
    }
    xpb_tensor_desc d = desc(1, N, 1, 1, 1);
    char err[256];
    for (int with_buf = 0; with_buf < 2; with_buf++) {
        xpb_op op = op_of(XPB_OP_SGD_UPDATE, with_buf ? 3 : 2, 0);
        op.attrs.lr = 0.01f;
        op.attrs.momentum = 0.9f;
        op.attrs.weight_decay = 5e-4f;
        for (int step = 0; step < 3; step++) {
            ref_op_args a = {.op = &op,
                             .in_desc = {&d, &d, &d},
                             .in = {p_ref, g, buf_ref},
                             .err = err,
                             .err_size = sizeof err};
            assert_int_equal(ref_sgd_update(&a), XPB_OK);
            for (int i = 0; i < N; i++)
                p[i] = cux_sgd(p[i], g[i], with_buf ? &buf[i] : NULL, 0.01f, 0.9f, 5e-4f);
            for (int i = 0; i < N; i++)
                assert_true(same_bits(p[i], p_ref[i]) && same_bits(buf[i], buf_ref[i]));
        }
    }
    /* Adam (L2 weight decay), step count f32 and i32 */
    check_adam(0, 2e-4f, 0.5f, 0.999f, 1e-8f, 1e-4f);
}

/* ---- what nvcc's contraction changes ---- */

/* The unit in the last place of |x|. */
static double ulp(float x)
{
    float a = fabsf(x);
    return (double)nextafterf(a, INFINITY) - (double)a;
}

/* The forms nvcc makes of the formulas that add a product: one fmaf where the host rounds the
 * product first. Each result stays within 2.5 ulps of the largest term of each of its
 * multiply-adds, the differences of earlier ones carried through (one rounding fewer per
 * multiply-add); the formulas without such a sum are not listed: they are the same on the
 * device. */
static void test_contraction(void **state)
{
    (void)state;
    double worst[4] = {0};
    for (int i = 0; i < 100000; i++) {
        float param = frand(-1, 1), grad = frand(-0.1f, 0.1f), buf = frand(-0.1f, 0.1f);
        float lr = 0.01f, mom = 0.9f, wd = 5e-4f;
        /* SGD: g = grad + wd*param; buf = mom*buf + g; param - lr*g */
        float b_host = buf, b_dev = buf;
        float p_host = cux_sgd(param, grad, &b_host, lr, mom, wd);
        float g = fmaf(wd, param, grad);
        b_dev = fmaf(mom, b_dev, g);
        float p_dev = fmaf(-lr, b_dev, param);
        /* one ulp of the largest term per multiply-add, carried through the chain */
        double eg = ulp(fmaxf(fabsf(grad), fabsf(wd * param)));
        double eb = ulp(fmaxf(fabsf(mom * buf), fabsf(g))) + eg;
        double ep = ulp(fmaxf(fabsf(param), fabsf(lr * b_dev))) + lr * eb;
        assert_true(fabs((double)b_dev - b_host) <= 2 * eb);
        double e = fabs((double)p_dev - p_host) / ep;
        worst[0] = e > worst[0] ? e : worst[0];
        /* Adam's moments: m = b1*m + (1-b1)*g, v = b2*v + (1-b2)*g*g */
        float m = frand(-0.1f, 0.1f), v = frand(0, 0.01f), m_h = m, v_h = v;
        float sz, bc2;
        cux_adam_coeffs(2e-4, 0.5, 0.999, 3.0, &sz, &bc2);
        (void)cux_adam(param, grad, &m_h, &v_h, 0.5f, 0.999f, 1e-8f, 1e-4f, sz, bc2);
        float ga = fmaf(1e-4f, param, grad);
        float m_d = fmaf(0.5f, m, (1.0f - 0.5f) * ga);
        float v_d = fmaf((1.0f - 0.999f) * ga, ga, 0.999f * v);
        e = fabs((double)m_d - m_h) / ulp(fmaxf(fabsf(0.5f * m), fabsf(0.5f * ga)));
        worst[1] = e > worst[1] ? e : worst[1];
        e = fabs((double)v_d - v_h) / ulp(fmaxf(fabsf(0.999f * v), fabsf(0.001f * ga * ga)));
        worst[1] = e > worst[1] ? e : worst[1];
        /* the norms' element pass: ((x - c0) - c1) * c2 + c3 */
        float c[4] = {frand(-2, 2), frand(-1e-7f, 1e-7f), frand(0.1f, 3), frand(-1, 1)};
        float x = frand(-4, 4), xc = (x - c[0]) - c[1];
        e = fabs((double)fmaf(xc, c[2], c[3]) - cux_norm_apply(x, c)) /
            ulp(fmaxf(fabsf(xc * c[2]), fabsf(c[3])));
        worst[2] = e > worst[2] ? e : worst[2];
        /* tanh's backward: dy * (1 - y*y) */
        float y = frand(-1, 1), dy = frand(-1, 1);
        e = fabs((double)(dy * fmaf(-y, y, 1.0f)) - cux_act_bwd(CUX_ACT_TANH, 0, dy, y)) / ulp(dy);
        worst[3] = e > worst[3] ? e : worst[3];
    }
    printf("  contracted vs host, in ulps of the largest terms: SGD %.2f, Adam moments %.2f, norm "
           "element pass %.2f, tanh backward %.2f\n",
           worst[0], worst[1], worst[2], worst[3]);
    for (int k = 0; k < 4; k++)
        assert_true(worst[k] <=
                    2.5); /* 0.5 ulp of the product + 1 of a result up to twice the term */
    /* and it is not bit for bit: the device's numbers are not cpu_ref's (docs/backend-cuda.md) */
    assert_true(worst[0] > 0.0 && worst[2] > 0.0);
}

/* ---- normalisation ---- */

/* The kernels' forward: per group, shifted sums around the group's first element, the
 * statistics, the coefficients and the element pass. Groups are channels (batch norm) or
 * (n, c) (instance norm). */
static void norm_forward(const float *x, float *y, float *ws_mean, float *ws_var, float *rm,
                         float *rv, const float *gamma, const float *beta, int64_t N, int64_t C,
                         int64_t S, int per_image, float eps, float momentum, int act)
{
    int64_t groups = per_image ? N * C : C;
    for (int64_t g = 0; g < groups; g++) {
        int64_t n0 = per_image ? g / C : 0, n1 = per_image ? n0 + 1 : N, c = per_image ? g % C : g;
        double k = x[(n0 * C + c) * S], s1 = 0, s2 = 0;
        for (int64_t n = n0; n < n1; n++)
            for (int64_t s = 0; s < S; s++) {
                float d = x[(n * C + c) * S + s] - (float)k;
                s1 += d;
                s2 += (double)d * d;
            }
        double mean, var, count = (double)((n1 - n0) * S);
        cux_shifted_stats(k, s1, s2, count, &mean, &var);
        ws_mean[g] = (float)mean;
        ws_var[g] = (float)var;
        if (rm)
            cux_bn_running(&rm[c], &rv[c], mean, var, momentum, count);
        float cf[4];
        cux_norm_coeffs(mean, var, eps, gamma ? gamma[c] : 1.0, beta ? beta[c] : 0.0, cf);
        for (int64_t n = n0; n < n1; n++)
            for (int64_t s = 0; s < S; s++)
                y[(n * C + c) * S + s] =
                    cux_act_fwd(act, 0.2f, cux_norm_apply(x[(n * C + c) * S + s], cf));
    }
}

static void norm_backward(const float *dy, const float *x, const float *ws_mean,
                          const float *ws_var, const float *gamma, float *dx, float *dgamma,
                          float *dbeta, int64_t N, int64_t C, int64_t S, int per_image, float eps)
{
    int64_t groups = per_image ? N * C : C;
    for (int64_t g = 0; g < groups; g++) {
        int64_t n0 = per_image ? g / C : 0, n1 = per_image ? n0 + 1 : N, c = per_image ? g % C : g;
        double s1 = 0, s2 = 0;
        for (int64_t n = n0; n < n1; n++)
            for (int64_t s = 0; s < S; s++) {
                int64_t o = (n * C + c) * S + s;
                s1 += dy[o];
                s2 += (double)dy[o] * (x[o] - ws_mean[g]);
            }
        float cf[5], dg, db;
        cux_norm_bwd_coeffs(ws_mean[g], ws_var[g], eps, gamma ? gamma[c] : 1.0, s1, s2,
                            (double)((n1 - n0) * S), cf, &dg, &db);
        if (dgamma) {
            dgamma[c] = dg;
            dbeta[c] = db;
        }
        for (int64_t n = n0; n < n1; n++)
            for (int64_t s = 0; s < S; s++) {
                int64_t o = (n * C + c) * S + s;
                dx[o] = cux_norm_bwd_apply(dy[o], x[o], cf);
            }
    }
}

static void check_batchnorm(float offset, float spread, double tol)
{
    enum { N = 4, C = 3, H = 5, W = 6, T = N * C * H * W };
    float x[T], y[T], yr[T], dy[T], dx[T], dxr[T];
    float gamma[C], beta[C], rm[C], rv[C], rmr[C], rvr[C], wm[C], wv[C], wmr[C], wvr[C];
    float dg[C], db[C], dgr[C], dbr[C];
    for (int i = 0; i < T; i++) {
        x[i] = offset * (float)((i / (H * W)) % C) + frand(-spread, spread);
        dy[i] = frand(-1, 1);
    }
    for (int c = 0; c < C; c++) {
        gamma[c] = frand(0.5f, 1.5f);
        beta[c] = frand(-0.5f, 0.5f);
        rm[c] = rmr[c] = frand(-0.1f, 0.1f);
        rv[c] = rvr[c] = frand(0.9f, 1.1f);
    }
    xpb_tensor_desc d = desc(4, N, C, H, W), p = desc(1, C, 1, 1, 1);
    xpb_op op = op_of(XPB_OP_BATCHNORM_TRAIN, 5, 3);
    op.attrs.eps = 1e-5f;
    op.attrs.momentum = 0.1f;
    char err[256];
    ref_op_args a = {.op = &op,
                     .in_desc = {&d, &p, &p, &p, &p},
                     .out_desc = {&d, &p, &p},
                     .in = {x, gamma, beta, rmr, rvr},
                     .out = {yr, wmr, wvr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_batchnorm_train(&a), XPB_OK);
    norm_forward(x, y, wm, wv, rm, rv, gamma, beta, N, C, H * W, 0, 1e-5f, 0.1f, CUX_ACT_NONE);
    assert_true(rel_err(y, yr, T, 1e-3) < tol);
    assert_true(rel_err(wm, wmr, C, 1e-3) < 1e-6);
    assert_true(rel_err(wv, wvr, C, 1e-6) < tol);
    assert_true(rel_err(rm, rmr, C, 1e-3) < 1e-6 && rel_err(rv, rvr, C, 1e-3) < tol);
    xpb_op bop = op_of(XPB_OP_BATCHNORM_BWD, 5, 3);
    bop.attrs.eps = 1e-5f;
    ref_op_args b = {.op = &bop,
                     .in_desc = {&d, &d, &p, &p, &p},
                     .out_desc = {&d, &p, &p},
                     .in = {dy, x, gamma, wmr, wvr},
                     .out = {dxr, dgr, dbr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_batchnorm_bwd(&b), XPB_OK);
    norm_backward(dy, x, wmr, wvr, gamma, dx, dg, db, N, C, H * W, 0, 1e-5f);
    assert_true(rel_err(dx, dxr, T, 1e-3) < tol);
    assert_true(rel_err(dg, dgr, C, 1e-3) < tol && rel_err(db, dbr, C, 1e-3) < 1e-6);
}

static void test_batchnorm(void **state)
{
    (void)state;
    check_batchnorm(0.0f, 2.0f, 1e-5);
    check_batchnorm(1000.0f, 0.05f, 1e-4); /* a mean 2e4 times the spread */
}

static void test_instancenorm_and_fused_act(void **state)
{
    (void)state;
    enum { N = 2, C = 4, H = 6, W = 5, T = N * C * H * W };
    float x[T], y[T], yr[T], dy[T], dyr[T], dx[T], dxr[T], wm[N * C], wv[N * C], wmr[N * C],
        wvr[N * C], act[T];
    for (int i = 0; i < T; i++) {
        x[i] = 300.0f + frand(-1, 1);
        dy[i] = frand(-1, 1);
    }
    xpb_tensor_desc d = desc(4, N, C, H, W), s = desc(2, N, C, 1, 1);
    char err[256];
    xpb_op op = op_of(XPB_OP_INSTANCENORM, 1, 3);
    op.attrs.eps = 1e-5f;
    ref_op_args a = {.op = &op,
                     .in_desc = {&d},
                     .out_desc = {&d, &s, &s},
                     .in = {x},
                     .out = {yr, wmr, wvr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_instancenorm(&a), XPB_OK);
    /* fused instance norm + ReLU against the reference's norm, then its ReLU */
    norm_forward(x, y, wm, wv, NULL, NULL, NULL, NULL, N, C, H * W, 1, 1e-5f, 0.0f, CUX_ACT_RELU);
    xpb_op relu = op_of(XPB_OP_RELU, 1, 1);
    ref_op_args r = {.op = &relu,
                     .in_desc = {&d},
                     .out_desc = {&d},
                     .in = {yr},
                     .out = {act},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_relu(&r), XPB_OK);
    assert_true(rel_err(y, act, T, 1e-3) < 1e-4);
    /* fused ReLU backward + instance-norm backward against the two reference ops */
    xpb_op rb = op_of(XPB_OP_RELU_BWD, 2, 1);
    ref_op_args q = {.op = &rb,
                     .in_desc = {&d, &d},
                     .out_desc = {&d},
                     .in = {dy, act},
                     .out = {dyr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_relu_bwd(&q), XPB_OK);
    xpb_op bop = op_of(XPB_OP_INSTANCENORM_BWD, 4, 1);
    bop.attrs.eps = 1e-5f;
    ref_op_args b = {.op = &bop,
                     .in_desc = {&d, &d, &s, &s},
                     .out_desc = {&d},
                     .in = {dyr, x, wmr, wvr},
                     .out = {dxr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_instancenorm_bwd(&b), XPB_OK);
    float masked[T];
    for (int i = 0; i < T; i++)
        masked[i] = cux_act_bwd(CUX_ACT_RELU, 0.0f, dy[i], y[i]);
    norm_backward(masked, x, wmr, wvr, NULL, dx, NULL, NULL, N, C, H * W, 1, 1e-5f);
    assert_true(rel_err(dx, dxr, T, 1e-3) < 1e-4);
}

/* ---- pooling ---- */

static void test_pool_windows(void **state)
{
    (void)state;
    for (int64_t k = 1; k <= 4; k++)
        for (int64_t s = 1; s <= 3; s++)
            for (int64_t p = 0; p <= k / 2; p++)
                for (int64_t size = k; size <= 9; size++) {
                    int64_t out = (size + 2 * p - k) / s + 1;
                    for (int64_t i = 0; i < size; i++) {
                        int64_t lo, hi, n = 0;
                        cux_pool_outputs_of(i, s, p, k, out, &lo, &hi);
                        for (int64_t o = 0; o < out; o++) {
                            int64_t w0, w1;
                            cux_pool_window(o, s, p, k, size, &w0, &w1);
                            int in_window = i >= w0 && i < w1;
                            if (in_window != (o >= lo && o < hi))
                                fail_msg("k%lld s%lld p%lld size %lld: input %lld, output %lld",
                                         (long long)k, (long long)s, (long long)p, (long long)size,
                                         (long long)i, (long long)o);
                            n += in_window;
                        }
                        assert_int_equal(n, hi - lo);
                    }
                }
}

/* Max and average pooling, forward and the gathering backward, against cpu_ref. */
static void test_pooling(void **state)
{
    (void)state;
    enum { N = 2, C = 3, H = 9, W = 7 };
    static const int shapes[][3] = {{3, 2, 1}, {2, 2, 0}, {3, 1, 1}, {4, 3, 2}};
    float x[N * C * H * W], dx[N * C * H * W], dxr[N * C * H * W];
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float)(int)frand(-5, 5); /* ties, to check the first maximum wins */
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int k = shapes[t][0], s = shapes[t][1], p = shapes[t][2];
        int64_t oh = (H + 2 * p - k) / s + 1, ow = (W + 2 * p - k) / s + 1;
        int64_t no = N * C * oh * ow;
        float *y = calloc((size_t)no, sizeof *y), *yr = calloc((size_t)no, sizeof *yr);
        float *dy = calloc((size_t)no, sizeof *dy);
        int32_t *idx = calloc((size_t)no, sizeof *idx), *idxr = calloc((size_t)no, sizeof *idxr);
        for (int64_t i = 0; i < no; i++)
            dy[i] = frand(-1, 1);
        xpb_tensor_desc din = desc(4, N, C, H, W), dout = desc(4, N, C, oh, ow);
        xpb_tensor_desc di = dout;
        di.dtype = XPB_DTYPE_I32;
        for (int avg = 0; avg < 2; avg++)
            for (int include = 0; include < 1 + avg; include++) {
                xpb_op op = op_of(avg ? XPB_OP_AVGPOOL : XPB_OP_MAXPOOL, 1, avg ? 1 : 2);
                op.attrs.kernel[0] = op.attrs.kernel[1] = k;
                op.attrs.stride[0] = op.attrs.stride[1] = s;
                op.attrs.pad[0] = op.attrs.pad[1] = p;
                op.attrs.count_include_pad = include;
                char err[256];
                ref_op_args a = {.op = &op,
                                 .in_desc = {&din},
                                 .out_desc = {&dout, &di},
                                 .in = {x},
                                 .out = {yr, (float *)(void *)idxr},
                                 .err = err,
                                 .err_size = sizeof err};
                assert_int_equal(ref_kernel_for(op.kind)(&a), XPB_OK);
                /* forward, as k_maxpool / k_avgpool compute it */
                for (int64_t o = 0; o < no; o++) {
                    int64_t ox = o % ow, oy = (o / ow) % oh, pl = o / (oh * ow), h0, h1, w0, w1;
                    cux_pool_window(oy, s, p, k, H, &h0, &h1);
                    cux_pool_window(ox, s, p, k, W, &w0, &w1);
                    float best = -INFINITY;
                    int64_t at = h0 * W + w0;
                    double sum = 0.0;
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++) {
                            float v = x[pl * H * W + h * W + w];
                            sum += v;
                            if (v > best) {
                                best = v;
                                at = h * W + w;
                            }
                        }
                    int64_t div = cux_avg_divisor(include, oy, ox, s, s, p, p, k, k, H, W);
                    y[o] = avg ? (float)(sum / (double)div) : best;
                    idx[o] = (int32_t)at;
                }
                assert_memory_equal(y, yr, (size_t)no * sizeof *y);
                if (!avg)
                    assert_memory_equal(idx, idxr, (size_t)no * sizeof *idx);
                /* backward by gathering, as k_maxpool_bwd / k_avgpool_bwd */
                xpb_op bop = op_of(avg ? XPB_OP_AVGPOOL_BWD : XPB_OP_MAXPOOL_BWD, avg ? 1 : 2, 1);
                bop.attrs = op.attrs;
                ref_op_args b = {.op = &bop,
                                 .in_desc = {&dout, &di},
                                 .out_desc = {&din},
                                 .in = {dy, (float *)(void *)idxr},
                                 .out = {dxr},
                                 .err = err,
                                 .err_size = sizeof err};
                assert_int_equal(ref_kernel_for(bop.kind)(&b), XPB_OK);
                for (int64_t e = 0; e < N * C * H * W; e++) {
                    int64_t w = e % W, h = (e / W) % H, pl = e / (H * W), y0, y1, x0, x1;
                    cux_pool_outputs_of(h, s, p, k, oh, &y0, &y1);
                    cux_pool_outputs_of(w, s, p, k, ow, &x0, &x1);
                    float sum = 0.0f;
                    for (int64_t oy = y0; oy < y1; oy++)
                        for (int64_t ox = x0; ox < x1; ox++) {
                            int64_t o = (pl * oh + oy) * ow + ox;
                            if (avg) {
                                int64_t div =
                                    cux_avg_divisor(include, oy, ox, s, s, p, p, k, k, H, W);
                                sum += (float)((double)dy[o] / (double)div);
                            } else if (idx[o] == h * W + w) {
                                sum += dy[o];
                            }
                        }
                    dx[e] = sum;
                }
                assert_true(rel_err(dx, dxr, N * C * H * W, 1e-3) < 1e-6);
            }
        free(y);
        free(yr);
        free(dy);
        free(idx);
        free(idxr);
    }
}

/* ---- reflection padding ---- */

static void test_reflection(void **state)
{
    (void)state;
    for (int64_t size = 1; size <= 9; size++)
        for (int64_t pad = 0; pad < size; pad++)
            for (int64_t i = 0; i < size; i++) {
                int64_t src[3], want[8], nw = 0;
                int n = cux_reflect_sources(i, size, pad, src);
                for (int64_t j = 0; j < size + 2 * pad; j++)
                    if (cux_reflect(j - pad, size) == i)
                        want[nw++] = j;
                assert_int_equal(n, nw);
                for (int a = 0; a < n; a++) {
                    int found = 0;
                    for (int64_t b = 0; b < nw; b++)
                        found |= src[a] == want[b];
                    assert_true(found);
                }
            }
    enum { N = 1, C = 2, H = 5, W = 4, P = 3 };
    float x[N * C * H * W], dx[N * C * H * W], dxr[N * C * H * W];
    float y[N * C * (H + 2 * P) * (W + 2 * P)], yr[N * C * (H + 2 * P) * (W + 2 * P)];
    for (int i = 0; i < N * C * H * W; i++)
        x[i] = frand(-1, 1);
    xpb_tensor_desc din = desc(4, N, C, H, W), dout = desc(4, N, C, H + 2 * P, W + 2 * P);
    xpb_op op = op_of(XPB_OP_REFLECTION_PAD, 1, 1);
    op.attrs.pad[0] = P;
    op.attrs.pad[1] = P - 1;
    dout.dims[3] = W + 2 * (P - 1);
    char err[256];
    ref_op_args a = {.op = &op,
                     .in_desc = {&din},
                     .out_desc = {&dout},
                     .in = {x},
                     .out = {yr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_reflection_pad(&a), XPB_OK);
    int64_t oh = dout.dims[2], ow = dout.dims[3];
    for (int64_t o = 0; o < N * C * oh * ow; o++) {
        int64_t w = o % ow, h = (o / ow) % oh, pl = o / (oh * ow);
        y[o] = x[pl * H * W + cux_reflect(h - P, H) * W + cux_reflect(w - (P - 1), W)];
    }
    assert_memory_equal(y, yr, (size_t)(N * C * oh * ow) * sizeof *y);
    xpb_op bop = op_of(XPB_OP_REFLECTION_PAD_BWD, 1, 1);
    bop.attrs = op.attrs;
    ref_op_args b = {.op = &bop,
                     .in_desc = {&dout},
                     .out_desc = {&din},
                     .in = {yr},
                     .out = {dxr},
                     .err = err,
                     .err_size = sizeof err};
    assert_int_equal(ref_reflection_pad_bwd(&b), XPB_OK);
    for (int64_t e = 0; e < N * C * H * W; e++) {
        int64_t w = e % W, h = (e / W) % H, pl = e / (H * W), rows[3], cols[3];
        int nr = cux_reflect_sources(h, H, P, rows), nc = cux_reflect_sources(w, W, P - 1, cols);
        float sum = 0.0f;
        for (int r = 0; r < nr; r++)
            for (int c = 0; c < nc; c++)
                sum += yr[(pl * oh + rows[r]) * ow + cols[c]];
        dx[e] = sum;
    }
    assert_true(rel_err(dx, dxr, N * C * H * W, 1e-3) < 1e-6);
}

/* ---- layouts ---- */

static void test_layouts(void **state)
{
    (void)state;
    const int64_t N = 3, C = 5, H = 4, W = 6;
    for (int layout = CUX_PLAIN; layout <= CUX_NHWC; layout++) {
        char *seen = calloc((size_t)(N * C * H * W), 1);
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        int64_t o = cux_offset(layout, C, H, W, n, c, h, w), a, b, d, e;
                        assert_true(o >= 0 && o < N * C * H * W && !seen[o]);
                        seen[o] = 1;
                        cux_coords(layout, C, H, W, o, &a, &b, &d, &e);
                        assert_true(a == n && b == c && d == h && e == w);
                    }
        free(seen);
    }
    assert_int_equal(cux_offset(CUX_NHWC, C, H, W, 0, 1, 0, 0), 1); /* channels innermost */
    assert_int_equal(cux_offset(CUX_PLAIN, C, H, W, 0, 0, 0, 1), 1);
    assert_true(cux_layouts_agree(512, 1, 1) && cux_layouts_agree(1, 7, 7));
    assert_false(cux_layouts_agree(512, 7, 7));
    assert_int_equal(cux_chunks(1), 1);
    assert_int_equal(cux_chunks(CUX_CHUNK + 1), 2);
}

/* ---- fp16 loss scaling ---- */

static void test_scaler(void **state)
{
    (void)state;
    float scale = 65536.0f;
    uint32_t good = 0;
    cux_scaler_next(&scale, &good, 1, 2000); /* overflow: halve */
    assert_true(scale == 32768.0f && good == 0);
    for (int i = 0; i < 1999; i++)
        cux_scaler_next(&scale, &good, 0, 2000);
    assert_true(scale == 32768.0f && good == 1999);
    cux_scaler_next(&scale, &good, 0, 2000); /* the 2000th clean step: double */
    assert_true(scale == 65536.0f && good == 0);
    cux_scaler_next(&scale, &good, 0, 0); /* interval 0: fixed */
    assert_true(scale == 65536.0f);
    float one = 1.0f;
    cux_scaler_next(&one, &good, 1, 0); /* never below 1 */
    assert_true(one == 1.0f);
    float big = 16777216.0f;
    good = 0;
    cux_scaler_next(&big, &good, 0, 1); /* never above 2^24 */
    assert_true(big == 16777216.0f);
}

/* ---- op set 3: AdamW and the smoothed cross-entropy's backward ---- */

/* cux_adamw with cux_adamw_decay and cux_adam_coeffs: cpu_ref's ref_adamw_update bit for bit
 * over three steps (F32 and I32 step counters), the moments too; and cux_xent_bwd_smooth with
 * the kernel's f = scale / N_valid: ref_softmax_xent_bwd bit for bit with an ignored label and
 * label smoothing (ignored rows 0), and cux_xent_bwd's numbers when eps = 0. */
static void test_adamw_and_xent_smooth(void **state)
{
    (void)state;
    check_adam(1, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f);
    char err[256];
    /* the cross-entropy's backward: rows with label 2 ignored, smoothing 0.1 and 0 */
    enum { R = 7, K = 5 };
    float prob[R * K], dz[R * K];
    int32_t labels[R];
    for (int i = 0; i < R * K; i++)
        prob[i] = frand(0, 1);
    for (int n = 0; n < R; n++)
        labels[n] = (n * 3) % K;
    xpb_tensor_desc pd = desc(2, R, K, 1, 1), ld = desc(1, R, 1, 1, 1);
    ld.dtype = XPB_DTYPE_I32;
    for (int smooth = 0; smooth < 2; smooth++) {
        xpb_op xb = op_of(XPB_OP_SOFTMAX_XENT_BWD, 2, 1);
        xb.attrs.scale = 0.5f;
        xb.index_flags = XPB_INDEX_IGNORE;
        xb.ignore_index = 2;
        xb.label_smoothing = smooth ? 0.1f : 0.0f;
        ref_op_args b = {.op = &xb,
                         .in_desc = {&pd, &ld},
                         .out_desc = {&pd},
                         .in = {prob, (float *)(void *)labels},
                         .out = {dz},
                         .err = err,
                         .err_size = sizeof err};
        assert_int_equal(ref_softmax_xent_bwd(&b), XPB_OK);
        int valid = 0;
        for (int n = 0; n < R; n++)
            valid += labels[n] != 2;
        double eps = (double)xb.label_smoothing, f = 0.5 / (double)valid;
        for (int n = 0; n < R; n++)
            for (int k = 0; k < K; k++) {
                float want = dz[n * K + k];
                if (labels[n] == 2) {
                    assert_true(same_bits(want, 0.0f));
                    continue;
                }
                float got =
                    cux_xent_bwd_smooth(f, prob[n * K + k], k == labels[n], eps, eps / (double)K);
                assert_true(same_bits(got, want));
                if (!smooth)
                    assert_true(same_bits(cux_xent_bwd(f, prob[n * K + k], k == labels[n]), want));
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_dropout_stream),
        cmocka_unit_test(test_dropout_layouts),
        cmocka_unit_test(test_losses),
        cmocka_unit_test(test_optimizers),
        cmocka_unit_test(test_contraction),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_instancenorm_and_fused_act),
        cmocka_unit_test(test_pool_windows),
        cmocka_unit_test(test_pooling),
        cmocka_unit_test(test_reflection),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_scaler),
        cmocka_unit_test(test_adamw_and_xent_smooth),
        cmocka_unit_test(test_gelu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
