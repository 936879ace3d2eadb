/* Run-by-run comparison of two results files, the engine of `xpubench compare OLD NEW`
 * (benchstat's role for Go): runs are matched by configuration (every config key but "extra"
 * and the keys the caller ignores must be equal; runs with the same configuration pair up in
 * order), and each pair gets the change in throughput (time-to-accuracy runs: in time to the
 * target) with its 95% interval and a verdict. A regression of a run that other processes
 * disturbed is reported ("disturbed: compare again") but does not count unless the caller asks;
 * when nothing matched, the comparison says in which config keys the runs differ from their
 * closest counterparts. */
#ifndef XPB_CORE_COMPARE_H
#define XPB_CORE_COMPARE_H

#include <stdio.h>

#include <xpubench/status.h>

#include "results/interval.h"
#include "results/view.h"

typedef enum xpb_diff_verdict {
    XPB_DIFF_SAME,     /* no significant difference (the interval contains 1, or no
                             interval: fewer than two repeats on a side) */
    XPB_DIFF_FASTER,   /* the interval is above 1 */
    XPB_DIFF_SLOWER,   /* the interval is below 1 */
    XPB_DIFF_BROKEN,   /* finished in OLD, not in NEW (failed, unsupported, interrupted) */
    XPB_DIFF_FIXED,    /* finished in NEW, not in OLD */
    XPB_DIFF_NOT_RUN,  /* finished in neither */
    XPB_DIFF_ONLY_OLD, /* no run of NEW has its configuration */
    XPB_DIFF_ONLY_NEW, /* no run of OLD has its configuration */
} xpb_diff_verdict;

typedef struct xpb_diff_row {
    const struct xpb_results_run *old_run, *new_run; /* borrowed; NULL for ONLY_* */
    const char *id;        /* the new run's id (the old one's when only in OLD) */
    int tta;               /* time-to-accuracy runs: compared by their time to target */
    double old_tp, new_tp; /* median throughputs (tta: Olympic mean seconds to the target),
                              NaN when the run has none */
    xpb_interval change;   /* new / old speed (ratio of the geometric means of repeat
                              throughputs; tta: of the converged runs' 1 / seconds) with its
                              Welch 95% interval; NaN when a side did not finish */
    xpb_diff_verdict verdict;
    int regression; /* SLOWER by more than the threshold, or BROKEN; counts towards
                       xpb_diff.regressions unless discounted */
    int disturbed;  /* metrics.interference.flagged in either run */
    int discounted; /* a SLOWER regression of a disturbed run, not counted (no
                       XPB_DIFF_COUNT_DISTURBED): "disturbed: compare again" */
} xpb_diff_row;

/* Options of xpb_diff_docs. */
enum {
    XPB_DIFF_COUNT_DISTURBED = 1u << 0, /* a disturbed run's slowdown counts as a regression */
};

#define XPB_DIFF_MAX_KEYS 24 /* at least the schema's config keys */

typedef struct xpb_diff {
    const struct xpb_results_doc *old_doc, *new_doc; /* borrowed */
    xpb_diff_row *rows; /* NEW's runs in order, then the runs only in OLD; owned */
    size_t n;
    size_t count[XPB_DIFF_ONLY_NEW + 1]; /* rows per verdict */
    size_t regressions;                  /* regressions that count (discounted ones aside) */
    size_t disturbed;                    /* rows with a disturbed run */
    size_t discounted;                   /* regressions not counted because a run was disturbed */
    size_t matched;                      /* rows whose configuration is in both files */
    /* The config keys (static names) in which the runs only in one file differ from the
     * closest run (fewest differing keys) of the other file, in the schema's order. */
    const char *differing[XPB_DIFF_MAX_KEYS];
    size_t n_differing;
    size_t repeated; /* runs only in one file whose configuration the other file has, but
                        fewer times */
    double geomean;  /* geometric mean of the changes of the pairs that both finished; NaN: none */
    double threshold;
} xpb_diff;

/* Compares OLD and NEW (the views of validated results documents, borrowed: they must outlive
 * *out).
 * `threshold` is the fraction a run must be slower by to count as a regression (0.05 for 5%);
 * ignore[0..n_ignore) are config keys left out of the matching (e.g. "threads"); `flags` are
 * XPB_DIFF_* options. *out is the caller's (xpb_diff_free). XPB_INVALID_ARGUMENT for a
 * document without "runs", XPB_OUT_OF_MEMORY, else XPB_OK. */
xpb_status xpb_diff_docs(xpb_diff *out, const struct xpb_results_doc *old_doc,
                         const struct xpb_results_doc *new_doc, double threshold,
                         const char *const *ignore, size_t n_ignore, unsigned flags);

void xpb_diff_free(xpb_diff *c);

/* What a verdict is called in the table: "faster", "slower", "no significant difference",
 * "now failed" ... Static. */
const char *xpb_diff_verdict_name(xpb_diff_verdict v);

/* Prints the comparison as a table (run, old and new median samples/s with their intervals,
 * change in % with its interval, verdict), the geometric mean of the changes and a summary
 * (nothing compared and the keys that differ; disturbed regressions not counted);
 * old_name and new_name are the files as given. XPB_IO_ERROR when writing fails. */
xpb_status xpb_diff_print(FILE *f, const xpb_diff *c, const char *old_name, const char *new_name);

#endif
