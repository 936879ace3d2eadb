/* Run-by-run comparison of two results files (core/report/report_diff.h, `xpubench compare`):
 * a file against itself has no significant difference; a run made slower is found and counts
 * as a regression beyond the threshold only; faster runs, noise, runs that stopped finishing,
 * runs only in one file, runs of the same configuration, ignored config keys, and the text;
 * disturbed runs' slowdowns reported but not counted unless asked; nothing compared, with the
 * keys in which the runs differ. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare/compare.h"
#include "test_report_fixture.h"

/* Repeats with 2% spread (noisy) or 0.1% spread (tight), around x. */
#define NOISY(x)                                                                                   \
    {                                                                                              \
        (x) * 1.00, (x)*1.02, (x)*0.98                                                             \
    }
#define TIGHT(x)                                                                                   \
    {                                                                                              \
        (x) * 1.000, (x)*1.001, (x)*0.999                                                          \
    }

/* Old: four runs. scale[i] multiplies run i's throughput; status[i] replaces its status. */
static json_t *doc(const double scale[4], const char *const status[4])
{
    json_t *d = fx_doc(NULL);
    fx_add(d,
           &(fx_run){.id = "slow", .batch = 1, .tp = TIGHT(100 * scale[0]), .status = status[0]});
    fx_add(d,
           &(fx_run){.id = "fast", .batch = 2, .tp = TIGHT(100 * scale[1]), .status = status[1]});
    fx_add(d,
           &(fx_run){.id = "noisy", .batch = 4, .tp = NOISY(100 * scale[2]), .status = status[2]});
    fx_add(d,
           &(fx_run){.id = "same", .batch = 8, .tp = TIGHT(100 * scale[3]), .status = status[3]});
    fx_finish(d);
    return d;
}

/* The engine compares documents' views; the views of the last compared pair, released with
 * the comparison by diff_free. */
static struct xpb_results_doc old_view, new_view;

static xpb_status diff_docs(xpb_diff *c, const json_t *a, const json_t *b, double threshold,
                            const char *const *ignore, size_t n_ignore)
{
    assert_int_equal(xpb_results_view(&old_view, a), XPB_OK);
    assert_int_equal(xpb_results_view(&new_view, b), XPB_OK);
    return xpb_diff_docs(c, &old_view, &new_view, threshold, ignore, n_ignore, 0);
}

static void diff_free(xpb_diff *c)
{
    xpb_diff_free(c);
    xpb_results_view_free(&old_view);
    xpb_results_view_free(&new_view);
}

static const double ones[4] = {1, 1, 1, 1};
static const char *const oks[4] = {NULL, NULL, NULL, NULL};

static const xpb_diff_row *row(const xpb_diff *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->rows[i].id, id) == 0)
            return &c->rows[i];
    fail_msg("no row %s", id);
    return NULL;
}

static void test_against_itself(void **state)
{
    (void)state;
    json_t *a = doc(ones, oks);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, a, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.count[XPB_DIFF_SAME], 4);
    assert_int_equal(c.regressions, 0);
    for (size_t i = 0; i < c.n; i++) {
        assert_true(c.rows[i].change.estimate == 1);
        assert_true(c.rows[i].change.low < 1 && c.rows[i].change.high > 1);
    }
    assert_true(c.geomean == 1);
    diff_free(&c);
    json_decref(a);
}

static void test_slower_and_faster(void **state)
{
    (void)state;
    json_t *a = doc(ones, oks);
    const double scale[4] = {0.6, 1.3, 1.01, 1};
    json_t *b = doc(scale, oks);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    const xpb_diff_row *slow = row(&c, "slow"), *fast = row(&c, "fast");
    assert_int_equal(slow->verdict, XPB_DIFF_SLOWER);
    assert_true(slow->regression);
    assert_true(fabs(slow->change.estimate - 0.6) < 1e-9);
    assert_true(slow->change.high < 1);
    assert_int_equal(fast->verdict, XPB_DIFF_FASTER);
    assert_false(fast->regression);
    assert_true(fabs(fast->change.estimate - 1.3) < 1e-9 && fast->change.low > 1);
    assert_int_equal(row(&c, "noisy")->verdict, XPB_DIFF_SAME); /* 1% inside 2% noise */
    assert_int_equal(row(&c, "same")->verdict, XPB_DIFF_SAME);
    assert_int_equal(c.regressions, 1);
    assert_true(fabs(c.geomean - pow(0.6 * 1.3 * 1.01, 0.25)) < 1e-9);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
}

