/* Results documents: creation, writing and loading (see results.h). */
#include "results/results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/atomic_file.h"
#include "results/json_shape.h"

#ifndef XPB_VERSION
#define XPB_VERSION "0.0.0" /* the build defines it from the project version */
#endif

/* Top-level keys in the order files show them, whatever order the runner filled them in. */
static const char *const top_level_order[] = {
    "schema",   "schema_version", "tool", "created",     "interrupted",
    "scenario", "environment",    "runs", "comparisons", "extra",
};

/* Sets doc[key] to a new reference; returns -1 (and drops it) when either is missing. */
static int set_new(json_t *obj, const char *key, json_t *value)
{
    return value ? json_object_set_new(obj, key, value) : -1;
}

json_t *xpb_results_new(void)
{
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return NULL;

    json_t *doc = json_object();
    json_t *tool = json_object();
    if (!doc || !tool)
        goto free_doc;
    if (set_new(tool, "name", json_string("xpubench")) != 0 ||
        set_new(tool, "version", json_string(XPB_VERSION)) != 0)
        goto free_doc;
    if (set_new(doc, "schema", json_string(XPB_RESULTS_SCHEMA)) != 0 ||
        set_new(doc, "schema_version", json_integer(XPB_RESULTS_SCHEMA_VERSION)) != 0 ||
        json_object_set(doc, "tool", tool) != 0 ||
        set_new(doc, "created", json_string(created)) != 0 ||
        set_new(doc, "environment", json_object()) != 0 ||
        set_new(doc, "runs", json_array()) != 0 || set_new(doc, "comparisons", json_array()) != 0)
        goto free_doc;
    json_decref(tool);
    return doc;
free_doc:
    json_decref(tool);
    json_decref(doc);
    return NULL;
}

xpb_status xpb_results_append_run(json_t *doc, json_t *run)
{
    json_t *runs = json_object_get(doc, "runs");
    if (!json_is_array(runs)) {
        json_decref(run);
        return XPB_INVALID_ARGUMENT;
    }
    return json_array_append_new(runs, run) == 0 ? XPB_OK : XPB_OUT_OF_MEMORY;
}

size_t xpb_results_run_count(const json_t *doc)
{
    return json_array_size(json_object_get(doc, "runs"));
}

int xpb_results_mark_interrupted(json_t *doc)
{
    if (json_is_true(json_object_get(doc, "interrupted")))
        return 0;
    return json_object_set_new(doc, "interrupted", json_true()) == 0;
}

void xpb_results_mark_complete(json_t *doc)
{
    json_object_del(doc, "interrupted");
}

int xpb_results_complete(const json_t *doc)
{
    return !json_is_true(json_object_get(doc, "interrupted"));
}

xpb_status xpb_results_add_library(json_t *doc, const char *name, const char *version)
{
    json_t *libraries = json_object_get(json_object_get(doc, "environment"), "libraries");
    if (!json_is_object(libraries))
        return XPB_INVALID_ARGUMENT;
    return json_object_set_new(libraries, name, json_string(version)) == 0 ? XPB_OK
                                                                           : XPB_OUT_OF_MEMORY;
}

/* XPB_OK when `len` bytes of JSON `text` keep to the limits of results_limits.h; otherwise
 * XPB_PARSE_ERROR (`verb` "has" for a file read, "not written: it would hold" for one being
 * written) with what the limit is and what the text has. */
static xpb_status within_limits(const char *text, size_t len, const char *path, const char *verb,
                                xpb_err *err)
{
    struct xpb_json_shape shape;
    xpb_json_shape(&shape, text, len);
    if (shape.nodes > XPB_RESULTS_MAX_NODES)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: %s %zu values and keys, more than the %d a results file may hold "
                           "(the leaderboard's limit too): split the runs into several files",
                           path, verb, shape.nodes, XPB_RESULTS_MAX_NODES);
    if (shape.depth > XPB_RESULTS_MAX_DEPTH)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: %s values nested %zu levels deep, deeper than the %d a results "
                           "file may nest (\"extra\" objects included; the leaderboard's limit "
                           "too)",
                           path, verb, shape.depth, XPB_RESULTS_MAX_DEPTH);
    return XPB_OK;
}

/* Validates `doc` and writes it to `path`, replacing what is there (`replace`) or only where
 * nothing is (xpb_atomic_create). */
