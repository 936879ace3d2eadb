/* Ranges of sweep values (scenario_range.h). */
#include "scenario/scenario_range.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario_keys.h"
#include "scenario/scenario_scalar.h"
#include "scenario/scenario_suggest.h"

/* The longest spelling of a value: "-9223372036854775808", or 17 digits and an exponent. */
#define TEXT_MAX 32

static const char *const range_keys[4] = {"from", "to", "times", "step"};

int xpb_srange_allowed(int key_type)
{
    return key_type == XPB_SKEY_UINT || key_type == XPB_SKEY_U64 || key_type == XPB_SKEY_FLOAT ||
           key_type == XPB_SKEY_PARAMS;
}

/* "<where node>: <label>: <what>" with status `bad`. */
static xpb_status fail_at(xpb_err *err, xpb_status bad, const struct xpb_yorigin *origin,
                          const struct xpb_ynode *node, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static xpb_status fail_at(xpb_err *err, xpb_status bad, const struct xpb_yorigin *origin,
                          const struct xpb_ynode *node, const char *label, const char *fmt, ...)
{
    char where[512], what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    xpb_yorigin_where(where, sizeof where, origin, node->line, node->column);
    return xpb_err_set(err, bad, "%s: %s: %s", where, label, what);
}

xpb_status xpb_srange_read(struct xpb_srange *out, const struct xpb_ynode *map, const char *label,
                           xpb_status bad, const struct xpb_yorigin *origin, xpb_err *err)
{
    char found[256];
    memset(out, 0, sizeof *out);
    out->map = map;
    const struct xpb_ynode **slots[4] = {&out->from, &out->to, &out->times, &out->step};
    for (size_t i = 0; i < xpb_ynode_map_size(map); i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(map, i), *v = xpb_ynode_map_value(map, i);
        size_t j = 0;
        while (j < 4 && strcmp(k->text, range_keys[j]) != 0)
            j++;
        if (j == 4) {
            /* a one-letter key is as near to 'to' as to nothing: no suggestion */
            const char *hint = k->len > 1 ? xpb_suggest(k->text, k->len, range_keys, 4) : NULL;
            char mean[64] = "";
            if (hint)
                snprintf(mean, sizeof mean, " (did you mean '%s'?)", hint);
            return fail_at(err, bad, origin, k, label,
                           "expected a range's key (from, to, times or step), found %s%s",
                           xpb_yaml_quote(found, sizeof found, k->text, k->len), mean);
        }
        if (*slots[j])
            return fail_at(err, bad, origin, k, label,
                           "expected each key of a range once, found '%s' again", range_keys[j]);
        if (v->kind != XPB_YNODE_SCALAR || v->quoted || xpb_ynode_is_null(v))
            return fail_at(err, bad, origin, v, label, "expected a number for '%s', found %s",
                           range_keys[j], xpb_ynode_describe(found, sizeof found, v));
        *slots[j] = v;
    }
    if (!out->from || !out->to)
        return fail_at(err, bad, origin, map, label,
                       "expected a range {from, to, times} or {from, to, step}, found no '%s'",
                       out->from ? "to" : "from");
    if (!out->times == !out->step)
        return fail_at(err, bad, origin, map, label,
                       "expected either 'times' (a geometric range) or 'step' (an arithmetic "
                       "one), found %s",
                       out->times ? "both" : "neither");
    return XPB_OK;
}

/* A range's three numbers, as integers when all are written as integers. */
struct numbers {
    int integer;
    int64_t i[3]; /* from, to, and times or step */
    double f[3];
};

/* Reads the numbers of r into *out; the error names the first bad one. */
static xpb_status read_numbers(struct numbers *out, const struct xpb_srange *r, int integer,
                               const char *label, xpb_status bad, const struct xpb_yorigin *origin,
                               xpb_err *err)
{
    const struct xpb_ynode *nodes[3] = {r->from, r->to, r->times ? r->times : r->step};
    const char *names[3] = {"from", "to", r->times ? "times" : "step"};
    char found[256];
    out->integer = 1;
    for (int k = 0; k < 3; k++) {
        uint64_t mag;
        int negative, overflow;
        int is_int = xpb_scalar_integer(nodes[k]->text, &mag, &negative, &overflow);
        if (!xpb_scalar_number(nodes[k]->text, &out->f[k]) || !isfinite(out->f[k]))
            return fail_at(err, bad, origin, nodes[k], label,
                           "expected a number for '%s', found %s", names[k],
                           xpb_ynode_describe(found, sizeof found, nodes[k]));
        if (is_int && (overflow || mag > (uint64_t)INT64_MAX))
            return fail_at(err, bad, origin, nodes[k], label,
                           "expected a range within the 64-bit signed integers, found %s",
                           xpb_ynode_describe(found, sizeof found, nodes[k]));
        if (!is_int && integer)
            return fail_at(err, bad, origin, nodes[k], label,
                           "expected an integer for '%s' (%s takes integers), found %s", names[k],
                           label, xpb_ynode_describe(found, sizeof found, nodes[k]));
        out->integer &= is_int;
        out->i[k] = is_int ? (negative ? -(int64_t)mag : (int64_t)mag) : 0;
    }
    return XPB_OK;
}

/* The rules between the numbers: to >= from, times > 1 with from > 0, step > 0. */
static xpb_status check_numbers(const struct numbers *x, const struct xpb_srange *r,
                                const char *label, xpb_status bad, const struct xpb_yorigin *origin,
                                xpb_err *err)
{
    char found[256];
    if (x->integer ? x->i[1] < x->i[0] : x->f[1] < x->f[0])
        return fail_at(err, bad, origin, r->to, label,
                       "expected 'to' at least 'from' (%s), found %s", r->from->text,
                       xpb_ynode_describe(found, sizeof found, r->to));
    if (r->times && !(x->f[2] > 1))
        return fail_at(err, bad, origin, r->times, label, "expected 'times' above 1, found %s",
                       xpb_ynode_describe(found, sizeof found, r->times));
    if (r->times && !(x->f[0] > 0))
        return fail_at(err, bad, origin, r->from, label,
                       "expected 'from' above 0 in a range with 'times', found %s",
                       xpb_ynode_describe(found, sizeof found, r->from));
    if (r->step && !(x->f[2] > 0))
        return fail_at(err, bad, origin, r->step, label, "expected 'step' above 0, found %s",
                       xpb_ynode_describe(found, sizeof found, r->step));
    return XPB_OK;
}

/* Value k of the range into text[TEXT_MAX]; 0 when the range has fewer values. Integer
 * ranges step from value k - 1 (*at, updated), so that k must count up from 0. */
static int value_at(char *text, const struct numbers *x, int geometric, size_t k, int64_t *at)
{
    if (x->integer) {
        int64_t v = *at, to = x->i[1], by = x->i[2];
        if (k > 0) {
            if (geometric ? v > to / by : (uint64_t)to - (uint64_t)v < (uint64_t)by)
                return 0;
            v = geometric ? v * by : v + by;
        }
        *at = v;
        snprintf(text, TEXT_MAX, "%lld", (long long)v);
        return 1;
    }
    double to = x->f[1], by = x->f[2];
    double v = geometric ? x->f[0] * pow(by, (double)k) : x->f[0] + (double)k * by;
    double slack = geometric ? 1e-12 * fabs(to) : 1e-9 * by; /* rounding of the rule */
    if (!(v <= to + slack))
        return 0;
    if (fabs(v - to) <= slack)
        v = to;
    for (int digits = 1; digits <= 17; digits++) { /* the shortest spelling that reads back */
        snprintf(text, TEXT_MAX, "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    return 1;
}

xpb_status xpb_srange_values(struct xpb_ynode **values, size_t *n, const struct xpb_srange *r,
                             int integer, const char *label, xpb_status bad,
                             const struct xpb_yorigin *origin, xpb_err *err)
{
    struct numbers x;
    char text[TEXT_MAX];
    *values = NULL;
    *n = 0;
    xpb_status st = read_numbers(&x, r, integer, label, bad, origin, err);
    if (st == XPB_OK)
        st = check_numbers(&x, r, label, bad, origin, err);
    if (st != XPB_OK)
        return st;
    const int geometric = r->times != NULL;
    size_t count = 0;
    for (int64_t at = x.i[0]; value_at(text, &x, geometric, count, &at);)
        if (++count > XPB_SRANGE_MAX_VALUES)
            return fail_at(err, bad, origin, r->map, label,
                           "expected a range of at most %u values, found more",
                           XPB_SRANGE_MAX_VALUES);
    /* one block: the nodes, then their texts */
    struct xpb_ynode *nodes = calloc(1, count * (sizeof *nodes + TEXT_MAX));
    if (!nodes)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    char *texts = (char *)(nodes + count);
    int64_t at = x.i[0];
    for (size_t k = 0; k < count; k++) {
        struct xpb_ynode *node = &nodes[k];
        node->kind = XPB_YNODE_SCALAR;
        node->line = r->map->line;
        node->column = r->map->column;
        node->text = texts + k * TEXT_MAX;
        value_at(node->text, &x, geometric, k, &at);
        node->len = strlen(node->text);
    }
    *values = nodes;
    *n = count;
    return XPB_OK;
}
