/* What the MPI module does when a rank stops (see ../mpi_module.h): the stopping rank sends a
 * STOP message to every other rank and from then on serves; a rank blocked in a collective
 * that hears of it sends the stopped rank a WAITING message describing the collective, and the
 * stopped rank joins it with zeros (wait.c). After the host's agreement every rank knows who
 * stopped; recover then receives every fault message still on its way (so that none is read
 * in a later run), waits for its own sends and starts a new episode. Its waits have the
 * deadline of every other (a rank that hangs meanwhile ends the job, named) and are quiet:
 * they count the fault messages themselves, so the wait must not read them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/mpi/mpi_ctx.h"

void xpbm_stop(void *ctx)
{
    xpbm_ctx *c = ctx;
    if (c->stopped)
        return;
    c->stopped = 1;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank && xpbm_send(c, r, XPBM_TAG_STOP, NULL) != MPI_SUCCESS) {
            fprintf(stderr,
                    "xpubench: rank %d: cannot tell rank %d that it stopped; aborting "
                    "the job\n",
                    c->rank, r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int xpbm_peer_stopped(void *ctx, uint32_t *who)
{
    xpbm_ctx *c = ctx;
    if (c->failed_by_peer && who)
        *who = c->first_stopped;
    return c->failed_by_peer;
}

#define RECOVERING "recovering from a stopped rank"

/* Waits for `req` within the deadline, reading no fault message. */
static int wait_quietly(xpbm_ctx *c, MPI_Request *req, int rc)
{
    return rc == MPI_SUCCESS ? xpbm_wait(c, req, NULL, c->timeout_s, RECOVERING, XPBM_WAIT_QUIET)
                             : rc;
}

/* Receives the messages of `tag` from `src` that are still on their way. */
static int drain(xpbm_ctx *c, int src, int tag, uint32_t count)
{
    for (uint32_t k = 0; k < count; k++) {
        xpbm_collective m;
        int32_t who;
        MPI_Request req;
        int rc = tag == XPBM_TAG_STOP
                     ? MPI_Irecv(&who, 1, MPI_INT32_T, src, tag, c->ctrl, &req)
                     : MPI_Irecv(&m, (int)sizeof m, MPI_BYTE, src, tag, c->ctrl, &req);
        if ((rc = wait_quietly(c, &req, rc)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Every WAITING message sent to this rank that it has not read yet. */
static int drain_waiting(xpbm_ctx *c)
{
    uint32_t *sent = malloc((size_t)c->size * (size_t)c->size * sizeof *sent);
    if (!sent)
        return MPI_ERR_NO_MEM;
    MPI_Request req;
    int rc = wait_quietly(c, &req,
                          MPI_Iallgather(c->waiting_sent, c->size, MPI_UINT32_T, sent, c->size,
                                         MPI_UINT32_T, c->ctrl, &req));
    for (int r = 0; r < c->size && rc == MPI_SUCCESS; r++) {
        uint32_t to_me = sent[(size_t)r * (size_t)c->size + (size_t)c->rank];
        if (to_me > c->waiting_recv[r])
            rc = drain(c, r, XPBM_TAG_WAITING, to_me - c->waiting_recv[r]);
    }
    free(sent);
    return rc;
}

xpb_status xpbm_recover(void *ctx, const uint8_t *stopped)
{
    xpbm_ctx *c = ctx;
    int rc = MPI_SUCCESS;
    for (int r = 0; r < c->size && rc == MPI_SUCCESS; r++)
        if (r != c->rank && stopped[r] && !c->stop_from[r])
            rc = drain(c, r, XPBM_TAG_STOP, 1);
    if (rc == MPI_SUCCESS)
        rc = drain_waiting(c);
    for (size_t i = 0; i < c->n_sends; i++) {
        if (rc == MPI_SUCCESS)
            rc = wait_quietly(c, &c->sends[i]->req, MPI_SUCCESS);
        free(c->sends[i]);
    }
    c->n_sends = 0;
    MPI_Request barrier;
    if (rc == MPI_SUCCESS)
        rc = wait_quietly(c, &barrier, MPI_Ibarrier(c->ctrl, &barrier));
    if (rc != MPI_SUCCESS) {
        snprintf(c->err, sizeof c->err, RECOVERING ": MPI error %d", rc);
        return XPB_DEVICE_ERROR;
    }
    c->seq = 0;
    c->stopped = c->peer_stopped = c->failed_by_peer = 0;
    c->first_stopped = 0;
    memset(c->stop_from, 0, (size_t)c->size);
    memset(c->waiting_sent, 0, (size_t)c->size * sizeof *c->waiting_sent);
    memset(c->waiting_recv, 0, (size_t)c->size * sizeof *c->waiting_recv);
    c->err[0] = '\0';
    return XPB_OK;
}
