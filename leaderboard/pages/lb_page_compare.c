/* Two submissions side by side: their environments, with differences marked, and their
 * results matched by workload (see lb_pages.h). Query: a=ID&b=ID, or id=ID&id=ID as the
 * leaderboard's compare form sends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages/lb_pages.h"
#include "pages/lb_svg_pairs.h"
#include "render/escape.h"
#include "render/format_si.h"
#include "results/view.h"
#include "store/lb_doc.h"
#include "store/lb_store.h"

#define MAX_PAIRS 64
#define RUNS_READ 1024 /* runs of each side matched into workloads */
#define LIBS_SHOWN 100
#define TEXT_SHOWN 400 /* bytes of an environment text shown (the API has it whole) */

struct side {
    long long id;
    struct lb_submission_info info;
    json_t *doc;
    struct xpb_results_doc view; /* of doc */
    struct lb_run_row *rows;
    size_t n_rows;
};

/* One workload: the best finished run of each side with this model/variant/mode/precision/
 * batch/world size (NULL when that side has none). */
struct match {
    const struct lb_run_row *a, *b;
};

static long long parse_id(const char *s)
{
    if (!s)
        return 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    return (*s && !*end && v > 0) ? v : 0;
}

/* A row of the environment table; marked when the two texts differ. */
static void env_row(struct xpb_text *b, const char *label, const char *x, const char *y)
{
    xpb_text_printf(b, "<tr class=\"%s\"><th>", strcmp(x, y) ? "diff" : "");
    xpb_html_cut(b, label, TEXT_SHOWN);
    xpb_text_puts(b, "</th><td>");
    xpb_html_cut(b, *x ? x : "\xE2\x80\x94", TEXT_SHOWN);
    xpb_text_puts(b, "</td><td>");
    xpb_html_cut(b, *y ? y : "\xE2\x80\x94", TEXT_SHOWN);
    xpb_text_puts(b, "</td></tr>");
}

/* An integer of the document as text into out ("" when it does not have it). */
static void int_text(char *out, size_t cap, int64_t v)
{
    double x = lb_doc_num(v);
    if (!isnan(x))
        snprintf(out, cap, "%.0f", x);
    else
        out[0] = '\0';
}

/* "name second" of one entry of a list, after ", " when it is not the first. */
static void join_one(struct xpb_text *out, size_t i, const char *name, const char *second)
{
    if (i)
        xpb_text_puts(out, ", ");
    xpb_text_puts(out, lb_doc_str(name));
    if (second && *second) {
        xpb_text_puts(out, " ");
        xpb_text_puts(out, second);
    }
}

/* The accelerators with their drivers, joined with ", ". */
static void join_accelerators(struct xpb_text *out, const struct xpb_results_environment *e)
{
    for (size_t i = 0; i < e->n_accelerators && out->len <= TEXT_SHOWN; i++)
        join_one(out, i, e->accelerators[i].name, e->accelerators[i].driver);
}

/* The plugins with their versions, joined with ", ". */
static void join_plugins(struct xpb_text *out, const struct xpb_results_environment *e)
{
    for (size_t i = 0; i < e->n_plugins && out->len <= TEXT_SHOWN; i++)
        join_one(out, i, e->plugins[i].name, e->plugins[i].version);
}

/* Whether environment e lists library `key` (whatever its value). */
static int has_library(const struct xpb_results_environment *e, const char *key)
{
    for (size_t i = 0; i < e->n_libraries; i++)
        if (!strcmp(e->libraries[i].key, key))
            return 1;
    return 0;
}

/* Two texts of a row, built by `join` on each side, then freed. */
static void joined_row(struct xpb_text *b, const char *label, const struct side *a,
                       const struct side *c,
                       void (*join)(struct xpb_text *, const struct xpb_results_environment *))
{
    struct xpb_text ma = {0}, mb = {0};
    join(&ma, &a->view.environment);
    join(&mb, &c->view.environment);
    env_row(b, label, ma.data ? ma.data : "", mb.data ? mb.data : "");
    xpb_text_free(&ma);
    xpb_text_free(&mb);
}

