/* Scenario parsing: defaults, every run key, sweeps and ids, --set overrides, the hash, and
 * the exact message (with line and column) for broken files. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <xpubench/backend.h>

#include "plugin/loader.h"
#include "base/names.h"
#include "scenario/scenario.h"
#include "scenario/scenario_check.h"
#include "scenario/scenario_keys.h"
#include "base/sha256.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Parses text (as file "t.yaml") and expects success. */
static xpb_scenario *parse_ok_set(const char *text, const char *const *set, size_t n_set)
{
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    xpb_status st = xpb_scenario_parse(&s, "t.yaml", text, strlen(text), set, n_set, &err);
    if (st != XPB_OK)
        fail_msg("unexpected failure: %s", err.msg);
    assert_non_null(s);
    return s;
}

static xpb_scenario *parse_ok(const char *text)
{
    return parse_ok_set(text, NULL, 0);
}

/* Parses len bytes and expects failure with exactly `msg` and `status`. */
static void expect_error_len(const char *text, size_t len, const char *const *set, size_t n_set,
                             xpb_status status, const char *msg)
{
    xpb_scenario *s = (xpb_scenario *)(uintptr_t)1;
    xpb_err err = {{0}};
    xpb_status st = xpb_scenario_parse(&s, "t.yaml", text, len, set, n_set, &err);
    assert_null(s);
    assert_string_equal(err.msg, msg);
    assert_int_equal(st, status);
}

static void expect_error(const char *text, const char *msg)
{
    expect_error_len(text, strlen(text), NULL, 0, XPB_PARSE_ERROR, msg);
}

static void expect_set_error(const char *text, const char *set, const char *msg)
{
    const char *sets[1] = {set};
    expect_error_len(text, strlen(text), sets, 1, XPB_INVALID_ARGUMENT, msg);
}

static const char *const minimal = "name: t\nruns:\n  - model: conv6\n";

/* ---- values ---- */

static void test_defaults(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok(minimal);
    assert_string_equal(s->name, "t");
    assert_string_equal(s->path, "t.yaml");
    assert_null(s->description);
    assert_null(s->output);
    assert_int_equal(s->n_runs, 1);
    const xpb_run_config *r = &s->runs[0];
    assert_string_equal(r->id, "conv6-train");
    assert_string_equal(r->model, "conv6");
    assert_null(r->variant);
    assert_int_equal(r->mode, XPB_MODE_TRAIN);
    assert_int_equal(r->batch, 64);
    assert_int_equal(r->precision, XPB_PRECISION_FP32);
    assert_int_equal(r->allow_emulated, 0);
    assert_string_equal(r->backend, XPB_REFERENCE_BACKEND);
    assert_int_equal(r->fusion, 1);
    assert_int_equal(r->threads, 0);
    assert_int_equal(r->device, 0);
    assert_int_equal(r->warmup, 3);
    assert_int_equal(r->min_steps, 20);
    assert_true(r->min_time == 2.0);
    assert_int_equal(r->max_steps, 0);
    assert_int_equal(r->repeats, 3);
    assert_true(r->seed == 42);
    assert_string_equal(r->data, "synthetic");
    assert_int_equal(r->transfer, XPB_TRANSFER_RESIDENT);
    assert_true(isnan(r->lr));
    assert_true(isnan(r->momentum));
    assert_true(isnan(r->weight_decay));
    assert_int_equal(r->verify, 0);
    assert_int_equal(r->profile, 0);
    assert_int_equal(r->n_params, 0);
    assert_null(r->params);
    assert_string_equal(r->file, "t.yaml");
    assert_int_equal(r->line, 3);
    xpb_scenario_free(s);
}

static void test_every_key(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: every.key_1-x\n"
                               "description: all of them\n"
                               "output: results/every.json\n"
                               "runs:\n"
                               "  - name: full\n"
                               "    model: vgg16\n"
                               "    variant: imagenet\n"
                               "    mode: inference\n"
                               "    batch: 65536\n"
                               "    precision: fp16-mixed\n"
                               "    allow_emulated: true\n"
                               "    backend: cpu_onednn\n"
                               "    fusion: false\n"
                               "    threads: 4096\n"
                               "    device: 1024\n"
                               "    warmup: 100000\n"
                               "    min_steps: 10000000\n"
                               "    min_time: 86400\n"
                               "    max_steps: 10000000\n"
                               "    repeats: 1000\n"
                               "    seed: 18446744073709551615\n"
                               "    data: synthetic\n"
                               "    transfer: streamed\n"
                               "    lr: 0.5\n"
                               "    momentum: 0\n"
                               "    weight_decay: 1e-4\n"
                               "    verify: true\n"
                               "    profile: yes\n"
                               "    params: {dropout: 0.5, depth: '3', act: relu}\n");
    assert_string_equal(s->name, "every.key_1-x");
    assert_string_equal(s->description, "all of them");
    assert_string_equal(s->output, "results/every.json");
    assert_int_equal(s->n_runs, 1);
    const xpb_run_config *r = &s->runs[0];
    assert_string_equal(r->id, "full");
    assert_string_equal(r->model, "vgg16");
    assert_string_equal(r->variant, "imagenet");
    assert_int_equal(r->mode, XPB_MODE_INFERENCE);
    assert_int_equal(r->batch, 65536);
    assert_int_equal(r->precision, XPB_PRECISION_FP16_MIXED);
    assert_int_equal(r->allow_emulated, 1);
    assert_string_equal(r->backend, "cpu_onednn");
    assert_int_equal(r->fusion, 0);
    assert_int_equal(r->threads, 4096);
    assert_int_equal(r->device, 1024);
    assert_int_equal(r->warmup, 100000);
    assert_int_equal(r->min_steps, 10000000);
    assert_true(r->min_time == 86400.0);
    assert_int_equal(r->max_steps, 10000000);
    assert_int_equal(r->repeats, 1000);
    assert_true(r->seed == UINT64_MAX);
    assert_string_equal(r->data, "synthetic");
    assert_int_equal(r->transfer, XPB_TRANSFER_STREAMED);
    assert_true(r->lr == 0.5);
    assert_true(r->momentum == 0.0);
    assert_true(r->weight_decay == 1e-4);
    assert_int_equal(r->verify, 1);
    assert_int_equal(r->profile, 1);
    assert_int_equal(r->n_params, 3);
    assert_string_equal(r->params[0].key, "dropout");
    assert_string_equal(r->params[0].value, "0.5");
    assert_string_equal(r->params[1].key, "depth");
    assert_string_equal(r->params[1].value, "3");
    assert_string_equal(r->params[2].key, "act");
    assert_string_equal(r->params[2].value, "relu");
    assert_int_equal(r->line, 5);
    xpb_scenario_free(s);
}

