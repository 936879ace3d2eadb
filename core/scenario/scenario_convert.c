/* YAML values of run keys -> typed values (scenario_convert.h). */
#include "scenario/scenario_convert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "scenario/scenario_range.h"
#include "scenario/scenario_scalar.h"

xpb_status xpb_origin_status(const struct xpb_yorigin *origin)
{
    return origin && origin->set ? XPB_INVALID_ARGUMENT : XPB_PARSE_ERROR;
}

/* What a key accepts, for messages: the table's description, or "a value" for a model
 * parameter. Returns buf. */
static char *expected(char *buf, size_t size, const struct xpb_skey *key)
{
    if (key->type == XPB_SKEY_PARAMS) {
        snprintf(buf, size, "a value");
        return buf;
    }
    return xpb_skey_expected(buf, size, key);
}

/* "<where>: <label>: expected <what><suffix>, found <node>" */
static xpb_status bad_value(const struct xpb_skey *key, const char *label, const char *suffix,
                            const struct xpb_ynode *node, const struct xpb_yorigin *origin,
                            xpb_err *err)
{
    char where[512], what[256], found[256];
    xpb_yorigin_where(where, sizeof where, origin, node->line, node->column);
    expected(what, sizeof what, key);
    xpb_ynode_describe(found, sizeof found, node);
    return xpb_err_set(err, xpb_origin_status(origin), "%s: %s: expected %s%s, found %s", where,
                       label, what, suffix, found);
}

/* YAML 1.1 booleans: true/false, yes/no, on/off in lower, capitalised and upper case. */
static int parse_bool(const char *s, uint64_t *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = 1;
            return 1;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = 0;
            return 1;
        }
    }
    return 0;
}

/* The value of the choice spelled `s`; 0 when there is none. */
static int parse_choice(const struct xpb_skey *key, const char *s, uint64_t *out)
{
    if (key->type == XPB_SKEY_PRECISION) {
        uint32_t precision;
        if (xpb_precision_parse(&precision, s) != 0)
            return 0;
        *out = precision;
        return 1;
    }
    for (const struct xpb_skey_choice *c = key->choices; c->word; c++) {
        if (strcmp(c->word, s) == 0) {
            *out = c->value;
            return 1;
        }
    }
    return 0;
}

/* Converts the text of a non-null plain or quoted scalar; 0 when it is not a valid value. */
static int parse_scalar(struct xpb_svalue *out, const struct xpb_skey *key,
                        const struct xpb_ynode *scalar)
{
    const char *s = scalar->text;
    int negative = 0, overflow = 0;
    switch (key->type) {
    case XPB_SKEY_PARAMS: /* kept as text, checked against the model later */
        out->s = s;
        return 1;
    case XPB_SKEY_LABEL:
    case XPB_SKEY_NAME:
        out->s = s;
        return xpb_is_name(s, scalar->len);
    case XPB_SKEY_ENUM:
    case XPB_SKEY_WORD:
    case XPB_SKEY_PRECISION:
        return parse_choice(key, s, &out->u);
    case XPB_SKEY_UINT:
    case XPB_SKEY_U64:
        return !scalar->quoted && xpb_scalar_integer(s, &out->u, &negative, &overflow) &&
               !negative && !overflow && out->u >= key->min && out->u <= key->max;
    case XPB_SKEY_FLOAT:
        if (scalar->quoted || !xpb_scalar_number(s, &out->f) || !isfinite(out->f) ||
            out->f < key->fmin || out->f > key->fmax)
            return 0;
        if (out->f == 0)
            out->f = 0.0; /* no -0 */
        return 1;
    case XPB_SKEY_BOOL:
        return !scalar->quoted && parse_bool(s, &out->u);
    default:
        return 0;
    }
}

xpb_status xpb_skey_convert(struct xpb_svalue *out, const struct xpb_skey *key, const char *label,
                            const struct xpb_ynode *scalar, const struct xpb_yorigin *origin,
                            xpb_err *err)
{
    memset(out, 0, sizeof *out);
    out->node = scalar;
    if (scalar->kind != XPB_YNODE_SCALAR)
        return bad_value(key, label, "", scalar, origin, err);
    if (xpb_ynode_is_null(scalar)) {
        if (!key->nullable)
            return bad_value(key, label, "", scalar, origin, err);
        out->f = NAN; /* and s NULL: the model's default */
        return XPB_OK;
    }
    if (!parse_scalar(out, key, scalar))
        return bad_value(key, label, "", scalar, origin, err);
    return XPB_OK;
}

void xpb_svalues_free(struct xpb_svalues *v)
{
    free(v->items);
    free(v->generated);
    memset(v, 0, sizeof *v);
}

/* The values of the range `map` for `key`: its ends must be values of the key, then every
 * value it gives is converted as a list's item would be. */
static xpb_status range_values(struct xpb_svalues *out, const struct xpb_skey *key,
                               const char *label, const struct xpb_ynode *map,
                               const struct xpb_yorigin *origin, xpb_err *err)
{
    struct xpb_srange r;
    struct xpb_svalue end;
    size_t n;
    const xpb_status bad = xpb_origin_status(origin);
    xpb_status st = xpb_srange_read(&r, map, label, bad, origin, err);
    if (st == XPB_OK)
        st = xpb_skey_convert(&end, key, label, r.from, origin, err);
    if (st == XPB_OK)
        st = xpb_skey_convert(&end, key, label, r.to, origin, err);
    if (st == XPB_OK)
        st = xpb_srange_values(&out->generated, &n, &r,
                               key->type == XPB_SKEY_UINT || key->type == XPB_SKEY_U64, label, bad,
                               origin, err);
    if (st != XPB_OK)
        return st;
    if (!(out->items = calloc(n, sizeof *out->items))) {
        xpb_svalues_free(out);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    out->n = n;
    out->swept = 1;
    for (size_t i = 0; i < n; i++)
        if ((st = xpb_skey_convert(&out->items[i], key, label, &out->generated[i], origin, err))) {
            xpb_svalues_free(out);
            return st;
        }
    return XPB_OK;
}

xpb_status xpb_svalues_convert(struct xpb_svalues *out, const struct xpb_skey *key,
                               const char *label, const struct xpb_ynode *value,
                               const struct xpb_yorigin *origin, xpb_err *err)
{
    int list = value->kind == XPB_YNODE_SEQUENCE;
    memset(out, 0, sizeof *out);
    if (value->kind == XPB_YNODE_MAPPING && xpb_srange_allowed(key->type))
        return range_values(out, key, label, value, origin, err);
    if (value->kind == XPB_YNODE_MAPPING || (list && value->n_items == 0) ||
        (list && key->type == XPB_SKEY_LABEL))
        return bad_value(key, label,
                         key->type == XPB_SKEY_LABEL ? "" : " or a non-empty list of them", value,
                         origin, err);
    size_t n = list ? value->n_items : 1;
    if (!(out->items = calloc(n, sizeof *out->items)))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    out->n = n;
    out->swept = list;
    for (size_t i = 0; i < n; i++) {
        const struct xpb_ynode *item = list ? value->items[i] : value;
        xpb_status st = item->kind == XPB_YNODE_SCALAR
                            ? xpb_skey_convert(&out->items[i], key, label, item, origin, err)
                            : bad_value(key, label, " in the list", item, origin, err);
        if (st != XPB_OK) {
            xpb_svalues_free(out);
            return st;
        }
    }
    return XPB_OK;
}
