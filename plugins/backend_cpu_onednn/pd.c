/* Primitive descriptors the way every op creates them: with a user-mode scratchpad (one shared
 * buffer per executable, steps run one at a time) and the op's fused post-ops; a second
 * descriptor replaces the first only when oneDNN picks the same implementation for it; and the
 * memory descriptors a primitive descriptor wants. Timing candidates is tune.c. */
#include <string.h>

#include "odn.h"

xpb_status odn_pd_create(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *op_desc,
                         const_dnnl_post_ops_t post_ops, const_dnnl_primitive_desc_t hint,
                         const char *what)
{
    dnnl_primitive_attr_t attr;
    *out = NULL;
    ODN_TRY(exe, dnnl_primitive_attr_create(&attr), "primitive attributes");
    dnnl_status_t s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success && post_ops)
        s = dnnl_primitive_attr_set_post_ops(attr, post_ops);
    if (s == dnnl_success)
        s = dnnl_primitive_desc_create(out, op_desc, attr, exe->be->engine, hint);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) {
        *out = NULL;
        return odn_dnnl_fail(exe, s, what);
    }
    return XPB_OK;
}

xpb_status odn_pd_create_bwd(dnnl_primitive_desc_t *out, xpb_executable *exe, const void *fwd_desc,
                             const void *bwd_desc, const char *what)
{
    dnnl_primitive_desc_t hint;
    xpb_status st = odn_pd_create(&hint, exe, fwd_desc, NULL, NULL, what);
    if (st != XPB_OK)
        return st;
    st = odn_pd_create(out, exe, bwd_desc, NULL, hint, what);
    dnnl_primitive_desc_destroy(hint);
    return st;
}

xpb_status odn_reorder_pd_create(dnnl_primitive_desc_t *out, xpb_executable *exe,
                                 const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst)
{
    dnnl_primitive_attr_t attr;
    *out = NULL;
    ODN_TRY(exe, dnnl_primitive_attr_create(&attr), "reorder attributes");
    dnnl_status_t s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success)
        s = dnnl_reorder_primitive_desc_create(out, src, exe->be->engine, dst, exe->be->engine,
                                               attr);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) {
        *out = NULL;
        return odn_dnnl_fail(exe, s, "reorder");
    }
    return XPB_OK;
}

static const char *impl_name(const_dnnl_primitive_desc_t pd)
{
    const char *s = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s);
    return s ? s : "";
}

void odn_pd_prefer(xpb_executable *exe, dnnl_primitive_desc_t *pd, const void *alt_desc,
                   const_dnnl_primitive_desc_t hint)
{
    dnnl_primitive_desc_t alt = NULL;
    char saved[ODN_ERR_SIZE];
    memcpy(saved, exe->err, sizeof saved);
    if (odn_pd_create(&alt, exe, alt_desc, NULL, hint, "alternative") == XPB_OK) {
        if (strcmp(impl_name(alt), impl_name(*pd)) == 0) {
            dnnl_primitive_desc_destroy(*pd);
            *pd = alt;
        } else {
            dnnl_primitive_desc_destroy(alt);
        }
    }
    memcpy(exe->err, saved, sizeof saved);
}

const dnnl_memory_desc_t *odn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what)
{
    return dnnl_primitive_desc_query_md(pd, what, 0);
}
