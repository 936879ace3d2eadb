/* The SDK's shape rules (include/xpubench/shapes.h): every op of op sets 1 to 3 accepts a
 * well-formed instance, forward ops infer exactly the output that instance has, and every way an op
 * of op sets 1 and 2 can be malformed (counts, missing tensors, ranks, dtypes, channels,
 * attributes, output shapes) is refused with a message that names the op, its layer, the tensor,
 * what was expected and what was found (op set 3: tests/test_shapes3.c). Then the program-level
 * checks a backend's compile runs (xpb_op_validate, xpb_program_validate), for programs of this
 * host and of an ABI 1.0 host. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <xpubench/xpubench.h>

#include "program/program_abi.h"
#include "shapes_harness.h"

/* A small well-formed instance of every op (op set 3: valid3, shapes_harness.h). */
static void valid(struct sh *s, uint32_t kind)
{
    sh_init(s, kind);
    switch (kind) {
    case XPB_OP_CONV2D:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 4, 3, 2, 2), sh_in(s, F, 1, 4);
        sh_out(s, F, 4, 2, 4, 3, 4);
        break;
    case XPB_OP_CONV2D_BWD_DATA:
        sh_in(s, F, 4, 2, 4, 3, 4), sh_in(s, F, 4, 4, 3, 2, 2), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_CONV2D_BWD_WEIGHTS:
        sh_in(s, F, 4, 2, 4, 3, 4), sh_in(s, F, 4, 2, 3, 4, 5);
        sh_out(s, F, 4, 4, 3, 2, 2), sh_out(s, F, 1, 4);
        break;
    case XPB_OP_CONV_T2D:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 3, 4, 2, 2), sh_in(s, F, 1, 4);
        sh_out(s, F, 4, 2, 4, 5, 6);
        break;
    case XPB_OP_CONV_T2D_BWD_DATA:
        sh_in(s, F, 4, 2, 4, 5, 6), sh_in(s, F, 4, 3, 4, 2, 2), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        sh_in(s, F, 4, 2, 4, 5, 6), sh_in(s, F, 4, 2, 3, 4, 5);
        sh_out(s, F, 4, 3, 4, 2, 2), sh_out(s, F, 1, 4);
        break;
    case XPB_OP_LINEAR:
        sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 4, 3), sh_in(s, F, 1, 4), sh_out(s, F, 2, 2, 4);
        break;
    case XPB_OP_LINEAR_BWD_DATA:
        sh_in(s, F, 2, 2, 4), sh_in(s, F, 2, 4, 3), sh_out(s, F, 2, 2, 3);
        break;
    case XPB_OP_LINEAR_BWD_WEIGHTS:
        sh_in(s, F, 2, 2, 4), sh_in(s, F, 2, 2, 3), sh_out(s, F, 2, 4, 3), sh_out(s, F, 1, 4);
        break;
    case XPB_OP_BATCHNORM_TRAIN:
    case XPB_OP_BATCHNORM_INFER:
        sh_in(s, F, 4, 2, 3, 4, 5);
        for (int i = 0; i < 4; i++)
            sh_in(s, F, 1, 3);
        sh_out(s, F, 4, 2, 3, 4, 5);
        if (kind == XPB_OP_BATCHNORM_TRAIN)
            sh_out(s, F, 1, 3), sh_out(s, F, 1, 3);
        break;
    case XPB_OP_BATCHNORM_BWD:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 2, 3, 4, 5);
        for (int i = 0; i < 3; i++)
            sh_in(s, F, 1, 3);
        sh_out(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 1, 3), sh_out(s, F, 1, 3);
        break;
    case XPB_OP_INSTANCENORM:
        sh_in(s, F, 4, 2, 3, 4, 5);
        sh_out(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 2, 2, 3), sh_out(s, F, 2, 2, 3);
        break;
    case XPB_OP_INSTANCENORM_BWD:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 2, 3, 4, 5);
        sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 2, 3), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
    case XPB_OP_COPY:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_DROPOUT:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_RELU_BWD:
    case XPB_OP_LEAKY_RELU_BWD:
    case XPB_OP_TANH_BWD:
    case XPB_OP_ADD:
    case XPB_OP_DROPOUT_BWD:
    case XPB_OP_MSE_LOSS_BWD:
    case XPB_OP_L1_LOSS_BWD:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_MAXPOOL:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 3, 4), sh_out(s, I, 4, 2, 3, 3, 4);
        break;
    case XPB_OP_MAXPOOL_BWD:
        sh_in(s, F, 4, 2, 3, 3, 4), sh_in(s, I, 4, 2, 3, 3, 4), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_AVGPOOL:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 3, 4);
        break;
    case XPB_OP_AVGPOOL_BWD:
        sh_in(s, F, 4, 2, 3, 3, 4), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_GLOBAL_AVGPOOL:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 1, 1);
        break;
    case XPB_OP_GLOBAL_AVGPOOL_BWD:
        sh_in(s, F, 4, 2, 3, 1, 1), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_REFLECTION_PAD:
        s->op.attrs.pad[0] = s->op.attrs.pad[1] = 1;
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 6, 7);
        break;
    case XPB_OP_REFLECTION_PAD_BWD:
        s->op.attrs.pad[0] = s->op.attrs.pad[1] = 1;
        sh_in(s, F, 4, 2, 3, 6, 7), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_RESHAPE:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 2, 2, 60);
        break;
    case XPB_OP_SOFTMAX_XENT:
        sh_in(s, F, 2, 2, 4), sh_in(s, I, 1, 2), sh_out(s, F, 1, 1), sh_out(s, F, 2, 2, 4);
        break;
    case XPB_OP_SOFTMAX_XENT_BWD:
        sh_in(s, F, 2, 2, 4), sh_in(s, I, 1, 2), sh_out(s, F, 2, 2, 4);
        break;
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 1, 1);
        break;
    case XPB_OP_SGD_UPDATE:
        sh_in(s, F, 4, 4, 3, 2, 2), sh_in(s, F, 4, 4, 3, 2, 2), sh_in(s, F, 4, 4, 3, 2, 2);
        break;
    case XPB_OP_ADAM_UPDATE:
        for (int i = 0; i < 4; i++)
            sh_in(s, F, 4, 4, 3, 2, 2);
        sh_in(s, F, 1, 1);
        break;
    case XPB_OP_FILL:
        sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_ALL_REDUCE:
        sh_in(s, F, 4, 4, 3, 2, 2);
        break;
    default:
        if (!valid3(s, kind))
            fail_msg("no valid instance of %s (%u)", xpb_op_name(kind), kind);
    }
}

/* Forward ops a model may apply (and COPY, BATCHNORM_INFER): their first output follows from
 * their inputs. */
static int inferable(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
    case XPB_OP_LINEAR:
    case XPB_OP_BATCHNORM_TRAIN:
    case XPB_OP_BATCHNORM_INFER:
    case XPB_OP_INSTANCENORM:
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
    case XPB_OP_MAXPOOL:
    case XPB_OP_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL:
    case XPB_OP_ADD:
    case XPB_OP_REFLECTION_PAD:
    case XPB_OP_SOFTMAX_XENT:
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
    case XPB_OP_DROPOUT:
    case XPB_OP_COPY:
    case XPB_OP_MATMUL: /* op set 3 */
    case XPB_OP_BATCHED_MATMUL:
    case XPB_OP_PERMUTE:
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
    case XPB_OP_SCALE:
    case XPB_OP_SOFTMAX:
    case XPB_OP_LAYER_NORM:
    case XPB_OP_GELU:
    case XPB_OP_EMBEDDING:
    case XPB_OP_LSTM:
        return 1;
    default:
        return 0;
    }
}