static void env_table(struct xpb_text *b, const struct side *a, const struct side *c)
{
    const struct xpb_results_environment *ea = &a->view.environment, *eb = &c->view.environment;
    char x[64], y[64];
    xpb_text_printf(b,
                    "<section class=\"card\"><header><h2>Environment</h2><span class=\"muted "
                    "small\">differences are highlighted</span></header><div class=\"table-wrap"
                    "\"><table><thead><tr><th></th><th>#%lld</th><th>#%lld</th></tr></thead>"
                    "<tbody>",
                    a->id, c->id);
    env_row(b, "CPU", lb_doc_str(ea->cpu.model), lb_doc_str(eb->cpu.model));
    int_text(x, sizeof x, ea->cpu.cores);
    int_text(y, sizeof y, eb->cpu.cores);
    env_row(b, "Cores", x, y);
    int_text(x, sizeof x, ea->cpu.logical_cpus);
    int_text(y, sizeof y, eb->cpu.logical_cpus);
    env_row(b, "Logical CPUs", x, y);
    struct xpb_text ma = {0}, mb = {0};
    xpb_format_bytes(&ma, lb_doc_num(ea->memory_bytes));
    xpb_format_bytes(&mb, lb_doc_num(eb->memory_bytes));
    env_row(b, "Memory", ma.data ? ma.data : "", mb.data ? mb.data : "");
    xpb_text_free(&ma);
    xpb_text_free(&mb);
    joined_row(b, "Accelerators", a, c, join_accelerators);
    env_row(b, "OS", lb_doc_str(ea->os), lb_doc_str(eb->os));
    env_row(b, "Kernel", lb_doc_str(ea->kernel), lb_doc_str(eb->kernel));
    env_row(b, "Compiler", lb_doc_str(ea->compiler), lb_doc_str(eb->compiler));
    env_row(b, "xpubench", lb_doc_str(a->view.tool_version), lb_doc_str(c->view.tool_version));
    env_row(b, "Scenario", a->info.scenario, c->info.scenario);
    /* libraries: the union of both sides' keys */
    for (size_t i = 0; i < ea->n_libraries && i < LIBS_SHOWN; i++) {
        const struct xpb_results_pair *l = &ea->libraries[i];
        env_row(b, l->key, lb_doc_str(l->value),
                lb_doc_str(xpb_results_pair_get(eb->libraries, eb->n_libraries, l->key)));
    }
    size_t n_rows = 0;
    for (size_t i = 0; i < eb->n_libraries; i++) {
        const struct xpb_results_pair *l = &eb->libraries[i];
        if (!has_library(ea, l->key) && n_rows++ < LIBS_SHOWN)
            env_row(b, l->key, "", lb_doc_str(l->value));
    }
    joined_row(b, "Plugins", a, c, join_plugins);
    xpb_text_puts(b, "</tbody></table></div></section>");
}

static int same_workload(const struct lb_run_row *x, const struct lb_run_row *y)
{
    return !strcmp(x->model, y->model) && !strcmp(x->variant, y->variant) &&
           !strcmp(x->mode, y->mode) && !strcmp(x->precision, y->precision) &&
           x->batch == y->batch && x->world_size == y->world_size;
}

/* Adds side `which` (0: a, 1: b) of `rows` to the matches, keeping each side's fastest run. */
static size_t add_matches(struct match *m, size_t n, const struct lb_run_row *rows, size_t count,
                          int which)
{
    for (size_t i = 0; i < count; i++) {
        const struct lb_run_row *r = &rows[i];
        if (strcmp(r->status, "ok") != 0 || isnan(r->throughput))
            continue;
        size_t k = 0;
        while (k < n && !same_workload(m[k].a ? m[k].a : m[k].b, r))
            k++;
        if (k == n) {
            if (n == MAX_PAIRS)
                continue;
            m[n].a = m[n].b = NULL;
            n++;
        }
        const struct lb_run_row **slot = which ? &m[k].b : &m[k].a;
        if (!*slot || r->throughput > (*slot)->throughput)
            *slot = r;
    }
    return n;
}

