/* The conformance suite (`xpubench conformance`, docs/conformance.md): runs every op of op set
 * v1 at several shapes (odd sizes, padding, strides, dilation, unwanted outputs), small chains
 * that keep data inside the backend (layouts, memory reuse, fusion) and, optionally, one
 * training step of every model plugin at reduced size, on the backend under test and on the
 * reference backend (XPB_REFERENCE_BACKEND, always fp32 without fusion) with identical seeded
 * inputs, through the public ABI only.
 *
 * Every case compares the tensors the host may read, never WORKSPACE tensors, with the host's
 * one numerical judge (compare.h): the floored norm-relative error of each tensor against the
 * forward tolerance of the precision; the gradients of a model step against the gradient
 * allowance, or all together under reduced precision or after kink flips. Under reduced
 * precision every input is rounded to a bf16-representable value first, so that both sides
 * see the same numbers and only the backend's arithmetic differs.
 *
 * Files: conformance.c (this driver), conformance_case.h (what a case is) with
 * conformance_build.c (building one by hand), conformance_cases.c (the catalogue) and
 * conformance_inputs.c (seeded inputs); conformance_run.h with conformance_ops.c (running an
 * op or chain case), conformance_models.c (model steps) and conformance_report.c (the table,
 * the JSON, the verdicts' spellings). */
#ifndef XPB_CORE_CONFORMANCE_H
#define XPB_CORE_CONFORMANCE_H

#include <stdint.h>
#include <stdio.h>

#include "base/errmsg.h"
#include "check/conformance_types.h"
#include "plugin/loader.h"

/* Options with the defaults: fp32, fusion on, full shape set, models on, seed 1, stdout. */
void xpb_conformance_defaults(xpb_conformance_options *opt);

/* Runs the suite on backend `backend` of `registry` (which must also hold the reference). Returns
 * XPB_OK when the suite ran, whatever it found (see *summary); XPB_NOT_FOUND when a backend is
 * missing, or the status of a failure that stopped the suite (with a message in err). */
xpb_status xpb_conformance_run(xpb_conformance_summary *summary, const xpb_registry *registry,
                               const char *backend, const xpb_conformance_options *opt,
                               xpb_err *err);

#endif
