/* A run over several processes ("ranks"), launched by mpirun or srun: the communicator the
 * host hands to backends (xpubench/comm.h) and what the host itself needs of the other ranks.
 * The host never links MPI: xpb_parallel_open loads the MPI module (xpubench_mpi.so, built
 * when Open MPI is found) with dlopen, only when the launcher's environment says this process
 * is one rank of several (launch.h); a process started alone never touches it, so the same
 * binary behaves as if MPI did not exist. docs/distributed.md describes the whole design. */
#ifndef XPB_CORE_PARALLEL_H
#define XPB_CORE_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/comm.h>

#include "base/errmsg.h"
#include "parallel/launch.h"
#include "parallel/mpi_module.h"

typedef struct xpb_parallel {
    xpb_communicator comm;     /* every rank of the run; handed to backends in compile options */
    xpb_launch launch;         /* what the launcher's environment said */
    const xpb_mpi_module *mod; /* the module's table (static in the module) */
    char host[256];            /* this rank's host name */
    char module_path[4096];    /* the module that was loaded */
    double timeout_s;          /* how long an agreement waits for the slowest rank before the job
                                  is aborted (XPB_DP_TIMEOUT, seconds; 0: forever) */
} xpb_parallel;

/* The ranks this process is one of. *out is NULL (and XPB_OK) for a process started alone.
 * Otherwise the module is loaded and MPI initialised: *out is owned by the caller until
 * xpb_parallel_close, which finalises MPI. When the module cannot be found or loaded, or MPI
 * does not start, `err` says what is missing and how to get it (XPB_UNSUPPORTED, or the
 * module's status). */
xpb_status xpb_parallel_open(xpb_parallel **out, xpb_err *err);

/* Exchanges a last word with every rank (a rank that stopped answering ends the job, named),
 * finalises MPI and frees `p` (the module stays mapped: MPI keeps threads). NULL: nothing.
 * Every rank calls it once, at the end. */
void xpb_parallel_close(xpb_parallel *p);

/* XPB_OK when this build can run data-parallel (its MPI module is where the host looks);
 * otherwise XPB_UNSUPPORTED with what is missing and how to get it. Loads nothing. */
xpb_status xpb_parallel_available(xpb_err *err);

/* The version of the MPI library the module runs on, static; "" without a module. */
const char *xpb_parallel_library(const xpb_parallel *p);

#endif
