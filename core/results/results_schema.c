/* Validation of results documents against schema versions 1 and 2 (docs/results.md).
 *
 * The shape of the document is a set of static field tables below, one per object, that
 * mirror docs/results.md; a generic walker checks presence, types, ranges and enumerations
 * and rejects unknown keys (anything may go inside an "extra" object). The rules that tie
 * fields together (a run's status, unique ids, comparisons naming runs) come afterwards in
 * plain code. The first problem found is reported, led by its JSON path. */
#include "results/results.h"

#include "base/names.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum kind {
    K_STRING,
    K_INT,
    K_NUMBER,
    K_BOOL,
    K_ENUM,   /* a string from `names` */
    K_OBJECT, /* fields in `sub`, terminated by a NULL key */
    K_ARRAY,  /* elements described by sub[0] */
    K_STRMAP, /* an object of free keys with string values */
    K_NUMMAP, /* an object whose keys come from `names`, number values in `range` */
    K_SHA256, /* 64 lower-case hex digits */
    K_TIME,   /* "YYYY-MM-DDTHH:MM:SSZ" */
    K_ABI,    /* "<major>.<minor>" */
    K_MAP,    /* an object whose keys come from `names` (any key when NULL), values as sub[0] */
};

enum flag {
    F_REQ = 1,      /* must be present */
    F_NULL = 2,     /* null is allowed */
    F_NONEMPTY = 4, /* strings: not "" */
};

enum range {
    R_ANY,
    R_GE0, /* >= 0 */
    R_GE1, /* >= 1 */
    R_GT0, /* > 0 */
    R_01,  /* in [0, 1] */
};

struct field {
    const char *key;
    unsigned char kind, flags, range;
    const char *const *names;
    const struct field *sub;
    /* The schema version that introduced the key. In an older document the key is unknown;
     * F_REQ applies from this version on. */
    unsigned char since;
};

/* One-line initialisers; clang-format would spread each macro over four lines. */
/* clang-format off */
#define STR(k, f) {k, K_STRING, f, R_ANY, NULL, NULL, 1}
#define INT(k, f, r) {k, K_INT, f, r, NULL, NULL, 1}
#define NUM(k, f, r) {k, K_NUMBER, f, r, NULL, NULL, 1}
#define BOOL(k, f) {k, K_BOOL, f, R_ANY, NULL, NULL, 1}
#define ENUM(k, f, n) {k, K_ENUM, f, R_ANY, n, NULL, 1}
#define OBJ(k, f, s) {k, K_OBJECT, f, R_ANY, NULL, s, 1}
#define ARR(k, f, e) {k, K_ARRAY, f, R_ANY, NULL, e, 1}
#define SPECIAL(k, kind, f) {k, kind, f, R_ANY, NULL, NULL, 1}
#define END {NULL, 0, 0, 0, NULL, NULL, 1}
/* Fields introduced by schema version 2. */
#define STR2(k, f) {k, K_STRING, f, R_ANY, NULL, NULL, 2}
#define INT2(k, f, r) {k, K_INT, f, r, NULL, NULL, 2}
#define NUM2(k, f, r) {k, K_NUMBER, f, r, NULL, NULL, 2}
#define BOOL2(k, f) {k, K_BOOL, f, R_ANY, NULL, NULL, 2}
#define ENUM2(k, f, n) {k, K_ENUM, f, R_ANY, n, NULL, 2}
#define OBJ2(k, f, s) {k, K_OBJECT, f, R_ANY, NULL, s, 2}
#define ARR2(k, f, e) {k, K_ARRAY, f, R_ANY, NULL, e, 2}
#define MAP2(k, f, n, e) {k, K_MAP, f, R_ANY, n, e, 2}
/* clang-format on */

/* ---- the schema ---- */

static const char *const schema_names[] = {XPB_RESULTS_SCHEMA, NULL};
static const char *const tool_names[] = {"xpubench", NULL};
static const char *const plugin_kinds[] = {"backend", "model", NULL};
static const char *const statuses[] = {"ok", "unsupported", "failed", "interrupted", NULL};
static const char *const modes[] = {"train", "inference", NULL};
static const char *const transfers[] = {"resident", "streamed", NULL};
static const char *const optimizers[] = {"sgd", "adam", NULL};
static const char *const units[] = {"samples/s", NULL};
static const char *const comparison_kinds[] = {"backend", "fusion", "precision", NULL};
static const char *const comparison_metrics[] = {"throughput", NULL};
static const char *const energy_domains[] = {"package", "dram", NULL};
static const char *const parallel_modes[] = {"none", "data", NULL};
static const char *const baseline_sources[] = {"measured", "file", NULL};

static const struct field string_element[] = {STR(NULL, F_REQ)};

