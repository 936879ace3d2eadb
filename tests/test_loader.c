/* The plugin loader against the fake plugins of tests/fake_plugins: every refusal gives its
 * exact message, good plugins load around bad ones, optional members past struct_size are
 * absent, and the default search path follows its three rules. Then the rules of ABI 1.1, each
 * proven by a plugin: a backend and a model built against the frozen ABI 1.0 headers load and
 * work (the backend runs a sealed program), the host refuses a program of a newer op set than a
 * backend knows, a 1.1 backend (examples/example_backend) refuses an unknown op or attribute bit
 * by name, device listing and the builder's fail() work where present and where absent, and the
 * builder refuses an input whose first dimension is not the batch. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "program/builder.h"
#include "plugin/devices.h"
#include "plugin/loader.h"
#include "plugin/log.h"
#include "program/program_abi.h"
#include "run/session.h"

#ifndef XPB_FAKE_PLUGIN_DIR
#error "XPB_FAKE_PLUGIN_DIR must name the fake plugin folder (tests/test_loader.cmake)"
#endif

#define FAKE XPB_FAKE_PLUGIN_DIR

/* Loads the fake plugin folders `folders` (names under FAKE), in that order. */
static xpb_registry *load_folders(const char *const *folders, size_t n)
{
    char paths[32][PATH_MAX];
    const char *dirs[32];
    assert_true(n <= 32);
    for (size_t i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", FAKE, folders[i]);
        dirs[i] = paths[i];
    }
    xpb_registry *r = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_registry_load(&r, dirs, n, &err), XPB_OK);
    assert_non_null(r);
    return r;
}

static xpb_registry *load_one(const char *folder)
{
    return load_folders(&folder, 1);
}

/* "<FAKE>/<folder>/<file>" into a static buffer (one of four, rotating). */
static const char *fake_path(const char *folder, const char *file)
{
    static char buf[4][PATH_MAX];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, PATH_MAX, "%s/%s/%s", FAKE, folder, file);
    return p;
}

/* Asserts that `r` recorded exactly one problem and that it reads `expected`. */
static void assert_one_problem(const xpb_registry *r, const char *expected)
{
    assert_int_equal(xpb_registry_problem_count(r), 1);
    assert_string_equal(xpb_registry_problem(r, 0), expected);
}

/* A folder with a refused plugin loads nothing and records `expected`. */
static void assert_refused(const char *folder, const char *expected)
{
    xpb_registry *r = load_one(folder);
    assert_int_equal(xpb_registry_count(r), 0);
    assert_null(xpb_registry_at(r, 0, NULL));
    assert_one_problem(r, expected);
    xpb_registry_free(r);
}

/* ---- plugins that load ---- */

static void test_good_plugins_load(void **state)
{
    (void)state;
    const char *folders[] = {"good_backend", "good_model"};
    xpb_registry *r = load_folders(folders, 2);
    assert_int_equal(xpb_registry_count(r), 2);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    assert_null(xpb_registry_problem(r, 0));

    const char *path = NULL;
    const xpb_plugin_descriptor *d = xpb_registry_at(r, 0, &path);
    assert_non_null(d);
    assert_string_equal(d->name, "fake_good");
    assert_int_equal(d->kind, XPB_PLUGIN_BACKEND);
    assert_string_equal(path, fake_path("good_backend", "fake_good_backend.so"));
    d = xpb_registry_at(r, 1, &path);
    assert_string_equal(d->name, "fake_model");
    assert_string_equal(d->version, "0.3.0");
    assert_string_equal(path, fake_path("good_model", "fake_good_model.so"));
    assert_null(xpb_registry_at(r, 2, &path));

    /* find is by kind and name */
    assert_ptr_equal(xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_good"),
                     xpb_registry_at(r, 0, NULL));
    assert_null(xpb_registry_find(r, XPB_PLUGIN_MODEL, "fake_good"));
    assert_null(xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_goo"));
    assert_null(xpb_registry_find(r, XPB_PLUGIN_BACKEND, NULL));
    assert_null(xpb_registry_backend(r, "fake_model"));
    assert_null(xpb_registry_model(r, "fake_good"));

    const xpb_model_api *model = xpb_registry_model(r, "fake_model");
    assert_non_null(model);
    assert_int_equal(model->n_params, 2);
    assert_string_equal(model->params[0].name, "variant");
    assert_int_equal(model->build(NULL, NULL), XPB_OK);

    /* The backend's table is callable and its handles are real. */
    const xpb_backend_api *api = xpb_registry_backend(r, "fake_good");
    assert_non_null(api);
    assert_int_equal(xpb_plugin_caps(xpb_registry_at(r, 0, NULL)),
                     XPB_CAP_PROFILING | XPB_CAP_MEMORY_STATS | XPB_CAP_ENERGY);
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 1), XPB_NO_DEVICE);
    assert_string_equal(api->last_error(NULL), "only device 0 exists");
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_device_info info = {.struct_size = sizeof info};
    assert_int_equal(api->device_info(be, &info), XPB_OK);
    assert_string_equal(info.name, "fake device of fake_good_backend");
    xpb_executable *exe = NULL;
    assert_int_equal(api->compile(&exe, be, NULL, NULL), XPB_OK);
    assert_int_equal(api->run(exe, 0), XPB_OK);
    assert_int_equal(api->synchronize(exe), XPB_OK);
    xpb_memory_stats ms = {.struct_size = sizeof ms, .peak_bytes = 7};
    assert_int_equal(XPB_MEMBER_OR(api, xpb_backend_api, memory_stats, NULL)(exe, &ms), XPB_OK);
    assert_int_equal(ms.peak_bytes, 0);
    api->destroy(exe);
    api->close(be);
    xpb_registry_free(r);
}

