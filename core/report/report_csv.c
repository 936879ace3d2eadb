/* The report's tables as CSV (RFC 4180, see report_writers.h), for spreadsheets: one block per
 * table (a line with its title, the header line, the rows, an empty line). Numbers are the
 * same text as on the page, without "×"; a column with intervals gets "<header> ci95 low" and
 * "<header> ci95 high" columns after it, a column with marks (n.s., †, !) a "<header> marks"
 * column. */
#include <string.h>

#include "report/report_cells.h"
#include "report/report_writers.h"

static void csv_field(struct xpb_text *out, const char *s)
{
    if (s && strpbrk(s, ",\"\r\n") == NULL) {
        xpb_text_puts(out, s);
        return;
    }
    xpb_text_putc(out, '"');
    for (; s && *s; s++) {
        if (*s == '"')
            xpb_text_putc(out, '"');
        xpb_text_putc(out, *s);
    }
    xpb_text_putc(out, '"');
}

static void column_extras(const xpb_report_table *t, size_t c, int *intervals, int *marks)
{
    *intervals = *marks = 0;
    for (size_t row = 0; row < t->n_rows; row++) {
        const xpb_report_cell *cell = &t->cells[row * t->n_cols + c];
        *intervals |= xpb_cell_has_interval(cell);
        *marks |= cell->kind == XPB_CELL_NUMBER &&
                  (cell->flags &
                   (XPB_CELL_NOT_SIGNIFICANT | XPB_CELL_RECOMPUTED | XPB_CELL_FLAGGED)) != 0;
    }
}

static void header_line(struct xpb_text *out, const xpb_report_table *t)
{
    char name[256];
    for (size_t c = 0; c < t->n_cols; c++) {
        int iv, marks;
        column_extras(t, c, &iv, &marks);
        xpb_text_puts(out, c ? "," : "");
        csv_field(out, t->headers[c]);
        if (iv) {
            snprintf(name, sizeof name, "%s ci95 low", t->headers[c]);
            xpb_text_putc(out, ',');
            csv_field(out, name);
            snprintf(name, sizeof name, "%s ci95 high", t->headers[c]);
            xpb_text_putc(out, ',');
            csv_field(out, name);
        }
        if (marks) {
            snprintf(name, sizeof name, "%s marks", t->headers[c]);
            xpb_text_putc(out, ',');
            csv_field(out, name);
        }
    }
    xpb_text_puts(out, "\r\n");
}

static void row_line(struct xpb_text *out, const xpb_report_table *t, size_t row)
{
    char text[512];
    for (size_t c = 0; c < t->n_cols; c++) {
        const xpb_report_cell *cell = &t->cells[row * t->n_cols + c];
        int iv, marks;
        column_extras(t, c, &iv, &marks);
        xpb_text_puts(out, c ? "," : "");
        if (cell->kind == XPB_CELL_NUMBER)
            xpb_report_cell_number(text, sizeof text, cell, 0);
        else
            snprintf(text, sizeof text, "%s", cell->kind == XPB_CELL_TEXT ? cell->text : "");
        csv_field(out, text);
        for (int end = 1; iv && end <= 2; end++) {
            text[0] = '\0';
            if (xpb_cell_has_interval(cell))
                xpb_report_cell_number(text, sizeof text, cell, end);
            xpb_text_putc(out, ',');
            csv_field(out, text);
        }
        if (marks) {
            snprintf(text, sizeof text, "%s%s%s",
                     cell->flags & XPB_CELL_NOT_SIGNIFICANT ? "n.s. " : "",
                     cell->flags & XPB_CELL_RECOMPUTED ? "\xe2\x80\xa0 " : "",
                     cell->flags & XPB_CELL_FLAGGED ? "! " : "");
            size_t len = strlen(text);
            if (len)
                text[len - 1] = '\0';
            xpb_text_putc(out, ',');
            csv_field(out, cell->kind == XPB_CELL_NUMBER ? text : "");
        }
    }
    xpb_text_puts(out, "\r\n");
}

void xpb_report_write_csv(struct xpb_text *out, const xpb_report *r)
{
    for (size_t i = 0; i < r->n_sections; i++) {
        const xpb_report_section *s = &r->sections[i];
        for (size_t b = 0; b < s->n_blocks; b++) {
            const xpb_report_table *t = s->blocks[b].table;
            if (s->blocks[b].kind != XPB_BLOCK_TABLE)
                continue;
            char title[512];
            snprintf(title, sizeof title, "%s: %s", s->title, t->title);
            csv_field(out, title);
            xpb_text_puts(out, "\r\n");
            header_line(out, t);
            for (size_t row = 0; row < t->n_rows; row++)
                row_line(out, t, row);
            xpb_text_puts(out, "\r\n");
        }
    }
}
