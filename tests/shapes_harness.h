/* The harness of the shape-rule tests (tests/test_shapes.c, tests/test_shapes3.c): one op with
 * its tensor descriptors in layer "L", xpb_op_check / xpb_op_infer_shape on it, messages
 * compared exactly, and a small well-formed instance of every op of op set 3 (valid3). Every
 * function is static inline; include it after <cmocka.h>. */
#ifndef XPB_TESTS_SHAPES_HARNESS_H
#define XPB_TESTS_SHAPES_HARNESS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <xpubench/xpubench.h>

/* Operands one check holds: more than xpb_op's inline arrays (LSTM_BWD has ten inputs and seven
 * outputs, CLIP_GRAD_NORM one input per gradient). xpb_op_check takes them as arrays. */
#define SH_MAX_IN 12
#define SH_MAX_OUT 8

struct sh {
    xpb_op op;
    xpb_tensor_desc in[SH_MAX_IN];
    xpb_tensor_desc out[SH_MAX_OUT];
    unsigned in_absent, out_absent; /* bit i: pass NULL for that tensor */
    char msg[1024];
};

static const char *const in_names[SH_MAX_IN] = {"in0", "in1", "in2", "in3", "in4",  "in5",
                                                "in6", "in7", "in8", "in9", "in10", "in11"};
static const char *const out_names[SH_MAX_OUT] = {"out0", "out1", "out2", "out3",
                                                  "out4", "out5", "out6", "out7"};

/* An op of `kind` in layer "L" with the attributes every valid instance below uses. */
static inline void sh_init(struct sh *s, uint32_t kind)
{
    memset(s, 0, sizeof *s);
    s->op.kind = kind;
    s->op.layer = "L";
    for (int i = 0; i < XPB_MAX_OP_INPUTS; i++)
        s->op.inputs[i] = XPB_NO_TENSOR;
    for (int j = 0; j < XPB_MAX_OP_OUTPUTS; j++)
        s->op.outputs[j] = XPB_NO_TENSOR;
    xpb_op_attrs *at = &s->op.attrs;
    at->stride[0] = at->stride[1] = 1;
    at->dilation[0] = at->dilation[1] = 1;
    at->kernel[0] = at->kernel[1] = 2;
    at->eps = 1e-5f;
    at->momentum = 0.1f;
    at->scale = 1.0f;
    at->lr = 0.1f;
    at->dropout_p = 0.5f;
    at->negative_slope = 0.2f;
}

static inline void set_desc(xpb_tensor_desc *d, const char *name, uint32_t dtype, uint32_t ndim,
                            va_list ap)
{
    memset(d, 0, sizeof *d);
    d->name = name;
    d->dtype = dtype;
    d->ndim = ndim;
    for (uint32_t k = 0; k < XPB_MAX_DIMS; k++)
        d->dims[k] = k < ndim ? va_arg(ap, int) : 1;
}

/* Appends an input / output of `dtype` and `ndim` int dims. */
static inline void sh_in(struct sh *s, uint32_t dtype, uint32_t ndim, ...)
{
    va_list ap;
    va_start(ap, ndim);
    uint32_t i = s->op.n_inputs++;
    set_desc(&s->in[i], in_names[i], dtype, ndim, ap);
    va_end(ap);
}

static inline void sh_out(struct sh *s, uint32_t dtype, uint32_t ndim, ...)
{
    va_list ap;
    va_start(ap, ndim);
    uint32_t j = s->op.n_outputs++;
    set_desc(&s->out[j], out_names[j], dtype, ndim, ap);
    va_end(ap);
}

#define F XPB_DTYPE_F32
#define I XPB_DTYPE_I32

static inline xpb_status sh_check(struct sh *s)
{
    const xpb_tensor_desc *in[SH_MAX_IN] = {0}, *out[SH_MAX_OUT] = {0};
    for (uint32_t i = 0; i < SH_MAX_IN; i++)
        in[i] = s->in_absent & (1u << i) ? NULL : &s->in[i];
    for (uint32_t j = 0; j < SH_MAX_OUT; j++)
        out[j] = s->out_absent & (1u << j) ? NULL : &s->out[j];
    return xpb_op_check(&s->op, in, out, s->msg, sizeof s->msg);
}

/* xpb_op_check must return `want` with exactly `message` ("<OP> (layer 'L'): " + body). */
static inline void expect(struct sh *s, xpb_status want, const char *body)
{
    char full[1024];
    snprintf(full, sizeof full, "%s (layer 'L'): %s", xpb_op_name(s->op.kind), body);
    xpb_status st = sh_check(s);
    if (st != want || strcmp(s->msg, full) != 0)
        fail_msg("%s: got %s \"%s\"\n wanted %s \"%s\"", xpb_op_name(s->op.kind),
                 xpb_status_name(st), s->msg, xpb_status_name(want), full);
}

static inline void expect_ok(struct sh *s)
{
    xpb_status st = sh_check(s);
    if (st != XPB_OK)
        fail_msg("%s: %s: %s", xpb_op_name(s->op.kind), xpb_status_name(st), s->msg);
    assert_string_equal(s->msg, "");
}

