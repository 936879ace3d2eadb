/* Run-by-run comparison of two results files (see compare.h), read from their typed views. */
#include "compare/compare.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/comparisons.h"
#include "results/view_config.h"

/* Whether two runs have the same configuration, the ignored keys and "extra" aside; a
 * version-1 document's run matches with the values its absent keys mean (view_config.h). */
/* Whether two time-to-accuracy runs aimed at the same goal (their "tta" settings; a run without
 * them, which did not finish, agrees with any). */
static int same_goal(const struct xpb_results_run *a, const struct xpb_results_run *b)
{
    if (!a->has_tta || !b->has_tta)
        return 1;
    const struct xpb_results_tta *x = &a->tta, *y = &b->tta;
    return x->target == y->target && x->eval_every == y->eval_every &&
           x->max_epochs == y->max_epochs && x->dataset && y->dataset &&
           strcmp(x->dataset, y->dataset) == 0;
}

static int same_config(const struct xpb_results_run *a, const struct xpb_results_run *b,
                       const char *const *ignore, size_t n)
{
    return a->has_config && b->has_config &&
           xpb_results_config_same_except(&a->config, &b->config, ignore, n,
                                          XPB_CONFIG_V1_DEFAULTS) &&
           same_goal(a, b);
}

/* Whether a run measured time to accuracy (config.mode "tta"). */
static int is_tta(const struct xpb_results_run *run)
{
    return run->has_tta || (run->config.mode && strcmp(run->config.mode, "tta") == 0);
}

/* Whether a time-to-accuracy run has a time to target (its Olympic mean). */
static int tta_finished(const struct xpb_results_run *run)
{
    return run->ok && run->has_tta && isfinite(run->tta.seconds.mean);
}

/* The speeds 1 / seconds of a tta run's converged runs into out[0..cap); returns how many. */
static size_t tta_speeds(double *out, size_t cap, const struct xpb_results_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->tta.n_runs && n < cap; i++)
        if (run->tta.runs[i].converged == 1 && run->tta.runs[i].seconds > 0)
            out[n++] = 1.0 / run->tta.runs[i].seconds;
    return n;
}

/* How many times faster NEW reached the target than OLD: the ratio of the geometric means of
 * their converged runs' speeds with its Welch 95% interval. 0, or -1 without speeds. */
static int tta_change(xpb_interval *out, const struct xpb_results_run *old_run,
                      const struct xpb_results_run *new_run)
{
    double a[128], b[128];
    size_t na = tta_speeds(a, 128, old_run), nb = tta_speeds(b, 128, new_run);
    return xpb_interval_ratio(out, a, na, b, nb, 0.95);
}

/* The verdict and change of a matched pair: throughput, or for time-to-accuracy runs the time
 * to target (docs/results.md). */
static void judge(xpb_diff_row *row, double threshold)
{
    int tta = is_tta(row->old_run) || is_tta(row->new_run);
    int ok_old = tta ? tta_finished(row->old_run) : xpb_results_run_finished(row->old_run);
    int ok_new = tta ? tta_finished(row->new_run) : xpb_results_run_finished(row->new_run);
    row->change.estimate = row->change.low = row->change.high = NAN;
    if (!ok_old || !ok_new) {
        row->verdict = ok_old ? XPB_DIFF_BROKEN : ok_new ? XPB_DIFF_FIXED : XPB_DIFF_NOT_RUN;
        row->regression = ok_old;
        return;
    }
    if ((tta ? tta_change(&row->change, row->old_run, row->new_run)
             : xpb_results_speedup(&row->change, row->old_run, row->new_run)) != 0) {
        row->verdict = XPB_DIFF_SAME;
        return;
    }
    row->verdict = !xpb_interval_significant(&row->change) ? XPB_DIFF_SAME
                   : row->change.estimate > 1              ? XPB_DIFF_FASTER
                                                           : XPB_DIFF_SLOWER;
    row->regression = row->verdict == XPB_DIFF_SLOWER && row->change.estimate < 1 - threshold;
}

static void fill_row(xpb_diff_row *row, const struct xpb_results_run *old_run,
                     const struct xpb_results_run *new_run)
{
    const struct xpb_results_run *either = new_run ? new_run : old_run;
    row->old_run = old_run;
    row->new_run = new_run;
    row->id = either->id ? either->id : "";
    row->tta = is_tta(either);
    row->old_tp = !old_run   ? NAN
                  : row->tta ? old_run->tta.seconds.mean
                             : old_run->metrics.throughput.median;
    row->new_tp = !new_run   ? NAN
                  : row->tta ? new_run->tta.seconds.mean
                             : new_run->metrics.throughput.median;
    row->change.estimate = row->change.low = row->change.high = NAN;
    row->disturbed = (old_run && old_run->metrics.interference.flagged == 1) ||
                     (new_run && new_run->metrics.interference.flagged == 1);
}

/* Whether `key` is one of list[0..n). */
static int listed(const char *key, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], key) == 0)
            return 1;
    return 0;
}

/* Adds to c->differing the keys in which `run` differs from the run of `others` that differs
 * in the fewest keys (the ignored keys aside). */
