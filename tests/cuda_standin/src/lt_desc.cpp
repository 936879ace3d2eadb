// cuBLASLt's handle and descriptors (cublasLt.h: cublasLtCreate, cublasLtDestroy,
// cublasLtGetVersion, cublasLtGetStatusName/String, cublasLtMatmulDescCreate/Destroy/
// SetAttribute/GetAttribute, cublasLtMatrixLayoutCreate/Destroy/SetAttribute/GetAttribute,
// cublasLtMatmulPreferenceCreate/Destroy/SetAttribute/GetAttribute). Each attribute has the C
// type and default its documentation gives; "CUBLAS_STATUS_INVALID_VALUE if buf is NULL or
// sizeInBytes doesn't match size of internal storage for selected attribute".
#include <cstring>
#include <unordered_set>

#include "lt_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace lt
{

namespace
{

constexpr unsigned k_handle = 0x4c544841u, k_desc = 0x4c544d44u, k_layout = 0x4c544c59u,
                   k_pref = 0x4c545052u;

#define I32 sizeof(int32_t)
#define I64 sizeof(int64_t)
#define PTR sizeof(void *)
const attr_def k_desc_attrs[] = {
    {CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, I32, 0},
    {CUBLASLT_MATMUL_DESC_SCALE_TYPE, I32, 0},
    {CUBLASLT_MATMUL_DESC_POINTER_MODE, I32, CUBLASLT_POINTER_MODE_HOST},
    {CUBLASLT_MATMUL_DESC_TRANSA, I32, CUBLAS_OP_N},
    {CUBLASLT_MATMUL_DESC_TRANSB, I32, CUBLAS_OP_N},
    {CUBLASLT_MATMUL_DESC_TRANSC, I32, CUBLAS_OP_N},
    {CUBLASLT_MATMUL_DESC_FILL_MODE, I32, CUBLAS_FILL_MODE_FULL},
    {CUBLASLT_MATMUL_DESC_EPILOGUE, sizeof(uint32_t), CUBLASLT_EPILOGUE_DEFAULT},
    {CUBLASLT_MATMUL_DESC_BIAS_POINTER, PTR, 0},
    {CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, I64, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, PTR, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, I64, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, I64, 0},
    {CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, I64, 0},
    {CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, I32, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, I32, (uint64_t)(uint32_t)-1},
    {CUBLASLT_MATMUL_DESC_FAST_ACCUM, sizeof(int8_t), 0},
    {CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, I32, (uint64_t)(uint32_t)-1},
};

const attr_def k_layout_attrs[] = {
    {CUBLASLT_MATRIX_LAYOUT_TYPE, sizeof(uint32_t), 0},
    {CUBLASLT_MATRIX_LAYOUT_ORDER, I32, CUBLASLT_ORDER_COL},
    {CUBLASLT_MATRIX_LAYOUT_ROWS, sizeof(uint64_t), 0},
    {CUBLASLT_MATRIX_LAYOUT_COLS, sizeof(uint64_t), 0},
    {CUBLASLT_MATRIX_LAYOUT_LD, I64, 0},
    {CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, I32, 1},
    {CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, I64, 0},
    {CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, I64, 0},
    {CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, sizeof(uint32_t), 0},
};

const attr_def k_pref_attrs[] = {
    {CUBLASLT_MATMUL_PREF_SEARCH_MODE, sizeof(uint32_t), CUBLASLT_SEARCH_BEST_FIT},
    {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, sizeof(uint64_t), 0},
    {CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, sizeof(uint32_t), CUBLASLT_REDUCTION_SCHEME_MASK},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, sizeof(uint32_t), 256},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, sizeof(uint32_t), 256},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, sizeof(uint32_t), 256},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, sizeof(uint32_t), 256},
    {CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, sizeof(float), 0},
    {CUBLASLT_MATMUL_PREF_IMPL_MASK, sizeof(uint64_t), ~0ull},
};
#undef I32
#undef I64
#undef PTR

std::unordered_set<void *> &live()
{
    static std::unordered_set<void *> &s =
        *new std::unordered_set<void *>; // immortal: reachable at exit
    return s;
}

object *object_of(void *p, unsigned magic)
{
    XPBSI_LOCK;
    if (!p || !live().count(p))
        return nullptr;
    object *o = static_cast<object *>(p);
    return o->magic == magic ? o : nullptr;
}

object *make(unsigned magic, const attr_def *defs, size_t n)
{
    object *o = new object{magic, defs, n, {}};
    XPBSI_LOCK;
    live().insert(o);
    return o;
}

cublasStatus_t destroy(void *p, unsigned magic)
{
    object *o = object_of(p, magic);
    if (!o)
        return p ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
    XPBSI_LOCK;
    live().erase(o);
    o->magic = 0;
    delete o;
    return CUBLAS_STATUS_SUCCESS;
}

const attr_def *def_of(const object &o, int attr)
{
    for (size_t i = 0; i < o.n_defs; i++)
        if (o.defs[i].attr == attr)
            return &o.defs[i];
    return nullptr;
}

