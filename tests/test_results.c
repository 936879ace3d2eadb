/* Results documents: schema validation (every required key, every type, enumerations, ranges,
 * cross-field rules), write/load round trip, load errors, the text table and the derived
 * comparisons. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "results/results.h"

/* A valid document. Written with single quotes for readability; quote() turns them into
 * double quotes (no string in it contains an apostrophe). Runs: 0 ok train on cpu_ref with
 * every optional part, 1 ok train on cpu_onednn with energy measured, 2 failed, 3 unsupported
 * inference with its model. */
static const char valid_text[] =
    "{'schema': 'xpubench-results', 'schema_version': 1,"
    " 'tool': {'name': 'xpubench', 'version': '0.1.0'},"
    " 'created': '2026-11-21T23:59:00Z',"
    " 'interrupted': false,"
    " 'scenario': {'path': 'configs/conv6.yaml', 'name': 'conv6',"
    "   'sha256': '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',"
    "   'overrides': ['repeats=3']},"
    " 'environment': {'os': 'Linux', 'kernel': '6.1.0', 'cpu': {'model': 'Xeon', 'cores': 2,"
    "   'logical_cpus': 4, 'flags': ['avx2', 'fma']}, 'memory_bytes': 8589934592,"
    "   'compiler': 'GNU 12.2.0', 'libraries': {'oneDNN': '2.7.3'},"
    "   'accelerators': [{'name': 'Tesla T4', 'driver': '535.1'}],"
    "   'plugins': [{'name': 'cpu_ref', 'kind': 'backend', 'version': '0.1.0', 'abi': '1.0',"
    "     'path': 'plugins/backend_cpu_ref.so'}], 'extra': {'anything': [1, {'x': null}]}},"
    " 'runs': ["
    "  {'id': 'conv6-ref', 'status': 'ok',"
    "   'config': {'model': 'conv6', 'variant': 'cifar', 'mode': 'train', 'batch': 64,"
    "     'precision': 'fp32', 'backend': 'cpu_ref', 'fusion': false, 'threads': 2,"
    "     'device': 0, 'warmup': 2, 'min_steps': 10, 'min_time_s': 1.5, 'max_steps': 0,"
    "     'repeats': 3, 'seed': 42, 'data': 'synthetic', 'transfer': 'resident',"
    "     'optimizer': {'kind': 'sgd', 'lr': 0.01, 'momentum': 0.9, 'weight_decay': 0.0,"
    "       'beta1': 0.9, 'beta2': 0.999, 'eps': 1e-08}, 'params': {'dropout': 'false'}},"
    "   'model': {'parameters': 2261578, 'flops_per_sample_forward': 307463168,"
    "     'flops_per_sample_train': 922389504, 'layers': 9},"
    "   'device': {'name': 'host CPU', 'driver': '', 'libraries': '', 'threads': 2,"
    "     'peak_flops': {'fp32': 1.5e11}},"
    "   'metrics': {'timed_steps': 30,"
    "     'throughput': {'median': 1234.5, 'min': 1200.25, 'max': 1250.75, 'unit': 'samples/s'},"
    "     'repeats': [{'steps': 10, 'seconds': 0.52, 'throughput': 1230.0},"
    "       {'steps': 10, 'seconds': 0.51, 'throughput': 1234.5},"
    "       {'steps': 10, 'seconds': 0.5, 'throughput': 1250.75}],"
    "     'step_time_s': {'mean': 0.0519, 'p50': 0.0518, 'p95': 0.0531, 'p99': 0.055,"
    "       'cv': 0.012},"
    "     'flops_per_s': 1.234e11, 'peak_fraction': 0.82,"
    "     'memory': {'host_peak_rss_bytes': 851968000, 'device_bytes_in_use': null,"
    "       'device_peak_bytes': null},"
    "     'energy': {'measured': false, 'source': null, 'joules': null,"
    "       'samples_per_joule': null},"
    "     'loss': {'first': 2.3026, 'last': 2.2914}, 'host_overhead_fraction': 0.01,"
    "     'extra': {'note': 'x'}},"
    "   'verification': {'requested': true, 'verified': true, 'reference': 'cpu_ref',"
    "     'max_rel_error': 0.0, 'message': 'identical'},"
    "   'profile': [{'op': 'CONV2D', 'layer': 'conv1', 'calls': 30, 'seconds': 0.25,"
    "     'fused_into': null}, {'op': 'RELU', 'layer': 'conv1', 'calls': 30, 'seconds': 0.0,"
    "     'fused_into': 'conv1'}],"
    "   'extra': {'k': 'v'}},"
    "  {'id': 'conv6-onednn', 'status': 'ok',"
    "   'config': {'model': 'conv6', 'variant': 'cifar', 'mode': 'train', 'batch': 64,"
    "     'precision': 'fp32', 'backend': 'cpu_onednn', 'fusion': false, 'threads': 2,"
    "     'device': 0, 'warmup': 2, 'min_steps': 10, 'min_time_s': 1.5, 'max_steps': 0,"
    "     'repeats': 1, 'seed': 42, 'data': 'synthetic', 'transfer': 'streamed',"
    "     'optimizer': {'kind': 'adam', 'lr': 0.0002, 'momentum': 0.0, 'weight_decay': 0.0,"
    "       'beta1': 0.5, 'beta2': 0.999, 'eps': 1e-08}, 'params': {}},"
    "   'model': {'parameters': 2261578, 'flops_per_sample_forward': 307463168,"
    "     'flops_per_sample_train': 922389504, 'layers': 9},"
    "   'metrics': {'timed_steps': 10,"
    "     'throughput': {'median': 15250.0, 'min': 15250.0, 'max': 15250.0,"
    "       'unit': 'samples/s'},"
    "     'repeats': [{'steps': 10, 'seconds': 0.042, 'throughput': 15250.0}],"
    "     'step_time_s': {'mean': 0.0042, 'p50': 0.0042, 'p95': 0.0044, 'p99': 0.0045,"
    "       'cv': 0.02},"
    "     'flops_per_s': 1.4e12, 'peak_fraction': null,"
    "     'memory': {'host_peak_rss_bytes': 104857600, 'device_bytes_in_use': 1000,"
    "       'device_peak_bytes': 2000},"
    "     'energy': {'measured': true, 'source': 'rapl', 'joules': 12.5,"
    "       'samples_per_joule': 51.2},"
    "     'loss': {'first': 2.3026, 'last': 2.2913}, 'host_overhead_fraction': 0.05},"
    "   'verification': {'requested': false, 'verified': null, 'reference': '',"
    "     'max_rel_error': null, 'message': ''}},"
    "  {'id': 'vgg16-cuda', 'status': 'failed', 'error': 'cuda: out of device memory',"
    "   'config': {'model': 'vgg16', 'variant': 'imagenet', 'mode': 'train', 'batch': 8,"
    "     'precision': 'bf16-mixed', 'backend': 'cuda', 'fusion': true, 'threads': 0,"
    "     'device': 1, 'warmup': 0, 'min_steps': 0, 'min_time_s': 0, 'max_steps': 5,"
    "     'repeats': 1, 'seed': 0, 'data': 'synthetic', 'transfer': 'resident',"
    "     'params': {}},"
    "   'verification': {'requested': false, 'verified': null, 'reference': '',"
    "     'max_rel_error': null, 'message': ''}},"
    "  {'id': 'resnet-infer', 'status': 'unsupported', 'error': 'precision fp16-mixed',"
    "   'config': {'model': 'resnet18', 'variant': '', 'mode': 'inference', 'batch': 1,"
    "     'precision': 'fp16-mixed', 'backend': 'cpu_ref', 'fusion': true, 'threads': 1,"
    "     'device': 0, 'warmup': 1, 'min_steps': 1, 'min_time_s': 0.5, 'max_steps': 0,"
    "     'repeats': 1, 'seed': 7, 'data': 'synthetic', 'transfer': 'resident',"
    "     'params': {}},"
    "   'model': {'parameters': 11689512, 'flops_per_sample_forward': 1, "
    "     'flops_per_sample_train': 0, 'layers': 21},"
    "   'verification': {'requested': true, 'verified': null, 'reference': 'cpu_ref',"
    "     'max_rel_error': null, 'message': 'not run'}}"
    " ],"
    " 'comparisons': [{'kind': 'backend', 'baseline': 'conv6-ref', 'candidate': 'conv6-onednn',"
    "   'metric': 'throughput', 'speedup': 12.353179424868367}],"
    " 'extra': {'ci': 'yes'}}";

