/* Environment and provenance (see report_sections.h): one column per document with where the
 * numbers come from (file, tool, scenario and its hash, overrides, baseline) and the machine
 * that made them; then the devices the runs used, per backend. */
#include <stdio.h>
#include <string.h>

#include "report/report_runs.h"
#include "report/report_sections.h"

#define MAX_DOCS_IN_COLUMNS 64

typedef enum { ROW_TEXT, ROW_NUMBER } row_kind;

/* One row of the provenance table: a label and, per document, text or a number at a path. */
typedef struct env_row {
    const char *label;
    row_kind kind;
    const char *path; /* the value's path in the document */
    xpb_unit unit;
} env_row;

static const env_row rows[] = {
    {"created (UTC)", ROW_TEXT, "created", XPB_UNIT_NONE},
    {"tool", ROW_TEXT, "tool", XPB_UNIT_NONE},
    {"schema version", ROW_NUMBER, "schema_version", XPB_UNIT_COUNT},
    {"scenario", ROW_TEXT, "scenario", XPB_UNIT_NONE},
    {"scenario SHA-256", ROW_TEXT, "scenario.sha256", XPB_UNIT_NONE},
    {"overrides (--set)", ROW_TEXT, "scenario.overrides", XPB_UNIT_NONE},
    {"baseline backend", ROW_TEXT, "scenario.baseline", XPB_UNIT_NONE},
    {"complete", ROW_TEXT, "interrupted", XPB_UNIT_NONE},
    {"OS", ROW_TEXT, "environment.os", XPB_UNIT_NONE},
    {"kernel", ROW_TEXT, "environment.kernel", XPB_UNIT_NONE},
    {"CPU", ROW_TEXT, "environment.cpu.model", XPB_UNIT_NONE},
    {"cores", ROW_NUMBER, "environment.cpu.cores", XPB_UNIT_COUNT},
    {"logical CPUs", ROW_NUMBER, "environment.cpu.logical_cpus", XPB_UNIT_COUNT},
    {"CPU flags", ROW_TEXT, "environment.cpu.flags", XPB_UNIT_NONE},
    {"memory GiB", ROW_NUMBER, "environment.memory_bytes", XPB_UNIT_GIB},
    {"compiler", ROW_TEXT, "environment.compiler", XPB_UNIT_NONE},
    {"libraries", ROW_TEXT, "environment.libraries", XPB_UNIT_NONE},
    {"accelerators", ROW_TEXT, "environment.accelerators", XPB_UNIT_NONE},
    {"plugins", ROW_TEXT, "environment.plugins", XPB_UNIT_NONE},
};

/* s, or dflt when s is NULL (either is the caller's). */
static const char *or_default(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

/* Appends `s` to buf (separated by ", " after the first item). */
static void append(char *buf, size_t size, const char *s)
{
    size_t len = strlen(buf);
    if (len < size - 1)
        snprintf(buf + len, size - len, "%s%s", len ? ", " : "", s);
}

/* The text of a list or object value: strings joined, "key value" pairs, named objects. */
static void join_value(char *buf, size_t size, const json_t *v)
{
    buf[0] = '\0';
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *e = json_array_get(v, i);
            char item[320];
            if (json_is_string(e))
                snprintf(item, sizeof item, "%s", json_string_value(e));
            else /* accelerators and plugins: name, then driver or version and ABI */
                snprintf(
                    item, sizeof item, "%s %s%s%s",
                    or_default(json_string_value(json_object_get(e, "name")), "?"),
                    or_default(json_string_value(json_object_get(e, "version")),
                               or_default(json_string_value(json_object_get(e, "driver")), "")),
                    json_object_get(e, "abi") ? " ABI " : "",
                    or_default(json_string_value(json_object_get(e, "abi")), ""));
            append(buf, size, item);
        }
        if (!buf[0])
            snprintf(buf, size, "none");
        return;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)v, key, value)
    {
        char item[320];
        snprintf(item, sizeof item, "%s %s", key, or_default(json_string_value(value), "?"));
        append(buf, size, item);
    }
}

/* The text of row `row` for document d: an arena string, a static one or one borrowed from the
 * document; NULL when there is none. */
