/* ALL_REDUCE over NCCL (coll.h loads the library): the NCCL communicator of an executable, its
 * bootstrap over the host's communicator, the collective steps, the bounded waits and the
 * teardown.
 *
 * Bootstrap (compile, after every local resource exists, so that the likely failures happen
 * before any collective): rank 0 creates the unique id (ncclGetUniqueId), the host's
 * communicator broadcasts it (comm->broadcast), every rank creates its NCCL communicator on its
 * device (ncclCommInitRankConfig, non-blocking, when NCCL has it: 2.14; else ncclCommInitRank),
 * and the ranks agree through the host's communicator that every one of them succeeded (a rank
 * that failed stops, and the host fails the agreement on the others), before the warm-up runs
 * the first collective.
 *
 * Failures: every NCCL call that returns ncclInProgress (a non-blocking communicator) is waited
 * for with ncclCommGetAsyncError, as NCCL documents, before the next call; waits for the stream
 * while collectives are in flight poll cudaStreamQuery and ncclCommGetAsyncError instead of
 * blocking in cudaStreamSynchronize. An error, or a wait longer than $XPB_DP_TIMEOUT seconds
 * (coll.h: another rank stopped or hangs), aborts the NCCL communicator (ncclCommAbort ends the
 * collectives still running on the device, so nothing waits forever) and becomes the status,
 * with a message naming the op and its layer, the rank and NCCL's words. An aborted executable
 * refuses to run again. destroy finalises the communicator (ncclCommFinalize, waited for within
 * the limit) and destroys it, or aborts it when that fails. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "glue/arena.h"
#include "glue/log.h"
#include "glue/nccl.h"
#include "glue/status.h"
#include "plan/coll.h"
#include "plan/plan_error.h"

#ifdef XPB_CUDA_HAVE_NCCL
#include <nccl.h>
/* coll.h restates these so that it needs no NCCL header. */
_Static_assert(sizeof(ncclUniqueId) == sizeof(cux_nccl_id), "ncclUniqueId");
_Static_assert((int)ncclSuccess == (int)CUX_NCCL_SUCCESS, "ncclSuccess");
_Static_assert((int)ncclInProgress == (int)CUX_NCCL_IN_PROGRESS, "ncclInProgress");
_Static_assert((int)ncclFloat32 == (int)CUX_NCCL_FLOAT32, "ncclFloat32");
_Static_assert((int)ncclAvg == (int)CUX_NCCL_AVG, "ncclAvg");
#endif

/* What settle() returns when the limit passed. */
#define CUX_NCCL_TIMED_OUT (-1)