static const struct field tool_fields[] = {
    ENUM("name", F_REQ, tool_names),
    STR("version", F_REQ | F_NONEMPTY),
    END,
};

static const struct field scenario_fields[] = {
    STR("path", F_REQ),
    STR("name", F_REQ),
    SPECIAL("sha256", K_SHA256, F_REQ),
    ARR("overrides", F_REQ, string_element),
    STR2("baseline", F_REQ | F_NULL),
    END,
};

static const struct field cpu_fields[] = {
    STR("model", F_REQ),
    INT("cores", F_REQ, R_GE1),
    INT("logical_cpus", F_REQ, R_GE1),
    ARR("flags", F_REQ, string_element),
    END,
};

static const struct field accelerator_fields[] = {
    STR("name", F_REQ),
    STR("driver", F_REQ),
    END,
};
static const struct field accelerator_element[] = {OBJ(NULL, F_REQ, accelerator_fields)};

static const struct field plugin_fields[] = {
    STR("name", F_REQ | F_NONEMPTY),
    ENUM("kind", F_REQ, plugin_kinds),
    STR("version", F_REQ),
    SPECIAL("abi", K_ABI, F_REQ),
    STR("path", F_REQ),
    END,
};
static const struct field plugin_element[] = {OBJ(NULL, F_REQ, plugin_fields)};

static const struct field environment_fields[] = {
    STR("os", F_REQ),
    STR("kernel", F_REQ),
    OBJ("cpu", F_REQ, cpu_fields),
    INT("memory_bytes", F_REQ, R_GE0),
    STR("compiler", F_REQ),
    SPECIAL("libraries", K_STRMAP, F_REQ),
    ARR("accelerators", F_REQ, accelerator_element),
    ARR("plugins", F_REQ, plugin_element),
    END,
};

static const struct field optimizer_fields[] = {
    ENUM("kind", F_REQ, optimizers), NUM("lr", F_REQ, R_GE0),
    NUM("momentum", F_REQ, R_GE0),   NUM("weight_decay", F_REQ, R_GE0),
    NUM("beta1", F_REQ, R_01),       NUM("beta2", F_REQ, R_01),
    NUM("eps", F_REQ, R_GE0),        END,
};

static const struct field config_fields[] = {
    STR("model", F_REQ | F_NONEMPTY),
    STR("variant", F_REQ),
    ENUM("mode", F_REQ, modes),
    INT("batch", F_REQ, R_GE1),
    ENUM("precision", F_REQ, xpb_precision_names),
    STR("backend", F_REQ | F_NONEMPTY),
    BOOL("fusion", F_REQ),
    INT("threads", F_REQ, R_GE0),
    INT("device", F_REQ, R_GE0),
    INT("warmup", F_REQ, R_GE0),
    INT("min_steps", F_REQ, R_GE0),
    NUM("min_time_s", F_REQ, R_GE0),
    INT("max_steps", F_REQ, R_GE0),
    INT("repeats", F_REQ, R_GE1),
    INT("seed", F_REQ, R_GE0),
    STR("data", F_REQ | F_NONEMPTY),
    ENUM("transfer", F_REQ, transfers),
    OBJ("optimizer", 0, optimizer_fields),
    SPECIAL("params", K_STRMAP, F_REQ),
    BOOL2("allow_emulated", F_REQ),
    ENUM2("parallel", 0, parallel_modes),
    INT2("world_size", 0, R_GE1),
    END,
};

static const struct field model_fields[] = {
    INT("parameters", F_REQ, R_GE0),
    INT("flops_per_sample_forward", F_REQ, R_GE0),
    INT("flops_per_sample_train", F_REQ, R_GE0),
    INT("layers", F_REQ, R_GE0),
    END,
};

static const char *const device_kinds[] = {"cpu", "gpu", "accelerator", "unknown", NULL};
static const char *const precision_support[] = {"native", "emulated", NULL};
static const struct field precision_support_element[] = {ENUM(NULL, F_REQ, precision_support)};

static const struct field device_fields[] = {
    STR("name", F_REQ),
    STR("driver", F_REQ),
    STR("libraries", F_REQ),
    INT("threads", F_REQ, R_GE0),
    {"peak_flops", K_NUMMAP, F_REQ, R_GE0, xpb_precision_names, NULL, 1},
    ARR2("capabilities", F_REQ, string_element),
    ENUM2("kind", F_REQ, device_kinds),
    MAP2("precisions", F_REQ, xpb_precision_names, precision_support_element),
    END,
};

static const struct field throughput_fields[] = {
    NUM("median", F_REQ, R_GE0),
    NUM("min", F_REQ, R_GE0),
    NUM("max", F_REQ, R_GE0),
    ENUM("unit", F_REQ, units),
    NUM2("ci95_low", F_REQ | F_NULL, R_GE0),
    NUM2("ci95_high", F_REQ | F_NULL, R_GE0),
    END,
};

