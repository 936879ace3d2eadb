/* Broadcasting arithmetic of op set 3: ADD_BROADCAST and MUL on oneDNN's binary primitive
 * (numpy broadcasting: both operands seen as dense row-major with y's rank, leading dims
 * padded with 1s; oneDNN broadcasts every dim of size 1), and SUM_TO, the sum that undoes a
 * broadcast, on its reduction primitive (reduce.c). Under bf16-mixed they work in the type
 * the policy gives y (activations bf16). */
#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

static xpb_status compile_binary(xpb_executable *exe, const xpb_op *op)
{
    uint32_t a = op->inputs[0], b = op->inputs[1], y = op->outputs[0];
    int nd = (int)T(exe, y)->ndim;
    dnnl_data_type_t dt = odn_pref_dt(exe, y);
    dnnl_memory_desc_t ma, mb, my;
    odn_md_padded(&ma, T(exe, a)->ndim, T(exe, a)->dims, nd, dt);
    odn_md_padded(&mb, T(exe, b)->ndim, T(exe, b)->dims, nd, dt);
    odn_md_padded(&my, T(exe, y)->ndim, T(exe, y)->dims, nd, dt);
    dnnl_binary_desc_t d;
    ODN_TRY(exe,
            dnnl_binary_desc_init(&d, op->kind == XPB_OP_MUL ? dnnl_binary_mul : dnnl_binary_add,
                                  &ma, &mb, &my),
            "binary descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "binary");
    if (st != XPB_OK)
        return st;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC_0, a, &ma, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_SRC_1, b, &mb, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DST, y, &my, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

/* SUM_TO(x) -> y = x.sum_to_size(y.shape) */
static xpb_status compile_sum_to(xpb_executable *exe, const xpb_op *op)
{
    uint32_t x = op->inputs[0], y = op->outputs[0];
    int nd = (int)T(exe, x)->ndim;
    dnnl_memory_desc_t mx, my;
    odn_md_padded(&mx, T(exe, x)->ndim, T(exe, x)->dims, nd, odn_pref_dt(exe, x));
    odn_md_padded(&my, T(exe, y)->ndim, T(exe, y)->dims, nd, odn_pref_dt(exe, y));
    odn_step probe; /* x's dense storage (after a reorder when it is stored otherwise) */
    odn_step_init(&probe, exe, ODN_STEP_KERNEL);
    xpb_status st = odn_in_as(exe, &probe, 0, x, &mx, NULL);
    if (st != XPB_OK)
        return st;
    return odn_emit_sum_to(exe, probe.o[0].buf, &mx, y, &my);
}

xpb_status odn_compile_bcast(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    return op->kind == XPB_OP_SUM_TO ? compile_sum_to(exe, op) : compile_binary(exe, op);
}
