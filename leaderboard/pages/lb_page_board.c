/* The leaderboard page (see lb_pages.h): one ranked table per model / variant / mode /
 * precision / world size (lb_page_table.c), in the board's order (the most submitters first,
 * lb_store_groups), a page of tables at a time. Query parameters: the filters (lb_filter.h), sort
 * (throughput, step, speedup, energy, batch, date), dir (asc, desc), page (of tables) and offset
 * (rows skipped in each table). Everything it leaves out, it says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "pages/lb_page_cache.h"
#include "pages/lb_page_table.h"
#include "pages/lb_pages.h"
#include "render/escape.h"
#include "service/lb_filter.h"
#include "store/lb_store.h"

#define MENU_MAX 200
#define RECENT 12
#define MAX_PAGE 100000

static void select_menu(struct xpb_text *b, struct lb_db *db, const char *name, const char *label,
                        const char *current)
{
    char **values = NULL;
    size_t n = 0;
    xpb_err err;
    lb_store_distinct(&values, &n, db, name, MENU_MAX + 1, &err);
    xpb_text_printf(b, "<label>%s<select name=\"%s\"><option value=\"\">any</option>", label, name);
    for (size_t i = 0; i < n && i < MENU_MAX; i++) {
        xpb_text_puts(b, "<option value=\"");
        xpb_html(b, values[i]);
        xpb_text_puts(b, "\"");
        if (current && !strcmp(current, values[i]))
            xpb_text_puts(b, " selected");
        xpb_text_puts(b, ">");
        xpb_html(b, values[i][0] ? values[i] : "(none)");
        xpb_text_puts(b, "</option>");
    }
    if (n > MENU_MAX)
        xpb_text_printf(b, "<option value=\"\" disabled>(first %d shown)</option>", MENU_MAX);
    xpb_text_puts(b, "</select></label>");
    lb_store_free_strings(values, n);
}

static void number_input(struct xpb_text *b, const char *name, const char *label, long long value)
{
    xpb_text_printf(b, "<label>%s<input type=\"number\" name=\"%s\" min=\"1\"", label, name);
    if (value > 0)
        xpb_text_printf(b, " value=\"%lld\"", value);
    xpb_text_puts(b, "></label>");
}

static void filter_form(struct xpb_text *b, struct lb_db *db, const struct lb_filter *f)
{
    xpb_text_puts(b, "<div class=\"card\"><form class=\"filters\" method=\"get\" action=\"/\">");
    select_menu(b, db, "model", "Model", f->model);
    select_menu(b, db, "variant", "Variant", f->variant);
    select_menu(b, db, "mode", "Mode", f->mode);
    select_menu(b, db, "precision", "Precision", f->precision);
    select_menu(b, db, "backend", "Backend", f->backend);
    select_menu(b, db, "submitter", "Submitter", f->submitter);
    number_input(b, "batch", "Batch", f->batch);
    number_input(b, "world_size", "World size", f->world_size);
    xpb_text_puts(b, "<button type=\"submit\">Filter</button>"
                     "<a class=\"button plain\" href=\"/\">Reset</a></form></div>");
}

static void recent_list(struct xpb_text *b, struct lb_db *db)
{
    struct lb_submission_info *items = NULL;
    size_t n = 0;
    long long total = 0;
    xpb_err err;
    if (lb_store_list(&items, &n, &total, db, NULL, RECENT, 0, &err) != XPB_OK)
        return;
    xpb_text_puts(b, "<section class=\"card\" id=\"recent\"><header><h2>Recent submissions</h2>"
                     "</header>");
    if (n == 0)
        xpb_text_puts(b, "<p class=\"muted\">None yet.</p>");
    else
        xpb_text_puts(b, "<div class=\"table-wrap\"><table><thead><tr><th>Submission</th>"
                         "<th>Submitter</th><th>Machine</th><th>Scenario</th><th class=\"num\">"
                         "Runs</th><th>Received</th></tr></thead><tbody>");
    for (size_t i = 0; i < n; i++) {
        const struct lb_submission_info *s = &items[i];
        xpb_text_puts(b, "<tr><td>");
        lb_page_submission_link(b, s->id);
        xpb_text_puts(b, "</td><td>");
        xpb_html(b, s->submitter);
        xpb_text_puts(b, "</td><td class=\"machine\"");
        lb_page_machine_title(b, s->accelerators, s->cpu_model, s->os);
        xpb_text_puts(b, "><b>");
        xpb_html(b, s->accelerators[0] ? s->accelerators : s->cpu_model);
        xpb_text_puts(b, "</b><span class=\"muted\">");
        if (s->accelerators[0]) {
            xpb_text_puts(b, "host ");
            xpb_html(b, s->cpu_model);
            xpb_text_puts(b, " \xC2\xB7 ");
        }
        xpb_html(b, s->os);
        xpb_text_puts(b, "</span></td><td>");
        xpb_html(b, s->scenario);
        xpb_text_printf(b, "</td><td class=\"num\">%d</td><td>", s->n_runs);
        xpb_html(b, s->received);
        xpb_text_puts(b, "</td></tr>");
    }
    if (n > 0)
        xpb_text_puts(b, "</tbody></table></div>");
    xpb_text_puts(b, "</section>");
    free(items);
}

/* The view from the query string; 0 with an error page in res when a value is not valid. */
static int read_view(struct lb_board_view *v, const struct lb_request *req, struct lb_response *res)
{
    memset(v, 0, sizeof *v);
    const char *bad = NULL;
    char msg[160];
    if (!lb_filter_from_query(&v->filter, req, &bad)) {
        snprintf(msg, sizeof msg, "The value of the filter '%s' is not valid.", bad);
        lb_page_error(res, 400, msg);
        return 0;
    }
    v->key = lb_sort_key_named(lb_query(req, "sort"));
    const char *dir = lb_query(req, "dir");
    v->desc = dir ? strcmp(dir, "asc") != 0 : lb_sort_key_desc_first(v->key);
    v->page = lb_query_count(req, "page", 1, MAX_PAGE);
    v->offset = lb_query_count(req, "offset", 0, LB_TABLE_MAX_OFFSET);
    if (v->page < 1 || v->offset < 0) {
        snprintf(msg, sizeof msg,
                 "page must be 1 to %d and offset 0 to %d (tables page %d rows deep; the API "
                 "lists every result).",
                 MAX_PAGE, LB_TABLE_MAX_OFFSET, LB_TABLE_MAX_OFFSET + LB_TABLE_ROWS);
        lb_page_error(res, 400, msg);
        return 0;
    }
    return 1;
}

