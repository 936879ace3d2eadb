/* The keys of a scenario run: their types, ranges and defaults, and the conversion of a YAML
 * scalar to a typed value with the error message the scenario reference promises
 * ("<where>: <key>: expected <what>, found <what was found>"). Internal to scenario*.c. */
#ifndef XPB_CORE_SCENARIO_KEYS_H
#define XPB_CORE_SCENARIO_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "run_config.h"
#include "yaml_tree.h"

enum xpb_skey_type {
    XPB_SKEY_LABEL = 1, /* `name`: the run's label, a name, never a sweep */
    XPB_SKEY_NAME,      /* [A-Za-z0-9_.-]+ copied into a char * member */
    XPB_SKEY_ENUM,      /* one of a fixed set of words, stored as a uint32_t */
    XPB_SKEY_UINT,      /* decimal integer within [min, max], stored as a uint32_t */
    XPB_SKEY_U64,       /* decimal integer 0..2^64-1, stored as a uint64_t */
    XPB_SKEY_FLOAT,     /* decimal number within [fmin, fmax], stored as a double */
    XPB_SKEY_BOOL,      /* true/false (and YAML 1.1's yes/no/on/off), stored as a uint32_t 0/1 */
    XPB_SKEY_PARAMS,    /* mapping of model parameter name -> scalar or list */
};

struct xpb_skey_choice {
    const char *word; /* as written in YAML */
    uint32_t value;
    const char *canonical; /* how run ids spell it */
};

struct xpb_skey {
    const char *name;
    int type;          /* enum xpb_skey_type */
    int nullable;      /* null (~) means "the model's default" (NULL string or NaN) */
    uint64_t min, max; /* UINT */
    double fmin, fmax; /* FLOAT; fmax may be INFINITY */
    const struct xpb_skey_choice *choices; /* ENUM, terminated by a NULL word */
    size_t offset;                         /* member of xpb_run_config */
};

/* A converted scalar: `u` for ENUM/UINT/U64/BOOL, `f` for FLOAT, `s` for NAME/LABEL (points
 * into the YAML node, NULL for null). */
struct xpb_svalue {
    uint64_t u;
    double f;
    const char *s;
};

/* The run keys in the order the reference lists them; *count receives their number. The table
 * is static. */
const struct xpb_skey *xpb_skey_table(size_t *count);

/* The run key called `name` (len bytes), or NULL. Static. */
const struct xpb_skey *xpb_skey_find(const char *name, size_t len);

/* Fills `rc` with the documented defaults (all pointers NULL: the caller sets the strings). */
void xpb_skey_defaults(xpb_run_config *rc);

/* Converts one scalar node for `key` (never PARAMS). `label` names the key in messages
 * ("batch", "params.depth"). On failure returns XPB_PARSE_ERROR, or XPB_INVALID_ARGUMENT when
 * the node came from --set, with the message in err. */
xpb_status xpb_skey_convert(struct xpb_svalue *out, const struct xpb_skey *key, const char *label,
                            const struct xpb_ynode *scalar, const struct xpb_yorigin *origin,
                            xpb_err *err);

/* Describes what `key` accepts, e.g. "an integer 1..65536" or "one of train, inference".
 * Returns buf. */
char *xpb_skey_expected(char *buf, size_t size, const struct xpb_skey *key);

/* Stores a converted value into its member of rc. NAME values are copied (owned by rc, freed
 * with the scenario). Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_skey_store(xpb_run_config *rc, const struct xpb_skey *key,
                          const struct xpb_svalue *v);

/* How a value is spelled in a run id: canonical enum words, true/false, decimal integers, the
 * shortest round-tripping decimal for numbers, names as written, "default" for null.
 * Returns buf. */
char *xpb_skey_format(char *buf, size_t size, const struct xpb_skey *key,
                      const struct xpb_svalue *v);

/* The candidate closest to `word` by edit distance (insertions, deletions, substitutions and
 * swaps of neighbours) when that distance is at most 2, else NULL. Returns one of the
 * candidates (not a copy). */
const char *xpb_suggest(const char *word, size_t len, const char *const *candidates, size_t n);

/* Whether text is a non-empty [A-Za-z0-9_.-]+ of at most 128 characters. */
int xpb_is_name(const char *text, size_t len);

/* The status for a bad value from this origin: XPB_INVALID_ARGUMENT for --set, else
 * XPB_PARSE_ERROR. */
xpb_status xpb_origin_status(const struct xpb_yorigin *origin);

#endif