/* 3% slower, measured tightly: significant; a regression only below a 3% threshold. */
static void test_threshold(void **state)
{
    (void)state;
    json_t *a = doc(ones, oks);
    const double scale[4] = {0.97, 1, 1, 1};
    json_t *b = doc(scale, oks);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(row(&c, "slow")->verdict, XPB_DIFF_SLOWER);
    assert_int_equal(c.regressions, 0);
    diff_free(&c);
    assert_int_equal(diff_docs(&c, a, b, 0.02, NULL, 0), XPB_OK);
    assert_int_equal(c.regressions, 1);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
}

/* A run that finished in OLD and failed in NEW is a regression; the other way round is not. */
static void test_status_changes(void **state)
{
    (void)state;
    const char *const old_status[4] = {NULL, "failed", "unsupported", NULL};
    const char *const new_status[4] = {"failed", NULL, "unsupported", NULL};
    json_t *a = doc(ones, old_status), *b = doc(ones, new_status);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(row(&c, "slow")->verdict, XPB_DIFF_BROKEN);
    assert_true(row(&c, "slow")->regression);
    assert_int_equal(row(&c, "fast")->verdict, XPB_DIFF_FIXED);
    assert_int_equal(row(&c, "noisy")->verdict, XPB_DIFF_NOT_RUN);
    assert_int_equal(c.regressions, 1);
    assert_true(isnan(row(&c, "slow")->change.estimate));
    diff_free(&c);
    json_decref(a);
    json_decref(b);
}

/* Matching is by configuration, not by id; repeated configurations pair up in order; keys can
 * be left out of the matching. */
static void test_matching(void **state)
{
    (void)state;
    json_t *a = fx_doc(NULL), *b = fx_doc(NULL);
    fx_add(a, &(fx_run){.id = "x", .batch = 1, .threads = 2, .tp = TIGHT(100)});
    fx_add(a, &(fx_run){.id = "dup", .batch = 2, .threads = 2, .tp = TIGHT(10)});
    fx_add(a, &(fx_run){.id = "dup#2", .batch = 2, .threads = 2, .tp = TIGHT(20)});
    fx_add(a, &(fx_run){.id = "gone", .batch = 4, .threads = 2, .tp = TIGHT(30)});
    fx_add(b, &(fx_run){.id = "renamed", .batch = 2, .threads = 2, .tp = TIGHT(10)});
    fx_add(b, &(fx_run){.id = "renamed#2", .batch = 2, .threads = 2, .tp = TIGHT(20)});
    fx_add(b, &(fx_run){.id = "one-thread", .batch = 1, .threads = 1, .tp = TIGHT(55)});
    fx_add(b, &(fx_run){.id = "new", .batch = 64, .threads = 2, .tp = TIGHT(30)});
    fx_finish(a);
    fx_finish(b);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    assert_true(row(&c, "renamed")->old_tp == 10 && row(&c, "renamed#2")->old_tp == 20);
    assert_int_equal(row(&c, "renamed")->verdict, XPB_DIFF_SAME);
    assert_int_equal(row(&c, "one-thread")->verdict, XPB_DIFF_ONLY_NEW);
    assert_int_equal(row(&c, "new")->verdict, XPB_DIFF_ONLY_NEW);
    assert_int_equal(row(&c, "gone")->verdict, XPB_DIFF_ONLY_OLD);
    assert_int_equal(row(&c, "x")->verdict, XPB_DIFF_ONLY_OLD);
    assert_int_equal(c.regressions, 0);
    diff_free(&c);
    const char *ignore[] = {"threads"};
    assert_int_equal(diff_docs(&c, a, b, 0.05, ignore, 1), XPB_OK);
    const xpb_diff_row *t = row(&c, "one-thread");
    assert_int_equal(t->verdict, XPB_DIFF_SLOWER); /* 2 threads -> 1: 45% slower */
    assert_true(t->regression && t->old_tp == 100);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
}

/* A version-1 document has no allow_emulated, parallel or world_size: its runs match runs
 * measured since with the values their absence means (one process, no emulation), and no
 * other. */
