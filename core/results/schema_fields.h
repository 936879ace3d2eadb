/* The shape of a results document (docs/results.md), as static field tables, one per object,
 * that mirror the page: which keys an object may have, their types, ranges, enumerations, and
 * the schema version that introduced each. The generic walker (schema_walk.h) checks a document
 * against them; the rules that tie fields together are in schema_rules.h. */
#ifndef XPB_CORE_SCHEMA_FIELDS_H
#define XPB_CORE_SCHEMA_FIELDS_H

enum xpb_schema_kind {
    XPB_SK_STRING,
    XPB_SK_INT,
    XPB_SK_NUMBER,
    XPB_SK_BOOL,
    XPB_SK_ENUM,   /* a string from `names` */
    XPB_SK_OBJECT, /* fields in `sub`, terminated by a NULL key */
    XPB_SK_ARRAY,  /* elements described by sub[0] */
    XPB_SK_STRMAP, /* an object of free keys with string values */
    XPB_SK_NUMMAP, /* an object whose keys come from `names`, number values in `range` */
    XPB_SK_SHA256, /* 64 lower-case hex digits */
    XPB_SK_TIME,   /* "YYYY-MM-DDTHH:MM:SSZ" */
    XPB_SK_ABI,    /* "<major>.<minor>" */
    XPB_SK_MAP, /* an object whose keys come from `names` (any key when NULL), values as sub[0] */
};

enum xpb_schema_flag {
    XPB_SF_REQ = 1,      /* must be present */
    XPB_SF_NULL = 2,     /* null is allowed */
    XPB_SF_NONEMPTY = 4, /* strings: not "" */
};

enum xpb_schema_range {
    XPB_SR_ANY,
    XPB_SR_GE0, /* >= 0 */
    XPB_SR_GE1, /* >= 1 */
    XPB_SR_GT0, /* > 0 */
    XPB_SR_01,  /* in [0, 1] */
};

struct xpb_schema_field {
    const char *key;
    unsigned char kind, flags, range;
    const char *const *names;
    const struct xpb_schema_field *sub;
    /* The schema version that introduced the key. In an older document the key is unknown;
     * XPB_SF_REQ applies from this version on. */
    unsigned char since;
};

/* The fields of the top-level object, terminated by a NULL key. */
extern const struct xpb_schema_field xpb_schema_document_fields[];

#endif