static char *quote(const char *text)
{
    char *s = strdup(text);
    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

static json_t *parse(const char *single_quoted)
{
    char *text = quote(single_quoted);
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!doc)
        fail_msg("test JSON does not parse: %d:%d: %s", jerr.line, jerr.column, jerr.text);
    free(text);
    return doc;
}

static json_t *valid_doc(void)
{
    return parse(valid_text);
}

/* valid_doc() as schema version 2: what every run and comparison of version 2 has besides
 * version 1's. */
static json_t *valid_doc_v2(void)
{
    json_t *doc = valid_doc();
    json_object_set_new(doc, "schema_version", json_integer(2));
    json_object_set_new(json_object_get(doc, "scenario"), "baseline", json_null());
    json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *run = json_array_get(runs, i);
        json_object_set_new(json_object_get(run, "config"), "allow_emulated", json_false());
        json_t *metrics = json_object_get(run, "metrics");
        json_t *tp = json_object_get(metrics, "throughput");
        if (metrics) {
            json_t *energy = json_object_get(metrics, "energy");
            int measured = json_is_true(json_object_get(energy, "measured"));
            json_object_set_new(energy, "watts", measured ? json_real(150) : json_null());
            json_object_set_new(energy, "reason",
                                measured ? json_null() : json_string("no meter: test"));
            json_object_set_new(json_object_get(metrics, "memory"), "host_run_peak_bytes",
                                json_integer(1 << 20));
            json_object_set_new(json_object_get(metrics, "loss"), "series",
                                parse("[{'step': 5, 'loss': 2.3}, {'step': 10, 'loss': 2.29}]"));
            json_object_set_new(metrics, "interference",
                                parse("{'other_cpu_share': 0.01, 'steal_share': 0.0, "
                                      "'load_1m': 1.5, 'flagged': false}"));
        }
        if (tp) {
            double r[XPB_RESULTS_MAX_REPEATS];
            xpb_arena arena = {0};
            struct xpb_results_run view;
            assert_int_equal(xpb_results_view_run(&view, &arena, run, 2), XPB_OK);
            size_t n = xpb_results_repeat_throughputs(r, XPB_RESULTS_MAX_REPEATS, &view);
            xpb_arena_free(&arena);
            xpb_interval ci;
            assert_int_equal(xpb_interval_geomean(&ci, r, n, 0.95), 0);
            json_object_set_new(tp, "ci95_low", n > 1 ? json_real(ci.low) : json_null());
            json_object_set_new(tp, "ci95_high", n > 1 ? json_real(ci.high) : json_null());
        }
        json_t *device = json_object_get(run, "device");
        if (!device)
            continue;
        json_object_set_new(device, "kind", json_string(i == 0 ? "cpu" : "gpu"));
        json_object_set_new(device, "precisions",
                            parse("{'fp32': 'native', 'bf16-mixed': 'emulated'}"));
        json_object_set_new(device, "capabilities", parse("['fusion', 'threads']"));
    }
    /* the listed comparison pairs runs with one and three repeats: no interval */
    json_t *cmps = json_object_get(doc, "comparisons");
    for (size_t i = 0; i < json_array_size(cmps); i++) {
        json_t *c = json_array_get(cmps, i);
        json_object_set_new(c, "ci95_low", json_null());
        json_object_set_new(c, "ci95_high", json_null());
        json_object_set_new(c, "significant", json_false());
    }
    return doc;
}

/* ---- paths such as "runs[0].metrics.throughput.median" ---- */

/* The container holding the last segment of `path`, with that segment in *key or *index
 * (*key is "" for an index). NULL when the path does not exist. */
static json_t *parent_of(json_t *root, const char *path, char *key, size_t *index)
{
    json_t *cur = root, *parent = NULL;
    const char *p = path;
    while (*p) {
        parent = cur;
        if (*p == '[') {
            char *end;
            *index = strtoul(p + 1, &end, 10);
            key[0] = '\0';
            p = end + 1;
            cur = json_array_get(cur, *index);
        } else {
            if (*p == '.')
                p++;
            size_t n = strcspn(p, ".[");
            memcpy(key, p, n);
            key[n] = '\0';
            p += n;
            cur = json_object_get(cur, key);
        }
        if (!cur && *p)
            return NULL;
    }
    return parent;
}

static void set_path(json_t *root, const char *path, json_t *value)
{
    char key[256];
    size_t index = 0;
    json_t *parent = parent_of(root, path, key, &index);
    if (!parent)
        fail_msg("no such path %s", path);
    if (key[0])
        assert_int_equal(json_object_set_new(parent, key, value), 0);
    else
        assert_int_equal(json_array_set_new(parent, index, value), 0);
}

static void delete_path(json_t *root, const char *path)
{
    char key[256];
    size_t index = 0;
    json_t *parent = parent_of(root, path, key, &index);
    if (!parent || !key[0])
        fail_msg("cannot delete %s", path);
    assert_int_equal(json_object_del(parent, key), 0);
}

/* Asserts that doc fails validation with a message that starts with "<path>: ". */
static void expect_invalid_at(const json_t *doc, const char *path)
{
    xpb_err err = {{0}};
    xpb_status st = xpb_results_validate(doc, &err);
    size_t n = strlen(path);
    if (st != XPB_PARSE_ERROR || strncmp(err.msg, path, n) != 0 || err.msg[n] != ':')
        fail_msg("expected a failure at %s, got status %d: %s", path, st, err.msg);
}

static void expect_valid(const json_t *doc, const char *what)
{
    xpb_err err = {{0}};
    if (xpb_results_validate(doc, &err) != XPB_OK)
        fail_msg("%s: expected valid, got: %s", what, err.msg);
}

/* Every path of the document (object members and array elements), not inside "extra". */
struct path_list {
    char (*paths)[160];
    size_t n, cap;
};

