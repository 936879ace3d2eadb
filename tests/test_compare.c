/* The host's numerical judge (core/check/judge.h) on crafted arrays: the tolerance table, a
 * perturbation just under and just over tolerance, tensors that are ~0 next to their siblings,
 * one wrong element in a large tensor, NaN and infinity, the gradient allowance and gradients
 * judged together, and which tensor is named the worst; where a tensor fails (the worst
 * element's flat index, coordinates and both values, a NaN first; the failing tensors furthest
 * from tolerance first, at most XPB_COMPARE_LOCATED_MAX, also across kinds); aligned gradients
 * judged one by one whatever the kink flips, floored by a thousandth of their group's scale, or
 * by the whole of it when zero in exact arithmetic. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <xpubench/backend.h>

#include "check/judge.h"

/* n values of U(-1, 1) from a fixed LCG stream; owned by the caller (free). */
static float *random_tensor(int64_t n, uint32_t seed)
{
    float *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    uint32_t s = seed * 2654435761u + 1u;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)((double)(s >> 8) / (double)(1u << 24) * 2.0 - 1.0);
    }
    return v;
}

/* ref scaled by (1 + e) element by element: a norm-relative error of exactly |e| (up to float
 * rounding). Owned by the caller. */
static float *scaled(const float *ref, int64_t n, double e)
{
    float *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)((double)ref[i] * (1.0 + e));
    return x;
}

/* The verdict of a comparison of one tensor of `kind`, x against ref. */
static xpb_compare_verdict judge_kind(uint32_t precision, uint32_t kind, const float *x,
                                      const float *ref, int64_t n)
{
    xpb_compare c;
    xpb_compare_init(&c, precision, 1.0);
    assert_int_equal(xpb_compare_add(&c, "t", XPB_ROLE_OUTPUT, kind, x, ref, n), XPB_OK);
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &c, kind);
    xpb_compare_free(&c);
    return v;
}

/* The verdict of a comparison of one op-case tensor x against ref. */
static xpb_compare_verdict judge_one(uint32_t precision, const float *x, const float *ref,
                                     int64_t n)
{
    return judge_kind(precision, XPB_COMPARE_OP, x, ref, n);
}

static void test_table(void **state)
{
    (void)state;
    const xpb_tolerance *fp32 = xpb_tolerance_for(XPB_PRECISION_FP32);
    const xpb_tolerance *bf16 = xpb_tolerance_for(XPB_PRECISION_BF16_MIXED);
    assert_int_equal(fp32->precision, XPB_PRECISION_FP32);
    assert_true(fp32->op == 1e-4 && fp32->forward == 1e-4 && fp32->gradient == 1e-2);
    assert_true(fp32->floor == 0.01);
    assert_true(bf16->op == 5e-2 && bf16->forward == 1e-1 && bf16->gradient == 0.0);
    assert_true(bf16->together == 0.5 && bf16->floor == 0.1);
    assert_int_equal(xpb_tolerance_for(XPB_PRECISION_TF32)->precision, XPB_PRECISION_TF32);
    assert_int_equal(xpb_tolerance_for(XPB_PRECISION_FP16_MIXED)->precision,
                     XPB_PRECISION_FP16_MIXED);
    /* an unknown policy gets the loosest row, never NULL */
    assert_ptr_equal(xpb_tolerance_for(99), bf16);
    /* every reduced policy is looser than fp32, and no allowance is looser than together */
    for (uint32_t p = XPB_PRECISION_TF32; p <= XPB_PRECISION_FP16_MIXED; p++) {
        assert_true(xpb_tolerance_for(p)->op > fp32->op);
        assert_true(xpb_tolerance_for(p)->forward >= xpb_tolerance_for(p)->op);
        assert_true(xpb_tolerance_for(p)->gradient <= xpb_tolerance_for(p)->together);
    }
}

static void test_identical_is_zero(void **state)
{
    (void)state;
    float *ref = random_tensor(1000, 1);
    xpb_compare_verdict v = judge_one(XPB_PRECISION_FP32, ref, ref, 1000);
    assert_true(v.passed);
    assert_true(v.error == 0.0 && v.max_abs == 0.0);
    assert_string_equal(v.worst, "t");
    free(ref);
}

