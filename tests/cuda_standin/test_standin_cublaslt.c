/* cublasLtMatmul of the stand-in against naive loops: every combination of transposes with every
 * epilogue (ReLU, bias, GELU, their bias-gradient and auxiliary forms, the backward DRELU and
 * DGELU from the forward pass's aux output), row-major layouts, leading dimensions larger than
 * the rows, strided batches, fp16 inputs, TF32 rounding; and the refusals: mismatched shapes,
 * leading dimensions, attribute sizes, type combinations, missing epilogue pointers, and a
 * workspace smaller than the algorithm's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "xpbsi/standin.h"

#define LT_OK(x) assert_int_equal((int)(x), (int)CUBLAS_STATUS_SUCCESS)

static cublasLtHandle_t lt;

static int setup(void **state)
{
    (void)state;
    return cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cublasLtDestroy(lt) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static float rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(*s >> 40) * 0x1p-24f * 2.0f - 1.0f;
}

/* A matrix: stored rows x cols (col-major unless row), leading dimension ld, `batch` of them
 * `stride` elements apart; its host values and device copy (fp32). */
struct mat {
    int64_t rows, cols, ld, batch, stride;
    int row;
    float *h, *d;
    cublasLtMatrixLayout_t layout;
};

static int64_t at(const struct mat *m, int64_t b, int64_t r, int64_t c)
{
    return b * m->stride + (m->row ? r * m->ld + c : r + c * m->ld);
}

static struct mat make_mat(int64_t rows, int64_t cols, int64_t ld, int row, int64_t batch,
                           uint64_t seed)
{
    struct mat m = {rows, cols, ld, batch, 0, row, NULL, NULL, NULL};
    m.stride = (row ? rows * ld : cols * ld) + 3;
    size_t n = (size_t)(m.stride * batch);
    m.h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        m.h[i] = rnd(&seed);
    cudaMalloc((void **)&m.d, n * sizeof(float));
    cudaMemcpy(m.d, m.h, n * sizeof(float), cudaMemcpyHostToDevice);
    LT_OK(cublasLtMatrixLayoutCreate(&m.layout, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld));
    int32_t order = row ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL, b32 = (int32_t)batch;
    LT_OK(cublasLtMatrixLayoutSetAttribute(m.layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                           sizeof order));
    LT_OK(cublasLtMatrixLayoutSetAttribute(m.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b32,
                                           sizeof b32));
    LT_OK(cublasLtMatrixLayoutSetAttribute(m.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                           &m.stride, sizeof m.stride));
    return m;
}

static void free_mat(struct mat *m)
{
    free(m->h);
    cudaFree(m->d);
    cublasLtMatrixLayoutDestroy(m->layout);
}

static float *fetch(const struct mat *m)
{
    size_t n = (size_t)(m->stride * m->batch);
    float *h = malloc(n * sizeof(float));
    cudaMemcpy(h, m->d, n * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
}

static double gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double gelu_grad(double x)
{
    double u = 0.7978845608028654 * (x + 0.044715 * x * x * x), t = tanh(u);
    return 0.5 * (1.0 + t) +
           0.5 * x * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x);
}

static cublasLtMatmulDesc_t make_desc(cublasComputeType_t ct, int ta, int tb, uint32_t epi)
{
    cublasLtMatmulDesc_t d = NULL;
    LT_OK(cublasLtMatmulDescCreate(&d, ct, CUDA_R_32F));
    int32_t a = ta ? CUBLAS_OP_T : CUBLAS_OP_N, b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &a, sizeof a));
    LT_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &b, sizeof b));
    LT_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    return d;
}

static void set_ptr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *p)
{
    LT_OK(cublasLtMatmulDescSetAttribute(d, a, &p, sizeof p));
}

/* D = alpha op(A) op(B) + beta C with epilogue epi, checked against the naive loops; for the
 * aux epilogues the aux buffer (ldaux) is given in and out. */
