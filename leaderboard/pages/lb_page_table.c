/* One ranking table (see lb_page_table.h). */
#include "pages/lb_page_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages/lb_pages.h"
#include "render/escape.h"
#include "render/format_si.h"
#include "store/lb_rank.h"

#define CHART_BARS 12
#define CPU_CACHE 16

static const struct {
    const char *name;
    const char *label;
    int desc_first; /* direction of a first click */
} sort_keys[LB_SORT_KEYS] = {
    [SORT_THROUGHPUT] = {"throughput", "Throughput", 1},
    [SORT_STEP] = {"step", "Step p50", 0},
    [SORT_SPEEDUP] = {"speedup", "vs best CPU", 1},
    [SORT_ENERGY] = {"energy", "Energy", 1},
    [SORT_BATCH] = {"batch", "Batch", 0},
    [SORT_DATE] = {"date", "Submitted", 1},
};

/* A row as displayed: the run, its rank and its speedup over the best CPU result. */
struct shown {
    const struct lb_run_row *row;
    struct lb_ranked ranked;
    size_t position; /* in rank order, for stable sorting */
    double speedup;
};

enum lb_sort_key lb_sort_key_named(const char *name)
{
    for (int i = 0; name && i < LB_SORT_KEYS; i++)
        if (!strcmp(name, sort_keys[i].name))
            return (enum lb_sort_key)i;
    return SORT_THROUGHPUT;
}

int lb_sort_key_desc_first(enum lb_sort_key k)
{
    return sort_keys[k].desc_first;
}

void lb_board_query(struct xpb_text *q, const struct lb_filter *f, const struct lb_board_view *v,
                    long long page, long long offset)
{
    const char *names[] = {"model", "variant", "mode", "precision", "backend", "submitter"};
    const char *values[] = {f->model, f->variant, f->mode, f->precision, f->backend, f->submitter};
    const char *sep = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!values[i])
            continue;
        xpb_text_printf(q, "%s%s=", sep, names[i]);
        xpb_url(q, values[i]);
        sep = "&";
    }
    if (f->batch > 0)
        xpb_text_printf(q, "%sbatch=%lld", sep, f->batch), sep = "&";
    if (f->world_size > 0)
        xpb_text_printf(q, "%sworld_size=%lld", sep, f->world_size), sep = "&";
    xpb_text_printf(q, "%ssort=%s&dir=%s", sep, sort_keys[v->key].name, v->desc ? "desc" : "asc");
    if (page > 1)
        xpb_text_printf(q, "&page=%lld", page);
    if (offset > 0)
        xpb_text_printf(q, "&offset=%lld", offset);
}

/* qsort has no context argument: the comparison reads the active key from here. */
static _Thread_local int active_key, active_desc;

static double sort_value(const struct shown *s)
{
    switch (active_key) {
    case SORT_STEP:
        return s->row->step_p50;
    case SORT_SPEEDUP:
        return s->speedup;
    case SORT_ENERGY:
        return s->row->samples_per_joule;
    case SORT_BATCH:
        return (double)s->row->batch;
    case SORT_DATE:
        return (double)s->row->submission_id;
    default:
        return s->row->throughput;
    }
}

/* Missing values (NAN) go last in either direction; ties keep the rank order. */
static int cmp_shown(const void *pa, const void *pb)
{
    const struct shown *a = pa, *b = pb;
    double x = sort_value(a), y = sort_value(b);
    int by_position = a->position < b->position ? -1 : 1;
    if (isnan(x) || isnan(y)) {
        if (isnan(x) && isnan(y))
            return by_position;
        return isnan(x) ? 1 : -1;
    }
    if (x != y)
        return (x < y) == !active_desc ? -1 : 1;
    return by_position;
}

/* Best CPU throughput for row r, cached per batch (a table has one group). */
struct cpu_cache {
    long long batch[CPU_CACHE];
    double best[CPU_CACHE];
    int n;
};

