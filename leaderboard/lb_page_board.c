/* The leaderboard page: ranked tables per model / variant / mode / precision (see
 * lb_pages.h). Query parameters: model, variant, mode, precision, backend, batch (filters),
 * sort (throughput, step, speedup, energy, batch, date) and dir (asc, desc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lb_api.h"
#include "lb_escape.h"
#include "lb_format.h"
#include "lb_pages.h"
#include "lb_store.h"
#include "lb_svg.h"

#define MAX_ROWS 5000
#define CHART_BARS 12
#define RECENT 12

enum sort_key { SORT_THROUGHPUT, SORT_STEP, SORT_SPEEDUP, SORT_ENERGY, SORT_BATCH, SORT_DATE };

static const struct {
    const char *name;
    const char *label;
    const char *first_dir; /* direction of a first click */
} sort_keys[] = {
    [SORT_THROUGHPUT] = {"throughput", "Throughput", "desc"},
    [SORT_STEP] = {"step", "Step p50", "asc"},
    [SORT_SPEEDUP] = {"speedup", "vs best CPU", "desc"},
    [SORT_ENERGY] = {"energy", "Energy", "desc"},
    [SORT_BATCH] = {"batch", "Batch", "asc"},
    [SORT_DATE] = {"date", "Submitted", "desc"},
};
#define N_SORT_KEYS (sizeof sort_keys / sizeof sort_keys[0])

/* A row as displayed: the run, its rank by throughput and its speedup. */
struct shown {
    const struct lb_run_row *row;
    int rank;
    double speedup;
};

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

/* Missing values (NAN) go last in either direction; ties keep the throughput rank. */
static int cmp_shown(const void *pa, const void *pb)
{
    const struct shown *a = pa, *b = pb;
    double x = sort_value(a), y = sort_value(b);
    if (isnan(x) || isnan(y)) {
        if (isnan(x) && isnan(y))
            return a->rank - b->rank;
        return isnan(x) ? 1 : -1;
    }
    if (x != y)
        return (x < y) == !active_desc ? -1 : 1;
    return a->rank - b->rank;
}

static int same_group(const struct lb_run_row *a, const struct lb_run_row *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->variant, b->variant) &&
           !strcmp(a->mode, b->mode) && !strcmp(a->precision, b->precision);
}

/* The query string for the current filters plus a sort (no leading '?'), URL-encoded. */
static void filter_query(struct lb_buf *b, const struct lb_filter *f, const char *sort,
                         const char *dir)
{
    const char *names[] = {"model", "variant", "mode", "precision", "backend"};
    const char *values[] = {f->model, f->variant, f->mode, f->precision, f->backend};
    int first = 1;
    for (size_t i = 0; i < 5; i++) {
        if (!values[i])
            continue;
        lb_buf_printf(b, "%s%s=", first ? "" : "&", names[i]);
        lb_buf_url(b, values[i]);
        first = 0;
    }
    if (f->batch > 0) {
        lb_buf_printf(b, "%sbatch=%lld", first ? "" : "&", f->batch);
        first = 0;
    }
    if (sort)
        lb_buf_printf(b, "%ssort=%s&dir=%s", first ? "" : "&", sort, dir);
}

static void select_menu(struct lb_buf *b, struct lb_db *db, const char *name, const char *label,
                        const char *current)
{
    char **values = NULL;
    size_t n = 0;
    xpb_err err;
    lb_store_distinct(&values, &n, db, name, &err);
    lb_buf_printf(b, "<label>%s<select name=\"%s\"><option value=\"\">any</option>", label, name);
    for (size_t i = 0; i < n; i++) {
        lb_buf_puts(b, "<option value=\"");
        lb_buf_html(b, values[i]);
        lb_buf_puts(b, "\"");
        if (current && !strcmp(current, values[i]))
            lb_buf_puts(b, " selected");
        lb_buf_puts(b, ">");
        lb_buf_html(b, values[i][0] ? values[i] : "(none)");
        lb_buf_puts(b, "</option>");
    }
    lb_buf_puts(b, "</select></label>");
    lb_store_free_strings(values, n);
}

