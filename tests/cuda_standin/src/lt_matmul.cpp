// cublasLtMatmul and cublasLtMatmulAlgoGetHeuristic (cublasLt.h and the cuBLAS documentation,
// cublasLtMatmul: D = alpha * (op(A) op(B)) + beta * C, then the epilogue; op(A) is m x k, op(B)
// k x n, C and D m x n, every matrix described by its layout: type, rows and columns as stored,
// leading dimension ("for CUBLASLT_ORDER_COL ... stride of matrix column ... greater or equal to
// CUBLASLT_MATRIX_LAYOUT_ROWS"), order (column-major by default), batch count and strided batch
// offset; the supported type combinations of its "Datatypes Supported" table for the fp32 compute
// types; "CUBLAS_STATUS_INVALID_VALUE if parameters are in conflict or in an impossible
// configuration; e.g. when workspaceSizeInBytes is less than workspace required by configured
// algo"; "CUBLAS_STATUS_NOT_SUPPORTED if current implementation on selected device doesn't support
// configured operation").
//
// The stand-in offers two algorithms: 0 needs no workspace; 1 splits the reduction over k in two
// halves and needs SPLIT_K_WORKSPACE bytes of workspace, which it overwrites. The "fast" compute
// types round the inputs (TF32 from sm_80, fp16, bf16) before the fp32 products.
#include <cstring>
#include <string>

#include "lt_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace lt
{

namespace
{

bool known_epilogue(uint32_t e)
{
    switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
    case CUBLASLT_EPILOGUE_RELU:
    case CUBLASLT_EPILOGUE_RELU_AUX:
    case CUBLASLT_EPILOGUE_BIAS:
    case CUBLASLT_EPILOGUE_RELU_BIAS:
    case CUBLASLT_EPILOGUE_RELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DRELU:
    case CUBLASLT_EPILOGUE_DRELU_BGRAD:
    case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_AUX:
    case CUBLASLT_EPILOGUE_GELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DGELU:
    case CUBLASLT_EPILOGUE_DGELU_BGRAD:
    case CUBLASLT_EPILOGUE_BGRADA:
    case CUBLASLT_EPILOGUE_BGRADB:
        return true;
    default:
        return false;
    }
}

// The pairs of A/B and C/D types the fp32 compute types support (bf16 and fp16 inputs with fp32
// or same-type output, fp32 with fp32), and the fp16 compute type (all fp16).
bool types_supported(cublasComputeType_t ct, cudaDataType_t scale, const problem &p)
{
    cudaDataType_t ab = p.a.cuda_type, cd = p.c.cuda_type;
    if (p.b.cuda_type != ab || p.d.cuda_type != cd)
        return false;
    switch (ct) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
        return scale == CUDA_R_32F &&
               ((ab == CUDA_R_32F && cd == CUDA_R_32F) ||
                ((ab == CUDA_R_16F || ab == CUDA_R_16BF) && (cd == ab || cd == CUDA_R_32F)));
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
        return scale == CUDA_R_32F && ab == CUDA_R_32F && cd == CUDA_R_32F;
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
        return scale == CUDA_R_16F && ab == CUDA_R_16F && cd == CUDA_R_16F;
    default:
        return false;
    }
}

cublasStatus_t why_not(std::string &why, cublasStatus_t s, const std::string &text)
{
    why = text;
    return s;
}

} // namespace

elem elem_of(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_32F:
        return elem::f32;
    case CUDA_R_16F:
        return elem::f16;
    case CUDA_R_16BF:
        return elem::bf16;
    default:
        return elem::none;
    }
}

size_t matrix::bytes() const
{
    if (rows == 0 || cols == 0)
        return 0;
    int64_t last = (batch - 1) * batch_stride + at(rows - 1, cols - 1);
    return (size_t)(last + 1) * elem_size(type);
}

