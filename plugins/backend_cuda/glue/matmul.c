/* Linear layers on cuBLASLt. The program's matrices are row-major; cuBLASLt's are column-major,
 * and a row-major M is the column-major M^T, so each op is written for the transposes:
 *
 *   LINEAR              y[N,O] = x[N,I] w[O,I]^T   ->  y^T[O,N] = op(w)[O,I] x^T[I,N],  op = T
 *   LINEAR_BWD_DATA     dx[N,I] = dy[N,O] w[O,I]   ->  dx^T[I,N] = w^T[I,O] dy^T[O,N]
 *   LINEAR_BWD_WEIGHTS  dw[O,I] = dy^T x            ->  dw^T[I,O] = x^T[I,N] op(dy^T)[N,O], op = T
 *
 * (m, n, k) = (O, N, I), (I, N, O), (I, O, N). Inputs are read in the policy's type, the output
 * is written in its storage type (fp32 outputs from 16-bit inputs are one of cuBLASLt's
 * documented type combinations), accumulation is fp32, and TF32 is used only under the tf32
 * policy (CUBLAS_COMPUTE_32F_FAST_TF32). LINEAR's bias and a ReLU are cuBLASLt epilogues
 * (BIAS, RELU, RELU_BIAS); LeakyReLU and tanh, which cuBLASLt has not, run as the own epilogue
 * kernel after the matmul. Under the 16-bit policies the heuristics may only propose split-K
 * reductions in the compute type (fp32), never in the 16-bit output type (plan/engines.c). The
 * algorithm is chosen among cuBLASLt's heuristic answers by timing them on the real operands
 * once per shape and process (plan/tune_cache.h). */
#include <stdio.h>
#include <string.h>

#include "glue/arena.h"
#include "glue/matmul.h"
#include "glue/status.h"
#include "glue/tuning.h"
#include "plan/engines.h"
#include "plan/plan_error.h"
#include "plan/tune_cache.h"

#define CUX_MM_ALGOS 8
#define CUX_MM_WORKSPACE ((size_t)32 << 20)
#define CUX_MM_RUNS 3

/* plan/engines.h restates these so that it needs no cuBLASLt header. */
_Static_assert(CUX_LT_REDUCTION_COMPUTE_TYPE == (int)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
               "compute-type reduction");
_Static_assert(CUX_LT_REDUCTION_ALL == (int)CUBLASLT_REDUCTION_SCHEME_MASK, "every reduction");

static cudaDataType_t cuda_type(int type)
{
    switch (type) {
    case CUX_F16:
        return CUDA_R_16F;
    case CUX_BF16:
        return CUDA_R_16BF;
    default:
        return CUDA_R_32F;
    }
}

typedef struct mm_key {
    int32_t kind, epilogue, precision, ta, tb, td;
    int64_t m, n, k;
} mm_key;

typedef struct mm_choice {
    cublasLtMatmulAlgo_t algo;
    uint64_t workspace;
} mm_choice;

static float alpha_one = 1.0f, beta_zero = 0.0f;

/* Seconds of one matmul with `algo` (best of CUX_MM_RUNS after a warm-up); < 0 on failure. */
static double time_algo(xpb_executable *exe, cux_mm_run *m, const cublasLtMatmulAlgo_t *algo,
                        void *ws, size_t ws_bytes)
{
    cudaStream_t st = exe->be->stream;
    cudaEvent_t e0, e1;
    double best = -1.0;
    if (cudaEventCreate(&e0) != cudaSuccess)
        return -1.0;
    if (cudaEventCreate(&e1) != cudaSuccess)
        goto destroy_e0;
    for (int i = 0; i <= CUX_MM_RUNS; i++) {
        float ms = 0.0f;
        if (cudaEventRecord(e0, st) != cudaSuccess ||
            cublasLtMatmul(exe->be->lt, m->desc, &alpha_one, m->pa, m->a, m->pb, m->b, &beta_zero,
                           m->pd, m->d, m->pd, m->d, algo, ws, ws_bytes,
                           st) != CUBLAS_STATUS_SUCCESS ||
            cudaEventRecord(e1, st) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess) {
            best = -1.0;
            break;
        }
        if (i > 0 && (best < 0.0 || ms * 1e-3 < best)) /* run 0 is the warm-up */
            best = ms * 1e-3;
    }
    cux_released(cudaEventDestroy(e1), "tuning event");
destroy_e0:
    cux_released(cudaEventDestroy(e0), "tuning event");
    (void)cudaGetLastError(); /* an algorithm that failed to run is just not chosen */
    return best;
}

