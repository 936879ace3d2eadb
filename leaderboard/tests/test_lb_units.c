/* The leaderboard's modules in-process: escaping, formatting, charts, rate limits, budgets,
 * connection deadlines, JSON shapes, ranks, tokens, migrations, storage, and the API and pages
 * driven through the router with crafted requests (no network). `test_lb_units postgres` runs
 * the same on PostgreSQL, in a throw-away cluster (exit code 77, skipped, where there is none). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <float.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/lb_api.h"
#include "api/lb_auth.h"
#include "api/lb_json_shape.h"
#include "base/clock.h"
#include "db/lb_db.h"
#include "lbt_support.h"
#include "pages/lb_page_cache.h"
#include "pages/lb_pages.h"
#include "pages/lb_svg_pairs.h"
#include "publish/upload.h"
#include "render/escape.h"
#include "render/format_si.h"
#include "render/svg.h"
#include "results/comparisons.h"
#include "results/results.h"
#include "server/lb_conntrack.h"
#include "server/lb_log.h"
#include "server/lb_memory.h"
#include "server/lb_router.h"
#include "service/lb_budget.h"
#include "service/lb_ratelimit.h"
#include "service/lb_workq.h"
#include "store/lb_doc.h"
#include "store/lb_migrate.h"
#include "store/lb_rank.h"
#include "store/lb_store.h"
#include "store/lb_store_rows.h"
#include "store/lb_store_tta.h"

/* ---- helpers ---- */

static char *html(const char *s)
{
    struct xpb_text b = {0};
    xpb_html(&b, s);
    return xpb_text_take(&b, NULL);
}

/* The store of this run: NULL for SQLite (a file per test), or the PostgreSQL cluster's URL
 * (emptied before each test). */
static const char *database;

/* A fresh service on an empty database, with one token. */
struct fixture {
    char dir[256], target[512];
    struct lb_app app;
    char token[LB_TOKEN_LEN + 1];
    char auth[LB_TOKEN_LEN + 16];
};

/* Drops every table of the PostgreSQL database. */
static void empty_database(const char *url)
{
    struct lb_db *db;
    xpb_err err;
    assert_int_equal(lb_db_open(&db, url, &err), XPB_OK);
    assert_int_equal(lb_db_exec(db, "DROP SCHEMA public CASCADE; CREATE SCHEMA public", &err),
                     XPB_OK);
    lb_db_close(db);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(lbt_tempdir(f->dir, sizeof f->dir, "lbunit"), 0);
    if (database) {
        empty_database(database);
        snprintf(f->target, sizeof f->target, "%s", database);
    } else {
        snprintf(f->target, sizeof f->target, "%s/lb.sqlite3", f->dir);
    }
    xpb_err err;
    assert_int_equal(lb_pool_open(&f->app.pool, f->target, 2, &err), XPB_OK);
    f->app.limiter = lb_ratelimit_new(0, 1);
    f->app.uploads = lb_budget_new(64u << 20);
    f->app.max_body = 1 << 20;
    f->app.public_url = "https://lb.example";
    f->app.submit.max_runs = 256;
    f->app.submit.max_per_day = 0;
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
    assert_int_equal(lb_budget_used(f->app.uploads), 0); /* every admission was released */
    lb_budget_free(f->app.uploads);
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

/* request() asks as the server does when it has render threads (lb_request.may_defer), and,
 * when answers_bounded, with this room for a large answer (lb_request.large_room). */
static int deferring, answers_bounded;
static size_t large_room;

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
    req.content_length = body ? (long long)req.body_len : -1;
    req.client = "127.0.0.1";
    req.may_defer = deferring;
    req.answers_bounded = answers_bounded;
    req.large_room = large_room;
    memset(&a->res, 0, sizeof a->res);
    lb_route(&f->app, &req, &a->res);
    a->status = a->res.status;
    a->body = xpb_text_take(&a->res.body, NULL);
    assert_non_null(a->body);
}

/* Uploads doc with the Authorization header value auth (NULL: alice's). */
static void post_doc_as(struct answer *a, struct fixture *f, const char *auth, json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    request(a, f, "POST", "/api/v1/results", auth ? auth : f->auth, text);
    free(text);
}

static void post_doc(struct answer *a, struct fixture *f, json_t *doc)
{
    post_doc_as(a, f, NULL, doc);
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
    struct xpb_text b = {0};
    xpb_url(&b, "a b/\xc3\xbc&x=\"");
    assert_string_equal(b.data, "a%20b%2F%C3%BC%26x%3D%22");
    xpb_text_free(&b);
}

static void test_format(void **state)
{
    (void)state;
    struct xpb_text b = {0};
    xpb_format_grouped(&b, 1234567.891, 1);
    assert_string_equal(b.data, "1,234,567.9");
    xpb_text_free(&b);
    xpb_format_grouped(&b, 999, 0);
    assert_string_equal(b.data, "999");
    xpb_text_free(&b);
    xpb_format_grouped(&b, NAN, 1);
    assert_string_equal(b.data, "\xE2\x80\x94");
    xpb_text_free(&b);
    xpb_format_ms(&b, 0.01234);
    assert_string_equal(b.data, "12.3 ms");
    xpb_text_free(&b);
    xpb_format_si(&b, 1.5e12, "FLOP/s");
    assert_string_equal(b.data, "1.50 TFLOP/s");
    xpb_text_free(&b);
    xpb_format_bytes(&b, 1536.0 * 1024 * 1024);
    assert_string_equal(b.data, "1.50 GiB");
    xpb_text_free(&b);
    xpb_format_key(&b, NAN);
    assert_null(b.data);
    /* large numbers: never a truncated wall of digits (1e63 printed wrong into 64 bytes) */
    xpb_format_grouped(&b, 1e63, 0);
    assert_string_equal(b.data, "1.00e+63");
    xpb_text_free(&b);
    xpb_format_grouped(&b, DBL_MAX, 1);
    assert_string_equal(b.data, "1.80e+308");
    xpb_text_free(&b);
    xpb_format_grouped(&b, 999999999999999.0, 0);
    assert_string_equal(b.data, "999,999,999,999,999");
    xpb_text_free(&b);
    /* ratios keep three significant digits: a tiny speedup is never 0.00x */
    xpb_format_ratio(&b, 246.3);
    assert_string_equal(b.data, "246\xC3\x97");
    xpb_text_free(&b);
    xpb_format_ratio(&b, 2.5);
    assert_string_equal(b.data, "2.50\xC3\x97");
    xpb_text_free(&b);
    xpb_format_ratio(&b, 1e-300);
    assert_string_equal(b.data, "1e-300\xC3\x97");
    xpb_text_free(&b);
    xpb_format_ratio(&b, 0.0012345);
    assert_string_equal(b.data, "0.0012\xC3\x97");
    xpb_text_free(&b);
}

static void test_log_and_cut(void **state)
{
    (void)state;
    char line[64];
    /* a path with CR, LF and ESC cannot forge a log line or colour a terminal */
    lb_log_text(line, sizeof line, "/a\r\n2026-01-01 fake 200\x1b[31m\"\\");
    assert_string_equal(line, "/a\\x0d\\x0a2026-01-01 fake 200\\x1b[31m\\x22\\x5c");
    assert_null(strchr(line, '\n'));
    lb_log_text(line, 8, "abcdefghij");
    assert_string_equal(line, "abcdefg");
    lb_log_text(line, 6, "ab\ncd"); /* an escape that does not fit is left out whole */
    assert_string_equal(line, "ab");
    struct xpb_text b = {0};
    xpb_html_cut(&b, "<<<<<<", 3);
    assert_string_equal(b.data, "&lt;&lt;&lt;\xE2\x80\xA6");
    xpb_text_free(&b);
    xpb_html_cut(&b, "\xc3\xbc\xc3\xbc", 3); /* never inside a character */
    assert_string_equal(b.data, "\xc3\xbc\xE2\x80\xA6");
    xpb_text_free(&b);
    xpb_html_cut(&b, "short", 10);
    assert_string_equal(b.data, "short");
    xpb_text_free(&b);
    /* a buffer with a limit stops there and says so */
    struct xpb_text capped = {.limit = 10};
    xpb_text_puts(&capped, "0123456789");
    assert_false(capped.failed);
    xpb_text_puts(&capped, "x");
    assert_true(capped.failed && capped.too_large);
    assert_null(xpb_text_take(&capped, NULL));
    assert_int_equal(capped.limit, 10);
}

static void test_json_shape(void **state)
{
    (void)state;
    struct lb_json_shape sh;
    const char *doc = "{\"a\": [1, 2.5e3, true, null, \"x]]]{{\\\"\"], \"b\": {\"c\": -1}}";
    assert_int_equal(lb_json_shape(&sh, doc, strlen(doc), 16, 100), LB_JSON_WITHIN);
    assert_int_equal(sh.depth, 2);
    assert_int_equal(sh.nodes, 12); /* 2 objects, 1 array, 3 keys, 6 scalars */
    assert_int_equal(lb_json_shape(&sh, doc, strlen(doc), 1, 100), LB_JSON_TOO_DEEP);
    assert_int_equal(lb_json_shape(&sh, doc, strlen(doc), 16, 10), LB_JSON_TOO_MANY);
    /* the amplification of issue 14: 2,000 levels of nesting are refused at once */
    char deep[4001];
    memset(deep, '[', 2000);
    memset(deep + 2000, ']', 2000);
    deep[4000] = '\0';
    assert_int_equal(lb_json_shape(&sh, deep, 4000, 16, 1000000), LB_JSON_TOO_DEEP);
    assert_int_equal(sh.depth, 17);
}

static void test_budget(void **state)
{
    (void)state;
    struct lb_budget *b = lb_budget_new(100);
    assert_true(lb_budget_take(b, 60));
    assert_false(lb_budget_take(b, 41));
    assert_true(lb_budget_take(b, 40));
    assert_int_equal(lb_budget_used(b), 100);
    lb_budget_give(b, 60);
    assert_true(lb_budget_take(b, 60));
    lb_budget_give(b, 100);
    assert_int_equal(lb_budget_used(b), 0);
    /* leaving a part to others: granted only while that part stays unreserved */
    assert_true(lb_budget_take_leaving(b, 60, 30));
    assert_false(lb_budget_take_leaving(b, 20, 30));
    assert_true(lb_budget_take_leaving(b, 10, 30));
    assert_false(lb_budget_take_leaving(b, 31, 0));
    assert_true(lb_budget_take(b, 30));
    assert_int_equal(lb_budget_used(b), 100);
    lb_budget_give(b, 100);
    lb_budget_free(b);
}

/* The trimmer trims after something large was freed, and only then. */
static void test_trimmer(void **state)
{
    (void)state;
    struct lb_trimmer *t;
    xpb_err err;
    assert_int_equal(lb_trimmer_start(&t, 0.02, &err), XPB_OK);
    lb_trimmer_note(t, LB_MMAP_THRESHOLD - 1);
    usleep(100000);
    assert_int_equal(lb_trimmer_trims(t), 0);
    lb_trimmer_note(t, LB_MMAP_THRESHOLD);
    for (int i = 0; i < 200 && lb_trimmer_trims(t) == 0; i++)
        usleep(10000);
    assert_int_equal(lb_trimmer_trims(t), 1);
    lb_trimmer_note(NULL, 1u << 30); /* no trimmer: nothing */
    lb_trimmer_stop(t);
}

/* A job of test_workq: records whether it ran or was called off, and may wait for a go. */
struct job_probe {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int started, ran, cancelled, go;
};

static void probe_job(void *arg, int cancelled)
{
    struct job_probe *j = arg;
    pthread_mutex_lock(&j->lock);
    j->started = 1;
    pthread_cond_broadcast(&j->changed);
    while (!cancelled && !j->go)
        pthread_cond_wait(&j->changed, &j->lock);
    j->ran = !cancelled;
    j->cancelled = cancelled;
    pthread_cond_broadcast(&j->changed);
    pthread_mutex_unlock(&j->lock);
}