static void check_one(int ta, int tb, uint32_t epi, int row, int64_t batch, float *aux,
                      int64_t ldaux)
{
    const int64_t m = 5, n = 7, k = 3;
    float alpha = 0.75f, beta = row ? 0.0f : 0.5f;
    struct mat A = ta ? make_mat(k, m, row ? m + 1 : k + 2, row, batch, 1)
                      : make_mat(m, k, row ? k : m + 1, row, batch, 1);
    struct mat B = tb ? make_mat(n, k, row ? k + 1 : n, row, batch, 2)
                      : make_mat(k, n, row ? n + 2 : k, row, batch, 2);
    struct mat C = make_mat(m, n, row ? n : m + 3, row, batch, 3),
               D = make_mat(m, n, row ? n : m + 3, row, batch, 4);
    cublasLtMatmulDesc_t desc = make_desc(CUBLAS_COMPUTE_32F, ta, tb, epi);
    int64_t blen = epi == CUBLASLT_EPILOGUE_BGRADB ? n : m;
    float *bias_h = malloc((size_t)(blen * batch) * sizeof(float)), *bias_d = NULL;
    uint64_t seed = 9;
    for (int64_t i = 0; i < blen * batch; i++)
        bias_h[i] = rnd(&seed);
    cudaMalloc((void **)&bias_d, (size_t)(blen * batch) * sizeof(float));
    cudaMemcpy(bias_d, bias_h, (size_t)(blen * batch) * sizeof(float), cudaMemcpyHostToDevice);
    set_ptr(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_d);
    LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &blen,
                                         sizeof blen));
    if (aux) {
        int64_t aux_stride = ldaux * n;
        set_ptr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
        LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ldaux,
                                             sizeof ldaux));
        LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                                             &aux_stride, sizeof aux_stride));
    }
    LT_OK(cublasLtMatmul(lt, desc, &alpha, A.d, A.layout, B.d, B.layout, &beta, C.d, C.layout, D.d,
                         D.layout, NULL, NULL, 0, 0));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    float *got = fetch(&D), *bgrad = malloc((size_t)(blen * batch) * sizeof(float));
    cudaMemcpy(bgrad, bias_d, (size_t)(blen * batch) * sizeof(float), cudaMemcpyDeviceToHost);
    for (int64_t b = 0; b < batch; b++) {
        double sums[8] = {0};
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double t = 0.0;
                for (int64_t q = 0; q < k; q++)
                    t += (double)A.h[ta ? at(&A, b, q, i) : at(&A, b, i, q)] *
                         B.h[tb ? at(&B, b, j, q) : at(&B, b, q, j)];
                t = alpha * t + beta * C.h[at(&C, b, i, j)];
                if (epi & CUBLASLT_EPILOGUE_BIAS)
                    t += bias_h[b * blen + i];
                int64_t bit = b * ldaux * n + j * ldaux + i;
                unsigned char mask = aux ? ((unsigned char *)aux)[bit / 8] : 0;
                if (epi == CUBLASLT_EPILOGUE_RELU || epi == CUBLASLT_EPILOGUE_RELU_BIAS ||
                    epi == CUBLASLT_EPILOGUE_RELU_AUX_BIAS)
                    t = t > 0 ? t : 0;
                else if (epi == CUBLASLT_EPILOGUE_GELU || epi == CUBLASLT_EPILOGUE_GELU_BIAS ||
                         epi == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
                    t = gelu(t);
                else if (epi == CUBLASLT_EPILOGUE_DRELU || epi == CUBLASLT_EPILOGUE_DRELU_BGRAD)
                    t = (mask >> (bit % 8)) & 1 ? t : 0;
                else if (epi == CUBLASLT_EPILOGUE_DGELU || epi == CUBLASLT_EPILOGUE_DGELU_BGRAD)
                    t *= gelu_grad(aux[b * ldaux * n + j * ldaux + i]);
                if (epi == CUBLASLT_EPILOGUE_DRELU_BGRAD || epi == CUBLASLT_EPILOGUE_DGELU_BGRAD)
                    sums[i] += t;
                double g = got[at(&D, b, i, j)];
                if (fabs(g - t) > 1e-5 * (1 + fabs(t))) {
                    fprintf(stderr,
                            "ta %d tb %d epilogue %u row %d batch %ld: D(%ld,%ld) %.7g, "
                            "want %.7g\n",
                            ta, tb, epi, row, (long)b, (long)i, (long)j, g, t);
                    fail();
                }
            }
        for (int64_t r = 0; r < blen && (epi & (16 | 256 | 512)); r++) {
            double want = 0.0;
            if (epi & 16)
                want = sums[r];
            for (int64_t q = 0; q < k && epi == CUBLASLT_EPILOGUE_BGRADA; q++)
                want += A.h[ta ? at(&A, b, q, r) : at(&A, b, r, q)];
            for (int64_t q = 0; q < k && epi == CUBLASLT_EPILOGUE_BGRADB; q++)
                want += B.h[tb ? at(&B, b, r, q) : at(&B, b, q, r)];
            assert_true(fabs(bgrad[b * blen + r] - want) < 1e-5 * (1 + fabs(want)));
        }
    }
    free(got);
    free(bgrad);
    free(bias_h);
    cudaFree(bias_d);
    cublasLtMatmulDescDestroy(desc);
    free_mat(&A);
    free_mat(&B);
    free_mat(&C);
    free_mat(&D);
}