static double best_cpu(struct cpu_cache *c, struct lb_db *db, const struct lb_run_row *r)
{
    for (int i = 0; i < c->n; i++)
        if (c->batch[i] == r->batch)
            return c->best[i];
    double best = lb_store_best_cpu(db, r);
    if (c->n < CPU_CACHE) {
        c->batch[c->n] = r->batch;
        c->best[c->n] = best;
        c->n++;
    }
    return best;
}

/* The table's id on the page, "g-conv6-cifar-train-fp32" ("-w4" after it for 4 ranks). */
static void group_id(struct xpb_text *id, const struct lb_group *g)
{
    xpb_text_printf(id, "g-%s-%s-%s-%s", g->model, g->variant, g->mode, g->precision);
    if (g->world_size > 1)
        xpb_text_printf(id, "-w%lld", g->world_size);
}

static void chart(struct xpb_text *b, const struct lb_group *g, const struct shown *shown, size_t n)
{
    struct lb_page_bar bars[CHART_BARS];
    char labels[CHART_BARS][LB_TEXT_MAX + LB_NAME_MAX + 8];
    char tooltips[CHART_BARS][LB_TEXT_MAX + 2 * LB_NAME_MAX + 16];
    char hrefs[CHART_BARS][40];
    size_t n_bars = n < CHART_BARS ? n : CHART_BARS;
    for (size_t i = 0; i < n_bars; i++) {
        const struct lb_run_row *r = shown[i].row;
        snprintf(labels[i], sizeof labels[i], "%s \xC2\xB7 %s",
                 r->device[0] ? r->device : r->cpu_model, r->backend);
        snprintf(tooltips[i], sizeof tooltips[i], "%s \xC2\xB7 %s \xE2\x80\x94 %s",
                 r->device[0] ? r->device : r->cpu_model, r->backend, r->submitter);
        snprintf(hrefs[i], sizeof hrefs[i], "/submissions/%lld", r->submission_id);
        bars[i] =
            (struct lb_page_bar){labels[i], tooltips[i], hrefs[i], r->device_kind, r->throughput};
    }
    char title[320];
    snprintf(title, sizeof title, "Throughput of %s/%s %s %s", g->model, g->variant, g->mode,
             g->precision);
    struct xpb_text id = {0}; /* "chart-" and the table's id: ids "g-..." are tables */
    xpb_text_puts(&id, "chart-");
    group_id(&id, g);
    lb_page_bars(b, id.data ? id.data : "chart", title, bars, n_bars);
    xpb_text_free(&id);
}

/* One header cell with a no-script sort link; lb.js turns it into a button. */
static void sort_header(struct xpb_text *b, const struct lb_board_view *v, enum lb_sort_key k,
                        const char *klass, const char *unit)
{
    struct lb_board_view next = *v;
    next.key = k;
    next.desc = k == v->key ? !v->desc : sort_keys[k].desc_first;
    const char *first = sort_keys[k].desc_first ? "desc" : "asc";
    xpb_text_printf(b, "<th class=\"%s\" data-key=\"%s\" data-first=\"%s\" aria-sort=\"%s\">",
                    klass, sort_keys[k].name, first,
                    k == v->key ? (v->desc ? "descending" : "ascending") : "none");
    xpb_text_puts(b, "<a class=\"sort\" href=\"/?");
    struct xpb_text q = {0};
    lb_board_query(&q, &v->filter, &next, v->page, v->offset);
    xpb_html(b, q.data);
    xpb_text_free(&q);
    xpb_text_printf(b, "\">%s%s</a></th>", sort_keys[k].label, unit);
}

