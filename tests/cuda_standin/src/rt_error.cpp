// Errors of the CUDA runtime stand-in: the per-thread last error and the process's sticky error
// (CUDA Runtime API, Error Handling: cudaGetLastError, cudaPeekAtLastError, cudaGetErrorName,
// cudaGetErrorString), and the diagnostics the stand-in prints when it refuses something.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "rt_internal.hpp"

namespace xpbsi
{

namespace
{

thread_local cudaError_t t_last = cudaSuccess;
cudaError_t g_sticky = cudaSuccess;

struct error_name {
    cudaError_t code;
    const char *name;
};

// Every cudaError_t of the installed toolkit's driver_types.h (generated at configure time).
const error_name k_names[] = {
    {cudaSuccess, "cudaSuccess"},
#include "cuda_error_names.inc"
};

struct error_text {
    cudaError_t code;
    const char *text;
};

// The descriptions of the errors a stand-in run meets (driver_types.h documents each value).
const error_text k_texts[] = {
    {cudaSuccess, "no error"},
    {cudaErrorInvalidValue, "invalid argument"},
    {cudaErrorMemoryAllocation, "out of memory"},
    {cudaErrorInitializationError, "initialization error"},
    {cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "invalid device ordinal"},
    {cudaErrorInvalidConfiguration, "invalid configuration argument"},
    {cudaErrorInvalidResourceHandle, "invalid resource handle"},
    {cudaErrorNotReady, "device not ready"},
    {cudaErrorIllegalAddress, "an illegal memory access was encountered"},
    {cudaErrorLaunchFailure, "unspecified launch failure"},
    {cudaErrorLaunchOutOfResources, "too many resources requested for launch"},
    {cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"},
    {cudaErrorInvalidDevicePointer, "invalid device pointer"},
    {cudaErrorIllegalState, "the operation cannot be performed in the present state"},
    {cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureMerge,
     "operation would result in a merge of separate capture sequences"},
    {cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began"},
    {cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work"},
    {cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream"},
    {cudaErrorStreamCaptureImplicit,
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {cudaErrorCapturedEvent,
     "operation not permitted on an event last recorded in a capturing stream"},
    {cudaErrorStreamCaptureWrongThread,
     "attempt to terminate a thread-local capture sequence from another thread"},
    {cudaErrorUnknown, "unknown error"},
};

} // namespace

std::recursive_mutex &big_lock()
{
    static std::recursive_mutex &m = *new std::recursive_mutex; // immortal: reachable at exit
    return m;
}

cudaError_t record(cudaError_t e)
{
    if (e != cudaSuccess)
        t_last = e;
    return e;
}

cudaError_t sticky_error()
{
    return g_sticky;
}

void diag(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "xpbsi: %s\n", buf);
}

void make_sticky(cudaError_t e, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (g_sticky == cudaSuccess) {
        g_sticky = e;
        fprintf(stderr, "xpbsi: %s: %s (sticky: every later CUDA call returns it)\n",
                cudaGetErrorName(e), buf);
    } else {
        fprintf(stderr, "xpbsi: after the sticky error: %s\n", buf);
    }
    t_last = g_sticky;
}

cudaError_t enter()
{
    return g_sticky != cudaSuccess ? record(g_sticky) : cudaSuccess;
}

} // namespace xpbsi

extern "C" {

// "Returns the last error that has been produced by any of the runtime calls in the same
// instance of the CUDA Runtime library in the host thread and resets it to cudaSuccess."
// A sticky error is not reset: it is returned again by every call.
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = xpbsi::t_last;
    xpbsi::t_last = xpbsi::g_sticky;
    return e;
}

// The same, without resetting it.
cudaError_t cudaPeekAtLastError(void)
{
    return xpbsi::t_last;
}

const char *cudaGetErrorName(cudaError_t error)
{
    for (const auto &n : xpbsi::k_names)
        if (n.code == error)
            return n.name;
    return "cudaErrorUnknown"; // "unrecognized error code" is what the runtime returns
}

const char *cudaGetErrorString(cudaError_t error)
{
    for (const auto &t : xpbsi::k_texts)
        if (t.code == error)
            return t.text;
    for (const auto &n : xpbsi::k_names)
        if (n.code == error)
            return n.name; // a documented error the stand-in never produces itself
    return "unrecognized error code";
}

} // extern "C"
