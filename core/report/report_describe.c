/* The columns and labels that say which run a row of the report is about (see
 * report_describe.h). */
#include "report/report_describe.h"

#include <stdio.h>
#include <string.h>

static const struct {
    unsigned col;
    const char *header;
} columns[] = {
    {XPB_COL_FILE, "file"},   {XPB_COL_MODEL, "model"},         {XPB_COL_MODE, "mode"},
    {XPB_COL_BATCH, "batch"}, {XPB_COL_PRECISION, "precision"}, {XPB_COL_BACKEND, "backend"},
    {XPB_COL_FUSED, "fused"}, {XPB_COL_FUSION, "fusion"},       {XPB_COL_THREADS, "threads"},
};
#define N_COLUMNS (sizeof columns / sizeof columns[0])

static unsigned effective(const xpb_report *r, unsigned cols)
{
    return r->n_docs > 1 ? cols : cols & ~(unsigned)XPB_COL_FILE;
}

size_t xpb_rrun_desc_headers(const xpb_report *r, const char **headers, unsigned cols)
{
    size_t n = 0;
    cols = effective(r, cols);
    for (size_t i = 0; i < N_COLUMNS; i++)
        if (cols & columns[i].col)
            headers[n++] = columns[i].header;
    return n;
}

/* "model/variant": an arena string, or the run's model (borrowed from the document). */
static const char *model_text(xpb_report *r, const xpb_rrun *run)
{
    if (!run->variant[0])
        return run->model;
    return xpb_arena_printf(&r->arena, "%s/%s", run->model, run->variant);
}

/* "yes", "no", "n/a" or "-" (static). */
static const char *fused_text(const xpb_rrun *run)
{
    if (run->fuses == 0)
        return "n/a"; /* the backend does not fuse: the setting changes nothing */
    return run->fusion == 1 ? "yes" : run->fusion == 0 ? "no" : "-";
}

/* One description cell of column `col`. */
static void desc_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run, unsigned col)
{
    switch (col) {
    case XPB_COL_FILE:
        xpb_cell_text(c, r->names[run->doc]);
        break;
    case XPB_COL_MODEL:
        xpb_cell_text(c, model_text(r, run));
        break;
    case XPB_COL_MODE:
        xpb_cell_text(c, run->mode);
        break;
    case XPB_COL_BATCH:
        xpb_rrun_cell(r, c, run, XPB_RF_BATCH, XPB_UNIT_COUNT);
        break;
    case XPB_COL_PRECISION:
        xpb_cell_text(c, run->emulated
                             ? xpb_arena_printf(&r->arena, "%s (emulated)", run->precision)
                             : run->precision);
        break;
    case XPB_COL_BACKEND:
        xpb_cell_text(c, run->backend);
        break;
    case XPB_COL_FUSED:
        xpb_cell_text(c, fused_text(run));
        break;
    case XPB_COL_FUSION: /* as fused_text: the setting means nothing to a backend that never fuses
                          */
        xpb_cell_text(c, run->fuses == 0    ? "n/a"
                         : run->fusion == 1 ? "on"
                         : run->fusion == 0 ? "off"
                                            : "-");
        break;
    case XPB_COL_THREADS:
        if (run->threads == 0) {
            xpb_cell_text(c, "auto");
        } else {
            xpb_rrun_cell(r, c, run, XPB_RF_THREADS, XPB_UNIT_COUNT);
        }
        break;
    }
}

void xpb_rrun_desc_cells(xpb_report *r, xpb_report_cell *cells, const xpb_rrun *run, unsigned cols)
{
    size_t n = 0;
    cols = effective(r, cols);
    for (size_t i = 0; i < N_COLUMNS; i++)
        if (cols & columns[i].col)
            desc_cell(r, &cells[n++], run, columns[i].col);
}

const char *xpb_rrun_label(xpb_report *r, const xpb_rrun *run, unsigned cols)
{
    char buf[512] = "";
    size_t len = 0;
    cols = effective(r, cols);
    for (size_t i = 0; i < N_COLUMNS && len < sizeof buf - 1; i++) {
        if (!(cols & columns[i].col))
            continue;
        char part[160];
        switch (columns[i].col) {
        case XPB_COL_FILE:
            snprintf(part, sizeof part, "%s", r->names[run->doc]);
            break;
        case XPB_COL_MODEL:
            snprintf(part, sizeof part, "%s%s%s", run->model, run->variant[0] ? "/" : "",
                     run->variant);
            break;
        case XPB_COL_MODE:
            snprintf(part, sizeof part, "%s", run->mode);
            break;
        case XPB_COL_BATCH:
            snprintf(part, sizeof part, "b%ld", run->batch);
            break;
        case XPB_COL_PRECISION:
            snprintf(part, sizeof part, "%s", run->precision);
            break;
        case XPB_COL_BACKEND:
            snprintf(part, sizeof part, "%s", run->backend);
            break;
        case XPB_COL_FUSED:
        case XPB_COL_FUSION:
            snprintf(part, sizeof part, "%s",
                     run->fuses == 0    ? "fusion n/a"
                     : run->fusion == 1 ? "fused"
                                        : "unfused");
            break;
        default:
            if (run->threads > 0)
                snprintf(part, sizeof part, "t%ld", run->threads);
            else
                snprintf(part, sizeof part, "threads auto");
        }
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", part);
    }
    return xpb_arena_strdup(&r->arena, buf);
}