static void filter_form(struct lb_buf *b, struct lb_db *db, const struct lb_filter *f)
{
    lb_buf_puts(b, "<div class=\"card\"><form class=\"filters\" method=\"get\" action=\"/\">");
    select_menu(b, db, "model", "Model", f->model);
    select_menu(b, db, "variant", "Variant", f->variant);
    select_menu(b, db, "mode", "Mode", f->mode);
    select_menu(b, db, "precision", "Precision", f->precision);
    select_menu(b, db, "backend", "Backend", f->backend);
    lb_buf_puts(b, "<label>Batch<input type=\"number\" name=\"batch\" min=\"1\"");
    if (f->batch > 0)
        lb_buf_printf(b, " value=\"%lld\"", f->batch);
    lb_buf_puts(b, "></label><button type=\"submit\">Filter</button>"
                   "<a class=\"button plain\" href=\"/\">Reset</a></form></div>");
}

/* One header cell with a no-script sort link; lb.js turns it into a button. */
static void sort_header(struct lb_buf *b, const struct lb_filter *f, enum sort_key k,
                        enum sort_key current, int desc, const char *klass, const char *unit)
{
    const char *dir = k == current ? (desc ? "asc" : "desc") : sort_keys[k].first_dir;
    lb_buf_printf(b, "<th class=\"%s\" data-key=\"%s\" data-first=\"%s\" aria-sort=\"%s\">", klass,
                  sort_keys[k].name, sort_keys[k].first_dir,
                  k == current ? (desc ? "descending" : "ascending") : "none");
    lb_buf_puts(b, "<a class=\"sort\" href=\"/?");
    struct lb_buf q = {0};
    filter_query(&q, f, sort_keys[k].name, dir);
    lb_buf_html(b, q.data);
    lb_buf_free(&q);
    lb_buf_printf(b, "\">%s%s</a></th>", sort_keys[k].label, unit);
}

static void machine_cell(struct lb_buf *b, const struct lb_run_row *r)
{
    lb_buf_puts(b, "<td class=\"machine\"><b>");
    lb_buf_html(b, r->device[0] ? r->device : r->cpu_model);
    lb_buf_puts(b, "</b><span class=\"muted\">");
    if (r->device[0] && strcmp(r->device, r->cpu_model) != 0) {
        lb_buf_puts(b, "host ");
        lb_buf_html(b, r->cpu_model);
        lb_buf_puts(b, " \xC2\xB7 ");
    }
    lb_buf_html(b, r->os);
    lb_buf_puts(b, "</span></td>");
}

static void group_table(struct lb_buf *b, const struct lb_filter *f, struct shown *shown, size_t n,
                        enum sort_key key, int desc)
{
    const struct lb_run_row *g = shown[0].row;
    /* chart: the fastest results, in rank order */
    struct lb_bar bars[CHART_BARS];
    char labels[CHART_BARS][LB_TEXT_MAX + LB_NAME_MAX + 8];
    char hrefs[CHART_BARS][40];
    size_t n_bars = n < CHART_BARS ? n : CHART_BARS;
    for (size_t i = 0; i < n_bars; i++) {
        const struct lb_run_row *r = shown[i].row;
        snprintf(labels[i], sizeof labels[i], "%s \xC2\xB7 %s",
                 r->device[0] ? r->device : r->cpu_model, r->backend);
        snprintf(hrefs[i], sizeof hrefs[i], "/submissions/%lld", r->submission_id);
        bars[i] = (struct lb_bar){labels[i], r->submitter, r->throughput, hrefs[i],
                                  r->is_cpu ? "cpu" : "acc"};
    }
    char title[320];
    snprintf(title, sizeof title, "Throughput of %s/%s %s %s", g->model, g->variant, g->mode,
             g->precision);
    lb_svg_bars(b, title, "samples/s", bars, n_bars);