static void job_init(struct job_probe *j, int go)
{
    memset(j, 0, sizeof *j);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->changed, NULL);
    j->go = go;
}

/* Waits until *field of j is set. */
static void job_wait(struct job_probe *j, const int *field)
{
    pthread_mutex_lock(&j->lock);
    while (!*field)
        pthread_cond_wait(&j->changed, &j->lock);
    pthread_mutex_unlock(&j->lock);
}

static void job_go(struct job_probe *j)
{
    pthread_mutex_lock(&j->lock);
    j->go = 1;
    pthread_cond_broadcast(&j->changed);
    pthread_mutex_unlock(&j->lock);
}

static void *stop_queue(void *arg)
{
    lb_workq_stop(arg);
    return NULL;
}

static void test_workq(void **state)
{
    (void)state;
    struct lb_workq *q;
    xpb_err err;
    assert_int_equal(lb_workq_start(&q, 1, 2, 10, 0, &err), XPB_OK);
    struct job_probe j[6];
    for (int i = 0; i < 6; i++)
        job_init(&j[i], i != 0 && i != 4);
    /* one running, two waiting: a fourth is refused at once, nothing waits */
    assert_true(lb_workq_submit(q, probe_job, &j[0]));
    job_wait(&j[0], &j[0].started);
    assert_true(lb_workq_submit(q, probe_job, &j[1]));
    assert_true(lb_workq_submit(q, probe_job, &j[2]));
    assert_false(lb_workq_submit(q, probe_job, &j[3]));
    assert_int_equal(lb_workq_refused(q), 1);
    job_go(&j[0]);
    job_wait(&j[2], &j[2].ran);
    assert_true(j[0].ran && j[1].ran && !j[3].started);
    /* stopping calls off what waits, lets the running job finish, then refuses */
    assert_true(lb_workq_submit(q, probe_job, &j[4]));
    job_wait(&j[4], &j[4].started);
    assert_true(lb_workq_submit(q, probe_job, &j[5]));
    pthread_t stopper;
    assert_int_equal(pthread_create(&stopper, NULL, stop_queue, q), 0);
    job_wait(&j[5], &j[5].cancelled);
    assert_false(j[5].ran);
    job_go(&j[4]);
    pthread_join(stopper, NULL);
    assert_true(j[4].ran);
    assert_false(lb_workq_submit(q, probe_job, &j[3]));
    lb_workq_free(q);
    /* a job that waited longer than the queue allows is called off when its turn comes */
    assert_int_equal(lb_workq_start(&q, 1, 2, 0, 0.05, &err), XPB_OK);
    for (int i = 0; i < 2; i++) {
        pthread_cond_destroy(&j[i].changed);
        pthread_mutex_destroy(&j[i].lock);
        job_init(&j[i], i);
    }
    assert_true(lb_workq_submit(q, probe_job, &j[0]));
    job_wait(&j[0], &j[0].started);
    assert_true(lb_workq_submit(q, probe_job, &j[1]));
    usleep(100000);
    job_go(&j[0]);
    job_wait(&j[1], &j[1].cancelled);
    assert_true(j[0].ran && !j[1].ran);
    assert_int_equal(lb_workq_refused(q), 1);
    lb_workq_stop(q);
    lb_workq_free(q);
    for (int i = 0; i < 6; i++) {
        pthread_cond_destroy(&j[i].changed);
        pthread_mutex_destroy(&j[i].lock);
    }
}

/* 1 when the peer of fd shut the connection (read sees the end). */
static int was_cut(int fd)
{
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

static void test_conntrack(void **state)
{
    (void)state;
    struct lb_conntrack *ct;
    struct lb_conntrack_opts o = {3, 2.0, 5.0}; /* 3 kept, 2 s for a head, 5 s for a request */
    xpb_err err;
    assert_int_equal(lb_conntrack_start(&ct, &o, &err), XPB_OK);
    int pairs[5][2];
    struct lb_conn *c[5];
    for (int i = 0; i < 5; i++)
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[i]), 0);
    double t0 = xpb_now();
    c[0] = lb_conntrack_open(ct, pairs[0][0]); /* idle: waits for a head */
    c[1] = lb_conntrack_open(ct, pairs[1][0]);
    lb_conntrack_enter(ct, c[1], LB_CONN_BUSY); /* being worked on: never shed, no deadline */
    c[2] = lb_conntrack_open(ct, pairs[2][0]);
    lb_conntrack_enter(ct, c[2], LB_CONN_BODY);
    assert_false(was_cut(pairs[0][1]));
    /* a fourth: over the limit of 3, the oldest idle one makes room */
    c[3] = lb_conntrack_open(ct, pairs[3][0]);
    assert_true(was_cut(pairs[0][1]));
    assert_false(was_cut(pairs[1][1]) || was_cut(pairs[2][1]) || was_cut(pairs[3][1]));
    /* deadlines: a head late after 2 s, a body after 5 s (from the head's start), BUSY never */
    lb_conntrack_sweep(ct, t0 + 3);
    assert_true(was_cut(pairs[3][1]));
    assert_false(was_cut(pairs[2][1]));
    lb_conntrack_sweep(ct, t0 + 6);
    assert_true(was_cut(pairs[2][1]));
    lb_conntrack_sweep(ct, t0 + 1000);
    assert_false(was_cut(pairs[1][1]));
    struct lb_conntrack_stats st;
    lb_conntrack_stats(ct, &st);
    assert_int_equal(st.open, 4);
    assert_int_equal(st.shed, 1);
    assert_int_equal(st.expired, 2);
    for (int i = 0; i < 4; i++)
        lb_conntrack_close(ct, c[i]);
    /* all busy: a newcomer is the one shed */
    o.soft_limit = 1;
    lb_conntrack_stop(ct);
    assert_int_equal(lb_conntrack_start(&ct, &o, &err), XPB_OK);
    c[0] = lb_conntrack_open(ct, pairs[1][0]);
    lb_conntrack_enter(ct, c[0], LB_CONN_BUSY);
    c[1] = lb_conntrack_open(ct, pairs[4][0]);
    assert_true(was_cut(pairs[4][1]));
    lb_conntrack_close(ct, c[0]);
    lb_conntrack_close(ct, c[1]);
    lb_conntrack_stop(ct);
    for (int i = 0; i < 5; i++) {
        close(pairs[i][0]);
        close(pairs[i][1]);
    }
}

static void test_page_cache(void **state)
{
    (void)state;
    struct lb_page_cache *c = lb_page_cache_new(8000, 2.0);
    struct lb_response page, got;
    memset(&page, 0, sizeof page);
    page.status = 200;
    page.content_type = "text/html; charset=utf-8";
    xpb_text_puts(&page.body, "<p>rankings</p>");
    lb_page_cache_put(c, "sort=throughput", 7, 100.0, &page);
    memset(&got, 0, sizeof got);
    assert_true(lb_page_cache_get(c, "sort=throughput", 7, 101.0, &got));
    assert_int_equal(got.status, 200);
    assert_string_equal(got.body.data, "<p>rankings</p>");
    xpb_text_free(&got.body);
    assert_false(lb_page_cache_get(c, "sort=step", 7, 101.0, &got));       /* another page */
    assert_false(lb_page_cache_get(c, "sort=throughput", 8, 101.0, &got)); /* a new submission */
    lb_page_cache_put(c, "sort=throughput", 8, 100.0, &page);
    assert_false(lb_page_cache_get(c, "sort=throughput", 8, 102.5, &got)); /* too old */
    /* bounded: a page over an eighth of the room is not kept; the oldest make room */
    struct lb_response big;
    memset(&big, 0, sizeof big);
    for (int i = 0; i < 1100; i++)
        xpb_text_puts(&big.body, "x");
    lb_page_cache_put(c, "big", 8, 100.0, &big);
    assert_false(lb_page_cache_get(c, "big", 8, 100.5, &got));
    for (int i = 0; i < 1000; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        lb_page_cache_put(c, key, 8, 200.0 + i * 1e-3, &page);
    }
    assert_true(lb_page_cache_get(c, "k999", 8, 201.0, &got));
    xpb_text_free(&got.body);
    assert_false(lb_page_cache_get(c, "k0", 8, 201.0, &got));
    xpb_text_free(&big.body);
    xpb_text_free(&page.body);
    lb_page_cache_free(c);
}

/* A ranked row with this median and interval (NAN: none). */
static struct lb_run_row ranked_row(double median, double lo, double hi)
{
    struct lb_run_row r;
    memset(&r, 0, sizeof r);
    r.throughput = median;
    r.ci_low = lo;
    r.ci_high = hi;
    return r;
}

static void test_rank(void **state)
{
    (void)state;
    struct lb_run_row rows[6] = {
        ranked_row(100, 95, 105),   /* 1 */
        ranked_row(98, 96, 101),    /* overlaps the first: 1 too */
        ranked_row(90, 89, 91),     /* below both: 3 */
        ranked_row(89.5, NAN, NAN), /* no interval: the point 89.5 is inside [89, 91]: 3 */
        ranked_row(60, 50, 95.5),   /* wide: only the second's interval is wholly above: 2 */
        ranked_row(10, NAN, NAN),   /* below everything: 6 */
    };
    struct lb_ranked out[6];
    lb_rank(out, rows, 6);
    int want[6] = {1, 1, 3, 3, 2, 6};
    for (int i = 0; i < 6; i++)
        assert_int_equal(out[i].rank, want[i]);
    assert_true(out[0].shared && out[1].shared && out[2].shared && out[3].shared);
    assert_false(out[4].shared || out[5].shared);
    assert_true(out[0].has_interval);
    assert_false(out[3].has_interval);
}

/* The pages' charts: throughput bars (lb_page_bars, core's xpb_svg_bar_chart in the page's
 * style) and the comparison's paired bars (lb_svg_pairs), on core's nice axis maximum. */