static void table_head(struct xpb_text *b, const struct lb_board_view *v)
{
    xpb_text_puts(b, "<div class=\"table-wrap\"><table class=\"sortable ranked\"><thead><tr>"
                     "<th class=\"num\" data-key=\"rank\" data-first=\"asc\" aria-sort=\"none\" "
                     "title=\"1 + results above whose 95% interval is entirely faster\">#</th>");
    sort_header(b, v, SORT_THROUGHPUT, "num", " <span class=\"small\">/s</span>");
    sort_header(b, v, SORT_STEP, "num", "");
    sort_header(b, v, SORT_SPEEDUP, "num", "");
    sort_header(b, v, SORT_ENERGY, "num", " <span class=\"small\">/J</span>");
    xpb_text_puts(b, "<th>Machine</th><th>Backend</th>");
    sort_header(b, v, SORT_BATCH, "num", "");
    xpb_text_puts(b, "<th class=\"num\" title=\"ranks (processes) the run used\">World</th>");
    sort_header(b, v, SORT_DATE, "", "");
    xpb_text_puts(b, "<th>Compare</th></tr></thead><tbody>");
}

static void rank_cell(struct xpb_text *b, const struct shown *s)
{
    xpb_text_printf(b, "<td class=\"num rank\" data-v=\"%d\"", s->ranked.rank);
    if (s->ranked.shared)
        xpb_text_puts(b, " title=\"95% intervals overlap: cannot be told apart from the other "
                         "results of this rank\"");
    xpb_text_printf(b, ">%s%d</td>", s->ranked.shared ? "=" : "", s->ranked.rank);
}

static void throughput_cell(struct xpb_text *b, const struct shown *s)
{
    const struct lb_run_row *r = s->row;
    xpb_text_puts(b, "<td class=\"num\" data-v=\"");
    xpb_format_key(b, r->throughput);
    xpb_text_puts(b, "\"><b>");
    xpb_format_grouped(b, r->throughput, r->throughput >= 100 ? 0 : 1);
    xpb_text_puts(b, "</b>");
    if (r->disturbed)
        xpb_text_puts(b, "<span class=\"disturbed\" title=\"disturbed: other processes took more "
                         "than 5% of the machine during its timed steps; the number is not the "
                         "run's own\">!</span>");
    xpb_text_puts(b, "<span class=\"ci small muted\">");
    if (s->ranked.has_interval) {
        xpb_text_puts(b, "95% ");
        xpb_format_grouped(b, r->ci_low, r->ci_low >= 100 ? 0 : 1);
        xpb_text_puts(b, "\xE2\x80\x93");
        xpb_format_grouped(b, r->ci_high, r->ci_high >= 100 ? 0 : 1);
    } else {
        xpb_text_puts(b, "<span class=\"noci\" title=\"a single repeat or a version-1 document: "
                         "ranked by its median alone\">no interval</span>");
    }
    xpb_text_puts(b, "</span></td>");
}

void lb_page_submitted_cell(struct xpb_text *b, const struct lb_run_row *r)
{
    xpb_text_printf(b, "<td data-v=\"%lld\">", r->submission_id);
    lb_page_submission_link(b, r->submission_id);
    xpb_text_puts(b, " <span class=\"small muted\">");
    xpb_html(b, r->submitter);
    xpb_text_puts(b, " \xC2\xB7 ");
    xpb_text_add(b, r->received, strlen(r->received) >= 10 ? 10 : strlen(r->received));
    xpb_text_puts(b, "</span></td>");
}

void lb_page_machine_cell(struct xpb_text *b, const struct lb_run_row *r)
{
    xpb_text_puts(b, "<td class=\"machine\"");
    lb_page_machine_title(b, r->device, r->cpu_model, r->os);
    xpb_text_puts(b, "><b>");
    xpb_html(b, r->device[0] ? r->device : r->cpu_model);
    xpb_text_printf(b, "</b> <span class=\"pill kind %s\">", lb_page_kind_class(r->device_kind));
    xpb_html(b, r->device_kind);
    xpb_text_puts(b, "</span><span class=\"muted\">");
    if (r->device[0] && strcmp(r->device, r->cpu_model) != 0) {
        xpb_text_puts(b, "host ");
        xpb_html(b, r->cpu_model);
        xpb_text_puts(b, " \xC2\xB7 ");
    }
    xpb_html(b, r->os);
    xpb_text_puts(b, "</span></td>");
}

