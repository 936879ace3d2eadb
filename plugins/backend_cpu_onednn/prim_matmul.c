/* MATMUL, BATCHED_MATMUL and their backward ops (op set 3) on oneDNN's matmul primitive.
 *
 * Every operand is read in place from its dense row-major storage: a transposed operand is
 * the same bytes seen through swapped strides (odn_md_matrix), a 3-D operand of a batched
 * product is seen as 4-D with a leading 1, and oneDNN broadcasts batch dims of size 1 itself.
 * Under bf16-mixed the products read bf16 (AMX or AVX512-BF16 where the CPU has them) and
 * accumulate in fp32, as LINEAR does.
 *
 * The backward ops are two products each, written in the operand's own orientation:
 *   a held [M,K]: da = dy op(b)^T;   a held [K,M]: da = op(b) dy^T;
 *   b held [K,N]: db = op(a)^T dy;   b held [N,K]: db = dy^T op(a);
 * and MATMUL_BWD's dbias is a sum over dy's rows (oneDNN's reduction). A batched operand that
 * was broadcast along a batch dim gets the full-batch product in a temporary, reduced (summed)
 * to its shape. */
#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* What the products read: bf16 under bf16-mixed, fp32 otherwise. */
static dnnl_data_type_t compute_dt(const xpb_executable *exe)
{
    return exe->bf16 ? dnnl_bf16 : dnnl_f32;
}

/* One input of a product: tensor `tid` seen through `md`. */
struct mm_in {
    uint32_t tid;
    dnnl_memory_desc_t md;
};

/* Tensor `tid` as a matrix operand of `nd` dims, transposed when `t`. */
static struct mm_in mat(const xpb_executable *exe, uint32_t tid, int t, int nd)
{
    struct mm_in m;
    m.tid = tid;
    odn_md_matrix(&m.md, T(exe, tid)->ndim, T(exe, tid)->dims, t, nd, compute_dt(exe));
    return m;
}

/* Emits dst = src wei (+ bias[N] broadcast over the rows), then post-ops `po` (NULL: none).
 * dst is tensor `y` through `yview`, or, when y is XPB_NO_TENSOR, a step-private buffer of
 * `yview` whose id goes to *tmp. */
static xpb_status emit_product(xpb_executable *exe, const struct mm_in *src,
                               const struct mm_in *wei, uint32_t bias, uint32_t y,
                               const dnnl_memory_desc_t *yview, const_dnnl_post_ops_t po,
                               uint32_t *tmp)
{
    int nd = yview->ndims;
    int64_t n = yview->dims[nd - 1];
    dnnl_memory_desc_t bmd;
    odn_md_padded(&bmd, 1, &n, nd, dnnl_f32);
    dnnl_matmul_desc_t d;
    ODN_TRY(exe,
            dnnl_matmul_desc_init(&d, &src->md, &wei->md, bias != ODN_NONE ? &bmd : NULL, yview),
            "matmul descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create(&s.pd, exe, &d, po, NULL, "matmul");
    if (st != XPB_OK)
        return st;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC, src->tid, &src->md, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_WEIGHTS, wei->tid, &wei->md, NULL)) != XPB_OK ||
        (bias != ODN_NONE &&
         (st = odn_in_as(exe, &s, DNNL_ARG_BIAS, bias, &bmd, NULL)) != XPB_OK) ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DST, y, yview, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    if (tmp)
        *tmp = s.o[s.n - 1].buf;
    return odn_commit(exe, &s);
}

/* The gradient `g` (a tensor of the shape of the operand it belongs to) = src wei, whose
 * batch dims are dy's (`nd` dims in all): written directly when g has them too, else the
 * full-batch product goes to a temporary and is summed down to g's shape. */
static xpb_status emit_grad(xpb_executable *exe, const struct mm_in *src, const struct mm_in *wei,
                            uint32_t g, uint32_t dy, int nd)
{
    const xpb_tensor_desc *tg = T(exe, g), *tdy = T(exe, dy);
    dnnl_memory_desc_t view, full;
    odn_md_padded(&view, tg->ndim, tg->dims, nd, odn_pref_dt(exe, g));
    int64_t fd[XPB_MAX_DIMS];
    int broadcast = 0;
    for (int k = 0; k < nd; k++) {
        fd[k] = k < nd - 2 ? tdy->dims[k] : view.dims[k];
        broadcast |= fd[k] != view.dims[k];
    }
    if (!broadcast)
        return emit_product(exe, src, wei, ODN_NONE, g, &view, NULL, NULL);
    odn_md_tag(&full, nd, fd, dnnl_f32, nd == 4 ? dnnl_abcd : dnnl_abc);
    uint32_t tmp = ODN_NONE;
    xpb_status st = emit_product(exe, src, wei, ODN_NONE, XPB_NO_TENSOR, &full, NULL, &tmp);
    if (st != XPB_OK)
        return st;
    return odn_emit_sum_to(exe, tmp, &full, g, &view);
}

