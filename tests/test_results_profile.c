/* The per-op profile report (`xpubench show --profile`): per-step times from seconds / calls,
 * sums by op kind largest first, shares, the slowest ops, fused ops counted, unusable
 * entries skipped, runs without a profile left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "results/results.h"

/* Two runs; only the second has a profile: 4 calls of each op (ms per step = 250 * seconds),
 * two CONV2D (3 + 1 ms), one RELU fused into the first conv (0 ms), one POOL (1 ms), and two
 * entries that must be skipped (no op name; negative seconds). */
static const char doc_text[] =
    "{\"runs\": [{\"id\": \"plain\", \"config\": {\"backend\": \"cpu_ref\"}},"
    " {\"id\": \"prof\", \"config\": {\"backend\": \"cpu_onednn\", \"precision\": \"fp32\","
    "  \"fusion\": true}, \"profile\": ["
    "  {\"op\": \"CONV2D\", \"layer\": \"conv1\", \"calls\": 4, \"seconds\": 0.012,"
    "   \"fused_into\": null},"
    "  {\"op\": \"RELU\", \"layer\": \"relu1\", \"calls\": 0, \"seconds\": 0,"
    "   \"fused_into\": \"CONV2D conv1\"},"
    "  {\"op\": \"MAXPOOL2D\", \"layer\": \"pool1\", \"calls\": 4, \"seconds\": 0.004,"
    "   \"fused_into\": null},"
    "  {\"op\": \"CONV2D\", \"layer\": \"conv2\", \"calls\": 4, \"seconds\": 0.004,"
    "   \"fused_into\": null},"
    "  {\"layer\": \"broken\", \"calls\": 4, \"seconds\": 1.0},"
    "  {\"op\": \"CONV2D\", \"layer\": \"negative\", \"calls\": 4, \"seconds\": -1.0}"
    " ]}]}";

static char *report(const char *text, unsigned top, unsigned *printed)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    assert_non_null(doc);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(xpb_results_print_profiles(f, doc, top, printed), XPB_OK);
    fclose(f);
    json_decref(doc);
    return buf;
}

static void test_report(void **state)
{
    (void)state;
    unsigned printed = 99;
    char *out = report(doc_text, 10, &printed);
    assert_int_equal(printed, 1);
    assert_null(strstr(out, "plain"));
    assert_non_null(strstr(out, "profile of prof (cpu_onednn, fp32, fusion on): 5.000 ms per "
                                "step in the backend's kernels, 4 ops, 1 fused into others"));
    /* CONV2D first (4 ms, 80%), then MAXPOOL2D (1 ms, 20%), then RELU (fused, 0) */
    const char *conv = strstr(out, "  CONV2D                         2      0      4.000   80.0%");
    const char *pool = strstr(out, "  MAXPOOL2D                      1      0      1.000   20.0%");
    const char *relu = strstr(out, "  RELU                           1      1      0.000    0.0%");
    assert_non_null(conv);
    assert_non_null(pool);
    assert_non_null(relu);
    assert_true(conv < pool && pool < relu);
    /* slowest ops: conv1 (3 ms) before conv2 and pool1 (1 ms each); the fused RELU not listed */
    const char *slow = strstr(out, "slowest ops");
    assert_non_null(slow);
    const char *c1 = strstr(slow, "conv1"), *c2 = strstr(slow, "conv2");
    assert_non_null(c1);
    assert_non_null(c2);
    assert_true(c1 < c2);
    assert_non_null(strstr(c1, "3.000   60.0%"));
    assert_null(strstr(slow, "relu1"));
    assert_null(strstr(out, "broken"));
    assert_null(strstr(out, "negative"));
    free(out);
}

/* A version-3 profile: per-call flops and bytes, the device's peak and bandwidth. conv1: 4 calls
 * in 0.012 s, 3e9 FLOPs and 1e8 bytes a call -> 1000 GFLOP/s, 33.3 GB/s, 30 FLOP/B; the device:
 * 2000 GFLOP/s and 50 GB/s (ridge 40): memory-bound, attainable 50 x 30 = 1500 GFLOP/s, 67%.
 * pool1: no FLOPs, 1e7 bytes a call in 1 ms: 10 GB/s, 20% of the bandwidth. */
static const char roof_text[] =
    "{\"runs\": [{\"id\": \"r\", \"config\": {\"backend\": \"cpu_onednn\", \"precision\": "
    "\"fp32\"},"
    " \"device\": {\"peak_flops\": {\"fp32\": 2e12}, \"memory_bandwidth\": 5e10,"
    "  \"peak_flops_source\": \"measured: sgemm\", \"memory_bandwidth_source\": \"measured: "
    "triad\"},"
    " \"profile\": ["
    "  {\"op\": \"CONV2D\", \"layer\": \"conv1\", \"calls\": 4, \"seconds\": 0.012,"
    "   \"fused_into\": null, \"flops\": 3000000000, \"bytes\": 100000000},"
    "  {\"op\": \"MAXPOOL2D\", \"layer\": \"pool1\", \"calls\": 4, \"seconds\": 0.004,"
    "   \"fused_into\": null, \"flops\": 0, \"bytes\": 10000000}"
    " ]}]}";

static void test_roofline(void **state)
{
    (void)state;
    char *out = report(roof_text, 10, NULL);
    assert_non_null(strstr(out, "roofline: peak 2000.0 GFLOP/s (measured: sgemm), memory 50.00 "
                                "GB/s (measured: triad), ridge 40.00 FLOP/byte"));
    const char *c1 = strstr(out, "conv1");
    assert_non_null(c1);
    assert_non_null(strstr(c1, "1000.00    33.33   30.000 memory      67%"));
    const char *p1 = strstr(out, "pool1");
    assert_non_null(p1);
    assert_non_null(strstr(p1, "0.00    10.00    0.000 memory      20%"));
    free(out);
    /* a version-2 profile has no costs: dashes, and no roofline line without the limits */
    out = report(doc_text, 10, NULL);
    assert_null(strstr(out, "roofline:"));
    assert_non_null(strstr(strstr(out, "conv1"), "        -        -        - -             -"));
    free(out);
}

static void test_top_limits_the_list(void **state)
{
    (void)state;
    char *out = report(doc_text, 1, NULL);
    const char *slow = strstr(out, "slowest ops");
    assert_non_null(slow);
    assert_non_null(strstr(slow, "conv1"));
    assert_null(strstr(slow, "conv2"));
    free(out);
    out = report(doc_text, 0, NULL);
    assert_null(strstr(out, "slowest ops"));
    assert_non_null(strstr(out, "by op kind"));
    free(out);
}

static void test_no_profiles(void **state)
{
    (void)state;
    unsigned printed = 7;
    char *out = report("{\"runs\": [{\"id\": \"a\"}]}", 10, &printed);
    assert_int_equal(printed, 0);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(xpb_results_print_profiles(stdout, NULL, 10, NULL), XPB_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_roofline),
        cmocka_unit_test(test_top_limits_the_list),
        cmocka_unit_test(test_no_profiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