void lb_page_backend_cell(struct xpb_text *b, const struct lb_run_row *r)
{
    xpb_text_printf(b, "<td><span class=\"pill%s\">", lb_kind_is_cpu(r->device_kind) ? " cpu" : "");
    xpb_html(b, r->backend);
    xpb_text_puts(b, "</span>");
    if (r->fusion)
        xpb_text_puts(b, " <span class=\"small muted\">fused</span>");
    if (r->threads > 0)
        xpb_text_printf(b, " <span class=\"small muted\">%lld thr</span>", r->threads);
    if (r->verified == 1)
        xpb_text_puts(b, " <span class=\"pill ok\" title=\"first step verified against the "
                         "reference backend\">verified</span>");
    xpb_text_puts(b, "</td>");
}

static void row_html(struct xpb_text *b, const struct shown *s)
{
    const struct lb_run_row *r = s->row;
    xpb_text_printf(b, "<tr class=\"%s\" data-submission=\"%lld\">",
                    s->ranked.rank == 1 ? "top1" : "", r->submission_id);
    rank_cell(b, s);
    throughput_cell(b, s);
    xpb_text_puts(b, "<td class=\"num\" data-v=\"");
    xpb_format_key(b, r->step_p50);
    xpb_text_puts(b, "\">");
    xpb_format_ms(b, r->step_p50);
    xpb_text_puts(b, "</td><td class=\"num\" data-v=\"");
    xpb_format_key(b, s->speedup);
    xpb_text_puts(b, "\">");
    xpb_format_ratio(b, s->speedup);
    xpb_text_puts(b, "</td><td class=\"num\" data-v=\"");
    xpb_format_key(b, r->samples_per_joule);
    xpb_text_puts(b, "\">");
    if (r->energy_measured && !isnan(r->samples_per_joule))
        xpb_format_grouped(b, r->samples_per_joule, r->samples_per_joule >= 100 ? 0 : 2);
    else
        xpb_text_puts(b, "<span class=\"muted small\">not measured</span>");
    xpb_text_puts(b, "</td>");
    lb_page_machine_cell(b, r);
    lb_page_backend_cell(b, r);
    xpb_text_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld</td>", r->batch, r->batch);
    xpb_text_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld</td>", r->world_size, r->world_size);
    lb_page_submitted_cell(b, r);
    xpb_text_printf(b,
                    "<td><input type=\"checkbox\" name=\"id\" value=\"%lld\" "
                    "aria-label=\"compare submission %lld\"></td></tr>",
                    r->submission_id, r->submission_id);
}

void lb_page_section_open(struct xpb_text *b, const char *css_class, const char *id,
                          const char *model, const char *variant)
{
    xpb_text_printf(b, "<section class=\"%s\" id=\"", css_class);
    xpb_html(b, id ? id : "");
    xpb_text_puts(b, "\"><header><h2>");
    xpb_html(b, model);
    if (variant[0]) {
        xpb_text_puts(b, " <span class=\"muted\">/</span> ");
        xpb_html(b, variant);
    }
    xpb_text_puts(b, "</h2>");
}

void lb_page_section_count(struct xpb_text *b, long long total, long long n_submitters)
{
    xpb_text_printf(b, "<span class=\"muted small\">%lld result%s from %lld submitter%s</span>",
                    total, total == 1 ? "" : "s", n_submitters, n_submitters == 1 ? "" : "s");
    xpb_text_puts(b, "</header>");
}

static void section_head(struct xpb_text *b, const struct lb_group *g, long long total)
{
    struct xpb_text id = {0};
    group_id(&id, g);
    lb_page_section_open(b, "card group", id.data, g->model, g->variant);
    xpb_text_free(&id);
    xpb_text_puts(b, "<span class=\"pill\">");
    xpb_html(b, g->mode);
    xpb_text_puts(b, "</span><span class=\"pill\">");
    xpb_html(b, g->precision);
    xpb_text_printf(b, "</span><span class=\"pill\">%lld rank%s</span>", g->world_size,
                    g->world_size == 1 ? "" : "s");
    lb_page_section_count(b, total, g->n_submitters);
}