static void test_allow_emulated(void **state)
{
    (void)state;
    const char *set[] = {"allow_emulated=yes"};
    xpb_scenario *s = parse_ok("name: e\ndefaults: {allow_emulated: [false, true]}\nruns:\n"
                               "  - {model: m, precision: bf16}\n"
                               "  - {model: m, allow_emulated: off}\n");
    assert_int_equal(s->n_runs, 3);
    assert_string_equal(s->runs[0].id, "m-train[allow_emulated=false]");
    assert_int_equal(s->runs[0].allow_emulated, 0);
    assert_string_equal(s->runs[1].id, "m-train[allow_emulated=true]");
    assert_int_equal(s->runs[1].allow_emulated, 1);
    assert_string_equal(s->runs[2].id, "m-train"); /* the run's scalar replaces the axis */
    assert_int_equal(s->runs[2].allow_emulated, 0);
    xpb_scenario_free(s);
    s = parse_ok_set(minimal, set, 1);
    assert_int_equal(s->runs[0].allow_emulated, 1);
    xpb_scenario_free(s);
    expect_error("name: x\nruns:\n  - model: a\n    allow_emulated: \"true\"\n",
                 "t.yaml:4:21: allow_emulated: expected true or false, found the quoted string "
                 "\"true\"");
    expect_set_error(minimal, "allow_emulated=1",
                     "--set allow_emulated=1: allow_emulated: expected true or false, found '1'");
    expect_error("name: x\nruns:\n  - model: a\n    allow_emulate: true\n",
                 "t.yaml:4:5: expected a run key, found 'allow_emulate' (did you mean "
                 "'allow_emulated'?)");
}

static void test_precision_spellings(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: p\nruns:\n  - model: m\n    precision: [fp32, tf32, bf16, "
                               "fp16, bf16-mixed, fp16-mixed]\n");
    static const uint32_t want[] = {XPB_PRECISION_FP32,       XPB_PRECISION_TF32,
                                    XPB_PRECISION_BF16_MIXED, XPB_PRECISION_FP16_MIXED,
                                    XPB_PRECISION_BF16_MIXED, XPB_PRECISION_FP16_MIXED};
    assert_int_equal(s->n_runs, 6);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(s->runs[i].precision, want[i]);
    /* ids use the canonical spelling; the repeats become #2 */
    assert_string_equal(s->runs[0].id, "m-train[precision=fp32]");
    assert_string_equal(s->runs[2].id, "m-train[precision=bf16]");
    assert_string_equal(s->runs[4].id, "m-train[precision=bf16]#2");
    assert_string_equal(s->runs[5].id, "m-train[precision=fp16]#2");
    xpb_scenario_free(s);
}

static void test_bool_spellings(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: b\nruns:\n  - model: m\n    fusion: [true, false, yes, no, "
                               "on, off, True, FALSE]\n");
    static const uint32_t want[] = {1, 0, 1, 0, 1, 0, 1, 0};
    assert_int_equal(s->n_runs, 8);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(s->runs[i].fusion, want[i]);
    assert_string_equal(s->runs[2].id, "m-train[fusion=true]#2");
    xpb_scenario_free(s);
}

static void test_null_means_model_default(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: n\ndefaults: {variant: cifar, lr: 0.1}\nruns:\n"
                               "  - model: m\n    variant: [~, imagenet]\n    lr: null\n");
    assert_int_equal(s->n_runs, 2);
    assert_null(s->runs[0].variant);
    assert_string_equal(s->runs[1].variant, "imagenet");
    assert_true(isnan(s->runs[0].lr));
    assert_string_equal(s->runs[0].id, "m-train[variant=default]");
    assert_string_equal(s->runs[1].id, "m-train[variant=imagenet]");
    xpb_scenario_free(s);
}

/* ---- sweeps and ids ---- */

static void test_sweep_order_and_ids(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: sweep\n"
                               "defaults:\n"
                               "  precision: [fp32, bf16]\n"
                               "  backend: cpu_ref\n"
                               "runs:\n"
                               "  - name: first\n"
                               "    model: conv6\n"
                               "    batch: [32, 64, 128]\n"
                               "  - model: resnet18\n"
                               "    mode: inference\n"
                               "    precision: tf32\n"
                               "    min_time: [0.5, 1, 0.001]\n");
    /* precision comes first in the file (defaults), so batch varies fastest */
    static const char *const ids[] = {
        "first[precision=fp32,batch=32]",     "first[precision=fp32,batch=64]",
        "first[precision=fp32,batch=128]",    "first[precision=bf16,batch=32]",
        "first[precision=bf16,batch=64]",     "first[precision=bf16,batch=128]",
        "resnet18-inference[min_time=0.5]",   "resnet18-inference[min_time=1]",
        "resnet18-inference[min_time=0.001]",
    };
    static const uint32_t batch[] = {32, 64, 128, 32, 64, 128, 64, 64, 64};
    assert_int_equal(s->n_runs, N(ids));
    for (size_t i = 0; i < N(ids); i++) {
        assert_string_equal(s->runs[i].id, ids[i]);
        assert_int_equal(s->runs[i].batch, batch[i]);
        assert_int_equal(s->runs[i].line, i < 6 ? 6 : 9);
    }
    assert_int_equal(s->runs[3].precision, XPB_PRECISION_BF16_MIXED);
    /* the run's scalar replaces the defaults' axis */
    assert_int_equal(s->runs[6].precision, XPB_PRECISION_TF32);
    assert_true(s->runs[8].min_time == 0.001);
    xpb_scenario_free(s);
}

static void test_sweep_three_axes_last_fastest(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: s\nruns:\n  - model: m\n    fusion: [true, false]\n"
                               "    threads: [1, 2]\n    batch: [8, 16]\n");
    assert_int_equal(s->n_runs, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(s->runs[i].fusion, i < 4 ? 1 : 0);
        assert_int_equal(s->runs[i].threads, (i / 2) % 2 ? 2 : 1);
        assert_int_equal(s->runs[i].batch, i % 2 ? 16 : 8);
    }
    assert_string_equal(s->runs[5].id, "m-train[fusion=false,threads=1,batch=16]");
    xpb_scenario_free(s);
}

static void test_single_item_list_is_an_axis(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: s\nruns:\n  - model: m\n    batch: [8]\n");
    assert_int_equal(s->n_runs, 1);
    assert_string_equal(s->runs[0].id, "m-train[batch=8]");
    xpb_scenario_free(s);
}

static void test_params_sweep_and_merge(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: p\n"
                               "defaults:\n"
                               "  params: {blocks: 6, norm: instance}\n"
                               "runs:\n"
                               "  - model: cyclegan\n"
                               "    params:\n"
                               "      blocks: [6, 9]\n"
                               "      extra: \"a b\"\n");
    assert_int_equal(s->n_runs, 2);
    for (size_t i = 0; i < 2; i++) {
        const xpb_run_config *r = &s->runs[i];
        assert_int_equal(r->n_params, 3);
        assert_string_equal(r->params[0].key, "blocks");
        assert_string_equal(r->params[0].value, i ? "9" : "6");
        assert_string_equal(r->params[1].key, "norm");
        assert_string_equal(r->params[1].value, "instance");
        assert_string_equal(r->params[2].key, "extra");
        assert_string_equal(r->params[2].value, "a b");
    }
    assert_string_equal(s->runs[0].id, "cyclegan-train[blocks=6]");
    assert_string_equal(s->runs[1].id, "cyclegan-train[blocks=9]");
    xpb_scenario_free(s);
}

