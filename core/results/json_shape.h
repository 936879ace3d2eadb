/* The shape of a JSON text measured before it is parsed (its nesting depth and its number of
 * nodes: values and object keys), so that a text beyond results_limits.h is refused without
 * building its tree. One pass over the bytes that knows strings with their escapes, brackets
 * and the first byte of scalars; it counts as the leaderboard's lb_json_shape does. */
#ifndef XPB_CORE_RESULTS_JSON_SHAPE_H
#define XPB_CORE_RESULTS_JSON_SHAPE_H

#include <stddef.h>

struct xpb_json_shape {
    size_t depth; /* deepest nesting (1 for a top-level object of scalars) */
    size_t nodes; /* values and object keys */
};

/* Measures all len bytes of `text`. Text that is not JSON is measured roughly (the parser
 * refuses it afterwards). */
void xpb_json_shape(struct xpb_json_shape *out, const char *text, size_t len);

#endif