static void test_svg(void **state)
{
    (void)state;
    assert_true(xpb_svg_nice_max(0, 4) == 1);
    assert_true(xpb_svg_nice_max(7, 4) == 8);
    assert_true(xpb_svg_nice_max(1234, 4) == 1500);
    assert_true(xpb_svg_nice_max(100, 4) == 100);
    struct lb_page_bar bars[3] = {
        {"<b>GPU</b>", "x&y", "/submissions/1", "gpu", 300},
        {"CPU", NULL, NULL, "cpu", 100},
        {"broken", NULL, NULL, "unknown", NAN},
    };
    struct xpb_text b = {0};
    lb_page_bars(&b, "chart-g-x", "title <t>", bars, 3);
    assert_non_null(strstr(b.data, "<svg class=\"chart bars\""));
    assert_non_null(strstr(b.data, "&lt;b&gt;GPU&lt;/b&gt;"));
    assert_null(strstr(b.data, "<b>GPU"));
    assert_non_null(strstr(b.data, "title &lt;t&gt;"));
    assert_non_null(strstr(b.data, "<a href=\"/submissions/1\"><g><title>x&amp;y</title>"));
    assert_non_null(strstr(b.data, "<rect class=\"bar acc\""));
    assert_non_null(strstr(b.data, "<rect class=\"bar cpu\""));
    int rects = 0;
    for (const char *p = b.data; (p = strstr(p, "<rect class=\"bar")) != NULL; p++)
        rects++;
    assert_int_equal(rects, 2); /* a bar without a value draws none, and its value is a dash */
    assert_non_null(strstr(b.data, ">\xE2\x80\x94</text>"));
    assert_non_null(strstr(b.data, ">300 samples/s</text>"));
    /* the axis ends at 300 (nice), the plot is 900 - 420 - 80 = 400 px wide */
    assert_non_null(strstr(b.data, "width=\"400.0\""));
    assert_non_null(strstr(b.data, "width=\"133.3\""));
    xpb_text_free(&b);
    struct lb_pair pairs[1] = {{"conv6", 10, NAN}};
    lb_svg_pairs(&b, "pairs", "samples/s", "#1", "#2", pairs, 1);
    assert_non_null(strstr(b.data, "class=\"bar a\""));
    assert_non_null(strstr(b.data, "class=\"bar b\""));
    xpb_text_free(&b);
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
    static const char sql[] = "SELECT salt, hash FROM tokens ORDER BY id";
    struct lb_stmt *s = lb_db_stmt(db, sql, &err);
    assert_non_null(s);
    char salts[2][64];
    int rows = 0;
    while (rows < 2 && lb_stmt_step(s) == LB_STEP_ROW) {
        const char *salt = lb_col_str(s, 0), *hash = lb_col_str(s, 1);
        snprintf(salts[rows], sizeof salts[rows], "%s", salt);
        assert_int_equal(strlen(hash), 64);
        const char *secret = rows == 0 ? f->token + 21 : token2 + 21;
        assert_null(strstr(hash, secret));
        assert_null(strstr(salt, secret));
        rows++;
    }
    lb_stmt_done(s);
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
    assert_int_equal(lb_db_open(&db, f->target, &err), XPB_OK);
    assert_int_equal(lb_migrate(db, &err), XPB_OK); /* again: a no-op */
    assert_int_equal(lb_migrate_version(db), lb_migrate_latest());
    assert_int_equal(lb_migrate_latest(), 6);
    static const char count[] = "SELECT count(*) FROM schema_migrations";
    struct lb_stmt *s = lb_db_stmt(db, count, &err);
    assert_int_equal(lb_stmt_step(s), LB_STEP_ROW);
    assert_int_equal(lb_col_int(s, 0), lb_migrate_latest());
    lb_stmt_done(s);
    if (lb_db_kind(db) == LB_DB_SQLITE) {
        static const char mode[] = "PRAGMA journal_mode";
        s = lb_db_stmt(db, mode, &err);
        assert_int_equal(lb_stmt_step(s), LB_STEP_ROW);
        assert_string_equal(lb_col_str(s, 0), "wal");
        lb_stmt_done(s);
    }
    /* a database from a newer service is refused */
    assert_int_equal(lb_db_exec(db,
                                "INSERT INTO schema_migrations VALUES (999, 'future', "
                                "'2030-01-01T00:00:00Z')",
                                &err),
                     XPB_OK);
    lb_db_close(db);
    assert_int_equal(lb_db_open(&db, f->target, &err), XPB_OK);
    assert_int_equal(lb_migrate(db, &err), XPB_INCOMPATIBLE);
    assert_non_null(strstr(err.msg, "newer"));
    assert_int_equal(lb_db_exec(db, "DELETE FROM schema_migrations WHERE version = 999", &err),
                     XPB_OK);
    lb_db_close(db);
}

/* Stores doc with token 1 and the fixture's limits; returns the outcome's id (0 when not
 * stored) and the status in *st. */
static long long store_doc(struct fixture *f, const json_t *doc, xpb_status *st_out,
                           enum lb_submit_outcome *outcome)
{
    xpb_err err;
    char *canon, key[65];
    size_t len;
    assert_int_equal(xpb_results_canonical(&canon, &len, key, doc, &err), XPB_OK);
    struct lb_db *db = lb_pool_get(f->app.pool);
    struct lb_submit_result r;
    xpb_status st = lb_store_submit(&r, db, doc, canon, key, key, 1, &f->app.submit, &err);
    lb_pool_put(f->app.pool, db);
    free(canon);
    if (st_out)
        *st_out = st;
    if (outcome)
        *outcome = r.outcome;
    return r.id;
}

/* The runs of the run_id column's kinds, in one string "kind,kind,...", for checks. */
static void kinds_of(char *out, size_t cap, struct fixture *f)
{
    static const char sql[] = "SELECT device_kind, is_cpu, world_size FROM runs ORDER BY id";
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    struct lb_stmt *s = lb_db_stmt(db, sql, &err);
    out[0] = '\0';
    while (lb_stmt_step(s) == LB_STEP_ROW) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s/%lld/%lld", n ? "," : "", lb_col_str(s, 0),
                 lb_col_int(s, 1), lb_col_int(s, 2));
    }
    lb_stmt_done(s);
    lb_pool_put(f->app.pool, db);
}

/* What lb_store_index keeps matches what the stored runs say: each submitter's 10 fastest
 * finished runs of a table flagged (ties to the older run), and the tables' counts (of the
 * finished runs with a throughput: a time-to-accuracy run has none). */
static long long mismatches(struct fixture *f)
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM runs WHERE ranked <> CASE WHEN status = 'ok' AND "
        "throughput IS NOT NULL AND (SELECT count(*) FROM runs r2 WHERE r2.model = runs.model "
        "AND r2.variant = runs.variant AND r2.mode = runs.mode AND r2.precision = "
        "runs.precision AND r2.world_size = runs.world_size AND r2.token_id = runs.token_id AND "
        "r2.status = 'ok' AND r2.throughput IS NOT NULL AND (r2.throughput > runs.throughput OR "
        "(r2.throughput = runs.throughput AND r2.id < runs.id))) < 10 THEN 1 ELSE 0 END) + "
        "(SELECT count(*) FROM board_groups g WHERE g.n_runs <> (SELECT count(*) FROM runs r "
        "WHERE r.model = g.model AND r.variant = g.variant AND r.mode = g.mode AND r.precision = "
        "g.precision AND r.world_size = g.world_size AND r.status = 'ok' AND r.throughput IS NOT "
        "NULL) OR g.n_submitters <> "
        "(SELECT count(DISTINCT r.token_id) FROM runs r WHERE r.model = g.model AND r.variant = "
        "g.variant AND r.mode = g.mode AND r.precision = g.precision AND r.world_size = "
        "g.world_size AND r.status = 'ok' AND r.throughput IS NOT NULL)) + "
        "(SELECT count(*) FROM board_backends b WHERE b.n_runs <> (SELECT count(*) FROM runs r "
        "WHERE r.backend = b.backend AND r.status = 'ok' AND r.throughput IS NOT NULL))";
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    struct lb_stmt *s = lb_db_stmt(db, sql, &err);
    assert_non_null(s);
    assert_int_equal(lb_stmt_step(s), LB_STEP_ROW);
    long long n = lb_col_int(s, 0);
    lb_stmt_done(s);
    lb_pool_put(f->app.pool, db);
    return n;
}

/* How many stored runs are marked disturbed by other processes. */
static long long disturbed_runs(struct fixture *f)
{
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    struct lb_stmt *s = lb_db_stmt(db, "SELECT count(*) FROM runs WHERE disturbed = 1", &err);
    assert_non_null(s);
    assert_int_equal(lb_stmt_step(s), LB_STEP_ROW);
    long long n = lb_col_int(s, 0);
    lb_stmt_done(s);
    lb_pool_put(f->app.pool, db);
    return n;
}

/* Migration 2 on a database written at version 1: the new columns are derived from the stored
 * documents (device kind from a version-2 document, unknown for version 1: no name rule). */
static void test_backfill(void **state)
{
    struct fixture *f = *state;
    struct lbt_run v2runs[2] = {
        {"g", "conv6", "cifar", "train", "fp32", "cuda", "T4", 64, 900, 0.07, 0, NULL},
        {"c", "conv6", "cifar", "train", "fp32", "cpu_ref", "Xeon", 64, 90, 0.7, 0, NULL},
    };
    struct lbt_v2 kinds2[2] = {{"gpu", 0.01, 2}, {"cpu", 0.01, 2}};
    json_t *d1 = lbt_small_doc(5); /* version 1, backend cpu_ref */
    json_t *d2 = lbt_doc_v2("Xeon", "T4", v2runs, kinds2, 2, 6);
    /* the GPU run was disturbed by other processes: the board marks it */
    json_t *inter = json_object_get(
        json_object_get(json_array_get(json_object_get(d2, "runs"), 0), "metrics"), "interference");
    assert_non_null(inter);
    json_object_set_new(inter, "other_cpu_share", json_real(0.4));
    json_object_set_new(inter, "flagged", json_true());
    assert_true(store_doc(f, d1, NULL, NULL) > 0);
    assert_true(store_doc(f, d2, NULL, NULL) > 0);
    char kinds[256];
    kinds_of(kinds, sizeof kinds, f);
    assert_string_equal(kinds, "unknown/0/1,gpu/0/1,cpu/1/1");
    assert_int_equal(disturbed_runs(f), 1);
    /* back to version 1, as an old service left it: is_cpu from the backend's name */
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    assert_int_equal(lb_db_exec(db,
                                "DROP TABLE tta_runs; "
                                "DROP TABLE board_groups; DROP TABLE board_members; "
                                "DROP TABLE board_backends; DROP INDEX runs_cpu_best; "
                                "DROP INDEX runs_member; DROP INDEX runs_ranked; "
                                "ALTER TABLE runs DROP COLUMN token_id; "
                                "ALTER TABLE runs DROP COLUMN ranked; "
                                "DROP INDEX runs_rank; DROP INDEX submissions_token_received; "
                                "ALTER TABLE runs DROP COLUMN device_kind; "
                                "ALTER TABLE runs DROP COLUMN world_size; "
                                "ALTER TABLE runs DROP COLUMN ci95_low; "
                                "ALTER TABLE runs DROP COLUMN ci95_high; "
                                "ALTER TABLE runs DROP COLUMN disturbed; "
                                "ALTER TABLE submissions DROP COLUMN schema_version; "
                                "ALTER TABLE submissions DROP COLUMN document_bytes; "
                                "UPDATE runs SET is_cpu = 1 WHERE backend LIKE 'cpu%'; "
                                "DELETE FROM schema_migrations WHERE version >= 2",
                                &err),
                     XPB_OK);
    assert_int_equal(lb_migrate_version(db), 1);
    assert_int_equal(lb_migrate(db, &err), XPB_OK);
    assert_int_equal(lb_migrate_version(db), lb_migrate_latest());
    /* migration 4 measured the stored documents: what lb_store_document_bytes says */
    long long bytes = 0;
    struct xpb_text text = {0};
    struct lb_submission_info info;
    assert_int_equal(lb_store_document_bytes(&bytes, db, 2, &err), XPB_OK);
    assert_int_equal(lb_store_submission(&info, &text, db, 2, &err), XPB_OK);
    assert_int_equal(bytes, (long long)text.len);
    xpb_text_free(&text);
    assert_int_equal(lb_store_document_bytes(&bytes, db, 99, &err), XPB_NOT_FOUND);
    lb_pool_put(f->app.pool, db);
    kinds_of(kinds, sizeof kinds, f);
    assert_string_equal(kinds, "unknown/0/1,gpu/0/1,cpu/1/1");
    assert_int_equal(mismatches(f), 0);     /* migration 3 derived the kept rankings */
    assert_int_equal(disturbed_runs(f), 1); /* migration 2 derived the flag again */
    json_decref(d1);
    json_decref(d2);
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
    assert_int_equal(lb_store_submit(&r, db, doc, canon, key, key, 1, &f->app.submit, &err),
                     XPB_OK);
    assert_int_equal(r.id, 1);
    assert_int_equal(r.outcome, LB_SUBMIT_STORED);
    assert_int_equal(lb_store_submit(&r, db, doc, canon, key, key, 1, &f->app.submit, &err),
                     XPB_OK);
    assert_int_equal(r.id, 1);
    assert_int_equal(r.outcome, LB_SUBMIT_DUPLICATE);
    /* the same idempotency key for other results */
    json_t *doc2 = lbt_small_doc(2);
    char *canon2, key2[65];
    assert_int_equal(xpb_results_canonical(&canon2, &len, key2, doc2, &err), XPB_OK);
    assert_int_equal(lb_store_submit(&r, db, doc2, canon2, key2, key, 1, &f->app.submit, &err),
                     XPB_REJECTED);
    assert_int_equal(lb_store_submit(&r, db, doc2, canon2, key2, key2, 1, &f->app.submit, &err),
                     XPB_OK);
    assert_int_equal(r.id, 2);
    /* the leaderboard's naming rule */
    json_t *run = json_array_get(json_object_get(doc2, "runs"), 0);
    json_object_set_new(json_object_get(run, "config"), "model", json_string("conv 6"));
    assert_int_equal(lb_store_submit(&r, db, doc2, canon2, "f00d", NULL, 1, &f->app.submit, &err),
                     XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].config.model"));
    /* a submission back: summary and the canonical text as stored */
    struct lb_submission_info info;
    struct xpb_text text = {0};
    xpb_text_puts(&text, "before:");
    assert_int_equal(lb_store_submission(&info, &text, db, 1, &err), XPB_OK);
    assert_memory_equal(text.data, "before:", 7);
    assert_string_equal(text.data + 7, canon);
    assert_string_equal(info.content_hash, key);
    assert_int_equal(info.schema_version, 1);
    xpb_text_insert(&text, 7, "<>", 2); /* an answer assembled around the text in place */
    assert_memory_equal(text.data, "before:<>", 9);
    assert_string_equal(text.data + 9, canon);
    assert_int_equal(text.len, strlen(canon) + 9);
    xpb_text_free(&text);
    assert_int_equal(lb_store_submission(&info, NULL, db, 99, &err), XPB_NOT_FOUND);
    lb_pool_put(f->app.pool, db);
    free(canon);
    free(canon2);
    json_decref(doc);
    json_decref(doc2);
}

