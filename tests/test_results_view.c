/* The typed view of a results document (core/results/view.h, view_config.h, view_fields.h):
 * every part of a version-2 and of a version-1 document read into members, absent values
 * marked as absent (NULL, NaN, XPB_RESULTS_NO_INT, XPB_RESULTS_NO_BOOL, has_ flags) whether
 * they are missing or mistyped, comparisons resolved to their runs, configurations compared
 * key by key, and a run's numbers by name with their paths. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "results/view.h"
#include "results/view_config.h"
#include "results/view_fields.h"
#include "test_report_fixture.h"

/* A version-2 document: a fused cpu_onednn run with a profile and measured energy, an unfused
 * one, a run on cpu_ref, and a failed run. */
static json_t *sample_doc(void)
{
    json_t *d = fx_doc(NULL);
    fx_add(d, &(fx_run){.id = "fused",
                        .backend = "cpu_onednn",
                        .fusion = 1,
                        .batch = 8,
                        .tp = {100, 110, 90},
                        .profile = 1,
                        .joules = 2,
                        .watts = 30,
                        .device_peak = 4096,
                        .host_run_peak = -1});
    fx_add(d, &(fx_run){.id = "unfused",
                        .backend = "cpu_onednn",
                        .batch = 8,
                        .tp = {80, 81, 79},
                        .precision = "bf16-mixed",
                        .other_share = 0.2});
    fx_add(d, &(fx_run){
                  .id = "ref", .backend = "cpu_ref", .fusion = 1, .batch = 8, .tp = {10, 11, 9}});
    fx_add(d, &(fx_run){.id = "broken", .backend = "cuda", .status = "failed"});
    fx_finish(d);
    return d;
}

static const struct xpb_results_run *run_of(const struct xpb_results_doc *v, const char *id)
{
    const struct xpb_results_run *r = xpb_results_find_run(v, id);
    assert_non_null(r);
    return r;
}

