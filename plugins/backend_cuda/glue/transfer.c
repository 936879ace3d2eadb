/* The host boundary: tensors cross it in the canonical layout (dense row-major, fp32 or int32)
 * and are stored in their planned type and layout (plan_tensor.c). A tensor stored canonically
 * is copied directly; any other goes through the staging buffer and one conversion kernel, in
 * stream order with the steps. Writing a parameter also refreshes its 16-bit shadow, and marks
 * folded weights stale when it feeds a batch-norm fold.
 *
 * Streamed inputs (transfer: streamed, write_async): each INPUT has two device staging buffers.
 * The host-to-device copy from the host's pinned memory runs on a second stream, so it overlaps
 * the compute already submitted; the step stream waits for the copy and converts the staged
 * batch into the input's storage, so the next run reads the new batch and runs already
 * submitted still read the old one. Events order the reuse of each staging buffer. */
#include <stdlib.h>
#include <string.h>

#include "glue/arena.h"
#include "glue/status.h"
#include "glue/transfer.h"

static xpb_status check_transfer(xpb_executable *exe, const char *what, uint32_t tensor,
                                 const void *data, size_t bytes, uint32_t flag)
{
    const xpb_program *p = exe->prog;
    if (tensor >= p->n_tensors)
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "%s: tensor %u does not exist (the program has %u tensors)", what,
                             tensor, p->n_tensors);
    const xpb_tensor_desc *t = xpb_program_tensor(p, tensor);
    const char *name = t->name ? t->name : "(unnamed)";
    if (!data)
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT, "%s: tensor %u '%s': data is NULL",
                             what, tensor, name);
    if (bytes != xpb_tensor_bytes(t))
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "%s: tensor %u '%s' holds %zu bytes, the call gave %zu", what, tensor,
                             name, xpb_tensor_bytes(t), bytes);
    if (!exe->plan->opt.keep_all && !(t->flags & flag))
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "%s: tensor %u '%s' lacks XPB_TENSOR_HOST_%s (and keep_all is off)",
                             what, tensor, name, flag == XPB_TENSOR_HOST_WRITE ? "WRITE" : "READ");
    if (exe->plan->store[tensor].buf == CUX_NONE)
        return cux_error_msg(exe->err, XPB_INTERNAL,
                             "%s: tensor %u '%s' has no storage (fused away)", what, tensor, name);
    return XPB_OK;
}

/* The canonical view of tensor `t` at device address p (fp32 or int32, row-major). */
static cux_tview canonical(const xpb_tensor_desc *t, void *p)
{
    cux_tview v;
    memset(&v, 0, sizeof v);
    v.p = p;
    v.type = t->dtype == XPB_DTYPE_I32 ? CUX_I32 : CUX_F32;
    v.layout = CUX_PLAIN;
    int64_t d[4] = {1, 1, 1, 1};
    for (uint32_t k = 0; k < t->ndim; k++)
        d[k] = t->dims[k];
    v.n = d[0];
    v.c = d[1];
    v.h = d[2];
    v.w = d[3];
    return v;
}

/* The stored view of tensor `tensor` (shadow 1: its 16-bit shadow). */
static cux_tview stored(xpb_executable *exe, uint32_t tensor, int shadow)
{
    const cux_store *s = &exe->plan->store[tensor];
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tensor);
    cux_tview v = canonical(t, cux_ptr(exe, shadow ? s->shadow : s->buf));
    v.type = shadow ? s->shadow_type : s->type;
    v.layout = s->layout;
    return v;
}

static int is_canonical(const cux_tview *v)
{
    return (v->type == CUX_F32 || v->type == CUX_I32) &&
           (v->layout == CUX_PLAIN || cux_layouts_agree(v->c, v->h, v->w));
}

/* Enqueues a conversion kernel from `from` to `to` (same logical shape). */
static xpb_status convert(xpb_executable *exe, cux_tview from, cux_tview to, const char *what)
{
    cux_kparams kp;
    memset(&kp, 0, sizeof kp);
    kp.kernel = CUX_K_CONVERT;
    kp.op = -1;
    kp.t[CUX_T_IN] = from;
    kp.t[CUX_T_OUT] = to;
    kp.sm_count = exe->be->sm_count;
    CUX_CUDA(exe, CUX_NONE, cux_launch(&kp, exe->be->stream), what);
    return XPB_OK;
}

/* Marks the folded weights stale when `tensor` feeds a prep step. */
static void touch_prep(xpb_executable *exe, uint32_t tensor)
{
    for (uint32_t g = 0; g < exe->plan->n_prep; g++)
        for (uint32_t k = 0; k < CUX_MAX_IN; k++)
            if (exe->plan->prep[g].in[k].tensor == tensor)
                exe->prep_stale = 1;
}

xpb_status cux_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    xpb_status st = check_transfer(exe, "write", tensor, data, bytes, XPB_TENSOR_HOST_WRITE);
    if (st != XPB_OK)
        return st;
    if ((st = cux_usable(exe->err, exe->be->device, "write")) != XPB_OK)
        return st;
    CUX_CUDA(exe, CUX_NONE, cudaSetDevice(exe->be->device), "write: cudaSetDevice");
    cudaStream_t s = exe->be->stream;
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tensor);
    cux_tview dst = stored(exe, tensor, 0);
    cux_tview from = canonical(t, exe->staging);
    if (is_canonical(&dst)) {
        CUX_CUDA(exe, CUX_NONE, cudaMemcpyAsync(dst.p, data, bytes, cudaMemcpyHostToDevice, s),
                 "write: cudaMemcpyAsync");
        from = dst;
    } else {
        CUX_CUDA(exe, CUX_NONE,
                 cudaMemcpyAsync(exe->staging, data, bytes, cudaMemcpyHostToDevice, s),
                 "write: cudaMemcpyAsync");
        if ((st = convert(exe, from, dst, "write: conversion to the storage layout")) != XPB_OK)
            return st;
    }
    if (exe->plan->store[tensor].shadow != CUX_NONE &&
        (st = convert(exe, from, stored(exe, tensor, 1), "write: 16-bit shadow")) != XPB_OK)
        return st;
    touch_prep(exe, tensor);
    /* the host may reuse `data` now: a copy from pageable memory returns once it is staged */
    return XPB_OK;
}