static void test_duplicate_ids_get_suffixes(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: d\nruns:\n  - model: m\n  - model: m\n  - name: m-train\n"
                               "    model: x\n  - {name: a, model: m}\n  - {name: a, model: m}\n");
    assert_int_equal(s->n_runs, 5);
    assert_string_equal(s->runs[0].id, "m-train");
    assert_string_equal(s->runs[1].id, "m-train#2");
    assert_string_equal(s->runs[2].id, "m-train#3");
    assert_string_equal(s->runs[3].id, "a");
    assert_string_equal(s->runs[4].id, "a#2");
    assert_int_equal(s->runs[4].line, 8);
    xpb_scenario_free(s);
}

static void test_flow_style_scenario(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("{name: f, runs: [{model: m, batch: [1, 2]}]}");
    assert_int_equal(s->n_runs, 2);
    assert_int_equal(s->runs[1].batch, 2);
    xpb_scenario_free(s);
}

static void test_sweep_limit(void **state)
{
    (void)state;
    /* 10^5 runs is allowed, one more axis value is not */
    const char *ok = "name: big\nruns:\n  - model: m\n"
                     "    batch: [1,2,3,4,5,6,7,8,9,10]\n    threads: [1,2,3,4,5,6,7,8,9,10]\n"
                     "    device: [1,2,3,4,5,6,7,8,9,10]\n    warmup: [1,2,3,4,5,6,7,8,9,10]\n"
                     "    repeats: [1,2,3,4,5,6,7,8,9,10]\n";
    xpb_scenario *s = parse_ok(ok);
    assert_int_equal(s->n_runs, 100000);
    assert_string_equal(s->runs[99999].id,
                        "m-train[batch=10,threads=10,device=10,warmup=10,repeats=10]");
    xpb_scenario_free(s);
    expect_error("name: big\nruns:\n  - model: m\n    batch: [1,2]\n"
                 "  - model: m\n"
                 "    batch: [1,2,3,4,5,6,7,8,9,10]\n    threads: [1,2,3,4,5,6,7,8,9,10]\n"
                 "    device: [1,2,3,4,5,6,7,8,9,10]\n    warmup: [1,2,3,4,5,6,7,8,9,10]\n"
                 "    repeats: [1,2,3,4,5,6,7,8,9,10]\n",
                 "t.yaml:5:5: sweep too large: 100002 runs, expected at most 100000");
}

/* Small in runs but huge in memory: a long parameter value copied into every run. */
static void test_sweep_memory_limit(void **state)
{
    (void)state;
    size_t cap = 512 * 1024, o = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    o += (size_t)snprintf(text, cap, "name: m\nruns:\n  - model: m\n    params: {big: ");
    memset(text + o, 'x', 200000);
    o += 200000;
    o += (size_t)snprintf(text + o, cap - o, "}\n    batch: [");
    for (int i = 0; i < 2000; i++)
        o += (size_t)snprintf(text + o, cap - o, "%s1", i ? "," : "");
    o += (size_t)snprintf(text + o, cap - o, "]\n");
    assert_true(o < cap);
    xpb_scenario *s = (xpb_scenario *)(uintptr_t)1;
    xpb_err err;
    assert_int_equal(xpb_scenario_parse(&s, "t.yaml", text, o, NULL, 0, &err), XPB_PARSE_ERROR);
    assert_null(s);
    const char *want = "t.yaml:3:5: sweep too large: 2000 runs would take about ";
    assert_memory_equal(err.msg, want, strlen(want));
    assert_non_null(strstr(err.msg, " MiB, expected at most 256 MiB"));
    free(text);
}

static void test_sweep_overflow(void **state)
{
    (void)state;
    /* 8 axes of 300 values: 300^8 > 2^64 */
    size_t cap = 1 << 16, o = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    o += (size_t)snprintf(text + o, cap - o, "name: huge\nruns:\n  - model: m\n");
    const char *keys[] = {"batch", "threads",   "device",  "warmup",
                          "seed",  "max_steps", "repeats", "min_steps"};
    for (size_t k = 0; k < N(keys); k++) {
        o += (size_t)snprintf(text + o, cap - o, "    %s: [", keys[k]);
        for (int v = 1; v <= 300; v++)
            o += (size_t)snprintf(text + o, cap - o, "%d%s", v, v < 300 ? "," : "]\n");
    }
    assert_true(o < cap);
    expect_error(text, "t.yaml:3:5: sweep too large: more than 18446744073709551614 runs, "
                       "expected at most 100000");
    free(text);
}

/* ---- --set ---- */

static void test_overrides(void **state)
{
    (void)state;
    const char *text = "name: o\n"
                       "defaults: {batch: 16, repeats: 5}\n"
                       "runs:\n"
                       "  - model: conv6\n"
                       "    batch: 32\n"
                       "    seed: 1\n"
                       "  - model: vgg16\n"
                       "    params: {dropout: false}\n";
    const char *set[] = {"batch=[32,64]",        "repeats=2",   "params.dropout=true", "seed=7",
                         "precision=bf16-mixed", "verify=true", "variant=cifar",       "seed=9"};
    xpb_scenario *s = parse_ok_set(text, set, N(set));
    assert_int_equal(s->n_runs, 4);
    static const char *const ids[] = {"conv6-train[batch=32]", "conv6-train[batch=64]",
                                      "vgg16-train[batch=32]", "vgg16-train[batch=64]"};
    for (size_t i = 0; i < 4; i++) {
        const xpb_run_config *r = &s->runs[i];
        assert_string_equal(r->id, ids[i]);
        assert_int_equal(r->batch, i % 2 ? 64 : 32);
        assert_int_equal(r->repeats, 2);
        assert_true(r->seed == 9); /* the last --set of a key wins */
        assert_int_equal(r->precision, XPB_PRECISION_BF16_MIXED);
        assert_int_equal(r->verify, 1);
        assert_string_equal(r->variant, "cifar");
        assert_int_equal(r->n_params, 1);
        assert_string_equal(r->params[0].key, "dropout");
        assert_string_equal(r->params[0].value, "true");
    }
    xpb_scenario_free(s);
}

