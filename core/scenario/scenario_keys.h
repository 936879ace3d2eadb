/* The run keys of a scenario: the one table that describes each key once (name, type,
 * range or choices, built-in default, the xpb_run_config member it fills, help), and what
 * the rest of the room asks of it: finding a key, describing what it accepts, storing a typed
 * value into its member, spelling a value for a run id. Converting YAML to typed values is
 * scenario_convert.h. Internal to core/scenario. */
#ifndef XPB_CORE_SCENARIO_KEYS_H
#define XPB_CORE_SCENARIO_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "base/errmsg.h"
#include "scenario/run_config.h"
#include "scenario/yaml_tree.h"

#define XPB_SKEY_MAX 64 /* more keys than the table will ever have: sizes "seen" arrays */

enum xpb_skey_type {
    XPB_SKEY_LABEL = 1, /* `name`: the run's label, a name, never a sweep; no member */
    XPB_SKEY_NAME,      /* [A-Za-z0-9_.-]+, stored as a copy in a char * member */
    XPB_SKEY_ENUM,      /* one of `choices`, stored as its value in a uint32_t member */
    XPB_SKEY_WORD,      /* one of `choices`, stored as a copy of its word in a char * member */
    XPB_SKEY_PRECISION, /* a precision policy of base/names.h, stored in a uint32_t member */
    XPB_SKEY_UINT,      /* decimal integer within [min, max], stored in a uint32_t member */
    XPB_SKEY_U64,       /* decimal integer within [min, max], stored in a uint64_t member */
    XPB_SKEY_FLOAT,     /* decimal number within [fmin, fmax], stored in a double member */
    XPB_SKEY_BOOL,      /* true/false (and YAML 1.1's yes/no/on/off), stored as uint32_t 0/1 */
    XPB_SKEY_PARAMS,    /* mapping of model parameter name -> scalar or list; no member */
};

struct xpb_skey_choice {
    const char *word; /* as written in YAML and in run ids */
    uint32_t value;
};

/* A typed value of a run key (or the text of a model parameter), converted once from its
 * YAML node; expansion only copies it. */
struct xpb_svalue {
    uint64_t u;    /* ENUM, WORD, PRECISION (the choice's value), UINT, U64, BOOL */
    double f;      /* FLOAT; NaN for null (the model's default) */
    const char *s; /* NAME, LABEL, model parameters: the text (NULL for null), borrowed from
                    * `node`, or static for a built-in default */
    const struct xpb_ynode *node; /* where it was written; NULL for a built-in default */
};

struct xpb_skey {
    const char *name;
    int type;                              /* enum xpb_skey_type */
    int nullable;                          /* null (~) is allowed and means "the model's default" */
    uint64_t min, max;                     /* UINT, U64 */
    double fmin, fmax;                     /* FLOAT; fmax may be INFINITY */
    const struct xpb_skey_choice *choices; /* ENUM, WORD: terminated by a NULL word */
    size_t offset;                         /* the member of xpb_run_config it fills */
    struct xpb_svalue def;                 /* the built-in default (node NULL) */
    const char *required; /* non-NULL: no default; names what a run must give ("a model name") */
    const char *help;     /* one line for `xpubench validate --help` */
};

/* The run keys in the order docs/scenarios.md lists them; *count receives their number.
 * The table is static. */
const struct xpb_skey *xpb_skey_table(size_t *count);

/* The run key called `name` (len bytes), or NULL. Static. */
const struct xpb_skey *xpb_skey_find(const char *name, size_t len);

/* Fills `rc` (zeroed by the caller) with every key's built-in default. Strings are copies
 * owned by rc (freed with the scenario). Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_skey_defaults(xpb_run_config *rc);

/* Stores a typed value into key's member of rc; NAME and WORD values are copied (owned by rc,
 * freed with the scenario), replacing what the member held. LABEL and PARAMS have no member:
 * nothing is stored. Returns XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_skey_store(xpb_run_config *rc, const struct xpb_skey *key,
                          const struct xpb_svalue *v);

/* Describes what `key` accepts, e.g. "an integer 1..65536" or "one of train, inference".
 * Returns buf. */
char *xpb_skey_expected(char *buf, size_t size, const struct xpb_skey *key);

/* How a value is spelled in a run id: canonical words, true/false, decimal integers, the
 * shortest round-tripping decimal for numbers, names as written, "default" for null.
 * Returns buf. */
char *xpb_skey_format(char *buf, size_t size, const struct xpb_skey *key,
                      const struct xpb_svalue *v);

/* Whether text is a non-empty [A-Za-z0-9_.-]+ of at most 128 characters. */
int xpb_is_name(const char *text, size_t len);

/* Whether text is a model parameter name: [a-z0-9_]+, at most 64 characters. */
int xpb_is_param_name(const char *text, size_t len);

#endif