/* ---- every op: accepted, and inferred as its valid instance says ---- */

static void test_every_op_accepts_its_valid_instance(void **state)
{
    (void)state;
    for (uint32_t kind = 1; kind < XPB_OP_KIND_END_; kind++) {
        struct sh s;
        valid(&s, kind);
        expect_ok(&s);
        xpb_tensor_desc y;
        xpb_status st = sh_infer(&s, &y);
        if (!inferable(kind)) {
            assert_int_equal(st, XPB_INVALID_ARGUMENT);
            char want[256];
            snprintf(want, sizeof want,
                     "%s (layer 'L'): not a forward op: its outputs do not follow from its inputs",
                     xpb_op_name(kind));
            assert_string_equal(s.msg, want);
            continue;
        }
        if (st != XPB_OK)
            fail_msg("infer %s: %s", xpb_op_name(kind), s.msg);
        /* exactly the first output of the valid instance, and nothing else touched */
        assert_string_equal(y.name, "kept");
        assert_int_equal(y.dtype, s.out[0].dtype);
        assert_int_equal(y.ndim, s.out[0].ndim);
        for (int d = 0; d < XPB_MAX_DIMS; d++)
            assert_int_equal(y.dims[d], s.out[0].dims[d]);
        assert_int_equal((unsigned char)y.role, 0x5a);
    }
}

static void test_optional_tensors(void **state)
{
    (void)state;
    struct sh s;
    /* every output of BATCHNORM_BWD may be "not wanted" */
    valid(&s, XPB_OP_BATCHNORM_BWD);
    s.out_absent = 7;
    expect_ok(&s);
    /* the workspaces of the forward ops too, or they may be left out of n_outputs */
    static const uint32_t ws_kinds[] = {XPB_OP_BATCHNORM_TRAIN, XPB_OP_INSTANCENORM, XPB_OP_MAXPOOL,
                                        XPB_OP_SOFTMAX_XENT, XPB_OP_DROPOUT};
    for (size_t k = 0; k < sizeof ws_kinds / sizeof ws_kinds[0]; k++) {
        valid(&s, ws_kinds[k]);
        s.out_absent = 0xe;
        expect_ok(&s);
        s.out_absent = 0;
        s.op.n_outputs = 1;
        expect_ok(&s);
    }
    /* optional trailing inputs: bias, db, momentum buffer */
    valid(&s, XPB_OP_CONV2D);
    s.op.n_inputs = 2;
    expect_ok(&s);
    valid(&s, XPB_OP_CONV_T2D);
    s.op.n_inputs = 2;
    expect_ok(&s);
    valid(&s, XPB_OP_LINEAR);
    s.op.n_inputs = 2;
    expect_ok(&s);
    valid(&s, XPB_OP_CONV2D_BWD_WEIGHTS);
    s.op.n_outputs = 1;
    expect_ok(&s);
    valid(&s, XPB_OP_LINEAR_BWD_WEIGHTS);
    s.op.n_outputs = 1;
    expect_ok(&s);
    valid(&s, XPB_OP_SGD_UPDATE);
    s.op.n_inputs = 2;
    expect_ok(&s);
    /* ADAM's step may be I32; FILL and COPY, RESHAPE take either dtype */
    valid(&s, XPB_OP_ADAM_UPDATE);
    s.in[4].dtype = I;
    expect_ok(&s);
    valid(&s, XPB_OP_FILL);
    s.out[0].dtype = I;
    expect_ok(&s);
    valid(&s, XPB_OP_COPY);
    s.in[0].dtype = s.out[0].dtype = I;
    expect_ok(&s);
    valid(&s, XPB_OP_RESHAPE);
    s.in[0].dtype = s.out[0].dtype = I;
    expect_ok(&s);
    /* PyTorch's edge values: dropout p = 1 drops everything; a negative forward slope */
    valid(&s, XPB_OP_DROPOUT);
    s.op.attrs.dropout_p = 1.0f;
    expect_ok(&s);
    valid(&s, XPB_OP_LEAKY_RELU);
    s.op.attrs.negative_slope = -0.5f;
    expect_ok(&s);
    /* batch norm over [N,C] and [N,C,L]; instance norm over [N,C,L] */
    sh_init(&s, XPB_OP_BATCHNORM_TRAIN);
    sh_in(&s, F, 2, 8, 3);
    for (int i = 0; i < 4; i++)
        sh_in(&s, F, 1, 3);
    sh_out(&s, F, 2, 8, 3);
    expect_ok(&s);
    s.in[0].ndim = s.out[0].ndim = 3;
    s.in[0].dims[2] = s.out[0].dims[2] = 5;
    expect_ok(&s);
    sh_init(&s, XPB_OP_INSTANCENORM);
    sh_in(&s, F, 3, 2, 3, 7), sh_out(&s, F, 3, 2, 3, 7), sh_out(&s, F, 2, 2, 3);
    expect_ok(&s);
}

/* ---- counts, missing tensors, tensor validity ---- */

static void test_counts_and_presence(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_CONV2D);
    s.op.n_inputs = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 2 to 3 inputs, found 1");
    s.op.n_inputs = 3;
    s.op.n_outputs = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 1 output, found 2");
    s.op.n_outputs = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 1 output, found 0");
    s.op.n_outputs = 1;
    s.in_absent = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input 1 (w) is missing");
    s.in_absent = 0;
    s.out_absent = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "output 0 (y) is missing");

    valid(&s, XPB_OP_BATCHNORM_TRAIN);
    s.op.n_outputs = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 1 to 3 outputs, found 4");
    valid(&s, XPB_OP_ADAM_UPDATE);
    s.op.n_inputs = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 5 inputs, found 4");
    valid(&s, XPB_OP_RELU);
    s.op.n_inputs = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 1 input, found 2");
    valid(&s, XPB_OP_SGD_UPDATE);
    s.op.n_outputs = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 0 outputs, found 1");
    valid(&s, XPB_OP_FILL);
    s.op.n_inputs = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 0 inputs, found 1");
    valid(&s, XPB_OP_CONV2D_BWD_DATA);
    s.out_absent = 1; /* dx of a backward-data op is never optional */
    expect(&s, XPB_INVALID_ARGUMENT, "output 0 (dx) is missing");
    valid(&s, XPB_OP_MAXPOOL);
    s.out_absent = 1; /* only the workspace is optional */
    expect(&s, XPB_INVALID_ARGUMENT, "output 0 (y) is missing");
    valid(&s, XPB_OP_LINEAR_BWD_WEIGHTS);
    s.out_absent = 2; /* db is optional by n_outputs, never "not wanted" within it */
    expect(&s, XPB_INVALID_ARGUMENT, "output 1 (db) is missing");

    valid(&s, XPB_OP_RELU);
    s.op.n_inputs = XPB_SHP_MAX_IN + 1; /* more than any op takes: refused before reading them */
    expect(&s, XPB_INVALID_ARGUMENT, "n_inputs 513 and n_outputs 1, at most 512 and 8");
    /* a NULL array is "every tensor absent" */
    valid(&s, XPB_OP_RELU);
    assert_int_equal(xpb_op_check(&s.op, NULL, NULL, s.msg, sizeof s.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "RELU (layer 'L'): input 0 (x) is missing");
}