static const struct field repeat_fields[] = {
    INT("steps", F_REQ, R_GE0),
    NUM("seconds", F_REQ, R_GE0),
    NUM("throughput", F_REQ, R_GE0),
    END,
};
static const struct field repeat_element[] = {OBJ(NULL, F_REQ, repeat_fields)};

static const struct field step_time_fields[] = {
    NUM("mean", F_REQ, R_GE0), NUM("p50", F_REQ, R_GE0), NUM("p95", F_REQ, R_GE0),
    NUM("p99", F_REQ, R_GE0),  NUM("cv", F_REQ, R_GE0),  END,
};

static const struct field memory_fields[] = {
    INT("host_peak_rss_bytes", F_REQ, R_GE0),
    INT("device_bytes_in_use", F_REQ | F_NULL, R_GE0),
    INT("device_peak_bytes", F_REQ | F_NULL, R_GE0),
    INT2("host_run_peak_bytes", F_REQ | F_NULL, R_GE0),
    END,
};

static const struct field energy_fields[] = {
    BOOL("measured", F_REQ),
    STR("source", F_REQ | F_NULL),
    NUM("joules", F_REQ | F_NULL, R_GE0),
    NUM("samples_per_joule", F_REQ | F_NULL, R_GE0),
    NUM2("watts", F_REQ | F_NULL, R_GE0),
    STR2("reason", F_REQ | F_NULL),
    {"domains", K_NUMMAP, 0, R_GE0, energy_domains, NULL, 2},
    END,
};

static const struct field loss_point_fields[] = {
    INT("step", F_REQ, R_GE1),
    NUM("loss", F_REQ, R_ANY),
    END,
};
static const struct field loss_point_element[] = {OBJ(NULL, F_REQ, loss_point_fields)};

static const struct field loss_fields[] = {
    NUM("first", F_REQ | F_NULL, R_ANY),
    NUM("last", F_REQ | F_NULL, R_ANY),
    ARR2("series", F_REQ, loss_point_element),
    END,
};

static const struct field interference_fields[] = {
    NUM("other_cpu_share", F_REQ | F_NULL, R_01),
    NUM("steal_share", F_REQ | F_NULL, R_01),
    NUM("load_1m", F_REQ | F_NULL, R_GE0),
    BOOL("flagged", F_REQ),
    END,
};

static const struct field rank_fields[] = {
    INT2("rank", F_REQ, R_GE0),
    STR2("host", F_REQ),
    INT2("local_rank", F_REQ, R_GE0),
    STR2("device", F_REQ),
    INT2("device_index", F_REQ, R_GE0),
    INT2("threads", F_REQ, R_GE0),
    NUM2("throughput", F_REQ, R_GE0),
    NUM2("step_p50_s", F_REQ, R_GE0),
    END,
};
static const struct field rank_element[] = {OBJ2(NULL, F_REQ, rank_fields)};

static const struct field communication_fields[] = {
    INT2("all_reduces", F_REQ, R_GE0),
    INT2("bytes_per_step", F_REQ, R_GE0),
    NUM2("seconds_per_step", F_REQ, R_GE0),
    NUM2("share", F_REQ | F_NULL, R_GE0),
    END,
};

static const struct field scaling_baseline_fields[] = {
    NUM2("throughput", F_REQ | F_NULL, R_GE0),
    ENUM2("source", F_REQ, baseline_sources),
    STR2("file", F_REQ | F_NULL),
    STR2("reason", F_REQ | F_NULL),
    END,
};

static const struct field parallel_fields[] = {
    INT2("world_size", F_REQ, R_GE1),
    INT2("hosts", F_REQ, R_GE1),
    ARR2("ranks", F_REQ, rank_element),
    OBJ2("communication", F_REQ, communication_fields),
    OBJ2("baseline", F_REQ, scaling_baseline_fields),
    NUM2("scaling_efficiency", F_REQ | F_NULL, R_GE0),
    END,
};

static const struct field metrics_fields[] = {
    INT("timed_steps", F_REQ, R_GE0),
    OBJ("throughput", F_REQ, throughput_fields),
    ARR("repeats", F_REQ, repeat_element),
    OBJ("step_time_s", F_REQ, step_time_fields),
    NUM("flops_per_s", F_REQ, R_GE0),
    NUM("peak_fraction", F_REQ | F_NULL, R_GE0),
    OBJ("memory", F_REQ, memory_fields),
    OBJ("energy", F_REQ, energy_fields),
    OBJ("loss", F_REQ, loss_fields),
    NUM("host_overhead_fraction", F_REQ, R_01),
    OBJ2("interference", F_REQ, interference_fields),
    OBJ2("parallel", 0, parallel_fields),
    END,
};

