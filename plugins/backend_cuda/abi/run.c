/* The timed part: run() launches the phase's CUDA graph (one launch, nothing else: no
 * allocation, no descriptor, no synchronisation); synchronize() waits for the stream (with NCCL
 * collectives in flight: polling NCCL's asynchronous errors, within $XPB_DP_TIMEOUT) and
 * reports asynchronous failures and the data-dependent errors the kernels recorded in the
 * phase records (ops.md "Errors at run time"). Under profiling, run() enqueues the steps
 * between events instead, and synchronize() adds their times to their ops. */
#include <stdio.h>

#include "abi/exec.h"
#include "abi/run.h"
#include "glue/nccl.h"
#include "glue/status.h"

xpb_status cux_run(xpb_executable *exe, uint32_t phase)
{
    if (phase >= exe->prog->n_phases)
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "run: phase %u does not exist (the program has %u phases)", phase,
                             exe->prog->n_phases);
    if (cux_nccl_failed(exe))
        return cux_error_msg(exe->err, XPB_DEVICE_ERROR,
                             "run: an earlier NCCL failure aborted this executable's NCCL "
                             "communicator (that failure's message said why): compile again");
    xpb_status st = cux_usable(exe->err, exe->be->device, "run");
    if (st != XPB_OK)
        return st;
    CUX_CUDA(exe, CUX_NONE, cudaSetDevice(exe->be->device), "run: cudaSetDevice");
    if (exe->prep_stale) { /* a folded parameter changed: recompute, once, before the step */
        if ((st = cux_run_prep(exe)) != XPB_OK)
            return st;
        exe->prep_stale = 0;
    }
    if (exe->graph_exec && exe->graph_exec[phase]) {
        CUX_CUDA(exe, CUX_NONE, cudaGraphLaunch(exe->graph_exec[phase], exe->be->stream),
                 "run: cudaGraphLaunch");
    } else {
        int events = exe->events != NULL;
        if ((st = cux_enqueue_phase(exe, phase, events, 0, NULL)) != XPB_OK)
            return st;
        if (events)
            exe->pending[phase] = 1;
    }
    exe->phase_runs[phase]++;
    return XPB_OK;
}

/* Adds the times between the events of a profiled phase to its steps' ops. */
static xpb_status read_events(xpb_executable *exe, uint32_t phase)
{
    const cux_plan *plan = exe->plan;
    for (uint32_t g = plan->phase_begin[phase]; g < plan->phase_end[phase]; g++) {
        float ms = 0.0f;
        CUX_CUDA(exe, plan->steps[g].op,
                 cudaEventElapsedTime(&ms, exe->events[g], exe->events[g + 1]),
                 "profile: cudaEventElapsedTime");
        uint32_t op = plan->steps[g].op;
        if (op != CUX_NONE)
            exe->op_seconds[op] += (double)ms * 1e-3;
    }
    return XPB_OK;
}

/* The first data-dependent error recorded by phase `k`, as ops.md words it. */
static xpb_status record_error(xpb_executable *exe, cux_phase_rec *r)
{
    const xpb_program *p = exe->prog;
    uint32_t op = r->err_op < p->n_ops ? r->err_op : 0;
    const xpb_op *o = xpb_program_op(p, op);
    const char *layer = o->layer && o->layer[0] ? o->layer : "?";
    xpb_status st;
    if (r->err_code == CUX_ERR_LABEL) {
        int64_t k = xpb_program_tensor(p, o->inputs[0])->dims[1];
        st = cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                           "%s (layer %s): sample %lld has label %lld, outside the %lld classes "
                           "[0, %lld)",
                           xpb_op_name(o->kind), layer, (long long)r->err_a, (long long)r->err_b,
                           (long long)k, (long long)k);
    } else if (r->err_code == CUX_ERR_INDEX) {
        /* EMBEDDING: indices are input 0, the weight input 1; EMBEDDING_BWD: indices input 1 and
         * the gradient of the weight output 0 */
        int fwd = o->kind == XPB_OP_EMBEDDING;
        const xpb_tensor_desc *w = xpb_program_tensor(p, fwd ? o->inputs[1] : o->outputs[0]);
        st = cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                           "%s (layer %s): position %lld of the indices holds %lld, outside the "
                           "%lld rows [0, %lld) of the weight",
                           xpb_op_name(o->kind), layer, (long long)r->err_a, (long long)r->err_b,
                           (long long)w->dims[0], (long long)w->dims[0]);
    } else {
        const xpb_tensor_desc *dx = xpb_program_tensor(p, o->outputs[0]);
        st = cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                           "%s (layer %s): ws_index %lld at element %lld is outside the %lldx%lld "
                           "input plane",
                           xpb_op_name(o->kind), layer, (long long)r->err_b, (long long)r->err_a,
                           (long long)dx->dims[2], (long long)dx->dims[3]);
    }
    r->err_code = 0; /* reported once */
    return st;
}

