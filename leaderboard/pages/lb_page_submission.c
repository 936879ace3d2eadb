/* The page of one submission: its machine, software and runs (see lb_pages.h). Its size is
 * bounded whatever the document holds: lists show at most LIST_SHOWN entries (runs at most
 * RUNS_SHOWN) and say how many more there are, and free texts are cut at TEXT_SHOWN bytes (the
 * API gives the document whole). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pages/lb_pages.h"
#include "render/escape.h"
#include "render/format_si.h"
#include "results/tta_table.h"
#include "results/view.h"
#include "store/lb_doc.h"
#include "store/lb_store.h"

#define MAX_CHART 40
#define RUNS_SHOWN 300
#define LIST_SHOWN 100
#define TEXT_SHOWN 200
#define ERROR_SHOWN 600

/* A free text of the document, cut at TEXT_SHOWN bytes. */
static void text(struct xpb_text *b, const char *s)
{
    xpb_html_cut(b, s, TEXT_SHOWN);
}

/* "and 12 more" after a list that showed `shown` of `n`. */
static void more(struct xpb_text *b, size_t n, size_t shown, const char *sep)
{
    if (n > shown)
        xpb_text_printf(b, "%s<span class=\"muted\">and %zu more (in the results JSON)</span>", sep,
                        n - shown);
}

static void kv_text(struct xpb_text *b, const char *label, const char *value)
{
    xpb_text_printf(b, "<dt>%s</dt><dd>", label);
    text(b, value && *value ? value : "\xE2\x80\x94");
    xpb_text_puts(b, "</dd>");
}

static void machine_card(struct xpb_text *b, const struct xpb_results_environment *env)
{
    xpb_text_puts(b, "<section class=\"card\"><header><h2>Machine</h2></header><dl class=\"kv\">");
    kv_text(b, "CPU", lb_doc_str(env->cpu.model));
    xpb_text_printf(b, "<dt>Cores</dt><dd>%.0f physical, %.0f logical</dd>",
                    lb_doc_num(env->cpu.cores), lb_doc_num(env->cpu.logical_cpus));
    xpb_text_puts(b, "<dt>Memory</dt><dd>");
    xpb_format_bytes(b, lb_doc_num(env->memory_bytes));
    xpb_text_puts(b, "</dd>");
    xpb_text_puts(b, "<dt>Accelerators</dt><dd>");
    if (env->n_accelerators == 0)
        xpb_text_puts(b, "none");
    for (size_t i = 0; i < env->n_accelerators && i < LIST_SHOWN; i++) {
        const struct xpb_results_accelerator *a = &env->accelerators[i];
        if (i)
            xpb_text_puts(b, "<br>");
        text(b, lb_doc_str(a->name));
        if (*lb_doc_str(a->driver)) {
            xpb_text_puts(b, " <span class=\"muted\">driver ");
            text(b, a->driver);
            xpb_text_puts(b, "</span>");
        }
    }
    more(b, env->n_accelerators, LIST_SHOWN, "<br>");
    xpb_text_puts(b, "</dd>");
    kv_text(b, "OS", lb_doc_str(env->os));
    kv_text(b, "Kernel", lb_doc_str(env->kernel));
    xpb_text_puts(b, "</dl>");
    if (env->cpu.n_flags > 0) {
        xpb_text_printf(b, "<details><summary>%zu CPU flags</summary><p class=\"flags mono\">",
                        env->cpu.n_flags);
        for (size_t i = 0; i < env->cpu.n_flags && i < LIST_SHOWN; i++) {
            if (i)
                xpb_text_puts(b, " ");
            text(b, env->cpu.flags[i]);
        }
        more(b, env->cpu.n_flags, LIST_SHOWN, " ");
        xpb_text_puts(b, "</p></details>");
    }
    xpb_text_puts(b, "</section>");
}

