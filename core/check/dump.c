/* One step written as .npy files and a manifest (see dump.h). */
#include "check/dump.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/names.h"
#include "check/npy.h"
#include "program/init.h"
#include "run/run_record.h"
#include "run/session.h"

static void safe_name(char *out, size_t size, const char *prefix, const char *name)
{
    size_t n = (size_t)snprintf(out, size, "%s.", prefix);
    for (const char *p = name; *p && n + 5 < size; p++)
        out[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                  (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'
                              ? *p
                              : '_');
    snprintf(out + n, size - n, ".npy");
}

/* Writes one tensor as <what>.<name>.npy and lists it in the manifest. A gradient is filed
 * under its parameter's name ("grad.conv1.weight.npy") with "of" naming the parameter. */
static xpb_status write_tensor(json_t *list, const char *dir, const char *what,
                               const xpb_model_program *mp, uint32_t t, const void *data,
                               xpb_err *err)
{
    char file[512], path[4096];
    const xpb_tensor_desc *d = &mp->tensors[t];
    const char *of = d->role == XPB_ROLE_GRAD ? mp->tensors[d->grad_of].name : NULL;
    safe_name(file, sizeof file, what, of ? of : d->name);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    xpb_status st = xpb_npy_write(path, d->dtype, d->ndim, d->dims, data, err);
    if (st)
        return st;
    json_t *shape = json_array(), *e = json_object();
    for (uint32_t i = 0; i < d->ndim; i++)
        json_array_append_new(shape, json_integer(d->dims[i]));
    json_object_set_new(e, "name", json_string(d->name));
    json_object_set_new(e, "kind", json_string(what));
    json_object_set_new(e, "role", json_string(xpb_role_name(d->role)));
    json_object_set_new(e, "layer", json_string(d->layer));
    json_object_set_new(e, "dtype", json_string(d->dtype == XPB_DTYPE_I32 ? "int32" : "float32"));
    json_object_set_new(e, "shape", shape);
    json_object_set_new(e, "file", json_string(file));
    if (of)
        json_object_set_new(e, "of", json_string(of));
    json_array_append_new(list, e);
    return XPB_OK;
}

static int make_dirs(const char *dir)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(tmp, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* Before the step: initial parameters/state and the batch, from the host's own values. */
static xpb_status write_before(json_t *tensors, const char *dir, const xpb_model_program *mp,
                               float *buf, xpb_err *err)
{
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        xpb_status st = XPB_OK;
        if (d->role == XPB_ROLE_INPUT) {
            xpb_model_program_batch(mp, t, 0, buf);
            st = write_tensor(tensors, dir, "input", mp, t, buf, err);
        } else if (d->role == XPB_ROLE_PARAM ||
                   (d->role == XPB_ROLE_STATE && mp->tensor_value[t])) {
            xpb_model_program_initial_value(mp, t, buf);
            st = write_tensor(tensors, dir, d->role == XPB_ROLE_PARAM ? "param" : "state", mp, t,
                              buf, err);
        }
        if (st)
            return st;
    }
    return XPB_OK;
}

/* Every loss term of every phase into `losses`; *total gets the weighted sum of phase 0's. */
static xpb_status read_losses(json_t *losses, double *total, xpb_session *s,
                              const xpb_model_program *mp, xpb_err *err)
{
    *total = 0;
    for (uint32_t i = 0; i < mp->n_losses; i++) {
        const xpb_program_loss *l = &mp->losses[i];
        float v;
        xpb_status st = xpb_session_read(s, l->tensor, &v, err);
        if (st)
            return st;
        json_t *e = json_object();
        json_object_set_new(e, "tensor", json_string(mp->tensors[l->tensor].name));
        json_object_set_new(e, "layer", json_string(mp->tensors[l->tensor].layer));
        json_object_set_new(e, "phase", json_string(mp->phases[l->phase].name));
        json_object_set_new(e, "weight", json_real(l->weight));
        json_object_set_new(e, "value", json_real(v));
        json_array_append_new(losses, e);
        if (l->phase == 0)
            *total += l->weight * v;
    }
    return XPB_OK;
}

/* The file prefix of tensor t after the step, or NULL when it is not written: gradients,
 * parameters and state (training), outputs. */
static const char *after_kind(const xpb_model_program *mp, uint32_t t)
{
    const xpb_tensor_desc *d = &mp->tensors[t];
    if (d->role == XPB_ROLE_OUTPUT)
        return "output";
    if (!mp->training)
        return NULL;
    if (d->role == XPB_ROLE_GRAD)
        return "grad";
    if (d->role == XPB_ROLE_PARAM)
        return "param_after";
    if (d->role == XPB_ROLE_STATE && mp->tensor_value[t])
        return "state_after";
    return NULL;
}

/* After the step: what after_kind names, read from the backend. */
static xpb_status write_after(json_t *tensors, const char *dir, xpb_session *s,
                              const xpb_model_program *mp, float *buf, xpb_err *err)
{
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const char *what = after_kind(mp, t);
        if (!what)
            continue;
        xpb_status st = xpb_session_read(s, t, buf, err);
        if (st == XPB_OK)
            st = write_tensor(tensors, dir, what, mp, t, buf, err);
        if (st)
            return st;
    }
    return XPB_OK;
}

