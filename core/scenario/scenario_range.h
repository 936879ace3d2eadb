/* Ranges: a sweep's values written as a rule instead of a list, {from: 32, to: 8192, times: 2}
 * (geometric: 32, 64, ..., 8192) or {from: 100, to: 300, step: 50} (arithmetic: 100, 150, ...,
 * 300), for integer and number run keys and for model parameters (docs/scenarios.md,
 * "Ranges"). A range is read into the scalars a list would hold, which the caller then
 * converts like any list's items. Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_RANGE_H
#define XPB_CORE_SCENARIO_RANGE_H

#include <stddef.h>

#include "base/errmsg.h"
#include "scenario/yaml_tree.h"

/* The most values one range may give (the sweep limit: more could never run). */
#define XPB_SRANGE_MAX_VALUES 100000u

/* The nodes of a range's keys, borrowed from its mapping; times or step is NULL. */
struct xpb_srange {
    const struct xpb_ynode *map, *from, *to, *times, *step;
};

/* Whether a value of a key of type `key_type` (enum xpb_skey_type) may be a range: integers,
 * numbers and model parameters. */
int xpb_srange_allowed(int key_type);

/* Reads the keys of the mapping `map` into *out: `from` and `to` and exactly one of `times`
 * and `step`, each a plain scalar, no other key and none twice. `label` names the run key in
 * messages ("batch", "params.nodes"); `bad` is the status of a bad value from `origin`
 * (XPB_PARSE_ERROR for a file, XPB_INVALID_ARGUMENT for --set). Returns XPB_OK or `bad` with
 * "<where>: <label>: expected ..., found ..." in err. */
xpb_status xpb_srange_read(struct xpb_srange *out, const struct xpb_ynode *map, const char *label,
                           xpb_status bad, const struct xpb_yorigin *origin, xpb_err *err);

/* The values of range r: *values receives a new block of *n plain scalar nodes at the
 * position of r->map, each spelling one value (integers in decimal, other numbers in the
 * shortest form that reads back exactly), in increasing order from `from` up to and including
 * `to` when the rule reaches it. One allocation: free(*values) releases the nodes and their
 * text (never xpb_ynode_free). `integer`: the key takes integers only, so every number of the
 * range must be written as one. Errors (status `bad`): a number that is not one, `to` below
 * `from`, `times` not above 1 or `from` not above 0 with `times`, `step` not above 0, integers
 * beyond 64-bit signed, more than XPB_SRANGE_MAX_VALUES values; XPB_OUT_OF_MEMORY. */
xpb_status xpb_srange_values(struct xpb_ynode **values, size_t *n, const struct xpb_srange *r,
                             int integer, const char *label, xpb_status bad,
                             const struct xpb_yorigin *origin, xpb_err *err);

#endif