static const struct field verification_fields[] = {
    BOOL("requested", F_REQ), BOOL("verified", F_REQ | F_NULL),
    STR("reference", F_REQ),  NUM("max_rel_error", F_REQ | F_NULL, R_GE0),
    STR("message", F_REQ),    END,
};

static const struct field profile_fields[] = {
    STR("op", F_REQ | F_NONEMPTY),     STR("layer", F_REQ),
    INT("calls", F_REQ, R_GE0),        NUM("seconds", F_REQ, R_GE0),
    STR("fused_into", F_REQ | F_NULL), END,
};
static const struct field profile_element[] = {OBJ(NULL, F_REQ, profile_fields)};

static const struct field run_fields[] = {
    STR("id", F_REQ | F_NONEMPTY),
    ENUM("status", F_REQ, statuses),
    STR("error", 0), /* presence depends on status: check_run */
    OBJ("config", F_REQ, config_fields),
    OBJ("model", 0, model_fields),
    OBJ("device", 0, device_fields),
    OBJ("metrics", 0, metrics_fields),
    OBJ("verification", F_REQ, verification_fields),
    ARR("profile", 0, profile_element),
    END,
};
static const struct field run_element[] = {OBJ(NULL, F_REQ, run_fields)};

static const struct field comparison_fields[] = {
    ENUM("kind", F_REQ, comparison_kinds),
    STR("baseline", F_REQ | F_NONEMPTY),
    STR("candidate", F_REQ | F_NONEMPTY),
    ENUM("metric", F_REQ, comparison_metrics),
    NUM("speedup", F_REQ, R_GT0),
    NUM2("ci95_low", F_REQ | F_NULL, R_GT0),
    NUM2("ci95_high", F_REQ | F_NULL, R_GT0),
    BOOL2("significant", F_REQ),
    END,
};
static const struct field comparison_element[] = {OBJ(NULL, F_REQ, comparison_fields)};

static const struct field document_fields[] = {
    ENUM("schema", F_REQ, schema_names),
    INT("schema_version", F_REQ, R_GE1), /* 1 or 2, checked first */
    OBJ("tool", F_REQ, tool_fields),
    SPECIAL("created", K_TIME, F_REQ),
    OBJ("scenario", F_REQ, scenario_fields),
    OBJ("environment", F_REQ, environment_fields),
    ARR("runs", F_REQ, run_element),
    ARR("comparisons", F_REQ, comparison_element),
    BOOL("interrupted", 0),
    END,
};

/* ---- the walker ---- */

struct vctx {
    int version; /* the document's schema_version */
    xpb_err *err;
    char path[768];
    size_t len;
};

/* Appends ".key" (or "key" at the root) to the path; returns the length to restore. */
static size_t push_key(struct vctx *c, const char *key)
{
    size_t old = c->len;
    int n = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s", c->len ? "." : "", key);
    c->len += n > 0 ? (size_t)n : 0;
    if (c->len >= sizeof c->path)
        c->len = sizeof c->path - 1;
    return old;
}

static size_t push_index(struct vctx *c, size_t i)
{
    size_t old = c->len;
    int n = snprintf(c->path + c->len, sizeof c->path - c->len, "[%zu]", i);
    c->len += n > 0 ? (size_t)n : 0;
    if (c->len >= sizeof c->path)
        c->len = sizeof c->path - 1;
    return old;
}

static void pop(struct vctx *c, size_t old)
{
    c->len = old;
    c->path[old] = '\0';
}

/* Reports "<path>: <message>"; always returns -1 so callers can `return fail(...)`. */
__attribute__((format(printf, 2, 3))) static int fail(struct vctx *c, const char *fmt, ...)
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
static void describe_expected(char *buf, size_t size, const struct field *f)
{
    static const char *const range_text[] = {"", " >= 0", " >= 1", " > 0", " in [0, 1]"};
    size_t n = 0;
    switch (f->kind) {
    case K_STRING:
        n = (size_t)snprintf(buf, size, "%s",
                             f->flags & F_NONEMPTY ? "a non-empty string" : "a string");
        break;
    case K_INT:
        n = (size_t)snprintf(buf, size, "an integer%s", range_text[f->range]);
        break;
    case K_NUMBER:
        n = (size_t)snprintf(buf, size, "a number%s", range_text[f->range]);
        break;
    case K_BOOL:
        n = (size_t)snprintf(buf, size, "true or false");
        break;
    case K_ENUM:
        n = (size_t)snprintf(buf, size, "%s", f->names[1] ? "one of " : "");
        for (size_t i = 0; f->names[i] && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s\"%s\"", i ? ", " : "", f->names[i]);
        break;
    case K_OBJECT:
        n = (size_t)snprintf(buf, size, "an object");
        break;
    case K_ARRAY:
        n = (size_t)snprintf(buf, size, "an array");
        break;
    case K_STRMAP:
        n = (size_t)snprintf(buf, size, "an object of strings");
        break;
    case K_NUMMAP:
        n = (size_t)snprintf(buf, size, "an object of numbers%s", range_text[f->range]);
        break;
    case K_SHA256:
        n = (size_t)snprintf(buf, size, "a SHA-256 digest (64 lower-case hex digits)");
        break;
    case K_TIME:
        n = (size_t)snprintf(buf, size, "a UTC time \"YYYY-MM-DDTHH:MM:SSZ\"");
        break;
    case K_ABI:
        n = (size_t)snprintf(buf, size, "an ABI version \"<major>.<minor>\"");
        break;
    case K_MAP:
        n = (size_t)snprintf(buf, size, "an object");
        break;
    }
    if ((f->flags & F_NULL) && n < size)
        snprintf(buf + n, size - n, " or null");
}

