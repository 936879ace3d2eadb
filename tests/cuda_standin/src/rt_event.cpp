// Events (CUDA Runtime API, Event Management: cudaEventCreate, cudaEventCreateWithFlags,
// cudaEventDestroy, cudaEventRecord, cudaEventQuery, cudaEventSynchronize, cudaEventElapsedTime;
// Stream Management: cudaStreamWaitEvent). Outside capture an event completes when it is
// recorded (the work before it ran at enqueue time) and keeps the time of that moment. Inside a
// capture, recording and waiting are how streams fork from and join the capture sequence.
#include <time.h>

#include <unordered_set>

#include "rt_internal.hpp"

namespace xpbsi
{

namespace
{

std::unordered_set<CUevent_st *> &events()
{
    static std::unordered_set<CUevent_st *> &e =
        *new std::unordered_set<CUevent_st *>; // immortal: reachable at exit
    return e;
}

CUevent_st *event_of(cudaEvent_t e)
{
    return e && events().count(e) ? e : nullptr;
}

double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

// "The operation is not permitted on an event which was last recorded in a capturing stream"
// (cudaErrorCapturedEvent); a still active capture is invalidated by the attempt.
cudaError_t captured_rule(CUevent_st *ev, const char *api)
{
    if (!ev->cap)
        return cudaSuccess;
    if (!ev->cap->ended)
        invalidate(*ev->cap, cudaErrorCapturedEvent, api);
    return cudaErrorCapturedEvent;
}

} // namespace

} // namespace xpbsi

extern "C" {

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    XPBSI_API_ENTER;
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    // "cudaEventInterprocess ... must be specified with cudaEventDisableTiming"
    if (!event || (flags & ~known) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return xpbsi::record(cudaErrorInvalidValue);
    CUevent_st *ev = new CUevent_st{XPBSI_EVENT_MAGIC, flags, false, 0.0, nullptr, nullptr, 0};
    xpbsi::events().insert(ev);
    *event = ev;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    XPBSI_API_ENTER;
    CUevent_st *ev = xpbsi::event_of(event);
    if (!ev)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    xpbsi::events().erase(ev);
    ev->magic = 0;
    delete ev;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    XPBSI_API_ENTER;
    CUevent_st *ev = xpbsi::event_of(event);
    CUstream_st *st = xpbsi::resolve(stream);
    if (!ev || !st)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (st->cap) {
        if (st->cap->invalid)
            return xpbsi::record(cudaErrorStreamCaptureInvalidated);
        ev->cap = st->cap;
        ev->cap_stream = st;
        ev->cap_tail = st->cap_tail;
        return cudaSuccess;
    }
    if (cudaError_t e = xpbsi::check_sync(stream, "cudaEventRecord"))
        return xpbsi::record(e); // the legacy stream's implicit dependency
    ev->cap.reset();
    ev->cap_stream = nullptr;
    ev->recorded = true;
    ev->ms = xpbsi::now_ms();
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    XPBSI_API_ENTER;
    CUevent_st *ev = xpbsi::event_of(event);
    if (!ev)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    return xpbsi::record(xpbsi::captured_rule(ev, "cudaEventQuery"));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    XPBSI_API_ENTER;
    CUevent_st *ev = xpbsi::event_of(event);
    if (!ev)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (cudaError_t e = xpbsi::captured_rule(ev, "cudaEventSynchronize"))
        return xpbsi::record(e);
    xpbsi::check_canaries();
    return xpbsi::enter();
}

// "If cudaEventRecord() has not been called on either event, then cudaErrorInvalidResourceHandle
// is returned ... If either event was created with the cudaEventDisableTiming flag, then this
// function will return cudaErrorInvalidResourceHandle."
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    XPBSI_API_ENTER;
    CUevent_st *a = xpbsi::event_of(start), *b = xpbsi::event_of(end);
    if (!ms)
        return xpbsi::record(cudaErrorInvalidValue);
    if (!a || !b || (a->flags & cudaEventDisableTiming) || (b->flags & cudaEventDisableTiming))
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (cudaError_t e = xpbsi::captured_rule(a, "cudaEventElapsedTime"))
        return xpbsi::record(e);
    if (cudaError_t e = xpbsi::captured_rule(b, "cudaEventElapsedTime"))
        return xpbsi::record(e);
    if (!a->recorded || !b->recorded)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    *ms = (float)(b->ms - a->ms);
    return cudaSuccess;
}

// Outside capture the event's work is complete: nothing to wait for. Waiting on an event that
// was recorded in a capture sequence makes the stream join that sequence (CUDA Programming
// Guide, Cross-stream Dependencies and Events); waiting on one from another sequence would merge
// two sequences, and waiting from a capturing stream on an event recorded outside capture
// crosses the capture boundary unless cudaEventWaitExternal is given.
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    XPBSI_API_ENTER;
    CUevent_st *ev = xpbsi::event_of(event);
    CUstream_st *st = xpbsi::resolve(stream);
    if (!ev || !st)
        return xpbsi::record(cudaErrorInvalidResourceHandle);
    if (flags & ~(unsigned)cudaEventWaitExternal)
        return xpbsi::record(cudaErrorInvalidValue);
    if (ev->cap && !ev->cap->ended) {
        std::shared_ptr<xpbsi::capture> c = ev->cap;
        if (c->invalid)
            return xpbsi::record(cudaErrorStreamCaptureInvalidated);
        if (!st->cap) {
            if (st->implicit && !(st->flags & cudaStreamNonBlocking))
                return xpbsi::record(cudaErrorStreamCaptureImplicit);
            st->cap = c;
            st->cap_tail = c->nodes.size();
            st->unjoined = false;
            c->members.push_back(st);
        } else if (st->cap != c) {
            xpbsi::invalidate(*c, cudaErrorStreamCaptureMerge, "cudaStreamWaitEvent");
            xpbsi::invalidate(*st->cap, cudaErrorStreamCaptureMerge, "cudaStreamWaitEvent");
            return xpbsi::record(cudaErrorStreamCaptureMerge);
        } else if (st == c->origin && ev->cap_stream != st &&
                   ev->cap_tail == ev->cap_stream->cap_tail) {
            ev->cap_stream->unjoined = false; // everything that stream captured is joined
        }
        return cudaSuccess;
    }
    if (st->cap && ev->recorded && !(flags & cudaEventWaitExternal)) {
        xpbsi::invalidate(*st->cap, cudaErrorStreamCaptureIsolation, "cudaStreamWaitEvent");
        return xpbsi::record(cudaErrorStreamCaptureIsolation);
    }
    return cudaSuccess;
}

} // extern "C"