static void workload_label(char *out, size_t cap, const struct lb_run_row *r)
{
    snprintf(out, cap, "%s%s%s %s %s b%lld", r->model, r->variant[0] ? "/" : "", r->variant,
             r->mode, r->precision, r->batch);
    if (r->world_size > 1) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, " \xC3\x97%lld ranks", r->world_size);
    }
}

static void result_cell(struct xpb_text *b, const struct lb_run_row *r)
{
    xpb_text_puts(b, "<td class=\"num\">");
    if (!r) {
        xpb_text_puts(b, "<span class=\"muted\">\xE2\x80\x94</span></td>");
        return;
    }
    xpb_text_puts(b, "<b>");
    xpb_format_grouped(b, r->throughput, r->throughput >= 100 ? 0 : 1);
    xpb_text_puts(b, "</b><br><span class=\"muted small\">");
    xpb_html(b, r->backend);
    xpb_text_puts(b, " \xC2\xB7 ");
    xpb_format_ms(b, r->step_p50);
    xpb_text_puts(b, "</span></td>");
}

static void results_card(struct xpb_text *b, const struct side *a, const struct side *c)
{
    struct match m[MAX_PAIRS];
    size_t n = add_matches(m, 0, a->rows, a->n_rows, 0);
    n = add_matches(m, n, c->rows, c->n_rows, 1);
    xpb_text_puts(b, "<section class=\"card\"><header><h2>Results</h2><span class=\"muted small\">"
                     "fastest run per workload on each side</span></header>");
    if (n == 0) {
        xpb_text_puts(b, "<p class=\"muted\">Neither submission has finished runs.</p></section>");
        return;
    }
    struct lb_pair pairs[MAX_PAIRS];
    char labels[MAX_PAIRS][LB_NAME_MAX * 2 + 96];
    for (size_t i = 0; i < n; i++) {
        workload_label(labels[i], sizeof labels[i], m[i].a ? m[i].a : m[i].b);
        pairs[i] = (struct lb_pair){labels[i], m[i].a ? m[i].a->throughput : NAN,
                                    m[i].b ? m[i].b->throughput : NAN};
    }
    char name_a[64], name_b[64];
    snprintf(name_a, sizeof name_a, "#%lld", a->id);
    snprintf(name_b, sizeof name_b, "#%lld", c->id);
    lb_svg_pairs(b, "Throughput, side by side", "samples/s", name_a, name_b, pairs, n);
    xpb_text_printf(b,
                    "<div class=\"table-wrap\"><table class=\"sortable\"><thead><tr>"
                    "<th data-key=\"workload\" data-type=\"text\" data-first=\"asc\">Workload</th>"
                    "<th class=\"num\">#%lld samples/s</th><th class=\"num\">#%lld samples/s</th>"
                    "<th class=\"num\" data-key=\"ratio\" data-first=\"desc\">#%lld vs #%lld</th>"
                    "</tr></thead><tbody>",
                    a->id, c->id, c->id, a->id);
    for (size_t i = 0; i < n; i++) {
        xpb_text_puts(b, "<tr><td data-v=\"");
        xpb_html(b, labels[i]);
        xpb_text_puts(b, "\">");
        xpb_html(b, labels[i]);
        xpb_text_puts(b, "</td>");
        result_cell(b, m[i].a);
        result_cell(b, m[i].b);
        double ratio = (m[i].a && m[i].b && m[i].a->throughput > 0)
                           ? m[i].b->throughput / m[i].a->throughput
                           : NAN;
        xpb_text_puts(b, "<td class=\"num\" data-v=\"");
        xpb_format_key(b, ratio);
        xpb_text_printf(b, "\"><span class=\"ratio %s\">",
                        isnan(ratio) ? ""
                        : ratio >= 1 ? "up"
                                     : "down");
        if (isnan(ratio)) {
            xpb_text_puts(b, "\xE2\x80\x94");
        } else {
            /* "2.50x faster" or "246x slower": never a ratio rounded to 0.00 */
            double r = ratio >= 1 ? ratio : 1 / ratio;
            xpb_format_grouped(b, r, r >= 100 ? 0 : r >= 10 ? 1 : 2);
            xpb_text_puts(b, ratio >= 1 ? "\xC3\x97 faster" : "\xC3\x97 slower");
        }
        xpb_text_puts(b, "</span></td></tr>");
    }
    xpb_text_puts(b, "</tbody></table></div></section>");
}

