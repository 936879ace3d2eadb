/* The builder table model plugins call (include/xpubench/model.h), over an xpb_graph. */
#include "program/builder.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/plugin_calls.h"

struct xpb_builder {
    xpb_graph *g;
    const xpb_model_api *model;
    const char *model_name;
    const char *variant;
    const xpb_kv *params;
    size_t n_params;
    xpb_err err;
};

static xpb_status fail(xpb_builder *b, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static xpb_status fail(xpb_builder *b, xpb_status st, const char *fmt, ...)
{
    char msg[sizeof b->err.msg - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return xpb_err_set(&b->err, st, "model '%s': %s", b->model_name, msg);
}

static const xpb_model_param *find_decl(const xpb_model_api *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_params; i++)
        if (strcmp(m->params[i].name, name) == 0)
            return &m->params[i];
    return NULL;
}

const char *xpb_model_param_effective(const xpb_model_api *model, const char *variant,
                                      const xpb_kv *params, size_t n_params, const char *name)
{
    const xpb_model_param *decl = find_decl(model, name);
    if (!decl)
        return NULL;
    if (variant && strcmp(name, "variant") == 0)
        return variant;
    for (size_t i = 0; i < n_params; i++)
        if (strcmp(params[i].key, name) == 0)
            return params[i].value;
    return decl->default_value;
}

static int parse_bool(int *out, const char *s)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                                "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, yes[i]) == 0)
            return *out = 1, 1;
        if (strcmp(s, no[i]) == 0)
            return *out = 0, 1;
    }
    return 0;
}

static int parse_int(int64_t *out, const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return 0;
    *out = v;
    return 1;
}

static int parse_float(double *out, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* Is `value` one of the '|'-separated words of `allowed`? */
static int in_choices(const char *allowed, const char *value)
{
    size_t len = strlen(value);
    for (const char *p = allowed; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0)
            return 1;
        p += n + (bar ? 1 : 0);
    }
    return 0;
}

/* Is v within "min..max"? (No range, or one that does not parse: anything goes.) */
static int in_range(const char *allowed, double v)
{
    if (!allowed)
        return 1;
    const char *dots = strstr(allowed, "..");
    if (!dots)
        return 1;
    char *end;
    double lo = strtod(allowed, &end);
    if (end != dots)
        return 1;
    double hi = strtod(dots + 2, &end);
    if (*end)
        return 1;
    return v >= lo && v <= hi;
}

static xpb_status check_value(const xpb_model_param *d, const char *model_name, const char *value,
                              xpb_err *err)
{
    int64_t i;
    double f;
    int bv;
    const char *expected = NULL;
    switch (d->type) {
    case XPB_MPARAM_STRING:
        if (d->allowed && !in_choices(d->allowed, value))
            expected = "one of";
        break;
    case XPB_MPARAM_INT:
        if (!parse_int(&i, value) || !in_range(d->allowed, (double)i))
            expected = "an integer in";
        break;
    case XPB_MPARAM_FLOAT:
        if (!parse_float(&f, value) || !in_range(d->allowed, f))
            expected = "a number in";
        break;
    case XPB_MPARAM_BOOL:
        if (!parse_bool(&bv, value))
            expected = "a boolean";
        break;
    default:
        return xpb_err_set(err, XPB_INTERNAL, "model '%s': parameter '%s' has unknown type %u",
                           model_name, d->name, d->type);
    }
    if (!expected)
        return XPB_OK;
    return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                       "model '%s': parameter '%s': expected %s%s%s, found '%s'", model_name,
                       d->name, expected, d->allowed && d->type != XPB_MPARAM_BOOL ? " " : "",
                       d->allowed && d->type != XPB_MPARAM_BOOL ? d->allowed : "", value);
}