static void software_card(struct xpb_text *b, const struct xpb_results_doc *doc)
{
    const struct xpb_results_environment *env = &doc->environment;
    const struct xpb_results_scenario *scenario = &doc->scenario;
    xpb_text_puts(b, "<section class=\"card\"><header><h2>Software</h2></header><dl class=\"kv\">");
    kv_text(b, "xpubench", lb_doc_str(doc->tool_version));
    kv_text(b, "Compiler", lb_doc_str(env->compiler));
    for (size_t i = 0; i < env->n_libraries && i < LIST_SHOWN; i++) {
        xpb_text_puts(b, "<dt>");
        text(b, env->libraries[i].key);
        xpb_text_puts(b, "</dt><dd>");
        text(b, env->libraries[i].value);
        xpb_text_puts(b, "</dd>");
    }
    if (env->n_libraries > LIST_SHOWN) {
        xpb_text_puts(b, "<dt>Libraries</dt><dd>");
        more(b, env->n_libraries, LIST_SHOWN, "");
        xpb_text_puts(b, "</dd>");
    }
    kv_text(b, "Scenario", lb_doc_str(scenario->name));
    xpb_text_puts(b, "<dt>Scenario hash</dt><dd class=\"mono small\">");
    text(b, lb_doc_str(scenario->sha256));
    xpb_text_puts(b, "</dd>");
    if (scenario->n_overrides > 0) {
        xpb_text_puts(b, "<dt>Overrides</dt><dd class=\"mono small\">");
        for (size_t i = 0; i < scenario->n_overrides && i < LIST_SHOWN; i++) {
            if (i)
                xpb_text_puts(b, "<br>");
            text(b, scenario->overrides[i]);
        }
        more(b, scenario->n_overrides, LIST_SHOWN, "<br>");
        xpb_text_puts(b, "</dd>");
    }
    kv_text(b, "Created", lb_doc_str(doc->created));
    xpb_text_puts(b, "</dl>");
    if (env->n_plugins > 0) {
        xpb_text_puts(b, "<h3>Plugins</h3><div class=\"table-wrap\"><table><thead><tr><th>Name"
                         "</th><th>Kind</th><th>Version</th><th>ABI</th></tr></thead><tbody>");
        for (size_t i = 0; i < env->n_plugins && i < LIST_SHOWN; i++) {
            const struct xpb_results_plugin *p = &env->plugins[i];
            xpb_text_puts(b, "<tr><td>");
            text(b, lb_doc_str(p->name));
            xpb_text_puts(b, "</td><td>");
            text(b, lb_doc_str(p->kind));
            xpb_text_puts(b, "</td><td>");
            text(b, lb_doc_str(p->version));
            xpb_text_puts(b, "</td><td>");
            text(b, lb_doc_str(p->abi));
            xpb_text_puts(b, "</td></tr>");
        }
        xpb_text_puts(b, "</tbody></table></div>");
        more(b, env->n_plugins, LIST_SHOWN, "");
    }
    xpb_text_puts(b, "</section>");
}