static void test_tensor_validity(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_RELU);
    s.in[0].ndim = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" has 0 dims, expected 1 to 4");
    s.in[0].ndim = 5;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" has 5 dims, expected 1 to 4");
    s.in[0].ndim = 4;
    s.out[0].dims[2] = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" has an empty dimension: [2, 3, 0, 5]");
    s.out[0].dims[2] = 4;
    s.in[0].dtype = I;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be F32, found I32");
    s.in[0].dtype = 9;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be F32, found dtype 9");
    s.in[0].dtype = F;
    s.out[0].name = NULL; /* a tensor without a name is labelled by its role alone */
    s.in[0].ndim = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "output y must be [2, 3, 4], found [2, 3, 4, 5]");

    valid(&s, XPB_OP_SOFTMAX_XENT);
    s.in[1].dtype = F;
    expect(&s, XPB_INVALID_ARGUMENT, "input labels \"in1\" must be I32, found F32");
    valid(&s, XPB_OP_MAXPOOL);
    s.out[1].dtype = F;
    expect(&s, XPB_INVALID_ARGUMENT, "output ws_index \"out1\" must be I32, found F32");
    valid(&s, XPB_OP_MAXPOOL_BWD);
    s.in[1].dtype = F;
    expect(&s, XPB_INVALID_ARGUMENT, "input ws_index \"in1\" must be I32, found F32");
    valid(&s, XPB_OP_ADAM_UPDATE);
    s.in[4].dtype = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input step \"in4\" must be F32 or I32, found dtype 3");
    valid(&s, XPB_OP_COPY);
    s.out[0].dtype = I;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output y \"out0\" must have the dtype of input x \"in0\" (F32), found I32");
    valid(&s, XPB_OP_RESHAPE);
    s.in[0].dtype = I;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output y \"out0\" must have the dtype of input x \"in0\" (I32), found F32");
}

/* ---- convolutions and linear ---- */

static void test_conv_errors(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_CONV2D);
    s.in[0].ndim = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 4-D, found [2, 3, 4]");
    valid(&s, XPB_OP_CONV2D);
    s.in[1].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input w \"in1\" must be 4-D, found [4, 3]");
    valid(&s, XPB_OP_CONV2D);
    s.in[1].dims[1] = 4;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input w \"in1\" [4, 4, 2, 2] expects 4 input channels (dim 1), input x \"in0\" "
           "[2, 3, 4, 5] has 3");
    valid(&s, XPB_OP_CONV2D);
    s.op.attrs.stride[1] = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute stride must be >= 1, found (1, 0)");
    valid(&s, XPB_OP_CONV2D);
    s.op.attrs.pad[0] = -1;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute pad must be >= 0, found (-1, 0)");
    valid(&s, XPB_OP_CONV2D);
    s.op.attrs.dilation[0] = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute dilation must be >= 1, found (0, 1)");
    valid(&s, XPB_OP_CONV2D);
    s.op.attrs.dilation[0] = s.op.attrs.dilation[1] = 4; /* a 5x5 reach on a 4x5 image */
    expect(&s, XPB_INVALID_ARGUMENT,
           "a 2x2 kernel with stride (1, 1), pad (0, 0) and dilation (4, 4) gives no output for "
           "input x \"in0\" [2, 3, 4, 5]");
    valid(&s, XPB_OP_CONV2D);
    s.out[0].dims[3] = 5;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 4, 3, 4], found [2, 4, 3, 5]");
    valid(&s, XPB_OP_CONV2D);
    s.in[2].dims[0] = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input b \"in2\" must be [4], found [3]");
    /* stride, pad and dilation enter the output size as PyTorch's formula says */
    valid(&s, XPB_OP_CONV2D);
    s.op.attrs.stride[0] = s.op.attrs.stride[1] = 2;
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 1;
    s.op.attrs.dilation[0] = s.op.attrs.dilation[1] = 2;
    s.out[0].dims[2] = 2; /* floor((4 + 2 - 2 - 1) / 2) + 1 */
    s.out[0].dims[3] = 3; /* floor((5 + 2 - 2 - 1) / 2) + 1 */
    expect_ok(&s);

    /* transposed: weight [C, K, kh, kw], output padding below stride or dilation */
    valid(&s, XPB_OP_CONV_T2D);
    s.in[1].dims[0] = 4;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input w \"in1\" [4, 4, 2, 2] expects 4 input channels (dim 0), input x \"in0\" "
           "[2, 3, 4, 5] has 3");
    valid(&s, XPB_OP_CONV_T2D);
    s.op.attrs.output_padding[0] = 1; /* stride 1, dilation 1 */
    expect(&s, XPB_INVALID_ARGUMENT,
           "attribute output_padding (1, 0) must be >= 0 and smaller than the stride (1, 1) or "
           "the dilation (1, 1)");
    valid(&s, XPB_OP_CONV_T2D);
    s.op.attrs.output_padding[1] = -1;
    expect(&s, XPB_INVALID_ARGUMENT,
           "attribute output_padding (0, -1) must be >= 0 and smaller than the stride (1, 1) or "
           "the dilation (1, 1)");
    valid(&s, XPB_OP_CONV_T2D);
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 3; /* (4-1) - 6 + 1 + 1 < 1 */
    expect(&s, XPB_INVALID_ARGUMENT,
           "a 2x2 kernel with stride (1, 1), pad (3, 3) and dilation (1, 1) gives no output for "
           "input x \"in0\" [2, 3, 4, 5]");
    valid(&s, XPB_OP_CONV_T2D); /* CycleGAN's upsampling: k3 s2 p1 op1 doubles the size */
    s.in[1].dims[2] = s.in[1].dims[3] = 3;
    s.op.attrs.stride[0] = s.op.attrs.stride[1] = 2;
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 1;
    s.op.attrs.output_padding[0] = s.op.attrs.output_padding[1] = 1;
    s.out[0].dims[2] = 8;
    s.out[0].dims[3] = 10;
    expect_ok(&s);

    /* backward ops: the tensor on the data side fixes the others */
    valid(&s, XPB_OP_CONV2D_BWD_DATA);
    s.in[0].dims[3] = 5;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 4, 3, 4], found [2, 4, 3, 5]");
    valid(&s, XPB_OP_CONV2D_BWD_DATA);
    s.out[0].dims[1] = 2;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input w \"in1\" [4, 3, 2, 2] expects 3 input channels (dim 1), output dx \"out0\" "
           "[2, 2, 4, 5] has 2");
    valid(&s, XPB_OP_CONV2D_BWD_WEIGHTS);
    s.out[0].dims[1] = 2;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output dw \"out0\" [4, 2, 2, 2] expects 2 input channels (dim 1), input x \"in1\" "
           "[2, 3, 4, 5] has 3");
    valid(&s, XPB_OP_CONV2D_BWD_WEIGHTS);
    s.out[1].dims[0] = 5;
    expect(&s, XPB_INVALID_ARGUMENT, "output db \"out1\" must be [4], found [5]");
    valid(&s, XPB_OP_CONV_T2D_BWD_DATA);
    s.in[0].dims[2] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 4, 5, 6], found [2, 4, 4, 6]");
    valid(&s, XPB_OP_CONV_T2D_BWD_WEIGHTS);
    s.out[0].ndim = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "output dw \"out0\" must be 4-D, found [3, 4, 2]");
}

