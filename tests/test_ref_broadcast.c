/* Reference kernels of op set 3 that move and broadcast data: PERMUTE (every permutation of 4
 * dims, 3-D, I32 bits kept, undone by its inverse), ADD_BROADCAST and MUL over several
 * broadcast dims against direct loops, their gradients as the autodiff emits them (MUL of dy,
 * then SUM_TO the operand's shape) against finite differences, SUM_TO and SCALE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

/* Row-major offset in a tensor of `nd` dims `d` of y's index `idx` (ny dims), broadcast:
 * aligned right, dims of 1 read index 0. */
static int64_t bcast_offset(uint32_t nd, const int64_t *d, uint32_t ny, const int64_t *idx)
{
    int64_t off = 0;
    for (uint32_t k = 0; k < nd; k++) {
        int64_t i = idx[ny - nd + k];
        off = off * d[k] + (d[k] == 1 ? 0 : i);
    }
    return off;
}

/* Advances a row-major multi-index over dims; 0 after the last. */
static int next(int64_t *idx, uint32_t nd, const int64_t *dims)
{
    for (uint32_t k = nd; k-- > 0;) {
        if (++idx[k] < dims[k])
            return 1;
        idx[k] = 0;
    }
    return 0;
}

/* ---- PERMUTE ---- */

static void check_permute(uint32_t nd, const int64_t *xd, const uint8_t *perm, uint32_t dtype)
{
    int64_t yd[4], inv_perm[4];
    for (uint32_t d = 0; d < nd; d++) {
        yd[d] = xd[perm[d]];
        inv_perm[perm[d]] = d;
    }
    gc_op f, b;
    gc_op_init(&f, XPB_OP_PERMUTE, NULL);
    memcpy(f.op.perm, perm, nd);
    float *x = dtype == XPB_DTYPE_I32 ? (float *)(void *)gc_in_i32(&f, nd, xd) : gc_in(&f, nd, xd);
    float *y =
        dtype == XPB_DTYPE_I32 ? (float *)(void *)gc_out_i32(&f, nd, yd) : gc_out(&f, nd, yd);
    int64_t n = gc_in_numel(&f, 0);
    uint32_t *xb = (uint32_t *)(void *)x, *yb = (uint32_t *)(void *)y;
    for (int64_t i = 0; i < n; i++)
        xb[i] = dtype == XPB_DTYPE_I32 ? (uint32_t)(i * 2654435761u) : 0x7fc00000u + (uint32_t)i;
    assert_int_equal(gc_run(&f), XPB_OK);
    /* y[j] = x[i] with i[perm[d]] = j[d] */
    int64_t j[4] = {0, 0, 0, 0}, k = 0;
    do {
        int64_t i[4] = {0, 0, 0, 0}, off = 0;
        for (uint32_t d = 0; d < nd; d++)
            i[perm[d]] = j[d];
        for (uint32_t d = 0; d < nd; d++)
            off = off * xd[d] + i[d];
        if (yb[k] != xb[off])
            fail_msg("permute (%u %u %u %u) element %lld: %08x, want %08x", perm[0], perm[1],
                     nd > 2 ? perm[2] : 0, nd > 3 ? perm[3] : 0, (long long)k, yb[k], xb[off]);
        k++;
    } while (next(j, nd, yd));
    /* the autodiff's backward: PERMUTE with the inverse permutation gives x back, bit for bit */
    gc_op_init(&b, XPB_OP_PERMUTE, NULL);
    for (uint32_t d = 0; d < nd; d++)
        b.op.perm[d] = (uint8_t)inv_perm[d];
    float *bi = dtype == XPB_DTYPE_I32 ? (float *)(void *)gc_in_i32(&b, nd, yd) : gc_in(&b, nd, yd);
    float *bo =
        dtype == XPB_DTYPE_I32 ? (float *)(void *)gc_out_i32(&b, nd, xd) : gc_out(&b, nd, xd);
    memcpy(bi, y, (size_t)n * 4);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_memory_equal(bo, x, (size_t)n * 4);
    gc_op_free(&f);
    gc_op_free(&b);
}