/* What the table leaves out, and the links to it. */
static void cut_note(struct xpb_text *b, const struct lb_group *g, const struct lb_board_view *v,
                     size_t first, size_t shown, long long total)
{
    long long hidden = g->n_runs - total; /* over the per-submitter limit */
    int more = (long long)(first + shown) < total;
    if (!more && first == 0 && hidden <= 0)
        return;
    xpb_text_printf(b, "<p class=\"cut small\">Showing %zu\xE2\x80\x93%zu of %lld ranked result%s.",
                    shown ? first + 1 : first, first + shown, total, total == 1 ? "" : "s");
    if (hidden > 0)
        xpb_text_printf(b,
                        " %lld more %s hidden: a table ranks at most %d results per submitter "
                        "(their fastest); filter by submitter to see all of one submitter's.",
                        hidden, hidden == 1 ? "is" : "are", LB_TABLE_PER_SUBMITTER);
    /* links pin this table's group, so that paging shows it alone */
    struct lb_filter pinned = v->filter;
    char world[32];
    snprintf(world, sizeof world, "%lld", g->world_size);
    pinned.model = g->model;
    pinned.variant = g->variant[0] ? g->variant : NULL;
    pinned.mode = g->mode;
    pinned.precision = g->precision;
    pinned.world_size = g->world_size;
    long long next = (long long)(first + shown);
    if (more && next <= LB_TABLE_MAX_OFFSET) {
        struct xpb_text q = {0};
        lb_board_query(&q, &pinned, v, 1, next);
        xpb_text_puts(b, " <a href=\"/?");
        xpb_html(b, q.data);
        xpb_text_printf(b, "\">Next %d \xE2\x86\x92</a>", LB_TABLE_ROWS);
        xpb_text_free(&q);
    } else if (more) {
        xpb_text_printf(b, " Tables page %d rows deep; the API lists every result.",
                        LB_TABLE_MAX_OFFSET + LB_TABLE_ROWS);
    }
    xpb_text_puts(b, "</p>");
}

xpb_status lb_page_table(struct xpb_text *b, struct lb_db *db, const struct lb_group *g,
                         const struct lb_board_view *v, xpb_err *err)
{
    size_t first = (size_t)v->offset, want = first + LB_TABLE_ROWS;
    struct lb_run_row *rows = NULL;
    size_t n = 0;
    long long total = 0;
    size_t per = v->filter.submitter ? (size_t)1 << 30 : LB_TABLE_PER_SUBMITTER;
    xpb_status st = lb_store_group_runs(&rows, &n, &total, db, g, &v->filter, per, want, err);
    struct lb_ranked *ranked = st == XPB_OK ? calloc(n ? n : 1, sizeof *ranked) : NULL;
    struct shown *shown = ranked ? calloc(n ? n : 1, sizeof *shown) : NULL;
    section_head(b, g, st == XPB_OK ? total : g->n_runs);
    if (!shown) {
        /* why is for the log (the caller's), never for the page */
        xpb_text_puts(b, "<p class=\"muted\">This table cannot be read now.</p></section>");
        if (st == XPB_OK)
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto done_rows;
    }
    lb_rank(ranked, rows, n); /* ranks count the rows above, so all of them */
    size_t count = n > first ? n - first : 0;
    struct cpu_cache cache = {0};
    for (size_t i = 0; i < count; i++) {
        const struct lb_run_row *r = &rows[first + i];
        double best = best_cpu(&cache, db, r);
        shown[i] = (struct shown){r, ranked[first + i], i, best > 0 ? r->throughput / best : NAN};
    }
    chart(b, g, shown, count);
    active_key = (int)v->key;
    active_desc = v->desc;
    qsort(shown, count, sizeof *shown, cmp_shown);
    table_head(b, v);
    for (size_t i = 0; i < count; i++)
        row_html(b, &shown[i]);
    xpb_text_puts(b, "</tbody></table></div>");
    cut_note(b, g, v, first, count, total);
    xpb_text_puts(b, "</section>");
done_rows:
    free(shown);
    free(ranked);
    free(rows);
    return st;
}
