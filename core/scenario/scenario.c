/* Scenario files: reading, the top-level keys, and the driving of validation and expansion
 * (scenario.h). The run keys live in scenario_keys.c, their merging in scenario_fields.c and
 * the sweep expansion in scenario_expand.c. */
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scenario_expand.h"
#include "scenario_fields.h"
#include "sha256.h"
#include "yaml_tree.h"

static void run_config_free(xpb_run_config *rc)
{
    free(rc->id);
    free(rc->model);
    free(rc->variant);
    free(rc->backend);
    free(rc->data);
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
    free(s);
}

/* Everything one parse needs, so that the steps below stay small. */
struct parse_state {
    const char *path;
    struct xpb_yorigin origin;
    struct xpb_ynode *root;
    const struct xpb_ynode *top[5]; /* values of the top-level keys, by index in top_keys */
    struct xpb_sfields defaults;
    struct xpb_soverrides overrides;
    xpb_scenario *s;
    xpb_err *err;
};

static const char *const top_keys[5] = {"name", "description", "output", "defaults", "runs"};
enum { TOP_NAME, TOP_DESCRIPTION, TOP_OUTPUT, TOP_DEFAULTS, TOP_RUNS };

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

/* Collects the top-level keys into ps->top, refusing unknown and repeated ones. */
static xpb_status read_top_level(struct parse_state *ps)
{
    char where[512], found[256];
    const struct xpb_ynode *root = ps->root;
    const struct xpb_ynode *seen[5] = {0};
    if (root->kind != XPB_YNODE_MAPPING)
        return xpb_err_set(
            ps->err, XPB_PARSE_ERROR, "%s: expected a mapping with 'name' and 'runs', found %s",
            xpb_yorigin_where(where, sizeof where, &ps->origin, root->line, root->column),
            xpb_ynode_describe(found, sizeof found, root));
    for (size_t i = 0; i < xpb_ynode_map_size(root); i++) {
        const struct xpb_ynode *k = xpb_ynode_map_key(root, i);
        xpb_yorigin_where(where, sizeof where, &ps->origin, k->line, k->column);
        size_t t = 0;
        while (t < 5 && strcmp(top_keys[t], k->text) != 0)
            t++;
        if (t == 5) {
            const char *hint = xpb_suggest(k->text, k->len, top_keys, 5);
            xpb_yaml_quote(found, sizeof found, k->text, k->len);
            if (!hint && xpb_skey_find(k->text, k->len))
                return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                                   "%s: expected a top-level key (name, description, output, "
                                   "defaults, runs), found %s (run keys go under 'defaults' or "
                                   "into a run)",
                                   where, found);
            if (!hint)
                return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                                   "%s: expected a top-level key (name, description, output, "
                                   "defaults, runs), found %s",
                                   where, found);
            return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                               "%s: expected a top-level key, found %s (did you mean '%s'?)", where,
                               found, hint);
        }
        if (seen[t])
            return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                               "%s: %s: expected each key once, found it again (first at line "
                               "%d, column %d)",
                               where, top_keys[t], seen[t]->line, seen[t]->column);
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

static xpb_status read_header(struct parse_state *ps)
{
    char where[512];
    const struct xpb_ynode *name = ps->top[TOP_NAME];
    xpb_yorigin_where(where, sizeof where, &ps->origin, ps->root->line, ps->root->column);
    if (!name)
        return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                           "%s: name: expected the scenario's name, found no 'name' key", where);
    if (name->kind != XPB_YNODE_SCALAR || !xpb_is_name(name->text, name->len))
        return fail_node(ps, name, "name", "a name of letters, digits, '_', '.' or '-'");
    xpb_status st = copy_text(ps, &ps->s->name, name, "name", "a name", 0);
    if (st == XPB_OK)
        st = copy_text(ps, &ps->s->description, ps->top[TOP_DESCRIPTION], "description", "text", 1);
    if (st == XPB_OK)
        st = copy_text(ps, &ps->s->output, ps->top[TOP_OUTPUT], "output", "a file path", 0);
    if (st != XPB_OK)
        return st;
    const struct xpb_ynode *defaults = ps->top[TOP_DEFAULTS];
    if (defaults && !xpb_ynode_is_null(defaults)) {
        if (defaults->kind != XPB_YNODE_MAPPING)
            return fail_node(ps, defaults, "defaults", "a mapping of run keys");
        st = xpb_sfields_from_map(&ps->defaults, NULL, defaults, 1, &ps->origin, ps->err);
        if (st != XPB_OK)
            return st;
    }
    const struct xpb_ynode *runs = ps->top[TOP_RUNS];
    if (!runs)
        return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                           "%s: runs: expected a non-empty list of runs, found no 'runs' key",
                           where);
    if (runs->kind != XPB_YNODE_SEQUENCE || runs->n_items == 0)
        return fail_node(ps, runs, "runs", "a non-empty list of runs");
    return XPB_OK;
}

/* Validates run i and merges its fields with the defaults and --set options into *merged
 * (empty on entry; the caller frees it also on failure). */
