/* What other processes took of a run's CPUs during its timed steps (machine/host_usage.h does
 * the counting): the CPUs are the process's affinity set and the threads the backend said it
 * uses; over several ranks, the union of this host's ranks' sets and the sum of their threads,
 * since a run's peers are the run, not its neighbours. */
#ifndef XPB_CORE_RUN_INTERFERENCE_H
#define XPB_CORE_RUN_INTERFERENCE_H

#include <stdint.h>

#include "base/errmsg.h"
#include "machine/host_usage.h"
#include "parallel/parallel.h"

/* Into *out: what others took between `before` and `after` (samples of this process) of the
 * CPUs this process may use (`cpus`, NULL: every CPU) from a run of `threads` threads (0:
 * unknown, as many as the CPUs). With par (several ranks), collectively: this host's ranks'
 * CPU time, sets and threads together. XPB_OUT_OF_MEMORY or an error of the exchange. */
xpb_status xpb_run_interference(xpb_interference *out, const xpb_cpu_sample *before,
                                const xpb_cpu_sample *after, const struct xpb_cpu_set *cpus,
                                uint32_t threads, xpb_parallel *par, xpb_err *err);

#endif
