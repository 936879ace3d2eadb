/* The run keys of a mapping as typed fields, and their merging by precedence
 * (scenario_fields.h). */
#include "scenario/scenario_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario_suggest.h"

void xpb_sfields_free(struct xpb_sfields *f)
{
    for (size_t i = 0; !f->borrowed && i < f->n; i++)
        xpb_svalues_free(&f->items[i].values);
    free(f->items);
    f->items = NULL;
    f->n = f->cap = 0;
}

xpb_status xpb_sfields_push(struct xpb_sfields *f, struct xpb_sfield *field)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 4;
        struct xpb_sfield *items = realloc(f->items, cap * sizeof *items);
        if (!items) {
            if (!f->borrowed)
                xpb_svalues_free(&field->values);
            return XPB_OUT_OF_MEMORY;
        }
        f->items = items;
        f->cap = cap;
    }
    f->items[f->n++] = *field;
    return XPB_OK;
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

/* The position of node as "<file>:<line>:<column>" in buf; returns buf. */
static const char *where_of(char *buf, size_t size, const struct xpb_yorigin *origin,
                            const struct xpb_ynode *node)
{
    return xpb_yorigin_where(buf, size, origin, node->line, node->column);
}

/* Converts `value` of key `key_node` into a new field of out. */
static xpb_status add_field(struct xpb_sfields *out, const struct xpb_skey *key, const char *param,
                            const char *label, const struct xpb_ynode *key_node,
                            const struct xpb_ynode *value, const struct xpb_yorigin *origin,
                            xpb_err *err)
{
    struct xpb_sfield f = {.key = key,
                           .param = param,
                           .origin = origin,
                           .line = key_node->line,
                           .column = key_node->column};
    xpb_status st = xpb_svalues_convert(&f.values, key, label, value, origin, err);
    if (st != XPB_OK)
        return st;
    if (xpb_sfields_push(out, &f) != XPB_OK)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    return XPB_OK;
}

/* Checks the name of the i-th model parameter of `map`: [a-z0-9_], not `variant`, not seen
 * before, not beyond the limit. */
static xpb_status check_param_name(const struct xpb_ynode *map, size_t i,
                                   const struct xpb_yorigin *origin, xpb_err *err)
{
    char where[512], found[256];
    const struct xpb_ynode *k = xpb_ynode_map_key(map, i);
    where_of(where, sizeof where, origin, k);
    if (i == XPB_SCENARIO_MAX_PARAMS)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: params: expected at most %d model parameters, found more", where,
                           XPB_SCENARIO_MAX_PARAMS);
    if (!xpb_is_param_name(k->text, k->len))
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: params: expected a parameter name of [a-z0-9_], found %s", where,
                           xpb_ynode_describe(found, sizeof found, k));
    if (strcmp(k->text, "variant") == 0)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: params: expected a model parameter other than the variant (set "
                           "the run key 'variant'), found 'variant'",
                           where);
    for (size_t j = 0; j < i; j++) {
        const struct xpb_ynode *prev = xpb_ynode_map_key(map, j);
        if (strcmp(prev->text, k->text) == 0)
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "%s: params.%s: expected each parameter once, found it again "
                               "(first at line %d, column %d)",
                               where, k->text, prev->line, prev->column);
    }
    return XPB_OK;
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
    for (size_t i = 0; i < xpb_ynode_map_size(map); i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(map, i);
        xpb_status st = check_param_name(map, i, origin, err);
        if (st != XPB_OK)
            return st;
        snprintf(label, sizeof label, "params.%s", k->text);
        st =
            add_field(out, params_key, k->text, label, k, xpb_ynode_map_value(map, i), origin, err);
        if (st != XPB_OK)
            return st;
    }
    return XPB_OK;
}

/* The run key named by key node k of a mapping, refusing unknown keys, `name` in the
 * defaults and repeated keys (seen[] holds the key node of every key met so far). */
static xpb_status find_key(const struct xpb_skey **out, const struct xpb_ynode *k,
                           const struct xpb_ynode **seen, int is_defaults,
                           const struct xpb_yorigin *origin, xpb_err *err)
{
    char where[512];
    size_t n_keys;
    const struct xpb_skey *table = xpb_skey_table(&n_keys);
    const struct xpb_skey *key = xpb_skey_find(k->text, k->len);
    where_of(where, sizeof where, origin, k);
    if (!key)
        return xpb_skey_unknown(err, XPB_PARSE_ERROR, where, k->text, k->len, !is_defaults, 0);
    if (is_defaults && key->type == XPB_SKEY_LABEL)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: defaults: expected run keys other than 'name' (a name labels "
                           "one run), found 'name'",
                           where);
    size_t index = (size_t)(key - table);
    if (seen[index])
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: %s: expected each key once, found it again (first at line %d, "
                           "column %d)",
                           where, key->name, seen[index]->line, seen[index]->column);
    seen[index] = k;
    *out = key;
    return XPB_OK;
}

xpb_status xpb_sfields_from_map(struct xpb_sfields *out, struct xpb_svalue *label,
                                const struct xpb_ynode *map, int is_defaults,
                                const struct xpb_yorigin *origin, xpb_err *err)
{
    const struct xpb_ynode *seen[XPB_SKEY_MAX] = {0};
    if (label)
        memset(label, 0, sizeof *label);
    for (size_t i = 0; i < xpb_ynode_map_size(map); i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(map, i);
        const struct xpb_ynode *v = xpb_ynode_map_value(map, i);
        const struct xpb_skey *key = NULL;
        xpb_status st = find_key(&key, k, seen, is_defaults, origin, err);
        if (st != XPB_OK)
            return st;
        if (key->type == XPB_SKEY_LABEL) {
            struct xpb_svalue name;
            st = xpb_skey_convert(&name, key, key->name, v, origin, err);
            if (st == XPB_OK && label)
                *label = name;
        } else if (key->type == XPB_SKEY_PARAMS) {
            st = params_from_map(out, key, v, origin, err);
        } else {
            st = add_field(out, key, NULL, key->name, k, v, origin, err);
        }
        if (st != XPB_OK)
            return st;
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

/* Adds src's fields to out (borrowed): a new field is appended, a known one takes src's
 * values and keeps the earlier of the two positions. `unique`: src has no field twice (a
 * mapping's fields; --set may repeat a key). */
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
        struct xpb_sfield f = src->items[i];
        struct xpb_sfield *have = (struct xpb_sfield *)xpb_sfields_find(out, f.key, f.param);
        if (!have) {
            if (xpb_sfields_push(out, &f) != XPB_OK)
                return XPB_OUT_OF_MEMORY;
            continue;
        }
        struct xpb_sfield merged = earlier(have, &f) ? *have : f;
        merged.values = f.values;
        merged.origin = f.origin;
        *have = merged;
    }
    return XPB_OK;
}

xpb_status xpb_sfields_merge(struct xpb_sfields *out, const struct xpb_sfields *defaults,
                             const struct xpb_sfields *run, const struct xpb_sfields *overrides)
{
    out->borrowed = 1;
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
