/* compile() and destroy(): the plan (plan.h) becomes resources, all created here and only here:
 *
 *   1. the plan: storage, fusion, steps, arena offsets (plain C, tested without a GPU);
 *   2. one device allocation for the arena, zeroed; the phase records initialised (loss scale);
 *      pinned host copies of the records; a staging buffer for the host boundary;
 *   3. every convolution's cuDNN graph and execution plan and every matmul's cuBLASLt
 *      algorithm, timed on the arena's buffers once per shape and process;
 *   4. one workspace, the largest any step needs (cuDNN, cuBLASLt, the reductions' partials),
 *      shared by all steps since they run one after another on one stream; the variant packs
 *      and kernel parameter blocks bound to it;
 *   5. data-parallel programs (ALL_REDUCE over several ranks): the NCCL communicator,
 *      bootstrapped over the host's (nccl.c), after every local resource so that the likely
 *      failures come before any collective;
 *   6. a warm-up: every phase once, step by step with a synchronisation after each, so that a
 *      failure names its op and every library has done its lazy initialisation (NCCL connects
 *      its ranks at the first collective, outside any capture); a fused convolution whose plan
 *      fails here runs unfused instead (glue/bind.c); then the arena and records are reset (the
 *      host writes parameters and state after compile);
 *   7. one CUDA graph per phase, captured from the same enqueueing code, instantiated and
 *      uploaded, NCCL collectives included (NCCL >= 2.9 supports capture; capturing is a
 *      collective property, and every rank decides it alike); a phase whose capture fails gets
 *      its fused convolutions unfused, and then runs eagerly if it still fails (abi/exec.c,
 *      logged). Under profiling, or with XPB_CUDA_EAGER=1 (a diagnostic, to be set on every
 *      rank alike), phases are enqueued step by step instead.
 * A data-parallel rank first moves to its device (coll.h, cux_rank_device).
 * XPB_CUDA_NO_TUNE=1 takes the first candidate that runs instead of timing them all;
 * XPB_CUDA_DUMP=1 prints every step with its engine to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/compile.h"
#include "abi/exec.h"
#include "glue/arena.h"
#include "glue/backend.h"
#include "glue/bind.h"
#include "glue/conv.h"
#include "glue/log.h"
#include "glue/matmul.h"
#include "glue/nccl.h"
#include "glue/status.h"
#include "glue/transfer.h"
#include "glue/tuning.h"
#include "plan/coll.h"
#include "plan/plan.h"
#include "plan/plan_error.h"
#include "plan/plan_tensor.h"

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}

/* Writes every phase's initial record (the loss scaler's start and growth interval in a phase
 * that scales, plan/plan_scaling.c; 1 and fixed otherwise) and zeroes the dropout counters. */
static xpb_status init_records(xpb_executable *exe)
{
    const cux_plan *plan = exe->plan;
    uint32_t n = exe->prog->n_phases;
    size_t bytes = (size_t)plan->bufs[plan->state_buf].bytes;
    unsigned char *host = calloc(1, bytes);
    if (!host)
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t k = 0; k < n; k++) {
        cux_phase_rec *r = (cux_phase_rec *)(host + cux_rec_offset(k));
        r->scale = plan->phase_scaled[k] ? plan->scale_initial : 1.0f;
        r->interval = plan->phase_scaled[k] ? plan->scale_interval : 0u;
    }
    cudaStream_t s = exe->be->stream;
    cudaError_t e = cudaMemcpyAsync(exe->arena + plan->bufs[plan->state_buf].offset, host, bytes,
                                    cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s); /* before `host` goes, and before any step reads them */
    free(host);
    CUX_CUDA(exe, CUX_NONE, e, "compile: phase records");
    if (exe->host_rec)
        memset(exe->host_rec, 0, (size_t)(n ? n : 1) * sizeof *exe->host_rec);
    return XPB_OK;
}

/* Bytes of the largest tensor the host may transfer, in fp32 / int32. */
static size_t staging_bytes(const xpb_executable *exe)
{
    size_t most = 256;
    for (uint32_t i = 0; i < exe->prog->n_tensors; i++) {
        const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, i);
        if ((exe->plan->opt.keep_all || cux_host_visible(t)) && xpb_tensor_bytes(t) > most)
            most = xpb_tensor_bytes(t);
    }
    return most;
}

