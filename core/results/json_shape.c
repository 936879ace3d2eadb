/* Measuring JSON text without parsing it (see json_shape.h). */
#include "results/json_shape.h"

#include <string.h>

/* 1 for a byte that starts a number, true, false or null. */
static int scalar_start(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n';
}

/* 1 for a byte that may follow a scalar. */
static int scalar_end(unsigned char c)
{
    return c == ',' || c == ']' || c == '}' || c == ':' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r';
}

void xpb_json_shape(struct xpb_json_shape *out, const char *text, size_t len)
{
    memset(out, 0, sizeof *out);
    size_t depth = 0;
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    while (p < end) {
        unsigned char c = *p++;
        if (c == '"') { /* a key or a string value: skip to its closing quote */
            while (p < end && *p != '"')
                p += *p == '\\' ? 2 : 1;
            p++;
        } else if (c == '{' || c == '[') {
            if (++depth > out->depth)
                out->depth = depth;
        } else if (c == '}' || c == ']') {
            depth -= depth > 0;
            continue;
        } else if (scalar_start(c)) {
            while (p < end && !scalar_end(*p))
                p++;
        } else {
            continue; /* white space, ',' and ':' */
        }
        out->nodes++;
    }
}
