/* The columns and labels that say which run a row or a chart line of the report is about. */
#ifndef XPB_CORE_REPORT_DESCRIBE_H
#define XPB_CORE_REPORT_DESCRIBE_H

#include "report/report_runs.h"

/* The columns that describe a run in the tables. */
enum {
    XPB_COL_FILE = 1u << 0, /* only added when the report has several documents */
    XPB_COL_MODEL = 1u << 1,
    XPB_COL_MODE = 1u << 2,
    XPB_COL_BATCH = 1u << 3,
    XPB_COL_PRECISION = 1u << 4,
    XPB_COL_BACKEND = 1u << 5,
    XPB_COL_FUSED = 1u << 6,
    XPB_COL_THREADS = 1u << 7,
    XPB_COL_FUSION = 1u << 8, /* the fusion setting, "on" or "off"; "n/a" for a backend that
                                 does not fuse (like XPB_COL_FUSED) */
};

/* The headers of the description columns `cols` into headers[] (at most 9); returns how many.
 * XPB_COL_FILE counts only when r has more than one document. */
size_t xpb_rrun_desc_headers(const xpb_report *r, const char **headers, unsigned cols);

/* Fills the description cells of `run` for `cols` (as many as xpb_rrun_desc_headers said):
 * the file's name, "model/variant", mode, batch, precision ("bf16-mixed (emulated)"), backend,
 * fused ("yes", "no", "n/a" for a backend that does not fuse), threads ("auto" for 0), fusion
 * ("on", "off", "n/a" for a backend that does not fuse). */
void xpb_rrun_desc_cells(xpb_report *r, xpb_report_cell *cells, const xpb_rrun *run, unsigned cols);

/* A short label of the run for chart legends: the values of the columns `cols` joined by
 * spaces ("conv6/cifar train b16 fp32 cpu_onednn fused t2"; "fusion n/a" for a backend that does
 * not fuse). Arena string or NULL. */
const char *xpb_rrun_label(xpb_report *r, const xpb_rrun *run, unsigned cols);

#endif
