/* The conformance suite's inputs show accumulation order and precision (conformance_inputs.c):
 * data of mixed magnitude with full mantissas, and backward cases whose sums are long. On the
 * suite's own inputs, weight gradients summed host-side as different backends would sum them
 * are judged by the host's judge against the reference's way (products and sums in double):
 * a float accumulator in another order shows a small non-zero error and passes, a
 * half-precision accumulator fails; and even on the bf16-rounded inputs of reduced precision two
 * orders of fp32 sums differ (on inputs of one binade most sums were exact, and agreed). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check/conformance_case.h"
#include "check/judge.h"

static xpb_ct_list catalogue;

static int setup(void **state)
{
    (void)state;
    memset(&catalogue, 0, sizeof catalogue);
    xpb_ct_catalogue(&catalogue, 1);
    for (size_t i = 0; i < catalogue.n; i++)
        xpb_ct_bind(&catalogue.v[i]);
    return catalogue.oom || catalogue.n == 0 ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    xpb_ct_list_free(&catalogue);
    return 0;
}

/* How a backend sums: the reference's way, a float accumulator walking the terms backwards, a
 * half-precision accumulator (every partial sum rounded to fp16). */
enum sum_mode { SUM_DOUBLE = 0, SUM_FLOAT_REVERSED = 1, SUM_HALF = 2 };

/* The sum of a[i] * b[i], i < n, as `mode` sums it, rounded to float. */
static float dot(const float *a, const float *b, int64_t n, int mode)
{
    if (mode == SUM_DOUBLE) {
        double s = 0.0;
        for (int64_t i = 0; i < n; i++)
            s += (double)a[i] * (double)b[i];
        return (float)s;
    }
    float s = 0.0f;
    for (int64_t i = n - 1; i >= 0; i--) {
        s += a[i] * b[i];
        if (mode == SUM_HALF)
            s = (float)(_Float16)s;
    }
    return s;
}

/* The weight gradient of op `op` of case c (LINEAR_BWD_WEIGHTS or CONV2D_BWD_WEIGHTS) from the
 * inputs `in`, summed as `mode` says, into a malloc'ed array of the gradient's size (owned by
 * the caller). The terms of each element are gathered in the order (n, oh, ow). */
static float *weight_gradient(const xpb_ct_case *c, const xpb_op *op, void **in, int mode)
{
    const xpb_tensor_desc *dyd = &c->t[op->inputs[0]], *xd = &c->t[op->inputs[1]];
    const xpb_tensor_desc *wd = &c->t[op->outputs[0]];
    const float *dy = in[op->inputs[0]], *x = in[op->inputs[1]];
    int64_t n = dyd->dims[0], k = dyd->dims[1], ch = xd->dims[1];
    int64_t oh = dyd->ndim == 4 ? dyd->dims[2] : 1, ow = dyd->ndim == 4 ? dyd->dims[3] : 1;
    int64_t h = xd->ndim == 4 ? xd->dims[2] : 1, w = xd->ndim == 4 ? xd->dims[3] : 1;
    int64_t kh = wd->ndim == 4 ? wd->dims[2] : 1, kw = wd->ndim == 4 ? wd->dims[3] : 1;
    const xpb_op_attrs *a = &op->attrs;
    int64_t terms = n * oh * ow;
    float *out = malloc((size_t)xpb_tensor_numel(wd) * sizeof *out);
    float *ta = malloc((size_t)terms * sizeof *ta), *tb = malloc((size_t)terms * sizeof *tb);
    assert_true(out && ta && tb);
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t cc = 0; cc < ch; cc++)
            for (int64_t i = 0; i < kh; i++)
                for (int64_t j = 0; j < kw; j++) {
                    int64_t m = 0;
                    for (int64_t b = 0; b < n; b++)
                        for (int64_t y = 0; y < oh; y++)
                            for (int64_t z = 0; z < ow; z++) {
                                int64_t hy = dyd->ndim == 4
                                                 ? y * a->stride[0] - a->pad[0] + i * a->dilation[0]
                                                 : 0;
                                int64_t wz = dyd->ndim == 4
                                                 ? z * a->stride[1] - a->pad[1] + j * a->dilation[1]
                                                 : 0;
                                if (hy < 0 || hy >= h || wz < 0 || wz >= w)
                                    continue;
                                ta[m] = dy[((b * k + kk) * oh + y) * ow + z];
                                tb[m++] = x[((b * ch + cc) * h + hy) * w + wz];
                            }
                    out[((kk * ch + cc) * kh + i) * kw + j] = dot(ta, tb, m, mode);
                }
    free(ta);
    free(tb);
    return out;
}

