/* The shape of a JSON text measured before it is parsed: its nesting depth and its number of
 * nodes (values, object keys included). A parser builds one allocation per node, so bounding
 * the nodes bounds the memory a body of any size can make the service spend, and bounding the
 * depth bounds what any answer derived from it can become. */
#ifndef LB_JSON_SHAPE_H
#define LB_JSON_SHAPE_H

#include <stddef.h>

enum lb_json_verdict {
    LB_JSON_WITHIN = 0,   /* within both limits */
    LB_JSON_TOO_DEEP = 1, /* nests deeper than max_depth */
    LB_JSON_TOO_MANY = 2, /* has more than max_nodes nodes */
};

struct lb_json_shape {
    size_t depth; /* deepest nesting seen (1 for a top-level object with scalars) */
    size_t nodes; /* nodes seen */
};

/* Scans len bytes of `text` (stopping at the first limit passed). Text that is not JSON is
 * measured roughly: the parser refuses it afterwards. */
enum lb_json_verdict lb_json_shape(struct lb_json_shape *out, const char *text, size_t len,
                                   size_t max_depth, size_t max_nodes);

#endif
