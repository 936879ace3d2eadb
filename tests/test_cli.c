/* The xpubench executable end to end, as a user runs it: help and exit codes, `info` of Conv6,
 * `validate`, a small `run` (results file valid, loss falls, statistics consistent), `show`,
 * `--dump`, a missing backend, and Ctrl-C keeping the finished runs. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli_harness.h"
#include "check/npy.h"
#include "results/results.h"

static const char *write_scenario(const char *name, const char *text)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *results_path(void)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/scratch-results.json", tmpdir);
    return path;
}

static const char *small_runs = "name: small\n"
                                "defaults: {model: conv6, backend: cpu_ref, batch: 1, warmup: 1,\n"
                                "           min_time: 0, seed: 3}\n"
                                "runs:\n"
                                "  - name: train\n"
                                "    mode: train\n"
                                "    min_steps: 4\n"
                                "    repeats: 2\n"
                                "    verify: true\n"
                                "  - name: infer\n"
                                "    mode: inference\n"
                                "    min_steps: 3\n"
                                "    repeats: 1\n";

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/xpb-test-cli-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("XPB_PLUGIN_PATH", XPB_TEST_PLUGIN_DIR, 1);
    setenv("XPB_NO_PROGRESS", "1", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_help_and_usage(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(xpb(&out, NULL, "--help", NULL), 0);
    assert_non_null(strstr(out, "validate"));
    free(out);
    assert_int_equal(xpb(NULL, &err, "frobnicate", NULL), 2);
    assert_non_null(strstr(err, "unknown command 'frobnicate'"));
    free(err);
    static const char *const cmds[] = {"list", "info", "validate", "run", "show"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(xpb(&out, NULL, cmds[i], "--help", NULL), 0);
        assert_non_null(strstr(out, "usage: xpubench"));
        free(out);
    }
    assert_int_equal(xpb(NULL, NULL, "run", NULL), 2);
}

static void test_info_conv6(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(xpb(&out, NULL, "info", "conv6", "--json", NULL), 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    assert_non_null(doc);
    /* Frankle & Carbin's Conv-6: 2,262,602 weights and biases. */
    assert_int_equal(json_integer_value(json_object_get(doc, "parameters")), 2262602);
    /* 153.9 M multiply-adds forward: 307,762,176 FLOPs per sample. */
    assert_int_equal(json_integer_value(json_object_get(doc, "flops_per_sample_forward")),
                     307762176);
    json_t *layers = json_object_get(doc, "layers");
    assert_true(json_array_size(layers) >= 18);
    json_t *conv1 = json_array_get(layers, 0);
    assert_string_equal(json_string_value(json_object_get(conv1, "layer")), "conv1");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(conv1, "output"), 1)), 64);
    json_decref(doc);
    free(out);
    char *err;
    assert_int_equal(xpb(NULL, &err, "info", "conv6", "--set", "variant=imagenet", NULL), 3);
    assert_non_null(strstr(err, "variant"));
    assert_non_null(strstr(err, "imagenet"));
    free(err);
    assert_int_equal(xpb(NULL, &err, "info", "nosuchmodel", NULL), 4);
    free(err);
}

