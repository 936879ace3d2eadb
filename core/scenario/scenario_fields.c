/* Validating the run keys of a mapping or a --set option into fields, and merging them by
 * precedence (scenario_fields.h). */
#include "scenario_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xpb_sfields_free(struct xpb_sfields *f)
{
    free(f->items);
    f->items = NULL;
    f->n = f->cap = 0;
}

static int same_field(const struct xpb_sfield *f, const struct xpb_skey *key, const char *param)
{
    if (f->key != key)
        return 0;
    if (!f->param || !param)
        return f->param == param;
    return strcmp(f->param, param) == 0;
}

const struct xpb_sfield *xpb_sfields_find(const struct xpb_sfields *f, const struct xpb_skey *key,
                                          const char *param)
{
    for (size_t i = 0; i < f->n; i++)
        if (same_field(&f->items[i], key, param))
            return &f->items[i];
    return NULL;
}

static xpb_status push(struct xpb_sfields *f, const struct xpb_sfield *field)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct xpb_sfield *items = realloc(f->items, cap * sizeof *items);
        if (!items)
            return XPB_OUT_OF_MEMORY;
        f->items = items;
        f->cap = cap;
    }
    f->items[f->n++] = *field;
    return XPB_OK;
}

/* The position of node as "<file>:<line>:<column>" or "--set ..." in buf; returns buf. */
static const char *where_of(char *buf, size_t size, const struct xpb_yorigin *origin,
                            const struct xpb_ynode *node)
{
    return xpb_yorigin_where(buf, size, origin, node->line, node->column);
}

