/* Run-by-run comparison of two results files (see report_diff.h). */
#include "compare/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "results/results.h"

/* run[key] as a string borrowed from the document, "" when it is not one. */
static const char *run_str(const json_t *run, const char *key)
{
    const char *s = json_string_value(json_object_get(run, key));
    return s ? s : "";
}

static int finished(const json_t *run)
{
    const json_t *m =
        json_object_get(json_object_get(json_object_get(run, "metrics"), "throughput"), "median");
    return strcmp(run_str(run, "status"), "ok") == 0 && json_number_value(m) > 0;
}

static double median(const json_t *run)
{
    const json_t *m =
        json_object_get(json_object_get(json_object_get(run, "metrics"), "throughput"), "median");
    return json_is_number(m) ? json_number_value(m) : NAN;
}

static int disturbed(const json_t *run)
{
    const json_t *i = json_object_get(json_object_get(run, "metrics"), "interference");
    return json_is_true(json_object_get(i, "flagged"));
}

static int ignored(const char *key, const char *const *ignore, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, ignore[i]) == 0)
            return 1;
    return strcmp(key, "extra") == 0;
}

/* What a configuration without the key means, for the keys results version 2 added
 * (docs/results.md): a version-1 document ran one process and refused emulated precisions, so
 * its runs still match the same runs measured since. */
static const struct {
    const char *key, *json;
} absent_means[] = {{"allow_emulated", "false"}, {"parallel", "\"none\""}, {"world_size", "1"}};

/* Whether configurations a and b agree on `key` (present in at least one of them). */
static int same_value(const json_t *ca, const json_t *cb, const char *key)
{
    const json_t *a = json_object_get(ca, key), *b = json_object_get(cb, key);
    if (a && b)
        return json_equal(a, b);
    for (size_t i = 0; i < sizeof absent_means / sizeof absent_means[0]; i++)
        if (strcmp(key, absent_means[i].key) == 0) {
            json_t *meant = json_loads(absent_means[i].json, JSON_DECODE_ANY, NULL);
            int same = meant && json_equal(meant, a ? a : b);
            json_decref(meant);
            return same;
        }
    return 0;
}

/* Whether two runs have the same configuration, the ignored keys and "extra" aside. */
static int same_config(const json_t *a, const json_t *b, const char *const *ignore, size_t n)
{
    const json_t *ca = json_object_get(a, "config"), *cb = json_object_get(b, "config");
    const char *key;
    json_t *value;
    if (!json_is_object(ca) || !json_is_object(cb))
        return 0;
    json_object_foreach((json_t *)ca, key, value)
    {
        if (!ignored(key, ignore, n) && !same_value(ca, cb, key))
            return 0;
    }
    json_object_foreach((json_t *)cb, key, value)
    {
        if (!ignored(key, ignore, n) && !json_object_get(ca, key) && !same_value(ca, cb, key))
            return 0;
    }
    return 1;
}

/* The verdict and change of a matched pair. */
static void judge(xpb_diff_row *row, double threshold)
{
    int ok_old = finished(row->old_run), ok_new = finished(row->new_run);
    row->change.estimate = row->change.low = row->change.high = NAN;
    if (!ok_old || !ok_new) {
        row->verdict = ok_old ? XPB_DIFF_BROKEN : ok_new ? XPB_DIFF_FIXED : XPB_DIFF_NOT_RUN;
        row->regression = ok_old;
        return;
    }
    if (xpb_results_speedup(&row->change, row->old_run, row->new_run) != 0) {
        row->verdict = XPB_DIFF_SAME;
        return;
    }
    row->verdict = !xpb_interval_significant(&row->change) ? XPB_DIFF_SAME
                   : row->change.estimate > 1              ? XPB_DIFF_FASTER
                                                           : XPB_DIFF_SLOWER;
    row->regression = row->verdict == XPB_DIFF_SLOWER && row->change.estimate < 1 - threshold;
}