static void test_store_tables(void **state)
{
    struct fixture *f = *state;
    json_t *docs[2] = {lbt_small_doc(1), lbt_small_doc(2)};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(store_doc(f, docs[i], NULL, NULL), i + 1);
        json_decref(docs[i]);
    }
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    /* the tables: one group, two runs, ranked fastest first */
    struct lb_group *groups;
    size_t n_groups;
    long long total;
    struct lb_filter filter = {.model = "conv6", .backend = "cpu_ref"};
    assert_int_equal(lb_store_groups(&groups, &n_groups, &total, db, &filter, 10, 0, &err), XPB_OK);
    assert_int_equal(total, 1);
    assert_int_equal(n_groups, 1);
    assert_string_equal(groups[0].model, "conv6");
    assert_int_equal(groups[0].world_size, 1);
    assert_int_equal(groups[0].n_runs, 2);
    assert_int_equal(groups[0].n_submitters, 1);
    struct lb_run_row *rows;
    size_t n;
    assert_int_equal(lb_store_group_runs(&rows, &n, &total, db, &groups[0], &filter, 10, 10, &err),
                     XPB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(total, 2);
    assert_true(rows[0].throughput >= rows[1].throughput);
    assert_string_equal(rows[0].submitter, "alice");
    assert_string_equal(rows[0].device_kind, "unknown"); /* version 1: no kind, no name rule */
    assert_true(isnan(lb_store_best_cpu(db, &rows[1])));
    free(rows);
    /* at most one run per submitter ranked: the faster */
    assert_int_equal(lb_store_group_runs(&rows, &n, &total, db, &groups[0], &filter, 1, 10, &err),
                     XPB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(total, 1);
    free(rows);
    free(groups);
    filter.backend = "cuda";
    assert_int_equal(lb_store_groups(&groups, &n_groups, &total, db, &filter, 10, 0, &err), XPB_OK);
    assert_int_equal(n_groups, 0);
    free(groups);
    lb_pool_put(f->app.pool, db);
}

/* Sets a value at runs[0].<a>.<b>[.<c>] of doc. */
static void set_run0(json_t *doc, const char *a, const char *b, const char *c, json_t *v)
{
    json_t *o = json_object_get(json_array_get(json_object_get(doc, "runs"), 0), a);
    if (c)
        o = json_object_get(o, b);
    json_object_set_new(o, c ? c : b, v);
}

/* lb_extract on doc with max_runs; returns its status (err set). */
static xpb_status extract(json_t *doc, size_t max_runs, struct lb_run_row **rows, size_t *n,
                          xpb_err *err)
{
    struct lb_submission_info info;
    return lb_extract(&info, rows, n, doc, max_runs, err);
}

/* The naming rule, and core's typed view read with the leaderboard's defaults
 * (store/lb_doc.h). */
static void test_names_and_members(void **state)
{
    (void)state;
    assert_true(lb_is_token_text("resnet18", 64));
    assert_true(lb_is_token_text("bf16-mixed", 64));
    assert_false(lb_is_token_text("", 64));
    assert_false(lb_is_token_text("a b", 64));
    assert_false(lb_is_token_text("<x>", 64));
    assert_false(lb_is_token_text("abcdef", 5));
    assert_string_equal(lb_doc_str("vgg16"), "vgg16");
    assert_string_equal(lb_doc_str(NULL), ""); /* absent, null or another type */
    assert_true(lb_doc_num(7) == 7);
    assert_true(isnan(lb_doc_num(XPB_RESULTS_NO_INT)));
    assert_int_equal(lb_doc_int(7, 0), 7);
    assert_int_equal(lb_doc_int(XPB_RESULTS_NO_INT, 1), 1);
    assert_true(lb_doc_true(1));
    assert_false(lb_doc_true(0));
    assert_false(lb_doc_true(XPB_RESULTS_NO_BOOL));
    /* device kinds: what a version-2 document says, unknown otherwise */
    json_t *run = json_pack("{s:{s:s}}", "device", "kind", "gpu");
    xpb_arena arena = {0};
    struct xpb_results_run v;
    assert_int_equal(xpb_results_view_run(&v, &arena, run, 2), XPB_OK);
    assert_string_equal(lb_doc_kind(&v, 2), "gpu");
    assert_string_equal(lb_doc_kind(&v, 1), "unknown");
    json_object_del(json_object_get(run, "device"), "kind");
    assert_int_equal(xpb_results_view_run(&v, &arena, run, 2), XPB_OK);
    assert_string_equal(lb_doc_kind(&v, 2), "unknown");
    xpb_arena_free(&arena);
    json_decref(run);
}

static void test_extract_rules(void **state)
{
    (void)state;
    xpb_err err;
    struct lb_run_row *rows = NULL;
    size_t n;
    /* a tool version of 65..256 bytes was stored truncated: now it is refused */
    json_t *doc = lbt_small_doc(1);
    char version[80];
    memset(version, '7', 65);
    version[65] = '\0';
    json_object_set_new(json_object_get(doc, "tool"), "version", json_string(version));
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "tool.version: longer than 64 bytes"));
    version[64] = '\0';
    json_object_set_new(json_object_get(doc, "tool"), "version", json_string(version));
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_OK);
    free(rows);
    /* implausible numbers, each named by its path */
    set_run0(doc, "metrics", "throughput", "median", json_real(1e300));
    set_run0(doc, "metrics", "throughput", "max", json_real(1e300));
    assert_int_equal(xpb_results_validate(doc, &err), XPB_OK); /* the schema has no bound */
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].metrics.throughput.median: 1e+300 samples/s"));
    json_decref(doc);
    doc = lbt_small_doc(2);
    set_run0(doc, "metrics", "flops_per_s", NULL, json_real(2e19));
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].metrics.flops_per_s"));
    json_decref(doc);
    doc = lbt_small_doc(3);
    set_run0(doc, "config", "batch", NULL, json_integer(1 << 25));
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[0].config.batch"));
    json_decref(doc);
    /* runs per submission */
    struct lbt_run many[3] = {
        {"a", "conv6", "cifar", "train", "fp32", "cpu_ref", "X", 8, 10, 0.8, 0, NULL},
        {"b", "conv6", "cifar", "train", "fp32", "cpu_ref", "X", 16, 10, 1.6, 0, NULL},
        {"c", "conv6", "cifar", "train", "fp32", "cpu_ref", "X", 32, 10, 3.2, 0, NULL},
    };
    doc = lbt_doc("X", NULL, many, 3, 4);
    assert_int_equal(extract(doc, 2, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs: 3 runs; a submission holds at most 2"));
    assert_int_equal(extract(doc, 3, &rows, &n, &err), XPB_OK);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].device_kind, "unknown"); /* version 1 */
    assert_int_equal(rows[0].world_size, 1); /* a document that does not say: one rank */
    assert_true(isnan(rows[0].ci_low));
    free(rows);
    json_decref(doc);
    /* version 2: the device says its kind; the interval comes along */
    struct lbt_v2 kinds[3] = {{"cpu", 0, 0}, {"accelerator", 0, 0}, {NULL, 0, 0}};
    doc = lbt_doc_v2("X", NULL, many, kinds, 3, 5);
    assert_int_equal(xpb_results_validate(doc, &err), XPB_OK);
    assert_int_equal(extract(doc, 3, &rows, &n, &err), XPB_OK);
    assert_string_equal(rows[0].device_kind, "cpu");
    assert_string_equal(rows[1].device_kind, "accelerator");
    assert_string_equal(rows[2].device_kind, "unknown");
    assert_true(rows[0].ci_low < 10 && rows[0].ci_high > 10);
    free(rows);
    json_decref(doc);
}

static void test_quota(void **state)
{
    struct fixture *f = *state;
    f->app.submit.max_per_day = 2;
    json_t *docs[3] = {lbt_small_doc(1), lbt_small_doc(2), lbt_small_doc(3)};
    xpb_status st;
    enum lb_submit_outcome outcome;
    assert_int_equal(store_doc(f, docs[0], &st, &outcome), 1);
    assert_int_equal(store_doc(f, docs[1], &st, &outcome), 2);
    assert_int_equal(store_doc(f, docs[2], &st, &outcome), 0);
    assert_int_equal(st, XPB_OK);
    assert_int_equal(outcome, LB_SUBMIT_OVER_QUOTA);
    /* a duplicate is still recognised over the quota (nothing new is stored) */
    assert_int_equal(store_doc(f, docs[0], &st, &outcome), 1);
    assert_int_equal(outcome, LB_SUBMIT_DUPLICATE);
    /* the API refuses from the headers, before the body: 429 with Retry-After */
    struct answer a;
    post_doc(&a, f, docs[2]);
    assert_int_equal(a.status, 429);
    assert_true(a.res.retry_after > 0);
    assert_non_null(strstr(a.body, "last 24 hours"));
    free(a.body);
    assert_int_equal(total(f), 2);
    for (int i = 0; i < 3; i++)
        json_decref(docs[i]);
}

/* ---- API ---- */

/* Routes a request built by hand (content type, key, announced length, too large). */
static void raw_post(struct answer *a, struct fixture *f, const char *type, const char *key,
                     const char *body, long long announced, int too_large)
{
    static char store[256];
    struct lb_request req;
    memset(&req, 0, sizeof req);
    parse_target(&req, store, sizeof store, "/api/v1/results");
    req.method = "POST";
    req.authorization = f->auth;
    req.content_type = type;
    req.idempotency_key = key;
    req.body = body;
    req.body_len = strlen(body);
    req.content_length = announced;
    req.body_too_large = too_large;
    memset(&a->res, 0, sizeof a->res);
    lb_route(&f->app, &req, &a->res);
    a->status = a->res.status;
    a->body = xpb_text_take(&a->res.body, NULL);
}

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
    assert_int_equal(total(f), 0); /* nothing stored by any of these */
    free(good);
    json_decref(doc);
}

static void test_api_post_stored(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    json_t *doc = lbt_small_doc(10);
    char *good = json_dumps(doc, JSON_COMPACT);

    /* content type, idempotency key, body size (announced or found too large) */
    raw_post(&a, f, "text/plain", NULL, good, -1, 0);
    assert_int_equal(a.status, 415);
    free(a.body);
    raw_post(&a, f, "application/json; charset=utf-8", "not-a-hash", good, -1, 0);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.body, "Idempotency-Key"));
    free(a.body);
    raw_post(&a, f, "application/json", NULL, good, -1, 1);
    assert_int_equal(a.status, 413);
    free(a.body);
    raw_post(&a, f, "application/json", NULL, good, (long long)f->app.max_body + 1, 0);
    assert_int_equal(a.status, 413);
    free(a.body);
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

