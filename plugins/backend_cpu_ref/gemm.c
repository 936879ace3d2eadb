/* Matrix multiply for the reference kernels: C = alpha * op(A) op(B) + beta * C, row-major
 * (and the bias rows that go with it).
 *
 * Cache-blocked in the classic way (GotoBLAS, simplified): C is computed in tiles of
 * BLOCK_M x BLOCK_N, the shared dimension in slices of BLOCK_K. For each slice, op(B) and
 * op(A) are copied ("packed") into small contiguous buffers, which turns all four transpose
 * cases into the same unit-stride inner loop and keeps the working set in cache. The inner
 * loop is a plain axpy over a row of C that compilers vectorise. Accumulation is fp32, like
 * PyTorch's CPU matmul. */
#include "ref.h"

enum {
    BLOCK_M = 64,  /* rows of C per tile (packed A: BLOCK_M x BLOCK_K) */
    BLOCK_N = 128, /* columns of C per tile (packed B: BLOCK_K x BLOCK_N) */
    BLOCK_K = 64,  /* shared-dimension slice */
};

/* Element (row, col) of op(M) for a row-major M with row stride ld. */
static float element(const float *m, int64_t ld, int trans, int64_t row, int64_t col)
{
    return trans ? m[col * ld + row] : m[row * ld + col];
}

/* C[m,n] *= beta; beta == 0 overwrites (so that NaN or garbage in C does not survive, as in
 * BLAS). */
static void scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++) {
        float *row = c + i * ldc;
        for (int64_t j = 0; j < n; j++)
            row[j] = beta == 0.0f ? 0.0f : beta * row[j];
    }
}

void ref_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
              int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (beta != 1.0f)
        scale_c(m, n, beta, c, ldc);
    if (k <= 0 || alpha == 0.0f)
        return;

    float packed_a[BLOCK_M * BLOCK_K];
    float packed_b[BLOCK_K * BLOCK_N];

    for (int64_t j0 = 0; j0 < n; j0 += BLOCK_N) {
        int64_t nb = n - j0 < BLOCK_N ? n - j0 : BLOCK_N;
        for (int64_t p0 = 0; p0 < k; p0 += BLOCK_K) {
            int64_t kb = k - p0 < BLOCK_K ? k - p0 : BLOCK_K;

            /* packed_b[p][j] = op(B)[p0 + p][j0 + j] */
            for (int64_t p = 0; p < kb; p++)
                for (int64_t j = 0; j < nb; j++)
                    packed_b[p * nb + j] = element(b, ldb, trans_b, p0 + p, j0 + j);

            for (int64_t i0 = 0; i0 < m; i0 += BLOCK_M) {
                int64_t mb = m - i0 < BLOCK_M ? m - i0 : BLOCK_M;

                /* packed_a[i][p] = alpha * op(A)[i0 + i][p0 + p] */
                for (int64_t i = 0; i < mb; i++)
                    for (int64_t p = 0; p < kb; p++)
                        packed_a[i * kb + p] = alpha * element(a, lda, trans_a, i0 + i, p0 + p);

                /* C tile += packed_a * packed_b */
                for (int64_t i = 0; i < mb; i++) {
                    float *c_row = c + (i0 + i) * ldc + j0;
                    for (int64_t p = 0; p < kb; p++) {
                        float a_ip = packed_a[i * kb + p];
                        const float *b_row = packed_b + p * nb;
                        for (int64_t j = 0; j < nb; j++)
                            c_row[j] += a_ip * b_row[j];
                    }
                }
            }
        }
    }
}

void ref_add_bias_rows(float *y, int64_t m, int64_t n, const float *bias)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            y[i * n + j] += bias[j];
}

void ref_sum_rows(float *out, const float *x, int64_t m, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        double sum = 0.0;
        for (int64_t i = 0; i < m; i++)
            sum += x[i * n + j];
        out[j] = (float)sum;
    }
}
