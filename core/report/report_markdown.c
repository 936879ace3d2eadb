/* The report as Markdown (see report_writers.h): the same sections, paragraphs and tables as
 * the HTML page, as GitHub-flavoured pipe tables with the same numbers; charts are named, with
 * a pointer to the HTML report that draws them. */
#include <string.h>

#include "report/report_writers.h"

/* Text of a table cell or paragraph: pipes and backslashes escaped, newlines as spaces. */
static void md_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '*' || *s == '_' || *s == '`')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void md_table(FILE *f, const xpb_report_table *t)
{
    char text[512];
    fputs("**", f);
    md_escape(f, t->title);
    fputs("**\n\n|", f);
    for (size_t c = 0; c < t->n_cols; c++) {
        fputc(' ', f);
        md_escape(f, t->headers[c][0] ? t->headers[c] : " ");
        fputs(" |", f);
    }
    fputs("\n|", f);
    for (size_t c = 0; c < t->n_cols; c++) {
        int numeric = 0;
        for (size_t row = 0; row < t->n_rows && !numeric; row++)
            numeric = t->cells[row * t->n_cols + c].kind == XPB_CELL_NUMBER;
        fputs(numeric ? "---:|" : "---|", f);
    }
    fputc('\n', f);
    for (size_t row = 0; row < t->n_rows; row++) {
        fputc('|', f);
        for (size_t c = 0; c < t->n_cols; c++) {
            const xpb_report_cell *cell = &t->cells[row * t->n_cols + c];
            xpb_report_cell_text(text, sizeof text, cell);
            fputs(cell->flags & XPB_CELL_STRONG ? " **" : " ", f);
            md_escape(f, text);
            fputs(cell->flags & XPB_CELL_STRONG ? "** |" : " |", f);
        }
        fputc('\n', f);
    }
    if (t->note) {
        fputs("\n_", f);
        md_escape(f, t->note);
        fputs("_\n", f);
    }
    fputc('\n', f);
}

void xpb_report_write_markdown(FILE *f, const xpb_report *r)
{
    fputs("# ", f);
    md_escape(f, r->title);
    fputs("\n\nFrom ", f);
    for (size_t d = 0; d < r->n_docs; d++) {
        fputs(d ? ", " : "", f);
        md_escape(f, r->names[d]);
    }
    fputs(".\n\n", f);
    for (size_t i = 0; i < r->n_sections; i++) {
        const xpb_report_section *s = &r->sections[i];
        fputs("## ", f);
        md_escape(f, s->title);
        fputs("\n\n", f);
        for (size_t b = 0; b < s->n_blocks; b++) {
            const xpb_report_block *k = &s->blocks[b];
            if (k->kind == XPB_BLOCK_TEXT) {
                md_escape(f, k->text);
                fputs("\n\n", f);
            } else if (k->kind == XPB_BLOCK_TABLE) {
                md_table(f, k->table);
            } else {
                fputs("Chart: ", f);
                md_escape(f, k->chart->title);
                fputs(" (drawn in the HTML report)\n\n", f);
            }
        }
    }
}
