/* A model program compiled on one backend: open the device, compile, write the initial
 * values and a batch, run steps. Used by the runner, --dump, verification and conformance. */
#ifndef XPB_CORE_SESSION_H
#define XPB_CORE_SESSION_H

#include <xpubench/backend.h>

#include "plugin/loader.h"
#include "program/model_program.h"

typedef struct xpb_session {
    const xpb_backend_api *api;  /* owned by the plugin */
    xpb_backend *backend;        /* owned by the session */
    xpb_executable *exe;         /* owned by the session */
    const xpb_model_program *mp; /* borrowed: must outlive the session */
    xpb_device_info info;
    uint32_t threads; /* host threads the run uses (xpb_session_open_for_run): the compile
                         option when the backend takes one (capability "threads"), else the
                         device's default (info.threads); 0: unknown */
    void *scratch;    /* largest input, for batches */
} xpb_session;

/* Opens `device` of backend `api`, compiles mp's program with `opts`, writes the initial
 * values and batch 0. On failure the session is left closed and the status says why:
 * XPB_NO_DEVICE / XPB_UNSUPPORTED mean "this backend cannot run this", anything else failed.
 * Release with xpb_session_close. */
xpb_status xpb_session_open(xpb_session *s, const xpb_backend_api *api, uint32_t device,
                            const xpb_model_program *mp, const xpb_compile_options *opts,
                            xpb_err *err);
void xpb_session_close(xpb_session *s);

/* XPB_UNSUPPORTED when `p` needs an op set above the one backend `plugin` knows, with a
 * message naming the plugin and the first such op ("backend 'x' 1.0.0 knows op set 1; op
 * ALL_REDUCE (layer 'grads') is from op set 2"); XPB_OK otherwise. */
xpb_status xpb_session_check_opset(const xpb_plugin_descriptor *plugin, const xpb_program *p,
                                   xpb_err *err);

/* xpb_session_open for a measured run: refuses first a program that needs a newer op set than
 * the backend knows (xpb_session_check_opset), then, after opening the device, a precision the
 * device only emulates unless `allow_emulated` (XPB_UNSUPPORTED, naming the precision, the
 * device and the way out), before anything is compiled. */
xpb_status xpb_session_open_for_run(xpb_session *s, const xpb_plugin_descriptor *plugin,
                                    uint32_t device, const xpb_model_program *mp,
                                    const xpb_compile_options *opts, int allow_emulated,
                                    xpb_err *err);

/* Runs every phase of one step, then synchronizes. `backend_seconds`, when not NULL, gets
 * the time spent inside the backend's run and synchronize calls. */
xpb_status xpb_session_step(xpb_session *s, double *backend_seconds, xpb_err *err);

/* Reads tensor `t` into `buf` (xpb_tensor_bytes). */
xpb_status xpb_session_read(xpb_session *s, uint32_t t, void *buf, xpb_err *err);

/* The sum of weighted losses of phase `phase` (or every phase when UINT32_MAX) after a step;
 * NaN when the program has none. */
xpb_status xpb_session_loss(double *out, xpb_session *s, uint32_t phase, xpb_err *err);

#endif
