/* How a caller runs one expanded scenario run (runner.h): where progress goes, how it is
 * stopped, the ranks of a run launched as several, and the checks of the first step that the
 * caller hands in. The run room knows nothing of the check room: verification and dumps are
 * steps the CLI gives the runner (check/verify.h, check/dump.h implement them). */
#ifndef XPB_CORE_RUN_OPTIONS_H
#define XPB_CORE_RUN_OPTIONS_H

#include <signal.h>
#include <stdint.h>

#include <xpubench/backend.h>

#include "base/errmsg.h"
#include "parallel/parallel.h"
#include "plugin/loader.h"
#include "program/program_data.h"
#include "scenario/run_config.h"

/* The verdict of a verification of the first step against the reference backend. */
typedef struct xpb_verify_result {
    int passed;
    /* The deciding error (check/judge.h's floored norm-relative error): of the tensor furthest
     * from its tolerance, or of all gradients together. */
    double max_rel_error;
    double tolerance;   /* the deciding tolerance */
    int64_t kink_flips; /* elements on the other side of a kink than the reference */
    /* "verified: max relative error 3.1e-07 on 'conv1.weight.grad' against cpu_ref (tolerance
     * 1e-02 for fp32)" */
    char message[512];
} xpb_verify_result;

/* Compares one step of `mp` on `backend` with the reference backend: *out, or a status when a
 * side could not run (check/verify.c's xpb_verify_step). */
typedef xpb_status (*xpb_verify_step_fn)(xpb_verify_result *out, const xpb_registry *registry,
                                         const xpb_backend_api *backend,
                                         const xpb_model_program *mp, const xpb_run_config *cfg,
                                         xpb_err *err);

/* Writes one step of `mp` on `backend` to folder `dir` (check/dump.c's xpb_dump_step). */
typedef xpb_status (*xpb_dump_step_fn)(const char *dir, const xpb_backend_api *backend,
                                       const xpb_model_program *mp, const xpb_run_config *cfg,
                                       xpb_err *err);

typedef struct xpb_runner_opts {
    const char *label;           /* progress label, e.g. "[2/5] conv6-train" */
    volatile sig_atomic_t *stop; /* set by a signal handler: finish the run as interrupted */
    xpb_parallel *par;           /* the ranks of a run launched as several; NULL: one process */
    const char *dump_dir;        /* NULL: no dump */
    xpb_dump_step_fn dump_step;  /* needed with dump_dir */
    /* Needed when a run asks for `verify: true`; without it such a run fails saying that
     * verification is not available to this caller. */
    xpb_verify_step_fn verify_step;
} xpb_runner_opts;

#endif
