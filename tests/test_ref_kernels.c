/* The reference backend's op table: ref_kernel_for covers every op kind of op sets 1 and 2
 * and nothing else, and every kernel runs on a well-formed instance of its op that the SDK's shape
 * rules accept (the rules themselves: tests/test_shapes.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gradcheck.h"

static void test_every_kind_has_a_kernel(void **state)
{
    (void)state;
    for (uint32_t kind = 1; kind < XPB_OP_KIND_END_; kind++) {
        if (!ref_kernel_for(kind))
            fail_msg("no reference kernel for %s (%u)", xpb_op_name(kind), kind);
    }
    assert_null(ref_kernel_for(0));
    assert_null(ref_kernel_for(XPB_OP_KIND_END_));
    assert_null(ref_kernel_for(9999));
}

/* A small well-formed instance of op `kind` (inputs filled with values every kernel accepts:
 * labels in range, positive variances). */
static void build_valid(gc_op *g, uint32_t kind)
{
    xpb_op_attrs at = {0};
    at.stride[0] = at.stride[1] = 1;
    at.dilation[0] = at.dilation[1] = 1;
    at.kernel[0] = at.kernel[1] = 2;
    at.eps = 1e-5f;
    at.momentum = 0.1f;
    at.scale = 1.0f;
    at.lr = 0.1f;
    at.beta1 = 0.9f;
    at.beta2 = 0.999f;
    at.dropout_p = 0.5f;
    gc_op_init(g, kind, &at);
    const int64_t x4[4] = {2, 3, 4, 5}, y4[4] = {2, 4, 3, 4}, w4[4] = {4, 3, 2, 2};
    const int64_t t4[4] = {2, 4, 5, 6}, wt4[4] = {3, 4, 2, 2}; /* conv_t y and w */
    const int64_t p4[4] = {2, 3, 3, 4}, g4[4] = {2, 3, 1, 1}, r4[4] = {2, 3, 6, 7};
    const int64_t c1[1] = {3}, k1[1] = {4}, one[1] = {1}, nc[2] = {2, 3}, nk[2] = {2, 4};
    const int64_t lx[2] = {2, 3}, lw[2] = {4, 3}, ly[2] = {2, 4}, n1[1] = {2};
    switch (kind) {
    case XPB_OP_CONV2D:
        gc_in(g, 4, x4), gc_in(g, 4, w4), gc_in(g, 1, k1), gc_out(g, 4, y4);
        break;
    case XPB_OP_CONV2D_BWD_DATA:
        gc_in(g, 4, y4), gc_in(g, 4, w4), gc_out(g, 4, x4);
        break;
    case XPB_OP_CONV2D_BWD_WEIGHTS:
        gc_in(g, 4, y4), gc_in(g, 4, x4), gc_out(g, 4, w4), gc_out(g, 1, k1);
        break;
    case XPB_OP_CONV_T2D:
        gc_in(g, 4, x4), gc_in(g, 4, wt4), gc_in(g, 1, k1), gc_out(g, 4, t4);
        break;
    case XPB_OP_CONV_T2D_BWD_DATA:
        gc_in(g, 4, t4), gc_in(g, 4, wt4), gc_out(g, 4, x4);
        break;
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        gc_in(g, 4, t4), gc_in(g, 4, x4), gc_out(g, 4, wt4), gc_out(g, 1, k1);
        break;
    case XPB_OP_LINEAR:
        gc_in(g, 2, lx), gc_in(g, 2, lw), gc_in(g, 1, k1), gc_out(g, 2, ly);
        break;
    case XPB_OP_LINEAR_BWD_DATA:
        gc_in(g, 2, ly), gc_in(g, 2, lw), gc_out(g, 2, lx);
        break;
    case XPB_OP_LINEAR_BWD_WEIGHTS:
        gc_in(g, 2, ly), gc_in(g, 2, lx), gc_out(g, 2, lw), gc_out(g, 1, k1);
        break;
    case XPB_OP_BATCHNORM_TRAIN:
    case XPB_OP_BATCHNORM_INFER:
        gc_in(g, 4, x4);
        for (int i = 0; i < 4; i++)
            gc_fill(gc_in(g, 1, c1), 3, 10 + i, 0.5, 1.5);
        gc_out(g, 4, x4);
        if (kind == XPB_OP_BATCHNORM_TRAIN)
            gc_out(g, 1, c1), gc_out(g, 1, c1);
        break;
    case XPB_OP_BATCHNORM_BWD:
        gc_in(g, 4, x4), gc_in(g, 4, x4);
        for (int i = 0; i < 3; i++)
            gc_fill(gc_in(g, 1, c1), 3, 20 + i, 0.5, 1.5);
        gc_out(g, 4, x4), gc_out(g, 1, c1), gc_out(g, 1, c1);
        break;
    case XPB_OP_INSTANCENORM:
        gc_in(g, 4, x4), gc_out(g, 4, x4), gc_out(g, 2, nc), gc_out(g, 2, nc);
        break;
    case XPB_OP_INSTANCENORM_BWD:
        gc_in(g, 4, x4), gc_in(g, 4, x4);
        gc_fill(gc_in(g, 2, nc), 6, 30, 0.5, 1.5);
        gc_fill(gc_in(g, 2, nc), 6, 31, 0.5, 1.5);
        gc_out(g, 4, x4);
        break;
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
    case XPB_OP_COPY:
    case XPB_OP_DROPOUT:
        gc_in(g, 4, x4), gc_out(g, 4, x4);
        if (kind == XPB_OP_DROPOUT)
            gc_out(g, 4, x4);
        break;
    case XPB_OP_RELU_BWD:
    case XPB_OP_LEAKY_RELU_BWD:
    case XPB_OP_TANH_BWD:
    case XPB_OP_ADD:
    case XPB_OP_DROPOUT_BWD:
    case XPB_OP_MSE_LOSS_BWD:
    case XPB_OP_L1_LOSS_BWD:
        gc_in(g, 4, x4), gc_in(g, 4, x4), gc_out(g, 4, x4);
        break;
    case XPB_OP_MAXPOOL:
        gc_in(g, 4, x4), gc_out(g, 4, p4), gc_out_i32(g, 4, p4);
        break;
    case XPB_OP_MAXPOOL_BWD:
        gc_in(g, 4, p4), gc_in_i32(g, 4, p4), gc_out(g, 4, x4);
        break;
    case XPB_OP_AVGPOOL:
        gc_in(g, 4, x4), gc_out(g, 4, p4);
        break;
    case XPB_OP_AVGPOOL_BWD:
        gc_in(g, 4, p4), gc_out(g, 4, x4);
        break;
    case XPB_OP_GLOBAL_AVGPOOL:
        gc_in(g, 4, x4), gc_out(g, 4, g4);
        break;
    case XPB_OP_GLOBAL_AVGPOOL_BWD:
        gc_in(g, 4, g4), gc_out(g, 4, x4);
        break;
    case XPB_OP_REFLECTION_PAD:
        g->op.attrs.pad[0] = 1, g->op.attrs.pad[1] = 1;
        gc_in(g, 4, x4), gc_out(g, 4, r4);
        break;
    case XPB_OP_REFLECTION_PAD_BWD:
        g->op.attrs.pad[0] = 1, g->op.attrs.pad[1] = 1;
        gc_in(g, 4, r4), gc_out(g, 4, x4);
        break;
    case XPB_OP_RESHAPE:
        gc_in(g, 4, x4), gc_out(g, 2, (int64_t[]){2, 60});
        break;
    case XPB_OP_SOFTMAX_XENT:
        gc_in(g, 2, nk), gc_in_i32(g, 1, n1), gc_out(g, 1, one), gc_out(g, 2, nk);
        break;
    case XPB_OP_SOFTMAX_XENT_BWD:
        gc_in(g, 2, nk), gc_in_i32(g, 1, n1), gc_out(g, 2, nk);
        break;
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
        gc_in(g, 4, x4), gc_in(g, 4, x4), gc_out(g, 1, one);
        break;
    case XPB_OP_SGD_UPDATE:
        gc_in(g, 4, w4), gc_in(g, 4, w4), gc_in(g, 4, w4);
        break;
    case XPB_OP_ADAM_UPDATE:
        gc_in(g, 4, w4), gc_in(g, 4, w4), gc_in(g, 4, w4), gc_in(g, 4, w4), gc_in(g, 1, one);
        break;
    case XPB_OP_FILL:
        gc_out(g, 4, x4);
        break;
    case XPB_OP_ALL_REDUCE: /* no communicator: the mean over one rank */
        gc_in(g, 4, w4);
        break;
    default:
        fail_msg("test has no instance of %s", xpb_op_name(kind));
    }
}

static void test_every_kind_accepts_a_valid_op_and_runs(void **state)
{
    (void)state;
    for (uint32_t kind = 1; kind < XPB_OP_KIND_END_; kind++) {
        gc_op g;
        build_valid(&g, kind);
        xpb_status st = gc_run(&g);
        if (st != XPB_OK)
            fail_msg("%s: %s: %s", xpb_op_name(kind), xpb_status_name(st), g.err);
        gc_op_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_has_a_kernel),
        cmocka_unit_test(test_every_kind_accepts_a_valid_op_and_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
