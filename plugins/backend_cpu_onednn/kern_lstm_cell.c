/* The element-wise halves of one LSTM time step (lower_lstm.c puts the products around them):
 * the forward cell turns a step's pre-activation gates into activated gates, cell state and
 * output, and the backward cell turns the output and cell-state gradients into the
 * pre-activation gate gradients that the backward products read, summing the bias gradient.
 *
 * Gates are PyTorch's i, f, g, o, in that order along rows of 4H. The activations are
 * vecmath.h's: called 5 B H times a step, the C library's scalar expf and tanhf would cost as
 * much as the step's product. */
/* vecmath.h's loops vectorize only so (see there); before the includes, so that the inline
 * functions of the headers get the same options and inline. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <math.h>
#include <string.h>

#include "odn.h"
#include "vecmath.h"

/* Columns in chunks of this many: per-thread fp32 staging for bf16 data, whose conversions
 * then run as loops of their own (one loop mixing both types does not vectorize). */
#define CHUNK 64

/* n columns of one row of the forward cell, every pointer at the chunk's first column (the
 * gates' blocks hid apart); cp may alias c (zeros written there first). */
ODN_VEC_CLONES static void cell_fwd_cols(float *restrict g, float *c, const float *cp,
                                         float *restrict h, int64_t hid, int64_t n)
{
#pragma omp simd
    for (int64_t j = 0; j < n; j++) {
        float i = odn_fast_sigmoid(g[j]), f = odn_fast_sigmoid(g[hid + j]);
        float gt = odn_fast_tanh(g[2 * hid + j]), o = odn_fast_sigmoid(g[3 * hid + j]);
        float cn = i * gt + f * cp[j];
        g[j] = i;
        g[hid + j] = f;
        g[2 * hid + j] = gt;
        g[3 * hid + j] = o;
        c[j] = cn;
        h[j] = o * odn_fast_tanh(cn);
    }
}

/* Operands: 0 gates G[B, 4H] (fp32: in the pre-activations, out the activated gates), 1 the
 * new cell state c[B, H] (fp32), 2 the output h[B, H] (fp32 or bf16), 3 (optional) the
 * previous cell state [B, H] (fp32; absent: zeros). p[0] = B, p[1] = H. */
xpb_status odn_lstm_cell_fwd(odn_step *s)
{
    float *g_all = s->o[0].ptr, *c_all = s->o[1].ptr;
    void *h_all = s->o[2].ptr;
    const float *cp_all = s->n > 3 ? s->o[3].ptr : NULL;
    int bf16 = s->o[2].md.data_type == dnnl_bf16;
    int64_t rows = s->p[0], hid = s->p[1], n_chunks = (hid + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < rows * n_chunks; k++) {
        int64_t b = k / n_chunks, j0 = k % n_chunks * CHUNK;
        int64_t n = hid - j0 < CHUNK ? hid - j0 : CHUNK;
        float *g = g_all + b * 4 * hid + j0, *c = c_all + b * hid + j0;
        const float *cp = cp_all ? cp_all + b * hid + j0 : c;
        if (!cp_all)
            memset(c, 0, (size_t)n * sizeof *c);
        float staged[CHUNK];
        float *h = bf16 ? staged : (float *)h_all + b * hid + j0;
        cell_fwd_cols(g, c, cp, h, hid, n);
        if (bf16) {
            uint16_t *hb = (uint16_t *)h_all + b * hid + j0;
            for (int64_t j = 0; j < n; j++)
                hb[j] = odn_f32_to_bf16(staged[j]);
        }
    }
    return XPB_OK;
}

/* n columns of one row of the backward cell, every pointer at the chunk's first column (the
 * gates' and dG's blocks hid apart); the gate gradients are added to sum[q][j]. */