static xpb_status allocate(xpb_executable *exe)
{
    const cux_plan *plan = exe->plan;
    const xpb_program *p = exe->prog;
    exe->steps = calloc(plan->n_steps + 1u, sizeof *exe->steps);
    exe->prep = calloc(plan->n_prep + 1u, sizeof *exe->prep);
    exe->op_seconds = calloc(p->n_ops + 1u, sizeof *exe->op_seconds);
    exe->op_calls = calloc(p->n_ops + 1u, sizeof *exe->op_calls);
    exe->phase_runs = calloc(p->n_phases + 1u, sizeof *exe->phase_runs);
    if (!exe->steps || !exe->prep || !exe->op_seconds || !exe->op_calls || !exe->phase_runs)
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    size_t arena = plan->arena_bytes ? (size_t)plan->arena_bytes : CUX_ALIGN;
    cudaError_t e = cudaMalloc((void **)&exe->arena, arena);
    if (e != cudaSuccess) {
        size_t free_b = 0, total = 0;
        (void)cudaGetLastError();
        if (cudaMemGetInfo(&free_b, &total) != cudaSuccess)
            (void)cudaGetLastError();
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY,
                             "compile: the program needs a %.1f MiB arena (its tensors at their "
                             "peak, %.1f MiB), the device has %.1f MiB free of %.1f MiB",
                             (double)arena / 1048576.0, (double)plan->peak_bytes / 1048576.0,
                             (double)free_b / 1048576.0, (double)total / 1048576.0);
    }
    /* on the backend's stream, which does not synchronise with the legacy default stream */
    CUX_CUDA(exe, CUX_NONE, cudaMemsetAsync(exe->arena, 0, arena, exe->be->stream),
             "compile: zeroing the arena");
    CUX_CUDA(exe, CUX_NONE, cudaStreamSynchronize(exe->be->stream), "compile: zeroing the arena");
    uint32_t np = p->n_phases ? p->n_phases : 1;
    CUX_CUDA(
        exe, CUX_NONE,
        cudaHostAlloc((void **)&exe->host_rec, np * sizeof *exe->host_rec, cudaHostAllocDefault),
        "compile: pinned phase records");
    exe->host_bytes += np * sizeof *exe->host_rec;
    exe->staging_bytes = staging_bytes(exe);
    CUX_CUDA(exe, CUX_NONE, cudaMalloc(&exe->staging, exe->staging_bytes),
             "compile: staging buffer");
    return init_records(exe);
}

/* Engines first (they say how much workspace they need), then the workspace, then everything
 * that points into it. */
static xpb_status prepare_steps(xpb_executable *exe)
{
    const cux_plan *plan = exe->plan;
    size_t need = plan->scratch_bytes;
    xpb_status st = XPB_OK;
    for (uint32_t g = 0; g < plan->n_steps && st == XPB_OK; g++) {
        cux_run_step *rs = &exe->steps[g];
        rs->step = &plan->steps[g];
        if (rs->step->engine == CUX_ENG_CONV) {
            st = cux_conv_prepare(exe, g, 1);
            if (st == XPB_OK && (size_t)rs->conv.workspace > need)
                need = (size_t)rs->conv.workspace;
        } else if (rs->step->engine == CUX_ENG_MATMUL) {
            st = cux_mm_prepare(exe, g);
            if (st == XPB_OK && rs->mm.workspace > need)
                need = rs->mm.workspace;
        }
    }
    if (st != XPB_OK)
        return st;
    exe->workspace_bytes = need > CUX_ALIGN ? need : CUX_ALIGN;
    CUX_CUDA(exe, CUX_NONE, cudaMalloc(&exe->workspace, exe->workspace_bytes),
             "compile: workspace");
    return cux_bind_steps(exe);
}

/* Warm-up step `g`: run and waited for. A fused convolution whose plan fails here (without
 * losing the context) gets the unfused form (glue/bind.c) and runs again. */