static void closest_keys(xpb_diff *c, const struct xpb_results_run *run,
                         const struct xpb_results_doc *others, const char *const *ignore,
                         size_t n_ignore)
{
    size_t best = SIZE_MAX, best_j = 0;
    for (size_t j = 0; j < others->n_runs; j++) {
        size_t n = 0;
        for (size_t k = 0; xpb_results_config_key(k); k++) {
            const char *key = xpb_results_config_key(k);
            n += !listed(key, ignore, n_ignore) &&
                 !xpb_results_config_same_key(&run->config, &others->runs[j].config, key,
                                              XPB_CONFIG_V1_DEFAULTS);
        }
        if (n < best) {
            best = n;
            best_j = j;
        }
    }
    if (best == SIZE_MAX)
        return;
    c->repeated += best == 0; /* its configuration is there, paired with another run already */
    for (size_t k = 0; xpb_results_config_key(k); k++) {
        const char *key = xpb_results_config_key(k);
        if (listed(key, ignore, n_ignore) ||
            xpb_results_config_same_key(&run->config, &others->runs[best_j].config, key,
                                        XPB_CONFIG_V1_DEFAULTS) ||
            listed(key, c->differing, c->n_differing) || c->n_differing == XPB_DIFF_MAX_KEYS)
            continue;
        c->differing[c->n_differing++] = key;
    }
}

/* The keys of c->differing in the schema's order. */
static void order_keys(xpb_diff *c)
{
    size_t n = 0;
    const char *sorted[XPB_DIFF_MAX_KEYS];
    for (size_t k = 0; xpb_results_config_key(k); k++)
        if (listed(xpb_results_config_key(k), c->differing, c->n_differing) &&
            n < XPB_DIFF_MAX_KEYS)
            sorted[n++] = xpb_results_config_key(k);
    memcpy(c->differing, sorted, n * sizeof *sorted);
    c->n_differing = n;
}

/* Matches NEW's runs to OLD's in order; marks the OLD runs used in `used`. */
static void match(xpb_diff *c, char *used, const char *const *ignore, size_t n_ignore)
{
    const struct xpb_results_doc *olds = c->old_doc, *news = c->new_doc;
    for (size_t j = 0; j < news->n_runs; j++) {
        const struct xpb_results_run *nr = &news->runs[j], *orun = NULL;
        for (size_t i = 0; i < olds->n_runs && !orun; i++)
            if (!used[i] && same_config(&olds->runs[i], nr, ignore, n_ignore)) {
                used[i] = 1;
                orun = &olds->runs[i];
            }
        xpb_diff_row *row = &c->rows[c->n++];
        fill_row(row, orun, nr);
        if (orun)
            judge(row, c->threshold);
        else
            row->verdict = XPB_DIFF_ONLY_NEW;
    }
    for (size_t i = 0; i < olds->n_runs; i++)
        if (!used[i]) {
            xpb_diff_row *row = &c->rows[c->n++];
            fill_row(row, &olds->runs[i], NULL);
            row->verdict = XPB_DIFF_ONLY_OLD;
        }
}

xpb_status xpb_diff_docs(xpb_diff *out, const struct xpb_results_doc *old_doc,
                         const struct xpb_results_doc *new_doc, double threshold,
                         const char *const *ignore, size_t n_ignore, unsigned flags)
{
    memset(out, 0, sizeof *out);
    out->old_doc = old_doc;
    out->new_doc = new_doc;
    out->threshold = threshold;
    out->geomean = NAN;
    if (!old_doc->has_runs || !new_doc->has_runs)
        return XPB_INVALID_ARGUMENT;
    size_t total = old_doc->n_runs + new_doc->n_runs;
    char *used = calloc(old_doc->n_runs + 1, 1);
    out->rows = calloc(total ? total : 1, sizeof *out->rows);
    if (!used || !out->rows) {
        free(used);
        xpb_diff_free(out);
        return XPB_OUT_OF_MEMORY;
    }
    match(out, used, ignore, n_ignore);
    free(used);
    double log_sum = 0;
    size_t pairs = 0;
    for (size_t i = 0; i < out->n; i++) {
        xpb_diff_row *row = &out->rows[i];
        row->discounted = row->regression && row->disturbed && row->verdict == XPB_DIFF_SLOWER &&
                          !(flags & XPB_DIFF_COUNT_DISTURBED);
        out->count[row->verdict]++;
        out->regressions += (size_t)(row->regression && !row->discounted);
        out->discounted += (size_t)row->discounted;
        out->disturbed += (size_t)row->disturbed;
        if (row->verdict == XPB_DIFF_ONLY_NEW)
            closest_keys(out, row->new_run, old_doc, ignore, n_ignore);
        else if (row->verdict == XPB_DIFF_ONLY_OLD)
            closest_keys(out, row->old_run, new_doc, ignore, n_ignore);
        else
            out->matched++;
        if (row->change.estimate > 0) {
            log_sum += log(row->change.estimate);
            pairs++;
        }
    }
    if (pairs)
        out->geomean = exp(log_sum / (double)pairs);
    order_keys(out);
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
