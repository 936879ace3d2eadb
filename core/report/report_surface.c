/* ParaDnn's performance surfaces (see report_sections.h; Wang, Wei and Brooks 2019 plot them
 * over their model families):
 *
 * - a heat map of one metric (r->opts.surface_metric, metrics.peak_fraction by default) over
 *   every two swept axes: the integer run keys batch and threads and every model parameter
 *   whose values differ between the finished runs of a file, one map per set of runs that
 *   agree on everything else, with the same numbers as a table;
 * - speedup against parameter count: every backend comparison of the files, the candidate's
 *   model.parameters on x, the speedup on y, both log10, one series per baseline and candidate
 *   backend and model.
 *
 * Every cell and point carries its exact value and where it is in the input (data-v, data-src),
 * as the tables do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/escape.h"
#include "report/report_describe.h"
#include "report/report_sections.h"
#include "results/view_config.h"

#define MAX_MAPS 24  /* heat maps drawn at most: more pairs of axes are only counted */
#define MAX_AXES 16  /* swept axes looked at in one file */
#define MAX_SERIES 8 /* speedup series (the palette's colours) */
#define DESC (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_PRECISION | XPB_COL_BACKEND)

/* An axis: "batch", "threads" or "params.<name>". */
static const char *axis_value(const xpb_rrun *run, const char *axis, char *buf, size_t size)
{
    const struct xpb_results_config *c = &run->v->config;
    if (strncmp(axis, "params.", 7) != 0) {
        int64_t v = xpb_results_config_int(c, axis);
        if (v == XPB_RESULTS_NO_INT)
            return NULL;
        snprintf(buf, size, "%lld", (long long)v);
        return buf;
    }
    for (size_t i = 0; i < c->n_params; i++)
        if (strcmp(c->params[i].key, axis + 7) == 0)
            return c->params[i].value;
    return NULL;
}

/* Whether runs a and b agree on everything but axes x and y (their parameters too). */
static int same_but(const xpb_rrun *a, const xpb_rrun *b, const char *x, const char *y)
{
    const char *except[3] = {"params", x, y};
    size_t n = 1;
    for (size_t k = 0; k < 2; k++)
        if (strncmp(except[k + 1], "params.", 7) != 0)
            except[n++] = except[k + 1];
    if (!a->v->has_config || !b->v->has_config ||
        !xpb_results_config_same_except(&a->v->config, &b->v->config, except, n, 0))
        return 0;
    const struct xpb_results_config *ca = &a->v->config, *cb = &b->v->config;
    for (int pass = 0; pass < 2; pass++) { /* every parameter of one is the other's */
        const struct xpb_results_config *p = pass ? cb : ca;
        const xpb_rrun *other = pass ? a : b;
        for (size_t i = 0; i < p->n_params; i++) {
            char name[160], buf[32];
            snprintf(name, sizeof name, "params.%s", p->params[i].key);
            if (strcmp(name, x) == 0 || strcmp(name, y) == 0)
                continue;
            const char *o = axis_value(other, name, buf, sizeof buf);
            if (!o || strcmp(o, p->params[i].value) != 0)
                return 0;
        }
    }
    return 1;
}

/* The distinct values of `axis` over runs[0..n), sorted as numbers when they all are, else in
 * order of appearance, into vals[] (arena); returns how many, (size_t)-1 when out of memory. */
static size_t distinct(xpb_report *r, const char ***vals, const xpb_rrun *const *runs, size_t n,
                       const char *axis)
{
    const char **v = xpb_arena_alloc(&r->arena, (n ? n : 1) * sizeof *v);
    if (!v)
        return (size_t)-1;
    size_t k = 0;
    int numeric = 1;
    for (size_t i = 0; i < n; i++) {
        char buf[32];
        const char *s = axis_value(runs[i], axis, buf, sizeof buf);
        if (!s)
            continue;
        size_t j = 0;
        while (j < k && strcmp(v[j], s) != 0)
            j++;
        if (j < k)
            continue;
        if (!(v[k++] = xpb_arena_strdup(&r->arena, s)))
            return (size_t)-1;
        char *end;
        strtod(s, &end);
        numeric &= end != s && *end == '\0';
    }
    for (size_t i = 1; numeric && i < k; i++) /* insertion sort by value */
        for (size_t j = i; j > 0 && strtod(v[j - 1], NULL) > strtod(v[j], NULL); j--) {
            const char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *vals = v;
    return k;
}

static size_t index_of(const char *const *vals, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(vals[i], s) == 0)
            return i;
    return n;
}