/* What a value is, for messages. Numbers show their value; strings show it when `value`. */
static void describe_found(char *buf, size_t size, const json_t *v, int value)
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

static int type_error(struct vctx *c, const struct field *f, const json_t *v)
{
    char want[256], found[128];
    describe_expected(want, sizeof want, f);
    describe_found(found, sizeof found, v, 0);
    return fail(c, "expected %s, found %s", want, found);
}

static int value_error(struct vctx *c, const struct field *f, const json_t *v)
{
    char want[256], found[128];
    describe_expected(want, sizeof want, f);
    describe_found(found, sizeof found, v, 1);
    return fail(c, "expected %s, found %s", want, found);
}

static int in_range(double x, unsigned range)
{
    switch (range) {
    case R_GE0:
        return x >= 0;
    case R_GE1:
        return x >= 1;
    case R_GT0:
        return x > 0;
    case R_01:
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

static int check_value(struct vctx *c, const json_t *v, const struct field *f);

static const struct field *find_field(const struct field *fields, const char *key)
{
    for (const struct field *f = fields; f->key; f++)
        if (strcmp(f->key, key) == 0)
            return f;
    return NULL;
}

/* Unknown keys first (a misspelt key is the cause of the "missing" one), then every field. */
static int check_object(struct vctx *c, const json_t *obj, const struct field *fields)
{
    for (void *it = json_object_iter((json_t *)obj); it;
         it = json_object_iter_next((json_t *)obj, it)) {
        const char *key = json_object_iter_key(it);
        const struct field *f = find_field(fields, key);
        if (f && f->since <= c->version)
            continue;
        size_t old = push_key(c, key);
        if (f)
            return fail(c, "not part of schema version %d (introduced by version %d)", c->version,
                        f->since);
        if (strcmp(key, "extra") != 0)
            return fail(c, "unknown key (free-form data belongs in an \"extra\" object)");
        if (!json_is_object(json_object_iter_value(it)))
            return fail(c, "expected an object, found %s",
                        json_is_array(json_object_iter_value(it)) ? "array" : "a scalar");
        pop(c, old);
    }
    for (const struct field *f = fields; f->key; f++) {
        const json_t *v = json_object_get(obj, f->key);
        if (f->since > c->version)
            continue; /* absent: checked above */
        size_t old = push_key(c, f->key);
        if (!v && (f->flags & F_REQ))
            return fail(c, "required key missing");
        if (v && check_value(c, v, f) != 0)
            return -1;
        pop(c, old);
    }
    return 0;
}

static int check_value(struct vctx *c, const json_t *v, const struct field *f)
{
    if (json_is_null(v)) {
        if (f->flags & F_NULL)
            return 0;
        return type_error(c, f, v);
    }
    switch (f->kind) {
    case K_STRING:
        if (!json_is_string(v))
            return type_error(c, f, v);
        if ((f->flags & F_NONEMPTY) && json_string_length(v) == 0)
            return value_error(c, f, v);
        return 0;
    case K_INT:
        if (!json_is_integer(v))
            return type_error(c, f, v);
        if (!in_range((double)json_integer_value(v), f->range))
            return value_error(c, f, v);
        return 0;
    case K_NUMBER:
        if (!json_is_number(v))
            return type_error(c, f, v);
        if (!isfinite(json_number_value(v)) || !in_range(json_number_value(v), f->range))
            return value_error(c, f, v);
        return 0;
    case K_BOOL:
        return json_is_boolean(v) ? 0 : type_error(c, f, v);
    case K_ENUM:
        if (!json_is_string(v))
            return type_error(c, f, v);
        for (size_t i = 0; f->names[i]; i++)
            if (strcmp(f->names[i], json_string_value(v)) == 0)
                return 0;
        return value_error(c, f, v);
    case K_SHA256:
        if (!json_is_string(v))
            return type_error(c, f, v);
        return is_sha256(json_string_value(v)) ? 0 : value_error(c, f, v);
    case K_TIME:
        if (!json_is_string(v))
            return type_error(c, f, v);
        return is_utc_time(json_string_value(v)) ? 0 : value_error(c, f, v);
    case K_ABI:
        if (!json_is_string(v))
            return type_error(c, f, v);
        return is_abi_version(json_string_value(v)) ? 0 : value_error(c, f, v);
    case K_OBJECT:
        if (!json_is_object(v))
            return type_error(c, f, v);
        return check_object(c, v, f->sub);
    case K_ARRAY: {
        if (!json_is_array(v))
            return type_error(c, f, v);
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t old = push_index(c, i);
            if (check_value(c, json_array_get(v, i), &f->sub[0]) != 0)
                return -1;
            pop(c, old);
        }
        return 0;
    }
    case K_MAP: {
        if (!json_is_object(v))
            return type_error(c, f, v);
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            const char *key = json_object_iter_key(it);
            size_t old = push_key(c, key);
            size_t i = 0;
            while (f->names && f->names[i] && strcmp(f->names[i], key) != 0)
                i++;
            if (f->names && !f->names[i])
                return fail(c, "unknown key");
            if (check_value(c, json_object_iter_value(it), &f->sub[0]) != 0)
                return -1;
            pop(c, old);
        }
        return 0;
    }
    case K_STRMAP:
    case K_NUMMAP: {
        if (!json_is_object(v))
            return type_error(c, f, v);
        struct field value_field = f->kind == K_STRMAP ? (struct field)STR(NULL, F_REQ)
                                                       : (struct field)NUM(NULL, F_REQ, f->range);
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            const char *key = json_object_iter_key(it);
            size_t old = push_key(c, key);
            if (f->names) {
                size_t i = 0;
                while (f->names[i] && strcmp(f->names[i], key) != 0)
                    i++;
                if (!f->names[i])
                    return fail(c, f->names == xpb_precision_names
                                       ? "unknown key (the keys are precision names)"
                                       : "unknown key");
            }
            if (check_value(c, json_object_iter_value(it), &value_field) != 0)
                return -1;
            pop(c, old);
        }
        return 0;
    }
    }
    return fail(c, "internal error: unknown schema kind %u", f->kind);
}