static void test_override_axes_come_last(void **state)
{
    (void)state;
    const char *set[] = {"threads=[1,2]", "params.depth=[3, 4]"};
    xpb_scenario *s = parse_ok_set("name: o\nruns:\n  - model: m\n    batch: [8, 16]\n", set, 2);
    assert_int_equal(s->n_runs, 8);
    assert_string_equal(s->runs[0].id, "m-train[batch=8,threads=1,depth=3]");
    assert_string_equal(s->runs[1].id, "m-train[batch=8,threads=1,depth=4]");
    assert_string_equal(s->runs[2].id, "m-train[batch=8,threads=2,depth=3]");
    assert_string_equal(s->runs[7].id, "m-train[batch=16,threads=2,depth=4]");
    /* an option that replaces a swept key keeps the key's place */
    const char *set2[] = {"threads=4", "batch=[1,2]"};
    xpb_scenario *s2 = parse_ok_set(
        "name: o\nruns:\n  - model: m\n    batch: 8\n    fusion: [true, false]\n", set2, 2);
    assert_int_equal(s2->n_runs, 4);
    assert_string_equal(s2->runs[0].id, "m-train[batch=1,fusion=true]");
    assert_string_equal(s2->runs[1].id, "m-train[batch=1,fusion=false]");
    assert_int_equal(s2->runs[1].threads, 4);
    xpb_scenario_free(s);
    xpb_scenario_free(s2);
}

static void test_override_errors(void **state)
{
    (void)state;
    expect_set_error(minimal, "bach=32",
                     "--set bach=32: expected a run key or params.<name>, found 'bach' (did you "
                     "mean 'batch'?)");
    expect_set_error(minimal, "batch=abc",
                     "--set batch=abc: batch: expected an integer 1..65536, found 'abc'");
    expect_set_error(minimal, "batch=0",
                     "--set batch=0: batch: expected an integer 1..65536, found '0'");
    expect_set_error(minimal, "batch", "--set batch: expected key=value, found no '='");
    expect_set_error(minimal, "batch=",
                     "--set batch=: batch: expected an integer 1..65536, "
                     "found nothing");
    expect_set_error(minimal, "batch=[]",
                     "--set batch=[]: batch: expected an integer 1..65536 "
                     "or a non-empty list of them, found an empty list");
    expect_set_error(minimal, "batch={a: 1}",
                     "--set batch={a: 1}: batch: expected a range's key (from, to, times or "
                     "step), found 'a'");
    expect_set_error(minimal, "batch=[32",
                     "--set batch=[32: invalid YAML: did not find expected ',' or ']' (while "
                     "parsing a flow sequence at 1:1)");
    expect_set_error(minimal, "params.Depth=1",
                     "--set params.Depth=1: expected params.<name> with a name of [a-z0-9_] "
                     "other than variant, found 'params.Depth'");
    expect_set_error(minimal,
                     "params.x=", "--set params.x=: params.x: expected a value, found nothing");
    expect_set_error(minimal, "precision=fp64",
                     "--set precision=fp64: precision: expected one of fp32, tf32, bf16, fp16, "
                     "bf16-mixed, fp16-mixed, found 'fp64'");
    expect_set_error(
        minimal, "zzz=1",
        "--set zzz=1: expected a run key or params.<name> (model, variant, mode, "
        "batch, precision, allow_emulated, allow_unsupported, backend, fusion, threads, device, "
        "warmup, min_steps, "
        "min_time, max_steps, repeats, seed, data, target, eval_every, max_epochs, runs, transfer, "
        "lr, momentum, "
        "weight_decay, verify, profile, parallel, bucket_mb, scaling_baseline), found 'zzz'");
    expect_set_error(minimal, "max_steps=5",
                     "--set max_steps=5: max_steps: expected 0 (no limit) or at least min_steps "
                     "(20) in run conv6-train, found 5");
}

static void test_hash(void **state)
{
    (void)state;
    char want[65];
    xpb_sha256_hex(want, minimal, strlen(minimal));
    xpb_scenario *plain = parse_ok(minimal);
    assert_string_equal(plain->sha256, want); /* no --set: the file's sha256sum */

    const char *a[] = {"batch=32"};
    const char *b[] = {"batch=64"};
    const char *ab[] = {"batch=32", "seed=1"};
    const char *ba[] = {"seed=1", "batch=32"};
    xpb_scenario *sa = parse_ok_set(minimal, a, 1);
    xpb_scenario *sb = parse_ok_set(minimal, b, 1);
    xpb_scenario *sab = parse_ok_set(minimal, ab, 2);
    xpb_scenario *sba = parse_ok_set(minimal, ba, 2);
    assert_string_not_equal(sa->sha256, plain->sha256);
    assert_string_not_equal(sa->sha256, sb->sha256);
    assert_string_not_equal(sab->sha256, sba->sha256);
    assert_string_not_equal(sab->sha256, sa->sha256);

    /* the documented construction: file bytes, then NUL + option for each option */
    char buf[256];
    size_t n = strlen(minimal);
    memcpy(buf, minimal, n);
    buf[n++] = '\0';
    memcpy(buf + n, "batch=32", 8);
    n += 8;
    xpb_sha256_hex(want, buf, n);
    assert_string_equal(sa->sha256, want);
    assert_int_equal(strlen(sa->sha256), 64);

    /* a different file gives a different hash */
    xpb_scenario *other = parse_ok("name: t\nruns:\n  - model: conv6 \n");
    assert_string_not_equal(other->sha256, plain->sha256);
    xpb_scenario_free(plain);
    xpb_scenario_free(sa);
    xpb_scenario_free(sb);
    xpb_scenario_free(sab);
    xpb_scenario_free(sba);
    xpb_scenario_free(other);
}

/* ---- errors, with exact positions ---- */

static void test_error_bad_indentation(void **state)
{
    (void)state;
    expect_error("name: x\nruns:\n  - model: conv6\n   batch: 32\n",
                 "t.yaml:4:4: invalid YAML: did not find expected '-' indicator (while parsing "
                 "a block collection at 3:3)");
    expect_error("name: x\n  runs: 1\n",
                 "t.yaml:2:7: invalid YAML: mapping values are not allowed in this context");
    expect_error("name: x\nruns:\n  - model: conv6\n\tbatch: 32\n",
                 "t.yaml:4:1: invalid YAML: found a tab character that violates indentation "
                 "(while scanning a plain scalar at 3:12)");
    expect_error("name: x\nruns:\n- model: conv6\n  batch: [32, 64\n",
                 "t.yaml:5:1: invalid YAML: did not find expected ',' or ']' (while parsing a "
                 "flow sequence at 4:10)");
}