xpb_status xpb_model_params_check(const xpb_model_api *model, const char *model_name,
                                  const char *variant, const xpb_kv *params, size_t n_params,
                                  xpb_err *err)
{
    xpb_status st;
    if (variant) {
        const xpb_model_param *d = find_decl(model, "variant");
        if (!d)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "model '%s' has no variants, found variant '%s'", model_name,
                               variant);
        if ((st = check_value(d, model_name, variant, err)))
            return st;
    }
    for (size_t i = 0; i < n_params; i++) {
        const xpb_model_param *d = find_decl(model, params[i].key);
        if (!d || strcmp(params[i].key, "variant") == 0) {
            char names[512] = "";
            size_t used = 0;
            for (uint32_t k = 0; k < model->n_params && used < sizeof names; k++)
                if (strcmp(model->params[k].name, "variant") != 0)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                             used ? ", " : "", model->params[k].name);
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "model '%s': unknown parameter '%s' (known: %s)", model_name,
                               params[i].key, used ? names : "none");
        }
        if ((st = check_value(d, model_name, params[i].value, err)))
            return st;
    }
    return XPB_OK;
}

/* ---- the builder table ---- */

static const char *b_last_error(const xpb_builder *b)
{
    return b->err.msg;
}

static uint32_t b_batch_size(const xpb_builder *b)
{
    return b->g->batch;
}

static xpb_status lookup(const char **value, const xpb_model_param **decl, const xpb_builder *b,
                         const char *name, uint32_t type)
{
    xpb_builder *mb = (xpb_builder *)b; /* the error buffer is the builder's mutable part */
    *decl = name ? find_decl(b->model, name) : NULL;
    if (!*decl)
        return fail(mb, XPB_NOT_FOUND, "asked for undeclared parameter '%s'",
                    name ? name : "(null)");
    if ((*decl)->type != type)
        return fail(mb, XPB_INVALID_ARGUMENT, "parameter '%s' asked with the wrong type", name);
    *value = xpb_model_param_effective(b->model, b->variant, b->params, b->n_params, name);
    return XPB_OK;
}

static xpb_status b_param_string(const char **out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    return lookup(out, &d, b, name, XPB_MPARAM_STRING);
}

static xpb_status b_param_int(int64_t *out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    const char *v;
    xpb_status st = lookup(&v, &d, b, name, XPB_MPARAM_INT);
    if (st)
        return st;
    return parse_int(out, v) ? XPB_OK
                             : fail((xpb_builder *)b, XPB_INVALID_ARGUMENT,
                                    "parameter '%s': '%s' is not an integer", name, v);
}

static xpb_status b_param_float(double *out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    const char *v;
    xpb_status st = lookup(&v, &d, b, name, XPB_MPARAM_FLOAT);
    if (st)
        return st;
    return parse_float(out, v) ? XPB_OK
                               : fail((xpb_builder *)b, XPB_INVALID_ARGUMENT,
                                      "parameter '%s': '%s' is not a number", name, v);
}

static xpb_status b_param_bool(int *out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    const char *v;
    xpb_status st = lookup(&v, &d, b, name, XPB_MPARAM_BOOL);
    if (st)
        return st;
    return parse_bool(out, v) ? XPB_OK
                              : fail((xpb_builder *)b, XPB_INVALID_ARGUMENT,
                                     "parameter '%s': '%s' is not a boolean", name, v);
}

static int value_ok(const xpb_builder *b, xpb_value v)
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

static xpb_status check_dims(xpb_builder *b, const char *what, const char *name, uint32_t ndim,
                             const int64_t *dims)
{
    if (ndim < 1 || ndim > XPB_MAX_DIMS)
        return fail(b, XPB_INVALID_ARGUMENT, "%s '%s': expected 1 to %d dimensions, found %u", what,
                    name, XPB_MAX_DIMS, ndim);
    int64_t total = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        if (dims[d] < 1 || dims[d] > (1ll << 31))
            return fail(b, XPB_INVALID_ARGUMENT,
                        "%s '%s': dimension %u: expected 1..2^31, found %lld", what, name, d,
                        (long long)dims[d]);
        total *= dims[d];
        if (total > (1ll << 34))
            return fail(b, XPB_INVALID_ARGUMENT, "%s '%s': more than 2^34 elements", what, name);
    }
    return XPB_OK;
}

