/* The page of one submission: its machine, software and runs (see lb_pages.h). Its size is
 * bounded whatever the document holds: lists show at most LIST_SHOWN entries (runs at most
 * RUNS_SHOWN) and say how many more there are, and free texts are cut at TEXT_SHOWN bytes (the
 * API gives the document whole). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pages/lb_escape.h"
#include "pages/lb_format.h"
#include "pages/lb_pages.h"
#include "pages/lb_svg.h"
#include "store/lb_doc.h"
#include "store/lb_store.h"

#define MAX_CHART 40
#define RUNS_SHOWN 300
#define LIST_SHOWN 100
#define TEXT_SHOWN 200
#define ERROR_SHOWN 600

/* A free text of the document, cut at TEXT_SHOWN bytes. */
static void text(struct lb_buf *b, const char *s)
{
    lb_buf_html_cut(b, s, TEXT_SHOWN);
}

/* "and 12 more" after a list that showed `shown` of `n`. */
static void more(struct lb_buf *b, size_t n, size_t shown, const char *sep)
{
    if (n > shown)
        lb_buf_printf(b, "%s<span class=\"muted\">and %zu more (in the results JSON)</span>", sep,
                      n - shown);
}

static void kv_text(struct lb_buf *b, const char *label, const char *value)
{
    lb_buf_printf(b, "<dt>%s</dt><dd>", label);
    text(b, value && *value ? value : "\xE2\x80\x94");
    lb_buf_puts(b, "</dd>");
}

/* The device kind of a run: what a version-2 document says, else unknown. */
static const char *run_kind(const json_t *run, int version)
{
    const char *kind = version >= 2 ? lb_doc_str(json_object_get(run, "device"), "kind") : "";
    return *kind ? kind : "unknown";
}

static void machine_card(struct lb_buf *b, const json_t *env)
{
    const json_t *cpu = json_object_get(env, "cpu");
    lb_buf_puts(b, "<section class=\"card\"><header><h2>Machine</h2></header><dl class=\"kv\">");
    kv_text(b, "CPU", lb_doc_str(cpu, "model"));
    lb_buf_printf(b, "<dt>Cores</dt><dd>%.0f physical, %.0f logical</dd>", lb_doc_num(cpu, "cores"),
                  lb_doc_num(cpu, "logical_cpus"));
    lb_buf_puts(b, "<dt>Memory</dt><dd>");
    lb_fmt_bytes(b, lb_doc_num(env, "memory_bytes"));
    lb_buf_puts(b, "</dd>");
    lb_buf_puts(b, "<dt>Accelerators</dt><dd>");
    const json_t *accs = json_object_get(env, "accelerators");
    if (json_array_size(accs) == 0)
        lb_buf_puts(b, "none");
    for (size_t i = 0; i < json_array_size(accs) && i < LIST_SHOWN; i++) {
        const json_t *a = json_array_get(accs, i);
        if (i)
            lb_buf_puts(b, "<br>");
        text(b, lb_doc_str(a, "name"));
        if (*lb_doc_str(a, "driver")) {
            lb_buf_puts(b, " <span class=\"muted\">driver ");
            text(b, lb_doc_str(a, "driver"));
            lb_buf_puts(b, "</span>");
        }
    }
    more(b, json_array_size(accs), LIST_SHOWN, "<br>");
    lb_buf_puts(b, "</dd>");
    kv_text(b, "OS", lb_doc_str(env, "os"));
    kv_text(b, "Kernel", lb_doc_str(env, "kernel"));
    lb_buf_puts(b, "</dl>");
    const json_t *flags = json_object_get(cpu, "flags");
    if (json_array_size(flags) > 0) {
        lb_buf_printf(b, "<details><summary>%zu CPU flags</summary><p class=\"flags mono\">",
                      json_array_size(flags));
        for (size_t i = 0; i < json_array_size(flags) && i < LIST_SHOWN; i++) {
            if (i)
                lb_buf_puts(b, " ");
            text(b, json_string_value(json_array_get(flags, i)));
        }
        more(b, json_array_size(flags), LIST_SHOWN, " ");
        lb_buf_puts(b, "</p></details>");
    }
    lb_buf_puts(b, "</section>");
}

