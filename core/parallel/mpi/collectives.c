/* comm.h's collectives on the gradients' communicator: the sum of floats in host memory over
 * the ranks, in place (MPI_Iallreduce with MPI_IN_PLACE), a broadcast and a barrier. Each is
 * started non-blocking and waited for with the module's wait (wait.c), so that a rank blocked
 * in one hears when another rank stopped and asks it to join. A collective that completes
 * after another rank stopped fails (its data are not the sum), and so does any later one
 * until the host recovers: a rank whose backend call failed never starts another. Counts
 * above INT_MAX are split into several collectives. */
#include <limits.h>
#include <stdio.h>

#include "parallel/mpi/mpi_ctx.h"

/* Refuses a collective once another rank stopped or this one did. */
static xpb_status refuse_after_stop(xpbm_ctx *c)
{
    if (!c->stopped)
        c->failed_by_peer = 1;
    if (c->stopped)
        snprintf(c->err, sizeof c->err, "rank %d stopped: no collective until the run ends",
                 c->rank);
    else
        snprintf(c->err, sizeof c->err,
                 "rank %u stopped (its own error says why), so the ranks stop this run",
                 c->first_stopped);
    return XPB_DEVICE_ERROR;
}

/* Waits for collective `m` started as `req`, then says whether it really completed. */
static xpb_status finish(xpbm_ctx *c, MPI_Request *req, const xpbm_collective *m, const char *what)
{
    int rc = xpbm_wait(c, req, m, c->timeout_s, what, 0);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        snprintf(c->err, sizeof c->err, "%s: MPI error: %s", what, text);
        return XPB_DEVICE_ERROR;
    }
    c->seq++;
    if (c->peer_stopped || c->stopped)
        return refuse_after_stop(c);
    return XPB_OK;
}

/* One all-reduce of at most INT_MAX floats. */
static xpb_status allreduce_chunk(xpbm_ctx *c, float *data, int count)
{
    xpbm_collective m = {.seq = c->seq, .count = (uint64_t)count, .kind = XPBM_ALLREDUCE};
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, c->grad, &req);
    if (rc != MPI_SUCCESS) {
        snprintf(c->err, sizeof c->err, "MPI_Iallreduce of %d floats failed (MPI error %d)", count,
                 rc);
        return XPB_DEVICE_ERROR;
    }
    return finish(c, &req, &m, "all-reduce");
}

xpb_status xpbm_allreduce_sum_f32(void *ctx, float *data, size_t count)
{
    xpbm_ctx *c = ctx;
    if (c->stopped || c->peer_stopped)
        return refuse_after_stop(c);
    do {
        int n = count > (size_t)INT_MAX ? INT_MAX : (int)count;
        xpb_status st = allreduce_chunk(c, data, n);
        if (st != XPB_OK)
            return st;
        data += n;
        count -= (size_t)n;
    } while (count > 0);
    return XPB_OK;
}

xpb_status xpbm_broadcast(void *ctx, void *data, size_t bytes, uint32_t root)
{
    xpbm_ctx *c = ctx;
    if (c->stopped || c->peer_stopped)
        return refuse_after_stop(c);
    if (root >= (uint32_t)c->size) {
        snprintf(c->err, sizeof c->err, "broadcast from rank %u: there are %d ranks", root,
                 c->size);
        return XPB_INVALID_ARGUMENT;
    }
    char *p = data;
    do {
        int n = bytes > (size_t)INT_MAX ? INT_MAX : (int)bytes;
        xpbm_collective m = {
            .seq = c->seq, .count = (uint64_t)n, .kind = XPBM_BCAST, .root = (int32_t)root};
        MPI_Request req;
        if (MPI_Ibcast(p, n, MPI_BYTE, (int)root, c->grad, &req) != MPI_SUCCESS) {
            snprintf(c->err, sizeof c->err, "MPI_Ibcast of %d bytes failed", n);
            return XPB_DEVICE_ERROR;
        }
        xpb_status st = finish(c, &req, &m, "broadcast");
        if (st != XPB_OK)
            return st;
        p += n;
        bytes -= (size_t)n;
    } while (bytes > 0);
    return XPB_OK;
}

xpb_status xpbm_barrier(void *ctx)
{
    xpbm_ctx *c = ctx;
    if (c->stopped || c->peer_stopped)
        return refuse_after_stop(c);
    xpbm_collective m = {.seq = c->seq, .kind = XPBM_BARRIER};
    MPI_Request req;
    if (MPI_Ibarrier(c->grad, &req) != MPI_SUCCESS) {
        snprintf(c->err, sizeof c->err, "MPI_Ibarrier failed");
        return XPB_DEVICE_ERROR;
    }
    return finish(c, &req, &m, "barrier");
}

const char *xpbm_last_error(void *ctx)
{
    xpbm_ctx *c = ctx;
    return c->err[0] ? c->err : "no error";
}
