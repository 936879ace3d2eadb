/* Environment and provenance (see report_sections.h): one column per document with where the
 * numbers come from (file, tool, scenario and its hash, overrides, baseline) and the machine
 * that made them; then the devices the runs used, per backend. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_runs.h"
#include "report/report_sections.h"

#define MAX_DOCS_IN_COLUMNS 64

/* The rows of the provenance table, in order. */
typedef enum {
    ROW_CREATED,
    ROW_TOOL,
    ROW_SCHEMA_VERSION,
    ROW_SCENARIO,
    ROW_SCENARIO_SHA,
    ROW_OVERRIDES,
    ROW_BASELINE,
    ROW_COMPLETE,
    ROW_OS,
    ROW_KERNEL,
    ROW_CPU,
    ROW_CORES,
    ROW_LOGICAL_CPUS,
    ROW_CPU_FLAGS,
    ROW_MEMORY,
    ROW_COMPILER,
    ROW_LIBRARIES,
    ROW_ACCELERATORS,
    ROW_PLUGINS,
    N_ROWS
} row_id;

/* One row of the provenance table: its label, and for a number its path in the document (the
 * cell's source) and unit; numbers are read by number_of. */
static const struct {
    const char *label;
    const char *path; /* numbers only; NULL for a row of text */
    xpb_unit unit;
} rows[N_ROWS] = {
    [ROW_CREATED] = {"created (UTC)", NULL, XPB_UNIT_NONE},
    [ROW_TOOL] = {"tool", NULL, XPB_UNIT_NONE},
    [ROW_SCHEMA_VERSION] = {"schema version", "schema_version", XPB_UNIT_COUNT},
    [ROW_SCENARIO] = {"scenario", NULL, XPB_UNIT_NONE},
    [ROW_SCENARIO_SHA] = {"scenario SHA-256", NULL, XPB_UNIT_NONE},
    [ROW_OVERRIDES] = {"overrides (--set)", NULL, XPB_UNIT_NONE},
    [ROW_BASELINE] = {"baseline backend", NULL, XPB_UNIT_NONE},
    [ROW_COMPLETE] = {"complete", NULL, XPB_UNIT_NONE},
    [ROW_OS] = {"OS", NULL, XPB_UNIT_NONE},
    [ROW_KERNEL] = {"kernel", NULL, XPB_UNIT_NONE},
    [ROW_CPU] = {"CPU", NULL, XPB_UNIT_NONE},
    [ROW_CORES] = {"cores", "environment.cpu.cores", XPB_UNIT_COUNT},
    [ROW_LOGICAL_CPUS] = {"logical CPUs", "environment.cpu.logical_cpus", XPB_UNIT_COUNT},
    [ROW_CPU_FLAGS] = {"CPU flags", NULL, XPB_UNIT_NONE},
    [ROW_MEMORY] = {"memory GiB", "environment.memory_bytes", XPB_UNIT_GIB},
    [ROW_COMPILER] = {"compiler", NULL, XPB_UNIT_NONE},
    [ROW_LIBRARIES] = {"libraries", NULL, XPB_UNIT_NONE},
    [ROW_ACCELERATORS] = {"accelerators", NULL, XPB_UNIT_NONE},
    [ROW_PLUGINS] = {"plugins", NULL, XPB_UNIT_NONE},
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

/* The strings of a list joined, "none" for an empty one. */
static void join_strings(char *buf, size_t size, const char *const *items, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        append(buf, size, or_default(items[i], ""));
    if (!buf[0])
        snprintf(buf, size, "none");
}

/* "name version", "name driver" or "name version ABI abi" of a named entry, appended. */
static void append_named(char *buf, size_t size, const char *name, const char *version,
                         const char *abi)
{
    char item[320];
    snprintf(item, sizeof item, "%s %s%s%s", or_default(name, "?"), or_default(version, ""),
             abi ? " ABI " : "", or_default(abi, ""));
    append(buf, size, item);
}

/* The number of row `row` of document v; NaN when it has none. */
static double number_of(const struct xpb_results_doc *v, row_id row)
{
    int64_t x = row == ROW_SCHEMA_VERSION ? v->schema_version
                : row == ROW_CORES        ? v->environment.cpu.cores
                : row == ROW_LOGICAL_CPUS ? v->environment.cpu.logical_cpus
                                          : v->environment.memory_bytes;
    return x != XPB_RESULTS_NO_INT ? (double)x : NAN;
}

/* The text of the lists of the environment: libraries ("key value"), accelerators and plugins
 * (named entries), into buf ("none" when empty). */
static void list_text(char *buf, size_t size, const struct xpb_results_environment *e, row_id row)
{
    buf[0] = '\0';
    if (row == ROW_LIBRARIES)
        for (size_t i = 0; i < e->n_libraries; i++) {
            char item[320];
            snprintf(item, sizeof item, "%s %s", e->libraries[i].key,
                     or_default(e->libraries[i].value, "?"));
            append(buf, size, item);
        }
    else if (row == ROW_ACCELERATORS)
        for (size_t i = 0; i < e->n_accelerators; i++)
            append_named(buf, size, e->accelerators[i].name, e->accelerators[i].driver, NULL);
    else
        for (size_t i = 0; i < e->n_plugins; i++)
            append_named(buf, size, e->plugins[i].name, e->plugins[i].version, e->plugins[i].abi);
    if (!buf[0])
        snprintf(buf, size, "none");
}

/* The text of row `row` for document d: an arena string, a static one or one borrowed from the
 * document; NULL when there is none. */
static const char *row_text(xpb_report *r, size_t d, row_id row)
{
    const struct xpb_results_doc *v = &r->views[d];
    const struct xpb_results_environment *e = &v->environment;
    char buf[4096];
    switch (row) {
    case ROW_CREATED:
        return v->created;
    case ROW_TOOL:
        return xpb_arena_printf(&r->arena, "%s %s", or_default(v->tool_name, "?"),
                                or_default(v->tool_version, "?"));
    case ROW_SCENARIO:
        return xpb_arena_printf(&r->arena, "%s (%s)", or_default(v->scenario.name, "?"),
                                or_default(v->scenario.path, "?"));
    case ROW_SCENARIO_SHA:
        return v->scenario.sha256;
    case ROW_OVERRIDES:
        join_strings(buf, sizeof buf, v->scenario.overrides, v->scenario.n_overrides);
        return xpb_arena_strdup(&r->arena, buf);
    case ROW_BASELINE:
        return v->scenario.baseline       ? v->scenario.baseline
               : v->scenario.has_baseline ? "the fastest CPU backend of each comparison"
                                          : "cpu_ref (version-1 file)";
    case ROW_COMPLETE:
        return v->interrupted == 1
                   ? "no: the invocation did not finish every run (stopped, killed, "
                     "crashed or still running)"
                   : "yes";
    case ROW_OS:
        return e->os;
    case ROW_KERNEL:
        return e->kernel;
    case ROW_CPU:
        return e->cpu.model;
    case ROW_CPU_FLAGS:
        join_strings(buf, sizeof buf, e->cpu.flags, e->cpu.n_flags);
        return xpb_arena_strdup(&r->arena, buf);
    case ROW_COMPILER:
        return e->compiler;
    case ROW_LIBRARIES:
    case ROW_ACCELERATORS:
    case ROW_PLUGINS:
        list_text(buf, sizeof buf, e, row);
        return xpb_arena_strdup(&r->arena, buf);
    default:
        return NULL;
    }
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
    for (size_t i = 0; i < N_ROWS; i++) {
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(&c[0], rows[i].label);
        for (size_t d = 0; d < n_docs; d++) {
            double v = rows[i].path ? number_of(&r->views[d], (row_id)i) : NAN;
            if (!isnan(v))
                xpb_cell_number(&c[d + 1], v, rows[i].unit,
                                xpb_arena_printf(&r->arena, "f%zu:%s", d, rows[i].path));
            else if (!rows[i].path)
                xpb_cell_text(&c[d + 1], row_text(r, d, (row_id)i));
        }
    }
    return XPB_OK;
}

/* Whether an earlier run of the same document used the same backend on the same device. */
static int device_seen(const xpb_rruns *rs, size_t upto, const xpb_rrun *run)
{
    const char *name = run->v->device.name;
    for (size_t i = 0; i < upto; i++) {
        const xpb_rrun *o = &rs->items[i];
        const char *other = o->v->device.name;
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
        const struct xpb_results_device *dev = &run->v->device;
        if (!dev->name || device_seen(r->runs, i, run))
            continue;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        char buf[1024];
        if (!skip)
            xpb_cell_text(c++, r->names[run->doc]);
        xpb_cell_text(&c[0], run->backend);
        xpb_cell_text(&c[1], dev->name);
        xpb_cell_text(&c[2], or_default(dev->kind, "unknown"));
        xpb_cell_text(&c[3], dev->libraries);
        buf[0] = '\0';
        for (size_t k = 0; k < dev->n_precisions; k++) {
            char item[96];
            snprintf(item, sizeof item, "%s%s", dev->precisions[k].key,
                     strcmp(or_default(dev->precisions[k].value, ""), "emulated") == 0
                         ? " (emulated)"
                         : "");
            append(buf, sizeof buf, item);
        }
        xpb_cell_text(&c[4], buf[0] ? xpb_arena_strdup(&r->arena, buf) : NULL);
        join_strings(buf, sizeof buf, dev->capabilities, dev->n_capabilities);
        xpb_cell_text(&c[5], dev->has_capabilities ? xpb_arena_strdup(&r->arena, buf) : NULL);
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
