/* The text of `xpubench compare` (see compare.h): one line per run with the two median
 * throughputs and their intervals, the change with its interval and the verdict, then the
 * geometric mean of the changes and a summary that says whether anything regressed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare/compare.h"
#include "render/format.h"
#include "render/terminal.h"

#define N_COLS 5
#define CELL 192

/* "1234 [1200, 1251]": a run's median throughput and the file's interval; "-" when none. */
static void throughput_text(char *buf, size_t size, const struct xpb_results_run *run,
                            double median)
{
    char m[48], l[48], h[48];
    if (!run || !isfinite(median)) {
        snprintf(buf, size, "-");
        return;
    }
    double lo = run->metrics.throughput.ci95_low, hi = run->metrics.throughput.ci95_high;
    xpb_report_format_number(m, sizeof m, median);
    if (run->has_tta) { /* the time to target and the converged runs' spread */
        lo = run->tta.seconds.min;
        hi = run->tta.seconds.max;
        xpb_report_format_number(l, sizeof l, lo);
        xpb_report_format_number(h, sizeof h, hi);
        if (isnan(lo) || isnan(hi))
            snprintf(buf, size, "%s s to target", m);
        else
            snprintf(buf, size, "%s s to target (%s-%s)", m, l, h);
        return;
    }
    if (isnan(lo) || isnan(hi)) {
        snprintf(buf, size, "%s", m);
        return;
    }
    xpb_report_format_number(l, sizeof l, lo);
    xpb_report_format_number(h, sizeof h, hi);
    snprintf(buf, size, "%s [%s, %s]", m, l, h);
}

/* A ratio as a signed change in percent: 0.8914 -> "-10.86%". */
static void percent(char *buf, size_t size, double ratio)
{
    char n[24];
    xpb_report_format_number(n, sizeof n, (ratio - 1) * 100);
    snprintf(buf, size, "%s%s%%", ratio >= 1 ? "+" : "", n);
}

static void cell_text(char *buf, size_t size, const xpb_diff *c, const xpb_diff_row *row, int col)
{
    static const char *const headers[N_COLS] = {"run", "old samples/s", "new samples/s", "change",
                                                "verdict"};
    char a[32], b[32], d[32];
    int tta = 0; /* a time-to-accuracy row: the two middle columns are not all samples/s */
    for (size_t i = 0; i < c->n; i++)
        tta |= c->rows[i].tta;
    if (!row) {
        snprintf(buf, size, "%s", tta && col == 1 ? "old" : tta && col == 2 ? "new" : headers[col]);
    } else if (col == 0) {
        xpb_term_field(buf, size, row->id); /* from a file: escaped for the terminal */
    } else if (col == 1 || col == 2) {
        throughput_text(buf, size, col == 1 ? row->old_run : row->new_run,
                        col == 1 ? row->old_tp : row->new_tp);
    } else if (col == 3) {
        if (!isfinite(row->change.estimate)) {
            snprintf(buf, size, "-");
            return;
        }
        percent(a, sizeof a, row->change.estimate);
        if (!isfinite(row->change.low)) {
            snprintf(buf, size, "%s", a);
            return;
        }
        percent(b, sizeof b, row->change.low);
        percent(d, sizeof d, row->change.high);
        snprintf(buf, size, "%s [%s, %s]", a, b, d);
    } else {
        snprintf(a, sizeof a, "%g", c->threshold * 100);
        snprintf(buf, size, "%s%s%s%s%s", xpb_diff_verdict_name(row->verdict),
                 row->regression && row->verdict == XPB_DIFF_SLOWER ? ", beyond " : "",
                 row->regression && row->verdict == XPB_DIFF_SLOWER ? a : "",
                 row->regression && row->verdict == XPB_DIFF_SLOWER ? "%" : "",
                 row->discounted  ? ", disturbed: compare again"
                 : row->disturbed ? " !"
                                  : "");
    }
}

static void header(FILE *f, const char *what, const char *name, const struct xpb_results_doc *doc)
{
    const char *scen = doc->scenario.name, *created = doc->created;
    char n[CELL], s[CELL], c[CELL]; /* escaped for the terminal */
    fprintf(f, "%s: %s (scenario %s, created %s, %zu runs)\n", what,
            xpb_term_field(n, sizeof n, name), xpb_term_field(s, sizeof s, scen ? scen : "?"),
            xpb_term_field(c, sizeof c, created ? created : "?"), doc->n_runs);
}

/* "batch, threads", "1 with a configuration the other file has fewer times", or both: what
 * the runs only in one file differ in. */