/* Whether text is a model parameter name: [a-z0-9_]+, at most 64 characters. */
static int is_param_name(const char *text, size_t len)
{
    if (len == 0 || len > 64)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

/* Checks one scalar of a field: a run key value, or a model parameter value (any non-null
 * scalar, kept as text). */
static xpb_status check_scalar(const struct xpb_skey *key, const char *label,
                               const struct xpb_ynode *node, const struct xpb_yorigin *origin,
                               xpb_err *err)
{
    if (key->type == XPB_SKEY_PARAMS) {
        if (node->kind == XPB_YNODE_SCALAR && !xpb_ynode_is_null(node))
            return XPB_OK;
        char where[512], found[256];
        return xpb_err_set(err, xpb_origin_status(origin), "%s: %s: expected a value, found %s",
                           where_of(where, sizeof where, origin, node), label,
                           xpb_ynode_describe(found, sizeof found, node));
    }
    struct xpb_svalue v;
    return xpb_skey_convert(&v, key, label, node, origin, err);
}

/* Checks a field value: a scalar, or a non-empty list of scalars (a sweep axis). */
static xpb_status check_value(const struct xpb_skey *key, const char *label,
                              const struct xpb_ynode *value, const struct xpb_yorigin *origin,
                              xpb_err *err)
{
    char where[512], what[256], found[256];
    if (key->type == XPB_SKEY_PARAMS)
        snprintf(what, sizeof what, "a value");
    else
        xpb_skey_expected(what, sizeof what, key);
    if (value->kind == XPB_YNODE_MAPPING ||
        (value->kind == XPB_YNODE_SEQUENCE && (value->n_items == 0 || key->type == XPB_SKEY_LABEL)))
        return xpb_err_set(err, xpb_origin_status(origin), "%s: %s: expected %s%s, found %s",
                           where_of(where, sizeof where, origin, value), label, what,
                           key->type == XPB_SKEY_LABEL ? "" : " or a non-empty list of them",
                           xpb_ynode_describe(found, sizeof found, value));
    if (value->kind == XPB_YNODE_SCALAR)
        return check_scalar(key, label, value, origin, err);
    for (size_t i = 0; i < value->n_items; i++) {
        const struct xpb_ynode *item = value->items[i];
        if (item->kind != XPB_YNODE_SCALAR)
            return xpb_err_set(err, xpb_origin_status(origin),
                               "%s: %s: expected %s in the list, found %s",
                               where_of(where, sizeof where, origin, item), label, what,
                               xpb_ynode_describe(found, sizeof found, item));
        xpb_status st = check_scalar(key, label, item, origin, err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* The names of the run keys, for suggestions and lists: without `name` unless with_label,
 * and without `params` for --set (which spells it params.<name>). */
static size_t run_key_names(const char **names, int with_label, int with_params)
{
    size_t n_keys, n = 0;
    const struct xpb_skey *keys = xpb_skey_table(&n_keys);
    for (size_t i = 0; i < n_keys; i++)
        if ((with_label || keys[i].type != XPB_SKEY_LABEL) &&
            (with_params || keys[i].type != XPB_SKEY_PARAMS))
            names[n++] = keys[i].name;
    return n;
}

/* "expected a run key, found 'bach' (did you mean 'batch'?)" or, without a close match, the
 * list of keys. `where` is already formatted. */
static xpb_status unknown_key(const char *where, const char *text, size_t len, int with_label,
                              int allow_params_dot, xpb_status status, xpb_err *err)
{
    const char *names[64];
    char found[256], list[768];
    size_t n = run_key_names(names, with_label, !allow_params_dot);
    const char *hint = xpb_suggest(text, len, names, n);
    xpb_yaml_quote(found, sizeof found, text, len);
    if (hint)
        return xpb_err_set(err, status, "%s: expected a run key%s, found %s (did you mean '%s'?)",
                           where, allow_params_dot ? " or params.<name>" : "", found, hint);
    size_t o = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", names[i]);
    return xpb_err_set(err, status, "%s: expected a run key%s (%s), found %s", where,
                       allow_params_dot ? " or params.<name>" : "", list, found);
}

/* Adds the entries of a `params` mapping as fields. */
static xpb_status params_from_map(struct xpb_sfields *out, const struct xpb_skey *params_key,
                                  const struct xpb_ynode *map, const struct xpb_yorigin *origin,
                                  xpb_err *err)
{
    char where[512], found[256], label[128];
    if (xpb_ynode_is_null(map))
        return XPB_OK; /* "params:" with nothing: no parameters */
    if (map->kind != XPB_YNODE_MAPPING)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: params: expected a mapping of model parameter names to values, "
                           "found %s",
                           where_of(where, sizeof where, origin, map),
                           xpb_ynode_describe(found, sizeof found, map));
    size_t n = xpb_ynode_map_size(map);
    for (size_t i = 0; i < n; i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(map, i);
        const struct xpb_ynode *v = xpb_ynode_map_value(map, i);
        if (i == XPB_SCENARIO_MAX_PARAMS)
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: params: expected at most %d model parameters, found more",
                               where_of(where, sizeof where, origin, k), XPB_SCENARIO_MAX_PARAMS);
        if (!is_param_name(k->text, k->len))
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: params: expected a parameter name of [a-z0-9_], found %s",
                               where_of(where, sizeof where, origin, k),
                               xpb_ynode_describe(found, sizeof found, k));
        if (strcmp(k->text, "variant") == 0)
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: params: expected a model parameter other than the variant "
                               "(set the run key 'variant'), found 'variant'",
                               where_of(where, sizeof where, origin, k));
        for (size_t j = 0; j < i; j++) {
            const struct xpb_ynode *prev = xpb_ynode_map_key(map, j);
            if (strcmp(prev->text, k->text) == 0)
                return xpb_err_set(err, XPB_PARSE_ERROR,
                                   "%s: params.%s: expected each parameter once, found it again "
                                   "(first at line %d, column %d)",
                                   where_of(where, sizeof where, origin, k), k->text, prev->line,
                                   prev->column);
        }
        snprintf(label, sizeof label, "params.%s", k->text);
        xpb_status st = check_value(params_key, label, v, origin, err);
        if (st != XPB_OK)
            return st;
        struct xpb_sfield f = {params_key, k->text, v, origin, 0, k->line, k->column, 0};
        if (push(out, &f) != XPB_OK)
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    return XPB_OK;
}

xpb_status xpb_sfields_from_map(struct xpb_sfields *out, const struct xpb_ynode **label,
                                const struct xpb_ynode *map, int is_defaults,
                                const struct xpb_yorigin *origin, xpb_err *err)
{
    char where[512];
    const struct xpb_ynode *seen[64] = {0};
    size_t n_keys;
    const struct xpb_skey *table = xpb_skey_table(&n_keys);
    if (label)
        *label = NULL;
    size_t n = xpb_ynode_map_size(map);
    for (size_t i = 0; i < n; i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(map, i);
        const struct xpb_ynode *v = xpb_ynode_map_value(map, i);
        const struct xpb_skey *key = xpb_skey_find(k->text, k->len);
        where_of(where, sizeof where, origin, k);
        if (!key)
            return unknown_key(where, k->text, k->len, !is_defaults, 0, XPB_PARSE_ERROR, err);
        if (is_defaults && key->type == XPB_SKEY_LABEL)
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: defaults: expected run keys other than 'name' (a name labels "
                               "one run), found 'name'",
                               where);
        size_t index = (size_t)(key - table);
        if (seen[index])
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: %s: expected each key once, found it again (first at line "
                               "%d, column %d)",
                               where, key->name, seen[index]->line, seen[index]->column);
        seen[index] = k;
        xpb_status st;
        if (key->type == XPB_SKEY_LABEL) {
            struct xpb_svalue sv;
            st = xpb_skey_convert(&sv, key, key->name, v, origin, err);
            if (st != XPB_OK)
                return st;
            if (label)
                *label = v;
            continue;
        }
        if (key->type == XPB_SKEY_PARAMS) {
            st = params_from_map(out, key, v, origin, err);
            if (st != XPB_OK)
                return st;
            continue;
        }
        st = check_value(key, key->name, v, origin, err);
        if (st != XPB_OK)
            return st;
        struct xpb_sfield f = {key, NULL, v, origin, 0, k->line, k->column, 0};
        if (push(out, &f) != XPB_OK)
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    return XPB_OK;
}

void xpb_soverrides_free(struct xpb_soverrides *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        if (o->trees)
            xpb_ynode_free(o->trees[i]);
        if (o->params)
            free(o->params[i]);
    }
    free(o->trees);
    free(o->params);
    free(o->origins);
    xpb_sfields_free(&o->fields);
    memset(o, 0, sizeof *o);
}

/* A null scalar at 1:1, for an option whose value is empty or "~"; owned by the caller
 * (NULL when out of memory). */
static struct xpb_ynode *null_node(void)
{
    struct xpb_ynode *n = calloc(1, sizeof *n);
    if (!n || !(n->text = calloc(1, 1))) {
        free(n);
        return NULL;
    }
    n->kind = XPB_YNODE_SCALAR;
    n->line = n->column = 1;
    return n;
}

/* Parses option i into o (arrays already allocated). */
static xpb_status parse_one(struct xpb_soverrides *o, size_t i, const char *text, xpb_err *err)
{
    char where[768], found[256];
    struct xpb_yorigin *origin = &o->origins[i];
    origin->file = NULL;
    origin->set = text;
    xpb_yorigin_where(where, sizeof where, origin, 0, 0);
    const char *eq = strchr(text, '=');
    if (!eq)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: expected key=value, found no '='",
                           where);
    size_t key_len = (size_t)(eq - text);
    const struct xpb_skey *key = NULL;
    const char *param = NULL;
    if (key_len > 7 && memcmp(text, "params.", 7) == 0) {
        size_t plen = key_len - 7;
        if (!is_param_name(text + 7, plen) || (plen == 7 && memcmp(text + 7, "variant", 7) == 0))
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "%s: expected params.<name> with a name of [a-z0-9_] other than "
                               "variant, found %s",
                               where, xpb_yaml_quote(found, sizeof found, text, key_len));
        if (!(o->params[i] = malloc(plen + 1)))
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        memcpy(o->params[i], text + 7, plen);
        o->params[i][plen] = '\0';
        param = o->params[i];
        key = xpb_skey_find("params", 6);
    } else {
        key = xpb_skey_find(text, key_len);
        if (!key || key->type == XPB_SKEY_LABEL || key->type == XPB_SKEY_PARAMS)
            return unknown_key(where, text, key_len, 0, 1, XPB_INVALID_ARGUMENT, err);
    }
    const char *value = eq + 1;
    xpb_status st = xpb_yaml_parse(&o->trees[i], origin, value, strlen(value), err);
    if (st != XPB_OK)
        return st == XPB_PARSE_ERROR ? XPB_INVALID_ARGUMENT : st;
    if (!o->trees[i] && !(o->trees[i] = null_node()))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    char label[128];
    snprintf(label, sizeof label, "%s%s", param ? "params." : "", param ? param : key->name);
    st = check_value(key, label, o->trees[i], origin, err);
    if (st != XPB_OK)
        return st;
    struct xpb_sfield f = {key, param, o->trees[i], origin, 1, 0, 0, i};
    if (push(&o->fields, &f) != XPB_OK)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    return XPB_OK;
}

