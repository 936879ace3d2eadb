/* The generic walker of the results schema: checks a JSON value against the field tables of
 * schema_fields.h (presence, types, ranges, enumerations; unknown keys refused except inside
 * "extra" objects) and keeps the JSON path of where it is, so that the first problem is
 * reported led by its path: "runs[2].metrics.throughput.median: expected a number >= 0, found
 * string". The rules across fields (schema_rules.h) use the same path and reporting. */
#ifndef XPB_CORE_SCHEMA_WALK_H
#define XPB_CORE_SCHEMA_WALK_H

#include <stddef.h>

#include <jansson.h>

#include "base/errmsg.h"
#include "results/schema_fields.h"

struct xpb_schema_walk {
    int version; /* the document's schema_version */
    xpb_err *err;
    char path[768]; /* where the walk is: "runs[2].metrics" ("" at the root) */
    size_t len;
};

/* Appends ".key" (or "key" at the root) to the path; returns the length to restore with
 * xpb_schema_pop. */
size_t xpb_schema_push_key(struct xpb_schema_walk *c, const char *key);

/* Appends "[i]" to the path; returns the length to restore. */
size_t xpb_schema_push_index(struct xpb_schema_walk *c, size_t i);

/* Cuts the path back to `old` bytes. */
void xpb_schema_pop(struct xpb_schema_walk *c, size_t old);

/* Sets c->err to XPB_PARSE_ERROR with "<path>: <message>" ("document" at the root); always
 * returns -1 so that callers can `return xpb_schema_fail(...)`. */
int xpb_schema_fail(struct xpb_schema_walk *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What a value is, for messages ("object", "string", "number 64.0", "null"); with `value`,
 * strings and numbers show their value ("\"abc\"", "64.0"). Always NUL-terminated. */
void xpb_schema_describe_found(char *buf, size_t size, const json_t *v, int value);

/* Fails with "expected <what f wants>, found <v's type>"; returns -1. */
int xpb_schema_type_error(struct xpb_schema_walk *c, const struct xpb_schema_field *f,
                          const json_t *v);

/* Checks the object `obj` against `fields` (terminated by a NULL key) for the document's
 * version, recursively: unknown keys first (a misspelt key is the cause of the "missing" one),
 * then every field. Returns 0, or -1 with the first problem in c->err. */
int xpb_schema_check_object(struct xpb_schema_walk *c, const json_t *obj,
                            const struct xpb_schema_field *fields);

#endif
