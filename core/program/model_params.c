/* The parameters a model declares (see model_params.h). */
#include "program/model_params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const xpb_model_param *xpb_model_param_decl(const xpb_model_api *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_params; i++)
        if (strcmp(m->params[i].name, name) == 0)
            return &m->params[i];
    return NULL;
}

const char *xpb_model_param_effective(const xpb_model_api *model, const char *variant,
                                      const xpb_kv *params, size_t n_params, const char *name)
{
    const xpb_model_param *decl = xpb_model_param_decl(model, name);
    if (!decl)
        return NULL;
    if (variant && strcmp(name, "variant") == 0)
        return variant;
    for (size_t i = 0; i < n_params; i++)
        if (strcmp(params[i].key, name) == 0)
            return params[i].value;
    return decl->default_value;
}

int xpb_model_param_bool(int *out, const char *s)
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

int xpb_model_param_int(int64_t *out, const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return 0;
    *out = v;
    return 1;
}

int xpb_model_param_float(double *out, const char *s)
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
    if (!dots || dots == allowed || (size_t)(dots - allowed) >= 64)
        return 1;
    /* the bound before "..", alone: strtod would read "0..1" as "0." then stop at the second dot */
    char low[64], *end;
    memcpy(low, allowed, (size_t)(dots - allowed));
    low[dots - allowed] = '\0';
    double lo = strtod(low, &end);
    if (*end)
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
        if (!xpb_model_param_int(&i, value) || !in_range(d->allowed, (double)i))
            expected = "an integer in";
        break;
    case XPB_MPARAM_FLOAT:
        if (!xpb_model_param_float(&f, value) || !in_range(d->allowed, f))
            expected = "a number in";
        break;
    case XPB_MPARAM_BOOL:
        if (!xpb_model_param_bool(&bv, value))
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
        const xpb_model_param *d = xpb_model_param_decl(model, "variant");
        if (!d)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "model '%s' has no variants, found variant '%s'", model_name,
                               variant);
        if ((st = check_value(d, model_name, variant, err)))
            return st;
    }
    for (size_t i = 0; i < n_params; i++) {
        const xpb_model_param *d = xpb_model_param_decl(model, params[i].key);
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