static void fill_row(xpb_diff_row *row, const json_t *old_run, const json_t *new_run)
{
    row->old_run = old_run;
    row->new_run = new_run;
    row->id = run_str(new_run ? new_run : old_run, "id");
    row->old_tp = old_run ? median(old_run) : NAN;
    row->new_tp = new_run ? median(new_run) : NAN;
    row->change.estimate = row->change.low = row->change.high = NAN;
    row->disturbed = (old_run && disturbed(old_run)) || (new_run && disturbed(new_run));
}

/* Matches NEW's runs to OLD's in order; marks the OLD runs used in `used`. */
static void match(xpb_diff *c, const json_t *olds, const json_t *news, char *used,
                  const char *const *ignore, size_t n_ignore)
{
    for (size_t j = 0; j < json_array_size(news); j++) {
        const json_t *nr = json_array_get(news, j), *orun = NULL;
        for (size_t i = 0; i < json_array_size(olds) && !orun; i++)
            if (!used[i] && same_config(json_array_get(olds, i), nr, ignore, n_ignore)) {
                used[i] = 1;
                orun = json_array_get(olds, i);
            }
        xpb_diff_row *row = &c->rows[c->n++];
        fill_row(row, orun, nr);
        if (orun)
            judge(row, c->threshold);
        else
            row->verdict = XPB_DIFF_ONLY_NEW;
    }
    for (size_t i = 0; i < json_array_size(olds); i++)
        if (!used[i]) {
            xpb_diff_row *row = &c->rows[c->n++];
            fill_row(row, json_array_get(olds, i), NULL);
            row->verdict = XPB_DIFF_ONLY_OLD;
        }
}

xpb_status xpb_diff_docs(xpb_diff *out, const json_t *old_doc, const json_t *new_doc,
                         double threshold, const char *const *ignore, size_t n_ignore)
{
    memset(out, 0, sizeof *out);
    out->old_doc = old_doc;
    out->new_doc = new_doc;
    out->threshold = threshold;
    out->geomean = NAN;
    const json_t *olds = json_object_get(old_doc, "runs"), *news = json_object_get(new_doc, "runs");
    if (!json_is_array(olds) || !json_is_array(news))
        return XPB_INVALID_ARGUMENT;
    size_t total = json_array_size(olds) + json_array_size(news);
    char *used = calloc(json_array_size(olds) + 1, 1);
    out->rows = calloc(total ? total : 1, sizeof *out->rows);
    if (!used || !out->rows) {
        free(used);
        xpb_diff_free(out);
        return XPB_OUT_OF_MEMORY;
    }
    match(out, olds, news, used, ignore, n_ignore);
    free(used);
    double log_sum = 0;
    size_t pairs = 0;
    for (size_t i = 0; i < out->n; i++) {
        const xpb_diff_row *row = &out->rows[i];
        out->count[row->verdict]++;
        out->regressions += (size_t)row->regression;
        out->disturbed += (size_t)row->disturbed;
        if (row->change.estimate > 0) {
            log_sum += log(row->change.estimate);
            pairs++;
        }
    }
    if (pairs)
        out->geomean = exp(log_sum / (double)pairs);
    return XPB_OK;
}

void xpb_diff_free(xpb_diff *c)
{
    free(c->rows);
    memset(c, 0, sizeof *c);
}

const char *xpb_diff_verdict_name(xpb_diff_verdict v)
{
    static const char *const names[] = {
        [XPB_DIFF_SAME] = "no significant difference",
        [XPB_DIFF_FASTER] = "faster",
        [XPB_DIFF_SLOWER] = "slower",
        [XPB_DIFF_BROKEN] = "did not finish in NEW",
        [XPB_DIFF_FIXED] = "finished in NEW only",
        [XPB_DIFF_NOT_RUN] = "finished in neither",
        [XPB_DIFF_ONLY_OLD] = "only in OLD",
        [XPB_DIFF_ONLY_NEW] = "only in NEW",
    };
    return (unsigned)v <= XPB_DIFF_ONLY_NEW ? names[v] : "?";
}
