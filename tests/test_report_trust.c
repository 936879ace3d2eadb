/* What a reader may conclude from a report (issue 21), on documents made to order: a step-time
 * fit that explains nothing, or of disturbed runs, says "no conclusion" instead of where
 * throughput saturates; every fit carries R², its residual SD and its extrapolation; projections
 * have a band that widens with the extrapolation; the largest batch that fits comes from the
 * process's growth when the file has it, says so, and leaves out the first run of a backend;
 * memory is drawn on a linear batch axis with its band. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"
#include "report/report_fit.h"
#include "report/report_model.h"
#include "test_report_fixture.h"

#define R3(x)                                                                                      \
    {                                                                                              \
        (x) * 1.00, (x)*1.01, (x)*0.99                                                             \
    }

static const int sweep_batches[] = {1, 2, 4, 8, 16, 32};
#define N_SWEEP 6

/* A sweep of conv6 training on cpu_onednn at batches 1..32 whose step time is p50(b), plan
 * memory plan(b) and process growth proc(b) (bytes), run i disturbed when others[i] > 0.05.
 * A cpu_onednn run comes first when `warm`, so the sweep's first run is not its backend's
 * first. */
static json_t *sweep(double (*p50)(int), double (*plan)(int), double (*proc)(int),
                     const double *others, int warm)
{
    json_t *doc = fx_doc(NULL);
    if (warm)
        fx_add(doc, &(fx_run){.id = "warm",
                              .model = "vgg16",
                              .backend = "cpu_onednn",
                              .fusion = 1,
                              .tp = R3(10)});
    for (int i = 0; i < N_SWEEP; i++) {
        char id[32];
        int b = sweep_batches[i];
        snprintf(id, sizeof id, "s-b%d", b);
        fx_add(doc, &(fx_run){.id = id,
                              .mode = "train",
                              .backend = "cpu_onednn",
                              .batch = b,
                              .fusion = 1,
                              .p50 = p50(b),
                              .device_peak = plan(b),
                              .host_run_peak = proc ? proc(b) : -1,
                              .other_share = others ? others[i] : 0,
                              .tp = R3(b / p50(b))});
    }
    fx_finish(doc);
    return doc;
}

static xpb_report *build(json_t *doc, const xpb_report_opts *opts)
{
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    const char *name = "a.json";
    assert_int_equal(xpb_report_build(&r, &doc, &name, 1, opts, &err), XPB_OK);
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

/* The paragraph of section `id` that contains `text`, or NULL. */
static const char *paragraph(const xpb_report *r, const char *id, const char *text)
{
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; strcmp(r->sections[s].id, id) == 0 && b < r->sections[s].n_blocks; b++) {
            const xpb_report_block *k = &r->sections[s].blocks[b];
            if (k->kind == XPB_BLOCK_TEXT && strstr(k->text, text))
                return k->text;
        }
    return NULL;
}

static const xpb_report_cell *at(const xpb_report_table *t, size_t row, const char *header)
{
    for (size_t c = 0; c < t->n_cols; c++)
        if (strcmp(t->headers[c], header) == 0)
            return &t->cells[row * t->n_cols + c];
    fail_msg("table %s has no column '%s'", t->id, header);
    return NULL;
}

/* The row of table t whose column `key` reads `value`. */
static size_t row_of(const xpb_report_table *t, const char *key, const char *value)
{
    for (size_t row = 0; row < t->n_rows; row++) {
        const xpb_report_cell *c = at(t, row, key);
        if (c->kind == XPB_CELL_TEXT && strcmp(c->text, value) == 0)
            return row;
    }
    fail_msg("table %s has no row with %s = %s", t->id, key, value);
    return 0;
}

static double step_linear(int b)
{
    return 0.010 + 0.001 * b;
}

/* Step times that go up and down with the batch: no polynomial explains them. */
static double step_noise(int b)
{
    static const double t[] = {0.05, 0.012, 0.09, 0.02, 0.11, 0.03};
    for (int i = 0; i < N_SWEEP; i++)
        if (sweep_batches[i] == b)
            return t[i] * b;
    return NAN;
}

static double plan_linear(int b)
{
    return 30e6 + 2e6 * b;
}

