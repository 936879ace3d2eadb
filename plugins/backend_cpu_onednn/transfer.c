/* The host boundary: write() and read() move a tensor between the canonical layout (dense,
 * row-major, fp32 or int32) and its storage (blocked layout, maybe bf16) with one reorder, or
 * a copy on the executable's threads when the storage is the canonical layout. The reorders of
 * a tensor are created on its first transfer (the host's first writes happen before timing)
 * and kept; under `transfer: streamed` compile creates those of the inputs, which are written
 * in every timed step. Writing an fp32 parameter that has a bf16 shadow refreshes the shadow
 * too.
 *
 * write_async() is write(): on a CPU the copy is work of the calling thread like any other,
 * nothing of an earlier run() is still in flight when it is called (run() returns with its
 * work done), so the value written is what the next run() reads and nothing reads the old one
 * any more; the host's data is not kept. */
#include <stdlib.h>
#include <string.h>

#include "odn.h"

static xpb_status check_transfer(xpb_executable *exe, const char *what, uint32_t tensor,
                                 const void *data, size_t bytes, uint32_t flag)
{
    const xpb_program *p = exe->prog;
    if (tensor >= p->n_tensors)
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "%s: tensor %u does not exist (the program has %u tensors)", what, tensor,
                        p->n_tensors);
    const xpb_tensor_desc *t = xpb_program_tensor(p, tensor);
    const char *name = t->name ? t->name : "(unnamed)";
    if (!data)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: tensor %u '%s': data is NULL", what, tensor,
                        name);
    if (bytes != xpb_tensor_bytes(t))
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "%s: tensor %u '%s' holds %zu bytes, the call gave %zu", what, tensor, name,
                        xpb_tensor_bytes(t), bytes);
    if (!exe->keep_all && !(t->flags & flag))
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "%s: tensor %u '%s' lacks XPB_TENSOR_HOST_%s (and keep_all is off)", what,
                        tensor, name, flag == XPB_TENSOR_HOST_WRITE ? "WRITE" : "READ");
    if (!exe->bufs[exe->t[tensor].buf].pinned || !exe->bufs[exe->t[tensor].buf].ptr)
        return odn_fail(exe, XPB_INTERNAL, "%s: tensor %u '%s' has no host-visible storage", what,
                        tensor, name);
    return XPB_OK;
}

static xpb_status make_reorder(xpb_executable *exe, dnnl_primitive_t *out,
                               const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst,
                               const char *name)
{
    dnnl_primitive_desc_t pd;
    dnnl_status_t s =
        dnnl_reorder_primitive_desc_create(&pd, src, exe->be->engine, dst, exe->be->engine, NULL);
    if (s == dnnl_success) {
        s = dnnl_primitive_create(out, pd);
        dnnl_primitive_desc_destroy(pd);
    }
    if (s != dnnl_success)
        return odn_fail(exe, s == dnnl_unimplemented ? XPB_UNSUPPORTED : XPB_DEVICE_ERROR,
                        "transfer of tensor '%s': no reorder between its storage and the "
                        "canonical layout (%s)",
                        name, dnnl_status2str(s));
    return XPB_OK;
}

static void free_tensor_transfer(odn_tensor *t)
{
    dnnl_primitive_t prims[3] = {t->to_dev, t->to_host, t->to_shadow};
    dnnl_memory_t mems[3] = {t->host_mem, t->dev_mem, t->shadow_mem};
    for (int k = 0; k < 3; k++) {
        if (prims[k])
            dnnl_primitive_destroy(prims[k]);
        if (mems[k])
            dnnl_memory_destroy(mems[k]);
    }
    t->to_dev = t->to_host = t->to_shadow = NULL;
    t->host_mem = t->dev_mem = t->shadow_mem = NULL;
    t->transfer_ready = 0;
}

static xpb_status create_transfer(xpb_executable *exe, uint32_t tid);

/* Creates the transfer objects of tensor `tid` once. */
static xpb_status prepare(xpb_executable *exe, uint32_t tid)
{
    if (exe->t[tid].transfer_ready)
        return XPB_OK;
    xpb_status st = create_transfer(exe, tid);
    if (st != XPB_OK)
        free_tensor_transfer(&exe->t[tid]);
    return st;
}

