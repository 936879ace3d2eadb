/* REFLECTION_PAD and its backward as own OpenMP kernels (oneDNN has no reflection padding).
 * They work in the input's own layout when it is plain NCHW, NHWC or channel-blocked
 * (nChw8c/nChw16c...): at a fixed (n, h, w) the kernel moves a contiguous run of channel
 * values (1 for NCHW, the block for nChw16c, all C for NHWC), so padding never costs a
 * reorder. Forward copies (fp32 or bf16); backward gathers, for every input cell, the at most
 * 3x3 output cells that reflect onto it, summing in fp32, and copies the runs of cells that
 * have one source (the inside of the image) in one piece. */
#include <string.h>

#include "odn.h"

/* The channel runs of a 4-D descriptor (odn.h), or 0 when the kernels cannot walk it: they
 * also need consecutive w to be consecutive runs. */
static int layout_of(const dnnl_memory_desc_t *md, odn_channel_runs *l)
{
    return odn_channel_runs_of(md, l) && l->sw == l->vec;
}

/* Output positions that read input index i (size n, padding p); returns their count. */
static int sources(int64_t i, int64_t n, int64_t p, int64_t out[3])
{
    int k = 0;
    out[k++] = i + p;
    if (i >= 1 && i <= p)
        out[k++] = p - i;
    if (i <= n - 2 && i > n - 2 - p)
        out[k++] = 2 * (n - 1) - i + p;
    return k;
}

static int64_t reflect(int64_t o, int64_t n, int64_t p)
{
    int64_t i = o - p;
    if (i < 0)
        i = -i;
    if (i >= n)
        i = 2 * (n - 1) - i;
    return i;
}

/* p[]: N, H, W, ph, pw; o[0] = input (x or dy), o[1] = output (y or dx). */
static xpb_status pad_fwd_kernel(odn_step *s)
{
    odn_channel_runs li = {0}, lo = {0};
    layout_of(&s->o[0].md, &li);
    layout_of(&s->o[1].md, &lo);
    int64_t n_img = s->p[0], h = s->p[1], w = s->p[2], ph = s->p[3], pw = s->p[4];
    int64_t oh_n = h + 2 * ph;
    size_t es = dnnl_data_type_size(s->o[0].md.data_type), run = (size_t)li.vec * es;
    const char *x = s->o[0].ptr;
    char *y = s->o[1].ptr;
    int64_t rows = n_img * li.groups * oh_n;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t oh = r % oh_n, g = (r / oh_n) % li.groups, n = r / (oh_n * li.groups);
        int64_t ih = reflect(oh, h, ph);
        const char *xr = x + (size_t)(n * li.sn + g * li.sg + ih * li.sh) * es;
        char *yr = y + (size_t)(n * lo.sn + g * lo.sg + oh * lo.sh) * es;
        /* w is contiguous in every supported layout: the inside of the row is one copy */
        memcpy(yr + (size_t)pw * run, xr, (size_t)w * run);
        for (int64_t k = 0; k < pw; k++) {
            memcpy(yr + (size_t)k * run, xr + (size_t)reflect(k, w, pw) * run, run);
            int64_t ow = pw + w + k;
            memcpy(yr + (size_t)ow * run, xr + (size_t)reflect(ow, w, pw) * run, run);
        }
    }
    return XPB_OK;
}

static xpb_status pad_bwd_kernel(odn_step *s)
{
    odn_channel_runs ld = {0}, lx = {0};
    layout_of(&s->o[0].md, &ld);
    layout_of(&s->o[1].md, &lx);
    int64_t n_img = s->p[0], h = s->p[1], w = s->p[2], ph = s->p[3], pw = s->p[4];
    dnnl_data_type_t dt = s->o[0].md.data_type;
    size_t es = dnnl_data_type_size(dt);
    const char *dy = s->o[0].ptr;
    char *dx = s->o[1].ptr;
    int64_t rows = n_img * lx.groups * h, vec = lx.vec;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t ih = r % h, g = (r / h) % lx.groups, n = r / (h * lx.groups);
        int64_t oh[3], ow[3];
        int nh = sources(ih, h, ph, oh);
        int64_t row = n * lx.sn + g * lx.sg + ih * lx.sh, drow = n * ld.sn + g * ld.sg;
        int64_t iw = 0;
        while (iw < w) {
            int nw = sources(iw, w, pw, ow);
            if (nh == 1 && nw == 1) { /* a run of cells with one source each: one copy */
                int64_t end = iw + 1;
                while (end < w && sources(end, w, pw, ow) == 1)
                    end++;
                memcpy(dx + (size_t)(row + iw * lx.sw) * es,
                       dy + (size_t)(drow + oh[0] * ld.sh + (iw + pw) * ld.sw) * es,
                       (size_t)((end - iw) * vec) * es);
                iw = end;
                continue;
            }
            int64_t xo = row + iw * lx.sw;
            for (int64_t v = 0; v < vec; v++) {
                float acc = 0.0f;
                for (int a = 0; a < nh; a++)
                    for (int b = 0; b < nw; b++)
                        acc += odn_load(dy, dt, drow + oh[a] * ld.sh + ow[b] * ld.sw + v);
                odn_store(dx, dt, xo + v, acc);
            }
            iw++;
        }
    }
    return XPB_OK;
}

xpb_status odn_compile_pad(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int backward = op->kind == XPB_OP_REFLECTION_PAD_BWD;
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    if (op->n_inputs < 1 || op->n_outputs < 1)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: expects x -> y", label);
    uint32_t in = op->inputs[0], out = op->outputs[0];
    const xpb_tensor_desc *small = xpb_program_tensor(exe->prog, backward ? out : in);
    const xpb_tensor_desc *big = xpb_program_tensor(exe->prog, backward ? in : out);
    int64_t ph = op->attrs.pad[0], pw = op->attrs.pad[1];
    if (small->ndim != 4 || big->ndim != 4 || big->dims[0] != small->dims[0] ||
        big->dims[1] != small->dims[1] || big->dims[2] != small->dims[2] + 2 * ph ||
        big->dims[3] != small->dims[3] + 2 * pw || ph < 0 || pw < 0 || ph >= small->dims[2] ||
        pw >= small->dims[3])
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "%s: expects [N,C,H,W] <-> [N,C,H+2ph,W+2pw] with pad < H, W", label);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = backward ? pad_bwd_kernel : pad_fwd_kernel;
    /* the input as stored when this kernel understands its layout, else plain */
    const dnnl_memory_desc_t *stored = odn_tensor_md(exe, in);
    dnnl_memory_desc_t want, have;
    dnnl_data_type_t dt = stored ? stored->data_type : odn_pref_dt(exe, in);
    if (dt != dnnl_f32 && dt != dnnl_bf16)
        dt = dnnl_f32;
    const xpb_tensor_desc *tin = xpb_program_tensor(exe->prog, in);
    odn_md_like(&want, stored, 4, tin->dims, dt);
    odn_channel_runs l;
    if (!layout_of(&want, &l))
        odn_md_plain(&want, tin, dt);
    odn_md_like(&have, &want, 4, xpb_program_tensor(exe->prog, out)->dims, dt);
    xpb_status st;
    if ((st = odn_in(exe, &s, 0, in, &want)) != XPB_OK ||
        (st = odn_out(exe, &s, 1, out, &have)) != XPB_OK)
        return st;
    s.p[0] = small->dims[0];
    s.p[1] = small->dims[2];
    s.p[2] = small->dims[3];
    s.p[3] = ph;
    s.p[4] = pw;
    return odn_commit(exe, &s);
}
