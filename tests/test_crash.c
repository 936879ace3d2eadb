/* A backend that crashes inside an entry point (tests/fake_plugins/fake_crash_backend.c,
 * "crash_ref", cpu_ref that crashes where $XPB_FAKE_CRASH says) under `xpubench conformance`,
 * `run` and `list`: the command exits 5 (XPB_EXIT_PLUGIN_CRASH) with one line naming the
 * plugin, the entry point and the case or run, and what was finished before is kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli_harness.h"

#define CRASH_DIR XPB_TEST_BINARY_DIR "/tests/fake_plugins/crash"
#define EXIT_CRASH 5

static int setup(void **state)
{
    (void)state;
    setenv("XPB_PLUGIN_PATH", CRASH_DIR, 1);
    setenv("XPB_NO_PROGRESS", "1", 1);
    return make_tmpdir("xpb_test_crash_");
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmpdir();
}

/* The lines of `text` that start with `prefix`. */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, len) == 0;
    return n;
}

/* Without $XPB_FAKE_CRASH the plugin is cpu_ref: it loads, lists and passes. */
static void test_harmless_unless_asked(void **state)
{
    (void)state;
    unsetenv("XPB_FAKE_CRASH");
    char *out, *err;
    int rc = xpb(&out, &err, "conformance", "--backend", "crash_ref", "--quick", "--no-models",
                 "--filter", "CONV2D_BWD_DATA", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "0 failed"));
    assert_null(strstr(err, "crash"));
    free(out);
    free(err);
}

/* The vendor's day: a segfault in compile during conformance. */
static void test_conformance_crash_in_compile(void **state)
{
    (void)state;
    char json[300];
    snprintf(json, sizeof json, "%s/conformance.json", tmpdir);
    setenv("XPB_FAKE_CRASH", "compile:CONV2D_BWD_DATA", 1);
    char *out, *err;
    int rc = xpb(&out, &err, "conformance", "--backend", "crash_ref", "--quick", "--no-models",
                 "--json", json, NULL);
    unsetenv("XPB_FAKE_CRASH");
    assert_int_equal(rc, EXIT_CRASH);
    char want[600];
    snprintf(want, sizeof want,
             "xpubench: crash (SIGSEGV) in backend 'crash_ref', entry point compile, during "
             "conformance case 'CONV2D_BWD_DATA' (x2x3x7x9 k3 s1 p1 d1 bias) - rows above were "
             "kept, and in %s\n",
             json);
    assert_non_null(strstr(err, want));
    assert_int_equal(count_lines(err, "xpubench: crash"), 1);
    /* the row finished before the crash is on stdout ... */
    assert_int_equal(count_lines(out, "CONV2D "), 1);
    assert_non_null(strstr(out, "PASS"));
    assert_null(strstr(out, "CONV2D_BWD_DATA"));
    /* ... and in the JSON file, which says the suite did not finish */
    json_error_t e;
    json_t *doc = json_load_file(json, 0, &e);
    assert_non_null(doc);
    json_t *cases = json_object_get(doc, "cases");
    assert_int_equal(json_array_size(cases), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cases, 0), "case")),
                        "CONV2D");
    assert_true(json_is_false(json_object_get(doc, "complete")));
    assert_int_equal(json_integer_value(json_object_get(doc, "passed")), 1);
    json_decref(doc);
    free(out);
    free(err);
}

/* A later case, another entry point and another signal: every row before it is kept. */
static void test_conformance_abort_in_run(void **state)
{
    (void)state;
    setenv("XPB_FAKE_CRASH", "run:MAXPOOL:abort", 1);
    char *out, *err;
    int rc =
        xpb(&out, &err, "conformance", "--backend", "crash_ref", "--quick", "--no-models", NULL);
    unsetenv("XPB_FAKE_CRASH");
    assert_int_equal(rc, EXIT_CRASH);
    assert_non_null(strstr(err, "xpubench: crash (SIGABRT) in backend 'crash_ref', entry point "
                                "run, during conformance case 'MAXPOOL"));
    assert_non_null(strstr(err, " - rows above were kept\n"));
    /* the cases before the first MAXPOOL one all ran and passed */
    assert_true(count_lines(out, "CONV2D") >= 2);
    assert_int_equal(count_lines(out, "MAXPOOL"), 0);
    assert_null(strstr(out, "FAIL"));
    free(out);
    free(err);
}

