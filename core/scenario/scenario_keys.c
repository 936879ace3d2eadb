/* Run keys of a scenario: table, defaults, scalar conversion and messages (scenario_keys.h). */
#include "scenario_keys.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpubench/backend.h>

static const struct xpb_skey_choice mode_choices[] = {
    {"train", XPB_MODE_TRAIN, "train"},
    {"inference", XPB_MODE_INFERENCE, "inference"},
    {NULL, 0, NULL},
};

static const struct xpb_skey_choice precision_choices[] = {
    {"fp32", XPB_PRECISION_FP32, "fp32"},
    {"tf32", XPB_PRECISION_TF32, "tf32"},
    {"bf16", XPB_PRECISION_BF16_MIXED, "bf16"},
    {"fp16", XPB_PRECISION_FP16_MIXED, "fp16"},
    {"bf16-mixed", XPB_PRECISION_BF16_MIXED, "bf16"},
    {"fp16-mixed", XPB_PRECISION_FP16_MIXED, "fp16"},
    {NULL, 0, NULL},
};

/* data is a string member, but only "synthetic" exists for now. */
static const struct xpb_skey_choice data_choices[] = {
    {"synthetic", 0, "synthetic"},
    {NULL, 0, NULL},
};

static const struct xpb_skey_choice transfer_choices[] = {
    {"resident", XPB_TRANSFER_RESIDENT, "resident"},
    {"streamed", XPB_TRANSFER_STREAMED, "streamed"},
    {NULL, 0, NULL},
};

/* clang-format off */
#define OFF(member) offsetof(xpb_run_config, member)
#define UINT_KEY(n, lo, hi) {#n, XPB_SKEY_UINT, 0, lo, hi, 0, 0, NULL, OFF(n)}
#define FLOAT_KEY(n, nul, lo, hi) {#n, XPB_SKEY_FLOAT, nul, 0, 0, lo, hi, NULL, OFF(n)}
#define BOOL_KEY(n) {#n, XPB_SKEY_BOOL, 0, 0, 1, 0, 0, NULL, OFF(n)}
/* clang-format on */

/* Order: the order of docs/scenarios.md and of "one of ..." lists in messages. */
static const struct xpb_skey keys[] = {
    {"name", XPB_SKEY_LABEL, 0, 0, 0, 0, 0, NULL, 0},
    {"model", XPB_SKEY_NAME, 0, 0, 0, 0, 0, NULL, OFF(model)},
    {"variant", XPB_SKEY_NAME, 1, 0, 0, 0, 0, NULL, OFF(variant)},
    {"mode", XPB_SKEY_ENUM, 0, 0, 0, 0, 0, mode_choices, OFF(mode)},
    UINT_KEY(batch, 1, 65536),
    {"precision", XPB_SKEY_ENUM, 0, 0, 0, 0, 0, precision_choices, OFF(precision)},
    {"backend", XPB_SKEY_NAME, 0, 0, 0, 0, 0, NULL, OFF(backend)},
    BOOL_KEY(fusion),
    UINT_KEY(threads, 0, 4096),
    UINT_KEY(device, 0, 1024),
    UINT_KEY(warmup, 0, 100000),
    UINT_KEY(min_steps, 1, 10000000),
    FLOAT_KEY(min_time, 0, 0.0, 86400.0),
    UINT_KEY(max_steps, 0, 10000000),
    UINT_KEY(repeats, 1, 1000),
    {"seed", XPB_SKEY_U64, 0, 0, UINT64_MAX, 0, 0, NULL, OFF(seed)},
    {"data", XPB_SKEY_ENUM, 0, 0, 0, 0, 0, data_choices, OFF(data)},
    {"transfer", XPB_SKEY_ENUM, 0, 0, 0, 0, 0, transfer_choices, OFF(transfer)},
    FLOAT_KEY(lr, 1, 0.0, INFINITY),
    FLOAT_KEY(momentum, 1, 0.0, INFINITY),
    FLOAT_KEY(weight_decay, 1, 0.0, INFINITY),
    BOOL_KEY(verify),
    BOOL_KEY(profile),
    {"params", XPB_SKEY_PARAMS, 0, 0, 0, 0, 0, NULL, 0},
};

#undef UINT_KEY
#undef FLOAT_KEY
#undef BOOL_KEY
#undef OFF

const struct xpb_skey *xpb_skey_table(size_t *count)
{
    *count = sizeof keys / sizeof keys[0];
    return keys;
}