static void test_version1_documents(void **state)
{
    (void)state;
    json_t *a = fx_doc(NULL), *b = fx_doc(NULL);
    fx_add(a, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(100)});
    fx_add(a, &(fx_run){.id = "y", .batch = 2, .tp = TIGHT(100)});
    fx_add(b, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(100)});
    fx_add(b, &(fx_run){.id = "y", .batch = 2, .tp = TIGHT(100)});
    fx_finish(a);
    fx_finish(b);
    for (size_t i = 0; i < 2; i++) {
        json_t *old_cfg = json_object_get(json_array_get(json_object_get(a, "runs"), i), "config");
        json_t *new_cfg = json_object_get(json_array_get(json_object_get(b, "runs"), i), "config");
        json_object_del(old_cfg, "allow_emulated");
        json_object_set_new(new_cfg, "allow_emulated", json_false());
        json_object_set_new(new_cfg, "parallel", json_string("none"));
        json_object_set_new(new_cfg, "world_size", json_integer(i == 0 ? 1 : 2));
    }
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(row(&c, "x")->verdict, XPB_DIFF_SAME);
    /* two ranks are not what a version-1 run measured */
    int only_new = 0;
    for (size_t i = 0; i < c.n; i++)
        only_new += strcmp(c.rows[i].id, "y") == 0 && c.rows[i].verdict == XPB_DIFF_ONLY_NEW;
    assert_int_equal(only_new, 1);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
}

static char *printed(const xpb_diff *c);

/* A run slower in NEW while other processes disturbed it: reported, counted only on request;
 * an undisturbed regression next to it still counts. */
static void test_disturbed(void **state)
{
    (void)state;
    json_t *a = fx_doc(NULL), *b = fx_doc(NULL);
    fx_add(a, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(100)});
    fx_add(a, &(fx_run){.id = "y", .batch = 2, .tp = TIGHT(100)});
    fx_add(b, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(60), .other_share = 0.3});
    fx_add(b, &(fx_run){.id = "y", .batch = 2, .tp = TIGHT(100)});
    fx_finish(a);
    fx_finish(b);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    const xpb_diff_row *x = row(&c, "x");
    assert_int_equal(x->verdict, XPB_DIFF_SLOWER);
    assert_true(x->regression && x->disturbed && x->discounted);
    assert_int_equal(c.regressions, 0);
    assert_int_equal(c.discounted, 1);
    diff_free(&c);
    assert_int_equal(xpb_results_view(&old_view, a), XPB_OK);
    assert_int_equal(xpb_results_view(&new_view, b), XPB_OK);
    assert_int_equal(
        xpb_diff_docs(&c, &old_view, &new_view, 0.05, NULL, 0, XPB_DIFF_COUNT_DISTURBED), XPB_OK);
    assert_false(row(&c, "x")->discounted);
    assert_int_equal(c.regressions, 1);
    assert_int_equal(c.discounted, 0);
    diff_free(&c);
    /* disturbed in OLD, and a clean regression beside it */
    json_t *d = fx_doc(NULL);
    fx_add(d, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(60)});
    fx_add(d, &(fx_run){.id = "y", .batch = 2, .tp = TIGHT(50)});
    fx_finish(d);
    json_object_set_new(
        json_object_get(json_object_get(json_array_get(json_object_get(a, "runs"), 0), "metrics"),
                        "interference"),
        "flagged", json_true());
    assert_int_equal(diff_docs(&c, a, d, 0.05, NULL, 0), XPB_OK);
    assert_true(row(&c, "x")->discounted);
    assert_false(row(&c, "y")->discounted);
    assert_int_equal(c.regressions, 1);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
    json_decref(d);
}

/* Nothing in common: nothing compared, and the keys in which the closest runs differ, in the
 * schema's order; some in common: the keys of those that are not. */