static void test_transposes_and_epilogues(void **state)
{
    (void)state;
    const uint32_t epis[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_RELU,
                             CUBLASLT_EPILOGUE_BIAS,    CUBLASLT_EPILOGUE_RELU_BIAS,
                             CUBLASLT_EPILOGUE_GELU,    CUBLASLT_EPILOGUE_GELU_BIAS,
                             CUBLASLT_EPILOGUE_BGRADA,  CUBLASLT_EPILOGUE_BGRADB};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t e = 0; e < sizeof epis / sizeof epis[0]; e++) {
                check_one(ta, tb, epis[e], 0, 1, NULL, 0);
                check_one(ta, tb, epis[e], 0, 3, NULL, 0);
            }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            check_one(ta, tb, CUBLASLT_EPILOGUE_DEFAULT, 1, 2, NULL, 0); /* row-major */
}

/* The forward epilogue's aux output feeds the backward one. */
static void test_aux_roundtrip(void **state)
{
    (void)state;
    const int64_t ld_bits = 128, ld_gelu = 8;
    unsigned char *mask = NULL;
    float *pre = NULL;
    cudaMallocHost((void **)&mask, (size_t)(2 * ld_bits * 7 / 8)); /* pinned: device-visible */
    cudaMallocHost((void **)&pre, (size_t)(2 * ld_gelu * 7) * sizeof(float));
    for (int ta = 0; ta < 2; ta++) {
        check_one(ta, 1, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, 0, 2, (float *)mask, ld_bits);
        check_one(ta, 0, CUBLASLT_EPILOGUE_DRELU, 0, 2, (float *)mask, ld_bits);
        check_one(ta, 0, CUBLASLT_EPILOGUE_DRELU_BGRAD, 0, 2, (float *)mask, ld_bits);
        check_one(ta, 1, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 0, 2, pre, ld_gelu);
        check_one(ta, 0, CUBLASLT_EPILOGUE_DGELU_BGRAD, 0, 2, pre, ld_gelu);
    }
    cudaFreeHost(mask);
    cudaFreeHost(pre);
}

static cublasStatus_t simple(cublasLtMatmulDesc_t desc, struct mat *A, struct mat *B, struct mat *D,
                             void *ws, size_t wsize, const cublasLtMatmulAlgo_t *algo)
{
    float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(lt, desc, &one, A->d, A->layout, B->d, B->layout, &zero, D->d, D->layout,
                          D->d, D->layout, algo, ws, wsize, 0);
}