static void collect(struct path_list *list, const json_t *v, const char *prefix)
{
    char path[160];
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach((json_t *)v, key, child)
        {
            snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", key);
            assert_true(list->n < list->cap);
            strcpy(list->paths[list->n++], path);
            if (strcmp(key, "extra") != 0)
                collect(list, child, path);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(path, sizeof path, "%s[%zu]", prefix, i);
            assert_true(list->n < list->cap);
            strcpy(list->paths[list->n++], path);
            collect(list, json_array_get(v, i), path);
        }
    }
}

static struct path_list all_paths(const json_t *doc)
{
    struct path_list list = {calloc(2048, sizeof *list.paths), 0, 2048};
    assert_non_null(list.paths);
    collect(&list, doc, "");
    return list;
}

/* ---- tests ---- */

static void test_valid_document(void **state)
{
    (void)state;
    json_t *doc = valid_doc();
    expect_valid(doc, "the valid document");
    json_decref(doc);
}

/* Deleting any key makes the document invalid at that key, except the optional ones. */
static void test_every_required_key(void **state)
{
    (void)state;
    static const char *const optional[] = {
        "interrupted",
        "extra",
        "environment.extra",
        "environment.libraries.oneDNN",
        "runs[0].config.optimizer",
        "runs[0].config.params.dropout",
        "runs[0].device",
        "runs[0].device.peak_flops.fp32",
        "runs[0].metrics.extra",
        "runs[0].profile",
        "runs[0].extra",
        "runs[1].config.optimizer",
        "runs[3].model",
    };
    json_t *doc = valid_doc();
    struct path_list list = all_paths(doc);
    size_t deleted = 0, required = 0;
    for (size_t i = 0; i < list.n; i++) {
        const char *path = list.paths[i];
        if (path[strlen(path) - 1] == ']')
            continue; /* array elements are not keys */
        json_t *copy = json_deep_copy(doc);
        delete_path(copy, path);
        int is_optional = 0;
        for (size_t k = 0; k < sizeof optional / sizeof optional[0]; k++)
            is_optional |= strcmp(path, optional[k]) == 0;
        if (is_optional) {
            expect_valid(copy, path);
        } else {
            expect_invalid_at(copy, path);
            required++;
        }
        deleted++;
        json_decref(copy);
    }
    assert_true(deleted > 150);
    assert_true(required > 140);
    free(list.paths);
    json_decref(doc);
}

/* Replacing any value by one of another JSON type makes the document invalid there. */
static void test_every_type(void **state)
{
    (void)state;
    json_t *doc = valid_doc();
    struct path_list list = all_paths(doc);
    for (size_t i = 0; i < list.n; i++) {
        const char *path = list.paths[i];
        json_t *copy = json_deep_copy(doc);
        char key[256];
        size_t index = 0;
        json_t *parent = parent_of(copy, path, key, &index);
        json_t *old = key[0] ? json_object_get(parent, key) : json_array_get(parent, index);
        json_t *wrong;
        switch (json_typeof(old)) {
        case JSON_STRING:
            wrong = json_integer(7);
            break;
        case JSON_INTEGER:
        case JSON_REAL:
        case JSON_TRUE:
        case JSON_FALSE:
            wrong = json_string("x");
            break;
        case JSON_NULL:
        case JSON_OBJECT:
            wrong = json_array();
            break;
        default:
            wrong = json_object();
            break;
        }
        set_path(copy, path, wrong);
        expect_invalid_at(copy, path);
        json_decref(copy);
    }
    assert_true(list.n > 200);
    free(list.paths);
    json_decref(doc);
}

struct bad_value {
    const char *path;
    const char *json;     /* single-quoted */
    const char *error_at; /* where the message must point; NULL: `path` */
    const char *says;     /* a substring of the message, or NULL */
};