/* Whether case c is a weight-gradient case this file sums; *op gets its op. */
static int weight_case(const xpb_ct_case *c, const xpb_op **op)
{
    *op = &c->ops[0];
    return c->n_ops == 1 && (c->ops[0].kind == XPB_OP_LINEAR_BWD_WEIGHTS ||
                             c->ops[0].kind == XPB_OP_CONV2D_BWD_WEIGHTS);
}

/* The judge's verdict on one op-case tensor x against ref. */
static xpb_compare_verdict judged(const float *x, const float *ref, const xpb_tensor_desc *d)
{
    xpb_compare cmp;
    xpb_compare_init(&cmp, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(xpb_compare_add_shaped(&cmp, "dw", XPB_ROLE_OUTPUT, XPB_COMPARE_OP, x, ref,
                                            d->ndim, d->dims),
                     XPB_OK);
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &cmp, XPB_COMPARE_OP);
    xpb_compare_free(&cmp);
    return v;
}

/* Data is of mixed magnitude: a quarter or more of every data input lies below 1/16 (uniform
 * inputs put 6% there), none above 1, and most elements use the low half of the mantissa. */
static void test_data_of_mixed_magnitude(void **state)
{
    (void)state;
    int inputs = 0;
    for (size_t i = 0; i < catalogue.n; i++) {
        const xpb_ct_case *c = &catalogue.v[i];
        void **in = xpb_ct_inputs(c, 42, 0);
        assert_non_null(in);
        for (uint32_t t = 0; t < c->n_t; t++) {
            if (c->init[t] != XPB_CT_INIT_UNIFORM || xpb_tensor_numel(&c->t[t]) < 64)
                continue;
            int64_t n = xpb_tensor_numel(&c->t[t]), small = 0, fine = 0;
            const float *v = in[t];
            for (int64_t j = 0; j < n; j++) {
                union {
                    float f;
                    uint32_t u;
                } bits = {.f = v[j]};
                assert_true(fabsf(v[j]) <= 1.0f);
                small += fabsf(v[j]) < 1.0f / 16;
                fine += (bits.u & 0xfffu) != 0;
            }
            assert_true(4 * small >= n);
            assert_true(2 * fine >= n);
            inputs++;
        }
        xpb_ct_buffers_free(in);
    }
    assert_true(inputs > 50);
}

/* The quick suite has a backward case summing many terms per element for each of: a
 * convolution's and a linear layer's weight gradient, batch- and instance-norm backward. */
static void test_long_sums(void **state)
{
    (void)state;
    int64_t longest[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < catalogue.n; i++) {
        const xpb_ct_case *c = &catalogue.v[i];
        for (uint32_t k = 0; k < c->n_ops; k++) {
            const xpb_op *op = &c->ops[k];
            if (op->kind != XPB_OP_CONV2D_BWD_WEIGHTS && op->kind != XPB_OP_LINEAR_BWD_WEIGHTS &&
                op->kind != XPB_OP_BATCHNORM_BWD && op->kind != XPB_OP_INSTANCENORM_BWD)
                continue;
            const xpb_tensor_desc *x = &c->t[op->inputs[op->kind == XPB_OP_BATCHNORM_BWD ||
                                                                op->kind == XPB_OP_INSTANCENORM_BWD
                                                            ? 1
                                                            : 0]];
            int64_t per_channel = xpb_tensor_numel(x) / x->dims[1];
            if (op->kind == XPB_OP_CONV2D_BWD_WEIGHTS && per_channel > longest[0])
                longest[0] = per_channel; /* N * OH * OW terms */
            if (op->kind == XPB_OP_LINEAR_BWD_WEIGHTS && x->dims[0] > longest[1])
                longest[1] = x->dims[0]; /* N terms */
            if (op->kind == XPB_OP_BATCHNORM_BWD && per_channel > longest[2])
                longest[2] = per_channel; /* N * H * W */
            if (op->kind == XPB_OP_INSTANCENORM_BWD && x->dims[2] * x->dims[3] > longest[3])
                longest[3] = x->dims[2] * x->dims[3]; /* H * W */
        }
    }
    assert_true(longest[0] >= 2000);
    assert_true(longest[1] >= 256);
    assert_true(longest[2] >= 2000);
    assert_true(longest[3] >= 1000);
}