static void test_version2(void **state)
{
    (void)state;
    json_t *doc = sample_doc();
    struct xpb_results_doc v;
    assert_int_equal(xpb_results_view(&v, doc), XPB_OK);
    assert_int_equal(v.schema_version, 2);
    assert_string_equal(v.created, "2026-11-21T12:00:00Z");
    assert_string_equal(v.tool_version, "0.1.0");
    assert_int_equal(v.interrupted, XPB_RESULTS_NO_BOOL);
    assert_true(v.scenario.has_baseline && !v.scenario.baseline); /* null: the fastest CPU */
    assert_int_equal(v.scenario.n_overrides, 0);
    const struct xpb_results_environment *e = &v.environment;
    assert_true(e->cpu.cores == 2 && e->cpu.logical_cpus == 4 && e->cpu.n_flags == 2);
    assert_string_equal(e->cpu.flags[1], "fma");
    assert_true(e->memory_bytes == 17179869184LL);
    assert_string_equal(xpb_results_pair_get(e->libraries, e->n_libraries, "jansson"), "2.14");
    assert_null(xpb_results_pair_get(e->libraries, e->n_libraries, "libyaml"));
    assert_true(e->n_plugins == 1 && strcmp(e->plugins[0].abi, "1.1") == 0);
    assert_int_equal(v.n_runs, 4);

    const struct xpb_results_run *f = run_of(&v, "fused");
    assert_true(f->ok && f->index == 0 && !f->error);
    assert_true(f->config.batch == 8 && f->config.threads == 0 && f->config.fusion == 1);
    assert_string_equal(f->config.backend, "cpu_onednn");
    assert_true(f->config.allow_emulated == 0 && !f->config.parallel);
    assert_true(f->config.world_size == XPB_RESULTS_NO_INT && xpb_results_run_world_size(f) == 1);
    assert_true(f->config.has_params && f->config.n_params == 0 && !f->config.has_optimizer);
    assert_true(f->has_model && f->model.flops_per_sample_forward == 300000000);
    assert_string_equal(f->device.kind, "cpu");
    assert_int_equal(xpb_results_run_fuses(f), 1);
    assert_int_equal(xpb_results_run_fuses(run_of(&v, "ref")), 0);
    const struct xpb_results_metrics *m = &f->metrics;
    assert_true(m->throughput.median == 100 && m->throughput.min == 90 && m->throughput.max == 110);
    assert_true(m->throughput.ci95_low < 100 && m->throughput.ci95_high > 100);
    assert_true(m->n_repeats == 3 && m->repeats[1].throughput == 110 && m->repeats[1].steps == 10);
    assert_true(m->memory.device_peak_bytes == 4096);
    assert_true(m->memory.device_bytes_in_use == XPB_RESULTS_NO_INT); /* null */
    assert_true(m->energy.measured == 1 && m->energy.joules == 2 && !m->energy.reason);
    assert_true(!m->energy.has_domains && isnan(m->energy.package));
    assert_true(m->loss.n_series == 3 && m->loss.series[2].step == 30);
    assert_true(m->has_interference && m->interference.flagged == 0 && !m->has_parallel);
    assert_true(f->has_verification && f->verification.requested == 0);
    assert_int_equal(f->verification.verified, XPB_RESULTS_NO_BOOL);
    assert_true(f->has_profile && f->n_profile == 3);
    assert_string_equal(f->profile[1].fused_into, "CONV2D conv1");
    assert_null(f->profile[0].fused_into);

    const struct xpb_results_run *u = run_of(&v, "unfused");
    assert_int_equal(xpb_results_run_emulated(u), 1); /* bf16-mixed is emulated on this device */
    assert_int_equal(xpb_results_run_emulated(f), 0);
    assert_int_equal(u->metrics.interference.flagged, 1);
    assert_false(u->has_profile);

    const struct xpb_results_run *b = run_of(&v, "broken");
    assert_true(!b->ok && !b->has_metrics && strcmp(b->error, "the backend cannot run this") == 0);
    assert_true(isnan(b->metrics.throughput.median) && !xpb_results_run_finished(b));

    assert_true(v.has_comparisons && v.n_comparisons > 0);
    for (size_t i = 0; i < v.n_comparisons; i++) {
        const struct xpb_results_comparison *c = &v.comparisons[i];
        assert_int_equal(c->index, i);
        assert_non_null(c->base_run);
        assert_non_null(c->cand_run);
        assert_string_equal(c->base_run->id, c->baseline);
        assert_true(c->significant == 0 || c->significant == 1);
    }
    xpb_results_view_free(&v);
    json_decref(doc);
}

static void test_version1(void **state)
{
    (void)state;
    json_t *doc = sample_doc();
    fx_to_v1(doc);
    struct xpb_results_doc v;
    assert_int_equal(xpb_results_view(&v, doc), XPB_OK);
    assert_int_equal(v.schema_version, 1);
    assert_false(v.scenario.has_baseline);
    const struct xpb_results_run *f = run_of(&v, "fused");
    assert_null(f->device.kind);
    assert_false(f->device.has_capabilities);
    assert_int_equal(xpb_results_run_fuses(f), -1); /* the document does not say */
    assert_int_equal(f->config.allow_emulated, XPB_RESULTS_NO_BOOL);
    assert_true(isnan(f->metrics.throughput.ci95_low) && isnan(f->metrics.energy.watts));
    assert_false(f->metrics.has_interference);
    assert_true(f->metrics.memory.host_run_peak_bytes == XPB_RESULTS_NO_INT);
    assert_int_equal(f->metrics.loss.n_series, 0);
    for (size_t i = 0; i < v.n_comparisons; i++)
        assert_int_equal(v.comparisons[i].significant, XPB_RESULTS_NO_BOOL);
    xpb_results_view_free(&v);
    json_decref(doc);
}

