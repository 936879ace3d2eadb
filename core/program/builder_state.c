/* The checks every builder function shares (see builder_state.h). */
#include "program/builder_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

xpb_status xpb_builder_fail(xpb_builder *b, xpb_status st, const char *fmt, ...)
{
    char msg[sizeof b->err.msg - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return xpb_err_set(&b->err, st, "model '%s': %s", b->model_name, msg);
}

int xpb_builder_value_ok(const xpb_builder *b, xpb_value v)
{
    return v > 0 && v < b->g->n_values;
}

static int name_taken(const xpb_builder *b, const char *name)
{
    for (size_t i = 1; i < b->g->n_values; i++) {
        const xpb_gvalue *v = &b->g->values[i];
        if (v->kind != XPB_VALUE_NODE && v->name && strcmp(v->name, name) == 0)
            return 1;
    }
    return 0;
}

xpb_status xpb_builder_check_dims(xpb_builder *b, const char *what, const char *name, uint32_t ndim,
                                  const int64_t *dims)
{
    if (ndim < 1 || ndim > XPB_MAX_DIMS)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "%s '%s': expected 1 to %d dimensions, found %u", what, name,
                                XPB_MAX_DIMS, ndim);
    int64_t total = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        if (dims[d] < 1 || dims[d] > (1ll << 31))
            return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                    "%s '%s': dimension %u: expected 1..2^31, found %lld", what,
                                    name, d, (long long)dims[d]);
        total *= dims[d];
        if (total > (1ll << 34))
            return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "%s '%s': more than 2^34 elements",
                                    what, name);
    }
    return XPB_OK;
}

xpb_status xpb_builder_new_named(xpb_value *out, xpb_builder *b, const char *what, xpb_gvalue *v)
{
    xpb_status st;
    if (!out || !v->name || !v->name[0])
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "%s without a name or output pointer",
                                what);
    if (name_taken(b, v->name))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "%s '%s' declared twice", what, v->name);
    if ((st = xpb_builder_check_dims(b, what, v->name, v->ndim, v->dims)))
        return st;
    for (uint32_t d = v->ndim; d < XPB_MAX_DIMS; d++)
        v->dims[d] = 1;
    if ((st = xpb_graph_add_value(out, b->g, v)))
        return xpb_builder_fail(b, st, "out of memory");
    return XPB_OK;
}
