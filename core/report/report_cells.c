/* A cell's text, shared by the writers (see report_cells.h). */
#include "report/report_cells.h"

#include <stdio.h>
#include <string.h>

void xpb_report_cell_number(char *buf, size_t size, const xpb_report_cell *c, int which)
{
    double v = which == 1 ? c->lo : which == 2 ? c->hi : c->v;
    xpb_report_format_value(buf, size, v, c->unit);
}

void xpb_report_cell_text(char *buf, size_t size, const xpb_report_cell *c)
{
    if (c->kind == XPB_CELL_EMPTY) {
        snprintf(buf, size, "\xe2\x80\x93"); /* en dash */
        return;
    }
    if (c->kind == XPB_CELL_TEXT) {
        snprintf(buf, size, "%s", c->text);
        return;
    }
    char v[48], lo[48] = "", hi[48] = "";
    xpb_report_cell_number(v, sizeof v, c, 0);
    int iv = xpb_cell_has_interval(c);
    if (iv) {
        xpb_report_cell_number(lo, sizeof lo, c, 1);
        xpb_report_cell_number(hi, sizeof hi, c, 2);
    }
    const char *times = c->unit == XPB_UNIT_SPEEDUP ? xpb_unit_name(c->unit) : "";
    snprintf(buf, size, "%s%s%s%s%s%s%s%s%s%s", v, times, iv ? " [" : "", lo, iv ? ", " : "", hi,
             iv ? "]" : "", c->flags & XPB_CELL_NOT_SIGNIFICANT ? " n.s." : "",
             c->flags & XPB_CELL_RECOMPUTED ? "\xe2\x80\xa0" : "",
             c->flags & XPB_CELL_FLAGGED ? " !" : "");
}
