/* The generic walker of the results schema (see schema_walk.h): presence, types, ranges and
 * enumerations of every field of the tables in schema_fields.c, unknown keys refused (anything
 * may go inside an "extra" object), the first problem reported with its JSON path. */
#include "results/schema_walk.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/names.h"

/* Appends ".key" (or "key" at the root) to the path; returns the length to restore. */
size_t xpb_schema_push_key(struct xpb_schema_walk *c, const char *key)
{
    size_t old = c->len;
    int n = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s", c->len ? "." : "", key);
    c->len += n > 0 ? (size_t)n : 0;
    if (c->len >= sizeof c->path)
        c->len = sizeof c->path - 1;
    return old;
}

size_t xpb_schema_push_index(struct xpb_schema_walk *c, size_t i)
{
    size_t old = c->len;
    int n = snprintf(c->path + c->len, sizeof c->path - c->len, "[%zu]", i);
    c->len += n > 0 ? (size_t)n : 0;
    if (c->len >= sizeof c->path)
        c->len = sizeof c->path - 1;
    return old;
}

void xpb_schema_pop(struct xpb_schema_walk *c, size_t old)
{
    c->len = old;
    c->path[old] = '\0';
}

/* Reports "<path>: <message>"; always returns -1 so callers can `return xpb_schema_fail(...)`. */
int xpb_schema_fail(struct xpb_schema_walk *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    xpb_err_set(c->err, XPB_PARSE_ERROR, "%s: %s", c->len ? c->path : "document", msg);
    return -1;
}

/* What a field wants, for messages: "an integer >= 1", "one of \"ok\", ...", "... or null". */
static void describe_expected(char *buf, size_t size, const struct xpb_schema_field *f)
{
    static const char *const range_text[] = {"", " >= 0", " >= 1", " > 0", " in [0, 1]"};
    size_t n = 0;
    switch (f->kind) {
    case XPB_SK_STRING:
        n = (size_t)snprintf(buf, size, "%s",
                             f->flags & XPB_SF_NONEMPTY ? "a non-empty string" : "a string");
        break;
    case XPB_SK_INT:
        n = (size_t)snprintf(buf, size, "an integer%s", range_text[f->range]);
        break;
    case XPB_SK_NUMBER:
        n = (size_t)snprintf(buf, size, "a number%s", range_text[f->range]);
        break;
    case XPB_SK_BOOL:
        n = (size_t)snprintf(buf, size, "true or false");
        break;
    case XPB_SK_ENUM:
        n = (size_t)snprintf(buf, size, "%s", f->names[1] ? "one of " : "");
        for (size_t i = 0; f->names[i] && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s\"%s\"", i ? ", " : "", f->names[i]);
        break;
    case XPB_SK_OBJECT:
        n = (size_t)snprintf(buf, size, "an object");
        break;
    case XPB_SK_ARRAY:
        n = (size_t)snprintf(buf, size, "an array");
        break;
    case XPB_SK_STRMAP:
        n = (size_t)snprintf(buf, size, "an object of strings");
        break;
    case XPB_SK_NUMMAP:
        n = (size_t)snprintf(buf, size, "an object of numbers%s", range_text[f->range]);
        break;
    case XPB_SK_SHA256:
        n = (size_t)snprintf(buf, size, "a SHA-256 digest (64 lower-case hex digits)");
        break;
    case XPB_SK_TIME:
        n = (size_t)snprintf(buf, size, "a UTC time \"YYYY-MM-DDTHH:MM:SSZ\"");
        break;
    case XPB_SK_ABI:
        n = (size_t)snprintf(buf, size, "an ABI version \"<major>.<minor>\"");
        break;
    case XPB_SK_MAP:
        n = (size_t)snprintf(buf, size, "an object");
        break;
    }
    if ((f->flags & XPB_SF_NULL) && n < size)
        snprintf(buf + n, size - n, " or null");
}

