/* The interference of a run's timed steps over its own CPUs (see interference.h). */
#include "run/interference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/agree.h"

/* One rank's share of the run on its host: its CPU time over the timed steps, its threads and
 * the CPUs it may use. */
typedef struct rank_usage {
    char host[64];
    double cpu_s;
    uint32_t threads, pad_;
    struct xpb_cpu_set cpus;
} rank_usage;

/* This host's ranks together (collective): their CPU time into *self_s, the union of their
 * sets into *cpus and the sum of their threads (0 when one does not know) into *threads. */
static xpb_status local_ranks(double *self_s, struct xpb_cpu_set *cpus, uint32_t *threads,
                              xpb_parallel *par, xpb_err *err)
{
    rank_usage me, *all = calloc(par->comm.size, sizeof *all);
    if (!all)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    memset(&me, 0, sizeof me);
    snprintf(me.host, sizeof me.host, "%.63s", par->host);
    me.cpu_s = *self_s;
    me.threads = *threads;
    me.cpus = *cpus;
    xpb_status st = xpb_parallel_gather(par, &me, all, sizeof me, "the ranks' CPU time", err);
    if (st == XPB_OK) {
        uint32_t sum = 0;
        int unknown = 0;
        *self_s = 0;
        for (uint32_t r = 0; r < par->comm.size; r++) {
            if (strcmp(all[r].host, me.host) != 0)
                continue;
            *self_s += all[r].cpu_s;
            xpb_cpu_set_union(cpus, &all[r].cpus);
            sum += all[r].threads;
            unknown |= all[r].threads == 0;
        }
        *threads = unknown ? 0 : sum;
    }
    free(all);
    return st;
}

xpb_status xpb_run_interference(xpb_interference *out, const xpb_cpu_sample *before,
                                const xpb_cpu_sample *after, const struct xpb_cpu_set *cpus,
                                uint32_t threads, xpb_parallel *par, xpb_err *err)
{
    struct xpb_cpu_set set;
    memset(&set, 0, sizeof set);
    if (cpus)
        set = *cpus;
    double self_s = after->self_s - before->self_s;
    if (par && par->comm.size > 1) {
        xpb_status st = local_ranks(&self_s, &set, &threads, par, err);
        if (st != XPB_OK)
            return st;
    }
    /* the counting takes the run's CPU time from the samples: lend it this host's ranks' */
    xpb_cpu_sample *end = malloc(sizeof *end);
    if (!end)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    *end = *after;
    end->self_s = before->self_s + self_s;
    xpb_interference_between(out, before, end, xpb_cpu_set_count(&set) ? &set : NULL,
                             (double)threads);
    free(end);
    return XPB_OK;
}
