/* The values a model declares: data inputs, parameters and constants (builder_state.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "program/builder_state.h"

xpb_status xpb_builder_input(xpb_value *out, xpb_builder *b, const xpb_input_desc *d)
{
    if (!d)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "input: NULL description");
    if (d->dtype != XPB_DTYPE_F32 && d->dtype != XPB_DTYPE_I32)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "input '%s': unknown dtype %u", d->name,
                                d->dtype);
    if (!(d->lo <= d->hi))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "input '%s': range lo %g > hi %g", d->name,
                                d->lo, d->hi);
    /* Throughput is batch x steps / time: an input that ignores the batch would make every
     * number of the run wrong without a word. */
    if (d->ndim < 1 || d->ndim > XPB_MAX_DIMS || d->dims[0] != (int64_t)b->g->batch)
        return xpb_builder_fail(
            b, XPB_INVALID_ARGUMENT,
            "input '%s': the first dimension must be the batch size %u, found %s%lld",
            d->name ? d->name : "(unnamed)", b->g->batch,
            d->ndim < 1 || d->ndim > XPB_MAX_DIMS ? "ndim " : "",
            (long long)(d->ndim < 1 || d->ndim > XPB_MAX_DIMS ? d->ndim : d->dims[0]));
    xpb_gvalue v = {.name = (char *)d->name,
                    .kind = XPB_VALUE_INPUT,
                    .dtype = d->dtype,
                    .ndim = d->ndim,
                    .lo = d->lo,
                    .hi = d->hi};
    memcpy(v.dims, d->dims, sizeof v.dims);
    return xpb_builder_new_named(out, b, "input", &v);
}

xpb_status xpb_builder_parameter(xpb_value *out, xpb_builder *b, const xpb_param_desc *d)
{
    if (!d)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "parameter: NULL description");
    if (d->group >= b->g->n_groups)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "parameter '%s': unknown group %u",
                                d->name, d->group);
    if (d->init.kind < XPB_INIT_ZEROS || d->init.kind > XPB_INIT_NORMAL)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "parameter '%s': unknown initialiser %u",
                                d->name, d->init.kind);
    if (d->init.kind == XPB_INIT_NORMAL && !(d->init.b >= 0))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "parameter '%s': normal std %g < 0",
                                d->name, d->init.b);
    xpb_gvalue v = {.name = (char *)d->name,
                    .kind = XPB_VALUE_PARAM,
                    .dtype = XPB_DTYPE_F32,
                    .ndim = d->ndim,
                    .init = d->init,
                    .group = d->group,
                    .trainable = d->trainable ? 1u : 0u};
    memcpy(v.dims, d->dims, sizeof v.dims);
    return xpb_builder_new_named(out, b, "parameter", &v);
}

xpb_status xpb_builder_constant(xpb_value *out, xpb_builder *b, const char *name, uint32_t ndim,
                                const int64_t *dims, double value)
{
    if (!dims || ndim > XPB_MAX_DIMS)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "constant '%s': bad shape",
                                name ? name : "(null)");
    xpb_gvalue v = {.name = (char *)name,
                    .kind = XPB_VALUE_CONST,
                    .dtype = XPB_DTYPE_F32,
                    .ndim = ndim,
                    .value = value};
    memcpy(v.dims, dims, ndim * sizeof *dims);
    return xpb_builder_new_named(out, b, "constant", &v);
}

xpb_status xpb_builder_constant_data(xpb_value *out, xpb_builder *b, const char *name,
                                     uint32_t dtype, uint32_t ndim, const int64_t *dims,
                                     const void *data)
{
    xpb_status st;
    if (!dims || !data || ndim < 1 || ndim > XPB_MAX_DIMS)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "constant '%s': bad shape or no data",
                                name ? name : "(null)");
    if (dtype != XPB_DTYPE_F32 && dtype != XPB_DTYPE_I32)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "constant '%s': unknown dtype %u",
                                name ? name : "(null)", dtype);
    if ((st = xpb_builder_check_dims(b, "constant", name ? name : "(null)", ndim, dims)))
        return st;
    size_t n = 1;
    for (uint32_t d = 0; d < ndim; d++)
        n *= (size_t)dims[d];
    xpb_gvalue v = {.name = (char *)name,
                    .kind = XPB_VALUE_CONST,
                    .dtype = dtype,
                    .ndim = ndim,
                    .data = malloc(n * 4)};
    if (!v.data)
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "constant '%s': out of memory", name);
    memcpy(v.data, data, n * 4);
    memcpy(v.dims, dims, ndim * sizeof *dims);
    if ((st = xpb_builder_new_named(out, b, "constant", &v)))
        free(v.data); /* not taken by the graph */
    return st;
}
