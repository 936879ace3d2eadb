// Streams of the stand-in (CUDA Runtime API, Stream Management: cudaStreamCreate,
// cudaStreamCreateWithFlags, cudaStreamDestroy, cudaStreamSynchronize, cudaStreamQuery,
// cudaDeviceSynchronize). Work enqueued on a stream runs at once, in the order it is enqueued,
// which is one order a GPU may run it in; while the stream captures it is only recorded (see
// rt_capture.cpp), so that a captured graph that is never launched computes nothing.
#include <unordered_set>

#include "rt_internal.hpp"

namespace xpbsi
{

namespace
{

int abi_enqueue(void *stream, const char *what, void (*fn)(void *), void *arg,
                void (*release)(void *));

const xpbsi_stream_abi k_abi = {XPBSI_STREAM_ABI_MAGIC, XPBSI_STREAM_ABI_VERSION, abi_enqueue};

CUstream_st g_legacy = {&k_abi, XPBSI_STREAM_MAGIC, 0, true, false, 0, nullptr};
thread_local CUstream_st t_per_thread = {
    &k_abi, XPBSI_STREAM_MAGIC, cudaStreamNonBlocking, true, false, 0, nullptr};

std::unordered_set<CUstream_st *> &streams()
{
    static std::unordered_set<CUstream_st *> &s =
        *new std::unordered_set<CUstream_st *>; // immortal: reachable at exit
    return s;
}

// The entry point of include/xpbsi/stream_abi.h: stream work from another stand-in library.
int abi_enqueue(void *stream, const char *what, void (*fn)(void *), void *arg,
                void (*release)(void *))
{
    XPBSI_LOCK;
    if (cudaError_t e = enter())
        return e;
    work_ptr w = make_work(what ? what : "external work", [fn, arg] { fn(arg); });
    if (release)
        w->release = [release, arg] { release(arg); };
    return record(enqueue(static_cast<cudaStream_t>(stream), w));
}

// The legacy default stream waits for all blocking streams: a blocking stream that captures
// makes that wait illegal ("cudaErrorStreamCaptureImplicit: the operation would have resulted
// in a disallowed implicit dependency on a current capture sequence from cudaStreamLegacy").
cudaError_t legacy_rule(const char *what)
{
    for (auto &c : active_captures())
        for (CUstream_st *m : c->members)
            if (!(m->flags & cudaStreamNonBlocking)) {
                invalidate(*c, cudaErrorStreamCaptureImplicit, what);
                return cudaErrorStreamCaptureImplicit;
            }
    return cudaSuccess;
}

} // namespace

work_item::~work_item()
{
    if (release)
        release();
}

work_ptr make_work(std::string what, std::function<void()> run)
{
    auto w = std::make_shared<work_item>();
    w->what = std::move(what);
    w->run = std::move(run);
    return w;
}

CUstream_st *resolve(cudaStream_t s)
{
    if (s == nullptr || s == cudaStreamLegacy)
        return &g_legacy;
    if (s == cudaStreamPerThread)
        return &t_per_thread;
    return streams().count(s) ? s : nullptr;
}

void execute(const work_item &w)
{
    if (sticky_error() == cudaSuccess)
        w.run();
}

cudaError_t enqueue(cudaStream_t s, const work_ptr &w)
{
    CUstream_st *st = resolve(s);
    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (st == &g_legacy)
        if (cudaError_t e = legacy_rule(w->what.c_str()))
            return e;
    if (st->cap) {
        capture &c = *st->cap;
        if (c.invalid)
            return cudaErrorStreamCaptureInvalidated;
        c.nodes.push_back(w);
        st->cap_tail = c.nodes.size();
        if (st != c.origin)
            st->unjoined = true;
        return cudaSuccess;
    }
    execute(*w);
    return sticky_error();
}

cudaError_t check_sync(cudaStream_t s, const char *api)
{
    CUstream_st *st = resolve(s);
    if (!st)
        return cudaErrorInvalidResourceHandle;
    if (st == &g_legacy)
        return legacy_rule(api);
    if (st->cap) {
        // "It is invalid to synchronize or query the execution status of a stream which is
        // being captured" (CUDA Programming Guide, Stream Capture, Prohibited Operations)
        invalidate(*st->cap, cudaErrorStreamCaptureUnsupported, api);
        return cudaErrorStreamCaptureUnsupported;
    }
    return cudaSuccess;
}

bool capturing(cudaStream_t s)
{
    CUstream_st *st = resolve(s);
    return st && st->cap;
}

} // namespace xpbsi

extern "C" {

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    XPBSI_API_ENTER;
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return xpbsi::record(cudaErrorInvalidValue);
    CUstream_st *s =
        new CUstream_st{&xpbsi::k_abi, XPBSI_STREAM_MAGIC, flags, false, false, 0, nullptr};
    xpbsi::streams().insert(s);
    *pStream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    XPBSI_API_ENTER;
    CUstream_st *st = xpbsi::resolve(stream);
    if (!st || st->implicit)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (st->cap) {
        xpbsi::invalidate(*st->cap, cudaErrorStreamCaptureUnsupported, "cudaStreamDestroy");
        auto &m = st->cap->members;
        for (size_t i = 0; i < m.size(); i++)
            if (m[i] == st)
                m.erase(m.begin() + (long)i);
    }
    xpbsi::streams().erase(st);
    st->magic = 0;
    delete st;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_sync(stream, "cudaStreamSynchronize"))
        return xpbsi::record(e);
    xpbsi::check_canaries();
    return xpbsi::enter();
}

// All work is complete when it has been enqueued: cudaSuccess, never cudaErrorNotReady.
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    XPBSI_API_ENTER;
    return xpbsi::record(xpbsi::check_sync(stream, "cudaStreamQuery"));
}

cudaError_t cudaDeviceSynchronize(void)
{
    XPBSI_API_ENTER;
    if (cudaError_t e = xpbsi::check_unsafe("cudaDeviceSynchronize"))
        return xpbsi::record(e);
    xpbsi::check_canaries();
    return xpbsi::enter();
}

} // extern "C"