static void test_permute(void **state)
{
    (void)state;
    const int64_t x4[4] = {2, 3, 4, 5};
    int count = 0;
    for (uint8_t p0 = 0; p0 < 4; p0++)
        for (uint8_t p1 = 0; p1 < 4; p1++)
            for (uint8_t p2 = 0; p2 < 4; p2++) {
                uint8_t p3 = (uint8_t)(6 - p0 - p1 - p2);
                if (p0 == p1 || p0 == p2 || p1 == p2 || p3 > 3 || p3 == p0 || p3 == p1 || p3 == p2)
                    continue;
                const uint8_t perm[4] = {p0, p1, p2, p3};
                check_permute(4, x4, perm, XPB_DTYPE_F32);
                count++;
            }
    assert_int_equal(count, 24);
    check_permute(4, x4, (const uint8_t[]){0, 2, 1, 3}, XPB_DTYPE_I32); /* heads split */
    check_permute(3, (const int64_t[]){3, 1, 7}, (const uint8_t[]){2, 0, 1}, XPB_DTYPE_F32);
    check_permute(2, (const int64_t[]){5, 6}, (const uint8_t[]){1, 0}, XPB_DTYPE_I32);
    check_permute(1, (const int64_t[]){9}, (const uint8_t[]){0}, XPB_DTYPE_F32);
}

/* ---- ADD_BROADCAST, MUL, SUM_TO ---- */

/* SUM_TO(x[xd]) -> y[yd] against a direct loop; returns nothing, asserts. */
static void check_sum_to(uint32_t nx, const int64_t *xd, uint32_t ny, const int64_t *yd,
                         uint64_t seed)
{
    gc_op s;
    gc_op_init(&s, XPB_OP_SUM_TO, NULL);
    float *x = gc_in(&s, nx, xd), *y = gc_out(&s, ny, yd);
    int64_t n = gc_in_numel(&s, 0), m = gc_out_numel(&s, 0);
    gc_fill(x, n, seed, -1, 1);
    assert_int_equal(gc_run(&s), XPB_OK);
    double *want = calloc((size_t)m, sizeof *want);
    assert_non_null(want);
    int64_t idx[4] = {0, 0, 0, 0}, i = 0;
    do
        want[bcast_offset(ny, yd, nx, idx)] += x[i++];
    while (next(idx, nx, xd));
    assert_true(gc_allclose(y, want, m, 1e-6, 1e-6, "sum_to"));
    free(want);
    gc_op_free(&s);
}

static void test_sum_to(void **state)
{
    (void)state;
    const int64_t x4[4] = {2, 3, 4, 5};
    check_sum_to(4, x4, 3, (const int64_t[]){3, 1, 5}, 1);
    check_sum_to(4, x4, 1, (const int64_t[]){1}, 2);
    check_sum_to(4, x4, 4, x4, 3);
    check_sum_to(4, x4, 2, (const int64_t[]){4, 1}, 4);
    check_sum_to(4, x4, 4, (const int64_t[]){1, 1, 1, 1}, 5);
    check_sum_to(4, x4, 4, (const int64_t[]){2, 1, 4, 1}, 6);
    check_sum_to(3, (const int64_t[]){7, 1, 3}, 1, (const int64_t[]){3}, 7);
}

/* The gradient of operand `o` of f = ADD_BROADCAST / MUL (a, b) for dy, as the autodiff emits
 * it: (MUL(dy, other) for MUL) then SUM_TO the operand's shape; written into *grad (owned by
 * the caller, numel of the operand). */
static void bcast_grad(gc_op *f, const float *dy, int o, float *grad)
{
    const xpb_tensor_desc *yd = &f->out_desc[0], *od = &f->in_desc[o];
    gc_op m, s;
    const float *g = dy;
    if (f->op.kind == XPB_OP_MUL) {
        gc_op_init(&m, XPB_OP_MUL, NULL);
        memcpy(gc_in(&m, yd->ndim, yd->dims), dy, (size_t)xpb_tensor_numel(yd) * 4);
        const xpb_tensor_desc *other = &f->in_desc[1 - o];
        memcpy(gc_in(&m, other->ndim, other->dims), f->in[1 - o],
               (size_t)xpb_tensor_numel(other) * 4);
        gc_out(&m, yd->ndim, yd->dims);
        assert_int_equal(gc_run(&m), XPB_OK);
        g = m.out[0];
    }
    gc_op_init(&s, XPB_OP_SUM_TO, NULL);
    memcpy(gc_in(&s, yd->ndim, yd->dims), g, (size_t)xpb_tensor_numel(yd) * 4);
    gc_out(&s, od->ndim, od->dims);
    assert_int_equal(gc_run(&s), XPB_OK);
    memcpy(grad, s.out[0], (size_t)xpb_tensor_numel(od) * 4);
    gc_op_free(&s);
    if (f->op.kind == XPB_OP_MUL)
        gc_op_free(&m);
}