static xpb_status prepare_run(struct parse_state *ps, size_t i, struct xpb_sfields *merged,
                              const struct xpb_ynode **label)
{
    const struct xpb_ynode *run = ps->top[TOP_RUNS]->items[i];
    struct xpb_sfields own = {0};
    if (run->kind != XPB_YNODE_MAPPING)
        return fail_node(ps, run, "runs", "a mapping for each run");
    xpb_status st = xpb_sfields_from_map(&own, label, run, 0, &ps->origin, ps->err);
    if (st == XPB_OK &&
        xpb_sfields_merge(merged, &ps->defaults, &own, &ps->overrides.fields) != XPB_OK)
        st = out_of_memory(ps);
    xpb_sfields_free(&own);
    if (st != XPB_OK)
        return st;
    if (!xpb_sfields_find(merged, xpb_skey_find("model", 5), NULL)) {
        char where[512];
        xpb_yorigin_where(where, sizeof where, &ps->origin, run->line, run->column);
        return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                           "%s: model: expected a model name in the run or in defaults, found "
                           "none",
                           where);
    }
    return XPB_OK;
}

/* Adds with saturation at UINT64_MAX. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static const char *count_text(char *buf, size_t size, uint64_t n)
{
    if (n == UINT64_MAX)
        snprintf(buf, size, "more than %llu", (unsigned long long)(UINT64_MAX - 1));
    else
        snprintf(buf, size, "%llu", (unsigned long long)n);
    return buf;
}

/* Validates every run and counts the expanded runs; refuses sweeps over the limits. */
static xpb_status count_runs(struct parse_state *ps, size_t *total)
{
    const struct xpb_ynode *runs = ps->top[TOP_RUNS];
    uint64_t sum = 0, bytes = 0;
    const struct xpb_ynode *over_runs = NULL, *over_bytes = NULL;
    for (size_t i = 0; i < runs->n_items; i++) {
        struct xpb_sfields merged = {0};
        const struct xpb_ynode *label = NULL;
        xpb_status st = prepare_run(ps, i, &merged, &label);
        uint64_t count = 0, run_bytes = 0;
        if (st == XPB_OK) {
            count = xpb_sfields_count(&merged);
            run_bytes = xpb_sfields_run_bytes(&merged, label, strlen(ps->path));
        }
        xpb_sfields_free(&merged);
        if (st != XPB_OK)
            return st;
        sum = add_sat(sum, count);
        bytes = add_sat(bytes, mul_sat(count, run_bytes));
        if (sum > XPB_SCENARIO_MAX_RUNS && !over_runs)
            over_runs = runs->items[i];
        if (bytes > XPB_SCENARIO_MAX_EXPANDED_BYTES && !over_bytes)
            over_bytes = runs->items[i];
    }
    char where[512], many[64];
    if (over_runs) {
        xpb_yorigin_where(where, sizeof where, &ps->origin, over_runs->line, over_runs->column);
        return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                           "%s: sweep too large: %s runs, expected at most %u", where,
                           count_text(many, sizeof many, sum), XPB_SCENARIO_MAX_RUNS);
    }
    if (over_bytes) {
        xpb_yorigin_where(where, sizeof where, &ps->origin, over_bytes->line, over_bytes->column);
        return xpb_err_set(ps->err, XPB_PARSE_ERROR,
                           "%s: sweep too large: %s runs would take about %llu MiB, expected at "
                           "most %u MiB",
                           where, count_text(many, sizeof many, sum),
                           (unsigned long long)(bytes >> 20),
                           XPB_SCENARIO_MAX_EXPANDED_BYTES >> 20);
    }
    *total = (size_t)sum;
    return XPB_OK;
}

static xpb_status expand_runs(struct parse_state *ps, size_t total)
{
    const struct xpb_ynode *runs = ps->top[TOP_RUNS];
    xpb_scenario *s = ps->s;
    if (!(s->runs = calloc(total, sizeof *s->runs)))
        return out_of_memory(ps);
    s->n_runs = total; /* zeroed entries are safe to free */
    size_t at = 0;
    for (size_t i = 0; i < runs->n_items; i++) {
        struct xpb_sfields merged = {0};
        const struct xpb_ynode *label;
        xpb_status st = prepare_run(ps, i, &merged, &label);
        if (st == XPB_OK)
            st = xpb_expand_run(&s->runs[at], &merged, label, ps->path, runs->items[i]->line,
                                ps->err);
        at += (size_t)xpb_sfields_count(&merged);
        xpb_sfields_free(&merged);
        if (st != XPB_OK)
            return st;
    }
    return xpb_expand_unique_ids(s->runs, s->n_runs, ps->err);
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
    size_t total = 0;
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
    if ((st = read_top_level(&ps)) != XPB_OK || (st = read_header(&ps)) != XPB_OK)
        goto free_fields;
    if ((st = xpb_soverrides_parse(&ps.overrides, overrides, n_overrides, err)) != XPB_OK)
        goto free_fields;
    if ((st = count_runs(&ps, &total)) != XPB_OK || (st = expand_runs(&ps, total)) != XPB_OK)
        goto free_overrides;
    *out = ps.s;
    ps.s = NULL;

free_overrides:
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
