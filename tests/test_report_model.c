/* The report's data model (core/report/report_model.h) built from documents made to order:
 * every section's tables hold the numbers of the file with their sources, and the derived
 * numbers (fits, savings, efficiency, energy per sample) equal hand computations. Version-1
 * files and several files at once. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"
#include "report/report_cells.h"
#include "report/report_model.h"
#include "report/report_runs.h"
#include "test_report_fixture.h"

#define R3(x)                                                                                      \
    {                                                                                              \
        (x) * 1.00, (x)*1.01, (x)*0.99                                                             \
    }

/* The study made to order: speedups of two models, a fusion pair with profiles, a precision
 * pair, a batch sweep with exact memory and step times, a thread pair, energy at batch 1 and
 * 128, a disturbed run and a failed one. */
static json_t *study(const char *baseline)
{
    json_t *doc = fx_doc(baseline);
    fx_add(doc, &(fx_run){.id = "a-ref", .fusion = 1, .tp = R3(100)});
    fx_add(doc, &(fx_run){.id = "a-dnn", .backend = "cpu_onednn", .fusion = 1, .tp = R3(1000)});
    fx_add(doc, &(fx_run){.id = "b-ref", .model = "resnet18", .fusion = 1, .tp = R3(10)});
    fx_add(doc, &(fx_run){.id = "b-dnn",
                          .model = "resnet18",
                          .backend = "cpu_onednn",
                          .fusion = 1,
                          .tp = R3(200)});
    fx_add(doc, &(fx_run){.id = "f-on",
                          .backend = "cpu_onednn",
                          .batch = 32,
                          .fusion = 1,
                          .profile = 1,
                          .p50 = 0.064,
                          .tp = R3(500)});
    fx_add(doc, &(fx_run){.id = "f-off",
                          .backend = "cpu_onednn",
                          .batch = 32,
                          .fusion = 0,
                          .profile = 1,
                          .p50 = 0.080,
                          .tp = R3(400)});
    fx_add(doc, &(fx_run){.id = "p-fp32",
                          .model = "vgg16",
                          .mode = "train",
                          .backend = "cpu_onednn",
                          .fusion = 1,
                          .tp = R3(300)});
    fx_add(doc, &(fx_run){.id = "p-bf16",
                          .model = "vgg16",
                          .mode = "train",
                          .backend = "cpu_onednn",
                          .fusion = 1,
                          .precision = "bf16-mixed",
                          .tp = R3(450)});
    static const int batches[] = {1, 2, 4, 8, 16};
    for (int i = 0; i < 5; i++) {
        char id[32];
        int b = batches[i];
        double p50 = 0.010 + 0.001 * b;
        snprintf(id, sizeof id, "m-b%d", b);
        fx_add(doc, &(fx_run){.id = id,
                              .mode = "train",
                              .backend = "cpu_onednn",
                              .batch = b,
                              .fusion = 1,
                              .p50 = p50,
                              .device_peak = 30e6 + 2e6 * b,
                              .tp = R3(b / p50)});
    }
    fx_add(doc, &(fx_run){.id = "t-1",
                          .model = "vgg16",
                          .backend = "cpu_onednn",
                          .batch = 8,
                          .fusion = 1,
                          .threads = 1,
                          .tp = R3(50)});
    fx_add(doc, &(fx_run){.id = "t-2",
                          .model = "vgg16",
                          .backend = "cpu_onednn",
                          .batch = 8,
                          .fusion = 1,
                          .threads = 2,
                          .tp = R3(95)});
    fx_add(doc, &(fx_run){.id = "e-b1",
                          .backend = "cpu_onednn",
                          .batch = 1,
                          .fusion = 1,
                          .threads = 4,
                          .joules = 10,
                          .watts = 50,
                          .tp = R3(40)});
    fx_add(doc, &(fx_run){.id = "e-b128",
                          .backend = "cpu_onednn",
                          .batch = 128,
                          .fusion = 1,
                          .threads = 4,
                          .joules = 100,
                          .watts = 60,
                          .tp = R3(4000)});
    fx_add(doc, &(fx_run){.id = "i-x",
                          .model = "cyclegan",
                          .mode = "train",
                          .batch = 1,
                          .fusion = 1,
                          .other_share = 0.2,
                          .tp = R3(2)});
    fx_add(doc, &(fx_run){.id = "fail-x",
                          .model = "cyclegan",
                          .backend = "cuda",
                          .status = "failed",
                          .tp = R3(1)});
    fx_finish(doc);
    return doc;
}