/* ---- rules across fields ---- */

static const char *str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* A run over several ranks: metrics.parallel matches config.world_size (one entry per rank,
 * in rank order), a baseline throughput or the reason there is none, and an efficiency only
 * with a baseline. `ok`: the run finished (then metrics.parallel is required). Called with
 * the path at the run. */
static int check_parallel(struct vctx *c, const json_t *run, int ok)
{
    const json_t *config = json_object_get(run, "config");
    const json_t *par = json_object_get(json_object_get(run, "metrics"), "parallel");
    const json_t *ws = json_object_get(config, "world_size");
    json_int_t world = ws ? json_integer_value(ws) : 1;
    size_t old = push_key(c, "metrics");
    push_key(c, "parallel");
    if (!par && ok && world > 1)
        return fail(c, "required when config.world_size is above 1 and status is \"ok\"");
    if (!par) {
        pop(c, old);
        return 0;
    }
    if (json_integer_value(json_object_get(par, "world_size")) != world || world < 2)
        return fail(c,
                    "world_size %" JSON_INTEGER_FORMAT
                    " must equal config.world_size (%" JSON_INTEGER_FORMAT ") and be at least 2",
                    json_integer_value(json_object_get(par, "world_size")), world);
    const json_t *ranks = json_object_get(par, "ranks");
    if ((json_int_t)json_array_size(ranks) != world)
        return fail(c, "ranks has %zu entries, expected one per rank (%" JSON_INTEGER_FORMAT ")",
                    json_array_size(ranks), world);
    for (size_t r = 0; r < json_array_size(ranks); r++)
        if (json_integer_value(json_object_get(json_array_get(ranks, r), "rank")) !=
            (json_int_t)r) {
            push_key(c, "ranks");
            push_index(c, r);
            return fail(c, "rank must be %zu (entries in rank order)", r);
        }
    const json_t *b = json_object_get(par, "baseline");
    int have = json_is_number(json_object_get(b, "throughput"));
    if (have == !json_is_null(json_object_get(b, "reason")))
        return fail(c, "baseline.reason must be null exactly when baseline.throughput is a number");
    if (!have && !json_is_null(json_object_get(par, "scaling_efficiency")))
        return fail(c, "scaling_efficiency must be null without a baseline throughput");
    pop(c, old);
    return 0;
}

