/* The time-to-accuracy table that `xpubench run` and `xpubench show` print after the throughput
 * table: one line per tta run (docs/results.md, "Time to accuracy"), never mixed into the
 * throughput columns, whose numbers mean something else. */
#ifndef XPB_CORE_RESULTS_TTA_TABLE_H
#define XPB_CORE_RESULTS_TTA_TABLE_H

#include <stdio.h>

#include "results/view.h"

/* Whether run is a finished time-to-accuracy run (status ok, a "tta" object). */
int xpb_results_run_is_tta(const struct xpb_results_run *run);

/* The median of the epochs to target of t's runs that converged (of the first 64); NaN
 * when none did. The table's "epochs" and the leaderboard's. */
double xpb_results_tta_median_epochs(const struct xpb_results_tta *t);

/* How many of t's runs converged outside the reference convergence point
 * (outside_reference): the table's "!" and the leaderboard's flag. */
size_t xpb_results_tta_outside(const struct xpb_results_tta *t);

/* " (1 diverged, 2 stalled)": how many of t's runs stopped early and why (docs/results.md,
 * stopped_early), into buf; "" when none did. */
void xpb_results_tta_stopped_note(char *buf, size_t size, const struct xpb_results_tta *t);

/* Prints the table of v's finished tta runs to f; nothing when it has none. */
void xpb_results_print_tta(FILE *f, const struct xpb_results_doc *v);

#endif
