/* The charts of a batch sweep (report_batch_chart.c). */
#ifndef XPB_CORE_REPORT_BATCH_CHART_H
#define XPB_CORE_REPORT_BATCH_CHART_H

#include "report/report_sweep.h"

/* The two charts of a sweep (memory with its fit, projection and budget; step time with its
 * fit and projection) appended to s. XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_batch_charts(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                            size_t index);

#endif