static void test_newer_minor_is_accepted(void **state)
{
    (void)state;
    xpb_registry *r = load_one("newer_minor");
    assert_int_equal(xpb_registry_count(r), 1);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_newer_minor");
    assert_non_null(d);
    assert_int_equal(d->abi_major, 1);
    assert_int_equal(d->abi_minor, 7);
    assert_true(d->struct_size > sizeof(xpb_plugin_descriptor));
    assert_int_equal(xpb_plugin_opset(d), 1); /* its descriptor says 0: "not said" */
    const xpb_backend_api *api = xpb_registry_backend(r, "fake_newer_minor");
    assert_true(api->struct_size > sizeof(xpb_backend_api));
    /* Known optional members are read; cap bits this host does not know are ignored. */
    assert_int_equal(xpb_plugin_caps(d), XPB_CAP_MEMORY_STATS);
    assert_non_null(XPB_MEMBER_OR(api, xpb_backend_api, memory_stats, NULL));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, profile_read, NULL));
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    api->close(be);
    xpb_registry_free(r);
}

static void test_null_optional_entry_points_are_unsupported(void **state)
{
    (void)state;
    xpb_registry *r = load_one("null_optional");
    assert_int_equal(xpb_registry_count(r), 1);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *d = xpb_registry_at(r, 0, NULL);
    const xpb_backend_api *api = xpb_registry_backend(r, "fake_null_optional");
    assert_ptr_equal(api, d->api);
    /* The descriptor claims all three; the host sees none of them. */
    assert_int_equal(d->caps & XPB_CAP_PROFILING, XPB_CAP_PROFILING);
    assert_int_equal(xpb_plugin_caps(d), XPB_CAP_FUSION);
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, profile_read, NULL));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, memory_stats, NULL));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, energy_read, NULL));
    xpb_registry_free(r);
}

static void test_oldest_header_has_no_optional_members(void **state)
{
    (void)state;
    xpb_registry *r = load_one("oldest_header");
    assert_int_equal(xpb_registry_count(r), 1);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *d = xpb_registry_at(r, 0, NULL);
    const xpb_backend_api *api = xpb_registry_backend(r, "fake_oldest_header");
    assert_non_null(api);
    assert_int_equal(api->struct_size, offsetof(xpb_backend_api, profile_read));
    /* Past struct_size lie non-NULL pointers (traps that abort): only XPB_HAS_MEMBER keeps
     * the host from taking them for entry points. */
    assert_non_null(api->profile_read);
    assert_false(XPB_HAS_MEMBER(api, xpb_backend_api, profile_read));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, profile_read, NULL));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, memory_stats, NULL));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, energy_read, NULL));
    assert_int_equal(xpb_plugin_caps(d), 0);
    assert_true(XPB_HAS_MEMBER(api, xpb_backend_api, synchronize));
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    api->close(be);
    xpb_registry_free(r);
}

/* ---- plugins that are refused ---- */

static void test_wrong_major(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "%s: plugin 'fake_wrong_major' 2.1.0 was built for ABI 2.0, this host speaks ABI "
             "%d.%d; skipped",
             fake_path("wrong_major", "fake_wrong_major.so"), XPB_ABI_MAJOR, XPB_ABI_MINOR);
    assert_refused("wrong_major", expected);
}

static void test_missing_symbol(void **state)
{
    (void)state;
    xpb_registry *r = load_one("missing_symbol");
    assert_int_equal(xpb_registry_count(r), 0);
    assert_int_equal(xpb_registry_problem_count(r), 1);
    const char *p = xpb_registry_problem(r, 0);
    char prefix[2 * PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s: no entry point xpb_plugin_query (",
             fake_path("missing_symbol", "fake_missing_symbol.so"));
    assert_memory_equal(p, prefix, strlen(prefix));
    assert_non_null(strstr(p, "undefined symbol: xpb_plugin_query)")); /* dlerror's words */
    assert_string_equal(p + strlen(p) - strlen("); skipped"), "); skipped");
    xpb_registry_free(r);
}

static void test_failing_init(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "%s: xpb_plugin_query failed: internal error (status 10); skipped",
             fake_path("failing_init", "fake_failing_init.so"));
    xpb_log_set_level(-1); /* the fake logs an error line; keep the test output clean */
    assert_refused("failing_init", expected);
    xpb_log_set_level(XPB_LOG_WARN);
}

static void test_plugin_refuses_host(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "%s: backend 'fake_refuses_host' 0.9.0 (built for ABI 1.9, this host speaks ABI "
             "%d.%d): xpb_plugin_query failed: incompatible plugin ABI version (status 4); "
             "skipped",
             fake_path("refuses_host", "fake_refuses_host.so"), XPB_ABI_MAJOR, XPB_ABI_MINOR);
    assert_refused("refuses_host", expected);
}

static void test_bad_name(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected, "%s: plugin name 'Bad Name' is not [a-z0-9_]+; skipped",
             fake_path("bad_name", "fake_bad_name.so"));
    assert_refused("bad_name", expected);
}

static void test_missing_required_entry_point(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "%s: backend 'fake_missing_required' 1.0.0: required entry point 'compile' is "
             "NULL; skipped",
             fake_path("missing_required", "fake_missing_required.so"));
    assert_refused("missing_required", expected);
}

static void test_short_function_table(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "%s: backend 'fake_short_table' 1.0.0: function table struct_size is %zu, ABI 1.0 "
             "needs at least %zu (through 'synchronize'); skipped",
             fake_path("short_table", "fake_short_table.so"),
             offsetof(xpb_backend_api, synchronize), offsetof(xpb_backend_api, profile_read));
    assert_refused("short_table", expected);
}

static void test_bad_model_params(void **state)
{
    (void)state;
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "%s: model 'fake_bad_params' 1.0.0: declares parameter 'width' twice; skipped",
             fake_path("bad_params", "fake_bad_params.so"));
    assert_refused("bad_params", expected);
}