static xpb_status new_named(xpb_value *out, xpb_builder *b, const char *what, xpb_gvalue *v)
{
    xpb_status st;
    if (!out || !v->name || !v->name[0])
        return fail(b, XPB_INVALID_ARGUMENT, "%s without a name or output pointer", what);
    if (name_taken(b, v->name))
        return fail(b, XPB_INVALID_ARGUMENT, "%s '%s' declared twice", what, v->name);
    if ((st = check_dims(b, what, v->name, v->ndim, v->dims)))
        return st;
    for (uint32_t d = v->ndim; d < XPB_MAX_DIMS; d++)
        v->dims[d] = 1;
    if ((st = xpb_graph_add_value(out, b->g, v)))
        return fail(b, st, "out of memory");
    return XPB_OK;
}

static xpb_status b_input(xpb_value *out, xpb_builder *b, const xpb_input_desc *d)
{
    if (!d)
        return fail(b, XPB_INVALID_ARGUMENT, "input: NULL description");
    if (d->dtype != XPB_DTYPE_F32 && d->dtype != XPB_DTYPE_I32)
        return fail(b, XPB_INVALID_ARGUMENT, "input '%s': unknown dtype %u", d->name, d->dtype);
    if (!(d->lo <= d->hi))
        return fail(b, XPB_INVALID_ARGUMENT, "input '%s': range lo %g > hi %g", d->name, d->lo,
                    d->hi);
    /* Throughput is batch x steps / time: an input that ignores the batch would make every
     * number of the run wrong without a word. */
    if (d->ndim < 1 || d->ndim > XPB_MAX_DIMS || d->dims[0] != (int64_t)b->g->batch)
        return fail(b, XPB_INVALID_ARGUMENT,
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
    return new_named(out, b, "input", &v);
}

static xpb_status b_parameter(xpb_value *out, xpb_builder *b, const xpb_param_desc *d)
{
    if (!d)
        return fail(b, XPB_INVALID_ARGUMENT, "parameter: NULL description");
    if (d->group >= b->g->n_groups)
        return fail(b, XPB_INVALID_ARGUMENT, "parameter '%s': unknown group %u", d->name, d->group);
    if (d->init.kind < XPB_INIT_ZEROS || d->init.kind > XPB_INIT_NORMAL)
        return fail(b, XPB_INVALID_ARGUMENT, "parameter '%s': unknown initialiser %u", d->name,
                    d->init.kind);
    if (d->init.kind == XPB_INIT_NORMAL && !(d->init.b >= 0))
        return fail(b, XPB_INVALID_ARGUMENT, "parameter '%s': normal std %g < 0", d->name,
                    d->init.b);
    xpb_gvalue v = {.name = (char *)d->name,
                    .kind = XPB_VALUE_PARAM,
                    .dtype = XPB_DTYPE_F32,
                    .ndim = d->ndim,
                    .init = d->init,
                    .group = d->group,
                    .trainable = d->trainable ? 1u : 0u};
    memcpy(v.dims, d->dims, sizeof v.dims);
    return new_named(out, b, "parameter", &v);
}

static xpb_status b_constant(xpb_value *out, xpb_builder *b, const char *name, uint32_t ndim,
                             const int64_t *dims, double value)
{
    if (!dims || ndim > XPB_MAX_DIMS)
        return fail(b, XPB_INVALID_ARGUMENT, "constant '%s': bad shape", name ? name : "(null)");
    xpb_gvalue v = {.name = (char *)name,
                    .kind = XPB_VALUE_CONST,
                    .dtype = XPB_DTYPE_F32,
                    .ndim = ndim,
                    .value = value};
    memcpy(v.dims, dims, ndim * sizeof *dims);
    return new_named(out, b, "constant", &v);
}

/* Defaults a model may leave at zero: stride/dilation 1 for convolutions, stride = kernel
 * for pooling (PyTorch's defaults). */
static void normalise_attrs(uint32_t kind, xpb_op_attrs *a)
{
    for (int d = 0; d < 2; d++) {
        if (a->dilation[d] == 0)
            a->dilation[d] = 1;
        if (a->stride[d] == 0)
            a->stride[d] = (kind == XPB_OP_MAXPOOL || kind == XPB_OP_AVGPOOL) ? a->kernel[d] : 1;
    }
}

static xpb_status add_node(xpb_value *out, xpb_builder *b, xpb_gnode *n)
{
    xpb_status st;
    xpb_gvalue v = {.kind = XPB_VALUE_NODE, .name = n->layer};
    if ((st = xpb_infer_shape(&v.ndim, v.dims, &v.dtype, b->g, n, &b->err))) {
        xpb_err_prefix(&b->err, "model '%s'", b->model_name);
        return st;
    }
    v.node = (uint32_t)b->g->n_nodes;
    uint32_t vid;
    if ((st = xpb_graph_add_value(&vid, b->g, &v)))
        return fail(b, st, "out of memory");
    n->output = vid;
    uint32_t nid;
    if ((st = xpb_graph_add_node(&nid, b->g, n)))
        return fail(b, st, "out of memory");
    *out = vid;
    return XPB_OK;
}

static int is_model_forward_op(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
    case XPB_OP_LINEAR:
    case XPB_OP_BATCHNORM_TRAIN:
    case XPB_OP_INSTANCENORM:
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
    case XPB_OP_MAXPOOL:
    case XPB_OP_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL:
    case XPB_OP_ADD:
    case XPB_OP_REFLECTION_PAD:
    case XPB_OP_SOFTMAX_XENT:
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
    case XPB_OP_DROPOUT:
        return 1;
    default:
        return 0;
    }
}

