/* The MPI module's entry point (see ../mpi_module.h): MPI's initialisation with the two
 * communicators of the module (duplicates of MPI_COMM_WORLD: the gradients' and the host's
 * control) and the exchange of host names, the host's control collective, the library's
 * version, abort and finalisation, and the table the host looks up. The only symbol the shared
 * object exports. Initialisation and finalisation block inside MPI, so they run under the
 * watchdog (liveness.c): a rank that never starts or stops answering then ends the job too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/mpi_module.h"
#include "parallel/mpi/mpi_ctx.h"

#if defined(__GNUC__)
#define XPBM_EXPORT __attribute__((visibility("default")))
#else
#define XPBM_EXPORT
#endif

static char library_version[MPI_MAX_LIBRARY_VERSION_STRING];

/* This process's rank among those on its host, and their number. */
static int local_layout(xpbm_ctx *c, uint32_t *local_rank, uint32_t *local_size)
{
    MPI_Comm node;
    int lr = 0, ls = 1;
    int rc =
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(node, &lr);
    MPI_Comm_size(node, &ls);
    MPI_Comm_free(&node);
    *local_rank = (uint32_t)lr;
    *local_size = (uint32_t)ls;
    return MPI_SUCCESS;
}

/* XPB_DP_TIMEOUT, seconds (default 900; 0: wait forever; not a number: the default). */
static double dp_timeout(void)
{
    const char *text = getenv("XPB_DP_TIMEOUT");
    char *end = NULL;
    double v = text && *text ? strtod(text, &end) : 900.0;
    return text && *text && (*end || v < 0) ? 900.0 : v;
}

static xpbm_ctx *new_ctx(int size)
{
    xpbm_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->stop_from = calloc((size_t)size, 1);
    c->waiting_sent = calloc((size_t)size, sizeof *c->waiting_sent);
    c->waiting_recv = calloc((size_t)size, sizeof *c->waiting_recv);
    if (!c->stop_from || !c->waiting_sent || !c->waiting_recv) {
        free(c->stop_from);
        free(c->waiting_sent);
        free(c->waiting_recv);
        free(c);
        return NULL;
    }
    return c;
}

static xpb_status module_init(xpb_communicator *comm, char *msg, size_t size)
{
    int provided = 0, rank = 0, n = 0;
    /* Every rank must get the same sum, bit for bit, or the replicas drift apart step after
     * step. Open MPI's non-blocking all-reduce picks its algorithm by size, and recursive
     * doubling sums in a different order on different ranks; the ring reduces each element in
     * one place and passes the result on. A user's own choice (the same variable) wins. */
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "ring", 0);
    double timeout = dp_timeout();
    xpbm_watchdog(timeout, "starting MPI (MPI_Init and the exchange of host names)");
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        xpbm_watchdog(0, NULL);
        snprintf(msg, size, "MPI_Init_thread failed");
        return XPB_DEVICE_ERROR;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    xpbm_ctx *c = new_ctx(n);
    if (!c) {
        xpbm_watchdog(0, NULL);
        snprintf(msg, size, "out of memory");
        return XPB_OUT_OF_MEMORY;
    }
    c->rank = rank;
    c->size = n;
    c->stop_payload = rank;
    c->timeout_s = timeout;
    memset(comm, 0, sizeof *comm);
    comm->struct_size = sizeof *comm;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->grad);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->ctrl);
    if (rc == MPI_SUCCESS)
        rc = local_layout(c, &comm->local_rank, &comm->local_size);
    if (rc == MPI_SUCCESS)
        rc = xpbm_share_hosts(c);
    xpbm_watchdog(0, NULL);
    if (rc != MPI_SUCCESS) {
        snprintf(msg, size,
                 "MPI_Comm_dup, MPI_Comm_split_type or the exchange of host names "
                 "failed");
        return XPB_DEVICE_ERROR;
    }
    comm->rank = (uint32_t)rank;
    comm->size = (uint32_t)n;
    comm->kind = "mpi";
    comm->ctx = c;
    comm->allreduce_sum_f32 = xpbm_allreduce_sum_f32;
    comm->broadcast = xpbm_broadcast;
    comm->barrier = xpbm_barrier;
    comm->last_error = xpbm_last_error;
    return XPB_OK;
}

static xpb_status module_allgather(void *ctx, const void *send, void *recv, size_t bytes,
                                   double timeout_s, const char *what, int patient)
{
    xpbm_ctx *c = ctx;
    MPI_Request req;
    int rc = MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, c->ctrl, &req);
    if (rc == MPI_SUCCESS)
        rc = xpbm_wait(c, &req, NULL, timeout_s, what, patient ? XPBM_WAIT_PATIENT : 0);
    if (rc != MPI_SUCCESS) {
        snprintf(c->err, sizeof c->err, "%s: MPI_Iallgather failed (MPI error %d)", what, rc);
        return XPB_DEVICE_ERROR;
    }
    return XPB_OK;
}

static const char *module_library(void)
{
    if (!library_version[0]) {
        int len = 0;
        MPI_Get_library_version(library_version, &len);
        library_version[strcspn(library_version, "\r\n")] = '\0'; /* the first line */
    }
    return library_version;
}

static void module_abort(void *ctx, int code)
{
    (void)ctx;
    MPI_Abort(MPI_COMM_WORLD, code);
}

static void module_finalize(void *ctx)
{
    xpbm_ctx *c = ctx;
    char what[96];
    snprintf(what, sizeof what, "rank %d: finishing MPI (MPI_Finalize)", c ? c->rank : -1);
    xpbm_watchdog(c ? c->timeout_s : 0, what);
    if (c) {
        MPI_Comm_free(&c->grad);
        MPI_Comm_free(&c->ctrl);
    }
    MPI_Finalize();
    xpbm_watchdog(0, NULL);
    if (!c)
        return;
    for (size_t i = 0; i < c->n_sends; i++)
        free(c->sends[i]);
    free(c->sends);
    free(c->zeros);
    free(c->stop_from);
    free(c->waiting_sent);
    free(c->waiting_recv);
    free(c->hosts);
    free(c->last_heard);
    free(c);
}

static const xpb_mpi_module module = {
    .version = XPB_MPI_MODULE_VERSION,
    .init = module_init,
    .allgather = module_allgather,
    .stop = xpbm_stop,
    .peer_stopped = xpbm_peer_stopped,
    .recover = xpbm_recover,
    .beat = xpbm_beat,
    .library = module_library,
    .abort = module_abort,
    .finalize = module_finalize,
};

/* The table, static. */
XPBM_EXPORT const xpb_mpi_module *xpb_mpi_module_query(void)
{
    return &module;
}