static void test_heuristics_and_workspace(void **state)
{
    (void)state;
    struct mat A = make_mat(4, 6, 4, 0, 1, 1), B = make_mat(6, 5, 6, 0, 1, 2),
               D = make_mat(4, 5, 4, 0, 1, 3);
    cublasLtMatmulDesc_t desc = make_desc(CUBLAS_COMPUTE_32F, 0, 0, CUBLASLT_EPILOGUE_DEFAULT);
    cublasLtMatmulPreference_t pref = NULL;
    LT_OK(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t res[4];
    int n = 0;
    LT_OK(cublasLtMatmulAlgoGetHeuristic(lt, desc, A.layout, B.layout, D.layout, D.layout, pref, 4,
                                         res, &n));
    assert_int_equal(n, 1); /* no workspace allowed (the default): one algorithm */
    assert_int_equal(res[0].workspaceSize, 0);
    uint64_t max_ws = 1 << 20;
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &max_ws, sizeof max_ws));
    LT_OK(cublasLtMatmulAlgoGetHeuristic(lt, desc, A.layout, B.layout, D.layout, D.layout, pref, 4,
                                         res, &n));
    assert_int_equal(n, 2);
    assert_true(res[0].workspaceSize > 0);
    void *ws = NULL;
    cudaMalloc(&ws, res[0].workspaceSize);
    assert_int_equal(simple(desc, &A, &B, &D, ws, 100, &res[0].algo), CUBLAS_STATUS_INVALID_VALUE);
    LT_OK(simple(desc, &A, &B, &D, ws, res[0].workspaceSize, &res[0].algo));
    LT_OK(simple(desc, &A, &B, &D, NULL, 0, &res[1].algo));
    assert_int_equal(cublasLtMatmulAlgoGetHeuristic(lt, desc, A.layout, B.layout, D.layout,
                                                    D.layout, pref, 0, res, &n),
                     CUBLAS_STATUS_INVALID_VALUE);
    cudaFree(ws);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatmulDescDestroy(desc);
    free_mat(&A);
    free_mat(&B);
    free_mat(&D);
}

