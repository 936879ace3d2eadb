/* Convolution backward-weights lowered to im2col + matmul, for small feature maps.
 *
 * oneDNN 2.6's backward-weights convolutions are weak on small maps (8x8 and below: 50-100
 * GFLOP/s, and the AMX bf16 one worse), while its matmul runs near sgemm speed in fp32 and
 * near AMX peak in bf16. With P = N*OH*OW output pixels:
 *
 *   Xcol[P, KH*KW*C]  = im2col(x)            (own kernel; zeros where the window leaves x)
 *   dW[K, KH*KW*C]    = dY^T[K, P] Xcol       (matmul; dY is NHWC, i.e. [P, K] row-major)
 *   db[K]             = sum_p dY[p, k]        (own kernel, when there is a bias)
 *
 * dW comes out in "ohwi" order, a valid layout for the {K,C,KH,KW} weight gradient. Whether
 * this or oneDNN's own implementation runs is decided by timing both at compile (prim_conv.c
 * calls odn_lowered_bwdw_wins); the decision is remembered per shape for the process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "odn.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* p[]: the shape (odn_conv_shape order); o[0] = x, o[1] = Xcol [P, KH*KW*C]. */
static xpb_status im2col_kernel(odn_step *s)
{
    const odn_conv_shape *c = (const odn_conv_shape *)(const void *)s->p;
    odn_channel_runs l = {0};
    odn_channel_runs_of(&s->o[0].md, &l);
    size_t es = dnnl_data_type_size(s->o[0].md.data_type);
    const char *x = s->o[0].ptr;
    char *col = s->o[1].ptr;
    int64_t rows = c->n * c->oh * c->ow, width = c->kh * c->kw * c->c;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < rows; p++) {
        int64_t ow = p % c->ow, oh = (p / c->ow) % c->oh, n = p / (c->ow * c->oh);
        char *row = col + (size_t)(p * width) * es;
        for (int64_t i = 0; i < c->kh; i++) {
            int64_t ih = oh * c->sh - c->ph + i * c->dh;
            for (int64_t j = 0; j < c->kw; j++) {
                int64_t iw = ow * c->sw - c->pw + j * c->dw;
                char *dst = row + (size_t)((i * c->kw + j) * c->c) * es;
                if (ih < 0 || ih >= c->h || iw < 0 || iw >= c->w) {
                    memset(dst, 0, (size_t)c->c * es);
                    continue;
                }
                int64_t base = n * l.sn + ih * l.sh + iw * l.sw;
                for (int64_t g = 0; g < l.groups; g++) {
                    int64_t c0 = g * l.vec, len = c->c - c0 < l.vec ? c->c - c0 : l.vec;
                    if (len <= 0)
                        break;
                    memcpy(dst + (size_t)c0 * es, x + (size_t)(base + g * l.sg) * es,
                           (size_t)len * es);
                }
            }
        }
    }
    return XPB_OK;
}

/* db[k] = sum over the P rows of dY[P, K] (fp32 or bf16); o[0] = dY, o[1] = db; p[0] = P,
 * p[1] = K. */
static xpb_status bias_kernel(odn_step *s)
{
    dnnl_data_type_t dt = s->o[0].md.data_type;
    const void *dy = s->o[0].ptr;
    float *db = s->o[1].ptr;
    int64_t rows = s->p[0], k_count = s->p[1];
#pragma omp parallel for schedule(static)
    for (int64_t k0 = 0; k0 < k_count; k0 += 16) {
        int64_t k1 = k0 + 16 < k_count ? k0 + 16 : k_count;
        float acc[16] = {0};
        for (int64_t p = 0; p < rows; p++)
            for (int64_t k = k0; k < k1; k++)
                acc[k - k0] += odn_load(dy, dt, p * k_count + k);
        for (int64_t k = k0; k < k1; k++)
            db[k] = acc[k - k0];
    }
    return XPB_OK;
}

