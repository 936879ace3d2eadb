/* The SDK's shape rules of op set 3 (include/xpubench/shapes_rules3.h): every way an op of op
 * set 3 can be malformed (attributes out of range, ranks, dtypes, batch dims that do not
 * broadcast, operands that do not match, missing and absent operands) is refused with the
 * exact message that names the op, its layer, the tensor, what was expected and what was
 * found; the optional operands and broadcasts that are allowed are accepted; an op of op set 3
 * from a host whose ops lack the op-set-3 members is refused. The valid instances (valid3) are
 * checked for every op by tests/test_shapes.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shapes_harness.h"

/* A valid instance of `kind` into s (asserting that there is one). */
static void v3(struct sh *s, uint32_t kind)
{
    assert_true(valid3(s, kind));
    expect_ok(s);
}

/* One dim of a descriptor changed (as sh_in would have set it). */
static void set_dims(xpb_tensor_desc *d, uint32_t ndim, int64_t d0, int64_t d1, int64_t d2,
                     int64_t d3)
{
    const int64_t v[4] = {d0, d1, d2, d3};
    d->ndim = ndim;
    for (uint32_t k = 0; k < 4; k++)
        d->dims[k] = k < ndim ? v[k] : 1;
}

static void test_matmul_rules(void **state)
{
    (void)state;
    struct sh s;
    v3(&s, XPB_OP_MATMUL);
    s.op.transpose = 4;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute transpose must be 0 to 3, found 4");
    v3(&s, XPB_OP_MATMUL);
    set_dims(&s.in[0], 3, 2, 3, 4, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input a \"in0\" must be 2-D, found [2, 3, 4]");
    v3(&s, XPB_OP_MATMUL);
    set_dims(&s.in[1], 2, 4, 4, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT,
           "input a \"in0\" has 3 columns (after transpose 0), input b \"in1\" has 4 rows");
    v3(&s, XPB_OP_MATMUL);
    s.op.transpose = XPB_TRANSPOSE_A; /* a [2, 3] is op(a)^T: 2 columns against b's 3 rows */
    expect(&s, XPB_INVALID_ARGUMENT,
           "input a \"in0\" has 2 columns (after transpose 1), input b \"in1\" has 3 rows");
    set_dims(&s.in[0], 2, 3, 2, 1, 1), set_dims(&s.out[0], 2, 2, 4, 1, 1);
    expect_ok(&s);
    v3(&s, XPB_OP_MATMUL);
    s.op.transpose = XPB_TRANSPOSE_B; /* b [4, 3] holds op(b)^T */
    set_dims(&s.in[1], 2, 4, 3, 1, 1);
    expect_ok(&s);
    v3(&s, XPB_OP_MATMUL);
    set_dims(&s.in[2], 1, 3, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input bias \"in2\" must be [4], found [3]");
    v3(&s, XPB_OP_MATMUL);
    set_dims(&s.out[0], 2, 2, 5, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 4], found [2, 5]");
    v3(&s, XPB_OP_MATMUL);
    s.op.n_inputs = 2; /* no bias */
    expect_ok(&s);

    v3(&s, XPB_OP_MATMUL_BWD);
    set_dims(&s.in[0], 2, 2, 5, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 4], found [2, 5]");
    v3(&s, XPB_OP_MATMUL_BWD);
    set_dims(&s.out[0], 2, 3, 2, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output da \"out0\" must be [2, 3], found [3, 2]");
    v3(&s, XPB_OP_MATMUL_BWD);
    set_dims(&s.out[1], 2, 4, 3, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output db \"out1\" must be [3, 4], found [4, 3]");
    v3(&s, XPB_OP_MATMUL_BWD);
    set_dims(&s.out[2], 1, 3, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output dbias \"out2\" must be [4], found [3]");
    v3(&s, XPB_OP_MATMUL_BWD);
    s.out_absent = 1u | 4u; /* da and dbias not wanted */
    expect_ok(&s);
    s.op.n_outputs = 1;
    s.out_absent = 0;
    expect_ok(&s);
}

