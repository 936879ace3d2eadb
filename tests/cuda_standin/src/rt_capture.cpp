// Stream capture (CUDA Runtime API, Stream Management: cudaStreamBeginCapture,
// cudaStreamEndCapture, cudaStreamIsCapturing, cudaThreadExchangeStreamCaptureMode; CUDA
// Programming Guide, CUDA Graphs, Stream Capture): work pushed into a capturing stream "will not
// be executed, but will instead be captured into a graph"; the rules a capture sequence can
// break invalidate it, and cudaStreamEndCapture then returns no graph.
#include "rt_internal.hpp"

namespace xpbsi
{

namespace
{

thread_local cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;
unsigned long long g_next_id = 1;

void end(capture &c)
{
    auto &all = active_captures();
    for (size_t i = 0; i < all.size(); i++)
        if (all[i].get() == &c) {
            all.erase(all.begin() + (long)i);
            break;
        }
    for (CUstream_st *m : c.members) {
        m->cap.reset();
        m->unjoined = false;
        m->cap_tail = 0;
    }
    c.members.clear();
    c.ended = true;
}

} // namespace

std::vector<std::shared_ptr<capture>> &active_captures()
{
    static std::vector<std::shared_ptr<capture>> &a =
        *new std::vector<std::shared_ptr<capture>>; // immortal: reachable at exit
    return a;
}

void invalidate(capture &c, cudaError_t e, const char *what)
{
    if (c.invalid)
        return;
    c.invalid = true;
    c.why = std::string(what) + ": " + cudaGetErrorName(e);
    diag("capture sequence %llu invalidated by %s (%s)", c.id, what, cudaGetErrorString(e));
}

// cudaThreadExchangeStreamCaptureMode: in mode Global (the default) a thread may not make a
// potentially unsafe call while it has a capture sequence not begun in Relaxed mode, nor while
// another thread has one begun in Global mode; in ThreadLocal mode only its own sequences count;
// in Relaxed mode nothing does.
cudaError_t check_unsafe(const char *api)
{
    if (t_mode == cudaStreamCaptureModeRelaxed)
        return cudaSuccess;
    std::thread::id me = std::this_thread::get_id();
    for (auto &c : active_captures()) {
        bool mine = c->thread == me && c->mode != cudaStreamCaptureModeRelaxed;
        bool global = t_mode == cudaStreamCaptureModeGlobal && c->thread != me &&
                      c->mode == cudaStreamCaptureModeGlobal;
        if (mine || global) {
            diag("%s is potentially unsafe during stream capture (sequence %llu, %s mode)", api,
                 c->id, c->mode == cudaStreamCaptureModeGlobal ? "global" : "thread-local");
            invalidate(*c, cudaErrorStreamCaptureUnsupported, api);
            return cudaErrorStreamCaptureUnsupported;
        }
    }
    return cudaSuccess;
}

} // namespace xpbsi

extern "C" {

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (!mode || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
        return xpbsi::record(cudaErrorInvalidValue);
    cudaStreamCaptureMode old = xpbsi::t_mode;
    xpbsi::t_mode = *mode;
    *mode = old;
    return cudaSuccess;
}

// "Capture may not be initiated if stream is cudaStreamLegacy ... it may only be initiated if
// the stream is not already in capture mode."
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    XPBSI_API_ENTER;
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return xpbsi::record(cudaErrorInvalidValue);
    CUstream_st *st = xpbsi::resolve(stream);
    if (!st)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (stream == nullptr || stream == cudaStreamLegacy)
        return xpbsi::record(cudaErrorStreamCaptureUnsupported);
    if (st->cap)
        return xpbsi::record(cudaErrorIllegalState);
    auto c = std::make_shared<xpbsi::capture>();
    c->id = xpbsi::g_next_id++;
    c->mode = mode;
    c->thread = std::this_thread::get_id();
    c->origin = st;
    c->members.push_back(st);
    st->cap = c;
    st->cap_tail = 0;
    st->unjoined = false;
    xpbsi::active_captures().push_back(c);
    return cudaSuccess;
}

// "If capture was invalidated, due to a violation of the rules of stream capture, then a NULL
// graph will be returned." Work forked into another stream must have been joined back into the
// origin stream (cudaErrorStreamCaptureUnjoined).
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    XPBSI_API_ENTER;
    if (!pGraph)
        return xpbsi::record(cudaErrorInvalidValue);
    *pGraph = nullptr;
    CUstream_st *st = xpbsi::resolve(stream);
    if (!st)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (!st->cap)
        return xpbsi::record(cudaErrorIllegalState);
    std::shared_ptr<xpbsi::capture> c = st->cap;
    if (c->origin != st) {
        xpbsi::invalidate(*c, cudaErrorStreamCaptureUnmatched, "cudaStreamEndCapture");
        return xpbsi::record(cudaErrorStreamCaptureUnmatched);
    }
    if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id())
        return xpbsi::record(cudaErrorStreamCaptureWrongThread);
    cudaError_t result = cudaSuccess;
    for (CUstream_st *m : c->members)
        if (m != st && m->unjoined) {
            xpbsi::invalidate(*c, cudaErrorStreamCaptureUnjoined, "cudaStreamEndCapture");
            result = cudaErrorStreamCaptureUnjoined;
        }
    xpbsi::end(*c);
    if (result != cudaSuccess)
        return xpbsi::record(result);
    if (c->invalid)
        return xpbsi::record(cudaErrorStreamCaptureInvalidated);
    *pGraph = xpbsi::make_graph(c->nodes);
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    XPBSI_API_ENTER;
    if (!pCaptureStatus)
        return xpbsi::record(cudaErrorInvalidValue);
    CUstream_st *st = xpbsi::resolve(stream);
    if (!st)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    *pCaptureStatus = !st->cap           ? cudaStreamCaptureStatusNone
                      : st->cap->invalid ? cudaStreamCaptureStatusInvalidated
                                         : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

} // extern "C"
