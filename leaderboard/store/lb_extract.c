/* From a validated results document to the leaderboard's rows, with the leaderboard's own
 * limits on names, texts and runs (see lb_store.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/tta_table.h"
#include "results/view.h"
#include "store/lb_doc.h"
#include "store/lb_store.h"

int lb_kind_is_cpu(const char *device_kind)
{
    return strcmp(device_kind, "cpu") == 0;
}

int lb_is_token_text(const char *s, size_t max_len)
{
    if (!s)
        return 0;
    size_t n = strlen(s);
    if (n == 0 || n > max_len)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              strchr("-_.+/:", c)))
            return 0;
    }
    return 1;
}

/* Copies a name (empty allowed when allow_empty) after checking the naming rule. */
static xpb_status take_name(char *out, size_t cap, const char *s, int allow_empty,
                            const char *where, xpb_err *err)
{
    if (!(allow_empty && !*s) && !lb_is_token_text(s, LB_NAME_MAX))
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "%s: \"%.80s\" is not a leaderboard name (1 to %d letters, digits "
                           "and - _ . + / :)",
                           where, s, LB_NAME_MAX);
    snprintf(out, cap, "%s", s);
    return XPB_OK;
}

/* Copies a free text after checking it is at most `max` bytes (cap must exceed max: a text is
 * refused, never stored truncated). */
static xpb_status take_text(char *out, size_t cap, size_t max, const char *s, const char *where,
                            xpb_err *err)
{
    if (strlen(s) > max)
        return xpb_err_set(err, XPB_PARSE_ERROR, "%s: longer than %zu bytes", where, max);
    snprintf(out, cap, "%s", s);
    return XPB_OK;
}

void lb_extract_run_extras(struct lb_run_row *r, const struct xpb_results_run *run,
                           int schema_version)
{
    static const char *const kinds[] = {"cpu", "gpu", "accelerator", "unknown"};
    const char *kind = schema_version >= 2 ? lb_doc_str(run->device.kind) : "";
    snprintf(r->device_kind, sizeof r->device_kind, "unknown");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kind, kinds[i]))
            snprintf(r->device_kind, sizeof r->device_kind, "%s", kinds[i]);
    int64_t ws = run->config.world_size;
    r->world_size = ws != XPB_RESULTS_NO_INT && ws >= 1 ? ws : 1;
    r->ci_low = run->metrics.throughput.ci95_low;
    r->ci_high = run->metrics.throughput.ci95_high;
    if (isnan(r->ci_low) || isnan(r->ci_high))
        r->ci_low = r->ci_high = NAN;
    r->disturbed = lb_doc_true(run->metrics.interference.flagged);
}

/* The scores of a finished tta run, the dataset's name checked (its numbers were by the caller's
 * lb_plausible). */
static xpb_status take_tta(struct lb_tta_row *out, const struct xpb_results_run *run, size_t index,
                           xpb_err *err)
{
    memset(out, 0, sizeof *out);
    if (!xpb_results_run_is_tta(run) || strcmp(lb_doc_str(run->config.mode), "tta") != 0)
        return XPB_OK;
    const struct xpb_results_tta *t = &run->tta;
    char where[64];
    snprintf(where, sizeof where, "runs[%zu].tta.dataset", index);
    xpb_status st =
        take_name(out->dataset, sizeof out->dataset, lb_doc_str(t->dataset), 0, where, err);
    if (st != XPB_OK)
        return st;
    out->has = 1;
    out->target = t->target;
    out->seconds = t->seconds.mean;
    out->seconds_min = t->seconds.min;
    out->seconds_max = t->seconds.max;
    out->joules = t->joules.mean;
    out->epochs = xpb_results_tta_median_epochs(t);
    out->reference_epochs = t->reference_epochs;
    out->converged = lb_doc_int(t->seconds.converged, 0);
    out->runs = lb_doc_int(t->seconds.runs, (long long)t->n_runs);
    out->outside = (long long)xpb_results_tta_outside(t);
    return XPB_OK;
}

xpb_status lb_extract_tta(struct lb_tta_row *out, const struct xpb_results_run *run, size_t index,
                          xpb_err *err)
{
    memset(out, 0, sizeof *out);
    xpb_status st = lb_plausible(run, index, err);
    return st != XPB_OK ? st : take_tta(out, run, index, err);
}

