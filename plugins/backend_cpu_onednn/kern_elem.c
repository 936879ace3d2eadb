/* Small element-wise ops: ADD (oneDNN's binary primitive over the addends seen as flat
 * vectors: both addends and the sum share one layout), COPY and FILL as own OpenMP kernels,
 * and RESHAPE (a view of the same bytes when
 * the input is stored dense row-major, otherwise one reorder into the output's row-major
 * storage). Kernels that see a whole buffer also see the zero padding of blocked layouts, and
 * keep it zero (0 + 0, copies). */
#include <string.h>

#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

static xpb_status bad(xpb_executable *exe, const char *what)
{
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: %s", label, what);
}

static int same_shape(const xpb_tensor_desc *a, const xpb_tensor_desc *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (uint32_t d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* ---- kernels ---- */

static xpb_status copy_kernel(odn_step *s)
{
    const char *x = s->o[0].ptr;
    char *y = s->o[1].ptr;
    int64_t n = s->p[0], chunk = 1 << 20;
#pragma omp parallel for schedule(static)
    for (int64_t off = 0; off < n; off += chunk)
        memcpy(y + off, x + off, (size_t)(n - off < chunk ? n - off : chunk));
    return XPB_OK;
}

static xpb_status fill_kernel(odn_step *s)
{
    float *y = s->o[0].ptr, v = s->f[0];
    int64_t n = s->p[0];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        y[i] = v;
    return XPB_OK;
}

/* ---- compile ---- */

/* ADD runs on oneDNN's binary primitive over the buffers seen as flat vectors: both addends
 * and the sum share one layout (padding included), so the sum is element by element. */
static xpb_status compile_add(xpb_executable *exe, const xpb_op *op)
{
    if (op->n_inputs < 2 || op->n_outputs < 1 ||
        !same_shape(T(exe, op->inputs[0]), T(exe, op->inputs[1])) ||
        !same_shape(T(exe, op->inputs[0]), T(exe, op->outputs[0])))
        return bad(exe, "expects a, b -> y of one shape");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_in(exe, &s, DNNL_ARG_SRC_0, op->inputs[0], NULL);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t md = s.o[0].md;
    if (md.data_type != dnnl_f32 && md.data_type != dnnl_bf16) {
        odn_md_retype(&md, &s.o[0].md, dnnl_f32);
        s.n = 0;
        if ((st = odn_in(exe, &s, DNNL_ARG_SRC_0, op->inputs[0], &md)) != XPB_OK)
            return st;
    }
    if ((st = odn_in(exe, &s, DNNL_ARG_SRC_1, op->inputs[1], &md)) != XPB_OK ||
        (st = odn_out(exe, &s, DNNL_ARG_DST, op->outputs[0], &md)) != XPB_OK)
        return st;
    int64_t n = (int64_t)(dnnl_memory_desc_get_size(&md) / dnnl_data_type_size(md.data_type));
    dnnl_memory_desc_t flat;
    odn_md_tag(&flat, 1, &n, md.data_type, dnnl_a);
    for (uint32_t k = 0; k < s.n; k++)
        s.o[k].md = flat;
    dnnl_binary_desc_t d;
    ODN_TRY(exe, dnnl_binary_desc_init(&d, dnnl_binary_add, &flat, &flat, &flat),
            "binary descriptor");
    if ((st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "binary add")) != XPB_OK)
        return st;
    return odn_commit(exe, &s);
}

static xpb_status compile_copy(xpb_executable *exe, const xpb_op *op)
{
    if (op->n_inputs < 1 || op->n_outputs < 1 ||
        xpb_tensor_numel(T(exe, op->inputs[0])) != xpb_tensor_numel(T(exe, op->outputs[0])) ||
        !same_shape(T(exe, op->inputs[0]), T(exe, op->outputs[0])))
        return bad(exe, "expects x -> y of one shape");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = copy_kernel;
    xpb_status st = odn_in(exe, &s, 0, op->inputs[0], NULL);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t md = s.o[0].md;
    if ((st = odn_out(exe, &s, 1, op->outputs[0], &md)) != XPB_OK)
        return st;
    s.p[0] = (int64_t)dnnl_memory_desc_get_size(&md);
    return odn_commit(exe, &s);
}

static xpb_status compile_fill(xpb_executable *exe, const xpb_op *op)
{
    if (op->n_outputs < 1 || T(exe, op->outputs[0])->dtype != XPB_DTYPE_F32)
        return bad(exe, "expects -> y (f32)");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = fill_kernel;
    dnnl_memory_desc_t md;
    odn_md_plain(&md, T(exe, op->outputs[0]), dnnl_f32);
    xpb_status st = odn_out(exe, &s, 0, op->outputs[0], &md);
    if (st != XPB_OK)
        return st;
    s.p[0] = xpb_tensor_numel(T(exe, op->outputs[0]));
    s.f[0] = op->attrs.value;
    return odn_commit(exe, &s);
}

static xpb_status compile_reshape(xpb_executable *exe, const xpb_op *op)
{
    if (op->n_inputs < 1 || op->n_outputs < 1 ||
        xpb_tensor_numel(T(exe, op->inputs[0])) != xpb_tensor_numel(T(exe, op->outputs[0])) ||
        T(exe, op->inputs[0])->dtype != T(exe, op->outputs[0])->dtype)
        return bad(exe, "expects x -> y with the same element count and type");
    uint32_t x = op->inputs[0], y = op->outputs[0];
    xpb_status st;
    odn_step probe;
    odn_step_init(&probe, exe, ODN_STEP_KERNEL);
    if (!exe->t[x].decided && (st = odn_in(exe, &probe, 0, x, NULL)) != XPB_OK)
        return st;
    const dnnl_memory_desc_t *xmd = &exe->t[x].md;
    dnnl_data_type_t dt = xmd->data_type;
    dnnl_memory_desc_t ymd;
    odn_md_plain(&ymd, T(exe, y), dt);
    int x_persistent = (T(exe, x)->flags & XPB_TENSOR_PERSISTENT) != 0;
    int y_persistent = (T(exe, y)->flags & XPB_TENSOR_PERSISTENT) != 0;
    if (!exe->t[y].decided && odn_md_is_plain(xmd) && !x_persistent && !y_persistent)
        return odn_alias(exe, y, x, &ymd); /* the same bytes: no step at all */
    if (!exe->t[y].decided && (st = odn_decide(exe, y, &ymd)) != XPB_OK)
        return st;
    const dnnl_memory_desc_t *have = &exe->t[y].md;
    if (!odn_md_is_plain(have))
        return bad(exe, "output already stored in a blocked layout");
    /* one reorder: x as stored -> x's shape, row-major, over y's bytes */
    dnnl_memory_desc_t view;
    odn_md_plain(&view, T(exe, x), have->data_type);
    if (exe->t[x].shadow_buf != ODN_NONE && have->data_type == dnnl_bf16)
        return odn_emit_reorder(exe, ODN_LIST_STEPS, exe->t[x].shadow_buf, &exe->t[x].shadow_md,
                                exe->t[y].buf, &view);
    return odn_emit_reorder(exe, ODN_LIST_STEPS, exe->t[x].buf, xmd, exe->t[y].buf, &view);
}

xpb_status odn_compile_elem(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    switch (op->kind) {
    case XPB_OP_ADD:
        return compile_add(exe, op);
    case XPB_OP_COPY:
        return compile_copy(exe, op);
    case XPB_OP_FILL:
        return compile_fill(exe, op);
    default:
        return compile_reshape(exe, op);
    }
}
