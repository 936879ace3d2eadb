/* A compiled model program on one backend (see session.h). */
#include "session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

xpb_status xpb_session_open(xpb_session *s, const xpb_backend_api *api, uint32_t device,
                            const xpb_model_program *mp, const xpb_compile_options *opts,
                            xpb_err *err)
{
    xpb_status st;
    memset(s, 0, sizeof *s);
    s->api = api;
    s->mp = mp;
    if ((st = api->open(&s->backend, device)))
        return xpb_err_set(err, st, "%s", api->last_error(NULL));
    s->info.struct_size = sizeof s->info;
    if ((st = api->device_info(s->backend, &s->info))) {
        xpb_err_set(err, st, "device_info: %s", api->last_error(s->backend));
        goto close_backend;
    }
    if ((st = api->compile(&s->exe, s->backend, &mp->program, opts))) {
        xpb_err_set(err, st, "%s", api->last_error(s->backend));
        goto close_backend;
    }
    size_t bytes = xpb_model_program_max_input_bytes(mp);
    if (!(s->scratch = malloc(bytes ? bytes : 4))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto destroy_exe;
    }
    if ((st = xpb_model_program_write_initial(mp, api, s->exe, err)) ||
        (st = xpb_model_program_write_batch(mp, api, s->exe, 0, s->scratch, err)))
        goto free_scratch;
    return XPB_OK;
free_scratch:
    free(s->scratch);
    s->scratch = NULL;
destroy_exe:
    api->destroy(s->exe);
    s->exe = NULL;
close_backend:
    api->close(s->backend);
    s->backend = NULL;
    return st;
}

void xpb_session_close(xpb_session *s)
{
    if (!s->api)
        return;
    free(s->scratch);
    s->api->destroy(s->exe);
    s->api->close(s->backend);
    memset(s, 0, sizeof *s);
}

xpb_status xpb_session_step(xpb_session *s, double *backend_seconds, xpb_err *err)
{
    xpb_status st;
    double inside = 0;
    for (uint32_t p = 0; p < s->mp->n_phases; p++) {
        double t0 = xpb_now();
        st = s->api->run(s->exe, p);
        inside += xpb_now() - t0;
        if (st)
            return xpb_err_set(err, st, "run of phase '%s': %s", s->mp->phases[p].name,
                               s->api->exe_last_error(s->exe));
    }
    double t0 = xpb_now();
    st = s->api->synchronize(s->exe);
    inside += xpb_now() - t0;
    if (st)
        return xpb_err_set(err, st, "synchronize: %s", s->api->exe_last_error(s->exe));
    if (backend_seconds)
        *backend_seconds = inside;
    return XPB_OK;
}

xpb_status xpb_session_read(xpb_session *s, uint32_t t, void *buf, xpb_err *err)
{
    const xpb_tensor_desc *d = &s->mp->tensors[t];
    xpb_status st = s->api->read(s->exe, t, buf, xpb_tensor_bytes(d));
    if (st)
        return xpb_err_set(err, st, "reading '%s': %s", d->name, s->api->exe_last_error(s->exe));
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
