/* The "parallel" object of a run's metrics (docs/results.md): the ranks and where they ran
 * (hosts, devices, cores), each rank's throughput and median step, what averaging the
 * gradients costs per step (comm_cost.h) and the scaling efficiency against a one-rank run. */
#ifndef XPB_CORE_PARALLEL_RECORD_H
#define XPB_CORE_PARALLEL_RECORD_H

#include <jansson.h>

#include "run/measure.h"
#include "program/model_program.h"
#include "parallel/parallel.h"
#include "scenario/run_config.h"
#include "run/session.h"

/* The one-rank run that scaling efficiency divides by. */
typedef struct xpb_scaling_baseline {
    double throughput; /* its median throughput, samples/s; NaN: none */
    char file[512];    /* the results file it came from; "": measured in this invocation */
    char reason[512];  /* why there is none */
} xpb_scaling_baseline;

/* Rank 0's baseline from the results file `file` (resolved next to the scenario file of
 * `cfg`): the finished run whose configuration matches `cfg` (model, variant, mode, batch,
 * precision, backend, fusion, threads, transfer, parameters) and ran on one rank. */
void xpb_scaling_baseline_from_file(xpb_scaling_baseline *out, const char *file,
                                    const xpb_run_config *cfg);

/* The object, into *out (a new reference owned by the caller; NULL on ranks other than 0).
 * Collective: every rank calls it once its timed steps ended, with its timing, session and
 * configuration; `run` is the run object whose metrics (throughput and step median over the
 * ranks) are already set. XPB_OK, or the failure of a collective with err. */
xpb_status xpb_run_parallel_json(json_t **out, xpb_parallel *par, const xpb_timing *t,
                                 const xpb_run_config *cfg, const xpb_model_program *mp,
                                 const xpb_session *s, const json_t *run,
                                 const xpb_scaling_baseline *b, xpb_err *err);

#endif