static xpb_status b_op(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                       const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs)
{
    if (!out || !layer || !layer[0])
        return fail(b, XPB_INVALID_ARGUMENT, "op %s without a layer name or output pointer",
                    xpb_op_name(kind));
    if (!is_model_forward_op(kind))
        return fail(b, XPB_INVALID_ARGUMENT, "layer '%s': op %s (%u) is not a forward op", layer,
                    xpb_op_name(kind), kind);
    if (n_inputs > XPB_MAX_OP_INPUTS || (n_inputs && !inputs))
        return fail(b, XPB_INVALID_ARGUMENT, "layer '%s': %u inputs", layer, n_inputs);
    xpb_gnode n = {.kind = kind, .layer = (char *)layer, .n_inputs = n_inputs};
    for (uint32_t i = 0; i < n_inputs; i++) {
        if (!value_ok(b, inputs[i]))
            return fail(b, XPB_INVALID_ARGUMENT, "layer '%s': input %u is not a value (%u)", layer,
                        i, inputs[i]);
        const xpb_gvalue *iv = &b->g->values[inputs[i]];
        if (iv->kind == XPB_VALUE_NODE && xpb_op_is_loss(b->g->nodes[iv->node].kind))
            return fail(b, XPB_INVALID_ARGUMENT,
                        "layer '%s': input %u is the loss '%s'; a loss may only be passed to "
                        "loss()",
                        layer, i, iv->name);
        n.inputs[i] = inputs[i];
    }
    if (attrs)
        n.attrs = *attrs;
    normalise_attrs(kind, &n.attrs);
    return add_node(out, b, &n);
}

static xpb_status b_reshape(xpb_value *out, xpb_builder *b, const char *layer, xpb_value x,
                            uint32_t ndim, const int64_t *dims)
{
    xpb_status st;
    if (!out || !layer || !value_ok(b, x) || !dims)
        return fail(b, XPB_INVALID_ARGUMENT, "reshape: bad arguments");
    if ((st = check_dims(b, "reshape", layer, ndim, dims)))
        return st;
    const xpb_gvalue *xv = &b->g->values[x];
    int64_t before = 1, after = 1;
    for (uint32_t d = 0; d < xv->ndim; d++)
        before *= xv->dims[d];
    for (uint32_t d = 0; d < ndim; d++)
        after *= dims[d];
    if (before != after) {
        char s1[96], s2[96];
        return fail(b, XPB_INVALID_ARGUMENT,
                    "layer '%s' (RESHAPE): %s has %lld elements, target %s has %lld", layer,
                    xpb_shape_str(s1, sizeof s1, xv->ndim, xv->dims), (long long)before,
                    xpb_shape_str(s2, sizeof s2, ndim, dims), (long long)after);
    }
    xpb_gnode n = {.kind = XPB_OP_RESHAPE, .layer = (char *)layer, .n_inputs = 1, .inputs = {x}};
    xpb_gvalue v = {.kind = XPB_VALUE_NODE,
                    .name = (char *)layer,
                    .dtype = xv->dtype,
                    .ndim = ndim,
                    .node = (uint32_t)b->g->n_nodes};
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        v.dims[d] = d < ndim ? dims[d] : 1;
    uint32_t vid, nid;
    if ((st = xpb_graph_add_value(&vid, b->g, &v)))
        return fail(b, st, "out of memory");
    n.output = vid;
    if ((st = xpb_graph_add_node(&nid, b->g, &n)))
        return fail(b, st, "out of memory");
    *out = vid;
    return XPB_OK;
}

