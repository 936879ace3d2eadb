/* The values a run gets, as "fields": one per run key or model parameter, from the defaults,
 * the run itself or a --set option, converted to typed values once (scenario_convert.h) and
 * merged by precedence. Internal to core/scenario. Fields borrow their YAML nodes (and
 * parameter names); the trees must outlive them. */
#ifndef XPB_CORE_SCENARIO_FIELDS_H
#define XPB_CORE_SCENARIO_FIELDS_H

#include <stddef.h>

#include "base/errmsg.h"
#include "scenario/scenario_convert.h"
#include "scenario/scenario_keys.h"
#include "scenario/yaml_tree.h"

#define XPB_SCENARIO_MAX_PARAMS 256 /* model parameters per mapping */

struct xpb_sfield {
    const struct xpb_skey *key;       /* the run key; the "params" key for a model parameter */
    const char *param;                /* model parameter name, or NULL */
    struct xpb_svalues values;        /* typed; owned by the list that converted them */
    const struct xpb_yorigin *origin; /* where the values came from */
    /* Position of the key's first appearance, which orders the sweep axes: file fields by
     * line and column, fields that only --set gives after them by option index. */
    int from_set;
    int line, column;
    size_t set_index;
};

struct xpb_sfields {
    struct xpb_sfield *items;
    size_t n, cap;
    int borrowed; /* the values belong to other lists (a merge): do not free them */
};

/* Frees the array and, unless borrowed, the values; empties the list. */
void xpb_sfields_free(struct xpb_sfields *f);

/* Appends a field, taking ownership of its values (also on failure, when they are freed
 * unless the list is borrowed). Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_sfields_push(struct xpb_sfields *f, struct xpb_sfield *field);

/* The field for `key` (and `param` when key is "params"), or NULL. The pointer is into f's
 * array: valid until f changes. */
const struct xpb_sfield *xpb_sfields_find(const struct xpb_sfields *f, const struct xpb_skey *key,
                                          const char *param);

/* Validates and converts the mapping `map` of the defaults (is_defaults: `name` is not
 * allowed) or of one run into *out (empty on entry; the caller frees it, also on failure).
 * For a run, *label receives its converted `name` (label->node NULL when it has none). */
xpb_status xpb_sfields_from_map(struct xpb_sfields *out, struct xpb_svalue *label,
                                const struct xpb_ynode *map, int is_defaults,
                                const struct xpb_yorigin *origin, xpb_err *err);

/* out (empty on entry) = the defaults, replaced by the run's own values, replaced by the
 * options; sorted by first appearance. out borrows the values of the three lists, which must
 * outlive it. Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_sfields_merge(struct xpb_sfields *out, const struct xpb_sfields *defaults,
                             const struct xpb_sfields *run, const struct xpb_sfields *overrides);

#endif
