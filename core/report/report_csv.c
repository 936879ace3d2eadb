/* The report's tables as CSV (RFC 4180, see report_writers.h), for spreadsheets: one block per
 * table (a line with its title, the header line, the rows, an empty line). Numbers are the
 * same text as on the page, without "×"; a column with intervals gets "<header> ci95 low" and
 * "<header> ci95 high" columns after it, a column with marks (n.s., †, !) a "<header> marks"
 * column. */
#include <string.h>

#include "render/terminal.h"
#include "report/report_cells.h"
#include "report/report_writers.h"

/* One field (RFC 4180): quoted when it holds a comma, a quote, CR or LF (quotes doubled).
 * `text` is what came from the files or was written around it (titles, headers, text cells):
 * its control characters, bidirectional overrides and invalid UTF-8 become visible escapes
 * (render/terminal.h), and when it starts with = + - @ tab or CR a single quote goes in front
 * and the field is quoted (OWASP's rule against CSV injection: a spreadsheet takes it as text,
 * never as a formula). The numbers the report formatted itself pass as they are (a negative
 * number stays a number). */
static void csv_field(struct xpb_text *out, const char *s, int text)
{
    struct xpb_text shown = {0};
    if (text) {
        xpb_term_escape(&shown, s, s ? strlen(s) : 0, 0);
        if (shown.failed)
            out->failed = 1;
        s = shown.data ? shown.data : "";
    }
    int formula = text && s && s[0] && strchr("=+-@\t\r", s[0]);
    if (s && !formula && strpbrk(s, ",\"\r\n") == NULL) {
        xpb_text_puts(out, s);
        xpb_text_free(&shown);
        return;
    }
    xpb_text_putc(out, '"');
    if (formula)
        xpb_text_putc(out, '\'');
    for (; s && *s; s++) {
        if (*s == '"')
            xpb_text_putc(out, '"');
        xpb_text_putc(out, *s);
    }
    xpb_text_putc(out, '"');
    xpb_text_free(&shown);
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
        csv_field(out, t->headers[c], 1);
        if (iv) {
            snprintf(name, sizeof name, "%s ci95 low", t->headers[c]);
            xpb_text_putc(out, ',');
            csv_field(out, name, 1);
            snprintf(name, sizeof name, "%s ci95 high", t->headers[c]);
            xpb_text_putc(out, ',');
            csv_field(out, name, 1);
        }
        if (marks) {
            snprintf(name, sizeof name, "%s marks", t->headers[c]);
            xpb_text_putc(out, ',');
            csv_field(out, name, 1);
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
        csv_field(out, text, cell->kind != XPB_CELL_NUMBER);
        for (int end = 1; iv && end <= 2; end++) {
            text[0] = '\0';
            if (xpb_cell_has_interval(cell))
                xpb_report_cell_number(text, sizeof text, cell, end);
            xpb_text_putc(out, ',');
            csv_field(out, text, 0);
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
            csv_field(out, cell->kind == XPB_CELL_NUMBER ? text : "", 0);
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
            csv_field(out, title, 1);
            xpb_text_puts(out, "\r\n");
            header_line(out, t);
            for (size_t row = 0; row < t->n_rows; row++)
                row_line(out, t, row);
            xpb_text_puts(out, "\r\n");
        }
    }
}
