/* The leaderboard's modules in-process: escaping, formatting, charts, rate limits, tokens,
 * migrations, storage, and the API and pages driven through the router with crafted
 * requests (no network). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lb_api.h"
#include "lb_router.h"
#include "lb_auth.h"
#include "lb_escape.h"
#include "lb_format.h"
#include "lb_migrate.h"
#include "lb_ratelimit.h"
#include "lb_store.h"
#include "lb_svg.h"
#include "lbt_support.h"
#include "results.h"
#include "upload.h"

/* ---- helpers ---- */

static char *html(const char *s)
{
    struct lb_buf b = {0};
    lb_buf_html(&b, s);
    return lb_buf_take(&b, NULL);
}

/* A fresh service on a temporary database, with one token. */
struct fixture {
    char dir[256], db_path[512];
    struct lb_app app;
    char token[LB_TOKEN_LEN + 1];
    char auth[LB_TOKEN_LEN + 16];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(lbt_tempdir(f->dir, sizeof f->dir, "lbunit"), 0);
    snprintf(f->db_path, sizeof f->db_path, "%s/lb.sqlite3", f->dir);
    xpb_err err;
    assert_int_equal(lb_pool_open(&f->app.pool, f->db_path, 2, &err), XPB_OK);
    f->app.limiter = lb_ratelimit_new(0, 1);
    f->app.max_body = 1 << 20;
    f->app.public_url = "https://lb.example";
    struct lb_db *db = lb_pool_get(f->app.pool);
    assert_int_equal(lb_auth_create(f->token, db, "alice", &err), XPB_OK);
    lb_pool_put(f->app.pool, db);
    snprintf(f->auth, sizeof f->auth, "Bearer %s", f->token);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    lb_ratelimit_free(f->app.limiter);
    lb_pool_close(f->app.pool);
    lbt_rmtree(f->dir);
    free(f);
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Splits "path?k=v&k2=v2" into req (percent-decoding into `store`). */
static void parse_target(struct lb_request *req, char *store, size_t cap, const char *target)
{
    size_t j = 0;
    char *path = store;
    const char *p = target;
    while (*p && *p != '?' && j + 1 < cap)
        store[j++] = *p++;
    store[j++] = '\0';
    req->path = path;
    req->n_query = 0;
    if (*p != '?')
        return;
    p++;
    while (*p && req->n_query < LB_MAX_QUERY) {
        char *key = store + j;
        while (*p && *p != '=' && *p != '&')
            store[j++] = *p++;
        store[j++] = '\0';
        char *value = store + j;
        if (*p == '=') {
            p++;
            while (*p && *p != '&') {
                if (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
                    store[j++] = (char)(hexval(p[1]) * 16 + hexval(p[2]));
                    p += 3;
                } else {
                    store[j++] = *p == '+' ? ' ' : *p;
                    p++;
                }
            }
        }
        store[j++] = '\0';
        req->query[req->n_query].key = key;
        req->query[req->n_query].value = value;
        req->n_query++;
        if (*p == '&')
            p++;
    }
}

struct answer {
    int status;
    char *body;
    struct lb_response res;
};

static void request(struct answer *a, struct fixture *f, const char *method, const char *target,
                    const char *auth, const char *body)
{
    static char store[4096];
    struct lb_request req;
    memset(&req, 0, sizeof req);
    parse_target(&req, store, sizeof store, target);
    req.method = method;
    req.authorization = auth;
    req.content_type = body ? "application/json" : NULL;
    req.host = "127.0.0.1:1234";
    req.https = 1;
    req.body = body ? body : "";
    req.body_len = body ? strlen(body) : 0;
    req.client = "127.0.0.1";
    memset(&a->res, 0, sizeof a->res);
    lb_route(&f->app, &req, &a->res);
    a->status = a->res.status;
    a->body = lb_buf_take(&a->res.body, NULL);
    assert_non_null(a->body);
}

static void post_doc(struct answer *a, struct fixture *f, json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    request(a, f, "POST", "/api/v1/results", f->auth, text);
    free(text);
}

static long long total(struct fixture *f)
{
    struct lb_db *db = lb_pool_get(f->app.pool);
    struct lb_submission_info *items;
    size_t n;
    long long t = -1;
    xpb_err err;
    assert_int_equal(lb_store_list(&items, &n, &t, db, NULL, 0, 0, &err), XPB_OK);
    free(items);
    lb_pool_put(f->app.pool, db);
    return t;
}

/* ---- pure modules ---- */

static void test_escape(void **state)
{
    (void)state;
    char *s = html("<script>alert('x')</script>&\"");
    assert_string_equal(s, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
    free(s);
    s = html("a\x01"
             "b\tc\xff"
             "d \xc3\xbc");
    assert_string_equal(s, "ab\tc\xEF\xBF\xBD"
                           "d \xc3\xbc");
    free(s);
    s = html("\xed\xa0\x80"); /* a UTF-16 surrogate: not valid UTF-8 */
    assert_string_equal(s, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    free(s);
    struct lb_buf b = {0};
    lb_buf_url(&b, "a b/\xc3\xbc&x=\"");
    assert_string_equal(b.data, "a%20b%2F%C3%BC%26x%3D%22");
    lb_buf_free(&b);
    assert_true(lb_is_token_text("resnet18", 64));
    assert_true(lb_is_token_text("bf16-mixed", 64));
    assert_false(lb_is_token_text("", 64));
    assert_false(lb_is_token_text("a b", 64));
    assert_false(lb_is_token_text("<x>", 64));
    assert_false(lb_is_token_text("abcdef", 5));
}

static void test_format(void **state)
{
    (void)state;
    struct lb_buf b = {0};
    lb_fmt_num(&b, 1234567.891, 1);
    assert_string_equal(b.data, "1,234,567.9");
    lb_buf_free(&b);
    lb_fmt_num(&b, 999, 0);
    assert_string_equal(b.data, "999");
    lb_buf_free(&b);
    lb_fmt_num(&b, NAN, 1);
    assert_string_equal(b.data, "\xE2\x80\x94");
    lb_buf_free(&b);
    lb_fmt_ms(&b, 0.01234);
    assert_string_equal(b.data, "12.3 ms");
    lb_buf_free(&b);
    lb_fmt_si(&b, 1.5e12, "FLOP/s");
    assert_string_equal(b.data, "1.50 TFLOP/s");
    lb_buf_free(&b);
    lb_fmt_bytes(&b, 1536.0 * 1024 * 1024);
    assert_string_equal(b.data, "1.50 GiB");
    lb_buf_free(&b);
    lb_fmt_key(&b, NAN);
    assert_null(b.data);
}

static void test_svg(void **state)
{
    (void)state;
    assert_true(lb_svg_nice_max(0) == 1);
    assert_true(lb_svg_nice_max(7) == 8);
    assert_true(lb_svg_nice_max(1234) == 1500);
    assert_true(lb_svg_nice_max(100) == 100);
    struct lb_bar bars[3] = {
        {"<b>GPU</b>", "x&y", 300, "/submissions/1", "acc"},
        {"CPU", NULL, 100, NULL, "cpu"},
        {"broken", NULL, NAN, NULL, NULL},
    };
    struct lb_buf b = {0};
    lb_svg_bars(&b, "title <t>", "samples/s", bars, 3);
    assert_non_null(strstr(b.data, "<svg class=\"chart bars\""));
    assert_non_null(strstr(b.data, "&lt;b&gt;GPU&lt;/b&gt;"));
    assert_null(strstr(b.data, "<b>GPU"));
    assert_non_null(strstr(b.data, "title &lt;t&gt;"));
    assert_non_null(strstr(b.data, "<a href=\"/submissions/1\">"));
    int rects = 0;
    for (const char *p = b.data; (p = strstr(p, "<rect class=\"bar")) != NULL; p++)
        rects++;
    assert_int_equal(rects, 3);
    /* the axis ends at 300 (nice), the plot is 880 - 290 - 130 = 460 px wide */
    assert_non_null(strstr(b.data, "width=\"460.0\""));
    assert_non_null(strstr(b.data, "width=\"153.3\""));
    lb_buf_free(&b);
    struct lb_pair pairs[1] = {{"conv6", 10, NAN}};
    lb_svg_pairs(&b, "pairs", "samples/s", "#1", "#2", pairs, 1);
    assert_non_null(strstr(b.data, "class=\"bar a\""));
    assert_non_null(strstr(b.data, "class=\"bar b\""));
    lb_buf_free(&b);
}

static void test_ratelimit(void **state)
{
    (void)state;
    struct lb_ratelimit *rl = lb_ratelimit_new(60, 3); /* one per second, three at once */
    long wait;
    assert_int_equal(lb_ratelimit_take(rl, 7, 100.0, &wait), 1);
    assert_int_equal(lb_ratelimit_take(rl, 7, 100.0, &wait), 1);
    assert_int_equal(lb_ratelimit_take(rl, 7, 100.0, &wait), 1);
    assert_int_equal(lb_ratelimit_take(rl, 7, 100.0, &wait), 0);
    assert_int_equal(wait, 1);
    assert_int_equal(lb_ratelimit_take(rl, 8, 100.0, &wait), 1); /* other tokens unaffected */
    assert_int_equal(lb_ratelimit_take(rl, 7, 100.5, &wait), 0);
    assert_int_equal(lb_ratelimit_take(rl, 7, 101.01, &wait), 1);
    for (int i = 0; i < 5000; i++) /* many keys: the sweep forgets full buckets */
        lb_ratelimit_take(rl, 1000 + i, 200.0 + i, &wait);
    lb_ratelimit_free(rl);
    rl = lb_ratelimit_new(0, 1); /* disabled */
    for (int i = 0; i < 100; i++)
        assert_int_equal(lb_ratelimit_take(rl, 1, 0, &wait), 1);
    lb_ratelimit_free(rl);
}

/* ---- tokens and database ---- */

static void test_tokens(void **state)
{
    struct fixture *f = *state;
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    long long id;
    char name[LB_TOKEN_NAME_MAX + 1];
    assert_int_equal(strlen(f->token), LB_TOKEN_LEN);
    assert_int_equal(lb_auth_check(&id, name, db, f->auth, &err), XPB_OK);
    assert_true(id > 0);
    assert_string_equal(name, "alice");
    /* lower-case scheme is fine; wrong secret, malformed, other schemes are not */
    char other[LB_TOKEN_LEN + 16];
    snprintf(other, sizeof other, "bearer %s", f->token);
    assert_int_equal(lb_auth_check(&id, name, db, other, &err), XPB_OK);
    snprintf(other, sizeof other, "Bearer %s", f->token);
    other[strlen(other) - 1] = other[strlen(other) - 1] == '0' ? '1' : '0';
    assert_int_equal(lb_auth_check(&id, name, db, other, &err), XPB_REJECTED);
    assert_non_null(strstr(err.msg, "unknown token"));
    assert_null(strstr(err.msg, f->token + 21)); /* never echoes the secret */
    assert_int_equal(lb_auth_check(&id, name, db, "Bearer xpb_123", &err), XPB_REJECTED);
    assert_int_equal(lb_auth_check(&id, name, db, "Basic YWxhZGRpbjpvcGVu", &err), XPB_REJECTED);
    assert_int_equal(lb_auth_check(&id, name, db, NULL, &err), XPB_REJECTED);
    /* names */
    char token2[LB_TOKEN_LEN + 1];
    assert_int_equal(lb_auth_create(token2, db, "alice", &err), XPB_INVALID_ARGUMENT);
    assert_int_equal(lb_auth_create(token2, db, "bad name", &err), XPB_INVALID_ARGUMENT);
    assert_int_equal(lb_auth_create(token2, db, "bob", &err), XPB_OK);
    assert_string_not_equal(token2, f->token);
    /* only salted hashes are stored: neither secret appears in the table, salts differ */
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(lb_db_handle(db),
                                        "SELECT salt, hash, public_id FROM tokens ORDER BY id", -1,
                                        &s, NULL),
                     SQLITE_OK);
    char salts[2][64];
    int rows = 0;
    while (sqlite3_step(s) == SQLITE_ROW && rows < 2) {
        const char *salt = (const char *)sqlite3_column_text(s, 0);
        const char *hash = (const char *)sqlite3_column_text(s, 1);
        snprintf(salts[rows], sizeof salts[rows], "%s", salt);
        assert_int_equal(strlen(hash), 64);
        const char *secret = rows == 0 ? f->token + 21 : token2 + 21;
        assert_null(strstr(hash, secret));
        assert_null(strstr(salt, secret));
        rows++;
    }
    sqlite3_finalize(s);
    assert_int_equal(rows, 2);
    assert_string_not_equal(salts[0], salts[1]);
    /* revoke */
    assert_int_equal(lb_auth_revoke(db, "bob", &err), XPB_OK);
    snprintf(other, sizeof other, "Bearer %s", token2);
    assert_int_equal(lb_auth_check(&id, name, db, other, &err), XPB_REJECTED);
    assert_non_null(strstr(err.msg, "revoked"));
    assert_int_equal(lb_auth_revoke(db, "bob", &err), XPB_NOT_FOUND);
    lb_pool_put(f->app.pool, db);
    assert_true(lb_ct_equal("abcdef", "abcdef", 6));
    assert_false(lb_ct_equal("abcdef", "abcdeF", 6));
}

static void test_migrations(void **state)
{
    struct fixture *f = *state;
    xpb_err err;
    struct lb_db *db;
    assert_int_equal(lb_db_open(&db, f->db_path, &err), XPB_OK); /* reopening is a no-op */
    sqlite3 *h = lb_db_handle(db);
    assert_int_equal(lb_migrate_version(h), lb_migrate_latest());
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
    sqlite3_finalize(s);
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM schema_migrations", -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(s, 0), lb_migrate_latest());
    sqlite3_finalize(s);
    /* a database from a newer service is refused */
    assert_int_equal(sqlite3_exec(h,
                                  "INSERT INTO schema_migrations VALUES (999, 'future', "
                                  "'2030-01-01T00:00:00Z')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    lb_db_close(db);
    assert_int_equal(lb_db_open(&db, f->db_path, &err), XPB_INCOMPATIBLE);
    assert_non_null(strstr(err.msg, "newer"));
}

static void test_store(void **state)
{
    struct fixture *f = *state;
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    json_t *doc = lbt_small_doc(1);
    char *canon, key[65];
    size_t len;
    assert_int_equal(xpb_results_canonical(&canon, &len, key, doc, &err), XPB_OK);
    struct lb_submit_result r;
    assert_int_equal(lb_store_submit(&r, db, doc, canon, key, key, 1, &err), XPB_OK);
    assert_int_equal(r.id, 1);
    assert_false(r.duplicate);
    assert_int_equal(lb_store_submit(&r, db, doc, canon, key, key, 1, &err), XPB_OK);
    assert_int_equal(r.id, 1);
    assert_true(r.duplicate);
    /* the same idempotency key for other results */
    json_t *doc2 = lbt_small_doc(2);
    char *canon2, key2[65];
    assert_int_equal(xpb_results_canonical(&canon2, &len, key2, doc2, &err), XPB_OK);
    assert_int_equal(lb_store_submit(&r, db, doc2, canon2, key2, key, 1, &err), XPB_REJECTED);
    assert_int_equal(lb_store_submit(&r, db, doc2, canon2, key2, key2, 1, &err), XPB_OK);
    assert_int_equal(r.id, 2);
    /* the leaderboard's naming rule */
    json_t *run = json_array_get(json_object_get(doc2, "runs"), 0);
    json_object_set_new(json_object_get(run, "config"), "model", json_string("conv 6"));
    assert_int_equal(lb_store_submit(&r, db, doc2, canon2, "f00d", NULL, 1, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].config.model"));
    /* queries */
    struct lb_run_row *rows;
    size_t n;
    struct lb_filter filter = {.model = "conv6", .backend = "cpu_ref"};
    assert_int_equal(lb_store_runs(&rows, &n, db, &filter, 100, &err), XPB_OK);
    assert_int_equal(n, 2);
    assert_true(rows[0].throughput >= rows[1].throughput);
    assert_string_equal(rows[0].submitter, "alice");
    assert_true(lb_store_best_cpu(db, &rows[1]) == rows[0].throughput);
    free(rows);
    filter.backend = "cuda";
    assert_int_equal(lb_store_runs(&rows, &n, db, &filter, 100, &err), XPB_OK);
    assert_int_equal(n, 0);
    free(rows);
    struct lb_submission_info info;
    json_t *back;
    assert_int_equal(lb_store_submission(&info, &back, db, 1, &err), XPB_OK);
    assert_true(json_equal(back, doc));
    assert_string_equal(info.content_hash, key);
    json_decref(back);
    assert_int_equal(lb_store_submission(&info, NULL, db, 99, &err), XPB_NOT_FOUND);
    lb_pool_put(f->app.pool, db);
    free(canon);
    free(canon2);
    json_decref(doc);
    json_decref(doc2);
}

/* ---- API ---- */

static void test_api_post(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    json_t *doc = lbt_small_doc(10);
    char *good = json_dumps(doc, JSON_COMPACT);

    /* authentication */
    request(&a, f, "POST", "/api/v1/results", NULL, good);
    assert_int_equal(a.status, 401);
    assert_true(a.res.bearer_challenge);
    assert_non_null(strstr(a.body, "missing bearer token"));
    free(a.body);
    request(&a, f, "POST", "/api/v1/results", "Bearer xpb_0000000000000000_00", good);
    assert_int_equal(a.status, 401);
    free(a.body);

    /* bad JSON, schema violations, wrong types, missing fields */
    request(&a, f, "POST", "/api/v1/results", f->auth, "{\"schema\": ");
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.body, "not valid JSON"));
    free(a.body);
    request(&a, f, "POST", "/api/v1/results", f->auth, "{\"a\":1,\"a\":2}");
    assert_int_equal(a.status, 400);
    free(a.body);
    request(&a, f, "POST", "/api/v1/results", f->auth, "");
    assert_int_equal(a.status, 400);
    free(a.body);
    json_t *bad = json_deep_copy(doc);
    json_object_set_new(json_object_get(json_array_get(json_object_get(bad, "runs"), 0), "config"),
                        "batch", json_string("64"));
    post_doc(&a, f, bad);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.body, "runs[0].config.batch"));
    free(a.body);
    json_decref(bad);
    bad = json_deep_copy(doc);
    json_object_del(json_object_get(bad, "environment"), "os");
    post_doc(&a, f, bad);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.body, "environment.os"));
    free(a.body);
    json_decref(bad);
    bad = json_deep_copy(doc);
    json_object_set_new(bad, "schema_version", json_integer(7));
    post_doc(&a, f, bad);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.body, "schema_version"));
    free(a.body);
    json_decref(bad);
    request(&a, f, "POST", "/api/v1/results", f->auth, "[1,2,3]");
    assert_int_equal(a.status, 422);
    free(a.body);

    /* content type, idempotency key, body size */
    static char store[256];
    struct lb_request req;
    memset(&req, 0, sizeof req);
    parse_target(&req, store, sizeof store, "/api/v1/results");
    req.method = "POST";
    req.authorization = f->auth;
    req.content_type = "text/plain";
    req.body = good;
    req.body_len = strlen(good);
    memset(&a.res, 0, sizeof a.res);
    lb_route(&f->app, &req, &a.res);
    assert_int_equal(a.res.status, 415);
    lb_buf_free(&a.res.body);
    req.content_type = "application/json; charset=utf-8";
    req.idempotency_key = "not-a-hash";
    memset(&a.res, 0, sizeof a.res);
    lb_route(&f->app, &req, &a.res);
    assert_int_equal(a.res.status, 400);
    assert_non_null(strstr(a.res.body.data, "Idempotency-Key"));
    lb_buf_free(&a.res.body);
    req.idempotency_key = NULL;
    req.body_too_large = 1;
    memset(&a.res, 0, sizeof a.res);
    lb_route(&f->app, &req, &a.res);
    assert_int_equal(a.res.status, 413);
    lb_buf_free(&a.res.body);
    assert_int_equal(total(f), 0); /* nothing stored by any of these */

    /* a good one, then the same again */
    request(&a, f, "POST", "/api/v1/results", f->auth, good);
    assert_int_equal(a.status, 201);
    json_t *reply = json_loads(a.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(reply, "id")), 1);
    assert_string_equal(json_string_value(json_object_get(reply, "url")),
                        "https://lb.example/submissions/1");
    assert_false(json_is_true(json_object_get(reply, "duplicate")));
    assert_string_equal(a.res.location, "/api/v1/results/1");
    json_decref(reply);
    free(a.body);
    /* key order and whitespace do not matter: same canonical content */
    char *pretty = json_dumps(doc, JSON_INDENT(3));
    request(&a, f, "POST", "/api/v1/results", f->auth, pretty);
    assert_int_equal(a.status, 200);
    reply = json_loads(a.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(reply, "id")), 1);
    assert_true(json_is_true(json_object_get(reply, "duplicate")));
    json_decref(reply);
    free(a.body);
    free(pretty);
    assert_int_equal(total(f), 1);
    free(good);
    json_decref(doc);
}