/* A relative perturbation of 0.9 and 1.1 times the tolerance, in fp32 and bf16. */
static void test_just_under_and_over(void **state)
{
    (void)state;
    const uint32_t precisions[2] = {XPB_PRECISION_FP32, XPB_PRECISION_BF16_MIXED};
    float *ref = random_tensor(4096, 2);
    for (int i = 0; i < 2; i++) {
        double tol = xpb_tolerance_for(precisions[i])->op;
        float *under = scaled(ref, 4096, 0.9 * tol), *over = scaled(ref, 4096, -1.1 * tol);
        xpb_compare_verdict v = judge_one(precisions[i], under, ref, 4096);
        assert_true(v.passed);
        assert_true(fabs(v.error - 0.9 * tol) < 0.01 * tol);
        assert_true(v.tolerance == tol);
        v = judge_one(precisions[i], over, ref, 4096);
        assert_false(v.passed);
        assert_true(fabs(v.error - 1.1 * tol) < 0.01 * tol);
        free(under);
        free(over);
    }
    /* 7% in bf16: beyond an op's tolerance, within a whole model's forward pass's */
    float *x = scaled(ref, 4096, 0.07);
    assert_false(judge_kind(XPB_PRECISION_BF16_MIXED, XPB_COMPARE_OP, x, ref, 4096).passed);
    assert_true(judge_kind(XPB_PRECISION_BF16_MIXED, XPB_COMPARE_FORWARD, x, ref, 4096).passed);
    free(x);
    free(ref);
}

/* A bias gradient that is zero in exact arithmetic is rounding noise on both sides: next to
 * siblings of the same role it is measured against their scale and passes; alone, noise against
 * noise is not small. */
static void test_near_zero_tensor(void **state)
{
    (void)state;
    float *big = random_tensor(512, 3);
    float noise_x[8], noise_ref[8];
    for (int i = 0; i < 8; i++) {
        noise_x[i] = (float)((i % 3) - 1) * 3e-8f;
        noise_ref[i] = (float)((i % 2) * 2 - 1) * 2e-8f;
    }
    xpb_compare c;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(xpb_compare_add(&c, "w", XPB_ROLE_OUTPUT, XPB_COMPARE_FORWARD, big, big, 512),
                     XPB_OK);
    assert_int_equal(
        xpb_compare_add(&c, "b", XPB_ROLE_OUTPUT, XPB_COMPARE_FORWARD, noise_x, noise_ref, 8),
        XPB_OK);
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &c, XPB_COMPARE_FORWARD);
    assert_true(v.passed);
    assert_true(v.error > 0 && v.error < 1e-5);
    assert_string_equal(v.worst, "b");
    xpb_compare_free(&c);
    /* the same noise alone (or beside tensors of another role) fails */
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(xpb_compare_add(&c, "w", XPB_ROLE_LOSS, XPB_COMPARE_FORWARD, big, big, 512),
                     XPB_OK);
    assert_int_equal(
        xpb_compare_add(&c, "b", XPB_ROLE_OUTPUT, XPB_COMPARE_FORWARD, noise_x, noise_ref, 8),
        XPB_OK);
    xpb_compare_judge(&v, &c, XPB_COMPARE_FORWARD);
    assert_false(v.passed);
    assert_true(v.error > 0.5);
    xpb_compare_free(&c);
    /* an all-zero reference: zero agrees, anything else is infinitely wrong */
    float zeros[4] = {0, 0, 0, 0}, tiny[4] = {0, 1e-30f, 0, 0};
    assert_true(judge_one(XPB_PRECISION_FP32, zeros, zeros, 4).passed);
    v = judge_one(XPB_PRECISION_FP32, tiny, zeros, 4);
    assert_false(v.passed);
    assert_true(isinf(v.error));
    free(big);
}

/* One element of a million off by the tensor's own scale: the norm sees it as one element
 * among n, 1.7e-3 here, which fails fp32 (a wrong kernel) but is within bf16's rounding
 * tolerance; off by a hundred times that, bf16 fails too. */
