/* Run ids and their uniqueness (scenario_ids.h). */
#include "scenario/scenario_ids.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"

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

char *xpb_run_id(const xpb_run_config *rc, const struct xpb_sfields *fields, const size_t *index,
                 const struct xpb_svalue *label)
{
    struct strbuf b = {0};
    char text[512];
    if (label->s) {
        sb_add(&b, label->s);
    } else {
        sb_add(&b, rc->model);
        sb_add(&b, "-");
        sb_add(&b, xpb_mode_name(rc->mode));
    }
    int axes = 0;
    for (size_t i = 0; i < fields->n; i++) {
        const struct xpb_sfield *f = &fields->items[i];
        if (!f->values.swept)
            continue;
        const struct xpb_svalue *v = &f->values.items[index[i]];
        sb_add(&b, axes++ ? "," : "[");
        sb_add(&b, f->param ? f->param : f->key->name);
        sb_add(&b, "=");
        sb_add(&b, f->param ? v->s : xpb_skey_format(text, sizeof text, f->key, v));
    }
    if (axes)
        sb_add(&b, "]");
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
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

/* The first free "<id>#k" for k from base->next_suffix on, entered into the set. Returns a
 * new string owned by the caller, or NULL when out of memory. */
static char *next_free_id(struct id_slot *slots, size_t mask, struct id_slot *base, const char *id)
{
    size_t len = strlen(id);
    char *candidate = malloc(len + 16);
    if (!candidate)
        return NULL;
    for (unsigned k = base->next_suffix;; k++) {
        snprintf(candidate, len + 16, "%s#%u", id, k);
        struct id_slot *slot = find_slot(slots, mask, candidate);
        if (!slot->id) {
            slot->id = candidate;
            slot->next_suffix = 2;
            base->next_suffix = k + 1;
            return candidate;
        }
    }
}

xpb_status xpb_run_ids_unique(xpb_run_config *runs, size_t n, xpb_err *err)
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
        char *unique = next_free_id(slots, cap - 1, base, runs[r].id);
        if (!unique) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            break;
        }
        free(runs[r].id);
        runs[r].id = unique;
    }
    free(slots);
    return st;
}
