/* Reports: results documents turned into the tables and figures of the studies this platform
 * reproduces (docs/report.md). A report is built once from one or more loaded, validated
 * documents (schema version 1 or 2) and written as one self-contained HTML page (inline CSS
 * and SVG charts, no script, no network), as Markdown or as CSV; the three carry the same
 * tables with the same numbers, formatted by one rule (render/format.h). */
#ifndef XPB_CORE_REPORT_H
#define XPB_CORE_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "base/errmsg.h"
#include "render/text.h"
#include "report/report_opts.h"

/* Builds the report of docs[0..n) (results documents that passed xpb_results_validate; the
 * report holds a reference to each until xpb_report_free), named names[0..n) in the page
 * (the file names the user gave; copied). *out is owned by the caller (xpb_report_free).
 * Returns XPB_INVALID_ARGUMENT when n is 0 or a document is not an object, XPB_OUT_OF_MEMORY. */
xpb_status xpb_report_build(xpb_report **out, json_t *const *docs, const char *const *names,
                            size_t n, const xpb_report_opts *opts, xpb_err *err);

/* Appends the report in `format` to `out`. XPB_INVALID_ARGUMENT for an unknown format,
 * XPB_OUT_OF_MEMORY when `out` failed (see render/text.h). */
xpb_status xpb_report_render(struct xpb_text *out, const xpb_report *r, xpb_report_format format);

/* Writes the report to `f` in `format` (xpb_report_render, then the text to f).
 * XPB_INVALID_ARGUMENT, XPB_OUT_OF_MEMORY, or XPB_IO_ERROR when writing fails. */
xpb_status xpb_report_write(FILE *f, const xpb_report *r, xpb_report_format format);

void xpb_report_free(xpb_report *r);

/* Reads a memory size: a number with an optional unit, B, KiB, MiB, GiB, TiB (powers of 1024;
 * K, M, G, T and KB, MB, GB, TB too, also as powers of 1024, as memory is sold), any case:
 * "16GiB", "16g", "512 MiB", "1.5TiB", "17179869184". Returns 0 and *bytes, or -1 when the
 * text is not such a size or is not > 0. */
int xpb_report_parse_bytes(double *bytes, const char *text);

#endif
