/* The documents' comparisons (results "comparisons") as the report reads them: with their two
 * runs from the report's index, and their speedup as a cell. */
#ifndef XPB_CORE_REPORT_COMPARISONS_H
#define XPB_CORE_REPORT_COMPARISONS_H

#include "report/report_runs.h"

/* A comparison of a document with its two runs. */
typedef struct xpb_rcmp {
    size_t doc;                             /* the document */
    const struct xpb_results_comparison *c; /* its comparisons[c->index] */
    const xpb_rrun *base, *cand;
} xpb_rcmp;

/* The comparisons of `kind` ("backend", "fusion", "precision") of every document whose two
 * runs exist, in document then file order; *out (arena) receives *n of them.
 * XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_rcmps_of(xpb_report *r, const char *kind, xpb_rcmp **out, size_t *n);

/* The comparison's speedup with its 95% interval and significance, as the file says; for a
 * comparison without an interval in the file (version 1) the speedup and its interval are
 * computed from the two runs' repeats the way version 2 does (xpb_results_speedup), flagged
 * XPB_CELL_RECOMPUTED with no source. Flagged when either run was disturbed. The flags are added
 * to c's: c must start from xpb_cell_empty() or be a row's cell. */
void xpb_rcmp_speedup_cell(xpb_report *r, xpb_report_cell *c, const xpb_rcmp *k);

#endif
