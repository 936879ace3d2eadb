/* Time to accuracy, on constructed runs (core/run/tta_score.c, tta_record.c, results/view.c,
 * results/tta_table.c): MLPerf's Olympic mean with runs that did not converge, the spread, the
 * energy sums, the reference-convergence flag, the "tta" record and how the results view and
 * the table read it back, the run's numbers by name (view_fields.h) and the summaries the
 * table and the leaderboard share (median epochs, runs outside the reference). The runs themselves
 * are exercised by test_tta_run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/names.h"
#include "results/tta_table.h"
#include "results/view.h"
#include "results/view_fields.h"
#include "run/tta_record.h"
#include "run/tta_score.h"
#include "run/tta_stop.h"

/* cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void test_olympic_drops_fastest_and_slowest(void **state)
{
    (void)state;
    const double v[5] = {12.0, 10.0, 30.0, 11.0, 13.0};
    xpb_tta_score s;
    xpb_tta_olympic(&s, v, 5);
    assert_int_equal(s.runs, 5);
    assert_int_equal(s.converged, 5);
    assert_int_equal(s.used, 3);
    assert_near(s.mean, 12.0, 1e-12); /* (11 + 12 + 13) / 3 */
    assert_near(s.min, 10.0, 0);
    assert_near(s.max, 30.0, 0);
    /* sample standard deviation of all five converged runs */
    double m = 76.0 / 5, ss = 0;
    for (int i = 0; i < 5; i++)
        ss += (v[i] - m) * (v[i] - m);
    assert_near(s.stdev, sqrt(ss / 4), 1e-9);
}

static void test_olympic_one_not_converged_is_the_slowest(void **state)
{
    (void)state;
    /* a run that missed the target counts as infinitely slow: dropped as the slowest */
    const double v[5] = {12.0, 10.0, INFINITY, 11.0, 13.0};
    xpb_tta_score s;
    xpb_tta_olympic(&s, v, 5);
    assert_int_equal(s.converged, 4);
    assert_int_equal(s.used, 3);
    assert_near(s.mean, 12.0, 1e-12);
    assert_near(s.max, 13.0, 0); /* the spread is the converged runs' */
}

static void test_olympic_two_not_converged_has_no_mean(void **state)
{
    (void)state;
    const double v[5] = {12.0, INFINITY, INFINITY, 11.0, 13.0};
    xpb_tta_score s;
    xpb_tta_olympic(&s, v, 5);
    assert_int_equal(s.converged, 3);
    assert_true(isnan(s.mean));
    assert_near(s.min, 11.0, 0);
    assert_near(s.max, 13.0, 0);
}

static void test_olympic_few_runs_average_all(void **state)
{
    (void)state;
    const double two[2] = {4.0, 6.0};
    xpb_tta_score s;
    xpb_tta_olympic(&s, two, 2);
    assert_int_equal(s.used, 2);
    assert_near(s.mean, 5.0, 1e-12);
    const double one[1] = {7.0};
    xpb_tta_olympic(&s, one, 1);
    assert_near(s.mean, 7.0, 0);
    assert_true(isnan(s.stdev)); /* needs two */
    xpb_tta_olympic(&s, NULL, 0);
    assert_true(isnan(s.mean));
    assert_int_equal(s.runs, 0);
    /* three runs: the middle one */
    const double three[3] = {9.0, 1.0, 5.0};
    xpb_tta_olympic(&s, three, 3);
    assert_int_equal(s.used, 1);
    assert_near(s.mean, 5.0, 0);
}

static void test_olympic_unmeasured_value_has_no_mean(void **state)
{
    (void)state;
    /* a converged run whose joules were not measured: the energy has no mean */
    const double v[4] = {100.0, NAN, 120.0, 110.0};
    xpb_tta_score s;
    xpb_tta_olympic(&s, v, 4);
    assert_true(isnan(s.mean));
    assert_int_equal(s.converged, 3);
}

static void test_reference_check(void **state)
{
    (void)state;
    assert_false(xpb_tta_outside_reference(3.0, 0)); /* no reference, no flag */
    assert_false(xpb_tta_outside_reference(3.0, 3.0));
    assert_false(xpb_tta_outside_reference(1.5, 3.0));
    assert_false(xpb_tta_outside_reference(6.0, 3.0));
    assert_true(xpb_tta_outside_reference(1.4, 3.0));
    assert_true(xpb_tta_outside_reference(6.1, 3.0));
    assert_false(xpb_tta_outside_reference(NAN, 3.0));
    /* the measured point (docs/results.md), and none where nothing was measured */
    assert_true(xpb_tta_reference_epochs("conv6", "fashion-mnist", 0.9) == 4.5);
    assert_true(xpb_tta_reference_epochs("resnet18", "fashion-mnist", 0.92) == 3.5);
    assert_true(xpb_tta_reference_epochs("resnet18", "fashion-mnist", 0.90) == 0);
    assert_true(xpb_tta_reference_epochs("vgg16", "fashion-mnist", 0.92) == 0);
    assert_true(xpb_tta_reference_epochs("conv6", "fashion-mnist", 0.0) == 0);
    assert_true(xpb_tta_reference_epochs("nope", "fashion-mnist", 0.9) == 0);
    assert_true(xpb_tta_reference_epochs(NULL, NULL, 0.9) == 0);
}

