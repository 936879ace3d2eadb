/* Core's typed view of a results document (results/view.h) read with the leaderboard's
 * defaults: what the view marks absent (a NULL string, an XPB_RESULTS_NO_INT integer, an
 * XPB_RESULTS_NO_BOOL boolean) reads as "", NAN, a default or false, never as an error
 * (documents are validated before they are stored). For the extraction of a document's rows
 * (lb_extract.c) and for the pages that show one. */
#ifndef LB_DOC_H
#define LB_DOC_H

#include <stdint.h>

#include "results/view.h"

/* s, or "" when the document does not have it. s's owner keeps it (the document). */
const char *lb_doc_str(const char *s);

/* An integer of the view as a number; NAN when the document does not have it. */
double lb_doc_num(int64_t v);

/* An integer of the view; `absent` when the document does not have it. */
long long lb_doc_int(int64_t v, long long absent);

/* Whether a boolean of the view is true (false when absent). */
int lb_doc_true(int v);

/* The device kind of a run as the leaderboard shows it: what a version-2 (or later) document
 * says, "unknown" for a version-1 one (its devices do not say) or a run without a device.
 * Static or borrowed from the document. */
const char *lb_doc_kind(const struct xpb_results_run *run, int64_t schema_version);

#endif
