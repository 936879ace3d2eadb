/* A process's configuration of a scenario run (see rank_config.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "run/rank_config.h"

#include <sched.h>
#include <unistd.h>

#include <xpubench/backend.h>

#include "plugin/guard.h"
#include "plugin/loader.h"

const char *xpb_parallel_mode_name(uint32_t mode)
{
    return mode == XPB_PARALLEL_DATA ? "data" : "none";
}

/* The host threads this rank may use: its CPU affinity when the launcher bound it to some
 * cores, else its share of the host's CPUs. */
static uint32_t rank_threads(uint32_t local_size)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    long mine = online;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        mine = CPU_COUNT(&set);
    if (online > 0 && mine >= online && local_size > 1)
        mine = online / (long)local_size;
    return mine > 0 ? (uint32_t)mine : 1u;
}

/* The device of this rank: the scenario's plus its local rank when the backend lists several
 * devices; the scenario's when it lists one (a CPU all ranks of a host share). */
static xpb_status rank_device(uint32_t *device, const xpb_run_config *cfg,
                              const xpb_plugin_descriptor *plugin, const xpb_parallel *par,
                              xpb_err *err)
{
    const xpb_backend_api *api = plugin->api;
    xpb_status (*count_fn)(uint32_t *) = XPB_MEMBER_OR(api, xpb_backend_api, device_count, NULL);
    uint32_t count = 0;
    *device = cfg->device;
    xpb_status st = XPB_UNSUPPORTED;
    if (count_fn) {
        xpb_guard_enter(api, "device_count");
        st = count_fn(&count);
        xpb_guard_leave();
    }
    if (st != XPB_OK || count <= 1)
        return XPB_OK;
    *device = cfg->device + par->comm.local_rank;
    if (*device < count)
        return XPB_OK;
    return xpb_err_set(err, XPB_UNSUPPORTED,
                       "rank %u (local rank %u on %s) would use device %u of backend '%s', which "
                       "has %u: start at most %u ranks per host",
                       par->comm.rank, par->comm.local_rank, par->host, *device, plugin->name,
                       count, count > cfg->device ? count - cfg->device : 0);
}

xpb_status xpb_rank_config(xpb_run_config *out, const xpb_run_config *cfg,
                           const xpb_plugin_descriptor *plugin, const xpb_parallel *par,
                           xpb_err *err)
{
    *out = *cfg;
    out->world_size = par ? par->comm.size : 1;
    out->rank = par ? par->comm.rank : 0;
    if (out->parallel == XPB_PARALLEL_AUTO)
        out->parallel = out->world_size > 1 ? XPB_PARALLEL_DATA : XPB_PARALLEL_NONE;
    if (!par)
        return out->parallel == XPB_PARALLEL_DATA ? xpb_parallel_available(err) : XPB_OK;
    if (!plugin)
        return XPB_OK;
    if (cfg->threads == 0 && (plugin->caps & XPB_CAP_THREADS))
        out->threads = rank_threads(par->comm.local_size);
    return rank_device(&out->device, cfg, plugin, par, err);
}
