/* PERMUTE (op set 3): one oneDNN reorder from x's dense row-major storage, seen through
 * permuted strides (y's dim d walks x's dim perm[d]), into y's dense row-major storage. F32
 * (in the type the policy gives each side) and I32 alike. */
#include "odn.h"

xpb_status odn_compile_permute(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    uint32_t x = op->inputs[0], y = op->outputs[0];
    const xpb_tensor_desc *tx = xpb_program_tensor(exe->prog, x);
    const xpb_tensor_desc *ty = xpb_program_tensor(exe->prog, y);
    int nd = (int)tx->ndim;
    dnnl_dims_t xs, dims, strides;
    int64_t stride = 1;
    for (int k = nd - 1; k >= 0; k--) { /* x's row-major strides */
        xs[k] = stride;
        stride *= tx->dims[k];
    }
    for (int d = 0; d < nd; d++) {
        dims[d] = ty->dims[d];
        strides[d] = xs[op->perm[d]];
    }
    dnnl_memory_desc_t view, my;
    ODN_TRY(exe, dnnl_memory_desc_init_by_strides(&view, nd, dims, odn_pref_dt(exe, x), strides),
            "permuted view");
    odn_md_plain(&my, ty, odn_pref_dt(exe, y));
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_reorder_pd_create(&s.pd, exe, &view, &my);
    if (st != XPB_OK)
        return st;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_FROM, x, &view, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_TO, y, &my, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}
