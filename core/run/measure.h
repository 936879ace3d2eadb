/* The timed part of a run: warm-up steps, then repeats of timed steps (MLPerf LoadGen's rule:
 * each repeat at least min_steps and at least min_time), with the losses of the first and
 * last timed steps (and after every step, for the loss series), the energy over the timed
 * steps and what other processes took of the run's CPUs meanwhile. What is timed: for each step,
 * the backend's run of every phase and the synchronize that ends it (plus, when the run streams its
 * inputs, the copy of the batch), measured by the host with a monotonic clock. */
#ifndef XPB_CORE_MEASURE_H
#define XPB_CORE_MEASURE_H

#include "machine/host_usage.h"
#include "scenario/run_config.h"
#include "run/meter.h"
#include "run/run_options.h"
#include "run/session.h"
#include "run/stream.h"

typedef struct xpb_timing {
    double *step_seconds; /* every timed step of every repeat (over ranks: the slowest's) */
    double *step_loss;    /* the loss after each of them (NaN: none; over ranks: the mean) */
    size_t n_steps, cap_steps;
    uint32_t ranks;         /* ranks that ran each step (1 for one process) */
    double *rank_seconds;   /* step i of rank r at [i * ranks + r] */
    double *repeat_seconds; /* per repeat (cfg->repeats entries) */
    uint32_t *repeat_steps;
    double backend_seconds, wall_seconds; /* inside run+synchronize / whole timed steps */
    double loss_first, loss_last;         /* NaN when the program has no loss */
    xpb_energy energy;
    xpb_interference interference; /* what other processes used meanwhile */
    /* The host process's peak resident set during the run (model, compile, steps) minus its
     * size before; -1 when the peak could not be reset between runs. Set by the runner. */
    int64_t host_run_peak_bytes;
} xpb_timing;

/* Runs cfg->warmup untimed steps. XPB_INTERRUPTED when opts->stop was raised. With
 * opts->par every step ends with an exchange between the ranks (agree.h): a step that failed
 * on any rank, or a stop asked of any, ends the warm-up on every rank alike. */
xpb_status xpb_measure_warmup(xpb_session *s, const xpb_run_config *cfg,
                              const xpb_runner_opts *opts, xpb_err *err);

/* Times cfg->repeats repeats into *t (zeroed first; release with xpb_timing_free), pushing
 * `stream` (NULL for resident inputs) at the start of every step, and reads the energy meter
 * around them. XPB_INTERRUPTED when opts->stop was raised. With opts->par every rank runs the
 * same number of steps: after each step the ranks exchange their step times, losses and
 * statuses; rank 0 decides whether another step follows; a step lasts as long as on the
 * slowest rank and its loss is the mean of the ranks' losses. */
xpb_status xpb_measure_repeats(xpb_timing *t, xpb_session *s, xpb_stream *stream,
                               const xpb_run_config *cfg, const xpb_runner_opts *opts,
                               xpb_err *err);

void xpb_timing_free(xpb_timing *t);

#endif
