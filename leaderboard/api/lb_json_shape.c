/* Measuring JSON text without parsing it (see lb_json_shape.h): one pass over the bytes that
 * knows strings (and their escapes), brackets and the first byte of scalars. */
#include "api/lb_json_shape.h"

#include <string.h>

/* 1 for a byte that starts a number, true, false or null. */
static int starts_scalar(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n';
}

/* 1 for a byte that ends a scalar. */
static int ends_scalar(unsigned char c)
{
    return c == ',' || c == ']' || c == '}' || c == ':' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r';
}

enum lb_json_verdict lb_json_shape(struct lb_json_shape *out, const char *text, size_t len,
                                   size_t max_depth, size_t max_nodes)
{
    memset(out, 0, sizeof *out);
    size_t depth = 0;
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    while (p < end) {
        unsigned char c = *p++;
        if (c == '"') {
            while (p < end && *p != '"')
                p += *p == '\\' ? 2 : 1;
            p++;
        } else if (c == '{' || c == '[') {
            if (++depth > out->depth)
                out->depth = depth;
            if (depth > max_depth)
                return LB_JSON_TOO_DEEP;
        } else if (c == '}' || c == ']') {
            depth -= depth > 0;
            continue;
        } else if (starts_scalar(c)) {
            while (p < end && !ends_scalar(*p))
                p++;
        } else {
            continue;
        }
        if (++out->nodes > max_nodes)
            return LB_JSON_TOO_MANY;
    }
    return LB_JSON_WITHIN;
}