/* A result of five constructed runs: seconds 20, 10, 30, 40 and one that did not converge;
 * joules 200, 100, 300, 400 by a meter ("rapl"). */
static void constructed(xpb_tta_result *res, xpb_run_config *cfg, xpb_dataset *ds)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model = "conv6";
    cfg->target = 0.5;
    cfg->eval_every = 1;
    cfg->max_epochs = 4;
    memset(ds, 0, sizeof *ds);
    ds->name = "fashion-mnist";
    ds->count[0] = 600;
    ds->count[1] = 100;
    ds->mean = 0.25;
    ds->std = 0.5;
    xpb_tta_result_init(res, cfg, ds);
    const double secs[5] = {20, 10, 30, 40, NAN};
    for (int i = 0; i < 5; i++) {
        xpb_tta_run *r = xpb_tta_result_add(res);
        assert_non_null(r);
        r->seed = (uint64_t)i;
        r->steps = 10;
        r->samples = 640;
        r->energy_source = "rapl";
        for (int e = 1; e <= 4; e++) {
            double acc = i == 4 ? 0.1 * e : 0.15 * e; /* the last never reaches 0.5 */
            /* the last one's loss is NaN at its last evaluation: it diverged there */
            double loss = i == 4 && e == 4 ? NAN : 1.0 / e;
            assert_int_equal(xpb_tta_run_point(r, e, 10.0 * e, acc, loss), 0);
            if (i < 4 && acc >= 0.5 && !r->converged) {
                r->converged = 1;
                r->epochs = e;
            }
        }
        if (i < 4) {
            r->seconds = secs[i];
            r->joules = 10 * secs[i];
        }
        r->data_wait_seconds = 0.5;
        r->stopped_early = i == 4 ? "diverged" : NULL;
    }
}

