/* Run ids: "<name or model-mode>[key=value,...]" over the swept fields, made unique within a
 * scenario with "#2", "#3", ... Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_IDS_H
#define XPB_CORE_SCENARIO_IDS_H

#include <stddef.h>

#include "base/errmsg.h"
#include "scenario/run_config.h"
#include "scenario/scenario_fields.h"

/* The id of the run rc filled from combination `index` of `fields`: the label (`name`, s NULL
 * when the run has none) or "<model>-<mode>", then "[key=value,...]" over the swept fields in
 * their order, values spelled canonically. Returns a new string owned by the caller, or NULL
 * when out of memory. */
char *xpb_run_id(const xpb_run_config *rc, const struct xpb_sfields *fields, const size_t *index,
                 const struct xpb_svalue *label);

/* Makes the ids of runs[0..n) unique: the first keeps its id, later copies get "#2", "#3"
 * and so on (a replaced id is freed; the new one is owned by the run). Returns XPB_OK or
 * XPB_OUT_OF_MEMORY. */
xpb_status xpb_run_ids_unique(xpb_run_config *runs, size_t n, xpb_err *err);

#endif