static void test_bad_values(void **state)
{
    (void)state;
    static const struct bad_value cases[] = {
        {"schema", "'other'", NULL, "not an xpubench results document"},
        {"schema_version", "4", NULL,
         "version 4 is not supported (this build reads versions 1 to 3)"},
        {"schema_version", "0", NULL, "version 0 is not supported"},
        {"schema_version", "1.0", NULL, "not supported"},
        {"tool.name", "'other'", NULL, "expected \"xpubench\", found \"other\""},
        {"tool.version", "''", NULL, "non-empty string"},
        {"created", "'2026-11-21 23:59:00'", NULL, "YYYY-MM-DDTHH:MM:SSZ"},
        {"created", "'2026-02-29T00:00:00Z'", NULL, NULL},
        {"created", "'2026-13-01T00:00:00Z'", NULL, NULL},
        {"created", "'2026-11-21T23:59:00+01:00'", NULL, NULL},
        {"scenario.sha256", "'0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef'",
         NULL, "64 lower-case hex"},
        {"scenario.sha256", "'0123'", NULL, NULL},
        {"environment.cpu.cores", "0", NULL, "expected an integer >= 1, found 0"},
        {"environment.memory_bytes", "-1", NULL, ">= 0"},
        {"environment.plugins[0].kind", "'codec'", NULL, "one of \"backend\", \"model\""},
        {"environment.plugins[0].abi", "'1'", NULL, "<major>.<minor>"},
        {"environment.plugins[0].abi", "'1.0.0'", NULL, NULL},
        {"runs[0].status", "'done'", NULL, "found \"done\""},
        {"runs[0].config.mode", "'training'", NULL, NULL},
        {"runs[0].config.precision", "'fp64'", NULL, "\"fp32\", \"tf32\""},
        {"runs[0].config.transfer", "'copied'", NULL, NULL},
        {"runs[0].config.optimizer.kind", "'rmsprop'", NULL, NULL},
        {"runs[0].config.optimizer.beta2", "1.5", NULL, "in [0, 1]"},
        {"runs[0].config.batch", "0", NULL, ">= 1"},
        {"runs[0].config.batch", "64.0", NULL, "expected an integer >= 1, found number 64"},
        {"runs[0].config.repeats", "0", NULL, NULL},
        {"runs[0].config.seed", "-1", NULL, NULL},
        {"runs[0].config.model", "''", NULL, NULL},
        {"runs[0].config.params.dropout", "false", NULL, "expected a string, found false"},
        {"runs[0].id", "''", NULL, NULL},
        {"runs[0].device.peak_flops.fp32", "-1", NULL, NULL},
        {"runs[0].device.peak_flops.int8", "1.0", NULL, "precision names"},
        {"runs[0].metrics.throughput.median", "'fast'", NULL,
         "expected a number >= 0, found string"},
        {"runs[0].metrics.throughput.median", "-1.0", NULL, NULL},
        {"runs[0].metrics.throughput.unit", "'samples/min'", NULL, NULL},
        {"runs[0].metrics.host_overhead_fraction", "1.5", NULL, NULL},
        {"runs[0].metrics.memory.device_peak_bytes", "1.5", NULL, NULL},
        {"runs[0].metrics.peak_fraction", "-0.5", NULL, NULL},
        {"runs[0].profile[0].calls", "-3", NULL, NULL},
        {"runs[0].profile[0].op", "''", NULL, NULL},
        {"comparisons[0].kind", "'latency'", NULL, NULL},
        {"comparisons[0].metric", "'latency'", NULL, NULL},
        {"comparisons[0].speedup", "0", NULL, "> 0"},
        {"interrupted", "'no'", NULL, "true or false"},
        {"extra", "[1]", NULL, "expected an object"},
        {"runs[1].metrics.extra", "'x'", NULL, NULL},
        /* unknown keys */
        {"bogus", "1", NULL, "unknown key"},
        {"runs[0].config.batch_size", "64", NULL, "unknown key"},
        {"runs[0].metrics.throughput.mean", "1.0", NULL, NULL},
        {"environment.cpu.sockets", "1", NULL, NULL},
        /* rules across fields */
        {"runs[0].error", "'oops'", NULL, "must be absent when status is \"ok\""},
        {"runs[0].status", "'failed'", "runs[0].error", "required when status is \"failed\""},
        {"runs[3].config.optimizer",
         "{'kind': 'sgd', 'lr': 0.01, 'momentum': 0.9, 'weight_decay': 0, 'beta1': 0.9, "
         "'beta2': 0.999, 'eps': 1e-8}",
         NULL, "only allowed when mode is \"train\""},
        {"runs[0].metrics.throughput.min", "1240.0", "runs[0].metrics.throughput",
         "min <= median <= max"},
        {"runs[0].metrics.step_time_s.p99", "0.05", "runs[0].metrics.step_time_s", NULL},
        {"runs[0].config.repeats", "2", "runs[0].metrics.repeats", "config.repeats is 2"},
        {"runs[0].metrics.energy.joules", "3.0", NULL, "must be null when measured is false"},
        {"runs[1].metrics.energy.source", "null", NULL, "must not be null"},
        {"runs[1].verification.verified", "false", NULL, "must be null when requested is false"},
        {"runs[1].id", "'conv6-ref'", NULL, "duplicate run id \"conv6-ref\" (also runs[0].id)"},
        {"comparisons[0].baseline", "'nope'", NULL, "no run has id \"nope\""},
        {"comparisons[0].candidate", "'conv6-ref'", "comparisons[0]", "same run"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = valid_doc();
        set_path(doc, cases[i].path, parse(cases[i].json));
        expect_invalid_at(doc, cases[i].error_at ? cases[i].error_at : cases[i].path);
        if (cases[i].says) {
            xpb_err err = {{0}};
            xpb_results_validate(doc, &err);
            if (!strstr(err.msg, cases[i].says))
                fail_msg("%s: message \"%s\" lacks \"%s\"", cases[i].path, err.msg, cases[i].says);
        }
        json_decref(doc);
    }
}

/* Values at the edges of what is allowed. */
static void test_good_values(void **state)
{
    (void)state;
    static const struct bad_value cases[] = {
        {"created", "'2028-02-29T00:00:00Z'", NULL, NULL},
        {"runs[0].metrics.throughput.median", "1250", NULL, NULL}, /* an integer is a number */
        {"runs[0].metrics.peak_fraction", "1.7e308", NULL, NULL},
        {"runs[0].metrics.loss.first", "-3.5", NULL, NULL},
        {"runs[0].device.peak_flops.bf16-mixed", "1e15", NULL, NULL},
        {"runs[0].config.seed", "9223372036854775807", NULL, NULL},
        {"runs[1].status", "'interrupted'", NULL, NULL}, /* ... still needs an error: */
        {"environment.plugins[0].abi", "'1.12'", NULL, NULL},
        {"runs[2].extra", "{'a': {'b': [1, 2.5, null, 'x']}}", NULL, NULL},
        {"scenario.overrides", "[]", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = valid_doc();
        set_path(doc, cases[i].path, parse(cases[i].json));
        if (strcmp(cases[i].path, "runs[1].status") == 0) {
            expect_invalid_at(doc, "runs[1].error");
            set_path(doc, "runs[1].error", json_string("interrupted by SIGINT"));
            /* an unfinished run may have fewer repeats than configured */
            set_path(doc, "runs[1].config.repeats", json_integer(3));
        }
        expect_valid(doc, cases[i].path);
        json_decref(doc);
    }
}

static char *make_temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char templ[512];
    snprintf(templ, sizeof templ, "%s/xpb_test_results_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *dir = mkdtemp(templ);
    assert_non_null(dir);
    return strdup(dir);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024];
    snprintf(path, sizeof path, "%s/out/sub/results.json", dir);

    /* Insert "scenario" last: the file still shows the top-level keys in schema order. */
    json_t *doc = valid_doc();
    json_t *scenario = json_incref(json_object_get(doc, "scenario"));
    json_object_del(doc, "scenario");
    json_object_set_new(doc, "scenario", scenario);

    xpb_err err = {{0}};
    assert_int_equal(xpb_results_write(doc, path, &err), XPB_OK);
    json_t *back = NULL;
    if (xpb_results_load(&back, path, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    assert_true(json_equal(doc, back));
    /* reals keep their exact value, integers stay integers */
    assert_true(json_is_real(
        json_object_get(json_array_get(json_object_get(back, "comparisons"), 0), "speedup")));
    assert_true(
        json_real_value(json_object_get(json_array_get(json_object_get(back, "comparisons"), 0),
                                        "speedup")) == 12.353179424868367);

    size_t len;
    char *text = read_all(path, &len);
    assert_true(len > 100);
    assert_int_equal(text[len - 1], '\n');
    assert_int_equal(
        strncmp(text, "{\n  \"schema\": \"xpubench-results\",\n  \"schema_version\": 1,",
                strlen("{\n  \"schema\": \"xpubench-results\",\n  \"schema_version\": 1,")),
        0);
    char *scen = strstr(text, "\"scenario\"");
    char *env = strstr(text, "\"environment\"");
    assert_non_null(scen);
    assert_non_null(env);
    assert_true(scen < env);
    free(text);

    /* Only the results file, no temporary leftovers. */
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/out/sub", dir);
    assert_int_equal(count_entries(sub), 1);

    /* Writing again replaces the file; an invalid document writes nothing. */
    set_path(doc, "runs[0].config.batch", json_integer(0));
    assert_int_equal(xpb_results_write(doc, path, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].config.batch"));
    assert_non_null(strstr(err.msg, path));
    json_t *still = NULL;
    assert_int_equal(xpb_results_load(&still, path, &err), XPB_OK);
    assert_true(json_equal(still, back));
    char other[1024];
    snprintf(other, sizeof other, "%s/never.json", dir);
    assert_int_equal(xpb_results_write(doc, other, &err), XPB_PARSE_ERROR);
    assert_int_equal(access(other, F_OK), -1);

    json_decref(still);
    json_decref(back);
    json_decref(doc);
    remove_tree(dir);
    free(dir);
}

static void test_new_document(void **state)
{
    (void)state;
    json_t *doc = xpb_results_new();
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), "xpubench-results");
    assert_int_equal(json_integer_value(json_object_get(doc, "schema_version")), 3);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "tool"), "name")),
                        "xpubench");
    const char *created = json_string_value(json_object_get(doc, "created"));
    assert_non_null(created);
    assert_int_equal(strlen(created), 20);
    assert_int_equal(created[10], 'T');
    assert_int_equal(created[19], 'Z');
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 0);
    assert_true(json_is_array(json_object_get(doc, "comparisons")));
    assert_true(json_is_object(json_object_get(doc, "environment")));

    /* Not valid until the runner fills in the scenario and the environment. */
    expect_invalid_at(doc, "scenario");
    json_t *valid = valid_doc_v2();
    json_object_set(doc, "scenario", json_object_get(valid, "scenario"));
    expect_invalid_at(doc, "environment.os");
    json_object_set(doc, "environment", json_object_get(valid, "environment"));
    expect_valid(doc, "a new document with scenario and environment");
    json_decref(valid);
    json_decref(doc);
}

