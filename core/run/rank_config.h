/* The configuration one process runs for a scenario run (docs/distributed.md, "Ranks, devices
 * and cores"): alone, the scenario's own with `parallel: auto` resolved; as one rank of
 * several, also the world size and rank the program is built for, the device of this rank
 * (the scenario's device plus the rank's place on its host, when the backend lists more than
 * one device) and its share of the host's cores (when the scenario left threads to the
 * backend and the backend honours them). */
#ifndef XPB_CORE_RANK_CONFIG_H
#define XPB_CORE_RANK_CONFIG_H

#include <xpubench/plugin.h>

#include "base/errmsg.h"
#include "parallel/parallel.h"
#include "scenario/run_config.h"

/* Fills *out from *cfg for this process (`par` NULL: alone). *out shares cfg's strings: it
 * is valid while cfg is. `plugin` is the run's backend (NULL when it is not loaded: device and
 * threads stay as the scenario says). XPB_UNSUPPORTED when a rank's device does not exist
 * (err names the rank, the device and the way out), or when a process alone asks for
 * parallel data in a build without the MPI module (err says what is missing). */
xpb_status xpb_rank_config(xpb_run_config *out, const xpb_run_config *cfg,
                           const xpb_plugin_descriptor *plugin, const xpb_parallel *par,
                           xpb_err *err);

/* "none" or "data": how a resolved configuration uses its ranks. Static. */
const char *xpb_parallel_mode_name(uint32_t mode);

#endif