static void test_error_unknown_keys(void **state)
{
    (void)state;
    expect_error("name: x\nruns:\n  - model: conv6\n    bach: 32\n",
                 "t.yaml:4:5: expected a run key, found 'bach' (did you mean 'batch'?)");
    expect_error("name: x\nruns:\n  - model: conv6\n    presicion: fp32\n",
                 "t.yaml:4:5: expected a run key, found 'presicion' (did you mean "
                 "'precision'?)");
    expect_error(
        "name: x\nruns:\n  - model: conv6\n    xyzzy: 32\n",
        "t.yaml:4:5: expected a run key (name, model, variant, mode, batch, precision, "
        "allow_emulated, allow_unsupported, backend, fusion, threads, device, warmup, min_steps, "
        "min_time, max_steps, "
        "repeats, seed, data, target, eval_every, max_epochs, runs, transfer, lr, momentum, "
        "weight_decay, verify, profile, parallel, "
        "bucket_mb, scaling_baseline, params), found 'xyzzy'");
    expect_error("name: x\nrun:\n  - model: conv6\n",
                 "t.yaml:2:1: expected a top-level key, found 'run' (did you mean 'runs'?)");
    expect_error(
        "name: x\nbatch: 3\nruns:\n  - model: a\n",
        "t.yaml:2:1: expected a top-level key (name, description, output, baseline, data_dir, "
        "max_runs, defaults, runs), found 'batch' (run keys go under 'defaults' or into a run)");
    expect_error("name: x\ndefaults:\n  modle: a\nruns:\n  - model: a\n",
                 "t.yaml:3:3: expected a run key, found 'modle' (did you mean 'model'?)");
    expect_error("name: x\ndefaults:\n  name: a\nruns:\n  - model: a\n",
                 "t.yaml:3:3: defaults: expected run keys other than 'name' (a name labels one "
                 "run), found 'name'");
}

static void test_error_wrong_types(void **state)
{
    (void)state;
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: \"64\"\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536, found the quoted string "
                 "\"64\"");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: 1.5\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536, found '1.5'");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: {a: 1}\n",
                 "t.yaml:4:13: batch: expected a range's key (from, to, times or step), found "
                 "'a'");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: [1, [2]]\n",
                 "t.yaml:4:16: batch: expected an integer 1..65536 in the list, found a list");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: []\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536 or a non-empty list of "
                 "them, found an empty list");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch:\n",
                 "t.yaml:4:11: batch: expected an integer 1..65536, found nothing");
    expect_error("name: x\nruns:\n  - model: a\n    precision: fp64\n",
                 "t.yaml:4:16: precision: expected one of fp32, tf32, bf16, fp16, bf16-mixed, "
                 "fp16-mixed, found 'fp64'");
    expect_error("name: x\nruns:\n  - model: a\n    mode: infer\n",
                 "t.yaml:4:11: mode: expected one of train, inference, tta, found 'infer'");
    expect_error("name: x\nruns:\n  - model: a\n    fusion: maybe\n",
                 "t.yaml:4:13: fusion: expected true or false, found 'maybe'");
    expect_error("name: x\nruns:\n  - model: a\n    fusion: \"true\"\n",
                 "t.yaml:4:13: fusion: expected true or false, found the quoted string "
                 "\"true\"");
    expect_error("name: x\nruns:\n  - model: a\n    data: imagenet\n",
                 "t.yaml:4:11: data: expected one of synthetic, fashion-mnist, found 'imagenet'");
    expect_error("name: x\nruns:\n  - model: a\n    transfer: copy\n",
                 "t.yaml:4:15: transfer: expected one of resident, streamed, found 'copy'");
    expect_error("name: x\nruns:\n  - model: a b\n",
                 "t.yaml:3:12: model: expected a name of letters, digits, '_', '.' or '-', "
                 "found 'a b'");
    expect_error("name: x\nruns:\n  - model: [a, [b]]\n",
                 "t.yaml:3:16: model: expected a name of letters, digits, '_', '.' or '-' in "
                 "the list, found a list");
    expect_error("name: x\nruns:\n  - model: a\n    name: [a, b]\n",
                 "t.yaml:4:11: name: expected a name of letters, digits, '_', '.' or '-', "
                 "found a list");
    expect_error("name: x\nruns:\n  - model: a\n    params: [1]\n",
                 "t.yaml:4:13: params: expected a mapping of model parameter names to values, "
                 "found a list");
    expect_error("name: x\nruns:\n  - model: a\n    params: {Depth: 1}\n",
                 "t.yaml:4:14: params: expected a parameter name of [a-z0-9_], found 'Depth'");
    expect_error("name: x\nruns:\n  - model: a\n    params: {depth: }\n",
                 "t.yaml:4:21: params.depth: expected a value, found nothing");
    expect_error("name: x\nruns:\n  - model: a\n    params: {depth: {a: 1}}\n",
                 "t.yaml:4:22: params.depth: expected a range's key (from, to, times or step), "
                 "found 'a'");
    expect_error("name: x\nruns:\n  - model: a\n    params: {variant: x}\n",
                 "t.yaml:4:14: params: expected a model parameter other than the variant (set "
                 "the run key 'variant'), found 'variant'");
    expect_error("name: x\nruns:\n  - model: a\n    params: {a: 1, a: 2}\n",
                 "t.yaml:4:20: params.a: expected each parameter once, found it again (first "
                 "at line 4, column 14)");
}

static void test_error_ranges_and_huge_values(void **state)
{
    (void)state;
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: 99999999999999999999\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536, found "
                 "'99999999999999999999'");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: 65537\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536, found '65537'");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: 0\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536, found '0'");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: -1\n",
                 "t.yaml:4:12: batch: expected an integer 1..65536, found '-1'");
    expect_error("name: x\nruns:\n  - model: conv6\n    threads: 4097\n",
                 "t.yaml:4:14: threads: expected an integer 0..4096, found '4097'");
    expect_error("name: x\nruns:\n  - model: conv6\n    repeats: 0\n",
                 "t.yaml:4:14: repeats: expected an integer 1..1000, found '0'");
    expect_error("name: x\nruns:\n  - model: conv6\n    seed: 18446744073709551616\n",
                 "t.yaml:4:11: seed: expected an integer 0..18446744073709551615, found "
                 "'18446744073709551616'");
    expect_error("name: x\nruns:\n  - model: conv6\n    min_time: 1e999\n",
                 "t.yaml:4:15: min_time: expected a number 0..86400, found '1e999'");
    expect_error("name: x\nruns:\n  - model: conv6\n    min_time: 86401\n",
                 "t.yaml:4:15: min_time: expected a number 0..86400, found '86401'");
    expect_error("name: x\nruns:\n  - model: conv6\n    min_time: .nan\n",
                 "t.yaml:4:15: min_time: expected a number 0..86400, found '.nan'");
    expect_error("name: x\nruns:\n  - model: conv6\n    lr: -0.1\n",
                 "t.yaml:4:9: lr: expected a number >= 0 (or ~ for the model's default), found "
                 "'-0.1'");
    expect_error("name: x\nruns:\n  - model: conv6\n    max_steps: 5\n",
                 "t.yaml:4:16: max_steps: expected 0 (no limit) or at least min_steps (20) in "
                 "run conv6-train, found 5");
}

