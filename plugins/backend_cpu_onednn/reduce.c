/* Summing a buffer down to a tensor's shape (op set 3: SUM_TO, the bias gradient of MATMUL_BWD,
 * the gradient of a batched product's broadcast operand): oneDNN's reduction primitive over the
 * dims where the target has 1, or a reorder when no dim is summed (the reduction primitive
 * refuses that case). */
#include "odn.h"

xpb_status odn_emit_sum_to(xpb_executable *exe, uint32_t src_buf, const dnnl_memory_desc_t *src_md,
                           uint32_t y, const dnnl_memory_desc_t *view)
{
    int reduced = 0;
    for (int k = 0; k < view->ndims; k++)
        reduced |= view->dims[k] != src_md->dims[k];
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st;
    if (reduced) {
        dnnl_reduction_desc_t d;
        ODN_TRY(exe, dnnl_reduction_desc_init(&d, dnnl_reduction_sum, src_md, view, 0.0f, 0.0f),
                "reduction descriptor");
        if ((st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "reduction")) != XPB_OK)
            return st;
    } else if ((st = odn_reorder_pd_create(&s.pd, exe, src_md, view)) != XPB_OK) {
        return st;
    }
    odn_buf_operand(&s, reduced ? DNNL_ARG_SRC : DNNL_ARG_FROM, src_buf, src_md);
    if ((st = odn_out_as(exe, &s, reduced ? DNNL_ARG_DST : DNNL_ARG_TO, y, view, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}
