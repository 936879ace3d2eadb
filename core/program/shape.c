/* Shape inference for the builder: the graph's view of a node handed to the SDK's rules
 * (xpb_op_infer_shape in include/xpubench/shapes.h, the same rules every backend validates
 * with), so that the host and the backends cannot disagree on what an op accepts. */
#include <string.h>

#include "program/graph.h"

/* The descriptor of graph value `v` as the rules see it: name, dtype, shape. */
static void value_desc(xpb_tensor_desc *d, const xpb_gvalue *v)
{
    memset(d, 0, sizeof *d);
    d->name = v->name;
    d->dtype = v->dtype;
    d->ndim = v->ndim;
    memcpy(d->dims, v->dims, sizeof d->dims);
}

xpb_status xpb_infer_shape(uint32_t *ndim, int64_t *dims, uint32_t *dtype, const xpb_graph *g,
                           const xpb_gnode *n, xpb_err *err)
{
    xpb_tensor_desc in_desc[XPB_GNODE_MAX_INPUTS];
    const xpb_tensor_desc *in[XPB_GNODE_MAX_INPUTS] = {0};
    for (uint32_t i = 0; i < n->n_inputs && i < XPB_GNODE_MAX_INPUTS; i++) {
        value_desc(&in_desc[i], &g->values[n->inputs[i]]);
        in[i] = &in_desc[i];
    }
    xpb_tensor_desc y;
    memset(&y, 0, sizeof y);
    if (n->kind == XPB_GNODE_STOP_GRADIENT && n->n_inputs == 1) {
        y = in_desc[0]; /* the value itself; only the gradient stops */
    } else {
        xpb_op op;
        memset(&op, 0, sizeof op);
        op.kind = n->kind;
        op.n_inputs = n->n_inputs;
        op.n_outputs = 1;
        op.attrs = n->attrs;
        xpb_op_apply_attrs3(&op, &n->attrs3);
        op.layer = n->layer;
        char msg[sizeof err->msg];
        xpb_status st = xpb_op_infer_shape(&y, &op, in, msg, sizeof msg);
        if (st != XPB_OK)
            return xpb_err_set(err, st, "%s", msg);
    }
    *ndim = y.ndim;
    *dtype = y.dtype;
    memcpy(dims, y.dims, sizeof y.dims);
    return XPB_OK;
}