/* The metric the maps show: its field and its display unit. */
typedef struct metric {
    enum xpb_results_field field;
    xpb_unit unit;
    const char *path;
} metric;

/* The unit a field is shown in: fractions in percent, FLOP/s in GFLOP/s, times in ms. */
static xpb_unit unit_of(enum xpb_results_field f)
{
    switch (f) {
    case XPB_RF_PEAK_FRACTION:
    case XPB_RF_BANDWIDTH_FRACTION:
    case XPB_RF_HOST_OVERHEAD:
    case XPB_RF_SCALING_EFFICIENCY:
    case XPB_RF_COMM_SHARE:
        return XPB_UNIT_PERCENT;
    case XPB_RF_FLOPS_PER_S:
        return XPB_UNIT_GFLOPS;
    case XPB_RF_THROUGHPUT_MEDIAN:
    case XPB_RF_THROUGHPUT_MIN:
    case XPB_RF_THROUGHPUT_MAX:
        return XPB_UNIT_RATE;
    case XPB_RF_STEP_MEAN:
    case XPB_RF_STEP_P50:
    case XPB_RF_STEP_P95:
    case XPB_RF_STEP_P99:
        return XPB_UNIT_MS;
    case XPB_RF_DEVICE_PEAK:
    case XPB_RF_HOST_RUN_PEAK:
    case XPB_RF_HOST_PEAK_RSS:
        return XPB_UNIT_MIB;
    default:
        return XPB_UNIT_NONE;
    }
}

static metric pick_metric(const xpb_report *r)
{
    const char *want = r->opts.surface_metric ? r->opts.surface_metric : "metrics.peak_fraction";
    metric m = {XPB_RF_PEAK_FRACTION, XPB_UNIT_PERCENT, "metrics.peak_fraction"};
    for (int f = 0; f < XPB_RF_COUNT; f++)
        if (strcmp(xpb_results_field_path((enum xpb_results_field)f), want) == 0) {
            m.field = (enum xpb_results_field)f;
            m.path = xpb_results_field_path(m.field);
            m.unit = unit_of(m.field);
        }
    return m;
}

/* What a map's cells carry: each cell's run (NULL: none) and the metric. */
typedef struct map_ctx {
    xpb_report *r;
    const xpb_rrun **cell_runs; /* n_rows x n_cols */
    size_t n_cols;
    metric m;
} map_ctx;

static void cell_attrs(struct xpb_text *t, size_t row, size_t col, const void *ctx)
{
    const map_ctx *c = ctx;
    const xpb_rrun *run = c->cell_runs[row * c->n_cols + col];
    if (!run)
        return;
    double v = xpb_results_field(run->v, c->m.field);
    const char *src = xpb_rrun_src(c->r, run, c->m.path);
    xpb_text_printf(t, " data-v=\"%.17g\" data-scale=\"%.17g\" data-run=\"", v,
                    xpb_unit_scale(c->m.unit));
    xpb_html(t, run->id);
    xpb_text_puts(t, "\"");
    if (src)
        xpb_text_printf(t, " data-src=\"%s\"", src);
}

/* One heat map of the runs g[0..n) (agreeing on all but x and y) and its table, numbered *nth
 * (counted up when drawn); none when the metric is absent from every run. */