static void test_error_structure(void **state)
{
    (void)state;
    expect_error("", "t.yaml: empty scenario: expected a mapping with 'name' and 'runs'");
    expect_error("# only a comment\n\n",
                 "t.yaml: empty scenario: expected a mapping with 'name' and 'runs'");
    expect_error("---\n...\n", "t.yaml: empty scenario: expected a mapping with 'name' and 'runs'");
    expect_error("- a\n- b\n", "t.yaml:1:1: expected a mapping with 'name' and 'runs', found a "
                               "list");
    expect_error("just text\n", "t.yaml:1:1: expected a mapping with 'name' and 'runs', found "
                                "'just text'");
    expect_error("runs:\n  - model: a\n",
                 "t.yaml:1:1: name: expected the scenario's name, found no 'name' key");
    expect_error("name: x y\nruns:\n  - model: a\n",
                 "t.yaml:1:7: name: expected a name of letters, digits, '_', '.' or '-', found "
                 "'x y'");
    expect_error("name: x\n", "t.yaml:1:1: runs: expected a non-empty list of runs, found no "
                              "'runs' key");
    expect_error("name: x\nruns: []\n",
                 "t.yaml:2:7: runs: expected a non-empty list of runs, found an empty list");
    expect_error("name: x\nruns:\n",
                 "t.yaml:2:6: runs: expected a non-empty list of runs, found nothing");
    expect_error("name: x\nruns:\n  model: a\n",
                 "t.yaml:3:3: runs: expected a non-empty list of runs, found a mapping");
    expect_error("name: x\nruns:\n  - conv6\n",
                 "t.yaml:3:5: runs: expected a mapping for each run, found 'conv6'");
    expect_error("name: x\nruns:\n  - batch: 3\n",
                 "t.yaml:3:5: model: expected a model name in the run or in defaults, found "
                 "none");
    expect_error("name: x\ndefaults: [1]\nruns:\n  - model: a\n",
                 "t.yaml:2:11: defaults: expected a mapping of run keys, found a list");
    expect_error("name: x\noutput: [a]\nruns:\n  - model: a\n",
                 "t.yaml:2:9: output: expected a file path, found a list");
    expect_error("name: x\ndescription: {a: 1}\nruns:\n  - model: a\n",
                 "t.yaml:2:14: description: expected text, found a mapping");
    expect_error("name: x\nruns:\n  - model: conv6\n    batch: 32\n    batch: 64\n",
                 "t.yaml:5:5: batch: expected each key once, found it again (first at line 4, "
                 "column 5)");
    expect_error("name: x\nname: y\nruns:\n  - model: a\n",
                 "t.yaml:2:1: name: expected each key once, found it again (first at line 1, "
                 "column 1)");
    expect_error("name: x\nruns:\n  - model: a\n---\nname: y\n",
                 "t.yaml:4:1: expected a single YAML document, found a second document");
    expect_error("name: x\nruns:\n  - ? [a]\n    : 1\n",
                 "t.yaml:3:7: expected a scalar as mapping key, found a list");
}

static void test_error_anchors_aliases_tags(void **state)
{
    (void)state;
    expect_error("name: x\ndefaults: &d {batch: 1}\nruns:\n  - model: a\n",
                 "t.yaml:2:11: expected a plain value, found the anchor '&d' (anchors and "
                 "aliases are not supported)");
    /* a billion laughs never gets to expand */
    expect_error("name: x\nruns:\n  - model: a\n    batch: *a\n",
                 "t.yaml:4:12: expected a plain value, found the alias '*a' (anchors and aliases "
                 "are not supported)");
    expect_error("name: x\nruns:\n  - model: a\n    batch: !!int 3\n",
                 "t.yaml:4:12: expected a plain value, found the tag '!!int' (YAML tags are not "
                 "supported)");
}

static void test_error_binary_and_encoding(void **state)
{
    (void)state;
    static const char junk[] = "name: x\nruns:\n  - model: \xff\xfe\x00\x01";
    expect_error_len(junk, sizeof junk - 1, NULL, 0, XPB_PARSE_ERROR,
                     "t.yaml:3:12: expected UTF-8 text, found the byte 0xff");
    static const char nul[] = "name: x\x00\nruns: []\n";
    expect_error_len(nul, sizeof nul - 1, NULL, 0, XPB_PARSE_ERROR,
                     "t.yaml:1:8: expected printable text, found the control character U+0000");
    expect_error("name: x\nruns:\n  - model: a\x01\n",
                 "t.yaml:3:13: expected printable text, found the control character U+0001");
    /* overlong encoding of '/', a lone continuation byte, a surrogate */
    expect_error("name: \xc0\xaf\n", "t.yaml:1:7: expected UTF-8 text, found the byte 0xc0");
    expect_error("name: ab\x80\n", "t.yaml:1:9: expected UTF-8 text, found the byte 0x80");
    expect_error("name: \xed\xa0\x80\n", "t.yaml:1:7: expected UTF-8 text, found the byte 0xed");
    /* multi-byte characters count as one column; a NUL escape inside quotes is refused */
    expect_error("description: \xc3\xa9\xc3\xa9\nname: x\nruns:\n  - model: \xc3\xa9\x01\n",
                 "t.yaml:4:13: expected printable text, found the control character U+0001");
    expect_error("name: \"a\\0b\"\nruns:\n  - model: a\n",
                 "t.yaml:1:7: expected text, found a string containing a NUL character");
    /* valid UTF-8 in a description is fine; in a name it is refused, escaped */
    expect_error("name: caf\xc3\xa9\nruns:\n  - model: a\n",
                 "t.yaml:1:7: name: expected a name of letters, digits, '_', '.' or '-', found "
                 "'caf\\xc3\\xa9'");
}

static void test_error_too_large(void **state)
{
    (void)state;
    size_t len = XPB_SCENARIO_MAX_BYTES + 1;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, '#', len);
    expect_error_len(text, len, NULL, 0, XPB_PARSE_ERROR,
                     "t.yaml: too large: 1048577 bytes, expected at most 1048576 (1 MiB)");
    free(text);
}

static void test_error_deep_nesting(void **state)
{
    (void)state;
    char text[256];
    size_t o = (size_t)snprintf(text, sizeof text, "name: x\nruns: ");
    for (int i = 0; i < 40; i++)
        text[o++] = '[';
    text[o] = '\0';
    expect_error(text, "t.yaml:2:38: expected at most 32 levels of nesting, found a list or "
                       "mapping nested deeper");
}

/* ---- warnings against the loaded plugins ---- */

/* The warnings xpb_scenario_warn_backends prints for `text`, with the reference backend (no
 * XPB_CAP_FUSION, no XPB_CAP_THREADS) and fake_null_optional (XPB_CAP_FUSION only) loaded.
 * Returns a string the caller frees; *count receives the function's return value. */
