/* Reference kernels: SOFTMAX_XENT and SOFTMAX_XENT_BWD with the attributes of op set 3 (rows
 * whose label is the ignore index count for nothing; label smoothing), as
 * F.cross_entropy(logits, labels, ignore_index=..., label_smoothing=eps) of PyTorch 1.13:
 * against a direct computation in double, the backward against finite differences of the
 * forward loss (scaled by the loss weight), all rows ignored (NaN loss, zero gradient), an
 * ignore index outside the classes, labels out of range, huge logits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* SOFTMAX_XENT(logits[n,k], labels[n]) -> loss[1], ws_prob[n,k], or SOFTMAX_XENT_BWD(ws_prob,
 * labels) -> dlogits (scale 0.7), with the op-set-3 attributes; ignore INT64_MIN: no ignore
 * flag. */
static void xent3(gc_op *g, uint32_t kind, int64_t n, int64_t k, int64_t ignore, float eps)
{
    gc_op_init(g, kind, &(xpb_op_attrs){.scale = 0.7f});
    if (ignore != INT64_MIN) {
        g->op.index_flags = XPB_INDEX_IGNORE;
        g->op.ignore_index = (int32_t)ignore;
    }
    g->op.label_smoothing = eps;
    if (kind == XPB_OP_SOFTMAX_XENT) {
        gc_in(g, 2, (int64_t[]){n, k}), gc_in_i32(g, 1, &n);
        gc_out(g, 1, (int64_t[]){1}), gc_out(g, 2, (int64_t[]){n, k});
    } else {
        gc_in(g, 2, (int64_t[]){n, k}), gc_in_i32(g, 1, &n), gc_out(g, 2, (int64_t[]){n, k});
    }
}

/* F.cross_entropy with ignore_index and label_smoothing, in double. */
static double naive_xent(const float *z, const int32_t *labels, int64_t n, int64_t k,
                         int64_t ignore, double eps)
{
    double total = 0;
    int64_t valid = 0;
    for (int64_t i = 0; i < n; i++) {
        if (labels[i] == ignore)
            continue;
        double m = -INFINITY, sum = 0, logp_sum = 0;
        for (int64_t j = 0; j < k; j++)
            m = z[i * k + j] > m ? z[i * k + j] : m;
        for (int64_t j = 0; j < k; j++)
            sum += exp(z[i * k + j] - m);
        for (int64_t j = 0; j < k; j++)
            logp_sum += z[i * k + j] - m - log(sum);
        double nll = -(z[i * k + labels[i]] - m - log(sum));
        total += (1 - eps) * nll - eps / (double)k * logp_sum;
        valid++;
    }
    return total / (double)valid;
}

static void check_xent3(int64_t n, int64_t k, int64_t ignore, float eps, uint64_t seed)
{
    char what[128];
    char ign[32] = "none";
    if (ignore != INT64_MIN)
        snprintf(ign, sizeof ign, "%lld", (long long)ignore);
    snprintf(what, sizeof what, "xent n%lld k%lld ignore %s smoothing %g", (long long)n,
             (long long)k, ign, (double)eps);
    gc_op f, b;
    xent3(&f, XPB_OP_SOFTMAX_XENT, n, k, ignore, eps);
    float *z = f.in[0];
    int32_t *labels = (int32_t *)(void *)f.in[1];
    gc_fill(z, n * k, seed, -4, 4);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) /* every third row (and row 1) ignored */
        labels[i] = i % 3 == 1 && ignore != INT64_MIN ? (int32_t)ignore
                                                      : (int32_t)(gc_rng_next(&s) % (uint64_t)k);
    assert_int_equal(gc_run(&f), XPB_OK);
    double want = naive_xent(z, labels, n, k, ignore, eps);
    assert_true(gc_allclose(f.out[0], &want, 1, 1e-6, 1e-6, what));

    xent3(&b, XPB_OP_SOFTMAX_XENT_BWD, n, k, ignore, eps);
    memcpy(b.in[0], f.out[1], sizeof(float) * (size_t)(n * k));
    memcpy(b.in[1], labels, sizeof(int32_t) * (size_t)n);
    assert_int_equal(gc_run(&b), XPB_OK);
    /* the closed form: scale * (p - (1 - eps) onehot - eps / k) / n_valid, 0 when ignored */
    double *dz = malloc(sizeof(double) * (size_t)(n * k));
    assert_non_null(dz);
    int64_t valid = 0;
    for (int64_t i = 0; i < n; i++)
        valid += labels[i] != ignore;
    for (int64_t i = 0; i < n; i++) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < k; j++)
            m = z[i * k + j] > m ? z[i * k + j] : m;
        for (int64_t j = 0; j < k; j++)
            sum += exp(z[i * k + j] - m);
        for (int64_t j = 0; j < k; j++) {
            double p = exp(z[i * k + j] - m) / sum;
            double t = (j == labels[i] ? 1.0 - eps : 0.0) + eps / (double)k;
            dz[i * k + j] = labels[i] == ignore ? 0.0 : 0.7f * (p - t) / (double)valid;
        }
    }
    assert_true(gc_allclose(b.out[0], dz, n * k, 1e-8, 1e-6, "xent dlogits closed form"));
    free(dz);
    for (int64_t i = 0; i < n; i++)
        if (labels[i] == ignore)
            for (int64_t j = 0; j < k; j++)
                assert_true(b.out[0][i * k + j] == 0.0f);
    /* the loss is fp32: its differences carry ~1e-5 of rounding at h = 1e-2 */
    float scale = 0.7f;
    assert_true(gc_gradcheck(&f, 0, &scale, 0, b.out[0], 1e-2, 5e-5, 1e-3, what));
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_xent_ignore_and_smoothing(void **state)
{
    (void)state;
    check_xent3(7, 5, 2, 0.1f, 1);           /* an ignore index that is a class (padding id) */
    check_xent3(7, 5, -100, 0.1f, 2);        /* PyTorch's default ignore index */
    check_xent3(6, 11, INT64_MIN, 0.25f, 3); /* smoothing alone */
    check_xent3(9, 4, 0, 0.0f, 4);           /* ignoring alone */
    check_xent3(4, 3, -100, 1.0f, 5);        /* the uniform target */
    check_xent3(1, 2, INT64_MIN, 0.5f, 6);
}

