/* The plain text of a report cell, shared by the writers: Markdown shows it as is, HTML and CSV
 * take its number apart from its marks. */
#ifndef XPB_CORE_REPORT_CELLS_H
#define XPB_CORE_REPORT_CELLS_H

#include <stddef.h>

#include "report/report_model.h"

/* A cell as plain text, the same in Markdown and (without the markers) in HTML: the number
 * formatted (render/format.h) with "×" for speedups, " [low, high]" for an interval, then
 * " n.s." (no significant difference), "†" (recomputed) and "!" (disturbed run) as flagged;
 * "–" for an empty cell. Always NUL-terminated. */
void xpb_report_cell_text(char *buf, size_t size, const xpb_report_cell *c);

/* Only the number of a cell: the value, or `which` 1 for the interval's low and 2 for its high
 * end. */
void xpb_report_cell_number(char *buf, size_t size, const xpb_report_cell *c, int which);

#endif