static void test_batched_matmul_rules(void **state)
{
    (void)state;
    struct sh s;
    v3(&s, XPB_OP_BATCHED_MATMUL);
    set_dims(&s.in[1], 2, 5, 2, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input b \"in1\" must be 3-D to 4-D, found [5, 2]");
    v3(&s, XPB_OP_BATCHED_MATMUL);
    set_dims(&s.in[1], 4, 3, 3, 5, 2);
    expect(&s, XPB_INVALID_ARGUMENT,
           "input a \"in0\" [2, 3, 4, 5] and input b \"in1\" [3, 3, 5, 2] do not broadcast (dim "
           "0: 2 against 3)");
    v3(&s, XPB_OP_BATCHED_MATMUL);
    set_dims(&s.in[1], 3, 4, 5, 2, 1);
    expect(&s, XPB_INVALID_ARGUMENT,
           "input a \"in0\" [2, 3, 4, 5] and input b \"in1\" [4, 5, 2] do not broadcast (dim 1: "
           "3 against 4)");
    v3(&s, XPB_OP_BATCHED_MATMUL);
    set_dims(&s.in[1], 4, 2, 1, 5, 2); /* dims of 1 broadcast */
    expect_ok(&s);
    set_dims(&s.in[0], 3, 1, 4, 5, 1); /* a 3-D against b 4-D: y [2, 1, 4, 2] */
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 1, 4, 2], found [2, 3, 4, 2]");
    set_dims(&s.out[0], 4, 2, 1, 4, 2);
    expect_ok(&s);
    v3(&s, XPB_OP_BATCHED_MATMUL);
    s.op.transpose = XPB_TRANSPOSE_A | XPB_TRANSPOSE_B;
    expect(&s, XPB_INVALID_ARGUMENT,
           "input a \"in0\" has 4 columns (after transpose 3), input b \"in1\" has 2 rows");

    v3(&s, XPB_OP_BATCHED_MATMUL_BWD);
    set_dims(&s.in[0], 4, 2, 3, 4, 3);
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 3, 4, 2], found [2, 3, 4, 3]");
    v3(&s, XPB_OP_BATCHED_MATMUL_BWD);
    set_dims(&s.out[1], 4, 1, 3, 5, 2); /* the gradient has b's shape, not y's batch dims */
    expect(&s, XPB_INVALID_ARGUMENT, "output db \"out1\" must be [3, 5, 2], found [1, 3, 5, 2]");
    v3(&s, XPB_OP_BATCHED_MATMUL_BWD);
    s.out_absent = 1; /* da not wanted */
    expect_ok(&s);
}

/* Ops of op set 3 read members that a host of ABI 1.2 did not write: such a program is refused
 * (xpb_op_validate, from the program's op_stride). */
static void test_op_set_3_needs_the_members(void **state)
{
    (void)state;
    struct sh s;
    v3(&s, XPB_OP_MATMUL);
    xpb_tensor_desc t[4];
    for (int i = 0; i < 3; i++)
        t[i] = s.in[i];
    t[3] = s.out[0];
    for (uint32_t k = 0; k < 3; k++)
        s.op.inputs[k] = k;
    s.op.outputs[0] = 3;
    xpb_phase ph = {"p", 0, 1};
    xpb_program p = {.struct_size = sizeof p,
                     .opset = 3,
                     .n_tensors = 4,
                     .n_ops = 1,
                     .n_phases = 1,
                     .tensor_stride = sizeof(xpb_tensor_desc),
                     .op_stride = sizeof(xpb_op),
                     .tensors = t,
                     .ops = &s.op,
                     .phases = &ph,
                     .phase_stride = sizeof ph};
    char msg[512];
    assert_int_equal(xpb_op_validate(&p, 0, msg, sizeof msg), XPB_OK);
    p.op_stride = offsetof(xpb_op, inputs_all); /* an ABI 1.2 host's op */
    assert_int_equal(xpb_op_validate(&p, 0, msg, sizeof msg), XPB_INVALID_ARGUMENT);
    assert_string_equal(msg, "op 0 MATMUL (layer 'L'): an op of op set 3 in a program whose ops "
                             "lack the op-set-3 attribute members (op_stride too short)");
}