void cux_mm_free(cux_mm_run *m)
{
    if (m->d)
        cux_released_lt(cublasLtMatrixLayoutDestroy(m->d), "matmul layout");
    if (m->b)
        cux_released_lt(cublasLtMatrixLayoutDestroy(m->b), "matmul layout");
    if (m->a)
        cux_released_lt(cublasLtMatrixLayoutDestroy(m->a), "matmul layout");
    if (m->desc)
        cux_released_lt(cublasLtMatmulDescDestroy(m->desc), "matmul descriptor");
    memset(m, 0, sizeof *m);
}

/* Creates the descriptor and layouts of step `s` with `epilogue` (and the bias pointer). */
static xpb_status describe(xpb_executable *exe, const cux_step *s, cublasLtEpilogue_t epilogue,
                           cux_mm_run *m, mm_key *key)
{
    const xpb_op *op = xpb_program_op(exe->prog, s->op);
    /* x, w are the op's inputs 0 and 1: (x, w), (dy, w) or (dy, x) */
    const cux_view *x = &s->in[0], *w = &s->in[1], *y = &s->out[0];
    int64_t rows = x->dims[0]; /* N for LINEAR/_BWD_DATA (x = x or dy) and _BWD_WEIGHTS (x = dy) */
    int64_t M, N, K, lda, ldb;
    cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
    const cux_view *A, *B;
    int64_t a_rows, a_cols, b_rows, b_cols;
    switch (op->kind) {
    case XPB_OP_LINEAR: /* x[N,I], w[O,I] */
        M = w->dims[0], N = rows, K = x->dims[1];
        A = w, ta = CUBLAS_OP_T, a_rows = K, a_cols = M, lda = K;
        B = x, b_rows = K, b_cols = N, ldb = K;
        break;
    case XPB_OP_LINEAR_BWD_DATA: /* dy[N,O], w[O,I] */
        M = w->dims[1], N = rows, K = w->dims[0];
        A = w, a_rows = M, a_cols = K, lda = M;
        B = x, b_rows = K, b_cols = N, ldb = K;
        break;
    default: /* LINEAR_BWD_WEIGHTS: dy[N,O] (in 0), x[N,I] (in 1) -> dw[O,I] */
        M = w->dims[1], N = x->dims[1], K = rows;
        A = w, a_rows = M, a_cols = K, lda = M;
        B = x, tb = CUBLAS_OP_T, b_rows = N, b_cols = K, ldb = N;
        break;
    }
    cublasComputeType_t compute = exe->plan->opt.precision == XPB_PRECISION_TF32
                                      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                      : CUBLAS_COMPUTE_32F;
    uint32_t o = s->op;
    CUX_CUBLAS(exe, o, cublasLtMatmulDescCreate(&m->desc, compute, CUDA_R_32F),
               "matmul descriptor");
    CUX_CUBLAS(exe, o,
               cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
               "matmul transa");
    CUX_CUBLAS(exe, o,
               cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
               "matmul transb");
    CUX_CUBLAS(exe, o,
               cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof epilogue),
               "matmul epilogue");
    if (epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) {
        const void *bias = cux_ptr(exe, s->bias.buf);
        CUX_CUBLAS(exe, o,
                   cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                  sizeof bias),
                   "matmul bias");
    }
    CUX_CUBLAS(exe, o,
               cublasLtMatrixLayoutCreate(&m->a, cuda_type(A->type), (uint64_t)a_rows,
                                          (uint64_t)a_cols, lda),
               "matmul layout A");
    CUX_CUBLAS(exe, o,
               cublasLtMatrixLayoutCreate(&m->b, cuda_type(B->type), (uint64_t)b_rows,
                                          (uint64_t)b_cols, ldb),
               "matmul layout B");
    CUX_CUBLAS(exe, o,
               cublasLtMatrixLayoutCreate(&m->d, cuda_type(y->type), (uint64_t)M, (uint64_t)N, M),
               "matmul layout D");
    m->pa = cux_ptr(exe, A->buf);
    m->pb = cux_ptr(exe, B->buf);
    m->pd = cux_ptr(exe, y->buf);
    memset(key, 0, sizeof *key);
    key->kind = (int32_t)op->kind;
    key->epilogue = (int32_t)epilogue;
    key->precision = (int32_t)exe->plan->opt.precision;
    key->ta = A->type;
    key->tb = B->type;
    key->td = y->type;
    key->m = M;
    key->n = N;
    key->k = K;
    return XPB_OK;
}

/* The cuBLASLt epilogue step `s` asks for, in the fused form (`fused` 1) or none. */
static cublasLtEpilogue_t epilogue_of(const cux_step *s, int fused)
{
    int bias = s->bias.buf != CUX_NONE, relu = s->act == CUX_ACT_RELU;
    if (!fused)
        return CUBLASLT_EPILOGUE_DEFAULT;
    if (bias)
        return relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    return relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
}