matrix matrix_of(const object &l)
{
    matrix m;
    m.cuda_type = (cudaDataType_t)(int32_t)l.get(CUBLASLT_MATRIX_LAYOUT_TYPE);
    m.type = elem_of(m.cuda_type);
    m.row_major = (int32_t)l.get(CUBLASLT_MATRIX_LAYOUT_ORDER) == CUBLASLT_ORDER_ROW;
    m.rows = (int64_t)l.get(CUBLASLT_MATRIX_LAYOUT_ROWS);
    m.cols = (int64_t)l.get(CUBLASLT_MATRIX_LAYOUT_COLS);
    m.ld = (int64_t)l.get(CUBLASLT_MATRIX_LAYOUT_LD);
    m.batch = (int32_t)l.get(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
    m.batch_stride = (int64_t)l.get(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
    return m;
}

cublasStatus_t check_problem(const object &desc, const object &la, const object &lb,
                             const object &lc, const object &ld, problem &p, std::string &why)
{
    const object *ls[4] = {&la, &lb, &lc, &ld};
    matrix *ms[4] = {&p.a, &p.b, &p.c, &p.d};
    const char *names = "ABCD";
    for (int i = 0; i < 4; i++) {
        int32_t order = (int32_t)ls[i]->get(CUBLASLT_MATRIX_LAYOUT_ORDER);
        if (order != CUBLASLT_ORDER_COL && order != CUBLASLT_ORDER_ROW)
            return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED,
                           std::string("matrix ") + names[i] +
                               ": only COL and ROW orders are "
                               "modelled");
        if (ls[i]->get(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) ||
            ls[i]->get(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE))
            return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED,
                           std::string("matrix ") + names[i] +
                               ": planar complex and pointer-array batches are not modelled");
        *ms[i] = matrix_of(*ls[i]);
        const matrix &m = *ms[i];
        int64_t need = m.row_major ? m.cols : m.rows;
        if (m.type == elem::none)
            return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED,
                           std::string("matrix ") + names[i] + ": data type not modelled");
        if (m.ld < need || m.ld < 1 || m.batch < 1 || m.rows < 0 || m.cols < 0)
            return why_not(why, CUBLAS_STATUS_INVALID_VALUE,
                           std::string("matrix ") + names[i] + ": " + std::to_string(m.rows) +
                               " x " + std::to_string(m.cols) + " with leading dimension " +
                               std::to_string(m.ld) + " and batch " + std::to_string(m.batch) +
                               " (the leading dimension must be at least the " +
                               (m.row_major ? "columns" : "rows") + ")");
    }
    int32_t ta = (int32_t)desc.get(CUBLASLT_MATMUL_DESC_TRANSA);
    int32_t tb = (int32_t)desc.get(CUBLASLT_MATMUL_DESC_TRANSB);
    if ((int32_t)desc.get(CUBLASLT_MATMUL_DESC_TRANSC) != CUBLAS_OP_N)
        return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED, "TRANSC: only CUBLAS_OP_N is supported");
    if (ta < CUBLAS_OP_N || ta > CUBLAS_OP_C || tb < CUBLAS_OP_N || tb > CUBLAS_OP_C)
        return why_not(why, CUBLAS_STATUS_INVALID_VALUE, "TRANSA/TRANSB: not a cublasOperation_t");
    p.ta = ta != CUBLAS_OP_N; // CUBLAS_OP_C is CUBLAS_OP_T for real types
    p.tb = tb != CUBLAS_OP_N;
    p.m = p.d.rows;
    p.n = p.d.cols;
    p.k = p.ta ? p.a.rows : p.a.cols;
    int64_t am = p.ta ? p.a.cols : p.a.rows, bk = p.tb ? p.b.cols : p.b.rows,
            bn = p.tb ? p.b.rows : p.b.cols;
    if (am != p.m || bk != p.k || bn != p.n || p.c.rows != p.m || p.c.cols != p.n)
        return why_not(why, CUBLAS_STATUS_INVALID_VALUE,
                       "op(A) is " + std::to_string(am) + " x " + std::to_string(p.k) + ", op(B) " +
                           std::to_string(bk) + " x " + std::to_string(bn) + ", C " +
                           std::to_string(p.c.rows) + " x " + std::to_string(p.c.cols) + ", D " +
                           std::to_string(p.m) + " x " + std::to_string(p.n) +
                           ": op(A) must be m x k, op(B) k x n, C and D m x n");
    p.batch = p.d.batch;
    if (p.a.batch != p.batch || p.b.batch != p.batch || p.c.batch != p.batch)
        return why_not(why, CUBLAS_STATUS_INVALID_VALUE, "the batch counts of A, B, C, D differ");
    p.compute = (cublasComputeType_t)(int32_t)desc.get(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
    auto scale = (cudaDataType_t)(int32_t)desc.get(CUBLASLT_MATMUL_DESC_SCALE_TYPE);
    if (!types_supported(p.compute, scale, p))
        return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED,
                       "compute type " + std::to_string((int)p.compute) + ", scale type " +
                           std::to_string((int)scale) + ", A/B type " +
                           std::to_string((int)p.a.cuda_type) + ", C/D type " +
                           std::to_string((int)p.c.cuda_type) + ": not a supported combination");
    if ((int32_t)desc.get(CUBLASLT_MATMUL_DESC_POINTER_MODE) != CUBLASLT_POINTER_MODE_HOST)
        return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED, "only host pointer mode is modelled");
    p.epilogue = (uint32_t)desc.get(CUBLASLT_MATMUL_DESC_EPILOGUE);
    if (!known_epilogue(p.epilogue))
        return why_not(why, CUBLAS_STATUS_INVALID_VALUE,
                       "epilogue " + std::to_string(p.epilogue) + " is not a cublasLtEpilogue_t");
    int32_t bt = (int32_t)desc.get(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
    int32_t xt = (int32_t)desc.get(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE);
    p.bias_type = bt == -1 ? p.d.type : elem_of((cudaDataType_t)bt); // default: D's type
    p.aux_type = xt == -1 ? p.d.type : elem_of((cudaDataType_t)xt);
    if (p.bias_type == elem::none || p.aux_type == elem::none)
        return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED, "bias or aux data type not modelled");
    p.bias = reinterpret_cast<const void *>(desc.get(CUBLASLT_MATMUL_DESC_BIAS_POINTER));
    p.bias_stride = (int64_t)desc.get(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE);
    p.aux = reinterpret_cast<void *>(desc.get(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER));
    p.aux_ld = (int64_t)desc.get(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
    p.aux_stride = (int64_t)desc.get(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE);
    if (p.epilogue & 128) { // the epilogues with an auxiliary matrix
        bool relu = p.epilogue == CUBLASLT_EPILOGUE_RELU_AUX ||
                    p.epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
                    p.epilogue == CUBLASLT_EPILOGUE_DRELU ||
                    p.epilogue == CUBLASLT_EPILOGUE_DRELU_BGRAD;
        int64_t mult = relu ? 128 : 8;
        if (p.aux_ld < p.m || p.aux_ld % mult != 0 || p.aux_stride % mult != 0)
            return why_not(why, CUBLAS_STATUS_INVALID_VALUE,
                           "EPILOGUE_AUX_LD " + std::to_string(p.aux_ld) + " (and batch stride " +
                               std::to_string(p.aux_stride) + ") must be divisible by " +
                               std::to_string(mult) + " and at least the rows of D");
    }
    if (p.d.row_major && p.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
        return why_not(why, CUBLAS_STATUS_NOT_SUPPORTED,
                       "epilogues with a row-major D are not "
                       "modelled");
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace lt
} // namespace xpbsi

using namespace xpbsi::lt;

namespace
{

cublasStatus_t checked(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A,
                       cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
                       problem &p, const char *api)
{
    object *o = matmul_desc(desc), *a = layout(A), *b = layout(B), *c = layout(C), *d = layout(D);
    if (!o || !a || !b || !c || !d) {
        xpbsi::diag("%s: a descriptor or layout is not a live one", api);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    std::string why;
    cublasStatus_t s = check_problem(*o, *a, *b, *c, *d, p, why);
    if (s != CUBLAS_STATUS_SUCCESS)
        xpbsi::diag("%s: %s: %s", api, cublasLtGetStatusName(s), why.c_str());
    return s;
}

void encode(cublasLtMatmulAlgo_t &algo, uint64_t id)
{
    memset(&algo, 0, sizeof algo);
    algo.data[0] = ALGO_MAGIC;
    algo.data[1] = id;
}

} // namespace

extern "C" {

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount)
{
    XPBSI_LOCK;
    if (!live_handle(lightHandle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requestedAlgoCount <= 0 || !heuristicResultsArray || !returnAlgoCount)
        return CUBLAS_STATUS_INVALID_VALUE;
    *returnAlgoCount = 0;
    object *pref = xpbsi::lt::preference(preference);
    if (!pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    problem p;
    cublasStatus_t s =
        checked(operationDesc, Adesc, Bdesc, Cdesc, Ddesc, p, "cublasLtMatmulAlgoGetHeuristic");
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    uint64_t max_ws = pref->get(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
    int n = 0;
    for (uint64_t id : {1ull, 0ull}) {
        size_t ws = id == 1 ? SPLIT_K_WORKSPACE : 0;
        if (ws > max_ws || n >= requestedAlgoCount)
            continue;
        cublasLtMatmulHeuristicResult_t &r = heuristicResultsArray[n++];
        memset(&r, 0, sizeof r);
        encode(r.algo, id);
        r.workspaceSize = ws;
        r.state = CUBLAS_STATUS_SUCCESS;
        r.wavesCount = 1.0f;
    }
    *returnAlgoCount = n;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
    XPBSI_LOCK;
    if (!live_handle(lightHandle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    problem p;
    cublasStatus_t s = checked(computeDesc, Adesc, Bdesc, Cdesc, Ddesc, p, "cublasLtMatmul");
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    // in place (C == D) only with the same layout: "ldc == ldd, Ctype == Dtype, same order"
    if (C == D && (p.c.ld != p.d.ld || p.c.row_major != p.d.row_major || p.c.type != p.d.type ||
                   p.c.batch_stride != p.d.batch_stride)) {
        xpbsi::diag("cublasLtMatmul: C and D are the same memory with different layouts");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (!alpha || !beta) {
        xpbsi::diag("cublasLtMatmul: alpha and beta are host pointers, not NULL");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    uint64_t id = 0;
    if (algo) {
        if (algo->data[0] != ALGO_MAGIC || algo->data[1] > 1) {
            xpbsi::diag("cublasLtMatmul: the algorithm is not one cublasLtMatmulAlgoGetHeuristic "
                        "returned");
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        id = algo->data[1];
    }
    size_t need = id == 1 ? SPLIT_K_WORKSPACE : 0;
    if (workspaceSizeInBytes < need || (need && !workspace)) {
        xpbsi::diag("cublasLtMatmul: the algorithm needs %zu bytes of workspace; %zu given at %p",
                    need, workspaceSizeInBytes, workspace);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    bool needs_bias = p.epilogue & (CUBLASLT_EPILOGUE_BIAS | 16 | CUBLASLT_EPILOGUE_BGRADA |
                                    CUBLASLT_EPILOGUE_BGRADB);
    if ((needs_bias && !p.bias) || ((p.epilogue & 128) && !p.aux)) {
        xpbsi::diag("cublasLtMatmul: epilogue %u needs its %s pointer", p.epilogue,
                    needs_bias && !p.bias ? "bias" : "aux");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (xpbsi::sticky_error() != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    float al = p.compute == CUBLAS_COMPUTE_16F || p.compute == CUBLAS_COMPUTE_16F_PEDANTIC
                   ? xpbsi::half_to_float(*static_cast<const uint16_t *>(alpha))
                   : *static_cast<const float *>(alpha);
    float be = p.compute == CUBLAS_COMPUTE_16F || p.compute == CUBLAS_COMPUTE_16F_PEDANTIC
                   ? xpbsi::half_to_float(*static_cast<const uint16_t *>(beta))
                   : *static_cast<const float *>(beta);
    algo_numerics num = {xpbsi::elem::f32, id == 1, false};
    int cc = xpbsi::device().major * 10 + xpbsi::device().minor;
    if (p.compute == CUBLAS_COMPUTE_32F_FAST_TF32 && cc >= 80)
        num.round_inputs = xpbsi::elem::none; // TF32
    else if (p.compute == CUBLAS_COMPUTE_32F_FAST_16F)
        num.round_inputs = xpbsi::elem::f16;
    else if (p.compute == CUBLAS_COMPUTE_32F_FAST_16BF)
        num.round_inputs = xpbsi::elem::bf16;
    num.half_accumulate =
        p.compute == CUBLAS_COMPUTE_16F || p.compute == CUBLAS_COMPUTE_16F_PEDANTIC;
    xpbsi::work_ptr w = xpbsi::make_work("cublasLtMatmul", [=] {
        if (need && !xpbsi::addressable(workspace, need)) {
            xpbsi::make_sticky(cudaErrorIllegalAddress,
                               "cublasLtMatmul: the workspace [%p, +%zu bytes) is not device "
                               "memory: %s",
                               workspace, need, xpbsi::describe(workspace).c_str());
            return;
        }
        if (need)
            memset(workspace, 0xA5, need); // the split reduction's scratch
        run_matmul(p, al, be, A, B, C, D, num);
    });
    cudaError_t e = xpbsi::enqueue(stream, w);
    if (e != cudaSuccess && e != xpbsi::sticky_error()) {
        xpbsi::record(e);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
