/* Two submissions side by side: their environments, with differences marked, and their
 * results matched by workload (see lb_pages.h). Query: a=ID&b=ID, or id=ID&id=ID as the
 * leaderboard's compare form sends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages/lb_escape.h"
#include "pages/lb_format.h"
#include "pages/lb_pages.h"
#include "pages/lb_svg.h"
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
static void env_row(struct lb_buf *b, const char *label, const char *x, const char *y)
{
    lb_buf_printf(b, "<tr class=\"%s\"><th>", strcmp(x, y) ? "diff" : "");
    lb_buf_html_cut(b, label, TEXT_SHOWN);
    lb_buf_puts(b, "</th><td>");
    lb_buf_html_cut(b, *x ? x : "\xE2\x80\x94", TEXT_SHOWN);
    lb_buf_puts(b, "</td><td>");
    lb_buf_html_cut(b, *y ? y : "\xE2\x80\x94", TEXT_SHOWN);
    lb_buf_puts(b, "</td></tr>");
}

/* Formats a JSON number member as text into out. */
static void num_text(char *out, size_t cap, const json_t *obj, const char *key)
{
    double v = lb_doc_num(obj, key);
    if (!isnan(v))
        snprintf(out, cap, "%.0f", v);
    else
        out[0] = '\0';
}

/* Names (and versions) of an array of objects joined with ", ". */
static void join_names(struct lb_buf *out, const json_t *arr, const char *second)
{
    for (size_t i = 0; i < json_array_size(arr) && out->len <= TEXT_SHOWN; i++) {
        const json_t *e = json_array_get(arr, i);
        if (i)
            lb_buf_puts(out, ", ");
        lb_buf_puts(out, lb_doc_str(e, "name"));
        if (second && *lb_doc_str(e, second)) {
            lb_buf_puts(out, " ");
            lb_buf_puts(out, lb_doc_str(e, second));
        }
    }
}