static void test_permute_and_broadcast_rules(void **state)
{
    (void)state;
    struct sh s;
    v3(&s, XPB_OP_PERMUTE);
    s.op.perm[1] = 0;
    expect(&s, XPB_INVALID_ARGUMENT,
           "attribute perm (0, 0, 1, 3) is not a permutation of the 4 dims of the input");
    sh_init(&s, XPB_OP_PERMUTE);
    s.op.perm[0] = 0, s.op.perm[1] = 3, s.op.perm[2] = 1;
    sh_in(&s, F, 3, 2, 3, 4), sh_out(&s, F, 3, 2, 3, 4);
    expect(&s, XPB_INVALID_ARGUMENT,
           "attribute perm (0, 3, 1, 0) is not a permutation of the 3 dims of the input");
    v3(&s, XPB_OP_PERMUTE);
    set_dims(&s.out[0], 4, 2, 3, 4, 5);
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 4, 3, 5], found [2, 3, 4, 5]");
    v3(&s, XPB_OP_PERMUTE);
    s.out[0].dtype = I;
    expect(&s, XPB_INVALID_ARGUMENT,
           "output y \"out0\" must have the dtype of input x \"in0\" (F32), found I32");
    s.in[0].dtype = I; /* token ids may be permuted */
    expect_ok(&s);

    static const uint32_t binary[2] = {XPB_OP_ADD_BROADCAST, XPB_OP_MUL};
    for (int k = 0; k < 2; k++) {
        v3(&s, binary[k]);
        set_dims(&s.in[1], 2, 4, 3, 1, 1);
        expect(&s, XPB_INVALID_ARGUMENT,
               "input a \"in0\" [2, 3, 4, 5] and input b \"in1\" [4, 3] do not broadcast (dim 3: "
               "5 against 3)");
        v3(&s, binary[k]);
        set_dims(&s.out[0], 4, 2, 3, 4, 1);
        expect(&s, XPB_INVALID_ARGUMENT,
               "output y \"out0\" must be [2, 3, 4, 5], found [2, 3, 4, 1]");
        sh_init(&s, binary[k]); /* the smaller operand first, broadcast both ways */
        sh_in(&s, F, 3, 3, 1, 5), sh_in(&s, F, 4, 2, 1, 4, 1), sh_out(&s, F, 4, 2, 3, 4, 5);
        expect_ok(&s);
        s.in[1].dtype = I;
        expect(&s, XPB_INVALID_ARGUMENT, "input b \"in1\" must be F32, found I32");
    }

    v3(&s, XPB_OP_SUM_TO);
    set_dims(&s.out[0], 3, 3, 2, 5, 1);
    expect(&s, XPB_INVALID_ARGUMENT,
           "output y \"out0\" [3, 2, 5] does not broadcast to input x \"in0\" [2, 3, 4, 5]");
    sh_init(&s, XPB_OP_SUM_TO);
    sh_in(&s, F, 2, 4, 5), sh_out(&s, F, 3, 1, 4, 5);
    expect(&s, XPB_INVALID_ARGUMENT,
           "output y \"out0\" [1, 4, 5] does not broadcast to input x \"in0\" [4, 5]");
    sh_init(&s, XPB_OP_SUM_TO);
    sh_in(&s, F, 2, 4, 5), sh_out(&s, F, 1, 1);
    expect_ok(&s);

    v3(&s, XPB_OP_SCALE);
    set_dims(&s.out[0], 2, 2, 60, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 4, 5], found [2, 60]");
}