static xpb_status create_transfer(xpb_executable *exe, uint32_t tid)
{
    odn_tensor *t = &exe->t[tid];
    const xpb_tensor_desc *d = xpb_program_tensor(exe->prog, tid);
    const char *name = d->name ? d->name : "(unnamed)";
    dnnl_memory_desc_t host;
    odn_md_plain(&host, d, d->dtype == XPB_DTYPE_I32 ? dnnl_s32 : dnnl_f32);
    xpb_status st;
    dnnl_engine_t eng = exe->be->engine;
    if (dnnl_memory_create(&t->host_mem, &host, eng, DNNL_MEMORY_NONE) != dnnl_success ||
        dnnl_memory_create(&t->dev_mem, &t->md, eng, exe->bufs[t->buf].ptr) != dnnl_success)
        return odn_fail(exe, XPB_DEVICE_ERROR, "transfer of tensor '%s': memory objects", name);
    if (!dnnl_memory_desc_equal(&host, &t->md)) {
        if (d->role == XPB_ROLE_WORKSPACE && t->md.ndims != host.ndims)
            return odn_fail(exe, XPB_UNSUPPORTED,
                            "tensor '%s' is a workspace holding backend-defined data in "
                            "another shape; it has no canonical form",
                            name);
        if ((st = make_reorder(exe, &t->to_dev, &host, &t->md, name)) != XPB_OK ||
            (st = make_reorder(exe, &t->to_host, &t->md, &host, name)) != XPB_OK)
            return st;
    }
    if (t->shadow_buf != ODN_NONE) {
        if (dnnl_memory_create(&t->shadow_mem, &t->shadow_md, eng, exe->bufs[t->shadow_buf].ptr) !=
            dnnl_success)
            return odn_fail(exe, XPB_DEVICE_ERROR, "transfer of tensor '%s': shadow memory", name);
        if ((st = make_reorder(exe, &t->to_shadow, &t->md, &t->shadow_md, name)) != XPB_OK)
            return st;
    }
    t->transfer_ready = 1;
    return XPB_OK;
}

/* memcpy in 1 MiB pieces on the OpenMP team: a streamed batch of VGG16-ImageNet is 38 MB, and
 * one core does not reach the memory bandwidth. */
static void copy_parallel(void *dst, const void *src, size_t bytes)
{
    const int64_t chunk = 1 << 20, n = (int64_t)bytes;
    if (n <= chunk) {
        memcpy(dst, src, bytes);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t off = 0; off < n; off += chunk)
        memcpy((char *)dst + off, (const char *)src + off,
               (size_t)(n - off < chunk ? n - off : chunk));
}

static xpb_status exec_reorder(xpb_executable *exe, dnnl_primitive_t r, dnnl_memory_t src,
                               dnnl_memory_t dst, const char *what)
{
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
    dnnl_status_t s = dnnl_primitive_execute(r, exe->be->stream, 2, args);
    if (s == dnnl_success)
        s = dnnl_stream_wait(exe->be->stream);
    if (s != dnnl_success)
        return odn_fail(exe, XPB_DEVICE_ERROR, "%s: reorder: %s", what, dnnl_status2str(s));
    return XPB_OK;
}

xpb_status odn_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    xpb_status st = check_transfer(exe, "write", tensor, data, bytes, XPB_TENSOR_HOST_WRITE);
    if (st != XPB_OK || (st = prepare(exe, tensor)) != XPB_OK)
        return st;
    odn_tensor *t = &exe->t[tensor];
    odn_set_threads(exe->threads);
    if (!t->to_dev) {
        copy_parallel(exe->bufs[t->buf].ptr, data, bytes);
    } else {
        dnnl_memory_set_data_handle(t->host_mem, (void *)data);
        if ((st = exec_reorder(exe, t->to_dev, t->host_mem, t->dev_mem, "write")) != XPB_OK)
            return st;
    }
    if (t->to_shadow &&
        (st = exec_reorder(exe, t->to_shadow, t->dev_mem, t->shadow_mem, "write")) != XPB_OK)
        return st;
    if (xpb_program_tensor(exe->prog, tensor)->flags & XPB_TENSOR_PERSISTENT)
        exe->prep_stale = exe->n_prep > 0; /* folded weights depend on parameters */
    return XPB_OK;
}

xpb_status odn_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    xpb_status st = check_transfer(exe, "read", tensor, data, bytes, XPB_TENSOR_HOST_READ);
    if (st != XPB_OK || (st = prepare(exe, tensor)) != XPB_OK)
        return st;
    odn_tensor *t = &exe->t[tensor];
    odn_set_threads(exe->threads);
    if (!t->to_host) {
        copy_parallel(data, exe->bufs[t->buf].ptr, bytes);
        return XPB_OK;
    }
    dnnl_memory_set_data_handle(t->host_mem, data);
    return exec_reorder(exe, t->to_host, t->dev_mem, t->host_mem, "read");
}

xpb_status odn_write_async(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    const xpb_program *p = exe->prog;
    if (tensor < p->n_tensors && xpb_program_tensor(p, tensor)->role != XPB_ROLE_INPUT) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, tensor);
        return odn_fail(exe, XPB_INVALID_ARGUMENT,
                        "write_async: tensor %u '%s' has role %u, not INPUT (%u): only inputs "
                        "are streamed; use write",
                        tensor, t->name ? t->name : "(unnamed)", t->role, XPB_ROLE_INPUT);
    }
    return odn_write(exe, tensor, data, bytes);
}

xpb_status odn_transfer_prepare_inputs(xpb_executable *exe)
{
    for (uint32_t i = 0; i < exe->prog->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, i);
        xpb_status st;
        if (t->role == XPB_ROLE_INPUT && (t->flags & XPB_TENSOR_HOST_WRITE) &&
            (st = prepare(exe, i)) != XPB_OK)
            return st;
    }
    return XPB_OK;
}

void odn_transfer_free(xpb_executable *exe)
{
    for (uint32_t i = 0; i < exe->prog->n_tensors; i++)
        free_tensor_transfer(&exe->t[i]);
}
