/* Input batches of a streamed run (`transfer: streamed`): staged once before the clock, in
 * the backend's page-locked host memory when it offers some (host_alloc), and copied into the
 * executable in every timed step, with write_async when the backend has it so that the copy
 * can overlap compute (docs/plugin-abi.md, "Streamed inputs"). */
#ifndef XPB_CORE_STREAM_H
#define XPB_CORE_STREAM_H

#include "run/session.h"

typedef struct xpb_stream {
    xpb_session *session; /* borrowed: outlives the stream */
    uint32_t n;           /* INPUT tensors */
    uint32_t *tensors;    /* their ids */
    void **staged;        /* their staged batch, one buffer each */
    int pinned;           /* 1: the buffers come from the backend's host_alloc */
    int async;            /* 1: pushed with write_async */
} xpb_stream;

/* Stages batch 0 of every input of the session's program. Release with xpb_stream_close. */
xpb_status xpb_stream_open(xpb_stream *st, xpb_session *s, xpb_err *err);

/* Starts (or does) the copy of every staged input into the executable: what one timed step
 * of a streamed run transfers. The next run() of the session reads the new values. */
xpb_status xpb_stream_push(xpb_stream *st, xpb_err *err);

/* Frees the staging buffers (through host_free when they came from host_alloc). Call it
 * after the session's last synchronize and before xpb_session_close. A zeroed stream is a
 * no-op. */
void xpb_stream_close(xpb_stream *st);

#endif
