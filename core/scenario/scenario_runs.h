/* The `runs` list of a scenario: every run validated and converted once (its own fields kept
 * typed), merged with the defaults and the --set options, counted against the sweep limits,
 * then expanded into run configurations. Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_RUNS_H
#define XPB_CORE_SCENARIO_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"
#include "scenario/run_config.h"
#include "scenario/scenario_fields.h"
#include "scenario/yaml_tree.h"

/* One entry of `runs`, converted. */
struct xpb_srun {
    const struct xpb_ynode *node; /* its mapping: the position of its messages */
    struct xpb_sfields own;       /* its own keys (owns their values) */
    struct xpb_svalue label;      /* its `name` (s NULL when it has none) */
    uint64_t count;               /* the number of runs it expands to */
};

/* The converted runs and what they share (borrowed: the caller keeps them alive). */
struct xpb_sruns {
    struct xpb_srun *items; /* owned */
    size_t n;
    size_t total; /* expanded runs of all of them */
    const struct xpb_sfields *defaults, *overrides;
    const struct xpb_yorigin *origin;
};

/* Validates and converts every run of the non-empty list `runs` into *out (the caller frees
 * it with xpb_sruns_free, also on failure), checks that each has the required keys, and
 * refuses sweeps over XPB_SCENARIO_MAX_RUNS runs or XPB_SCENARIO_MAX_EXPANDED_BYTES.
 * Returns XPB_OK, XPB_PARSE_ERROR (or the status of a bad --set option) or
 * XPB_OUT_OF_MEMORY. */
xpb_status xpb_sruns_prepare(struct xpb_sruns *out, const struct xpb_ynode *runs,
                             const struct xpb_sfields *defaults,
                             const struct xpb_sfields *overrides, const struct xpb_yorigin *origin,
                             xpb_err *err);

/* Expands the prepared runs into out[0..r->total), zeroed by the caller; strings in out[]
 * are owned by the caller (the scenario), also on failure. Ids are made unique. Returns
 * XPB_OK, XPB_PARSE_ERROR / XPB_INVALID_ARGUMENT (max_steps below min_steps) or
 * XPB_OUT_OF_MEMORY. */
xpb_status xpb_sruns_expand(xpb_run_config *out, const struct xpb_sruns *r, xpb_err *err);

/* Frees what *r owns and empties it. */
void xpb_sruns_free(struct xpb_sruns *r);

#endif