static xpb_report *build(json_t **docs, size_t n)
{
    static const char *const names[] = {"a.json", "b.json", "c.json"};
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_report_build(&r, docs, names, n, NULL, &err), XPB_OK);
    return r;
}

static const xpb_report_table *table(const xpb_report *r, const char *id)
{
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const xpb_report_block *k = &r->sections[s].blocks[b];
            if (k->kind == XPB_BLOCK_TABLE && strcmp(k->table->id, id) == 0)
                return k->table;
        }
    fail_msg("no table %s", id);
    return NULL;
}

static const xpb_chart *chart(const xpb_report *r, const char *id)
{
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const xpb_report_block *k = &r->sections[s].blocks[b];
            if (k->kind == XPB_BLOCK_CHART && strcmp(k->chart->id, id) == 0)
                return k->chart;
        }
    fail_msg("no chart %s", id);
    return NULL;
}

static int column(const xpb_report_table *t, const char *header)
{
    for (size_t c = 0; c < t->n_cols; c++)
        if (strcmp(t->headers[c], header) == 0)
            return (int)c;
    fail_msg("table %s has no column '%s'", t->id, header);
    return -1;
}

/* The cell of the row whose column `key_col` has text `key`, in column `col`. */
static const xpb_report_cell *cell(const xpb_report_table *t, const char *key_col, const char *key,
                                   const char *col)
{
    int k = column(t, key_col), c = column(t, col);
    for (size_t row = 0; row < t->n_rows; row++) {
        const xpb_report_cell *kc = &t->cells[row * t->n_cols + (size_t)k];
        if (kc->kind == XPB_CELL_TEXT && strcmp(kc->text, key) == 0)
            return &t->cells[row * t->n_cols + (size_t)c];
    }
    fail_msg("table %s has no row with %s = %s", t->id, key_col, key);
    return NULL;
}

/* The JSON value a cell's source names ("f0:runs[3].metrics.throughput.median"). */
static double source_value(json_t **docs, const char *src)
{
    size_t d = 0;
    int off = 0;
    assert_non_null(src);
    assert_int_equal(sscanf(src, "f%zu:%n", &d, &off), 1);
    const json_t *v = docs[d];
    for (const char *p = src + off; *p && v;) {
        char key[64];
        size_t len = strcspn(p, ".[");
        memcpy(key, p, len);
        key[len] = '\0';
        if (len)
            v = json_object_get(v, key);
        p += len;
        if (*p == '[') {
            v = json_array_get(v, strtoul(p + 1, NULL, 10));
            p = strchr(p, ']') + 1;
        }
        if (*p == '.')
            p++;
    }
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Every number of every table that names a source equals the file's value there. */
static void check_sources(const xpb_report *r, json_t **docs)
{
    size_t checked = 0;
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const xpb_report_table *t = r->sections[s].blocks[b].table;
            if (r->sections[s].blocks[b].kind != XPB_BLOCK_TABLE)
                continue;
            for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
                if (t->cells[i].kind == XPB_CELL_NUMBER && t->cells[i].src) {
                    assert_true(source_value(docs, t->cells[i].src) == t->cells[i].v);
                    checked++;
                }
        }
    assert_true(checked > 50);
}

static int close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