    active_key = key;
    active_desc = desc;
    qsort(shown, n, sizeof *shown, cmp_shown);
    lb_buf_puts(b, "<div class=\"table-wrap\"><table class=\"sortable ranked\"><thead><tr>"
                   "<th class=\"num\" data-key=\"rank\" data-first=\"asc\" aria-sort=\"none\">"
                   "#</th>");
    sort_header(b, f, SORT_THROUGHPUT, key, desc, "num", " <span class=\"small\">/s</span>");
    sort_header(b, f, SORT_STEP, key, desc, "num", "");
    sort_header(b, f, SORT_SPEEDUP, key, desc, "num", "");
    sort_header(b, f, SORT_ENERGY, key, desc, "num", " <span class=\"small\">/J</span>");
    lb_buf_puts(b, "<th>Machine</th><th>Backend</th>");
    sort_header(b, f, SORT_BATCH, key, desc, "num", "");
    sort_header(b, f, SORT_DATE, key, desc, "", "");
    lb_buf_puts(b, "<th>Compare</th></tr></thead><tbody>");
    for (size_t i = 0; i < n; i++) {
        const struct lb_run_row *r = shown[i].row;
        lb_buf_printf(b, "<tr class=\"%s\" data-submission=\"%lld\">",
                      shown[i].rank == 1 ? "top1" : "", r->submission_id);
        lb_buf_printf(b, "<td class=\"num rank\" data-v=\"%d\">%d</td>", shown[i].rank,
                      shown[i].rank);
        lb_buf_puts(b, "<td class=\"num\" data-v=\"");
        lb_fmt_key(b, r->throughput);
        lb_buf_puts(b, "\"><b>");
        lb_fmt_num(b, r->throughput, r->throughput >= 100 ? 0 : 1);
        lb_buf_puts(b, "</b></td><td class=\"num\" data-v=\"");
        lb_fmt_key(b, r->step_p50);
        lb_buf_puts(b, "\">");
        lb_fmt_ms(b, r->step_p50);
        lb_buf_puts(b, "</td><td class=\"num\" data-v=\"");
        lb_fmt_key(b, shown[i].speedup);
        lb_buf_puts(b, "\">");
        if (isnan(shown[i].speedup)) {
            lb_buf_puts(b, "<span class=\"muted\">\xE2\x80\x94</span>");
        } else {
            lb_fmt_num(b, shown[i].speedup, shown[i].speedup >= 100 ? 0 : 2);
            lb_buf_puts(b, "\xC3\x97");
        }
        lb_buf_puts(b, "</td><td class=\"num\" data-v=\"");
        lb_fmt_key(b, r->samples_per_joule);
        lb_buf_puts(b, "\">");
        if (r->energy_measured && !isnan(r->samples_per_joule))
            lb_fmt_num(b, r->samples_per_joule, r->samples_per_joule >= 100 ? 0 : 2);
        else
            lb_buf_puts(b, "<span class=\"muted small\">not measured</span>");
        lb_buf_puts(b, "</td>");
        machine_cell(b, r);
        lb_buf_printf(b, "<td><span class=\"pill%s\">", r->is_cpu ? " cpu" : "");
        lb_buf_html(b, r->backend);
        lb_buf_puts(b, "</span>");
        if (r->fusion)
            lb_buf_puts(b, " <span class=\"small muted\">fused</span>");
        if (r->threads > 0)
            lb_buf_printf(b, " <span class=\"small muted\">%lld thr</span>", r->threads);
        if (r->verified == 1)
            lb_buf_puts(b, " <span class=\"pill ok\" title=\"first step verified against the "
                           "reference backend\">verified</span>");
        lb_buf_printf(b, "</td><td class=\"num\" data-v=\"%lld\">%lld</td>", r->batch, r->batch);
        lb_buf_printf(b, "<td data-v=\"%lld\">", r->submission_id);
        lb_page_submission_link(b, r->submission_id);
        lb_buf_puts(b, " <span class=\"small muted\">");
        lb_buf_html(b, r->submitter);
        lb_buf_puts(b, " \xC2\xB7 ");
        lb_buf_add(b, r->received, strlen(r->received) >= 10 ? 10 : strlen(r->received));
        lb_buf_printf(b,
                      "</span></td><td><input type=\"checkbox\" name=\"id\" value=\"%lld\" "
                      "aria-label=\"compare submission %lld\"></td></tr>",
                      r->submission_id, r->submission_id);
    }
    lb_buf_puts(b, "</tbody></table></div>");
}

