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

/* Where a backend's tensor differs most from the reference's: its worst element (the largest
 * |x - r|, or the first NaN or infinity that disagrees). check/judge.h finds it; verification
 * and the conformance suite report it. */
struct xpb_located {
    char tensor[64];
    double error;      /* the tensor's error (check/judge.h's metric) */
    double tolerance;  /* its tolerance; 0 when its kind was judged together */
    int64_t index;     /* flat index into the tensor (row-major, canonical layout) */
    uint32_t ndim;     /* coordinates in use: the tensor's dims, 1..4 */
    int64_t coords[4]; /* (n, c, h, w) of a 4-D tensor, (n, i) of a 2-D one */
    double value;      /* the backend's element (may be NaN or infinite) */
    double reference;  /* the reference's */
};

/* How many failing tensors a verification result locates. */
#define XPB_VERIFY_LOCATED_MAX 4

/* The verdict of a verification of the first step against the reference backend. */
typedef struct xpb_verify_result {
    int passed;
    /* The deciding error (check/judge.h's floored norm-relative error): of the tensor furthest
     * from its tolerance, or of all gradients together. */
    double max_rel_error;
    double tolerance;      /* the deciding tolerance */
    char worst_tensor[64]; /* the tensor furthest from its tolerance ("" when none compared) */
    /* Near-ties (check/kinks.h), excused because the reference took the backend's side: kink
     * elements (ReLU / LeakyReLU inputs, L1 differences) on the other side of 0, and max-pool
     * windows won by another element, each within rounding of the reference's value. */
    int64_t kink_flips;
    int64_t pool_flips;
    /* Kink elements or max-pool windows decided differently beyond rounding: an error; any
     * fails verification. `far` locates the first (value: the backend's, reference: the
     * reference's; for a pool, the reference's input at the backend's and at its own
     * maximum). */
    int64_t far_flips;
    struct xpb_located far;
    /* The probe step: when the run's first step passed and the model initialises parameters to
     * a constant (a bias to 0, a norm's scale to 1), a second step from the run's initial
     * values with each of those moved (c + 0.1 u, the same on both sides), so that a kernel
     * that ignores such a term fails. probe_params: how many were moved (0: no probe step);
     * probe_failed: the probe step decided the verdict. The near-tie counts above add up both
     * steps; the fields below are the deciding step's. */
    uint32_t probe_params;
    int probe_failed;
    /* The tensors outside their tolerance (when gradients were judged together and failed: the
     * worst one), the furthest first: `failing` of them, the first n_located located. */
    uint32_t failing;
    uint32_t n_located;
    struct xpb_located located[XPB_VERIFY_LOCATED_MAX];
    /* "verified: max relative error 3.1e-07 on 'conv1.weight.grad' against cpu_ref (tolerance
     * 1e-04 for fp32)"; a failure names the tensor, its worst element and both values. */
    char message[1024];
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
    /* The ranks waiting while this process runs alone (rank 0's one-rank baseline): told it is
     * alive at every stage and step (xpb_parallel_beat); NULL: nobody waits. */
    xpb_parallel *waiting;
    const char *dump_dir;       /* NULL: no dump */
    xpb_dump_step_fn dump_step; /* needed with dump_dir */
    /* Needed when a run asks for `verify: true`; without it such a run fails saying that
     * verification is not available to this caller. */
    xpb_verify_step_fn verify_step;
} xpb_runner_opts;

#endif
