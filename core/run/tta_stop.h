/* When a time-to-accuracy run stops before its target and max_epochs (docs/results.md,
 * "stopped_early"): a run that can no longer learn would otherwise train on at chance accuracy
 * until max_epochs, hours for a large model, and then only say it did not converge. */
#ifndef XPB_CORE_TTA_STOP_H
#define XPB_CORE_TTA_STOP_H

#include <stdint.h>

#include "run/tta_record.h"

/* Epochs of evaluations in a row at chance accuracy with a constant output's loss after which
 * a run is stalled. */
#define XPB_TTA_STALL_EPOCHS 2.0

/* Why r, whose curve ends at its latest evaluation, must stop now: "diverged" when that
 * evaluation's training loss is not finite (weights that gave a NaN or infinite loss stay so
 * under SGD), "stalled" when every evaluation of the last XPB_TTA_STALL_EPOCHS epochs or more
 * had at most chance accuracy (1 / classes + 0.01) and a training loss within 3% of ln(classes),
 * the loss of a network whose output no longer depends on its input (dead ReLUs: no gradient
 * reaches the layers that could recover); NULL to go on. A static string. */
const char *xpb_tta_stop_reason(const xpb_tta_run *r, uint32_t classes);

#endif
