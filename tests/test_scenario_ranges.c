/* Ranges in sweeps ({from, to, times} and {from, to, step}, for integer and number run keys
 * and model parameters, in files and --set) with the exact message of every bad range, and the
 * guard of big sweeps: how a scenario's size is said and when `run` must be told --yes
 * (docs/scenarios.md, "Ranges" and "How many runs"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scenario/scenario.h"
#include "scenario/scenario_guard.h"

/* Parses text (as "t.yaml") with the --set options set[0..n_set) and expects success. */
static xpb_scenario *parse_set(const char *text, const char *const *set, size_t n_set)
{
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    if (xpb_scenario_parse(&s, "t.yaml", text, strlen(text), set, n_set, &err) != XPB_OK)
        fail_msg("unexpected failure: %s", err.msg);
    return s;
}

static xpb_scenario *parse(const char *text)
{
    return parse_set(text, NULL, 0);
}

/* Expects the parse of text (with one --set option, or none) to fail with exactly msg. */
static void expect_error(const char *text, const char *set, const char *msg)
{
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    const char *sets[1] = {set};
    xpb_status st = xpb_scenario_parse(&s, "t.yaml", text, strlen(text), sets, set ? 1 : 0, &err);
    assert_null(s);
    assert_string_equal(err.msg, msg);
    assert_int_equal(st, set ? XPB_INVALID_ARGUMENT : XPB_PARSE_ERROR);
}

/* The value of model parameter `name` of run i. */
static const char *param(const xpb_scenario *s, size_t i, const char *name)
{
    for (size_t k = 0; k < s->runs[i].n_params; k++)
        if (strcmp(s->runs[i].params[k].key, name) == 0)
            return s->runs[i].params[k].value;
    fail_msg("run %zu has no parameter %s", i, name);
    return NULL;
}

static void test_geometric(void **state)
{
    (void)state;
    xpb_scenario *s = parse("name: g\nruns:\n  - model: m\n    batch: {from: 32, to: 8192, "
                            "times: 2}\n");
    assert_int_equal(s->n_runs, 9);
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(s->runs[i].batch, 32u << i);
    assert_string_equal(s->runs[0].id, "m-train[batch=32]");
    assert_string_equal(s->runs[8].id, "m-train[batch=8192]");
    xpb_scenario_free(s);

    /* a model parameter, ParaDnn's nodes; `to` need not be reached: 3, 9, 27, 81 */
    s = parse("name: g\nruns:\n  - model: paradnn\n    params:\n      nodes: {from: 32, to: "
              "8192, times: 2}\n      layers: {from: 3, to: 100, times: 3}\n");
    assert_int_equal(s->n_runs, 9 * 4);
    assert_string_equal(param(s, 0, "nodes"), "32");
    assert_string_equal(param(s, 0, "layers"), "3");
    assert_string_equal(param(s, 3, "layers"), "81");
    assert_string_equal(param(s, 35, "nodes"), "8192");
    assert_string_equal(s->runs[5].id, "paradnn-train[nodes=64,layers=9]");
    xpb_scenario_free(s);

    /* numbers: a number key and a parameter, each value spelled the shortest way */
    s = parse("name: g\nruns:\n  - model: m\n    lr: {from: 0.001, to: 0.1, times: 10}\n"
              "    params: {scale: {from: 0.5, to: 4, times: 2}}\n");
    assert_int_equal(s->n_runs, 12);
    assert_true(s->runs[0].lr == 0.001 && s->runs[4].lr == 0.01 && s->runs[8].lr == 0.1);
    assert_string_equal(param(s, 0, "scale"), "0.5");
    assert_string_equal(param(s, 3, "scale"), "4");
    assert_string_equal(s->runs[11].id, "m-train[lr=0.1,scale=4]");
    xpb_scenario_free(s);
}

