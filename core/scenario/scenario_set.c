/* --set options (scenario_set.h). */
#include "scenario/scenario_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario_suggest.h"

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

/* The key of option i, `text` up to its '=' (key_len bytes): a run key other than `name` and
 * `params`, or params.<name> (then o->params[i] receives a copy of the name). */
static xpb_status option_key(const struct xpb_skey **key, struct xpb_soverrides *o, size_t i,
                             const char *text, size_t key_len, const char *where, xpb_err *err)
{
    char found[256];
    if (key_len > 7 && memcmp(text, "params.", 7) == 0) {
        size_t plen = key_len - 7;
        if (!xpb_is_param_name(text + 7, plen) ||
            (plen == 7 && memcmp(text + 7, "variant", 7) == 0))
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "%s: expected params.<name> with a name of [a-z0-9_] other than "
                               "variant, found %s",
                               where, xpb_yaml_quote(found, sizeof found, text, key_len));
        if (!(o->params[i] = malloc(plen + 1)))
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        memcpy(o->params[i], text + 7, plen);
        o->params[i][plen] = '\0';
        *key = xpb_skey_find("params", 6);
        return XPB_OK;
    }
    *key = xpb_skey_find(text, key_len);
    if (!*key || (*key)->type == XPB_SKEY_LABEL || (*key)->type == XPB_SKEY_PARAMS)
        return xpb_skey_unknown(err, XPB_INVALID_ARGUMENT, where, text, key_len, 0, 1);
    return XPB_OK;
}

/* Parses option i into o (arrays already allocated). */
static xpb_status parse_one(struct xpb_soverrides *o, size_t i, const char *text, xpb_err *err)
{
    char where[768], label[128];
    const struct xpb_skey *key = NULL;
    struct xpb_yorigin *origin = &o->origins[i];
    origin->file = NULL;
    origin->set = text;
    xpb_yorigin_where(where, sizeof where, origin, 0, 0);
    const char *eq = strchr(text, '=');
    if (!eq)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: expected key=value, found no '='",
                           where);
    xpb_status st = option_key(&key, o, i, text, (size_t)(eq - text), where, err);
    if (st != XPB_OK)
        return st;
    const char *value = eq + 1;
    st = xpb_yaml_parse(&o->trees[i], origin, value, strlen(value), err);
    if (st != XPB_OK)
        return st == XPB_PARSE_ERROR ? XPB_INVALID_ARGUMENT : st;
    if (!o->trees[i] && !(o->trees[i] = null_node()))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    const char *param = o->params[i];
    snprintf(label, sizeof label, "%s%s", param ? "params." : "", param ? param : key->name);
    struct xpb_sfield f = {
        .key = key, .param = param, .origin = origin, .from_set = 1, .set_index = i};
    st = xpb_svalues_convert(&f.values, key, label, o->trees[i], origin, err);
    if (st != XPB_OK)
        return st;
    if (xpb_sfields_push(&o->fields, &f) != XPB_OK)
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
                                                   "--set: expected key=value, found nothing");
        if (st != XPB_OK) {
            xpb_soverrides_free(out);
            return st;
        }
    }
    return XPB_OK;
}
