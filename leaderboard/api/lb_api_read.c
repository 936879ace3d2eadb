/* The reading side of the JSON API (see lb_api.h). Every answer is bounded: a list holds at
 * most LIST_MAX submissions with at most LIST_RUNS runs each, and a submission's document is
 * served as the canonical text that was stored (compact, at most the body limit), never
 * re-serialised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/lb_api.h"
#include "service/lb_filter.h"

#define LIST_DEFAULT 50
#define LIST_MAX 100
#define LIST_RUNS 64
/* what one submission of a list takes at most, about (64 runs of some 600 bytes and the
 * submission's fields), and the envelope of a stored document: the sizes an answer is known
 * not to pass before it is built (lb_answer_fits) */
#define LIST_ITEM_BYTES (LIST_RUNS * 600 + 2048)
#define ENVELOPE_BYTES 4096
/* a list of more submissions is built off the connection threads (lb_response.defer): each
 * costs a query and a few dozen JSON values per run */
#define LIST_INLINE 10

static json_t *json_real_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *run_summary(const struct lb_run_row *r)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:b, s:s, s:s, s:s, s:o, s:o, s:o, "
        "s:o, s:o, s:o, s:o}",
        "run", r->run_id, "status", r->status, "model", r->model, "variant", r->variant, "mode",
        r->mode, "precision", r->precision, "backend", r->backend, "batch", (json_int_t)r->batch,
        "threads", (json_int_t)r->threads, "world_size", (json_int_t)r->world_size, "fusion",
        r->fusion, "transfer", r->transfer, "device", r->device, "device_kind", r->device_kind,
        "throughput", json_real_or_null(r->throughput), "throughput_ci95_low",
        json_real_or_null(r->ci_low), "throughput_ci95_high", json_real_or_null(r->ci_high),
        "step_time_p50_s", json_real_or_null(r->step_p50), "step_time_p95_s",
        json_real_or_null(r->step_p95), "samples_per_joule",
        json_real_or_null(r->samples_per_joule), "verified",
        r->verified < 0 ? json_null() : json_boolean(r->verified));
    return o ? o : json_null();
}

/* One submission of the list, with its matching runs (at most LIST_RUNS). */
static json_t *list_item(struct lb_db *db, const struct lb_submission_info *s,
                         const struct lb_filter *f, const char *base)
{
    char page[700], api[700];
    lb_submission_urls(page, api, sizeof page, base, s->id);
    struct lb_run_row *rows = NULL;
    size_t n_rows = 0;
    xpb_err err;
    json_t *runs = json_array();
    int cut = 0;
    if (lb_store_submission_runs(&rows, &n_rows, db, s->id, f, LIST_RUNS + 1, &err) == XPB_OK) {
        cut = n_rows > LIST_RUNS;
        for (size_t k = 0; k < n_rows && k < LIST_RUNS; k++)
            json_array_append_new(runs, run_summary(&rows[k]));
    }
    free(rows);
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:b}",
                          "id", (json_int_t)s->id, "url", page, "api_url", api, "received",
                          s->received, "created", s->created, "submitter", s->submitter, "scenario",
                          s->scenario, "os", s->os, "cpu", s->cpu_model, "accelerators",
                          s->accelerators, "schema_version", s->schema_version, "n_runs", s->n_runs,
                          "runs", runs ? runs : json_array(), "runs_truncated", cut);
    return o ? o : json_null();
}