static void env_table(struct lb_buf *b, const struct side *a, const struct side *c)
{
    const json_t *ea = json_object_get(a->doc, "environment");
    const json_t *eb = json_object_get(c->doc, "environment");
    const json_t *ca = json_object_get(ea, "cpu"), *cb = json_object_get(eb, "cpu");
    char x[64], y[64];
    lb_buf_printf(b,
                  "<section class=\"card\"><header><h2>Environment</h2><span class=\"muted "
                  "small\">differences are highlighted</span></header><div class=\"table-wrap"
                  "\"><table><thead><tr><th></th><th>#%lld</th><th>#%lld</th></tr></thead>"
                  "<tbody>",
                  a->id, c->id);
    env_row(b, "CPU", lb_doc_str(ca, "model"), lb_doc_str(cb, "model"));
    num_text(x, sizeof x, ca, "cores");
    num_text(y, sizeof y, cb, "cores");
    env_row(b, "Cores", x, y);
    num_text(x, sizeof x, ca, "logical_cpus");
    num_text(y, sizeof y, cb, "logical_cpus");
    env_row(b, "Logical CPUs", x, y);
    struct lb_buf ma = {0}, mb = {0};
    lb_fmt_bytes(&ma, lb_doc_num(ea, "memory_bytes"));
    lb_fmt_bytes(&mb, lb_doc_num(eb, "memory_bytes"));
    env_row(b, "Memory", ma.data ? ma.data : "", mb.data ? mb.data : "");
    lb_buf_free(&ma);
    lb_buf_free(&mb);
    join_names(&ma, json_object_get(ea, "accelerators"), "driver");
    join_names(&mb, json_object_get(eb, "accelerators"), "driver");
    env_row(b, "Accelerators", ma.data ? ma.data : "", mb.data ? mb.data : "");
    lb_buf_free(&ma);
    lb_buf_free(&mb);
    env_row(b, "OS", lb_doc_str(ea, "os"), lb_doc_str(eb, "os"));
    env_row(b, "Kernel", lb_doc_str(ea, "kernel"), lb_doc_str(eb, "kernel"));
    env_row(b, "Compiler", lb_doc_str(ea, "compiler"), lb_doc_str(eb, "compiler"));
    env_row(b, "xpubench", lb_doc_str(json_object_get(a->doc, "tool"), "version"),
            lb_doc_str(json_object_get(c->doc, "tool"), "version"));
    env_row(b, "Scenario", a->info.scenario, c->info.scenario);
    /* libraries: the union of both sides' keys */
    const json_t *la = json_object_get(ea, "libraries"), *lb = json_object_get(eb, "libraries");
    const char *key;
    const json_t *val;
    size_t n_rows = 0;
    json_object_foreach((json_t *)la, key, val)
    {
        if (n_rows++ < LIBS_SHOWN)
            env_row(b, key, json_string_value(val), lb_doc_str(lb, key));
    }
    n_rows = 0;
    json_object_foreach((json_t *)lb, key, val)
    {
        if (!json_object_get(la, key) && n_rows++ < LIBS_SHOWN)
            env_row(b, key, "", json_string_value(val));
    }
    join_names(&ma, json_object_get(ea, "plugins"), "version");
    join_names(&mb, json_object_get(eb, "plugins"), "version");
    env_row(b, "Plugins", ma.data ? ma.data : "", mb.data ? mb.data : "");
    lb_buf_free(&ma);
    lb_buf_free(&mb);
    lb_buf_puts(b, "</tbody></table></div></section>");
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

static void result_cell(struct lb_buf *b, const struct lb_run_row *r)
{
    lb_buf_puts(b, "<td class=\"num\">");
    if (!r) {
        lb_buf_puts(b, "<span class=\"muted\">\xE2\x80\x94</span></td>");
        return;
    }
    lb_buf_puts(b, "<b>");
    lb_fmt_num(b, r->throughput, r->throughput >= 100 ? 0 : 1);
    lb_buf_puts(b, "</b><br><span class=\"muted small\">");
    lb_buf_html(b, r->backend);
    lb_buf_puts(b, " \xC2\xB7 ");
    lb_fmt_ms(b, r->step_p50);
    lb_buf_puts(b, "</span></td>");
}

static void results_card(struct lb_buf *b, const struct side *a, const struct side *c)
{
    struct match m[MAX_PAIRS];
    size_t n = add_matches(m, 0, a->rows, a->n_rows, 0);
    n = add_matches(m, n, c->rows, c->n_rows, 1);
    lb_buf_puts(b, "<section class=\"card\"><header><h2>Results</h2><span class=\"muted small\">"
                   "fastest run per workload on each side</span></header>");
    if (n == 0) {
        lb_buf_puts(b, "<p class=\"muted\">Neither submission has finished runs.</p></section>");
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
    lb_buf_printf(b,
                  "<div class=\"table-wrap\"><table class=\"sortable\"><thead><tr>"
                  "<th data-key=\"workload\" data-type=\"text\" data-first=\"asc\">Workload</th>"
                  "<th class=\"num\">#%lld samples/s</th><th class=\"num\">#%lld samples/s</th>"
                  "<th class=\"num\" data-key=\"ratio\" data-first=\"desc\">#%lld vs #%lld</th>"
                  "</tr></thead><tbody>",
                  a->id, c->id, c->id, a->id);
    for (size_t i = 0; i < n; i++) {
        lb_buf_puts(b, "<tr><td data-v=\"");
        lb_buf_html(b, labels[i]);
        lb_buf_puts(b, "\">");
        lb_buf_html(b, labels[i]);
        lb_buf_puts(b, "</td>");
        result_cell(b, m[i].a);
        result_cell(b, m[i].b);
        double ratio = (m[i].a && m[i].b && m[i].a->throughput > 0)
                           ? m[i].b->throughput / m[i].a->throughput
                           : NAN;
        lb_buf_puts(b, "<td class=\"num\" data-v=\"");
        lb_fmt_key(b, ratio);
        lb_buf_printf(b, "\"><span class=\"ratio %s\">",
                      isnan(ratio) ? ""
                      : ratio >= 1 ? "up"
                                   : "down");
        if (isnan(ratio)) {
            lb_buf_puts(b, "\xE2\x80\x94");
        } else {
            /* "2.50x faster" or "246x slower": never a ratio rounded to 0.00 */
            double r = ratio >= 1 ? ratio : 1 / ratio;
            lb_fmt_num(b, r, r >= 100 ? 0 : r >= 10 ? 1 : 2);
            lb_buf_puts(b, ratio >= 1 ? "\xC3\x97 faster" : "\xC3\x97 slower");
        }
        lb_buf_puts(b, "</span></td></tr>");
    }
    lb_buf_puts(b, "</tbody></table></div></section>");
}

static void side_card(struct lb_buf *b, const struct side *s)
{
    lb_buf_puts(b, "<section class=\"card\"><header><h2>");
    lb_page_submission_link(b, s->id);
    lb_buf_puts(b, "</h2><span class=\"muted small\">by ");
    lb_buf_html(b, s->info.submitter);
    lb_buf_puts(b, " \xC2\xB7 ");
    lb_buf_html(b, s->info.received);
    lb_buf_puts(b, "</span></header><div class=\"machine\"");
    lb_page_machine_title(b, s->info.accelerators, s->info.cpu_model, s->info.os);
    lb_buf_puts(b, "><b>");
    lb_buf_html(b, s->info.accelerators[0] ? s->info.accelerators : s->info.cpu_model);
    lb_buf_puts(b, "</b><span class=\"muted\">");
    lb_buf_html(b, s->info.cpu_model);
    lb_buf_puts(b, " \xC2\xB7 ");
    lb_buf_html(b, s->info.os);
    lb_buf_puts(b, "</span></div></section>");
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
        struct lb_buf *b = &res->body;
        char title[96];
        snprintf(title, sizeof title, "#%lld vs #%lld", ids[0], ids[1]);
        lb_page_begin(b, title);
        lb_buf_printf(b, "<h1>Submission #%lld vs #%lld</h1><div class=\"grid2\">", ids[0], ids[1]);
        side_card(b, &sides[0]);
        side_card(b, &sides[1]);
        lb_buf_puts(b, "</div>");
        results_card(b, &sides[0], &sides[1]);
        env_table(b, &sides[0], &sides[1]);
        lb_page_end(b);
        lb_page_send(res, 200);
    }
    for (int i = 0; i < 2; i++) {
        json_decref(sides[i].doc);
        free(sides[i].rows);
    }
}