static void software_card(struct lb_buf *b, const json_t *doc)
{
    const json_t *env = json_object_get(doc, "environment");
    const json_t *scenario = json_object_get(doc, "scenario");
    lb_buf_puts(b, "<section class=\"card\"><header><h2>Software</h2></header><dl class=\"kv\">");
    kv_text(b, "xpubench", lb_doc_str(json_object_get(doc, "tool"), "version"));
    kv_text(b, "Compiler", lb_doc_str(env, "compiler"));
    const json_t *libs = json_object_get(env, "libraries");
    const char *name;
    const json_t *value;
    size_t n_libs = 0;
    json_object_foreach((json_t *)libs, name, value)
    {
        if (n_libs++ == LIST_SHOWN)
            break;
        lb_buf_puts(b, "<dt>");
        text(b, name);
        lb_buf_puts(b, "</dt><dd>");
        text(b, json_string_value(value));
        lb_buf_puts(b, "</dd>");
    }
    if (json_object_size(libs) > LIST_SHOWN) {
        lb_buf_puts(b, "<dt>Libraries</dt><dd>");
        more(b, json_object_size(libs), LIST_SHOWN, "");
        lb_buf_puts(b, "</dd>");
    }
    kv_text(b, "Scenario", lb_doc_str(scenario, "name"));
    lb_buf_puts(b, "<dt>Scenario hash</dt><dd class=\"mono small\">");
    text(b, lb_doc_str(scenario, "sha256"));
    lb_buf_puts(b, "</dd>");
    const json_t *overrides = json_object_get(scenario, "overrides");
    if (json_array_size(overrides) > 0) {
        lb_buf_puts(b, "<dt>Overrides</dt><dd class=\"mono small\">");
        for (size_t i = 0; i < json_array_size(overrides) && i < LIST_SHOWN; i++) {
            if (i)
                lb_buf_puts(b, "<br>");
            text(b, json_string_value(json_array_get(overrides, i)));
        }
        more(b, json_array_size(overrides), LIST_SHOWN, "<br>");
        lb_buf_puts(b, "</dd>");
    }
    kv_text(b, "Created", lb_doc_str(doc, "created"));
    lb_buf_puts(b, "</dl>");
    const json_t *plugins = json_object_get(env, "plugins");
    if (json_array_size(plugins) > 0) {
        lb_buf_puts(b, "<h3>Plugins</h3><div class=\"table-wrap\"><table><thead><tr><th>Name"
                       "</th><th>Kind</th><th>Version</th><th>ABI</th></tr></thead><tbody>");
        for (size_t i = 0; i < json_array_size(plugins) && i < LIST_SHOWN; i++) {
            const json_t *p = json_array_get(plugins, i);
            lb_buf_puts(b, "<tr><td>");
            text(b, lb_doc_str(p, "name"));
            lb_buf_puts(b, "</td><td>");
            text(b, lb_doc_str(p, "kind"));
            lb_buf_puts(b, "</td><td>");
            text(b, lb_doc_str(p, "version"));
            lb_buf_puts(b, "</td><td>");
            text(b, lb_doc_str(p, "abi"));
            lb_buf_puts(b, "</td></tr>");
        }
        lb_buf_puts(b, "</tbody></table></div>");
        more(b, json_array_size(plugins), LIST_SHOWN, "");
    }
    lb_buf_puts(b, "</section>");
}