static void test_not_a_shared_object(void **state)
{
    (void)state;
    xpb_registry *r = load_one("junk");
    assert_int_equal(xpb_registry_count(r), 0);
    assert_int_equal(xpb_registry_problem_count(r), 1);
    const char *p = xpb_registry_problem(r, 0);
    char prefix[2 * PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s: cannot load: ", fake_path("junk", "junk.so"));
    assert_memory_equal(p, prefix, strlen(prefix));
    assert_string_equal(p + strlen(p) - strlen("; skipped"), "; skipped");
    xpb_registry_free(r);
}

static void test_missing_folder(void **state)
{
    (void)state;
    char expected[PATH_MAX + 128];
    snprintf(expected, sizeof expected,
             "%s/no_such_folder: cannot read plugin folder: No such file or directory; skipped",
             FAKE);
    assert_refused("no_such_folder", expected);
}

/* ---- names ---- */

static void test_duplicate_name_first_folder_wins(void **state)
{
    (void)state;
    const char *good = fake_path("good_backend", "fake_good_backend.so");
    const char *dup = fake_path("duplicate", "fake_duplicate.so");
    char expected[3 * PATH_MAX];

    const char *order1[] = {"good_backend", "duplicate"};
    xpb_registry *r = load_folders(order1, 2);
    assert_int_equal(xpb_registry_count(r), 1);
    assert_string_equal(xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_good")->version, "1.0.0");
    snprintf(expected, sizeof expected,
             "%s: backend 'fake_good' 9.9.9 has the same name as backend 'fake_good' 1.0.0 "
             "from %s, loaded first; skipped",
             dup, good);
    assert_one_problem(r, expected);
    xpb_registry_free(r);

    const char *order2[] = {"duplicate", "good_backend"};
    r = load_folders(order2, 2);
    assert_int_equal(xpb_registry_count(r), 1);
    assert_string_equal(xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_good")->version, "9.9.9");
    snprintf(expected, sizeof expected,
             "%s: backend 'fake_good' 1.0.0 has the same name as backend 'fake_good' 9.9.9 "
             "from %s, loaded first; skipped",
             good, dup);
    assert_one_problem(r, expected);
    xpb_registry_free(r);
}

static void test_files_load_in_name_order(void **state)
{
    (void)state;
    /* "pair" holds a_pair.so .. d_pair.so, all named fake_pair, and also a folder named
     * folder.so, README.txt, .hidden.so and e_pair.so.1, none of which is a plugin file. */
    xpb_registry *r = load_one("pair");
    assert_int_equal(xpb_registry_count(r), 1);
    const char *path = NULL;
    const xpb_plugin_descriptor *d = xpb_registry_at(r, 0, &path);
    assert_string_equal(d->name, "fake_pair");
    assert_string_equal(d->version, "a");
    assert_string_equal(path, fake_path("pair", "a_pair.so"));
    assert_int_equal(xpb_registry_problem_count(r), 3);
    for (int i = 0; i < 3; i++) {
        char file[16], expected[3 * PATH_MAX];
        snprintf(file, sizeof file, "%c_pair.so", 'b' + i);
        snprintf(expected, sizeof expected,
                 "%s: backend 'fake_pair' %c has the same name as backend 'fake_pair' a from "
                 "%s, loaded first; skipped",
                 fake_path("pair", file), 'b' + i, fake_path("pair", "a_pair.so"));
        assert_string_equal(xpb_registry_problem(r, (size_t)i), expected);
    }
    xpb_registry_free(r);
}

/* ---- everything at once ---- */

static void test_bad_plugins_never_stop_good_ones(void **state)
{
    (void)state;
    const char *folders[] = {"good_backend",   "wrong_major",   "good_model",   "newer_minor",
                             "missing_symbol", "failing_init",  "refuses_host", "null_optional",
                             "duplicate",      "oldest_header", "bad_name",     "missing_required",
                             "short_table",    "bad_params",    "pair",         "junk"};
    xpb_log_set_level(-1);
    xpb_registry *r = load_folders(folders, sizeof folders / sizeof folders[0]);
    xpb_log_set_level(XPB_LOG_WARN);

    static const char *const loaded[] = {"fake_good",          "fake_model",
                                         "fake_newer_minor",   "fake_null_optional",
                                         "fake_oldest_header", "fake_pair"};
    assert_int_equal(xpb_registry_count(r), 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(xpb_registry_at(r, i, NULL)->name, loaded[i]);

    /* One problem per refused file, in load order, each starting with the file's path. */
    static const char *const refused[][2] = {
        {"wrong_major", "fake_wrong_major.so"},
        {"missing_symbol", "fake_missing_symbol.so"},
        {"failing_init", "fake_failing_init.so"},
        {"refuses_host", "fake_refuses_host.so"},
        {"duplicate", "fake_duplicate.so"},
        {"bad_name", "fake_bad_name.so"},
        {"missing_required", "fake_missing_required.so"},
        {"short_table", "fake_short_table.so"},
        {"bad_params", "fake_bad_params.so"},
        {"pair", "b_pair.so"},
        {"pair", "c_pair.so"},
        {"pair", "d_pair.so"},
        {"junk", "junk.so"},
    };
    size_t n = sizeof refused / sizeof refused[0];
    assert_int_equal(xpb_registry_problem_count(r), n);
    for (size_t i = 0; i < n; i++) {
        const char *path = fake_path(refused[i][0], refused[i][1]);
        const char *p = xpb_registry_problem(r, i);
        assert_non_null(p);
        assert_memory_equal(p, path, strlen(path));
        assert_int_equal(p[strlen(path)], ':');
    }
    assert_non_null(xpb_registry_backend(r, "fake_null_optional"));
    assert_non_null(xpb_registry_model(r, "fake_model"));
    assert_null(xpb_registry_backend(r, "fake_wrong_major"));
    xpb_registry_free(r);
}

/* ---- ABI 1.1, rule by rule ---- */

/* x[2,4] -> h = LINEAR(x, w[4,4], b[4]) (or COPY(x)) -> r = RELU(h); c = FILL(0.5);
 * s = ADD(r, c); out = COPY(s). Phase "constants" runs FILL, phase "forward" the rest. */
enum { TP_X, TP_W, TP_B, TP_C, TP_H, TP_R, TP_S, TP_OUT, TP_TENSORS };
enum { TP_OPS = 5 };

struct test_program {
    xpb_tensor_desc t[TP_TENSORS];
    xpb_op ops[TP_OPS];
    xpb_phase phases[2];
    xpb_program p;
};

static const float TP_XV[8] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f, -2.0f, 1.0f};
static const float TP_WV[16] = {0.1f,  -0.2f, 0.3f, 0.4f,  -0.5f, 0.6f, 0.7f,  -0.8f,
                                0.05f, 0.15f, 0.2f, -0.1f, 0.9f,  0.0f, -0.3f, 0.25f};
static const float TP_BV[4] = {0.1f, -0.1f, 0.2f, -0.3f};

static void tp_tensor(struct test_program *tp, uint32_t id, const char *name, uint32_t role,
                      uint32_t flags, uint32_t ndim, int64_t d0, int64_t d1)
{
    xpb_tensor_desc *t = &tp->t[id];
    t->name = name;
    t->layer = "";
    t->dtype = XPB_DTYPE_F32;
    t->role = role;
    t->flags = flags;
    t->ndim = ndim;
    t->dims[0] = d0;
    t->dims[1] = ndim > 1 ? d1 : 1;
    t->dims[2] = t->dims[3] = 1;
    t->grad_of = XPB_NO_TENSOR;
    t->last_op = TP_OPS - 1;
}

static void tp_op(struct test_program *tp, uint32_t i, uint32_t kind, const char *layer,
                  uint32_t n_in, uint32_t in0, uint32_t in1, uint32_t in2, uint32_t out)
{
    xpb_op *op = &tp->ops[i];
    op->kind = kind;
    op->layer = layer;
    op->n_inputs = n_in;
    op->n_outputs = 1;
    const uint32_t in[3] = {in0, in1, in2};
    for (uint32_t k = 0; k < XPB_MAX_OP_INPUTS; k++)
        op->inputs[k] = k < n_in ? in[k] : XPB_NO_TENSOR;
    for (uint32_t k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
        op->outputs[k] = k == 0 ? out : XPB_NO_TENSOR;
}

/* Builds and seals the program, as the host seals every program it hands to a backend. */
static void tp_init(struct test_program *tp, int with_linear)
{
    memset(tp, 0, sizeof *tp);
    const uint32_t P = XPB_TENSOR_PERSISTENT, W = XPB_TENSOR_HOST_WRITE, R = XPB_TENSOR_HOST_READ;
    tp_tensor(tp, TP_X, "x", XPB_ROLE_INPUT, W, 2, 2, 4);
    tp_tensor(tp, TP_W, "fc.weight", XPB_ROLE_PARAM, P | W | R, 2, 4, 4);
    tp_tensor(tp, TP_B, "fc.bias", XPB_ROLE_PARAM, P | W | R, 1, 4, 1);
    tp_tensor(tp, TP_C, "half", XPB_ROLE_ACTIVATION, 0, 2, 2, 4);
    tp_tensor(tp, TP_H, "fc", XPB_ROLE_ACTIVATION, 0, 2, 2, 4);
    tp_tensor(tp, TP_R, "relu", XPB_ROLE_ACTIVATION, 0, 2, 2, 4);
    tp_tensor(tp, TP_S, "sum", XPB_ROLE_ACTIVATION, 0, 2, 2, 4);
    tp_tensor(tp, TP_OUT, "out", XPB_ROLE_OUTPUT, R, 2, 2, 4);
    tp_op(tp, 0, XPB_OP_FILL, "half", 0, 0, 0, 0, TP_C);
    tp->ops[0].attrs.value = 0.5f;
    if (with_linear)
        tp_op(tp, 1, XPB_OP_LINEAR, "fc", 3, TP_X, TP_W, TP_B, TP_H);
    else
        tp_op(tp, 1, XPB_OP_COPY, "fc", 1, TP_X, 0, 0, TP_H);
    tp_op(tp, 2, XPB_OP_RELU, "relu", 1, TP_H, 0, 0, TP_R);
    tp_op(tp, 3, XPB_OP_ADD, "sum", 2, TP_R, TP_C, 0, TP_S);
    tp_op(tp, 4, XPB_OP_COPY, "out", 1, TP_S, 0, 0, TP_OUT);
    tp->phases[0] = (xpb_phase){"constants", 0, 1};
    tp->phases[1] = (xpb_phase){"forward", 1, TP_OPS - 1};
    tp->p.n_tensors = TP_TENSORS;
    tp->p.n_ops = TP_OPS;
    tp->p.n_phases = 2;
    tp->p.tensors = tp->t;
    tp->p.ops = tp->ops;
    tp->p.phases = tp->phases;
    xpb_program_seal(&tp->p, tp->ops);
}

/* Opens `api`'s device 0, compiles tp, writes x (and w, b), runs both phases and checks `out`
 * against the program computed here in double. */
static void tp_run_and_check(const xpb_backend_api *api, const struct test_program *tp,
                             int with_linear)
{
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
    xpb_executable *exe = NULL;
    if (api->compile(&exe, be, &tp->p, &o) != XPB_OK)
        fail_msg("compile: %s", api->last_error(be));
    assert_int_equal(api->write(exe, TP_X, TP_XV, sizeof TP_XV), XPB_OK);
    if (with_linear) {
        assert_int_equal(api->write(exe, TP_W, TP_WV, sizeof TP_WV), XPB_OK);
        assert_int_equal(api->write(exe, TP_B, TP_BV, sizeof TP_BV), XPB_OK);
    }
    for (uint32_t ph = 0; ph < tp->p.n_phases; ph++)
        assert_int_equal(api->run(exe, ph), XPB_OK);
    assert_int_equal(api->synchronize(exe), XPB_OK);
    float out[8];
    assert_int_equal(api->read(exe, TP_OUT, out, sizeof out), XPB_OK);
    for (int n = 0; n < 2; n++)
        for (int o = 0; o < 4; o++) {
            double h = TP_XV[n * 4 + o];
            if (with_linear) {
                h = TP_BV[o];
                for (int i = 0; i < 4; i++)
                    h += (double)TP_XV[n * 4 + i] * TP_WV[o * 4 + i];
            }
            double want = (h > 0 ? h : 0) + 0.5;
            if (fabs(out[n * 4 + o] - want) > 1e-6)
                fail_msg("out[%d][%d]: got %.9g, want %.9g", n, o, (double)out[n * 4 + o], want);
        }
    api->destroy(exe);
    api->close(be);
}

/* (a) A backend compiled against the frozen ABI 1.0 headers loads on this 1.1 host and runs a
 * sealed program of op-set-1 ops; (f) it has no device_count: the host lists its device by
 * opening it, and its kind stays unknown. */
static void test_abi_1_0_backend_runs_a_program(void **state)
{
    (void)state;
    xpb_registry *r = load_one("abi10_backend");
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_abi10");
    assert_non_null(d);
    assert_int_equal(d->abi_minor, 0);
    assert_int_equal(d->struct_size, offsetof(xpb_plugin_descriptor, opset));
    assert_false(XPB_HAS_MEMBER(d, xpb_plugin_descriptor, opset));
    assert_int_equal(xpb_plugin_opset(d), 1);
    const xpb_backend_api *api = d->api;
    assert_int_equal(api->struct_size, offsetof(xpb_backend_api, device_count));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, device_count, NULL));
    assert_null(XPB_MEMBER_OR(api, xpb_backend_api, write_async, NULL));

    static xpb_device_list list;
    assert_int_equal(xpb_backend_devices(&list, d), XPB_OK);
    assert_int_equal(list.count, 1);
    assert_string_equal(list.info[0].name, "fake 1.0 CPU");
    assert_int_equal(list.info[0].kind, XPB_DEVICE_UNKNOWN);

    struct test_program tp;
    tp_init(&tp, 1);
    xpb_err err = {{0}};
    assert_int_equal(xpb_session_check_opset(d, &tp.p, &err), XPB_OK);
    tp_run_and_check(api, &tp, 1);
    xpb_registry_free(r);
}

/* (b) The host refuses, before compile and naming the op, a program that needs op set 2 (an
 * ALL_REDUCE of a data-parallel program) on a backend whose descriptor does not say its op set
 * (ABI 1.0) or says 1, and a program that needs op set 3 on a backend of op set 2. */
static void test_host_refuses_a_newer_op_set(void **state)
{
    (void)state;
    const char *folders[] = {"abi10_backend", "example"};
    xpb_registry *r = load_folders(folders, 2);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *old = xpb_registry_find(r, XPB_PLUGIN_BACKEND, "fake_abi10");
    const xpb_plugin_descriptor *ex = xpb_registry_find(r, XPB_PLUGIN_BACKEND, "example");
    assert_non_null(old);
    assert_non_null(ex);
    assert_int_equal(ex->opset, XPB_OPSET_VERSION); /* built with these headers: 2 */
    xpb_plugin_descriptor v11 = *ex;                /* the same backend built with ABI 1.1's */
    v11.opset = 1;

    struct test_program tp;
    tp_init(&tp, 0);
    assert_int_equal(tp.p.opset, 1); /* op-set-1 ops: op set 1, whatever the host's own */
    tp.ops[2].kind = XPB_OP_ALL_REDUCE;
    tp.ops[2].kind_name = "ALL_REDUCE";
    tp.ops[2].opset = 2;
    tp.ops[2].layer = "grads";
    tp.p.opset = 2;
    xpb_err err = {{0}};
    assert_int_equal(xpb_session_check_opset(old, &tp.p, &err), XPB_UNSUPPORTED);
    assert_string_equal(err.msg, "backend 'fake_abi10' 1.0.0 knows op set 1; op ALL_REDUCE (layer "
                                 "'grads') is from op set 2");
    assert_int_equal(xpb_session_check_opset(&v11, &tp.p, &err), XPB_UNSUPPORTED);
    assert_string_equal(err.msg, "backend 'example' 0.2.0 knows op set 1; op ALL_REDUCE (layer "
                                 "'grads') is from op set 2");
    /* a backend that knows op set 2 gets the program (and judges it itself) */
    assert_int_equal(xpb_session_check_opset(ex, &tp.p, &err), XPB_OK);

    tp.ops[2].kind = 99; /* an op of the op set after this one, as a newer host describes it */
    tp.ops[2].kind_name = "FUTURE_OP";
    tp.ops[2].opset = XPB_OPSET_VERSION + 1;
    tp.ops[2].layer = "future";
    tp.p.opset = XPB_OPSET_VERSION + 1;
    assert_int_equal(xpb_session_check_opset(ex, &tp.p, &err), XPB_UNSUPPORTED);
    char want[256];
    snprintf(want, sizeof want,
             "backend 'example' 0.2.0 knows op set %d; op FUTURE_OP (layer 'future') is from op "
             "set %d",
             XPB_OPSET_VERSION, XPB_OPSET_VERSION + 1);
    assert_string_equal(err.msg, want);
    xpb_plugin_descriptor newer = *ex;
    newer.opset = XPB_OPSET_VERSION + 1;
    assert_int_equal(xpb_session_check_opset(&newer, &tp.p, &err), XPB_OK);
    xpb_registry_free(r);
}

/* (c) (d) A backend of ABI 1.1 refuses at compile, by name and layer, an op of a kind it does
 * not know (named by the host's kind_name) and an op with an attribute bit it does not know
 * (naming the bit); it also refuses by name an op of op set 1 it does not implement. The same
 * program without them runs. (f) It lists its device without being opened. */
static void test_abi_1_1_backend_refuses_by_name(void **state)
{
    (void)state;
    xpb_registry *r = load_one("example");
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, "example");
    assert_non_null(d);
    const xpb_backend_api *api = d->api;

    static xpb_device_list list;
    assert_int_equal(xpb_backend_devices(&list, d), XPB_OK);
    assert_int_equal(list.count, 1);
    assert_string_equal(list.info[0].name, "example host CPU");
    assert_int_equal(list.info[0].kind, XPB_DEVICE_CPU);
    assert_int_equal(XPB_MEMBER_OR(api, xpb_backend_api, describe_device, NULL)(1, &list.info[1]),
                     XPB_NO_DEVICE);
    assert_string_equal(api->last_error(NULL), "device 1 does not exist (only 0)");

    struct test_program tp;
    tp_init(&tp, 0);
    tp_run_and_check(api, &tp, 0);

    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
    xpb_executable *exe = NULL;

    tp.ops[2].kind = 99;
    tp.ops[2].kind_name = "FUTURE_OP";
    tp.ops[2].opset = 2;
    tp.ops[2].layer = "future";
    tp.p.opset = 2;
    assert_int_equal(api->compile(&exe, be, &tp.p, &o), XPB_UNSUPPORTED);
    assert_null(exe);
    assert_string_equal(api->last_error(be),
                        "op 2 FUTURE_OP (layer 'future'): not implemented: kind 99 is not "
                        "an op of op set 3, the newest this code was built for");

    tp_init(&tp, 0);
    tp.ops[3].attrs_set |= 1ull << 40;
    assert_int_equal(api->compile(&exe, be, &tp.p, &o), XPB_UNSUPPORTED);
    assert_null(exe);
    assert_string_equal(api->last_error(be),
                        "op 3 ADD (layer 'sum'): not implemented: it sets attribute bit "
                        "40, which op set 3 does not define (an attribute of a later op set "
                        "changes what the op computes)");

    tp_init(&tp, 1);
    assert_int_equal(api->compile(&exe, be, &tp.p, &o), XPB_UNSUPPORTED);
    assert_string_equal(api->last_error(be),
                        "op 1 LINEAR (layer 'fc'): not implemented by the example backend "
                        "(it runs FILL, COPY, ADD and RELU)");

    tp_init(&tp, 0); /* and a malformed op: the SDK's shape rules */
    tp.t[TP_S].dims[1] = 5;
    assert_int_equal(api->compile(&exe, be, &tp.p, &o), XPB_INVALID_ARGUMENT);
    assert_string_equal(api->last_error(be), "op 3 ADD (layer 'sum'): output y \"sum\" "
                                             "must be [2, 4], found [2, 5]");
    api->close(be);
    xpb_registry_free(r);
}

/* A backend built against the frozen ABI 1.2 headers (tests/abi/1.2: the example backend as a
 * vendor built it then) loads on this host, says op set 2, and runs a sealed program whose ops
 * carry the members ABI 1.3 appended (a longer op_stride, operand arrays); it refuses an op of
 * op set 3 by the host's name, and the host refuses a program that needs op set 3 on it before
 * compile. */
static void test_abi_1_2_backend_runs_a_program(void **state)
{
    (void)state;
    xpb_registry *r = load_one("abi12_example");
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_plugin_descriptor *d = xpb_registry_find(r, XPB_PLUGIN_BACKEND, "example");
    assert_non_null(d);
    assert_int_equal(d->abi_minor, 2);
    assert_int_equal(xpb_plugin_opset(d), 2);
    const xpb_backend_api *api = d->api;

    struct test_program tp;
    tp_init(&tp, 0);
    assert_true(tp.p.op_stride >= offsetof(xpb_op, outputs_all) + sizeof(void *));
    tp_run_and_check(api, &tp, 0);

    tp.ops[2].kind = 99; /* an op of op set 3, as this host describes it */
    tp.ops[2].kind_name = "FUTURE_OP";
    tp.ops[2].opset = 3;
    tp.ops[2].layer = "future";
    tp.p.opset = 3;
    xpb_err err = {{0}};
    assert_int_equal(xpb_session_check_opset(d, &tp.p, &err), XPB_UNSUPPORTED);
    assert_string_equal(err.msg, "backend 'example' 0.2.0 knows op set 2; op FUTURE_OP (layer "
                                 "'future') is from op set 3");
    xpb_backend *be = NULL;
    assert_int_equal(api->open(&be, 0), XPB_OK);
    xpb_compile_options o = {.struct_size = sizeof o, .precision = XPB_PRECISION_FP32};
    xpb_executable *exe = NULL;
    assert_int_equal(api->compile(&exe, be, &tp.p, &o), XPB_UNSUPPORTED);
    assert_null(exe);
    assert_non_null(strstr(api->last_error(be), "FUTURE_OP"));
    api->close(be);
    xpb_registry_free(r);
}

/* A builder's fail() that records what it was given. */
static char failed_with[512];

static xpb_status record_fail(xpb_builder *b, xpb_status status, const char *message)
{
    (void)b;
    snprintf(failed_with, sizeof failed_with, "%s", message);
    return status;
}

/* (f) Models: a 1.1 model's refusal in its own words reaches xpb_build_graph's error; a 1.0
 * model, which has no fail(), still gets one naming it; xpb_model_fail on a 1.0 host's table
 * (no fail) returns the status alone. (g) The builder refuses an input whose first dimension
 * is not the batch size. */
static void test_models_refuse_in_their_own_words(void **state)
{
    (void)state;
    const char *folders[] = {"abi10_model", "v11_model"};
    xpb_registry *r = load_folders(folders, 2);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    const xpb_model_api *old = xpb_registry_model(r, "fake_abi10_model");
    const xpb_model_api *v11 = xpb_registry_model(r, "fake_v11_model");
    assert_non_null(old);
    assert_non_null(v11);
    assert_int_equal(xpb_registry_find(r, XPB_PLUGIN_MODEL, "fake_v11_model")->opset,
                     XPB_OPSET_VERSION);

    xpb_graph *g = NULL;
    xpb_err err = {{0}};
    assert_int_equal(xpb_build_graph(&g, v11, "fake_v11_model", 2, "linear", NULL, 0, &err),
                     XPB_OK);
    assert_int_equal(xpb_graph_param_count(g), 4 * 3 + 4);
    xpb_graph_free(g);
    assert_int_equal(xpb_build_graph(&g, old, "fake_abi10_model", 2, "linear", NULL, 0, &err),
                     XPB_OK);
    assert_int_equal(xpb_graph_param_count(g), 4 * 3 + 4);
    xpb_graph_free(g);

    g = NULL;
    assert_int_equal(xpb_build_graph(&g, v11, "fake_v11_model", 2, "refuse", NULL, 0, &err),
                     XPB_UNSUPPORTED);
    assert_null(g);
    assert_string_equal(err.msg,
                        "model 'fake_v11_model': variant 'refuse' needs 3 layers this fake does "
                        "not have");
    assert_int_equal(xpb_build_graph(&g, old, "fake_abi10_model", 2, "refuse", NULL, 0, &err),
                     XPB_UNSUPPORTED);
    assert_null(g);
    assert_string_equal(err.msg, "model 'fake_abi10_model': build failed: operation, attribute or "
                                 "option not supported");

    assert_int_equal(xpb_build_graph(&g, v11, "fake_v11_model", 2, "bad_batch", NULL, 0, &err),
                     XPB_INVALID_ARGUMENT);
    assert_null(g);
    assert_string_equal(err.msg, "model 'fake_v11_model': input 'x': the first dimension must be "
                                 "the batch size 2, found 3");
    xpb_registry_free(r);

    /* xpb_model_fail itself: formats for a host that has fail(), returns the status alone for
     * one that has not (its table ends before fail) */
    xpb_builder_api table;
    memset(&table, 0, sizeof table);
    table.struct_size = sizeof table;
    table.fail = record_fail;
    failed_with[0] = '\0';
    assert_int_equal(xpb_model_fail(NULL, &table, XPB_INVALID_ARGUMENT, "%s of %d", "two", 3),
                     XPB_INVALID_ARGUMENT);
    assert_string_equal(failed_with, "two of 3");
    table.struct_size = offsetof(xpb_builder_api, fail);
    failed_with[0] = '\0';
    assert_int_equal(xpb_model_fail(NULL, &table, XPB_UNSUPPORTED, "not %s", "called"),
                     XPB_UNSUPPORTED);
    assert_string_equal(failed_with, "");
}

/* ---- arguments ---- */

static void test_bad_arguments(void **state)
{
    (void)state;
    xpb_err err = {{0}};
    const char *dirs[] = {FAKE "/good_backend", NULL};
    xpb_registry *r = (xpb_registry *)&err; /* must be reset to NULL on failure */

    assert_int_equal(xpb_registry_load(NULL, dirs, 1, &err), XPB_INVALID_ARGUMENT);
    assert_string_equal(err.msg, "xpb_registry_load: out is NULL");
    assert_int_equal(xpb_registry_load(&r, NULL, 1, &err), XPB_INVALID_ARGUMENT);
    assert_null(r);
    assert_int_equal(xpb_registry_load(&r, dirs, 2, &err), XPB_INVALID_ARGUMENT);
    assert_string_equal(err.msg, "xpb_registry_load: plugin folder 1 is NULL");
    assert_null(r);
    assert_int_equal(xpb_registry_load(&r, dirs, 2, NULL), XPB_INVALID_ARGUMENT);
    assert_int_equal(xpb_registry_default_dirs(NULL), XPB_INVALID_ARGUMENT);

    /* No folders: an empty registry. */
    assert_int_equal(xpb_registry_load(&r, NULL, 0, &err), XPB_OK);
    assert_int_equal(xpb_registry_count(r), 0);
    assert_int_equal(xpb_registry_problem_count(r), 0);
    xpb_registry_free(r);

    /* A NULL registry is empty, and freeing it is a no-op. */
    assert_int_equal(xpb_registry_count(NULL), 0);
    assert_int_equal(xpb_registry_problem_count(NULL), 0);
    assert_null(xpb_registry_at(NULL, 0, NULL));
    assert_null(xpb_registry_problem(NULL, 0));
    assert_null(xpb_registry_find(NULL, XPB_PLUGIN_BACKEND, "fake_good"));
    xpb_registry_free(NULL);
    xpb_strv_free(NULL);

    assert_string_equal(xpb_plugin_kind_name(XPB_PLUGIN_BACKEND), "backend");
    assert_string_equal(xpb_plugin_kind_name(XPB_PLUGIN_MODEL), "model");
    assert_string_equal(xpb_plugin_kind_name(99), "unknown");
}

/* ---- logging ---- */

/* Loads `folder` with the log going to a temporary file at `level` and returns what was
 * logged (static buffer). */
static const char *log_of_load(const char *folder, int level)
{
    static char text[1024];
    FILE *f = tmpfile();
    assert_non_null(f);
    xpb_log_set_stream(f);
    xpb_log_set_level(level);
    xpb_registry_free(load_one(folder));
    xpb_log_set_stream(NULL);
    xpb_log_set_level(XPB_LOG_WARN);
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void test_host_log_service(void **state)
{
    (void)state;
    const xpb_host_services *host = xpb_log_host_services();
    assert_int_equal(host->struct_size, sizeof(xpb_host_services));
    assert_int_equal(host->abi_major, XPB_ABI_MAJOR);
    assert_int_equal(host->abi_minor, XPB_ABI_MINOR);
    assert_non_null(host->log);

    char expected[128];
    snprintf(expected, sizeof expected, "[fake_model] queried by a host speaking ABI %d.%d\n",
             XPB_ABI_MAJOR, XPB_ABI_MINOR);
    assert_string_equal(log_of_load("good_model", XPB_LOG_INFO), expected);
    assert_string_equal(log_of_load("good_model", XPB_LOG_WARN), ""); /* INFO is filtered */
    assert_string_equal(log_of_load("failing_init", XPB_LOG_ERROR),
                        "[fake_failing_init] cannot initialise\n");
    assert_string_equal(log_of_load("failing_init", -1), "");

    /* The host's own lines, and the default and clamped levels. */
    assert_int_equal(xpb_log_get_level(), XPB_LOG_WARN);
    xpb_log_set_level(100);
    assert_int_equal(xpb_log_get_level(), XPB_LOG_DEBUG);
    xpb_log_set_level(-5);
    assert_int_equal(xpb_log_get_level(), -1);
    FILE *f = tmpfile();
    assert_non_null(f);
    xpb_log_set_stream(f);
    xpb_log_set_level(XPB_LOG_WARN);
    xpb_log(XPB_LOG_WARN, "runner", "%d of %s\n", 3, "four");
    xpb_log(XPB_LOG_INFO, "runner", "filtered");
    host->log(host->ctx, XPB_LOG_ERROR, "p", "m");
    xpb_log_set_stream(NULL);
    rewind(f);
    char text[128];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_string_equal(text, "[runner] 3 of four\n[p] m\n");
}

/* ---- the default search path ---- */

/* Creates every missing folder of `path` (mkdir -p), recording the ones it made in `made`
 * (deepest last) so that the caller can remove exactly those. */
static void make_dirs(const char *path, char made[][PATH_MAX], int *n_made)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) == 0)
                snprintf(made[(*n_made)++], PATH_MAX, "%s", buf);
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
}

