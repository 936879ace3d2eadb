/* The time-to-accuracy board (see lb_pages.h): one table per model, variant, dataset and
 * target accuracy, each ranking its results by the time to reach the target (the Olympic mean
 * of the result's runs, lower first; those that did not reach it last), never mixed with the
 * throughput rankings. A page of tables at a time (page=); everything it leaves out, it says. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "pages/lb_page_cache.h"
#include "pages/lb_page_table.h"
#include "pages/lb_pages.h"
#include "render/escape.h"
#include "render/format_si.h"
#include "store/lb_store.h"
#include "store/lb_store_tta.h"

#define MAX_PAGE 100000

/* A time or an energy with about three significant digits: "812", "81.2", "8.12". */
static void amount(struct xpb_text *b, double v)
{
    xpb_format_grouped(b, v, fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2);
}

/* The table's id on the page: "t-conv6-default-fashion-mnist-0.9000". */
static void group_id(struct xpb_text *id, const struct lb_tta_group *g)
{
    xpb_text_printf(id, "t-%s-%s-%s-%.4f", g->model, g->variant, g->dataset, g->target);
}

static void section_head(struct xpb_text *b, const struct lb_tta_group *g, long long total)
{
    struct xpb_text id = {0};
    group_id(&id, g);
    lb_page_section_open(b, "card group tta", id.data, g->model, g->variant);
    xpb_text_free(&id);
    xpb_text_puts(b, "<span class=\"pill\">");
    xpb_html(b, g->dataset);
    xpb_text_printf(b, "</span><span class=\"pill\">target accuracy %.4f</span>", g->target);
    lb_page_section_count(b, total, g->n_submitters);
}

static void table_head(struct xpb_text *b)
{
    xpb_text_puts(b, "<div class=\"table-wrap\"><table class=\"sortable ranked\"><thead><tr>"
                     "<th class=\"num\" data-key=\"rank\" data-first=\"asc\">#</th>"
                     "<th class=\"num\" data-key=\"time\" data-first=\"asc\" title=\"Olympic mean "
                     "of the runs' times to the target (the fastest and the slowest dropped), "
                     "with the spread of the runs that reached it\">Time to target "
                     "<span class=\"small\">s</span></th>"
                     "<th class=\"num\" title=\"runs that reached the target of the runs made"
                     "\">Reached</th>"
                     "<th class=\"num\" data-key=\"energy\" data-first=\"asc\">Energy to target "
                     "<span class=\"small\">J</span></th>"
                     "<th class=\"num\" data-key=\"epochs\" data-first=\"asc\" title=\"median of "
                     "the runs that reached the target\">Epochs</th>"
                     "<th>Machine</th><th>Backend</th><th>Precision</th>"
                     "<th class=\"num\" data-key=\"batch\" data-first=\"asc\">Batch</th>"
                     "<th>Submitted</th></tr></thead><tbody>");
}

/* The time to target with its spread, or "not reached". */
static void time_cell(struct xpb_text *b, const struct lb_tta_row *t)
{
    xpb_text_puts(b, "<td class=\"num\" data-v=\"");
    xpb_format_key(b, t->seconds);
    xpb_text_puts(b, "\">");
    if (isnan(t->seconds)) {
        xpb_text_puts(b, "<span class=\"muted\" title=\"a run that was scored did not reach the "
                         "target within its epochs\">not reached</span>");
    } else {
        xpb_text_puts(b, "<b>");
        amount(b, t->seconds);
        xpb_text_puts(b, "</b>");
    }
    if (!isnan(t->seconds_min) && !isnan(t->seconds_max)) {
        xpb_text_puts(b, "<span class=\"ci small muted\">");
        amount(b, t->seconds_min);
        xpb_text_puts(b, "\xE2\x80\x93");
        amount(b, t->seconds_max);
        xpb_text_puts(b, "</span>");
    }
    xpb_text_puts(b, "</td>");
}

