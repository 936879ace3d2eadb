/* The report's writers, one file each (report_html.c with report_svg.c for its charts,
 * report_markdown.c, report_csv.c), and the plain text of a cell they share. Writers report
 * nothing: the caller checks ferror(f) (xpb_report_write). */
#ifndef XPB_CORE_REPORT_WRITERS_H
#define XPB_CORE_REPORT_WRITERS_H

#include <stdio.h>

#include "report/report_model.h"

void xpb_report_write_html(FILE *f, const xpb_report *r);
void xpb_report_write_markdown(FILE *f, const xpb_report *r);
void xpb_report_write_csv(FILE *f, const xpb_report *r);

/* The chart as an inline <svg> element (report_svg.c). */
void xpb_svg_chart(FILE *f, const xpb_chart *c);

/* HTML/XML text of `s` with &, <, >, " and ' escaped. */
void xpb_html_escape(FILE *f, const char *s);

/* A cell as plain text, the same in Markdown and (without the markers) in HTML: the number
 * formatted (report_format.h) with "×" for speedups, " [low, high]" for an interval, then
 * " n.s." (no significant difference), "†" (recomputed) and "!" (disturbed run) as flagged;
 * "–" for an empty cell. Always NUL-terminated. */
void xpb_report_cell_text(char *buf, size_t size, const xpb_report_cell *c);

/* Only the number of a cell: the value, or `which` 1 for the interval's low and 2 for its high
 * end. */
void xpb_report_cell_number(char *buf, size_t size, const xpb_report_cell *c, int which);

#endif