/* A document that did not validate reads too: what is missing or mistyped is absent. */
static void test_mistyped(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *doc = json_loads("{\"schema_version\": \"2\", \"interrupted\": true, \"runs\": ["
                             "{\"status\": \"ok\", \"config\": {\"batch\": 64.0, \"fusion\": "
                             "\"yes\", \"model\": 5, \"extra\": {}}, \"metrics\": [],"
                             " \"device\": {\"capabilities\": [\"threads\", 3]}},"
                             "{\"id\": \"x\", \"config\": []}],"
                             " \"comparisons\": [{\"baseline\": \"nope\", \"candidate\": \"x\"}]}",
                             0, &jerr);
    assert_non_null(doc);
    struct xpb_results_doc v;
    assert_int_equal(xpb_results_view(&v, doc), XPB_OK);
    assert_true(v.schema_version == XPB_RESULTS_NO_INT && v.interrupted == 1);
    assert_null(v.environment.os);
    assert_int_equal(v.environment.n_libraries, 0);
    const struct xpb_results_run *r = &v.runs[0];
    assert_true(r->ok && !r->id && r->has_config);
    assert_true(r->config.batch == XPB_RESULTS_NO_INT);
    assert_int_equal(r->config.fusion, XPB_RESULTS_NO_BOOL);
    assert_null(r->config.model);
    assert_true(r->config.has_extra && !r->config.has_params);
    assert_false(r->has_metrics);
    assert_true(isnan(r->metrics.throughput.median) && !xpb_results_run_finished(r));
    assert_true(r->device.n_capabilities == 2 && !r->device.capabilities[1]);
    assert_int_equal(xpb_results_run_fuses(r), 0);
    assert_false(v.runs[1].has_config);
    assert_null(v.comparisons[0].base_run); /* no run has that id */
    assert_ptr_equal(v.comparisons[0].cand_run, &v.runs[1]);
    xpb_results_view_free(&v);
    json_decref(doc);

    /* not an object at all: an empty view */
    doc = json_array();
    assert_int_equal(xpb_results_view(&v, doc), XPB_OK);
    assert_true(!v.has_runs && v.n_runs == 0 && !v.has_comparisons);
    xpb_results_view_free(&v);
    json_decref(doc);
}

/* A run with config `json` read into *out (its arrays in `arena`); returns the run object,
 * which the view borrows from (the caller's, json_decref). */
static json_t *config_of(struct xpb_results_run *out, xpb_arena *arena, const char *json)
{
    json_error_t jerr;
    char text[512];
    snprintf(text, sizeof text, "{\"config\": %s}", json);
    json_t *run = json_loads(text, 0, &jerr);
    assert_non_null(run);
    assert_int_equal(xpb_results_view_run(out, arena, run, 2), XPB_OK);
    return run;
}