static void test_one_wrong_element(void **state)
{
    (void)state;
    const int64_t n = 1000000;
    float *ref = random_tensor(n, 4), *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    memcpy(x, ref, (size_t)n * sizeof *x);
    x[n / 2] += 1.0f;
    xpb_compare_verdict v = judge_one(XPB_PRECISION_FP32, x, ref, n);
    assert_false(v.passed);
    assert_true(v.error > 1e-3 && v.error < 3e-3);
    assert_true(v.max_abs > 0.99 && v.max_abs < 1.01);
    assert_true(judge_one(XPB_PRECISION_BF16_MIXED, x, ref, n).passed);
    x[n / 2] = ref[n / 2] + 100.0f;
    assert_false(judge_one(XPB_PRECISION_BF16_MIXED, x, ref, n).passed);
    free(ref);
    free(x);
}

static void test_nan_and_inf(void **state)
{
    (void)state;
    float ref[4] = {1, -2, 3, INFINITY}, x[4] = {1, -2, 3, INFINITY};
    /* the same infinity on both sides agrees */
    xpb_compare_verdict v = judge_one(XPB_PRECISION_BF16_MIXED, x, ref, 4);
    assert_true(v.passed);
    assert_true(v.error == 0.0);
    x[0] = NAN;
    v = judge_one(XPB_PRECISION_BF16_MIXED, x, ref, 4);
    assert_false(v.passed);
    assert_true(isinf(v.error) && isinf(v.max_abs));
    x[0] = 1;
    x[3] = -INFINITY;
    assert_false(judge_one(XPB_PRECISION_BF16_MIXED, x, ref, 4).passed);
    /* NaN in the reference never agrees, not even with NaN */
    float rn[2] = {NAN, 1}, xn[2] = {NAN, 1};
    assert_false(judge_one(XPB_PRECISION_FP32, xn, rn, 2).passed);
}

/* Adds gradient `name` = size * ref * (1 + e) of n random elements to c, in floor group
 * `group`. */
static void add_gradient_to(xpb_compare *c, const char *name, uint32_t group, int64_t n,
                            uint32_t seed, double e, double size)
{
    float *ref = random_tensor(n, seed);
    for (int64_t i = 0; i < n; i++)
        ref[i] = (float)(ref[i] * size);
    float *x = scaled(ref, n, e);
    assert_int_equal(xpb_compare_add(c, name, group, XPB_COMPARE_GRADIENT, x, ref, n), XPB_OK);
    free(ref);
    free(x);
}

/* add_gradient_to the group of every gradient (the suite's). */
static void add_gradient(xpb_compare *c, const char *name, int64_t n, uint32_t seed, double e,
                         double size)
{
    add_gradient_to(c, name, XPB_ROLE_GRAD, n, seed, e, size);
}

/* fp32 gradients get the allowance tensor by tensor; after kink flips, and under reduced
 * precision, they are judged together. */
static void test_gradient_allowance_and_together(void **state)
{
    (void)state;
    xpb_compare c;
    xpb_compare_verdict v;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    add_gradient(&c, "conv1.weight.grad", 2000, 5, 5e-3, 1.0); /* a near-tie's trace */
    add_gradient(&c, "fc.weight.grad", 2000, 6, 1e-6, 1.0);
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_true(v.passed && !v.together);
    assert_true(v.tolerance == 1e-2);
    assert_string_equal(v.worst, "conv1.weight.grad");
    add_gradient(&c, "bn.weight.grad", 64, 7, 3e-2, 1.0); /* beyond the allowance */
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_false(v.passed);
    assert_string_equal(v.worst, "bn.weight.grad");
    /* after a kink flip the same gradients are judged together: the small tensor's 3% is a
     * small part of the whole */
    c.kink_flips = 1;
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_true(v.passed && v.together);
    assert_true(v.tolerance == 0.5 && v.error < 1e-2);
    assert_string_equal(v.worst, "bn.weight.grad");
    xpb_compare_free(&c);

    /* bf16: one noisy tensor at 0.6 among larger ones passes together; a missing (zero)
     * gradient of the largest tensor fails */
    xpb_compare_init(&c, XPB_PRECISION_BF16_MIXED, 1.0);
    add_gradient(&c, "bn1.bias.grad", 64, 8, 0.6, 1.0);
    add_gradient(&c, "conv.weight.grad", 4096, 9, 0.2, 1.0);
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_true(v.passed && v.together);
    assert_true(v.error > 0.19 && v.error < 0.25);
    add_gradient(&c, "fc.weight.grad", 8192, 10, -1.0, 1.0);
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_false(v.passed);
    assert_string_equal(v.worst, "fc.weight.grad");
    xpb_compare_free(&c);
}

