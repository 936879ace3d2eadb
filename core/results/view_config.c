/* Configurations compared key by key (see view_config.h), through one table of the config's
 * keys in the order of docs/results.md. */
#include "results/view_config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

enum key_type { T_STR, T_INT, T_NUM, T_BOOL, T_OPTIMIZER, T_PARAMS };

static const struct {
    const char *key;
    enum key_type type;
    size_t offset;
    const char *v1_default; /* what an absent key means in a version-1 document, or NULL */
} keys[] = {
#define KEY(name, type, member, dflt)                                                              \
    {                                                                                              \
        name, type, offsetof(struct xpb_results_config, member), dflt                              \
    }
    KEY("model", T_STR, model, NULL),         KEY("variant", T_STR, variant, NULL),
    KEY("mode", T_STR, mode, NULL),           KEY("batch", T_INT, batch, NULL),
    KEY("precision", T_STR, precision, NULL), KEY("backend", T_STR, backend, NULL),
    KEY("fusion", T_BOOL, fusion, NULL),      KEY("threads", T_INT, threads, NULL),
    KEY("device", T_INT, device, NULL),       KEY("warmup", T_INT, warmup, NULL),
    KEY("min_steps", T_INT, min_steps, NULL), KEY("min_time_s", T_NUM, min_time_s, NULL),
    KEY("max_steps", T_INT, max_steps, NULL), KEY("repeats", T_INT, repeats, NULL),
    KEY("seed", T_INT, seed, NULL),           KEY("data", T_STR, data, NULL),
    KEY("transfer", T_STR, transfer, NULL),   KEY("optimizer", T_OPTIMIZER, optimizer, NULL),
    KEY("params", T_PARAMS, params, NULL),    KEY("allow_emulated", T_BOOL, allow_emulated, "0"),
    KEY("parallel", T_STR, parallel, "none"), KEY("world_size", T_INT, world_size, "1"),
#undef KEY
};
#define N_KEYS (sizeof keys / sizeof keys[0])

const char *xpb_results_config_key(size_t i)
{
    return i < N_KEYS ? keys[i].key : NULL;
}

static int find(const char *key)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].key, key) == 0)
            return (int)i;
    return -1;
}

#define MEMBER(c, k, type) ((const type *)((const char *)(c) + keys[k].offset))

static int present(const struct xpb_results_config *c, int k)
{
    switch (keys[k].type) {
    case T_STR:
        return *MEMBER(c, k, const char *) != NULL;
    case T_INT:
        return *MEMBER(c, k, int64_t) != XPB_RESULTS_NO_INT;
    case T_NUM:
        return !isnan(*MEMBER(c, k, double));
    case T_BOOL:
        return *MEMBER(c, k, int) != XPB_RESULTS_NO_BOOL;
    case T_OPTIMIZER:
        return c->has_optimizer;
    case T_PARAMS:
        return c->has_params;
    }
    return 0;
}

static int same_number(double x, double y)
{
    return x == y || (isnan(x) && isnan(y));
}

static int same_text(const char *x, const char *y)
{
    return x == y || (x && y && strcmp(x, y) == 0);
}

static int same_optimizer(const struct xpb_results_optimizer *x,
                          const struct xpb_results_optimizer *y)
{
    return same_text(x->kind, y->kind) && same_number(x->lr, y->lr) &&
           same_number(x->momentum, y->momentum) && same_number(x->weight_decay, y->weight_decay) &&
           same_number(x->beta1, y->beta1) && same_number(x->beta2, y->beta2) &&
           same_number(x->eps, y->eps) && same_number(x->clip_grad_norm, y->clip_grad_norm);
}

static int same_params(const struct xpb_results_config *a, const struct xpb_results_config *b)
{
    if (a->n_params != b->n_params)
        return 0;
    for (size_t i = 0; i < a->n_params; i++) {
        const char *other = NULL;
        size_t j = 0;
        while (j < b->n_params && strcmp(b->params[j].key, a->params[i].key) != 0)
            j++;
        if (j == b->n_params)
            return 0;
        other = b->params[j].value;
        if (!same_text(a->params[i].value, other))
            return 0;
    }
    return 1;
}

/* Whether the present value of key k in c is what an absent one means in version 1. */
static int is_v1_default(const struct xpb_results_config *c, int k)
{
    const char *d = keys[k].v1_default;
    switch (keys[k].type) {
    case T_STR:
        return same_text(*MEMBER(c, k, const char *), d);
    case T_INT:
        return *MEMBER(c, k, int64_t) == (int64_t)(d[0] - '0');
    case T_BOOL:
        return *MEMBER(c, k, int) == d[0] - '0';
    default:
        return 0;
    }
}

static int same_at(const struct xpb_results_config *a, const struct xpb_results_config *b, int k,
                   unsigned flags)
{
    int pa = present(a, k), pb = present(b, k);
    if (pa != pb)
        return (flags & XPB_CONFIG_V1_DEFAULTS) && keys[k].v1_default &&
               is_v1_default(pa ? a : b, k);
    if (!pa)
        return 1;
    switch (keys[k].type) {
    case T_STR:
        return same_text(*MEMBER(a, k, const char *), *MEMBER(b, k, const char *));
    case T_INT:
        return *MEMBER(a, k, int64_t) == *MEMBER(b, k, int64_t);
    case T_NUM:
        return same_number(*MEMBER(a, k, double), *MEMBER(b, k, double));
    case T_BOOL:
        return *MEMBER(a, k, int) == *MEMBER(b, k, int);
    case T_OPTIMIZER:
        return same_optimizer(&a->optimizer, &b->optimizer);
    case T_PARAMS:
        return same_params(a, b);
    }
    return 0;
}

int xpb_results_config_known(const char *key)
{
    return find(key) >= 0;
}

int xpb_results_config_has(const struct xpb_results_config *c, const char *key)
{
    int k = find(key);
    return k >= 0 ? present(c, k) : strcmp(key, "extra") == 0 && c->has_extra;
}

int xpb_results_config_same_key(const struct xpb_results_config *a,
                                const struct xpb_results_config *b, const char *key, unsigned flags)
{
    int k = find(key);
    return k >= 0 && same_at(a, b, k, flags);
}

int xpb_results_config_same_except(const struct xpb_results_config *a,
                                   const struct xpb_results_config *b, const char *const *skip,
                                   size_t n_skip, unsigned flags)
{
    for (size_t k = 0; k < N_KEYS; k++) {
        size_t s = 0;
        while (s < n_skip && strcmp(skip[s], keys[k].key) != 0)
            s++;
        if (s == n_skip && !same_at(a, b, (int)k, flags))
            return 0;
    }
    return 1;
}

int64_t xpb_results_config_int(const struct xpb_results_config *c, const char *key)
{
    int k = find(key);
    return k >= 0 && keys[k].type == T_INT ? *MEMBER(c, k, int64_t) : XPB_RESULTS_NO_INT;
}
