/* A small YAML node tree with line/column on every node, built from libyaml's events.
 *
 * Only what scenarios need: scalars, sequences and mappings with scalar keys. Anchors,
 * aliases and explicit tags are refused (no "billion laughs"), as are more than one document,
 * nesting deeper than XPB_YAML_MAX_DEPTH, bytes that are not UTF-8 and control characters.
 * Every failure leaves "<where>: <problem>" in the error buffer, where <where> is
 * "<file>:<line>:<column>" or "--set <text>" (see struct xpb_yorigin). */
#ifndef XPB_CORE_YAML_TREE_H
#define XPB_CORE_YAML_TREE_H

#include <stddef.h>

#include "base/errmsg.h"

#define XPB_YAML_MAX_DEPTH 32

enum xpb_ynode_kind {
    XPB_YNODE_SCALAR = 1,
    XPB_YNODE_SEQUENCE = 2,
    XPB_YNODE_MAPPING = 3,
};

struct xpb_ynode {
    int kind;         /* enum xpb_ynode_kind */
    int line, column; /* 1-based position of the node's first character */
    int quoted;       /* scalar written quoted or as a block scalar (| or >): always a string */
    char *text;       /* scalar: the value, NUL-terminated (never contains NUL); else NULL */
    size_t len;       /* scalar: strlen(text) */
    /* sequence: the items in order; mapping: key0, value0, key1, value1 ... (keys are
     * scalars) */
    struct xpb_ynode **items;
    size_t n_items;
    size_t cap_items;
};

/* Where text came from, for messages: a file (set == NULL) or one --set option. */
struct xpb_yorigin {
    const char *file; /* path as the user gave it */
    const char *set;  /* the whole "key=value" of a --set option, or NULL */
};

/* Parses `len` bytes of `text` (need not be NUL-terminated). On success *out is the root, or
 * NULL when the text holds no document or only a null value (an empty file, comments only,
 * "---", "~"). The tree is owned by the caller; free it with xpb_ynode_free. On failure
 * *out is NULL and err names the position. Returns XPB_OK, XPB_PARSE_ERROR or
 * XPB_OUT_OF_MEMORY. */
xpb_status xpb_yaml_parse(struct xpb_ynode **out, const struct xpb_yorigin *origin,
                          const char *text, size_t len, xpb_err *err);

/* Frees a tree (NULL is a no-op). */
void xpb_ynode_free(struct xpb_ynode *node);

/* True for a plain scalar that YAML reads as null: "", "~", "null", "Null", "NULL". */
int xpb_ynode_is_null(const struct xpb_ynode *node);

/* Mapping entries: number of pairs, i-th key and value (no bounds checks). */
size_t xpb_ynode_map_size(const struct xpb_ynode *map);
const struct xpb_ynode *xpb_ynode_map_key(const struct xpb_ynode *map, size_t i);
const struct xpb_ynode *xpb_ynode_map_value(const struct xpb_ynode *map, size_t i);

/* Describes a node for "found ..." in messages, e.g. "a mapping", "an empty list", "null",
 * "nothing", "'abc'" or "the quoted string \"64\"". Long or unprintable text is shortened and
 * escaped. Writes at most `size` bytes (NUL included) to buf and returns buf. */
char *xpb_ynode_describe(char *buf, size_t size, const struct xpb_ynode *node);

/* Quotes arbitrary text for a message the way xpb_ynode_describe does for plain scalars:
 * 'text', escaped and shortened. Returns buf. */
char *xpb_yaml_quote(char *buf, size_t size, const char *text, size_t len);

/* Formats a position: "<file>:<line>:<column>" for a file, "--set <text>" for an option.
 * Returns buf. */
char *xpb_yorigin_where(char *buf, size_t size, const struct xpb_yorigin *origin, int line,
                        int column);

#endif
