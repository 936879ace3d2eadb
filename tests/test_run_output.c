/* `xpubench run`'s results file (issue 22, items 4 and 9), through the real executable:
 *   - a rerun never destroys earlier results: an existing file is refused (exit 2, nothing run,
 *     the file byte for byte as it was, even when the rerun is interrupted or killed) unless
 *     --force; a directory is refused even then;
 *   - the file says whether its invocation completed: marked "interrupted" from the first write
 *     (before any run) to the last, so Ctrl-C and kill -9 at any moment leave a valid file with
 *     every finished run that says it is incomplete, and `show` and `report` say so; a complete
 *     invocation leaves no mark;
 *   - output problems surface before the first run (a directory, a place that cannot be
 *     written, a disk already full: exit 1 and nothing ran), and a run that cannot be saved
 *     (the disk fills up) stops the invocation with one line and says at the end what was not
 *     saved. A full disk is a file size limit here (RLIMIT_FSIZE, SIGXFSZ ignored). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli_harness.h"
#include "results/results.h"

/* Quick runs, then one that runs until it is stopped. */
#define QUICK                                                                                      \
    "{model: conv6, backend: cpu_ref, batch: 1, warmup: 0, min_steps: 1, min_time: 0, "            \
    "repeats: 1}"

static const char *path(const char *name)
{
    static char buf[4][600];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
    return p;
}