/* The attacks on a document's shape: refused before parsing, nothing stored. */
static void test_api_shape_limits(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    /* deep nesting inside extra: the schema allows any content there, the service does not */
    json_t *doc = lbt_small_doc(20);
    json_t *inner = json_object();
    for (int i = 0; i < 40; i++)
        inner = json_pack("{s:o}", "x", inner);
    json_object_set_new(doc, "extra", inner);
    post_doc(&a, f, doc);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.body, "nested deeper than 16 levels"));
    free(a.body);
    /* too many values */
    json_t *many = json_array();
    for (int i = 0; i < LB_MAX_NODES; i++)
        json_array_append_new(many, json_integer(0));
    json_object_set_new(doc, "extra", json_pack("{s:o}", "many", many));
    post_doc(&a, f, doc);
    assert_int_equal(a.status, 422);
    assert_non_null(strstr(a.body, "more than"));
    free(a.body);
    /* a body whose canonical text outgrows the limit (0.1 prints as 0.10000000000000001) */
    json_t *reals = json_array();
    for (int i = 0; i < 60000; i++)
        json_array_append_new(reals, json_real(0.1));
    json_object_set_new(doc, "extra", json_pack("{s:o}", "r", reals));
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(3));
    assert_true(strlen(text) < f->app.max_body);
    request(&a, f, "POST", "/api/v1/results", f->auth, text);
    assert_int_equal(a.status, 413);
    assert_non_null(strstr(a.body, "canonical text"));
    free(a.body);
    free(text);
    assert_int_equal(total(f), 0);
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
    json_t *r2 = json_array_get(runs, 0);
    assert_string_equal(json_string_value(json_object_get(r2, "run")), "r2");
    assert_string_equal(json_string_value(json_object_get(r2, "device_kind")), "unknown");
    assert_int_equal(json_integer_value(json_object_get(r2, "world_size")), 1);
    assert_true(json_is_null(json_object_get(r2, "throughput_ci95_low")));
    assert_false(json_is_true(json_object_get(first, "runs_truncated")));
    json_decref(list);
    free(a.body);

    request(&a, f, "GET", "/api/v1/results?model=%3Cscript%3E", NULL, NULL);
    assert_int_equal(a.status, 400);
    free(a.body);
    request(&a, f, "GET", "/api/v1/results?limit=101", NULL, NULL); /* bounded answers */
    assert_int_equal(a.status, 400);
    free(a.body);

    /* one submission: the canonical text as stored, compact, inside its envelope */
    request(&a, f, "GET", "/api/v1/results/1", NULL, NULL);
    assert_int_equal(a.status, 200);
    json_t *one = json_loads(a.body, 0, NULL);
    assert_true(json_equal(json_object_get(one, "results"), d1));
    assert_string_equal(json_string_value(json_object_get(one, "submitter")), "alice");
    char *canon, key[65];
    size_t len;
    xpb_err err;
    assert_int_equal(xpb_results_canonical(&canon, &len, key, d1, &err), XPB_OK);
    assert_non_null(strstr(a.body, canon));
    assert_int_equal(strncmp(a.body, "{\"id\":1,\"url\":", 14), 0); /* compact */
    assert_null(strstr(a.body, "\n "));                             /* nothing pretty-printed */
    free(canon);
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

/* Who a token is: what a reverse proxy asks before it reads an upload's body. */
static void test_api_token(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    request(&a, f, "GET", "/api/v1/token", f->auth, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "\"submitter\":\"alice\""));
    free(a.body);
    request(&a, f, "GET", "/api/v1/token", "Bearer nope", NULL);
    assert_int_equal(a.status, 401);
    assert_true(a.res.bearer_challenge);
    free(a.body);
}

/* An answer is built under the server's limit: a page that would pass it fails as a whole. */
static void test_answer_limit(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    static char store[64];
    struct lb_request req;
    memset(&req, 0, sizeof req);
    parse_target(&req, store, sizeof store, "/");
    req.method = "GET";
    memset(&a.res, 0, sizeof a.res);
    a.res.body.limit = 2000;
    lb_route(&f->app, &req, &a.res);
    assert_true(a.res.body.too_large);
    assert_null(xpb_text_take(&a.res.body, NULL));
    memset(&a.res, 0, sizeof a.res);
    a.res.body.limit = lb_answer_limit(&f->app);
    lb_route(&f->app, &req, &a.res);
    assert_false(a.res.body.failed);
    xpb_text_free(&a.res.body);
    assert_true(lb_answer_limit(&f->app) >= f->app.max_body + 1024);
}

/* An answer known to be large is refused before it is built when the answers being sent leave
 * no room for it; small ones never are. */
