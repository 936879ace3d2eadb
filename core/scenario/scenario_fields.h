/* The values a run gets, as "fields": one per run key or model parameter, from the defaults,
 * the run itself or a --set option, validated and merged by precedence. Internal to
 * scenario*.c. Fields borrow their YAML nodes; the trees must outlive them. */
#ifndef XPB_CORE_SCENARIO_FIELDS_H
#define XPB_CORE_SCENARIO_FIELDS_H

#include <stddef.h>

#include "error.h"
#include "scenario_keys.h"
#include "yaml_tree.h"

#define XPB_SCENARIO_MAX_PARAMS 256 /* model parameters per mapping */

struct xpb_sfield {
    const struct xpb_skey *key;       /* the run key; the "params" key for a model parameter */
    const char *param;                /* model parameter name, or NULL */
    const struct xpb_ynode *value;    /* validated: a scalar or a non-empty list of scalars */
    const struct xpb_yorigin *origin; /* where `value` came from */
    /* Position of the key's first appearance, which orders the sweep axes: file fields by
     * line and column, fields that only --set gives after them by option index. */
    int from_set;
    int line, column;
    size_t set_index;
};

struct xpb_sfields {
    struct xpb_sfield *items;
    size_t n, cap;
};

/* Frees the array (not the nodes it points at) and empties the list. */
void xpb_sfields_free(struct xpb_sfields *f);

/* The field for `key` (and `param` when key is "params"), or NULL. The pointer is into f's
 * array: valid until f changes. */
const struct xpb_sfield *xpb_sfields_find(const struct xpb_sfields *f, const struct xpb_skey *key,
                                          const char *param);

/* Validates the mapping `map` of the defaults (is_defaults: `name` is not allowed) or of one
 * run into *out (empty on entry). For a run, *label receives its `name` node or NULL. */
xpb_status xpb_sfields_from_map(struct xpb_sfields *out, const struct xpb_ynode **label,
                                const struct xpb_ynode *map, int is_defaults,
                                const struct xpb_yorigin *origin, xpb_err *err);

/* The parsed --set options: their fields and what those fields borrow. */
struct xpb_soverrides {
    struct xpb_sfields fields;
    struct xpb_yorigin *origins; /* one per option */
    struct xpb_ynode **trees;    /* value of each option */
    char **params;               /* parameter name of "params.<name>=..." options, else NULL */
    size_t n;
};

/* Parses and validates `n` options "key=value". On failure returns XPB_INVALID_ARGUMENT (or
 * XPB_OUT_OF_MEMORY) with "--set key=value: ..." in err; *out is then already freed. */
xpb_status xpb_soverrides_parse(struct xpb_soverrides *out, const char *const *overrides, size_t n,
                                xpb_err *err);
void xpb_soverrides_free(struct xpb_soverrides *o);

/* out (empty on entry) = the defaults, replaced by the run's own values, replaced by the
 * options; sorted by first appearance. Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_sfields_merge(struct xpb_sfields *out, const struct xpb_sfields *defaults,
                             const struct xpb_sfields *run, const struct xpb_sfields *overrides);

#endif