static void test_validate(void **state)
{
    (void)state;
    char *out, *err;
    const char *ok = write_scenario("ok.yaml", small_runs);
    assert_int_equal(xpb(&out, NULL, "validate", ok, NULL), 0);
    assert_non_null(strstr(out, "2 runs"));
    free(out);
    const char *bad =
        write_scenario("bad.yaml", "name: bad\nruns:\n  - model: conv6\n    bach: 4\n");
    assert_int_equal(xpb(NULL, &err, "validate", bad, NULL), 3);
    assert_non_null(strstr(err, "bad.yaml:4:"));
    assert_non_null(strstr(err, "batch"));
    free(err);
    /* A backend this machine lacks: a warning, the run is reported as unsupported, and `run`
     * exits 6 (a CI must not pass with a broken plugin) unless the run says it is expected. */
    const char *nobackend = write_scenario(
        "nob.yaml", "name: nob\nruns:\n  - {model: conv6, backend: warp9, batch: 1, warmup: 0,\n"
                    "     min_steps: 1, min_time: 0, repeats: 1}\n");
    assert_int_equal(xpb(NULL, &err, "run", nobackend, "-o", results_path(), "--force", NULL), 6);
    assert_non_null(strstr(err, "warp9"));
    assert_non_null(strstr(err, "cpu_ref"));
    assert_non_null(strstr(err, "allow_unsupported"));
    free(err);
    const char *expected = write_scenario(
        "nob_ok.yaml", "name: nob\nruns:\n  - {model: conv6, backend: warp9, batch: 1, warmup: 0,\n"
                       "     min_steps: 1, min_time: 0, repeats: 1, allow_unsupported: true}\n");
    assert_int_equal(xpb(NULL, &err, "run", expected, "-o", results_path(), "--force", NULL), 0);
    free(err);
    json_t *doc;
    xpb_err e = {{0}};
    assert_int_equal(xpb_results_load(&doc, results_path(), &e), XPB_OK);
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    assert_string_equal(json_string_value(json_object_get(run, "status")), "unsupported");
    json_decref(doc);
    const char *nomodel = write_scenario("nom.yaml", "name: nom\nruns:\n  - model: conv7\n");
    assert_int_equal(xpb(NULL, &err, "validate", nomodel, NULL), 4);
    assert_non_null(strstr(err, "nom.yaml:3"));
    assert_non_null(strstr(err, "conv7"));
    free(err);
}

static void test_run_and_show(void **state)
{
    (void)state;
    char results[300], *out, *err;
    snprintf(results, sizeof results, "%s/results/small.json", tmpdir);
    const char *scen = write_scenario("small.yaml", small_runs);
    int rc = xpb(&out, &err, "run", scen, "-o", results, NULL);
    if (rc != 0)
        fail_msg("run exited %d: %s", rc, err);
    free(out);
    free(err);
    json_t *doc;
    xpb_err e = {{0}};
    assert_int_equal(xpb_results_load(&doc, results, &e), XPB_OK);
    json_t *runs = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(runs), 2);
    json_t *train = json_array_get(runs, 0);
    assert_string_equal(json_string_value(json_object_get(train, "status")), "ok");
    json_t *m = json_object_get(train, "metrics");
    /* 2 repeats of at least 4 steps; throughput consistent with the step times. */
    assert_true(json_integer_value(json_object_get(m, "timed_steps")) >= 8);
    double p50 = json_real_value(json_object_get(json_object_get(m, "step_time_s"), "p50"));
    double tp = json_real_value(json_object_get(json_object_get(m, "throughput"), "median"));
    assert_true(p50 > 0 && tp > 0);
    assert_true(fabs(tp * p50 - 1.0) < 0.5); /* batch 1: samples/s ~ 1 / step time */
    json_t *loss = json_object_get(m, "loss");
    double first = json_real_value(json_object_get(loss, "first"));
    double last = json_real_value(json_object_get(loss, "last"));
    assert_true(first > 1.5 && first < 3.5); /* ~ln(10) at initialisation */
    assert_true(last < first);               /* one fixed sample: SGD must make progress */
    json_t *model = json_object_get(train, "model");
    assert_int_equal(json_integer_value(json_object_get(model, "parameters")), 2262602);
    /* verify: true compared the first step with cpu_ref (here: with itself, exactly). */
    json_t *ver = json_object_get(train, "verification");
    assert_true(json_is_true(json_object_get(ver, "verified")));
    assert_true(json_real_value(json_object_get(ver, "max_rel_error")) == 0.0);
    json_t *infer = json_array_get(runs, 1);
    assert_string_equal(json_string_value(json_object_get(infer, "status")), "ok");
    json_decref(doc);

    assert_int_equal(xpb(&out, NULL, "show", results, NULL), 0);
    assert_non_null(strstr(out, "train"));
    assert_non_null(strstr(out, "infer"));
    free(out);
    const char *broken = write_scenario("broken.json", "{\"schema\": \"xpubench-results\"");
    assert_int_equal(xpb(NULL, &err, "show", broken, NULL), 3);
    assert_non_null(strstr(err, "broken.json"));
    free(err);
}