static void test_nothing_compared(void **state)
{
    (void)state;
    json_t *a = fx_doc(NULL), *b = fx_doc(NULL), *e = fx_doc(NULL);
    fx_add(a, &(fx_run){.id = "x", .batch = 1, .threads = 2, .tp = TIGHT(100)});
    fx_add(a, &(fx_run){.id = "y", .batch = 2, .threads = 2, .tp = TIGHT(100)});
    fx_add(b, &(fx_run){.id = "x", .batch = 1, .threads = 1, .tp = TIGHT(100)});
    fx_add(b,
           &(fx_run){
               .id = "y", .batch = 4, .threads = 1, .precision = "bf16-mixed", .tp = TIGHT(100)});
    fx_finish(a);
    fx_finish(b);
    fx_finish(e);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(c.matched, 0);
    assert_int_equal(c.regressions, 0);
    /* x differs from x in threads; y (bf16, batch 4) from x or y in batch, precision, threads */
    assert_int_equal(c.n_differing, 3);
    assert_string_equal(c.differing[0], "batch");
    assert_string_equal(c.differing[1], "precision");
    assert_string_equal(c.differing[2], "threads");
    char *text = printed(&c);
    assert_non_null(strstr(text, "the closest differ in: batch, precision, threads ("));
    assert_non_null(strstr(text, "NOTHING COMPARED: no regression can be ruled out"));
    assert_null(strstr(text, "no run is significantly slower"));
    free(text);
    diff_free(&c);
    const char *ignore[] = {"threads"};
    assert_int_equal(diff_docs(&c, a, b, 0.05, ignore, 1), XPB_OK);
    assert_int_equal(c.matched, 1); /* x and x */
    assert_int_equal(c.n_differing, 2);
    text = printed(&c);
    assert_non_null(strstr(text, "other file in: batch, precision ("));
    assert_null(strstr(text, "NOTHING COMPARED"));
    free(text);
    diff_free(&c);
    /* a configuration OLD has twice and NEW once: no key differs */
    json_t *twice = fx_doc(NULL), *once = fx_doc(NULL);
    fx_add(twice, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(100)});
    fx_add(twice, &(fx_run){.id = "x#2", .batch = 1, .tp = TIGHT(100)});
    fx_add(once, &(fx_run){.id = "x", .batch = 1, .tp = TIGHT(100)});
    fx_finish(twice);
    fx_finish(once);
    assert_int_equal(diff_docs(&c, twice, once, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(c.matched, 1);
    assert_int_equal(c.n_differing, 0);
    assert_int_equal(c.repeated, 1);
    text = printed(&c);
    if (!strstr(text, "in: 1 with a configuration the other file has fewer times ("))
        fail_msg("%s", text);
    free(text);
    diff_free(&c);
    json_decref(twice);
    json_decref(once);
    assert_int_equal(diff_docs(&c, e, e, 0.05, NULL, 0), XPB_OK); /* no runs at all */
    assert_int_equal(c.matched, 0);
    text = printed(&c);
    assert_non_null(strstr(text, "nothing was compared: neither file has runs"));
    free(text);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
    json_decref(e);
}

/* What xpb_diff_print prints, NUL-terminated; the caller frees it. */
static char *printed(const xpb_diff *c)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(xpb_diff_print(f, c, "old.json", "new.json"), XPB_OK);
    long len = ftell(f);
    char *text = malloc((size_t)len + 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = '\0';
    fclose(f);
    return text;
}

static void test_text(void **state)
{
    (void)state;
    json_t *a = doc(ones, oks);
    const double scale[4] = {0.6, 1.3, 1.01, 1};
    json_t *b = doc(scale, oks);
    xpb_diff c;
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    char *text = printed(&c);
    assert_non_null(
        strstr(text, "old: old.json (scenario t, created 2026-11-21T12:00:00Z, 4 runs)"));
    assert_non_null(strstr(text, "run "));
    const char *slow = strstr(text, "\nslow ");
    assert_non_null(slow);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(slow + 1, "\n"), slow + 1);
    assert_non_null(strstr(line, "-40.00% ["));
    assert_non_null(strstr(line, "slower, beyond 5%"));
    assert_non_null(strstr(text, "+30.00% ["));
    assert_non_null(strstr(text, "no significant difference"));
    assert_non_null(strstr(text, "1 faster, 1 slower, 2 with no significant difference"));
    assert_non_null(strstr(text, "REGRESSION: 1 run is significantly slower by more than 5%"));
    free(text);
    diff_free(&c);
    assert_int_equal(diff_docs(&c, a, a, 0.05, NULL, 0), XPB_OK);
    text = printed(&c);
    assert_non_null(strstr(text, "no run is significantly slower by more than 5%"));
    assert_null(strstr(text, "REGRESSION"));
    free(text);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
}

/* A document of one time-to-accuracy run whose five runs took secs[i] seconds to `target`
 * (INFINITY: did not converge). */
