/* A compiled model program on one backend (see session.h). */
#include "run/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <string.h>

#include "base/clock.h"
#include "plugin/guard.h"
#include "plugin/loader.h"
#include "base/names.h"
#include "program/init.h"
#include "program/program_abi.h"

/* Every call into the backend below is recorded for the crash line (plugin/guard.h). */

/* Sets err to "<backend 'name'>: <entry>: <the backend's message of its last failure>", the
 * message read inside the recorded call (exe_last_error(exe) when exe is not NULL, else
 * last_error(be)); returns st. The host names the plugin: plugins do not name themselves. */
static xpb_status backend_error(xpb_err *err, xpb_status st, const xpb_backend_api *api,
                                const xpb_backend *be, const xpb_executable *exe, const char *entry)
{
    char who[XPB_GUARD_NAME_MAX + 16];
    xpb_guard_who(who, sizeof who, api);
    xpb_guard_enter(api, exe ? "exe_last_error" : "last_error");
    xpb_err_set(err, st, "%s: %s: %s", who, entry,
                exe ? api->exe_last_error(exe) : api->last_error(be));
    xpb_guard_leave();
    return st;
}

static void close_backend(const xpb_backend_api *api, xpb_backend *be)
{
    xpb_guard_enter(api, "close");
    api->close(be);
    xpb_guard_leave();
}

static void destroy_exe(const xpb_backend_api *api, xpb_executable *exe)
{
    xpb_guard_enter(api, "destroy");
    api->destroy(exe);
    xpb_guard_leave();
}

/* Opens the device and reads its info into the (zeroed) session. */
static xpb_status open_device(xpb_session *s, const xpb_backend_api *api, uint32_t device,
                              const xpb_model_program *mp, xpb_err *err)
{
    xpb_status st;
    memset(s, 0, sizeof *s);
    s->api = api;
    s->mp = mp;
    xpb_guard_enter(api, "open");
    st = api->open(&s->backend, device);
    xpb_guard_leave();
    if (st)
        return backend_error(err, st, api, NULL, NULL, "open");
    s->info.struct_size = sizeof s->info;
    xpb_guard_enter(api, "device_info");
    st = api->device_info(s->backend, &s->info);
    xpb_guard_leave();
    if (st) {
        backend_error(err, st, api, s->backend, NULL, "device_info");
        goto close_device;
    }
    return XPB_OK;
close_device:
    close_backend(api, s->backend);
    s->backend = NULL;
    return st;
}

/* Compiles on the opened device and writes the initial values and batch 0; closes the device
 * on failure. */
static xpb_status compile_program(xpb_session *s, const xpb_compile_options *opts, xpb_err *err)
{
    xpb_status st;
    const xpb_backend_api *api = s->api;
    xpb_guard_enter(api, "compile");
    st = api->compile(&s->exe, s->backend, &s->mp->program, opts);
    xpb_guard_leave();
    if (st) {
        backend_error(err, st, api, s->backend, NULL, "compile");
        goto close_device;
    }
    size_t bytes = xpb_model_program_max_input_bytes(s->mp);
    if (!(s->scratch = malloc(bytes ? bytes : 4))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto destroy_executable;
    }
    if ((st = xpb_model_program_write_initial(s->mp, api, s->exe, err)) ||
        (st = xpb_model_program_write_batch(s->mp, api, s->exe, 0, s->scratch, err))) {
        char who[XPB_GUARD_NAME_MAX + 16];
        xpb_err_prefix(err, "%s", xpb_guard_who(who, sizeof who, api));
        goto free_scratch;
    }
#ifdef __GLIBC__
    /* What compiling freed (a backend's trial buffers, the initial values' buffer) goes back to
     * the system before the steps instead of staying in glibc's heap, so that the process's
     * peak memory is the program's and not the compile's leftovers. */
    malloc_trim(0);
#endif
    return XPB_OK;
free_scratch:
    free(s->scratch);
    s->scratch = NULL;
destroy_executable:
    destroy_exe(api, s->exe);
    s->exe = NULL;
close_device:
    close_backend(api, s->backend);
    s->backend = NULL;
    return st;
}

xpb_status xpb_session_open(xpb_session *s, const xpb_backend_api *api, uint32_t device,
                            const xpb_model_program *mp, const xpb_compile_options *opts,
                            xpb_err *err)
{
    xpb_status st = open_device(s, api, device, mp, err);
    return st ? st : compile_program(s, opts, err);
}

