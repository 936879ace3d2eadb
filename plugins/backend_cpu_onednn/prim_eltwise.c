/* RELU, LEAKY_RELU, TANH and GELU and their backward ops, and SCALE, on oneDNN's eltwise
 * primitive. The forward ops work in the layout their input already has. The backward ops of
 * RELU and TANH take y (not x), so they use oneDNN's "use_dst_for_bwd" algorithms: relu:
 * dx = y > 0 ? dy : slope*dy, tanh: dx = dy (1 - y^2); GELU_BWD takes the forward input x, as
 * oneDNN's gelu_erf / gelu_tanh backward do. SCALE is eltwise_linear (value * x + 0). When
 * fusion is on, a forward eltwise that follows a convolution, inner product or batch norm is a
 * post-op of that primitive instead (fusion.c). */
#include "odn.h"

/* The algorithm and its alpha for op `op`. */
static void alg_of(const xpb_op *op, dnnl_alg_kind_t *alg, float *alpha)
{
    const xpb_op_attrs *a = &op->attrs;
    *alpha = 0.0f;
    switch (op->kind) {
    case XPB_OP_GELU:
    case XPB_OP_GELU_BWD:
        *alg = op->approximate == XPB_GELU_TANH ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf;
        break;
    case XPB_OP_SCALE:
        *alg = dnnl_eltwise_linear;
        *alpha = a->value;
        break;
    case XPB_OP_RELU:
        *alg = dnnl_eltwise_relu;
        break;
    case XPB_OP_RELU_BWD:
        *alg = dnnl_eltwise_relu_use_dst_for_bwd;
        break;
    case XPB_OP_LEAKY_RELU:
        *alg = dnnl_eltwise_relu;
        *alpha = a->negative_slope;
        break;
    case XPB_OP_LEAKY_RELU_BWD:
        *alg = dnnl_eltwise_relu_use_dst_for_bwd;
        *alpha = a->negative_slope;
        break;
    case XPB_OP_TANH:
        *alg = dnnl_eltwise_tanh;
        break;
    default:
        *alg = dnnl_eltwise_tanh_use_dst_for_bwd;
        break;
    }
}

xpb_status odn_compile_eltwise(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int backward = op->kind == XPB_OP_RELU_BWD || op->kind == XPB_OP_LEAKY_RELU_BWD ||
                   op->kind == XPB_OP_TANH_BWD || op->kind == XPB_OP_GELU_BWD;
    int bwd_src = op->kind == XPB_OP_GELU_BWD; /* its second input is x, not y */
    if (op->n_inputs < (backward ? 2u : 1u) || op->n_outputs < 1) {
        char label[256];
        odn_op_label(exe, exe->cur_op, label, sizeof label);
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: expects %s", label,
                        !backward ? "x -> y"
                        : bwd_src ? "dy, x -> dx"
                                  : "dy, y -> dx");
    }
    dnnl_alg_kind_t alg;
    float alpha;
    alg_of(op, &alg, &alpha);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    /* forward: the input as stored; backward: y (GELU: x) as stored */
    uint32_t data = op->inputs[backward ? 1 : 0];
    xpb_status st = odn_in(exe, &s, backward && !bwd_src ? DNNL_ARG_DST : DNNL_ARG_SRC, data, NULL);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t md = s.o[0].md;
    dnnl_prop_kind_t prop = exe->prog->training ? dnnl_forward_training : dnnl_forward_inference;
    dnnl_eltwise_desc_t fd, bd;
    ODN_TRY(exe, dnnl_eltwise_forward_desc_init(&fd, prop, alg, &md, alpha, 0.0f),
            "eltwise descriptor");
    if (!backward) {
        if ((st = odn_pd_create(&s.pd, exe, &fd, NULL, NULL, "eltwise")) != XPB_OK)
            return st;
        if ((st = odn_out(exe, &s, DNNL_ARG_DST, op->outputs[0],
                          odn_pd_md(s.pd, dnnl_query_dst_md))) != XPB_OK) {
            dnnl_primitive_desc_destroy(s.pd);
            return st;
        }
        return odn_commit(exe, &s);
    }
    ODN_TRY(exe, dnnl_eltwise_forward_desc_init(&fd, dnnl_forward_training, alg, &md, alpha, 0.0f),
            "eltwise descriptor");
    ODN_TRY(exe, dnnl_eltwise_backward_desc_init(&bd, alg, &md, &md, alpha, 0.0f),
            "eltwise backward descriptor");
    if ((st = odn_pd_create_bwd(&s.pd, exe, &fd, &bd, "eltwise backward")) != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, op->inputs[0],
                     odn_pd_md(s.pd, dnnl_query_diff_dst_md))) != XPB_OK ||
        (st = odn_out(exe, &s, DNNL_ARG_DIFF_SRC, op->outputs[0],
                      odn_pd_md(s.pd, dnnl_query_diff_src_md))) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}
