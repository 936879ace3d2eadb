/* Reference kernels: ADAMW_UPDATE (torch.optim.AdamW: decoupled weight decay) over several
 * steps against a direct computation in double, with F32 and I32 step counters; with weight
 * decay 0 it is ADAM_UPDATE bit for bit. CLIP_GRAD_NORM (clip_grad_norm_ of PyTorch 1.13) over
 * more gradients than xpb_op holds inline: below max_norm nothing changes, above it every
 * gradient is scaled to the norm max_norm, and a non-finite total makes the gradients
 * non-finite as PyTorch's does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

#define NP 13

static const xpb_op_attrs adamw_attrs = {
    .lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};

static void adam_op(gc_op *g, uint32_t kind, const xpb_op_attrs *at, int i32_step)
{
    gc_op_init(g, kind, at);
    for (int i = 0; i < 4; i++)
        gc_in(g, 1, (int64_t[]){NP});
    if (i32_step)
        gc_in_i32(g, 1, (int64_t[]){1});
    else
        gc_in(g, 1, (int64_t[]){1});
}

static void check_adamw_steps(int i32_step)
{
    gc_op g;
    adam_op(&g, XPB_OP_ADAMW_UPDATE, &adamw_attrs, i32_step);
    float *param = g.in[0], *grad = g.in[1];
    gc_fill(param, NP, 1, -1, 1);
    double p[NP], m[NP] = {0}, v[NP] = {0};
    for (int i = 0; i < NP; i++)
        p[i] = param[i];
    const xpb_op_attrs *at = &adamw_attrs;
    for (int t = 1; t <= 5; t++) {
        gc_fill(grad, NP, 10 + (uint64_t)t, -1, 1);
        assert_int_equal(gc_run(&g), XPB_OK);
        double bc1 = 1 - pow(at->beta1, t), bc2 = 1 - pow(at->beta2, t);
        for (int i = 0; i < NP; i++) {
            p[i] *= 1 - (double)at->lr * at->weight_decay;
            m[i] = at->beta1 * m[i] + (1 - (double)at->beta1) * grad[i];
            v[i] = at->beta2 * v[i] + (1 - (double)at->beta2) * grad[i] * grad[i];
            p[i] -= at->lr / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + at->eps);
        }
        char what[64];
        snprintf(what, sizeof what, "adamw param, step %d (%s step)", t, i32_step ? "I32" : "F32");
        assert_true(gc_allclose(param, p, NP, 1e-6, 1e-5, what));
        assert_true(gc_allclose(g.in[2], m, NP, 1e-7, 1e-5, "adamw m"));
        assert_true(gc_allclose(g.in[3], v, NP, 1e-8, 1e-5, "adamw v"));
    }
    if (i32_step)
        assert_int_equal(((int32_t *)(void *)g.in[4])[0], 5);
    else
        assert_true(g.in[4][0] == 5.0f);
    gc_op_free(&g);
}

static void test_adamw_steps(void **state)
{
    (void)state;
    check_adamw_steps(0);
    check_adamw_steps(1);
}

/* The decay is decoupled: a zero gradient (zero moments) only shrinks the parameter by
 * (1 - lr wd); with weight decay 0, AdamW is Adam bit for bit. */
static void test_adamw_decoupled(void **state)
{
    (void)state;
    gc_op g;
    adam_op(&g, XPB_OP_ADAMW_UPDATE, &adamw_attrs, 0);
    gc_fill(g.in[0], NP, 3, -1, 1);
    float before[NP];
    memcpy(before, g.in[0], sizeof before);
    assert_int_equal(gc_run(&g), XPB_OK);
    float decay = (float)(1.0 - 1e-2 * (double)0.1f);
    for (int i = 0; i < NP; i++)
        assert_true(g.in[0][i] == before[i] * decay);
    gc_op_free(&g);

    xpb_op_attrs at = adamw_attrs;
    at.weight_decay = 0.0f;
    gc_op a, w;
    adam_op(&a, XPB_OP_ADAM_UPDATE, &at, 0);
    adam_op(&w, XPB_OP_ADAMW_UPDATE, &at, 0);
    gc_fill(a.in[0], NP, 4, -1, 1);
    memcpy(w.in[0], a.in[0], NP * sizeof(float));
    for (int t = 0; t < 3; t++) {
        gc_fill(a.in[1], NP, 20 + (uint64_t)t, -1, 1);
        memcpy(w.in[1], a.in[1], NP * sizeof(float));
        assert_int_equal(gc_run(&a), XPB_OK);
        assert_int_equal(gc_run(&w), XPB_OK);
    }
    for (int i = 0; i < 4; i++)
        assert_memory_equal(a.in[i], w.in[i], NP * sizeof(float));
    gc_op_free(&a);
    gc_op_free(&w);
}

