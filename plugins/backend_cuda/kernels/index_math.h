/* Index maths of the cuda backend: where element (n, c, h, w) of a tensor lives in each storage
 * layout, pooling windows and their inverse (which outputs read an input element: the
 * backward kernels gather instead of scattering, so they need no atomics and no zeroing),
 * reflection padding and its inverse, and the chunking of the channel reductions. Inline
 * functions that compile as C (tests/test_cuda_math.c checks them against brute force and
 * cpu_ref) and as CUDA C++ (the kernels). */
#ifndef XPB_CUX_INDEX_MATH_H
#define XPB_CUX_INDEX_MATH_H

#include <stdint.h>

#include "kernels/elem_math.h" /* CUX_HD */

/* Storage layouts. PLAIN is the canonical row-major layout (NCHW for 4-D); NHWC stores a 4-D
 * tensor [d0, d1, d2, d3] in the order d0, d2, d3, d1 ("channels last": dimension 1 is the
 * innermost), for activations [N,C,H,W] and convolution weights [K,C,kh,kw] alike. */
enum { CUX_PLAIN = 0, CUX_NHWC = 1 };

/* Offset of element (n, c, h, w) of a [N, C, H, W] tensor stored in `layout`. */
CUX_HD int64_t cux_offset(int layout, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c,
                          int64_t h, int64_t w)
{
    return layout == CUX_NHWC ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

/* The coordinates of the element at offset `i` of a [N, C, H, W] tensor stored in `layout`. */
CUX_HD void cux_coords(int layout, int64_t C, int64_t H, int64_t W, int64_t i, int64_t *n,
                       int64_t *c, int64_t *h, int64_t *w)
{
    if (layout == CUX_NHWC) {
        *c = i % C;
        i /= C;
        *w = i % W;
        i /= W;
        *h = i % H;
        *n = i / H;
    } else {
        *w = i % W;
        i /= W;
        *h = i % H;
        i /= H;
        *c = i % C;
        *n = i / C;
    }
}

/* True when a [N, C, H, W] tensor has the same bytes in both layouts (H = W = 1, or C = 1):
 * then a layout change is free (a reshape of a global-pooled map, say). */
CUX_HD int cux_layouts_agree(int64_t C, int64_t H, int64_t W)
{
    return C == 1 || (H == 1 && W == 1);
}

/* ---- pooling (ops.md "Pooling": floor mode, windows start at o*stride - pad) ---- */

/* The window of output position `o` along one dimension, clipped to [0, size): [*lo, *hi). */
CUX_HD void cux_pool_window(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t size,
                            int64_t *lo, int64_t *hi)
{
    int64_t s = o * stride - pad;
    *lo = s > 0 ? s : 0;
    *hi = s + k < size ? s + k : size;
}

/* The output positions along one dimension whose window contains input position `i`:
 * [*lo, *hi) within [0, out). o qualifies when o*stride - pad <= i < o*stride - pad + k. */
CUX_HD void cux_pool_outputs_of(int64_t i, int64_t stride, int64_t pad, int64_t k, int64_t out,
                                int64_t *lo, int64_t *hi)
{
    int64_t a = i + pad - k + 1; /* o*stride >= a */
    int64_t first = a <= 0 ? 0 : (a + stride - 1) / stride;
    int64_t last = (i + pad) / stride; /* i + pad >= 0 always */
    *lo = first;
    *hi = last + 1 < out ? last + 1 : out;
    if (*hi < *lo)
        *hi = *lo;
}

/* AVGPOOL's divisor of window (oy, ox): kh*kw clipped to the padded image with
 * count_include_pad, else the number of in-bounds elements (cpu_ref's avg_divisor). */
CUX_HD int64_t cux_avg_divisor(int include_pad, int64_t oy, int64_t ox, int64_t sh, int64_t sw,
                               int64_t ph, int64_t pw, int64_t kh, int64_t kw, int64_t h, int64_t w)
{
    if (include_pad) {
        int64_t hs = oy * sh - ph, ws = ox * sw - pw;
        int64_t he = hs + kh < h + ph ? hs + kh : h + ph;
        int64_t we = ws + kw < w + pw ? ws + kw : w + pw;
        return (he - hs) * (we - ws);
    }
    int64_t h0, h1, w0, w1;
    cux_pool_window(oy, sh, ph, kh, h, &h0, &h1);
    cux_pool_window(ox, sw, pw, kw, w, &w0, &w1);
    return (h1 - h0) * (w1 - w0);
}

/* ---- reflection padding (ops.md: the edge is not repeated) ---- */

/* The source index of padded position i (in input coordinates, may be negative). */
CUX_HD int64_t cux_reflect(int64_t i, int64_t size)
{
    if (i < 0)
        return -i;
    if (i >= size)
        return 2 * (size - 1) - i;
    return i;
}

/* The padded positions (0 <= j < size + 2*pad) that copy input position i: j = i + pad always,
 * j = pad - i for 1 <= i <= pad (the leading reflection) and j = 2(size-1) - i + pad for
 * size-1-pad <= i <= size-2 (the trailing one). Writes them to out[0..) and returns how many
 * (1 to 3). Needs 0 <= pad < size (ops.md). */
CUX_HD int cux_reflect_sources(int64_t i, int64_t size, int64_t pad, int64_t out[3])
{
    int n = 0;
    out[n++] = i + pad;
    if (i >= 1 && i <= pad)
        out[n++] = pad - i;
    if (i >= size - 1 - pad && i <= size - 2)
        out[n++] = 2 * (size - 1) - i + pad;
    return n;
}

/* ---- channel reductions (batch norm, instance norm, bias gradients) ----
 * A [N, C, S] tensor (S = H*W) is summed per channel (batch norm, bias gradients: over n and
 * s) or per (n, c) (instance norm: over s). Both are done in two passes: the first writes
 * partial sums of chunks of at most CUX_CHUNK rows of one image, `cux_chunks(S)` per image,
 * into scratch laid out [N][chunks][C] (two doubles each); the second combines the partials of
 * each channel (or each (n, c)). */
#define CUX_CHUNK 256

CUX_HD int64_t cux_chunks(int64_t s)
{
    return (s + CUX_CHUNK - 1) / CUX_CHUNK;
}

/* Scratch bytes of a channel reduction of a [N, C, S] tensor: two doubles per partial. */
CUX_HD uint64_t cux_reduce_scratch(int64_t n, int64_t c, int64_t s)
{
    return (uint64_t)(n * cux_chunks(s) * c) * 2u * sizeof(double);
}

/* Coefficients the finalising pass of a norm leaves per group for the element pass (floats;
 * cux_norm_coeffs and cux_norm_bwd_coeffs use 4 and 5). */
#define CUX_COEFF_FLOATS 8

/* Workspace of a norm (or bias gradient) over a [N, C, S] tensor: the partial sums, then the
 * coefficients of every (n, c). */
CUX_HD uint64_t cux_norm_scratch(int64_t n, int64_t c, int64_t s)
{
    return cux_reduce_scratch(n, c, s) + (uint64_t)(n * c) * CUX_COEFF_FLOATS * sizeof(float);
}

/* ---- whole-tensor reductions (MSE and L1 losses, cross-entropy's mean) ---- */
#define CUX_SUM_THREADS 256
#define CUX_SUM_MAX_BLOCKS 1024

/* Blocks of the first pass of a sum over `count` elements (each writes one double). */
CUX_HD int64_t cux_sum_blocks(int64_t count)
{
    int64_t b = (count + CUX_SUM_THREADS * 4 - 1) / (CUX_SUM_THREADS * 4);
    return b < 1 ? 1 : b > CUX_SUM_MAX_BLOCKS ? CUX_SUM_MAX_BLOCKS : b;
}

#endif
