/* "dp_fault": the reference backend (loaded from WRAPPED_INNER) that fails on one rank of a
 * data-parallel run on purpose, so that tests can prove every rank ends the run, names the rank
 * and the cause, and goes on with the next run. Every call goes to cpu_ref, except where
 * $XPB_DP_FAULT ("<rank>:<what>[:<n>]") says:
 *   <rank>:open       open() fails with XPB_NO_DEVICE on that rank (a bad device)
 *   <rank>:compile    compile() fails with XPB_OUT_OF_MEMORY on that rank
 *   <rank>:step:<n>   the n-th run() (counted from 1, warm-up included) fails with
 *                     XPB_DEVICE_ERROR before it runs anything: the other ranks are then
 *                     waiting in the step's first ALL_REDUCE
 *   <rank>:kill:<n>   the n-th run() kills the process with SIGKILL (a rank that dies); when
 *                     $XPB_DP_FAULT_STAMP names a file, the time of the kill (CLOCK_REALTIME,
 *                     seconds) is written there first
 * The rank is the communicator's (compile options), or for open() the launcher's
 * (OMPI_COMM_WORLD_RANK). Without XPB_DP_FAULT it is exactly cpu_ref. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wrapped_backend.h"

static char open_err[256];    /* the injected failure of open() */
static char compile_err[256]; /* the injected failure of compile() */

/* The fault for `rank`: its kind into `what` and its step into *n; 0 when there is none. */
static int fault_for(int rank, char *what, size_t size, unsigned long *n)
{
    const char *spec = getenv("XPB_DP_FAULT");
    int r = -1;
    char kind[16] = "";
    *n = 0;
    if (!spec || sscanf(spec, "%d:%15[a-z]:%lu", &r, kind, n) < 2 || r != rank)
        return 0;
    snprintf(what, size, "%s", kind);
    return 1;
}

static xpb_status f_open(xpb_backend **out, uint32_t device)
{
    const char *env = getenv("OMPI_COMM_WORLD_RANK");
    char what[16];
    unsigned long n;
    int rank = env ? atoi(env) : -1;
    if (fault_for(rank, what, sizeof what, &n) && strcmp(what, "open") == 0) {
        *out = NULL;
        snprintf(open_err, sizeof open_err,
                 "dp_fault: device %u is broken on rank %d (injected fault)", device, rank);
        return XPB_NO_DEVICE;
    }
    open_err[0] = '\0';
    return inner->open(out, device);
}

static const char *f_last_error(const xpb_backend *be)
{
    if (!be && open_err[0])
        return open_err;
    return be && compile_err[0] ? compile_err : inner->last_error(be);
}

static xpb_status f_compile(xpb_executable **out, xpb_backend *be, const xpb_program *p,
                            const xpb_compile_options *o)
{
    const xpb_communicator *comm = XPB_MEMBER_OR(o, xpb_compile_options, comm, NULL);
    int rank = comm ? (int)comm->rank : -1;
    char what[16];
    unsigned long n;
    *out = NULL;
    if (fault_for(rank, what, sizeof what, &n) && strcmp(what, "compile") == 0) {
        snprintf(compile_err, sizeof compile_err,
                 "dp_fault: out of memory compiling on rank %d (injected fault)", rank);
        return XPB_OUT_OF_MEMORY;
    }
    compile_err[0] = '\0';
    return wrapped_compile(out, be, p, o);
}

static xpb_status f_run(xpb_executable *exe, uint32_t phase)
{
    char what[16];
    unsigned long n;
    exe->runs++;
    if (fault_for(exe->rank, what, sizeof what, &n) && n == exe->runs) {
        if (strcmp(what, "kill") == 0) {
            const char *stamp = getenv("XPB_DP_FAULT_STAMP");
            FILE *f = stamp ? fopen(stamp, "w") : NULL;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            if (f) {
                fprintf(f, "%.6f\n", (double)ts.tv_sec + ts.tv_nsec * 1e-9);
                fclose(f);
            }
            raise(SIGKILL);
        }
        if (strcmp(what, "step") == 0) {
            snprintf(exe->err, sizeof exe->err,
                     "dp_fault: device error in run %lu on rank %d (injected fault)", n, exe->rank);
            return XPB_DEVICE_ERROR;
        }
    }
    exe->err[0] = '\0';
    return inner->run(exe->inner, phase);
}

static const xpb_plugin_descriptor descriptor = {
    .struct_size = sizeof(xpb_plugin_descriptor),
    .abi_major = XPB_ABI_MAJOR,
    .abi_minor = XPB_ABI_MINOR,
    .kind = XPB_PLUGIN_BACKEND,
    .name = "dp_fault",
    .version = "1.0.0",
    .description = "cpu_ref failing on one rank on demand (tests only)",
    .api = &wrapped_api,
    .opset = XPB_OPSET_VERSION,
};

XPB_PLUGIN_QUERY
{
    wrapped_api.open = f_open;
    wrapped_api.last_error = f_last_error;
    wrapped_api.compile = f_compile;
    wrapped_api.run = f_run;
    return wrapped_query(out, &descriptor, host_major, host_minor, host);
}