xpb_status cux_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes)
{
    xpb_status st = check_transfer(exe, "read", tensor, data, bytes, XPB_TENSOR_HOST_READ);
    if (st != XPB_OK)
        return st;
    if ((st = cux_usable(exe->err, exe->be->device, "read")) != XPB_OK)
        return st;
    CUX_CUDA(exe, CUX_NONE, cudaSetDevice(exe->be->device), "read: cudaSetDevice");
    cudaStream_t s = exe->be->stream;
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tensor);
    cux_tview src = stored(exe, tensor, 0);
    const void *from = src.p;
    if (!is_canonical(&src)) {
        if ((st = convert(exe, src, canonical(t, exe->staging),
                          "read: conversion from the storage layout")) != XPB_OK)
            return st;
        from = exe->staging;
    }
    CUX_CUDA(exe, CUX_NONE, cudaMemcpyAsync(data, from, bytes, cudaMemcpyDeviceToHost, s),
             "read: cudaMemcpyAsync");
    CUX_CUDA(exe, CUX_NONE, cudaStreamSynchronize(s), "read: cudaStreamSynchronize");
    return XPB_OK;
}

/* ---- streamed inputs ---- */

xpb_status cux_prepare_streaming(xpb_executable *exe)
{
    const xpb_program *p = exe->prog;
    if (exe->plan->opt.transfer != XPB_TRANSFER_STREAMED)
        return XPB_OK;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        n += t->role == XPB_ROLE_INPUT && (t->flags & XPB_TENSOR_HOST_WRITE);
    }
    exe->inputs = calloc(n + 1u, sizeof *exe->inputs);
    if (!exe->inputs)
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t i = 0; i < p->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(p, i);
        if (t->role != XPB_ROLE_INPUT || !(t->flags & XPB_TENSOR_HOST_WRITE))
            continue;
        cux_stream_in *in = &exe->inputs[exe->n_inputs++];
        in->tensor = i;
        for (int k = 0; k < 2; k++) {
            CUX_CUDA(exe, CUX_NONE, cudaMalloc(&in->stage[k], xpb_tensor_bytes(t)),
                     "compile: staging of a streamed input");
            CUX_CUDA(exe, CUX_NONE,
                     cudaEventCreateWithFlags(&in->copied[k], cudaEventDisableTiming),
                     "compile: streamed input events");
            CUX_CUDA(exe, CUX_NONE, cudaEventCreateWithFlags(&in->used[k], cudaEventDisableTiming),
                     "compile: streamed input events");
        }
    }
    return XPB_OK;
}

void cux_free_streaming(xpb_executable *exe)
{
    for (uint32_t i = 0; exe->inputs && i < exe->n_inputs; i++)
        for (int k = 0; k < 2; k++) {
            cux_stream_in *in = &exe->inputs[i];
            if (in->stage[k])
                cux_released(cudaFree(in->stage[k]), "destroy: cudaFree (streamed input)");
            if (in->copied[k])
                cux_released(cudaEventDestroy(in->copied[k]), "destroy: cudaEventDestroy");
            if (in->used[k])
                cux_released(cudaEventDestroy(in->used[k]), "destroy: cudaEventDestroy");
        }
    free(exe->inputs);
    exe->inputs = NULL;
    exe->n_inputs = 0;
}

xpb_status cux_write_async(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes)
{
    cux_stream_in *in = NULL;
    for (uint32_t i = 0; i < exe->n_inputs; i++)
        if (exe->inputs[i].tensor == tensor)
            in = &exe->inputs[i];
    if (!in) /* not a streamed input of this executable: an ordinary write in stream order */
        return cux_write(exe, tensor, data, bytes);
    xpb_status st = check_transfer(exe, "write_async", tensor, data, bytes, XPB_TENSOR_HOST_WRITE);
    if (st != XPB_OK)
        return st;
    if ((st = cux_usable(exe->err, exe->be->device, "write_async")) != XPB_OK)
        return st;
    CUX_CUDA(exe, CUX_NONE, cudaSetDevice(exe->be->device), "write_async: cudaSetDevice");
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tensor);
    int k = in->next;
    in->next ^= 1;
    cudaStream_t copy = exe->be->copy_stream, s = exe->be->stream;
    /* stage[k] is free once the conversion that last read it is done */
    CUX_CUDA(exe, CUX_NONE, cudaStreamWaitEvent(copy, in->used[k], 0), "write_async: wait");
    CUX_CUDA(exe, CUX_NONE,
             cudaMemcpyAsync(in->stage[k], data, bytes, cudaMemcpyHostToDevice, copy),
             "write_async: cudaMemcpyAsync");
    CUX_CUDA(exe, CUX_NONE, cudaEventRecord(in->copied[k], copy), "write_async: event");
    CUX_CUDA(exe, CUX_NONE, cudaStreamWaitEvent(s, in->copied[k], 0), "write_async: wait");
    if ((st = convert(exe, canonical(t, in->stage[k]), stored(exe, tensor, 0),
                      "write_async: conversion to the storage layout")) != XPB_OK)
        return st;
    CUX_CUDA(exe, CUX_NONE, cudaEventRecord(in->used[k], s), "write_async: event");
    return XPB_OK;
}