static void test_softmax_rules(void **state)
{
    (void)state;
    struct sh s;
    static const float bad_scale[3] = {0.0f, -1.0f, INFINITY};
    static const char *const found[3] = {"0", "-1", "inf"};
    for (int k = 0; k < 3; k++) {
        v3(&s, k == 1 ? XPB_OP_SOFTMAX_BWD : XPB_OP_SOFTMAX);
        s.op.attrs.scale = bad_scale[k];
        char want[96];
        snprintf(want, sizeof want, "attribute scale must be > 0, found %s", found[k]);
        expect(&s, XPB_INVALID_ARGUMENT, want);
    }
    v3(&s, XPB_OP_SOFTMAX);
    s.op.causal = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute causal must be 0 or 1, found 2");
    sh_init(&s, XPB_OP_SOFTMAX);
    s.op.causal = 1;
    sh_in(&s, F, 1, 7), sh_out(&s, F, 1, 7);
    expect(&s, XPB_INVALID_ARGUMENT,
           "a mask or causal needs at least 2 dims ([.., Sq, Sk]), found 1");
    s.op.causal = 0;
    expect_ok(&s);
    v3(&s, XPB_OP_SOFTMAX);
    set_dims(&s.in[1], 2, 4, 5, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input mask \"in1\" must be [4, 4], found [4, 5]");
    v3(&s, XPB_OP_SOFTMAX);
    set_dims(&s.in[1], 4, 1, 1, 4, 4); /* the mask is [Sq, Sk], not broadcastable any way */
    expect(&s, XPB_INVALID_ARGUMENT, "input mask \"in1\" must be [4, 4], found [1, 1, 4, 4]");
    v3(&s, XPB_OP_SOFTMAX);
    s.in[1].dtype = I;
    expect(&s, XPB_INVALID_ARGUMENT, "input mask \"in1\" must be F32, found I32");
    v3(&s, XPB_OP_SOFTMAX);
    s.op.n_inputs = 1; /* causal alone */
    expect_ok(&s);
    set_dims(&s.out[0], 4, 2, 3, 4, 5);
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [2, 3, 4, 4], found [2, 3, 4, 5]");
    v3(&s, XPB_OP_SOFTMAX_BWD);
    set_dims(&s.in[1], 4, 2, 3, 4, 4);
    expect(&s, XPB_INVALID_ARGUMENT, "input y \"in1\" must be [2, 3, 4, 5], found [2, 3, 4, 4]");
}

