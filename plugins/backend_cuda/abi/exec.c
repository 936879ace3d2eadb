/* Enqueueing steps: one code path serves the warm-up, the capture of a phase into its CUDA
 * graph (NCCL collectives included), phases that run eagerly, profiling (steps between events,
 * outside graph mode) and the prep steps.
 *
 * Capture is per phase, not all or nothing: a phase whose capture fails because of a fused
 * convolution's cuDNN plan gets the unfused form of that convolution and is captured again
 * (glue/bind.c); a phase that still cannot be captured runs eagerly, its steps launched one by
 * one at every run, and compile logs it (a warning naming the phase and the failure). A lost
 * context, or a data-parallel executable (capturing is a decision all ranks must share), fails
 * compile instead. A phase ends with the copy of its record (status, loss scaler) to pinned host
 * memory, so that synchronize() reads data-dependent errors without another round trip.
 *
 * Built against the CPU stand-in of the test suite (XPB_CUDA_STANDIN), every buffer whose
 * lifetime ends with a step (plan->end_bufs) is poisoned right after that step: filled with
 * 0xFF bytes, NaN in every float type, by the stand-in's xpbsi_poison when the step runs now and
 * by a memset node when it is being captured. A memory plan that lets two live buffers share
 * bytes, or a step that reads a buffer after its last planned use, then computes NaN instead of
 * a plausible number. The GPU build has no such call. */
#include <stdio.h>
#include <stdlib.h>

#include "abi/exec.h"
#include "glue/bind.h"
#include "glue/log.h"
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

xpb_status cux_enqueue_phase(xpb_executable *exe, uint32_t phase, int with_events, int capturing,
                             uint32_t *failed)
{
    const cux_plan *plan = exe->plan;
    cudaStream_t stream = exe->be->stream;
    uint32_t begin = plan->phase_begin[phase], end = plan->phase_end[phase];
    xpb_status st;
    if (failed)
        *failed = CUX_NONE;
    for (uint32_t g = begin; g < end; g++) {
        if (with_events)
            CUX_CUDA(exe, plan->steps[g].op, cudaEventRecord(exe->events[g], stream),
                     "profiling event");
        if ((st = cux_enqueue_step(exe, g, capturing)) != XPB_OK) {
            if (failed)
                *failed = g;
            return st;
        }
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

/* Destroys phase k's graph and its executable form, if any. */
static void drop_graph(xpb_executable *exe, uint32_t k)
{
    if (exe->graph_exec[k])
        cux_released(cudaGraphExecDestroy(exe->graph_exec[k]), "compile: cudaGraphExecDestroy");
    if (exe->graphs[k])
        cux_released(cudaGraphDestroy(exe->graphs[k]), "compile: cudaGraphDestroy");
    exe->graph_exec[k] = NULL;
    exe->graphs[k] = NULL;
}

/* Captures phase `phase` into exe->graphs / graph_exec, instantiated and uploaded. On failure
 * the phase has no graph, *failed is the step whose enqueue failed (CUX_NONE: the capture,
 * instantiation or upload failed) and the stream is out of capture mode. */
static xpb_status capture_phase(xpb_executable *exe, uint32_t phase, uint32_t *failed)
{
    cudaStream_t stream = exe->be->stream;
    char what[96];
    snprintf(what, sizeof what, "compile: capturing phase %u into a CUDA graph", phase);
    *failed = CUX_NONE;
    CUX_CUDA(exe, CUX_NONE, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), what);
    xpb_status st = cux_enqueue_phase(exe, phase, 0, 1, failed);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(stream, &graph); /* always ends the capture */
    exe->graphs[phase] = graph;
    if (st == XPB_OK && e != cudaSuccess)
        st = cux_cuda_error(exe->err, exe->prog, CUX_NONE, e, what);
    if (st == XPB_OK &&
        (e = cudaGraphInstantiate(&exe->graph_exec[phase], graph, 0)) != cudaSuccess)
        st = cux_cuda_error(exe->err, exe->prog, CUX_NONE, e, "compile: cudaGraphInstantiate");
    if (st == XPB_OK && ((e = cudaGraphUpload(exe->graph_exec[phase], stream)) != cudaSuccess ||
                         (e = cudaStreamSynchronize(stream)) != cudaSuccess))
        st = cux_cuda_error(exe->err, exe->prog, CUX_NONE, e, "compile: cudaGraphUpload");
    if (st != XPB_OK) {
        drop_graph(exe, phase);
        if (!cux_lost(exe->be->device))
            (void)cudaGetLastError(); /* the failure reported is the first one */
    }
    return st;
}

/* The first convolution step of phase k whose epilogue runs in its cuDNN plan, or CUX_NONE. */
static uint32_t first_fused(const xpb_executable *exe, uint32_t k)
{
    for (uint32_t g = exe->plan->phase_begin[k]; g < exe->plan->phase_end[k]; g++)
        if (cux_fused_conv(exe, g))
            return g;
    return CUX_NONE;
}

xpb_status cux_capture(xpb_executable *exe)
{
    uint32_t n = exe->prog->n_phases;
    exe->graphs = calloc(n + 1u, sizeof *exe->graphs);
    exe->graph_exec = calloc(n + 1u, sizeof *exe->graph_exec);
    if (!exe->graphs || !exe->graph_exec)
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t k = 0; k < n;) {
        uint32_t failed;
        xpb_status st = capture_phase(exe, k, &failed);
        if (st == XPB_OK) {
            k++;
            continue;
        }
        /* capture refuses a collective decision per rank, and nothing survives a lost context */
        if (st == XPB_OUT_OF_MEMORY || exe->nccl || cux_lost(exe->be->device))
            return st;
        uint32_t g = failed != CUX_NONE ? (cux_fused_conv(exe, failed) ? failed : CUX_NONE)
                                        : first_fused(exe, k);
        if (g != CUX_NONE) { /* the convolution alone may capture where its fused plan did not */
            char why[CUX_ERR_SIZE + 32];
            int grew = 0;
            snprintf(why, sizeof why, "in a stream capture (%s)", exe->err);
            if ((st = cux_unfuse(exe, g, why, &grew)) != XPB_OK)
                return st;
            for (uint32_t j = 0; grew && j < k; j++) /* they point at the old workspace */
                drop_graph(exe, j);
            k = grew ? 0 : k;
            continue;
        }
        const xpb_phase *ph = xpb_program_phase(exe->prog, k);
        cux_log(XPB_LOG_WARN,
                "phase %u '%s' runs without a CUDA graph, its steps launched one by one at every "
                "run: capturing it failed (%s)",
                k, ph->name ? ph->name : "", exe->err);
        exe->n_eager++;
        k++;
    }
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