static void test_answer_room(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    f->app.max_body = 2u << 20;
    size_t n = LB_SMALL_ANSWER + 100000;
    json_t *doc = lbt_padded_doc(n, 7);
    post_doc(&a, f, doc);
    assert_int_equal(a.status, 201);
    free(a.body);
    json_decref(doc);
    answers_bounded = 1;
    large_room = LB_SMALL_ANSWER;
    request(&a, f, "GET", "/api/v1/results/1", NULL, NULL);
    assert_int_equal(a.status, 503);
    assert_int_equal(a.res.retry_after, LB_ANSWERS_FULL_RETRY);
    assert_non_null(strstr(a.body, "sending too much at once"));
    free(a.body);
    request(&a, f, "GET", "/api/v1/results?limit=100", NULL, NULL); /* up to ~4 MB: refused */
    assert_int_equal(a.status, 503);
    free(a.body);
    request(&a, f, "GET", "/api/v1/results?limit=5", NULL, NULL); /* small: never refused */
    assert_int_equal(a.status, 200);
    free(a.body);
    /* a long list is built off the connection threads; a short one where it is asked */
    deferring = 1;
    large_room = 100u << 20;
    request(&a, f, "GET", "/api/v1/results?limit=11", NULL, NULL);
    assert_int_equal(a.status, 503);
    assert_true(a.res.defer);
    free(a.body);
    request(&a, f, "GET", "/api/v1/results?limit=10", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_false(a.res.defer);
    free(a.body);
    deferring = 0;
    large_room = 2 * LB_SMALL_ANSWER;
    request(&a, f, "GET", "/api/v1/results/1", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_true(a.res.retry_after == 0 && strlen(a.body) > n);
    free(a.body);
    answers_bounded = 0;
    large_room = 0;
}

/* A database failure reaches the log, never the client: the answers say the service cannot
 * answer now, and the driver's text stays in lb_response.internal. */
static void test_internal_errors(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    int pg = lb_db_kind(db) == LB_DB_POSTGRES;
    assert_int_equal(
        lb_db_exec(db,
                   pg ? "CREATE FUNCTION lb_fail() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION "
                        "'secret database text'; END $$ LANGUAGE plpgsql; CREATE TRIGGER lb_fail "
                        "BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION lb_fail()"
                      : "CREATE TRIGGER lb_fail BEFORE INSERT ON runs BEGIN SELECT "
                        "RAISE(ABORT, 'secret database text'); END",
                   &err),
        XPB_OK);
    lb_pool_put(f->app.pool, db);
    json_t *doc = lbt_small_doc(31);
    post_doc(&a, f, doc);
    json_decref(doc);
    assert_int_equal(a.status, 503);
    assert_int_equal(a.res.retry_after, 5);
    assert_non_null(strstr(a.body, "cannot store the submission now"));
    assert_null(strstr(a.body, "secret"));
    assert_null(strstr(a.body, "database"));
    assert_non_null(strstr(a.res.internal, "secret database text"));
    free(a.body);
    /* a table gone: the list and the pages fail without saying why */
    db = lb_pool_get(f->app.pool);
    assert_int_equal(lb_db_exec(db, "ALTER TABLE submissions RENAME TO submissions_gone", &err),
                     XPB_OK);
    lb_pool_put(f->app.pool, db);
    request(&a, f, "GET", "/api/v1/results", NULL, NULL);
    assert_int_equal(a.status, 500);
    assert_null(strstr(a.body, "submissions"));
    assert_non_null(strstr(a.res.internal, "submissions"));
    free(a.body);
    request(&a, f, "GET", "/", NULL, NULL);
    assert_int_equal(a.status, 500);
    assert_non_null(strstr(a.body, "cannot be shown now"));
    assert_null(strstr(a.body, "submissions"));
    assert_true(a.res.internal[0] != '\0');
    free(a.body);
    request(&a, f, "GET", "/submissions/1", NULL, NULL);
    assert_int_equal(a.status, 500);
    assert_null(strstr(a.body, "submissions_gone"));
    assert_true(a.res.internal[0] != '\0');
    free(a.body);
    db = lb_pool_get(f->app.pool);
    assert_int_equal(lb_db_exec(db, "ALTER TABLE submissions_gone RENAME TO submissions", &err),
                     XPB_OK);
    lb_pool_put(f->app.pool, db);
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
    struct lbt_v2 kinds[3] = {{"gpu", 0, 0}, {"cpu", 0, 0}, {"cpu", 0, 0}};
    json_t *d1 = lbt_doc_v2("Xeon \"<script>alert(1)</script>", "NVIDIA T4", runs, kinds, 3, 1);
    json_t *d2 = lbt_doc_v2("Threadripper", NULL, runs + 1, kinds + 1, 1, 2);
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
    /* ranked by throughput: the T4 first; 240x the best CPU device; energy where measured */
    const char *t4 = strstr(a.body, "<b>NVIDIA T4</b>");
    const char *xeon = strstr(a.body, "<b>Xeon &lt;b&gt;");
    assert_non_null(t4);
    assert_non_null(xeon);
    assert_true(t4 < xeon);
    assert_non_null(strstr(a.body, "240\xC3\x97"));
    assert_non_null(strstr(a.body, "not measured"));
    assert_non_null(strstr(a.body, "<svg class=\"chart bars\""));
    assert_non_null(strstr(a.body, "pill kind acc\">gpu"));
    /* the rules and every bound are stated */
    assert_non_null(strstr(a.body, "id=\"rules\""));
    assert_non_null(strstr(a.body, "95% confidence interval"));
    assert_non_null(strstr(a.body, "at most 16 levels"));
    assert_non_null(strstr(a.body, "at most 256 runs"));
    assert_null(strstr(a.body, "style=")); /* the CSP forbids inline styles */
    free(a.body);

    /* with the page cache: the same page again, and a new submission shows at once */
    f->app.pages = lb_page_cache_new(LB_PAGE_CACHE_BYTES, 60);
    request(&a, f, "GET", "/?model=conv6", NULL, NULL);
    char *first = a.body;
    request(&a, f, "GET", "/?model=conv6&junk=1", NULL, NULL); /* unknown parameters: same */
    assert_string_equal(a.body, first);
    free(a.body);
    json_t *d3 = lbt_doc_v2("Epyc", NULL, runs + 1, kinds + 1, 1, 3);
    post_doc(&a, f, d3);
    assert_int_equal(a.status, 201);
    free(a.body);
    json_decref(d3);
    request(&a, f, "GET", "/?model=conv6", NULL, NULL);
    assert_string_not_equal(a.body, first);
    assert_non_null(strstr(a.body, "host Epyc"));
    free(a.body);
    free(first);
    lb_page_cache_free(f->app.pages);
    f->app.pages = NULL;

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
    /* a page that reads runs asks to be built off the connection threads, leaving the answer
     * for when no render thread can take it: busy; a page read from what is kept is built */
    deferring = 1;
    request(&a, f, "GET", "/?backend=cuda", NULL, NULL);
    assert_int_equal(a.status, 503);
    assert_true(a.res.defer);
    assert_int_equal(a.res.retry_after, 2);
    free(a.body);
    request(&a, f, "GET", "/?model=conv6&sort=step", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_false(a.res.defer);
    free(a.body);
    deferring = 0;
    request(&a, f, "GET", "/?model=%22%3E%3Cscript%3E", NULL, NULL);
    assert_int_equal(a.status, 400);
    assert_null(strstr(a.body, "<script>"));
    free(a.body);
    request(&a, f, "GET", "/?offset=5000", NULL, NULL);
    assert_int_equal(a.status, 400);
    free(a.body);
    json_decref(d1);
    json_decref(d2);
}

/* A 250-byte device name (a CPU's, without a space) no longer widens its column: the pages
 * keep it to one line (the stylesheet's ellipsis) and whole in a title. */
static void test_long_machine_names(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    char name[251], title[300];
    memset(name, 'A', 250);
    name[250] = '\0';
    struct lbt_run r = {"r",  "conv6", "cifar", "train", "fp32", "cpu_ref",
                        name, 64,      100,     0.5,     0,      NULL};
    struct lbt_v2 kind = {"cpu", 0, 0};
    json_t *doc = lbt_doc_v2(name, NULL, &r, &kind, 1, 41);
    post_doc(&a, f, doc);
    json_decref(doc);
    assert_int_equal(a.status, 201);
    free(a.body);
    request(&a, f, "GET", "/", NULL, NULL);
    snprintf(title, sizeof title, "<td class=\"machine\" title=\"%s \xC2\xB7 ", name);
    assert_non_null(strstr(a.body, title)); /* the ranked row and the recent submission */
    assert_non_null(strstr(strstr(a.body, title) + 1, title));
    free(a.body);
    request(&a, f, "GET", "/submissions/1", NULL, NULL);
    snprintf(title, sizeof title, "<span class=\"small clip\" title=\"%s\">", name);
    assert_non_null(strstr(a.body, title));
    free(a.body);
    request(&a, f, "GET", "/static/lb.css", NULL, NULL);
    assert_non_null(strstr(a.body, ".machine b, .clip {"));
    assert_non_null(strstr(a.body, "text-overflow: ellipsis"));
    free(a.body);
}

/* How a submission's page draws its comparisons (the "Speedups within this submission" card of
 * lb_page_submission.c: a table, no chart): a significant speedup shows its interval alone, an
 * insignificant one its interval and "no significant difference" (issue 21: the report drew
 * every significant speedup as insignificant; the leaderboard must not). */
static void test_comparisons_on_page(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lbt_run runs[4] = {
        {"c-ref", "conv6", "cifar", "inference", "fp32", "cpu_ref", "Xeon", 16, 100, 0.16, 0, NULL},
        {"c-dnn", "conv6", "cifar", "inference", "fp32", "cpu_onednn", "Xeon", 16, 1000, 0.016, 0,
         NULL},
        {"r-ref", "resnet18", "cifar", "inference", "fp32", "cpu_ref", "Xeon", 16, 100, 0.16, 0,
         NULL},
        {"r-dnn", "resnet18", "cifar", "inference", "fp32", "cpu_onednn", "Xeon", 16, 101, 0.158, 0,
         NULL},
    };
    struct lbt_v2 kinds[4] = {{"cpu", 0, 0}, {"cpu", 0, 0}, {"cpu", 0, 0}, {"cpu", 0, 0}};
    json_t *doc = lbt_doc_v2("Xeon", NULL, runs, kinds, 4, 1);
    json_object_set_new(json_object_get(doc, "scenario"), "baseline", json_string("cpu_ref"));
    assert_int_equal(xpb_results_add_comparisons(doc), XPB_OK);
    const json_t *cmps = json_object_get(doc, "comparisons");
    assert_int_equal(json_array_size(cmps), 2);
    post_doc(&a, f, doc);
    assert_int_equal(a.status, 201);
    free(a.body);
    request(&a, f, "GET", "/submissions/1", NULL, NULL);
    assert_int_equal(a.status, 200);
    const char *card = strstr(a.body, "Speedups within this submission");
    assert_non_null(card);
    for (size_t i = 0; i < 2; i++) {
        const json_t *c = json_array_get(cmps, i);
        char cell[64];
        snprintf(cell, sizeof cell, "<td class=\"mono\">%s</td>",
                 json_string_value(json_object_get(c, "candidate")));
        const char *row = strstr(card, cell), *end = row ? strstr(row, "</tr>") : NULL;
        assert_non_null(end);
        const char *mark = strstr(row, "no significant difference");
        int marked = mark && mark < end;
        int significant = json_is_true(json_object_get(c, "significant"));
        if (marked == significant)
            fail_msg("%s: significant %d in the file, marked %d on the page", cell, significant,
                     marked);
        assert_int_equal(significant, i == 0); /* conv6 ten times faster; resnet18 the same */
    }
    free(a.body);
    json_decref(doc);
}

static void test_other_pages(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lbt_run runs[3] = {
        {"fast", "conv6", "cifar", "train", "fp32", "cuda", "NVIDIA T4", 64, 24000, 0.0027, 120,
         NULL},
        {"slow", "conv6", "cifar", "train", "fp32", "cpu_onednn", "Xeon", 64, 100, 0.64, 0, NULL},
        {"broken", "conv6", "cifar", "train", "fp32", "cpu_ref", "Xeon", 64, 1, 1, 0,
         "unsupported"},
    };
    json_t *d1 = lbt_doc("Xeon \"<script>alert(1)</script>", "NVIDIA T4", runs, 3, 1);
    json_t *d2 = lbt_doc("Threadripper", NULL, runs + 1, 1, 2);
    post_doc(&a, f, d1);
    assert_int_equal(a.status, 201);
    free(a.body);
    post_doc(&a, f, d2);
    assert_int_equal(a.status, 201);
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
    /* a version-1 document does not say its devices' kind: the chart's bars say unknown */
    assert_non_null(strstr(a.body, "<rect class=\"bar unk\""));
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

/* The rank cell of the table row of submission `id` ("1", "=1", ...), into out. */
static void rank_of(char *out, size_t cap, const char *page, long long id)
{
    char needle[64];
    snprintf(needle, sizeof needle, "data-submission=\"%lld\">", id);
    const char *row = strstr(page, needle);
    assert_non_null(row);
    const char *cell = strchr(strstr(row, "class=\"num rank\""), '>') + 1;
    size_t n = strcspn(cell, "<");
    snprintf(out, cap, "%.*s", (int)n, cell);
}

static void test_ranks_on_page(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    /* 1000 and 990 (repeats +-0.1%, intervals +-1.3%) overlap; 800 does not; one repeat: none */
    const double speeds[4] = {1000, 990, 800, 700};
    for (unsigned i = 0; i < 4; i++) {
        struct lbt_run r = {"r",   "conv6", "cifar",   "train", "fp32", "cuda",
                            "GPU", 64,      speeds[i], 0.06,    0,      NULL};
        struct lbt_v2 v = {"gpu", 0.001, i == 3 ? 1 : 2};
        json_t *doc = lbt_doc_v2("Xeon", "GPU", &r, &v, 1, 300 + i);
        if (i == 2) { /* the 800 was disturbed by other processes: marked with a "!" */
            json_t *inter = json_object_get(
                json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "metrics"),
                "interference");
            json_object_set_new(inter, "other_cpu_share", json_real(0.3));
            json_object_set_new(inter, "flagged", json_true());
        }
        post_doc(&a, f, doc);
        assert_int_equal(a.status, 201);
        free(a.body);
        json_decref(doc);
    }
    /* a version-1 result alongside: kind unknown, no interval, ranked by its median */
    struct lbt_run old = {"o",   "conv6", "cifar", "train", "fp32", "cuda",
                          "GPU", 64,      995,     0.06,    0,      NULL};
    json_t *doc = lbt_doc("Xeon", "GPU", &old, 1, 400);
    post_doc(&a, f, doc);
    assert_int_equal(a.status, 201);
    free(a.body);
    json_decref(doc);
    request(&a, f, "GET", "/?model=conv6", NULL, NULL);
    assert_int_equal(a.status, 200);
    char rank[16];
    rank_of(rank, sizeof rank, a.body, 1);
    assert_string_equal(rank, "=1");
    rank_of(rank, sizeof rank, a.body, 2);
    assert_string_equal(rank, "=1");
    rank_of(rank, sizeof rank, a.body, 5); /* 995, no interval: inside the 1000's interval */
    assert_string_equal(rank, "=1");
    rank_of(rank, sizeof rank, a.body, 3);
    assert_string_equal(rank, "4");
    rank_of(rank, sizeof rank, a.body, 4);
    assert_string_equal(rank, "5");
    assert_non_null(strstr(a.body, "no interval"));
    assert_non_null(strstr(a.body, "pill kind unk\">unknown"));
    assert_non_null(strstr(a.body, "95% 9")); /* an interval is shown: 95% 9xx-1,0xx */
    /* exactly one row carries the disturbed mark, and it is the 800's */
    const char *mark = strstr(a.body, "class=\"disturbed\"");
    assert_non_null(mark);
    assert_null(strstr(mark + 1, "class=\"disturbed\""));
    const char *row = mark;
    while (row > a.body && strncmp(row, "<tr", 3) != 0)
        row--;
    assert_non_null(strstr(row, "800"));
    assert_true(strstr(row, "800") < mark);
    free(a.body);
}

static void test_kept_rankings(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lb_db *db = lb_pool_get(f->app.pool);
    char bob[LB_TOKEN_LEN + 1], bob_auth[LB_TOKEN_LEN + 16];
    xpb_err err;
    assert_int_equal(lb_auth_create(bob, db, "bob", &err), XPB_OK);
    lb_pool_put(f->app.pool, db);
    snprintf(bob_auth, sizeof bob_auth, "Bearer %s", bob);
    /* four submissions of 8 runs each, alternating submitters, with equal speeds across them */
    static char ids[8][8];
    for (unsigned k = 0; k < 4; k++) {
        struct lbt_run runs[8];
        for (unsigned i = 0; i < 8; i++) {
            snprintf(ids[i], sizeof ids[i], "r%u", i);
            runs[i] = (struct lbt_run){ids[i],  "conv6", "cifar",
                                       "train", "fp32",  "cpu_ref",
                                       "X",     8 + i,   100.0 + (double)((i * 7 + k * 3) % 10),
                                       0.1,     0,       i == 7 ? "failed" : NULL};
        }
        json_t *d = lbt_doc("X", NULL, runs, 8, 800 + k);
        char *text = json_dumps(d, JSON_COMPACT);
        request(&a, f, "POST", "/api/v1/results", k % 2 ? bob_auth : f->auth, text);
        assert_int_equal(a.status, 201);
        free(a.body);
        free(text);
        json_decref(d);
        assert_int_equal(mismatches(f), 0);
    }
    /* the default view reads the kept flags; 14 runs of each submitter, 10 ranked */
    request(&a, f, "GET", "/", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "Showing 1\xE2\x80\x93"
                                   "20 of 20 ranked results. 8 more are"));
    free(a.body);
}

/* A result over 4 ranks is never ranked with results over 1: its own table, and the world size
 * beside each result. (Stored without the API: the results schema's data-parallel fields are
 * not what this tests.) */
static void test_world_size_tables(void **state)
{
    struct fixture *f = *state;
    struct lbt_run r = {"r",   "conv6", "cifar", "train", "fp32", "cuda",
                        "GPU", 64,      5000,    0.01,    0,      NULL};
    struct lbt_v2 v = {"gpu", 0, 0};
    json_t *one = lbt_doc_v2("X", "GPU", &r, &v, 1, 1);
    json_t *four = lbt_doc_v2("X", "GPU", &r, &v, 1, 2);
    json_object_set_new(json_object_get(json_array_get(json_object_get(four, "runs"), 0), "config"),
                        "world_size", json_integer(4));
    assert_true(store_doc(f, one, NULL, NULL) > 0);
    assert_true(store_doc(f, four, NULL, NULL) > 0);
    struct answer a;
    request(&a, f, "GET", "/", NULL, NULL);
    assert_int_equal(a.status, 200);
    const char *w1 = strstr(a.body, "id=\"g-conv6-cifar-train-fp32\"");
    const char *w4 = strstr(a.body, "id=\"g-conv6-cifar-train-fp32-w4\"");
    assert_non_null(w1);
    assert_non_null(w4);
    assert_non_null(strstr(w4, "4 ranks"));
    assert_non_null(strstr(w4, "<td class=\"num\" data-v=\"4\">4</td>"));
    free(a.body);
    request(&a, f, "GET", "/?world_size=4", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_null(strstr(a.body, "id=\"g-conv6-cifar-train-fp32\""));
    assert_non_null(strstr(a.body, "id=\"g-conv6-cifar-train-fp32-w4\""));
    free(a.body);
    request(&a, f, "GET", "/api/v1/results?world_size=4", NULL, NULL);
    assert_non_null(strstr(a.body, "\"total\":1,"));
    assert_non_null(strstr(a.body, "\"world_size\":4"));
    free(a.body);
    json_decref(one);
    json_decref(four);
}

/* Issue 14: one token cannot empty the rankings. A flood of runs under one model stays in
 * that model's table (at most 10 of the token's runs ranked, the rest said to be hidden); a
 * flood of models ranks after tables with more submitters; what is cut is said. */
/* The models of the tables of a rankings page, in order, joined by spaces, into out. */
static void table_order(char *out, size_t cap, const char *page)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = page; (p = strstr(p, "id=\"g-")) != NULL && n + 40 < cap; p += 6) {
        const char *h2 = strstr(p, "<h2>"); /* the table's heading: its model first */
        if (!h2)
            break;
        size_t len = strcspn(h2 + 4, " <");
        n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? " " : "", (int)len, h2 + 4);
    }
}