/* The forward product; with fusion, MATMUL's activation (fusion.c) is its post-op and y the
 * activation's output. */
static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op, int nd)
{
    uint32_t tr = op->transpose, y = exe->fuse[exe->cur_op].out_tensor;
    uint32_t bias = op->kind == XPB_OP_MATMUL && op->n_inputs > 2 ? op->inputs[2] : ODN_NONE;
    if (bias == XPB_NO_TENSOR)
        bias = ODN_NONE;
    struct mm_in a = mat(exe, op->inputs[0], (tr & XPB_TRANSPOSE_A) != 0, nd);
    struct mm_in b = mat(exe, op->inputs[1], (tr & XPB_TRANSPOSE_B) != 0, nd);
    dnnl_memory_desc_t yview;
    odn_md_padded(&yview, T(exe, y)->ndim, T(exe, y)->dims, nd, odn_pref_dt(exe, y));
    dnnl_post_ops_t po = NULL;
    xpb_status st = odn_fused_post_ops(&po, exe, exe->cur_op);
    if (st != XPB_OK)
        return st;
    st = emit_product(exe, &a, &b, bias, y, &yview, po, NULL);
    if (po)
        dnnl_post_ops_destroy(po);
    return st;
}

static xpb_status compile_bwd(xpb_executable *exe, const xpb_op *op, int nd)
{
    int ta = (op->transpose & XPB_TRANSPOSE_A) != 0, tb = (op->transpose & XPB_TRANSPOSE_B) != 0;
    uint32_t dy = op->inputs[0], a = op->inputs[1], b = op->inputs[2];
    uint32_t da = op->outputs[0], db = op->n_outputs > 1 ? op->outputs[1] : XPB_NO_TENSOR;
    uint32_t dbias = op->n_outputs > 2 ? op->outputs[2] : XPB_NO_TENSOR;
    xpb_status st;
    if (da != XPB_NO_TENSOR) {
        struct mm_in src = ta ? mat(exe, b, tb, nd) : mat(exe, dy, 0, nd);
        struct mm_in wei = ta ? mat(exe, dy, 1, nd) : mat(exe, b, !tb, nd);
        if ((st = emit_grad(exe, &src, &wei, da, dy, nd)) != XPB_OK)
            return st;
    }
    if (db != XPB_NO_TENSOR) {
        struct mm_in src = tb ? mat(exe, dy, 1, nd) : mat(exe, a, !ta, nd);
        struct mm_in wei = tb ? mat(exe, a, ta, nd) : mat(exe, dy, 0, nd);
        if ((st = emit_grad(exe, &src, &wei, db, dy, nd)) != XPB_OK)
            return st;
    }
    if (dbias == XPB_NO_TENSOR)
        return XPB_OK;
    /* dbias[N] = dy[M,N] summed over the rows */
    struct mm_in rows = mat(exe, dy, 0, 2);
    odn_step probe;
    odn_step_init(&probe, exe, ODN_STEP_KERNEL);
    if ((st = odn_in_as(exe, &probe, 0, dy, &rows.md, NULL)) != XPB_OK)
        return st;
    dnnl_memory_desc_t view;
    odn_md_padded(&view, 1, &T(exe, dbias)->dims[0], 2, dnnl_f32);
    return odn_emit_sum_to(exe, probe.o[0].buf, &rows.md, dbias, &view);
}

xpb_status odn_compile_matmul(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int bwd = op->kind == XPB_OP_MATMUL_BWD || op->kind == XPB_OP_BATCHED_MATMUL_BWD;
    int batched = op->kind == XPB_OP_BATCHED_MATMUL || op->kind == XPB_OP_BATCHED_MATMUL_BWD;
    /* the product's rank: 2, or the larger of the operands' (the shape rules checked them) */
    int nd = 2;
    if (batched)
        for (uint32_t k = bwd ? 1u : 0u; k < (bwd ? 3u : 2u); k++)
            if ((int)T(exe, op->inputs[k])->ndim > nd)
                nd = (int)T(exe, op->inputs[k])->ndim;
    return bwd ? compile_bwd(exe, op, nd) : compile_fwd(exe, op, nd);
}