/* Both attributes zero (the ignore flag set but no row ignored, smoothing 0) is op set 1's op,
 * bit for bit. */
static void test_xent_attributes_off_is_op_set_1(void **state)
{
    (void)state;
    gc_op a, b;
    xent3(&a, XPB_OP_SOFTMAX_XENT, 5, 7, INT64_MIN, 0.0f);
    xent3(&b, XPB_OP_SOFTMAX_XENT, 5, 7, -100, 0.0f);
    gc_fill(a.in[0], 35, 9, -3, 3);
    memcpy(b.in[0], a.in[0], 35 * sizeof(float));
    for (int i = 0; i < 5; i++)
        ((int32_t *)(void *)a.in[1])[i] = ((int32_t *)(void *)b.in[1])[i] = i;
    assert_int_equal(gc_run(&a), XPB_OK);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_memory_equal(a.out[0], b.out[0], sizeof(float));
    assert_memory_equal(a.out[1], b.out[1], 35 * sizeof(float));
    gc_op_free(&a);
    gc_op_free(&b);
}

/* Every row ignored: the loss is NaN (0 / 0, as PyTorch) and the gradient zero. */
static void test_xent_all_ignored(void **state)
{
    (void)state;
    gc_op f, b;
    xent3(&f, XPB_OP_SOFTMAX_XENT, 3, 4, -100, 0.1f);
    xent3(&b, XPB_OP_SOFTMAX_XENT_BWD, 3, 4, -100, 0.1f);
    gc_fill(f.in[0], 12, 1, -1, 1);
    for (int i = 0; i < 3; i++)
        ((int32_t *)(void *)f.in[1])[i] = ((int32_t *)(void *)b.in[1])[i] = -100;
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_true(isnan(f.out[0][0]));
    for (int i = 0; i < 12; i++)
        b.out[0][i] = NAN;
    assert_int_equal(gc_run(&b), XPB_OK);
    for (int i = 0; i < 12; i++)
        assert_true(b.out[0][i] == 0.0f);
    gc_op_free(&f);
    gc_op_free(&b);
}

/* A label outside [0, K) that is not the ignore index is refused, naming the sample; huge
 * logits with smoothing stay finite. */
static void test_xent3_labels_and_huge_logits(void **state)
{
    (void)state;
    for (int bwd = 0; bwd < 2; bwd++) {
        gc_op g;
        xent3(&g, bwd ? XPB_OP_SOFTMAX_XENT_BWD : XPB_OP_SOFTMAX_XENT, 3, 4, -100, 0.1f);
        g.op.layer = "lm_head";
        int32_t *labels = (int32_t *)(void *)g.in[1];
        labels[0] = -100, labels[1] = 3, labels[2] = -1;
        assert_int_equal(gc_run(&g), XPB_INVALID_ARGUMENT);
        char want[160];
        snprintf(want, sizeof want,
                 "%s (layer 'lm_head'): sample 2 has label -1, outside the 4 classes [0, 4)",
                 bwd ? "SOFTMAX_XENT_BWD" : "SOFTMAX_XENT");
        assert_string_equal(g.err, want);
        gc_op_free(&g);
    }
    gc_op f;
    xent3(&f, XPB_OP_SOFTMAX_XENT, 2, 3, INT64_MIN, 0.3f);
    memcpy(f.in[0], (float[]){1e30f, 0, -1e30f, 1000, 1001, 999}, 6 * sizeof(float));
    ((int32_t *)(void *)f.in[1])[0] = 0;
    ((int32_t *)(void *)f.in[1])[1] = 2;
    assert_int_equal(gc_run(&f), XPB_OK);
    /* row 0: nll 0, -sum log p = 1e30 + 2e30; row 1: from the logits' differences alone */
    double lse = 1001 + log(1 + exp(-1.0) + exp(-2.0));
    double row1 = 0.7 * (lse - 999) + 0.1 * (3 * lse - 3000);
    double want = (0.1 * 3e30 + row1) / 2;
    assert_true(gc_allclose(f.out[0], &want, 1, 0, 1e-6, "xent smoothing huge logits"));
    gc_op_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xent_ignore_and_smoothing),
        cmocka_unit_test(test_xent_attributes_off_is_op_set_1),
        cmocka_unit_test(test_xent_all_ignored),
        cmocka_unit_test(test_xent3_labels_and_huge_logits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