static void differing_text(char *buf, size_t size, const xpb_diff *c)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n_differing && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", c->differing[i]);
    if (c->repeated && len < size)
        snprintf(buf + len, size - len, "%s%zu with a configuration the other file has fewer times",
                 len ? "; " : "", c->repeated);
}

static void summary(FILE *f, const xpb_diff *c)
{
    char g[64], t[64];
    snprintf(t, sizeof t, "%g", c->threshold * 100);
    if (isfinite(c->geomean)) {
        percent(g, sizeof g, c->geomean);
        fprintf(f, "geomean change over the runs that finished in both: %s\n", g);
    }
    fprintf(f,
            "%zu faster, %zu slower, %zu with no significant difference; %zu did not finish in "
            "NEW, %zu finished in NEW only, %zu in neither; %zu only in OLD, %zu only in NEW\n",
            c->count[XPB_DIFF_FASTER], c->count[XPB_DIFF_SLOWER], c->count[XPB_DIFF_SAME],
            c->count[XPB_DIFF_BROKEN], c->count[XPB_DIFF_FIXED], c->count[XPB_DIFF_NOT_RUN],
            c->count[XPB_DIFF_ONLY_OLD], c->count[XPB_DIFF_ONLY_NEW]);
    fprintf(f, "change = new / old throughput - 1 (ratio of the geometric means of the repeats' "
               "throughputs, 95%% Welch interval in brackets)\n");
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].tta) {
            fprintf(f, "time-to-accuracy runs: old and new = seconds to the target (Olympic "
                       "mean, the converged runs' min-max in brackets); change = old / new "
                       "time - 1, from the converged runs' speeds\n");
            break;
        }
    char keys[320];
    differing_text(keys, sizeof keys, c);
    if (c->n == 0)
        fprintf(f, "nothing was compared: neither file has runs\n");
    else if (c->matched == 0)
        fprintf(f,
                "nothing was compared: no run of NEW has the configuration of a run of OLD; the "
                "closest differ in: %s (--ignore KEY leaves a key that changed on purpose out of "
                "the matching)\n",
                keys);
    else if (c->matched < c->n)
        fprintf(f,
                "runs only in one file: their configuration differs from the closest run of the "
                "other file in: %s (--ignore KEY leaves a key that changed on purpose out of the "
                "matching)\n",
                keys);
    if (c->disturbed)
        fprintf(f,
                "! = %zu run%s disturbed by other processes in OLD or NEW: compare again on a "
                "quiet machine\n",
                c->disturbed, c->disturbed == 1 ? " was" : "s were");
    if (c->discounted)
        fprintf(f,
                "disturbed: compare again: %zu run%s significantly slower by more than %s%% but "
                "disturbed, which alone does not fail the comparison (--count-disturbed lets "
                "it)\n",
                c->discounted, c->discounted == 1 ? " is" : "s are", t);
    if (c->matched == 0)
        fprintf(f, "NOTHING COMPARED: no regression can be ruled out\n");
    else if (c->regressions)
        fprintf(f,
                "REGRESSION: %zu run%s significantly slower by more than %s%% or did not "
                "finish in NEW\n",
                c->regressions, c->regressions == 1 ? " is" : "s are", t);
    else
        fprintf(f, "no run is significantly slower by more than %s%%\n", t);
}

xpb_status xpb_diff_print(FILE *f, const xpb_diff *c, const char *old_name, const char *new_name)
{
    char cell[CELL];
    size_t width[N_COLS] = {0};
    for (size_t r = 0; r <= c->n; r++)
        for (int col = 0; col < N_COLS; col++) {
            cell_text(cell, sizeof cell, c, r ? &c->rows[r - 1] : NULL, col);
            width[col] = strlen(cell) > width[col] ? strlen(cell) : width[col];
        }
    header(f, "old", old_name, c->old_doc);
    header(f, "new", new_name, c->new_doc);
    fputc('\n', f);
    for (size_t r = 0; r <= c->n; r++) {
        for (int col = 0; col < N_COLS; col++) {
            cell_text(cell, sizeof cell, c, r ? &c->rows[r - 1] : NULL, col);
            if (col == N_COLS - 1)
                fprintf(f, "%s\n", cell);
            else
                fprintf(f, col == 0 ? "%-*s  " : "%*s  ", (int)width[col], cell);
        }
    }
    fputc('\n', f);
    summary(f, c);
    return fflush(f) != 0 || ferror(f) ? XPB_IO_ERROR : XPB_OK;
}
