/* Verification of a run's first step against the reference backend (XPB_REFERENCE_BACKEND):
 * the same program, initial values and batch on both; losses, outputs and (training) every
 * parameter gradient compared by the host's one numerical judge (compare.h): each loss and
 * output within the forward tolerance of the run's precision, each gradient within the
 * gradient allowance, or all gradients together when the precision is reduced or the two
 * forward passes took different sides of a ReLU/L1 kink (kinks.h). */
#ifndef XPB_CORE_VERIFY_H
#define XPB_CORE_VERIFY_H

#include "plugin/loader.h"
#include "program/model_program.h"
#include "scenario/run_config.h"

typedef struct xpb_verify_result {
    int passed;
    /* The deciding error (compare.h's floored norm-relative error): of the tensor furthest
     * from its tolerance, or of all gradients together. */
    double max_rel_error;
    double tolerance;   /* the deciding tolerance */
    int64_t kink_flips; /* elements on the other side of a kink than the reference */
    /* "verified: max relative error 3.1e-07 on 'conv1.weight.grad' against cpu_ref (tolerance
     * 1e-02 for fp32)" */
    char message[512];
} xpb_verify_result;

/* Compares one step of `mp` on `backend` with the reference backend. Returns a status only
 * when a side could not run (XPB_NOT_FOUND without the reference, or the backend's status); a
 * numerical mismatch is *out with passed = 0. */
xpb_status xpb_verify_step(xpb_verify_result *out, const xpb_registry *registry,
                           const xpb_backend_api *backend, const xpb_model_program *mp,
                           const xpb_run_config *cfg, xpb_err *err);

#endif