const struct xpb_skey *xpb_skey_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].name) == len && memcmp(keys[i].name, name, len) == 0)
            return &keys[i];
    return NULL;
}

void xpb_skey_defaults(xpb_run_config *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->mode = XPB_MODE_TRAIN;
    rc->batch = 64;
    rc->precision = XPB_PRECISION_FP32;
    rc->fusion = 1;
    rc->threads = 0;
    rc->device = 0;
    rc->warmup = 3;
    rc->min_steps = 20;
    rc->min_time = 2.0;
    rc->max_steps = 0;
    rc->repeats = 3;
    rc->seed = 42;
    rc->transfer = XPB_TRANSFER_RESIDENT;
    rc->lr = NAN;
    rc->momentum = NAN;
    rc->weight_decay = NAN;
    rc->verify = 0;
    rc->profile = 0;
}

xpb_status xpb_origin_status(const struct xpb_yorigin *origin)
{
    return origin && origin->set ? XPB_INVALID_ARGUMENT : XPB_PARSE_ERROR;
}

int xpb_is_name(const char *text, size_t len)
{
    if (len == 0 || len > 128)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

char *xpb_skey_expected(char *buf, size_t size, const struct xpb_skey *key)
{
    size_t o = 0;
    switch (key->type) {
    case XPB_SKEY_LABEL:
    case XPB_SKEY_NAME:
        snprintf(buf, size, "a name of letters, digits, '_', '.' or '-'%s",
                 key->nullable ? " (or ~ for the model's default)" : "");
        break;
    case XPB_SKEY_ENUM:
        o = (size_t)snprintf(buf, size, "one of");
        for (const struct xpb_skey_choice *c = key->choices; c->word && o < size; c++)
            o +=
                (size_t)snprintf(buf + o, size - o, "%s %s", c == key->choices ? "" : ",", c->word);
        break;
    case XPB_SKEY_UINT:
    case XPB_SKEY_U64:
        snprintf(buf, size, "an integer %llu..%llu", (unsigned long long)key->min,
                 (unsigned long long)key->max);
        break;
    case XPB_SKEY_FLOAT:
        if (isinf(key->fmax))
            snprintf(buf, size, "a number >= %g%s", key->fmin,
                     key->nullable ? " (or ~ for the model's default)" : "");
        else
            snprintf(buf, size, "a number %g..%g", key->fmin, key->fmax);
        break;
    case XPB_SKEY_BOOL:
        snprintf(buf, size, "true or false");
        break;
    default:
        snprintf(buf, size, "a mapping of model parameter names to values");
        break;
    }
    return buf;
}

/* "<where>: <label>: expected <what>, found <node>" */
static xpb_status bad_value(const struct xpb_skey *key, const char *label,
                            const struct xpb_ynode *node, const struct xpb_yorigin *origin,
                            xpb_err *err)
{
    char where[512], what[256], found[256];
    xpb_yorigin_where(where, sizeof where, origin, node->line, node->column);
    xpb_skey_expected(what, sizeof what, key);
    xpb_ynode_describe(found, sizeof found, node);
    return xpb_err_set(err, xpb_origin_status(origin), "%s: %s: expected %s, found %s", where,
                       label, what, found);
}

/* Strict decimal integer: [+-]?[0-9]+ . Sets *overflow when it does not fit in 64 bits;
 * *negative for a '-' sign with a non-zero value. Returns 0 when the syntax is wrong. */
static int parse_integer(const char *s, uint64_t *out, int *negative, int *overflow)
{
    int neg = 0;
    uint64_t v = 0;
    *overflow = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            *overflow = 1;
        else
            v = v * 10 + d;
    }
    *negative = neg && v != 0;
    *out = v;
    return 1;
}

/* Strict decimal number: [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)? */
static int parse_number(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return 0;
    errno = 0;
    *out = strtod(s, NULL);
    return 1;
}

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

