/* cuda backend internals (prefix cux_): the device context, the executable, and the modules of
 * the CUDA host code. The decisions are in the plan (plan.h, plain C); these files turn a plan
 * into resources and launches:
 *
 *   plugin.c    descriptor and ABI table, open / close, device listing
 *   device.c    device probing (why there is none), properties, versions, peak FLOP/s
 *   energy.c    NVML loaded at run time (energy_read)
 *   status.c    CUDA / cuDNN / cuBLASLt statuses into xpb_status with messages
 *   compile.c   compile / destroy: arena, workspace, engines, warm-up, one CUDA graph per phase
 *   conv.c      cuDNN graph API: a convolution (+ epilogue) as an operation graph, heuristics,
 *               autotuning, execution plans, variant packs
 *   matmul.c    cuBLASLt: linear layers with their epilogues, algorithm autotuning
 *   exec.c      enqueueing the steps of a phase; capturing a phase into a CUDA graph
 *   run.c       run / synchronize / profile_read / memory_stats
 *   transfer.c  write / read / write_async and pinned host memory (host boundary conversions)
 *   nccl.c      ALL_REDUCE: the NCCL communicator (bootstrap over the host's), its steps, the
 *               bounded waits while collectives run, its teardown (coll.h loads NCCL)
 *
 * Compile once, run many: everything (descriptors, plans, algorithms, the arena, the workspace,
 * events, graphs) is created in compile; run() launches one graph per phase; nothing is
 * created, allocated or synchronised inside a step. */
#ifndef XPB_CUX_H
#define XPB_CUX_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <xpubench/comm.h>

#include "kernels/kernels.h"
#include "plan/plan.h"

struct cux_nvml; /* energy.c */
struct cux_nccl; /* nccl.c */

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
    char err[CUX_ERR_SIZE];
};

/* A convolution step at run time (conv.c). */
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