static void test_speedups(void **state)
{
    (void)state;
    json_t *doc = study("cpu_ref");
    xpb_report *r = build(&doc, 1);
    const xpb_report_table *t = table(r, "speedups-table");
    assert_int_equal(t->n_rows, 2); /* conv6 and resnet18: the study's shape */
    const xpb_report_cell *base = cell(t, "model", "conv6/cifar", "cpu_ref ×");
    assert_int_equal(base->kind, XPB_CELL_TEXT);
    assert_string_equal(base->text, "base");
    const xpb_report_cell *c = cell(t, "model", "conv6/cifar", "cpu_onednn ×");
    assert_int_equal(c->kind, XPB_CELL_NUMBER);
    assert_true(close_to(c->v, 10, 1e-9));
    assert_true(c->lo < c->v && c->v < c->hi && (c->flags & XPB_CELL_SIGNIFICANT));
    assert_non_null(strstr(c->src, ":comparisons["));
    c = cell(t, "model", "resnet18/cifar", "cpu_onednn ×");
    assert_true(close_to(c->v, 20, 1e-9));
    c = cell(t, "model", "conv6/cifar", "baseline samples/s");
    assert_true(c->v == 100 && isfinite(c->lo));
    assert_int_equal(chart(r, "speedups-chart")->n_bars, 2);
    check_sources(r, &doc);
    xpb_report_free(r);
    json_decref(doc);
}

static void test_fusion_and_profile(void **state)
{
    (void)state;
    json_t *doc = study(NULL);
    xpb_report *r = build(&doc, 1);
    const xpb_report_table *t = table(r, "fusion-table");
    assert_int_equal(t->n_rows, 1);
    int col = column(t, "step time saved %");
    assert_true(close_to(t->cells[col].v, 0.2, 1e-12)); /* 1 - 64 ms / 80 ms */
    assert_null(t->cells[col].src);
    assert_true(close_to(t->cells[column(t, "speedup ×")].v, 1.25, 1e-9));
    const xpb_report_table *p = table(r, "fusion-profile-0");
    assert_true(close_to(cell(p, "op kind", "CONV2D", "unfused ms/step")->v, 0.001, 1e-12));
    assert_true(close_to(cell(p, "op kind", "CONV2D", "fused ms/step")->v, 0.0008, 1e-12));
    assert_true(cell(p, "op kind", "RELU", "fused ms/step")->v == 0);
    assert_true(cell(p, "op kind", "RELU", "fused into others")->v == 1);
    assert_true(close_to(cell(p, "op kind", "all kernels", "unfused ms/step")->v, 0.0013, 1e-9));
    assert_true(close_to(cell(p, "op kind", "all kernels", "fused ms/step")->v, 0.0009, 1e-9));
    const xpb_chart *c = chart(r, "fusion-profile-chart-0");
    assert_int_equal(c->n_bars, 2);
    assert_int_equal(c->n_segments, 3);
    xpb_report_free(r);
    json_decref(doc);
}

static void test_precision(void **state)
{
    (void)state;
    json_t *doc = study(NULL);
    xpb_report *r = build(&doc, 1);
    const xpb_report_table *t = table(r, "precision-table");
    assert_int_equal(t->n_rows, 1);
    assert_string_equal(t->cells[column(t, "precision")].text, "bf16-mixed (emulated)");
    assert_true(close_to(t->cells[column(t, "speedup ×")].v, 1.5, 1e-9));
    assert_true(t->cells[column(t, "loss last")].v == 2.10);
    const xpb_chart *c = chart(r, "precision-loss-0");
    assert_int_equal(c->n_series, 2);
    assert_int_equal(c->series[0].n, 3);
    assert_true(c->series[1].y[2] == 2.10);
    xpb_report_free(r);
    json_decref(doc);
}