/* On every weight-gradient case, a float accumulator in another order than the reference's
 * shows a non-zero error within fp32's tolerance (on the longest sums above 1e-7), and a
 * half-precision accumulator fails. */
static void test_order_shows_and_low_precision_fails(void **state)
{
    (void)state;
    int cases = 0;
    double largest = 0.0;
    for (size_t i = 0; i < catalogue.n; i++) {
        const xpb_ct_case *c = &catalogue.v[i];
        const xpb_op *op;
        if (!weight_case(c, &op))
            continue;
        void **in = xpb_ct_inputs(c, 42 * 7919u + c->n_t, 0);
        assert_non_null(in);
        const xpb_tensor_desc *wd = &c->t[op->outputs[0]];
        float *ref = weight_gradient(c, op, in, SUM_DOUBLE);
        float *reversed = weight_gradient(c, op, in, SUM_FLOAT_REVERSED);
        float *low = weight_gradient(c, op, in, SUM_HALF);
        xpb_compare_verdict v = judged(reversed, ref, wd);
        assert_true(v.passed);
        assert_true(v.error > 0.0);
        largest = v.error > largest ? v.error : largest;
        v = judged(low, ref, wd);
        assert_false(v.passed);
        assert_int_equal(v.failing, 1);
        assert_int_equal(v.n_located, 1);
        free(ref);
        free(reversed);
        free(low);
        xpb_ct_buffers_free(in);
        cases++;
    }
    assert_true(cases >= 6);
    assert_true(largest > 1e-7);
}

/* Under reduced precision the inputs are rounded to bf16; their products still have exponents
 * so far apart that in every weight-gradient case of 16 terms or more per element the fp32
 * sums of a tenth of the elements or more depend on their order (on inputs of one binade, as
 * few as 1.6%: most sums were exact). */
static void test_bf16_inputs_do_not_sum_exactly(void **state)
{
    (void)state;
    int cases = 0;
    for (size_t i = 0; i < catalogue.n; i++) {
        const xpb_ct_case *c = &catalogue.v[i];
        const xpb_op *op;
        if (!weight_case(c, &op))
            continue;
        const xpb_tensor_desc *dy = &c->t[op->inputs[0]];
        if (xpb_tensor_numel(dy) / dy->dims[1] < 16) /* terms per element: N * OH * OW */
            continue;
        void **in = xpb_ct_inputs(c, 42 * 7919u + c->n_t, 1);
        assert_non_null(in);
        float *ref = weight_gradient(c, op, in, SUM_DOUBLE);
        float *reversed = weight_gradient(c, op, in, SUM_FLOAT_REVERSED);
        int64_t differ = 0, n = xpb_tensor_numel(&c->t[op->outputs[0]]);
        for (int64_t j = 0; j < n; j++)
            differ += ref[j] != reversed[j];
        assert_true(10 * differ >= n);
        free(ref);
        free(reversed);
        xpb_ct_buffers_free(in);
        cases++;
    }
    assert_true(cases >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_of_mixed_magnitude),
        cmocka_unit_test(test_long_sums),
        cmocka_unit_test(test_order_shows_and_low_precision_fails),
        cmocka_unit_test(test_bf16_inputs_do_not_sum_exactly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
