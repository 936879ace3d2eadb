/* Time to accuracy (`mode: tta`, docs/results.md "Time to accuracy"): MLPerf's way of counting
 * training. A run trains the model on a real dataset (data/dataset.h) from its seeded
 * initialisation, evaluates the test accuracy every `eval_every` epochs, and stops when it
 * reaches `target` (converged) or after `max_epochs` (not converged). What is timed: from the
 * first touch of the data (the input pipeline's first batch) to the evaluation that reached the
 * target, every step, every copy of a batch and every evaluation included; building the model,
 * compiling it and writing its initial values come before and are reported apart. `runs`
 * independent runs (seeds seed, seed + 1, ...) are scored by their Olympic mean (tta_score.h). */
#ifndef XPB_CORE_TTA_H
#define XPB_CORE_TTA_H

#include <jansson.h>

#include "base/errmsg.h"
#include "plugin/loader.h"
#include "run/run_options.h"
#include "scenario/run_config.h"

/* The samples of one test evaluation (a divisor of Fashion-MNIST's 10,000 test images). */
#define XPB_TTA_EVAL_BATCH 500u

/* Measures the time-to-accuracy runs of `cfg` into run object `run` (its "model", "device" and
 * "tta" members) and the run's config object `config` (its "optimizer"). A status other than
 * XPB_OK ends the whole run, with err saying why. */
xpb_status xpb_tta_measure(json_t *run, json_t *config, const xpb_registry *registry,
                           const xpb_run_config *cfg, const xpb_runner_opts *opts, xpb_err *err);

#endif