static void test_batch_fits(void **state)
{
    (void)state;
    json_t *doc = study(NULL);
    xpb_report *r = build(&doc, 1);
    const xpb_report_table *m = table(r, "batch-memory");
    assert_int_equal(m->n_rows, 2); /* the plan, and the process (which grew by 0 here) */
    const xpb_report_cell *row = m->cells;
    assert_string_equal(row[column(m, "memory")].text, "backend plan");
    assert_string_equal(row[column(m, "decides")].text, "yes");
    assert_true(row[column(m, "degree")].v == 1);
    assert_true(close_to(row[column(m, "R²")].v, 1, 1e-12));
    assert_string_equal(row[column(m, "fit MiB (b = batch)")].text, "28.61 + 1.907·b");
    assert_true(row[column(m, "hold-out batch")].v == 16);
    assert_true(close_to(row[column(m, "predicted MiB")].v, 62e6, 1e-9));
    assert_true(row[column(m, "measured MiB")].v == 62e6);
    assert_true(fabs(row[column(m, "error %")].v) < 1e-9);
    /* 16 GiB of host memory: (17179869184 - 30e6) / 2e6 = 8574.9 */
    assert_true(row[column(m, "largest batch that fits")].v == 8574);
    const xpb_report_table *s = table(r, "batch-step");
    row = s->cells;
    assert_true(row[column(s, "degree")].v == 1);
    assert_string_equal(row[column(s, "fit ms (b = batch)")].text, "10.00 + 1.000·b");
    /* throughput b / (0.01 + 0.001 b) on 1..16: best 16 / 0.026 = 615.4, 90% of it (553.8)
       first at b = 13 (12 / 0.022 = 545.5, 13 / 0.023 = 565.2) */
    assert_true(row[column(s, "saturates at batch")].v == 13);
    assert_true(close_to(row[column(s, "best samples/s (fit)")].v, 16 / 0.026, 1e-9));
    assert_string_equal(row[column(s, "throughput")].text, "still rising");
    const xpb_report_table *p = table(r, "batch-points-0");
    assert_int_equal(p->n_rows, 5 + 2); /* the measured batches, then 32 and 64 projected */
    assert_true(cell(p, "point", "projection", "batch")->v == 32);
    assert_true(close_to(cell(p, "point", "projection", "fitted plan MiB")->v, 94e6, 1e-9));
    /* measured points, band, fit and projection of the plan and of the process */
    assert_true(chart(r, "batch-memory-chart-0")->n_series == 8);
    xpb_report_free(r);
    /* a budget from the command line */
    xpb_report_opts opts = {.memory_budget_bytes = 101e6}; /* 35.5 samples */
    xpb_err err = {{0}};
    const char *name = "a.json";
    assert_int_equal(xpb_report_build(&r, &doc, &name, 1, &opts, &err), XPB_OK);
    m = table(r, "batch-memory");
    assert_true(m->cells[column(m, "largest batch that fits")].v == 35);
    assert_true(isfinite(chart(r, "batch-memory-chart-0")->hline)); /* in view: drawn */
    xpb_report_free(r);
    json_decref(doc);
}

static void test_threads_energy_interference(void **state)
{
    (void)state;
    json_t *doc = study(NULL);
    xpb_report *r = build(&doc, 1);
    const xpb_report_table *t = table(r, "threads-table");
    assert_int_equal(t->n_rows, 2);
    const xpb_report_cell *row2 = &t->cells[t->n_cols];
    assert_true(close_to(row2[column(t, "speedup over the fewest ×")].v, 1.9, 1e-9));
    assert_true(close_to(row2[column(t, "efficiency %")].v, 0.95, 1e-9));
    const xpb_report_table *e = table(r, "energy-study");
    assert_int_equal(e->n_rows, 3); /* every configuration with a run at batch 1 or 128 */
    assert_true(cell(e, "mode", "inference", "b1 W")->v == 50);
    /* 3 repeats of 10 steps of 1 sample over 10 J; of 128 samples over 100 J */
    assert_true(close_to(cell(e, "mode", "inference", "b1 samples/J")->v, 3, 1e-12));
    assert_true(close_to(cell(e, "mode", "inference", "b128 samples/J")->v, 38.4, 1e-12));
    assert_true(cell(e, "mode", "inference", "b128 W")->v == 60);
    assert_string_equal(cell(e, "model", "cyclegan/cifar", "b1 W")->text, "not measured");
    assert_int_equal(cell(e, "model", "cyclegan/cifar", "b128 W")->kind, XPB_CELL_EMPTY);
    const xpb_report_table *m = table(r, "energy-runs");
    assert_int_equal(m->n_rows, 2);
    const xpb_report_table *i = table(r, "interference-flagged");
    assert_int_equal(i->n_rows, 1);
    assert_true(cell(i, "id", "i-x", "others %")->v == 0.2);
    const xpb_report_table *all = table(r, "runs-table");
    assert_int_equal(all->n_rows, 19);
    assert_true(cell(all, "id", "i-x", "samples/s")->flags & XPB_CELL_FLAGGED);
    assert_false(cell(all, "id", "a-ref", "samples/s")->flags & XPB_CELL_FLAGGED);
    assert_string_equal(cell(table(r, "runs-unfinished"), "id", "fail-x", "status")->text,
                        "failed");
    assert_string_equal(cell(all, "id", "fail-x", "samples/s")->text, "failed");
    check_sources(r, &doc);
    xpb_report_free(r);
    json_decref(doc);
}

