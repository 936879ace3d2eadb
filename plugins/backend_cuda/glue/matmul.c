/* Matrix products on cuBLASLt: linear layers, the products of op set 3 and the LSTM's, each a
 * step described by a cux_mm_form (plan_types.h), D = op(A) op(B) with every operand row-major
 * as the program stores it. cuBLASLt's matrices are column-major, and a row-major M is the
 * column-major M^T, so a step runs as D^T = op(B)^T op(A)^T: cuBLASLt's A is the program's B and
 * its B the program's A. Inputs are read in the policy's type (or fp32 throughout: the LSTM's
 * backward), the output is written in its storage type (fp32 outputs from 16-bit inputs are one
 * of cuBLASLt's documented type combinations), accumulation is fp32, and TF32 is used only under
 * the tf32 policy (CUBLAS_COMPUTE_32F_FAST_TF32). A bias and a ReLU are cuBLASLt epilogues
 * (BIAS, RELU, RELU_BIAS); LeakyReLU and tanh, which cuBLASLt has not, run as the own epilogue
 * kernel after the matmul. Under the 16-bit policies the heuristics may only propose split-K
 * reductions in the compute type (fp32), never in the 16-bit output type (plan/engines.c). The
 * algorithm is chosen among cuBLASLt's heuristic answers that run on the real operands: the
 * first, or with timing the fastest, once per shape and process (plan/tune_cache.h). */
#include <stdio.h>
#include <string.h>

#include "glue/arena.h"
#include "glue/matmul.h"
#include "glue/status.h"
#include "glue/tuning.h"
#include "kernels/fault.h"
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
    /* the form's transposes, leading dims, batch */
    int32_t trans_a, trans_b, accumulate;
    int64_t lda, ldb, ldd, batch, stride_a, stride_b, stride_d;
} mm_key;

typedef struct mm_choice {
    cublasLtMatmulAlgo_t algo;
    uint64_t workspace;
} mm_choice;

static float alpha_one = 1.0f, beta_zero = 0.0f, beta_one = 1.0f;

/* The beta of run m: 1 when it adds its product to D. */
static const float *beta_of(const cux_mm_run *m)
{
    return m->accumulate ? &beta_one : &beta_zero;
}

/* One run of a candidate algorithm (tuning.h's cux_candidate_run), on the tuning scratch. */
struct trial {
    uint32_t op;
    cux_mm_run *m;
    const cublasLtMatmulAlgo_t *algo;
    size_t ws_bytes;
};

static xpb_status run_algo(xpb_executable *exe, void *ctx)
{
    const struct trial *t = ctx;
    const cux_mm_run *m = t->m;
    CUX_CUBLAS(exe, t->op,
               cublasLtMatmul(exe->be->lt, m->desc, &alpha_one, m->pa, m->a, m->pb, m->b,
                              beta_of(m), m->pd, m->d, m->pd, m->d, t->algo, exe->tune_ws,
                              t->ws_bytes, exe->be->stream),
               "cublasLtMatmul (trial run)");
    return XPB_OK;
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

/* Sets the batch count and the strided batch offset (elements) of layout `l`. */
static xpb_status batch_layout(xpb_executable *exe, uint32_t op, cublasLtMatrixLayout_t l,
                               int64_t count, int64_t stride)
{
    int32_t n = (int32_t)count;
    CUX_CUBLAS(
        exe, op,
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n, sizeof n),
        "matmul batch count");
    CUX_CUBLAS(exe, op,
               cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof stride),
               "matmul batch stride");
    return XPB_OK;
}

/* The device address of element `off` of view v. */
static char *element(xpb_executable *exe, const cux_view *v, int64_t off)
{
    return (char *)cux_ptr(exe, v->buf) + (size_t)off * cux_type_size(v->type);
}

/* Creates the descriptor and layouts of step `s` (its cux_mm_form, plan_types.h) with `epilogue`
 * (and the bias pointer). The row-major D[m,n] = op(A) op(B) is the
 * column-major D^T[n,m] = op(B)^T op(A)^T, so cuBLASLt's A is the program's B and its B the
 * program's A; a row-major matrix stored [r,c] is the column-major [c,r] with the same leading
 * dimension. */