/* A matmul step at run time (matmul.c). */
typedef struct cux_mm_run {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
    const void *pa, *pb;
    void *pd;
    int fused_act; /* the activation is in the cuBLASLt epilogue */
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
    void *staging; /* host-boundary conversions: the largest transferable tensor in fp32 */
    size_t staging_bytes;
    cux_run_step *steps; /* plan->n_steps */
    cux_run_step *prep;  /* plan->n_prep */
    int prep_stale;      /* a folded input was written since the prep steps last ran */
    cudaGraph_t *graphs; /* per phase; NULL under profiling or XPB_CUDA_EAGER */
    cudaGraphExec_t *graph_exec;
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

/* ---- plugin.c ---- */

/* One line to the host's log ("[cuda] ..."), when the host gave a log service; for what has
 * no status to return (a failed release in destroy or close). */
void cux_log(xpb_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Moves the backend to `device` (a data-parallel rank's, coll.h): its streams and handles are
 * made again there. XPB_INVALID_ARGUMENT while executables compiled on the old device exist;
 * a failure leaves the backend without streams (its next calls fail). Message in be->err. */
xpb_status cux_backend_move(xpb_backend *be, int device);

/* ---- status.c ---- */

/* "cuda: <label>: <what>: <details>" into err (CUX_ERR_SIZE bytes), the label naming op `op`
 * and its layer (CUX_NONE: no label); returns the xpb_status the failure maps to. */
xpb_status cux_cuda_error(char *err, const xpb_program *prog, uint32_t op, cudaError_t e,
                          const char *what);
xpb_status cux_cudnn_error(char *err, const xpb_program *prog, uint32_t op, cudnnStatus_t s,
                           const char *what);
xpb_status cux_cublas_error(char *err, const xpb_program *prog, uint32_t op, cublasStatus_t s,
                            const char *what);
xpb_status cux_error_msg(char *err, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Release calls (destroy, close) return nothing to the host: a failure is logged as a warning
 * naming `what`, and the runtime's error state is cleared. */
void cux_released(cudaError_t e, const char *what);
void cux_released_dnn(cudnnStatus_t s, const char *what);
void cux_released_lt(cublasStatus_t s, const char *what);

/* Evaluates a CUDA runtime call; on failure returns the mapped status from the enclosing
 * function with a message in exe->err naming op `op`. */
#define CUX_CUDA(exe, op, call, what)                                                              \
    do {                                                                                           \
        cudaError_t cux_e_ = (call);                                                               \
        if (cux_e_ != cudaSuccess)                                                                 \
            return cux_cuda_error((exe)->err, (exe)->prog, (op), cux_e_, (what));                  \
    } while (0)
#define CUX_CUDNN(exe, op, call, what)                                                             \
    do {                                                                                           \
        cudnnStatus_t cux_s_ = (call);                                                             \
        if (cux_s_ != CUDNN_STATUS_SUCCESS)                                                        \
            return cux_cudnn_error((exe)->err, (exe)->prog, (op), cux_s_, (what));                 \
    } while (0)
#define CUX_CUBLAS(exe, op, call, what)                                                            \
    do {                                                                                           \
        cublasStatus_t cux_b_ = (call);                                                            \
        if (cux_b_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return cux_cublas_error((exe)->err, (exe)->prog, (op), cux_b_, (what));                \
    } while (0)

/* ---- device.c ---- */

/* The number of CUDA devices; 0 with a sentence in `reason` (size bytes) when there is none
 * (reason.h). Cheap: no context is created. */
int cux_probe_devices(char *reason, size_t size);
/* Fills *info for device `index` (properties, versions, peaks) without opening it. `nvml` may
 * be NULL (no driver version string from NVML then). XPB_NO_DEVICE with `reason` filled when
 * the index does not exist. */
xpb_status cux_describe(int index, xpb_device_info *info, struct cux_nvml *nvml, char *reason,
                        size_t size);
/* Reads the properties open() keeps (name, compute capability, SMs, clock, memory). */
xpb_status cux_read_properties(xpb_backend *be);

/* ---- energy.c ---- */

/* Loads NVML (libnvidia-ml.so.1) with dlopen and finds the handle of the GPU at `device`'s PCI
 * bus id. NULL when NVML or the device is absent: energy is then "not measured". The result
 * is owned by the caller (cux_nvml_close). */
struct cux_nvml *cux_nvml_open(int device);
void cux_nvml_close(struct cux_nvml *nvml);
/* Joules since the driver loaded (nvmlDeviceGetTotalEnergyConsumption). */
xpb_status cux_nvml_energy(struct cux_nvml *nvml, double *joules, char *err, size_t size);
/* "580.95.05" into out; 0 on success. */
int cux_nvml_driver(struct cux_nvml *nvml, char *out, size_t size);

/* ---- compile.c ---- */

xpb_status cux_compile(xpb_executable **out, xpb_backend *be, const xpb_program *prog,
                       const xpb_compile_options *opts);
void cux_destroy(xpb_executable *exe);
/* Device address of plan buffer `buf` (NULL for CUX_NONE): inside the arena, owned by the
 * executable, valid until destroy. */
void *cux_ptr(const xpb_executable *exe, uint32_t buf);
/* The kernel view of plan view `v` (p NULL for an absent operand). */
cux_tview cux_tview_of(const xpb_executable *exe, const cux_view *v);

/* ---- conv.c ---- */

/* Builds step `g`'s cuDNN graph (with its epilogue when an engine fuses it), chooses its
 * execution plan (timed once per shape and process, tune_cache.h) using `tune_ws` as scratch
 * (grown as needed, owned by the caller), and records the workspace it needs. */
xpb_status cux_conv_prepare(xpb_executable *exe, uint32_t g, void **tune_ws, size_t *tune_bytes);
/* Binds the variant pack to the arena and the final workspace. */
xpb_status cux_conv_bind(xpb_executable *exe, cux_run_step *rs);
xpb_status cux_conv_enqueue(xpb_executable *exe, cux_run_step *rs);
void cux_conv_free(cux_conv_run *c);

/* ---- matmul.c ---- */

xpb_status cux_mm_prepare(xpb_executable *exe, uint32_t g, void **tune_ws, size_t *tune_bytes);
xpb_status cux_mm_enqueue(xpb_executable *exe, cux_run_step *rs);
void cux_mm_free(cux_mm_run *m);

/* Grows the tuning scratch to at least `bytes` (compile only). */
xpb_status cux_tune_scratch(xpb_executable *exe, void **ws, size_t *have, size_t bytes);
/* Whether compile times candidates (XPB_CUDA_NO_TUNE unset). */
int cux_tuning_on(void);

/* ---- exec.c ---- */

/* Enqueues step `rs` on the backend's stream. */
xpb_status cux_enqueue(xpb_executable *exe, cux_run_step *rs);
/* Enqueues every step of phase `phase` (and, profiling, the events around them). */
xpb_status cux_enqueue_phase(xpb_executable *exe, uint32_t phase, int with_events);
/* Captures phase `phase` into exe->graphs / graph_exec (the steps, then the copy of the
 * phase's record to the host). */
xpb_status cux_capture_phase(xpb_executable *exe, uint32_t phase);
/* Runs the prep steps (batch-norm folding) now. */
xpb_status cux_run_prep(xpb_executable *exe);

/* ---- nccl.c ---- */

/* Data-parallel programs (plan->n_coll > 0): loads NCCL, creates the executable's NCCL
 * communicator over `comm` (collective: every rank calls it in the same order) and agrees with
 * the other ranks that every one succeeded. Nothing when the plan has no collective step. */
xpb_status cux_nccl_setup(xpb_executable *exe, const xpb_communicator *comm);
/* Enqueues ALL_REDUCE step `rs` (in place, ncclAvg; a bucket's first step opens its NCCL group,
 * its last closes it). */
xpb_status cux_nccl_enqueue(xpb_executable *exe, const cux_run_step *rs);
/* Waits for the backend's stream: cudaStreamSynchronize without NCCL; with it, polls the stream
 * and ncclCommGetAsyncError within $XPB_DP_TIMEOUT, aborting the NCCL communicator on an error
 * or at the limit. Failures name op `op` (CUX_NONE: `what`). */
xpb_status cux_nccl_wait(xpb_executable *exe, uint32_t op, const char *what);
/* Aborts the executable's NCCL communicator (a failure elsewhere on this rank: the others must
 * not wait for its collectives); nothing without one. */
void cux_nccl_abort(xpb_executable *exe);
/* True once an error aborted the executable's NCCL communicator. */
int cux_nccl_failed(const xpb_executable *exe);
/* destroy: finalises and destroys the NCCL communicator (aborts it when that fails). */
void cux_nccl_teardown(xpb_executable *exe);
/* "NCCL 2.28.9", "NCCL absent" or "built without NCCL" into out (loads NCCL at first use). */
void cux_nccl_versions(char *out, size_t size);

/* ---- run.c ---- */

xpb_status cux_run(xpb_executable *exe, uint32_t phase);
xpb_status cux_synchronize(xpb_executable *exe);
xpb_status cux_profile_read(xpb_executable *exe, xpb_op_profile *out, uint32_t capacity,
                            uint32_t *count);
xpb_status cux_memory_stats(xpb_executable *exe, xpb_memory_stats *out);

/* ---- transfer.c ---- */

xpb_status cux_write(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
xpb_status cux_read(xpb_executable *exe, uint32_t tensor, void *data, size_t bytes);
xpb_status cux_write_async(xpb_executable *exe, uint32_t tensor, const void *data, size_t bytes);
/* The staging buffers of streamed inputs (compile). */
xpb_status cux_prepare_streaming(xpb_executable *exe);
void cux_free_streaming(xpb_executable *exe);

#endif