/* Version 1: speedups and their intervals come from the repeats, marked as recomputed;
 * sections without version-1 data say so. */
static void test_version_1(void **state)
{
    (void)state;
    json_t *doc = study("cpu_ref");
    fx_to_v1(doc);
    xpb_report *r = build(&doc, 1);
    const xpb_report_table *t = table(r, "speedups-table");
    const xpb_report_cell *c = cell(t, "model", "conv6/cifar", "cpu_onednn ×");
    assert_true(close_to(c->v, 10, 1e-9) && isfinite(c->lo) && isfinite(c->hi));
    assert_true(c->flags & XPB_CELL_RECOMPUTED);
    assert_null(c->src);
    const xpb_report_section *s = NULL;
    for (size_t i = 0; i < r->n_sections; i++)
        if (strcmp(r->sections[i].id, "interference") == 0)
            s = &r->sections[i];
    assert_non_null(s);
    assert_non_null(strstr(s->blocks[0].text, "Not recorded"));
    check_sources(r, &doc);
    xpb_report_free(r);
    json_decref(doc);
}

/* Two files: a file column, runs of different files never grouped together. */
static void test_two_files(void **state)
{
    (void)state;
    json_t *docs[2] = {study(NULL), study(NULL)};
    xpb_report *r = build(docs, 2);
    const xpb_report_table *t = table(r, "speedups-table");
    assert_string_equal(t->headers[0], "file");
    assert_int_equal(t->n_rows, 4);
    assert_int_equal(table(r, "batch-memory")->n_rows, 4); /* plan and process of each file */
    assert_int_equal(table(r, "environment-provenance")->n_cols, 3);
    check_sources(r, docs);
    xpb_report_free(r);
    json_decref(docs[0]);
    json_decref(docs[1]);
}

static void test_empty_and_bad(void **state)
{
    (void)state;
    json_t *doc = fx_doc(NULL);
    fx_finish(doc);
    xpb_report *r = build(&doc, 1);
    assert_true(r->n_sections >= 9);
    xpb_report_free(r);
    xpb_err err = {{0}};
    json_t *not_object = json_array();
    const char *name = "x.json";
    assert_int_equal(xpb_report_build(&r, &not_object, &name, 1, NULL, &err), XPB_INVALID_ARGUMENT);
    assert_null(r);
    assert_int_equal(xpb_report_build(&r, &doc, &name, 0, NULL, &err), XPB_INVALID_ARGUMENT);
    json_decref(not_object);
    json_decref(doc);
}

/* The block of kind `kind` (HEATMAP or SCATTER) with id `id`; NULL when there is none. */
static const xpb_report_block *figure_block(const xpb_report *r, xpb_block_kind kind,
                                            const char *id)
{
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const xpb_report_block *k = &r->sections[s].blocks[b];
            const char *kid = k->kind == XPB_BLOCK_HEATMAP   ? k->heatmap->id
                              : k->kind == XPB_BLOCK_SCATTER ? k->scatter->id
                                                             : NULL;
            if (k->kind == kind && strcmp(kid, id) == 0)
                return k;
        }
    return NULL;
}