/* The run's first cells: id and status, workload, backend and device. */
static void run_cells(struct xpb_text *b, const struct xpb_results_run *run, int64_t version)
{
    const struct xpb_results_config *config = &run->config;
    const char *status = lb_doc_str(run->status);
    xpb_text_puts(b, "<tr><td><span class=\"mono\">");
    text(b, lb_doc_str(run->id));
    xpb_text_printf(b, "</span><br><span class=\"pill %s\">", strcmp(status, "ok") ? "bad" : "ok");
    xpb_html(b, status);
    xpb_text_puts(b, "</span></td><td>");
    xpb_html(b, lb_doc_str(config->model));
    if (*lb_doc_str(config->variant)) {
        xpb_text_puts(b, "/");
        xpb_html(b, config->variant);
    }
    xpb_text_puts(b, " <span class=\"muted small\">");
    xpb_html(b, lb_doc_str(config->mode));
    xpb_text_puts(b, " \xC2\xB7 ");
    xpb_html(b, lb_doc_str(config->precision));
    xpb_text_printf(b, " \xC2\xB7 batch %.0f \xC2\xB7 world size %lld</span></td><td>",
                    lb_doc_num(config->batch), (long long)xpb_results_run_world_size(run));
    xpb_html(b, lb_doc_str(config->backend));
    xpb_text_printf(b, " <span class=\"muted small\">%s%.0f threads \xC2\xB7 ",
                    lb_doc_true(config->fusion) ? "fused \xC2\xB7 " : "",
                    lb_doc_num(config->threads));
    xpb_html(b, lb_doc_str(config->transfer));
    /* the device's name on one line, whole on hover: a long one cannot widen the column */
    xpb_text_puts(b, "</span><br><span class=\"small clip\" title=\"");
    xpb_html_cut(b, lb_doc_str(run->device.name), LB_TEXT_MAX);
    xpb_text_puts(b, "\">");
    text(b, lb_doc_str(run->device.name));
    xpb_text_puts(b, "</span> <span class=\"pill kind\">");
    text(b, lb_doc_kind(run, version));
    xpb_text_puts(b, "</span></td>");
}

/* Throughput with its spread and interval, and step times. */
static void speed_cells(struct xpb_text *b, const struct xpb_results_metrics *m)
{
    xpb_text_puts(b, "<td class=\"num\"><b>");
    xpb_format_grouped(b, m->throughput.median, m->throughput.median >= 100 ? 0 : 1);
    xpb_text_puts(b, "</b><br><span class=\"muted small\">");
    xpb_format_grouped(b, m->throughput.min, 0);
    xpb_text_puts(b, "\xE2\x80\x93");
    xpb_format_grouped(b, m->throughput.max, 0);
    if (!isnan(m->throughput.ci95_low)) {
        xpb_text_puts(b, "<br>95% ");
        xpb_format_grouped(b, m->throughput.ci95_low, 0);
        xpb_text_puts(b, "\xE2\x80\x93");
        xpb_format_grouped(b, m->throughput.ci95_high, 0);
    } else {
        xpb_text_puts(b, "<br>no interval");
    }
    xpb_text_puts(b, "</span></td><td class=\"num\">");
    xpb_format_ms(b, m->step_time_s.p50);
    xpb_text_puts(b, "<br><span class=\"muted small\">p95 ");
    xpb_format_ms(b, m->step_time_s.p95);
    xpb_text_puts(b, " \xC2\xB7 p99 ");
    xpb_format_ms(b, m->step_time_s.p99);
    xpb_text_puts(b, "</span></td>");
}

/* Compute, memory, energy, losses and verification. */
static void effort_cells(struct xpb_text *b, const struct xpb_results_run *run)
{
    const struct xpb_results_metrics *m = &run->metrics;
    xpb_text_puts(b, "<td class=\"num\">");
    xpb_format_si(b, m->flops_per_s, "FLOP/s");
    if (!isnan(m->peak_fraction))
        xpb_text_printf(b, " <span class=\"muted small\">(%.1f%% of peak)</span>",
                        m->peak_fraction * 100);
    xpb_text_puts(b, "<br><span class=\"muted small\">");
    xpb_format_bytes(b, lb_doc_num(m->memory.host_peak_rss_bytes));
    xpb_text_puts(b, " host");
    if (!isnan(lb_doc_num(m->memory.device_peak_bytes))) {
        xpb_text_puts(b, " \xC2\xB7 ");
        xpb_format_bytes(b, lb_doc_num(m->memory.device_peak_bytes));
        xpb_text_puts(b, " device");
    }
    xpb_text_puts(b, "</span></td><td class=\"num\">");
    if (lb_doc_true(m->energy.measured)) {
        xpb_format_grouped(b, m->energy.samples_per_joule, 2);
        xpb_text_puts(b, " /J<br><span class=\"muted small\">");
        text(b, lb_doc_str(m->energy.source));
        xpb_text_puts(b, "</span>");
    } else {
        xpb_text_puts(b, "<span class=\"muted small\">not measured</span>");
    }
    xpb_text_puts(b, "</td><td class=\"num\">");
    xpb_format_grouped(b, m->loss.first, 4);
    xpb_text_puts(b, " \xE2\x86\x92 ");
    xpb_format_grouped(b, m->loss.last, 4);
    xpb_text_puts(b, "<br><span class=\"small\">");
    if (!lb_doc_true(run->verification.requested))
        xpb_text_puts(b, "<span class=\"muted\">not verified</span>");
    else if (lb_doc_true(run->verification.verified))
        xpb_text_puts(b, "<span class=\"pill ok\">verified</span>");
    else
        xpb_text_puts(b, "<span class=\"pill bad\">verification failed</span>");
    xpb_text_puts(b, "</span></td></tr>");
}

