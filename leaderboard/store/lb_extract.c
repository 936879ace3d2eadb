/* From a validated results document to the leaderboard's rows, with the leaderboard's own
 * limits on names, texts and runs (see lb_store.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void lb_extract_run_extras(struct lb_run_row *r, const json_t *run, int schema_version)
{
    static const char *const kinds[] = {"cpu", "gpu", "accelerator", "unknown"};
    const char *kind =
        schema_version >= 2 ? lb_doc_str(json_object_get(run, "device"), "kind") : "";
    snprintf(r->device_kind, sizeof r->device_kind, "unknown");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kind, kinds[i]))
            snprintf(r->device_kind, sizeof r->device_kind, "%s", kinds[i]);
    const json_t *ws = json_object_get(json_object_get(run, "config"), "world_size");
    r->world_size = json_is_integer(ws) && json_integer_value(ws) >= 1 ? json_integer_value(ws) : 1;
    const json_t *tp = json_object_get(json_object_get(run, "metrics"), "throughput");
    r->ci_low = lb_doc_num(tp, "ci95_low");
    r->ci_high = lb_doc_num(tp, "ci95_high");
    if (isnan(r->ci_low) || isnan(r->ci_high))
        r->ci_low = r->ci_high = NAN;
    r->disturbed = json_is_true(json_object_get(
        json_object_get(json_object_get(run, "metrics"), "interference"), "flagged"));
}

static xpb_status extract_run(struct lb_run_row *r, const json_t *run, size_t i, int version,
                              xpb_err *err)
{
    char where[96];
    const json_t *config = json_object_get(run, "config");
    const json_t *metrics = json_object_get(run, "metrics");
    const json_t *device = json_object_get(run, "device");
    xpb_status st;
    r->run_index = (int)i;
#define WHERE(field) (snprintf(where, sizeof where, "runs[%zu].%s", i, field), where)
    if ((st = take_text(r->run_id, sizeof r->run_id, LB_TEXT_MAX, lb_doc_str(run, "id"),
                        WHERE("id"), err)) ||
        (st = take_name(r->model, sizeof r->model, lb_doc_str(config, "model"), 0,
                        WHERE("config.model"), err)) ||
        (st = take_name(r->variant, sizeof r->variant, lb_doc_str(config, "variant"), 1,
                        WHERE("config.variant"), err)) ||
        (st = take_name(r->backend, sizeof r->backend, lb_doc_str(config, "backend"), 0,
                        WHERE("config.backend"), err)) ||
        (st = take_text(r->device, sizeof r->device, LB_TEXT_MAX, lb_doc_str(device, "name"),
                        WHERE("device.name"), err)) ||
        (st = lb_plausible(run, i, err)))
        return st;
#undef WHERE
    snprintf(r->status, sizeof r->status, "%s", lb_doc_str(run, "status"));
    snprintf(r->mode, sizeof r->mode, "%s", lb_doc_str(config, "mode"));
    snprintf(r->precision, sizeof r->precision, "%s", lb_doc_str(config, "precision"));
    snprintf(r->transfer, sizeof r->transfer, "%s", lb_doc_str(config, "transfer"));
    r->batch = json_integer_value(json_object_get(config, "batch"));
    r->threads = json_integer_value(json_object_get(config, "threads"));
    r->fusion = json_is_true(json_object_get(config, "fusion"));
    lb_extract_run_extras(r, run, version);

    const json_t *tp = json_object_get(metrics, "throughput");
    const json_t *step = json_object_get(metrics, "step_time_s");
    const json_t *energy = json_object_get(metrics, "energy");
    r->throughput = lb_doc_num(tp, "median");
    r->step_p50 = lb_doc_num(step, "p50");
    r->step_p95 = lb_doc_num(step, "p95");
    r->flops_per_s = lb_doc_num(metrics, "flops_per_s");
    r->energy_measured = json_is_true(json_object_get(energy, "measured"));
    r->samples_per_joule = r->energy_measured ? lb_doc_num(energy, "samples_per_joule") : NAN;

    const json_t *ver = json_object_get(run, "verification");
    if (!json_is_true(json_object_get(ver, "requested")))
        r->verified = -1;
    else
        r->verified = json_is_true(json_object_get(ver, "verified"));
    return XPB_OK;
}

/* The submission's own texts (tool, scenario, machine). */
static xpb_status extract_info(struct lb_submission_info *info, const json_t *doc, xpb_err *err)
{
    const json_t *env = json_object_get(doc, "environment");
    const json_t *tool = json_object_get(doc, "tool");
    const json_t *scenario = json_object_get(doc, "scenario");
    xpb_status st;
    if ((st = take_text(info->tool_version, sizeof info->tool_version, LB_NAME_MAX,
                        lb_doc_str(tool, "version"), "tool.version", err)) ||
        (st = take_text(info->scenario, sizeof info->scenario, LB_TEXT_MAX,
                        lb_doc_str(scenario, "name"), "scenario.name", err)) ||
        (st = take_text(info->os, sizeof info->os, LB_TEXT_MAX, lb_doc_str(env, "os"),
                        "environment.os", err)) ||
        (st = take_text(info->cpu_model, sizeof info->cpu_model, LB_TEXT_MAX,
                        lb_doc_str(json_object_get(env, "cpu"), "model"), "environment.cpu.model",
                        err)))
        return st;
    snprintf(info->created, sizeof info->created, "%s", lb_doc_str(doc, "created"));
    info->schema_version = (int)json_integer_value(json_object_get(doc, "schema_version"));

    const json_t *accs = json_object_get(env, "accelerators");
    size_t used = 0;
    for (size_t i = 0; i < json_array_size(accs); i++) {
        const char *name = lb_doc_str(json_array_get(accs, i), "name");
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

xpb_status lb_extract(struct lb_submission_info *info, struct lb_run_row **rows_out, size_t *n_out,
                      const json_t *doc, size_t max_runs, xpb_err *err)
{
    *rows_out = NULL;
    *n_out = 0;
    memset(info, 0, sizeof *info);
    xpb_status st = extract_info(info, doc, err);
    if (st != XPB_OK)
        return st;
    const json_t *runs = json_object_get(doc, "runs");
    size_t n = json_array_size(runs);
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
        st = extract_run(&rows[i], json_array_get(runs, i), i, info->schema_version, err);
        if (st != XPB_OK) {
            free(rows);
            return st;
        }
    }
    *rows_out = rows;
    *n_out = n;
    return XPB_OK;
}