/* `run`: the first run finishes and is written, the second crashes in compile. */
static void test_run_crash_keeps_finished_runs(void **state)
{
    (void)state;
    char scenario[300], results[300];
    snprintf(scenario, sizeof scenario, "%s/crash.yaml", tmpdir);
    snprintf(results, sizeof results, "%s/results.json", tmpdir);
    FILE *f = fopen(scenario, "w");
    assert_non_null(f);
    fputs("name: crash\n"
          "defaults: {model: conv6, batch: 2, warmup: 0, repeats: 1, min_steps: 1, "
          "min_time: 0}\n"
          "runs:\n"
          "  - backend: [cpu_ref, crash_ref]\n",
          f);
    fclose(f);
    setenv("XPB_FAKE_CRASH", "compile", 1);
    char *out, *err;
    int rc = xpb(&out, &err, "run", scenario, "-o", results, NULL);
    unsetenv("XPB_FAKE_CRASH");
    assert_int_equal(rc, EXIT_CRASH);
    char want[600];
    snprintf(want, sizeof want,
             "xpubench: crash (SIGSEGV) in backend 'crash_ref', entry point compile, during run "
             "'[2/2] conv6-train[backend=crash_ref]' - the 1 finished run is kept in %s "
             "(marked incomplete)\n",
             results);
    assert_non_null(strstr(err, want));
    json_error_t e;
    json_t *doc = json_load_file(results, 0, &e);
    assert_non_null(doc);
    assert_true(json_is_true(json_object_get(doc, "interrupted"))); /* it says so */
    json_t *runs = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(runs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "status")),
                        "ok");
    json_decref(doc);
    free(out);
    free(err);

    /* a crash before any run finished says so */
    setenv("XPB_FAKE_CRASH", "compile", 1);
    rc = xpb(&out, &err, "run", scenario, "-o", results, "--force", "--set", "backend=crash_ref",
             NULL);
    unsetenv("XPB_FAKE_CRASH");
    assert_int_equal(rc, EXIT_CRASH);
    snprintf(want, sizeof want,
             "entry point compile, during run '[1/1] conv6-train' - no run had finished; %s "
             "holds none and says it is incomplete\n",
             results);
    assert_non_null(strstr(err, want));
    free(out);
    free(err);
}

/* `list`: describing the devices; and loading, before the plugin has a name. */
static void test_list_and_load(void **state)
{
    (void)state;
    setenv("XPB_FAKE_CRASH", "describe_device", 1);
    char *out, *err;
    int rc = xpb(&out, &err, "list", NULL);
    assert_int_equal(rc, EXIT_CRASH);
    assert_non_null(strstr(err, "xpubench: crash (SIGSEGV) in backend 'crash_ref', entry point "
                                "describe_device, during list\n"));
    assert_non_null(strstr(out, "crash_ref")); /* the lines printed before are kept */
    free(out);
    free(err);

    setenv("XPB_FAKE_CRASH", "query", 1);
    rc = xpb(&out, &err, "list", NULL);
    unsetenv("XPB_FAKE_CRASH");
    assert_int_equal(rc, EXIT_CRASH);
    assert_non_null(strstr(err, "xpubench: crash (SIGSEGV) in plugin file '" CRASH_DIR
                                "/crash_ref.so', entry point xpb_plugin_query, while loading "
                                "plugins\n"));
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_harmless_unless_asked),
        cmocka_unit_test(test_conformance_crash_in_compile),
        cmocka_unit_test(test_conformance_abort_in_run),
        cmocka_unit_test(test_run_crash_keeps_finished_runs),
        cmocka_unit_test(test_list_and_load),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
