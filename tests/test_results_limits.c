/* The limits of a results document (core/results/results_limits.h, issue 22 item 6), shared
 * with the leaderboard: the measure of a JSON text (json_shape.c) counts values and keys and
 * the nesting as the leaderboard does; the loader refuses a file beyond either limit before it
 * builds a tree, saying the file, the limit and what the file has, at the limit's edge exactly;
 * a 64 MiB file of `{}` values (33 million nodes, several GB as a tree) is refused in well
 * under a second with little memory, by the library and by `show`, `report` and `upload`; and
 * the writer never writes a document no reader would accept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include "cli_harness.h"
#include "test_report_fixture.h"
#include "results/json_shape.h"
#include "results/results.h"

#if defined(__SANITIZE_ADDRESS__)
#define PEAK_MIB_LIMIT 400.0
#else
#define PEAK_MIB_LIMIT 200.0
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Peak resident memory of the largest child this process waited for, MiB. */
static double children_peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static const char *path(const char *name)
{
    static char buf[300];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void write_text(const char *name, const char *text, size_t len)
{
    FILE *f = fopen(path(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* "[0,0,...,0]" with n - 1 zeros: n nodes. */
static char *flat(size_t n, size_t *len)
{
    char *t = malloc(2 * n + 2);
    assert_non_null(t);
    size_t k = 0;
    t[k++] = '[';
    for (size_t i = 1; i < n; i++) {
        t[k++] = '0';
        t[k++] = ',';
    }
    t[k - (n > 1)] = ']';
    k += n <= 1;
    *len = k;
    return t;
}

/* depth levels of arrays, "[[[...]]]". */
static char *nested(size_t depth, size_t *len)
{
    char *t = malloc(2 * depth + 1);
    assert_non_null(t);
    for (size_t i = 0; i < depth; i++) {
        t[i] = '[';
        t[2 * depth - 1 - i] = ']';
    }
    t[2 * depth] = '\0';
    *len = 2 * depth;
    return t;
}

static void test_shape(void **state)
{
    (void)state;
    struct xpb_json_shape s;
    /* { "a" [ 1 "x" { "b" null } ] }: 8 nodes, 3 levels */
    const char *doc = "{\"a\": [1, \"x\", {\"b\": null}]}";
    xpb_json_shape(&s, doc, strlen(doc));
    assert_int_equal(s.nodes, 8);
    assert_int_equal(s.depth, 3);
    /* brackets, quotes and escapes inside strings are text */
    const char *str = "{\"[{\\\"]}\": \"\\\\\", \"k\": -1.5e3, \"t\": true}";
    xpb_json_shape(&s, str, strlen(str));
    assert_int_equal(s.nodes, 7);
    assert_int_equal(s.depth, 1);
    xpb_json_shape(&s, "", 0);
    assert_int_equal(s.nodes, 0);
    size_t len;
    char *t = nested(40, &len);
    xpb_json_shape(&s, t, len);
    assert_int_equal(s.depth, 40);
    assert_int_equal(s.nodes, 40);
    free(t);
}

/* Writes `text` (len bytes, freed) to `name`, loads it and checks that it is refused
 * (XPB_PARSE_ERROR) with a message holding `want`. */
static void expect_refused(const char *name, char *text, size_t len, const char *want)
{
    write_text(name, text, len);
    free(text);
    json_t *doc = (json_t *)1;
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_load(&doc, path(name), &err), XPB_PARSE_ERROR);
    assert_null(doc);
    if (!strstr(err.msg, want))
        fail_msg("%s: '%s' lacks '%s'", name, err.msg, want);
}

static void test_edges(void **state)
{
    (void)state;
    size_t len;
    /* exactly the limit: measured and parsed (and refused by the schema, not the limit) */
    char *t = flat(XPB_RESULTS_MAX_NODES, &len);
    expect_refused("at.json", t, len, "document: expected an object");
    /* one more: refused by the limit, with both numbers */
    t = flat(XPB_RESULTS_MAX_NODES + 1, &len);
    expect_refused("over.json", t, len,
                   "over.json: has 250001 values and keys, more than the 250000");
    /* nesting */
    t = nested(XPB_RESULTS_MAX_DEPTH, &len);
    expect_refused("deep16.json", t, len, "document: expected an object");
    t = nested(XPB_RESULTS_MAX_DEPTH + 1, &len);
    expect_refused("deep17.json", t, len,
                   "deep17.json: has values nested 17 levels deep, deeper than the 16");
}

/* "[{},{},...]" of at most `bytes` bytes: a third as many nodes; returns the nodes. */
static size_t write_empties(const char *name, size_t bytes)
{
    char *t = malloc(bytes);
    assert_non_null(t);
    t[0] = '[';
    size_t k = 1;
    while (k + 4 <= bytes) {
        memcpy(t + k, "{},", 3);
        k += 3;
    }
    t[k - 1] = ']';
    write_text(name, t, k);
    free(t);
    return 1 + (k - 1) / 3;
}

static void test_big_file_refused_quickly(void **state)
{
    (void)state;
    size_t nodes = write_empties("empties.json", XPB_RESULTS_MAX_BYTES - 16);
    char want[128];
    snprintf(want, sizeof want, "has %zu values and keys, more than the 250000", nodes);
    double t0 = now();
    json_t *doc = (json_t *)1;
    xpb_err e = {{0}};
    assert_int_equal(xpb_results_load(&doc, path("empties.json"), &e), XPB_PARSE_ERROR);
    double took = now() - t0;
    fprintf(stderr, "64 MiB of {}: refused in %.3f s: %s\n", took, e.msg);
    assert_null(doc);
    assert_non_null(strstr(e.msg, want));
    assert_true(took < 2.0); /* 0.35-0.46 s measured, mostly reading; a tree took 7-15 s */

    /* the commands that read files say the same, as quickly */
    char *err;
    t0 = now();
    assert_int_equal(xpb(NULL, &err, "show", path("empties.json"), NULL), 3);
    took = now() - t0;
    fprintf(stderr, "show: exit 3 in %.3f s, peak memory %.0f MiB\n", took, children_peak_mib());
    /* the file's bytes, never the tree (5.1 GB); AddressSanitizer's shadow and quarantine add
     * their own (222 MiB measured under it) */
    assert_true(children_peak_mib() < PEAK_MIB_LIMIT);
    assert_non_null(strstr(err, "more than the 250000 a results file may hold"));
    assert_true(took < 5.0);
    free(err);
    assert_int_equal(xpb(NULL, &err, "report", path("empties.json"), "-o", path("r.html"), NULL),
                     3);
    assert_non_null(strstr(err, "more than the 250000"));
    free(err);
    setenv("XPB_UPLOAD_TOKEN", "t", 1);
    assert_int_equal(xpb(NULL, &err, "upload", path("empties.json"), "--server",
                         "https://127.0.0.1:9", "--no-spool", NULL),
                     3);
    assert_non_null(strstr(err, "more than the 250000"));
    free(err);
}

/* The writer refuses what no reader would accept, and writes nothing. */
static void test_writer_keeps_to_the_limits(void **state)
{
    (void)state;
    json_t *doc = fx_doc(NULL);
    fx_finish(doc);
    xpb_err err = {{0}};
    json_t *extra = json_array();
    for (int i = 0; i < XPB_RESULTS_MAX_NODES; i++)
        json_array_append_new(extra, json_integer(i));
    json_object_set_new(doc, "extra", json_pack("{s:o}", "many", extra));
    assert_int_equal(xpb_results_write(doc, path("many.json"), &err), XPB_PARSE_ERROR);
    fprintf(stderr, "%s\n", err.msg);
    assert_non_null(strstr(err.msg, "many.json: not written: it would hold"));
    FILE *f = fopen(path("many.json"), "r");
    assert_null(f);
    json_decref(doc);
}

static int setup(void **state)
{
    (void)state;
    return make_tmpdir("xpb_limits_");
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmpdir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_file_refused_quickly),
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_writer_keeps_to_the_limits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
