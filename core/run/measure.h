/* The timed part of a run: warm-up steps, then repeats of timed steps (MLPerf LoadGen's rule:
 * each repeat at least min_steps and at least min_time), with the losses of the first and
 * last timed steps and the energy over the timed steps. What is timed: for each step, the
 * backend's run of every phase and the synchronize that ends it (plus, when the run streams
 * its inputs, the copy of the batch), measured by the host with a monotonic clock. */
#ifndef XPB_CORE_MEASURE_H
#define XPB_CORE_MEASURE_H

#include "run_config.h"
#include "runner.h"
#include "session.h"
#include "stream.h"

typedef struct xpb_timing {
    double *step_seconds; /* every timed step of every repeat */
    size_t n_steps, cap_steps;
    double *repeat_seconds; /* per repeat (cfg->repeats entries) */
    uint32_t *repeat_steps;
    double backend_seconds, wall_seconds; /* inside run+synchronize / whole timed steps */
    double loss_first, loss_last;         /* NaN when the program has no loss */
    double joules;                        /* energy of the timed steps, when measured */
    const char *energy_source;            /* "backend", "rapl" or NULL: not measured */
} xpb_timing;

/* Runs cfg->warmup untimed steps. XPB_INTERRUPTED when opts->stop was raised. */
xpb_status xpb_measure_warmup(xpb_session *s, const xpb_run_config *cfg,
                              const xpb_runner_opts *opts, xpb_err *err);

/* Times cfg->repeats repeats into *t (zeroed first; release with xpb_timing_free), pushing
 * `stream` (NULL for resident inputs) at the start of every step, and reads the energy meter
 * around them. XPB_INTERRUPTED when opts->stop was raised. */
xpb_status xpb_measure_repeats(xpb_timing *t, xpb_session *s, xpb_stream *stream,
                               const xpb_run_config *cfg, const xpb_runner_opts *opts,
                               xpb_err *err);

void xpb_timing_free(xpb_timing *t);

#endif