static xpb_status b_stop_gradient(xpb_value *out, xpb_builder *b, xpb_value x)
{
    if (!out || !value_ok(b, x))
        return fail(b, XPB_INVALID_ARGUMENT, "stop_gradient: bad arguments");
    char layer[256];
    snprintf(layer, sizeof layer, "%s.detach", b->g->values[x].name ? b->g->values[x].name : "");
    xpb_gnode n = {.kind = XPB_GNODE_STOP_GRADIENT, .layer = layer, .n_inputs = 1, .inputs = {x}};
    return add_node(out, b, &n);
}

static xpb_status b_output(xpb_builder *b, const char *name, xpb_value v)
{
    if (!name || !value_ok(b, v))
        return fail(b, XPB_INVALID_ARGUMENT, "output: bad arguments");
    xpb_goutput *grown = realloc(b->g->outputs, (b->g->n_outputs + 1) * sizeof *grown);
    if (!grown)
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->outputs = grown;
    grown[b->g->n_outputs].name = strdup(name);
    grown[b->g->n_outputs].value = v;
    if (!grown[b->g->n_outputs].name)
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->n_outputs++;
    return XPB_OK;
}

static xpb_status b_group(uint32_t *out, xpb_builder *b, const char *name)
{
    if (!out || !name || !name[0])
        return fail(b, XPB_INVALID_ARGUMENT, "group: bad arguments");
    for (size_t i = 0; i < b->g->n_groups; i++)
        if (strcmp(b->g->groups[i], name) == 0)
            return fail(b, XPB_INVALID_ARGUMENT, "group '%s' declared twice", name);
    char **grown = realloc(b->g->groups, (b->g->n_groups + 1) * sizeof *grown);
    if (!grown)
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->groups = grown;
    if (!(grown[b->g->n_groups] = strdup(name)))
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    *out = (uint32_t)b->g->n_groups++;
    return XPB_OK;
}

static xpb_status add_phase(uint32_t *out, xpb_builder *b, const char *name, uint32_t group,
                            const xpb_optimizer_desc *opt)
{
    xpb_gphase *grown = realloc(b->g->phases, (b->g->n_phases + 1) * sizeof *grown);
    if (!grown)
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->phases = grown;
    xpb_gphase *p = &grown[b->g->n_phases];
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup(name)))
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    p->group = group;
    p->optimizer = *opt;
    *out = (uint32_t)b->g->n_phases++;
    return XPB_OK;
}

static xpb_status b_phase(uint32_t *out, xpb_builder *b, const char *name, uint32_t group,
                          const xpb_optimizer_desc *opt)
{
    if (!out || !name || !name[0] || !opt)
        return fail(b, XPB_INVALID_ARGUMENT, "phase: bad arguments");
    if (group >= b->g->n_groups)
        return fail(b, XPB_INVALID_ARGUMENT, "phase '%s': unknown group %u", name, group);
    if (opt->kind != XPB_OPTIMIZER_SGD && opt->kind != XPB_OPTIMIZER_ADAM)
        return fail(b, XPB_INVALID_ARGUMENT, "phase '%s': unknown optimizer %u", name, opt->kind);
    for (size_t i = 0; i < b->g->n_phases; i++)
        if (strcmp(b->g->phases[i].name, name) == 0)
            return fail(b, XPB_INVALID_ARGUMENT, "phase '%s' declared twice", name);
    return add_phase(out, b, name, group, opt);
}

