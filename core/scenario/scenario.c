/* Scenario files: reading, the top-level keys, and the driving of validation and expansion
 * (scenario.h). The run keys are described in scenario_keys.c, converted in
 * scenario_convert.c, gathered per mapping in scenario_fields.c (and per --set option in
 * scenario_set.c); scenario_runs.c prepares and expands the runs (scenario_expand.c,
 * scenario_ids.c). */
#include "scenario/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scenario/scenario_fields.h"
#include "scenario/scenario_runs.h"
#include "scenario/scenario_scalar.h"
#include "scenario/scenario_set.h"
#include "scenario/scenario_suggest.h"
#include "base/sha256.h"
#include "scenario/yaml_tree.h"

static void run_config_free(xpb_run_config *rc)
{
    free(rc->id);
    free(rc->model);
    free(rc->variant);
    free(rc->backend);
    free(rc->data);
    free(rc->data_dir);
    free(rc->scaling_baseline);
    for (size_t i = 0; i < rc->n_params; i++) {
        free(rc->params[i].key);
        free(rc->params[i].value);
    }
    free(rc->params);
    free(rc->file);
}

void xpb_scenario_free(xpb_scenario *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_runs; i++)
        run_config_free(&s->runs[i]);
    free(s->runs);
    free(s->path);
    free(s->name);
    free(s->description);
    free(s->output);
    free(s->baseline);
    free(s);
}

/* Everything one parse needs, so that the steps below stay small. */
static const char *const top_keys[] = {"name",     "description", "output",   "baseline",
                                       "data_dir", "max_runs",    "defaults", "runs"};
enum {
    TOP_NAME,
    TOP_DESCRIPTION,
    TOP_OUTPUT,
    TOP_BASELINE,
    TOP_DATA_DIR,
    TOP_MAX_RUNS,
    TOP_DEFAULTS,
    TOP_RUNS,
    N_TOP
};

struct parse_state {
    const char *path;
    struct xpb_yorigin origin;
    struct xpb_ynode *root;
    const struct xpb_ynode *top[N_TOP]; /* values of the top-level keys, by index in top_keys */
    struct xpb_sfields defaults;
    struct xpb_soverrides overrides;
    struct xpb_sruns runs;
    xpb_scenario *s;
    xpb_err *err;
};

static xpb_status fail_node(struct parse_state *ps, const struct xpb_ynode *node, const char *key,
                            const char *expected)
{
    char where[512], found[256];
    xpb_yorigin_where(where, sizeof where, &ps->origin, node->line, node->column);
    xpb_ynode_describe(found, sizeof found, node);
    return xpb_err_set(ps->err, XPB_PARSE_ERROR, "%s: %s: expected %s, found %s", where, key,
                       expected, found);
}

static xpb_status out_of_memory(struct parse_state *ps)
{
    return xpb_err_set(ps->err, XPB_OUT_OF_MEMORY, "%s: out of memory", ps->path);
}

/* The error for top-level key k that is not one: a suggestion, or the list of top-level keys
 * (with a hint when k is a run key written at the top). */
static xpb_status unknown_top_key(struct parse_state *ps, const struct xpb_ynode *k)
{
    char where[512], found[256];
    xpb_yorigin_where(where, sizeof where, &ps->origin, k->line, k->column);
    xpb_yaml_quote(found, sizeof found, k->text, k->len);
    const char *hint = xpb_suggest(k->text, k->len, top_keys, N_TOP);
    if (hint)
        return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                           "%s: expected a top-level key, found %s (did you mean '%s'?)", where,
                           found, hint);
    return xpb_err_set(
        ps->err, XPB_PARSE_ERROR,
        "%s: expected a top-level key (name, description, output, baseline, data_dir, "
        "max_runs, defaults, runs), found %s%s",
        where, found,
        xpb_skey_find(k->text, k->len) ? " (run keys go under 'defaults' or into a run)" : "");
}