cublasStatus_t set_attr(object *o, int attr, const void *buf, size_t size)
{
    const attr_def *d = o ? def_of(*o, attr) : nullptr;
    if (!o || !d || !buf || size != d->size) {
        if (o && d && buf)
            diag("cuBLASLt: attribute %d takes %zu bytes, %zu given", attr, d->size, size);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    uint64_t v = 0;
    memcpy(&v, buf, size);
    o->values[attr] = v;
    return CUBLAS_STATUS_SUCCESS;
}

// "if sizeInBytes is 0: number of bytes needed to write full contents"
cublasStatus_t get_attr(object *o, int attr, void *buf, size_t size, size_t *written)
{
    const attr_def *d = o ? def_of(*o, attr) : nullptr;
    if (!o || !d)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0) {
        if (!written)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = d->size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || size != d->size)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t v = o->get(attr);
    memcpy(buf, &v, d->size);
    if (written)
        *written = d->size;
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

uint64_t object::get(int attr) const
{
    auto it = values.find(attr);
    if (it != values.end())
        return it->second;
    for (size_t i = 0; i < n_defs; i++)
        if (defs[i].attr == attr)
            return defs[i].dflt;
    return 0;
}

object *matmul_desc(cublasLtMatmulDesc_t d)
{
    return object_of(d, k_desc);
}

object *layout(cublasLtMatrixLayout_t l)
{
    return object_of(l, k_layout);
}

object *preference(cublasLtMatmulPreference_t p)
{
    return object_of(p, k_pref);
}

bool live_handle(cublasLtHandle_t h)
{
    XPBSI_LOCK;
    return h && live().count(h) && *reinterpret_cast<unsigned *>(h) == k_handle;
}

} // namespace lt
} // namespace xpbsi

using namespace xpbsi::lt;

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    if (!lightHandle)
        return CUBLAS_STATUS_INVALID_VALUE;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    unsigned *h = new unsigned(k_handle);
    XPBSI_LOCK;
    live().insert(h);
    *lightHandle = reinterpret_cast<cublasLtHandle_t>(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    if (!live_handle(lightHandle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    XPBSI_LOCK;
    live().erase(lightHandle);
    unsigned *h = reinterpret_cast<unsigned *>(lightHandle);
    *h = 0;
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void)
{
    return CUBLAS_VERSION;
}

const char *cublasLtGetStatusName(cublasStatus_t status)
{
    switch (status) {
#define XPBSI_NAME(s)                                                                              \
    case s:                                                                                        \
        return #s;
        XPBSI_NAME(CUBLAS_STATUS_SUCCESS)
        XPBSI_NAME(CUBLAS_STATUS_NOT_INITIALIZED)
        XPBSI_NAME(CUBLAS_STATUS_ALLOC_FAILED)
        XPBSI_NAME(CUBLAS_STATUS_INVALID_VALUE)
        XPBSI_NAME(CUBLAS_STATUS_ARCH_MISMATCH)
        XPBSI_NAME(CUBLAS_STATUS_MAPPING_ERROR)
        XPBSI_NAME(CUBLAS_STATUS_EXECUTION_FAILED)
        XPBSI_NAME(CUBLAS_STATUS_INTERNAL_ERROR)
        XPBSI_NAME(CUBLAS_STATUS_NOT_SUPPORTED)
        XPBSI_NAME(CUBLAS_STATUS_LICENSE_ERROR)
#undef XPBSI_NAME
    default:
        return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char *cublasLtGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "an absent device architectural feature is required";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
        return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "the functionality requested is not supported";
    default:
        return "unknown error";
    }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType, cudaDataType_t scaleType)
{
    if (!matmulDesc)
        return CUBLAS_STATUS_INVALID_VALUE;
    object *o = make(k_desc, k_desc_attrs, sizeof k_desc_attrs / sizeof k_desc_attrs[0]);
    o->values[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE] = (uint64_t)(uint32_t)computeType;
    o->values[CUBLASLT_MATMUL_DESC_SCALE_TYPE] = (uint64_t)(uint32_t)scaleType;
    *matmulDesc = reinterpret_cast<cublasLtMatmulDesc_t>(o);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    return destroy(matmulDesc, k_desc);
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t sizeInBytes)
{
    XPBSI_LOCK;
    return set_attr(matmul_desc(matmulDesc), attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, void *buf,
                                              size_t sizeInBytes, size_t *sizeWritten)
{
    XPBSI_LOCK;
    return get_attr(matmul_desc(matmulDesc), attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!matLayout)
        return CUBLAS_STATUS_INVALID_VALUE;
    object *o = make(k_layout, k_layout_attrs, sizeof k_layout_attrs / sizeof k_layout_attrs[0]);
    o->values[CUBLASLT_MATRIX_LAYOUT_TYPE] = (uint64_t)(uint32_t)type;
    o->values[CUBLASLT_MATRIX_LAYOUT_ROWS] = rows;
    o->values[CUBLASLT_MATRIX_LAYOUT_COLS] = cols;
    o->values[CUBLASLT_MATRIX_LAYOUT_LD] = (uint64_t)ld;
    *matLayout = reinterpret_cast<cublasLtMatrixLayout_t>(o);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
    return destroy(matLayout, k_layout);
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t sizeInBytes)
{
    XPBSI_LOCK;
    return set_attr(layout(matLayout), attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                size_t sizeInBytes, size_t *sizeWritten)
{
    XPBSI_LOCK;
    return get_attr(layout(matLayout), attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    if (!pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    *pref = reinterpret_cast<cublasLtMatmulPreference_t>(
        make(k_pref, k_pref_attrs, sizeof k_pref_attrs / sizeof k_pref_attrs[0]));
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    return destroy(pref, k_pref);
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t sizeInBytes)
{
    XPBSI_LOCK;
    return set_attr(preference(pref), attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    void *buf, size_t sizeInBytes,
                                                    size_t *sizeWritten)
{
    XPBSI_LOCK;
    return get_attr(preference(pref), attr, buf, sizeInBytes, sizeWritten);
}

} // extern "C"
