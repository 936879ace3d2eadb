/* --set options: "key=value" overrides of a run key (or params.<name>) for every run, parsed
 * and converted to typed fields once. Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_SET_H
#define XPB_CORE_SCENARIO_SET_H

#include <stddef.h>

#include "base/errmsg.h"
#include "scenario/scenario_fields.h"
#include "scenario/yaml_tree.h"

/* The parsed options: their fields and what those fields borrow. */
struct xpb_soverrides {
    struct xpb_sfields fields;   /* one per option, in option order */
    struct xpb_yorigin *origins; /* one per option */
    struct xpb_ynode **trees;    /* value of each option */
    char **params;               /* parameter name of "params.<name>=..." options, else NULL */
    size_t n;
};

/* Parses and converts `n` options "key=value" (the strings must outlive *out: messages quote
 * them). On failure returns XPB_INVALID_ARGUMENT (or XPB_OUT_OF_MEMORY) with
 * "--set key=value: ..." in err; *out is then already freed. */
xpb_status xpb_soverrides_parse(struct xpb_soverrides *out, const char *const *overrides, size_t n,
                                xpb_err *err);

/* Frees everything *o owns and empties it. */
void xpb_soverrides_free(struct xpb_soverrides *o);

#endif