static void test_linear_errors(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_LINEAR);
    s.in[0].ndim = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 2-D, found [2, 3, 1, 1]");
    valid(&s, XPB_OP_LINEAR);
    s.in[1].dims[1] = 5;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input w \"in1\" [4, 5] expects 5 input features (dim 1), input x \"in0\" [2, 3] has 3");
    valid(&s, XPB_OP_LINEAR);
    s.out[0].dims[1] = 5;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 4], found [2, 5]");
    valid(&s, XPB_OP_LINEAR);
    s.in[2].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input b \"in2\" must be [4], found [4, 1]");
    valid(&s, XPB_OP_LINEAR_BWD_DATA);
    s.in[0].dims[0] = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 4], found [3, 4]");
    valid(&s, XPB_OP_LINEAR_BWD_WEIGHTS);
    s.out[0].dims[1] = 2;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output dw \"out0\" [4, 2] expects 2 input features (dim 1), input x \"in1\" [2, 3] has "
           "3");
}

/* ---- normalisation ---- */

static void test_norm_errors(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_BATCHNORM_TRAIN);
    s.in[0].ndim = s.out[0].ndim = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 2-D to 4-D, found [2]");
    valid(&s, XPB_OP_BATCHNORM_TRAIN);
    s.in[1].dims[0] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input gamma \"in1\" must be [3], found [2]");
    valid(&s, XPB_OP_BATCHNORM_TRAIN);
    s.in[4].dims[0] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "input running_var \"in4\" must be [3], found [4]");
    valid(&s, XPB_OP_BATCHNORM_TRAIN);
    s.out[0].dims[3] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 4, 5], found [2, 3, 4, 4]");
    valid(&s, XPB_OP_BATCHNORM_TRAIN);
    s.out[2].dims[0] = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "output ws_var \"out2\" must be [3], found [1]");
    valid(&s, XPB_OP_BATCHNORM_INFER);
    s.op.attrs.eps = -1e-5f;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute eps must be >= 0, found -1e-05");
    valid(&s, XPB_OP_BATCHNORM_INFER);
    s.op.attrs.eps = NAN;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute eps must be >= 0, found nan");
    valid(&s, XPB_OP_BATCHNORM_BWD);
    s.out[0].dims[3] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "output dx \"out0\" must be [2, 3, 4, 5], found [2, 3, 4, 4]");
    valid(&s, XPB_OP_BATCHNORM_BWD);
    s.in[0].dims[0] = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 3, 4, 5], found [1, 3, 4, 5]");
    valid(&s, XPB_OP_BATCHNORM_BWD);
    s.out[2].dims[0] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "output dbeta \"out2\" must be [3], found [2]");

    valid(&s, XPB_OP_INSTANCENORM);
    s.in[0].ndim = s.out[0].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 3-D to 4-D, found [2, 3]");
    valid(&s, XPB_OP_INSTANCENORM);
    s.out[1].dims[1] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "output ws_mean \"out1\" must be [2, 3], found [2, 4]");
    valid(&s, XPB_OP_INSTANCENORM);
    s.op.attrs.eps = -1.0f;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute eps must be >= 0, found -1");
    valid(&s, XPB_OP_INSTANCENORM_BWD);
    s.in[3].ndim = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "input ws_var \"in3\" must be [2, 3], found [2]");
    valid(&s, XPB_OP_INSTANCENORM_BWD);
    s.in[0].dims[2] = 5;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 3, 4, 5], found [2, 3, 5, 5]");
}

/* ---- elementwise, data movement, losses, dropout, updates ---- */

static void test_elementwise_errors(void **state)
{
    (void)state;
    struct sh s;
    static const uint32_t binary[] = {XPB_OP_RELU_BWD, XPB_OP_TANH_BWD, XPB_OP_ADD,
                                      XPB_OP_MSE_LOSS_BWD, XPB_OP_L1_LOSS_BWD};
    for (size_t k = 0; k < sizeof binary / sizeof binary[0]; k++) {
        valid(&s, binary[k]);
        char body[160];
        snprintf(body, sizeof body, "input %s \"in1\" must be [2, 3, 4, 5], found [2, 2, 4, 5]",
                 binary[k] == XPB_OP_ADD                                               ? "b"
                 : binary[k] == XPB_OP_MSE_LOSS_BWD || binary[k] == XPB_OP_L1_LOSS_BWD ? "target"
                                                                                       : "y");
        s.in[1].dims[1] = 2;
        expect(&s, XPB_INVALID_ARGUMENT, body);
    }
    valid(&s, XPB_OP_TANH);
    s.out[0].dims[0] = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 4, 5], found [3, 3, 4, 5]");
    valid(&s, XPB_OP_LEAKY_RELU_BWD);
    s.op.attrs.negative_slope = -0.2f;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute negative_slope must be >= 0, found -0.2");

    valid(&s, XPB_OP_REFLECTION_PAD);
    s.op.attrs.pad[0] = 4;
    expect(&s, XPB_INVALID_ARGUMENT,
           "attribute pad (4, 1) must be smaller than the 4x5 plane of input x \"in0\" "
           "[2, 3, 4, 5]");
    valid(&s, XPB_OP_REFLECTION_PAD);
    s.op.attrs.pad[1] = -1;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute pad must be >= 0, found (1, -1)");
    valid(&s, XPB_OP_REFLECTION_PAD);
    s.out[0].dims[3] = 6;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 6, 7], found [2, 3, 6, 6]");
    valid(&s, XPB_OP_REFLECTION_PAD);
    s.in[0].ndim = s.out[0].ndim = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 4-D, found [2, 3, 4]");
    valid(&s, XPB_OP_REFLECTION_PAD_BWD);
    s.in[0].dims[2] = 7;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 3, 6, 7], found [2, 3, 7, 7]");

    valid(&s, XPB_OP_RESHAPE);
    s.out[0].dims[1] = 61;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output y \"out0\" [2, 61] must have as many elements as input x \"in0\" [2, 3, 4, 5] "
           "(120), found 122");
}

static void test_loss_errors(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_SOFTMAX_XENT);
    s.in[0].ndim = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input logits \"in0\" must be 2-D, found [2, 4, 1]");
    valid(&s, XPB_OP_SOFTMAX_XENT);
    s.in[1].dims[0] = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "input labels \"in1\" must be [2], found [3]");
    valid(&s, XPB_OP_SOFTMAX_XENT);
    s.out[0].dims[0] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "output loss \"out0\" must be [1], found [2]");
    valid(&s, XPB_OP_SOFTMAX_XENT);
    s.out[1].dims[1] = 3;
    expect(&s, XPB_INVALID_ARGUMENT, "output ws_prob \"out1\" must be [2, 4], found [2, 3]");
    valid(&s, XPB_OP_SOFTMAX_XENT_BWD);
    s.out[0].dims[0] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "output dlogits \"out0\" must be [2, 4], found [4, 4]");
    valid(&s, XPB_OP_SOFTMAX_XENT_BWD);
    s.in[1].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input labels \"in1\" must be [2], found [2, 1]");

    static const uint32_t losses[] = {XPB_OP_MSE_LOSS, XPB_OP_L1_LOSS};
    for (int k = 0; k < 2; k++) {
        valid(&s, losses[k]);
        s.in[1].dims[3] = 4;
        expect(&s, XPB_INVALID_ARGUMENT,
               "input target \"in1\" must be [2, 3, 4, 5], found [2, 3, 4, 4]");
        valid(&s, losses[k]);
        s.out[0].ndim = 2;
        expect(&s, XPB_INVALID_ARGUMENT, "output loss \"out0\" must be [1], found [1, 1]");
    }
}