/* Energy to target, where it was measured. */
static void energy_cell(struct xpb_text *b, const struct lb_tta_row *t)
{
    xpb_text_puts(b, "<td class=\"num\" data-v=\"");
    xpb_format_key(b, t->joules);
    xpb_text_puts(b, "\">");
    if (!isnan(t->joules))
        amount(b, t->joules);
    else if (!isnan(t->seconds)) /* reached, yet no energy: a scored run had no meter */
        xpb_text_puts(b, "<span class=\"muted small\">not measured</span>");
    else
        xpb_text_puts(b, "<span class=\"muted\">\xE2\x80\x94</span>");
    xpb_text_puts(b, "</td>");
}

/* The median epochs, flagged when runs converged outside the reference point. */
static void epochs_cell(struct xpb_text *b, const struct lb_tta_row *t)
{
    xpb_text_puts(b, "<td class=\"num\" data-v=\"");
    xpb_format_key(b, t->epochs);
    xpb_text_puts(b, "\">");
    xpb_format_grouped(b, t->epochs, 2);
    if (t->outside > 0) {
        xpb_text_printf(b,
                        "<span class=\"disturbed\" title=\"%lld run%s converged after fewer than "
                        "half or more than twice the reference's ",
                        t->outside, t->outside == 1 ? "" : "s");
        xpb_format_grouped(b, t->reference_epochs, 2);
        xpb_text_puts(b, " epochs: its training is not the reference's, so its time is not "
                         "comparable\">!</span>");
    }
    xpb_text_puts(b, "</td>");
}

static void row_html(struct xpb_text *b, const struct lb_run_row *r, size_t rank)
{
    const struct lb_tta_row *t = &r->tta;
    int reached = !isnan(t->seconds);
    xpb_text_printf(b, "<tr class=\"%s\" data-submission=\"%lld\">",
                    reached && rank == 1 ? "top1" : "", r->submission_id);
    if (reached)
        xpb_text_printf(b, "<td class=\"num rank\" data-v=\"%zu\">%zu</td>", rank, rank);
    else
        xpb_text_puts(b, "<td class=\"num rank\" data-v=\"\">\xE2\x80\x94</td>");
    time_cell(b, t);
    xpb_text_printf(b, "<td class=\"num\" data-v=\"%lld\">%lld/%lld</td>", t->converged,
                    t->converged, t->runs);
    energy_cell(b, t);
    epochs_cell(b, t);
    lb_page_machine_cell(b, r);
    lb_page_backend_cell(b, r);
    xpb_text_puts(b, "<td>");
    xpb_html(b, r->precision);
    xpb_text_printf(b, "</td><td class=\"num\" data-v=\"%lld\">%lld</td>", r->batch, r->batch);
    lb_page_submitted_cell(b, r);
    xpb_text_puts(b, "</tr>");
}

/* One table; when its rows cannot be read it says so (not why) and returns the error. */
static xpb_status table(struct xpb_text *b, struct lb_db *db, const struct lb_tta_group *g,
                        xpb_err *err)
{
    struct lb_run_row *rows = NULL;
    size_t n = 0;
    long long total = 0;
    xpb_status st =
        lb_store_tta_runs(&rows, &n, &total, db, g, LB_TABLE_PER_SUBMITTER, LB_TABLE_ROWS, err);
    section_head(b, g, st == XPB_OK ? total : g->n_runs);
    if (st != XPB_OK) {
        xpb_text_puts(b, "<p class=\"muted\">This table cannot be read now.</p></section>");
        return st;
    }
    table_head(b);
    for (size_t i = 0; i < n; i++)
        row_html(b, &rows[i], i + 1);
    xpb_text_puts(b, "</tbody></table></div>");
    long long hidden = g->n_runs - total; /* over the per-submitter limit */
    if ((long long)n < total || hidden > 0) {
        xpb_text_printf(b, "<p class=\"cut small\">Showing %zu of %lld ranked result%s.", n, total,
                        total == 1 ? "" : "s");
        if (hidden > 0)
            xpb_text_printf(b,
                            " %lld more %s hidden: a table ranks at most %d results per "
                            "submitter (their fastest).",
                            hidden, hidden == 1 ? "is" : "are", LB_TABLE_PER_SUBMITTER);
        xpb_text_puts(b, " The API lists every result.</p>");
    }
    xpb_text_puts(b, "</section>");
    free(rows);
    return XPB_OK;
}