static void side_card(struct xpb_text *b, const struct side *s)
{
    xpb_text_puts(b, "<section class=\"card\"><header><h2>");
    lb_page_submission_link(b, s->id);
    xpb_text_puts(b, "</h2><span class=\"muted small\">by ");
    xpb_html(b, s->info.submitter);
    xpb_text_puts(b, " \xC2\xB7 ");
    xpb_html(b, s->info.received);
    xpb_text_puts(b, "</span></header><div class=\"machine\"");
    lb_page_machine_title(b, s->info.accelerators, s->info.cpu_model, s->info.os);
    xpb_text_puts(b, "><b>");
    xpb_html(b, s->info.accelerators[0] ? s->info.accelerators : s->info.cpu_model);
    xpb_text_puts(b, "</b><span class=\"muted\">");
    xpb_html(b, s->info.cpu_model);
    xpb_text_puts(b, " \xC2\xB7 ");
    xpb_html(b, s->info.os);
    xpb_text_puts(b, "</span></div></section>");
}

void lb_page_compare(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    long long ids[2] = {parse_id(lb_query(req, "a")), parse_id(lb_query(req, "b"))};
    if (!ids[0] && !ids[1]) {
        size_t k = 0;
        for (size_t i = 0; i < req->n_query && k < 2; i++) {
            if (strcmp(req->query[i].key, "id") != 0)
                continue;
            long long v = parse_id(req->query[i].value);
            if (v && (k == 0 || v != ids[0]))
                ids[k++] = v;
        }
    }
    if (!ids[0] || !ids[1] || ids[0] == ids[1]) {
        lb_page_error(res, 400,
                      "Pick two different submissions to compare (tick two rows on the rankings, "
                      "or open /compare?a=ID&b=ID).");
        return;
    }
    struct side sides[2];
    memset(sides, 0, sizeof sides);
    struct lb_db *db = lb_pool_get(app->pool);
    xpb_err err;
    int status = 200;
    for (int i = 0; i < 2 && status == 200; i++) {
        sides[i].id = ids[i];
        xpb_status st = lb_store_submission_doc(&sides[i].info, &sides[i].doc, db, ids[i], &err);
        if (st == XPB_OK && xpb_results_view(&sides[i].view, sides[i].doc) != XPB_OK)
            st = xpb_err_set(&err, XPB_OUT_OF_MEMORY, "out of memory reading the document");
        if (st == XPB_OK)
            st = lb_store_submission_runs(&sides[i].rows, &sides[i].n_rows, db, ids[i], NULL,
                                          RUNS_READ, &err);
        if (st != XPB_OK)
            status = st == XPB_NOT_FOUND ? 404 : 500;
    }
    lb_pool_put(app->pool, db);
    if (status == 404) {
        lb_page_error(res, status, "One of the two submissions does not exist.");
    } else if (status != 200) {
        lb_page_internal(res, err.msg);
    } else {
        struct xpb_text *b = &res->body;
        char title[96];
        snprintf(title, sizeof title, "#%lld vs #%lld", ids[0], ids[1]);
        lb_page_begin(b, title);
        xpb_text_printf(b, "<h1>Submission #%lld vs #%lld</h1><div class=\"grid2\">", ids[0],
                        ids[1]);
        side_card(b, &sides[0]);
        side_card(b, &sides[1]);
        xpb_text_puts(b, "</div>");
        results_card(b, &sides[0], &sides[1]);
        env_table(b, &sides[0], &sides[1]);
        lb_page_end(b);
        lb_page_send(res, 200);
    }
    for (int i = 0; i < 2; i++) {
        xpb_results_view_free(&sides[i].view);
        json_decref(sides[i].doc);
        free(sides[i].rows);
    }
}
