/* DROPOUT and its backward as own OpenMP kernels on dense fp32 tensors. The mask stream is
 * the one docs/ops.md fixes (splitmix64 of the seed, the call count and the row-major element
 * index; xpb_dropout_factor), so masks are bit-identical to the reference's on every backend
 * and thread count. */
#include "odn.h"

/* o: x, y, mask (optional); p[0] = elements; f[0] = p; s->calls = this op's call index. */
static xpb_status dropout_kernel(odn_step *s)
{
    const float *x = s->o[0].ptr;
    float *y = s->o[1].ptr, *mask = s->n > 2 ? s->o[2].ptr : NULL;
    float p = s->f[0];
    uint64_t h = xpb_dropout_stream((uint64_t)s->p[1], (uint64_t)s->calls);
    int64_t n = s->p[0];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float m = xpb_dropout_factor(h, i, p);
        y[i] = x[i] * m;
        if (mask)
            mask[i] = m;
    }
    return XPB_OK;
}

static xpb_status dropout_bwd_kernel(odn_step *s)
{
    const float *dy = s->o[0].ptr, *mask = s->o[1].ptr;
    float *dx = s->o[2].ptr;
    int64_t n = s->p[0];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * mask[i];
    return XPB_OK;
}

xpb_status odn_compile_dropout(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int backward = op->kind == XPB_OP_DROPOUT_BWD;
    if (op->n_inputs < (backward ? 2u : 1u) || op->n_outputs < 1) {
        char label[256];
        odn_op_label(exe, exe->cur_op, label, sizeof label);
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: expects %s", label,
                        backward ? "dy, ws_mask -> dx" : "x -> y, ws_mask");
    }
    const xpb_tensor_desc *x = xpb_program_tensor(exe->prog, op->inputs[0]);
    int64_t n = xpb_tensor_numel(x);
    uint32_t ids[4] = {op->inputs[0], backward ? op->inputs[1] : op->outputs[0],
                       backward ? op->outputs[0] : (op->n_outputs > 1 ? op->outputs[1] : ODN_NONE)};
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = backward ? dropout_bwd_kernel : dropout_kernel;
    s.p[0] = n;
    s.p[1] = (int64_t)op->attrs.seed;
    s.f[0] = op->attrs.dropout_p;
    for (int k = 0; k < 3; k++) {
        if (ids[k] == ODN_NONE)
            break;
        const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, ids[k]);
        if (xpb_tensor_numel(t) != n) {
            char label[256];
            odn_op_label(exe, exe->cur_op, label, sizeof label);
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: tensors of different sizes", label);
        }
        dnnl_memory_desc_t md;
        odn_md_plain(&md, t, dnnl_f32);
        int is_out = backward ? k == 2 : k >= 1;
        xpb_status st = is_out ? odn_out(exe, &s, k, ids[k], &md) : odn_in(exe, &s, k, ids[k], &md);
        if (st != XPB_OK)
            return st;
    }
    return odn_commit(exe, &s);
}