/* Loads `content` from a file and expects failure with `says` in the message. */
static void expect_load_failure(const char *dir, const char *content, size_t len, xpb_status status,
                                const char *says)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    write_text(path, content, len == (size_t)-1 ? strlen(content) : len);
    json_t *doc = (json_t *)1;
    xpb_err err = {{0}};
    xpb_status st = xpb_results_load(&doc, path, &err);
    if (st != status || doc != NULL || strncmp(err.msg, path, strlen(path)) != 0 ||
        !strstr(err.msg, says))
        fail_msg("expected status %d with \"%s\", got %d: %s", status, says, st, err.msg);
}

static void test_load_errors(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[1024];

    expect_load_failure(dir, "", 0, XPB_PARSE_ERROR, "empty file");
    expect_load_failure(dir, "hello", (size_t)-1, XPB_PARSE_ERROR, "bad.json:1:");
    expect_load_failure(dir, "[1, 2]", (size_t)-1, XPB_PARSE_ERROR, "document: expected an object");
    expect_load_failure(dir, "{\"schema\": \"xpubench-results\",\n \"schema\": 1}", (size_t)-1,
                        XPB_PARSE_ERROR, "bad.json:2:");
    expect_load_failure(dir, "{\"a\": 1e999}", (size_t)-1, XPB_PARSE_ERROR, "real number overflow");
    expect_load_failure(dir, "{\"a\": 99999999999999999999}", (size_t)-1, XPB_PARSE_ERROR,
                        "too big integer");
    expect_load_failure(dir, "{\"schema\": \"xpubench-results\", \"schema_version\": 4}",
                        (size_t)-1, XPB_PARSE_ERROR, "bad.json: schema_version: version 4");

    /* A valid document cut in half: the parser's position is in the message. */
    json_t *doc = valid_doc();
    char *text = json_dumps(doc, JSON_INDENT(2));
    size_t half = strlen(text) / 2;
    expect_load_failure(dir, text, half, XPB_PARSE_ERROR, "bad.json:");
    json_error_t jerr;
    json_t *cut = json_loadb(text, half, 0, &jerr);
    assert_null(cut);
    char where[64];
    snprintf(where, sizeof where, "bad.json:%d:%d:", jerr.line, jerr.column);
    expect_load_failure(dir, text, half, XPB_PARSE_ERROR, where);
    assert_true(jerr.line > 10);

    /* Valid JSON, invalid document: the schema path follows the file name. */
    set_path(doc, "runs[2].config.batch", json_string("eight"));
    free(text);
    text = json_dumps(doc, 0);
    expect_load_failure(dir, text, strlen(text), XPB_PARSE_ERROR,
                        "bad.json: runs[2].config.batch: expected an integer >= 1, found string");
    free(text);
    json_decref(doc);

    /* Larger than 64 MiB: refused before reading (a sparse file). */
    snprintf(path, sizeof path, "%s/huge.json", dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)XPB_RESULTS_MAX_BYTES + 1), 0);
    close(fd);
    json_t *out = (json_t *)1;
    xpb_err err = {{0}};
    assert_int_equal(xpb_results_load(&out, path, &err), XPB_PARSE_ERROR);
    assert_null(out);
    assert_non_null(strstr(err.msg, "64 MiB"));

    /* Missing file and directory. */
    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_int_equal(xpb_results_load(&out, path, &err), XPB_IO_ERROR);
    assert_non_null(strstr(err.msg, "missing.json: cannot open"));
    assert_int_equal(xpb_results_load(&out, dir, &err), XPB_IO_ERROR);

    remove_tree(dir);
    free(dir);
}

static char *table_of(const json_t *doc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(xpb_results_print_table(f, doc), XPB_OK);
    fclose(f);
    /* A copy: gcc 12 at -O3 mistakes the stream's buffer for the local pointer's storage. */
    char *copy = strdup(buf);
    free(buf);
    return copy;
}

/* Whether the table line of run `id` contains `text`. */
static int row_has(const char *table, const char *id, const char *text)
{
    char key[128], line[1024];
    snprintf(key, sizeof key, "\n%s ", id);
    const char *row = strstr(table, key);
    if (!row)
        return 0;
    size_t n = strcspn(row + 1, "\n");
    if (n >= sizeof line)
        n = sizeof line - 1;
    memcpy(line, row + 1, n);
    line[n] = '\0';
    return strstr(line, text) != NULL;
}

static void test_table(void **state)
{
    (void)state;
    json_t *doc = valid_doc();
    char *out = table_of(doc);

    /* The header names every column, in order. */
    static const char *const columns[] = {
        "id",    "status",  "model/variant",       "mode",    "batch",  "precision", "backend",
        "fused", "threads", "samples/s (min-max)", "speedup", "p50 ms", "p95 ms",    "p99 ms",
        "cv %",  "GFLOP/s", "loss first->last",    "RSS MiB",
    };
    const char *p = out;
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++) {
        const char *q = strstr(p, columns[i]);
        if (!q || q > strchr(out, '\n'))
            fail_msg("header lacks \"%s\" in order: %s", columns[i], out);
        p = q + strlen(columns[i]);
    }

    /* Row of run 0, with the values formatted as documented. */
    const char *row = strstr(out, "\nconv6-ref ");
    assert_non_null(row);
    char line[1024];
    size_t n = strcspn(row + 1, "\n");
    memcpy(line, row + 1, n);
    line[n] = '\0';
    static const char *const cells[] = {
        "conv6-ref", "ok",    "conv6/cifar",      "train", "64",    "fp32",  "cpu_ref",
        "no",        "2",     "1234 (1200-1251)", "base",  "51.80", "53.10", "55.00",
        "1.200",     "123.4", "2.303->2.291",     "812.5",
    };
    p = line;
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        const char *q = strstr(p, cells[i]);
        if (!q)
            fail_msg("row lacks \"%s\" in order: %s", cells[i], line);
        p = q + strlen(cells[i]);
    }
    /* columns line up: "status" starts where "ok" does */
    assert_int_equal(strstr(out, "status") - out, strstr(line, "ok") - line);

    assert_non_null(strstr(out, "input batches: mixed"));
    /* the candidate of the backend comparison shows its speedup in its row */
    assert_true(row_has(out, "conv6-onednn", " 12.35x "));
    assert_non_null(strstr(out, "comparisons (speedup = candidate throughput / baseline"));
    assert_non_null(strstr(out, "  backend  conv6-onednn  conv6-ref  12.35x\n"));
    assert_non_null(strstr(out, "runs that did not finish:\n"
                                "  vgg16-cuda [failed]: cuda: out of device memory\n"
                                "  resnet-infer [unsupported]: precision fp16-mixed\n"));
    /* unfinished runs show dashes, a model without variant shows the model alone */
    row = strstr(out, "\nvgg16-cuda ");
    assert_non_null(row);
    n = strcspn(row + 1, "\n");
    memcpy(line, row + 1, n);
    line[n] = '\0';
    assert_non_null(strstr(line, " vgg16/imagenet "));
    assert_non_null(strstr(line, " auto "));
    assert_non_null(strstr(line, " -  "));
    assert_non_null(strstr(out, "resnet18 "));
    assert_null(strstr(out, "resnet18/"));
    /* nothing ran and the device is unknown: the run neither fused nor not */
    assert_false(row_has(out, "resnet-infer", " yes "));
    assert_false(row_has(out, "resnet-infer", " no "));
    free(out);

    /* A comparison with an interval shows it, and says when it is no real difference. */
    set_path(doc, "comparisons[0].ci95_low", json_real(0.97));
    set_path(doc, "comparisons[0].ci95_high", json_real(25.5));
    set_path(doc, "comparisons[0].significant", json_false());
    out = table_of(doc);
    assert_non_null(strstr(out, "12.35x (0.97-25.50, no significant difference)\n"));
    free(out);
    set_path(doc, "comparisons[0].ci95_low", json_real(11.9));
    set_path(doc, "comparisons[0].significant", json_true());
    out = table_of(doc);
    assert_non_null(strstr(out, "12.35x (11.90-25.50)\n"));
    free(out);

    /* A backend that says it does not fuse shows "n/a" under fused, whatever was asked. */
    set_path(doc, "runs[0].device.capabilities", parse("['threads']"));
    out = table_of(doc);
    assert_true(row_has(out, "conv6-ref", " n/a "));
    assert_false(row_has(out, "conv6-ref", " no "));
    free(out);

    /* A document that is not valid still prints; an empty one says so. */
    json_t *broken = parse("{'runs': [{'id': 5, 'config': []}], 'comparisons': 3}");
    out = table_of(broken);
    assert_non_null(strstr(out, "-  -"));
    free(out);
    json_decref(broken);
    json_t *empty = xpb_results_new();
    out = table_of(empty);
    assert_string_equal(out, "no runs\n");
    free(out);
    json_decref(empty);
    assert_int_equal(xpb_results_print_table(stdout, NULL), XPB_INVALID_ARGUMENT);
    json_decref(doc);
}

