/* The report's data model, shared by the section builders (report_<section>.c) and the
 * writers (report_html.c, report_markdown.c, report_csv.c): a report is a list of sections,
 * each a list of blocks (a paragraph, a table or a chart). Tables hold typed cells: a number
 * keeps its value in the JSON's unit, its display unit, its 95% interval when it has one and
 * where it came from in the input ("f<document>:<JSON path>", NULL for a derived number), so
 * that every writer formats it by the same rule and a test can check every number on the page
 * against the document. Everything lives in the report's arena (base/arena.h). */
#ifndef XPB_CORE_REPORT_MODEL_H
#define XPB_CORE_REPORT_MODEL_H

#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/errmsg.h"
#include "render/format.h"
#include "render/svg_bars.h"
#include "render/svg_heatmap.h"
#include "render/svg_scatter.h"
#include "report/report_opts.h"
#include "results/view.h"

typedef enum xpb_cell_kind {
    XPB_CELL_EMPTY, /* no value: shown as "–" (the run does not have it) */
    XPB_CELL_TEXT,
    XPB_CELL_NUMBER,
} xpb_cell_kind;

enum {
    XPB_CELL_FLAGGED = 1u << 0,         /* the run was disturbed by other processes: "!" */
    XPB_CELL_NOT_SIGNIFICANT = 1u << 1, /* a speedup whose interval contains 1: "n.s." */
    XPB_CELL_SIGNIFICANT = 1u << 2,     /* a speedup whose interval excludes 1 */
    XPB_CELL_STRONG = 1u << 3,          /* emphasised (the baseline, a total) */
    XPB_CELL_RECOMPUTED = 1u << 4,      /* computed from the repeats, the file has no value
                                           (version-1 comparisons): "†" */
};

typedef struct xpb_report_cell {
    xpb_cell_kind kind;
    xpb_unit unit;
    unsigned flags;
    const char *text;  /* TEXT: the text; NUMBER: NULL or a short note after the number */
    double v, lo, hi;  /* NUMBER: value and 95% interval (NaN: none), in the JSON's unit */
    const char *src;   /* NUMBER: "f<doc>:<path>" of v in the input; NULL: derived. The interval
                          of a number read from the file is the file's too: the ci95_low and
                          ci95_high next to it (throughput.median -> throughput.ci95_low,
                          comparisons[i].speedup -> comparisons[i].ci95_low) */
    const char *title; /* an explanation (HTML tooltip) or NULL */
} xpb_report_cell;

typedef struct xpb_report_table {
    const char *id;    /* unique in the report: HTML anchor, CSV block name */
    const char *title; /* caption */
    size_t n_cols;
    const char **headers; /* n_cols column headers, units included ("p50 ms") */
    size_t n_rows, cap_rows;
    xpb_report_cell *cells; /* row-major, n_rows * n_cols */
    const char *note;       /* under the table, or NULL */
    int key_value;          /* a table of named values (first column the names): numbers are
                               aligned like text */
} xpb_report_table;

enum {
    XPB_SERIES_POINTS = 1u << 0, /* markers at the points */
    XPB_SERIES_LINE = 1u << 1,   /* a line through them */
    XPB_SERIES_DASHED = 1u << 2, /* the line dashed (a projection) */
    XPB_SERIES_BAND = 1u << 3,   /* a shaded band between lo and hi at every point (a fit's
                                    95% band), drawn under the lines */
};

typedef struct xpb_chart_series {
    const char *label;
    size_t n, cap;
    double *x, *y, *lo, *hi; /* lo/hi: whiskers, NaN where none */
    unsigned style;
    int color; /* palette index, also picks the marker shape and the dash pattern */
} xpb_chart_series;

typedef enum xpb_chart_kind {
    XPB_CHART_XY,   /* points and lines */
    XPB_CHART_BARS, /* horizontal bars, stacked when there are several segments */
} xpb_chart_kind;

typedef struct xpb_chart {
    xpb_chart_kind kind;
    const char *id, *title, *x_label, *y_label;
    xpb_unit x_unit, y_unit; /* values are in the JSON's unit; axes show the display unit */
    int x_log2;              /* XY: x on a log2 axis (batch sizes) */
    int y_zero;              /* XY: the y axis starts at 0 (amounts, not a loss) */
    int x_log10;             /* BARS: the value axis on a log10 scale (speedups) */
    double ref;              /* BARS: a reference line (1 for speedups), NaN: none */
    double hline;            /* XY: a horizontal line (a memory budget), NaN: none */
    const char *hline_label;
    size_t n_series, cap_series;
    xpb_chart_series *series;
    size_t n_segments;
    const char **segment_names; /* BARS: the legend of the segments (NULL for one segment) */
    size_t n_bars, cap_bars;
    struct xpb_svg_bar *bars; /* BARS: hollow when not significant */
    const char *note;         /* under the chart, or NULL */
} xpb_chart;