static char *warnings_for(const char *text, size_t *count)
{
    const char *dirs[] = {XPB_TEST_PLUGIN_DIR,
                          XPB_TEST_BINARY_DIR "/tests/fake_plugins/null_optional"};
    xpb_registry *r = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_registry_load(&r, dirs, N(dirs), &err), XPB_OK);
    const xpb_plugin_descriptor *ref =
        xpb_registry_find(r, XPB_PLUGIN_BACKEND, XPB_REFERENCE_BACKEND);
    const xpb_plugin_descriptor *fake =
        xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_null_optional");
    if (!ref || !fake)
        fail_msg("%s and fake_null_optional must be built (%s, tests/fake_plugins)",
                 XPB_REFERENCE_BACKEND, XPB_TEST_PLUGIN_DIR);
    assert_int_equal(xpb_plugin_caps(ref) & (XPB_CAP_FUSION | XPB_CAP_THREADS), 0);
    assert_int_equal(xpb_plugin_caps(fake) & (XPB_CAP_FUSION | XPB_CAP_THREADS), XPB_CAP_FUSION);
    xpb_scenario *s = parse_ok(text);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    *count = xpb_scenario_warn_backends(s, r, f);
    fclose(f);
    xpb_scenario_free(s);
    xpb_registry_free(r);
    return out;
}

static void test_warn_fusion(void **state)
{
    (void)state;
    size_t n;
    /* A fusion sweep on a backend that does not fuse: once per scenario run and backend. */
    char *out = warnings_for("name: w\nruns:\n  - model: m\n    fusion: [true, false]\n"
                             "    batch: [1, 2]\n  - {model: m, fusion: false}\n",
                             &n);
    assert_string_equal(out, "xpubench: warning: t.yaml:3: run 'm-train[fusion=false,batch=1]': "
                             "backend 'cpu_ref' does not fuse: fusion true and false measure the "
                             "same thing\n"
                             "xpubench: warning: t.yaml:6: run 'm-train': backend 'cpu_ref' "
                             "does not fuse: fusion true and false measure the same thing\n");
    assert_int_equal(n, 2);
    free(out);
    /* The default (fused) says nothing; a backend that fuses says nothing either. */
    out = warnings_for("name: w\nruns:\n  - {model: m, fusion: true}\n"
                       "  - {model: m, backend: fake_null_optional, fusion: [true, false]}\n",
                       &n);
    assert_string_equal(out, "");
    assert_int_equal(n, 0);
    free(out);
}

static void test_warn_threads(void **state)
{
    (void)state;
    size_t n;
    char *out = warnings_for("name: w\ndefaults: {threads: [0, 4, 8]}\nruns:\n"
                             "  - {model: m, backend: [cpu_ref, fake_null_optional]}\n"
                             "  - {model: m, threads: 0}\n",
                             &n);
    assert_string_equal(out,
                        "xpubench: warning: t.yaml:4: run 'm-train[threads=4,backend=cpu_ref]': "
                        "backend 'cpu_ref' ignores threads: threads 4 measures the same as 0 (the "
                        "backend's default)\n"
                        "xpubench: warning: t.yaml:4: run "
                        "'m-train[threads=4,backend=fake_null_optional]': backend "
                        "'fake_null_optional' ignores threads: threads 4 measures the same as 0 "
                        "(the backend's default)\n");
    assert_int_equal(n, 2);
    free(out);
    /* Both warnings for one run, and a missing backend is still reported for every run. */
    out = warnings_for("name: w\nruns:\n  - {model: m, fusion: false, threads: 2}\n"
                       "  - {model: m, backend: warp9, batch: [1, 2]}\n",
                       &n);
    assert_int_equal(n, 4);
    const char *want = "xpubench: warning: t.yaml:3: run 'm-train': backend 'cpu_ref' does not "
                       "fuse: fusion true and false measure the same thing\n"
                       "xpubench: warning: t.yaml:3: run 'm-train': backend 'cpu_ref' ignores "
                       "threads: threads 2 measures the same as 0 (the backend's default)\n"
                       "xpubench: warning: t.yaml:4: run 'm-train[batch=1]': backend 'warp9' is "
                       "not loaded (loaded: ";
    assert_memory_equal(out, want, strlen(want));
    assert_non_null(strstr(out, "xpubench: warning: t.yaml:4: run 'm-train[batch=2]': backend "
                                "'warp9' is not loaded"));
    free(out);
}

static void test_baseline(void **state)
{
    (void)state;
    xpb_scenario *s = parse_ok("name: b\nbaseline: cpu_onednn\nruns:\n  - model: m\n");
    assert_string_equal(s->baseline, "cpu_onednn");
    xpb_scenario_free(s);
    s = parse_ok("name: b\nbaseline: ~\nruns:\n  - model: m\n");
    assert_null(s->baseline);
    xpb_scenario_free(s);
    s = parse_ok("name: b\nruns:\n  - model: m\n");
    assert_null(s->baseline);
    xpb_scenario_free(s);
    expect_error("name: b\nbaseline: [cpu_ref]\nruns:\n  - model: m\n",
                 "t.yaml:2:11: baseline: expected a backend name, found a list");
    expect_error("name: b\nbaseline: 'a b'\nruns:\n  - model: m\n",
                 "t.yaml:2:11: baseline: expected a backend name, found the quoted string \"a b\"");
    /* a baseline no run uses gives no comparison: said up front */
    size_t n;
    char *out = warnings_for("name: b\nbaseline: warp9\nruns:\n  - {model: m}\n", &n);
    assert_string_equal(out, "xpubench: warning: t.yaml: baseline 'warp9' is the backend of no "
                             "run: there will be no backend comparison\n");
    assert_int_equal(n, 1);
    free(out);
}

/* ---- the key table, its help and its documentation ---- */

static void test_print_keys(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    xpb_scenario_print_keys(f);
    fclose(f);
    assert_non_null(strstr(out, "\n  model           model plugin\n"
                                "                  a name of letters, digits, '_', '.' or '-'; "
                                "required\n"));
    assert_non_null(strstr(out, "\n  batch           samples per step\n"
                                "                  an integer 1..65536; default 64\n"));
    assert_non_null(strstr(out, "; default " XPB_REFERENCE_BACKEND "\n"));
    assert_non_null(strstr(out, "\n  allow_emulated  "));
    assert_non_null(strstr(out, "\n                  true or false; default false\n"));
    assert_non_null(strstr(out, "one of fp32, tf32, bf16, fp16, bf16-mixed, fp16-mixed; default "
                                "fp32\n"));
    assert_non_null(strstr(out, "(or ~ for the model's default); default ~\n"));
    free(out);
}

/* Splits a Markdown table row at the '|' that are not escaped ("\|"); returns the number of
 * cells (at most max), each trimmed and NUL-terminated in place. */
static size_t table_cells(char *row, char **cells, size_t max)
{
    size_t n = 0;
    char *start = strchr(row, '|');
    for (char *p = start ? start + 1 : row; start && *p && n < max; p++) {
        if (*p != '|' || p[-1] == '\\')
            continue;
        *p = '\0';
        while (*start == '|' || *start == ' ')
            start++;
        for (char *e = p - 1; e >= start && *e == ' '; e--)
            *e = '\0';
        cells[n++] = start;
        start = p + 1;
    }
    return n;
}