/* The run's first cells: id and status, workload, backend and device. */
static void run_cells(struct lb_buf *b, const json_t *run, int version)
{
    const json_t *config = json_object_get(run, "config");
    const json_t *device = json_object_get(run, "device");
    const char *status = lb_doc_str(run, "status");
    const json_t *ws = json_object_get(config, "world_size");
    lb_buf_puts(b, "<tr><td><span class=\"mono\">");
    text(b, lb_doc_str(run, "id"));
    lb_buf_printf(b, "</span><br><span class=\"pill %s\">", strcmp(status, "ok") ? "bad" : "ok");
    lb_buf_html(b, status);
    lb_buf_puts(b, "</span></td><td>");
    lb_buf_html(b, lb_doc_str(config, "model"));
    if (*lb_doc_str(config, "variant")) {
        lb_buf_puts(b, "/");
        lb_buf_html(b, lb_doc_str(config, "variant"));
    }
    lb_buf_puts(b, " <span class=\"muted small\">");
    lb_buf_html(b, lb_doc_str(config, "mode"));
    lb_buf_puts(b, " \xC2\xB7 ");
    lb_buf_html(b, lb_doc_str(config, "precision"));
    lb_buf_printf(b, " \xC2\xB7 batch %.0f \xC2\xB7 world size %lld</span></td><td>",
                  lb_doc_num(config, "batch"),
                  json_is_integer(ws) ? (long long)json_integer_value(ws) : 1LL);
    lb_buf_html(b, lb_doc_str(config, "backend"));
    lb_buf_printf(b, " <span class=\"muted small\">%s%.0f threads \xC2\xB7 ",
                  json_is_true(json_object_get(config, "fusion")) ? "fused \xC2\xB7 " : "",
                  lb_doc_num(config, "threads"));
    lb_buf_html(b, lb_doc_str(config, "transfer"));
    /* the device's name on one line, whole on hover: a long one cannot widen the column */
    lb_buf_puts(b, "</span><br><span class=\"small clip\" title=\"");
    lb_buf_html_cut(b, lb_doc_str(device, "name"), LB_TEXT_MAX);
    lb_buf_puts(b, "\">");
    text(b, lb_doc_str(device, "name"));
    lb_buf_puts(b, "</span> <span class=\"pill kind\">");
    text(b, run_kind(run, version));
    lb_buf_puts(b, "</span></td>");
}

/* Throughput with its spread and interval, and step times. */
static void speed_cells(struct lb_buf *b, const json_t *metrics)
{
    const json_t *tp = json_object_get(metrics, "throughput");
    const json_t *st = json_object_get(metrics, "step_time_s");
    lb_buf_puts(b, "<td class=\"num\"><b>");
    lb_fmt_num(b, lb_doc_num(tp, "median"), lb_doc_num(tp, "median") >= 100 ? 0 : 1);
    lb_buf_puts(b, "</b><br><span class=\"muted small\">");
    lb_fmt_num(b, lb_doc_num(tp, "min"), 0);
    lb_buf_puts(b, "\xE2\x80\x93");
    lb_fmt_num(b, lb_doc_num(tp, "max"), 0);
    if (!isnan(lb_doc_num(tp, "ci95_low"))) {
        lb_buf_puts(b, "<br>95% ");
        lb_fmt_num(b, lb_doc_num(tp, "ci95_low"), 0);
        lb_buf_puts(b, "\xE2\x80\x93");
        lb_fmt_num(b, lb_doc_num(tp, "ci95_high"), 0);
    } else {
        lb_buf_puts(b, "<br>no interval");
    }
    lb_buf_puts(b, "</span></td><td class=\"num\">");
    lb_fmt_ms(b, lb_doc_num(st, "p50"));
    lb_buf_puts(b, "<br><span class=\"muted small\">p95 ");
    lb_fmt_ms(b, lb_doc_num(st, "p95"));
    lb_buf_puts(b, " \xC2\xB7 p99 ");
    lb_fmt_ms(b, lb_doc_num(st, "p99"));
    lb_buf_puts(b, "</span></td>");
}

