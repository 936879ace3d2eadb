/* Runs one expanded scenario run: builds the model program, optionally dumps or verifies the
 * first step, compiles on the backend, warms up, times repeats (MLPerf LoadGen's rule: at
 * least min_steps and min_time), and returns the run's results object. */
#ifndef XPB_CORE_RUNNER_H
#define XPB_CORE_RUNNER_H

#include <jansson.h>

#include "plugin/loader.h"
#include "run/run_options.h"
#include "scenario/run_config.h"

/* The run object of docs/results.md ("status" ok / unsupported / failed / interrupted).
 * With opts->par every rank calls it for the same run and every rank returns the same status
 * (docs/distributed.md): the ranks agree at the end of each stage, and the object of rank 0
 * is the one to record. Owned by the caller (json_decref); NULL only when out of memory. */
json_t *xpb_run_one(const xpb_registry *registry, const xpb_run_config *cfg,
                    const xpb_runner_opts *opts);

#endif