static xpb_status describe(xpb_executable *exe, const cux_step *s, cublasLtEpilogue_t epilogue,
                           cux_mm_run *m, mm_key *key)
{
    const cux_mm_form *f = &s->mm;
    const cux_view *A = &s->in[0], *B = &s->in[1], *D = &s->out[0];
    uint32_t o = s->op;
    cublasOperation_t opa = f->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = f->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* program B stored [k,n] (or [n,k] when tb); program A stored [m,k] (or [k,m] when ta) */
    uint64_t la_rows = (uint64_t)(f->tb ? f->k : f->n), la_cols = (uint64_t)(f->tb ? f->n : f->k);
    uint64_t lb_rows = (uint64_t)(f->ta ? f->m : f->k), lb_cols = (uint64_t)(f->ta ? f->k : f->m);
    cublasComputeType_t compute = exe->plan->opt.precision == XPB_PRECISION_TF32
                                      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                      : CUBLAS_COMPUTE_32F;
    CUX_CUBLAS(exe, o, cublasLtMatmulDescCreate(&m->desc, compute, CUDA_R_32F),
               "matmul descriptor");
    CUX_CUBLAS(
        exe, o,
        cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa),
        "matmul transa");
    CUX_CUBLAS(
        exe, o,
        cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb),
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
               cublasLtMatrixLayoutCreate(&m->a, cuda_type(B->type), la_rows, la_cols, f->ldb),
               "matmul layout A");
    CUX_CUBLAS(exe, o,
               cublasLtMatrixLayoutCreate(&m->b, cuda_type(A->type), lb_rows, lb_cols, f->lda),
               "matmul layout B");
    CUX_CUBLAS(exe, o,
               cublasLtMatrixLayoutCreate(&m->d, cuda_type(D->type), (uint64_t)f->n, (uint64_t)f->m,
                                          f->ldd),
               "matmul layout D");
    xpb_status st;
    int64_t stride_a = f->stride_a;
#if defined(XPB_CUDA_STANDIN)
    if (cux_fault("mm_batch_stride")) /* every product reads A's first matrix */
        stride_a = 0;
#endif
    if (f->batch > 1 && ((st = batch_layout(exe, o, m->a, f->batch, f->stride_b)) != XPB_OK ||
                         (st = batch_layout(exe, o, m->b, f->batch, stride_a)) != XPB_OK ||
                         (st = batch_layout(exe, o, m->d, f->batch, f->stride_d)) != XPB_OK))
        return st;
    m->pa = element(exe, B, f->off_b);
    m->pb = element(exe, A, f->off_a);
    m->pd = element(exe, D, f->off_d);
    m->accumulate = f->accumulate;
    memset(key, 0, sizeof *key);
    key->kind = (int32_t)xpb_program_op(exe->prog, o)->kind;
    key->epilogue = (int32_t)epilogue;
    key->precision = (int32_t)exe->plan->opt.precision;
    key->ta = B->type;
    key->tb = A->type;
    key->td = D->type;
    key->m = f->n;
    key->n = f->m;
    key->k = f->k;
    key->trans_a = f->tb;
    key->trans_b = f->ta;
    key->accumulate = f->accumulate;
    key->lda = f->ldb;
    key->ldb = f->lda;
    key->ldd = f->ldd;
    key->batch = f->batch;
    key->stride_a = f->stride_b;
    key->stride_b = f->stride_a;
    key->stride_d = f->stride_d;
    return XPB_OK;
}

/* The cuBLASLt epilogue step `s` asks for, in the fused form (`fused` 1) or none. */
static cublasLtEpilogue_t epilogue_of(const cux_step *s, int fused)
{
    int bias = s->bias.buf != CUX_NONE, relu = s->act == CUX_ACT_RELU;
    if (!fused)
        return CUBLASLT_EPILOGUE_DEFAULT;
#if defined(XPB_CUDA_STANDIN)
    if (cux_fault("matmul_relu_dropped")) /* the fused ReLU left out of the epilogue */
        relu = 0;
#endif
    if (bias)
        return relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    return relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
}

/* cuBLASLt's heuristic answers for m's descriptor (at most CUX_MM_ALGOS into res, *found of
 * them), with the workspace cap and the reduction schemes the output type allows. */
static xpb_status heuristics(xpb_executable *exe, const cux_step *s, cux_mm_run *m,
                             cublasLtMatmulHeuristicResult_t *res, int *found)
{
    cublasLtMatmulPreference_t pref;
    size_t cap = CUX_MM_WORKSPACE;
    uint32_t schemes = cux_lt_reduction_mask(s->out[0].type);
    *found = 0;
    CUX_CUBLAS(exe, s->op, cublasLtMatmulPreferenceCreate(&pref), "matmul preference");
    cublasStatus_t b = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &cap, sizeof cap);
    if (b == CUBLAS_STATUS_SUCCESS)
        b = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                 &schemes, sizeof schemes);
    if (b == CUBLAS_STATUS_SUCCESS)
        b = cublasLtMatmulAlgoGetHeuristic(exe->be->lt, m->desc, m->a, m->b, m->d, m->d, pref,
                                           CUX_MM_ALGOS, res, found);
    cux_released_lt(cublasLtMatmulPreferenceDestroy(pref), "matmul preference");
    if (b != CUBLAS_STATUS_SUCCESS)
        *found = 0; /* nothing for this form of the matmul */
    return XPB_OK;
}