static inline xpb_status sh_infer(struct sh *s, xpb_tensor_desc *y)
{
    const xpb_tensor_desc *in[SH_MAX_IN] = {0};
    for (uint32_t i = 0; i < SH_MAX_IN; i++)
        in[i] = s->in_absent & (1u << i) ? NULL : &s->in[i];
    memset(y, 0x5a, sizeof *y);
    y->name = "kept";
    return xpb_op_infer_shape(y, &s->op, in, s->msg, sizeof s->msg);
}

/* A small well-formed instance of every op of op set 3 (the same shapes as
 * tests/test_ref_kernels.c); 0 for a kind of an earlier op set. */
static inline int valid3(struct sh *s, uint32_t kind)
{
    sh_init(s, kind);
    switch (kind) {
    case XPB_OP_MATMUL:
        sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 3, 4), sh_in(s, F, 1, 4), sh_out(s, F, 2, 2, 4);
        break;
    case XPB_OP_MATMUL_BWD:
        sh_in(s, F, 2, 2, 4), sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 3, 4);
        sh_out(s, F, 2, 2, 3), sh_out(s, F, 2, 3, 4), sh_out(s, F, 1, 4);
        break;
    case XPB_OP_BATCHED_MATMUL:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 3, 3, 5, 2), sh_out(s, F, 4, 2, 3, 4, 2);
        break;
    case XPB_OP_BATCHED_MATMUL_BWD:
        sh_in(s, F, 4, 2, 3, 4, 2), sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 3, 3, 5, 2);
        sh_out(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 3, 3, 5, 2);
        break;
    case XPB_OP_PERMUTE:
        s->op.perm[0] = 0, s->op.perm[1] = 2, s->op.perm[2] = 1, s->op.perm[3] = 3;
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 4, 3, 5);
        break;
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 2, 4, 1), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_SUM_TO:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 3, 3, 1, 5);
        break;
    case XPB_OP_SCALE:
    case XPB_OP_GELU:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_SOFTMAX:
        s->op.causal = 1;
        sh_in(s, F, 4, 2, 3, 4, 4), sh_in(s, F, 2, 4, 4), sh_out(s, F, 4, 2, 3, 4, 4);
        break;
    case XPB_OP_SOFTMAX_BWD:
    case XPB_OP_GELU_BWD:
        sh_in(s, F, 4, 2, 3, 4, 5), sh_in(s, F, 4, 2, 3, 4, 5), sh_out(s, F, 4, 2, 3, 4, 5);
        break;
    case XPB_OP_LAYER_NORM:
        sh_in(s, F, 3, 2, 3, 4), sh_in(s, F, 1, 4), sh_in(s, F, 1, 4);
        sh_out(s, F, 3, 2, 3, 4), sh_out(s, F, 2, 2, 3), sh_out(s, F, 2, 2, 3);
        break;
    case XPB_OP_LAYER_NORM_BWD:
        sh_in(s, F, 3, 2, 3, 4), sh_in(s, F, 3, 2, 3, 4), sh_in(s, F, 1, 4);
        sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 2, 3);
        sh_out(s, F, 3, 2, 3, 4), sh_out(s, F, 1, 4), sh_out(s, F, 1, 4);
        break;
    case XPB_OP_EMBEDDING:
        sh_in(s, I, 2, 2, 3), sh_in(s, F, 2, 5, 4), sh_out(s, F, 3, 2, 3, 4);
        break;
    case XPB_OP_EMBEDDING_BWD:
        sh_in(s, F, 3, 2, 3, 4), sh_in(s, I, 2, 2, 3), sh_out(s, F, 2, 5, 4);
        break;
    case XPB_OP_LSTM:
        sh_in(s, F, 3, 3, 2, 4), sh_in(s, F, 2, 12, 4), sh_in(s, F, 2, 12, 3);
        sh_in(s, F, 1, 12), sh_in(s, F, 1, 12), sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 2, 3);
        sh_out(s, F, 3, 3, 2, 3), sh_out(s, F, 2, 2, 3), sh_out(s, F, 2, 2, 3);
        sh_out(s, F, 3, 3, 2, 15);
        break;
    case XPB_OP_LSTM_BWD:
        sh_in(s, F, 3, 3, 2, 3), sh_in(s, F, 2, 2, 3), sh_in(s, F, 2, 2, 3);
        sh_in(s, F, 3, 3, 2, 4), sh_in(s, F, 2, 12, 4), sh_in(s, F, 2, 12, 3);
        sh_in(s, F, 3, 3, 2, 3), sh_in(s, F, 3, 3, 2, 15), sh_in(s, F, 2, 2, 3);
        sh_in(s, F, 2, 2, 3);
        sh_out(s, F, 3, 3, 2, 4), sh_out(s, F, 2, 12, 4), sh_out(s, F, 2, 12, 3);
        sh_out(s, F, 1, 12), sh_out(s, F, 1, 12), sh_out(s, F, 2, 2, 3), sh_out(s, F, 2, 2, 3);
        break;
    case XPB_OP_ADAMW_UPDATE:
        for (int i = 0; i < 4; i++)
            sh_in(s, F, 4, 4, 3, 2, 2);
        sh_in(s, F, 1, 1);
        break;
    case XPB_OP_CLIP_GRAD_NORM: /* eight gradients: more than the six inline inputs */
        s->op.max_norm = 1.0f;
        for (int i = 0; i < 8; i++)
            sh_in(s, F, 2, 1 + i, 3);
        sh_out(s, F, 1, 1);
        break;
    default:
        return 0;
    }
    return 1;
}

#endif
