/* The time-to-accuracy table that `xpubench run` and `xpubench show` print after the throughput
 * table: one line per tta run (docs/results.md, "Time to accuracy"), never mixed into the
 * throughput columns, whose numbers mean something else. */
#ifndef XPB_CORE_RESULTS_TTA_TABLE_H
#define XPB_CORE_RESULTS_TTA_TABLE_H

#include <stdio.h>

#include "results/view.h"

/* Whether run is a finished time-to-accuracy run (status ok, a "tta" object). */
int xpb_results_run_is_tta(const struct xpb_results_run *run);

/* Prints the table of v's finished tta runs to f; nothing when it has none. */
void xpb_results_print_tta(FILE *f, const struct xpb_results_doc *v);

#endif