/* A finished (or failed) run with the given axes and everything else fixed. */
static json_t *make_run(const char *id, const char *backend, int fusion, const char *precision,
                        int batch, int threads, const char *status, double throughput)
{
    json_t *run = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:i, s:s, s:s, s:b, s:i, s:i, s:i, s:i, s:f, s:i, s:i, "
        "s:i, s:s, s:s, s:{}}}",
        "id", id, "status", status, "config", "model", "conv6", "variant", "cifar", "mode", "train",
        "batch", batch, "precision", precision, "backend", backend, "fusion", fusion, "threads",
        threads, "device", 0, "warmup", 1, "min_steps", 1, "min_time_s", 0.0, "max_steps", 0,
        "repeats", 1, "seed", 1, "data", "synthetic", "transfer", "resident", "params");
    assert_non_null(run);
    if (strcmp(status, "ok") == 0) {
        json_t *metrics = json_pack("{s:{s:f, s:f, s:f, s:s}}", "throughput", "median", throughput,
                                    "min", throughput, "max", throughput, "unit", "samples/s");
        assert_non_null(metrics);
        json_object_set_new(run, "metrics", metrics);
    } else {
        json_object_set_new(run, "error", json_string("failed"));
    }
    return run;
}

static void test_comparisons(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:[]}", "runs");
    json_t *runs = json_object_get(doc, "runs");
    json_array_append_new(runs, make_run("r0", "cpu_ref", 0, "fp32", 64, 2, "ok", 100));
    json_array_append_new(runs, make_run("r1", "cpu_onednn", 0, "fp32", 64, 2, "ok", 400));
    json_array_append_new(runs, make_run("r2", "cpu_onednn", 1, "fp32", 64, 2, "ok", 500));
    json_array_append_new(runs, make_run("r3", "cpu_onednn", 1, "bf16-mixed", 64, 2, "ok", 1000));
    json_array_append_new(runs, make_run("r4", "cpu_ref", 1, "fp32", 64, 2, "ok", 110));
    json_array_append_new(runs, make_run("r5", "cpu_onednn", 0, "tf32", 64, 2, "ok", 600));
    json_array_append_new(runs, make_run("r6", "cpu_onednn", 0, "fp32", 128, 2, "ok", 900));
    json_array_append_new(runs, make_run("r7", "cuda", 0, "fp32", 64, 2, "failed", 0));
    json_array_append_new(runs, make_run("r8", "cpu_onednn", 0, "fp32", 64, 4, "ok", 700));
    json_array_append_new(runs, make_run("r9", "cuda", 0, "fp32", 64, 2, "ok", 8000));
    json_array_append_new(runs, make_run("r10", "cuda", 0, "bf16-mixed", 64, 2, "ok", 0));
    /* r11 equals r1 but for an optimizer setting: no pair with anything */
    json_t *r11 = make_run("r11", "cpu_ref", 0, "fp32", 64, 2, "ok", 50);
    json_object_set_new(json_object_get(r11, "config"), "seed", json_integer(2));
    json_array_append_new(runs, r11);
    /* r12 equals r2 but for "extra", which does not count */
    json_t *r12 = make_run("r12", "cpu_onednn", 1, "fp32", 64, 2, "ok", 300);
    json_object_set_new(json_object_get(r12, "config"), "extra", json_pack("{s:i}", "x", 1));
    json_array_append_new(runs, r12);

    struct expected {
        const char *kind, *baseline, *candidate;
        double speedup;
    } want[] = {
        {"backend", "r0", "r1", 4.0},
        {"fusion", "r1", "r2", 1.25},
        {"backend", "r4", "r2", 500.0 / 110},
        {"precision", "r2", "r3", 2.0},
        {"precision", "r12", "r3", 1000.0 / 300}, /* r12 is r2 but for config.extra */
        {"fusion", "r0", "r4", 1.1},
        {"precision", "r1", "r5", 1.5},
        {"backend", "r0", "r9", 80.0},
        {"fusion", "r1", "r12", 0.75},
        {"backend", "r4", "r12", 300.0 / 110},
    };
    for (int pass = 0; pass < 2; pass++) { /* the second pass proves it idempotent */
        assert_int_equal(xpb_results_add_comparisons(doc), XPB_OK);
        const json_t *got = json_object_get(doc, "comparisons");
        size_t n_want = sizeof want / sizeof want[0];
        if (json_array_size(got) != n_want) {
            char *dump = json_dumps(got, 0);
            fail_msg("expected %zu comparisons, got %s", n_want, dump);
        }
        for (size_t i = 0; i < n_want; i++) {
            const json_t *c = json_array_get(got, i);
            assert_string_equal(json_string_value(json_object_get(c, "kind")), want[i].kind);
            assert_string_equal(json_string_value(json_object_get(c, "baseline")),
                                want[i].baseline);
            assert_string_equal(json_string_value(json_object_get(c, "candidate")),
                                want[i].candidate);
            assert_string_equal(json_string_value(json_object_get(c, "metric")), "throughput");
            double s = json_real_value(json_object_get(c, "speedup"));
            assert_true(fabs(s - want[i].speedup) <= 1e-12 * want[i].speedup);
        }
    }

    /* A backend whose device says it does not fuse gets no fusion comparison. */
    json_t *nofuse = json_pack("{s:[]}", "runs");
    json_t *nruns = json_object_get(nofuse, "runs");
    json_array_append_new(nruns, make_run("n0", "cpu_ref", 0, "fp32", 64, 2, "ok", 100));
    json_array_append_new(nruns, make_run("n1", "cpu_ref", 1, "fp32", 64, 2, "ok", 101));
    for (size_t i = 0; i < 2; i++)
        json_object_set_new(json_array_get(nruns, i), "device",
                            json_pack("{s:[s]}", "capabilities", "threads"));
    assert_int_equal(xpb_results_add_comparisons(nofuse), XPB_OK);
    assert_int_equal(json_array_size(json_object_get(nofuse, "comparisons")), 0);
    json_decref(nofuse);

    /* No runs: invalid argument; no pairs: an empty list. */
    json_t *none = json_object();
    assert_int_equal(xpb_results_add_comparisons(none), XPB_INVALID_ARGUMENT);
    json_object_set_new(none, "runs", json_array());
    assert_int_equal(xpb_results_add_comparisons(none), XPB_OK);
    assert_int_equal(json_array_size(json_object_get(none, "comparisons")), 0);
    json_decref(none);
    json_decref(doc);

    /* The derived comparisons of the valid document are the one it lists. */
    doc = valid_doc();
    json_t *listed = json_deep_copy(json_object_get(doc, "comparisons"));
    set_path(doc, "runs[1].config.transfer", json_string("resident"));
    set_path(doc, "runs[1].config.repeats", json_integer(3));
    set_path(doc, "runs[1].config.optimizer",
             json_deep_copy(json_object_get(
                 json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "config"),
                 "optimizer")));
    set_path(doc, "runs[1].config.params", parse("{'dropout': 'false'}"));
    json_object_set_new(doc, "comparisons", json_array());
    assert_int_equal(xpb_results_add_comparisons(doc), XPB_OK);
    const json_t *got = json_array_get(json_object_get(doc, "comparisons"), 0);
    assert_int_equal(json_array_size(json_object_get(doc, "comparisons")), 1);
    assert_string_equal(json_string_value(json_object_get(got, "baseline")), "conv6-ref");
    /* the ratio of geometric mean repeat throughputs (run 1 has one repeat: no interval) */
    double gm = cbrt(1230.0 * 1234.5 * 1250.75);
    assert_true(fabs(json_real_value(json_object_get(got, "speedup")) - 15250.0 / gm) < 1e-9);
    (void)listed;
    json_decref(listed);
    json_decref(doc);
}