/* judge_all: every kind judged by its own tolerance, the one furthest from it decides; the
 * scale multiplies every tolerance. */
static void test_judge_all_and_scale(void **state)
{
    (void)state;
    float *ref = random_tensor(256, 11), *x = scaled(ref, 256, 5e-5);
    xpb_compare c;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(xpb_compare_add(&c, "loss", XPB_ROLE_LOSS, XPB_COMPARE_FORWARD, x, ref, 256),
                     XPB_OK);
    add_gradient(&c, "w.grad", 256, 12, 8e-3, 1.0);
    xpb_compare_verdict v;
    xpb_compare_judge_all(&v, &c);
    assert_true(v.passed);
    assert_int_equal(v.compared, 2);
    assert_string_equal(v.worst, "w.grad"); /* 0.8 of its tolerance against 0.5 */
    assert_true(v.tolerance == 1e-2);
    xpb_compare_free(&c);

    xpb_compare_init(&c, XPB_PRECISION_FP32, 0.25);
    assert_int_equal(xpb_compare_add(&c, "loss", XPB_ROLE_LOSS, XPB_COMPARE_FORWARD, x, ref, 256),
                     XPB_OK);
    xpb_compare_judge_all(&v, &c);
    assert_false(v.passed); /* 5e-5 against 0.25 * 1e-4 */
    assert_true(v.tolerance == 0.25e-4);
    xpb_compare_free(&c);
    free(ref);
    free(x);
}

/* Nothing compared passes and names no tensor. */
static void test_empty(void **state)
{
    (void)state;
    xpb_compare c;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_true(v.passed);
    assert_int_equal(v.compared, 0);
    assert_string_equal(v.worst, "");
    xpb_compare_free(&c);
    xpb_compare_free(NULL);
}

static void test_coords_and_format(void **state)
{
    (void)state;
    const int64_t dims[4] = {2, 3, 4, 5};
    int64_t c[4];
    xpb_compare_coords(c, ((1 * 3 + 2) * 4 + 3) * 5 + 4, 4, dims);
    assert_true(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4);
    xpb_compare_coords(c, 7, 2, (const int64_t[]){3, 5});
    assert_true(c[0] == 1 && c[1] == 2 && c[2] == 0 && c[3] == 0);
    struct xpb_located l = {
        .index = 42, .ndim = 2, .coords = {2, 8}, .value = 1.5, .reference = -0.25};
    char buf[96];
    xpb_compare_format_located(buf, sizeof buf, &l);
    assert_string_equal(buf, "element 42 (2, 8): 1.5 against -0.25");
    l.value = NAN;
    xpb_compare_format_located(buf, sizeof buf, &l);
    assert_string_equal(buf, "element 42 (2, 8): nan against -0.25");
}

/* The element furthest from the reference is located by index and (n, c, h, w); a NaN that
 * disagrees is the worst element whatever comes after it. */