/* Compute, memory, energy, losses and verification. */
static void effort_cells(struct lb_buf *b, const json_t *run)
{
    const json_t *metrics = json_object_get(run, "metrics");
    const json_t *mem = json_object_get(metrics, "memory");
    const json_t *energy = json_object_get(metrics, "energy");
    const json_t *loss = json_object_get(metrics, "loss");
    const json_t *ver = json_object_get(run, "verification");
    lb_buf_puts(b, "<td class=\"num\">");
    lb_fmt_si(b, lb_doc_num(metrics, "flops_per_s"), "FLOP/s");
    double peak = lb_doc_num(metrics, "peak_fraction");
    if (!isnan(peak))
        lb_buf_printf(b, " <span class=\"muted small\">(%.1f%% of peak)</span>", peak * 100);
    lb_buf_puts(b, "<br><span class=\"muted small\">");
    lb_fmt_bytes(b, lb_doc_num(mem, "host_peak_rss_bytes"));
    lb_buf_puts(b, " host");
    if (!isnan(lb_doc_num(mem, "device_peak_bytes"))) {
        lb_buf_puts(b, " \xC2\xB7 ");
        lb_fmt_bytes(b, lb_doc_num(mem, "device_peak_bytes"));
        lb_buf_puts(b, " device");
    }
    lb_buf_puts(b, "</span></td><td class=\"num\">");
    if (json_is_true(json_object_get(energy, "measured"))) {
        lb_fmt_num(b, lb_doc_num(energy, "samples_per_joule"), 2);
        lb_buf_puts(b, " /J<br><span class=\"muted small\">");
        text(b, lb_doc_str(energy, "source"));
        lb_buf_puts(b, "</span>");
    } else {
        lb_buf_puts(b, "<span class=\"muted small\">not measured</span>");
    }
    lb_buf_puts(b, "</td><td class=\"num\">");
    lb_fmt_num(b, lb_doc_num(loss, "first"), 4);
    lb_buf_puts(b, " \xE2\x86\x92 ");
    lb_fmt_num(b, lb_doc_num(loss, "last"), 4);
    lb_buf_puts(b, "<br><span class=\"small\">");
    if (!json_is_true(json_object_get(ver, "requested")))
        lb_buf_puts(b, "<span class=\"muted\">not verified</span>");
    else if (json_is_true(json_object_get(ver, "verified")))
        lb_buf_puts(b, "<span class=\"pill ok\">verified</span>");
    else
        lb_buf_puts(b, "<span class=\"pill bad\">verification failed</span>");
    lb_buf_puts(b, "</span></td></tr>");
}

static void run_row(struct lb_buf *b, const json_t *run, int version)
{
    run_cells(b, run, version);
    if (strcmp(lb_doc_str(run, "status"), "ok") != 0) {
        lb_buf_puts(b, "<td colspan=\"5\" class=\"muted\">");
        lb_buf_html_cut(b, lb_doc_str(run, "error"), ERROR_SHOWN);
        lb_buf_puts(b, "</td></tr>");
        return;
    }
    speed_cells(b, json_object_get(run, "metrics"));
    effort_cells(b, run);
}

static void runs_chart(struct lb_buf *b, const json_t *runs, int version)
{
    struct lb_bar bars[MAX_CHART];
    char labels[MAX_CHART][200];
    size_t n_bars = 0;
    for (size_t i = 0; i < json_array_size(runs) && n_bars < MAX_CHART; i++) {
        const json_t *run = json_array_get(runs, i);
        if (strcmp(lb_doc_str(run, "status"), "ok") != 0)
            continue;
        snprintf(labels[n_bars], sizeof labels[n_bars], "%s", lb_doc_str(run, "id"));
        bars[n_bars] = (struct lb_bar){
            labels[n_bars], NULL,
            lb_doc_num(json_object_get(json_object_get(run, "metrics"), "throughput"), "median"),
            NULL, lb_page_kind_class(run_kind(run, version))};
        n_bars++;
    }
    if (n_bars > 0)
        lb_svg_bars(b, "Throughput per run", "samples/s", bars, n_bars);
}

static void comparisons_card(struct lb_buf *b, const json_t *cmps)
{
    if (json_array_size(cmps) == 0)
        return;
    lb_buf_puts(b, "<section class=\"card\"><header><h2>Speedups within this submission</h2>"
                   "</header><div class=\"table-wrap\"><table><thead><tr><th>Kind</th>"
                   "<th>Candidate</th><th>Baseline</th><th class=\"num\">Speedup</th>"
                   "<th class=\"num\">95% interval</th></tr></thead><tbody>");
    for (size_t i = 0; i < json_array_size(cmps) && i < RUNS_SHOWN; i++) {
        const json_t *c = json_array_get(cmps, i);
        lb_buf_puts(b, "<tr><td>");
        lb_buf_html(b, lb_doc_str(c, "kind"));
        lb_buf_puts(b, "</td><td class=\"mono\">");
        text(b, lb_doc_str(c, "candidate"));
        lb_buf_puts(b, "</td><td class=\"mono\">");
        text(b, lb_doc_str(c, "baseline"));
        lb_buf_puts(b, "</td><td class=\"num\">");
        lb_fmt_ratio(b, lb_doc_num(c, "speedup"));
        lb_buf_puts(b, "</td><td class=\"num\">");
        if (isnan(lb_doc_num(c, "ci95_low"))) {
            lb_buf_puts(b, "<span class=\"muted small\">none</span>");
        } else {
            lb_fmt_ratio(b, lb_doc_num(c, "ci95_low"));
            lb_buf_puts(b, " \xE2\x80\x93 ");
            lb_fmt_ratio(b, lb_doc_num(c, "ci95_high"));
            if (!json_is_true(json_object_get(c, "significant")))
                lb_buf_puts(b, " <span class=\"muted small\">no significant difference</span>");
        }
        lb_buf_puts(b, "</td></tr>");
    }
    lb_buf_puts(b, "</tbody></table></div>");
    more(b, json_array_size(cmps), RUNS_SHOWN, "");
    lb_buf_puts(b, "</section>");
}

