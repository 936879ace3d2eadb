/* Workspace sizes of the op-set-3 kernels of k_seq.cu and of the op-set-3 path of the softmax
 * cross-entropy (k_loss.cu), as inline functions that compile as C (the planner sizes the
 * executable's workspace with them) and as CUDA C++ (the kernels lay the workspace out with the
 * same numbers). Every reduction that crosses rows writes per-block partials here and sums them
 * in a fixed order, so that results do not depend on scheduling (no float atomics).
 *
 * Kernels that need none: SOFTMAX, SOFTMAX_BWD and LN_FWD (one warp per row, the row's sums in
 * registers), CLIP_NORM, CLIP_APPLY. */
#ifndef XPB_CUX_SEQ_MATH_H
#define XPB_CUX_SEQ_MATH_H

#include <stdint.h>

#include "kernels/index_math.h" /* CUX_HD, cux_sum_blocks */

/* ---- LN_BWD: dgamma and dbeta are column sums over the rows ----
 * The first pass sums chunks of at most CUX_LN_ROWS rows per column into two doubles (dgamma's
 * and dbeta's partial), laid out [chunk][2][d]; the second adds the chunks of each column in
 * chunk order. */
#define CUX_LN_ROWS 256

/* Row chunks of a layer norm backward over `rows` rows. */
CUX_HD int64_t cux_ln_chunks(int64_t rows)
{
    int64_t c = (rows + CUX_LN_ROWS - 1) / CUX_LN_ROWS;
    return c < 1 ? 1 : c;
}

/* Workspace bytes of LN_BWD: rows = numel(x) / d, d = x's last dim. */
CUX_HD uint64_t cux_ln_bwd_scratch(int64_t rows, int64_t d)
{
    return (uint64_t)(cux_ln_chunks(rows) * d) * 2u * sizeof(double);
}

/* ---- CLIP_SUMSQ: the sum of squares of one gradient ----
 * cux_sum_blocks(n) blocks each write one double; one block adds them in order to the
 * accumulator (a double in CLIP_SUMSQ's out0 buffer, not in the workspace). */

/* Workspace bytes of CLIP_SUMSQ over a gradient of n = numel elements. */
CUX_HD uint64_t cux_clip_scratch(int64_t n)
{
    return (uint64_t)cux_sum_blocks(n) * sizeof(double);
}

/* ---- SOFTMAX_XENT ----
 * XENT: one double per row (each row's loss term), summed by one block (as op set 1).
 * XENT_BWD: with XPB_INDEX_IGNORE, one double holding the number of rows not ignored (the mean's
 * divisor), counted by one block before the element pass; without it nothing is needed. */

/* Workspace bytes of XENT over logits [rows, K]. */
CUX_HD uint64_t cux_xent_scratch(int64_t rows)
{
    return (uint64_t)rows * sizeof(double);
}

/* Workspace bytes of XENT_BWD; `ignore` is whether the op sets XPB_INDEX_IGNORE. */
CUX_HD uint64_t cux_xent_bwd_scratch(int ignore)
{
    return ignore ? (uint64_t)sizeof(double) : 0u;
}

#endif