static void test_worst_element(void **state)
{
    (void)state;
    const int64_t dims[4] = {2, 3, 4, 5};
    float *ref = random_tensor(120, 1), *x = scaled(ref, 120, 0.0);
    int64_t at = ((1 * 3 + 2) * 4 + 3) * 5 + 4, other = 17;
    x[at] += 0.5f;
    x[other] += 0.1f;
    xpb_compare c;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(
        xpb_compare_add_shaped(&c, "y", XPB_ROLE_OUTPUT, XPB_COMPARE_OP, x, ref, 4, dims), XPB_OK);
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &c, XPB_COMPARE_OP);
    assert_false(v.passed);
    assert_int_equal(v.failing, 1);
    assert_int_equal(v.n_located, 1);
    const struct xpb_located *l = &v.located[0];
    assert_string_equal(l->tensor, "y");
    assert_int_equal(l->index, at);
    assert_int_equal(l->ndim, 4);
    assert_true(l->coords[0] == 1 && l->coords[1] == 2 && l->coords[2] == 3 && l->coords[3] == 4);
    assert_true(l->value == x[at] && l->reference == ref[at]);
    assert_true(l->error == v.error && l->tolerance == 1e-4);
    xpb_compare_free(&c);

    x[3] = NAN;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(
        xpb_compare_add_shaped(&c, "y", XPB_ROLE_OUTPUT, XPB_COMPARE_OP, x, ref, 4, dims), XPB_OK);
    xpb_compare_judge(&v, &c, XPB_COMPARE_OP);
    assert_int_equal(v.located[0].index, 3);
    assert_true(isnan(v.located[0].value));
    xpb_compare_free(&c);
    /* a tensor within tolerance is not located; the flat form has one coordinate */
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    assert_int_equal(xpb_compare_add(&c, "z", XPB_ROLE_OUTPUT, XPB_COMPARE_OP, ref, ref, 120),
                     XPB_OK);
    xpb_compare_judge(&v, &c, XPB_COMPARE_OP);
    assert_true(v.passed);
    assert_int_equal(v.failing + v.n_located, 0);
    assert_int_equal(c.v[0].ndim, 1);
    xpb_compare_free(&c);
    free(ref);
    free(x);
}

/* Ten failing tensors: all counted, the eight furthest from tolerance located in order; across
 * kinds (judge_all) by their distance from their own tolerance. */
static void test_located_order(void **state)
{
    (void)state;
    float *ref = random_tensor(256, 2);
    xpb_compare c;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        float *x = scaled(ref, 256, 1e-3 * (1 + (i * 7) % 10)); /* shuffled sizes */
        assert_int_equal(xpb_compare_add(&c, name, XPB_ROLE_OUTPUT, XPB_COMPARE_OP, x, ref, 256),
                         XPB_OK);
        free(x);
    }
    xpb_compare_verdict v;
    xpb_compare_judge(&v, &c, XPB_COMPARE_OP);
    assert_int_equal(v.failing, 10);
    assert_int_equal(v.n_located, XPB_COMPARE_LOCATED_MAX);
    for (uint32_t k = 1; k < v.n_located; k++)
        assert_true(v.located[k - 1].error >= v.located[k].error);
    assert_string_equal(v.located[0].tensor, v.worst);
    xpb_compare_free(&c);

    /* a loss 10 times its tolerance outranks a gradient 5 times its own */
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    float *loss = scaled(ref, 256, 1e-3), *grad = scaled(ref, 256, 5e-2);
    assert_int_equal(xpb_compare_add(&c, "g", XPB_ROLE_GRAD, XPB_COMPARE_GRADIENT, grad, ref, 256),
                     XPB_OK);
    assert_int_equal(
        xpb_compare_add(&c, "loss", XPB_ROLE_LOSS, XPB_COMPARE_FORWARD, loss, ref, 256), XPB_OK);
    xpb_compare_judge_all(&v, &c);
    assert_false(v.passed);
    assert_int_equal(v.failing, 2);
    assert_string_equal(v.located[0].tensor, "loss");
    assert_string_equal(v.located[1].tensor, "g");
    assert_string_equal(v.worst, "loss");
    xpb_compare_free(&c);
    free(loss);
    free(grad);
    free(ref);
}

/* Aligned, fp32 gradients keep their own tolerance (1e-4) after kink flips: a gradient 1e-3 off
 * fails where, unaligned, the flips would have judged it within all gradients together. */