/* A run of make_run() whose device says what kind it is, with repeats for intervals. */
static json_t *make_kind_run(const char *id, const char *backend, const char *kind, double tp)
{
    json_t *run = make_run(id, backend, 0, "fp32", 64, 2, "ok", tp);
    json_object_set_new(run, "device", json_pack("{s:s}", "kind", kind));
    json_object_set_new(json_object_get(run, "metrics"), "repeats",
                        json_pack("[{s:f}, {s:f}, {s:f}]", "throughput", tp * 0.99, "throughput",
                                  tp, "throughput", tp * 1.01));
    return run;
}

/* The backend baseline: the scenario's, else the fastest CPU run; with intervals. */
static void test_comparison_baseline(void **state)
{
    (void)state;
    for (int named = 0; named < 2; named++) {
        json_t *doc = json_pack("{s:i, s:{s:o}, s:[]}", "schema_version", 2, "scenario", "baseline",
                                named ? json_string("cpu_ref") : json_null(), "runs");
        json_t *runs = json_object_get(doc, "runs");
        json_array_append_new(runs, make_kind_run("r0", "cpu_ref", "cpu", 100));
        json_array_append_new(runs, make_kind_run("r1", "cpu_onednn", "cpu", 400));
        json_array_append_new(runs, make_kind_run("r2", "cuda", "gpu", 8000));
        assert_int_equal(xpb_results_add_comparisons(doc), XPB_OK);
        const json_t *got = json_object_get(doc, "comparisons");
        assert_int_equal(json_array_size(got), 2);
        /* default: the fastest CPU backend (cpu_onednn); named: the reference */
        static const char *const want[2][2][2] = {{{"r1", "r0"}, {"r1", "r2"}},
                                                  {{"r0", "r1"}, {"r0", "r2"}}};
        static const double speedup[2][2] = {{0.25, 20}, {4, 80}};
        for (size_t i = 0; i < 2; i++) {
            const json_t *c = json_array_get(got, i);
            assert_string_equal(json_string_value(json_object_get(c, "baseline")),
                                want[named][i][0]);
            assert_string_equal(json_string_value(json_object_get(c, "candidate")),
                                want[named][i][1]);
            double sp = json_real_value(json_object_get(c, "speedup"));
            assert_true(fabs(sp - speedup[named][i]) < 1e-9 * speedup[named][i]);
            double lo = json_real_value(json_object_get(c, "ci95_low"));
            double hi = json_real_value(json_object_get(c, "ci95_high"));
            assert_true(lo < sp && sp < hi && hi < 1.1 * sp);
            assert_true(json_is_true(json_object_get(c, "significant")));
        }
        json_decref(doc);
    }
}

