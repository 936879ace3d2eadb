/* The reference backend's op table: ref_kernel_for covers every op kind of op set v1, and
 * ref_check_op accepts a well-formed instance of every op and rejects malformed ones with a
 * message that names the op, its layer, the tensor, and the expected and found shapes. */
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

static void test_unknown_kind_is_unsupported(void **state)
{
    (void)state;
    gc_op g;
    gc_op_init(&g, 77, NULL);
    g.op.layer = "mystery";
    assert_int_equal(gc_check(&g), XPB_UNSUPPORTED);
    assert_non_null(strstr(g.err, "layer mystery"));
    assert_non_null(strstr(g.err, "77"));
}

static void test_counts_and_missing_tensors(void **state)
{
    (void)state;
    gc_op g;
    build_valid(&g, XPB_OP_CONV2D);
    g.op.layer = "conv1";
    g.op.n_inputs = 1;
    assert_int_equal(gc_check(&g), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(g.err, "CONV2D (layer conv1): expected 2 to 3 inputs, found 1"));
    g.op.n_inputs = 3;
    g.op.n_outputs = 2;
    assert_int_equal(gc_check(&g), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(g.err, "outputs"));
    g.op.n_outputs = 1;
    /* a NULL desc: ref_check_op sees the tensors through an array */
    const xpb_tensor_desc *in[XPB_MAX_OP_INPUTS] = {&g.in_desc[0], NULL, &g.in_desc[2]};
    const xpb_tensor_desc *out[XPB_MAX_OP_OUTPUTS] = {&g.out_desc[0]};
    char err[256];
    assert_int_equal(ref_check_op(&g.op, in, out, err, sizeof err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "input 1 (w) is missing"));
    /* an empty dimension */
    g.in_desc[0].dims[2] = 0;
    assert_int_equal(gc_check(&g), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(g.err, "empty"));
    gc_op_free(&g);

    /* optional outputs of BATCHNORM_BWD may be absent; dx of CONV2D_BWD_DATA may not */
    build_valid(&g, XPB_OP_BATCHNORM_BWD);
    const xpb_tensor_desc *bin[XPB_MAX_OP_INPUTS];
    for (int i = 0; i < 5; i++)
        bin[i] = &g.in_desc[i];
    const xpb_tensor_desc *bout[XPB_MAX_OP_OUTPUTS] = {NULL, &g.out_desc[1], &g.out_desc[2]};
    assert_int_equal(ref_check_op(&g.op, bin, bout, err, sizeof err), XPB_OK);
    gc_op_free(&g);
    build_valid(&g, XPB_OP_CONV2D_BWD_DATA);
    const xpb_tensor_desc *cin[XPB_MAX_OP_INPUTS] = {&g.in_desc[0], &g.in_desc[1]};
    const xpb_tensor_desc *cout[XPB_MAX_OP_OUTPUTS] = {NULL};
    assert_int_equal(ref_check_op(&g.op, cin, cout, err, sizeof err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "output 0 (dx) is missing"));
    gc_op_free(&g);
}

/* Builds a valid op, lets `breakit` damage it, and expects INVALID_ARGUMENT with every
 * fragment in the message. */
static void expect_rejected(uint32_t kind, void (*breakit)(gc_op *g), const char *frag1,
                            const char *frag2)
{
    gc_op g;
    build_valid(&g, kind);
    g.op.layer = "L7";
    breakit(&g);
    xpb_status st = gc_check(&g);
    if (st != XPB_INVALID_ARGUMENT || !strstr(g.err, "(layer L7)") || !strstr(g.err, frag1) ||
        (frag2 && !strstr(g.err, frag2)))
        fail_msg("%s: got %s \"%s\", wanted \"%s\" and \"%s\"", xpb_op_name(kind),
                 xpb_status_name(st), g.err, frag1, frag2 ? frag2 : "");
    gc_op_free(&g);
}

static void bn_gamma_short(gc_op *g)
{
    g->in_desc[1].dims[0] = 2;
}

static void bn_bwd_dx_wrong(gc_op *g)
{
    g->out_desc[0].dims[3] = 4;
}

static void in_stats_wrong(gc_op *g)
{
    g->out_desc[1].dims[1] = 4;
}

static void labels_f32(gc_op *g)
{
    g->in_desc[1].dtype = XPB_DTYPE_F32;
}

static void labels_short(gc_op *g)
{
    g->in_desc[1].dims[0] = 3;
}

static void add_mismatch(gc_op *g)
{
    g->in_desc[1].dims[1] = 2;
}

static void reshape_numel(gc_op *g)
{
    g->out_desc[0].dims[1] = 61;
}

static void loss_not_scalar(gc_op *g)
{
    g->out_desc[0].dims[0] = 2;
}

static void adam_step_shape(gc_op *g)
{
    g->in_desc[4].dims[0] = 2;
}

static void sgd_buf_shape(gc_op *g)
{
    g->in_desc[2].dims[0] = 5;
}

static void dropout_p(gc_op *g)
{
    g->op.attrs.dropout_p = 1.5f;
}

static void copy_dtype(gc_op *g)
{
    g->out_desc[0].dtype = XPB_DTYPE_I32;
}

static void test_malformed_ops_are_rejected(void **state)
{
    (void)state;
    expect_rejected(XPB_OP_BATCHNORM_TRAIN, bn_gamma_short, "input gamma",
                    "must be [3], found [2]");
    expect_rejected(XPB_OP_BATCHNORM_BWD, bn_bwd_dx_wrong, "output dx",
                    "must be [2, 3, 4, 5], found [2, 3, 4, 4]");
    expect_rejected(XPB_OP_INSTANCENORM, in_stats_wrong, "output ws_mean", "[2, 3]");
    expect_rejected(XPB_OP_SOFTMAX_XENT, labels_f32, "input labels", "I32");
    expect_rejected(XPB_OP_SOFTMAX_XENT_BWD, labels_short, "input labels",
                    "must be [2], found [3]");
    expect_rejected(XPB_OP_ADD, add_mismatch, "input b", "must be [2, 3, 4, 5]");
    expect_rejected(XPB_OP_RESHAPE, reshape_numel, "as many elements", NULL);
    expect_rejected(XPB_OP_MSE_LOSS, loss_not_scalar, "output loss", "must be [1], found [2]");
    expect_rejected(XPB_OP_ADAM_UPDATE, adam_step_shape, "input step", NULL);
    expect_rejected(XPB_OP_SGD_UPDATE, sgd_buf_shape, "input momentum_buf", NULL);
    expect_rejected(XPB_OP_DROPOUT, dropout_p, "dropout_p", NULL);
    expect_rejected(XPB_OP_COPY, copy_dtype, "dtype", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_has_a_kernel),
        cmocka_unit_test(test_every_kind_accepts_a_valid_op_and_runs),
        cmocka_unit_test(test_unknown_kind_is_unsupported),
        cmocka_unit_test(test_counts_and_missing_tensors),
        cmocka_unit_test(test_malformed_ops_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
