/* Expanding a run's merged fields into run configurations: the cartesian product of its
 * swept fields, each combination filled by copying typed values (nothing is converted or
 * validated again, except the consistency of max_steps with min_steps). Internal to
 * core/scenario. */
#ifndef XPB_CORE_SCENARIO_EXPAND_H
#define XPB_CORE_SCENARIO_EXPAND_H

#include <stdint.h>

#include "base/errmsg.h"
#include "scenario/run_config.h"
#include "scenario/scenario_fields.h"

/* The number of runs `fields` expand to: the product of their numbers of values, saturating
 * at UINT64_MAX. */
uint64_t xpb_sfields_count(const struct xpb_sfields *fields);

/* An upper bound of the memory one expanded run of `fields` takes: its xpb_run_config, its
 * strings, its model parameters and its id. `label`: the run's converted `name` (s NULL when
 * it has none); `file_len`: strlen of the scenario path. */
uint64_t xpb_sfields_run_bytes(const struct xpb_sfields *fields, const struct xpb_svalue *label,
                               size_t file_len);

/* Writes the xpb_sfields_count(fields) runs of one scenario run to out[], which the caller
 * zeroed. `label` is the run's converted `name` (s NULL when it has none); `file` and `line`
 * go to rc->file/line. Strings in out[] are allocated here and owned by the caller (the
 * scenario), also on failure. Returns XPB_OK, XPB_PARSE_ERROR / XPB_INVALID_ARGUMENT
 * (max_steps below min_steps) or XPB_OUT_OF_MEMORY. */
xpb_status xpb_expand_run(xpb_run_config *out, const struct xpb_sfields *fields,
                          const struct xpb_svalue *label, const char *file, int line, xpb_err *err);

#endif
