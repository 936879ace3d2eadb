/* xpubench public SDK: the communicator of a data-parallel run (ABI 1.2).
 *
 * When a scenario runs data-parallel over N processes (launched by mpirun or srun), every
 * process ("rank") compiles the same training program on its own device with its own shard of
 * the batch; the program averages the gradients across ranks with ALL_REDUCE ops (op set 2,
 * docs/ops.md) before the optimizer updates. The host owns the launcher and the transport: it
 * hands each backend a communicator through xpb_compile_options.comm. A backend on host memory
 * calls allreduce_sum_f32 for ALL_REDUCE; a backend with its own collective library (NCCL
 * between NVIDIA GPUs) bootstraps it with broadcast (e.g. rank 0's ncclUniqueId) and keeps
 * device buffers on the device. Backends never link MPI.
 *
 * Every function is collective: every rank calls it, in the same order, with the same sizes.
 * All of them are safe to call from the thread that calls the backend; none from two threads
 * at once. A failure returns a status and leaves a message for last_error; after a failure the
 * communicator may be unusable (the host ends the run on every rank). */
#ifndef XPUBENCH_COMM_H
#define XPUBENCH_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xpb_communicator {
    size_t struct_size;
    uint32_t rank;       /* this process, 0 .. size-1 */
    uint32_t size;       /* processes in the run (>= 1) */
    uint32_t local_rank; /* this process among those on the same host (device choice) */
    uint32_t local_size; /* processes on this host */
    const char *kind;    /* the transport, e.g. "mpi"; static */
    void *ctx;           /* pass back as the first argument of every function */

    /* Sums `count` floats in host memory across ranks, in place (every rank gets the sum). */
    xpb_status (*allreduce_sum_f32)(void *ctx, float *data, size_t count);
    /* Copies `bytes` from rank `root`'s `data` into every other rank's `data`. */
    xpb_status (*broadcast)(void *ctx, void *data, size_t bytes, uint32_t root);
    /* Returns when every rank has called it. */
    xpb_status (*barrier)(void *ctx);
    /* The message of the last failure; static or owned by the communicator, never NULL. */
    const char *(*last_error)(void *ctx);
} xpb_communicator;

#ifdef __cplusplus
}
#endif
#endif
