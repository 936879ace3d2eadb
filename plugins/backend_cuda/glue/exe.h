/* The cuda backend's host-side state (prefix cux_): the opened device (struct xpb_backend), the
 * executable (struct xpb_executable) and the run-time form of its steps. Types only: every file of
 * glue/ and abi/ includes this header, and the functions are declared in the header of the file
 * that defines them, so that no file needs one above it. The decisions are in the plan
 * (plan/plan.h, plain C); glue/ and abi/ turn a plan into resources and launches:
 *
 *   glue/log.c       the host's log service
 *   glue/status.c    CUDA / cuDNN / cuBLASLt statuses into xpb_status with messages
 *   glue/device.c    device probing (why there is none), properties, versions, peak FLOP/s
 *   glue/energy.c    NVML loaded at run time (energy_read)
 *   glue/backend.c   the streams and handles of an opened device; a rank's move to its device
 *   glue/arena.c     device addresses of the plan's buffers
 *   glue/tuning.c    the scratch and the switch of the engines' timing
 *   glue/conv.c      cuDNN graph API: a convolution (+ epilogue) as an operation graph,
 *                    heuristics, autotuning, execution plans, variant packs
 *   glue/matmul.c    cuBLASLt: linear layers with their epilogues, algorithm autotuning
 *   glue/transfer.c  write / read / write_async (host boundary conversions)
 *   glue/nccl.c      ALL_REDUCE: the NCCL communicator (bootstrap over the host's), its steps,
 *                    the bounded waits while collectives run, its teardown (plan/coll.h loads
 *                    NCCL)
 *   abi/compile.c    compile / destroy: arena, workspace, engines, warm-up, graphs
 *   abi/exec.c       enqueueing the steps of a phase; capturing a phase into a CUDA graph
 *   abi/run.c        run / synchronize / profile_read / memory_stats
 *   abi/plugin.c     descriptor and ABI table, open / close, device listing
 *
 * Compile once, run many: everything (descriptors, plans, algorithms, the arena, the workspace,
 * events, graphs) is created in compile; run() launches one graph per phase; nothing is
 * created, allocated or synchronised inside a step. */
#ifndef XPB_CUX_EXE_H
#define XPB_CUX_EXE_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <xpubench/comm.h>

#include "kernels/kernels.h"
#include "plan/plan_types.h"

struct cux_nvml; /* glue/energy.c */
struct cux_nccl; /* glue/nccl.c */

struct xpb_backend {
    int device;
    char name[256];
    int cc_major, cc_minor, sm_count, clock_khz;
    uint64_t memory_bytes;
    cudaStream_t stream;      /* every step of every executable of this backend */
    cudaStream_t copy_stream; /* host-to-device copies of streamed inputs */
    cudnnHandle_t cudnn;      /* bound to `stream` */
    cublasLtHandle_t lt;
    struct cux_nvml *nvml; /* NULL when NVML is absent (energy "not measured") */
    uint32_t live_exes;    /* executables compiled and not destroyed (cux_backend_move) */
    double bandwidth;      /* device-to-device copy bytes/s (glue/bandwidth.c); 0: unknown */
    int bandwidth_done;    /* measured once per opened backend */
    char err[CUX_ERR_SIZE];
};

/* A convolution step at run time (glue/conv.c). */
#define CUX_CONV_MAX_DESCS 24
typedef struct cux_conv_run {
    cudnnBackendDescriptor_t descs[CUX_CONV_MAX_DESCS]; /* tensors, ops, graph, engine: owned */
    int n_descs;
    cudnnBackendDescriptor_t plan;    /* the chosen execution plan (owned) */
    cudnnBackendDescriptor_t varpack; /* bound to the arena and the workspace (owned) */
    int64_t workspace;                /* bytes the plan needs */
    int fused;                        /* the epilogue runs inside the cuDNN graph */
    int n_uids;
    int64_t uids[5];
    void *ptrs[5];
    char engine[64]; /* "engine 12 (tensor cores)" for XPB_CUDA_DUMP */
} cux_conv_run;

/* A matmul step at run time (glue/matmul.c). */
typedef struct cux_mm_run {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
    const void *pa, *pb;
    void *pd;
    int fused_act;  /* the activation is in the cuBLASLt epilogue */
    int accumulate; /* D += the product (beta 1): an op-set-3 form's accumulate */
} cux_mm_run;

/* One plan step, ready to enqueue. */
typedef struct cux_run_step {
    const cux_step *step; /* the plan's */
    cux_conv_run conv;
    cux_mm_run mm;
    cux_kparams kp;    /* own kernel, or the epilogue kernel after a conv / matmul */
    int epilogue;      /* conv / matmul: kp is an EPILOGUE to launch after the engine */
    int epilogue_bias; /* that epilogue adds the bias (the engine did not) */
} cux_run_step;

/* An INPUT the host streams every step (write_async): two device staging buffers, so that the
 * copy of step k+1 can overlap step k, and the events that order them. */
typedef struct cux_stream_in {
    uint32_t tensor;
    void *stage[2];
    cudaEvent_t copied[2]; /* copy_stream: the copy into stage[i] is done */
    cudaEvent_t used[2];   /* stream: the conversion out of stage[i] is done */
    int next;
} cux_stream_in;

struct xpb_executable {
    xpb_backend *be;
    const xpb_program *prog; /* borrowed until destroy */
    cux_plan *plan;
    char *arena; /* plan->arena_bytes of device memory */
    void *workspace;
    size_t workspace_bytes;
    void *tune_ws; /* compile only: the scratch engine candidates run with (glue/tuning.c) */
    size_t tune_bytes;
    void *staging; /* host-boundary conversions: the largest transferable tensor in fp32 */
    size_t staging_bytes;
    cux_run_step *steps; /* plan->n_steps */
    cux_run_step *prep;  /* plan->n_prep */
    int prep_stale;      /* a folded input was written since the prep steps last ran */
    cudaGraph_t *graphs; /* per phase; NULL under profiling or XPB_CUDA_EAGER */
    cudaGraphExec_t
        *graph_exec;    /* per phase; a NULL entry: the phase runs eagerly (capture failed) */
    uint32_t n_eager;   /* phases that run eagerly although graphs were asked for */
    uint32_t n_unfused; /* fused convolutions replaced by the unfused form at warm-up / capture */
    cux_phase_rec *host_rec; /* pinned host copies of the phase records */
    cux_stream_in *inputs;
    uint32_t n_inputs;
    /* profiling (steps launched one by one between events) */
    cudaEvent_t *events;   /* per step: recorded before it; plus one after the last */
    uint8_t *pending;      /* per phase: run since its events were last read */
    double *op_seconds;    /* per op */
    uint64_t *op_calls;    /* per op: completed runs of its phase */
    uint64_t *phase_runs;  /* per phase */
    uint64_t host_bytes;   /* pinned host memory of this executable */
    struct cux_nccl *nccl; /* ALL_REDUCE over several ranks; NULL otherwise (owned) */
    int counted;           /* counted in be->live_exes */
    char err[CUX_ERR_SIZE];
};

#endif
