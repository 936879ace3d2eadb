/* Reference kernels of op set 3: the LSTM layer (nn.LSTM's maths, gates i, f, g, o) against a
 * direct computation in double over several steps, with and without initial states, and
 * LSTM_BWD (backpropagation through time) against finite differences of the forward op for
 * every input: x, both weights, both biases, h0, c0, and the gradients that enter through
 * h_n and c_n. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

static double sig(double v)
{
    return 1 / (1 + exp(-v));
}

/* y[T, B, H], h_n, c_n of one layer in double. */
static void naive_lstm(double *y, double *hn, double *cn, const float *x, const float *wih,
                       const float *whh, const float *bih, const float *bhh, const float *h0,
                       const float *c0, int64_t t_n, int64_t b_n, int64_t in, int64_t h_n)
{
    double h[64], c[64], gate[4];
    assert_true(b_n * h_n <= 64);
    for (int64_t k = 0; k < b_n * h_n; k++) {
        h[k] = h0 ? h0[k] : 0;
        c[k] = c0 ? c0[k] : 0;
    }
    for (int64_t t = 0; t < t_n; t++) {
        double hn_[64];
        for (int64_t b = 0; b < b_n; b++)
            for (int64_t j = 0; j < h_n; j++) {
                for (int q = 0; q < 4; q++) {
                    int64_t row = q * h_n + j;
                    double s = (double)bih[row] + bhh[row];
                    for (int64_t i = 0; i < in; i++)
                        s += (double)x[(t * b_n + b) * in + i] * wih[row * in + i];
                    for (int64_t i = 0; i < h_n; i++)
                        s += h[b * h_n + i] * whh[row * h_n + i];
                    gate[q] = q == 2 ? tanh(s) : sig(s);
                }
                double *cc = &c[b * h_n + j];
                *cc = gate[1] * *cc + gate[0] * gate[2];
                hn_[b * h_n + j] = gate[3] * tanh(*cc);
            }
        for (int64_t k = 0; k < b_n * h_n; k++)
            y[t * b_n * h_n + k] = h[k] = hn_[k];
    }
    for (int64_t k = 0; k < b_n * h_n; k++) {
        hn[k] = h[k];
        cn[k] = c[k];
    }
}

struct lstm_case {
    int64_t t, b, in, h;
    int states; /* h0 and c0 given */
};

/* The forward op of a case, inputs filled from `seed`. */
static void lstm_forward(gc_op *f, struct lstm_case k, uint64_t seed)
{
    int64_t h4 = 4 * k.h;
    gc_op_init(f, XPB_OP_LSTM, NULL);
    gc_fill(gc_in(f, 3, (int64_t[]){k.t, k.b, k.in}), k.t * k.b * k.in, seed, -1, 1);
    gc_fill(gc_in(f, 2, (int64_t[]){h4, k.in}), h4 * k.in, seed + 1, -0.6, 0.6);
    gc_fill(gc_in(f, 2, (int64_t[]){h4, k.h}), h4 * k.h, seed + 2, -0.6, 0.6);
    gc_fill(gc_in(f, 1, &h4), h4, seed + 3, -0.5, 0.5);
    gc_fill(gc_in(f, 1, &h4), h4, seed + 4, -0.5, 0.5);
    if (k.states) {
        gc_fill(gc_in(f, 2, (int64_t[]){k.b, k.h}), k.b * k.h, seed + 5, -1, 1);
        gc_fill(gc_in(f, 2, (int64_t[]){k.b, k.h}), k.b * k.h, seed + 6, -1, 1);
    }
    gc_out(f, 3, (int64_t[]){k.t, k.b, k.h});
    gc_out(f, 2, (int64_t[]){k.b, k.h});
    gc_out(f, 2, (int64_t[]){k.b, k.h});
    gc_out(f, 3, (int64_t[]){k.t, k.b, 5 * k.h});
    assert_int_equal(gc_run(f), XPB_OK);
}

/* LSTM_BWD of f's run for dy, dh_n, dc_n (NULL: absent). */
static void lstm_backward(gc_op *g, const gc_op *f, struct lstm_case k, const float *dy,
                          const float *dh_n, const float *dc_n)
{
    gc_op_init(g, XPB_OP_LSTM_BWD, NULL);
    const uint32_t from[7] = {0, 1, 2, 0, 3, 5, 6}; /* x, w_ih, w_hh, y, ws, h0, c0 */
    memcpy(gc_in(g, 3, (int64_t[]){k.t, k.b, k.h}), dy, sizeof(float) * (size_t)(k.t * k.b * k.h));
    for (int s = 0; s < 2; s++) {
        float *p = gc_in(g, 2, (int64_t[]){k.b, k.h});
        const float *src = s ? dc_n : dh_n;
        if (src)
            memcpy(p, src, sizeof(float) * (size_t)(k.b * k.h));
        else
            gc_absent(g, 1 + (uint32_t)s);
    }
    for (int i = 0; i < 7; i++) {
        if (i >= 5 && !k.states)
            break;
        int out = i == 3 || i == 4;
        const xpb_tensor_desc *d = out ? &f->out_desc[i == 3 ? 0 : 3] : &f->in_desc[from[i]];
        const float *src = out ? f->out[i == 3 ? 0 : 3] : f->in[from[i]];
        memcpy(gc_in(g, d->ndim, d->dims), src, (size_t)xpb_tensor_numel(d) * 4);
    }
    for (int i = 0; i < (k.states ? 7 : 5); i++) {
        const xpb_tensor_desc *d = &f->in_desc[i];
        gc_out(g, d->ndim, d->dims);
    }
    if (gc_run(g) != XPB_OK)
        fail_msg("LSTM_BWD: %s", g->err);
}