static size_t strv_len(char **v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

static void test_default_dirs(void **state)
{
    (void)state;
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(len > 0);
    exe[len] = '\0';
    *strrchr(exe, '/') = '\0';

    /* Make rule 1's and rule 3's folders exist (and remove them again afterwards). */
    char made[16][PATH_MAX];
    int n_made = 0;
    char build[PATH_MAX + 16], install[2 * PATH_MAX];
    snprintf(build, sizeof build, "%s/plugins", exe);
    snprintf(install, sizeof install, "%s/../%s", exe, XPB_PLUGIN_INSTALL_REL);
    make_dirs(build, made, &n_made);
    make_dirs(install, made, &n_made);
    char *build_real = realpath(build, NULL), *install_real = realpath(install, NULL);
    char *model_real = realpath(FAKE "/good_model", NULL);
    char *backend_real = realpath(FAKE "/good_backend", NULL);
    assert_non_null(build_real);
    assert_non_null(install_real);
    assert_non_null(model_real);
    assert_non_null(backend_real);

    /* Empty entries, a missing folder, a file and repeats are all left out. */
    assert_int_equal(setenv("XPB_PLUGIN_PATH",
                            "::" FAKE "/good_model:/nonexistent/xpb::" FAKE "/good_backend/:" FAKE
                            "/good_model:" FAKE "/junk/junk.so:",
                            1),
                     0);
    char **dirs = NULL;
    assert_int_equal(xpb_registry_default_dirs(&dirs), XPB_OK);
    assert_non_null(dirs);
    assert_int_equal(strv_len(dirs), 4);
    assert_string_equal(dirs[0], build_real);
    assert_string_equal(dirs[1], model_real);
    assert_string_equal(dirs[2], backend_real);
    assert_string_equal(dirs[3], install_real);
    xpb_strv_free(dirs);

    /* The default dirs feed straight into a load. */
    assert_int_equal(setenv("XPB_PLUGIN_PATH", FAKE "/good_backend", 1), 0);
    assert_int_equal(xpb_registry_default_dirs(&dirs), XPB_OK);
    xpb_registry *r = NULL;
    assert_int_equal(xpb_registry_load(&r, (const char *const *)dirs, strv_len(dirs), NULL),
                     XPB_OK);
    assert_non_null(xpb_registry_backend(r, "fake_good"));
    xpb_registry_free(r);
    xpb_strv_free(dirs);

    assert_int_equal(unsetenv("XPB_PLUGIN_PATH"), 0);
    assert_int_equal(xpb_registry_default_dirs(&dirs), XPB_OK);
    assert_int_equal(strv_len(dirs), 2);
    assert_string_equal(dirs[0], build_real);
    assert_string_equal(dirs[1], install_real);
    xpb_strv_free(dirs);

    for (int i = n_made; i-- > 0;)
        assert_int_equal(rmdir(made[i]), 0);

    /* Only folders that (still) exist are listed. */
    struct stat sb;
    size_t still = (stat(build, &sb) == 0) + (stat(install, &sb) == 0);
    assert_int_equal(xpb_registry_default_dirs(&dirs), XPB_OK);
    assert_int_equal(strv_len(dirs), still);
    xpb_strv_free(dirs);

    free(build_real);
    free(install_real);
    free(model_real);
    free(backend_real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_plugins_load),
        cmocka_unit_test(test_newer_minor_is_accepted),
        cmocka_unit_test(test_null_optional_entry_points_are_unsupported),
        cmocka_unit_test(test_oldest_header_has_no_optional_members),
        cmocka_unit_test(test_wrong_major),
        cmocka_unit_test(test_missing_symbol),
        cmocka_unit_test(test_failing_init),
        cmocka_unit_test(test_plugin_refuses_host),
        cmocka_unit_test(test_bad_name),
        cmocka_unit_test(test_missing_required_entry_point),
        cmocka_unit_test(test_short_function_table),
        cmocka_unit_test(test_bad_model_params),
        cmocka_unit_test(test_not_a_shared_object),
        cmocka_unit_test(test_missing_folder),
        cmocka_unit_test(test_duplicate_name_first_folder_wins),
        cmocka_unit_test(test_files_load_in_name_order),
        cmocka_unit_test(test_bad_plugins_never_stop_good_ones),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_host_log_service),
        cmocka_unit_test(test_default_dirs),
        cmocka_unit_test(test_abi_1_0_backend_runs_a_program),
        cmocka_unit_test(test_host_refuses_a_newer_op_set),
        cmocka_unit_test(test_abi_1_1_backend_refuses_by_name),
        cmocka_unit_test(test_abi_1_2_backend_runs_a_program),
        cmocka_unit_test(test_models_refuse_in_their_own_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
