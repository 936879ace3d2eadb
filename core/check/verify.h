/* Verification of a run's first step against the reference backend (cpu_ref): the same
 * program, initial values and batch on both; losses and every parameter gradient (training)
 * or every output (inference) compared. */
#ifndef XPB_CORE_VERIFY_H
#define XPB_CORE_VERIFY_H

#include "loader.h"
#include "model_program.h"
#include "run_config.h"

typedef struct xpb_verify_result {
    int passed;
    double max_rel_error; /* worst tensor: ||x - ref|| / ||ref|| (L2 norms) */
    double tolerance;     /* for the run's precision */
    char message[512]; /* "max relative error 3.1e-07 on 'conv1.weight.grad' (tolerance 1e-04)" */
} xpb_verify_result;

/* Tolerance on the L2-relative error of losses and outputs for a precision policy (fp32 1e-4,
 * tf32/fp16 2e-2, bf16 5e-2). Gradients get XPB_VERIFY_GRAD_FACTOR times more: two correct
 * implementations that sum in other orders resolve ReLU and max-pool near-ties differently,
 * and the first layers' gradients collect every such flip (conv6 at batch 64 on oneDNN:
 * 1.7e-3 on conv1.weight.grad); a wrong kernel is off by orders of magnitude more. */
#define XPB_VERIFY_GRAD_FACTOR 100.0
double xpb_verify_tolerance(uint32_t precision);

/* Compares one step of `mp` on `backend` with cpu_ref. Returns a status only when a side
 * could not run (XPB_NOT_FOUND without cpu_ref, or the backend's status); a numerical
 * mismatch is *out with passed = 0. */
xpb_status xpb_verify_step(xpb_verify_result *out, const xpb_registry *registry,
                           const xpb_backend_api *backend, const xpb_model_program *mp,
                           const xpb_run_config *cfg, xpb_err *err);

#endif
