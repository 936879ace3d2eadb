/* Sweep expansion and run ids (scenario_expand.h). */
#include "scenario_expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t xpb_sfields_count(const struct xpb_sfields *fields)
{
    uint64_t count = 1;
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_ynode *v = fields->items[i].value;
        if (v->kind != XPB_YNODE_SEQUENCE)
            continue;
        if (v->n_items != 0 && count > UINT64_MAX / v->n_items)
            return UINT64_MAX;
        count *= v->n_items;
    }
    return count;
}

uint64_t xpb_sfields_run_bytes(const struct xpb_sfields *fields, const struct xpb_ynode *label,
                               size_t file_len)
{
    enum { ALLOC = 32 }; /* what malloc adds to every block, roughly */
    uint64_t bytes = sizeof(xpb_run_config) + file_len + 5 * ALLOC + 64; /* + backend, data */
    bytes += (label ? label->len : 256) + 16; /* the id's base: name or model-mode */
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_sfield *f = &fields->items[i];
        const struct xpb_ynode *v = f->value;
        size_t longest = v->kind == XPB_YNODE_SCALAR ? v->len : 0;
        for (size_t k = 0; v->kind == XPB_YNODE_SEQUENCE && k < v->n_items; k++)
            if (v->items[k]->len > longest)
                longest = v->items[k]->len;
        size_t name_len = f->param ? strlen(f->param) : strlen(f->key->name);
        if (longest < 32)
            longest = 32; /* canonical numbers may be longer than written */
        if (f->param)
            bytes += sizeof(xpb_kv) + name_len + longest + 2 + 2 * ALLOC;
        else if (f->key->type == XPB_SKEY_NAME)
            bytes += longest + 1 + ALLOC;
        if (v->kind == XPB_YNODE_SEQUENCE)
            bytes += name_len + longest + 2; /* "key=value," in the id */
    }
    return bytes;
}

/* A growing string; `failed` records an allocation failure (then p may be partial). */
struct strbuf {
    char *p;
    size_t len, cap;
    int failed;
};