static void check_lstm(struct lstm_case k, uint64_t seed)
{
    char what[128];
    int64_t bh = k.b * k.h, n_y = k.t * bh;
    gc_op f, g;
    lstm_forward(&f, k, seed);
    double *want = malloc(sizeof(double) * (size_t)n_y), hn[64], cn[64];
    assert_non_null(want);
    naive_lstm(want, hn, cn, f.in[0], f.in[1], f.in[2], f.in[3], f.in[4], k.states ? f.in[5] : NULL,
               k.states ? f.in[6] : NULL, k.t, k.b, k.in, k.h);
    snprintf(what, sizeof what, "lstm T%lld B%lld I%lld H%lld%s y", (long long)k.t, (long long)k.b,
             (long long)k.in, (long long)k.h, k.states ? " h0 c0" : "");
    assert_true(gc_allclose(f.out[0], want, n_y, 1e-6, 1e-5, what));
    assert_true(gc_allclose(f.out[1], hn, bh, 1e-6, 1e-5, "lstm h_n"));
    assert_true(gc_allclose(f.out[2], cn, bh, 1e-6, 1e-5, "lstm c_n"));
    free(want);

    /* the loss sum(r * y): every input's gradient */
    float *dy = malloc(sizeof(float) * (size_t)n_y), *zero = calloc((size_t)n_y, sizeof(float));
    assert_true(dy && zero);
    gc_fill(dy, n_y, seed + 10, -1, 1);
    lstm_backward(&g, &f, k, dy, NULL, NULL);
    static const char *const names[7] = {"dx", "dw_ih", "dw_hh", "db_ih", "db_hh", "dh0", "dc0"};
    for (uint32_t i = 0; i < (k.states ? 7u : 5u); i++) {
        snprintf(what, sizeof what, "lstm T%lld H%lld%s %s", (long long)k.t, (long long)k.h,
                 k.states ? " h0 c0" : "", names[i]);
        assert_true(gc_gradcheck(&f, 0, dy, i, g.out[i], 1e-2, 2e-4, 1e-3, what));
    }
    assert_memory_equal(g.out[3], g.out[4], sizeof(float) * (size_t)(4 * k.h)); /* db_ih = db_hh */
    gc_op_free(&g);

    /* the gradients entering through h_n, then c_n (dy zero) */
    for (uint32_t s = 0; s < 2; s++) {
        float r[64];
        gc_fill(r, bh, seed + 20 + s, -1, 1);
        assert_int_equal(gc_run(&f), XPB_OK); /* gc_gradcheck left a perturbed run */
        lstm_backward(&g, &f, k, zero, s ? NULL : r, s ? r : NULL);
        for (uint32_t i = 0; i < (k.states ? 7u : 5u); i++) {
            snprintf(what, sizeof what, "lstm T%lld H%lld from %s: %s", (long long)k.t,
                     (long long)k.h, s ? "c_n" : "h_n", names[i]);
            assert_true(gc_gradcheck(&f, 1 + s, r, i, g.out[i], 1e-2, 2e-4, 1e-3, what));
        }
        gc_op_free(&g);
    }
    free(dy);
    free(zero);
    gc_op_free(&f);
}

static void test_lstm(void **state)
{
    (void)state;
    check_lstm((struct lstm_case){4, 3, 5, 3, 0}, 1); /* zero initial states */
    check_lstm((struct lstm_case){4, 3, 5, 3, 1}, 2); /* given h0, c0 */
    check_lstm((struct lstm_case){1, 2, 3, 4, 1}, 3); /* one step */
    check_lstm((struct lstm_case){7, 1, 2, 1, 0}, 4); /* H = 1, a longer sequence */
}

/* The optional outputs of the forward (h_n, c_n, ws) may be unwanted; y is the same. Without
 * dx wanted, the weight gradients are the same. */
static void test_lstm_optional_outputs(void **state)
{
    (void)state;
    struct lstm_case k = {3, 2, 3, 2, 1};
    gc_op f, g;
    lstm_forward(&f, k, 5);
    float y[12], dw[24], dy[12];
    memcpy(y, f.out[0], sizeof y);
    gc_fill(dy, 12, 6, -1, 1);
    lstm_backward(&g, &f, k, dy, NULL, NULL);
    memcpy(dw, g.out[1], sizeof dw);
    gc_unwanted(&g, 0);
    gc_unwanted(&g, 5);
    gc_unwanted(&g, 6);
    memset(g.out[1], 0, sizeof dw);
    assert_int_equal(gc_run(&g), XPB_OK);
    assert_memory_equal(dw, g.out[1], sizeof dw);
    for (uint32_t j = 1; j < 4; j++)
        gc_unwanted(&f, j);
    memset(f.out[0], 0, sizeof y);
    assert_int_equal(gc_run(&f), XPB_OK);
    assert_memory_equal(y, f.out[0], sizeof y);
    gc_op_free(&f);
    gc_op_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lstm),
        cmocka_unit_test(test_lstm_optional_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