/* Collects the top-level keys into ps->top, refusing unknown and repeated ones. */
static xpb_status read_top_level(struct parse_state *ps)
{
    char where[512], found[256];
    const struct xpb_ynode *root = ps->root;
    const struct xpb_ynode *seen[N_TOP] = {0};
    if (root->kind != XPB_YNODE_MAPPING)
        return xpb_err_set(
            ps->err, XPB_PARSE_ERROR, "%s: expected a mapping with 'name' and 'runs', found %s",
            xpb_yorigin_where(where, sizeof where, &ps->origin, root->line, root->column),
            xpb_ynode_describe(found, sizeof found, root));
    for (size_t i = 0; i < xpb_ynode_map_size(root); i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(root, i);
        size_t t = 0;
        while (t < N_TOP && strcmp(top_keys[t], k->text) != 0)
            t++;
        if (t == N_TOP)
            return unknown_top_key(ps, k);
        if (seen[t])
            return xpb_err_set(
                ps->err, XPB_PARSE_ERROR,
                "%s: %s: expected each key once, found it again (first at line "
                "%d, column %d)",
                xpb_yorigin_where(where, sizeof where, &ps->origin, k->line, k->column),
                top_keys[t], seen[t]->line, seen[t]->column);
        seen[t] = k;
        ps->top[t] = xpb_ynode_map_value(root, i);
    }
    return XPB_OK;
}

/* A text value: NULL for null, a copy of the scalar otherwise. */
static xpb_status copy_text(struct parse_state *ps, char **out, const struct xpb_ynode *node,
                            const char *key, const char *expected, int nullable)
{
    *out = NULL;
    if (!node || (nullable && xpb_ynode_is_null(node)))
        return XPB_OK;
    if (node->kind != XPB_YNODE_SCALAR || xpb_ynode_is_null(node))
        return fail_node(ps, node, key, expected);
    if (!(*out = strdup(node->text)))
        return out_of_memory(ps);
    return XPB_OK;
}

/* The scenario's name, description and output. */
static xpb_status read_header(struct parse_state *ps)
{
    char where[512];
    const struct xpb_ynode *name = ps->top[TOP_NAME];
    if (!name)
        return xpb_err_set(
            ps->err, XPB_PARSE_ERROR, "%s: name: expected the scenario's name, found no 'name' key",
            xpb_yorigin_where(where, sizeof where, &ps->origin, ps->root->line, ps->root->column));
    if (name->kind != XPB_YNODE_SCALAR || !xpb_is_name(name->text, name->len))
        return fail_node(ps, name, "name", "a name of letters, digits, '_', '.' or '-'");
    xpb_status st = copy_text(ps, &ps->s->name, name, "name", "a name", 0);
    if (st == XPB_OK)
        st = copy_text(ps, &ps->s->description, ps->top[TOP_DESCRIPTION], "description", "text", 1);
    if (st == XPB_OK)
        st = copy_text(ps, &ps->s->output, ps->top[TOP_OUTPUT], "output", "a file path", 0);
    const struct xpb_ynode *base = ps->top[TOP_BASELINE];
    if (st == XPB_OK && base && !xpb_ynode_is_null(base) &&
        (base->kind != XPB_YNODE_SCALAR || !xpb_is_name(base->text, base->len)))
        return fail_node(ps, base, "baseline", "a backend name");
    if (st == XPB_OK)
        st = copy_text(ps, &ps->s->baseline, base, "baseline", "a backend name", 1);
    const struct xpb_ynode *max = ps->top[TOP_MAX_RUNS];
    uint64_t runs = 0;
    int negative, overflow;
    char expected[48];
    snprintf(expected, sizeof expected, "an integer 1..%u", XPB_SCENARIO_MAX_RUNS);
    if (st == XPB_OK && max &&
        (max->kind != XPB_YNODE_SCALAR || max->quoted ||
         !xpb_scalar_integer(max->text, &runs, &negative, &overflow) || negative || overflow ||
         runs < 1 || runs > XPB_SCENARIO_MAX_RUNS))
        return fail_node(ps, max, "max_runs", expected);
    ps->s->max_runs = (uint32_t)runs;
    return st;
}

