/* Initial values and synthetic data of a model program: what the host writes into a backend
 * before the clock starts, identical on every backend for one seed. */
#include <stdlib.h>
#include <string.h>

#include "program/init.h"
#include "program/plugin_calls.h"
#include "program/rng.h"

xpb_status xpb_model_program_initial_value(const xpb_model_program *mp, uint32_t t, float *buf)
{
    const xpb_tensor_desc *d = &mp->tensors[t];
    int64_t n = xpb_tensor_numel(d);
    uint32_t value = mp->tensor_value[t];
    if (d->role != XPB_ROLE_PARAM && d->role != XPB_ROLE_STATE)
        return XPB_INVALID_ARGUMENT;
    if (value == 0) { /* optimizer state */
        memset(buf, 0, (size_t)n * sizeof *buf);
        return XPB_OK;
    }
    const xpb_gvalue *v = &mp->graph->values[value];
    if (v->kind == XPB_VALUE_CONST) {
        if (v->data) /* given values, F32 or I32: 4 bytes each either way */
            memcpy(buf, v->data, (size_t)n * 4);
        else
            for (int64_t i = 0; i < n; i++)
                buf[i] = (float)v->value;
        return XPB_OK;
    }
    xpb_rng r;
    xpb_rng_init(&r, mp->seed, v->name, 0);
    for (int64_t i = 0; i < n; i++) {
        double x;
        switch (v->init.kind) {
        case XPB_INIT_ZEROS:
            x = 0;
            break;
        case XPB_INIT_ONES:
            x = 1;
            break;
        case XPB_INIT_CONST:
            x = v->init.a;
            break;
        case XPB_INIT_UNIFORM:
            x = v->init.a + (v->init.b - v->init.a) * xpb_rng_uniform(&r);
            break;
        case XPB_INIT_NORMAL:
            x = v->init.a + v->init.b * xpb_rng_normal(&r);
            break;
        default:
            return XPB_INVALID_ARGUMENT;
        }
        buf[i] = (float)x;
    }
    return XPB_OK;
}

xpb_status xpb_model_program_batch(const xpb_model_program *mp, uint32_t t, uint64_t index,
                                   void *buf)
{
    const xpb_tensor_desc *d = &mp->tensors[t];
    if (d->role != XPB_ROLE_INPUT)
        return XPB_INVALID_ARGUMENT;
    const xpb_gvalue *v = &mp->graph->values[mp->tensor_value[t]];
    /* The first dimension is the batch (the builder checks it): one stream per sample. */
    uint64_t batch = (uint64_t)d->dims[0], per = (uint64_t)(xpb_tensor_numel(d) / d->dims[0]);
    uint64_t first = (index * mp->data_shards + mp->data_shard) * batch;
    for (uint64_t i = 0; i < batch; i++) {
        xpb_rng r;
        xpb_rng_init(&r, mp->seed ^ 0x5eed0fda7aull, v->name, first + i);
        if (d->dtype == XPB_DTYPE_I32) {
            int64_t lo = (int64_t)v->lo, span = (int64_t)v->hi - lo + 1;
            int32_t *out = (int32_t *)buf + i * per;
            for (uint64_t k = 0; k < per; k++)
                out[k] = (int32_t)(lo + (int64_t)(xpb_rng_next(&r) % (uint64_t)span));
        } else {
            float *out = (float *)buf + i * per;
            for (uint64_t k = 0; k < per; k++)
                out[k] = (float)(v->lo + (v->hi - v->lo) * xpb_rng_uniform(&r));
        }
    }
    return XPB_OK;
}

size_t xpb_model_program_max_input_bytes(const xpb_model_program *mp)
{
    size_t max = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (mp->tensors[t].role == XPB_ROLE_INPUT && xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    return max;
}

/* The backend's write of one tensor, announced to the observer of plugin calls. */
static xpb_status write_tensor(const xpb_backend_api *api, xpb_executable *exe, uint32_t t,
                               const void *data, size_t bytes)
{
    xpb_program_calling(api, "write");
    xpb_status st = api->write(exe, t, data, bytes);
    xpb_program_called(api);
    return st;
}

/* err set to the backend's exe_last_error, read inside the announced call. */
static void backend_error(xpb_err *err, xpb_status st, const xpb_backend_api *api,
                          const xpb_executable *exe)
{
    xpb_program_calling(api, "exe_last_error");
    xpb_err_set(err, st, "%s", api->exe_last_error(exe));
    xpb_program_called(api);
}

xpb_status xpb_model_program_write_initial(const xpb_model_program *mp, const xpb_backend_api *api,
                                           xpb_executable *exe, xpb_err *err)
{
    size_t max = 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    float *buf = malloc(max ? max : 4);
    if (!buf)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory for initial values");
    xpb_status st = XPB_OK;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (d->role != XPB_ROLE_PARAM && d->role != XPB_ROLE_STATE)
            continue;
        if ((st = xpb_model_program_initial_value(mp, t, buf)))
            break;
        if ((st = write_tensor(api, exe, t, buf, xpb_tensor_bytes(d)))) {
            backend_error(err, st, api, exe);
            xpb_err_prefix(err, "writing the initial value of '%s'", d->name);
            break;
        }
    }
    free(buf);
    return st;
}

xpb_status xpb_model_program_write_batch(const xpb_model_program *mp, const xpb_backend_api *api,
                                         xpb_executable *exe, uint64_t index, void *scratch,
                                         xpb_err *err)
{
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        if (d->role != XPB_ROLE_INPUT)
            continue;
        xpb_model_program_batch(mp, t, index, scratch);
        xpb_status st = write_tensor(api, exe, t, scratch, xpb_tensor_bytes(d));
        if (st) {
            backend_error(err, st, api, exe);
            xpb_err_prefix(err, "writing input '%s'", d->name);
            return st;
        }
    }
    return XPB_OK;
}
