/* One step written as .npy files and a manifest (see dump.h). */
#include "dump.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "names.h"
#include "npy.h"
#include "session.h"

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
    json_t *manifest = json_object(), *tensors = json_array(), *losses = json_array();
    float *buf = NULL;
    size_t max = 0;
    if (make_dirs(dir) != 0) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot create folder: %s", dir, strerror(errno));
        goto free_json;
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (xpb_tensor_bytes(&mp->tensors[t]) > max)
            max = xpb_tensor_bytes(&mp->tensors[t]);
    if (!(buf = malloc(max ? max : 4))) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto free_json;
    }
    if ((st = xpb_session_open(&s, api, cfg->device, mp, &opts, err)))
        goto free_buf;
    /* Before the step: initial parameters/state and the batch, from the host's own values. */
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
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
            goto close_session;
    }
    if ((st = xpb_session_step(&s, NULL, err)))
        goto close_session;
    double total = 0;
    for (uint32_t i = 0; i < mp->n_losses; i++) {
        const xpb_program_loss *l = &mp->losses[i];
        float v;
        if ((st = xpb_session_read(&s, l->tensor, &v, err)))
            goto close_session;
        json_t *e = json_object();
        json_object_set_new(e, "tensor", json_string(mp->tensors[l->tensor].name));
        json_object_set_new(e, "layer", json_string(mp->tensors[l->tensor].layer));
        json_object_set_new(e, "phase", json_string(mp->phases[l->phase].name));
        json_object_set_new(e, "weight", json_real(l->weight));
        json_object_set_new(e, "value", json_real(v));
        json_array_append_new(losses, e);
        if (l->phase == 0)
            total += l->weight * v;
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        const xpb_tensor_desc *d = &mp->tensors[t];
        const char *what = d->role == XPB_ROLE_GRAD                             ? "grad"
                           : d->role == XPB_ROLE_OUTPUT                         ? "output"
                           : d->role == XPB_ROLE_PARAM                          ? "param_after"
                           : (d->role == XPB_ROLE_STATE && mp->tensor_value[t]) ? "state_after"
                                                                                : NULL;
        if (!what || (!mp->training && strcmp(what, "output") != 0))
            continue;
        if ((st = xpb_session_read(&s, t, buf, err)) ||
            (st = write_tensor(tensors, dir, what, mp, t, buf, err)))
            goto close_session;
    }
    json_t *opt = json_array();
    for (uint32_t p = 0; mp->training && p < mp->n_phases; p++) {
        const xpb_optimizer_desc *o = &mp->optimizers[p];
        json_t *e = json_object();
        json_object_set_new(e, "phase", json_string(mp->phases[p].name));
        json_object_set_new(e, "kind", json_string(o->kind == XPB_OPTIMIZER_ADAM ? "adam" : "sgd"));
        json_object_set_new(e, "lr", json_real(o->lr));
        json_object_set_new(e, "momentum", json_real(o->momentum));
        json_object_set_new(e, "weight_decay", json_real(o->weight_decay));
        json_object_set_new(e, "beta1", json_real(o->beta1));
        json_object_set_new(e, "beta2", json_real(o->beta2));
        json_object_set_new(e, "eps", json_real(o->eps));
        json_array_append_new(opt, e);
    }
    json_object_set_new(manifest, "format", json_string("xpubench-dump"));
    json_object_set_new(manifest, "format_version", json_integer(1));
    json_object_set_new(manifest, "model", json_string(cfg->model));
    json_object_set_new(manifest, "variant",
                        cfg->variant ? json_string(cfg->variant) : json_null());
    json_object_set_new(manifest, "mode", json_string(xpb_mode_name(cfg->mode)));
    json_object_set_new(manifest, "batch", json_integer(cfg->batch));
    json_t *params = json_object();
    for (size_t i = 0; i < cfg->n_params; i++)
        json_object_set_new(params, cfg->params[i].key, json_string(cfg->params[i].value));
    json_object_set_new(manifest, "params", params);
    json_object_set_new(manifest, "seed", json_integer((json_int_t)cfg->seed));
    json_object_set_new(manifest, "backend", json_string(cfg->backend));
    json_object_set_new(manifest, "precision", json_string(xpb_precision_name(cfg->precision)));
    json_object_set_new(manifest, "loss", mp->n_losses ? json_real(total) : json_null());
    json_object_set_new(manifest, "losses", losses);
    losses = NULL;
    json_object_set_new(manifest, "optimizers", opt);
    json_object_set_new(manifest, "tensors", tensors);
    tensors = NULL;
    char *text = json_dumps(manifest, JSON_INDENT(2));
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    st = text ? xpb_atomic_write(path, text, strlen(text), err)
              : xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    free(text);
close_session:
    xpb_session_close(&s);
free_buf:
    free(buf);
free_json:
    json_decref(manifest);
    json_decref(tensors);
    json_decref(losses);
    return st;
}