static xpb_status one_map(xpb_report *r, xpb_report_section *s, const xpb_rrun *const *g, size_t n,
                          const char *x, const char *y, size_t *nth, const metric *m)
{
    const char **cols, **rows;
    size_t nc = distinct(r, &cols, g, n, x), nr = distinct(r, &rows, g, n, y);
    if (nc == (size_t)-1 || nr == (size_t)-1)
        return XPB_OUT_OF_MEMORY;
    double *vals = xpb_arena_alloc(&r->arena, nr * nc * sizeof *vals);
    const xpb_rrun **cell_runs = xpb_arena_alloc(&r->arena, nr * nc * sizeof *cell_runs);
    struct xpb_svg_heatmap *h = xpb_arena_alloc(&r->arena, sizeof *h);
    map_ctx *ctx = xpb_arena_alloc(&r->arena, sizeof *ctx);
    const char *label = xpb_rrun_label(r, g[0], DESC);
    if (!vals || !cell_runs || !h || !ctx || !label)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < nr * nc; i++) {
        vals[i] = NAN;
        cell_runs[i] = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        char bx[32], by[32];
        size_t cx = index_of(cols, nc, axis_value(g[i], x, bx, sizeof bx));
        size_t cy = index_of(rows, nr, axis_value(g[i], y, by, sizeof by));
        if (cx < nc && cy < nr && !cell_runs[cy * nc + cx]) { /* the first run of a cell */
            cell_runs[cy * nc + cx] = g[i];
            vals[cy * nc + cx] = xpb_results_field(g[i]->v, m->field) * xpb_unit_scale(m->unit);
        }
    }
    size_t filled = 0;
    for (size_t i = 0; i < nr * nc; i++)
        filled += isfinite(vals[i]);
    if (filled == 0) /* the metric is null in every run (no peak on this device) */
        return XPB_OK;
    *ctx = (map_ctx){r, cell_runs, nc, *m};
    const char *unit = xpb_unit_name(m->unit);
    *h = (struct xpb_svg_heatmap){
        .id = xpb_arena_printf(&r->arena, "%s-map-%zu", s->id, *nth),
        .title = xpb_arena_printf(&r->arena, "%s over %s and %s: %s", m->path, x, y, label),
        .x_label = x,
        .y_label = y,
        .value_label = xpb_arena_printf(&r->arena, "%s%s%s", strrchr(m->path, '.') + 1,
                                        unit[0] ? ", " : "", unit),
        .n_cols = nc,
        .n_rows = nr,
        .col_labels = cols,
        .row_labels = rows,
        .values = vals,
        .cell_attrs = cell_attrs,
        .ctx = ctx};
    if (!h->id || !h->title || !h->value_label || xpb_report_heatmap(r, s, h) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    /* the same numbers as a table: rows of y, a column per value of x */
    const char **headers = xpb_arena_alloc(&r->arena, (nc + 1) * sizeof *headers);
    if (!headers)
        return XPB_OUT_OF_MEMORY;
    headers[0] = xpb_arena_printf(&r->arena, "%s \\ %s", y, x);
    for (size_t c = 0; c < nc; c++)
        headers[c + 1] = cols[c];
    char suffix[32];
    snprintf(suffix, sizeof suffix, "table-%zu", (*nth)++);
    xpb_report_table *t =
        headers[0] ? xpb_report_table_new(r, s, suffix, h->title, headers, nc + 1) : NULL;
    if (!t)
        return XPB_OUT_OF_MEMORY;
    for (size_t row = nr; row-- > 0;) { /* the largest first, as the map draws them */
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(&c[0], rows[row]);
        for (size_t col = 0; col < nc; col++)
            if (cell_runs[row * nc + col])
                xpb_rrun_cell(r, &c[col + 1], cell_runs[row * nc + col], m->field, m->unit);
    }
    return XPB_OK;
}

/* The axes swept among the finished runs of document `doc` into axes[] (at most MAX_AXES), in
 * the order their first change appears in the file: the axis that varies fastest (a sweep's
 * last) first, which becomes a map's columns. */
static size_t swept_axes(xpb_report *r, size_t doc, const char **axes)
{
    size_t n = 0;
    const xpb_rrun *first = NULL;
    static const char *const plain[2] = {"batch", "threads"};
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        if (run->doc != doc || !run->ok || !run->v->has_config)
            continue;
        if (!first)
            first = run;
        for (size_t k = 0; k < 2 + run->v->config.n_params && n < MAX_AXES; k++) {
            char name[160], b1[32], b2[32];
            if (k < 2)
                snprintf(name, sizeof name, "%s", plain[k]);
            else
                snprintf(name, sizeof name, "params.%s", run->v->config.params[k - 2].key);
            const char *a = axis_value(run, name, b1, sizeof b1);
            const char *f = axis_value(first, name, b2, sizeof b2);
            int differs = !a != !f || (a && strcmp(a, f) != 0);
            size_t j = 0;
            while (j < n && strcmp(axes[j], name) != 0)
                j++;
            if (differs && j == n && !(axes[n++] = xpb_arena_strdup(&r->arena, name)))
                return n - 1;
        }
    }
    return n;
}