xpb_status cux_synchronize(xpb_executable *exe)
{
    xpb_status su = cux_usable(exe->err, exe->be->device, "synchronize");
    if (su != XPB_OK)
        return su;
    CUX_CUDA(exe, CUX_NONE, cudaSetDevice(exe->be->device), "synchronize: cudaSetDevice");
    if (exe->nccl) { /* collectives in flight: a bounded wait that watches NCCL's errors */
        xpb_status sw = cux_nccl_wait(exe, CUX_NONE, "synchronize: the step's ALL_REDUCE ops");
        if (sw != XPB_OK)
            return sw;
    }
    cudaError_t e = cudaStreamSynchronize(exe->be->stream);
    if (e != cudaSuccess) /* a sticky error is remembered by cux_cuda_error */
        return cux_cuda_error(exe->err, NULL, CUX_NONE, e,
                              "synchronize: a kernel of the last run failed (rerun with "
                              "XPB_CUDA_EAGER=1 CUDA_LAUNCH_BLOCKING=1 to find which)");
    xpb_status st;
    for (uint32_t k = 0; exe->pending && k < exe->prog->n_phases; k++)
        if (exe->pending[k]) {
            exe->pending[k] = 0;
            if ((st = read_events(exe, k)) != XPB_OK)
                return st;
        }
    for (uint32_t k = 0; k < exe->prog->n_phases; k++)
        if (exe->host_rec[k].err_code)
            return record_error(exe, &exe->host_rec[k]);
    return XPB_OK;
}

xpb_status cux_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                            uint32_t *count)
{
    if (!count || (capacity && !out))
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "profile_read: count is NULL, or out is NULL with capacity %u",
                             capacity);
    if (!exe->events)
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "profile_read: the executable was compiled without profiling");
    const xpb_program *p = exe->prog;
    const cux_plan *plan = exe->plan;
    for (uint32_t i = 0; i < p->n_ops && i < capacity; i++) {
        uint32_t ph = plan->op_phase[i];
        out[i].op = i;
        out[i].fused_into = plan->fuse[i].into == CUX_NONE ? XPB_NO_TENSOR : plan->fuse[i].into;
        out[i].calls = ph == CUX_NONE ? 0 : exe->phase_runs[ph];
        out[i].seconds = exe->op_seconds[i];
    }
    *count = p->n_ops;
    return XPB_OK;
}

xpb_status cux_memory_stats(xpb_executable *exe, xpb_memory_stats *out)
{
    if (!out)
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT, "memory_stats: out is NULL");
    uint64_t bytes = exe->plan->arena_bytes + exe->workspace_bytes + exe->staging_bytes;
    for (uint32_t i = 0; i < exe->n_inputs; i++)
        bytes += 2u * xpb_tensor_bytes(xpb_program_tensor(exe->prog, exe->inputs[i].tensor));
    /* everything is allocated at compile: in use = peak */
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, bytes_in_use))
        out->bytes_in_use = bytes;
    if (XPB_HAS_MEMBER(out, xpb_memory_stats, peak_bytes))
        out->peak_bytes = bytes;
    return XPB_OK;
}
