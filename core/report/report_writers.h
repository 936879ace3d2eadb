/* The report's writers, one file each: report_html.c (with report_chart.c for its charts),
 * report_markdown.c and report_csv.c. Each appends the whole report to a text buffer
 * (render/text.h); report.c hands it to its caller or writes it to a file. */
#ifndef XPB_CORE_REPORT_WRITERS_H
#define XPB_CORE_REPORT_WRITERS_H

#include "render/text.h"
#include "report/report_model.h"

void xpb_report_write_html(struct xpb_text *t, const xpb_report *r);
void xpb_report_write_markdown(struct xpb_text *t, const xpb_report *r);
void xpb_report_write_csv(struct xpb_text *t, const xpb_report *r);

#endif