static void page_intro(struct xpb_text *b, long long n_submissions, long long n_tables)
{
    xpb_text_puts(b, "<h1>Deep-learning training and inference, ranked</h1>"
                     "<p class=\"lead\">Every result is the same model with the same maths and the "
                     "same starting weights, run on a different machine or backend. Results whose "
                     "95% intervals overlap share a rank (<a href=\"#rules\">how</a>). Pick a "
                     "filter, sort any column, tick two rows to compare their machines.</p>");
    xpb_text_printf(b,
                    "<div class=\"stats\"><div class=\"stat\"><b>%lld</b><span>submissions"
                    "</span></div><div class=\"stat\"><b>%lld</b><span>rankings</span></div></div>",
                    n_submissions, n_tables);
}

/* "Tables 11-20 of 37" with links to the pages before and after. */
static void table_pager(struct xpb_text *b, const struct lb_board_view *v, size_t shown,
                        long long total)
{
    long long first = (v->page - 1) * LB_TABLES_PER_PAGE;
    if (total <= LB_TABLES_PER_PAGE && v->page == 1)
        return;
    xpb_text_printf(b,
                    "<nav class=\"pager card\">Tables %lld\xE2\x80\x93%lld of %lld, those with "
                    "the most submitters first.",
                    shown ? first + 1 : first, first + (long long)shown, total);
    for (int step = -1; step <= 1; step += 2) {
        long long page = v->page + step;
        if (page < 1 || (page - 1) * LB_TABLES_PER_PAGE >= total)
            continue;
        struct xpb_text q = {0};
        lb_board_query(&q, &v->filter, v, page, v->offset);
        xpb_text_puts(b, " <a href=\"/?");
        xpb_html(b, q.data);
        xpb_text_puts(b, step < 0 ? "\">\xE2\x86\x90 previous tables</a>"
                                  : "\">next tables \xE2\x86\x92</a>");
        xpb_text_free(&q);
    }
    xpb_text_puts(b, "</nav>");
}

