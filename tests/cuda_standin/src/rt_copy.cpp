// Copies and fills (CUDA Runtime API, Memory Management: cudaMemcpy, cudaMemcpyAsync, cudaMemset,
// cudaMemsetAsync). The runtime documents that "calling cudaMemcpy() with dst and src pointers
// that do not match the direction of the copy results in an undefined behavior"; the stand-in
// refuses such a copy with cudaErrorInvalidValue and says why, as it does for a device range that
// runs past the end of its allocation or into freed memory.
#include <cstring>

#include "rt_internal.hpp"
#include "xpbsi/standin.h"

namespace xpbsi
{

namespace
{

enum class side { host, device, bad };

// Where [p, p + n) lies: device memory, host memory (pinned or pageable), or neither wholly.
side side_of(const void *p, size_t n, const char *api, const char *which)
{
    mem_info m = lookup(p);
    const char *c = static_cast<const char *>(p);
    switch (m.kind) {
    case mem_kind::none:
        return side::host;
    case mem_kind::freed:
        diag("%s: %s %p is in freed memory (allocation of %zu bytes at %p)", api, which, p, m.size,
             m.base);
        return side::bad;
    default:
        if ((size_t)(c - m.base) + n > m.size) {
            diag("%s: %s [%p, +%zu) runs past the end of its %zu-byte allocation at %p", api, which,
                 p, n, m.size, m.base);
            return side::bad;
        }
        return m.kind == mem_kind::device ? side::device : side::host;
    }
}

const char *kind_text(cudaMemcpyKind k)
{
    switch (k) {
    case cudaMemcpyHostToHost:
        return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice:
        return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost:
        return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice:
        return "cudaMemcpyDeviceToDevice";
    default:
        return "cudaMemcpyDefault";
    }
}

// Checks a copy's pointers against its kind: cudaSuccess or the error to return.
cudaError_t check_copy(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                       const char *api)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    side d = side_of(dst, count, api, "destination"), s = side_of(src, count, api, "source");
    if (d == side::bad || s == side::bad)
        return cudaErrorInvalidValue;
    if (kind == cudaMemcpyDefault)
        return cudaSuccess; // "the type of transfer is inferred from the pointer values"
    side want_s = (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
                      ? side::device
                      : side::host;
    side want_d = (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
                      ? side::device
                      : side::host;
    if (s != want_s || d != want_d) {
        diag("%s(%p <- %p, %zu bytes, %s): the source is %s and the destination %s", api, dst, src,
             count, kind_text(kind), s == side::device ? "device memory" : "host memory",
             d == side::device ? "device memory" : "host memory");
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

cudaError_t check_fill(void *p, size_t count, const char *api)
{
    if (count == 0)
        return cudaSuccess;
    if (!p || side_of(p, count, api, "destination") != side::device) {
        if (p && lookup(p).kind == mem_kind::none)
            diag("%s(%p, %zu bytes): not device memory", api, p, count);
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

work_ptr copy_work(void *dst, const void *src, size_t count)
{
    return make_work("memcpy", [dst, src, count] { memmove(dst, src, count); });
}

work_ptr fill_work(void *p, int value, size_t count, const char *what)
{
    return make_work(what, [p, value, count] { memset(p, value & 0xFF, count); });
}

cudaError_t async_op(cudaStream_t s, const work_ptr &w)
{
    return record(enqueue(s, w));
}

} // namespace

} // namespace xpbsi

extern "C" {

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_copy(dst, src, count, kind, "cudaMemcpyAsync"))
        return xpbsi::record(e);
    if (count == 0)
        return cudaSuccess;
    return xpbsi::async_op(stream, xpbsi::copy_work(dst, src, count));
}

// Synchronous: potentially unsafe during a capture, and ordered after the legacy stream.
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_copy(dst, src, count, kind, "cudaMemcpy"))
        return xpbsi::record(e);
    if (cudaError_t e = xpbsi::check_unsafe("cudaMemcpy"))
        return xpbsi::record(e);
    if (cudaError_t e = xpbsi::check_sync(nullptr, "cudaMemcpy"))
        return xpbsi::record(e);
    if (count)
        xpbsi::execute(*xpbsi::copy_work(dst, src, count));
    xpbsi::check_canaries();
    return xpbsi::enter();
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_fill(devPtr, count, "cudaMemsetAsync"))
        return xpbsi::record(e);
    if (count == 0)
        return cudaSuccess;
    return xpbsi::async_op(stream, xpbsi::fill_work(devPtr, value, count, "memset"));
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_fill(devPtr, count, "cudaMemset"))
        return xpbsi::record(e);
    if (cudaError_t e = xpbsi::check_unsafe("cudaMemset"))
        return xpbsi::record(e);
    if (cudaError_t e = xpbsi::check_sync(nullptr, "cudaMemset"))
        return xpbsi::record(e);
    if (count)
        xpbsi::execute(*xpbsi::fill_work(devPtr, value, count, "memset"));
    return xpbsi::enter();
}

cudaError_t xpbsi_poison_async(void *device_ptr, size_t bytes, cudaStream_t stream)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_fill(device_ptr, bytes, "xpbsi_poison_async"))
        return xpbsi::record(e);
    if (bytes == 0)
        return cudaSuccess;
    return xpbsi::async_op(stream, xpbsi::fill_work(device_ptr, 0xFF, bytes, "poison"));
}

} // extern "C"