static void test_api_rate_limit(void **state)
{
    struct fixture *f = *state;
    lb_ratelimit_free(f->app.limiter);
    f->app.limiter = lb_ratelimit_new(1, 2); /* two at once, then one a minute */
    struct answer a;
    for (unsigned i = 0; i < 3; i++) {
        json_t *doc = lbt_small_doc(100 + i);
        post_doc(&a, f, doc);
        json_decref(doc);
        if (i < 2) {
            assert_int_equal(a.status, 201);
        } else {
            assert_int_equal(a.status, 429);
            assert_true(a.res.retry_after > 0);
        }
        free(a.body);
    }
    assert_int_equal(total(f), 2);
}

static void test_api_get(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lbt_run gpu[2] = {
        {"r1", "resnet18", "cifar", "train", "fp32", "cuda", "NVIDIA T4", 64, 3000, 0.02, 45, NULL},
        {"r2", "resnet18", "cifar", "inference", "fp32", "cuda", "NVIDIA T4", 128, 9000, 0.014, 0,
         NULL},
    };
    json_t *d1 = lbt_doc("Xeon", "NVIDIA T4", gpu, 2, 1);
    json_t *d2 = lbt_small_doc(2);
    post_doc(&a, f, d1);
    assert_int_equal(a.status, 201);
    free(a.body);
    post_doc(&a, f, d2);
    assert_int_equal(a.status, 201);
    free(a.body);

    request(&a, f, "GET", "/api/v1/results", NULL, NULL);
    assert_int_equal(a.status, 200);
    json_t *list = json_loads(a.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(list, "total")), 2);
    json_t *first = json_array_get(json_object_get(list, "results"), 0);
    assert_int_equal(json_integer_value(json_object_get(first, "id")), 2); /* newest first */
    json_decref(list);
    free(a.body);

    request(&a, f, "GET", "/api/v1/results?backend=cuda&mode=inference", NULL, NULL);
    assert_int_equal(a.status, 200);
    list = json_loads(a.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(list, "total")), 1);
    first = json_array_get(json_object_get(list, "results"), 0);
    json_t *runs = json_object_get(first, "runs");
    assert_int_equal(json_array_size(runs), 1); /* only the matching run */
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "run")), "r2");
    json_decref(list);
    free(a.body);

    request(&a, f, "GET", "/api/v1/results?model=%3Cscript%3E", NULL, NULL);
    assert_int_equal(a.status, 400);
    free(a.body);
    request(&a, f, "GET", "/api/v1/results?limit=100000", NULL, NULL);
    assert_int_equal(a.status, 400);
    free(a.body);

    request(&a, f, "GET", "/api/v1/results/1", NULL, NULL);
    assert_int_equal(a.status, 200);
    json_t *one = json_loads(a.body, 0, NULL);
    assert_true(json_equal(json_object_get(one, "results"), d1));
    assert_string_equal(json_string_value(json_object_get(one, "submitter")), "alice");
    json_decref(one);
    free(a.body);
    request(&a, f, "GET", "/api/v1/results/77", NULL, NULL);
    assert_int_equal(a.status, 404);
    free(a.body);
    request(&a, f, "GET", "/api/v1/results/01", NULL, NULL);
    assert_int_equal(a.status, 404);
    free(a.body);
    request(&a, f, "DELETE", "/api/v1/results/1", f->auth, NULL);
    assert_int_equal(a.status, 405);
    assert_non_null(a.res.allow);
    free(a.body);
    json_decref(d1);
    json_decref(d2);
}

