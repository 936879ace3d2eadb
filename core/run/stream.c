/* Streamed input batches (see stream.h). */
#include "run/stream.h"

#include <stdlib.h>
#include <string.h>

#include "program/init.h"
#include "plugin/guard.h"

/* Frees the staged buffers (not the arrays). */
static void free_staged(xpb_stream *st)
{
    xpb_session *s = st->session;
    for (uint32_t k = 0; k < st->n; k++) {
        if (st->pinned && st->staged[k]) {
            xpb_guard_enter(s->api, "host_free");
            s->api->host_free(s->backend, st->staged[k]);
            xpb_guard_leave();
        } else {
            free(st->staged[k]);
        }
        st->staged[k] = NULL;
    }
}

/* The backend's host_alloc, recorded for the crash line (plugin/guard.h). */
static xpb_status host_alloc(xpb_session *s, size_t bytes, void **out)
{
    xpb_guard_enter(s->api, "host_alloc");
    xpb_status st = s->api->host_alloc(s->backend, bytes, out);
    xpb_guard_leave();
    return st;
}

/* Allocates and fills one buffer per input: from host_alloc when st->pinned, else malloc.
 * -1 when an allocation failed (the buffers made so far are freed). */
static int stage_all(xpb_stream *st)
{
    xpb_session *s = st->session;
    uint32_t k = 0;
    for (uint32_t t = 0; t < s->mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &s->mp->tensors[t];
        if (d->role != XPB_ROLE_INPUT)
            continue;
        size_t bytes = xpb_tensor_bytes(d);
        void *buf = NULL;
        if (st->pinned ? host_alloc(s, bytes, &buf) != XPB_OK || !buf : !(buf = malloc(bytes))) {
            free_staged(st);
            return -1;
        }
        xpb_model_program_batch(s->mp, t, 0, buf);
        st->tensors[k] = t;
        st->staged[k++] = buf;
    }
    return 0;
}

xpb_status xpb_stream_open(xpb_stream *st, xpb_session *s, xpb_err *err)
{
    const xpb_backend_api *api = s->api;
    memset(st, 0, sizeof *st);
    st->session = s;
    st->pinned = XPB_MEMBER_OR(api, xpb_backend_api, host_alloc, NULL) &&
                 XPB_MEMBER_OR(api, xpb_backend_api, host_free, NULL);
    st->async = XPB_MEMBER_OR(api, xpb_backend_api, write_async, NULL) != NULL;
    for (uint32_t t = 0; t < s->mp->n_tensors; t++)
        st->n += s->mp->tensors[t].role == XPB_ROLE_INPUT;
    st->tensors = calloc(st->n ? st->n : 1, sizeof *st->tensors);
    st->staged = calloc(st->n ? st->n : 1, sizeof *st->staged);
    if (!st->tensors || !st->staged)
        goto oom;
    if (stage_all(st) == 0)
        return XPB_OK;
    if (st->pinned) { /* no page-locked memory to give: plain memory still measures a copy */
        st->pinned = 0;
        if (stage_all(st) == 0)
            return XPB_OK;
    }
oom:
    xpb_stream_close(st);
    return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory staging the input batches");
}

xpb_status xpb_stream_push(xpb_stream *st, xpb_err *err)
{
    xpb_session *s = st->session;
    const xpb_backend_api *api = s->api;
    for (uint32_t k = 0; k < st->n; k++) {
        const xpb_tensor_desc *d = &s->mp->tensors[st->tensors[k]];
        size_t bytes = xpb_tensor_bytes(d);
        xpb_guard_enter(api, st->async ? "write_async" : "write");
        xpb_status rc = st->async ? api->write_async(s->exe, st->tensors[k], st->staged[k], bytes)
                                  : api->write(s->exe, st->tensors[k], st->staged[k], bytes);
        xpb_guard_leave();
        if (rc) {
            char who[XPB_GUARD_NAME_MAX + 16];
            xpb_guard_who(who, sizeof who, api);
            xpb_guard_enter(api, "exe_last_error");
            xpb_err_set(err, rc, "%s: %s input '%s': %s", who,
                        st->async ? "write_async of" : "writing", d->name,
                        api->exe_last_error(s->exe));
            xpb_guard_leave();
            return rc;
        }
    }
    return XPB_OK;
}

void xpb_stream_close(xpb_stream *st)
{
    if (!st->session)
        return;
    if (st->staged)
        free_staged(st);
    free(st->staged);
    free(st->tensors);
    memset(st, 0, sizeof *st);
}