/* What a value is, for messages. Numbers show their value; strings show it when `value`. */
void xpb_schema_describe_found(char *buf, size_t size, const json_t *v, int value)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, size, "object");
        break;
    case JSON_ARRAY:
        snprintf(buf, size, "array");
        break;
    case JSON_STRING:
        if (value)
            snprintf(buf, size, "\"%.60s%s\"", json_string_value(v),
                     json_string_length(v) > 60 ? "..." : "");
        else
            snprintf(buf, size, "string");
        break;
    case JSON_INTEGER:
        snprintf(buf, size, "%s%" JSON_INTEGER_FORMAT, value ? "" : "number ",
                 json_integer_value(v));
        break;
    case JSON_REAL: {
        /* keep a real recognisable as one: 64.0 rather than 64 */
        char num[40];
        snprintf(num, sizeof num, "%.17g", json_real_value(v));
        snprintf(buf, size, "%s%s%s", value ? "" : "number ", num,
                 strpbrk(num, ".eEn") ? "" : ".0");
        break;
    }
    case JSON_TRUE:
        snprintf(buf, size, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, size, "false");
        break;
    case JSON_NULL:
        snprintf(buf, size, "null");
        break;
    }
}

int xpb_schema_type_error(struct xpb_schema_walk *c, const struct xpb_schema_field *f,
                          const json_t *v)
{
    char want[256], found[128];
    describe_expected(want, sizeof want, f);
    xpb_schema_describe_found(found, sizeof found, v, 0);
    return xpb_schema_fail(c, "expected %s, found %s", want, found);
}

static int value_error(struct xpb_schema_walk *c, const struct xpb_schema_field *f, const json_t *v)
{
    char want[256], found[128];
    describe_expected(want, sizeof want, f);
    xpb_schema_describe_found(found, sizeof found, v, 1);
    return xpb_schema_fail(c, "expected %s, found %s", want, found);
}

static int in_range(double x, unsigned range)
{
    switch (range) {
    case XPB_SR_GE0:
        return x >= 0;
    case XPB_SR_GE1:
        return x >= 1;
    case XPB_SR_GT0:
        return x > 0;
    case XPB_SR_01:
        return x >= 0 && x <= 1;
    }
    return 1;
}

static int is_sha256(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return 0;
    return n == 64;
}

static int digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

static int is_utc_time(const char *s)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, se;
    if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':' || s[19] != 'Z')
        return 0;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
        !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60)
        return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return !(mo == 2 && d == 29 && !leap);
}

static int is_abi_version(const char *s)
{
    size_t i = 0, a = 0, b = 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++, a++;
    if (s[i++] != '.')
        return 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++, b++;
    return s[i] == '\0' && a > 0 && b > 0 && a < 6 && b < 6;
}

static int check_value(struct xpb_schema_walk *c, const json_t *v,
                       const struct xpb_schema_field *f);

static const struct xpb_schema_field *find_field(const struct xpb_schema_field *fields,
                                                 const char *key)
{
    for (const struct xpb_schema_field *f = fields; f->key; f++)
        if (strcmp(f->key, key) == 0)
            return f;
    return NULL;
}

/* Unknown keys first (a misspelt key is the cause of the "missing" one), then every field. */
int xpb_schema_check_object(struct xpb_schema_walk *c, const json_t *obj,
                            const struct xpb_schema_field *fields)
{
    for (void *it = json_object_iter((json_t *)obj); it;
         it = json_object_iter_next((json_t *)obj, it)) {
        const char *key = json_object_iter_key(it);
        const struct xpb_schema_field *f = find_field(fields, key);
        if (f && f->since <= c->version)
            continue;
        size_t old = xpb_schema_push_key(c, key);
        if (f)
            return xpb_schema_fail(c, "not part of schema version %d (introduced by version %d)",
                                   c->version, f->since);
        if (strcmp(key, "extra") != 0)
            return xpb_schema_fail(c,
                                   "unknown key (free-form data belongs in an \"extra\" object)");
        if (!json_is_object(json_object_iter_value(it)))
            return xpb_schema_fail(c, "expected an object, found %s",
                                   json_is_array(json_object_iter_value(it)) ? "array"
                                                                             : "a scalar");
        xpb_schema_pop(c, old);
    }
    for (const struct xpb_schema_field *f = fields; f->key; f++) {
        const json_t *v = json_object_get(obj, f->key);
        if (f->since > c->version)
            continue; /* absent: checked above */
        size_t old = xpb_schema_push_key(c, f->key);
        if (!v && (f->flags & XPB_SF_REQ))
            return xpb_schema_fail(c, "required key missing");
        if (v && check_value(c, v, f) != 0)
            return -1;
        xpb_schema_pop(c, old);
    }
    return 0;
}