static const char *row_text(xpb_report *r, size_t d, const env_row *row)
{
    const json_t *doc = r->docs[d], *v = xpb_json_at(doc, row->path);
    char buf[4096];
    if (strcmp(row->path, "tool") == 0)
        return xpb_arena_printf(&r->arena, "%s %s",
                                or_default(json_string_value(json_object_get(v, "name")), "?"),
                                or_default(json_string_value(json_object_get(v, "version")), "?"));
    if (strcmp(row->path, "scenario") == 0)
        return xpb_arena_printf(&r->arena, "%s (%s)",
                                or_default(json_string_value(json_object_get(v, "name")), "?"),
                                or_default(json_string_value(json_object_get(v, "path")), "?"));
    if (strcmp(row->path, "scenario.baseline") == 0)
        return json_is_string(v) ? json_string_value(v)
               : json_is_null(v) ? "the fastest CPU backend of each comparison"
                                 : "cpu_ref (version-1 file)";
    if (strcmp(row->path, "interrupted") == 0)
        return json_is_true(v) ? "no: interrupted (Ctrl-C) before every run finished" : "yes";
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_array(v) || json_is_object(v)) {
        join_value(buf, sizeof buf, v);
        return xpb_arena_strdup(&r->arena, buf[0] ? buf : "none");
    }
    return NULL;
}

static xpb_status provenance_table(xpb_report *r, xpb_report_section *s)
{
    const char *headers[MAX_DOCS_IN_COLUMNS + 1] = {""};
    size_t n_docs = r->n_docs < MAX_DOCS_IN_COLUMNS ? r->n_docs : MAX_DOCS_IN_COLUMNS;
    for (size_t d = 0; d < n_docs; d++)
        headers[d + 1] = r->names[d];
    xpb_report_table *t = xpb_report_table_new(r, s, "provenance", "Where the numbers come from",
                                               headers, n_docs + 1);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->key_value = 1;
    if (n_docs < r->n_docs)
        t->note = xpb_arena_printf(&r->arena, "the first %zu of %zu files", n_docs, r->n_docs);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(&c[0], rows[i].label);
        for (size_t d = 0; d < n_docs; d++) {
            const json_t *v = xpb_json_at(r->docs[d], rows[i].path);
            if (rows[i].kind == ROW_NUMBER && json_is_number(v))
                xpb_cell_number(&c[d + 1], json_number_value(v), rows[i].unit,
                                xpb_arena_printf(&r->arena, "f%zu:%s", d, rows[i].path));
            else if (rows[i].kind == ROW_TEXT)
                xpb_cell_text(&c[d + 1], row_text(r, d, &rows[i]));
        }
    }
    return XPB_OK;
}

/* Whether an earlier run of the same document used the same backend on the same device. */
static int device_seen(const xpb_rruns *rs, size_t upto, const xpb_rrun *run)
{
    const char *name = json_string_value(xpb_json_at(run->run, "device.name"));
    for (size_t i = 0; i < upto; i++) {
        const xpb_rrun *o = &rs->items[i];
        const char *other = json_string_value(xpb_json_at(o->run, "device.name"));
        if (o->doc == run->doc && strcmp(o->backend, run->backend) == 0 && other &&
            strcmp(other, name) == 0)
            return 1;
    }
    return 0;
}

static xpb_status devices_table(xpb_report *r, xpb_report_section *s)
{
    const char *headers[] = {"file",      "backend",    "device",      "kind",
                             "libraries", "precisions", "capabilities"};
    size_t skip = r->n_docs > 1 ? 0 : 1;
    xpb_report_table *t =
        xpb_report_table_new(r, s, "devices", "Devices the runs used", headers + skip, 7 - skip);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        const json_t *dev = json_object_get(run->run, "device");
        if (!json_is_string(json_object_get(dev, "name")) || device_seen(r->runs, i, run))
            continue;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        char buf[1024];
        if (!skip)
            xpb_cell_text(c++, r->names[run->doc]);
        xpb_cell_text(&c[0], run->backend);
        xpb_cell_text(&c[1], json_string_value(json_object_get(dev, "name")));
        xpb_cell_text(&c[2],
                      or_default(json_string_value(json_object_get(dev, "kind")), "unknown"));
        xpb_cell_text(&c[3], json_string_value(json_object_get(dev, "libraries")));
        buf[0] = '\0';
        const char *key;
        const json_t *value;
        json_object_foreach(json_object_get(dev, "precisions"), key, value)
        {
            char item[96];
            snprintf(item, sizeof item, "%s%s", key,
                     strcmp(or_default(json_string_value(value), ""), "emulated") == 0
                         ? " (emulated)"
                         : "");
            append(buf, sizeof buf, item);
        }
        xpb_cell_text(&c[4], buf[0] ? xpb_arena_strdup(&r->arena, buf) : NULL);
        join_value(buf, sizeof buf, json_object_get(dev, "capabilities"));
        xpb_cell_text(&c[5], json_is_array(json_object_get(dev, "capabilities"))
                                 ? xpb_arena_strdup(&r->arena, buf)
                                 : NULL);
    }
    return XPB_OK;
}

xpb_status xpb_report_env(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "environment", "Environment and provenance");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    xpb_status st = provenance_table(r, s);
    if (st == XPB_OK)
        st = devices_table(r, s);
    return st;
}