static void test_dump(void **state)
{
    (void)state;
    char dir[300], path[400], *err;
    snprintf(dir, sizeof dir, "%s/dump", tmpdir);
    const char *scen = write_scenario(
        "dump.yaml", "name: dump\nruns:\n  - {model: conv6, batch: 2, warmup: 0, min_steps: 1, "
                     "min_time: 0, repeats: 1}\n");
    int rc = xpb(NULL, &err, "run", scen, "-o", results_path(), "--force", "--dump", dir, NULL);
    assert_int_equal(rc, 0);

    free(err);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t je;
    json_t *man = json_load_file(path, 0, &je);
    assert_non_null(man);
    assert_string_equal(json_string_value(json_object_get(man, "model")), "conv6");
    double loss = json_real_value(json_object_get(man, "loss"));
    assert_true(loss > 1.5 && loss < 3.5);
    int grads = 0, params = 0;
    json_t *t;
    size_t i;
    json_array_foreach(json_object_get(man, "tensors"), i, t)
    {
        const char *kind = json_string_value(json_object_get(t, "kind"));
        grads += strcmp(kind, "grad") == 0;
        params += strcmp(kind, "param") == 0;
    }
    assert_int_equal(grads, 18);
    assert_int_equal(params, 18);
    json_decref(man);
    struct xpb_npy_array a;
    xpb_err e = {{0}};
    snprintf(path, sizeof path, "%s/grad.conv1.weight.npy", dir);
    assert_int_equal(xpb_npy_read(&a, path, &e), XPB_OK);
    assert_int_equal(a.ndim, 4);
    double norm = 0;
    for (int64_t k = 0; k < 64 * 3 * 9; k++)
        norm += fabs(((float *)a.data)[k]);
    assert_true(norm > 0);
    xpb_npy_free(&a);
    snprintf(path, sizeof path, "%s/input.labels.npy", dir);
    assert_int_equal(xpb_npy_read(&a, path, &e), XPB_OK);
    assert_int_equal(a.dtype, 2);
    xpb_npy_free(&a);
}

static void test_interrupt_keeps_finished_runs(void **state)
{
    (void)state;
    char results[300];
    snprintf(results, sizeof results, "%s/interrupted.json", tmpdir);
    const char *scen = write_scenario(
        "long.yaml", "name: long\ndefaults: {model: conv6, batch: 1, warmup: 0, repeats: 1}\n"
                     "runs:\n  - {name: quick, min_steps: 1, min_time: 0}\n"
                     "  - {name: endless, min_steps: 1000000, min_time: 3600}\n");
    const char *args[] = {"run", scen, "-o", results, NULL};
    pid_t pid = spawn(args);
    /* the file is there from the start (no run yet, marked incomplete); the first run's
     * results appear in it after it finishes */
    size_t done = 0;
    for (int i = 0; i < 600 && done == 0; i++) {
        usleep(100000);
        json_t *now = NULL;
        xpb_err e = {{0}};
        if (xpb_results_load(&now, results, &e) == XPB_OK) {
            assert_true(json_is_true(json_object_get(now, "interrupted")));
            done = json_array_size(json_object_get(now, "runs"));
        }
        json_decref(now);
    }
    assert_int_equal(done, 1);
    usleep(300000);
    kill(pid, SIGINT);
    assert_int_equal(wait_exit(pid), 130);
    json_t *doc;
    xpb_err e = {{0}};
    assert_int_equal(xpb_results_load(&doc, results, &e), XPB_OK);
    assert_true(json_is_true(json_object_get(doc, "interrupted")));
    json_t *runs = json_object_get(doc, "runs");
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "status")),
                        "ok");
    if (json_array_size(runs) == 2)
        assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 1), "status")),
                            "interrupted");
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_usage), cmocka_unit_test(test_info_conv6),
        cmocka_unit_test(test_validate),       cmocka_unit_test(test_run_and_show),
        cmocka_unit_test(test_dump),           cmocka_unit_test(test_interrupt_keeps_finished_runs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