static void test_dropout_and_update_errors(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_DROPOUT);
    s.op.attrs.dropout_p = 1.5f;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute dropout_p must be in [0, 1], found 1.5");
    s.op.attrs.dropout_p = -0.25f;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute dropout_p must be in [0, 1], found -0.25");
    s.op.attrs.dropout_p = NAN;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute dropout_p must be in [0, 1], found nan");
    valid(&s, XPB_OP_DROPOUT);
    s.out[1].dims[0] = 1;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output ws_mask \"out1\" must be [2, 3, 4, 5], found [1, 3, 4, 5]");
    valid(&s, XPB_OP_DROPOUT_BWD);
    s.in[1].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input ws_mask \"in1\" must be [2, 3, 4, 5], found [2, 3]");

    valid(&s, XPB_OP_SGD_UPDATE);
    s.in[2].dims[0] = 5;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input momentum_buf \"in2\" must be [4, 3, 2, 2], found [5, 3, 2, 2]");
    valid(&s, XPB_OP_SGD_UPDATE);
    s.in[1].ndim = 1;
    expect(&s, XPB_INVALID_ARGUMENT, "input grad \"in1\" must be [4, 3, 2, 2], found [4]");
    valid(&s, XPB_OP_ADAM_UPDATE);
    s.in[4].dims[0] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input step \"in4\" must be [1], found [2]");
    valid(&s, XPB_OP_ADAM_UPDATE);
    s.in[3].dims[1] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input v \"in3\" must be [4, 3, 2, 2], found [4, 2, 2, 2]");
}

/* ---- pooling ---- */

static void test_pool_errors(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_MAXPOOL);
    s.op.attrs.kernel[1] = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute kernel must be >= 1, found (2, 0)");
    valid(&s, XPB_OP_MAXPOOL);
    s.op.attrs.stride[0] = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute stride must be >= 1, found (0, 1)");
    valid(&s, XPB_OP_AVGPOOL);
    s.op.attrs.pad[0] = -1;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute pad must be >= 0, found (-1, 0)");
    valid(&s, XPB_OP_AVGPOOL);
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute pad (2, 2) must be at most half the kernel (2, 2)");
    valid(&s, XPB_OP_AVGPOOL);
    s.op.attrs.count_include_pad = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute count_include_pad must be 0 or 1, found 2");
    valid(&s, XPB_OP_MAXPOOL);
    s.op.attrs.kernel[0] = s.op.attrs.kernel[1] = 5; /* a 5x5 window on a 4x5 plane */
    expect(&s, XPB_INVALID_ARGUMENT,
           "a 5x5 window with pad (0, 0) does not fit input x \"in0\" [2, 3, 4, 5]");
    valid(&s, XPB_OP_MAXPOOL);
    s.out[0].dims[2] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 3, 4], found [2, 3, 2, 4]");
    valid(&s, XPB_OP_MAXPOOL);
    s.out[1].dims[3] = 3;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output ws_index \"out1\" must be [2, 3, 3, 4], found [2, 3, 3, 3]");
    valid(&s, XPB_OP_MAXPOOL_BWD);
    s.in[1].dims[0] = 1;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input ws_index \"in1\" must be [2, 3, 3, 4], found [1, 3, 3, 4]");
    valid(&s, XPB_OP_AVGPOOL_BWD);
    s.out[0].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "output dx \"out0\" must be 4-D, found [2, 3]");
    /* ResNet's stem pool: 3x3 stride 2 pad 1 halves 112 */
    valid(&s, XPB_OP_MAXPOOL);
    s.op.attrs.kernel[0] = s.op.attrs.kernel[1] = 3;
    s.op.attrs.stride[0] = s.op.attrs.stride[1] = 2;
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 1;
    s.in[0].dims[2] = s.in[0].dims[3] = 112;
    s.out[0].dims[2] = s.out[0].dims[3] = s.out[1].dims[2] = s.out[1].dims[3] = 56;
    expect_ok(&s);

    valid(&s, XPB_OP_GLOBAL_AVGPOOL);
    s.out[0].dims[2] = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 1, 1], found [2, 3, 2, 1]");
    valid(&s, XPB_OP_GLOBAL_AVGPOOL);
    s.in[0].ndim = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 4-D, found [2, 3]");
    valid(&s, XPB_OP_GLOBAL_AVGPOOL_BWD);
    s.in[0].dims[1] = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 3, 1, 1], found [2, 4, 1, 1]");
}

/* ---- inference for the builder ---- */

static void expect_inferred(struct sh *s, uint32_t dtype, uint32_t ndim, int64_t d0, int64_t d1,
                            int64_t d2, int64_t d3)
{
    xpb_tensor_desc y;
    xpb_status st = sh_infer(s, &y);
    if (st != XPB_OK)
        fail_msg("infer %s: %s", xpb_op_name(s->op.kind), s->msg);
    assert_int_equal(y.dtype, dtype);
    assert_int_equal(y.ndim, ndim);
    const int64_t want[4] = {d0, d1, d2, d3};
    for (int d = 0; d < 4; d++)
        assert_int_equal(y.dims[d], want[d]);
}