/* One run of a time-to-accuracy result: its accuracy curve in short. */
static void tta_curve(struct xpb_text *b, const struct xpb_results_tta *t,
                      const struct xpb_results_tta_run *r)
{
    xpb_text_puts(b, "<li>seed ");
    xpb_format_grouped(b, lb_doc_num(r->seed), 0);
    if (r->converged == 1) {
        xpb_text_puts(b, ": reached the target after ");
        xpb_format_grouped(b, r->epochs, 2);
        xpb_text_puts(b, " epochs, ");
        xpb_format_grouped(b, r->seconds, 1);
        xpb_text_puts(b, " s");
        if (r->outside_reference == 1)
            xpb_text_puts(b, " <span class=\"disturbed\" title=\"outside the reference "
                             "convergence point\">!</span>");
    } else if (r->stopped_early) {
        xpb_text_puts(b, ": <span class=\"muted\">stopped early: ");
        xpb_text_puts(b, strcmp(r->stopped_early, "diverged") == 0
                             ? "diverged (its training loss stopped being finite)"
                             : "stalled (at chance accuracy, not learning)");
        xpb_text_puts(b, "</span>");
    } else {
        xpb_text_puts(b, ": <span class=\"muted\">did not reach the target in ");
        xpb_format_grouped(b, lb_doc_num(t->max_epochs), 0);
        xpb_text_puts(b, " epochs</span>");
    }
    const struct xpb_results_tta_point *last = r->n_curve ? &r->curve[r->n_curve - 1] : NULL;
    xpb_text_puts(b, "; final accuracy ");
    xpb_format_grouped(b, r->final_accuracy, 4);
    if (last) {
        xpb_text_puts(b, " at ");
        xpb_format_grouped(b, last->epochs, 2);
        xpb_text_printf(b, " epochs (%zu evaluation%s)", r->n_curve, r->n_curve == 1 ? "" : "s");
    }
    xpb_text_puts(b, "</li>");
}

/* A time-to-accuracy run's cells: its scores to the target and each run's curve in short, where
 * other runs show their throughput (it has none: docs/results.md, "Time to accuracy"). */