/* One entry per training phase: {"phase": name, then the keys of xpb_optimizer_json, the
 * spelling results files use too (run_record.h)}. */
static json_t *optimizers_json(const xpb_model_program *mp)
{
    json_t *list = json_array();
    for (uint32_t p = 0; mp->training && p < mp->n_phases; p++) {
        json_t *e = json_object(), *o = xpb_optimizer_json(mp, p);
        json_object_set_new(e, "phase", json_string(mp->phases[p].name));
        json_object_update(e, o);
        json_decref(o);
        json_array_append_new(list, e);
    }
    return list;
}

/* manifest.json from the parts gathered; takes the references `losses` and `tensors`. */
static xpb_status write_manifest(const char *dir, const xpb_model_program *mp,
                                 const xpb_run_config *cfg, double total, json_t *losses,
                                 json_t *tensors, xpb_err *err)
{
    json_t *manifest = json_object(), *params = json_object();
    json_object_set_new(manifest, "format", json_string("xpubench-dump"));
    json_object_set_new(manifest, "format_version", json_integer(1));
    json_object_set_new(manifest, "model", json_string(cfg->model));
    json_object_set_new(manifest, "variant",
                        cfg->variant ? json_string(cfg->variant) : json_null());
    json_object_set_new(manifest, "mode", json_string(xpb_mode_name(cfg->mode)));
    json_object_set_new(manifest, "batch", json_integer(cfg->batch));
    for (size_t i = 0; i < cfg->n_params; i++)
        json_object_set_new(params, cfg->params[i].key, json_string(cfg->params[i].value));
    json_object_set_new(manifest, "params", params);
    json_object_set_new(manifest, "seed", json_integer((json_int_t)cfg->seed));
    json_object_set_new(manifest, "backend", json_string(cfg->backend));
    json_object_set_new(manifest, "precision", json_string(xpb_precision_name(cfg->precision)));
    json_object_set_new(manifest, "loss", mp->n_losses ? json_real(total) : json_null());
    json_object_set_new(manifest, "losses", losses);
    json_object_set_new(manifest, "optimizers", optimizers_json(mp));
    json_object_set_new(manifest, "tensors", tensors);
    char *text = json_dumps(manifest, JSON_INDENT(2));
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    xpb_status st = text ? xpb_atomic_write(path, text, strlen(text), err)
                         : xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    free(text);
    json_decref(manifest);
    return st;
}

static size_t largest_tensor_bytes(const xpb_model_program *mp)
{
    size_t max = 4;
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    return max;
}

xpb_status xpb_dump_step(const char *dir, const xpb_backend_api *api, const xpb_model_program *mp,
                         const xpb_run_config *cfg, xpb_err *err)
{
    xpb_status st;
    xpb_session s;
    xpb_compile_options opts = {.struct_size = sizeof opts,
                                .precision = cfg->precision,
                                .fusion = cfg->fusion,
                                .threads = cfg->threads,
                                .keep_all = 1};
    json_t *tensors = json_array(), *losses = json_array();
    float *buf = NULL;
    double total = 0;
    if (make_dirs(dir) != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot create folder: %s", dir, strerror(errno));
        goto free_json;
    }
    if (!(buf = malloc(largest_tensor_bytes(mp)))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto free_json;
    }
    if ((st = xpb_session_open(&s, api, cfg->device, mp, &opts, err)))
        goto free_buf;
    if ((st = write_before(tensors, dir, mp, buf, err)) || (st = xpb_session_step(&s, NULL, err)) ||
        (st = read_losses(losses, &total, &s, mp, err)) ||
        (st = write_after(tensors, dir, &s, mp, buf, err)))
        goto close_session;
    st = write_manifest(dir, mp, cfg, total, losses, tensors, err);
    losses = tensors = NULL; /* write_manifest took them */
close_session:
    xpb_session_close(&s);
free_buf:
    free(buf);
free_json:
    json_decref(tensors);
    json_decref(losses);
    return st;
}
