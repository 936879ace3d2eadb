// cuDNN's handle, version and errors (cuDNN 9 API Reference, cudnn_graph library: cudnnCreate,
// cudnnDestroy, cudnnSetStream, cudnnGetStream, cudnnGetVersion, cudnnGetErrorString,
// cudnnGetLastErrorString). The stand-in reports the version of the installed cudnn_version.h.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "dnn_internal.hpp"
#include "rt_internal.hpp"

namespace xpbsi
{
namespace dnn
{

namespace
{

constexpr unsigned k_handle_magic = 0x444e4e48u; // "DNNH"
thread_local char t_message[1024];

std::unordered_set<handle *> &handles()
{
    static std::unordered_set<handle *> &h =
        *new std::unordered_set<handle *>; // immortal: reachable at exit
    return h;
}

bool verbose()
{
    static const bool v = [] {
        const char *e = getenv("XPB_STANDIN_VERBOSE");
        return e && e[0] && strcmp(e, "0") != 0;
    }();
    return v;
}

} // namespace

cudnnStatus_t fail(cudnnStatus_t s, const char *fmt, ...)
{
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    snprintf(t_message, sizeof t_message, "%s: %s", cudnnGetErrorString(s), buf);
    if (verbose())
        diag("cudnn: %s", t_message);
    return s;
}

handle *handle_of(cudnnHandle_t h)
{
    handle *p = reinterpret_cast<handle *>(h);
    XPBSI_LOCK;
    return p && handles().count(p) ? p : nullptr;
}

} // namespace dnn
} // namespace xpbsi

extern "C" {

size_t cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

size_t cudnnGetMaxDeviceVersion(void)
{
    return 900; // the newest architecture this cuDNN knows: sm_90
}

size_t cudnnGetCudartVersion(void)
{
    return CUDART_VERSION;
}

const char *cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
#define XPBSI_NAME(s)                                                                              \
    case s:                                                                                        \
        return #s;
        XPBSI_NAME(CUDNN_STATUS_SUCCESS)
        XPBSI_NAME(CUDNN_STATUS_NOT_INITIALIZED)
        XPBSI_NAME(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
        XPBSI_NAME(CUDNN_STATUS_DEPRECATED)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_NULL_POINTER)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE)
        XPBSI_NAME(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE)
        XPBSI_NAME(CUDNN_STATUS_NOT_SUPPORTED)
        XPBSI_NAME(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN)
        XPBSI_NAME(CUDNN_STATUS_NOT_SUPPORTED_SHAPE)
        XPBSI_NAME(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE)
        XPBSI_NAME(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT)
        XPBSI_NAME(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)
        XPBSI_NAME(CUDNN_STATUS_INTERNAL_ERROR)
        XPBSI_NAME(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
        XPBSI_NAME(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        XPBSI_NAME(CUDNN_STATUS_EXECUTION_FAILED)
        XPBSI_NAME(CUDNN_STATUS_EXECUTION_FAILED_CUDART)
#undef XPBSI_NAME
    default:
        return "CUDNN_STATUS_UNKNOWN (not a status of the stand-in)";
    }
}

// "retrieves the last encountered cuDNN error message in the current thread"
void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (!message || max_size == 0)
        return;
    snprintf(message, max_size, "%s", xpbsi::dnn::t_message);
    xpbsi::dnn::t_message[0] = '\0';
}

// A handle needs a device: without one cuDNN cannot initialise.
cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    XPBSI_LOCK;
    if (!handle)
        return xpbsi::dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnCreate(NULL)");
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return xpbsi::dnn::fail(CUDNN_STATUS_NOT_INITIALIZED, "no CUDA device");
    }
    auto *h = new xpbsi::dnn::handle{xpbsi::dnn::k_handle_magic, nullptr};
    xpbsi::dnn::handles().insert(h);
    *handle = reinterpret_cast<cudnnHandle_t>(h);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    XPBSI_LOCK;
    xpbsi::dnn::handle *h = xpbsi::dnn::handle_of(handle);
    if (!h)
        return xpbsi::dnn::fail(CUDNN_STATUS_BAD_PARAM, "cudnnDestroy: not a live handle");
    xpbsi::dnn::handles().erase(h);
    h->magic = 0;
    delete h;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    XPBSI_LOCK;
    xpbsi::dnn::handle *h = xpbsi::dnn::handle_of(handle);
    if (!h)
        return xpbsi::dnn::fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a live handle");
    if (!xpbsi::resolve(streamId))
        return xpbsi::dnn::fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a live stream");
    h->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    XPBSI_LOCK;
    xpbsi::dnn::handle *h = xpbsi::dnn::handle_of(handle);
    if (!h || !streamId)
        return xpbsi::dnn::fail(CUDNN_STATUS_BAD_PARAM, "cudnnGetStream: bad argument");
    *streamId = h->stream;
    return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