/* The descriptors of the lowering: x as the kernel reads it (its storage when understood,
 * else plain), Xcol, dY as NHWC and seen as [K, P] (strides 1, K), dW as [K, KH*KW*C] and as
 * {K,C,KH,KW} "ohwi". */
typedef struct lowered_mds {
    dnnl_memory_desc_t x, col, dy_nhwc, dy_t, dw2, dw4;
} lowered_mds;

static void lowered_mds_init(lowered_mds *m, const odn_conv_shape *c, dnnl_data_type_t dt,
                             const dnnl_memory_desc_t *x_stored)
{
    int64_t xd[4] = {c->n, c->c, c->h, c->w}, yd[4] = {c->n, c->k, c->oh, c->ow};
    int64_t wd[4] = {c->k, c->c, c->kh, c->kw};
    int64_t p = c->n * c->oh * c->ow, width = c->kh * c->kw * c->c;
    odn_channel_runs l;
    if (x_stored && x_stored->data_type == dt && odn_channel_runs_of(x_stored, &l))
        m->x = *x_stored;
    else
        odn_md_tag(&m->x, 4, xd, dt, dnnl_abcd);
    int64_t cd[2] = {p, width}, wd2[2] = {c->k, width};
    odn_md_tag(&m->col, 2, cd, dt, dnnl_ab);
    odn_md_tag(&m->dy_nhwc, 4, yd, dt, dnnl_acdb);
    dnnl_dims_t td = {c->k, p}, ts = {1, c->k};
    dnnl_memory_desc_init_by_strides(&m->dy_t, 2, td, dt, ts);
    odn_md_tag(&m->dw2, 2, wd2, dnnl_f32, dnnl_ab);
    odn_md_tag(&m->dw4, 4, wd, dnnl_f32, dnnl_acdb);
}

static xpb_status matmul_pd(dnnl_primitive_desc_t *out, xpb_executable *exe, const lowered_mds *m)
{
    dnnl_matmul_desc_t d;
    ODN_TRY(exe, dnnl_matmul_desc_init(&d, &m->dy_t, &m->col, NULL, &m->dw2), "matmul descriptor");
    return odn_pd_create(out, exe, &d, NULL, NULL, "matmul (lowered backward weights)");
}

