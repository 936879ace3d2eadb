/* Expanding a run's merged fields into run configurations: the cartesian product of its
 * list-valued fields, the run ids, and their uniqueness. Internal to scenario*.c. */
#ifndef XPB_CORE_SCENARIO_EXPAND_H
#define XPB_CORE_SCENARIO_EXPAND_H

#include <stdint.h>

#include "error.h"
#include "run_config.h"
#include "scenario_fields.h"

/* The number of runs `fields` expand to: the product of their list lengths, saturating at
 * UINT64_MAX. */
uint64_t xpb_sfields_count(const struct xpb_sfields *fields);

/* An upper bound of the memory one expanded run of `fields` takes: its xpb_run_config, its
 * strings, its model parameters and its id. `label`: the run's name node or NULL;
 * `file_len`: strlen of the scenario path. */
uint64_t xpb_sfields_run_bytes(const struct xpb_sfields *fields, const struct xpb_ynode *label,
                               size_t file_len);

/* Writes the xpb_sfields_count(fields) runs of one scenario run to out[], which the caller
 * zeroed. `label` is the run's `name` node or NULL; `file` and `line` go to rc->file/line.
 * Strings in out[] are allocated here and owned by the caller (the scenario), also on failure.
 * Returns XPB_OK, XPB_PARSE_ERROR / XPB_INVALID_ARGUMENT (inconsistent values, e.g.
 * max_steps below min_steps) or XPB_OUT_OF_MEMORY. */
xpb_status xpb_expand_run(xpb_run_config *out, const struct xpb_sfields *fields,
                          const struct xpb_ynode *label, const char *file, int line, xpb_err *err);

/* Makes the ids of runs[0..n) unique: the first keeps its id, later copies get "#2", "#3"
 * and so on. Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_expand_unique_ids(xpb_run_config *runs, size_t n, xpb_err *err);

#endif
