/* `xpubench report` and `xpubench compare` as a user runs them, on results files made to order:
 * formats from the option or the file's extension, the memory budget, the exit codes of
 * docs/cli.md (0, 1, 2, 3, 7), and compare's verdicts and exit status for a file against
 * itself, against a slower file, with a threshold and with ignored keys, against a file it has
 * nothing in common with (7, naming the keys that differ) and against a slower file whose runs
 * were disturbed (0 unless --count-disturbed). */
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

#include "cli_harness.h"
#include "test_report_fixture.h"

#define TIGHT(x)                                                                                   \
    {                                                                                              \
        (x) * 1.000, (x)*1.001, (x)*0.999                                                          \
    }

static const char *path(const char *name)
{
    static char buf[4][300];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
    return p;
}

/* A batch sweep of three runs on `threads` threads, `scale` times as fast as the reference,
 * while other processes took `others` of the run's CPUs. */
static void write_doc(const char *name, double scale, int threads, double others)
{
    json_t *d = fx_doc(NULL);
    fx_add(d, &(fx_run){.id = "conv6-a",
                        .batch = 16,
                        .threads = threads,
                        .tp = TIGHT(80 * scale),
                        .device_peak = 4e7,
                        .other_share = others});
    fx_add(d, &(fx_run){.id = "conv6-b",
                        .batch = 32,
                        .threads = threads,
                        .tp = TIGHT(100 * scale),
                        .device_peak = 6e7,
                        .other_share = others});
    fx_add(d, &(fx_run){.id = "conv6-c",
                        .batch = 64,
                        .threads = threads,
                        .tp = TIGHT(120 * scale),
                        .device_peak = 9e7,
                        .other_share = others});
    fx_finish(d);
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_write(d, path(name), &err), XPB_OK);
    json_decref(d);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/xpb_report_cli_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(tmpdir));
    write_doc("a.json", 1, 2, 0);
    write_doc("slow.json", 0.55, 1, 0);
    write_doc("disturbed.json", 0.55, 2, 0.3);
    FILE *f = fopen(path("bad.json"), "w");
    fputs("{\"schema\": \"xpubench-results\"}\n", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_report_formats(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(NULL, &err, "report", path("a.json"), "-o", path("r.html"), NULL), 0);
    assert_non_null(strstr(err, "r.html"));
    free(err);
    char *html = slurp(path("r.html"));
    assert_int_equal(strncmp(html, "<!DOCTYPE html>", 15), 0);
    free(html);
    assert_int_equal(xpb(NULL, NULL, "report", path("a.json"), "-o", path("r.md"), NULL), 0);
    char *md = slurp(path("r.md"));
    assert_int_equal(strncmp(md, "# xpubench report", 17), 0);
    free(md);
    assert_int_equal(xpb(&out, NULL, "report", path("a.json"), "--format", "csv", NULL), 0);
    assert_non_null(strstr(out, "Every run: Every run\r\n"));
    free(out);
    /* --format wins over the extension; --title */
    assert_int_equal(xpb(&out, NULL, "report", path("a.json"), "--format", "md", "--title",
                         "Quick study", "-o", "-", NULL),
                     0);
    assert_int_equal(strncmp(out, "# Quick study\n", 14), 0);
    free(out);
}

static void test_report_memory_budget(void **state)
{
    (void)state;
    char *out;
    /* 40, 60 and 90 MB at 16, 32 and 64: a line of 1.027 MB per sample from 25.00 MB, which
       passes 128 MiB (134.2 MB) after batch 106 */
    assert_int_equal(
        xpb(&out, NULL, "report", path("a.json"), "--format", "csv", "--memory", "128MiB", NULL),
        0);
    const char *line = strstr(out, "Memory against batch: the fits");
    assert_non_null(line);
    const char *row = strstr(line, "backend plan"); /* the budget in GiB, the batch, ... */
    if (!row || !strstr(row, ",0.1250,106,"))
        fail_msg("%.900s", line);
    free(out);
}