static void test_arithmetic(void **state)
{
    (void)state;
    xpb_scenario *s = parse("name: a\nruns:\n  - model: m\n    params: {image: {from: 100, to: "
                            "300, step: 50}, blocks: {from: 1, to: 8, step: 3}}\n");
    assert_int_equal(s->n_runs, 5 * 3);
    assert_string_equal(param(s, 0, "image"), "100");
    assert_string_equal(param(s, 14, "image"), "300");
    assert_string_equal(param(s, 14, "blocks"), "7"); /* 1, 4, 7: 10 is past `to` */
    xpb_scenario_free(s);

    /* 0.1 + 2 x 0.1 is 0.30000000000000004: the end is `to` as written */
    s = parse("name: a\nruns:\n  - model: m\n    min_time: {from: 0.1, to: 0.3, step: 0.1}\n"
              "    params: {offset: {from: -2, to: 2, step: 2}, p: {from: 0, to: 0.5, step: "
              "0.25}}\n");
    assert_int_equal(s->n_runs, 3 * 3 * 3);
    assert_true(s->runs[0].min_time == 0.1 && s->runs[9].min_time == 0.2 &&
                s->runs[18].min_time == 0.3);
    assert_string_equal(param(s, 0, "offset"), "-2");
    assert_string_equal(param(s, 3, "offset"), "0");
    assert_string_equal(param(s, 2, "p"), "0.5");
    assert_string_equal(s->runs[26].id, "m-train[min_time=0.3,offset=2,p=0.5]");
    xpb_scenario_free(s);

    /* a range of one value is still an axis */
    s = parse("name: a\nruns:\n  - model: m\n    batch: {from: 8, to: 8, step: 1}\n");
    assert_int_equal(s->n_runs, 1);
    assert_string_equal(s->runs[0].id, "m-train[batch=8]");
    xpb_scenario_free(s);
}

static void test_set_and_defaults(void **state)
{
    (void)state;
    const char *sets[2] = {"params.nodes={from: 64, to: 256, times: 2}",
                           "batch={from: 1, to: 4, times: 2}"};
    xpb_scenario *s = parse_set("name: d\ndefaults:\n  threads: {from: 1, to: 2, step: 1}\nruns:\n"
                                "  - model: m\n",
                                sets, 2);
    assert_int_equal(s->n_runs, 2 * 3 * 3);
    assert_string_equal(s->runs[0].id, "m-train[threads=1,nodes=64,batch=1]");
    assert_string_equal(s->runs[17].id, "m-train[threads=2,nodes=256,batch=4]");
    xpb_scenario_free(s);
}