/* Submits one run of `model` with token header `auth` (NULL: alice's) and returns nothing;
 * asserts it is stored. */
static void submit_model(struct fixture *f, const char *auth, const char *model, unsigned nonce)
{
    struct answer a;
    const char *one[1] = {model};
    json_t *d = lbt_models_doc(one, 1, nonce);
    post_doc_as(&a, f, auth, d);
    assert_int_equal(a.status, 201);
    free(a.body);
    json_decref(d);
}

/* The order of the tables: submitters, then each submitter's turn, then the latest submission;
 * the same when the page is read from the runs (a filter by backend); and what migration 5
 * derives from the runs is what was kept as they arrived. */
static void test_table_order(void **state)
{
    struct fixture *f = *state;
    char auth[3][LB_TOKEN_LEN + 16], token[LB_TOKEN_LEN + 1];
    const char *names[3] = {"bob", "carol", "mallory"};
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(lb_auth_create(token, db, names[i], &err), XPB_OK);
        snprintf(auth[i], sizeof auth[i], "Bearer %s", token);
    }
    lb_pool_put(f->app.pool, db);
    submit_model(f, NULL, "m1", 1);
    submit_model(f, auth[0], "m2", 2);
    submit_model(f, auth[1], "m3", 3);
    /* mallory: ten new models in one submission, alphabetically first */
    const char *const models[10] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"};
    struct answer a;
    json_t *d = lbt_models_doc(models, 10, 4);
    post_doc_as(&a, f, auth[2], d);
    assert_int_equal(a.status, 201);
    free(a.body);
    json_decref(d);
    char order[512];
    const char *want = "a0 m3 m2 m1 a1 a2 a3 a4 a5 a6"; /* turn 0 newest first, then turns */
    request(&a, f, "GET", "/", NULL, NULL);
    table_order(order, sizeof order, a.body);
    free(a.body);
    assert_string_equal(order, want);
    request(&a, f, "GET", "/?backend=cpu_ref", NULL, NULL); /* read from the runs */
    table_order(order, sizeof order, a.body);
    free(a.body);
    assert_string_equal(order, want);
    /* bob joins m1: two submitters come first */
    submit_model(f, auth[0], "m1", 5);
    request(&a, f, "GET", "/", NULL, NULL);
    table_order(order, sizeof order, a.body);
    free(a.body);
    assert_string_equal(order, "m1 a0 m3 m2 a1 a2 a3 a4 a5 a6");
    /* migration 5 again, from the runs: the same order as kept */
    db = lb_pool_get(f->app.pool);
    assert_int_equal(lb_db_exec(db,
                                "UPDATE board_groups SET first_run = 0, creator_token = 0, "
                                "creator_turn = 0, last_submission = 0; DROP INDEX "
                                "board_groups_creator; DROP INDEX board_groups_order; "
                                "ALTER TABLE board_groups DROP COLUMN first_run; "
                                "ALTER TABLE board_groups DROP COLUMN creator_token; "
                                "ALTER TABLE board_groups DROP COLUMN creator_turn; "
                                "ALTER TABLE board_groups DROP COLUMN last_submission; "
                                "DROP TABLE tta_runs; "
                                "DELETE FROM schema_migrations WHERE version >= 5",
                                &err),
                     XPB_OK);
    assert_int_equal(lb_migrate(db, &err), XPB_OK);
    lb_pool_put(f->app.pool, db);
    request(&a, f, "GET", "/", NULL, NULL);
    table_order(order, sizeof order, a.body);
    free(a.body);
    assert_string_equal(order, "m1 a0 m3 m2 a1 a2 a3 a4 a5 a6");
}

static void test_flood(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    struct lb_db *db = lb_pool_get(f->app.pool);
    char bob[LB_TOKEN_LEN + 1], bob_auth[LB_TOKEN_LEN + 16];
    xpb_err err;
    assert_int_equal(lb_auth_create(bob, db, "bob", &err), XPB_OK);
    lb_pool_put(f->app.pool, db);
    snprintf(bob_auth, sizeof bob_auth, "Bearer %s", bob);
    /* conv6 by two submitters */
    for (unsigned k = 0; k < 2; k++) {
        json_t *d = lbt_small_doc(500 + k);
        char *text = json_dumps(d, JSON_COMPACT);
        request(&a, f, "POST", "/api/v1/results", k ? bob_auth : f->auth, text);
        assert_int_equal(a.status, 201);
        free(a.body);
        free(text);
        json_decref(d);
    }
    /* alice floods: 3 submissions of 200 runs of "aaa", and 12 models of one run each */
    static struct lbt_run flood[200];
    static char ids[200][16];
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned i = 0; i < 200; i++) {
            snprintf(ids[i], sizeof ids[i], "aaa-%u", i);
            flood[i] = (struct lbt_run){ids[i],    "aaa", "x",   "train",           "fp32",
                                        "cpu_ref", "X",   1 + i, 1e6 - i - 200 * k, 0.001,
                                        0,         NULL};
        }
        json_t *d = lbt_doc("X", NULL, flood, 200, 600 + k);
        post_doc(&a, f, d);
        assert_int_equal(a.status, 201);
        free(a.body);
        json_decref(d);
    }
    for (unsigned m = 0; m < 12; m++) {
        char model[16];
        snprintf(model, sizeof model, "m%02u", m);
        submit_model(f, NULL, model, 700 + m);
    }
    request(&a, f, "GET", "/", NULL, NULL);
    assert_int_equal(a.status, 200);
    /* conv6 (two submitters) is the first table; the page says it shows 10 of 14 tables */
    const char *conv6 = strstr(a.body, "id=\"g-conv6-cifar-train-fp32\"");
    const char *aaa = strstr(a.body, "id=\"g-aaa-x-train-fp32\"");
    assert_non_null(conv6);
    assert_non_null(aaa);
    assert_true(conv6 < aaa);
    assert_non_null(strstr(a.body, "Tables 1\xE2\x80\x93"
                                   "10 of 14"));
    /* aaa ranks 10 of alice's 600 runs and says the other 590 are hidden */
    assert_non_null(strstr(aaa, "590 more are hidden"));
    size_t rows = 0;
    const char *end = strstr(aaa, "</tbody>");
    for (const char *p = aaa; (p = strstr(p, "data-submission=")) && p < end; p++)
        rows++;
    assert_int_equal(rows, 10);
    free(a.body);
    /* the second page holds the other four tables */
    request(&a, f, "GET", "/?page=2", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "Tables 11\xE2\x80\x93"
                                   "14 of 14"));
    free(a.body);
    /* a submitter filter shows all of one submitter's runs, 25 at a time, and pages on */
    request(&a, f, "GET", "/?model=aaa&submitter=alice", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "Showing 1\xE2\x80\x93"
                                   "25 of 600 ranked results."));
    assert_non_null(strstr(a.body, "offset=25"));
    free(a.body);
}

/* ---- time to accuracy (schema version 3) ---- */

/* Three time-to-accuracy results of conv6 on Fashion-MNIST to 0.90 (the reference converges
 * in 4.5 epochs, core's measured point): "steady" reaches it in ~120 s, "quick" in ~60 s with one
 * run after 1 epoch (outside the reference point), "stuck" has two of three runs that never reach
 * it. */
static const struct lbt_tta tta_results[3] = {
    {"steady",
     "conv6",
     "default",
     "fp32",
     "cpu_onednn",
     "Xeon <b>",
     "cpu",
     64,
     0.90,
     5,
     {100, 110, 120, 130, 140},
     {3, 3, 3.25, 3.5, 3.5},
     50,
     {NULL}},
    {"quick",
     "conv6",
     "default",
     "fp32",
     "cpu_onednn",
     "Xeon",
     "cpu",
     64,
     0.90,
     3,
     {20, 60, 70},
     {1, 3, 3.25},
     0,
     {NULL}},
    {"stuck",
     "conv6",
     "default",
     "fp32",
     "cpu_ref",
     "Xeon",
     "cpu",
     64,
     0.90,
     3,
     {200, NAN, NAN},
     {3, 0, 0},
     0,
     {NULL, "stalled", NULL}},
};

static const struct lbt_run tta_throughput = {
    "thr", "conv6", "default", "train", "fp32", "cpu_onednn", "Xeon", 64, 500, 0.128, 0, NULL};

/* Sets key of runs[i].tta (below `sub` when not NULL) of doc to v. */
static void set_tta(json_t *doc, size_t i, const char *sub, const char *key, json_t *v)
{
    json_t *o = json_object_get(json_array_get(json_object_get(doc, "runs"), i), "tta");
    if (sub)
        o = json_object_get(o, sub);
    assert_non_null(o);
    json_object_set_new(o, key, v);
}

/* A version-3 document is read with its tta runs' scores, never a throughput; the
 * leaderboard's bounds and the scores' agreement with their runs are checked. */