static xpb_status warm_step(xpb_executable *exe, uint32_t g)
{
    uint32_t op = exe->steps[g].step->op;
    xpb_status st = cux_enqueue_step(exe, g, 0);
    if (st == XPB_OK)
        st = cux_nccl_wait(exe, op, "compile: warm-up run");
    if (st == XPB_OK || st == XPB_OUT_OF_MEMORY || !cux_fused_conv(exe, g) ||
        cux_lost(exe->be->device) || cux_nccl_failed(exe))
        return st;
    char why[CUX_ERR_SIZE + 32];
    int grew = 0;
    snprintf(why, sizeof why, "at the warm-up (%s)", exe->err);
    if ((st = cux_unfuse(exe, g, why, &grew)) != XPB_OK)
        return st;
    st = cux_enqueue_step(exe, g, 0);
    return st == XPB_OK ? cux_nccl_wait(exe, op, "compile: warm-up run") : st;
}

/* Every phase once, synchronising after each step so that a failure names its op. */
static xpb_status warm_up(xpb_executable *exe)
{
    cudaStream_t s = exe->be->stream;
    xpb_status st;
    if ((st = cux_run_prep(exe)) != XPB_OK)
        return st;
    for (uint32_t k = 0; k < exe->prog->n_phases; k++)
        for (uint32_t g = exe->plan->phase_begin[k]; g < exe->plan->phase_end[k]; g++)
            if ((st = warm_step(exe, g)) != XPB_OK)
                return st;
    /* back to the state after compile: zeroed tensors, fresh records and counters */
    CUX_CUDA(exe, CUX_NONE, cudaMemsetAsync(exe->arena, 0, (size_t)exe->plan->arena_bytes, s),
             "compile: resetting the arena");
    CUX_CUDA(exe, CUX_NONE, cudaStreamSynchronize(s), "compile: resetting the arena");
    return init_records(exe);
}

/* XPB_CUDA_DUMP: one line per step (op, engine or kernel, operand types and layouts). */
static void dump(const xpb_executable *exe, FILE *f)
{
    static const char *const types[] = {"f32", "f16", "bf16", "i32"};
    static const char *const layouts[] = {"nchw", "nhwc"};
    const cux_plan *plan = exe->plan;
    fprintf(f,
            "cuda: %u steps, arena %.1f MiB (peak live %.1f MiB), workspace %.1f MiB; %u fused "
            "convolutions unfused at warm-up or capture, %u phases without a CUDA graph\n",
            plan->n_steps, (double)plan->arena_bytes / 1048576.0,
            (double)plan->peak_bytes / 1048576.0, (double)exe->workspace_bytes / 1048576.0,
            exe->n_unfused, exe->n_eager);
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        const cux_run_step *rs = &exe->steps[g];
        char label[256];
        cux_op_label(exe->prog, s->op, label, sizeof label);
        const char *what = s->engine == CUX_ENG_CONV     ? rs->conv.engine
                           : s->engine == CUX_ENG_MATMUL ? "cuBLASLt"
                           : s->engine == CUX_ENG_COLL   ? "NCCL all-reduce (avg)"
                                                         : cux_kernel_name(s->kernel);
        fprintf(f, "  %4u %-40s %-24s%s%s", g, label, what, rs->epilogue ? " +epilogue" : "",
                s->engine == CUX_ENG_CONV && rs->conv.fused ? " (fused)" : "");
        for (int k = 0; k < CUX_MAX_OUT; k++)
            if (s->out[k].buf != CUX_NONE)
                fprintf(f, " out%d %s/%s", k, types[s->out[k].type & 3],
                        layouts[s->out[k].layout & 1]);
        fprintf(f, "\n");
    }
}

static xpb_status make_events(xpb_executable *exe)
{
    uint32_t n = exe->plan->n_steps + 1;
    exe->events = calloc(n, sizeof *exe->events);
    exe->pending = calloc(exe->prog->n_phases + 1u, sizeof *exe->pending);
    if (!exe->events || !exe->pending)
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    for (uint32_t i = 0; i < n; i++)
        CUX_CUDA(exe, CUX_NONE, cudaEventCreate(&exe->events[i]), "compile: profiling events");
    return XPB_OK;
}

