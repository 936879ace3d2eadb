/* The harness of the model tests (tests/test_models.c, tests/test_models_seq.c): the registry of
 * the build's plugin folder, a run configuration from "key=value" text, a model's program, its
 * tensors by name and shape, op counts, a parameter's initial statistics, the status of a
 * build and the scenario of a standard run. Every function is static inline; include it after
 * <cmocka.h>. */
#ifndef XPB_TESTS_MODELS_HARNESS_H
#define XPB_TESTS_MODELS_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/loader.h"
#include "program/init.h"
#include "program/model_program.h"
#include "scenario/run_config.h"
#include "scenario/scenario.h"

/* The plugins of XPB_TEST_PLUGIN_DIR, loaded by mh_setup (owned by the test, freed by
 * mh_teardown). */
static xpb_registry *registry;

/* Loads the plugin folder and checks that cpu_ref and each of models[0..n) are there. Returns 0
 * or -1 (a CMocka group setup's answer). */
static inline int mh_setup(const char *const *models, size_t n)
{
    const char *dirs[1] = {XPB_TEST_PLUGIN_DIR};
    xpb_err err = {{0}};
    if (xpb_registry_load(&registry, dirs, 1, &err) != XPB_OK)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!xpb_registry_model(registry, models[i])) {
            fprintf(stderr, "model plugin '%s' not found in %s\n", models[i], XPB_TEST_PLUGIN_DIR);
            return -1;
        }
    return xpb_registry_backend(registry, "cpu_ref") ? 0 : -1;
}

static inline int mh_teardown(void **state)
{
    (void)state;
    xpb_registry_free(registry);
    return 0;
}

/* A run of `model` (NULL variant: the model's default) on cpu_ref with "key=value" parameters.
 * The strings are borrowed; the kv array is static storage of this helper (one config at a
 * time). */
static inline xpb_run_config config(const char *model, const char *variant, uint32_t batch,
                                    uint32_t mode, const char *params)
{
    static char text[256];
    static xpb_kv kv[10];
    size_t n = 0;
    snprintf(text, sizeof text, "%s", params ? params : "");
    for (char *tok = strtok(text, " "); tok && n < 10; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = 0;
        kv[n++] = (xpb_kv){tok, eq + 1};
    }
    xpb_run_config c = {.model = (char *)model,
                        .variant = (char *)variant,
                        .batch = batch,
                        .mode = mode,
                        .precision = XPB_PRECISION_FP32,
                        .seed = 42,
                        .lr = NAN,
                        .momentum = NAN,
                        .weight_decay = NAN,
                        .backend = "cpu_ref",
                        .params = n ? kv : NULL,
                        .n_params = n};
    return c;
}

/* The program of run `c` (the caller frees it with xpb_model_program_free); fails the test
 * when the model refuses. */
static inline xpb_model_program *create(const xpb_run_config *c)
{
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    xpb_program_options po = xpb_run_config_program(c);
    if (xpb_model_program_create(&mp, xpb_registry_model(registry, c->model), &po, &err) != XPB_OK)
        fail_msg("%s/%s: %s", c->model, c->variant ? c->variant : "default", err.msg);
    return mp;
}

static inline uint32_t find(const xpb_model_program *mp, const char *name)
{
    for (uint32_t t = 0; t < mp->n_tensors; t++)
        if (strcmp(mp->tensors[t].name, name) == 0)
            return t;
    return XPB_NO_TENSOR;
}

/* Asserts that tensor `name` exists with shape dims[0..ndim) (long long arguments). */
static inline void expect_shape(const xpb_model_program *mp, const char *name, uint32_t ndim, ...)
{
    uint32_t t = find(mp, name);
    if (t == XPB_NO_TENSOR)
        fail_msg("no tensor '%s'", name);
    va_list ap;
    va_start(ap, ndim);
    for (uint32_t d = 0; d < ndim; d++) {
        int64_t want = va_arg(ap, int64_t);
        if (mp->tensors[t].ndim != ndim || mp->tensors[t].dims[d] != want)
            fail_msg("'%s': dimension %u is %lld (ndim %u), expected %lld (ndim %u)", name, d,
                     (long long)mp->tensors[t].dims[d], mp->tensors[t].ndim, (long long)want, ndim);
    }
    va_end(ap);
}

static inline int count_ops(const xpb_model_program *mp, uint32_t kind)
{
    int c = 0;
    for (uint32_t i = 0; i < mp->n_ops; i++)
        c += mp->ops[i].kind == kind;
    return c;
}

/* The status of building `model` (batch 1, training) with "key=value" parameters; the
 * builder's message in msg[size]. */
static inline xpb_status build_status(const char *model, const char *variant, const char *params,
                                      char *msg, size_t size)
{
    xpb_model_program *mp = NULL;
    xpb_err err = {{0}};
    xpb_run_config c = config(model, variant, 1, XPB_MODE_TRAIN, params);
    xpb_program_options po = xpb_run_config_program(&c);
    xpb_status st = xpb_model_program_create(&mp, xpb_registry_model(registry, model), &po, &err);
    snprintf(msg, size, "%s", err.msg);
    xpb_model_program_free(mp);
    return st;
}

/* Mean, standard deviation and largest |value| of a parameter's initial value. */
static inline void init_stats(const xpb_model_program *mp, const char *name, double *mean,
                              double *std, double *maxabs)
{
    uint32_t t = find(mp, name);
    if (t == XPB_NO_TENSOR)
        fail_msg("no tensor '%s'", name);
    int64_t n = xpb_tensor_numel(&mp->tensors[t]);
    float *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    assert_int_equal(xpb_model_program_initial_value(mp, t, v), XPB_OK);
    double s = 0, s2 = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        s += v[i];
        s2 += (double)v[i] * v[i];
        if (fabs(v[i]) > m)
            m = fabs(v[i]);
    }
    *mean = s / (double)n;
    *std = sqrt(s2 / (double)n - *mean * *mean);
    *maxabs = m;
    free(v);
}

/* Loads configs/<file>.yaml and asserts that it is the one standard run `file` of
 * docs/workloads.md: model/variant in `mode` at `batch`. Returns the scenario (the caller frees it
 * with xpb_scenario_free); *run is its run. */
static inline xpb_scenario *standard_run(const xpb_run_config **run, const char *file,
                                         const char *model, const char *variant, uint32_t mode,
                                         uint32_t batch)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/%s.yaml", XPB_TEST_SOURCE_DIR, file);
    xpb_scenario *s = NULL;
    xpb_err err = {{0}};
    if (xpb_scenario_load(&s, path, NULL, 0, &err) != XPB_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s->n_runs, 1);
    const xpb_run_config *c = &s->runs[0];
    assert_string_equal(c->id, file);
    assert_string_equal(c->model, model);
    assert_non_null(c->variant);
    assert_string_equal(c->variant, variant);
    assert_int_equal(c->mode, mode);
    assert_int_equal(c->batch, batch);
    *run = c;
    return s;
}

#endif