/* The process holds the plan and as much again: it needs twice the plan per sample. */
static double proc_linear(int b)
{
    return 40e6 + 4e6 * b;
}

static void test_no_conclusion_from_a_fit_that_explains_nothing(void **state)
{
    (void)state;
    json_t *doc = sweep(step_noise, plan_linear, NULL, NULL, 1);
    xpb_report *r = build(doc, NULL);
    const xpb_report_table *t = table(r, "batch-step");
    assert_int_equal(t->n_rows, 1);
    assert_true(at(t, 0, "R²")->v < XPB_FIT_R2_MIN);
    assert_int_equal(at(t, 0, "saturates at batch")->kind, XPB_CELL_EMPTY);
    assert_int_equal(at(t, 0, "best samples/s (fit)")->kind, XPB_CELL_EMPTY);
    const xpb_report_cell *verdict = at(t, 0, "throughput");
    assert_int_equal(verdict->kind, XPB_CELL_TEXT);
    assert_non_null(strstr(verdict->text, "no conclusion: R²"));
    assert_null(strstr(verdict->text, "saturated"));
    /* every fit says what it is worth */
    assert_int_equal(at(t, 0, "residual SD ms")->kind, XPB_CELL_NUMBER);
    assert_true(at(t, 0, "extrapolation ×")->v == 4);
    assert_string_equal(at(t, 0, "chosen by")->text, "AICc");
    xpb_report_free(r);
    json_decref(doc);
}

static void test_no_conclusion_from_disturbed_runs(void **state)
{
    (void)state;
    const double others[N_SWEEP] = {0, 0, 0.3, 0, 0.2, 0};
    json_t *doc = sweep(step_linear, plan_linear, NULL, others, 1);
    xpb_report *r = build(doc, NULL);
    const xpb_report_table *t = table(r, "batch-step");
    assert_true(at(t, 0, "R²")->v > 0.999);
    assert_int_equal(at(t, 0, "saturates at batch")->kind, XPB_CELL_EMPTY);
    assert_string_equal(at(t, 0, "throughput")->text,
                        "no conclusion: 2 of 6 runs disturbed by other processes");
    xpb_report_free(r);
    json_decref(doc);
    /* the same sweep undisturbed concludes */
    doc = sweep(step_linear, plan_linear, NULL, NULL, 1);
    r = build(doc, NULL);
    t = table(r, "batch-step");
    assert_string_equal(at(t, 0, "throughput")->text, "still rising");
    assert_int_equal(at(t, 0, "saturates at batch")->kind, XPB_CELL_NUMBER);
    xpb_report_free(r);
    json_decref(doc);
}

/* The process needs twice the plan per sample: the largest batch comes from it, and says so;
 * its band brackets it; the plan's row would allow more. */
static void test_largest_batch_from_the_process(void **state)
{
    (void)state;
    json_t *doc = sweep(step_linear, plan_linear, proc_linear, NULL, 1);
    xpb_report_opts opts = {.memory_budget_bytes = 1.0001e9};
    xpb_report *r = build(doc, &opts);
    const xpb_report_table *m = table(r, "batch-memory");
    assert_int_equal(m->n_rows, 2);
    size_t plan = row_of(m, "memory", "backend plan"), proc = row_of(m, "memory", "process");
    /* (1.0001e9 - 40e6) / 4e6 = 240.025 by the process; (1.0001e9 - 30e6) / 2e6 = 485.05 */
    const xpb_report_cell *largest = at(m, proc, "largest batch that fits");
    assert_true(largest->v == 240);
    assert_true(largest->lo < 240 && 240 < largest->hi); /* the band's edges */
    assert_true(at(m, plan, "largest batch that fits")->v == 485);
    assert_string_equal(at(m, proc, "decides")->text, "yes");
    assert_string_equal(at(m, plan, "decides")->text, "no");
    assert_string_equal(at(m, plan, "chosen by")->text, "line unless rejected");
    assert_true(at(m, plan, "extrapolation ×")->v == 4);
    const char *text = paragraph(r, "batch", "the largest batch that fits");
    assert_non_null(text);
    assert_non_null(strstr(text, "is 240 ("));
    assert_non_null(strstr(text, "from the process's growth (host_run_peak_bytes)"));
    assert_non_null(strstr(text, "the backend plan alone would allow 485"));
    xpb_report_free(r);
    json_decref(doc);
    /* without the process's growth: the plan decides, and the paragraph says the process
       needs more */
    doc = sweep(step_linear, plan_linear, NULL, NULL, 1);
    r = build(doc, &opts);
    text = paragraph(r, "batch", "the largest batch that fits");
    assert_non_null(strstr(text, "from the backend's plan (device_peak_bytes)"));
    assert_non_null(strstr(text, "needs more than its backend's plan"));
    xpb_report_free(r);
    json_decref(doc);
}

