/* The report's charts as inline SVG for the HTML page (report_chart.c): points and lines on
 * their axes, drawn here with the primitives of render/svg.h, and bars, drawn by
 * render/svg_bars.h. */
#ifndef XPB_CORE_REPORT_CHART_H
#define XPB_CORE_REPORT_CHART_H

#include "render/text.h"
#include "report/report_model.h"

/* Appends chart `c` as a figure with an inline <svg>. */
void xpb_report_chart(struct xpb_text *t, const xpb_chart *c);

#endif
