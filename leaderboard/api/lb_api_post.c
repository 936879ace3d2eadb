/* POST /api/v1/results: admission from the headers, then the body (see lb_api.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/lb_api.h"
#include "api/lb_json_shape.h"
#include "base/clock.h"
#include "results/results.h"

/* Retry-After of a token over its daily quota, and of a full upload budget. */
#define QUOTA_RETRY_S 3600
#define BUDGET_RETRY_S 5

static int is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return 0;
    for (size_t i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int json_content_type(const char *ct)
{
    return ct && strncasecmp(ct, "application/json", 16) == 0 && (ct[16] == '\0' || ct[16] == ';');
}

/* 413: the body (announced or received) is over the limit. */
static void refuse_too_large(struct lb_response *res, const struct lb_app *app)
{
    lb_respond_error(res, 413, "request body larger than the limit of %zu bytes", app->max_body);
}

/* 429: the token stored `count` submissions in the last 24 hours, its daily quota. */
static void refuse_over_quota(struct lb_response *res, long long count)
{
    res->retry_after = QUOTA_RETRY_S;
    lb_respond_error(res, 429,
                     "this token stored %lld submissions in the last 24 hours, its daily limit: "
                     "retry later",
                     count);
}

/* The token's checks: who it is, its rate and its quota. 1 when they pass. */
static int admit_token(struct lb_admission *a, struct lb_app *app, const struct lb_request *req,
                       struct lb_response *res)
{
    xpb_err err;
    struct lb_db *db = lb_pool_get(app->pool);
    int ok = 0;
    xpb_status st = lb_auth_check(&a->token_id, a->submitter, db, req->authorization, &err);
    if (st == XPB_REJECTED) {
        res->bearer_challenge = 1;
        lb_respond_error(res, 401, "%s", err.msg);
        goto done_db;
    }
    long wait_s;
    long long recent = 0;
    if (st == XPB_OK && !lb_ratelimit_take(app->limiter, a->token_id, xpb_now(), &wait_s)) {
        res->retry_after = wait_s;
        lb_respond_error(res, 429, "too many uploads with this token: retry in %ld s", wait_s);
        goto done_db;
    }
    if (st == XPB_OK && app->submit.max_per_day > 0)
        st = lb_store_recent(&recent, db, a->token_id, &err);
    if (st != XPB_OK) {
        lb_respond_internal(res, 503, BUDGET_RETRY_S,
                            "the service cannot check uploads now: retry in a few seconds",
                            err.msg);
        goto done_db;
    }
    if (app->submit.max_per_day > 0 && recent >= app->submit.max_per_day) {
        refuse_over_quota(res, recent);
        goto done_db;
    }
    ok = 1;
done_db:
    lb_pool_put(app->pool, db);
    return ok;
}

int lb_api_admit(struct lb_admission *a, struct lb_app *app, const struct lb_request *req,
                 struct lb_response *res)
{
    memset(a, 0, sizeof *a);
    if (req->body_too_large ||
        (req->content_length >= 0 && (unsigned long long)req->content_length > app->max_body)) {
        refuse_too_large(res, app);
        return 0;
    }
    if (!json_content_type(req->content_type)) {
        lb_respond_error(res, 415, "Content-Type must be application/json");
        return 0;
    }
    if (req->idempotency_key && !is_hex64(req->idempotency_key)) {
        lb_respond_error(res, 400, "Idempotency-Key must be 64 lower-case hex digits (SHA-256)");
        return 0;
    }
    if (!admit_token(a, app, req, res))
        return 0;
    size_t need = req->content_length >= 0 ? (size_t)req->content_length : app->max_body;
    if (app->uploads && !lb_budget_take(app->uploads, need)) {
        res->retry_after = BUDGET_RETRY_S;
        lb_respond_error(res, 503,
                         "the service is receiving too many uploads at once: retry in "
                         "a few seconds");
        return 0;
    }
    a->reserved = app->uploads ? need : 0;
    return 1;
}

void lb_api_release(struct lb_app *app, struct lb_admission *a)
{
    if (app->uploads && a->reserved)
        lb_budget_give(app->uploads, a->reserved);
    a->reserved = 0;
}

/* The body as a valid results document (new reference, caller decrefs), or NULL with the
 * refusal in res. Its shape is measured before it is parsed. */
static json_t *parse_body(const struct lb_request *req, struct lb_response *res)
{
    struct lb_json_shape shape;
    enum lb_json_verdict v =
        lb_json_shape(&shape, req->body, req->body_len, LB_MAX_DEPTH, LB_MAX_NODES);
    if (v != LB_JSON_WITHIN) {
        if (v == LB_JSON_TOO_DEEP)
            lb_respond_error(res, 422,
                             "invalid results document: nested deeper than %d levels (extra "
                             "included)",
                             LB_MAX_DEPTH);
        else
            lb_respond_error(res, 422,
                             "invalid results document: more than %d values and keys (split "
                             "the results into several files)",
                             LB_MAX_NODES);
        return NULL;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        lb_respond_error(res, 400, "body is not valid JSON: line %d, column %d: %s", jerr.line,
                         jerr.column, jerr.text);
        return NULL;
    }
    xpb_err err;
    if (xpb_results_validate(doc, &err) != XPB_OK) {
        lb_respond_error(res, 422, "invalid results document: %s", err.msg);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* The answer to a stored or recognised submission. */
static void respond_stored(struct lb_app *app, const struct lb_request *req,
                           struct lb_response *res, const struct lb_submit_result *stored,
                           const char *hash)
{
    char base[512], page[700], api[700];
    lb_base_url(base, sizeof base, app, req);
    lb_submission_urls(page, api, sizeof page, base, stored->id);
    int duplicate = stored->outcome == LB_SUBMIT_DUPLICATE;
    snprintf(res->location, sizeof res->location, "/api/v1/results/%lld", stored->id);
    lb_respond_json(res, duplicate ? 200 : 201,
                    json_pack("{s:I, s:s, s:s, s:b, s:s}", "id", (json_int_t)stored->id, "url",
                              page, "api_url", api, "duplicate", duplicate, "content_hash", hash));
}

/* Stores a parsed document for token a->token_id and answers. */
static void store(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                  const json_t *doc, const struct lb_admission *a)
{
    xpb_err err;
    char *canonical = NULL, hash[65];
    size_t len;
    if (xpb_results_canonical(&canonical, &len, hash, doc, &err) != XPB_OK) {
        lb_respond_internal(res, 500, 0, "internal error: the document cannot be stored", err.msg);
        return;
    }
    if (len > app->max_body) { /* reals re-printed with 17 digits can grow a body */
        lb_respond_error(res, 413,
                         "the document's canonical text is %zu bytes, more than the limit of %zu",
                         len, app->max_body);
        free(canonical);
        return;
    }
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_submit_result stored;
    xpb_status st = lb_store_submit(&stored, db, doc, canonical, hash, req->idempotency_key,
                                    a->token_id, &app->submit, &err);
    lb_pool_put(app->pool, db);
    free(canonical);
    if (st == XPB_PARSE_ERROR || st == XPB_REJECTED) {
        lb_respond_error(res, 422, "%s", err.msg);
    } else if (st != XPB_OK) {
        lb_respond_internal(res, 503, BUDGET_RETRY_S,
                            "cannot store the submission now (nothing was stored): retry in a "
                            "few seconds",
                            err.msg);
    } else if (stored.outcome == LB_SUBMIT_OVER_QUOTA) {
        refuse_over_quota(res, app->submit.max_per_day);
    } else {
        if (stored.outcome == LB_SUBMIT_STORED)
            atomic_fetch_add(&app->generation, 1); /* cached pages are out of date */
        respond_stored(app, req, res, &stored, hash);
    }
}

void lb_api_post_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    struct lb_admission local;
    const struct lb_admission *a = req->admission;
    if (!a) { /* not admitted by the server (the tests drive the router directly) */
        if (!lb_api_admit(&local, app, req, res))
            return;
        a = &local;
    }
    if (req->body_too_large) {
        refuse_too_large(res, app);
    } else if (req->body_len == 0) {
        lb_respond_error(res, 400, "empty body: expected a results document");
    } else {
        json_t *doc = parse_body(req, res);
        if (doc)
            store(app, req, res, doc, a);
        json_decref(doc);
    }
    if (a == &local)
        lb_api_release(app, &local);
}
