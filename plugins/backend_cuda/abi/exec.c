/* Enqueueing steps: one code path serves the warm-up, the capture of a phase into its CUDA
 * graph (NCCL collectives included), profiling (steps between events, outside graph mode) and
 * the prep steps. A phase ends with the copy of its record (status, loss scaler) to pinned host
 * memory, so that synchronize() reads data-dependent errors without another round trip.
 *
 * Built against the CPU stand-in of the test suite (XPB_CUDA_STANDIN), every buffer whose
 * lifetime ends with a step (plan->end_bufs) is poisoned right after that step: filled with
 * 0xFF bytes, NaN in every float type, by the stand-in's xpbsi_poison when the step runs now and
 * by a memset node when it is being captured. A memory plan that lets two live buffers share
 * bytes, or a step that reads a buffer after its last planned use, then computes NaN instead of
 * a plausible number. The GPU build has no such call. */
#include <stdio.h>

#include "abi/exec.h"
#include "glue/conv.h"
#include "glue/matmul.h"
#include "glue/nccl.h"
#include "glue/status.h"

#if defined(XPB_CUDA_STANDIN)
/* The stand-in's poison (tests/cuda_standin): fills [device_ptr, device_ptr + bytes) with 0xFF
 * at once (the stand-in runs stream work when it is enqueued). */
void xpbsi_poison(void *device_ptr, size_t bytes);
#endif

xpb_status cux_enqueue(xpb_executable *exe, cux_run_step *rs)
{
    const cux_step *s = rs->step;
    cudaStream_t stream = exe->be->stream;
    xpb_status st;
    switch (s->engine) {
    case CUX_ENG_CONV:
        if ((st = cux_conv_enqueue(exe, rs)) != XPB_OK)
            return st;
        break;
    case CUX_ENG_MATMUL:
        if ((st = cux_mm_enqueue(exe, rs)) != XPB_OK)
            return st;
        break;
    case CUX_ENG_COLL:
        return cux_nccl_enqueue(exe, rs);
    default:
        break;
    }
    if (s->engine == CUX_ENG_KERNEL || rs->epilogue) {
        cudaError_t e = cux_launch(&rs->kp, stream);
        if (e != cudaSuccess) {
            char what[96];
            snprintf(what, sizeof what, "%s kernel launch", cux_kernel_name(rs->kp.kernel));
            return cux_cuda_error(exe->err, exe->prog, s->op, e, what);
        }
    }
    return XPB_OK;
}

/* Ends the lifetimes of the buffers whose last use is step `g` (stand-in builds: poisons them;
 * with `capturing`, as memset nodes of the graph being captured). */
static xpb_status end_lifetimes(xpb_executable *exe, uint32_t g, int capturing)
{
#if defined(XPB_CUDA_STANDIN)
    const cux_plan *plan = exe->plan;
    for (uint32_t k = plan->end_first[g]; k < plan->end_first[g + 1]; k++) {
        const cux_buf *b = &plan->bufs[plan->end_bufs[k]];
        void *p = exe->arena + b->offset;
        if (capturing)
            CUX_CUDA(exe, plan->steps[g].op,
                     cudaMemsetAsync(p, 0xFF, (size_t)b->bytes, exe->be->stream),
                     "poisoning the bytes of a buffer whose lifetime ended");
        else
            xpbsi_poison(p, (size_t)b->bytes);
    }
#else
    (void)exe;
    (void)g;
    (void)capturing;
#endif
    return XPB_OK;
}

xpb_status cux_enqueue_step(xpb_executable *exe, uint32_t g, int capturing)
{
    xpb_status st = cux_enqueue(exe, &exe->steps[g]);
    return st == XPB_OK ? end_lifetimes(exe, g, capturing) : st;
}

xpb_status cux_enqueue_phase(xpb_executable *exe, uint32_t phase, int with_events, int capturing)
{
    const cux_plan *plan = exe->plan;
    cudaStream_t stream = exe->be->stream;
    uint32_t begin = plan->phase_begin[phase], end = plan->phase_end[phase];
    xpb_status st;
    for (uint32_t g = begin; g < end; g++) {
        if (with_events)
            CUX_CUDA(exe, plan->steps[g].op, cudaEventRecord(exe->events[g], stream),
                     "profiling event");
        if ((st = cux_enqueue_step(exe, g, capturing)) != XPB_OK)
            return st;
    }
    if (with_events)
        CUX_CUDA(exe, CUX_NONE, cudaEventRecord(exe->events[end], stream), "profiling event");
    const char *rec = exe->arena + plan->bufs[plan->state_buf].offset + cux_rec_offset(phase);
    CUX_CUDA(exe, CUX_NONE,
             cudaMemcpyAsync(&exe->host_rec[phase], rec, sizeof(cux_phase_rec),
                             cudaMemcpyDeviceToHost, stream),
             "copying the phase record");
    return XPB_OK;
}

xpb_status cux_capture_phase(xpb_executable *exe, uint32_t phase)
{
    cudaStream_t stream = exe->be->stream;
    char what[96];
    snprintf(what, sizeof what, "compile: capturing phase %u into a CUDA graph", phase);
    CUX_CUDA(exe, CUX_NONE, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), what);
    xpb_status st = cux_enqueue_phase(exe, phase, 0, 1);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(stream, &graph); /* always ends the capture */
    if (st != XPB_OK) {
        if (graph)
            cux_released(cudaGraphDestroy(graph), "compile: cudaGraphDestroy");
        (void)cudaGetLastError(); /* the enqueue's failure is the one reported */
        return st;
    }
    if (e != cudaSuccess)
        return cux_cuda_error(exe->err, exe->prog, CUX_NONE, e, what);
    exe->graphs[phase] = graph;
    CUX_CUDA(exe, CUX_NONE, cudaGraphInstantiate(&exe->graph_exec[phase], graph, 0),
             "compile: cudaGraphInstantiate");
    CUX_CUDA(exe, CUX_NONE, cudaGraphUpload(exe->graph_exec[phase], stream),
             "compile: cudaGraphUpload");
    CUX_CUDA(exe, CUX_NONE, cudaStreamSynchronize(stream), "compile: cudaGraphUpload");
    return XPB_OK;
}

xpb_status cux_run_prep(xpb_executable *exe)
{
    for (uint32_t g = 0; g < exe->plan->n_prep; g++) {
        xpb_status st = cux_enqueue(exe, &exe->prep[g]);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}