xpb_status xpb_soverrides_parse(struct xpb_soverrides *out, const char *const *overrides, size_t n,
                                xpb_err *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return XPB_OK;
    out->n = n;
    out->origins = calloc(n, sizeof *out->origins);
    out->trees = calloc(n, sizeof *out->trees);
    out->params = calloc(n, sizeof *out->params);
    if (!out->origins || !out->trees || !out->params) {
        xpb_soverrides_free(out);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        xpb_status st = overrides[i] ? parse_one(out, i, overrides[i], err)
                                     : xpb_err_set(err, XPB_INVALID_ARGUMENT,
                                                   "--set: expected key=value, "
                                                   "found nothing");
        if (st != XPB_OK) {
            xpb_soverrides_free(out);
            return st;
        }
    }
    return XPB_OK;
}

/* Whether a comes before b in axis order. */
static int earlier(const struct xpb_sfield *a, const struct xpb_sfield *b)
{
    if (a->from_set != b->from_set)
        return !a->from_set;
    if (a->from_set)
        return a->set_index < b->set_index;
    if (a->line != b->line)
        return a->line < b->line;
    return a->column < b->column;
}

/* Adds src's fields to out: a new field is appended, a known one takes src's value and keeps
 * the earlier of the two positions. `unique`: src has no field twice (a mapping's fields;
 * --set may repeat a key). */
