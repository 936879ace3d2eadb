/* The report of a real quick study in a real browser: `xpubench run configs/study-quick.yaml`
 * (shortened with --set to one step per repeat), `xpubench report`, then Debian's Chromium,
 * headless, opens the page from disk. Every section renders; every number in the page's tables,
 * as the browser parsed them, carries the exact value the results file has at the place it
 * names, and shows that value formatted by the report's rule; every run's throughput is on the
 * page; every backend speedup the file calls significant is a filled bar of the speedup chart,
 * every other one a hollow bar. Screenshots (the first screen and the whole page) and a PDF
 * print are kept in
 * <build>/artifacts. Exits 77 (skipped) when chromium is not installed.
 * XPB_TEST_REPORT_RESULTS=FILE checks the report of that results file instead of running the
 * shortened study (e.g. a full `xpubench run configs/study-quick.yaml`). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "browser_harness.h"
#include "test_report_fixture.h"

#define ARTIFACTS XPB_TEST_BINARY_DIR "/artifacts"
#define DOM_MAX (8u << 20)

static struct {
    const char *chromium;
    char dir[256], results[300], html[300], url[320];
    json_t *doc;
    char *dom;
} g;

static int chromium(const char *mode_flag, const char *window, const char *out)
{
    return bh_chromium(g.chromium, g.dir, g.url, mode_flag, window, out);
}

static int group_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g.dir, sizeof g.dir, "%s/xpb_report_browser_XXXXXX", tmp);
    assert_non_null(mkdtemp(g.dir));
    snprintf(g.results, sizeof g.results, "%s/study-quick.json", g.dir);
    snprintf(g.html, sizeof g.html, "%s/study-quick.html", g.dir);
    snprintf(g.url, sizeof g.url, "file://%s", g.html);
    bh_quick_report(g.dir, XPB_TEST_SOURCE_DIR "/configs/study-quick.yaml", g.results,
                    sizeof g.results, g.html);
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_load(&g.doc, g.results, &err), XPB_OK);
    char dom[320];
    snprintf(dom, sizeof dom, "%s/dom.html", g.dir);
    if (chromium("--dump-dom", "--window-size=1366,1600", dom) != 0)
        fail_msg("chromium --dump-dom failed: see %s/chromium.log", g.dir);
    g.dom = bh_slurp(dom, DOM_MAX);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    json_decref(g.doc);
    free(g.dom);
    if (!getenv("XPB_TEST_KEEP")) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g.dir);
        if (system(cmd) != 0)
            return -1;
    }
    return 0;
}

static void test_renders(void **state)
{
    (void)state;
    static const char *const sections[] = {"environment", "speedups", "fusion", "precision",
                                           "batch",       "threads",  "energy", "interference",
                                           "runs",        "method"};
    assert_non_null(strstr(g.dom, "<h1>xpubench report</h1>"));
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char id[64];
        snprintf(id, sizeof id, "<section id=\"%s\">", sections[i]);
        if (!strstr(g.dom, id))
            fail_msg("section %s is not on the page", sections[i]);
    }
    /* the quick study fills every table the report has: none says there was nothing */
    assert_null(strstr(g.dom, "No backend comparison"));
    assert_null(strstr(g.dom, "No fusion comparison"));
    assert_null(strstr(g.dom, "No precision comparison"));
    assert_null(strstr(g.dom, "No batch sweep"));
    assert_null(strstr(g.dom, "No thread sweep"));
    assert_non_null(strstr(g.dom, "id=\"batch-memory-chart-0\""));
    assert_non_null(strstr(g.dom, "id=\"precision-loss-0\""));
    assert_non_null(strstr(g.dom, "id=\"fusion-profile-chart-0\""));
    assert_true(bh_count(g.dom, "<svg") >= 6);
    /* what the browser parsed is what was written: as many numbers as the file */
    char *html = bh_slurp(g.html, DOM_MAX);
    assert_int_equal(bh_count(g.dom, "<td class=\"n"), bh_count(html, "<td class=\"n"));
    free(html);
}