static void test_layer_norm_and_gelu_rules(void **state)
{
    (void)state;
    struct sh s;
    v3(&s, XPB_OP_LAYER_NORM);
    s.op.attrs.eps = -1.0f;
    expect(&s, XPB_INVALID_ARGUMENT, "attribute eps must be >= 0, found -1");
    v3(&s, XPB_OP_LAYER_NORM);
    set_dims(&s.in[1], 1, 5, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input gamma \"in1\" must be [4], found [5]");
    v3(&s, XPB_OP_LAYER_NORM);
    set_dims(&s.in[2], 2, 1, 4, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input beta \"in2\" must be [4], found [1, 4]");
    v3(&s, XPB_OP_LAYER_NORM);
    set_dims(&s.out[1], 2, 2, 4, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output ws_mean \"out1\" must be [2, 3], found [2, 4]");
    v3(&s, XPB_OP_LAYER_NORM);
    s.out_absent = 6; /* no workspace */
    expect_ok(&s);
    sh_init(&s, XPB_OP_LAYER_NORM); /* 1-D: the statistics are [1] */
    sh_in(&s, F, 1, 4), sh_in(&s, F, 1, 4), sh_in(&s, F, 1, 4);
    sh_out(&s, F, 1, 4), sh_out(&s, F, 1, 1), sh_out(&s, F, 1, 4);
    expect(&s, XPB_INVALID_ARGUMENT, "output ws_rstd \"out2\" must be [1], found [4]");
    v3(&s, XPB_OP_LAYER_NORM_BWD);
    set_dims(&s.in[0], 3, 2, 3, 5, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [2, 3, 4], found [2, 3, 5]");
    v3(&s, XPB_OP_LAYER_NORM_BWD);
    set_dims(&s.in[4], 2, 3, 2, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input ws_rstd \"in4\" must be [2, 3], found [3, 2]");
    v3(&s, XPB_OP_LAYER_NORM_BWD);
    set_dims(&s.out[1], 1, 3, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output dgamma \"out1\" must be [4], found [3]");
    v3(&s, XPB_OP_LAYER_NORM_BWD);
    s.out_absent = 6; /* dx alone */
    expect_ok(&s);

    for (uint32_t kind = XPB_OP_GELU; kind <= XPB_OP_GELU_BWD; kind++) {
        v3(&s, kind);
        s.op.approximate = 2;
        expect(&s, XPB_INVALID_ARGUMENT,
               "attribute approximate must be 0 (none) or 1 (tanh), found 2");
        s.op.approximate = XPB_GELU_TANH;
        expect_ok(&s);
        set_dims(&s.out[0], 3, 2, 3, 20, 1);
        expect(&s, XPB_INVALID_ARGUMENT,
               kind == XPB_OP_GELU ? "output y \"out0\" must be [2, 3, 4, 5], found [2, 3, 20]"
                                   : "output dx \"out0\" must be [2, 3, 4, 5], found [2, 3, 20]");
    }
}

static void test_embedding_rules(void **state)
{
    (void)state;
    struct sh s;
    for (uint32_t kind = XPB_OP_EMBEDDING; kind <= XPB_OP_EMBEDDING_BWD; kind++) {
        int bwd = kind == XPB_OP_EMBEDDING_BWD;
        xpb_tensor_desc *idx = &s.in[bwd ? 1 : 0], *w = bwd ? &s.out[0] : &s.in[1];
        char want[160];
        v3(&s, kind);
        s.op.index_flags = XPB_INDEX_IGNORE;
        expect(&s, XPB_INVALID_ARGUMENT,
               "attribute index_flags 2: only the padding flag (1) applies");
        v3(&s, kind);
        idx->dtype = F;
        snprintf(want, sizeof want, "input indices \"in%d\" must be I32, found F32", bwd);
        expect(&s, XPB_INVALID_ARGUMENT, want);
        v3(&s, kind);
        set_dims(idx, 4, 1, 2, 3, 1);
        snprintf(want, sizeof want, "input indices \"in%d\" must be 1-D to 3-D, found [1, 2, 3, 1]",
                 bwd);
        expect(&s, XPB_INVALID_ARGUMENT, want);
        v3(&s, kind);
        set_dims(w, 3, 5, 4, 1, 1);
        expect(&s, XPB_INVALID_ARGUMENT,
               bwd ? "output dweight \"out0\" must be 2-D, found [5, 4, 1]"
                   : "input weight \"in1\" must be 2-D, found [5, 4, 1]");
        static const int32_t bad[2] = {5, -1};
        for (int k = 0; k < 2; k++) {
            v3(&s, kind);
            s.op.index_flags = XPB_INDEX_PADDING;
            s.op.padding_idx = bad[k];
            snprintf(want, sizeof want, "attribute padding_idx %d is not a row of the 5-row weight",
                     bad[k]);
            expect(&s, XPB_INVALID_ARGUMENT, want);
            s.op.index_flags = 0; /* without the flag, padding_idx means nothing */
            expect_ok(&s);
        }
        v3(&s, kind);
        s.op.index_flags = XPB_INDEX_PADDING;
        s.op.padding_idx = 4;
        expect_ok(&s);
        set_dims(bwd ? &s.in[0] : &s.out[0], 3, 2, 3, 5, 1);
        expect(&s, XPB_INVALID_ARGUMENT,
               bwd ? "input dy \"in0\" must be [2, 3, 4], found [2, 3, 5]"
                   : "output y \"out0\" must be [2, 3, 4], found [2, 3, 5]");
    }
    sh_init(&s, XPB_OP_EMBEDDING); /* one index per sample: [N] -> [N, D] */
    sh_in(&s, I, 1, 7), sh_in(&s, F, 2, 5, 4), sh_out(&s, F, 2, 7, 4);
    expect_ok(&s);
}

static void test_lstm_rules(void **state)
{
    (void)state;
    struct sh s;
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.in[0], 2, 3, 4, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input x \"in0\" must be 3-D, found [3, 4]");
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.in[1], 2, 12, 5, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input w_ih \"in1\" must be [12, 4], found [12, 5]");
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.in[2], 2, 12, 4, 1, 1); /* H = 4 from w_hh's columns: 4H = 16 rows */
    expect(&s, XPB_INVALID_ARGUMENT, "input w_ih \"in1\" must be [16, 4], found [12, 4]");
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.in[2], 3, 12, 3, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input w_hh \"in2\" must be 2-D, found [12, 3, 1]");
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.in[4], 1, 13, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input b_hh \"in4\" must be [12], found [13]");
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.in[5], 2, 3, 3, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input h0 \"in5\" must be [2, 3], found [3, 3]");
    v3(&s, XPB_OP_LSTM);
    s.op.n_inputs = 6;
    expect(&s, XPB_INVALID_ARGUMENT, "h0 and c0 come together or not at all");
    s.op.n_inputs = 7;
    s.in_absent = 1u << 5; /* c0 without h0 */
    expect(&s, XPB_INVALID_ARGUMENT, "h0 and c0 come together or not at all");
    s.in_absent = 3u << 5; /* both absent: zeros */
    expect_ok(&s);
    s.op.n_inputs = 5;
    s.in_absent = 0;
    expect_ok(&s);
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.out[3], 3, 3, 2, 12, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output ws \"out3\" must be [3, 2, 15], found [3, 2, 12]");
    v3(&s, XPB_OP_LSTM);
    set_dims(&s.out[0], 3, 2, 3, 3, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output y \"out0\" must be [3, 2, 3], found [2, 3, 3]");
    v3(&s, XPB_OP_LSTM);
    s.op.n_outputs = 1; /* y alone */
    expect_ok(&s);
    s.op.n_outputs = 4;
    s.out_absent = 0xe; /* h_n, c_n and ws not wanted */
    expect_ok(&s);

    v3(&s, XPB_OP_LSTM_BWD);
    set_dims(&s.in[0], 3, 3, 2, 4, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input dy \"in0\" must be [3, 2, 3], found [3, 2, 4]");
    v3(&s, XPB_OP_LSTM_BWD);
    set_dims(&s.in[2], 2, 2, 4, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input dc_n \"in2\" must be [2, 3], found [2, 4]");
    v3(&s, XPB_OP_LSTM_BWD);
    set_dims(&s.in[7], 3, 3, 2, 12, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input ws \"in7\" must be [3, 2, 15], found [3, 2, 12]");
    v3(&s, XPB_OP_LSTM_BWD);
    set_dims(&s.in[9], 2, 2, 2, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input c0 \"in9\" must be [2, 3], found [2, 2]");
    v3(&s, XPB_OP_LSTM_BWD);
    set_dims(&s.out[2], 2, 12, 4, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output dw_hh \"out2\" must be [12, 3], found [12, 4]");
    v3(&s, XPB_OP_LSTM_BWD);
    set_dims(&s.out[6], 2, 3, 2, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output dc0 \"out6\" must be [2, 3], found [3, 2]");
    v3(&s, XPB_OP_LSTM_BWD);
    s.in_absent = 6;     /* no dh_n, dc_n */
    s.out_absent = 0x61; /* dx, dh0, dc0 not wanted */
    expect_ok(&s);
    s.op.n_inputs = 8; /* no h0, c0 */
    s.op.n_outputs = 5;
    expect_ok(&s);
    s.out_absent = 2;
    expect(&s, XPB_INVALID_ARGUMENT, "output 1 (dw_ih) is missing");
    s.out_absent = 0;
    s.in_absent = 1u << 7;
    expect(&s, XPB_INVALID_ARGUMENT, "input 7 (ws) is missing");
    s.in_absent = 0;
    s.op.n_inputs = 7;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 8 to 10 inputs, found 7");
}