static void intro(struct xpb_text *b, long long n_tables)
{
    xpb_text_printf(
        b,
        "<h1>Time to accuracy</h1><p class=\"lead\">How long training takes to reach a target "
        "test accuracy on real data, by MLPerf's rules: each result trains the model several "
        "times from its seeded initial weights, from the first batch through every evaluation, "
        "until the test accuracy reaches the target; its time is the <b>Olympic mean</b> of "
        "those runs (the fastest and the slowest dropped), lower is better, and a run that "
        "did not reach the target counts as infinitely slow. These results are ranked here "
        "only, never with the throughput <a href=\"/\">rankings</a>: a step rate is not what "
        "they measure. <b>!</b> marks a result whose runs converged far from the reference "
        "convergence point (fewer than half or more than twice its epochs): its training is "
        "not the reference's.</p><div class=\"stats\"><div class=\"stat\"><b>%lld</b><span>"
        "tables</span></div></div>",
        n_tables);
}

/* "Tables 11-20 of 37" with links to the pages before and after. */
static void pager(struct xpb_text *b, long long page, size_t shown, long long total)
{
    long long first = (page - 1) * LB_TABLES_PER_PAGE;
    if (total <= LB_TABLES_PER_PAGE && page == 1)
        return;
    xpb_text_printf(b,
                    "<nav class=\"pager card\">Tables %lld\xE2\x80\x93%lld of %lld, those with "
                    "the most submitters first.",
                    shown ? first + 1 : first, first + (long long)shown, total);
    if (page > 1)
        xpb_text_printf(b, " <a href=\"/tta?page=%lld\">\xE2\x86\x90 previous tables</a>",
                        page - 1);
    if (page * LB_TABLES_PER_PAGE < total)
        xpb_text_printf(b, " <a href=\"/tta?page=%lld\">next tables \xE2\x86\x92</a>", page + 1);
    xpb_text_puts(b, "</nav>");
}

/* Page `page` of the board, into res. */
static void render(struct lb_app *app, long long page, struct lb_response *res)
{
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_tta_group *groups = NULL;
    size_t n = 0;
    long long total = 0;
    xpb_err err;
    if (lb_store_tta_groups(&groups, &n, &total, db, LB_TABLES_PER_PAGE,
                            (size_t)(page - 1) * LB_TABLES_PER_PAGE, &err) != XPB_OK) {
        lb_pool_put(app->pool, db);
        lb_page_internal(res, err.msg);
        return;
    }
    struct xpb_text *b = &res->body;
    lb_page_begin(b, "Time to accuracy");
    intro(b, total);
    if (n == 0)
        xpb_text_puts(b, "<div class=\"card empty\">No time-to-accuracy results here yet. Run a "
                         "scenario with <code>mode: tta</code> and upload it with <code>xpubench "
                         "upload results.json</code>.</div>");
    for (size_t i = 0; i < n; i++)
        if (table(b, db, &groups[i], &err) != XPB_OK && !res->internal[0])
            lb_note_internal(res, err.msg); /* the page says "cannot be read now" */
    lb_pool_put(app->pool, db);
    pager(b, page, n, total);
    lb_page_end(b);
    free(groups);
    lb_page_send(res, 200);
}

void lb_page_tta(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    long long page = lb_query_count(req, "page", 1, MAX_PAGE);
    if (page < 1) {
        char msg[96];
        snprintf(msg, sizeof msg, "page must be 1 to %d.", MAX_PAGE);
        lb_page_error(res, 400, msg);
        return;
    }
    char key[48];
    snprintf(key, sizeof key, "tta:page=%lld", page); /* no rankings key starts so */
    unsigned long generation = atomic_load(&app->generation);
    if (lb_page_cache_get(app->pages, key, generation, xpb_now(), res))
        return;
    if (req->may_defer) {
        /* the board reads the time-to-accuracy runs: built off the connection threads, as the
         * rankings filtered by backend are; this answer stands when too many pages wait */
        res->retry_after = 2;
        lb_page_error(res, 503, "The time-to-accuracy board is busy: try again in a moment.");
        res->defer = 1;
        return;
    }
    render(app, page, res);
    if (res->status == 200)
        lb_page_cache_put(app->pages, key, generation, xpb_now(), res);
}
