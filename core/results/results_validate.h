/* The one validation of results documents that the CLI, the results writer and the leaderboard
 * all use (docs/results.md, "Validation"). */
#ifndef XPB_CORE_RESULTS_VALIDATE_H
#define XPB_CORE_RESULTS_VALIDATE_H

#include <jansson.h>

#include "base/errmsg.h"
#include "results/schema_version.h"

/* Checks `doc` against the complete schema (docs/results.md): required keys, types, ranges,
 * enumerations, unknown keys (allowed only inside "extra" objects), unique run ids,
 * comparisons naming existing runs, and the rules that tie fields to a run's status.
 * Returns XPB_OK or XPB_PARSE_ERROR with the first problem in err->msg, led by its JSON path:
 *   "runs[2].metrics.throughput.median: expected a number >= 0, found string" */
xpb_status xpb_results_validate(const json_t *doc, xpb_err *err);

#endif