static double lowered_time(xpb_executable *exe, const odn_conv_shape *c, dnnl_data_type_t dt,
                           const dnnl_memory_desc_t *x_stored, const dnnl_memory_desc_t *dy_stored,
                           int bias)
{
    lowered_mds m;
    lowered_mds_init(&m, c, dt, x_stored);
    dnnl_primitive_desc_t pd = NULL;
    char saved[ODN_ERR_SIZE];
    memcpy(saved, exe->err, sizeof saved);
    xpb_status st = matmul_pd(&pd, exe, &m);
    memcpy(exe->err, saved, sizeof saved);
    if (st != XPB_OK)
        return -1.0;
    double t = -1.0;
    dnnl_primitive_t prim = NULL;
    size_t sx = dnnl_memory_desc_get_size(&m.x), sc = dnnl_memory_desc_get_size(&m.col),
           sy = dnnl_memory_desc_get_size(&m.dy_nhwc), sw = dnnl_memory_desc_get_size(&m.dw2);
    const dnnl_memory_desc_t *spmd = odn_pd_md(pd, dnnl_query_scratchpad_md);
    size_t ss = spmd ? dnnl_memory_desc_get_size(spmd) : 0;
    char *buf = calloc(1, sx + sc + sy + sw + ss + 5 * 64);
    dnnl_memory_t mem[4] = {NULL};
    if (!buf || dnnl_primitive_create(&prim, pd) != dnnl_success)
        goto out;
    char *px = buf, *pc = px + sx + 64, *py = pc + sc + 64, *pw = py + sy + 64, *psp = pw + sw + 64;
    if (dnnl_memory_create(&mem[0], &m.dy_t, exe->be->engine, py) != dnnl_success ||
        dnnl_memory_create(&mem[1], &m.col, exe->be->engine, pc) != dnnl_success ||
        dnnl_memory_create(&mem[2], &m.dw2, exe->be->engine, pw) != dnnl_success ||
        (ss && dnnl_memory_create(&mem[3], spmd, exe->be->engine, psp) != dnnl_success))
        goto out;
    odn_step k;
    memset(&k, 0, sizeof k);
    memcpy(k.p, c, sizeof *c);
    k.n = 2;
    k.o[0].md = m.x;
    k.o[0].ptr = px;
    k.o[1].md = m.col;
    k.o[1].ptr = pc;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, mem[0]},
                               {DNNL_ARG_WEIGHTS, mem[1]},
                               {DNNL_ARG_DST, mem[2]},
                               {DNNL_ARG_SCRATCHPAD, mem[3]}};
    for (int r = 0; r < ODN_TUNE_RUNS; r++) { /* the best of a few, as tune.c */
        double t0 = now_seconds();
        im2col_kernel(&k);
        if (dnnl_primitive_execute(prim, exe->be->stream, ss ? 4 : 3, args) != dnnl_success ||
            dnnl_stream_wait(exe->be->stream) != dnnl_success) {
            t = -1.0;
            goto out;
        }
        if (bias) {
            odn_step b;
            memset(&b, 0, sizeof b);
            b.n = 2;
            b.o[0].md = m.dy_nhwc;
            b.o[0].ptr = py;
            b.o[1].ptr = pw; /* any float buffer of K */
            b.p[0] = c->n * c->oh * c->ow;
            b.p[1] = c->k;
            bias_kernel(&b);
        }
        double dt = now_seconds() - t0;
        if (t < 0.0 || dt < t)
            t = dt;
    }
    /* dY must arrive in NHWC: a reorder when it is stored otherwise */
    if (dy_stored && !dnnl_memory_desc_equal(dy_stored, &m.dy_nhwc)) {
        size_t sd = dnnl_memory_desc_get_size(dy_stored);
        char *tmp = calloc(1, sd);
        dnnl_primitive_desc_t rpd = NULL;
        dnnl_primitive_t r = NULL;
        dnnl_memory_t a = NULL, bm = NULL;
        if (tmp &&
            dnnl_reorder_primitive_desc_create(&rpd, dy_stored, exe->be->engine, &m.dy_nhwc,
                                               exe->be->engine, NULL) == dnnl_success &&
            dnnl_primitive_create(&r, rpd) == dnnl_success &&
            dnnl_memory_create(&a, dy_stored, exe->be->engine, tmp) == dnnl_success &&
            dnnl_memory_create(&bm, &m.dy_nhwc, exe->be->engine, py) == dnnl_success) {
            dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, bm}};
            double best = -1.0;
            for (int rr = 0; rr < ODN_TUNE_RUNS; rr++) {
                double r0 = now_seconds();
                dnnl_primitive_execute(r, exe->be->stream, 2, ra);
                dnnl_stream_wait(exe->be->stream);
                double dt = now_seconds() - r0;
                if (best < 0.0 || dt < best)
                    best = dt;
            }
            t += best;
        } else {
            t = -1.0;
        }
        if (a)
            dnnl_memory_destroy(a);
        if (bm)
            dnnl_memory_destroy(bm);
        if (r)
            dnnl_primitive_destroy(r);
        if (rpd)
            dnnl_primitive_desc_destroy(rpd);
        free(tmp);
    }
out:
    for (int i = 0; i < 4; i++)
        if (mem[i])
            dnnl_memory_destroy(mem[i]);
    if (prim)
        dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    free(buf);
    return t;
}

