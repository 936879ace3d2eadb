/* The reference backend's op table: ref_kernel_for covers every op kind of op sets 1 to 3
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

static void build_valid3(gc_op *g, uint32_t kind);

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
        build_valid3(g, kind);
    }
}

/* The same for the ops of op set 3 (their attributes are members of xpb_op). */
static void build_valid3(gc_op *g, uint32_t kind)
{
    const int64_t a2[2] = {2, 3}, b2[2] = {3, 4}, y2[2] = {2, 4}, k4[1] = {4}, one[1] = {1};
    const int64_t a4[4] = {2, 3, 4, 5}, b3[3] = {3, 5, 2}, y4[4] = {2, 3, 4, 2};
    const int64_t x3[3] = {2, 3, 4}, s2[2] = {2, 3}, sq[2] = {4, 4}, p4[4] = {2, 4, 3, 5};
    const int64_t ids[2] = {2, 3}, wv[2] = {5, 4}, e3[3] = {2, 3, 4};
    const int64_t lx[3] = {3, 2, 4}, lih[2] = {12, 4}, lhh[2] = {12, 3}, lb[1] = {12};
    const int64_t ls[2] = {2, 3}, ly[3] = {3, 2, 3}, lws[3] = {3, 2, 15};
    switch (kind) {
    case XPB_OP_MATMUL:
        gc_in(g, 2, a2), gc_in(g, 2, b2), gc_in(g, 1, k4), gc_out(g, 2, y2);
        break;
    case XPB_OP_MATMUL_BWD:
        gc_in(g, 2, y2), gc_in(g, 2, a2), gc_in(g, 2, b2);
        gc_out(g, 2, a2), gc_out(g, 2, b2), gc_out(g, 1, k4);
        break;
    case XPB_OP_BATCHED_MATMUL:
        gc_in(g, 4, a4), gc_in(g, 3, b3), gc_out(g, 4, y4);
        break;
    case XPB_OP_BATCHED_MATMUL_BWD:
        gc_in(g, 4, y4), gc_in(g, 4, a4), gc_in(g, 3, b3), gc_out(g, 4, a4), gc_out(g, 3, b3);
        break;
    case XPB_OP_PERMUTE:
        g->op.perm[0] = 0, g->op.perm[1] = 2, g->op.perm[2] = 1, g->op.perm[3] = 3;
        gc_in(g, 4, a4), gc_out(g, 4, p4);
        break;
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
        gc_in(g, 4, a4), gc_in(g, 2, (int64_t[]){4, 1}), gc_out(g, 4, a4);
        break;
    case XPB_OP_SUM_TO:
        gc_in(g, 4, a4), gc_out(g, 3, (int64_t[]){3, 1, 5});
        break;
    case XPB_OP_SCALE:
    case XPB_OP_GELU:
        g->op.attrs.value = 0.5f;
        gc_in(g, 4, a4), gc_out(g, 4, a4);
        break;
    case XPB_OP_SOFTMAX:
        g->op.causal = 1;
        gc_in(g, 4, (int64_t[]){2, 3, 4, 4}), gc_in(g, 2, sq),
            gc_out(g, 4, (int64_t[]){2, 3, 4, 4});
        break;
    case XPB_OP_SOFTMAX_BWD:
    case XPB_OP_GELU_BWD:
        gc_in(g, 4, a4), gc_in(g, 4, a4), gc_out(g, 4, a4);
        break;
    case XPB_OP_LAYER_NORM:
        gc_in(g, 3, x3), gc_in(g, 1, k4), gc_in(g, 1, k4);
        gc_out(g, 3, x3), gc_out(g, 2, s2), gc_out(g, 2, s2);
        break;
    case XPB_OP_LAYER_NORM_BWD:
        gc_in(g, 3, x3), gc_in(g, 3, x3), gc_in(g, 1, k4), gc_in(g, 2, s2);
        gc_fill(gc_in(g, 2, s2), 6, 40, 0.5, 1.5);
        gc_out(g, 3, x3), gc_out(g, 1, k4), gc_out(g, 1, k4);
        break;
    case XPB_OP_EMBEDDING:
        gc_in_i32(g, 2, ids), gc_in(g, 2, wv), gc_out(g, 3, e3);
        break;
    case XPB_OP_EMBEDDING_BWD:
        gc_in(g, 3, e3), gc_in_i32(g, 2, ids), gc_out(g, 2, wv);
        break;
    case XPB_OP_LSTM:
        gc_in(g, 3, lx), gc_in(g, 2, lih), gc_in(g, 2, lhh), gc_in(g, 1, lb), gc_in(g, 1, lb);
        gc_in(g, 2, ls), gc_in(g, 2, ls);
        gc_out(g, 3, ly), gc_out(g, 2, ls), gc_out(g, 2, ls), gc_out(g, 3, lws);
        break;
    case XPB_OP_LSTM_BWD: /* ten inputs, seven outputs: beyond xpb_op's inline arrays */
        gc_in(g, 3, ly), gc_in(g, 2, ls), gc_in(g, 2, ls), gc_in(g, 3, lx), gc_in(g, 2, lih);
        gc_in(g, 2, lhh), gc_in(g, 3, ly), gc_in(g, 3, lws), gc_in(g, 2, ls), gc_in(g, 2, ls);
        gc_out(g, 3, lx), gc_out(g, 2, lih), gc_out(g, 2, lhh), gc_out(g, 1, lb);
        gc_out(g, 1, lb), gc_out(g, 2, ls), gc_out(g, 2, ls);
        break;
    case XPB_OP_ADAMW_UPDATE:
        for (int i = 0; i < 4; i++)
            gc_in(g, 2, b2);
        gc_in(g, 1, one);
        break;
    case XPB_OP_CLIP_GRAD_NORM: /* eight gradients: beyond xpb_op's six inline inputs */
        g->op.max_norm = 1.0f;
        for (int i = 0; i < 8; i++)
            gc_fill(gc_in(g, 2, b2), 12, 50 + (uint64_t)i, -1.0, 1.0);
        gc_out(g, 1, one);
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