/* What the fp16 loss scaler did in each scaled phase, to the host's log. */
static void log_scaler(const xpb_executable *exe)
{
    if (!exe->plan || !exe->plan->scaled || !exe->host_rec)
        return;
    for (uint32_t k = 0; k < exe->prog->n_phases; k++) {
        const cux_phase_rec *r = &exe->host_rec[k];
        if (r->steps && exe->plan->phase_scaled[k])
            cux_log(r->overflows ? XPB_LOG_WARN : XPB_LOG_INFO,
                    "fp16 loss scaling, phase %u: %u of %u steps overflowed and skipped their "
                    "update; final scale %g",
                    k, r->overflows, r->steps, (double)r->scale);
    }
}

void cux_destroy(xpb_executable *exe)
{
    if (!exe)
        return;
    log_scaler(exe);
    /* what is still running must finish before its memory goes (collectives: within the
     * limit, else the NCCL communicator is aborted, which ends them) */
    cux_released(cudaSetDevice(exe->be->device), "destroy: cudaSetDevice");
    if (exe->nccl) {
        if (cux_nccl_wait(exe, CUX_NONE, "destroy: waiting for the stream") != XPB_OK)
            cux_log(XPB_LOG_WARN, "%s", exe->err);
        cux_released(cudaStreamSynchronize(exe->be->stream), "destroy: cudaStreamSynchronize");
        cux_nccl_teardown(exe);
    } else {
        cux_released(cudaStreamSynchronize(exe->be->stream), "destroy: cudaStreamSynchronize");
    }
    if (exe->counted)
        exe->be->live_exes--;
    uint32_t np = exe->prog->n_phases;
    for (uint32_t k = 0; exe->graph_exec && k < np; k++)
        if (exe->graph_exec[k])
            cux_released(cudaGraphExecDestroy(exe->graph_exec[k]), "destroy: cudaGraphExecDestroy");
    for (uint32_t k = 0; exe->graphs && k < np; k++)
        if (exe->graphs[k])
            cux_released(cudaGraphDestroy(exe->graphs[k]), "destroy: cudaGraphDestroy");
    if (exe->steps && exe->plan)
        for (uint32_t g = 0; g < exe->plan->n_steps; g++) {
            cux_conv_free(&exe->steps[g].conv);
            cux_mm_free(&exe->steps[g].mm);
        }
    if (exe->events && exe->plan)
        for (uint32_t i = 0; i <= exe->plan->n_steps; i++)
            if (exe->events[i])
                cux_released(cudaEventDestroy(exe->events[i]), "destroy: cudaEventDestroy");
    cux_free_streaming(exe);
    cux_tune_release(exe);
    if (exe->arena)
        cux_released(cudaFree(exe->arena), "destroy: cudaFree (arena)");
    if (exe->workspace)
        cux_released(cudaFree(exe->workspace), "destroy: cudaFree (workspace)");
    if (exe->staging)
        cux_released(cudaFree(exe->staging), "destroy: cudaFree (staging)");
    if (exe->host_rec)
        cux_released(cudaFreeHost(exe->host_rec), "destroy: cudaFreeHost");
    free(exe->graphs);
    free(exe->graph_exec);
    free(exe->steps);
    free(exe->prep);
    free(exe->events);
    free(exe->pending);
    free(exe->op_seconds);
    free(exe->op_calls);
    free(exe->phase_runs);
    cux_plan_free(exe->plan);
    free(exe);
}

/* The host's communicator when the run has several ranks (NULL otherwise), checked for what
 * the cuda backend calls. */
static xpb_status ranks_of(const xpb_communicator **out, xpb_backend *be,
                           const xpb_compile_options *opts)
{
    const xpb_communicator *c = XPB_MEMBER_OR(opts, xpb_compile_options, comm, NULL);
    *out = NULL;
    if (!c || c->size <= 1)
        return XPB_OK;
    if (!XPB_HAS_MEMBER(c, xpb_communicator, last_error) || !c->broadcast ||
        !c->allreduce_sum_f32 || !c->last_error || c->rank >= c->size)
        return cux_error_msg(be->err, XPB_INVALID_ARGUMENT,
                             "compile: the communicator (%u ranks) lacks broadcast, "
                             "allreduce_sum_f32 or last_error, or its rank %u is out of range",
                             c->size, c->rank);
    *out = c;
    return XPB_OK;
}