/* ---- CLIP_GRAD_NORM ---- */

#define NG 9 /* gradients: more than xpb_op's six inline inputs */

static const int64_t grad_sizes[NG] = {3, 7, 1, 12, 5, 2, 9, 4, 6};

/* CLIP_GRAD_NORM over NG gradients filled in [-a, a); returns the norm in double. */
static double clip_op(gc_op *g, float max_norm, double a)
{
    gc_op_init(g, XPB_OP_CLIP_GRAD_NORM, NULL);
    g->op.max_norm = max_norm;
    double sq = 0;
    for (int k = 0; k < NG; k++) {
        float *x = gc_in(g, 1, &grad_sizes[k]);
        gc_fill(x, grad_sizes[k], 30 + (uint64_t)k, -a, a);
        for (int64_t i = 0; i < grad_sizes[k]; i++)
            sq += (double)x[i] * x[i];
    }
    gc_out(g, 1, (int64_t[]){1});
    return sqrt(sq);
}

static void test_clip_below_and_above(void **state)
{
    (void)state;
    for (int above = 0; above < 2; above++) {
        gc_op g;
        double total = clip_op(&g, 5.0f, above ? 4.0 : 0.5);
        assert_true(above ? total > 5.0 : total < 5.0);
        float *before[NG];
        for (int k = 0; k < NG; k++) {
            before[k] = malloc(sizeof(float) * (size_t)grad_sizes[k]);
            assert_non_null(before[k]);
            memcpy(before[k], g.in[k], sizeof(float) * (size_t)grad_sizes[k]);
        }
        assert_int_equal(gc_run(&g), XPB_OK);
        assert_true(gc_allclose(g.out[0], &total, 1, 0, 1e-7, "clip total norm"));
        float coef = 5.0f / ((float)total + 1e-6f);
        double sq = 0;
        for (int k = 0; k < NG; k++) {
            for (int64_t i = 0; i < grad_sizes[k]; i++) {
                float want = above ? before[k][i] * coef : before[k][i];
                assert_true(g.in[k][i] == want);
                sq += (double)g.in[k][i] * g.in[k][i];
            }
            free(before[k]);
        }
        if (above) /* the clipped gradients have the norm max_norm */
            assert_true(fabs(sqrt(sq) - 5.0) < 1e-5);
        gc_op_free(&g);
    }
}

/* A NaN anywhere makes every gradient NaN (PyTorch multiplies by clamp(NaN, max=1) = NaN);
 * an infinite one makes the total infinite and the finite gradients 0. */
static void test_clip_non_finite(void **state)
{
    (void)state;
    gc_op g;
    clip_op(&g, 1.0f, 1.0);
    g.in[4][2] = NAN;
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_true(isnan(g.out[0][0]));
    for (int k = 0; k < NG; k++)
        for (int64_t i = 0; i < grad_sizes[k]; i++)
            assert_true(isnan(g.in[k][i]));
    gc_op_free(&g);
    clip_op(&g, 1.0f, 1.0);
    g.in[8][0] = INFINITY;
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_true(isinf(g.out[0][0]));
    assert_true(g.in[0][0] == 0.0f && g.in[7][3] == 0.0f && isnan(g.in[8][0]));
    gc_op_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adamw_steps),
        cmocka_unit_test(test_adamw_decoupled),
        cmocka_unit_test(test_clip_below_and_above),
        cmocka_unit_test(test_clip_non_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