/* Best CPU throughput for row r, cached per (group, batch) since rows come grouped. */
struct cpu_cache {
    const struct lb_run_row *group;
    long long batch[16];
    double best[16];
    int n;
};

static double best_cpu(struct cpu_cache *c, struct lb_db *db, const struct lb_run_row *r)
{
    if (!c->group || !same_group(c->group, r)) {
        c->group = r;
        c->n = 0;
    }
    for (int i = 0; i < c->n; i++)
        if (c->batch[i] == r->batch)
            return c->best[i];
    double best = lb_store_best_cpu(db, r);
    if (c->n < 16) {
        c->batch[c->n] = r->batch;
        c->best[c->n] = best;
        c->n++;
    }
    return best;
}

static void recent_list(struct lb_buf *b, struct lb_db *db)
{
    struct lb_submission_info *items = NULL;
    size_t n = 0;
    long long total = 0;
    xpb_err err;
    if (lb_store_list(&items, &n, &total, db, NULL, RECENT, 0, &err) != XPB_OK)
        return;
    lb_buf_puts(b, "<section class=\"card\" id=\"recent\"><header><h2>Recent submissions</h2>"
                   "</header>");
    if (n == 0) {
        lb_buf_puts(b, "<p class=\"muted\">None yet.</p></section>");
        free(items);
        return;
    }
    lb_buf_puts(b, "<div class=\"table-wrap\"><table><thead><tr><th>Submission</th>"
                   "<th>Submitter</th><th>Machine</th><th>Scenario</th><th class=\"num\">Runs"
                   "</th><th>Received</th></tr></thead><tbody>");
    for (size_t i = 0; i < n; i++) {
        const struct lb_submission_info *s = &items[i];
        lb_buf_puts(b, "<tr><td>");
        lb_page_submission_link(b, s->id);
        lb_buf_puts(b, "</td><td>");
        lb_buf_html(b, s->submitter);
        lb_buf_puts(b, "</td><td class=\"machine\"><b>");
        lb_buf_html(b, s->accelerators[0] ? s->accelerators : s->cpu_model);
        lb_buf_puts(b, "</b><span class=\"muted\">");
        if (s->accelerators[0]) {
            lb_buf_puts(b, "host ");
            lb_buf_html(b, s->cpu_model);
            lb_buf_puts(b, " \xC2\xB7 ");
        }
        lb_buf_html(b, s->os);
        lb_buf_puts(b, "</span></td><td>");
        lb_buf_html(b, s->scenario);
        lb_buf_printf(b, "</td><td class=\"num\">%d</td><td>", s->n_runs);
        lb_buf_html(b, s->received);
        lb_buf_puts(b, "</td></tr>");
    }
    lb_buf_puts(b, "</tbody></table></div></section>");
    free(items);
}

