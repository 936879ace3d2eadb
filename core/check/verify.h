/* Verification of a run's first step against the reference backend (XPB_REFERENCE_BACKEND):
 * the same program, initial values and batch on both; losses, outputs and (training) every
 * parameter gradient compared by the host's one numerical judge (judge.h), each within its own
 * tolerance: losses and outputs the forward tolerance of the run's precision; in fp32 each
 * gradient the aligned allowance against the aligned reference (kinks.h: the reference takes
 * the backend's side of every near-tie, so kink flips excuse nothing, and a flip beyond
 * rounding fails), floored per layer; under reduced precision all gradients together.
 * docs/conformance.md says what this proves and what it does not. */
#ifndef XPB_CORE_VERIFY_H
#define XPB_CORE_VERIFY_H

#include "plugin/loader.h"
#include "program/model_program.h"
#include "run/run_options.h" /* xpb_verify_result */
#include "scenario/run_config.h"

/* Compares one step of `mp` on `backend` with the reference backend (an xpb_verify_step_fn).
 * Returns a status only when a side could not run (XPB_NOT_FOUND without the reference, or the
 * backend's status); a numerical mismatch is *out with passed = 0, located (out->located,
 * out->far) and explained in out->message. */
xpb_status xpb_verify_step(xpb_verify_result *out, const xpb_registry *registry,
                           const xpb_backend_api *backend, const xpb_model_program *mp,
                           const xpb_run_config *cfg, xpb_err *err);

#endif