static void test_record_scores_and_sums_energy(void **state)
{
    (void)state;
    xpb_tta_result res;
    xpb_run_config cfg;
    xpb_dataset ds;
    constructed(&res, &cfg, &ds);
    json_t *j = xpb_tta_result_json(&res);
    assert_non_null(j);
    json_t *secs = json_object_get(j, "seconds"), *joules = json_object_get(j, "joules");
    /* sorted 10 20 30 40 inf: 20 + 30 + 40 averaged */
    assert_near(json_real_value(json_object_get(secs, "mean")), 30.0, 1e-12);
    assert_int_equal(json_integer_value(json_object_get(secs, "converged")), 4);
    assert_int_equal(json_integer_value(json_object_get(secs, "runs")), 5);
    assert_near(json_real_value(json_object_get(joules, "mean")), 300.0, 1e-12);
    assert_near(json_real_value(json_object_get(joules, "min")), 100.0, 0);
    json_t *runs = json_object_get(j, "runs");
    assert_int_equal(json_array_size(runs), 5);
    json_t *last = json_array_get(runs, 4);
    assert_true(json_is_false(json_object_get(last, "converged")));
    assert_true(json_is_null(json_object_get(last, "seconds")));
    assert_true(json_is_null(json_object_get(last, "joules")));
    assert_near(json_real_value(json_object_get(last, "final_accuracy")), 0.4, 1e-12);
    assert_int_equal(json_array_size(json_object_get(last, "curve")), 4);
    /* the diverged run says so, its non-finite loss is null; the others did not diverge */
    assert_string_equal(json_string_value(json_object_get(last, "stopped_early")), "diverged");
    assert_true(json_is_null(json_object_get(json_array_get(runs, 0), "stopped_early")));
    json_t *lastpts = json_object_get(last, "curve");
    assert_true(json_is_null(json_object_get(json_array_get(lastpts, 3), "loss")));
    assert_near(json_real_value(json_object_get(json_array_get(lastpts, 1), "loss")), 0.5, 0);
    assert_true(json_is_null(json_object_get(j, "reference_epochs"))); /* target 0.5: none */
    assert_near(json_real_value(json_object_get(j, "target")), 0.5, 0);

    /* read back by the results view, printed by the table */
    json_t *run = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:i},s:O}", "id", "tta-run", "status",
                            "ok", "config", "model", "conv6", "mode", "tta", "backend",
                            "cpu_onednn", "precision", "fp32", "batch", 64, "tta", j);
    xpb_arena arena = {0};
    struct xpb_results_run v;
    assert_int_equal(xpb_results_view_run(&v, &arena, run, 3), XPB_OK);
    assert_true(v.has_tta);
    assert_true(xpb_results_run_is_tta(&v));
    assert_int_equal(v.tta.n_runs, 5);
    assert_near(v.tta.seconds.mean, 30.0, 1e-12);
    assert_int_equal(v.tta.runs[1].converged, 1);
    assert_near(v.tta.runs[1].epochs, 4.0, 0); /* 0.15 x 4 = 0.6 first reaches 0.5 */
    assert_int_equal(v.tta.runs[4].converged, 0);
    assert_int_equal(v.tta.runs[4].n_curve, 4);
    assert_near(v.tta.runs[4].curve[3].accuracy, 0.4, 1e-12);
    assert_true(isnan(v.tta.runs[4].curve[3].loss));
    assert_near(v.tta.runs[4].curve[1].loss, 0.5, 0);
    assert_string_equal(v.tta.runs[4].stopped_early, "diverged");
    assert_null(v.tta.runs[0].stopped_early);
    char why[64];
    xpb_results_tta_stopped_note(why, sizeof why, &v.tta);
    assert_string_equal(why, " (1 diverged)");
    struct xpb_results_tta_run both[2] = {v.tta.runs[4], v.tta.runs[4]};
    both[1].stopped_early = "stalled";
    struct xpb_results_tta two = v.tta;
    two.runs = both;
    two.n_runs = 2;
    xpb_results_tta_stopped_note(why, sizeof why, &two);
    assert_string_equal(why, " (1 diverged, 1 stalled)");
    assert_near(v.tta.norm_std, 0.5, 0);

    /* its numbers by name, each at the path it names */
    assert_near(xpb_results_field(&v, XPB_RF_TTA_SECONDS_MEAN), 30.0, 1e-12);
    assert_near(xpb_results_field(&v, XPB_RF_TTA_SECONDS_CONVERGED), 4, 0);
    assert_near(xpb_results_field(&v, XPB_RF_TTA_JOULES_RUNS), 5, 0);
    assert_near(xpb_results_field(&v, XPB_RF_TTA_MAX_EPOCHS), 4, 0);
    assert_true(isnan(xpb_results_field(&v, XPB_RF_TTA_REFERENCE_EPOCHS))); /* null */
    assert_true(isnan(xpb_results_field(&v, XPB_RF_THROUGHPUT_MEDIAN)));    /* no metrics */
    assert_string_equal(xpb_results_field_path(XPB_RF_TTA_TARGET), "tta.target");
    for (int f = XPB_RF_TTA_TARGET; f < XPB_RF_COUNT; f++) {
        const json_t *x = run;
        char path[64];
        snprintf(path, sizeof path, "%s", xpb_results_field_path((enum xpb_results_field)f));
        for (char *key = strtok(path, "."); key && x; key = strtok(NULL, "."))
            x = json_object_get(x, key);
        double want = json_is_number(x) ? json_number_value(x) : NAN;
        double got = xpb_results_field(&v, (enum xpb_results_field)f);
        if (!(got == want || (isnan(got) && isnan(want))))
            fail_msg("%s: %g in the view, %g in the document",
                     xpb_results_field_path((enum xpb_results_field)f), got, want);
    }
    assert_near(xpb_results_tta_median_epochs(&v.tta), 4.0, 0);
    assert_int_equal(xpb_results_tta_outside(&v.tta), 0);

    struct xpb_results_doc doc = {0};
    doc.n_runs = 1;
    doc.runs = &v;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    xpb_results_print_tta(f, &doc);
    fclose(f);
    assert_non_null(strstr(text, "time to accuracy:"));
    assert_non_null(strstr(text, "4/5 (1 diverged)"));
    assert_non_null(strstr(text, "10.0-40.0"));
    assert_non_null(strstr(text, "300"));
    free(text);

    xpb_arena_free(&arena);
    json_decref(run);
    json_decref(j);
    xpb_tta_result_free(&res);
}

/* A run at `n` evaluations every half epoch: accuracy and loss of each. */
static void curve_of(xpb_tta_run *r, const double *acc, const double *loss, size_t n)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            xpb_tta_run_point(r, 0.5 * (double)(i + 1), 10.0 * (double)i, acc[i], loss[i]), 0);
}

/* The early stop: a non-finite loss at once; chance accuracy with ln(10) loss only once it has
 * lasted XPB_TTA_STALL_EPOCHS; a recovery, a learning run, or a wrong but confident network go
 * on. */