/* Version 2 documents: their keys required, unknown in version 1, checked by value. */
static void test_version_2(void **state)
{
    (void)state;
    xpb_err err = {{0}};
    json_t *doc = valid_doc_v2();
    if (xpb_results_validate(doc, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    static const struct {
        const char *path, *value, *says;
    } bad[] = {
        {"runs[0].device.kind", NULL, "runs[0].device.kind: required key missing"},
        {"runs[0].device.kind", "'npu'", "runs[0].device.kind: expected one of \"cpu\""},
        {"runs[0].device.precisions", NULL, "runs[0].device.precisions: required key missing"},
        {"runs[0].device.precisions", "{'fp32': 'fast'}",
         "runs[0].device.precisions.fp32: expected one of \"native\", \"emulated\""},
        {"runs[0].device.precisions", "{'fp64': 'native'}",
         "runs[0].device.precisions.fp64: unknown key"},
        {"runs[0].device.capabilities", NULL, "runs[0].device.capabilities: required key missing"},
        {"runs[1].config.allow_emulated", NULL,
         "runs[1].config.allow_emulated: required key missing"},
        {"runs[1].config.allow_emulated", "1", "expected true or false, found number 1"},
        {"runs[0].metrics.throughput.ci95_low", "1e9",
         "runs[0].metrics.throughput: ci95_low and ci95_high are both null, or numbers"},
        {"runs[0].metrics.throughput.ci95_high", "null", "ci95_low and ci95_high are both null"},
        {"comparisons[0].significant", "true", "significant is true without an interval"},
        {"comparisons[0].ci95_low", "0.5", "ci95_low and ci95_high are both numbers or both null"},
        {"scenario.baseline", NULL, "scenario.baseline: required key missing"},
        {"runs[0].metrics.interference", NULL, "runs[0].metrics.interference: required key"},
        {"runs[0].metrics.interference.other_cpu_share", "1.5", "expected a number in [0, 1]"},
        {"runs[0].metrics.loss.series", "[{'step': 0, 'loss': 1}]",
         "runs[0].metrics.loss.series[0].step: expected an integer >= 1"},
        {"runs[0].metrics.energy.reason", "null",
         "runs[0].metrics.energy.reason: must say why when measured is false"},
        {"runs[1].metrics.energy.reason", "'x'",
         "runs[1].metrics.energy.reason: must be null when measured is true"},
        {"runs[1].metrics.energy.domains", "{'gpu': 1}",
         "runs[1].metrics.energy.domains.gpu: unknown key"},
        {"runs[0].metrics.memory.host_run_peak_bytes", NULL, "host_run_peak_bytes: required"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *d = valid_doc_v2();
        if (bad[i].value)
            set_path(d, bad[i].path, parse(bad[i].value));
        else
            delete_path(d, bad[i].path);
        err.msg[0] = '\0';
        if (xpb_results_validate(d, &err) != XPB_PARSE_ERROR || !strstr(err.msg, bad[i].says))
            fail_msg("%s: expected \"%s\", got \"%s\"", bad[i].path, bad[i].says, err.msg);
        json_decref(d);
    }
    json_decref(doc);

    /* An interval that does not hold its speedup, or a verdict that contradicts it. */
    doc = valid_doc_v2();
    set_path(doc, "comparisons[0].ci95_low", json_real(20));
    set_path(doc, "comparisons[0].ci95_high", json_real(30));
    set_path(doc, "comparisons[0].significant", json_true());
    assert_int_equal(xpb_results_validate(doc, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "comparisons[0]: ci95_low <= speedup <= ci95_high"));
    set_path(doc, "comparisons[0].ci95_low", json_real(0.5));
    assert_int_equal(xpb_results_validate(doc, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "significant is true but the interval [0.5, 30] contains 1"));
    set_path(doc, "comparisons[0].significant", json_false());
    if (xpb_results_validate(doc, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    json_decref(doc);

    /* A key of version 2 in a version-1 document is unknown there, and says so. */
    json_t *v1 = valid_doc();
    set_path(v1, "runs[0].device.kind", json_string("cpu"));
    assert_int_equal(xpb_results_validate(v1, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].device.kind: not part of schema version 1"));
    json_decref(v1);
}

/* ---- runs over several ranks (schema 2, docs/distributed.md) ---- */

/* valid_doc_v2() with runs[0] a data-parallel run of two ranks. */
static json_t *parallel_doc(void)
{
    json_t *doc = valid_doc_v2();
    set_path(doc, "runs[0].config.parallel", json_string("data"));
    set_path(doc, "runs[0].config.world_size", json_integer(2));
    set_path(doc, "runs[0].metrics.parallel",
             parse("{'world_size': 2, 'hosts': 1,"
                   " 'ranks': [{'rank': 0, 'host': 'n1', 'local_rank': 0, 'device': 'cpu',"
                   "   'device_index': 0, 'threads': 1, 'throughput': 620.5, 'step_p50_s': 0.1},"
                   "  {'rank': 1, 'host': 'n1', 'local_rank': 1, 'device': 'cpu',"
                   "   'device_index': 0, 'threads': 1, 'throughput': 617.0, 'step_p50_s': 0.1}],"
                   " 'communication': {'all_reduces': 1, 'bytes_per_step': 9046312,"
                   "   'seconds_per_step': 0.0052, 'share': 0.1003},"
                   " 'baseline': {'throughput': 700.0, 'source': 'measured', 'file': null,"
                   "   'reason': null},"
                   " 'scaling_efficiency': 0.8818}"));
    return doc;
}

static void test_parallel_fields(void **state)
{
    (void)state;
    xpb_err err = {{0}};
    json_t *doc = parallel_doc();
    expect_valid(doc, "a run of two ranks");
    /* config.parallel and config.world_size are optional: documents written before them */
    json_t *plain = valid_doc_v2();
    expect_valid(plain, "a run without parallel keys");
    json_decref(plain);
    static const struct {
        const char *path, *value, *says;
    } bad[] = {
        {"runs[0].config.parallel", "'model'", "expected one of \"none\", \"data\""},
        {"runs[0].config.world_size", "0", "runs[0].config.world_size: expected an integer >= 1"},
        {"runs[0].metrics.parallel", NULL,
         "runs[0].metrics.parallel: required when config.world_size is above 1"},
        {"runs[0].metrics.parallel.world_size", "3",
         "runs[0].metrics.parallel: world_size 3 must equal config.world_size (2)"},
        {"runs[0].metrics.parallel.ranks[1].rank", "0",
         "runs[0].metrics.parallel.ranks[1]: rank must be 1 (entries in rank order)"},
        {"runs[0].metrics.parallel.communication.share", "-0.1",
         "runs[0].metrics.parallel.communication.share: expected a number >= 0 or null"},
        {"runs[0].metrics.parallel.baseline.throughput", "null",
         "baseline.reason must be null exactly when baseline.throughput is a number"},
        {"runs[0].metrics.parallel.baseline.source", "'guess'", "expected one of \"measured\""},
        {"runs[0].metrics.parallel.hosts", NULL, "runs[0].metrics.parallel.hosts: required"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *d = parallel_doc();
        if (bad[i].value)
            set_path(d, bad[i].path, parse(bad[i].value));
        else
            delete_path(d, bad[i].path);
        err.msg[0] = '\0';
        if (xpb_results_validate(d, &err) != XPB_PARSE_ERROR || !strstr(err.msg, bad[i].says))
            fail_msg("%s: expected \"%s\", got \"%s\"", bad[i].path, bad[i].says, err.msg);
        json_decref(d);
    }
    /* no baseline: its reason, and no efficiency */
    set_path(doc, "runs[0].metrics.parallel.baseline.throughput", json_null());
    set_path(doc, "runs[0].metrics.parallel.baseline.reason", json_string("no such file"));
    assert_int_equal(xpb_results_validate(doc, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "scaling_efficiency must be null without a baseline"));
    set_path(doc, "runs[0].metrics.parallel.scaling_efficiency", json_null());
    expect_valid(doc, "a run without a baseline");
    /* one rank has no parallel metrics */
    set_path(doc, "runs[0].config.world_size", json_integer(1));
    assert_int_equal(xpb_results_validate(doc, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "must equal config.world_size (1) and be at least 2"));
    json_decref(doc);

    /* version 1 knew none of it */
    json_t *v1 = valid_doc();
    set_path(v1, "runs[0].config.world_size", json_integer(2));
    assert_int_equal(xpb_results_validate(v1, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].config.world_size: not part of schema version 1"));
    json_decref(v1);

    /* the table shows ranks, efficiency and communication share only when a run has ranks */
    doc = parallel_doc();
    char *out = table_of(doc);
    assert_non_null(strstr(out, "ranks"));
    assert_true(row_has(out, "conv6-ref", "88.18"));
    assert_true(row_has(out, "conv6-ref", "10.03"));
    assert_non_null(strstr(out, "eff % = scaling efficiency"));
    free(out);
    json_decref(doc);
    doc = valid_doc_v2();
    out = table_of(doc);
    assert_null(strstr(out, "eff %"));
    free(out);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_document),  cmocka_unit_test(test_every_required_key),
        cmocka_unit_test(test_every_type),      cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_good_values),     cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_new_document),    cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_table),           cmocka_unit_test(test_comparisons),
        cmocka_unit_test(test_version_2),       cmocka_unit_test(test_comparison_baseline),
        cmocka_unit_test(test_parallel_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
