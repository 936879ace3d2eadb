/* Converting the YAML value of a run key (from the file or a --set option) to typed values,
 * in one pass that also validates it, with the message the scenario reference promises:
 * "<where>: <key>: expected <what>, found <what was found>". Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_CONVERT_H
#define XPB_CORE_SCENARIO_CONVERT_H

#include <stddef.h>

#include "base/errmsg.h"
#include "scenario/scenario_keys.h"
#include "scenario/yaml_tree.h"

/* The status for a bad value from this origin: XPB_INVALID_ARGUMENT for --set, else
 * XPB_PARSE_ERROR. */
xpb_status xpb_origin_status(const struct xpb_yorigin *origin);

/* Converts one node for `key` into *out (out->node = scalar). For PARAMS (a model
 * parameter) any non-null scalar is accepted and kept as text. `label` names the key in
 * messages ("batch", "params.depth"). Returns XPB_OK or xpb_origin_status(origin) with the
 * message in err. */
xpb_status xpb_skey_convert(struct xpb_svalue *out, const struct xpb_skey *key, const char *label,
                            const struct xpb_ynode *scalar, const struct xpb_yorigin *origin,
                            xpb_err *err);

/* A field's converted values: one for a scalar, one per item for a list or a range (a sweep
 * axis). */
struct xpb_svalues {
    struct xpb_svalue *items; /* owned: free with xpb_svalues_free */
    size_t n;
    int swept;                   /* written as a list or a range: an axis even with one item */
    struct xpb_ynode *generated; /* owned: the scalars a range gave (scenario_range.h), which
                                    the items borrow; NULL for a written list */
};

/* Converts `value` for `key`: a scalar, a non-empty list of scalars (not for LABEL), or for an
 * integer, number or model parameter a range (scenario_range.h), whose ends are checked as the
 * key's values. On success *out owns a new array; on failure *out is empty and err holds the
 * message. Returns XPB_OK, xpb_origin_status(origin) or XPB_OUT_OF_MEMORY. */
xpb_status xpb_svalues_convert(struct xpb_svalues *out, const struct xpb_skey *key,
                               const char *label, const struct xpb_ynode *value,
                               const struct xpb_yorigin *origin, xpb_err *err);

/* Frees the array and empties *v. */
void xpb_svalues_free(struct xpb_svalues *v);

#endif
