/* One op of the reference backend on .npy files, for the PyTorch cross-check of the op set
 * (tests/torch/check_ops.py): the kernel of cpu_ref (plugins/backend_cpu_ref), after the SDK's
 * shape rules, on inputs read with numpy's format and outputs written in it.
 *
 *   ref_op_npy OP [ATTR=VALUE ...] [in=PATH | in=-]... [out=PATH:SHAPE[:i32] | out=-]...
 *              [write_inputs=1]
 *
 * OP is the op's name (MATMUL, LSTM_BWD, ...). Operands come in order: `in=-` is an absent
 * optional input, `out=-` an unwanted output; SHAPE is "2x3x4". Attributes: the floats scale,
 * value, eps, momentum, lr, beta1, beta2, weight_decay, dropout_p, negative_slope,
 * label_smoothing, max_norm; the integers transpose, causal, approximate, index_flags,
 * padding_idx, ignore_index, seed; perm=0,2,1,3. With write_inputs=1 every input is written
 * back to its file after the run (the in-place updates: ADAMW_UPDATE, CLIP_GRAD_NORM). Exit
 * status 0, or 1 with a message on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/npy.h"
#include "ref.h"

#define MAX_IN 64
#define MAX_OUT 8

/* The operands of the op: descriptors, buffers (owned), the files they come from or go to. */
struct operands {
    uint32_t n_in, n_out;
    xpb_tensor_desc in_desc[MAX_IN], out_desc[MAX_OUT];
    struct xpb_npy_array in[MAX_IN];
    float *out[MAX_OUT];
    const char *in_path[MAX_IN], *out_path[MAX_OUT];
    uint32_t in_ids[MAX_IN], out_ids[MAX_OUT];
};

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "ref_op_npy: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 1;
}

static uint32_t kind_of(const char *name)
{
    for (uint32_t k = 1; k < XPB_OP_KIND_END_; k++)
        if (strcmp(xpb_op_name(k), name) == 0)
            return k;
    return 0;
}

/* ATTR=VALUE into op; 0 when the attribute is not one of this tool's. */
static int set_attr(xpb_op *op, const char *name, const char *v, int *write_inputs)
{
    static const struct {
        const char *name;
        size_t offset;
    } floats[] =
        {
            {"scale", offsetof(xpb_op, attrs.scale)},
            {"value", offsetof(xpb_op, attrs.value)},
            {"eps", offsetof(xpb_op, attrs.eps)},
            {"momentum", offsetof(xpb_op, attrs.momentum)},
            {"lr", offsetof(xpb_op, attrs.lr)},
            {"beta1", offsetof(xpb_op, attrs.beta1)},
            {"beta2", offsetof(xpb_op, attrs.beta2)},
            {"weight_decay", offsetof(xpb_op, attrs.weight_decay)},
            {"dropout_p", offsetof(xpb_op, attrs.dropout_p)},
            {"negative_slope", offsetof(xpb_op, attrs.negative_slope)},
            {"label_smoothing", offsetof(xpb_op, label_smoothing)},
            {"max_norm", offsetof(xpb_op, max_norm)},
        },
      ints[] = {
          {"transpose", offsetof(xpb_op, transpose)},
          {"causal", offsetof(xpb_op, causal)},
          {"approximate", offsetof(xpb_op, approximate)},
          {"index_flags", offsetof(xpb_op, index_flags)},
          {"padding_idx", offsetof(xpb_op, padding_idx)},
          {"ignore_index", offsetof(xpb_op, ignore_index)},
      };
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        if (strcmp(name, floats[i].name) == 0) {
            float f = strtof(v, NULL);
            memcpy((char *)op + floats[i].offset, &f, sizeof f);
            return 1;
        }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (strcmp(name, ints[i].name) == 0) {
            int32_t n = (int32_t)strtol(v, NULL, 10);
            memcpy((char *)op + ints[i].offset, &n, sizeof n);
            return 1;
        }
    if (strcmp(name, "perm") == 0) {
        for (int d = 0; d < 4 && *v; d++) {
            op->perm[d] = (uint8_t)strtoul(v, (char **)&v, 10);
            if (*v == ',')
                v++;
        }
        return 1;
    }
    if (strcmp(name, "seed") == 0) {
        op->attrs.seed = strtoull(v, NULL, 10);
        return 1;
    }
    if (strcmp(name, "write_inputs") == 0) {
        *write_inputs = atoi(v);
        return 1;
    }
    return 0;
}

/* "in=PATH": reads the array into operand n_in. */
static int add_input(struct operands *o, const char *path)
{
    if (o->n_in == MAX_IN)
        return fail("more than 64 inputs at %s", path);
    uint32_t i = o->n_in++;
    o->in_ids[i] = XPB_NO_TENSOR;
    if (strcmp(path, "-") == 0)
        return 0;
    xpb_err err = {{0}};
    if (xpb_npy_read(&o->in[i], path, &err) != XPB_OK)
        return fail("%s", err.msg);
    if (o->in[i].ndim < 1 || o->in[i].ndim > XPB_MAX_DIMS)
        return fail("%s: 1 to 4 dims expected", path);
    xpb_tensor_desc *d = &o->in_desc[i];
    d->name = o->in_path[i] = path;
    d->layer = "torch";
    d->dtype = o->in[i].dtype;
    d->ndim = o->in[i].ndim;
    for (uint32_t k = 0; k < XPB_MAX_DIMS; k++)
        d->dims[k] = k < d->ndim ? o->in[i].dims[k] : 1;
    o->in_ids[i] = i;
    return 0;
}