struct cux_nccl {
    const cux_nccl_lib *lib; /* process-wide (coll_lib.c) */
    void *comm;              /* ncclComm_t; NULL once aborted or destroyed */
    uint32_t rank, ranks;
    int in_group; /* between ncclGroupStart and ncclGroupEnd */
    int failed;   /* an error aborted the communicator */
    double timeout_s;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits while NCCL says ncclInProgress (non-blocking communicator): the final result of the call
 * that returned `r`, or CUX_NCCL_TIMED_OUT. */
static int settle(struct cux_nccl *n, int r)
{
    double start = now();
    while (r == CUX_NCCL_IN_PROGRESS) {
        int state = CUX_NCCL_SUCCESS;
        int q = n->comm ? n->lib->comm_get_async_error(n->comm, &state) : CUX_NCCL_SUCCESS;
        if (q != CUX_NCCL_SUCCESS)
            return q;
        r = state;
        if (r == CUX_NCCL_IN_PROGRESS && n->timeout_s > 0 && now() - start > n->timeout_s)
            return CUX_NCCL_TIMED_OUT;
        if (r == CUX_NCCL_IN_PROGRESS)
            sched_yield();
    }
    return r;
}

/* Aborts the NCCL communicator (after a failure: ends what still runs on the device). */
static void abort_comm(struct cux_nccl *n)
{
    if (n->in_group) { /* close the group this thread opened; its result no longer matters */
        n->in_group = 0;
        (void)n->lib->group_end();
    }
    if (n->comm) {
        int r = n->lib->comm_abort(n->comm);
        if (r != CUX_NCCL_SUCCESS)
            cux_log(XPB_LOG_WARN, "ncclCommAbort: %s", n->lib->get_error_string(r));
    }
    n->comm = NULL;
    n->failed = 1;
}

/* The failure of `call` (result r) at op `op` (CUX_NONE: `stage`): message into exe->err, the
 * communicator aborted. */
static xpb_status fail(xpb_executable *exe, uint32_t op, const char *stage, const char *call, int r)
{
    struct cux_nccl *n = exe->nccl;
    char where[320], last[512] = "", text[160];
    if (op != CUX_NONE)
        cux_op_label(exe->prog, op, where, sizeof where);
    else
        snprintf(where, sizeof where, "%s", stage);
    if (r == CUX_NCCL_TIMED_OUT)
        snprintf(text, sizeof text,
                 "not done after %g s (XPB_DP_TIMEOUT): another rank stopped or hangs",
                 n->timeout_s);
    else
        snprintf(text, sizeof text, "%s", n->lib->get_error_string(r));
    if (n->comm && n->lib->get_last_error && r != CUX_NCCL_TIMED_OUT) {
        const char *l = n->lib->get_last_error(n->comm);
        snprintf(last, sizeof last, "%s", l ? l : "");
    }
    xpb_status st = cux_nccl_message(exe->err, CUX_ERR_SIZE, where, n->rank, n->ranks,
                                     exe->be->device, call, text, last);
    abort_comm(n);
    return st;
}

/* The first ALL_REDUCE op with a step (messages of the bootstrap name it). */
static uint32_t first_coll_op(const cux_plan *plan)
{
    for (uint32_t g = 0; g < plan->n_steps; g++)
        if (plan->steps[g].engine == CUX_ENG_COLL)
            return plan->steps[g].op;
    return CUX_NONE;
}

/* ncclCommInitRank[Config] on the current device; the result after any ncclInProgress. */
static int init_comm(struct cux_nccl *n, const cux_nccl_id *id)
{
    int r;
#ifdef XPB_CUDA_HAVE_NCCL
    if (n->lib->comm_init_rank_config) {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0; /* every wait is ours, bounded */
        r = n->lib->comm_init_rank_config(&n->comm, (int)n->ranks, *id, (int)n->rank, &config);
        return settle(n, r);
    }
#endif
    r = n->lib->comm_init_rank(&n->comm, (int)n->ranks, *id, (int)n->rank);
    return settle(n, r);
}

xpb_status cux_nccl_setup(xpb_executable *exe, const xpb_communicator *comm)
{
    if (exe->plan->n_coll == 0)
        return XPB_OK; /* one rank, or no ALL_REDUCE: no NCCL at all */
    uint32_t op = first_coll_op(exe->plan);
    char where[320];
    cux_op_label(exe->prog, op, where, sizeof where);
    if (!comm || !XPB_HAS_MEMBER(comm, xpb_communicator, last_error) || !comm->broadcast ||
        !comm->allreduce_sum_f32 || !comm->last_error)
        return cux_error_msg(exe->err, XPB_INVALID_ARGUMENT,
                             "%s: the communicator lacks broadcast, allreduce_sum_f32 or "
                             "last_error, which the NCCL bootstrap needs",
                             where);
    const cux_nccl_lib *lib = NULL;
    char why[768];
    if (cux_nccl_get(&lib, why, sizeof why) != XPB_OK)
        return cux_error_msg(exe->err, XPB_UNSUPPORTED, "%s: rank %u of %u: %s", where, comm->rank,
                             comm->size, why);
    struct cux_nccl *n = calloc(1, sizeof *n);
    if (!n)
        return cux_error_msg(exe->err, XPB_OUT_OF_MEMORY, "compile: out of memory");
    n->lib = lib;
    n->rank = comm->rank;
    n->ranks = comm->size;
    n->timeout_s = cux_nccl_timeout();
    exe->nccl = n;
    cux_nccl_id id;
    memset(&id, 0, sizeof id);
    int r;
    if (comm->rank == 0 && (r = lib->get_unique_id(&id)) != CUX_NCCL_SUCCESS)
        return fail(exe, op, "", "ncclGetUniqueId", r); /* the others' broadcast then fails */
    xpb_status st = comm->broadcast(comm->ctx, &id, sizeof id, 0);
    if (st != XPB_OK)
        return cux_error_msg(exe->err, st,
                             "%s: rank %u of %u: the broadcast of NCCL's unique id from rank 0 "
                             "failed: %s",
                             where, comm->rank, comm->size, comm->last_error(comm->ctx));
    if ((r = init_comm(n, &id)) != CUX_NCCL_SUCCESS)
        return fail(exe, op, "", "ncclCommInitRank", r);
    float failed_ranks = 0.0f; /* every rank that gets here succeeded */
    if ((st = comm->allreduce_sum_f32(comm->ctx, &failed_ranks, 1)) != XPB_OK) {
        abort_comm(n);
        return cux_error_msg(exe->err, st,
                             "%s: rank %u of %u: another rank could not set up NCCL: %s", where,
                             comm->rank, comm->size, comm->last_error(comm->ctx));
    }
    return XPB_OK;
}

xpb_status cux_nccl_enqueue(xpb_executable *exe, const cux_run_step *rs)
{
    const cux_step *s = rs->step;
    struct cux_nccl *n = exe->nccl;
    if (!n || !n->comm)
        return cux_error_msg(exe->err, XPB_DEVICE_ERROR,
                             "%s: the NCCL communicator was aborted after an earlier failure "
                             "(the message of that failure said why); compile again",
                             n ? "ALL_REDUCE" : "ALL_REDUCE without an NCCL communicator");
    const cux_nccl_lib *lib = n->lib;
    void *p = cux_ptr(exe, s->in[0].buf);
    size_t count = (size_t)xpb_tensor_numel(xpb_program_tensor(exe->prog, s->in[0].tensor));
    int r;
    if (s->flags & CUX_STEP_GROUP_BEGIN) {
        if ((r = settle(n, lib->group_start())) != CUX_NCCL_SUCCESS)
            return fail(exe, s->op, "", "ncclGroupStart", r);
        n->in_group = 1;
    }
    r = lib->all_reduce(p, p, count, CUX_NCCL_FLOAT32, CUX_NCCL_AVG, n->comm, exe->be->stream);
    if ((r = settle(n, r)) != CUX_NCCL_SUCCESS)
        return fail(exe, s->op, "", "ncclAllReduce", r);
    if (s->flags & CUX_STEP_GROUP_END) {
        n->in_group = 0;
        if ((r = settle(n, lib->group_end())) != CUX_NCCL_SUCCESS)
            return fail(exe, s->op, "", "ncclGroupEnd", r);
    }
    return XPB_OK;
}

xpb_status cux_nccl_wait(xpb_executable *exe, uint32_t op, const char *what)
{
    cudaStream_t stream = exe->be->stream;
    struct cux_nccl *n = exe->nccl;
    if (!n || !n->comm) {
        CUX_CUDA(exe, op, cudaStreamSynchronize(stream), what);
        return XPB_OK;
    }
    double start = now();
    for (;;) {
        cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaSuccess)
            return XPB_OK;
        if (e != cudaErrorNotReady) { /* the others may wait for this rank: end our part */
            xpb_status st = cux_cuda_error(exe->err, exe->prog, op, e, what);
            abort_comm(n);
            return st;
        }
        int state = CUX_NCCL_SUCCESS, q = n->lib->comm_get_async_error(n->comm, &state);
        if (q != CUX_NCCL_SUCCESS)
            return fail(exe, op, what, "ncclCommGetAsyncError", q);
        if (state != CUX_NCCL_SUCCESS && state != CUX_NCCL_IN_PROGRESS)
            return fail(exe, op, what, "an NCCL collective", state);
        if (n->timeout_s > 0 && now() - start > n->timeout_s)
            return fail(exe, op, what, "waiting for the NCCL collectives", CUX_NCCL_TIMED_OUT);
        sched_yield();
    }
}