static void test_errors(void **state)
{
    (void)state;
    const char *head = "name: e\nruns:\n  - model: m\n    batch: ";
    static const struct {
        const char *value, *msg;
    } cases[] = {
        {"{from: 32, to: 16, times: 2}",
         "t.yaml:4:27: batch: expected 'to' at least 'from' (32), found '16'"},
        {"{from: 1, to: 16, times: 1}", "t.yaml:4:37: batch: expected 'times' above 1, found '1'"},
        {"{from: 1, to: 16, times: 1.5}",
         "t.yaml:4:37: batch: expected an integer for 'times' (batch takes integers), found '1.5'"},
        {"{from: 1, to: 16, step: 0}", "t.yaml:4:36: batch: expected 'step' above 0, found '0'"},
        {"{from: 1, to: 16, step: 2, times: 2}",
         "t.yaml:4:12: batch: expected either 'times' (a geometric range) or 'step' (an "
         "arithmetic one), found both"},
        {"{from: 1, to: 16}",
         "t.yaml:4:12: batch: expected either 'times' (a geometric range) or 'step' (an "
         "arithmetic one), found neither"},
        {"{from: 1, times: 2}",
         "t.yaml:4:12: batch: expected a range {from, to, times} or {from, to, step}, found no "
         "'to'"},
        {"{from: 1, to: 16, tims: 2}",
         "t.yaml:4:30: batch: expected a range's key (from, to, times or step), found 'tims' "
         "(did you mean 'times'?)"},
        {"{from: 1, to: 100000, times: 2}",
         "t.yaml:4:26: batch: expected an integer 1..65536, found '100000'"},
        {"{from: 0, to: 8, step: 1}",
         "t.yaml:4:19: batch: expected an integer 1..65536, found '0'"},
        {"{from: 1, to: [4], step: 1}",
         "t.yaml:4:26: batch: expected a number for 'to', found a list"},
        {"{from: 1, to: \"4\", step: 1}",
         "t.yaml:4:26: batch: expected a number for 'to', found the quoted string \"4\""},
        {"{from: 1, to: 4, step: 1, step: 2}",
         "t.yaml:4:38: batch: expected each key of a range once, found 'step' again"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s%s\n", head, cases[i].value);
        expect_error(text, NULL, cases[i].msg);
    }
    expect_error("name: e\nruns:\n  - model: m\n    params: {nodes: {from: a, to: 8, times: 2}}\n",
                 NULL, "t.yaml:4:28: params.nodes: expected a number for 'from', found 'a'");
    expect_error("name: e\nruns:\n  - model: m\n    params: {nodes: {from: 0, to: 8, times: 2}}\n",
                 NULL,
                 "t.yaml:4:28: params.nodes: expected 'from' above 0 in a range with 'times', "
                 "found '0'");
    expect_error("name: e\nruns:\n  - model: m\n    params: {n: {from: 1, to: 1000000, step: 1}}\n",
                 NULL,
                 "t.yaml:4:17: params.n: expected a range of at most 100000 values, found more");
    expect_error("name: e\nruns:\n  - model: m\n    params: {n: {from: 1, to: 1e300, times: "
                 "1.0000001}}\n",
                 NULL,
                 "t.yaml:4:17: params.n: expected a range of at most 100000 values, found more");
    expect_error("name: e\nruns:\n  - model: m\n    params: {n: {from: 1, to: "
                 "99999999999999999999, step: 1}}\n",
                 NULL,
                 "t.yaml:4:31: params.n: expected a range within the 64-bit signed integers, "
                 "found '99999999999999999999'");
    /* keys that are not numbers take no range */
    expect_error("name: e\nruns:\n  - model: m\n    fusion: {from: 0, to: 1, step: 1}\n", NULL,
                 "t.yaml:4:13: fusion: expected true or false or a non-empty list of them, found "
                 "a mapping");
    /* two ranges can still cross the sweep limit */
    expect_error("name: e\nruns:\n  - model: m\n    batch: {from: 1, to: 65536, step: 1}\n"
                 "    threads: {from: 1, to: 2, step: 1}\n",
                 NULL, "t.yaml:3:5: sweep too large: 131072 runs, expected at most 100000");
    expect_error("name: e\nruns:\n  - model: m\n", "batch={from: 8, to: 4, step: 1}",
                 "--set batch={from: 8, to: 4, step: 1}: batch: expected 'to' at least 'from' "
                 "(8), found '4'");
}

static void test_guard(void **state)
{
    (void)state;
    char text[512], size[160];
    xpb_err err = {{0}};
    /* 101 runs of 3 repeats x 2 s each at least */
    snprintf(text, sizeof text,
             "name: big\nruns:\n  - model: m\n    seed: {from: 0, to: 100, "
             "step: 1}\n");
    xpb_scenario *s = parse(text);
    assert_int_equal(s->n_runs, 101);
    assert_int_equal(xpb_scenario_run_limit(s), XPB_SCENARIO_CONFIRM_RUNS);
    assert_string_equal(xpb_scenario_size_text(size, sizeof size, s),
                        "101 runs, at least 10 min 6 s of timed steps (repeats x min_time)");
    assert_int_equal(xpb_scenario_guard(s, 0, &err), XPB_INVALID_ARGUMENT);
    assert_string_equal(err.msg,
                        "t.yaml: scenario 'big' expands to 101 runs, at least 10 min 6 s of timed "
                        "steps (repeats x min_time), more than 100 (the guard of big sweeps): run "
                        "it with --yes, or set max_runs: 101 at the top of the scenario");
    assert_int_equal(xpb_scenario_guard(s, 1, &err), XPB_OK);
    xpb_scenario_free(s);

    /* the scenario's own limit, either way */
    s = parse("name: big\nmax_runs: 200\nruns:\n  - model: m\n    seed: {from: 0, to: 100, step: "
              "1}\n");
    assert_int_equal(xpb_scenario_guard(s, 0, &err), XPB_OK);
    xpb_scenario_free(s);
    s = parse("name: small\nmax_runs: 2\nruns:\n  - model: m\n    batch: [1, 2, 4]\n    mode: "
              "[train, tta]\n    repeats: 1\n    min_time: 0.5\n");
    assert_string_equal(xpb_scenario_size_text(size, sizeof size, s),
                        "6 runs, at least 2 s of timed steps (repeats x min_time) and 3 "
                        "time-to-accuracy runs");
    assert_int_equal(xpb_scenario_guard(s, 0, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "more than 2 (its max_runs)"));
    xpb_scenario_free(s);
    s = parse("name: hours\nruns:\n  - model: m\n    min_time: 3600\n    repeats: 2\n");
    assert_string_equal(xpb_scenario_size_text(size, sizeof size, s),
                        "1 run, at least 2 h 0 min of timed steps (repeats x min_time)");
    xpb_scenario_free(s);

    expect_error("name: x\nmax_runs: 0\nruns:\n  - model: m\n", NULL,
                 "t.yaml:2:11: max_runs: expected an integer 1..100000, found '0'");
    expect_error("name: x\nmax_runs: [5]\nruns:\n  - model: m\n", NULL,
                 "t.yaml:2:11: max_runs: expected an integer 1..100000, found a list");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometric),
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_set_and_defaults),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