typedef enum xpb_block_kind {
    XPB_BLOCK_TEXT,
    XPB_BLOCK_TABLE,
    XPB_BLOCK_CHART,
    XPB_BLOCK_HEATMAP, /* drawn by render/svg_heatmap.h */
    XPB_BLOCK_SCATTER, /* drawn by render/svg_scatter.h (a roofline, speedup against size) */
} xpb_block_kind;

typedef struct xpb_report_block {
    xpb_block_kind kind;
    const char *text; /* TEXT: a paragraph of plain text */
    xpb_report_table *table;
    xpb_chart *chart;
    const struct xpb_svg_heatmap *heatmap; /* HEATMAP: in the report's arena */
    const struct xpb_svg_scatter *scatter; /* SCATTER: in the report's arena */
} xpb_report_block;

typedef struct xpb_report_section {
    const char *id, *title;
    size_t n_blocks, cap_blocks;
    xpb_report_block *blocks;
} xpb_report_section;

struct xpb_report {
    xpb_arena arena;
    const char *title;
    xpb_report_opts opts;
    size_t n_docs;
    json_t **docs;                 /* references held by the report */
    struct xpb_results_doc *views; /* their typed views, one per document */
    const char **names;            /* the files, as given */
    size_t n_sections, cap_sections;
    xpb_report_section *sections;
    struct xpb_rruns *runs; /* every run of every document (report_runs.h) */
};

/* ---- building (report_model.c); every pointer returned is owned by the report's arena ---- */

/* A new section at the end of the report; NULL when out of memory. */
xpb_report_section *xpb_report_section_new(xpb_report *r, const char *id, const char *title);

/* A paragraph (copied) at the end of `s`. XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_report_text(xpb_report *r, xpb_report_section *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new table with n_cols columns whose headers are the strings of `headers` (copied), at the
 * end of `s`; its id is "<section id>-<suffix>". NULL when out of memory. */
xpb_report_table *xpb_report_table_new(xpb_report *r, xpb_report_section *s, const char *suffix,
                                       const char *title, const char *const *headers,
                                       size_t n_cols);

/* A new row of empty cells; returns its first cell (n_cols of them). NULL when out of memory. */
xpb_report_cell *xpb_report_row(xpb_report *r, xpb_report_table *t);

/* A new chart at the end of `s`; its id is "<section id>-<suffix>". NULL when out of memory. */
xpb_chart *xpb_report_chart_new(xpb_report *r, xpb_report_section *s, xpb_chart_kind kind,
                                const char *suffix, const char *title);

/* Appends a heat map or a scatter chart that lives in the report's arena (the caller built it
 * there, with its id, title and arrays) at the end of `s`. XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_report_heatmap(xpb_report *r, xpb_report_section *s,
                              const struct xpb_svg_heatmap *h);
xpb_status xpb_report_scatter(xpb_report *r, xpb_report_section *s,
                              const struct xpb_svg_scatter *c);

/* A new empty series of `c`; NULL when out of memory. */
xpb_chart_series *xpb_chart_series_new(xpb_report *r, xpb_chart *c, const char *label,
                                       unsigned style, int color);

/* Appends a point with whiskers (NaN: none). XPB_OK or XPB_OUT_OF_MEMORY. */
xpb_status xpb_chart_point(xpb_report *r, xpb_chart_series *s, double x, double y, double lo,
                           double hi);

/* A new bar of `c` with c->n_segments values (zeroed) and no whiskers; NULL when out of memory. */
struct xpb_svg_bar *xpb_chart_bar_new(xpb_report *r, xpb_chart *c, const char *label);

/* ---- cells ----
 * The setters below fill only their own fields (kind, value, unit, source): the flags, the
 * interval of a text cell and the title stay as they were, so a cell must start from
 * xpb_cell_empty() (xpb_report_row's cells do). A cell declared on the stack and filled by a
 * setter alone carries whatever the stack held in its flags. */

/* An empty cell: no value, no interval (NaN), no flags, no text, no source. */
xpb_report_cell xpb_cell_empty(void);

void xpb_cell_text(xpb_report_cell *c, const char *text);

/* A number with its source (NULL: derived) and no interval. */
void xpb_cell_number(xpb_report_cell *c, double v, xpb_unit unit, const char *src);

/* Whether a cell's number has an interval. */
int xpb_cell_has_interval(const xpb_report_cell *c);

#endif