void lb_api_list_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    struct lb_filter f;
    const char *bad = NULL;
    if (!lb_filter_from_query(&f, req, &bad)) {
        lb_respond_error(res, 400, "bad value for query parameter '%s'", bad);
        return;
    }
    long long limit = lb_query_count(req, "limit", LIST_DEFAULT, LIST_MAX);
    long long offset = lb_query_count(req, "offset", 0, 1000000000);
    if (limit < 0 || offset < 0) {
        lb_respond_error(res, 400, "limit must be 0..%d and offset a whole number >= 0", LIST_MAX);
        return;
    }
    if (!lb_answer_fits(req, (size_t)limit * LIST_ITEM_BYTES, res))
        return;
    if (req->may_defer && limit > LIST_INLINE) {
        res->retry_after = 2; /* the answer when no render thread can take it */
        lb_respond_error(res, 503, "the service is busy: retry in a moment");
        res->defer = 1;
        return;
    }
    xpb_err err;
    struct lb_db *db = lb_pool_get(app->pool);
    struct lb_submission_info *items = NULL;
    size_t n = 0;
    long long total = 0;
    if (lb_store_list(&items, &n, &total, db, &f, (size_t)limit, (size_t)offset, &err) != XPB_OK) {
        lb_respond_internal(res, 500, 0, "internal error: the list cannot be read now", err.msg);
        goto done_db;
    }
    char base[512];
    lb_base_url(base, sizeof base, app, req);
    /* written one submission at a time: the answer's text is all that is held, never the
     * JSON values of a hundred submissions' runs at once */
    struct xpb_text *b = &res->body;
    res->status = 200;
    res->content_type = "application/json; charset=utf-8";
    xpb_text_printf(b, "{\"total\":%lld,\"limit\":%lld,\"offset\":%lld,\"results\":[", total, limit,
                    offset);
    for (size_t i = 0; i < n && !b->failed; i++) {
        json_t *item = list_item(db, &items[i], &f, base);
        if (i)
            xpb_text_puts(b, ",");
        lb_text_json(b, item);
        json_decref(item);
    }
    xpb_text_puts(b, "]}\n");
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
    struct xpb_text *b = &res->body;
    long long bytes = 0;
    xpb_status st = req->answers_bounded ? lb_store_document_bytes(&bytes, db, id, &err) : XPB_OK;
    if (st == XPB_OK && !lb_answer_fits(req, (size_t)bytes + ENVELOPE_BYTES, res)) {
        lb_pool_put(app->pool, db); /* refused before the document is read */
        return;
    }
    if (st == XPB_OK)
        st = lb_store_submission(&info, b, db, id, &err); /* the text, into the answer */
    lb_pool_put(app->pool, db);
    if (st == XPB_NOT_FOUND) {
        lb_respond_error(res, 404, "no submission %lld", id);
        return;
    }
    if (st != XPB_OK) {
        lb_respond_internal(res, 500, 0, "internal error: the submission cannot be read now",
                            err.msg);
        return;
    }
    char base[512], page[700], api[700];
    lb_base_url(base, sizeof base, app, req);
    lb_submission_urls(page, api, sizeof page, base, id);
    /* the envelope around the stored text as it is: no parse, no re-serialisation, and no copy
     * of the text (up to --max-body) but the one read from the database */
    json_t *envelope = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s}", "id", (json_int_t)id, "url",
                                 page, "api_url", api, "received", info.received, "submitter",
                                 info.submitter, "content_hash", info.content_hash);
    struct xpb_text head = {0};
    if (envelope)
        lb_text_json(&head, envelope);
    json_decref(envelope);
    if (!envelope || head.failed || head.len < 2) {
        xpb_text_free(&head);
        lb_respond_error(res, 500, "out of memory");
        return;
    }
    head.len--; /* without the closing brace */
    xpb_text_puts(&head, ",\"results\":");
    xpb_text_insert(b, 0, head.data, head.len);
    xpb_text_puts(b, "}\n");
    xpb_text_free(&head);
    res->status = 200;
    res->content_type = "application/json; charset=utf-8";
}

void lb_api_token(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    xpb_err err;
    long long token_id;
    char name[LB_TOKEN_NAME_MAX + 1];
    struct lb_db *db = lb_pool_get(app->pool);
    xpb_status st = lb_auth_check(&token_id, name, db, req->authorization, &err);
    lb_pool_put(app->pool, db);
    if (st == XPB_REJECTED) {
        res->bearer_challenge = 1;
        lb_respond_error(res, 401, "%s", err.msg);
    } else if (st != XPB_OK) {
        lb_respond_internal(res, 503, 5,
                            "the service cannot check tokens now: retry in a few "
                            "seconds",
                            err.msg);
    } else {
        lb_respond_json(res, 200, json_pack("{s:s}", "submitter", name));
    }
}