/* The defaults (converted into ps->defaults) and the presence and shape of `runs`. */
static xpb_status read_defaults_and_runs(struct parse_state *ps)
{
    char where[512];
    const struct xpb_ynode *defaults = ps->top[TOP_DEFAULTS];
    if (defaults && !xpb_ynode_is_null(defaults)) {
        if (defaults->kind != XPB_YNODE_MAPPING)
            return fail_node(ps, defaults, "defaults", "a mapping of run keys");
        xpb_status st =
            xpb_sfields_from_map(&ps->defaults, NULL, defaults, 1, &ps->origin, ps->err);
        if (st != XPB_OK)
            return st;
    }
    const struct xpb_ynode *runs = ps->top[TOP_RUNS];
    if (!runs)
        return xpb_err_set(
            ps->err, XPB_PARSE_ERROR,
            "%s: runs: expected a non-empty list of runs, found no 'runs' key",
            xpb_yorigin_where(where, sizeof where, &ps->origin, ps->root->line, ps->root->column));
    if (runs->kind != XPB_YNODE_SEQUENCE || runs->n_items == 0)
        return fail_node(ps, runs, "runs", "a non-empty list of runs");
    return XPB_OK;
}

/* Converts and counts the runs, then expands them into ps->s->runs. */
static xpb_status read_runs(struct parse_state *ps)
{
    xpb_status st = xpb_sruns_prepare(&ps->runs, ps->top[TOP_RUNS], &ps->defaults,
                                      &ps->overrides.fields, &ps->origin, ps->err);
    if (st != XPB_OK)
        return st;
    xpb_scenario *s = ps->s;
    if (!(s->runs = calloc(ps->runs.total, sizeof *s->runs)))
        return out_of_memory(ps);
    s->n_runs = ps->runs.total; /* zeroed entries are safe to free */
    if ((st = xpb_sruns_expand(s->runs, &ps->runs, ps->err)) != XPB_OK)
        return st;
    /* data_dir: relative to the scenario's folder, given to every run */
    char *dir = NULL;
    if ((st = copy_text(ps, &dir, ps->top[TOP_DATA_DIR], "data_dir", "a folder path", 1)))
        return st;
    for (size_t i = 0; dir && i < s->n_runs; i++) {
        const char *slash = strrchr(ps->path, '/');
        size_t n = strlen(ps->path) + strlen(dir) + 2;
        char *full = malloc(n);
        if (full && (dir[0] == '/' || !slash))
            snprintf(full, n, "%s", dir);
        else if (full)
            snprintf(full, n, "%.*s/%s", (int)(slash - ps->path), ps->path, dir);
        if (!full) {
            free(dir);
            return out_of_memory(ps);
        }
        s->runs[i].data_dir = full;
    }
    free(dir);
    return XPB_OK;
}

static void hash_scenario(char out[65], const char *text, size_t len, const char *const *overrides,
                          size_t n_overrides)
{
    struct xpb_sha256_ctx ctx;
    uint8_t digest[32];
    xpb_sha256_init(&ctx);
    if (len)
        xpb_sha256_update(&ctx, text, len);
    for (size_t i = 0; i < n_overrides; i++) {
        xpb_sha256_update(&ctx, "", 1);
        if (overrides[i])
            xpb_sha256_update(&ctx, overrides[i], strlen(overrides[i]));
    }
    xpb_sha256_final(&ctx, digest);
    xpb_sha256_to_hex(out, digest);
}