static void runs_card(struct lb_buf *b, const json_t *doc)
{
    const json_t *runs = json_object_get(doc, "runs");
    int version = (int)json_integer_value(json_object_get(doc, "schema_version"));
    size_t n = json_array_size(runs);
    lb_buf_printf(b,
                  "<section class=\"card\"><header><h2>Runs</h2><span class=\"muted small\">"
                  "%zu</span></header>",
                  n);
    runs_chart(b, runs, version);
    lb_buf_puts(b, "<div class=\"table-wrap\"><table><thead><tr><th>Run</th>"
                   "<th>Model</th><th>Backend \xC2\xB7 device</th><th class=\"num\">Samples/s"
                   "</th><th class=\"num\">Step p50</th><th class=\"num\">Compute \xC2\xB7 "
                   "memory</th><th class=\"num\">Energy</th><th class=\"num\">Loss</th></tr>"
                   "</thead><tbody>");
    for (size_t i = 0; i < n && i < RUNS_SHOWN; i++)
        run_row(b, json_array_get(runs, i), version);
    lb_buf_puts(b, "</tbody></table></div>");
    more(b, n, RUNS_SHOWN, "");
    lb_buf_puts(b, "</section>");
    comparisons_card(b, json_object_get(doc, "comparisons"));
}

void lb_page_submission(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                        long long id)
{
    (void)req;
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_submission_info info;
    json_t *doc = NULL;
    xpb_err err;
    xpb_status st = lb_store_submission_doc(&info, &doc, db, id, &err);
    lb_pool_put(app->pool, db);
    if (st == XPB_NOT_FOUND) {
        lb_page_error(res, 404, "There is no submission with this number.");
        return;
    }
    if (st != XPB_OK) {
        lb_page_internal(res, err.msg);
        return;
    }
    struct lb_buf *b = &res->body;
    char title[64];
    snprintf(title, sizeof title, "Submission #%lld", id);
    lb_page_begin(b, title);
    lb_buf_printf(b, "<h1>Submission #%lld</h1><p class=\"lead\">by <b>", id);
    lb_buf_html(b, info.submitter);
    lb_buf_puts(b, "</b> \xC2\xB7 received ");
    lb_buf_html(b, info.received);
    lb_buf_printf(b,
                  " \xC2\xB7 results schema version %d \xC2\xB7 <a href=\"/api/v1/results/%lld\">"
                  "results JSON</a></p>",
                  info.schema_version, id);
    lb_buf_puts(b, "<div class=\"grid2\">");
    machine_card(b, json_object_get(doc, "environment"));
    software_card(b, doc);
    lb_buf_puts(b, "</div>");
    runs_card(b, doc);
    lb_buf_printf(b,
                  "<section class=\"card\"><header><h2>Compare with another submission</h2>"
                  "</header><form class=\"filters\" method=\"get\" action=\"/compare\">"
                  "<input type=\"hidden\" name=\"a\" value=\"%lld\"><label>Submission number"
                  "<input type=\"number\" name=\"b\" min=\"1\" required></label>"
                  "<button type=\"submit\">Compare</button></form>"
                  "<p class=\"muted small\">Content hash <span class=\"mono\">",
                  id);
    lb_buf_html(b, info.content_hash);
    lb_buf_puts(b, "</span></p></section>");
    lb_page_end(b);
    json_decref(doc);
    lb_page_send(res, 200);
}
