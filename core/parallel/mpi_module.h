/* The interface between the host and its MPI module (core/parallel/mpi/, built into
 * xpubench_mpi.so only when Open MPI is found). The host never links MPI: it loads the module
 * with dlopen when it was launched with more than one rank (parallel.c) and reaches it only
 * through this table. Private to xpubench: host and module are built together, so the table
 * has a version, not ABI rules.
 *
 * The module keeps two communicators: the gradients' (the collectives of comm.h, which
 * backends call) and the host's control communicator (agreements, fault messages). Every
 * wait is non-blocking underneath, so a rank blocked in a collective still hears that another
 * rank stopped, and a rank that stopped still completes, with zeros, the collectives the
 * others are blocked in ("serving"): a failure never leaves a rank waiting forever and never
 * leaves a collective half done (docs/distributed.md, "Faults"). Every wait also answers the
 * other ranks' "are you alive?" and has a deadline (XPB_DP_TIMEOUT): past it, the job ends with
 * a message naming the ranks that no longer answer and their hosts. */
#ifndef XPB_CORE_MPI_MODULE_H
#define XPB_CORE_MPI_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/comm.h>

#define XPB_MPI_MODULE_VERSION 2
/* The one symbol the module exports: const xpb_mpi_module *xpb_mpi_module_query(void). */
#define XPB_MPI_MODULE_SYMBOL "xpb_mpi_module_query"

typedef struct xpb_mpi_module {
    uint32_t version; /* XPB_MPI_MODULE_VERSION */
    /* Initialises MPI (threads funneled to the calling thread), exchanges the ranks' host names
     * and fills *comm: rank, size, local rank and size (processes sharing this host), kind
     * "mpi", ctx, and comm.h's collectives. On failure `msg` (size bytes) says why. Once per
     * process. A rank that does not start within XPB_DP_TIMEOUT ends the job. */
    xpb_status (*init)(xpb_communicator *comm, char *msg, size_t size);
    /* Every rank's `bytes` bytes of `send` into `recv` (size x bytes, rank order), on the
     * control communicator. While it waits a stopped rank serves the collectives others are
     * blocked in. timeout_s > 0: after that long the job is aborted with a message naming
     * `what` and the ranks that do not answer with their hosts (MPI_Abort: mpirun ends every
     * rank); `patient`: that long after the last beat of a rank working alone. */
    xpb_status (*allgather)(void *ctx, const void *send, void *recv, size_t bytes, double timeout_s,
                            const char *what, int patient);
    /* This rank stopped (it failed, or a collective failed because another rank stopped): tells
     * every other rank, once until recover, and from then on serves. */
    void (*stop)(void *ctx);
    /* Whether a collective of this rank failed because another rank stopped (that rank's
     * number in *who when not NULL). */
    int (*peer_stopped)(void *ctx, uint32_t *who);
    /* After every rank agreed that some stopped (each passes who stopped, per rank): consumes
     * the remaining fault messages and starts a fresh episode. Collective. */
    xpb_status (*recover)(void *ctx, const uint8_t *stopped);
    /* While this rank works alone and the others wait for it patiently (`first` when it
     * begins): tells them it is alive (at most once a second) and ends the job, naming the rank
     * and host, when one of them has not answered for XPB_DP_TIMEOUT (`what` names the work). */
    void (*beat)(void *ctx, int first, const char *what);
    /* The library's version ("Open MPI v4.1.4, ..."), static. */
    const char *(*library)(void);
    /* Ends the job: MPI_Abort on every rank (mpirun kills them). */
    void (*abort)(void *ctx, int code);
    /* MPI_Finalize and frees the context. */
    void (*finalize)(void *ctx);
} xpb_mpi_module;

typedef const xpb_mpi_module *(*xpb_mpi_module_query_fn)(void);

#endif