static void tta_cells(struct xpb_text *b, const struct xpb_results_run *run)
{
    const struct xpb_results_tta *t = &run->tta;
    xpb_text_puts(b, "<td colspan=\"5\"><b>time to accuracy</b> <span class=\"muted small\">");
    text(b, lb_doc_str(t->dataset));
    xpb_text_printf(b, " \xC2\xB7 target %.4f</span><br>", t->target);
    xpb_text_printf(b, "reached %lld/%lld \xC2\xB7 ", lb_doc_int(t->seconds.converged, 0),
                    lb_doc_int(t->seconds.runs, (long long)t->n_runs));
    if (isnan(t->seconds.mean)) {
        xpb_text_puts(b, "time to target: <span class=\"muted\">not reached</span>");
    } else {
        xpb_text_puts(b, "time to target <b>");
        xpb_format_grouped(b, t->seconds.mean, 1);
        xpb_text_puts(b, " s</b>");
    }
    if (!isnan(t->seconds.min) && !isnan(t->seconds.max)) {
        xpb_text_puts(b, " <span class=\"muted small\">(");
        xpb_format_grouped(b, t->seconds.min, 1);
        xpb_text_puts(b, "\xE2\x80\x93");
        xpb_format_grouped(b, t->seconds.max, 1);
        xpb_text_puts(b, " s)</span>");
    }
    xpb_text_puts(b, " \xC2\xB7 energy ");
    if (isnan(t->joules.mean))
        xpb_text_puts(b, "<span class=\"muted\">not measured</span>");
    else {
        xpb_format_grouped(b, t->joules.mean, 0);
        xpb_text_puts(b, " J");
    }
    xpb_text_puts(b, " \xC2\xB7 median ");
    xpb_format_grouped(b, xpb_results_tta_median_epochs(t), 2);
    xpb_text_puts(b, " epochs");
    if (!isnan(t->reference_epochs)) {
        xpb_text_puts(b, " <span class=\"muted small\">(reference ");
        xpb_format_grouped(b, t->reference_epochs, 2);
        xpb_text_puts(b, ")</span>");
    }
    xpb_text_puts(b, "<ul class=\"small tta-runs\">");
    for (size_t i = 0; i < t->n_runs && i < LIST_SHOWN; i++)
        tta_curve(b, t, &t->runs[i]);
    xpb_text_puts(b, "</ul>");
    more(b, t->n_runs, LIST_SHOWN, "");
    xpb_text_puts(b, "</td></tr>");
}

static void run_row(struct xpb_text *b, const struct xpb_results_run *run, int64_t version)
{
    run_cells(b, run, version);
    if (!run->ok) {
        xpb_text_puts(b, "<td colspan=\"5\" class=\"muted\">");
        xpb_html_cut(b, lb_doc_str(run->error), ERROR_SHOWN);
        xpb_text_puts(b, "</td></tr>");
        return;
    }
    if (xpb_results_run_is_tta(run)) {
        tta_cells(b, run);
        return;
    }
    speed_cells(b, &run->metrics);
    effort_cells(b, run);
}

static void runs_chart(struct xpb_text *b, const struct xpb_results_doc *doc)
{
    struct lb_page_bar bars[MAX_CHART];
    size_t n_bars = 0;
    for (size_t i = 0; i < doc->n_runs && n_bars < MAX_CHART; i++) {
        const struct xpb_results_run *run = &doc->runs[i];
        if (!run->ok || xpb_results_run_is_tta(run)) /* a tta run has no throughput */
            continue;
        bars[n_bars++] = (struct lb_page_bar){lb_doc_str(run->id), NULL, NULL,
                                              lb_doc_kind(run, doc->schema_version),
                                              run->metrics.throughput.median};
    }
    if (n_bars > 0)
        lb_page_bars(b, "runs-chart", "Throughput per run", bars, n_bars);
}