static const char *scenario(const char *name, int quick_runs, int endless)
{
    char text[2048];
    int n = snprintf(text, sizeof text, "name: out\ndefaults: " QUICK "\nruns:\n");
    for (int i = 0; i < quick_runs; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "  - {name: quick%d, seed: %d}\n", i,
                      i + 1);
    if (endless)
        snprintf(text + n, sizeof text - (size_t)n,
                 "  - {name: endless, min_steps: 1000000, min_time: 3600}\n");
    static char file[4][600]; /* its own, so that later path() calls leave it alone */
    static int next;
    char *p = file[next++ % 4];
    snprintf(p, sizeof file[0], "%s", path(name));
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* The document at `file` (NULL when it cannot be loaded). */
static json_t *load(const char *file)
{
    json_t *doc = NULL;
    xpb_err err = {{0}};
    return xpb_results_load(&doc, file, &err) == XPB_OK ? doc : NULL;
}

static size_t runs_in(const json_t *doc)
{
    return json_array_size(json_object_get(doc, "runs"));
}

/* Waits until `file` holds at least `n` runs (at most 120 s); 1 when it does. */
static int wait_for_runs(const char *file, size_t n)
{
    for (int i = 0; i < 1200; i++) {
        json_t *doc = load(file);
        size_t have = doc ? runs_in(doc) : 0;
        json_decref(doc);
        if (have >= n)
            return 1;
        usleep(100000);
    }
    return 0;
}

/* Whether the invocation that wrote doc said it completed. */
static int complete(const json_t *doc)
{
    return !json_is_true(json_object_get(doc, "interrupted"));
}

/* A finished results file of three runs at keep.json, and its bytes. */
static char *make_keep(void)
{
    const char *scen = scenario("keep.yaml", 3, 0);
    char *err;
    assert_int_equal(xpb(NULL, &err, "run", scen, "-o", path("keep.json"), NULL), 0);
    free(err);
    json_t *doc = load(path("keep.json"));
    assert_non_null(doc);
    assert_int_equal(runs_in(doc), 3);
    assert_true(complete(doc)); /* a complete invocation leaves no mark */
    assert_null(json_object_get(doc, "interrupted"));
    json_decref(doc);
    return slurp(path("keep.json"));
}

/* Issue 22 item 4: a rerun over a file of finished runs, stopped by Ctrl-C or kill -9 after a
 * moment, or left alone: the file stays as it was. */
static void test_rerun_never_destroys(void **state)
{
    (void)state;
    char *before = make_keep();
    const char *scen = scenario("rerun.yaml", 1, 1);
    int signals[] = {SIGINT, SIGKILL, 0};
    for (int k = 0; k < 3; k++) {
        const char *args[] = {"run", scen, "-o", path("keep.json"), NULL};
        pid_t pid = spawn(args);
        if (signals[k]) {
            usleep(1500000);
            kill(pid, signals[k]);
        }
        int rc = wait_exit(pid);
        char *err = slurp(path("stderr")), *now = slurp(path("keep.json"));
        fprintf(stderr, "rerun, then %s: exit %d: %s", signals[k] ? strsignal(signals[k]) : "-", rc,
                err);
        assert_int_equal(rc, 2); /* refused at once, before any signal */
        assert_non_null(strstr(err, "keep.json exists (results of 3 runs, complete) and would be "
                                    "replaced: nothing was run"));
        assert_non_null(strstr(err, "--force"));
        assert_string_equal(now, before);
        free(err);
        free(now);
    }
    /* --force replaces it, and a complete invocation leaves no mark */
    char *err;
    assert_int_equal(xpb(NULL, &err, "run", scenario("one.yaml", 1, 0), "-o", path("keep.json"),
                         "--force", NULL),
                     0);
    free(err);
    json_t *doc = load(path("keep.json"));
    assert_int_equal(runs_in(doc), 1);
    assert_true(complete(doc));
    json_decref(doc);
    free(before);
}

/* Issue 22 item 4: Ctrl-C and kill -9 while the second run is under way, and kill -9 before
 * any run finished: every finished run is in the file, which says it is incomplete; `show`
 * and `report` say so. */
static void test_stopped_invocation_says_incomplete(void **state)
{
    (void)state;
    const char *scen = scenario("stop.yaml", 1, 1);
    int signals[] = {SIGINT, SIGKILL};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "stopped-%d.json", k);
        const char *file = path(name);
        const char *args[] = {"run", scen, "-o", file, NULL};
        pid_t pid = spawn(args);
        assert_true(wait_for_runs(file, 1));
        usleep(500000); /* the endless run is under way */
        kill(pid, signals[k]);
        int rc = wait_exit(pid);
        assert_int_equal(rc, signals[k] == SIGINT ? 130 : 128 + SIGKILL);
        json_t *doc = load(file);
        assert_non_null(doc); /* valid: written atomically */
        assert_false(complete(doc));
        json_t *first = json_array_get(json_object_get(doc, "runs"), 0);
        assert_string_equal(json_string_value(json_object_get(first, "id")), "quick0");
        assert_string_equal(json_string_value(json_object_get(first, "status")), "ok");
        fprintf(stderr, "%s during the second run: exit %d, %zu runs kept, marked incomplete\n",
                strsignal(signals[k]), rc, runs_in(doc));
        json_decref(doc);
        char *out, *err;
        assert_int_equal(xpb(&out, &err, "show", file, NULL), 0);
        assert_non_null(strstr(out, "incomplete: the invocation that wrote this file did not "
                                    "finish every run"));
        free(out);
        free(err);
        assert_int_equal(xpb(&out, &err, "report", file, "--format", "md", NULL), 0);
        assert_non_null(strstr(out, "| complete | no: the invocation did not finish every run"));
        assert_non_null(strstr(err, "incomplete"));
        free(out);
        free(err);
    }
    /* killed before any run finished: the file is there, empty of runs, incomplete */
    const char *args[] = {"run", scenario("early.yaml", 0, 1), "-o", path("early.json"), NULL};
    pid_t pid = spawn(args);
    json_t *doc = NULL;
    for (int i = 0; i < 600 && !(doc = load(path("early.json"))); i++)
        usleep(50000);
    kill(pid, SIGKILL);
    wait_exit(pid);
    assert_non_null(doc);
    assert_int_equal(runs_in(doc), 0);
    assert_false(complete(doc));
    json_decref(doc);
}

/* Issue 22 item 9: output problems stop the invocation before its first run. */
static void test_output_checked_before_the_first_run(void **state)
{
    (void)state;
    const char *scen = scenario("two.yaml", 2, 0);
    char *out, *err;
    /* a directory: even with --force */
    assert_int_equal(mkdir(path("dir.json"), 0755), 0);
    assert_int_equal(xpb(&out, &err, "run", scen, "-o", path("dir.json"), "--force", NULL), 1);
    assert_non_null(strstr(err, "dir.json is a directory"));
    assert_null(strstr(err, "quick0: ok")); /* nothing ran */
    free(out);
    free(err);
    /* a place that cannot be written (/proc takes no files, even from root) */
    assert_int_equal(xpb(&out, &err, "run", scen, "-o", "/proc/xpb-test/out.json", NULL), 1);
    assert_non_null(strstr(err, "cannot write the results file, so nothing was run"));
    assert_null(strstr(err, "quick0: ok"));
    free(out);
    free(err);
}