static void test_infer_shape(void **state)
{
    (void)state;
    struct sh s;
    /* Conv-6: 3x3 pad 1 keeps 32x32; VGG16's 2x2 pool halves it */
    sh_init(&s, XPB_OP_CONV2D);
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 1;
    sh_in(&s, F, 4, 8, 3, 32, 32), sh_in(&s, F, 4, 64, 3, 3, 3), sh_in(&s, F, 1, 64);
    expect_inferred(&s, F, 4, 8, 64, 32, 32);
    /* ResNet's stem: 7x7 stride 2 pad 3 on 224 gives 112 */
    sh_init(&s, XPB_OP_CONV2D);
    s.op.attrs.stride[0] = s.op.attrs.stride[1] = 2;
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 3;
    sh_in(&s, F, 4, 2, 3, 224, 224), sh_in(&s, F, 4, 64, 3, 7, 7);
    expect_inferred(&s, F, 4, 2, 64, 112, 112);
    sh_init(&s, XPB_OP_MAXPOOL);
    s.op.attrs.stride[0] = s.op.attrs.stride[1] = 2;
    sh_in(&s, F, 4, 8, 64, 32, 32);
    expect_inferred(&s, F, 4, 8, 64, 16, 16);
    sh_init(&s, XPB_OP_GLOBAL_AVGPOOL);
    sh_in(&s, F, 4, 2, 512, 7, 7);
    expect_inferred(&s, F, 4, 2, 512, 1, 1);
    sh_init(&s, XPB_OP_LINEAR);
    sh_in(&s, F, 2, 8, 4096), sh_in(&s, F, 2, 10, 4096);
    expect_inferred(&s, F, 2, 8, 10, 1, 1);
    sh_init(&s, XPB_OP_REFLECTION_PAD);
    s.op.attrs.pad[0] = s.op.attrs.pad[1] = 3;
    sh_in(&s, F, 4, 1, 3, 128, 128);
    expect_inferred(&s, F, 4, 1, 3, 134, 134);
    sh_init(&s, XPB_OP_SOFTMAX_XENT);
    sh_in(&s, F, 2, 8, 10), sh_in(&s, I, 1, 8);
    expect_inferred(&s, F, 1, 1, 1, 1, 1);
    sh_init(&s, XPB_OP_COPY); /* COPY keeps its input's dtype */
    sh_in(&s, I, 1, 8);
    expect_inferred(&s, I, 1, 8, 1, 1, 1);

    /* the rules refuse while inferring, with the same messages */
    xpb_tensor_desc y;
    sh_init(&s, XPB_OP_CONV2D);
    sh_in(&s, F, 4, 1, 3, 8, 8), sh_in(&s, F, 4, 8, 4, 3, 3), sh_in(&s, F, 1, 8);
    assert_int_equal(sh_infer(&s, &y), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "CONV2D (layer 'L'): input w \"in1\" [8, 4, 3, 3] expects 4 input "
                               "channels (dim 1), input x \"in0\" [1, 3, 8, 8] has 3");
    sh_init(&s, XPB_OP_ADD);
    sh_in(&s, F, 2, 2, 3), sh_in(&s, F, 2, 2, 4);
    assert_int_equal(sh_infer(&s, &y), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "ADD (layer 'L'): input b \"in1\" must be [2, 3], found [2, 4]");
    sh_init(&s, XPB_OP_RELU);
    sh_in(&s, I, 1, 2);
    assert_int_equal(sh_infer(&s, &y), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "RELU (layer 'L'): input x \"in0\" must be F32, found I32");
    sh_init(&s, XPB_OP_BATCHNORM_TRAIN);
    sh_in(&s, F, 4, 2, 3, 4, 5);
    assert_int_equal(sh_infer(&s, &y), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "BATCHNORM_TRAIN (layer 'L'): expected 5 inputs, found 1");
    sh_init(&s, XPB_OP_LINEAR);
    sh_in(&s, F, 2, 2, 3), sh_in(&s, F, 2, 4, 3);
    s.in_absent = 2;
    assert_int_equal(sh_infer(&s, &y), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "LINEAR (layer 'L'): input 1 (w) is missing");
    sh_init(&s, XPB_OP_RELU);
    s.op.n_inputs = XPB_SHP_MAX_IN + 1;
    assert_int_equal(sh_infer(&s, &y), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "RELU (layer 'L'): n_inputs 513, at most 512");
    sh_init(&s, 99);
    s.op.layer = NULL;
    assert_int_equal(sh_infer(&s, &y), XPB_UNSUPPORTED);
    assert_string_equal(s.msg, "UNKNOWN (layer ''): not implemented: kind 99 is not an op of op "
                               "set 3, the newest this code was built for");
}

/* ---- op kinds and attribute bits of later op sets ---- */

static void test_unknown_kind(void **state)
{
    (void)state;
    struct sh s;
    valid(&s, XPB_OP_RELU);
    s.op.kind = 77;
    s.op.layer = "mystery";
    assert_int_equal(sh_check(&s), XPB_UNSUPPORTED);
    assert_string_equal(s.msg, "UNKNOWN (layer 'mystery'): not implemented: kind 77 is not an op "
                               "of op set 3, the newest this code was built for");
    s.op.kind = 0;
    assert_int_equal(sh_check(&s), XPB_UNSUPPORTED);
    s.op.kind = XPB_OP_KIND_END_;
    assert_int_equal(sh_check(&s), XPB_UNSUPPORTED);
}

/* A small program: x -> RELU -> y -> COPY -> z, one phase, sealed like the host's. */
struct prog {
    xpb_tensor_desc t[3];
    xpb_op ops[2];
    xpb_phase phase;
    xpb_program p;
    char msg[1024];
};

