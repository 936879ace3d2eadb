/* Energy end to end, with a meter whose readings the test decides (tests/fake_meter: cpu_ref plus
 * energy_read): `xpubench run` on the fake_meter backend, then the results' joules, average watts
 * and samples per joule against what the meter was told to read, and the report's energy tables
 * against the results. A meter that fails makes the run say why energy was not measured. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"
#include "report/report_model.h"
#include "results/results.h"

static char dir[256];

/* The value at a dotted path under obj ("metrics.energy.joules"); NULL when a step is
 * missing. Borrowed from obj. */
static const json_t *json_at(const json_t *obj, const char *dotted)
{
    char key[128];
    while (obj && *dotted) {
        size_t len = strcspn(dotted, ".");
        if (len >= sizeof key)
            return NULL;
        memcpy(key, dotted, len);
        key[len] = '\0';
        obj = json_object_get(obj, key);
        dotted += len + (dotted[len] == '.');
    }
    return obj;
}

static const char scenario[] = "name: energy\n"
                               "defaults: {model: conv6, backend: fake_meter, mode: inference,\n"
                               "           warmup: 1, min_steps: 2, min_time: 0, repeats: 2,\n"
                               "           seed: 1}\n"
                               "runs:\n"
                               "  - name: e\n"
                               "    batch: [1, 2]\n";

/* The results of the scenario with three meters, run once for every test. */
static json_t *per_run_doc, *watts_doc, *fail_doc;

/* Runs `xpubench run` on the scenario with the meter reading as `meter` says; returns the
 * loaded results (the caller's). */
static json_t *run_with(const char *meter, const char *name)
{
    char yaml[300], out[300], log[300];
    snprintf(yaml, sizeof yaml, "%s/energy.yaml", dir);
    snprintf(out, sizeof out, "%s/%s.json", dir, name);
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    FILE *f = fopen(yaml, "w");
    fputs(scenario, f);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("XPB_FAKE_METER", meter, 1);
        setenv("XPB_PLUGIN_PATH", FAKE_METER_DIR, 1);
        setenv("XPB_POWERCAP_ROOT", "/nonexistent", 1); /* no RAPL fallback, on any machine */
        execl(XPB_TEST_BINARY_DIR "/xpubench", "xpubench", "run", yaml, "-o", out, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("xpubench run with XPB_FAKE_METER=%s failed; see %s", meter, log);
    json_t *doc = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_load(&doc, out, &err), XPB_OK);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 2);
    return doc;
}

static double num(const json_t *run, const char *path)
{
    const json_t *v = json_at(run, path);
    if (!json_is_number(v))
        fail_msg("%s is not a number", path);
    return json_number_value(v);
}

/* Timed samples and the sum of the repeats' seconds of a run. */
static void timed(const json_t *run, double *samples, double *seconds)
{
    const json_t *reps = json_at(run, "metrics.repeats");
    double batch = num(run, "config.batch");
    *samples = *seconds = 0;
    for (size_t i = 0; i < json_array_size(reps); i++) {
        *samples += batch * num(json_array_get(reps, i), "steps");
        *seconds += num(json_array_get(reps, i), "seconds");
    }
}

/* 0.25 J per run() call, one call per step of an inference program: exact joules and samples
 * per joule; watts = joules over the meter's window, which holds the timed steps. */
static void test_joules_per_step(void **state)
{
    (void)state;
    const json_t *doc = per_run_doc;
    for (size_t i = 0; i < 2; i++) {
        const json_t *run = json_array_get(json_object_get(doc, "runs"), i);
        double samples, seconds;
        timed(run, &samples, &seconds);
        assert_true(json_is_true(json_at(run, "metrics.energy.measured")));
        assert_string_equal(json_string_value(json_at(run, "metrics.energy.source")), "backend");
        assert_true(num(run, "metrics.energy.joules") == 0.25 * num(run, "metrics.timed_steps"));
        assert_true(num(run, "metrics.energy.samples_per_joule") == 4 * num(run, "config.batch"));
        double watts = num(run, "metrics.energy.watts"),
               most = 0.25 * samples / num(run, "config.batch") / seconds;
        assert_true(watts <= most * (1 + 1e-9) && watts > 0.5 * most);
        assert_true(json_is_null(json_at(run, "metrics.energy.reason")));
        assert_null(json_at(run, "metrics.energy.domains")); /* RAPL only */
    }
}

