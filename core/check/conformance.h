/* The conformance suite (`xpubench conformance`): runs every op of op set v1 at several
 * shapes (odd sizes, padding, strides, dilation, unwanted outputs), small chains that keep
 * data inside the backend (layouts, memory reuse, fusion) and, optionally, one training step
 * of every model plugin at reduced size, on the backend under test and on the reference
 * backend (cpu_ref, always fp32 without fusion) with identical seeded inputs, through the
 * public ABI only.
 *
 * Every case compares the tensors the host may read, never WORKSPACE tensors: max absolute
 * error and max relative error max|x - ref| / max(max|ref|, floor), the floor being 1% (fp32)
 * or 10% (reduced precision) of the largest max|ref| among the case's tensors of the same
 * role; the worst tensor decides. Tolerances: xpb_verify_tolerance (fp32 1e-4, bf16 5e-2)
 * for op and chain cases and for fp32 models; reduced-precision models get 0.1 on forward
 * results and 0.5 on the norm-relative error of all gradients together, and fp32 gradients
 * that went through a ReLU/LeakyReLU/L1 kink on the other side than the reference are judged
 * by the norm (1e-2). docs/backend-guide.md ("Conformance") explains each choice. Under
 * reduced precision every input is rounded to a bf16-representable value first, so that both
 * sides see the same numbers and only the backend's arithmetic differs. */
#ifndef XPB_CORE_CONFORMANCE_H
#define XPB_CORE_CONFORMANCE_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "loader.h"

typedef struct xpb_conformance_options {
    uint32_t precision;    /* xpb_precision for the backend under test (the reference runs fp32) */
    uint32_t fusion;       /* compile option fusion for the backend under test */
    uint32_t threads;      /* compile option threads for the backend under test (0: its default) */
    int quick;             /* the reduced shape set (seconds instead of minutes) */
    int models;            /* also one training step of every model plugin at reduced size */
    const char *filter;    /* only cases whose name contains this; NULL: every case */
    uint64_t seed;         /* input data */
    FILE *out;             /* where the table and the summary go; NULL: nowhere */
    int verbose;           /* also one line per compared tensor */
    const char *json_path; /* also write the results as JSON there; NULL: no file */
} xpb_conformance_options;

typedef struct xpb_conformance_summary {
    uint32_t passed;
    uint32_t failed;
    uint32_t unsupported; /* the backend refused the case (XPB_UNSUPPORTED) */
} xpb_conformance_summary;

/* Options with the defaults: fp32, fusion on, full shape set, models on, seed 1, stdout. */
void xpb_conformance_defaults(xpb_conformance_options *opt);

/* Runs the suite on backend `backend` of `registry` (which must also hold cpu_ref). Returns
 * XPB_OK when the suite ran, whatever it found (see *summary); XPB_NOT_FOUND when a backend is
 * missing, or the status of a failure that stopped the suite (with a message in err). */
xpb_status xpb_conformance_run(xpb_conformance_summary *summary, const xpb_registry *registry,
                               const char *backend, const xpb_conformance_options *opt,
                               xpb_err *err);

#endif