static void prog_init(struct prog *g)
{
    memset(g, 0, sizeof *g);
    static const char *const names[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++) {
        g->t[i].name = names[i];
        g->t[i].layer = "";
        g->t[i].dtype = XPB_DTYPE_F32;
        g->t[i].role = i == 0 ? XPB_ROLE_INPUT : XPB_ROLE_ACTIVATION;
        g->t[i].ndim = 2;
        g->t[i].dims[0] = 2;
        g->t[i].dims[1] = 3;
        g->t[i].dims[2] = g->t[i].dims[3] = 1;
        g->t[i].grad_of = XPB_NO_TENSOR;
        g->t[i].last_op = 1;
    }
    static const uint32_t kinds[2] = {XPB_OP_RELU, XPB_OP_COPY};
    static const char *const layers[2] = {"relu", "copy"};
    for (uint32_t i = 0; i < 2; i++) {
        xpb_op *op = &g->ops[i];
        op->kind = kinds[i];
        op->layer = layers[i];
        op->n_inputs = op->n_outputs = 1;
        for (int k = 0; k < XPB_MAX_OP_INPUTS; k++)
            op->inputs[k] = XPB_NO_TENSOR;
        for (int k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
            op->outputs[k] = XPB_NO_TENSOR;
        op->inputs[0] = i;
        op->outputs[0] = i + 1;
    }
    g->phase.name = "fwd";
    g->phase.n_ops = 2;
    g->p.n_tensors = 3;
    g->p.n_ops = 2;
    g->p.n_phases = 1;
    g->p.tensors = g->t;
    g->p.ops = g->ops;
    g->p.phases = &g->phase;
    xpb_program_seal(&g->p, g->ops);
}

static void expect_program(struct prog *g, xpb_status want, const char *message)
{
    xpb_status st = xpb_program_validate(&g->p, g->msg, sizeof g->msg);
    if (st != want || strcmp(g->msg, message) != 0)
        fail_msg("got %s \"%s\"\n wanted %s \"%s\"", xpb_status_name(st), g->msg,
                 xpb_status_name(want), message);
}

static void test_op_validate(void **state)
{
    (void)state;
    struct prog g;
    prog_init(&g);
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_OK);
    assert_string_equal(g.msg, "");
    assert_int_equal(xpb_op_validate(&g.p, 2, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "program: op 2 does not exist (the program has 2 ops)");

    /* an op of a later op set, as a newer host describes it: refused by its name */
    g.ops[1].kind = 99;
    g.ops[1].kind_name = "FUTURE_OP";
    g.ops[1].opset = 3;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_UNSUPPORTED);
    assert_string_equal(g.msg, "op 1 FUTURE_OP (layer 'copy'): not implemented: kind 99 is not "
                               "an op of op set 3, the newest this code was built for");
    /* an ABI 1.0 host wrote no kind_name: the number is all there is */
    g.p.op_stride = offsetof(xpb_op, opset);
    xpb_op old_ops[2];
    memcpy(old_ops, g.ops, sizeof old_ops);
    /* (op_stride 1.0 on an array of 1.1 ops would misread them: use a packed copy) */
    _Alignas(xpb_op) unsigned char packed[2 * offsetof(xpb_op, opset)];
    for (int i = 0; i < 2; i++)
        memcpy(packed + i * offsetof(xpb_op, opset), &old_ops[i], offsetof(xpb_op, opset));
    g.p.ops = (const xpb_op *)(const void *)packed;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_UNSUPPORTED);
    assert_string_equal(g.msg, "op 1 UNKNOWN (layer 'copy'): not implemented: kind 99 is not an "
                               "op of op set 3, the newest this code was built for");
    assert_int_equal(xpb_op_validate(&g.p, 0, g.msg, sizeof g.msg), XPB_OK);

    /* an attribute bit these headers do not know, one and two of them */
    prog_init(&g);
    g.ops[0].attrs_set |= 1ull << 40;
    assert_int_equal(xpb_op_validate(&g.p, 0, g.msg, sizeof g.msg), XPB_UNSUPPORTED);
    assert_string_equal(g.msg, "op 0 RELU (layer 'relu'): not implemented: it sets attribute bit "
                               "40, which op set 3 does not define (an attribute of a later op "
                               "set changes what the op computes)");
    g.ops[0].attrs_set |= 1ull << 63;
    assert_int_equal(xpb_op_validate(&g.p, 0, g.msg, sizeof g.msg), XPB_UNSUPPORTED);
    assert_non_null(strstr(g.msg, "sets attribute bits 40, 63, which op set 3"));
    /* known bits are fine whatever they say */
    prog_init(&g);
    g.ops[0].attrs_set = XPB_ATTRS_KNOWN;
    assert_int_equal(xpb_op_validate(&g.p, 0, g.msg, sizeof g.msg), XPB_OK);

    /* tensor ids */
    prog_init(&g);
    g.ops[1].inputs[0] = 7;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "op 1 COPY (layer 'copy'): input 0 is tensor 7, the program has 3 "
                               "tensors");
    prog_init(&g);
    g.ops[1].outputs[0] = 3;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "op 1 COPY (layer 'copy'): output 0 is tensor 3, the program has 3 "
                               "tensors");
    prog_init(&g);
    g.ops[1].inputs[0] = XPB_NO_TENSOR;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "op 1 COPY (layer 'copy'): input 0 (x) is missing");
    prog_init(&g);
    g.ops[1].outputs[0] = 1;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "op 1 COPY (layer 'copy'): tensor 1 \"y\" is both input 0 and "
                               "output 0 (an op never writes what it reads, docs/ops.md)");
    prog_init(&g);
    g.ops[0].n_outputs = 5;
    assert_int_equal(xpb_op_validate(&g.p, 0, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "op 0 RELU (layer 'relu'): n_outputs 5, but no outputs_all and "
                               "only 4 inline outputs");
    /* then the rules, with the op's number in front */
    prog_init(&g);
    g.t[2].dims[1] = 4;
    assert_int_equal(xpb_op_validate(&g.p, 1, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "op 1 COPY (layer 'copy'): output y \"z\" must be [2, 3], found "
                               "[2, 4]");
    /* no room for a message: only the status */
    assert_int_equal(xpb_op_validate(&g.p, 1, NULL, 0), XPB_INVALID_ARGUMENT);
}

static void test_program_validate(void **state)
{
    (void)state;
    struct prog g;
    prog_init(&g);
    expect_program(&g, XPB_OK, "");
    assert_int_equal(xpb_program_validate(NULL, g.msg, sizeof g.msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(g.msg, "program: NULL");

    /* what an ABI 1.0 host writes: no phase_stride, no 1.1 op members */
    g.p.struct_size = offsetof(xpb_program, phase_stride);
    expect_program(&g, XPB_OK, "");
    g.p.struct_size = offsetof(xpb_program, phases);
    char want[256];
    snprintf(want, sizeof want, "program: struct_size %zu is smaller than ABI 1.0's %zu",
             offsetof(xpb_program, phases), offsetof(xpb_program, phase_stride));
    expect_program(&g, XPB_INVALID_ARGUMENT, want);
    prog_init(&g);
    g.p.op_stride = offsetof(xpb_op, opset) - 8;
    snprintf(want, sizeof want,
             "program: tensor_stride %zu / op_stride %zu smaller than ABI 1.0's %zu / %zu",
             sizeof(xpb_tensor_desc), offsetof(xpb_op, opset) - 8, sizeof(xpb_tensor_desc),
             offsetof(xpb_op, opset));
    expect_program(&g, XPB_INVALID_ARGUMENT, want);
    prog_init(&g);
    g.p.phases = NULL;
    expect_program(&g, XPB_INVALID_ARGUMENT,
                   "program: 3 tensors, 2 ops and 1 phases, but a NULL array");

    /* tensors */
    prog_init(&g);
    g.t[1].dtype = 5;
    expect_program(&g, XPB_UNSUPPORTED, "tensor 1 'y': unknown dtype 5 (F32 and I32 are known)");
    prog_init(&g);
    g.t[2].ndim = 5;
    expect_program(&g, XPB_INVALID_ARGUMENT, "tensor 2 'z': ndim 5 outside 1..4");
    prog_init(&g);
    g.t[0].dims[1] = 0;
    expect_program(&g, XPB_INVALID_ARGUMENT,
                   "tensor 0 'x': dims [2, 0]: dim 1 must be >= 1, and the tensor below 2^40 "
                   "elements");
    prog_init(&g);
    g.t[0].ndim = 4;
    g.t[0].dims[0] = g.t[0].dims[1] = 1 << 14;
    g.t[0].dims[2] = 1 << 12;
    g.t[0].dims[3] = 2; /* 2^41 elements */
    expect_program(&g, XPB_INVALID_ARGUMENT,
                   "tensor 0 'x': dims [16384, 16384, 4096, 2]: dim 3 must be >= 1, and the "
                   "tensor below 2^40 elements");

    /* phases, walked by their stride */
    prog_init(&g);
    g.phase.n_ops = 3;
    expect_program(&g, XPB_INVALID_ARGUMENT,
                   "phase 0 'fwd': first op 0 and 3 ops go beyond the program's 2 ops");
    prog_init(&g);
    g.phase.first_op = 3;
    g.phase.n_ops = 0;
    expect_program(&g, XPB_INVALID_ARGUMENT,
                   "phase 0 'fwd': first op 3 and 0 ops go beyond the program's 2 ops");
    struct {
        xpb_phase phase;
        uint64_t appended; /* a member a later minor version might add */
    } wide[2] = {{{"a", 0, 1}, ~0ull}, {{"b", 1, 2}, ~0ull}};
    prog_init(&g);
    g.p.phases = &wide[0].phase;
    g.p.n_phases = 2;
    g.p.phase_stride = sizeof wide[0];
    expect_program(&g, XPB_INVALID_ARGUMENT,
                   "phase 1 'b': first op 1 and 2 ops go beyond the program's 2 ops");
    wide[1].phase.n_ops = 1;
    expect_program(&g, XPB_OK, "");

    /* then every op, after the header, tensors and phases */
    prog_init(&g);
    g.ops[1].n_inputs = 2;
    g.ops[1].inputs[1] = 0;
    expect_program(&g, XPB_INVALID_ARGUMENT, "op 1 COPY (layer 'copy'): expected 1 input, found 2");
}

/* ---- ALL_REDUCE and its buckets (op set 2) ---- */

/* A data-parallel tail: gradients g0, g1, g2 (tensors 0..2) averaged by ALL_REDUCE ops 0..2,
 * then COPY 3 (g2 -> tensor 3), in phases [0, 3) and [3, 4) unless `one_phase`. */
struct grads {
    xpb_tensor_desc t[4];
    xpb_op ops[4];
    xpb_phase phases[2];
    xpb_program p;
    char msg[1024];
};

static void grads_init(struct grads *g, uint32_t b0, uint32_t b1, uint32_t b2, int one_phase)
{
    memset(g, 0, sizeof *g);
    static const char *const names[4] = {"g0", "g1", "g2", "out"};
    const uint32_t buckets[3] = {b0, b1, b2};
    for (int i = 0; i < 4; i++) {
        g->t[i] = (xpb_tensor_desc){.name = names[i],
                                    .layer = "",
                                    .dtype = XPB_DTYPE_F32,
                                    .role = i < 3 ? XPB_ROLE_GRAD : XPB_ROLE_OUTPUT,
                                    .ndim = 1,
                                    .dims = {5, 1, 1, 1},
                                    .grad_of = XPB_NO_TENSOR,
                                    .last_op = 3};
        xpb_op *op = &g->ops[i];
        op->kind = i < 3 ? XPB_OP_ALL_REDUCE : XPB_OP_COPY;
        op->layer = names[i];
        op->n_inputs = 1;
        op->n_outputs = i < 3 ? 0 : 1;
        for (int k = 0; k < XPB_MAX_OP_INPUTS; k++)
            op->inputs[k] = XPB_NO_TENSOR;
        for (int k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
            op->outputs[k] = XPB_NO_TENSOR;
        op->inputs[0] = i < 3 ? (uint32_t)i : 2;
        if (i == 3)
            op->outputs[0] = 3;
        else
            op->bucket = buckets[i];
    }
    g->phases[0] = (xpb_phase){"train", 0, one_phase ? 4 : 3};
    g->phases[1] = (xpb_phase){"tail", 3, 1};
    g->p.n_tensors = 4;
    g->p.n_ops = 4;
    g->p.n_phases = one_phase ? 1 : 2;
    g->p.tensors = g->t;
    g->p.ops = g->ops;
    g->p.phases = g->phases;
    xpb_program_seal(&g->p, g->ops);
}

static void expect_grads(struct grads *g, xpb_status want, const char *message)
{
    xpb_status st = xpb_program_validate(&g->p, g->msg, sizeof g->msg);
    if (st != want || strcmp(g->msg, message) != 0)
        fail_msg("got %s \"%s\"\n wanted %s \"%s\"", xpb_status_name(st), g->msg,
                 xpb_status_name(want), message);
}

static void test_all_reduce(void **state)
{
    (void)state;
    struct grads g;
    /* sealed: op set 2 for the op and for its bucket attribute (bit 17) */
    grads_init(&g, 1, 1, 2, 1);
    assert_int_equal(g.p.opset, 2);
    assert_int_equal(g.ops[0].opset, 2);
    assert_true(g.ops[0].attrs_set & XPB_ATTR(BUCKET));
    assert_int_equal(xpb_attr_opset(XPB_ATTR(BUCKET)), 2);
    assert_int_equal(xpb_op_opset(XPB_OP_ALL_REDUCE), 2);
    assert_string_equal(g.ops[0].kind_name, "ALL_REDUCE");
    expect_grads(&g, XPB_OK, "");
    grads_init(&g, 0, 0, 0, 1); /* every op a bucket of its own */
    assert_false(g.ops[0].attrs_set & XPB_ATTR(BUCKET));
    expect_grads(&g, XPB_OK, "");

    /* one F32 input, updated in place, no output */
    struct sh s;
    valid(&s, XPB_OP_ALL_REDUCE);
    sh_out(&s, F, 1, 5);
    assert_int_equal(sh_check(&s), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "ALL_REDUCE (layer 'L'): expected 0 outputs, found 1");
    valid(&s, XPB_OP_ALL_REDUCE);
    s.in[0].dtype = XPB_DTYPE_I32;
    assert_int_equal(sh_check(&s), XPB_INVALID_ARGUMENT);
    assert_string_equal(s.msg, "ALL_REDUCE (layer 'L'): input x \"in0\" must be F32, found I32");

    /* a bucket's ops are consecutive and in one phase */
    grads_init(&g, 1, 2, 1, 1);
    expect_grads(&g, XPB_INVALID_ARGUMENT,
                 "op 2 ALL_REDUCE (layer 'g2'): bucket 1 was already used by op 0: the ops of a "
                 "bucket must be consecutive and in one phase");
    grads_init(&g, 1, 1, 2, 0);
    g.phases[0].n_ops = 1; /* ops 0 and 1 of bucket 1 in two phases */
    g.phases[1] = (xpb_phase){"rest", 1, 3};
    expect_grads(&g, XPB_INVALID_ARGUMENT,
                 "op 1 ALL_REDUCE (layer 'g1'): bucket 1 was already used by op 0: the ops of a "
                 "bucket must be consecutive and in one phase");
    /* the attribute belongs to ALL_REDUCE only */
    grads_init(&g, 1, 1, 1, 1);
    g.ops[3].bucket = 1;
    expect_grads(&g, XPB_INVALID_ARGUMENT,
                 "op 3 COPY (layer 'out'): attribute bucket (1) belongs to ALL_REDUCE only, "
                 "expected 0");
    /* a host older than 1.2 wrote no bucket: nothing to check */
    grads_init(&g, 1, 2, 1, 1);
    g.p.op_stride = offsetof(xpb_op, bucket);
    _Alignas(xpb_op) unsigned char packed[4 * offsetof(xpb_op, bucket)];
    for (int i = 0; i < 4; i++)
        memcpy(packed + i * offsetof(xpb_op, bucket), &g.ops[i], offsetof(xpb_op, bucket));
    g.p.ops = (const xpb_op *)(const void *)packed;
    expect_grads(&g, XPB_OK, "");
}

/* ---- the shape printer ---- */

static void test_shape_str(void **state)
{
    (void)state;
    char buf[32];
    const int64_t dims[4] = {64, 3, 224, 224};
    assert_string_equal(xpb_shape_str(buf, sizeof buf, 4, dims), "[64, 3, 224, 224]");
    assert_string_equal(xpb_shape_str(buf, sizeof buf, 1, dims), "[64]");
    assert_string_equal(xpb_shape_str(buf, sizeof buf, 0, dims), "[]");
    assert_string_equal(xpb_shape_str(buf, sizeof buf, 9, dims), "[64, 3, 224, 224]");
    assert_string_equal(xpb_shape_str(buf, 8, 4, dims), "[64, 3,");
    assert_ptr_equal(xpb_shape_str(buf, 0, 4, dims), buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_accepts_its_valid_instance),
        cmocka_unit_test(test_optional_tensors),
        cmocka_unit_test(test_counts_and_presence),
        cmocka_unit_test(test_tensor_validity),
        cmocka_unit_test(test_conv_errors),
        cmocka_unit_test(test_linear_errors),
        cmocka_unit_test(test_norm_errors),
        cmocka_unit_test(test_elementwise_errors),
        cmocka_unit_test(test_loss_errors),
        cmocka_unit_test(test_dropout_and_update_errors),
        cmocka_unit_test(test_pool_errors),
        cmocka_unit_test(test_infer_shape),
        cmocka_unit_test(test_unknown_kind),
        cmocka_unit_test(test_op_validate),
        cmocka_unit_test(test_program_validate),
        cmocka_unit_test(test_all_reduce),
        cmocka_unit_test(test_shape_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
