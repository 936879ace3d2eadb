/* The report as one self-contained HTML page (see report_writers.h): inline CSS and SVG, no
 * script, no external resource, so that it opens offline, in any browser, and prints. Every
 * number of a table keeps its exact value and where it came from in data attributes
 * (data-v, data-lo, data-hi, data-scale from the JSON's unit to the one shown, data-src
 * "f<file>:<JSON path>" or data-derived), which is how tests check the page against the
 * files. Colours are the Okabe-Ito palette (safe for colour-blind readers) and never the only
 * cue: markers, dashes and text say the same. */
#include <stdio.h>
#include <string.h>

#include "render/escape.h"
#include "render/svg_heatmap.h"
#include "render/svg_scatter.h"
#include "report/report_cells.h"
#include "report/report_chart.h"
#include "report/report_writers.h"

#ifndef XPB_VERSION
#define XPB_VERSION "0.0.0"
#endif

static const char css[] =
    ":root{--fg:#111;--muted:#555;--rule:#ccc;--head:#f2f2f2;--flag:#D55E00;--ns:#666}"
    "*{box-sizing:border-box}"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);"
    "background:#fff;margin:0 auto;padding:1.5em 2em;max-width:1400px}"
    "h1{font-size:1.6em;margin:0 0 .2em}h2{font-size:1.25em;margin:1.6em 0 .5em;"
    "border-bottom:2px solid var(--fg);padding-bottom:.15em}"
    "p{margin:.4em 0;max-width:75em}.files{color:var(--muted)}"
    "nav ol{columns:3 14em;margin:.5em 0;padding-left:1.4em}"
    ".tbl{overflow-x:auto;margin:.8em 0 1.2em}"
    "table{border-collapse:collapse;font-size:13px}"
    "caption{text-align:left;font-weight:600;padding:.2em 0 .4em}"
    "th,td{border-bottom:1px solid var(--rule);padding:.25em .45em;vertical-align:top}"
    "th{background:var(--head);text-align:left;font-weight:600;vertical-align:bottom;"
    "max-width:10em}"
    "td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
    "table.kv td.n{text-align:left}td.empty{color:var(--muted);text-align:center}"
    ".ci{display:block;color:var(--muted);font-size:.85em}.ns{color:var(--ns);font-style:italic}"
    ".flag{color:var(--flag);font-weight:700}.strong{font-weight:700}"
    "p.note{color:var(--muted);font-size:.9em;margin-top:.3em}"
    "figure{margin:1em 0 1.5em;display:inline-block;vertical-align:top;max-width:100%}"
    "figure svg{max-width:100%;height:auto}"
    "figcaption{font-weight:600;margin-bottom:.3em;max-width:720px}"
    "svg text{font-family:system-ui,sans-serif;font-size:12px;fill:#111}"
    "@media print{body{padding:0;font-size:10pt;max-width:none}nav{display:none}"
    ".tbl{overflow:visible}table{font-size:8pt}th{background:none;border-bottom:1.5px solid #000}"
    "figure,table{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}}";

/* The markers after a number: n.s., †, ! */
static void cell_marks(struct xpb_text *out, const xpb_report_cell *c)
{
    if (c->flags & XPB_CELL_NOT_SIGNIFICANT)
        xpb_text_puts(out,
                      " <span class=\"ns\" title=\"no significant difference: the 95% interval "
                      "contains 1\">n.s.</span>");
    if (c->flags & XPB_CELL_RECOMPUTED)
        xpb_text_puts(out,
                      "<span title=\"computed from the repeats: the file records no interval\">"
                      "\xe2\x80\xa0</span>");
    if (c->flags & XPB_CELL_FLAGGED)
        xpb_text_puts(
            out, " <span class=\"flag\" title=\"disturbed: other processes took more than 5% of "
                 "the machine during this run\">!</span>");
}

static void number_cell(struct xpb_text *out, const xpb_report_cell *c)
{
    char v[48], lo[48], hi[48];
    xpb_text_printf(out, "<td class=\"n%s\" data-v=\"%.17g\" data-scale=\"%.17g\"",
                    c->flags & XPB_CELL_STRONG ? " strong" : "", c->v, xpb_unit_scale(c->unit));
    int iv = xpb_cell_has_interval(c);
    if (iv)
        xpb_text_printf(out, " data-lo=\"%.17g\" data-hi=\"%.17g\"", c->lo, c->hi);
    if (c->unit == XPB_UNIT_COUNT)
        xpb_text_puts(out, " data-int=\"1\"");
    if (c->src) {
        xpb_text_puts(out, " data-src=\"");
        xpb_html(out, c->src);
        xpb_text_putc(out, '"');
    } else {
        xpb_text_puts(out, " data-derived=\"1\"");
    }
    xpb_report_cell_number(v, sizeof v, c, 0);
    xpb_text_printf(out, ">%s%s", v, c->unit == XPB_UNIT_SPEEDUP ? xpb_unit_name(c->unit) : "");
    cell_marks(out, c);
    if (iv) { /* under the number, so that columns stay narrow */
        xpb_report_cell_number(lo, sizeof lo, c, 1);
        xpb_report_cell_number(hi, sizeof hi, c, 2);
        xpb_text_printf(out, " <span class=\"ci\">[%s, %s]</span>", lo, hi);
    }
    xpb_text_puts(out, "</td>");
}