void lb_page_board(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    struct lb_filter f;
    const char *bad = NULL;
    if (!lb_api_filter(&f, req, &bad)) {
        char msg[128];
        snprintf(msg, sizeof msg, "The value of the filter '%s' is not valid.", bad);
        lb_page_error(res, 400, msg);
        return;
    }
    enum sort_key key = SORT_THROUGHPUT;
    const char *sort = lb_query(req, "sort");
    for (size_t i = 0; sort && i < N_SORT_KEYS; i++)
        if (!strcmp(sort, sort_keys[i].name))
            key = (enum sort_key)i;
    const char *dir = lb_query(req, "dir");
    int desc = dir ? strcmp(dir, "asc") != 0 : strcmp(sort_keys[key].first_dir, "asc") != 0;

    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_run_row *rows = NULL;
    size_t n = 0;
    xpb_err err;
    if (lb_store_runs(&rows, &n, db, &f, MAX_ROWS, &err) != XPB_OK) {
        lb_pool_put(app->pool, db);
        lb_page_error(res, 500, err.msg);
        return;
    }
    struct shown *shown = calloc(n ? n : 1, sizeof *shown);
    if (!shown) {
        free(rows);
        lb_pool_put(app->pool, db);
        lb_page_error(res, 500, "out of memory");
        return;
    }
    struct cpu_cache cache = {0};
    long long total_subs = 0;
    size_t n_groups = 0;
    for (size_t i = 0; i < n; i++) {
        double best = best_cpu(&cache, db, &rows[i]);
        shown[i].row = &rows[i];
        shown[i].speedup = best > 0 ? rows[i].throughput / best : NAN;
        shown[i].rank = (i > 0 && same_group(&rows[i - 1], &rows[i])) ? shown[i - 1].rank + 1 : 1;
        n_groups += shown[i].rank == 1;
    }
    {
        struct lb_submission_info *none = NULL;
        size_t zero = 0;
        lb_store_list(&none, &zero, &total_subs, db, NULL, 0, 0, &err);
        free(none);
    }

    struct lb_buf *b = &res->body;
    lb_page_begin(b, "Rankings");
    lb_buf_puts(b, "<h1>Deep-learning training and inference, ranked</h1>"
                   "<p class=\"lead\">Every result is the same model with the same maths and the "
                   "same starting weights, run on a different machine or backend. Pick a filter, "
                   "sort any column, tick two rows to compare their machines.</p>");
    lb_buf_printf(b,
                  "<div class=\"stats\"><div class=\"stat\"><b>%lld</b><span>submissions"
                  "</span></div><div class=\"stat\"><b>%zu</b><span>results shown</span></div>"
                  "<div class=\"stat\"><b>%zu</b><span>rankings</span></div></div>",
                  total_subs, n, n_groups);
    filter_form(b, db, &f);
    lb_buf_puts(b, "<div class=\"toolbar\"><input type=\"search\" id=\"quick\" class=\"hidden\" "
                   "placeholder=\"Quick filter: device, backend, submitter\xE2\x80\xA6\" "
                   "aria-label=\"quick filter\"><span class=\"legend\"><i class=\"acc\"></i>"
                   "accelerator<i class=\"cpu\"></i>CPU</span></div>");
    lb_buf_puts(b, "<form id=\"compare-form\" method=\"get\" action=\"/compare\">"
                   "<div class=\"toolbar\"><button type=\"submit\">Compare two ticked "
                   "submissions</button><span class=\"muted small\" id=\"compare-note\"></span>"
                   "</div>");
    if (n == 0)
        lb_buf_puts(b, "<div class=\"card empty\">No results match. Upload some with "
                       "<code>xpubench upload results.json</code>.</div>");
    for (size_t start = 0; start < n;) {
        size_t end = start + 1;
        while (end < n && same_group(&rows[start], &rows[end]))
            end++;
        const struct lb_run_row *g = &rows[start];
        lb_buf_puts(b, "<section class=\"card group\" id=\"");
        struct lb_buf id = {0};
        lb_buf_printf(&id, "g-%s-%s-%s-%s", g->model, g->variant, g->mode, g->precision);
        lb_buf_html(b, id.data);
        lb_buf_free(&id);
        lb_buf_puts(b, "\"><header><h2>");
        lb_buf_html(b, g->model);
        if (g->variant[0]) {
            lb_buf_puts(b, " <span class=\"muted\">/</span> ");
            lb_buf_html(b, g->variant);
        }
        lb_buf_puts(b, "</h2><span class=\"pill\">");
        lb_buf_html(b, g->mode);
        lb_buf_puts(b, "</span><span class=\"pill\">");
        lb_buf_html(b, g->precision);
        lb_buf_printf(b, "</span><span class=\"muted small\">%zu result%s</span></header>",
                      end - start, end - start == 1 ? "" : "s");
        group_table(b, &f, shown + start, end - start, key, desc);
        lb_buf_puts(b, "</section>");
        start = end;
    }
    lb_buf_puts(b, "</form>");
    recent_list(b, db);
    lb_pool_put(app->pool, db);
    lb_page_end(b);
    free(shown);
    free(rows);
    lb_page_send(res, 200);
}
