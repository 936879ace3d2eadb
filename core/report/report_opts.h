/* What a report is asked for: the handle, its options and its formats. A header of its own
 * below the report's driver (report.h) and its model (report_model.h), so that the sections and
 * writers, which need these types, do not include the driver that calls them. */
#ifndef XPB_CORE_REPORT_OPTS_H
#define XPB_CORE_REPORT_OPTS_H

typedef struct xpb_report xpb_report;

typedef struct xpb_report_opts {
    /* The memory budget of "the largest batch that fits", bytes; 0: each document's
     * environment.memory_bytes (the host's memory). */
    double memory_budget_bytes;
    /* Shown as the page's title; NULL: "xpubench report". */
    const char *title;
    /* The metric of the heat maps (report_surface.c), a path of results/view_fields.h
     * ("metrics.flops_per_s"); NULL: "metrics.peak_fraction". */
    const char *surface_metric;
} xpb_report_opts;

typedef enum xpb_report_format {
    XPB_REPORT_HTML,
    XPB_REPORT_MARKDOWN,
    XPB_REPORT_CSV,
} xpb_report_format;

#endif
