/* The report as Markdown (see report_writers.h): the same sections, paragraphs and tables as
 * the HTML page, as GitHub-flavoured pipe tables with the same numbers; charts are named, with
 * a pointer to the HTML report that draws them. */
#include <string.h>

#include "render/terminal.h"
#include "report/report_cells.h"
#include "report/report_writers.h"

/* Text of a table cell or paragraph, as Markdown shows it and nothing more: control characters,
 * bidirectional overrides and invalid UTF-8 as visible escapes (render/terminal.h), newlines as
 * spaces, & < > as character references (raw HTML in a file stays text: a renderer never sees
 * a tag), and the characters Markdown gives meaning to (| of table cells, \ * _ ` of emphasis
 * and code, the ] of a link or image before its "(" or "[") escaped with a backslash. */
static void md_escape(struct xpb_text *out, const char *s)
{
    struct xpb_text shown = {0};
    xpb_term_escape(&shown, s, s ? strlen(s) : 0, XPB_TERM_LAYOUT);
    if (shown.failed)
        out->failed = 1;
    for (const char *p = shown.data; p && *p; p++) {
        if (*p == '&' || *p == '<' || *p == '>') {
            xpb_text_puts(out, *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : "&gt;");
            continue;
        }
        if (strchr("|\\*_`", *p) || (*p == ']' && (p[1] == '(' || p[1] == '[')))
            xpb_text_putc(out, '\\'); /* "\](" is no link, no image */
        xpb_text_putc(out, *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p);
    }
    xpb_text_free(&shown);
}

static void md_table(struct xpb_text *out, const xpb_report_table *t)
{
    char text[512];
    xpb_text_puts(out, "**");
    md_escape(out, t->title);
    xpb_text_puts(out, "**\n\n|");
    for (size_t c = 0; c < t->n_cols; c++) {
        xpb_text_putc(out, ' ');
        md_escape(out, t->headers[c][0] ? t->headers[c] : " ");
        xpb_text_puts(out, " |");
    }
    xpb_text_puts(out, "\n|");
    for (size_t c = 0; c < t->n_cols; c++) {
        int numeric = 0;
        for (size_t row = 0; row < t->n_rows && !numeric; row++)
            numeric = t->cells[row * t->n_cols + c].kind == XPB_CELL_NUMBER;
        xpb_text_puts(out, numeric ? "---:|" : "---|");
    }
    xpb_text_putc(out, '\n');
    for (size_t row = 0; row < t->n_rows; row++) {
        xpb_text_putc(out, '|');
        for (size_t c = 0; c < t->n_cols; c++) {
            const xpb_report_cell *cell = &t->cells[row * t->n_cols + c];
            xpb_report_cell_text(text, sizeof text, cell);
            xpb_text_puts(out, cell->flags & XPB_CELL_STRONG ? " **" : " ");
            md_escape(out, text);
            xpb_text_puts(out, cell->flags & XPB_CELL_STRONG ? "** |" : " |");
        }
        xpb_text_putc(out, '\n');
    }
    if (t->note) {
        xpb_text_puts(out, "\n_");
        md_escape(out, t->note);
        xpb_text_puts(out, "_\n");
    }
    xpb_text_putc(out, '\n');
}

void xpb_report_write_markdown(struct xpb_text *out, const xpb_report *r)
{
    xpb_text_puts(out, "# ");
    md_escape(out, r->title);
    xpb_text_puts(out, "\n\nFrom ");
    for (size_t d = 0; d < r->n_docs; d++) {
        xpb_text_puts(out, d ? ", " : "");
        md_escape(out, r->names[d]);
    }
    xpb_text_puts(out, ".\n\n");
    for (size_t i = 0; i < r->n_sections; i++) {
        const xpb_report_section *s = &r->sections[i];
        xpb_text_puts(out, "## ");
        md_escape(out, s->title);
        xpb_text_puts(out, "\n\n");
        for (size_t b = 0; b < s->n_blocks; b++) {
            const xpb_report_block *k = &s->blocks[b];
            if (k->kind == XPB_BLOCK_TEXT) {
                md_escape(out, k->text);
                xpb_text_puts(out, "\n\n");
            } else if (k->kind == XPB_BLOCK_TABLE) {
                md_table(out, k->table);
            } else {
                xpb_text_puts(out, "Chart: ");
                md_escape(out, k->kind == XPB_BLOCK_HEATMAP   ? k->heatmap->title
                               : k->kind == XPB_BLOCK_SCATTER ? k->scatter->title
                                                              : k->chart->title);
                xpb_text_puts(out, " (drawn in the HTML report)\n\n");
            }
        }
    }
}
