/* The JSON API handlers (see lb_api.h). */
#include "lb_api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lb_auth.h"
#include "lb_escape.h"
#include "results.h"

#define LIST_DEFAULT 50
#define LIST_MAX 500

int lb_api_filter(struct lb_filter *f, const struct lb_request *req, const char **bad)
{
    memset(f, 0, sizeof *f);
    static const char *const names[] = {"model", "variant", "mode", "precision", "backend"};
    const char **slots[] = {&f->model, &f->variant, &f->mode, &f->precision, &f->backend};
    for (size_t i = 0; i < 5; i++) {
        const char *v = lb_query(req, names[i]);
        if (v && !*v)
            continue; /* an empty menu choice means any */
        if (v && !lb_is_token_text(v, LB_NAME_MAX)) {
            *bad = names[i];
            return 0;
        }
        *slots[i] = v;
    }
    const char *batch = lb_query(req, "batch");
    if (batch && *batch) {
        char *end;
        long long b = strtoll(batch, &end, 10);
        if (*end || b < 1 || b > 1000000000) {
            *bad = "batch";
            return 0;
        }
        f->batch = b;
    }
    return 1;
}

/* Parses a non-negative integer query parameter; def when absent; -1 when malformed. */
static long long query_count(const struct lb_request *req, const char *key, long long def,
                             long long max)
{
    const char *v = lb_query(req, key);
    if (!v || !*v)
        return def;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end || n < 0 || n > max)
        return -1;
    return n;
}

static int is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return 0;
    for (size_t i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static json_t *json_real_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *run_summary(const struct lb_run_row *r)
{
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:b, s:s, s:s, s:o, s:o, "
        "s:o, s:o, s:o}",
        "run", r->run_id, "status", r->status, "model", r->model, "variant", r->variant, "mode",
        r->mode, "precision", r->precision, "backend", r->backend, "batch", (json_int_t)r->batch,
        "threads", (json_int_t)r->threads, "fusion", r->fusion, "transfer", r->transfer, "device",
        r->device, "throughput", json_real_or_null(r->throughput), "step_time_p50_s",
        json_real_or_null(r->step_p50), "step_time_p95_s", json_real_or_null(r->step_p95),
        "samples_per_joule", json_real_or_null(r->samples_per_joule), "verified",
        r->verified < 0 ? json_null() : json_boolean(r->verified));
}

static void submission_urls(char *page, char *api, size_t cap, const char *base, long long id)
{
    snprintf(page, cap, "%s/submissions/%lld", base, id);
    snprintf(api, cap, "%s/api/v1/results/%lld", base, id);
}

void lb_api_post_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    if (req->body_too_large) {
        lb_respond_error(res, 413, "request body larger than the limit of %zu bytes",
                         app->max_body);
        return;
    }
    if (!req->content_type || strncasecmp(req->content_type, "application/json", 16) != 0 ||
        (req->content_type[16] != '\0' && req->content_type[16] != ';')) {
        lb_respond_error(res, 415, "Content-Type must be application/json");
        return;
    }
    xpb_err err;
    struct lb_db *db = lb_pool_get(app->pool);
    long long token_id;
    char submitter[LB_TOKEN_NAME_MAX + 1];
    xpb_status st = lb_auth_check(&token_id, submitter, db, req->authorization, &err);
    if (st != XPB_OK) {
        if (st == XPB_REJECTED) {
            res->bearer_challenge = 1;
            lb_respond_error(res, 401, "%s", err.msg);
        } else {
            res->retry_after = 5;
            lb_respond_error(res, 503, "%s", err.msg);
        }
        goto done_db;
    }
    long wait_s;
    if (!lb_ratelimit_take(app->limiter, token_id, lb_monotonic_seconds(), &wait_s)) {
        res->retry_after = wait_s;
        lb_respond_error(res, 429, "too many uploads with this token: retry in %ld s", wait_s);
        goto done_db;
    }
    const char *key = req->idempotency_key;
    if (key && !is_hex64(key)) {
        lb_respond_error(res, 400, "Idempotency-Key must be 64 lower-case hex digits (SHA-256)");
        goto done_db;
    }
    if (req->body_len == 0) {
        lb_respond_error(res, 400, "empty body: expected a results document");
        goto done_db;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        lb_respond_error(res, 400, "body is not valid JSON: line %d, column %d: %s", jerr.line,
                         jerr.column, jerr.text);
        goto done_db;
    }
    st = xpb_results_validate(doc, &err);
    if (st != XPB_OK) {
        lb_respond_error(res, 422, "invalid results document: %s", err.msg);
        goto done_doc;
    }
    char *canonical = NULL, hash[65];
    size_t canonical_len;
    st = xpb_results_canonical(&canonical, &canonical_len, hash, doc, &err);
    if (st != XPB_OK) {
        lb_respond_error(res, 500, "%s", err.msg);
        goto done_doc;
    }
    struct lb_submit_result stored;
    st = lb_store_submit(&stored, db, doc, canonical, hash, key, token_id, &err);
    free(canonical);
    if (st == XPB_PARSE_ERROR || st == XPB_REJECTED) {
        lb_respond_error(res, 422, "%s", err.msg);
        goto done_doc;
    }
    if (st != XPB_OK) {
        res->retry_after = 5;
        lb_respond_error(res, 503, "cannot store the submission now: %s", err.msg);
        goto done_doc;
    }
    char base[512], page[700], api[700];
    lb_base_url(base, sizeof base, app, req);
    submission_urls(page, api, sizeof page, base, stored.id);
    snprintf(res->location, sizeof res->location, "/api/v1/results/%lld", stored.id);
    lb_respond_json(res, stored.duplicate ? 200 : 201,
                    json_pack("{s:I, s:s, s:s, s:b, s:s}", "id", (json_int_t)stored.id, "url", page,
                              "api_url", api, "duplicate", stored.duplicate, "content_hash", hash));