/* A run's fields that depend on its status and mode (types are already checked). */
static int check_run(struct vctx *c, const json_t *run)
{
    const char *status = str_at(run, "status");
    int ok = strcmp(status, "ok") == 0;
    const json_t *config = json_object_get(run, "config");
    const json_t *metrics = json_object_get(run, "metrics");
    size_t old;

    if (ok && json_object_get(run, "error")) {
        old = push_key(c, "error");
        return fail(c, "must be absent when status is \"ok\"");
    }
    if (!ok && !json_object_get(run, "error")) {
        old = push_key(c, "error");
        return fail(c, "required when status is \"%s\"", status);
    }
    if (ok && !json_object_get(run, "model")) {
        old = push_key(c, "model");
        return fail(c, "required when status is \"ok\"");
    }
    if (ok && !metrics) {
        old = push_key(c, "metrics");
        return fail(c, "required when status is \"ok\"");
    }
    if (json_object_get(config, "optimizer") && strcmp(str_at(config, "mode"), "train") != 0) {
        old = push_key(c, "config");
        push_key(c, "optimizer");
        return fail(c, "only allowed when mode is \"train\"");
    }

    const json_t *verification = json_object_get(run, "verification");
    if (!json_is_true(json_object_get(verification, "requested")) &&
        !json_is_null(json_object_get(verification, "verified"))) {
        old = push_key(c, "verification");
        push_key(c, "verified");
        return fail(c, "must be null when requested is false");
    }

    if (c->version >= 2 && check_parallel(c, run, ok) != 0)
        return -1;
    if (!metrics)
        return 0;
    old = push_key(c, "metrics");

    const json_t *tp = json_object_get(metrics, "throughput");
    double lo = json_number_value(json_object_get(tp, "min"));
    double med = json_number_value(json_object_get(tp, "median"));
    double hi = json_number_value(json_object_get(tp, "max"));
    if (!(lo <= med && med <= hi)) {
        push_key(c, "throughput");
        return fail(c, "min <= median <= max does not hold (min %g, median %g, max %g)", lo, med,
                    hi);
    }

    const json_t *clo = json_object_get(tp, "ci95_low"), *chi = json_object_get(tp, "ci95_high");
    if (json_is_null(clo) != json_is_null(chi) ||
        (json_is_number(clo) && json_number_value(clo) > json_number_value(chi))) {
        push_key(c, "throughput");
        return fail(c, "ci95_low and ci95_high are both null, or numbers with low <= high");
    }

    const json_t *st = json_object_get(metrics, "step_time_s");
    double p50 = json_number_value(json_object_get(st, "p50"));
    double p95 = json_number_value(json_object_get(st, "p95"));
    double p99 = json_number_value(json_object_get(st, "p99"));
    if (!(p50 <= p95 && p95 <= p99)) {
        push_key(c, "step_time_s");
        return fail(c, "p50 <= p95 <= p99 does not hold (p50 %g, p95 %g, p99 %g)", p50, p95, p99);
    }

    size_t n_repeats = json_array_size(json_object_get(metrics, "repeats"));
    json_int_t want = json_integer_value(json_object_get(config, "repeats"));
    if ((json_int_t)n_repeats > want || (ok && (json_int_t)n_repeats != want)) {
        push_key(c, "repeats");
        return fail(c, "%zu entries, config.repeats is %" JSON_INTEGER_FORMAT "%s", n_repeats, want,
                    ok ? " (a finished run has one entry per repeat)" : "");
    }

    const json_t *energy = json_object_get(metrics, "energy");
    int measured = json_is_true(json_object_get(energy, "measured"));
    static const char *const energy_keys[] = {"source", "joules", "samples_per_joule"};
    if (c->version >= 2 && measured == !json_is_null(json_object_get(energy, "reason"))) {
        push_key(c, "energy");
        push_key(c, "reason");
        return fail(c, measured ? "must be null when measured is true"
                                : "must say why when measured is false");
    }
    for (size_t i = 0; i < 3; i++) {
        const json_t *v = json_object_get(energy, energy_keys[i]);
        if (measured != !json_is_null(v)) {
            push_key(c, "energy");
            push_key(c, energy_keys[i]);
            return fail(c, measured ? "must not be null when measured is true"
                                    : "must be null when measured is false");
        }
    }
    pop(c, old);
    return 0;
}

/* A version-2 comparison's interval holds its speedup, and `significant` says whether it
 * excludes 1 (no interval: not significant). */