xpb_status odn_emit_lowered_bwdw(xpb_executable *exe, const odn_conv_shape *c, dnnl_data_type_t dt,
                                 uint32_t dy, uint32_t x, uint32_t dw, uint32_t db)
{
    lowered_mds m;
    lowered_mds_init(&m, c, dt, odn_tensor_md(exe, x));
    xpb_status st;
    uint32_t col;
    if ((st = odn_buf_new(&col, exe, dnnl_memory_desc_get_size(&m.col), 0)) != XPB_OK)
        return st;
    /* im2col */
    odn_step k;
    odn_step_init(&k, exe, ODN_STEP_KERNEL);
    k.fn = im2col_kernel;
    memcpy(k.p, c, sizeof *c);
    if ((st = odn_in(exe, &k, 0, x, &m.x)) != XPB_OK)
        return st;
    odn_buf_operand(&k, 1, col, &m.col);
    if ((st = odn_commit(exe, &k)) != XPB_OK)
        return st;
    /* dW = dY^T Xcol */
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    if ((st = matmul_pd(&s.pd, exe, &m)) != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_SRC, dy, &m.dy_nhwc)) != XPB_OK)
        goto fail;
    s.o[s.n - 1].md = m.dy_t;
    odn_buf_operand(&s, DNNL_ARG_WEIGHTS, col, &m.col);
    if ((st = odn_out(exe, &s, DNNL_ARG_DST, dw, &m.dw4)) != XPB_OK)
        goto fail;
    s.o[s.n - 1].md = m.dw2;
    if ((st = odn_commit(exe, &s)) != XPB_OK)
        return st;
    if (db == ODN_NONE)
        return XPB_OK;
    /* db = column sums of dY */
    odn_step b;
    odn_step_init(&b, exe, ODN_STEP_KERNEL);
    b.fn = bias_kernel;
    b.p[0] = c->n * c->oh * c->ow;
    b.p[1] = c->k;
    dnnl_memory_desc_t vec;
    odn_md_tag(&vec, 1, &c->k, dnnl_f32, dnnl_a);
    if ((st = odn_in(exe, &b, 0, dy, &m.dy_nhwc)) != XPB_OK ||
        (st = odn_out(exe, &b, 1, db, &vec)) != XPB_OK)
        return st;
    return odn_commit(exe, &b);
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

/* Decisions already made in this process, keyed by shape, types and layouts. */
typedef struct lower_key {
    odn_conv_shape c;
    int dt, bias;
    dnnl_memory_desc_t x, dy;
} lower_key;

int odn_lowered_bwdw_wins(xpb_executable *exe, const odn_conv_shape *c, dnnl_data_type_t dt,
                          const dnnl_memory_desc_t *x_md, const dnnl_memory_desc_t *dy_md, int bias,
                          const_dnnl_primitive_desc_t direct)
{
    if (getenv("XPB_ONEDNN_NO_LOWER"))
        return 0;
    if (getenv("XPB_ONEDNN_FORCE_LOWER")) /* tests: every eligible op takes this path */
        return lowered_time(exe, c, dt, x_md, dy_md, bias) >= 0.0;
    lower_key key;
    memset(&key, 0, sizeof key);
    key.c = *c;
    key.dt = (int)dt;
    key.bias = bias;
    if (x_md)
        key.x = *x_md;
    if (dy_md)
        key.dy = *dy_md;
    int wins;
    if (odn_memo_find(ODN_MEMO_LOWER, &key, sizeof key, &wins))
        return wins;
    const int args[2] = {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC};
    const dnnl_memory_desc_t *want[2] = {dy_md, x_md};
    double td = odn_time_pd(exe, direct, args, want, 2);
    double tl = lowered_time(exe, c, dt, x_md, dy_md, bias);
    wins = tl >= 0.0 && (td < 0.0 || tl < td);
    if (getenv("XPB_ONEDNN_DUMP"))
        fprintf(stderr,
                "cpu_onednn: op %u backward weights: oneDNN %.3f ms, im2col+matmul %.3f ms\n",
                exe->cur_op, td * 1e3, tl * 1e3);
    odn_memo_add(ODN_MEMO_LOWER, &key, sizeof key, wins);
    return wins;
}