static void sb_add(struct strbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* The node of field f for the current combination (borrowed from the field's tree). */
static const struct xpb_ynode *current(const struct xpb_sfield *f, size_t index)
{
    return f->value->kind == XPB_YNODE_SEQUENCE ? f->value->items[index] : f->value;
}

/* "<name or model-mode>[key=value,...]" over the swept fields. Returns a malloc'd string or
 * NULL when out of memory. */
static char *make_id(const xpb_run_config *rc, const struct xpb_sfields *fields,
                     const size_t *index, const struct xpb_ynode *label)
{
    struct strbuf b = {0};
    char text[512];
    if (label) {
        sb_add(&b, label->text);
    } else {
        sb_add(&b, rc->model);
        sb_add(&b, rc->mode == XPB_MODE_INFERENCE ? "-inference" : "-train");
    }
    int axes = 0;
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_sfield *f = &fields->items[i];
        if (f->value->kind != XPB_YNODE_SEQUENCE)
            continue;
        const struct xpb_ynode *node = current(f, index[i]);
        sb_add(&b, axes++ ? "," : "[");
        sb_add(&b, f->param ? f->param : f->key->name);
        sb_add(&b, "=");
        if (f->param) {
            sb_add(&b, node->text);
        } else {
            struct xpb_svalue v;
            if (xpb_skey_convert(&v, f->key, f->key->name, node, f->origin, NULL) != XPB_OK)
                snprintf(text, sizeof text, "?");
            else
                xpb_skey_format(text, sizeof text, f->key, &v);
            sb_add(&b, text);
        }
    }
    if (axes)
        sb_add(&b, "]");
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* Fills one run config from the current combination `index` of the fields. */
static xpb_status fill(xpb_run_config *rc, const struct xpb_sfields *fields, const size_t *index,
                       const struct xpb_ynode *label, const char *file, int line, xpb_err *err)
{
    xpb_skey_defaults(rc);
    rc->line = line;
    if (!(rc->file = strdup(file)) || !(rc->backend = strdup("cpu_ref")) ||
        !(rc->data = strdup("synthetic")))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    size_t n_params = 0;
    for (size_t i = 0; i < fields->n; i++)
        n_params += fields->items[i].param != NULL;
    if (n_params && !(rc->params = calloc(n_params, sizeof *rc->params)))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");

    const struct xpb_sfield *max_steps = NULL;
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_sfield *f = &fields->items[i];
        const struct xpb_ynode *node = current(f, index[i]);
        xpb_status st;
        if (f->param) {
            xpb_kv *kv = &rc->params[rc->n_params++];
            if (!(kv->key = strdup(f->param)) || !(kv->value = strdup(node->text)))
                return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            continue;
        }
        struct xpb_svalue v;
        st = xpb_skey_convert(&v, f->key, f->key->name, node, f->origin, err);
        if (st != XPB_OK)
            return st;
        if (xpb_skey_store(rc, f->key, &v) != XPB_OK)
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        if (strcmp(f->key->name, "max_steps") == 0)
            max_steps = f;
    }
    if (!rc->model)
        return xpb_err_set(err, XPB_INTERNAL, "%s:%d: run without a model", file, line);
    if (!(rc->id = make_id(rc, fields, index, label)))
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if (max_steps && rc->max_steps != 0 && rc->max_steps < rc->min_steps) {
        const struct xpb_ynode *node = current(max_steps, index[max_steps - fields->items]);
        char where[512];
        xpb_yorigin_where(where, sizeof where, max_steps->origin, node->line, node->column);
        return xpb_err_set(err, xpb_origin_status(max_steps->origin),
                           "%s: max_steps: expected 0 (no limit) or at least min_steps (%u) in "
                           "run %s, found %u",
                           where, (unsigned)rc->min_steps, rc->id, (unsigned)rc->max_steps);
    }
    return XPB_OK;
}

xpb_status xpb_expand_run(xpb_run_config *out, const struct xpb_sfields *fields,
                          const struct xpb_ynode *label, const char *file, int line, xpb_err *err)
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
        /* Next combination: the last list varies fastest. */
        for (size_t i = fields->n; i-- > 0;) {
            const struct xpb_ynode *v = fields->items[i].value;
            if (v->kind != XPB_YNODE_SEQUENCE)
                continue;
            if (++index[i] < v->n_items)
                break;
            index[i] = 0;
        }
    }
    free(index);
    return st;
}

/* ---- unique ids: an open-addressing set of the ids handed out so far ---- */

struct id_slot {
    const char *id;       /* owned by a run; NULL: empty slot */
    unsigned next_suffix; /* for a base id that repeats: the next "#k" to try */
};

static uint64_t hash_string(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The slot holding `id`, or the empty slot where it would go. The table is never full. */
static struct id_slot *find_slot(struct id_slot *slots, size_t mask, const char *id)
{
    for (size_t i = (size_t)hash_string(id) & mask;; i = (i + 1) & mask)
        if (!slots[i].id || strcmp(slots[i].id, id) == 0)
            return &slots[i];
}

xpb_status xpb_expand_unique_ids(xpb_run_config *runs, size_t n, xpb_err *err)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    struct id_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st = XPB_OK;
    for (size_t r = 0; r < n; r++) {
        struct id_slot *base = find_slot(slots, cap - 1, runs[r].id);
        if (!base->id) {
            base->id = runs[r].id;
            base->next_suffix = 2;
            continue;
        }
        size_t len = strlen(runs[r].id);
        char *candidate = malloc(len + 16);
        if (!candidate) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            break;
        }
        for (unsigned k = base->next_suffix;; k++) {
            snprintf(candidate, len + 16, "%s#%u", runs[r].id, k);
            struct id_slot *slot = find_slot(slots, cap - 1, candidate);
            if (!slot->id) {
                slot->id = candidate;
                slot->next_suffix = 2;
                base->next_suffix = k + 1;
                break;
            }
        }
        free(runs[r].id);
        runs[r].id = candidate;
    }
    free(slots);
    return st;
}