/* docs/scenarios.md lists the run keys of the table, in its order, with its defaults. */
static void test_docs_list_every_key(void **state)
{
    (void)state;
    FILE *f = fopen(XPB_TEST_SOURCE_DIR "/docs/scenarios.md", "r");
    assert_non_null(f);
    size_t n_keys, k = 0;
    const struct xpb_skey *keys = xpb_skey_table(&n_keys);
    char line[2048], *cells[8], value[64], text[64];
    int in_table = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0)
            in_table = strncmp(line, "## Run keys", 11) == 0;
        if (!in_table || strncmp(line, "| `", 3) != 0)
            continue;
        assert_true(table_cells(line, cells, 8) >= 3);
        assert_true(k < n_keys);
        const struct xpb_skey *key = &keys[k++];
        snprintf(value, sizeof value, "`%s`", key->name);
        assert_string_equal(cells[0], value);
        const char *def = cells[2];
        if (key->required) {
            assert_memory_equal(def, "**required**", 12);
        } else if (key->type == XPB_SKEY_PARAMS) {
            assert_string_equal(def, "none");
        } else if (key->type == XPB_SKEY_FLOAT && !isnan(key->def.f)) {
            assert_true(def[0] == '`' && strtod(def + 1, NULL) == key->def.f);
        } else if (key->type != XPB_SKEY_LABEL) {
            int null = (key->type == XPB_SKEY_NAME && !key->def.s) ||
                       (key->type == XPB_SKEY_FLOAT && isnan(key->def.f));
            snprintf(value, sizeof value, "`%s`",
                     null ? "~" : xpb_skey_format(text, sizeof text, key, &key->def));
            assert_memory_equal(def, value, strlen(value));
        }
    }
    fclose(f);
    assert_int_equal(k, n_keys);
}

/* ---- files ---- */

static char *temp_file(const char *content, size_t len)
{
    char *path = strdup("/tmp/xpb_scenario_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, content + done, len - done);
        assert_true(w > 0);
        done += (size_t)w;
    }
    close(fd);
    return path;
}

static void test_load(void **state)
{
    (void)state;
    char *path = temp_file(minimal, strlen(minimal));
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_scenario_load(&s, path, NULL, 0, &err), XPB_OK);
    assert_string_equal(s->path, path);
    assert_string_equal(s->runs[0].file, path);
    char want[65];
    xpb_sha256_hex(want, minimal, strlen(minimal));
    assert_string_equal(s->sha256, want);
    xpb_scenario_free(s);
    unlink(path);
    free(path);

    s = (xpb_scenario *)(uintptr_t)1;
    assert_int_equal(xpb_scenario_load(&s, "/nonexistent/x.yaml", NULL, 0, &err), XPB_IO_ERROR);
    assert_null(s);
    assert_string_equal(err.msg, "/nonexistent/x.yaml: cannot open: No such file or directory");

    size_t len = XPB_SCENARIO_MAX_BYTES + 10;
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, '\n', len);
    path = temp_file(big, len);
    assert_int_equal(xpb_scenario_load(&s, path, NULL, 0, &err), XPB_PARSE_ERROR);
    assert_null(s);
    char msg[512];
    snprintf(msg, sizeof msg, "%s: too large: 1048586 bytes, expected at most 1048576 (1 MiB)",
             path);
    assert_string_equal(err.msg, msg);
    unlink(path);
    free(path);
    free(big);

    assert_int_equal(xpb_scenario_load(&s, "/tmp", NULL, 0, &err), XPB_IO_ERROR);
    assert_null(s);
    assert_string_equal(err.msg, "/tmp: cannot read: Is a directory");
    xpb_scenario_free(NULL);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Every shipped scenario parses. */
static void test_shipped_configs_parse(void **state)
{
    (void)state;
    const char *dir = XPB_TEST_SOURCE_DIR "/configs";
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name, ".yaml") && !has_suffix(e->d_name, ".yml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        xpb_scenario *s = NULL;
        xpb_err err = {{0}};
        if (xpb_scenario_load(&s, path, NULL, 0, &err) != XPB_OK)
            fail_msg("%s", err.msg);
        assert_true(s->n_runs > 0);
        xpb_scenario_free(s);
        count++;
    }
    closedir(d);
    assert_true(count >= 1);
}

static void test_quickstart(void **state)
{
    (void)state;
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    if (xpb_scenario_load(&s, XPB_TEST_SOURCE_DIR "/configs/quickstart.yaml", NULL, 0, &err) !=
        XPB_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(s->name, "quickstart");
    assert_string_equal(s->output, "results/quickstart.json");
    /* every backend the project ships, the reference first (the baseline of the speedups) */
    assert_int_equal(s->n_runs, 3);
    assert_string_equal(s->runs[1].backend, "cpu_onednn");
    assert_string_equal(s->runs[2].backend, "cuda");
    const xpb_run_config *r = &s->runs[0];
    assert_string_equal(r->model, "conv6");
    assert_string_equal(r->variant, "cifar");
    assert_int_equal(r->mode, XPB_MODE_TRAIN);
    assert_string_equal(r->data, "synthetic");
    assert_string_equal(r->backend, "cpu_ref");
    assert_int_equal(r->precision, XPB_PRECISION_FP32);
    assert_true(r->seed == 42);
    assert_true(r->batch >= 1 && r->batch <= 32);
    assert_true(r->repeats >= 1 && r->repeats <= 3);
    /* the speedups of the quickstart are over the reference */
    assert_non_null(s->baseline);
    assert_string_equal(s->baseline, XPB_REFERENCE_BACKEND);
    assert_true(r->warmup <= 1);
    assert_true(r->min_time <= 1.0);
    xpb_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_allow_emulated),
        cmocka_unit_test(test_precision_spellings),
        cmocka_unit_test(test_bool_spellings),
        cmocka_unit_test(test_null_means_model_default),
        cmocka_unit_test(test_sweep_order_and_ids),
        cmocka_unit_test(test_sweep_three_axes_last_fastest),
        cmocka_unit_test(test_single_item_list_is_an_axis),
        cmocka_unit_test(test_params_sweep_and_merge),
        cmocka_unit_test(test_duplicate_ids_get_suffixes),
        cmocka_unit_test(test_flow_style_scenario),
        cmocka_unit_test(test_sweep_limit),
        cmocka_unit_test(test_sweep_overflow),
        cmocka_unit_test(test_sweep_memory_limit),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_override_axes_come_last),
        cmocka_unit_test(test_override_errors),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_error_bad_indentation),
        cmocka_unit_test(test_error_unknown_keys),
        cmocka_unit_test(test_error_wrong_types),
        cmocka_unit_test(test_error_ranges_and_huge_values),
        cmocka_unit_test(test_error_structure),
        cmocka_unit_test(test_error_anchors_aliases_tags),
        cmocka_unit_test(test_error_binary_and_encoding),
        cmocka_unit_test(test_error_too_large),
        cmocka_unit_test(test_error_deep_nesting),
        cmocka_unit_test(test_warn_fusion),
        cmocka_unit_test(test_warn_threads),
        cmocka_unit_test(test_print_keys),
        cmocka_unit_test(test_docs_list_every_key),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_shipped_configs_parse),
        cmocka_unit_test(test_quickstart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