void cux_nccl_abort(xpb_executable *exe)
{
    if (exe->nccl)
        abort_comm(exe->nccl);
}

int cux_nccl_failed(const xpb_executable *exe)
{
    return exe->nccl && exe->nccl->failed;
}

void cux_nccl_teardown(xpb_executable *exe)
{
    struct cux_nccl *n = exe->nccl;
    if (!n)
        return;
    if (n->comm) {
        /* ncclCommFinalize (2.14) flushes and waits for the other ranks (bounded here), after
         * which ncclCommDestroy only frees; a finalize that fails or does not end aborts */
        int (*finalize)(void *) = n->lib->comm_finalize;
        int r = finalize ? settle(n, finalize(n->comm)) : CUX_NCCL_SUCCESS;
        if (r != CUX_NCCL_SUCCESS) {
            cux_log(XPB_LOG_WARN, "destroy: ncclCommFinalize on rank %u: %s; aborting instead",
                    n->rank,
                    r == CUX_NCCL_TIMED_OUT ? "not done within XPB_DP_TIMEOUT"
                                            : n->lib->get_error_string(r));
            abort_comm(n);
        } else if ((r = n->lib->comm_destroy(n->comm)) != CUX_NCCL_SUCCESS) {
            cux_log(XPB_LOG_WARN, "destroy: ncclCommDestroy on rank %u: %s", n->rank,
                    n->lib->get_error_string(r));
        }
        n->comm = NULL;
    }
    free(n);
    exe->nccl = NULL;
}

void cux_nccl_versions(char *out, size_t size)
{
#ifdef XPB_CUDA_HAVE_NCCL
    const cux_nccl_lib *lib = NULL;
    char why[768];
    if (cux_nccl_get(&lib, why, sizeof why) == XPB_OK)
        snprintf(out, size, "NCCL %s", lib->version_text);
    else
        snprintf(out, size, "NCCL absent");
#else
    snprintf(out, size, "built without NCCL");
#endif
}