static void test_stop_rule(void **state)
{
    (void)state;
    xpb_tta_run r;
    const double ln10 = log(10.0);
    const double learning[] = {0.5, 0.7, 0.8, 0.85, 0.86, 0.87};
    const double learning_loss[] = {1.2, 0.8, 0.6, 0.5, 0.45, 0.4};
    curve_of(&r, learning, learning_loss, 6);
    assert_null(xpb_tta_stop_reason(&r, 10));
    free(r.curve);

    const double nan_loss[] = {1.2, 0.8, NAN};
    curve_of(&r, learning, nan_loss, 3);
    assert_string_equal(xpb_tta_stop_reason(&r, 10), "diverged");
    free(r.curve);
    const double inf_loss[] = {INFINITY};
    curve_of(&r, learning, inf_loss, 1);
    assert_string_equal(xpb_tta_stop_reason(&r, 10), "diverged");
    free(r.curve);

    /* at chance from 1.0 epochs: 1.0 .. 2.5 is 1.5 epochs, then 1.0 .. 3.0 is 2 */
    const double stuck[] = {0.6, 0.1, 0.1, 0.1, 0.1, 0.1};
    const double stuck_loss[] = {1.0, ln10 + 0.01, ln10 - 0.02, ln10 + 0.06, ln10, ln10 + 0.03};
    curve_of(&r, stuck, stuck_loss, 5);
    assert_null(xpb_tta_stop_reason(&r, 10));
    free(r.curve);
    curve_of(&r, stuck, stuck_loss, 6);
    assert_string_equal(xpb_tta_stop_reason(&r, 10), "stalled");
    free(r.curve);

    /* the streak broken by a recovery starts again */
    const double recovered[] = {0.1, 0.1, 0.1, 0.4, 0.1, 0.1, 0.1, 0.1};
    const double recovered_loss[] = {ln10, ln10, ln10, 1.5, ln10, ln10, ln10, ln10};
    curve_of(&r, recovered, recovered_loss, 7);
    assert_null(xpb_tta_stop_reason(&r, 10)); /* 2.5 .. 3.5: 1 epoch */
    free(r.curve);
    curve_of(&r, recovered, recovered_loss, 8);
    assert_null(xpb_tta_stop_reason(&r, 10)); /* 2.5 .. 4.0: 1.5 epochs */
    free(r.curve);

    /* chance accuracy with a loss far from ln(10): still learning something (or confidently
     * wrong), not a constant output: goes on */
    const double wrong[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
    const double wrong_loss[] = {3.5, 3.0, 2.9, 2.8, 2.7, 2.6};
    curve_of(&r, wrong, wrong_loss, 6);
    assert_null(xpb_tta_stop_reason(&r, 10));
    free(r.curve);
    /* above chance with ln(10) loss: goes on */
    const double above[] = {0.2, 0.2, 0.2, 0.2, 0.2, 0.2};
    curve_of(&r, above, stuck_loss + 1, 5);
    assert_null(xpb_tta_stop_reason(&r, 10));
    free(r.curve);
    /* no evaluation yet, or one class: nothing to say */
    curve_of(&r, stuck, stuck_loss, 0);
    assert_null(xpb_tta_stop_reason(&r, 10));
    curve_of(&r, stuck, stuck_loss + 1, 5);
    assert_null(xpb_tta_stop_reason(&r, 1));
    free(r.curve);
}

/* The median of the converged runs' epochs (an even count averages the middle two) and the
 * runs flagged outside the reference, on runs made by hand. */
static void test_summaries(void **state)
{
    (void)state;
    struct xpb_results_tta_run runs[4] = {
        {.converged = 1, .epochs = 2.0, .outside_reference = 0},
        {.converged = 1, .epochs = 4.0, .outside_reference = 1},
        {.converged = 0, .epochs = NAN, .outside_reference = 0},
        {.converged = 1, .epochs = 3.5, .outside_reference = XPB_RESULTS_NO_BOOL},
    };
    struct xpb_results_tta t = {.n_runs = 4, .runs = runs};
    assert_near(xpb_results_tta_median_epochs(&t), 3.5, 0);
    assert_int_equal(xpb_results_tta_outside(&t), 1);
    t.n_runs = 2;
    assert_near(xpb_results_tta_median_epochs(&t), 3.0, 0);
    runs[0].converged = runs[1].converged = 0;
    assert_true(isnan(xpb_results_tta_median_epochs(&t)));
    t.n_runs = 0;
    assert_int_equal(xpb_results_tta_outside(&t), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_olympic_drops_fastest_and_slowest),
        cmocka_unit_test(test_olympic_one_not_converged_is_the_slowest),
        cmocka_unit_test(test_olympic_two_not_converged_has_no_mean),
        cmocka_unit_test(test_olympic_few_runs_average_all),
        cmocka_unit_test(test_olympic_unmeasured_value_has_no_mean),
        cmocka_unit_test(test_reference_check),
        cmocka_unit_test(test_record_scores_and_sums_energy),
        cmocka_unit_test(test_summaries),
        cmocka_unit_test(test_stop_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