static void comparisons_card(struct xpb_text *b, const struct xpb_results_doc *doc)
{
    if (doc->n_comparisons == 0)
        return;
    xpb_text_puts(b, "<section class=\"card\"><header><h2>Speedups within this submission</h2>"
                     "</header><div class=\"table-wrap\"><table><thead><tr><th>Kind</th>"
                     "<th>Candidate</th><th>Baseline</th><th class=\"num\">Speedup</th>"
                     "<th class=\"num\">95% interval</th></tr></thead><tbody>");
    for (size_t i = 0; i < doc->n_comparisons && i < RUNS_SHOWN; i++) {
        const struct xpb_results_comparison *c = &doc->comparisons[i];
        xpb_text_puts(b, "<tr><td>");
        xpb_html(b, lb_doc_str(c->kind));
        xpb_text_puts(b, "</td><td class=\"mono\">");
        text(b, lb_doc_str(c->candidate));
        xpb_text_puts(b, "</td><td class=\"mono\">");
        text(b, lb_doc_str(c->baseline));
        xpb_text_puts(b, "</td><td class=\"num\">");
        xpb_format_ratio(b, c->speedup);
        xpb_text_puts(b, "</td><td class=\"num\">");
        if (isnan(c->ci95_low)) {
            xpb_text_puts(b, "<span class=\"muted small\">none</span>");
        } else {
            xpb_format_ratio(b, c->ci95_low);
            xpb_text_puts(b, " \xE2\x80\x93 ");
            xpb_format_ratio(b, c->ci95_high);
            if (!lb_doc_true(c->significant))
                xpb_text_puts(b, " <span class=\"muted small\">no significant difference</span>");
        }
        xpb_text_puts(b, "</td></tr>");
    }
    xpb_text_puts(b, "</tbody></table></div>");
    more(b, doc->n_comparisons, RUNS_SHOWN, "");
    xpb_text_puts(b, "</section>");
}

static void runs_card(struct xpb_text *b, const struct xpb_results_doc *doc)
{
    size_t n = doc->n_runs;
    xpb_text_printf(b,
                    "<section class=\"card\"><header><h2>Runs</h2><span class=\"muted small\">"
                    "%zu</span></header>",
                    n);
    runs_chart(b, doc);
    xpb_text_puts(b, "<div class=\"table-wrap\"><table><thead><tr><th>Run</th>"
                     "<th>Model</th><th>Backend \xC2\xB7 device</th><th class=\"num\">Samples/s"
                     "</th><th class=\"num\">Step p50</th><th class=\"num\">Compute \xC2\xB7 "
                     "memory</th><th class=\"num\">Energy</th><th class=\"num\">Loss</th></tr>"
                     "</thead><tbody>");
    for (size_t i = 0; i < n && i < RUNS_SHOWN; i++)
        run_row(b, &doc->runs[i], doc->schema_version);
    xpb_text_puts(b, "</tbody></table></div>");
    more(b, n, RUNS_SHOWN, "");
    xpb_text_puts(b, "</section>");
    comparisons_card(b, doc);
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
    struct xpb_results_doc view;
    if (xpb_results_view(&view, doc) != XPB_OK) {
        lb_page_internal(res, "out of memory reading the document");
        goto done_view;
    }
    struct xpb_text *b = &res->body;
    char title[64];
    snprintf(title, sizeof title, "Submission #%lld", id);
    lb_page_begin(b, title);
    xpb_text_printf(b, "<h1>Submission #%lld</h1><p class=\"lead\">by <b>", id);
    xpb_html(b, info.submitter);
    xpb_text_puts(b, "</b> \xC2\xB7 received ");
    xpb_html(b, info.received);
    xpb_text_printf(b,
                    " \xC2\xB7 results schema version %d \xC2\xB7 <a href=\"/api/v1/results/%lld\">"
                    "results JSON</a></p>",
                    info.schema_version, id);
    xpb_text_puts(b, "<div class=\"grid2\">");
    machine_card(b, &view.environment);
    software_card(b, &view);
    xpb_text_puts(b, "</div>");
    runs_card(b, &view);
    xpb_text_printf(b,
                    "<section class=\"card\"><header><h2>Compare with another submission</h2>"
                    "</header><form class=\"filters\" method=\"get\" action=\"/compare\">"
                    "<input type=\"hidden\" name=\"a\" value=\"%lld\"><label>Submission number"
                    "<input type=\"number\" name=\"b\" min=\"1\" required></label>"
                    "<button type=\"submit\">Compare</button></form>"
                    "<p class=\"muted small\">Content hash <span class=\"mono\">",
                    id);
    xpb_html(b, info.content_hash);
    xpb_text_puts(b, "</span></p></section>");
    lb_page_end(b);
    lb_page_send(res, 200);
done_view:
    xpb_results_view_free(&view);
    json_decref(doc);
}