xpb_status xpb_skey_convert(struct xpb_svalue *out, const struct xpb_skey *key, const char *label,
                            const struct xpb_ynode *scalar, const struct xpb_yorigin *origin,
                            xpb_err *err)
{
    memset(out, 0, sizeof *out);
    if (scalar->kind != XPB_YNODE_SCALAR)
        return bad_value(key, label, scalar, origin, err);
    if (xpb_ynode_is_null(scalar)) {
        if (!key->nullable)
            return bad_value(key, label, scalar, origin, err);
        out->s = NULL;
        out->f = NAN;
        return XPB_OK;
    }
    const char *s = scalar->text;
    switch (key->type) {
    case XPB_SKEY_LABEL:
    case XPB_SKEY_NAME:
        if (!xpb_is_name(s, scalar->len))
            return bad_value(key, label, scalar, origin, err);
        out->s = s;
        return XPB_OK;
    case XPB_SKEY_ENUM:
        for (const struct xpb_skey_choice *c = key->choices; c->word; c++) {
            if (strcmp(c->word, s) == 0) {
                out->u = c->value;
                out->s = c->canonical;
                return XPB_OK;
            }
        }
        return bad_value(key, label, scalar, origin, err);
    case XPB_SKEY_UINT:
    case XPB_SKEY_U64: {
        int negative = 0, overflow = 0;
        uint64_t v = 0;
        if (scalar->quoted || !parse_integer(s, &v, &negative, &overflow) || negative || overflow ||
            v < key->min || v > key->max)
            return bad_value(key, label, scalar, origin, err);
        out->u = v;
        return XPB_OK;
    }
    case XPB_SKEY_FLOAT: {
        double v = 0;
        if (scalar->quoted || !parse_number(s, &v) || !isfinite(v) || v < key->fmin ||
            v > key->fmax)
            return bad_value(key, label, scalar, origin, err);
        out->f = v == 0 ? 0.0 : v; /* no -0 */
        return XPB_OK;
    }
    case XPB_SKEY_BOOL:
        if (scalar->quoted || !parse_bool(s, &out->u))
            return bad_value(key, label, scalar, origin, err);
        return XPB_OK;
    default:
        return bad_value(key, label, scalar, origin, err);
    }
}

xpb_status xpb_skey_store(xpb_run_config *rc, const struct xpb_skey *key,
                          const struct xpb_svalue *v)
{
    char *base = (char *)rc;
    switch (key->type) {
    case XPB_SKEY_NAME: {
        char **slot = (char **)(base + key->offset);
        char *copy = NULL;
        if (v->s && !(copy = strdup(v->s)))
            return XPB_OUT_OF_MEMORY;
        free(*slot);
        *slot = copy;
        return XPB_OK;
    }
    case XPB_SKEY_ENUM:
        if (key->offset == offsetof(xpb_run_config, data)) {
            char *copy = strdup(v->s);
            if (!copy)
                return XPB_OUT_OF_MEMORY;
            free(rc->data);
            rc->data = copy;
        } else {
            *(uint32_t *)(base + key->offset) = (uint32_t)v->u;
        }
        return XPB_OK;
    case XPB_SKEY_UINT:
    case XPB_SKEY_BOOL:
        *(uint32_t *)(base + key->offset) = (uint32_t)v->u;
        return XPB_OK;
    case XPB_SKEY_U64:
        *(uint64_t *)(base + key->offset) = v->u;
        return XPB_OK;
    case XPB_SKEY_FLOAT:
        *(double *)(base + key->offset) = v->f;
        return XPB_OK;
    default: /* LABEL and PARAMS are handled by the expansion */
        return XPB_OK;
    }
}

char *xpb_skey_format(char *buf, size_t size, const struct xpb_skey *key,
                      const struct xpb_svalue *v)
{
    switch (key->type) {
    case XPB_SKEY_LABEL:
    case XPB_SKEY_NAME:
    case XPB_SKEY_ENUM:
        snprintf(buf, size, "%s", v->s ? v->s : "default");
        break;
    case XPB_SKEY_UINT:
    case XPB_SKEY_U64:
        snprintf(buf, size, "%llu", (unsigned long long)v->u);
        break;
    case XPB_SKEY_BOOL:
        snprintf(buf, size, "%s", v->u ? "true" : "false");
        break;
    case XPB_SKEY_FLOAT:
        if (isnan(v->f)) {
            snprintf(buf, size, "default");
            break;
        }
        /* The shortest %g that reads back as the same double. */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, size, "%.*g", prec, v->f);
            if (strtod(buf, NULL) == v->f)
                break;
        }
        break;
    default:
        snprintf(buf, size, "?");
        break;
    }
    return buf;
}

/* Optimal string alignment distance, capped: returns cap+1 when larger than cap. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, size_t cap)
{
    enum { MAXLEN = 64 };
    size_t d[MAXLEN + 1][MAXLEN + 1];
    if (la > MAXLEN || lb > MAXLEN)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

const char *xpb_suggest(const char *word, size_t len, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, len, candidates[i], strlen(candidates[i]), 2);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}