/* A data-parallel rank's device (coll.h, cux_rank_device): the backend moves there when it was
 * opened on the default device 0 with several ranks on this host. */
static xpb_status rank_device(xpb_backend *be, const xpb_communicator *comm)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return cux_cuda_error(be->err, NULL, CUX_NONE, e, "compile: cudaGetDeviceCount");
    int device = cux_rank_device(be->device, comm->local_rank, comm->local_size, count);
    if (device < 0)
        return cux_error_msg(be->err, XPB_UNSUPPORTED,
                             "compile: rank %u (local rank %u of %u on this host) would share one "
                             "of the %d GPUs this process sees with another rank, which NCCL does "
                             "not support: start at most %d ranks per host, or give each rank its "
                             "own GPU (CUDA_VISIBLE_DEVICES)",
                             comm->rank, comm->local_rank, comm->local_size, count, count);
    xpb_status st = cux_backend_move(be, device);
    if (st != XPB_OK)
        return st;
    if ((e = cudaSetDevice(be->device)) != cudaSuccess)
        return cux_cuda_error(be->err, NULL, CUX_NONE, e, "compile: cudaSetDevice");
    return XPB_OK;
}

xpb_status cux_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                       const xpb_compile_options *opts)
{
    /* every CUDA call of compile goes to the backend's device, whatever device the calling
     * thread had current (another backend of the process may have made its own current) */
    cudaError_t e = cudaSetDevice(be->device);
    if (e != cudaSuccess)
        return cux_cuda_error(be->err, NULL, CUX_NONE, e, "compile: cudaSetDevice");
    const xpb_communicator *comm = NULL;
    xpb_status st = ranks_of(&comm, be, opts);
    if (st == XPB_OK && comm)
        st = rank_device(be, comm);
    if (st != XPB_OK)
        return st;
    cux_options o;
    memset(&o, 0, sizeof o);
    o.precision = XPB_MEMBER_OR(opts, xpb_compile_options, precision, XPB_PRECISION_FP32);
    o.fusion = XPB_MEMBER_OR(opts, xpb_compile_options, fusion, 0u);
    o.profiling = XPB_MEMBER_OR(opts, xpb_compile_options, profiling, 0u);
    o.keep_all = XPB_MEMBER_OR(opts, xpb_compile_options, keep_all, 0u);
    o.transfer =
        XPB_MEMBER_OR(opts, xpb_compile_options, transfer, (uint32_t)XPB_TRANSFER_RESIDENT);
    if (o.precision == 0)
        o.precision = XPB_PRECISION_FP32;
    o.ranks = comm ? comm->size : 1;
#ifdef XPB_CUDA_HAVE_NCCL
    o.collectives = 1;
#endif
    cux_target target = {be->cc_major, be->cc_minor};
    xpb_executable *exe = calloc(1, sizeof *exe);
    if (!exe)
        return cux_error_msg(be->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    exe->be = be;
    exe->prog = prog;
    st = cux_plan_build(&exe->plan, prog, &o, &target, be->err, sizeof be->err);
    if (st != XPB_OK) {
        free(exe);
        return st;
    }
    if ((st = allocate(exe)) != XPB_OK || (st = prepare_steps(exe)) != XPB_OK ||
        (st = cux_prepare_streaming(exe)) != XPB_OK)
        goto fail;
    if (o.profiling && (st = make_events(exe)) != XPB_OK)
        goto fail;
    if ((st = cux_nccl_setup(exe, comm)) != XPB_OK)
        goto fail;
    if ((st = warm_up(exe)) != XPB_OK)
        goto fail;
    if (!o.profiling && !env_on("XPB_CUDA_EAGER") && (st = cux_capture(exe)) != XPB_OK)
        goto fail;
    cux_tune_release(exe); /* the engines are chosen */
    exe->prep_stale = exe->plan->n_prep > 0;
    if (env_on("XPB_CUDA_DUMP"))
        dump(exe, stderr);
    exe->counted = 1;
    be->live_exes++;
    *out = exe;
    return XPB_OK;

fail:
    snprintf(be->err, sizeof be->err, "%s", exe->err);
    cux_nccl_abort(exe); /* the other ranks must not wait for this one's collectives */
    cux_destroy(exe);
    return st;
}
