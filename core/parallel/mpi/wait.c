/* Waiting in the MPI module (see mpi_ctx.h): every wait tests a non-blocking request and, in
 * between, answers the others' PINGs (liveness.c) and handles the fault messages of the
 * control communicator, so that no rank waits forever for one that stopped or hangs: past its
 * deadline a wait ends the job naming the ranks that no longer answer. Waits in a collective on
 * the gradients' communicator only yield the CPU between tests (a collective progresses only
 * inside MPI calls, and its peers are computing towards it); waits on the control communicator
 * sleep after a few milliseconds, so that ranks waiting for another (rank 0's one-rank
 * baseline run) leave the machine to it. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parallel/mpi/mpi_ctx.h"

int xpbm_send(xpbm_ctx *c, int dest, int tag, const xpbm_collective *msg)
{
    if (c->n_sends == c->cap_sends) {
        size_t cap = c->cap_sends ? 2 * c->cap_sends : 16;
        xpbm_sending **grown = realloc(c->sends, cap * sizeof *grown);
        if (!grown)
            return MPI_ERR_NO_MEM;
        c->sends = grown;
        c->cap_sends = cap;
    }
    /* One allocation per send: MPI reads the message until the send completes. */
    xpbm_sending *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    int rc;
    if (msg) {
        s->msg = *msg;
        rc = MPI_Isend(&s->msg, (int)sizeof s->msg, MPI_BYTE, dest, tag, c->ctrl, &s->req);
    } else {
        rc = MPI_Isend(&c->stop_payload, 1, MPI_INT32_T, dest, tag, c->ctrl, &s->req);
    }
    if (rc != MPI_SUCCESS) {
        free(s);
        return rc;
    }
    c->sends[c->n_sends++] = s;
    return MPI_SUCCESS;
}

/* Joins, with zeros, the collective `m` that another rank waits in (this rank stopped). With
 * the same non-blocking call the others made: MPI matches a non-blocking collective only with
 * non-blocking ones. */
static int serve(xpbm_ctx *c, const xpbm_collective *m)
{
    size_t bytes = m->kind == XPBM_ALLREDUCE ? (size_t)m->count * sizeof(float) : m->count;
    if (bytes > c->zeros_bytes) {
        float *grown = realloc(c->zeros, bytes);
        if (!grown)
            return MPI_ERR_NO_MEM;
        c->zeros = grown;
        c->zeros_bytes = bytes;
    }
    memset(c->zeros, 0, bytes);
    c->seq++;
    MPI_Request req;
    int rc;
    if (m->kind == XPBM_ALLREDUCE)
        rc = MPI_Iallreduce(MPI_IN_PLACE, c->zeros, (int)m->count, MPI_FLOAT, MPI_SUM, c->grad,
                            &req);
    else if (m->kind == XPBM_BCAST)
        rc = MPI_Ibcast(c->zeros, (int)m->count, MPI_BYTE, m->root, c->grad, &req);
    else
        rc = MPI_Ibarrier(c->grad, &req);
    return rc == MPI_SUCCESS ? xpbm_wait(c, &req, NULL, c->timeout_s,
                                         "a collective another rank waits in", XPBM_WAIT_QUIET)
                             : rc;
}

/* Reads every STOP message that arrived; in collective `in`, asks its sender to join. */
static int read_stops(xpbm_ctx *c, const xpbm_collective *in)
{
    for (;;) {
        int flag = 0, rc;
        MPI_Status status;
        if ((rc = MPI_Iprobe(MPI_ANY_SOURCE, XPBM_TAG_STOP, c->ctrl, &flag, &status)) || !flag)
            return rc;
        int32_t who;
        if ((rc = MPI_Recv(&who, 1, MPI_INT32_T, status.MPI_SOURCE, XPBM_TAG_STOP, c->ctrl,
                           MPI_STATUS_IGNORE)))
            return rc;
        int src = status.MPI_SOURCE;
        c->stop_from[src] = 1;
        if (!c->peer_stopped) {
            c->peer_stopped = 1;
            c->first_stopped = (uint32_t)src;
        }
        if (in) {
            c->waiting_sent[src]++;
            if ((rc = xpbm_send(c, src, XPBM_TAG_WAITING, in)))
                return rc;
        }
    }
}

/* Serves every WAITING message that arrived (this rank stopped). */
static int serve_waiting(xpbm_ctx *c)
{
    for (;;) {
        int flag = 0, rc;
        MPI_Status status;
        if ((rc = MPI_Iprobe(MPI_ANY_SOURCE, XPBM_TAG_WAITING, c->ctrl, &flag, &status)) || !flag)
            return rc;
        xpbm_collective m;
        if ((rc = MPI_Recv(&m, (int)sizeof m, MPI_BYTE, status.MPI_SOURCE, XPBM_TAG_WAITING,
                           c->ctrl, MPI_STATUS_IGNORE)))
            return rc;
        c->waiting_recv[status.MPI_SOURCE]++;
        /* Several ranks ask for the same collective: join it once, in order. */
        if (m.seq == c->seq && (rc = serve(c, &m)))
            return rc;
    }
}

/* Gives the CPU away while waiting: a yield, then (outside collectives) growing sleeps. */
static void pause_a_while(double waited, int in_collective)
{
    if (in_collective || waited < 0.005) {
        sched_yield();
        return;
    }
    long ns = waited < 0.1 ? 100000L : 1000000L;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

int xpbm_wait(xpbm_ctx *c, MPI_Request *req, const xpbm_collective *in, double timeout_s,
              const char *what, unsigned flags)
{
    double start = xpbm_now();
    for (;;) {
        int done = 0, rc;
        if ((rc = MPI_Test(req, &done, MPI_STATUS_IGNORE)))
            return rc;
        if ((rc = xpbm_liveness(c)))
            return rc;
        if (!(flags & XPBM_WAIT_QUIET) && (rc = read_stops(c, in)))
            return rc;
        if (!(flags & XPBM_WAIT_QUIET) && c->stopped && (rc = serve_waiting(c)))
            return rc;
        if (done)
            return MPI_SUCCESS;
        double t = xpbm_now(), waited = t - start;
        /* a patient wait counts from the last word of the rank it waits for */
        double since = (flags & XPBM_WAIT_PATIENT) && c->last_ping > start ? c->last_ping : start;
        if (timeout_s > 0 && t - since > timeout_s)
            xpbm_end_silent(c, what, t - since);
        pause_a_while(waited, in != NULL);
    }
}