xpb_status cux_mm_prepare(xpb_executable *exe, uint32_t g, void **tune_ws, size_t *tune_bytes)
{
    cux_run_step *rs = &exe->steps[g];
    const cux_step *s = rs->step;
    cux_mm_run *m = &rs->mm;
    uint32_t o = s->op;
    cublasLtMatmulHeuristicResult_t res[CUX_MM_ALGOS];
    int found = 0;
    mm_key key;
    xpb_status st;
    /* with cuBLASLt's epilogue when it has one for the step, else plain and the own kernel */
    for (int fused = 1; fused >= 0 && !found; fused--) {
        cublasLtEpilogue_t ep = epilogue_of(s, fused);
        if (!fused && m->desc)
            cux_mm_free(m);
        if ((st = describe(exe, s, ep, m, &key)) != XPB_OK)
            return st;
        cublasLtMatmulPreference_t pref;
        size_t cap = CUX_MM_WORKSPACE;
        CUX_CUBLAS(exe, o, cublasLtMatmulPreferenceCreate(&pref), "matmul preference");
        uint32_t schemes = cux_lt_reduction_mask(s->out[0].type);
        cublasStatus_t b = cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &cap, sizeof cap);
        if (b == CUBLAS_STATUS_SUCCESS)
            b = cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof schemes);
        if (b == CUBLAS_STATUS_SUCCESS)
            b = cublasLtMatmulAlgoGetHeuristic(exe->be->lt, m->desc, m->a, m->b, m->d, m->d, pref,
                                               CUX_MM_ALGOS, res, &found);
        cux_released_lt(cublasLtMatmulPreferenceDestroy(pref), "matmul preference");
        if (b != CUBLAS_STATUS_SUCCESS)
            found = 0;
        m->fused_act = found > 0 && fused && s->act == CUX_ACT_RELU;
        /* an epilogue kernel still runs for an activation cuBLASLt lacks, or for a bias it
         * could not take */
        rs->epilogue =
            found > 0 && ((fused && s->act != CUX_ACT_NONE && s->act != CUX_ACT_RELU) ||
                          (!fused && (s->bias.buf != CUX_NONE || s->act != CUX_ACT_NONE)));
        rs->epilogue_bias = found > 0 && !fused && s->bias.buf != CUX_NONE;
    }
    if (!found) {
        char label[256];
        cux_op_label(exe->prog, o, label, sizeof label);
        return cux_error_msg(
            exe->err, XPB_UNSUPPORTED,
            "%s: cuBLASLt has no algorithm for this matmul (m %lld, n %lld, k %lld)", label,
            (long long)key.m, (long long)key.n, (long long)key.k);
    }
    mm_choice choice;
    int device = exe->be->device;
    if (cux_tune_find(CUX_TUNE_MATMUL, device, &key, sizeof key, &choice, sizeof choice)) {
        m->algo = choice.algo;
        m->workspace = (size_t)choice.workspace;
        return XPB_OK;
    }
    int pick = 0;
    if (found > 1 && cux_tuning_on()) {
        size_t need = 0;
        for (int i = 0; i < found; i++)
            if (res[i].workspaceSize > need)
                need = res[i].workspaceSize;
        if ((st = cux_tune_scratch(exe, tune_ws, tune_bytes, need)) != XPB_OK)
            return st;
        double best = -1.0;
        for (int i = 0; i < found; i++) {
            double t = time_algo(exe, m, &res[i].algo, *tune_ws, res[i].workspaceSize);
            if (t >= 0.0 && (best < 0.0 || t < best)) {
                best = t;
                pick = i;
            }
        }
    }
    m->algo = res[pick].algo;
    m->workspace = res[pick].workspaceSize;
    memset(&choice, 0, sizeof choice);
    choice.algo = m->algo;
    choice.workspace = m->workspace;
    if (found > 1 && cux_tuning_on())
        cux_tune_add(CUX_TUNE_MATMUL, device, &key, sizeof key, &choice, sizeof choice);
    return XPB_OK;
}

xpb_status cux_mm_enqueue(xpb_executable *exe, cux_run_step *rs)
{
    cux_mm_run *m = &rs->mm;
    CUX_CUBLAS(exe, rs->step->op,
               cublasLtMatmul(exe->be->lt, m->desc, &alpha_one, m->pa, m->a, m->pb, m->b,
                              &beta_zero, m->pd, m->d, m->pd, m->d, &m->algo, exe->workspace,
                              m->workspace, exe->be->stream),
               "cublasLtMatmul");
    return XPB_OK;
}