xpb_status xpb_session_check_opset(const xpb_plugin_descriptor *plugin, const xpb_program *p,
                                   xpb_err *err)
{
    uint32_t known = xpb_plugin_opset(plugin);
    const xpb_op *op = p->opset > known ? xpb_program_first_op_beyond(p, known) : NULL;
    if (!op)
        return XPB_OK;
    return xpb_err_set(err, XPB_UNSUPPORTED,
                       "backend '%s' %s knows op set %u; op %s (layer '%s') is from op set %u",
                       plugin->name, plugin->version, known, xpb_op_kind_name(p, op),
                       op->layer ? op->layer : "", op->opset);
}

xpb_status xpb_session_open_for_run(xpb_session *s, const xpb_plugin_descriptor *plugin,
                                    uint32_t device, const xpb_model_program *mp,
                                    const xpb_compile_options *opts, int allow_emulated,
                                    xpb_err *err)
{
    xpb_status st;
    const xpb_backend_api *api = plugin->api;
    if ((st = xpb_session_check_opset(plugin, &mp->program, err)))
        return st;
    if ((st = open_device(s, api, device, mp, err)))
        return st;
    uint32_t bit = XPB_PRECISION_BIT(opts->precision);
    if ((s->info.emulated_precisions & bit) && !allow_emulated) {
        xpb_err_set(err, XPB_UNSUPPORTED,
                    "precision %s is only emulated on %s (backend '%s': no native hardware "
                    "support, slower than its fp32); set allow_emulated: true to measure it "
                    "anyway",
                    xpb_precision_name(opts->precision), s->info.name, plugin->name);
        close_backend(api, s->backend);
        memset(s, 0, sizeof *s);
        return XPB_UNSUPPORTED;
    }
    s->threads = (xpb_plugin_caps(plugin) & XPB_CAP_THREADS) && opts->threads ? opts->threads
                                                                              : s->info.threads;
    return compile_program(s, opts, err);
}

void xpb_session_close(xpb_session *s)
{
    if (!s->api)
        return;
    free(s->scratch);
    destroy_exe(s->api, s->exe);
    close_backend(s->api, s->backend);
    memset(s, 0, sizeof *s);
}

xpb_status xpb_session_step(xpb_session *s, double *backend_seconds, xpb_err *err)
{
    xpb_status st;
    double inside = 0;
    for (uint32_t p = 0; p < s->mp->n_phases; p++) {
        xpb_guard_enter(s->api, "run");
        double t0 = xpb_now();
        st = s->api->run(s->exe, p);
        inside += xpb_now() - t0;
        xpb_guard_leave();
        if (st) {
            char entry[300];
            snprintf(entry, sizeof entry, "run of phase '%s'", s->mp->phases[p].name);
            backend_error(err, st, s->api, NULL, s->exe, entry);
            return st;
        }
    }
    xpb_guard_enter(s->api, "synchronize");
    double t0 = xpb_now();
    st = s->api->synchronize(s->exe);
    inside += xpb_now() - t0;
    xpb_guard_leave();
    if (st) {
        backend_error(err, st, s->api, NULL, s->exe, "synchronize");
        return st;
    }
    if (backend_seconds)
        *backend_seconds = inside;
    return XPB_OK;
}

xpb_status xpb_session_read(xpb_session *s, uint32_t t, void *buf, xpb_err *err)
{
    const xpb_tensor_desc *d = &s->mp->tensors[t];
    xpb_guard_enter(s->api, "read");
    xpb_status st = s->api->read(s->exe, t, buf, xpb_tensor_bytes(d));
    xpb_guard_leave();
    if (st) {
        char entry[600];
        snprintf(entry, sizeof entry, "reading '%s'", d->name);
        backend_error(err, st, s->api, NULL, s->exe, entry);
        return st;
    }
    return XPB_OK;
}

xpb_status xpb_session_loss(double *out, xpb_session *s, uint32_t phase, xpb_err *err)
{
    double total = 0;
    int any = 0;
    for (uint32_t i = 0; i < s->mp->n_losses; i++) {
        const xpb_program_loss *l = &s->mp->losses[i];
        if (phase != UINT32_MAX && l->phase != phase)
            continue;
        float v;
        xpb_status st = xpb_session_read(s, l->tensor, &v, err);
        if (st)
            return st;
        total += l->weight * v;
        any = 1;
    }
    *out = any ? total : NAN;
    return XPB_OK;
}