/* The first run of cpu_onednn in the file grew the process by one-time costs: left out. */
static double proc_first_heavy(int b)
{
    return b == 1 ? 240e6 : proc_linear(b);
}

static void test_first_run_of_a_backend_left_out(void **state)
{
    (void)state;
    json_t *doc = sweep(step_linear, plan_linear, proc_first_heavy, NULL, 0);
    xpb_report_opts opts = {.memory_budget_bytes = 1.0001e9};
    xpb_report *r = build(doc, &opts);
    const xpb_report_table *m = table(r, "batch-memory");
    size_t proc = row_of(m, "memory", "process");
    assert_true(fabs(at(m, proc, "R²")->v - 1) < 1e-9); /* the five others are on a line */
    assert_true(at(m, proc, "largest batch that fits")->v == 240);
    const xpb_report_table *p = table(r, "batch-points-0");
    assert_non_null(strstr(at(p, 0, "point")->text, "process not fitted"));
    assert_string_equal(at(p, 1, "point")->text, "measured");
    xpb_report_free(r);
    json_decref(doc);
}

/* Projections: their band widens with the extrapolation; the chart has a linear batch axis and
 * a band for each memory. */
static void test_bands_and_axis(void **state)
{
    (void)state;
    json_t *doc = sweep(step_linear, plan_linear, proc_linear, NULL, 1);
    /* some noise, so that the band has a statistical part */
    json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 1; i < json_array_size(runs); i++) {
        json_t *mem =
            json_object_get(json_object_get(json_array_get(runs, i), "metrics"), "memory");
        double v = json_number_value(json_object_get(mem, "device_peak_bytes"));
        json_object_set_new(mem, "device_peak_bytes",
                            json_integer((json_int_t)(v + (i % 2 ? 3e5 : -3e5))));
    }
    xpb_report *r = build(doc, NULL);
    const xpb_report_table *p = table(r, "batch-points-0");
    assert_int_equal(p->n_rows, N_SWEEP + 2); /* 64 and 128 projected */
    const xpb_report_cell *at64 = at(p, N_SWEEP, "fitted plan MiB");
    const xpb_report_cell *at128 = at(p, N_SWEEP + 1, "fitted plan MiB");
    const xpb_report_cell *at32 = at(p, N_SWEEP - 1, "fitted plan MiB");
    assert_true(at(p, N_SWEEP + 1, "extrapolation ×")->v == 4);
    double w32 = at32->hi - at32->lo, w64 = at64->hi - at64->lo, w128 = at128->hi - at128->lo;
    assert_true(w32 > 0 && w32 < w64 && w64 < w128);
    assert_true(at128->lo < at128->v && at128->v < at128->hi);
    const xpb_chart *c = chart(r, "batch-memory-chart-0");
    assert_false(c->x_log2);
    size_t bands = 0;
    for (size_t i = 0; i < c->n_series; i++)
        bands += (c->series[i].style & XPB_SERIES_BAND) != 0;
    assert_int_equal(bands, 2); /* plan and process */
    assert_false(chart(r, "batch-step-chart-0")->x_log2);
    xpb_report_free(r);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_conclusion_from_a_fit_that_explains_nothing),
        cmocka_unit_test(test_no_conclusion_from_disturbed_runs),
        cmocka_unit_test(test_largest_batch_from_the_process),
        cmocka_unit_test(test_first_run_of_a_backend_left_out),
        cmocka_unit_test(test_bands_and_axis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