/* 40 W: the average power comes out as 40 W, the joules as 40 J per second measured. */
static void test_watts(void **state)
{
    (void)state;
    const json_t *doc = watts_doc;
    for (size_t i = 0; i < 2; i++) {
        const json_t *run = json_array_get(json_object_get(doc, "runs"), i);
        double samples, seconds;
        timed(run, &samples, &seconds);
        double watts = num(run, "metrics.energy.watts"), joules = num(run, "metrics.energy.joules");
        assert_true(fabs(watts - 40) < 0.4);
        assert_true(joules >= 40 * seconds * 0.999);
        assert_true(fabs(num(run, "metrics.energy.samples_per_joule") - samples / joules) <
                    1e-9 * samples / joules);
    }
}

static void test_failing_meter(void **state)
{
    (void)state;
    const json_t *doc = fail_doc;
    for (size_t i = 0; i < 2; i++) {
        const json_t *run = json_array_get(json_object_get(doc, "runs"), i);
        assert_true(json_is_false(json_at(run, "metrics.energy.measured")));
        assert_true(json_is_null(json_at(run, "metrics.energy.joules")));
        const char *why = json_string_value(json_at(run, "metrics.energy.reason"));
        assert_non_null(why);
        assert_non_null(strstr(why, "the backend's meter failed: fake_meter: the meter is "
                                    "unplugged"));
    }
}

static const xpb_report_table *find(const xpb_report *r, const char *id)
{
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++)
            if (r->sections[s].blocks[b].kind == XPB_BLOCK_TABLE &&
                strcmp(r->sections[s].blocks[b].table->id, id) == 0)
                return r->sections[s].blocks[b].table;
    fail_msg("no table %s", id);
    return NULL;
}

/* The report's energy tables show the file's joules, watts and samples per joule. */
static void test_report_tables(void **state)
{
    (void)state;
    json_t *docs[2] = {per_run_doc, fail_doc};
    const char *names[2] = {"both.json", "fail.json"};
    xpb_report *r = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_report_build(&r, docs, names, 2, NULL, &err), XPB_OK);
    const xpb_report_table *t = find(r, "energy-runs");
    assert_int_equal(t->n_rows, 2); /* the measured runs of the first file */
    static const char *const keys[] = {"metrics.energy.joules", "metrics.energy.watts",
                                       "metrics.energy.samples_per_joule"};
    size_t checked = 0;
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++) {
        const xpb_report_cell *c = &t->cells[i];
        for (size_t k = 0; k < 3 && c->kind == XPB_CELL_NUMBER && c->src; k++) {
            size_t doc, run;
            char path[128];
            if (sscanf(c->src, "f%zu:runs[%zu].%127s", &doc, &run, path) != 3 ||
                strcmp(path, keys[k]) != 0)
                continue;
            assert_int_equal(doc, 0);
            assert_true(c->v == num(json_array_get(json_object_get(docs[0], "runs"), run), path));
            checked++;
        }
    }
    assert_int_equal(checked, 6);
    const xpb_report_table *study = find(r, "energy-study");
    assert_int_equal(study->n_rows, 2); /* a batch-1 row per file */
    size_t w = 0;
    while (strcmp(study->headers[w], "b1 W") != 0)
        w++;
    assert_int_equal(study->cells[w].kind, XPB_CELL_NUMBER);
    assert_string_equal(study->cells[study->n_cols + w].text, "not measured");
    int said = 0; /* and why, for the second file's runs */
    for (size_t s = 0; s < r->n_sections; s++)
        for (size_t b = 0; b < r->sections[s].n_blocks; b++) {
            const char *text = r->sections[s].blocks[b].text;
            said |= r->sections[s].blocks[b].kind == XPB_BLOCK_TEXT &&
                    strstr(text, "Not measured for 2 runs: the backend's meter failed") != NULL;
        }
    assert_true(said);
    xpb_report_free(r);
}

static int group_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/xpb_report_energy_XXXXXX", tmp);
    if (!mkdtemp(dir))
        return -1;
    per_run_doc = run_with("per_run=0.25", "per_run");
    watts_doc = run_with("watts=40", "watts");
    fail_doc = run_with("fail", "fail");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    json_decref(per_run_doc);
    json_decref(watts_doc);
    json_decref(fail_doc);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joules_per_step),
        cmocka_unit_test(test_watts),
        cmocka_unit_test(test_failing_meter),
        cmocka_unit_test(test_report_tables),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