/* Runs xpubench with `args` under a file size limit of `limit` bytes (a disk that fills up):
 * its exit code; its output in tmpdir/stdout and stderr. */
static int run_limited(rlim_t limit, const char *const *args)
{
    struct rlimit saved, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = limit;
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN); /* write fails with EFBIG, as ENOSPC would */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    pid_t pid = spawn(args);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old);
    return wait_exit(pid);
}

/* The size of the file a run of `scen` writes before its first run (its document with no
 * run), from a finished file of it. */
static size_t size_without_runs(const char *finished)
{
    json_t *doc = load(finished);
    assert_non_null(doc);
    json_array_clear(json_object_get(doc, "runs"));
    json_array_clear(json_object_get(doc, "comparisons"));
    json_object_set_new(doc, "interrupted", json_true());
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_write(doc, path("empty.json"), &err), XPB_OK);
    json_decref(doc);
    struct stat sb;
    assert_int_equal(stat(path("empty.json"), &sb), 0);
    return (size_t)sb.st_size;
}

/* Issue 22 item 9: a full disk at the start stops before the first run; a disk that fills up
 * after the first run stops the invocation there with one line, and the end says what was not
 * saved. */
static void test_full_disk(void **state)
{
    (void)state;
    const char *scen = scenario("disk.yaml", 2, 0);
    char *err;
    assert_int_equal(xpb(NULL, &err, "run", scen, "-o", path("full.json"), NULL), 0);
    free(err);
    size_t empty = size_without_runs(path("full.json"));
    struct stat sb;
    assert_int_equal(stat(path("full.json"), &sb), 0);
    fprintf(stderr, "results file: %zu bytes without runs, %lld with two\n", empty,
            (long long)sb.st_size);

    /* full from the start */
    const char *at_once[] = {"run", scen, "-o", path("none.json"), NULL};
    assert_int_equal(run_limited(empty / 2, at_once), 1);
    err = slurp(path("stderr"));
    assert_non_null(strstr(err, "cannot write the results file, so nothing was run"));
    assert_null(strstr(err, "quick0: ok"));
    free(err);
    assert_null(load(path("none.json")));

    /* room for the file without runs, not for the first run */
    const char *later[] = {"run", scen, "-o", path("part.json"), NULL};
    size_t room = empty + ((size_t)sb.st_size - empty) / 4;
    assert_int_equal(run_limited(room, later), 1);
    err = slurp(path("stderr"));
    char *out = slurp(path("stdout"));
    fprintf(stderr, "%s", err);
    assert_non_null(strstr(err, "run 'quick0' finished but cannot be saved"));
    assert_null(strstr(err, "quick1")); /* the second run never started */
    assert_non_null(strstr(err, "NOT SAVED: run 'quick0' (its row is in the table above) is not "
                                "in"));
    assert_non_null(strstr(err, "and 1 run was not started; the file holds the 0 runs before it "
                                "and says it is incomplete"));
    assert_null(strstr(out, "results: ")); /* never claims a file it could not write */
    free(err);
    free(out);
    json_t *doc = load(path("part.json"));
    assert_non_null(doc);
    assert_int_equal(runs_in(doc), 0);
    assert_false(complete(doc));
    json_decref(doc);
}

static int setup(void **state)
{
    (void)state;
    setenv("XPB_PLUGIN_PATH", XPB_TEST_PLUGIN_DIR, 1);
    setenv("XPB_NO_PROGRESS", "1", 1);
    return make_tmpdir("xpb_run_output_");
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmpdir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rerun_never_destroys),
        cmocka_unit_test(test_stopped_invocation_says_incomplete),
        cmocka_unit_test(test_output_checked_before_the_first_run),
        cmocka_unit_test(test_full_disk),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