/* Every map of document `doc`: for each pair of its swept axes, the groups of finished runs
 * that agree on everything else and have two values or more on each axis. */
static xpb_status doc_maps(xpb_report *r, xpb_report_section *s, size_t doc, const metric *m,
                           size_t *nth, size_t *more)
{
    const char *axes[MAX_AXES];
    size_t n_axes = swept_axes(r, doc, axes);
    const xpb_rruns *rs = r->runs;
    const xpb_rrun **g = xpb_arena_alloc(&r->arena, (rs->n ? rs->n : 1) * sizeof *g);
    char *taken = xpb_arena_alloc(&r->arena, rs->n ? rs->n : 1);
    if (!g || !taken)
        return XPB_OUT_OF_MEMORY;
    for (size_t a = 0; a < n_axes; a++)
        for (size_t b = a + 1; b < n_axes; b++) {
            memset(taken, 0, rs->n ? rs->n : 1);
            for (size_t i = 0; i < rs->n; i++) {
                const xpb_rrun *run = &rs->items[i];
                if (taken[i] || run->doc != doc || !run->ok)
                    continue;
                size_t n = 0;
                for (size_t j = i; j < rs->n; j++)
                    if (!taken[j] && rs->items[j].doc == doc && rs->items[j].ok &&
                        same_but(run, &rs->items[j], axes[a], axes[b])) {
                        taken[j] = 1;
                        g[n++] = &rs->items[j];
                    }
                const char **vx, **vy;
                size_t nx = distinct(r, &vx, g, n, axes[a]), ny = distinct(r, &vy, g, n, axes[b]);
                if (nx == (size_t)-1 || ny == (size_t)-1)
                    return XPB_OUT_OF_MEMORY;
                if (nx < 2 || ny < 2)
                    continue;
                if (*nth >= MAX_MAPS) {
                    (*more)++;
                    continue;
                }
                if (one_map(r, s, g, n, axes[a], axes[b], nth, m) != XPB_OK)
                    return XPB_OUT_OF_MEMORY;
            }
        }
    return XPB_OK;
}

/* What the speedup chart's points carry: each point's comparison. */
typedef struct speedup_ctx {
    const struct xpb_results_comparison **cmp;
    const size_t *doc;
} speedup_ctx;

static void speedup_attrs(struct xpb_text *t, size_t i, const void *ctx)
{
    const speedup_ctx *c = ctx;
    const struct xpb_results_comparison *k = c->cmp[i];
    xpb_text_printf(t,
                    " data-v=\"%.17g\" data-src=\"f%zu:comparisons[%zu].speedup\" "
                    "data-parameters=\"%lld\" data-parameters-src=\"f%zu:runs[%zu].model."
                    "parameters\"",
                    k->speedup, c->doc[i], k->index, (long long)k->cand_run->model.parameters,
                    c->doc[i], k->cand_run->index);
}

/* The series of comparison k: "<candidate> over <baseline>, <model>/<variant>". */
static const char *series_name(xpb_report *r, const struct xpb_results_comparison *k)
{
    const struct xpb_results_config *c = &k->cand_run->config, *b = &k->base_run->config;
    return xpb_arena_printf(&r->arena, "%s over %s, %s/%s", c->backend ? c->backend : "?",
                            b->backend ? b->backend : "?", c->model ? c->model : "?",
                            c->variant ? c->variant : "-");
}