done_doc:
    json_decref(doc);
done_db:
    lb_pool_put(app->pool, db);
}

/* 1 when run row r passes filter f. */
static int row_matches(const struct lb_run_row *r, const struct lb_filter *f)
{
    return !strcmp(r->status, "ok") && (!f->model || !strcmp(r->model, f->model)) &&
           (!f->variant || !strcmp(r->variant, f->variant)) &&
           (!f->mode || !strcmp(r->mode, f->mode)) &&
           (!f->precision || !strcmp(r->precision, f->precision)) &&
           (!f->backend || !strcmp(r->backend, f->backend)) &&
           (f->batch <= 0 || r->batch == f->batch);
}

static int filter_any(const struct lb_filter *f)
{
    return f->model || f->variant || f->mode || f->precision || f->backend || f->batch > 0;
}

void lb_api_list_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    struct lb_filter f;
    const char *bad = NULL;
    if (!lb_api_filter(&f, req, &bad)) {
        lb_respond_error(res, 400, "bad value for query parameter '%s'", bad);
        return;
    }
    long long limit = query_count(req, "limit", LIST_DEFAULT, LIST_MAX);
    long long offset = query_count(req, "offset", 0, 1000000000);
    if (limit < 0 || offset < 0) {
        lb_respond_error(res, 400, "limit must be 0..%d and offset a whole number >= 0", LIST_MAX);
        return;
    }
    xpb_err err;
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_submission_info *items = NULL;
    size_t n = 0;
    long long total = 0;
    xpb_status st = lb_store_list(&items, &n, &total, db, &f, (size_t)limit, (size_t)offset, &err);
    if (st != XPB_OK) {
        lb_respond_error(res, 500, "%s", err.msg);
        goto done_db;
    }
    char base[512], page[700], api[700];
    lb_base_url(base, sizeof base, app, req);
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        const struct lb_submission_info *s = &items[i];
        submission_urls(page, api, sizeof page, base, s->id);
        struct lb_run_row *rows = NULL;
        size_t n_rows = 0;
        json_t *runs = json_array();
        if (lb_store_submission_runs(&rows, &n_rows, db, s->id, &err) == XPB_OK) {
            for (size_t k = 0; k < n_rows; k++)
                if (!filter_any(&f) || row_matches(&rows[k], &f))
                    json_array_append_new(runs, run_summary(&rows[k]));
        }
        free(rows);
        json_array_append_new(
            list, json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:o}", "id",
                            (json_int_t)s->id, "url", page, "api_url", api, "received", s->received,
                            "created", s->created, "submitter", s->submitter, "scenario",
                            s->scenario, "os", s->os, "cpu", s->cpu_model, "accelerators",
                            s->accelerators, "n_runs", s->n_runs, "runs", runs));
    }
    res->cache_seconds = 0;
    lb_respond_json(res, 200,
                    json_pack("{s:I, s:I, s:I, s:o}", "total", (json_int_t)total, "limit",
                              (json_int_t)limit, "offset", (json_int_t)offset, "results",
                              list ? list : json_array()));
done_db:
    free(items);
    lb_pool_put(app->pool, db);
}

void lb_api_get_result(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                       long long id)
{
    xpb_err err;
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_submission_info info;
    json_t *doc = NULL;
    xpb_status st = lb_store_submission(&info, &doc, db, id, &err);
    lb_pool_put(app->pool, db);
    if (st == XPB_NOT_FOUND) {
        lb_respond_error(res, 404, "no submission %lld", id);
        return;
    }
    if (st != XPB_OK) {
        lb_respond_error(res, 500, "%s", err.msg);
        return;
    }
    char base[512], page[700], api[700];
    lb_base_url(base, sizeof base, app, req);
    submission_urls(page, api, sizeof page, base, id);
    lb_respond_json(res, 200,
                    json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:o}", "id", (json_int_t)id, "url",
                              page, "api_url", api, "received", info.received, "submitter",
                              info.submitter, "content_hash", info.content_hash, "results", doc));
}