static json_t *tta_doc(const double secs[5], double target)
{
    json_t *d = fx_doc(NULL);
    fx_add(d, &(fx_run){.id = "tta", .batch = 64, .tp = TIGHT(100)});
    json_t *run = json_array_get(json_object_get(d, "runs"), 0);
    json_object_del(run, "metrics");
    json_object_set_new(json_object_get(run, "config"), "mode", json_string("tta"));
    json_t *runs = json_array();
    for (int i = 0; i < 5; i++) {
        int conv = isfinite(secs[i]);
        json_array_append_new(
            runs,
            json_pack("{s:i,s:b,s:o,s:o,s:i,s:i,s:n,s:n,s:f,s:f,s:f,s:b,s:[]}", "seed", i,
                      "converged", conv, "seconds", conv ? json_real(secs[i]) : json_null(),
                      "epochs", conv ? json_real(2) : json_null(), "steps", 10, "samples", 640,
                      "joules", "energy_source", "init_seconds", 1.0, "data_wait_seconds", 0.0,
                      "final_accuracy", 0.9, "outside_reference", 0, "curve"));
    }
    json_t *score = json_pack("{s:n,s:i,s:i,s:i,s:n,s:n,s:n}", "mean", "used", 3, "converged", 5,
                              "runs", 5, "min", "max", "stdev");
    double sorted[5];
    memcpy(sorted, secs, sizeof sorted);
    qsort(sorted, 5, sizeof sorted[0], fx_cmp_double);
    double mean = (sorted[1] + sorted[2] + sorted[3]) / 3;
    if (isfinite(mean))
        json_object_set_new(score, "mean", json_real(mean));
    json_object_set_new(score, "min", json_real(sorted[0]));
    for (int i = 4; i >= 0; i--)
        if (isfinite(sorted[i])) {
            json_object_set_new(score, "max", json_real(sorted[i]));
            break;
        }
    json_object_set_new(run, "tta",
                        json_pack("{s:s,s:i,s:i,s:{s:f,s:f},s:f,s:f,s:i,s:o,s:o,s:O,s:n}",
                                  "dataset", "fashion-mnist", "train_samples", 600, "test_samples",
                                  100, "normalisation", "mean", 0.3, "std", 0.35, "target", target,
                                  "eval_every", 1.0, "max_epochs", 10, "runs", runs, "seconds",
                                  score, "joules", score, "reference_epochs"));
    json_object_set_new(d, "schema_version", json_integer(3));
    return d;
}

static void test_time_to_accuracy(void **state)
{
    (void)state;
    const double base[5] = {100, 102, 98, 101, 99};
    const double quicker[5] = {50, 51, 49, 50.5, 49.5};
    const double missed[5] = {50, INFINITY, INFINITY, 50, 50};
    json_t *a = tta_doc(base, 0.9), *b = tta_doc(quicker, 0.9), *c2 = tta_doc(missed, 0.9);
    json_t *other = tta_doc(base, 0.8);
    xpb_diff c;
    /* twice as fast to the target: change 2x, faster, the times printed in seconds */
    assert_int_equal(diff_docs(&c, a, b, 0.05, NULL, 0), XPB_OK);
    const xpb_diff_row *r = row(&c, "tta");
    assert_true(r->tta);
    assert_int_equal(r->verdict, XPB_DIFF_FASTER);
    assert_true(fabs(r->change.estimate - 2.0) < 0.02);
    assert_true(fabs(r->old_tp - 100) < 1e-9);
    char *text = printed(&c);
    assert_non_null(strstr(text, "100.0 s to target (98.00-102.0)"));
    assert_null(strstr(text, "old samples/s"));
    assert_non_null(strstr(text, "time-to-accuracy runs: old and new = seconds to the target"));
    free(text);
    diff_free(&c);
    /* the other way round: slower, a regression */
    assert_int_equal(diff_docs(&c, b, a, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(row(&c, "tta")->verdict, XPB_DIFF_SLOWER);
    assert_int_equal(c.regressions, 1);
    diff_free(&c);
    /* two runs of five missed the target: no time to target any more */
    assert_int_equal(diff_docs(&c, a, c2, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(row(&c, "tta")->verdict, XPB_DIFF_BROKEN);
    diff_free(&c);
    /* a different target is a different measurement: not paired */
    assert_int_equal(diff_docs(&c, a, other, 0.05, NULL, 0), XPB_OK);
    assert_int_equal(c.count[XPB_DIFF_ONLY_OLD], 1);
    assert_int_equal(c.count[XPB_DIFF_ONLY_NEW], 1);
    diff_free(&c);
    json_decref(a);
    json_decref(b);
    json_decref(c2);
    json_decref(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_itself),
        cmocka_unit_test(test_slower_and_faster),
        cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_status_changes),
        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_version1_documents),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_disturbed),
        cmocka_unit_test(test_nothing_compared),
        cmocka_unit_test(test_time_to_accuracy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