static xpb_status speedup_chart(xpb_report *r, xpb_report_section *s)
{
    size_t total = 0;
    for (size_t d = 0; d < r->n_docs; d++)
        total += r->views[d].n_comparisons;
    struct xpb_svg_scatter_point *p = xpb_arena_alloc(&r->arena, (total + 1) * sizeof *p);
    const struct xpb_results_comparison **cmp =
        xpb_arena_alloc(&r->arena, (total + 1) * sizeof *cmp);
    size_t *docs = xpb_arena_alloc(&r->arena, (total + 1) * sizeof *docs);
    const char **names = xpb_arena_alloc(&r->arena, MAX_SERIES * sizeof *names);
    struct xpb_svg_scatter *c = xpb_arena_alloc(&r->arena, sizeof *c);
    speedup_ctx *ctx = xpb_arena_alloc(&r->arena, sizeof *ctx);
    if (!p || !cmp || !docs || !names || !c || !ctx)
        return XPB_OUT_OF_MEMORY;
    size_t n = 0, n_series = 0, left_out = 0;
    for (size_t d = 0; d < r->n_docs; d++)
        for (size_t i = 0; i < r->views[d].n_comparisons; i++) {
            const struct xpb_results_comparison *k = &r->views[d].comparisons[i];
            if (!k->kind || strcmp(k->kind, "backend") != 0 || !k->cand_run || !k->base_run ||
                !(k->speedup > 0) || !(k->cand_run->model.parameters > 0))
                continue;
            const char *name = series_name(r, k);
            if (!name)
                return XPB_OUT_OF_MEMORY;
            size_t sr = 0;
            while (sr < n_series && strcmp(names[sr], name) != 0)
                sr++;
            if (sr == MAX_SERIES) {
                left_out++;
                continue;
            }
            if (sr == n_series)
                names[n_series++] = name;
            cmp[n] = k;
            docs[n] = d;
            p[n++] = (struct xpb_svg_scatter_point){
                .x = (double)k->cand_run->model.parameters,
                .y = k->speedup,
                .series = (int)sr,
                .tooltip = xpb_arena_printf(&r->arena, "%s: %.4g x with %lld parameters",
                                            k->candidate ? k->candidate : "?", k->speedup,
                                            (long long)k->cand_run->model.parameters)};
        }
    if (n == 0)
        return xpb_report_text(r, s,
                               "No speedup against parameter count: the files have no backend "
                               "comparison (runs that differ only in their backend).");
    double *ref = xpb_arena_alloc(&r->arena, 4 * sizeof *ref);
    struct xpb_svg_scatter_line *l = xpb_arena_alloc(&r->arena, sizeof *l);
    if (!ref || !l)
        return XPB_OUT_OF_MEMORY;
    double lo = p[0].x, hi = p[0].x;
    for (size_t i = 1; i < n; i++) {
        lo = fmin(lo, p[i].x);
        hi = fmax(hi, p[i].x);
    }
    ref[0] = lo, ref[1] = hi, ref[2] = 1, ref[3] = 1;
    *l = (struct xpb_svg_scatter_line){2, &ref[0], &ref[2], "1x: as fast as the baseline", 1};
    *ctx = (speedup_ctx){cmp, docs};
    *c = (struct xpb_svg_scatter){
        .id = xpb_arena_printf(&r->arena, "%s-speedup-params", s->id),
        .title = "Speedup against parameter count",
        .note = left_out
                    ? xpb_arena_printf(&r->arena, "%zu comparisons of more than %d series left out",
                                       left_out, MAX_SERIES)
                    : "each point: a backend comparison of the files (the candidate's "
                      "throughput over the baseline's), at the model's parameter count",
        .x_label = "parameters",
        .y_label = "speedup over the baseline, x",
        .x_log10 = 1,
        .y_log10 = 1,
        .n_series = n_series,
        .series_names = names,
        .n_points = n,
        .points = p,
        .n_lines = 1,
        .lines = l,
        .point_attrs = speedup_attrs,
        .ctx = ctx};
    return c->id && c->note ? xpb_report_scatter(r, s, c) : XPB_OUT_OF_MEMORY;
}

xpb_status xpb_report_surfaces(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "surfaces", "Performance surfaces");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    metric m = pick_metric(r);
    size_t nth = 0, more = 0;
    for (size_t d = 0; d < r->n_docs; d++)
        if (doc_maps(r, s, d, &m, &nth, &more) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    if (nth == 0 && xpb_report_text(r, s,
                                    "No heat map: no finished runs of one file differ in two "
                                    "swept axes (batch, threads, model parameters) and agree on "
                                    "everything else.") != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    if (more && xpb_report_text(r, s, "%zu more heat maps over other pairs of axes not drawn.",
                                more) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    return speedup_chart(r, s);
}
