/* The report's charts as drawn (core/report/report_chart.c through render/svg_bars.h): a
 * significant speedup is a filled bar and an insignificant one a hollow bar, in the SVG the
 * page carries; the same in a report built a second time in the same process (a stale value
 * left on the stack by the first must not leak into the second). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/text.h"
#include "report/report.h"
#include "report/report_model.h"
#include "test_report_fixture.h"

/* conv6: cpu_onednn ten times as fast as cpu_ref, clearly; resnet18: the same speed within the
 * spread of the repeats (the interval contains 1). */
static json_t *two_speedups(void)
{
    json_t *doc = fx_doc("cpu_ref");
    fx_add(doc, &(fx_run){.id = "c-ref", .fusion = 1, .tp = {100, 101, 99}});
    fx_add(doc,
           &(fx_run){.id = "c-dnn", .backend = "cpu_onednn", .fusion = 1, .tp = {1000, 1010, 990}});
    fx_add(doc, &(fx_run){.id = "r-ref", .model = "resnet18", .fusion = 1, .tp = {10, 12, 8}});
    fx_add(doc, &(fx_run){.id = "r-dnn",
                          .model = "resnet18",
                          .backend = "cpu_onednn",
                          .fusion = 1,
                          .tp = {10.5, 8, 12.5}});
    fx_finish(doc);
    return doc;
}

/* The HTML page of doc, NUL-terminated; the caller frees it. */
static char *page_of(json_t *doc)
{
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    const char *name = "study.json";
    assert_int_equal(xpb_report_build(&r, &doc, &name, 1, NULL, &err), XPB_OK);
    struct xpb_text t = {0};
    assert_int_equal(xpb_report_render(&t, r, XPB_REPORT_HTML), XPB_OK);
    xpb_report_free(r);
    char *page = strdup(t.data);
    xpb_text_free(&t);
    assert_non_null(page);
    return page;
}

/* The fills of the bars (<rect ... fill="...">) of figure `id`, in order, into fills[]; returns
 * how many. */
static size_t bar_fills(const char *page, const char *id, char fills[][16], size_t max)
{
    char key[96];
    snprintf(key, sizeof key, "<figure id=\"%s\">", id);
    const char *at = strstr(page, key);
    if (!at)
        fail_msg("no figure %s in the page", id);
    const char *end = strstr(at, "</figure>");
    size_t n = 0;
    for (const char *r = strstr(at, "<rect "); r && r < end && n < max;
         r = strstr(r + 1, "<rect ")) {
        char fill[16];
        if (fx_attr(r, "fill", fill, sizeof fill))
            snprintf(fills[n++], sizeof fills[0], "%s", fill);
    }
    return n;
}

/* Bar i of figure `id` is a filled bar (its fill is its colour) or a hollow one (white). */
static void check_bars(const char *page)
{
    char fills[8][16];
    assert_int_equal(bar_fills(page, "speedups-chart", fills, 8), 2);
    if (strcmp(fills[0], "#fff") == 0)
        fail_msg("the significant speedup (conv6, 10x) is drawn hollow");
    if (strcmp(fills[1], "#fff") != 0)
        fail_msg("the insignificant speedup (resnet18) is drawn filled (%s)", fills[1]);
}

static void test_significant_filled_insignificant_hollow(void **state)
{
    (void)state;
    json_t *doc = two_speedups();
    const json_t *cmps = json_object_get(doc, "comparisons");
    assert_int_equal(json_array_size(cmps), 2);
    assert_true(json_is_true(json_object_get(json_array_get(cmps, 0), "significant")));
    assert_true(json_is_false(json_object_get(json_array_get(cmps, 1), "significant")));
    for (int round = 0; round < 3; round++) { /* the same however often it is built */
        char *page = page_of(doc);
        check_bars(page);
        free(page);
    }
    json_decref(doc);
}

/* Version 1: the significance is the report's own (recomputed from the repeats), drawn the same
 * way. */
static void test_version_1_bars(void **state)
{
    (void)state;
    json_t *doc = two_speedups();
    fx_to_v1(doc);
    char *page = page_of(doc);
    check_bars(page);
    free(page);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_significant_filled_insignificant_hollow),
        cmocka_unit_test(test_version_1_bars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