/* Every number of every table equals the results file's, and reads as it. */
static void test_numbers_equal_the_json(void **state)
{
    (void)state;
    size_t cells = 0, sourced = 0;
    for (const char *td = strstr(g.dom, "<td class=\"n"); td;
         td = strstr(td + 1, "<td class=\"n")) {
        fx_check_number_cell(g.doc, td);
        char src[256];
        sourced += fx_attr(td, "data-src", src, sizeof src) != NULL;
        cells++;
    }
    printf("%zu numbers on the page, %zu of them straight from the file\n", cells, sourced);
    assert_true(cells > 200 && sourced > cells / 2);
    /* and the other way: every run's throughput is on the page */
    const json_t *runs = json_object_get(g.doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        char src[96];
        snprintf(src, sizeof src, "data-src=\"f0:runs[%zu].metrics.throughput.median\"", i);
        if (!strstr(g.dom, src))
            fail_msg("run %zu's throughput is not on the page", i);
    }
}

/* The speedup chart as the browser parsed it: one bar per backend comparison of the file, in
 * its order, filled (its colour) when the file says significant, hollow (white) otherwise. */
static void test_speedup_bars(void **state)
{
    (void)state;
    const char *fig = strstr(g.dom, "<figure id=\"speedups-chart\">");
    assert_non_null(fig);
    const char *end = strstr(fig, "</figure>");
    const char *rect = strstr(fig, "<rect ");
    const json_t *cmps = json_object_get(g.doc, "comparisons");
    size_t bars = 0, filled = 0;
    for (size_t i = 0; i < json_array_size(cmps); i++) {
        const json_t *c = json_array_get(cmps, i);
        if (strcmp(json_string_value(json_object_get(c, "kind")), "backend") != 0)
            continue;
        if (!rect || rect > end)
            fail_msg("comparison %zu has no bar in the speedup chart", i);
        char fill[32];
        assert_non_null(fx_attr(rect, "fill", fill, sizeof fill));
        int significant = json_is_true(json_object_get(c, "significant"));
        int hollow = strcmp(fill, "#fff") == 0;
        if (significant == hollow)
            fail_msg("comparison %zu (%s over %s) is %s in the file and drawn %s (fill %s)", i,
                     json_string_value(json_object_get(c, "candidate")),
                     json_string_value(json_object_get(c, "baseline")),
                     significant ? "significant" : "not significant", hollow ? "hollow" : "filled",
                     fill);
        filled += !hollow;
        bars++;
        rect = strstr(rect + 1, "<rect ");
    }
    printf("speedup chart: %zu bars, %zu filled (significant), %zu hollow\n", bars, filled,
           bars - filled);
    assert_true(rect == NULL || rect > end); /* no bar without a comparison */
    assert_true(filled >= 1); /* cpu_onednn is several times cpu_ref's speed in the study */
}

/* 1 when path is a PNG or a PDF of at least min_bytes. */
static int is_file_of(const char *path, const char *magic, long min_bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char head[8] = {0};
    size_t n = fread(head, 1, sizeof head, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return n >= strlen(magic) && memcmp(head, magic, strlen(magic)) == 0 && size >= min_bytes;
}

static void test_screenshots_and_print(void **state)
{
    (void)state;
    mkdir(ARTIFACTS, 0755);
    static const struct {
        const char *file, *window, *magic;
        long min_bytes;
    } shots[] = {
        {"report-first-screen.png", "--window-size=1366,1000", "\x89PNG", 20000},
        {"report-page.png", "--window-size=1366,12000", "\x89PNG", 100000},
        {"report.pdf", "--window-size=1366,1000", "%PDF", 20000},
    };
    for (size_t i = 0; i < sizeof shots / sizeof shots[0]; i++) {
        char path[400], flag[420];
        snprintf(path, sizeof path, "%s/%s", ARTIFACTS, shots[i].file);
        snprintf(flag, sizeof flag, "--%s=%s",
                 strcmp(shots[i].magic, "%PDF") == 0 ? "print-to-pdf" : "screenshot", path);
        unlink(path);
        assert_int_equal(chromium(flag, shots[i].window, NULL), 0);
        if (!is_file_of(path, shots[i].magic, shots[i].min_bytes))
            fail_msg("%s is not a rendered page", path);
        printf("artifact: %s\n", path);
    }
    char copy[1024]; /* the page itself, next to its pictures */
    snprintf(copy, sizeof copy, "cp '%s' '%s' '%s/'", g.html, g.results, ARTIFACTS);
    assert_int_equal(system(copy), 0);
}

int main(void)
{
    g.chromium = bh_find_chromium();
    if (!g.chromium) {
        printf("SKIP: chromium is not installed (apt-get install chromium); the report was not "
               "opened in a browser\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_renders),
        cmocka_unit_test(test_numbers_equal_the_json),
        cmocka_unit_test(test_speedup_bars),
        cmocka_unit_test(test_screenshots_and_print),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
