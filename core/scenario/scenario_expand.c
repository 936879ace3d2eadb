/* Sweep expansion (scenario_expand.h). */
#include "scenario/scenario_expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario_convert.h"
#include "scenario/scenario_ids.h"

uint64_t xpb_sfields_count(const struct xpb_sfields *fields)
{
    uint64_t count = 1;
    for (size_t i = 0; i < fields->n; i++) {
        size_t n = fields->items[i].values.n;
        if (n != 0 && count > UINT64_MAX / n)
            return UINT64_MAX;
        count *= n;
    }
    return count;
}

uint64_t xpb_sfields_run_bytes(const struct xpb_sfields *fields, const struct xpb_svalue *label,
                               size_t file_len)
{
    enum { ALLOC = 32 }; /* what malloc adds to every block, roughly */
    uint64_t bytes = sizeof(xpb_run_config) + file_len + 5 * ALLOC + 64; /* + backend, data */
    bytes += (label->s ? strlen(label->s) : 256) + 16; /* the id's base: name or model-mode */
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_sfield *f = &fields->items[i];
        size_t longest = 0;
        for (size_t k = 0; k < f->values.n; k++)
            if (f->values.items[k].node->len > longest)
                longest = f->values.items[k].node->len;
        size_t name_len = f->param ? strlen(f->param) : strlen(f->key->name);
        if (longest < 32)
            longest = 32; /* canonical numbers may be longer than written */
        if (f->param)
            bytes += sizeof(xpb_kv) + name_len + longest + 2 + 2 * ALLOC;
        else if (f->key->type == XPB_SKEY_NAME)
            bytes += longest + 1 + ALLOC;
        if (f->values.swept)
            bytes += name_len + longest + 2; /* "key=value," in the id */
    }
    return bytes;
}

/* Copies the values of combination `index` into rc: run keys into their members, model
 * parameters into rc->params. */
static xpb_status copy_values(xpb_run_config *rc, const struct xpb_sfields *fields,
                              const size_t *index)
{
    size_t n_params = 0;
    for (size_t i = 0; i < fields->n; i++)
        n_params += fields->items[i].param != NULL;
    if (n_params && !(rc->params = calloc(n_params, sizeof *rc->params)))
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_sfield *f = &fields->items[i];
        const struct xpb_svalue *v = &f->values.items[index[i]];
        if (f->param) {
            xpb_kv *kv = &rc->params[rc->n_params++];
            if (!(kv->key = strdup(f->param)) || !(kv->value = strdup(v->s)))
                return XPB_OUT_OF_MEMORY;
        } else if (xpb_skey_store(rc, f->key, v) != XPB_OK) {
            return XPB_OUT_OF_MEMORY;
        }
    }
    return XPB_OK;
}

/* max_steps is 0 (no limit) or at least min_steps; the error points at the max_steps value. */
static xpb_status check_max_steps(const xpb_run_config *rc, const struct xpb_sfields *fields,
                                  const size_t *index, xpb_err *err)
{
    const struct xpb_sfield *f = xpb_sfields_find(fields, xpb_skey_find("max_steps", 9), NULL);
    if (!f || rc->max_steps == 0 || rc->max_steps >= rc->min_steps)
        return XPB_OK;
    const struct xpb_ynode *node = f->values.items[index[f - fields->items]].node;
    char where[512];
    xpb_yorigin_where(where, sizeof where, f->origin, node->line, node->column);
    return xpb_err_set(err, xpb_origin_status(f->origin),
                       "%s: max_steps: expected 0 (no limit) or at least min_steps (%u) in run "
                       "%s, found %u",
                       where, (unsigned)rc->min_steps, rc->id, (unsigned)rc->max_steps);
}

/* Fills one run config from combination `index` of the fields. */
static xpb_status fill(xpb_run_config *rc, const struct xpb_sfields *fields, const size_t *index,
                       const struct xpb_svalue *label, const char *file, int line, xpb_err *err)
{
    rc->line = line;
    if (!(rc->file = strdup(file)) || xpb_skey_defaults(rc) != XPB_OK ||
        copy_values(rc, fields, index) != XPB_OK)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (!rc->model)
        return xpb_err_set(err, XPB_INTERNAL, "%s:%d: run without a model", file, line);
    if (!(rc->id = xpb_run_id(rc, fields, index, label)))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    return check_max_steps(rc, fields, index, err);
}

xpb_status xpb_expand_run(xpb_run_config *out, const struct xpb_sfields *fields,
                          const struct xpb_svalue *label, const char *file, int line, xpb_err *err)
{
    uint64_t count = xpb_sfields_count(fields);
    size_t *index = calloc(fields->n ? fields->n : 1, sizeof *index);
    xpb_status st = XPB_OK;
    if (!index)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    for (uint64_t c = 0; c < count; c++) {
        st = fill(&out[c], fields, index, label, file, line, err);
        if (st != XPB_OK)
            break;
        /* Next combination: the last axis varies fastest. */
        for (size_t i = fields->n; i-- > 0;) {
            if (++index[i] < fields->items[i].values.n)
                break;
            index[i] = 0;
        }
    }
    free(index);
    return st;
}
