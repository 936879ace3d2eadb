/* The MPI module's state and the helpers its files share (see ../mpi_module.h). Private to the
 * module: only these files include mpi.h. */
#ifndef XPB_MPI_CTX_H
#define XPB_MPI_CTX_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <xpubench/comm.h>

/* Message tags on the control communicator: a rank stopped, a blocked rank asks a stopped one
 * to join its collective, "are you alive?" and "yes" (liveness.c). */
enum { XPBM_TAG_STOP = 101, XPBM_TAG_WAITING = 102, XPBM_TAG_PING = 103, XPBM_TAG_PONG = 104 };

/* How a wait behaves (xpbm_wait's flags). */
enum {
    XPBM_WAIT_QUIET = 1,   /* no STOP or WAITING message is read or served (recover, serving) */
    XPBM_WAIT_PATIENT = 2, /* the deadline moves with every PING heard: waiting for a rank that
                              works alone and says so (rank 0's one-rank baseline) */
};

/* Bytes of a host name as the ranks exchange them. */
#define XPBM_HOST_MAX 64

/* The kinds of collective on the gradients' communicator. */
enum { XPBM_ALLREDUCE = 1, XPBM_BCAST = 2, XPBM_BARRIER = 3 };

/* A collective on the gradients' communicator, as a blocked rank describes it to the ranks
 * that stopped so that they join it ("WAITING" message). */
typedef struct xpbm_collective {
    uint64_t seq;   /* its number since the episode began, the same on every rank */
    uint64_t count; /* floats (all-reduce) or bytes (broadcast) */
    int32_t kind;   /* XPBM_* */
    int32_t root;   /* broadcast */
} xpbm_collective;

/* A message being sent, kept until its send completes. */
typedef struct xpbm_sending {
    MPI_Request req;
    xpbm_collective msg;
} xpbm_sending;

typedef struct xpbm_ctx {
    MPI_Comm grad; /* comm.h's collectives (the backends') */
    MPI_Comm ctrl; /* the host's agreements and the fault messages */
    int rank, size;
    /* The fault episode (since init or the last recover). */
    uint64_t seq;           /* collectives completed (or served) on `grad` */
    int stopped;            /* this rank stopped: it told the others and serves */
    int peer_stopped;       /* another rank's STOP message arrived */
    uint32_t first_stopped; /* the first such rank */
    int failed_by_peer;     /* a collective of this rank failed because of it */
    uint8_t *stop_from;     /* per rank: its STOP message arrived */
    uint32_t *waiting_sent; /* per rank: WAITING messages sent to it */
    uint32_t *waiting_recv; /* per rank: WAITING messages received from it */
    xpbm_sending **sends;   /* STOP and WAITING sends in flight (each malloc'ed) */
    size_t n_sends, cap_sends;
    int32_t stop_payload; /* what a STOP message carries: the sender's rank */
    float *zeros;         /* what a serving rank contributes */
    size_t zeros_bytes;
    double timeout_s; /* how long a collective waits before the job is aborted
                         (XPB_DP_TIMEOUT, as the host's agreements; 0: forever) */
    char err[512];    /* last_error */
    /* Liveness (liveness.c), for the whole job, not per episode. */
    char (*hosts)[XPBM_HOST_MAX]; /* every rank's host name, exchanged at init */
    double *last_heard;           /* per rank: when its last PONG arrived (monotonic seconds) */
    double last_ping;             /* when the last PING from any rank arrived */
    double last_beat;             /* when this rank last sent PINGs while working alone */
} xpbm_ctx;

/* Waits for `req`. `in` is the collective on `grad` this rank waits in (NULL: a control
 * collective). Meanwhile it answers PINGs and, unless `flags` has XPBM_WAIT_QUIET, reads STOP
 * messages (and, in a collective, asks each rank that stopped to join it) and, when this rank
 * stopped, serves WAITING messages. timeout_s > 0: after that long without completing (with
 * XPBM_WAIT_PATIENT: without completing or a PING heard) the job ends, naming `what` and the
 * ranks that no longer answer (xpbm_end_silent). MPI_SUCCESS or an MPI error code. */
int xpbm_wait(xpbm_ctx *c, MPI_Request *req, const xpbm_collective *in, double timeout_s,
              const char *what, unsigned flags);

/* Monotonic seconds. */
double xpbm_now(void);

/* Liveness (liveness.c). Answers every PING that arrived and notes every PONG. */
int xpbm_liveness(xpbm_ctx *c);
/* This rank waited `waited` seconds at `what`: asks every rank whether it is alive, gives them
 * a moment to answer, names those that did not (rank and host) on stderr and ends the job
 * (MPI_Abort: mpirun ends every rank). Does not return. */
void xpbm_end_silent(xpbm_ctx *c, const char *what, double waited);
/* While this rank works alone and the others wait for it (host: xpb_parallel_beat; `first`
 * when it begins): PINGs them at most once a second; ends the job as xpbm_end_silent when one
 * has not answered for the timeout. */
void xpbm_beat(void *ctx, int first, const char *what);
/* Exchanges the host names (blocking; at init). MPI_SUCCESS or an MPI error code. */
int xpbm_share_hosts(xpbm_ctx *c);
/* A blocking MPI call that has no deadline of its own (MPI_Init, MPI_Finalize): after
 * `seconds` (> 0) this process writes `what` to stderr and exits with status 1, which makes
 * mpirun end every rank. xpbm_watchdog(0, NULL) disarms it. */
void xpbm_watchdog(double seconds, const char *what);

/* Starts a send of `msg` (WAITING) or of the STOP payload (msg NULL) to `dest`. */
int xpbm_send(xpbm_ctx *c, int dest, int tag, const xpbm_collective *msg);

/* comm.h's collectives (collectives.c), for the table init fills. */
xpb_status xpbm_allreduce_sum_f32(void *ctx, float *data, size_t count);
xpb_status xpbm_broadcast(void *ctx, void *data, size_t bytes, uint32_t root);
xpb_status xpbm_barrier(void *ctx);
const char *xpbm_last_error(void *ctx);

/* The module's fault handling (faults.c). */
void xpbm_stop(void *ctx);
int xpbm_peer_stopped(void *ctx, uint32_t *who);
xpb_status xpbm_recover(void *ctx, const uint8_t *stopped);

#endif