xpb_status xpb_scenario_parse(xpb_scenario **out, const char *path_for_messages, const char *text,
                              size_t len, const char *const *overrides, size_t n_overrides,
                              xpb_err *err)
{
    struct parse_state ps = {0};
    xpb_status st;
    *out = NULL;
    ps.path = path_for_messages ? path_for_messages : "<scenario>";
    ps.origin.file = ps.path;
    ps.err = err;
    if (len > XPB_SCENARIO_MAX_BYTES)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: too large: %zu bytes, expected at most %u (1 MiB)", ps.path, len,
                           XPB_SCENARIO_MAX_BYTES);
    if (!text && len)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: no text", ps.path);
    if (n_overrides && !overrides)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "%s: no --set options", ps.path);

    if (!(ps.s = calloc(1, sizeof *ps.s)) || !(ps.s->path = strdup(ps.path))) {
        st = out_of_memory(&ps);
        goto free_scenario;
    }
    hash_scenario(ps.s->sha256, text, len, overrides, n_overrides);

    st = xpb_yaml_parse(&ps.root, &ps.origin, text ? text : "", len, err);
    if (st != XPB_OK)
        goto free_scenario;
    if (!ps.root) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "%s: empty scenario: expected a mapping with 'name' and 'runs'", ps.path);
        goto free_scenario;
    }
    if ((st = read_top_level(&ps)) != XPB_OK || (st = read_header(&ps)) != XPB_OK ||
        (st = read_defaults_and_runs(&ps)) != XPB_OK)
        goto free_fields;
    if ((st = xpb_soverrides_parse(&ps.overrides, overrides, n_overrides, err)) != XPB_OK)
        goto free_fields;
    if ((st = read_runs(&ps)) != XPB_OK)
        goto free_runs_and_overrides;
    *out = ps.s;
    ps.s = NULL;

free_runs_and_overrides:
    xpb_sruns_free(&ps.runs);
    xpb_soverrides_free(&ps.overrides);
free_fields:
    xpb_sfields_free(&ps.defaults);
    xpb_ynode_free(ps.root);
free_scenario:
    xpb_scenario_free(ps.s);
    return st;
}

/* Reads at most XPB_SCENARIO_MAX_BYTES of the file into a new buffer (caller frees). */
static xpb_status read_file(char **text, size_t *len, const char *path, xpb_err *err)
{
    xpb_status st = XPB_OK;
    struct stat info;
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return xpb_err_set(err, XPB_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode) &&
        info.st_size > (off_t)XPB_SCENARIO_MAX_BYTES) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "%s: too large: %lld bytes, expected at most %u (1 MiB)", path,
                         (long long)info.st_size, XPB_SCENARIO_MAX_BYTES);
        goto close_file;
    }
    char *buf = malloc(XPB_SCENARIO_MAX_BYTES + 1);
    if (!buf) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "%s: out of memory", path);
        goto close_file;
    }
    size_t n = fread(buf, 1, XPB_SCENARIO_MAX_BYTES + 1, f);
    if (ferror(f)) {
        st = xpb_err_set(err, XPB_IO_ERROR, "%s: cannot read: %s", path, strerror(errno));
        free(buf);
        goto close_file;
    }
    if (n > XPB_SCENARIO_MAX_BYTES) {
        st = xpb_err_set(err, XPB_PARSE_ERROR,
                         "%s: too large: more than %u bytes, expected at most %u (1 MiB)", path,
                         XPB_SCENARIO_MAX_BYTES, XPB_SCENARIO_MAX_BYTES);
        free(buf);
        goto close_file;
    }
    *text = buf;
    *len = n;
close_file:
    fclose(f);
    return st;
}

xpb_status xpb_scenario_load(xpb_scenario **out, const char *path, const char *const *overrides,
                             size_t n_overrides, xpb_err *err)
{
    char *text;
    size_t len;
    *out = NULL;
    if (!path)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "no scenario path");
    xpb_status st = read_file(&text, &len, path, err);
    if (st != XPB_OK)
        return st;
    st = xpb_scenario_parse(out, path, text, len, overrides, n_overrides, err);
    free(text);
    return st;
}