static void check_binary(uint32_t kind, uint32_t na, const int64_t *ad, uint32_t nb,
                         const int64_t *bd, uint64_t seed)
{
    uint32_t ny = na > nb ? na : nb;
    int64_t yd[4];
    for (uint32_t k = 0; k < ny; k++) {
        int64_t da = k + na < ny ? 1 : ad[k + na - ny], db = k + nb < ny ? 1 : bd[k + nb - ny];
        yd[k] = da == 1 ? db : da;
    }
    char what[96];
    snprintf(what, sizeof what, "%s %uD x %uD", xpb_op_name(kind), na, nb);
    gc_op f;
    gc_op_init(&f, kind, NULL);
    float *a = gc_in(&f, na, ad), *b = gc_in(&f, nb, bd), *y = gc_out(&f, ny, yd);
    int64_t n_a = gc_in_numel(&f, 0), n_b = gc_in_numel(&f, 1), n_y = gc_out_numel(&f, 0);
    gc_fill(a, n_a, seed, -1, 1);
    gc_fill(b, n_b, seed + 1, -1, 1);
    assert_int_equal(gc_run(&f), XPB_OK);
    double *want = malloc(sizeof(double) * (size_t)n_y);
    assert_non_null(want);
    int64_t idx[4] = {0, 0, 0, 0}, i = 0;
    do {
        double u = a[bcast_offset(na, ad, ny, idx)], v = b[bcast_offset(nb, bd, ny, idx)];
        want[i++] = kind == XPB_OP_MUL ? (double)(float)(u * v) : (double)(float)(u + v);
    } while (next(idx, ny, yd));
    assert_true(gc_allclose(y, want, n_y, 0, 0, what)); /* fp32 arithmetic, exactly */
    free(want);

    float *dy = malloc(sizeof(float) * (size_t)n_y), *grad = malloc(sizeof(float) * (size_t)n_y);
    assert_non_null(dy);
    assert_non_null(grad);
    gc_fill(dy, n_y, seed + 2, -1, 1);
    for (int o = 0; o < 2; o++) {
        bcast_grad(&f, dy, o, grad);
        snprintf(what, sizeof what, "%s %uD x %uD d%c", xpb_op_name(kind), na, nb, "ab"[o]);
        assert_true(gc_gradcheck(&f, 0, dy, (uint32_t)o, grad, 0.25, 1e-4, 1e-4, what));
    }
    free(dy);
    free(grad);
    gc_op_free(&f);
}

static void test_add_broadcast_and_mul(void **state)
{
    (void)state;
    static const uint32_t kinds[2] = {XPB_OP_ADD_BROADCAST, XPB_OP_MUL};
    for (int k = 0; k < 2; k++) {
        uint64_t s = 100 * (uint64_t)k;
        /* several broadcast dims on both sides */
        check_binary(kinds[k], 4, (const int64_t[]){2, 1, 4, 1}, 3, (const int64_t[]){3, 1, 5}, s);
        /* a bias row over [B, S, D] */
        check_binary(kinds[k], 3, (const int64_t[]){2, 3, 7}, 1, (const int64_t[]){7}, s + 10);
        /* the scalar-like [1] against a matrix, and the other way round */
        check_binary(kinds[k], 1, (const int64_t[]){1}, 2, (const int64_t[]){3, 4}, s + 20);
        check_binary(kinds[k], 2, (const int64_t[]){3, 4}, 1, (const int64_t[]){1}, s + 30);
        /* an attention mask [1, 1, S, S] over scores [B, H, S, S] */
        check_binary(kinds[k], 4, (const int64_t[]){2, 3, 5, 5}, 4, (const int64_t[]){1, 1, 5, 5},
                     s + 40);
        /* no broadcasting */
        check_binary(kinds[k], 2, (const int64_t[]){3, 5}, 2, (const int64_t[]){3, 5}, s + 50);
    }
}

/* ---- SCALE ---- */

static void test_scale(void **state)
{
    (void)state;
    gc_op f, b;
    xpb_op_attrs at = {.value = -0.37f};
    int64_t d[3] = {2, 3, 5};
    gc_op_init(&f, XPB_OP_SCALE, &at);
    float *x = gc_in(&f, 3, d), *y = gc_out(&f, 3, d);
    gc_fill(x, 30, 1, -2, 2);
    assert_int_equal(gc_run(&f), XPB_OK);
    for (int i = 0; i < 30; i++)
        assert_true(y[i] == -0.37f * x[i]);
    gc_op_init(&b, XPB_OP_SCALE, &at); /* the backward: SCALE(dy), same value */
    float *dy = gc_in(&b, 3, d), *dx = gc_out(&b, 3, d);
    gc_fill(dy, 30, 2, -1, 1);
    assert_int_equal(gc_run(&b), XPB_OK);
    assert_true(gc_gradcheck(&f, 0, dy, 0, dx, 0.25, 1e-5, 1e-5, "scale dx"));
    gc_op_free(&f);
    gc_op_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_sum_to),
        cmocka_unit_test(test_add_broadcast_and_mul),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