static void test_aligned_gradients_one_by_one(void **state)
{
    (void)state;
    const xpb_tolerance *fp32 = xpb_tolerance_for(XPB_PRECISION_FP32);
    assert_true(fp32->aligned == 1e-4 && fp32->aligned_floor == 1e-3);
    assert_true(xpb_tolerance_for(XPB_PRECISION_BF16_MIXED)->aligned == 0.0);
    xpb_compare c;
    xpb_compare_verdict v;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    add_gradient_to(&c, "fc.weight.grad", XPB_ROLE_GRAD, 4096, 3, 1e-6, 1.0);
    add_gradient_to(&c, "conv6.weight.grad", XPB_ROLE_GRAD, 4096, 4, 1e-3, 1.0);
    c.kink_flips = 2;
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_true(v.passed && v.together); /* unaligned: the wholesale excuse */
    c.aligned = 1;
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_false(v.passed);
    assert_false(v.together);
    assert_true(v.tolerance == 1e-4);
    assert_string_equal(v.worst, "conv6.weight.grad");
    assert_int_equal(v.failing, 1);
    xpb_compare_free(&c);
    /* under bf16 there is no aligned allowance: together as before */
    xpb_compare_init(&c, XPB_PRECISION_BF16_MIXED, 1.0);
    c.aligned = 1;
    add_gradient_to(&c, "w.grad", XPB_ROLE_GRAD, 4096, 5, 1e-3, 1.0);
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_true(v.passed && v.together);
    xpb_compare_free(&c);
}

/* The verdict on an aligned layer: a weight gradient of 4096 random elements exactly right, and
 * bias gradient x (against ref, 64 elements), marked zero in exact arithmetic or not. */
static xpb_compare_verdict judge_layer(const float *x, const float *ref, int zero)
{
    xpb_compare c;
    xpb_compare_verdict v;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    c.aligned = 1;
    add_gradient_to(&c, "conv.weight.grad", 7, 4096, 8, 0.0, 1.0);
    assert_int_equal(xpb_compare_add(&c, "conv.bias.grad", 7, XPB_COMPARE_GRADIENT, x, ref, 64),
                     XPB_OK);
    c.v[1].zero = zero;
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    xpb_compare_free(&c);
    return v;
}

/* Aligned gradients are floored by a thousandth of their group's scale, not a hundredth: a
 * weight gradient at 1/200 of its layer's bias gradient, 1e-3 off, fails undiluted; a gradient
 * that is zero in exact arithmetic is rounding noise measured against the whole scale, and a
 * wrong value there (the sum without its cancellation) still fails. */
static void test_aligned_floors(void **state)
{
    (void)state;
    xpb_compare c;
    xpb_compare_verdict v;
    xpb_compare_init(&c, XPB_PRECISION_FP32, 1.0);
    c.aligned = 1;
    add_gradient_to(&c, "conv.bias.grad", 7, 64, 6, 0.0, 1.0);
    add_gradient_to(&c, "conv.weight.grad", 7, 4096, 7, 1e-3, 1.0 / 200);
    xpb_compare_judge(&v, &c, XPB_COMPARE_GRADIENT);
    assert_false(v.passed);
    assert_true(fabs(v.error - 1e-3) < 1e-5);
    xpb_compare_free(&c);
    float noise_x[64], noise_ref[64], wrong[64];
    for (int i = 0; i < 64; i++) {
        noise_x[i] = (float)((i % 3) - 1) * 1e-5f; /* 1e-5 of the layer's scale */
        noise_ref[i] = (float)((i % 2) * 2 - 1) * 1e-9f;
        wrong[i] = 0.5f;
    }
    assert_false(judge_layer(noise_x, noise_ref, 0).passed); /* against 1e-3 of the scale */
    v = judge_layer(noise_x, noise_ref, 1);
    assert_true(v.passed);
    assert_true(v.error > 1e-6 && v.error < 1e-4);
    v = judge_layer(wrong, noise_ref, 1);
    assert_false(v.passed);
    assert_string_equal(v.located[0].tensor, "conv.bias.grad");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_identical_is_zero),
        cmocka_unit_test(test_just_under_and_over),
        cmocka_unit_test(test_near_zero_tensor),
        cmocka_unit_test(test_one_wrong_element),
        cmocka_unit_test(test_nan_and_inf),
        cmocka_unit_test(test_gradient_allowance_and_together),
        cmocka_unit_test(test_judge_all_and_scale),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_coords_and_format),
        cmocka_unit_test(test_worst_element),
        cmocka_unit_test(test_located_order),
        cmocka_unit_test(test_aligned_gradients_one_by_one),
        cmocka_unit_test(test_aligned_floors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