static void test_report_errors(void **state)
{
    (void)state;
    char *err;
    assert_int_equal(xpb(NULL, &err, "report", NULL), 2);
    assert_non_null(strstr(err, "expected at least one results file"));
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("a.json"), "--format", "pdf", NULL), 2);
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("a.json"), "--memory", "lots", NULL), 2);
    assert_non_null(strstr(err, "--memory lots"));
    free(err);
    assert_int_equal(
        xpb(NULL, &err, "report", path("a.json"), "--surface-metric", "metrics.speed", NULL), 2);
    assert_non_null(strstr(err, "--surface-metric metrics.speed: expected the JSON path"));
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("a.json"), "--bogus", NULL), 2);
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("a.json"), path("bad.json"), NULL), 3);
    assert_non_null(strstr(err, "bad.json"));
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("missing.json"), NULL), 3);
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("a.json"), "-o", "/proc/xpb/r.html", NULL), 1);
    free(err);
    char *out;
    assert_int_equal(xpb(&out, NULL, "report", "--help", NULL), 0);
    assert_non_null(strstr(out, "Exit codes: 0 written"));
    free(out);
}

static void test_compare(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(&out, NULL, "compare", path("a.json"), path("a.json"), NULL), 0);
    assert_non_null(strstr(out, "0 faster, 0 slower, 3 with no significant difference"));
    assert_non_null(strstr(out, "no run is significantly slower by more than 5%"));
    free(out);
    /* one thread instead of two: every run matched only when threads is ignored */
    assert_int_equal(xpb(&out, NULL, "compare", path("a.json"), path("slow.json"), NULL), 7);
    assert_non_null(strstr(out, "3 only in OLD, 3 only in NEW"));
    assert_non_null(strstr(out, "nothing was compared: no run of NEW has the configuration"));
    assert_non_null(strstr(out, "the closest differ in: threads ("));
    assert_non_null(strstr(out, "NOTHING COMPARED"));
    assert_null(strstr(out, "no run is significantly slower"));
    free(out);
    /* 45% slower while others took 30% of the run's CPUs: not a regression on its own */
    assert_int_equal(xpb(&out, NULL, "compare", path("a.json"), path("disturbed.json"), NULL), 0);
    assert_non_null(strstr(out, "slower, beyond 5%, disturbed: compare again"));
    assert_non_null(strstr(out, "disturbed: compare again: 3 runs are significantly slower"));
    assert_null(strstr(out, "REGRESSION"));
    free(out);
    assert_int_equal(xpb(&out, NULL, "compare", path("a.json"), path("disturbed.json"),
                         "--count-disturbed", NULL),
                     1);
    assert_non_null(strstr(out, "REGRESSION: 3 runs are significantly slower by more than 5%"));
    free(out);
    assert_int_equal(
        xpb(&out, NULL, "compare", path("a.json"), path("slow.json"), "--ignore", "threads", NULL),
        1);
    assert_non_null(strstr(out, "-45.00% ["));
    assert_non_null(strstr(out, "slower, beyond 5%"));
    assert_non_null(strstr(out, "REGRESSION: 3 runs are significantly slower by more than 5%"));
    free(out);
    assert_int_equal(xpb(&out, NULL, "compare", path("a.json"), path("slow.json"), "--ignore",
                         "threads", "--threshold", "50%", NULL),
                     0);
    assert_non_null(strstr(out, "0 faster, 3 slower"));
    free(out);
    assert_int_equal(xpb(NULL, &err, "compare", path("a.json"), NULL), 2);
    free(err);
    assert_int_equal(
        xpb(NULL, &err, "compare", path("a.json"), path("a.json"), "--threshold", "x", NULL), 2);
    free(err);
    assert_int_equal(
        xpb(NULL, &err, "compare", path("a.json"), path("a.json"), "--ignore", "thread", NULL), 2);
    assert_non_null(strstr(err, "--ignore thread"));
    free(err);
    assert_int_equal(xpb(NULL, &err, "compare", path("a.json"), path("bad.json"), NULL), 3);
    free(err);
    assert_int_equal(xpb(&out, NULL, "--help", NULL), 0);
    assert_non_null(strstr(out, "compare"));
    assert_non_null(strstr(out, "report"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_formats),
        cmocka_unit_test(test_report_memory_budget),
        cmocka_unit_test(test_report_errors),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