/* The algorithm of m among res[0..found): the cached choice of `key`, else the first that runs
 * (timing off) or the fastest of those that run. XPB_UNSUPPORTED when none ran. */
static xpb_status choose_algo(xpb_executable *exe, const cux_step *s, cux_mm_run *m,
                              const mm_key *key, const cublasLtMatmulHeuristicResult_t *res,
                              int found)
{
    mm_choice choice;
    int device = exe->be->device, tuning = cux_tuning_on(), pick = -1;
    if (cux_tune_find(CUX_TUNE_MATMUL, device, key, sizeof *key, &choice, sizeof choice)) {
        m->algo = choice.algo;
        m->workspace = (size_t)choice.workspace;
        return XPB_OK;
    }
    double best = -1.0;
    xpb_status worst = XPB_UNSUPPORTED;
    for (int i = 0; i < found && !(pick >= 0 && !tuning); i++) {
        struct trial t = {s->op, m, &res[i].algo, res[i].workspaceSize};
        double sec = 0.0;
        xpb_status st = cux_tune_scratch(exe, res[i].workspaceSize);
        if (st == XPB_OK)
            st = cux_try_candidate(exe, s->op, run_algo, &t, tuning ? CUX_MM_RUNS : 0, &sec);
        if (st == XPB_DEVICE_ERROR || st == XPB_OUT_OF_MEMORY)
            return st;
        if (st == XPB_INTERNAL)
            worst = st;
        if (st == XPB_OK && (pick < 0 || sec < best)) {
            best = sec;
            pick = i;
        }
    }
    if (pick < 0)
        return worst; /* the last failure is in exe->err */
    m->algo = res[pick].algo;
    m->workspace = res[pick].workspaceSize;
    memset(&choice, 0, sizeof choice);
    choice.algo = m->algo;
    choice.workspace = m->workspace;
    if (tuning)
        cux_tune_add(CUX_TUNE_MATMUL, device, key, sizeof *key, &choice, sizeof choice);
    return XPB_OK;
}

xpb_status cux_mm_prepare(xpb_executable *exe, uint32_t g)
{
    cux_run_step *rs = &exe->steps[g];
    const cux_step *s = rs->step;
    cux_mm_run *m = &rs->mm;
    cublasLtMatmulHeuristicResult_t res[CUX_MM_ALGOS];
    mm_key key;
    xpb_status st = XPB_UNSUPPORTED;
    /* with cuBLASLt's epilogue when it has one for the step, else plain and the own kernel */
    for (int fused = 1; fused >= 0 && st != XPB_OK; fused--) {
        int found = 0;
        cux_mm_free(m);
        if ((st = describe(exe, s, epilogue_of(s, fused), m, &key)) != XPB_OK ||
            (st = heuristics(exe, s, m, res, &found)) != XPB_OK)
            return st;
        st = found ? choose_algo(exe, s, m, &key, res, found) : XPB_UNSUPPORTED;
        if (st == XPB_DEVICE_ERROR || st == XPB_OUT_OF_MEMORY || st == XPB_INTERNAL)
            return st;
        m->fused_act = st == XPB_OK && fused && s->act == CUX_ACT_RELU;
        /* an epilogue kernel still runs for an activation cuBLASLt lacks, or for a bias it
         * could not take */
        rs->epilogue =
            st == XPB_OK && ((fused && s->act != CUX_ACT_NONE && s->act != CUX_ACT_RELU) ||
                             (!fused && (s->bias.buf != CUX_NONE || s->act != CUX_ACT_NONE)));
        rs->epilogue_bias = st == XPB_OK && !fused && s->bias.buf != CUX_NONE;
    }
    if (st != XPB_OK) {
        char label[256];
        cux_op_label(exe->prog, s->op, label, sizeof label);
        return cux_error_msg(exe->err, XPB_UNSUPPORTED,
                             "%s: cuBLASLt has no algorithm that runs this matmul (m %lld, n %lld, "
                             "k %lld)",
                             label, (long long)key.m, (long long)key.n, (long long)key.k);
    }
    return XPB_OK;
}

xpb_status cux_mm_enqueue(xpb_executable *exe, cux_run_step *rs)
{
    cux_mm_run *m = &rs->mm;
    CUX_CUBLAS(exe, rs->step->op,
               cublasLtMatmul(exe->be->lt, m->desc, &alpha_one, m->pa, m->a, m->pb, m->b,
                              beta_of(m), m->pd, m->d, m->pd, m->d, &m->algo, exe->workspace,
                              m->workspace, exe->be->stream),
               "cublasLtMatmul");
    return XPB_OK;
}