static void test_refusals(void **state)
{
    (void)state;
    struct mat A = make_mat(4, 6, 4, 0, 1, 1), B = make_mat(6, 5, 6, 0, 1, 2),
               D = make_mat(4, 5, 4, 0, 1, 3);
    cublasLtMatmulDesc_t desc = make_desc(CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT);
    /* op(A) = A^T is 6 x 4: k does not match */
    assert_int_equal(simple(desc, &A, &B, &D, NULL, 0, NULL), CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatmulDescDestroy(desc);
    desc = make_desc(CUBLAS_COMPUTE_32F, 0, 0, CUBLASLT_EPILOGUE_BIAS);
    assert_int_equal(simple(desc, &A, &B, &D, NULL, 0, NULL), CUBLAS_STATUS_INVALID_VALUE);
    uint32_t epi = CUBLASLT_EPILOGUE_RELU_AUX;
    LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    int64_t ld = 64; /* the ReLU mask's leading dimension must be a multiple of 128 */
    set_ptr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, D.d);
    LT_OK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
    assert_int_equal(simple(desc, &A, &B, &D, NULL, 0, NULL), CUBLAS_STATUS_INVALID_VALUE);
    int32_t small = 1; /* attribute sizes are checked */
    assert_int_equal(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &small, 4),
        CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatmulDescDestroy(desc);
    /* a leading dimension below the rows */
    int64_t short_ld = 3;
    LT_OK(cublasLtMatrixLayoutSetAttribute(A.layout, CUBLASLT_MATRIX_LAYOUT_LD, &short_ld,
                                           sizeof short_ld));
    desc = make_desc(CUBLAS_COMPUTE_32F, 0, 0, CUBLASLT_EPILOGUE_DEFAULT);
    assert_int_equal(simple(desc, &A, &B, &D, NULL, 0, NULL), CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatmulDescDestroy(desc);
    /* fp16 A with fp32 B: not a supported combination */
    uint32_t half = CUDA_R_16F;
    int64_t ld4 = 4;
    LT_OK(cublasLtMatrixLayoutSetAttribute(A.layout, CUBLASLT_MATRIX_LAYOUT_LD, &ld4, sizeof ld4));
    LT_OK(cublasLtMatrixLayoutSetAttribute(A.layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &half,
                                           sizeof half));
    desc = make_desc(CUBLAS_COMPUTE_32F, 0, 0, CUBLASLT_EPILOGUE_DEFAULT);
    assert_int_equal(simple(desc, &A, &B, &D, NULL, 0, NULL), CUBLAS_STATUS_NOT_SUPPORTED);
    cublasLtMatmulDescDestroy(desc);
    free_mat(&A);
    free_mat(&B);
    free_mat(&D);
}

/* fp16 inputs with fp32 output, and FAST_TF32 rounding fp32 inputs from sm_80. */
static void test_input_precisions(void **state)
{
    (void)state;
    const int k = 64;
    float a[64], b[64], one = 1.0f, zero = 0.0f, out = 0.0f;
    uint16_t ah[64], bh[64];
    double exact = 0.0;
    for (int i = 0; i < k; i++) {
        a[i] = 1.0f + 0x1p-12f; /* TF32 rounds it down to 1 */
        b[i] = 1.0f;
        exact += a[i];
        ah[i] = 0x3C00; /* 1.0 in fp16 */
        bh[i] = 0x3C00;
    }
    float *da, *db, *dd;
    uint16_t *dah, *dbh;
    cudaMalloc((void **)&da, sizeof a);
    cudaMalloc((void **)&db, sizeof b);
    cudaMalloc((void **)&dd, sizeof(float));
    cudaMalloc((void **)&dah, sizeof ah);
    cudaMalloc((void **)&dbh, sizeof bh);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cudaMemcpy(dah, ah, sizeof ah, cudaMemcpyHostToDevice);
    cudaMemcpy(dbh, bh, sizeof bh, cudaMemcpyHostToDevice);
    cublasLtMatrixLayout_t la, lb, ld, lah, lbh;
    LT_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 1, k, 1));
    LT_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, 1, k));
    LT_OK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, 1, 1, 1));
    LT_OK(cublasLtMatrixLayoutCreate(&lah, CUDA_R_16F, 1, k, 1));
    LT_OK(cublasLtMatrixLayoutCreate(&lbh, CUDA_R_16F, k, 1, k));
    cublasLtMatmulDesc_t exact_d = make_desc(CUBLAS_COMPUTE_32F, 0, 0, CUBLASLT_EPILOGUE_DEFAULT),
                         tf32_d = make_desc(CUBLAS_COMPUTE_32F_FAST_TF32, 0, 0,
                                            CUBLASLT_EPILOGUE_DEFAULT);
    LT_OK(
        cublasLtMatmul(lt, exact_d, &one, da, la, db, lb, &zero, dd, ld, dd, ld, NULL, NULL, 0, 0));
    cudaMemcpy(&out, dd, sizeof out, cudaMemcpyDeviceToHost);
    assert_true(fabs(out - exact) < 1e-5);
    LT_OK(
        cublasLtMatmul(lt, tf32_d, &one, da, la, db, lb, &zero, dd, ld, dd, ld, NULL, NULL, 0, 0));
    cudaMemcpy(&out, dd, sizeof out, cudaMemcpyDeviceToHost);
    if (xpbsi_compute_capability() >= 80)
        assert_true(fabs(out - exact) > 1e-3); /* the 2^-12 steps are lost to TF32 */
    else
        assert_true(fabs(out - exact) < 1e-5);
    LT_OK(cublasLtMatmul(lt, exact_d, &one, dah, lah, dbh, lbh, &zero, dd, ld, dd, ld, NULL, NULL,
                         0, 0));
    cudaMemcpy(&out, dd, sizeof out, cudaMemcpyDeviceToHost);
    assert_true(out == (float)k);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dd);
    cudaFree(dah);
    cudaFree(dbh);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatrixLayoutDestroy(lah);
    cublasLtMatrixLayoutDestroy(lbh);
    cublasLtMatmulDescDestroy(exact_d);
    cublasLtMatmulDescDestroy(tf32_d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transposes_and_epilogues), cmocka_unit_test(test_aux_roundtrip),
        cmocka_unit_test(test_heuristics_and_workspace), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_input_precisions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