/* ---- pages ---- */

static void test_pages(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lbt_run runs[3] = {
        {"fast", "conv6", "cifar", "train", "fp32", "cuda", "NVIDIA T4", 64, 24000, 0.0027, 120,
         NULL},
        {"slow", "conv6", "cifar", "train", "fp32", "cpu_onednn", "Xeon <b>bold</b>", 64, 100, 0.64,
         0, NULL},
        {"broken", "conv6", "cifar", "train", "fp32", "cpu_ref", "Xeon", 64, 1, 1, 0,
         "unsupported"},
    };
    json_t *d1 = lbt_doc("Xeon \"<script>alert(1)</script>", "NVIDIA T4", runs, 3, 1);
    json_t *d2 = lbt_doc("Threadripper", NULL, runs + 1, 1, 2);
    json_object_set_new(
        json_array_get(json_object_get(d2, "runs"), 0), "metrics",
        json_deep_copy(json_object_get(json_array_get(json_object_get(d1, "runs"), 1), "metrics")));
    post_doc(&a, f, d1);
    assert_int_equal(a.status, 201);
    free(a.body);
    post_doc(&a, f, d2);
    assert_int_equal(a.status, 201);
    free(a.body);

    request(&a, f, "GET", "/", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.res.content_type, "text/html; charset=utf-8");
    assert_non_null(strstr(a.body, "<!DOCTYPE html>"));
    assert_non_null(strstr(a.body, "id=\"g-conv6-cifar-train-fp32\""));
    assert_null(strstr(a.body, "<script>alert"));
    assert_null(strstr(a.body, "<b>bold"));
    assert_non_null(strstr(a.body, "&lt;b&gt;bold&lt;/b&gt;"));
    /* ranked by throughput: the T4 first; 240x the best CPU; energy where measured */
    const char *t4 = strstr(a.body, "<b>NVIDIA T4</b>");
    const char *xeon = strstr(a.body, "<b>Xeon &lt;b&gt;");
    assert_non_null(t4);
    assert_non_null(xeon);
    assert_true(t4 < xeon);
    assert_non_null(strstr(a.body, "240\xC3\x97"));
    assert_non_null(strstr(a.body, "not measured"));
    assert_non_null(strstr(a.body, "<svg class=\"chart bars\""));
    assert_null(strstr(a.body, "style=")); /* the CSP forbids inline styles */
    free(a.body);

    /* server-side sort: step time ascending puts the GPU first, descending last */
    request(&a, f, "GET", "/?sort=step&dir=desc", NULL, NULL);
    assert_int_equal(a.status, 200);
    const char *table = strstr(a.body, "<tbody>");
    assert_non_null(table);
    t4 = strstr(table, "<b>NVIDIA T4</b>");
    xeon = strstr(table, "<b>Xeon &lt;b&gt;");
    assert_true(xeon < t4);
    assert_non_null(
        strstr(a.body, "data-key=\"step\" data-first=\"asc\" aria-sort=\"descending\""));
    free(a.body);
    /* filters */
    request(&a, f, "GET", "/?backend=cuda", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_null(strstr(strstr(a.body, "<tbody>"), "cpu_onednn</span>"));
    free(a.body);
    request(&a, f, "GET", "/?model=%22%3E%3Cscript%3E", NULL, NULL);
    assert_int_equal(a.status, 400);
    assert_null(strstr(a.body, "<script>"));
    free(a.body);

    /* a submission page with its environment and every run */
    request(&a, f, "GET", "/submissions/1", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "Submission #1"));
    assert_non_null(strstr(a.body, "Xeon &quot;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_null(strstr(a.body, "<script>alert"));
    assert_non_null(strstr(a.body, "Debian GNU/Linux 12"));
    assert_non_null(strstr(a.body, "unsupported"));
    assert_non_null(strstr(a.body, "backend does not support this op"));
    free(a.body);
    request(&a, f, "GET", "/submissions/9", NULL, NULL);
    assert_int_equal(a.status, 404);
    free(a.body);

    /* compare: either query form; environments side by side, workloads matched */
    request(&a, f, "GET", "/compare?id=1&id=2", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "Submission #1 vs #2"));
    assert_non_null(strstr(a.body, "<tr class=\"diff\"><th>CPU</th>"));
    assert_non_null(strstr(a.body, "conv6/cifar train fp32 b64"));
    assert_non_null(strstr(a.body, "<svg class=\"chart pairs\""));
    free(a.body);
    request(&a, f, "GET", "/compare?a=2&b=2", NULL, NULL);
    assert_int_equal(a.status, 400);
    free(a.body);
    request(&a, f, "GET", "/compare?a=1&b=5", NULL, NULL);
    assert_int_equal(a.status, 404);
    free(a.body);

    /* assets, health, unknown pages, methods */
    request(&a, f, "GET", "/static/lb.js", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "sortTable"));
    free(a.body);
    request(&a, f, "GET", "/static/lb.css", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_true(a.res.cache_seconds > 0);
    free(a.body);
    request(&a, f, "GET", "/healthz", NULL, NULL);
    assert_int_equal(a.status, 200);
    free(a.body);
    request(&a, f, "GET", "/nope/<x>", NULL, NULL);
    assert_int_equal(a.status, 404);
    assert_null(strstr(a.body, "<x>"));
    free(a.body);
    request(&a, f, "POST", "/", NULL, "{}");
    assert_int_equal(a.status, 405);
    free(a.body);
    json_decref(d1);
    json_decref(d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_ratelimit),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_post, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pages, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
