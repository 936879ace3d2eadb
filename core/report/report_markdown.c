/* The report as Markdown (see report_writers.h): the same sections, paragraphs and tables as
 * the HTML page, as GitHub-flavoured pipe tables with the same numbers; charts are named, with
 * a pointer to the HTML report that draws them. */
#include <string.h>

#include "report/report_cells.h"
#include "report/report_writers.h"

/* Text of a table cell or paragraph: pipes and backslashes escaped, newlines as spaces. */
static void md_escape(struct xpb_text *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '*' || *s == '_' || *s == '`')
            xpb_text_putc(out, '\\');
        xpb_text_putc(out, *s == '\n' ? ' ' : *s);
    }
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
                md_escape(out, k->chart->title);
                xpb_text_puts(out, " (drawn in the HTML report)\n\n");
            }
        }
    }
}