static xpb_status extract_run(struct lb_run_row *r, const struct xpb_results_run *run, size_t i,
                              int version, xpb_err *err)
{
    char where[96];
    const struct xpb_results_config *config = &run->config;
    const struct xpb_results_metrics *metrics = &run->metrics;
    xpb_status st;
    r->run_index = (int)i;
#define WHERE(field) (snprintf(where, sizeof where, "runs[%zu].%s", i, field), where)
    if ((st = take_text(r->run_id, sizeof r->run_id, LB_TEXT_MAX, lb_doc_str(run->id), WHERE("id"),
                        err)) ||
        (st = take_name(r->model, sizeof r->model, lb_doc_str(config->model), 0,
                        WHERE("config.model"), err)) ||
        (st = take_name(r->variant, sizeof r->variant, lb_doc_str(config->variant), 1,
                        WHERE("config.variant"), err)) ||
        (st = take_name(r->backend, sizeof r->backend, lb_doc_str(config->backend), 0,
                        WHERE("config.backend"), err)) ||
        (st = take_text(r->device, sizeof r->device, LB_TEXT_MAX, lb_doc_str(run->device.name),
                        WHERE("device.name"), err)) ||
        (st = lb_plausible(run, i, err)))
        return st;
#undef WHERE
    snprintf(r->status, sizeof r->status, "%s", lb_doc_str(run->status));
    snprintf(r->mode, sizeof r->mode, "%s", lb_doc_str(config->mode));
    snprintf(r->precision, sizeof r->precision, "%s", lb_doc_str(config->precision));
    snprintf(r->transfer, sizeof r->transfer, "%s", lb_doc_str(config->transfer));
    r->batch = lb_doc_int(config->batch, 0);
    r->threads = lb_doc_int(config->threads, 0);
    r->fusion = lb_doc_true(config->fusion);
    lb_extract_run_extras(r, run, version);

    r->throughput = metrics->throughput.median;
    r->step_p50 = metrics->step_time_s.p50;
    r->step_p95 = metrics->step_time_s.p95;
    r->flops_per_s = metrics->flops_per_s;
    r->energy_measured = lb_doc_true(metrics->energy.measured);
    r->samples_per_joule = r->energy_measured ? metrics->energy.samples_per_joule : NAN;

    if (!lb_doc_true(run->verification.requested))
        r->verified = -1;
    else
        r->verified = lb_doc_true(run->verification.verified);
    if (!strcmp(r->mode, "tta")) /* never a throughput: its step rate is not what it measures */
        r->throughput = r->step_p50 = r->step_p95 = r->flops_per_s = r->samples_per_joule =
            r->ci_low = r->ci_high = NAN;
    return take_tta(&r->tta, run, i, err);
}

/* The submission's own texts (tool, scenario, machine). */
static xpb_status extract_info(struct lb_submission_info *info, const struct xpb_results_doc *doc,
                               xpb_err *err)
{
    const struct xpb_results_environment *env = &doc->environment;
    xpb_status st;
    if ((st = take_text(info->tool_version, sizeof info->tool_version, LB_NAME_MAX,
                        lb_doc_str(doc->tool_version), "tool.version", err)) ||
        (st = take_text(info->scenario, sizeof info->scenario, LB_TEXT_MAX,
                        lb_doc_str(doc->scenario.name), "scenario.name", err)) ||
        (st = take_text(info->os, sizeof info->os, LB_TEXT_MAX, lb_doc_str(env->os),
                        "environment.os", err)) ||
        (st = take_text(info->cpu_model, sizeof info->cpu_model, LB_TEXT_MAX,
                        lb_doc_str(env->cpu.model), "environment.cpu.model", err)))
        return st;
    snprintf(info->created, sizeof info->created, "%s", lb_doc_str(doc->created));
    info->schema_version = (int)lb_doc_int(doc->schema_version, 0);

    size_t used = 0;
    for (size_t i = 0; i < env->n_accelerators; i++) {
        const char *name = lb_doc_str(env->accelerators[i].name);
        size_t need = strlen(name) + (used ? 2 : 0);
        if (used + need > LB_TEXT_MAX)
            return xpb_err_set(err, XPB_PARSE_ERROR,
                               "environment.accelerators: names longer than %d bytes together",
                               LB_TEXT_MAX);
        used += (size_t)snprintf(info->accelerators + used, sizeof info->accelerators - used,
                                 "%s%s", used ? ", " : "", name);
    }
    return XPB_OK;
}

/* lb_extract on the document's view. */
static xpb_status extract_doc(struct lb_submission_info *info, struct lb_run_row **rows_out,
                              size_t *n_out, const struct xpb_results_doc *doc, size_t max_runs,
                              xpb_err *err)
{
    xpb_status st = extract_info(info, doc, err);
    if (st != XPB_OK)
        return st;
    size_t n = doc->n_runs;
    info->n_runs = (int)(n < (size_t)0x7fffffff ? n : 0x7fffffff);
    if (n == 0)
        return xpb_err_set(err, XPB_PARSE_ERROR, "runs: a submission needs at least one run");
    if (n > max_runs)
        return xpb_err_set(err, XPB_PARSE_ERROR,
                           "runs: %zu runs; a submission holds at most %zu (split the results "
                           "into several files)",
                           n, max_runs);
    struct lb_run_row *rows = calloc(n, sizeof *rows);
    if (!rows)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        st = extract_run(&rows[i], &doc->runs[i], i, info->schema_version, err);
        if (st != XPB_OK) {
            free(rows);
            return st;
        }
    }
    *rows_out = rows;
    *n_out = n;
    return XPB_OK;
}

xpb_status lb_extract(struct lb_submission_info *info, struct lb_run_row **rows_out, size_t *n_out,
                      const json_t *doc, size_t max_runs, xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    memset(info, 0, sizeof *info);
    struct xpb_results_doc view;
    xpb_status st = xpb_results_view(&view, doc);
    if (st != XPB_OK)
        st = xpb_err_set(err, st, "out of memory");
    else
        st = extract_doc(info, rows_out, n_out, &view, max_runs, err);
    xpb_results_view_free(&view);
    return st;
}