static void test_loss_and_update_rules(void **state)
{
    (void)state;
    struct sh s;
    for (uint32_t kind = XPB_OP_SOFTMAX_XENT; kind <= XPB_OP_SOFTMAX_XENT_BWD; kind++) {
        static const float bad[3] = {1.5f, -0.25f, NAN};
        static const char *const found[3] = {"1.5", "-0.25", "nan"};
        for (int k = 0; k < 3; k++) {
            sh_init(&s, kind);
            sh_in(&s, F, 2, 2, 4), sh_in(&s, I, 1, 2);
            if (kind == XPB_OP_SOFTMAX_XENT)
                sh_out(&s, F, 1, 1); /* the loss (the workspace is optional) */
            else
                sh_out(&s, F, 2, 2, 4);
            s.op.label_smoothing = bad[k];
            char want[96];
            snprintf(want, sizeof want, "attribute label_smoothing must be in [0, 1], found %s",
                     found[k]);
            expect(&s, XPB_INVALID_ARGUMENT, want);
            s.op.label_smoothing = 1.0f;
            s.op.index_flags = XPB_INDEX_IGNORE;
            s.op.ignore_index = -100;
            expect_ok(&s);
            s.op.index_flags = XPB_INDEX_PADDING;
            expect(&s, XPB_INVALID_ARGUMENT,
                   "attribute index_flags 1: only the ignore flag (2) applies");
        }
    }

    v3(&s, XPB_OP_ADAMW_UPDATE);
    set_dims(&s.in[3], 4, 4, 3, 2, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input v \"in3\" must be [4, 3, 2, 2], found [4, 3, 2, 1]");
    v3(&s, XPB_OP_ADAMW_UPDATE);
    s.in[4].dtype = I; /* an I32 step counter */
    expect_ok(&s);
    set_dims(&s.in[4], 1, 2, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "input step \"in4\" must be [1], found [2]");

    static const float bad_norm[3] = {0.0f, -5.0f, INFINITY};
    static const char *const found[3] = {"0", "-5", "inf"};
    for (int k = 0; k < 3; k++) {
        v3(&s, XPB_OP_CLIP_GRAD_NORM);
        s.op.max_norm = bad_norm[k];
        char want[96];
        snprintf(want, sizeof want, "attribute max_norm must be > 0, found %s", found[k]);
        expect(&s, XPB_INVALID_ARGUMENT, want);
    }
    v3(&s, XPB_OP_CLIP_GRAD_NORM);
    s.in[7].dtype = I; /* beyond the named operands: "g" */
    expect(&s, XPB_INVALID_ARGUMENT, "input g \"in7\" must be F32, found I32");
    v3(&s, XPB_OP_CLIP_GRAD_NORM);
    set_dims(&s.out[0], 1, 2, 1, 1, 1);
    expect(&s, XPB_INVALID_ARGUMENT, "output total_norm \"out0\" must be [1], found [2]");
    v3(&s, XPB_OP_CLIP_GRAD_NORM);
    s.op.n_inputs = 0;
    expect(&s, XPB_INVALID_ARGUMENT, "expected 1 to 512 inputs, found 0");
    s.op.n_inputs = 1;
    expect_ok(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_rules),
        cmocka_unit_test(test_batched_matmul_rules),
        cmocka_unit_test(test_op_set_3_needs_the_members),
        cmocka_unit_test(test_permute_and_broadcast_rules),
        cmocka_unit_test(test_softmax_rules),
        cmocka_unit_test(test_layer_norm_and_gelu_rules),
        cmocka_unit_test(test_embedding_rules),
        cmocka_unit_test(test_lstm_rules),
        cmocka_unit_test(test_loss_and_update_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
