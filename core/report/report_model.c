/* Building blocks of the report's model (see report_model.h): sections, paragraphs, tables,
 * rows, charts, series, bars and cells, all in the report's arena. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/report_model.h"

#define PUSH(r, arr, n, cap)                                                                       \
    xpb_arena_push(&(r)->arena, (void **)&(arr), &(n), &(cap), sizeof *(arr))

xpb_report_section *xpb_report_section_new(xpb_report *r, const char *id, const char *title)
{
    xpb_report_section *s = PUSH(r, r->sections, r->n_sections, r->cap_sections);
    if (!s)
        return NULL;
    s->id = xpb_arena_strdup(&r->arena, id);
    s->title = xpb_arena_strdup(&r->arena, title);
    return s->id && s->title ? s : NULL;
}

/* A new block of `kind` at the end of `s`, owned by the report's arena; NULL when out of memory. */
static xpb_report_block *block_new(xpb_report *r, xpb_report_section *s, xpb_block_kind kind)
{
    xpb_report_block *b = PUSH(r, s->blocks, s->n_blocks, s->cap_blocks);
    if (b)
        b->kind = kind;
    return b;
}

xpb_status xpb_report_text(xpb_report *r, xpb_report_section *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = n >= 0 ? xpb_arena_alloc(&r->arena, (size_t)n + 1) : NULL;
    xpb_report_block *b = text ? block_new(r, s, XPB_BLOCK_TEXT) : NULL;
    if (!b)
        return XPB_OUT_OF_MEMORY;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->text = text;
    return XPB_OK;
}

xpb_report_table *xpb_report_table_new(xpb_report *r, xpb_report_section *s, const char *suffix,
                                       const char *title, const char *const *headers, size_t n_cols)
{
    xpb_report_table *t = xpb_arena_alloc(&r->arena, sizeof *t);
    const char **h = xpb_arena_alloc(&r->arena, n_cols * sizeof *h);
    xpb_report_block *b = t && h ? block_new(r, s, XPB_BLOCK_TABLE) : NULL;
    if (!b)
        return NULL;
    for (size_t i = 0; i < n_cols; i++)
        if (!(h[i] = xpb_arena_strdup(&r->arena, headers[i])))
            return NULL;
    t->id = xpb_arena_printf(&r->arena, "%s-%s", s->id, suffix);
    t->title = xpb_arena_strdup(&r->arena, title);
    t->headers = h;
    t->n_cols = n_cols;
    b->table = t;
    return t->id && t->title ? t : NULL;
}

xpb_report_cell *xpb_report_row(xpb_report *r, xpb_report_table *t)
{
    if (t->n_rows == t->cap_rows) {
        size_t cap = t->cap_rows ? 2 * t->cap_rows : 16;
        xpb_report_cell *cells = xpb_arena_alloc(&r->arena, cap * t->n_cols * sizeof *cells);
        if (!cells)
            return NULL;
        if (t->n_rows)
            memcpy(cells, t->cells, t->n_rows * t->n_cols * sizeof *cells);
        t->cells = cells;
        t->cap_rows = cap;
    }
    xpb_report_cell *row = t->cells + t->n_rows * t->n_cols;
    for (size_t i = 0; i < t->n_cols; i++)
        row[i] = xpb_cell_empty();
    t->n_rows++;
    return row;
}

xpb_status xpb_report_heatmap(xpb_report *r, xpb_report_section *s, const struct xpb_svg_heatmap *h)
{
    xpb_report_block *b = block_new(r, s, XPB_BLOCK_HEATMAP);
    if (!b)
        return XPB_OUT_OF_MEMORY;
    b->heatmap = h;
    return XPB_OK;
}

xpb_status xpb_report_scatter(xpb_report *r, xpb_report_section *s, const struct xpb_svg_scatter *c)
{
    xpb_report_block *b = block_new(r, s, XPB_BLOCK_SCATTER);
    if (!b)
        return XPB_OUT_OF_MEMORY;
    b->scatter = c;
    return XPB_OK;
}

xpb_chart *xpb_report_chart_new(xpb_report *r, xpb_report_section *s, xpb_chart_kind kind,
                                const char *suffix, const char *title)
{
    xpb_chart *c = xpb_arena_alloc(&r->arena, sizeof *c);
    xpb_report_block *b = c ? block_new(r, s, XPB_BLOCK_CHART) : NULL;
    if (!b)
        return NULL;
    c->kind = kind;
    c->id = xpb_arena_printf(&r->arena, "%s-%s", s->id, suffix);
    c->title = xpb_arena_strdup(&r->arena, title);
    c->x_label = c->y_label = "";
    c->ref = c->hline = NAN;
    c->n_segments = 1;
    b->chart = c;
    return c->id && c->title ? c : NULL;
}

xpb_chart_series *xpb_chart_series_new(xpb_report *r, xpb_chart *c, const char *label,
                                       unsigned style, int color)
{
    xpb_chart_series *s = PUSH(r, c->series, c->n_series, c->cap_series);
    if (!s)
        return NULL;
    s->label = xpb_arena_strdup(&r->arena, label);
    s->style = style;
    s->color = color;
    return s->label ? s : NULL;
}

xpb_status xpb_chart_point(xpb_report *r, xpb_chart_series *s, double x, double y, double lo,
                           double hi)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        double *v = xpb_arena_alloc(&r->arena, 4 * cap * sizeof *v);
        if (!v)
            return XPB_OUT_OF_MEMORY;
        if (s->n) {
            memcpy(v, s->x, s->n * sizeof *v);
            memcpy(v + cap, s->y, s->n * sizeof *v);
            memcpy(v + 2 * cap, s->lo, s->n * sizeof *v);
            memcpy(v + 3 * cap, s->hi, s->n * sizeof *v);
        }
        s->x = v;
        s->y = v + cap;
        s->lo = v + 2 * cap;
        s->hi = v + 3 * cap;
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->lo[s->n] = lo;
    s->hi[s->n] = hi;
    s->n++;
    return XPB_OK;
}

struct xpb_svg_bar *xpb_chart_bar_new(xpb_report *r, xpb_chart *c, const char *label)
{
    double *values = xpb_arena_alloc(&r->arena, c->n_segments * sizeof *values);
    struct xpb_svg_bar *b = values ? PUSH(r, c->bars, c->n_bars, c->cap_bars) : NULL;
    if (!b)
        return NULL;
    b->label = xpb_arena_strdup(&r->arena, label);
    b->values = values;
    b->lo = b->hi = NAN;
    return b->label ? b : NULL;
}

xpb_report_cell xpb_cell_empty(void)
{
    return (xpb_report_cell){.kind = XPB_CELL_EMPTY, .v = NAN, .lo = NAN, .hi = NAN};
}

void xpb_cell_text(xpb_report_cell *c, const char *text)
{
    c->kind = text ? XPB_CELL_TEXT : XPB_CELL_EMPTY;
    c->text = text;
}

void xpb_cell_number(xpb_report_cell *c, double v, xpb_unit unit, const char *src)
{
    c->kind = isfinite(v) ? XPB_CELL_NUMBER : XPB_CELL_EMPTY;
    c->v = v;
    c->lo = c->hi = NAN;
    c->unit = unit;
    c->src = src;
}

int xpb_cell_has_interval(const xpb_report_cell *c)
{
    return c->kind == XPB_CELL_NUMBER && isfinite(c->lo) && isfinite(c->hi);
}