/* "out=PATH:SHAPE[:i32]": a zeroed buffer for operand n_out. */
static int add_output(struct operands *o, char *spec)
{
    if (o->n_out == MAX_OUT)
        return fail("more than 8 outputs at %s", spec);
    uint32_t j = o->n_out++;
    o->out_ids[j] = XPB_NO_TENSOR;
    if (strcmp(spec, "-") == 0)
        return 0;
    char *shape = strchr(spec, ':');
    if (!shape)
        return fail("out=%s: PATH:SHAPE expected", spec);
    *shape++ = '\0';
    xpb_tensor_desc *d = &o->out_desc[j];
    d->name = o->out_path[j] = spec;
    d->layer = "torch";
    d->dtype = strstr(shape, ":i32") ? XPB_DTYPE_I32 : XPB_DTYPE_F32;
    for (char *p = shape; *p && *p != ':' && d->ndim < XPB_MAX_DIMS; d->ndim++) {
        d->dims[d->ndim] = strtoll(p, &p, 10);
        if (*p == 'x')
            p++;
    }
    for (uint32_t k = d->ndim; k < XPB_MAX_DIMS; k++)
        d->dims[k] = 1;
    if (d->ndim == 0 || !(o->out[j] = calloc((size_t)xpb_tensor_numel(d), 4)))
        return fail("out=%s: bad shape or out of memory", spec);
    o->out_ids[j] = MAX_IN + j;
    return 0;
}

/* Runs the op and writes its outputs (and its inputs, when asked). */
static int run(xpb_op *op, struct operands *o, int write_inputs)
{
    const xpb_tensor_desc *in[MAX_IN] = {0}, *out[MAX_OUT] = {0};
    static ref_op_args a; /* large: kept off the stack */
    char msg[1024] = "";
    memset(&a, 0, sizeof a);
    for (uint32_t i = 0; i < o->n_in; i++) {
        in[i] = a.in_desc[i] = o->in[i].data ? &o->in_desc[i] : NULL;
        a.in[i] = o->in[i].data;
        if (i < XPB_MAX_OP_INPUTS)
            op->inputs[i] = o->in_ids[i];
    }
    for (uint32_t j = 0; j < o->n_out; j++) {
        out[j] = a.out_desc[j] = o->out[j] ? &o->out_desc[j] : NULL;
        a.out[j] = o->out[j];
        if (j < XPB_MAX_OP_OUTPUTS)
            op->outputs[j] = o->out_ids[j];
    }
    op->n_inputs = o->n_in;
    op->n_outputs = o->n_out;
    op->inputs_all = o->n_in > XPB_MAX_OP_INPUTS ? o->in_ids : NULL;
    op->outputs_all = o->n_out > XPB_MAX_OP_OUTPUTS ? o->out_ids : NULL;
    if (xpb_op_check(op, in, out, msg, sizeof msg) != XPB_OK)
        return fail("%s", msg);
    a.op = op;
    a.err = msg;
    a.err_size = sizeof msg;
    if (ref_kernel_for(op->kind)(&a) != XPB_OK)
        return fail("%s", msg);
    xpb_err err = {{0}};
    for (uint32_t j = 0; j < o->n_out; j++)
        if (o->out[j] && xpb_npy_write(o->out_path[j], o->out_desc[j].dtype, o->out_desc[j].ndim,
                                       o->out_desc[j].dims, o->out[j], &err) != XPB_OK)
            return fail("%s", err.msg);
    for (uint32_t i = 0; write_inputs && i < o->n_in; i++)
        if (o->in[i].data && xpb_npy_write(o->in_path[i], o->in_desc[i].dtype, o->in_desc[i].ndim,
                                           o->in_desc[i].dims, o->in[i].data, &err) != XPB_OK)
            return fail("%s", err.msg);
    return 0;
}

int main(int argc, char **argv)
{
    static struct operands o; /* large: kept off the stack */
    if (argc < 2)
        return fail("%s",
                    "usage: ref_op_npy OP [ATTR=VALUE]... [in=PATH|-]... [out=PATH:SHAPE|-]...");
    xpb_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind_of(argv[1]);
    op.layer = "torch";
    if (!op.kind || !ref_kernel_for(op.kind))
        return fail("unknown op %s", argv[1]);
    int write_inputs = 0, st = 0;
    for (int k = 2; k < argc && st == 0; k++) {
        char *eq = strchr(argv[k], '=');
        if (!eq) {
            st = fail("%s: NAME=VALUE expected", argv[k]);
            break;
        }
        *eq = '\0';
        if (strcmp(argv[k], "in") == 0)
            st = add_input(&o, eq + 1);
        else if (strcmp(argv[k], "out") == 0)
            st = add_output(&o, eq + 1);
        else if (!set_attr(&op, argv[k], eq + 1, &write_inputs))
            st = fail("unknown attribute %s", argv[k]);
    }
    if (st == 0)
        st = run(&op, &o, write_inputs);
    for (uint32_t i = 0; i < o.n_in; i++)
        xpb_npy_free(&o.in[i]);
    for (uint32_t j = 0; j < o.n_out; j++)
        free(o.out[j]);
    return st;
}
