/* The smaller marks a reader relies on (issue 21), on documents made to order: fusion is "n/a"
 * for a backend that does not fuse in every table that shows fusion (the speedup table's row,
 * a configuration of several backends, says so of its baseline); the step time fusion saves
 * has the speedup's interval and the disturbance mark; two loss curves that lie on each other
 * are said to coincide. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"
#include "report/report_model.h"
#include "test_report_fixture.h"

#define R3(x)                                                                                      \
    {                                                                                              \
        (x) * 1.00, (x)*1.01, (x)*0.99                                                             \
    }

static xpb_report *build(json_t *doc)
{
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    const char *name = "a.json";
    assert_int_equal(xpb_report_build(&r, &doc, &name, 1, NULL, &err), XPB_OK);
    return r;
}

static const void *block(const xpb_report *r, xpb_block_kind kind, const char *id)
{
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const xpb_report_block *k = &r->sections[s].blocks[b];
            if (k->kind == kind && kind == XPB_BLOCK_TABLE && strcmp(k->table->id, id) == 0)
                return k->table;
            if (k->kind == kind && kind == XPB_BLOCK_CHART && strcmp(k->chart->id, id) == 0)
                return k->chart;
        }
    fail_msg("no block %s", id);
    return NULL;
}

static const xpb_report_table *table(const xpb_report *r, const char *id)
{
    return block(r, XPB_BLOCK_TABLE, id);
}

static const xpb_chart *chart(const xpb_report *r, const char *id)
{
    return block(r, XPB_BLOCK_CHART, id);
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

/* A cpu_ref run says fusion n/a in every table that shows fusion; the step time fusion saves
 * has its interval and the disturbance mark; two identical loss curves are said to coincide. */
static void test_fusion_and_loss_curves(void **state)
{
    (void)state;
    json_t *doc = fx_doc("cpu_ref");
    fx_add(doc, &(fx_run){.id = "ref",
                          .batch = 1,
                          .fusion = 1,
                          .tp = R3(100),
                          .joules = 10,
                          .watts = 50,
                          .other_share = 0.2});
    fx_add(doc, &(fx_run){
                    .id = "dnn", .batch = 1, .backend = "cpu_onednn", .fusion = 1, .tp = R3(1000)});
    fx_add(doc, &(fx_run){.id = "on",
                          .backend = "cpu_onednn",
                          .batch = 32,
                          .fusion = 1,
                          .tp = R3(500),
                          .other_share = 0.3});
    fx_add(doc, &(fx_run){
                    .id = "off", .backend = "cpu_onednn", .batch = 32, .fusion = 0, .tp = R3(400)});
    fx_add(doc,
           &(fx_run){
               .id = "p32", .mode = "train", .backend = "cpu_onednn", .fusion = 1, .tp = R3(300)});
    fx_add(doc, &(fx_run){.id = "p16",
                          .mode = "train",
                          .backend = "cpu_onednn",
                          .fusion = 1,
                          .precision = "bf16-mixed",
                          .tp = R3(450)});
    fx_finish(doc);
    xpb_report *r = build(doc);
    const xpb_report_table *sp = table(r, "speedups-table");
    assert_string_equal(at(sp, 0, "fusion")->text, "n/a for cpu_ref, on for the others");
    const xpb_report_table *e = table(r, "energy-study");
    assert_string_equal(at(e, row_of(e, "backend", "cpu_ref"), "fusion")->text, "n/a");
    const xpb_report_table *i = table(r, "interference-flagged");
    assert_string_equal(at(i, row_of(i, "id", "ref"), "fusion")->text, "n/a");
    assert_string_equal(at(i, row_of(i, "id", "on"), "fusion")->text, "on");
    const xpb_report_table *all = table(r, "runs-table");
    assert_string_equal(at(all, row_of(all, "id", "ref"), "fused")->text, "n/a");
    /* the saving: 1 - 400/500 with the speedup's interval, marked disturbed */
    const xpb_report_table *f = table(r, "fusion-table");
    const xpb_report_cell *saved = at(f, 0, "step time saved %");
    assert_true(fabs(saved->v - 0.2) < 1e-9);
    assert_true(saved->lo < 0.2 && 0.2 < saved->hi);
    assert_true(saved->flags & XPB_CELL_FLAGGED);
    /* the fixture's loss series are the same for fp32 and bf16 */
    const xpb_chart *loss = chart(r, "precision-loss-0");
    assert_non_null(loss->note);
    assert_non_null(strstr(loss->note, "the two curves coincide"));
    xpb_report_free(r);
    /* a bf16 curve that differs: no such note */
    json_t *series = json_object_get(
        json_object_get(json_object_get(json_array_get(json_object_get(doc, "runs"), 5), "metrics"),
                        "loss"),
        "series");
    json_object_set_new(json_array_get(series, 2), "loss", json_real(1.5));
    r = build(doc);
    assert_null(chart(r, "precision-loss-0")->note);
    xpb_report_free(r);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fusion_and_loss_curves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