static int check_value(struct xpb_schema_walk *c, const json_t *v, const struct xpb_schema_field *f)
{
    if (json_is_null(v)) {
        if (f->flags & XPB_SF_NULL)
            return 0;
        return xpb_schema_type_error(c, f, v);
    }
    switch (f->kind) {
    case XPB_SK_STRING:
        if (!json_is_string(v))
            return xpb_schema_type_error(c, f, v);
        if ((f->flags & XPB_SF_NONEMPTY) && json_string_length(v) == 0)
            return value_error(c, f, v);
        return 0;
    case XPB_SK_INT:
        if (!json_is_integer(v))
            return xpb_schema_type_error(c, f, v);
        if (!in_range((double)json_integer_value(v), f->range))
            return value_error(c, f, v);
        return 0;
    case XPB_SK_NUMBER:
        if (!json_is_number(v))
            return xpb_schema_type_error(c, f, v);
        if (!isfinite(json_number_value(v)) || !in_range(json_number_value(v), f->range))
            return value_error(c, f, v);
        return 0;
    case XPB_SK_BOOL:
        return json_is_boolean(v) ? 0 : xpb_schema_type_error(c, f, v);
    case XPB_SK_ENUM:
        if (!json_is_string(v))
            return xpb_schema_type_error(c, f, v);
        for (size_t i = 0; f->names[i]; i++)
            if (strcmp(f->names[i], json_string_value(v)) == 0)
                return 0;
        return value_error(c, f, v);
    case XPB_SK_SHA256:
        if (!json_is_string(v))
            return xpb_schema_type_error(c, f, v);
        return is_sha256(json_string_value(v)) ? 0 : value_error(c, f, v);
    case XPB_SK_TIME:
        if (!json_is_string(v))
            return xpb_schema_type_error(c, f, v);
        return is_utc_time(json_string_value(v)) ? 0 : value_error(c, f, v);
    case XPB_SK_ABI:
        if (!json_is_string(v))
            return xpb_schema_type_error(c, f, v);
        return is_abi_version(json_string_value(v)) ? 0 : value_error(c, f, v);
    case XPB_SK_OBJECT:
        if (!json_is_object(v))
            return xpb_schema_type_error(c, f, v);
        return xpb_schema_check_object(c, v, f->sub);
    case XPB_SK_ARRAY: {
        if (!json_is_array(v))
            return xpb_schema_type_error(c, f, v);
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t old = xpb_schema_push_index(c, i);
            if (check_value(c, json_array_get(v, i), &f->sub[0]) != 0)
                return -1;
            xpb_schema_pop(c, old);
        }
        return 0;
    }
    case XPB_SK_MAP: {
        if (!json_is_object(v))
            return xpb_schema_type_error(c, f, v);
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            const char *key = json_object_iter_key(it);
            size_t old = xpb_schema_push_key(c, key);
            size_t i = 0;
            while (f->names && f->names[i] && strcmp(f->names[i], key) != 0)
                i++;
            if (f->names && !f->names[i])
                return xpb_schema_fail(c, "unknown key");
            if (check_value(c, json_object_iter_value(it), &f->sub[0]) != 0)
                return -1;
            xpb_schema_pop(c, old);
        }
        return 0;
    }
    case XPB_SK_STRMAP:
    case XPB_SK_NUMMAP: {
        if (!json_is_object(v))
            return xpb_schema_type_error(c, f, v);
        struct xpb_schema_field value_field =
            f->kind == XPB_SK_STRMAP
                ? (struct xpb_schema_field){NULL, XPB_SK_STRING, XPB_SF_REQ, XPB_SR_ANY,
                                            NULL, NULL,          1}
                : (struct xpb_schema_field){NULL, XPB_SK_NUMBER, XPB_SF_REQ, f->range,
                                            NULL, NULL,          1};
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            const char *key = json_object_iter_key(it);
            size_t old = xpb_schema_push_key(c, key);
            if (f->names) {
                size_t i = 0;
                while (f->names[i] && strcmp(f->names[i], key) != 0)
                    i++;
                if (!f->names[i])
                    return xpb_schema_fail(c, f->names == xpb_precision_names
                                                  ? "unknown key (the keys are precision names)"
                                                  : "unknown key");
            }
            if (check_value(c, json_object_iter_value(it), &value_field) != 0)
                return -1;
            xpb_schema_pop(c, old);
        }
        return 0;
    }
    }
    return xpb_schema_fail(c, "internal error: unknown schema kind %u", f->kind);
}