static void test_tta_extract(void **state)
{
    (void)state;
    xpb_err err;
    struct lb_run_row *rows = NULL;
    size_t n;
    json_t *doc = lbt_doc_v3("Xeon", &tta_throughput, 1, tta_results, 3, 1);
    assert_int_equal(xpb_results_validate(doc, &err), XPB_OK);
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_OK);
    assert_int_equal(n, 4);
    assert_false(rows[0].tta.has);
    assert_true(rows[0].throughput == 500);
    const struct lb_tta_row *t = &rows[1].tta;
    assert_true(t->has);
    assert_string_equal(rows[1].mode, "tta");
    assert_true(isnan(rows[1].throughput)); /* its step rate is not what it measures */
    assert_string_equal(t->dataset, "fashion-mnist");
    assert_true(fabs(t->target - 0.90) < 1e-12);
    assert_true(fabs(t->seconds - 120) < 1e-9); /* Olympic: 110, 120, 130 */
    assert_true(t->seconds_min == 100 && t->seconds_max == 140);
    assert_true(fabs(t->joules - 50 * 120) < 1e-6);
    assert_true(t->epochs == 3.25);          /* the median */
    assert_true(t->reference_epochs == 4.5); /* conv6's measured point (core, tta_score.c) */
    assert_int_equal(t->converged, 5);
    assert_int_equal(t->runs, 5);
    assert_int_equal(t->outside, 0);
    assert_int_equal(rows[2].tta.outside, 1); /* 1 epoch: fewer than half the reference's */
    assert_true(isnan(rows[2].tta.joules));   /* not measured */
    assert_true(isnan(rows[3].tta.seconds));  /* two of three never reached it */
    assert_int_equal(rows[3].tta.converged, 1);
    free(rows);
    json_decref(doc);
    /* implausible numbers and scores that contradict their runs, each named by its path */
    static const struct {
        const char *sub, *key;
        double v;
        const char *says;
    } wrong[] = {
        {NULL, "target", 1.5, "runs[1].tta.target: 1.5 (accuracy) is not plausible"},
        {"seconds", "mean", -1, "runs[1].tta.seconds.mean: -1 s is not plausible"},
        {"seconds", "mean", 5e7, "runs[1].tta.seconds.mean: 5e+07 s"},
        {"seconds", "mean", 150, "tta.seconds.mean: 150 is not plausible outside its runs'"},
        {"seconds", "converged", 3, "tta.seconds.converged: 3, but 5 of tta.runs converged"},
        {"joules", "runs", 9, "tta.joules.runs: 9 runs scored, but tta.runs lists 5"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        doc = lbt_doc_v3("Xeon", &tta_throughput, 1, tta_results, 1, 2);
        json_t *v = !strcmp(wrong[i].key, "converged") || !strcmp(wrong[i].key, "runs")
                        ? json_integer((json_int_t)wrong[i].v)
                        : json_real(wrong[i].v);
        set_tta(doc, 1, wrong[i].sub, wrong[i].key, v);
        assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
        if (!strstr(err.msg, wrong[i].says))
            fail_msg("%s: %s", wrong[i].says, err.msg);
        json_decref(doc);
    }
    doc = lbt_doc_v3("Xeon", &tta_throughput, 1, tta_results, 1, 3);
    json_t *run0 = json_array_get(
        json_object_get(json_object_get(json_array_get(json_object_get(doc, "runs"), 1), "tta"),
                        "runs"),
        0);
    json_object_set_new(json_array_get(json_object_get(run0, "curve"), 0), "accuracy",
                        json_real(1.2));
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[1].tta.runs[0].curve[0].accuracy: 1.2"));
    set_tta(doc, 1, NULL, "dataset", json_string("fashion mnist"));
    json_object_set_new(json_array_get(json_object_get(run0, "curve"), 0), "accuracy",
                        json_real(0.2));
    assert_int_equal(extract(doc, 256, &rows, &n, &err), XPB_PARSE_ERROR);
    assert_non_null(strstr(err.msg, "runs[1].tta.dataset"));
    json_decref(doc);
}

/* The rows of tta_runs as "run_index:converged/n_runs,..." in the order of their run ids. */
static void tta_kept(char *out, size_t cap, struct fixture *f)
{
    static const char sql[] = "SELECT r.run_index, x.converged, x.n_runs FROM tta_runs x "
                              "JOIN runs r ON r.id = x.run_id ORDER BY x.run_id";
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    struct lb_stmt *s = lb_db_stmt(db, sql, &err);
    assert_non_null(s);
    out[0] = '\0';
    while (lb_stmt_step(s) == LB_STEP_ROW) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%lld:%lld/%lld", n ? "," : "", lb_col_int(s, 0),
                 lb_col_int(s, 1), lb_col_int(s, 2));
    }
    lb_stmt_done(s);
    lb_pool_put(f->app.pool, db);
}

/* Uploaded tta runs are kept on their own board, ranked by time to target, in none of the
 * throughput tables; migration 6 keeps those stored before it. */
static void test_tta_store(void **state)
{
    struct fixture *f = *state;
    json_t *doc = lbt_doc_v3("Xeon", &tta_throughput, 1, tta_results, 3, 1);
    assert_int_equal(store_doc(f, doc, NULL, NULL), 1);
    json_decref(doc);
    char kept[128];
    tta_kept(kept, sizeof kept, f);
    assert_string_equal(kept, "1:5/5,2:3/3,3:1/3");
    assert_int_equal(mismatches(f), 0); /* the throughput tables hold the throughput run only */
    struct lb_db *db = lb_pool_get(f->app.pool);
    xpb_err err;
    struct lb_stmt *s = lb_db_stmt(db, "SELECT count(*) FROM board_groups", &err);
    long long groups = 0;
    assert_int_equal(lb_store_int(&groups, db, s, "groups", &err), XPB_OK);
    assert_int_equal(groups, 1);
    struct lb_tta_group *g = NULL;
    size_t n_groups = 0;
    long long total = 0;
    assert_int_equal(lb_store_tta_groups(&g, &n_groups, &total, db, 10, 0, &err), XPB_OK);
    assert_int_equal(n_groups, 1);
    assert_int_equal(total, 1);
    assert_string_equal(g[0].model, "conv6");
    assert_string_equal(g[0].dataset, "fashion-mnist");
    assert_int_equal(g[0].n_runs, 3);
    assert_int_equal(g[0].n_submitters, 1);
    struct lb_run_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(lb_store_tta_runs(&rows, &n, &total, db, &g[0], 10, 25, &err), XPB_OK);
    assert_int_equal(n, 3);
    assert_int_equal(total, 3);
    /* quick (Olympic 60 s), steady (120 s), then stuck (not reached) */
    assert_string_equal(rows[0].run_id, "quick");
    assert_string_equal(rows[1].run_id, "steady");
    assert_string_equal(rows[2].run_id, "stuck");
    assert_true(rows[0].tta.has && rows[0].tta.outside == 1);
    assert_true(fabs(rows[1].tta.seconds - 120) < 1e-9);
    assert_true(isnan(rows[2].tta.seconds));
    assert_string_equal(rows[1].device, "Xeon <b>");
    free(rows);
    /* one submitter's fastest only */
    assert_int_equal(lb_store_tta_runs(&rows, &n, &total, db, &g[0], 1, 25, &err), XPB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(total, 1);
    assert_string_equal(rows[0].run_id, "quick");
    free(rows);
    free(g);
    /* migration 6 again, from the stored documents: the same rows */
    assert_int_equal(lb_db_exec(db,
                                "DROP TABLE tta_runs; DELETE FROM schema_migrations WHERE "
                                "version = 6",
                                &err),
                     XPB_OK);
    assert_int_equal(lb_migrate(db, &err), XPB_OK);
    lb_pool_put(f->app.pool, db);
    tta_kept(kept, sizeof kept, f);
    assert_string_equal(kept, "1:5/5,2:3/3,3:1/3");
}

/* The board's page: one table ranked by time to target, the spread, the epochs, the runs
 * outside the reference flagged, every text escaped; never on the throughput rankings. */
static void test_tta_page(void **state)
{
    struct fixture *f = *state;
    struct answer a;
    request(&a, f, "GET", "/tta", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "No time-to-accuracy results here yet."));
    free(a.body);
    json_t *doc =
        lbt_doc_v3("Xeon \"<script>alert(1)</script>", &tta_throughput, 1, tta_results, 3, 1);
    post_doc(&a, f, doc);
    assert_int_equal(a.status, 201);
    free(a.body);
    json_decref(doc);
    request(&a, f, "GET", "/tta", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_null(strstr(a.body, "<script>alert"));
    assert_null(strstr(a.body, "Xeon <b>"));
    assert_non_null(strstr(a.body, "Xeon &lt;b&gt;"));
    assert_non_null(strstr(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(a.body, "target accuracy 0.9000"));
    assert_non_null(strstr(a.body, "3 results from 1 submitter"));
    /* ranked: quick (60 s), steady (120 s, spread 100-140 s), stuck (not reached) */
    const char *quick = strstr(a.body, "<b>60.0</b>");
    const char *steady = strstr(a.body, "<b>120</b><span class=\"ci small muted\">100\xE2\x80\x93"
                                        "140</span>");
    const char *stuck = strstr(a.body, "not reached</span>");
    assert_non_null(quick);
    assert_non_null(steady);
    assert_non_null(stuck);
    assert_true(quick < steady && steady < stuck);
    assert_non_null(strstr(a.body, ">5/5</td>"));
    assert_non_null(strstr(a.body, ">1/3</td>"));
    assert_non_null(strstr(a.body, "6,000")); /* steady's energy: 50 W x 120 s */
    /* quick's run after 1 epoch is outside the reference's 4.5: flagged */
    const char *flag = strstr(a.body, "1 run converged after fewer than half");
    assert_non_null(flag);
    assert_true(flag > quick && flag < steady);
    assert_null(strstr(a.body, "2 runs converged after"));
    free(a.body);
    /* the rankings hold the throughput run only; the submission shows the scores */
    request(&a, f, "GET", "/", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "href=\"/tta\""));
    assert_null(strstr(a.body, "not reached"));
    assert_null(strstr(a.body, "<span class=\"pill\">tta</span>"));
    assert_non_null(strstr(a.body, "<span class=\"pill\">train</span>"));
    free(a.body);
    request(&a, f, "GET", "/?backend=cpu_ref", NULL, NULL); /* read from the runs */
    assert_int_equal(a.status, 200);
    assert_null(strstr(a.body, "<span class=\"pill\">tta</span>"));
    assert_null(strstr(a.body, "<section class=\"card group\""));
    free(a.body);
    request(&a, f, "GET", "/submissions/1", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "time to accuracy"));
    assert_non_null(strstr(a.body, "reached 5/5"));
    assert_non_null(strstr(a.body, "did not reach the target in 10 epochs"));
    assert_non_null(strstr(a.body, "stopped early: stalled (at chance accuracy"));
    assert_null(strstr(a.body, "<script>alert"));
    free(a.body);
    /* the API lists the tta runs without a throughput */
    request(&a, f, "GET", "/api/v1/results?mode=tta", NULL, NULL);
    assert_int_equal(a.status, 200);
    json_t *list = json_loads(a.body, 0, NULL);
    assert_non_null(list);
    json_t *listed = json_object_get(json_array_get(json_object_get(list, "results"), 0), "runs");
    assert_int_equal(json_array_size(listed), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *run = json_array_get(listed, i);
        assert_string_equal(json_string_value(json_object_get(run, "mode")), "tta");
        assert_true(json_is_null(json_object_get(run, "throughput")));
        assert_true(json_is_null(json_object_get(run, "step_time_p50_s")));
    }
    json_decref(list);
    free(a.body);
    request(&a, f, "GET", "/tta?page=0", NULL, NULL);
    assert_int_equal(a.status, 400);
    free(a.body);
    request(&a, f, "GET", "/tta?page=2", NULL, NULL);
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "previous tables"));
    free(a.body);
}

int main(int argc, char **argv)
{
    struct lbt_pg pg;
    if (argc > 1 && !strcmp(argv[1], "postgres")) {
        if (!lb_db_have_postgres()) {
            printf("skipped: this build has no PostgreSQL store (libpq-dev)\n");
            return 77;
        }
        int rc = lbt_pg_start(&pg, LBT_PG_CLUSTER);
        if (rc != 0) {
            printf("%s\n", rc == 77 ? "skipped: no PostgreSQL server tools here"
                                    : "cannot start a PostgreSQL cluster");
            return rc == 77 ? 77 : 1;
        }
        database = pg.url;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_log_and_cut),
        cmocka_unit_test(test_json_shape),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_workq),
        cmocka_unit_test(test_trimmer),
        cmocka_unit_test(test_conntrack),
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_page_cache),
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_ratelimit),
        cmocka_unit_test(test_names_and_members),
        cmocka_unit_test(test_extract_rules),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backfill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_post, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_post_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_shape_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_room, setup, teardown),
        cmocka_unit_test_setup_teardown(test_internal_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_machine_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_comparisons_on_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranks_on_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_rankings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_world_size_tables, setup, teardown),
        cmocka_unit_test(test_tta_extract),
        cmocka_unit_test_setup_teardown(test_tta_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tta_page, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name(database ? "leaderboard units on PostgreSQL"
                                                      : "leaderboard units on SQLite",
                                             tests, NULL, NULL);
    if (database)
        lbt_pg_stop(&pg, LBT_PG_CLUSTER);
    return failed;
}