/* A 2 x 2 grid of batch x threads on cpu_onednn with a fraction of peak, the same grid on
 * cpu_ref without one: one heat map (cpu_ref's has no value and is left out) whose cells are
 * the runs' fractions at their batch and threads, and its table with the file's sources; no
 * roofline without a profile and a bandwidth. */
static void test_surfaces(void **state)
{
    (void)state;
    json_t *doc = fx_doc("cpu_ref");
    static const int batches[2] = {16, 64}, threads[2] = {1, 2};
    static const char *const backends[2] = {"cpu_ref", "cpu_onednn"};
    char ids[8][32];
    size_t n = 0;
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 2; k++)
            for (int t = 0; t < 2; t++, n++) {
                snprintf(ids[n], sizeof ids[n], "g-%s-%d-%d", backends[b], batches[k], threads[t]);
                fx_add(doc, &(fx_run){.id = ids[n],
                                      .backend = backends[b],
                                      .batch = batches[k],
                                      .threads = threads[t],
                                      .tp = R3(100.0 * (double)(n + 1))});
                if (b == 1) /* 0.1 x (1 + batch index + 2 x threads index) */
                    json_object_set_new(
                        json_object_get(json_array_get(json_object_get(doc, "runs"), n), "metrics"),
                        "peak_fraction", json_real(0.1 * (1 + k + 2 * t)));
            }
    fx_finish(doc);
    xpb_report *r = build(&doc, 1);
    const xpb_report_block *k = figure_block(r, XPB_BLOCK_HEATMAP, "surfaces-map-0");
    assert_non_null(k);
    assert_null(figure_block(r, XPB_BLOCK_HEATMAP, "surfaces-map-1"));
    const struct xpb_svg_heatmap *h = k->heatmap;
    assert_string_equal(h->x_label, "threads");
    assert_string_equal(h->y_label, "batch");
    assert_int_equal(h->n_cols, 2);
    assert_int_equal(h->n_rows, 2);
    assert_string_equal(h->col_labels[1], "2");
    assert_string_equal(h->row_labels[1], "64");
    for (int row = 0; row < 2; row++)
        for (int col = 0; col < 2; col++)
            assert_true(close_to(h->values[row * 2 + col], 100 * 0.1 * (1 + row + 2 * col), 1e-12));
    const xpb_report_table *t = table(r, "surfaces-table-0");
    assert_int_equal(t->n_rows, 2);
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
        if (t->cells[i].kind == XPB_CELL_NUMBER)
            assert_true(source_value(&doc, t->cells[i].src) == t->cells[i].v);
    assert_true(cell(t, "batch \\ threads", "64", "1")->v == 0.2);
    /* speedup against parameter count: the four comparisons of the grid */
    const xpb_report_block *sp = figure_block(r, XPB_BLOCK_SCATTER, "surfaces-speedup-params");
    assert_non_null(sp);
    assert_int_equal(sp->scatter->n_points, 4);
    assert_true(sp->scatter->points[0].x == 1000);
    /* no profile on a device with a bandwidth: no roofline, said in one line */
    int said = 0;
    for (size_t s = 0; s < r->n_sections; s++)
        if (strcmp(r->sections[s].id, "roofline") == 0)
            said = r->sections[s].n_blocks == 1 &&
                   strncmp(r->sections[s].blocks[0].text, "No roofline", 11) == 0;
    assert_true(said);
    xpb_report_free(r);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speedups),
        cmocka_unit_test(test_fusion_and_profile),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_batch_fits),
        cmocka_unit_test(test_threads_energy_interference),
        cmocka_unit_test(test_surfaces),
        cmocka_unit_test(test_version_1),
        cmocka_unit_test(test_two_files),
        cmocka_unit_test(test_empty_and_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