static xpb_status overlay(struct xpb_sfields *out, const struct xpb_sfields *src, int unique)
{
    if (src && unique && out->n == 0 && src->n > 0) { /* copy at once */
        struct xpb_sfield *items = malloc(src->n * sizeof *items);
        if (!items)
            return XPB_OUT_OF_MEMORY;
        memcpy(items, src->items, src->n * sizeof *items);
        free(out->items);
        out->items = items;
        out->n = out->cap = src->n;
        return XPB_OK;
    }
    for (size_t i = 0; src && i < src->n; i++) {
        const struct xpb_sfield *f = &src->items[i];
        struct xpb_sfield *have = (struct xpb_sfield *)xpb_sfields_find(out, f->key, f->param);
        if (!have) {
            if (push(out, f) != XPB_OK)
                return XPB_OUT_OF_MEMORY;
            continue;
        }
        struct xpb_sfield merged = earlier(have, f) ? *have : *f;
        merged.value = f->value;
        merged.origin = f->origin;
        *have = merged;
    }
    return XPB_OK;
}

xpb_status xpb_sfields_merge(struct xpb_sfields *out, const struct xpb_sfields *defaults,
                             const struct xpb_sfields *run, const struct xpb_sfields *overrides)
{
    if (overlay(out, defaults, 1) != XPB_OK || overlay(out, run, 1) != XPB_OK ||
        overlay(out, overrides, 0) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    /* Stable insertion sort: fields arrive almost in order (defaults, then the run's own keys
     * further down the file), so this is close to linear. */
    for (size_t i = 1; i < out->n; i++) {
        struct xpb_sfield f = out->items[i];
        size_t j = i;
        for (; j > 0 && earlier(&f, &out->items[j - 1]); j--)
            out->items[j] = out->items[j - 1];
        out->items[j] = f;
    }
    return XPB_OK;
}