static int check_interval(struct vctx *c, const json_t *cmp, size_t k)
{
    const json_t *lo = json_object_get(cmp, "ci95_low"), *hi = json_object_get(cmp, "ci95_high");
    double speedup = json_number_value(json_object_get(cmp, "speedup"));
    int significant = json_is_true(json_object_get(cmp, "significant"));
    push_key(c, "comparisons");
    push_index(c, k);
    if (json_is_null(lo) != json_is_null(hi))
        return fail(c, "ci95_low and ci95_high are both numbers or both null");
    if (json_is_null(lo)) {
        if (significant)
            return fail(c, "significant is true without an interval");
        return 0;
    }
    double l = json_number_value(lo), h = json_number_value(hi);
    /* the relative slack covers the 17-digit round trip of the three numbers */
    if (!(l <= speedup * (1 + 1e-12) && speedup <= h * (1 + 1e-12)))
        return fail(c, "ci95_low <= speedup <= ci95_high does not hold (%g, %g, %g)", l, speedup,
                    h);
    if (significant != (l > 1 || h < 1))
        return fail(c, "significant is %s but the interval [%g, %g] %s 1",
                    significant ? "true" : "false", l, h, significant ? "contains" : "excludes");
    return 0;
}

/* Unique run ids and comparisons that name two different existing runs. */
static int check_ids(struct vctx *c, const json_t *doc)
{
    const json_t *runs = json_object_get(doc, "runs");
    size_t n = json_array_size(runs);
    for (size_t i = 0; i < n; i++) {
        const char *id = str_at(json_array_get(runs, i), "id");
        for (size_t j = 0; j < i; j++) {
            if (strcmp(id, str_at(json_array_get(runs, j), "id")) == 0) {
                push_key(c, "runs");
                push_index(c, i);
                push_key(c, "id");
                return fail(c, "duplicate run id \"%s\" (also runs[%zu].id)", id, j);
            }
        }
    }
    const json_t *comparisons = json_object_get(doc, "comparisons");
    for (size_t k = 0; k < json_array_size(comparisons); k++) {
        const json_t *cmp = json_array_get(comparisons, k);
        static const char *const roles[] = {"baseline", "candidate"};
        for (size_t r = 0; r < 2; r++) {
            const char *id = str_at(cmp, roles[r]);
            size_t i = 0;
            while (i < n && strcmp(id, str_at(json_array_get(runs, i), "id")) != 0)
                i++;
            if (i == n) {
                push_key(c, "comparisons");
                push_index(c, k);
                push_key(c, roles[r]);
                return fail(c, "no run has id \"%s\"", id);
            }
        }
        if (strcmp(str_at(cmp, "baseline"), str_at(cmp, "candidate")) == 0) {
            push_key(c, "comparisons");
            push_index(c, k);
            return fail(c, "baseline and candidate are the same run");
        }
        if (c->version >= 2 && check_interval(c, cmp, k) != 0)
            return -1;
    }
    return 0;
}

xpb_status xpb_results_validate(const json_t *doc, xpb_err *err)
{
    struct vctx c = {.err = err, .len = 0};
    c.path[0] = '\0';
    static const struct field document = OBJ(NULL, F_REQ, document_fields);
    if (!doc || !json_is_object(doc)) {
        if (!doc)
            return xpb_err_set(err, XPB_PARSE_ERROR, "document: missing");
        type_error(&c, &document, doc);
        return XPB_PARSE_ERROR;
    }

    /* Schema and version first: a document of another kind or version gets a message about
     * that rather than about the first key this version does not know. */
    const json_t *schema = json_object_get(doc, "schema");
    if (!schema)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "schema: required key missing (not an xpubench results document?)");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), XPB_RESULTS_SCHEMA) != 0) {
        char found[128];
        describe_found(found, sizeof found, schema, 1);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "schema: expected \"%s\", found %s (not an xpubench results document)",
                           XPB_RESULTS_SCHEMA, found);
    }
    const json_t *version = json_object_get(doc, "schema_version");
    if (!version)
        return xpb_err_set(err, XPB_PARSE_ERROR, "schema_version: required key missing");
    if (!json_is_integer(version) || json_integer_value(version) < XPB_RESULTS_SCHEMA_MIN_VERSION ||
        json_integer_value(version) > XPB_RESULTS_SCHEMA_VERSION) {
        char found[128];
        describe_found(found, sizeof found, version, 1);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "schema_version: version %s is not supported (this build reads "
                           "versions %d to %d)",
                           found, XPB_RESULTS_SCHEMA_MIN_VERSION, XPB_RESULTS_SCHEMA_VERSION);
    }
    c.version = (int)json_integer_value(version);

    if (check_object(&c, doc, document_fields) != 0)
        return XPB_PARSE_ERROR;

    const json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        size_t old = push_key(&c, "runs");
        push_index(&c, i);
        if (check_run(&c, json_array_get(runs, i)) != 0)
            return XPB_PARSE_ERROR;
        pop(&c, old);
    }
    if (check_ids(&c, doc) != 0)
        return XPB_PARSE_ERROR;
    return XPB_OK;
}