static xpb_status write_document(const json_t *doc, const char *path, int replace, xpb_err *err)
{
    xpb_status st = xpb_results_validate(doc, err);
    if (st != XPB_OK) {
        xpb_err_prefix(err, "%s: not written, the document is invalid", path);
        return st;
    }

    /* A shallow copy that only orders the top-level keys (values are shared references). */
    json_t *ordered = json_object();
    if (!ordered)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
    size_t n_order = sizeof top_level_order / sizeof top_level_order[0];
    for (size_t i = 0; i < n_order; i++) {
        json_t *v = json_object_get(doc, top_level_order[i]);
        if (v && json_object_set(ordered, top_level_order[i], v) != 0) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
            goto free_ordered;
        }
    }
    char *text = json_dumps(ordered, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    if (!text) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: cannot serialise the document", path);
        goto free_ordered;
    }
    size_t len = strlen(text);
    if ((st = within_limits(text, len, path, "not written: it would hold", err)) != XPB_OK)
        goto free_text;
    char *with_newline = realloc(text, len + 2);
    if (!with_newline) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
        goto free_text;
    }
    text = with_newline;
    text[len] = '\n';
    text[len + 1] = '\0';
    st = replace ? xpb_atomic_write(path, text, len + 1, err)
                 : xpb_atomic_create(path, text, len + 1, err);
free_text:
    free(text);
free_ordered:
    json_decref(ordered);
    return st;
}

xpb_status xpb_results_write(const json_t *doc, const char *path, xpb_err *err)
{
    return write_document(doc, path, 1, err);
}

xpb_status xpb_results_create(const json_t *doc, const char *path, xpb_err *err)
{
    return write_document(doc, path, 0, err);
}

/* Reads at most limit bytes of f into a malloc'ed buffer; *too_big when there is more. */
static xpb_status read_limited(char **out, size_t *out_len, int *too_big, FILE *f, size_t limit)
{
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap);
    *too_big = 0;
    if (!buf)
        return XPB_OUT_OF_MEMORY;
    for (;;) {
        if (len == cap) {
            if (cap > limit) {
                *too_big = 1;
                break;
            }
            size_t next = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            char *grown = realloc(buf, next);
            if (!grown) {
                free(buf);
                return XPB_OUT_OF_MEMORY;
            }
            buf = grown;
            cap = next;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        return XPB_IO_ERROR;
    }
    if (len > limit)
        *too_big = 1;
    *out = buf;
    *out_len = len;
    return XPB_OK;
}

xpb_status xpb_results_load(json_t **out, const char *path, xpb_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
        (unsigned long long)sb.st_size > XPB_RESULTS_MAX_BYTES) {
        fclose(f);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: %lld bytes is larger than the %u MiB a results file may have", path,
                           (long long)sb.st_size, XPB_RESULTS_MAX_BYTES >> 20);
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return xpb_err_set(err, XPB_IO_ERROR, "%s: is a directory", path);
    }
    char *buf = NULL;
    size_t len = 0;
    int too_big = 0;
    xpb_status st = read_limited(&buf, &len, &too_big, f, XPB_RESULTS_MAX_BYTES);
    int read_errno = errno;
    fclose(f);
    if (st == XPB_OUT_OF_MEMORY)
        return xpb_err_set(err, st, "%s: out of memory", path);
    if (st != XPB_OK)
        return xpb_err_set(err, st, "%s: cannot read: %s", path, strerror(read_errno));
    if (too_big) {
        free(buf);
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: larger than the %u MiB a results file may have", path,
                           XPB_RESULTS_MAX_BYTES >> 20);
    }

    /* measured before it is parsed: a tree is never built for a file beyond the limits */
    if ((st = within_limits(buf, len, path, "has", err)) != XPB_OK) {
        free(buf);
        return st;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    free(buf);
    if (!doc) {
        if (len == 0)
            return xpb_err_set(err, XPB_PARSE_ERROR, "%s: empty file, expected a JSON object",
                               path);
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s:%d:%d: %s", path, jerr.line, jerr.column,
                           jerr.text);
    }
    if ((st = xpb_results_validate(doc, err)) != XPB_OK) {
        xpb_err_prefix(err, "%s", path);
        json_decref(doc);
        return st;
    }
    *out = doc;
    return XPB_OK;
}
