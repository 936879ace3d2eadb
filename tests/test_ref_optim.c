/* Reference kernels: SGD and Adam updates, three steps each, against hand-computed values and
 * a double-precision transcription of torch.optim.SGD / torch.optim.Adam. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gradcheck.h"

#define N 16
#define STEPS 3

/* SGD_UPDATE(param[n], grad[n], buf[n]) with its pointers. */
static void sgd_op(gc_op *g, int64_t n, const xpb_op_attrs *at, float **p, float **grad,
                   float **buf)
{
    gc_op_init(g, XPB_OP_SGD_UPDATE, at);
    *p = gc_in(g, 1, (int64_t[]){n});
    *grad = gc_in(g, 1, (int64_t[]){n});
    *buf = gc_in(g, 1, (int64_t[]){n});
}

/* ADAM_UPDATE(param, grad, m, v, step[1]); step is I32 when step_i32. */
static void adam_op(gc_op *g, int64_t n, const xpb_op_attrs *at, int step_i32, float **p,
                    float **grad, float **m, float **v)
{
    gc_op_init(g, XPB_OP_ADAM_UPDATE, at);
    *p = gc_in(g, 1, (int64_t[]){n});
    *grad = gc_in(g, 1, (int64_t[]){n});
    *m = gc_in(g, 1, (int64_t[]){n});
    *v = gc_in(g, 1, (int64_t[]){n});
    if (step_i32)
        gc_in_i32(g, 1, (int64_t[]){1});
    else
        gc_in(g, 1, (int64_t[]){1});
}

/* p = 1, grad 0.5 every step, lr 0.1, momentum 0.9: buf 0.5, 0.95, 1.355; p 0.95, 0.855,
 * 0.7195. */
static void test_sgd_hand(void **state)
{
    (void)state;
    gc_op g;
    float *p, *grad, *buf;
    sgd_op(&g, 1, &(xpb_op_attrs){.lr = 0.1f, .momentum = 0.9f}, &p, &grad, &buf);
    p[0] = 1.0f;
    grad[0] = 0.5f;
    const float want_p[STEPS] = {0.95f, 0.855f, 0.7195f}, want_buf[STEPS] = {0.5f, 0.95f, 1.355f};
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(gc_run(&g), XPB_OK);
        assert_float_equal(p[0], want_p[s], 1e-6f);
        assert_float_equal(buf[0], want_buf[s], 1e-6f);
    }
    gc_op_free(&g);
}

/* torch.optim.SGD(momentum=0.9, weight_decay=0.01, dampening=0, nesterov=False) in double,
 * with a new gradient every step. */
static void test_sgd_three_steps(void **state)
{
    (void)state;
    const double lr = 0.05, mom = 0.9, wd = 0.01;
    gc_op g;
    float *p, *grad, *buf;
    sgd_op(&g, N,
           &(xpb_op_attrs){.lr = (float)lr, .momentum = (float)mom, .weight_decay = (float)wd}, &p,
           &grad, &buf);
    gc_fill(p, N, 1, -1.0, 1.0);
    double want_p[N], want_buf[N];
    for (int i = 0; i < N; i++)
        want_p[i] = p[i];
    for (int s = 0; s < STEPS; s++) {
        gc_fill(grad, N, 10 + (uint64_t)s, -2.0, 2.0);
        for (int i = 0; i < N; i++) {
            double d = grad[i] + wd * want_p[i];
            want_buf[i] = s == 0 ? d : mom * want_buf[i] + d; /* buf = clone(d) on step 1 */
            want_p[i] -= lr * want_buf[i];
        }
        assert_int_equal(gc_run(&g), XPB_OK);
        assert_true(gc_allclose(p, want_p, N, 1e-6, 1e-5, "sgd param"));
        assert_true(gc_allclose(buf, want_buf, N, 1e-6, 1e-5, "sgd momentum buffer"));
    }
    gc_op_free(&g);
}

/* Constant gradient: the bias-corrected moments are exactly g and g^2, so every step moves p
 * by lr * g / (|g| + eps), i.e. 0.1 * (1 - 2e-8) here: p = 1 -> 0.9 -> 0.8 -> 0.7. */
static void test_adam_hand(void **state)
{
    (void)state;
    gc_op g;
    float *p, *grad, *m, *v;
    adam_op(&g, 1, &(xpb_op_attrs){.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f}, 0, &p,
            &grad, &m, &v);
    p[0] = 1.0f;
    grad[0] = 0.5f;
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(gc_run(&g), XPB_OK);
        assert_float_equal(p[0], 0.9f - 0.1f * (float)s, 2e-6f);
        assert_float_equal(g.in[4][0], (float)(s + 1), 0.0f);
    }
    /* m = 0.5 (1 - b1^3), v = 0.25 (1 - b2^3), with b1, b2 the float attrs */
    assert_float_equal(m[0], 0.5 * (1.0 - pow((double)0.9f, 3)), 1e-7);
    assert_float_equal(v[0], 0.25 * (1.0 - pow((double)0.999f, 3)), 1e-10);
    gc_op_free(&g);
}

/* torch.optim.Adam(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1, amsgrad=False) in double. */
static void check_adam_three_steps(int step_i32)
{
    const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
    gc_op g;
    float *p, *grad, *m, *v;
    adam_op(&g, N,
            &(xpb_op_attrs){.lr = (float)lr,
                            .beta1 = (float)b1,
                            .beta2 = (float)b2,
                            .eps = (float)eps,
                            .weight_decay = (float)wd},
            step_i32, &p, &grad, &m, &v);
    gc_fill(p, N, 2, -1.0, 1.0);
    double want_p[N], want_m[N] = {0}, want_v[N] = {0};
    for (int i = 0; i < N; i++)
        want_p[i] = p[i];
    /* The attrs are floats: use the values the kernel sees. */
    double fb1 = (float)b1, fb2 = (float)b2, feps = (float)eps, flr = (float)lr, fwd = (float)wd;
    for (int s = 0; s < STEPS; s++) {
        gc_fill(grad, N, 20 + (uint64_t)s, -1.0, 1.0);
        double t = s + 1;
        double bc1 = 1 - pow(fb1, t), bc2 = 1 - pow(fb2, t);
        for (int i = 0; i < N; i++) {
            double gi = grad[i] + fwd * want_p[i];
            want_m[i] = fb1 * want_m[i] + (1 - fb1) * gi;
            want_v[i] = fb2 * want_v[i] + (1 - fb2) * gi * gi;
            double denom = sqrt(want_v[i]) / sqrt(bc2) + feps;
            want_p[i] -= flr / bc1 * want_m[i] / denom;
        }
        assert_int_equal(gc_run(&g), XPB_OK);
        assert_true(gc_allclose(p, want_p, N, 1e-6, 1e-5, "adam param"));
        assert_true(gc_allclose(m, want_m, N, 1e-7, 1e-5, "adam m"));
        assert_true(gc_allclose(v, want_v, N, 1e-9, 1e-5, "adam v"));
    }
    if (step_i32)
        assert_int_equal(((int32_t *)g.in[4])[0], STEPS);
    else
        assert_float_equal(g.in[4][0], (float)STEPS, 0.0f);
    gc_op_free(&g);
}

static void test_adam_three_steps(void **state)
{
    (void)state;
    check_adam_three_steps(0);
}

static void test_adam_three_steps_i32_step(void **state)
{
    (void)state;
    check_adam_three_steps(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd_hand),
        cmocka_unit_test(test_sgd_three_steps),
        cmocka_unit_test(test_adam_hand),
        cmocka_unit_test(test_adam_three_steps),
        cmocka_unit_test(test_adam_three_steps_i32_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