static xpb_status b_loss(xpb_builder *b, uint32_t phase, xpb_value loss, double weight)
{
    xpb_status st;
    if (!value_ok(b, loss))
        return fail(b, XPB_INVALID_ARGUMENT, "loss: %u is not a value", loss);
    const xpb_gvalue *lv = &b->g->values[loss];
    if (lv->kind != XPB_VALUE_NODE || !xpb_op_is_loss(b->g->nodes[lv->node].kind))
        return fail(b, XPB_INVALID_ARGUMENT,
                    "loss: '%s' is not the result of SOFTMAX_XENT, MSE_LOSS or L1_LOSS", lv->name);
    if (!isfinite(weight))
        return fail(b, XPB_INVALID_ARGUMENT, "loss '%s': weight is not finite", lv->name);
    if (b->g->n_phases == 0 && phase == 0) {
        xpb_optimizer_desc sgd = {.kind = XPB_OPTIMIZER_SGD, .lr = 0.01, .momentum = 0.9};
        uint32_t id;
        if ((st = add_phase(&id, b, "train", 0, &sgd)))
            return st;
    }
    if (phase >= b->g->n_phases)
        return fail(b, XPB_INVALID_ARGUMENT, "loss '%s': unknown phase %u", lv->name, phase);
    xpb_gphase *p = &b->g->phases[phase];
    xpb_gloss *grown = realloc(p->losses, (p->n_losses + 1) * sizeof *grown);
    if (!grown)
        return fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    p->losses = grown;
    grown[p->n_losses++] = (xpb_gloss){loss, weight};
    return XPB_OK;
}

/* A refusal in the model's own words (model.h, ABI 1.1). */
static xpb_status b_fail(xpb_builder *b, xpb_status status, const char *message)
{
    if (status == XPB_OK) /* a refusal must fail: make it an invalid argument */
        status = XPB_INVALID_ARGUMENT;
    return fail(b, status, "%s", message ? message : "refused the build (no message)");
}

static const xpb_builder_api builder_api = {
    .struct_size = sizeof(xpb_builder_api),
    .last_error = b_last_error,
    .batch_size = b_batch_size,
    .param_string = b_param_string,
    .param_int = b_param_int,
    .param_float = b_param_float,
    .param_bool = b_param_bool,
    .input = b_input,
    .parameter = b_parameter,
    .constant = b_constant,
    .op = b_op,
    .reshape = b_reshape,
    .stop_gradient = b_stop_gradient,
    .output = b_output,
    .group = b_group,
    .phase = b_phase,
    .loss = b_loss,
    .fail = b_fail,
};

xpb_status xpb_build_graph(xpb_graph **out, const xpb_model_api *model, const char *model_name,
                           uint32_t batch, const char *variant, const xpb_kv *params,
                           size_t n_params, xpb_err *err)
{
    xpb_status st;
    if ((st = xpb_model_params_check(model, model_name, variant, params, n_params, err)))
        return st;
    xpb_builder b = {.model = model,
                     .model_name = model_name,
                     .variant = variant,
                     .params = params,
                     .n_params = n_params};
    if ((st = xpb_graph_new(&b.g, batch)))
        return xpb_err_set(err, st, "out of memory");
    xpb_program_calling(model, "build");
    st = model->build(&b, &builder_api);
    xpb_program_called(model);
    if (st != XPB_OK) {
        if (!b.err.msg[0])
            xpb_err_set(&b.err, st, "model '%s': build failed: %s", model_name, xpb_strerror(st));
        goto free_graph;
    }
    if (b.g->n_phases == 0 || b.g->phases[0].n_losses == 0) {
        st = fail(&b, XPB_INVALID_ARGUMENT, "declares no loss");
        goto free_graph;
    }
    for (size_t i = 0; i < b.g->n_phases; i++)
        if (b.g->phases[i].n_losses == 0) {
            st = fail(&b, XPB_INVALID_ARGUMENT, "phase '%s' has no loss", b.g->phases[i].name);
            goto free_graph;
        }
    *out = b.g;
    return XPB_OK;
free_graph:
    xpb_graph_free(b.g);
    return xpb_err_set(err, st, "%s", b.err.msg);
}