static void test_config(void **state)
{
    (void)state;
    json_t *doc = sample_doc();
    struct xpb_results_doc v;
    assert_int_equal(xpb_results_view(&v, doc), XPB_OK);
    const struct xpb_results_config *f = &run_of(&v, "fused")->config;
    const struct xpb_results_config *u = &run_of(&v, "unfused")->config;
    const struct xpb_results_config *r = &run_of(&v, "ref")->config;
    assert_false(xpb_results_config_same_key(f, u, "fusion", 0));
    assert_true(xpb_results_config_same_key(f, u, "batch", 0));
    assert_false(xpb_results_config_same_key(f, u, "no_such_key", 0));
    const char *fusion_precision[] = {"fusion", "precision"};
    assert_true(xpb_results_config_same_except(f, u, fusion_precision, 2, 0));
    assert_false(xpb_results_config_same_except(f, u, fusion_precision, 1, 0));
    assert_false(xpb_results_config_same_except(f, r, fusion_precision, 2, 0));
    assert_true(xpb_results_config_has(f, "allow_emulated"));
    assert_false(xpb_results_config_has(f, "world_size") || xpb_results_config_has(f, "optimizer"));
    assert_false(xpb_results_config_has(f, "extra") || xpb_results_config_has(f, "bogus"));
    assert_true(xpb_results_config_known("world_size") && !xpb_results_config_known("extra"));
    assert_true(xpb_results_config_int(f, "batch") == 8);
    assert_true(xpb_results_config_int(f, "backend") == XPB_RESULTS_NO_INT); /* not an integer */
    xpb_results_view_free(&v);
    json_decref(doc);

    /* an absent key of version 2 equals its meaning only when asked to */
    xpb_arena arena = {0};
    struct xpb_results_run a, b, c;
    json_t *ja = config_of(&a, &arena, "{\"batch\": 2, \"params\": {\"x\": \"1\", \"y\": \"2\"}}");
    json_t *jb =
        config_of(&b, &arena,
                  "{\"batch\": 2, \"world_size\": 1, \"parallel\": \"none\", \"allow_emulated\": "
                  "false, \"params\": {\"y\": \"2\", \"x\": \"1\"}}");
    json_t *jc =
        config_of(&c, &arena, "{\"batch\": 2, \"world_size\": 2, \"params\": {\"x\": \"1\"}}");
    assert_false(xpb_results_config_same_except(&a.config, &b.config, NULL, 0, 0));
    assert_true(
        xpb_results_config_same_except(&a.config, &b.config, NULL, 0, XPB_CONFIG_V1_DEFAULTS));
    assert_false(
        xpb_results_config_same_key(&a.config, &c.config, "world_size", XPB_CONFIG_V1_DEFAULTS));
    assert_true(xpb_results_config_same_key(&a.config, &b.config, "params", 0)); /* any order */
    assert_false(xpb_results_config_same_key(&a.config, &c.config, "params", 0));
    const char *skip[] = {"world_size", "params"};
    assert_true(xpb_results_config_same_except(&a.config, &c.config, skip, 2, 0));
    xpb_arena_free(&arena);
    json_decref(ja);
    json_decref(jb);
    json_decref(jc);
}

static void test_fields(void **state)
{
    (void)state;
    json_t *doc = sample_doc();
    struct xpb_results_doc v;
    assert_int_equal(xpb_results_view(&v, doc), XPB_OK);
    const struct xpb_results_run *f = run_of(&v, "fused");
    assert_string_equal(xpb_results_field_path(XPB_RF_THROUGHPUT_MEDIAN),
                        "metrics.throughput.median");
    assert_string_equal(xpb_results_field_path(XPB_RF_COUNT), "");
    assert_true(xpb_results_field(f, XPB_RF_THROUGHPUT_MEDIAN) == 100);
    assert_true(xpb_results_field(f, XPB_RF_BATCH) == 8);
    assert_true(xpb_results_field(f, XPB_RF_DEVICE_PEAK) == 4096);
    assert_true(isnan(xpb_results_field(f, XPB_RF_HOST_RUN_PEAK)));      /* null */
    assert_true(isnan(xpb_results_field(f, XPB_RF_SCALING_EFFICIENCY))); /* one rank */
    assert_true(xpb_results_field(f, XPB_RF_STEP_P95) == f->metrics.step_time_s.p95);
    /* every field has a path of its own, and the path leads to the value in the document */
    for (int i = 0; i < XPB_RF_COUNT; i++) {
        const char *p = xpb_results_field_path((enum xpb_results_field)i);
        assert_true(p[0] != '\0');
        for (int j = 0; j < i; j++)
            assert_string_not_equal(p, xpb_results_field_path((enum xpb_results_field)j));
        char path[128];
        snprintf(path, sizeof path, "f0:runs[0].%s", p);
        const json_t *x = fx_resolve(doc, path);
        double want = json_is_number(x) ? json_number_value(x) : NAN;
        double got = xpb_results_field(f, (enum xpb_results_field)i);
        if (!(got == want || (isnan(got) && isnan(want))))
            fail_msg("%s: %g in the view, %g in the document", p, got, want);
    }
    xpb_results_view_free(&v);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version2), cmocka_unit_test(test_version1),
        cmocka_unit_test(test_mistyped), cmocka_unit_test(test_config),
        cmocka_unit_test(test_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