ODN_VEC_CLONES static void cell_bwd_cols(const float *restrict dy, const float *restrict dh,
                                         float *restrict dc, const float *restrict a,
                                         const float *restrict c, const float *restrict cp,
                                         float *restrict dg, int64_t ldg,
                                         float (*restrict sum)[CHUNK], int64_t hid, int64_t n)
{
#pragma omp simd
    for (int64_t j = 0; j < n; j++) {
        float i = a[j], f = a[hid + j], g = a[2 * hid + j], o = a[3 * hid + j];
        float tc = odn_fast_tanh(c[j]);
        float dht = dy[j] + dh[j];
        float dct = dc[j] + dht * o * (1.0f - tc * tc);
        float di = dct * g * i * (1.0f - i);
        float df = dct * cp[j] * f * (1.0f - f);
        float dgg = dct * i * (1.0f - g * g);
        float dout = dht * tc * o * (1.0f - o);
        dc[j] = dct * f;
        sum[0][j] += di;
        sum[1][j] += df;
        sum[2][j] += dgg;
        sum[3][j] += dout;
        dg[j] = di;
        dg[ldg + j] = df;
        dg[2 * ldg + j] = dgg;
        dg[3 * ldg + j] = dout;
    }
}

/* Operands: 0 dy[B, H] (fp32 or bf16), 1 dh[B, H] (fp32: the gradient reaching h from the
 * next step), 2 dc[B, H] (fp32, in: from the next step, out: to the previous one), 3 the
 * activated gates A[B, 4H] (fp32), 4 the cell state c[B, H] (fp32), 5 out: dG[B, 4H]
 * (fp32 or bf16), 6 the bias gradient db[4H] (fp32; p[2] = 1: set, 0: added to), 7 (optional)
 * the previous cell state (absent: zeros). p[0] = B, p[1] = H. */
xpb_status odn_lstm_cell_bwd(odn_step *s)
{
    const void *dy_all = s->o[0].ptr;
    const float *dh_all = s->o[1].ptr;
    float *dc_all = s->o[2].ptr;
    const float *a_all = s->o[3].ptr, *c_all = s->o[4].ptr;
    void *dg_all = s->o[5].ptr;
    float *db = s->o[6].ptr;
    const float *cp_all = s->n > 7 ? s->o[7].ptr : NULL;
    int dy_bf16 = s->o[0].md.data_type == dnnl_bf16;
    int bf16 = s->o[5].md.data_type == dnnl_bf16;
    int64_t rows = s->p[0], hid = s->p[1], set = s->p[2], n_chunks = (hid + CHUNK - 1) / CHUNK;
    /* threads own columns, so that each sums its own part of db over the rows */
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n_chunks; k++) {
        int64_t j0 = k * CHUNK, n = hid - j0 < CHUNK ? hid - j0 : CHUNK;
        float sum[4][CHUNK], zero[CHUNK] = {0}, dy_staged[CHUNK], dg_staged[4 * CHUNK];
        for (int q = 0; q < 4; q++)
            for (int64_t j = 0; j < n; j++)
                sum[q][j] = set ? 0.0f : db[q * hid + j0 + j];
        for (int64_t b = 0; b < rows; b++) {
            int64_t o = b * hid + j0, og = b * 4 * hid + j0;
            const float *dy = (const float *)dy_all + o;
            if (dy_bf16) {
                const uint16_t *src = (const uint16_t *)dy_all + o;
                for (int64_t j = 0; j < n; j++)
                    dy_staged[j] = odn_bf16_to_f32(src[j]);
                dy = dy_staged;
            }
            const float *cp = cp_all ? cp_all + o : zero;
            float *dg = bf16 ? dg_staged : (float *)dg_all + og;
            cell_bwd_cols(dy, dh_all + o, dc_all + o, a_all + og, c_all + o, cp, dg,
                          bf16 ? CHUNK : hid, sum, hid, n);
            if (bf16) {
                uint16_t *dst = (uint16_t *)dg_all + og;
                for (int q = 0; q < 4; q++)
                    for (int64_t j = 0; j < n; j++)
                        dst[q * hid + j] = odn_f32_to_bf16(dg_staged[q * CHUNK + j]);
            }
        }
        for (int q = 0; q < 4; q++)
            for (int64_t j = 0; j < n; j++)
                db[q * hid + j0 + j] = sum[q][j];
    }
    return XPB_OK;
}