static void cell(struct xpb_text *out, const xpb_report_cell *c)
{
    if (c->kind == XPB_CELL_NUMBER) {
        number_cell(out, c);
    } else if (c->kind == XPB_CELL_TEXT) {
        xpb_text_printf(out, "<td%s>", c->flags & XPB_CELL_STRONG ? " class=\"strong\"" : "");
        xpb_html(out, c->text);
        xpb_text_puts(out, "</td>");
    } else {
        xpb_text_puts(out, "<td class=\"empty\">\xe2\x80\x93</td>");
    }
}

static void table(struct xpb_text *out, const xpb_report_table *t)
{
    xpb_text_puts(out, "<div class=\"tbl\"><table id=\"");
    xpb_html(out, t->id);
    xpb_text_puts(out, t->key_value ? "\" class=\"kv\"><caption>" : "\"><caption>");
    xpb_html(out, t->title);
    xpb_text_puts(out, "</caption>\n<thead><tr>");
    for (size_t c = 0; c < t->n_cols; c++) {
        xpb_text_puts(out, "<th scope=\"col\">");
        xpb_html(out, t->headers[c]);
        xpb_text_puts(out, "</th>");
    }
    xpb_text_puts(out, "</tr></thead>\n<tbody>\n");
    for (size_t row = 0; row < t->n_rows; row++) {
        xpb_text_puts(out, "<tr>");
        for (size_t c = 0; c < t->n_cols; c++)
            cell(out, &t->cells[row * t->n_cols + c]);
        xpb_text_puts(out, "</tr>\n");
    }
    xpb_text_puts(out, "</tbody></table>");
    if (t->note) {
        xpb_text_puts(out, "<p class=\"note\">");
        xpb_html(out, t->note);
        xpb_text_puts(out, "</p>");
    }
    xpb_text_puts(out, "</div>\n");
}

static void section(struct xpb_text *out, const xpb_report_section *s)
{
    xpb_text_puts(out, "<section id=\"");
    xpb_html(out, s->id);
    xpb_text_puts(out, "\"><h2>");
    xpb_html(out, s->title);
    xpb_text_puts(out, "</h2>\n");
    for (size_t b = 0; b < s->n_blocks; b++) {
        const xpb_report_block *k = &s->blocks[b];
        if (k->kind == XPB_BLOCK_TEXT) {
            xpb_text_puts(out, "<p>");
            xpb_html(out, k->text);
            xpb_text_puts(out, "</p>\n");
        } else if (k->kind == XPB_BLOCK_TABLE) {
            table(out, k->table);
        } else if (k->kind == XPB_BLOCK_HEATMAP) {
            xpb_svg_heatmap(out, k->heatmap);
        } else if (k->kind == XPB_BLOCK_SCATTER) {
            xpb_svg_scatter(out, k->scatter);
        } else {
            xpb_report_chart(out, k->chart);
        }
    }
    xpb_text_puts(out, "</section>\n");
}

static void head(struct xpb_text *out, const xpb_report *r)
{
    xpb_text_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<meta name=\"generator\" content=\"xpubench " XPB_VERSION "\">\n<title>");
    xpb_html(out, r->title);
    xpb_text_printf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<header><h1>", css);
    xpb_html(out, r->title);
    xpb_text_puts(out, "</h1>\n<p class=\"files\">From ");
    for (size_t d = 0; d < r->n_docs; d++) {
        xpb_text_puts(out, d ? ", " : "");
        xpb_html(out, r->names[d]);
    }
    xpb_text_printf(out, " (%zu file%s), by xpubench " XPB_VERSION ".</p>\n<nav><ol>", r->n_docs,
                    r->n_docs == 1 ? "" : "s");
    for (size_t s = 0; s < r->n_sections; s++) {
        xpb_text_puts(out, "<li><a href=\"#");
        xpb_html(out, r->sections[s].id);
        xpb_text_puts(out, "\">");
        xpb_html(out, r->sections[s].title);
        xpb_text_puts(out, "</a></li>");
    }
    xpb_text_puts(out, "</ol></nav></header>\n<main>\n");
}

void xpb_report_write_html(struct xpb_text *out, const xpb_report *r)
{
    head(out, r);
    for (size_t s = 0; s < r->n_sections; s++)
        section(out, &r->sections[s]);
    xpb_text_puts(out, "</main>\n</body>\n</html>\n");
}
