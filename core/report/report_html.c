/* The report as one self-contained HTML page (see report_writers.h): inline CSS and SVG, no
 * script, no external resource, so that it opens offline, in any browser, and prints. Every
 * number of a table keeps its exact value and where it came from in data attributes
 * (data-v, data-lo, data-hi, data-scale from the JSON's unit to the one shown, data-src
 * "f<file>:<JSON path>" or data-derived), which is how tests check the page against the
 * files. Colours are the Okabe-Ito palette (safe for colour-blind readers) and never the only
 * cue: markers, dashes and text say the same. */
#include <stdio.h>
#include <string.h>

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

void xpb_html_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* The markers after a number: n.s., †, ! */
static void cell_marks(FILE *f, const xpb_report_cell *c)
{
    if (c->flags & XPB_CELL_NOT_SIGNIFICANT)
        fputs(" <span class=\"ns\" title=\"no significant difference: the 95% interval "
              "contains 1\">n.s.</span>",
              f);
    if (c->flags & XPB_CELL_RECOMPUTED)
        fputs("<span title=\"computed from the repeats: the file records no interval\">"
              "\xe2\x80\xa0</span>",
              f);
    if (c->flags & XPB_CELL_FLAGGED)
        fputs(" <span class=\"flag\" title=\"disturbed: other processes took more than 5% of "
              "the machine during this run\">!</span>",
              f);
}

static void number_cell(FILE *f, const xpb_report_cell *c)
{
    char v[48], lo[48], hi[48];
    fprintf(f, "<td class=\"n%s\" data-v=\"%.17g\" data-scale=\"%.17g\"",
            c->flags & XPB_CELL_STRONG ? " strong" : "", c->v, xpb_unit_scale(c->unit));
    int iv = xpb_cell_has_interval(c);
    if (iv)
        fprintf(f, " data-lo=\"%.17g\" data-hi=\"%.17g\"", c->lo, c->hi);
    if (c->unit == XPB_UNIT_COUNT)
        fputs(" data-int=\"1\"", f);
    if (c->src) {
        fputs(" data-src=\"", f);
        xpb_html_escape(f, c->src);
        fputc('"', f);
    } else {
        fputs(" data-derived=\"1\"", f);
    }
    xpb_report_cell_number(v, sizeof v, c, 0);
    fprintf(f, ">%s%s", v, c->unit == XPB_UNIT_SPEEDUP ? xpb_unit_name(c->unit) : "");
    cell_marks(f, c);
    if (iv) { /* under the number, so that columns stay narrow */
        xpb_report_cell_number(lo, sizeof lo, c, 1);
        xpb_report_cell_number(hi, sizeof hi, c, 2);
        fprintf(f, " <span class=\"ci\">[%s, %s]</span>", lo, hi);
    }
    fputs("</td>", f);
}

static void cell(FILE *f, const xpb_report_cell *c)
{
    if (c->kind == XPB_CELL_NUMBER) {
        number_cell(f, c);
    } else if (c->kind == XPB_CELL_TEXT) {
        fprintf(f, "<td%s>", c->flags & XPB_CELL_STRONG ? " class=\"strong\"" : "");
        xpb_html_escape(f, c->text);
        fputs("</td>", f);
    } else {
        fputs("<td class=\"empty\">\xe2\x80\x93</td>", f);
    }
}

static void table(FILE *f, const xpb_report_table *t)
{
    fputs("<div class=\"tbl\"><table id=\"", f);
    xpb_html_escape(f, t->id);
    fputs(t->key_value ? "\" class=\"kv\"><caption>" : "\"><caption>", f);
    xpb_html_escape(f, t->title);
    fputs("</caption>\n<thead><tr>", f);
    for (size_t c = 0; c < t->n_cols; c++) {
        fputs("<th scope=\"col\">", f);
        xpb_html_escape(f, t->headers[c]);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t row = 0; row < t->n_rows; row++) {
        fputs("<tr>", f);
        for (size_t c = 0; c < t->n_cols; c++)
            cell(f, &t->cells[row * t->n_cols + c]);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>", f);
    if (t->note) {
        fputs("<p class=\"note\">", f);
        xpb_html_escape(f, t->note);
        fputs("</p>", f);
    }
    fputs("</div>\n", f);
}

static void section(FILE *f, const xpb_report_section *s)
{
    fputs("<section id=\"", f);
    xpb_html_escape(f, s->id);
    fputs("\"><h2>", f);
    xpb_html_escape(f, s->title);
    fputs("</h2>\n", f);
    for (size_t b = 0; b < s->n_blocks; b++) {
        const xpb_report_block *k = &s->blocks[b];
        if (k->kind == XPB_BLOCK_TEXT) {
            fputs("<p>", f);
            xpb_html_escape(f, k->text);
            fputs("</p>\n", f);
        } else if (k->kind == XPB_BLOCK_TABLE) {
            table(f, k->table);
        } else {
            xpb_svg_chart(f, k->chart);
        }
    }
    fputs("</section>\n", f);
}

static void head(FILE *f, const xpb_report *r)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"xpubench " XPB_VERSION "\">\n<title>",
          f);
    xpb_html_escape(f, r->title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<header><h1>", css);
    xpb_html_escape(f, r->title);
    fputs("</h1>\n<p class=\"files\">From ", f);
    for (size_t d = 0; d < r->n_docs; d++) {
        fputs(d ? ", " : "", f);
        xpb_html_escape(f, r->names[d]);
    }
    fprintf(f, " (%zu file%s), by xpubench " XPB_VERSION ".</p>\n<nav><ol>", r->n_docs,
            r->n_docs == 1 ? "" : "s");
    for (size_t s = 0; s < r->n_sections; s++) {
        fputs("<li><a href=\"#", f);
        xpb_html_escape(f, r->sections[s].id);
        fputs("\">", f);
        xpb_html_escape(f, r->sections[s].title);
        fputs("</a></li>", f);
    }
    fputs("</ol></nav></header>\n<main>\n", f);
}

void xpb_report_write_html(FILE *f, const xpb_report *r)
{
    head(f, r);
    for (size_t s = 0; s < r->n_sections; s++)
        section(f, &r->sections[s]);
    fputs("</main>\n</body>\n</html>\n", f);
}