/* The tables; a table that cannot be read says so, and its error goes to `failed`'s note. */
static void tables(struct xpb_text *b, struct lb_db *db, const struct lb_board_view *v,
                   const struct lb_group *groups, size_t n, long long total,
                   struct lb_response *failed)
{
    xpb_text_puts(b, "<div class=\"toolbar\"><input type=\"search\" id=\"quick\" class=\"hidden\" "
                     "placeholder=\"Quick filter: device, backend, submitter\xE2\x80\xA6\" "
                     "aria-label=\"quick filter\"><span class=\"legend\"><i class=\"acc\"></i>"
                     "GPU or accelerator<i class=\"cpu\"></i>CPU<i class=\"unk\"></i>device kind "
                     "unknown</span></div>");
    xpb_text_puts(b, "<form id=\"compare-form\" method=\"get\" action=\"/compare\">"
                     "<div class=\"toolbar\"><button type=\"submit\">Compare two ticked "
                     "submissions</button><span class=\"muted small\" id=\"compare-note\"></span>"
                     "</div>");
    if (n == 0)
        xpb_text_puts(b, "<div class=\"card empty\">No results match. Upload some with "
                         "<code>xpubench upload results.json</code>.</div>");
    xpb_err err;
    for (size_t i = 0; i < n; i++)
        if (lb_page_table(b, db, &groups[i], v, &err) != XPB_OK && !failed->internal[0])
            lb_note_internal(failed, err.msg); /* the page says "cannot be read now" */
    xpb_text_puts(b, "</form>");
    table_pager(b, v, n, total);
}

/* The page for view v, into res. */
static void render(struct lb_app *app, const struct lb_board_view *view, struct lb_response *res)
{
    struct lb_board_view v = *view;
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_group *groups = NULL;
    size_t n = 0;
    long long n_tables = 0, n_submissions = 0;
    xpb_err err;
    struct lb_submission_info *none = NULL;
    size_t zero = 0;
    if (lb_store_groups(&groups, &n, &n_tables, db, &v.filter, LB_TABLES_PER_PAGE,
                        (size_t)(v.page - 1) * LB_TABLES_PER_PAGE, &err) != XPB_OK ||
        lb_store_list(&none, &zero, &n_submissions, db, NULL, 0, 0, &err) != XPB_OK) {
        lb_pool_put(app->pool, db);
        free(groups);
        lb_page_internal(res, err.msg);
        return;
    }
    struct xpb_text *b = &res->body;
    lb_page_begin(b, "Rankings");
    page_intro(b, n_submissions, n_tables);
    filter_form(b, db, &v.filter);
    tables(b, db, &v, groups, n, n_tables, res);
    recent_list(b, db);
    lb_pool_put(app->pool, db);
    lb_page_rules(b, app);
    lb_page_end(b);
    free(groups);
    lb_page_send(res, 200);
}

void lb_page_board(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    struct lb_board_view v;
    if (!read_view(&v, req, res))
        return;
    /* the key is the view as parsed: other query parameters do not make other entries */
    struct xpb_text key = {0};
    lb_board_query(&key, &v.filter, &v, v.page, v.offset);
    unsigned long generation = atomic_load(&app->generation);
    if (key.data && lb_page_cache_get(app->pages, key.data, generation, xpb_now(), res)) {
        xpb_text_free(&key);
        return;
    }
    if (req->may_defer && lb_filter_reads_runs(&v.filter)) {
        /* a page that reads runs is built off the connection threads, by one of the server's
         * LB_RENDERS render threads, so that it never stalls the other connections of its
         * thread; this answer stands when LB_RENDER_QUEUE pages wait for them already */
        xpb_text_free(&key);
        res->retry_after = 2;
        lb_page_error(res, 503, "The rankings are busy: try again in a moment.");
        res->defer = 1;
        return;
    }
    render(app, &v, res);
    if (key.data && res->status == 200)
        lb_page_cache_put(app->pages, key.data, generation, xpb_now(), res);
    xpb_text_free(&key);
}
