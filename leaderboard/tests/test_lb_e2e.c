/* End to end, over HTTPS on 127.0.0.1 with a certificate made by the test: the real service
 * (xpubench-leaderboard) and the real client (`xpubench upload` and its library).
 *   - upload a results file, then the API and the page show it; certificate checks hold
 *   - malformed and hostile submissions get a 4xx with a message and store nothing
 *   - 8 parallel clients uploading the same 200 results store each exactly once (on
 *     PostgreSQL, through two service processes sharing the database)
 *   - the server killed mid-run: the client spools, the server restarts, --flush delivers
 *     everything exactly once
 *   - token administration, and plain HTTP only on loopback
 * `test_lb_e2e postgres` runs the same suite on PostgreSQL, in a throw-away cluster (exit code
 * 77, skipped, where there is none). Every process is started with a parent-death signal and
 * waited for with a deadline. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/lb_db.h"
#include "lbt_support.h"
#include "publish/spool.h"
#include "publish/upload.h"
#include "results/results.h"
#include "store/lb_migrate.h"

#define N_DOCS 200
#define N_CLIENTS 8
#define KILL_DOCS 60
#define MAX_BODY "65536"

static struct {
    char root[256], certs[300], data[300], xdg[300], files[300];
    char ca[400], other_ca[400], cert[400], key[400], spki[64];
    char token[128], env_token[160], env_xdg[360];
    struct lbt_server server;
    struct lbt_server second; /* PostgreSQL: another service process on the same database */
    struct lbt_pg pg;
    long base; /* submissions stored before the current test */
} g;

static char *const *client_env(void)
{
    static char *env[3];
    env[0] = g.env_token;
    env[1] = g.env_xdg;
    env[2] = NULL;
    return env;
}

/* Runs `xpubench upload` with args (NULL-terminated); stdout into out. */
static int upload_cli(char *out, size_t cap, char *const *env, const char *first, ...)
{
    char *argv[128];
    int n = 0;
    argv[n++] = LBT_CLIENT_BIN;
    argv[n++] = "upload";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 126; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    char sink[4096];
    return lbt_run(argv, env, out ? out : sink, out ? cap : sizeof sink, 90);
}

static size_t spooled(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/xpubench/spool", g.xdg);
    char **paths;
    size_t n;
    xpb_err err;
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    xpb_spool_list_free(paths, n);
    return n;
}

static int group_setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(lbt_tempdir(g.root, sizeof g.root, "lbe2e"), 0);
    snprintf(g.certs, sizeof g.certs, "%s/certs", g.root);
    snprintf(g.data, sizeof g.data, "%s/data", g.root);
    snprintf(g.xdg, sizeof g.xdg, "%s/xdg", g.root);
    snprintf(g.files, sizeof g.files, "%s/files", g.root);
    assert_int_equal(mkdir(g.certs, 0700), 0);
    assert_int_equal(mkdir(g.files, 0700), 0);
    assert_int_equal(lbt_make_certs(g.certs, g.spki), 0);
    snprintf(g.ca, sizeof g.ca, "%s/ca.pem", g.certs);
    snprintf(g.other_ca, sizeof g.other_ca, "%s/other-ca.pem", g.certs);
    snprintf(g.cert, sizeof g.cert, "%s/server.pem", g.certs);
    snprintf(g.key, sizeof g.key, "%s/server.key", g.certs);
    const char *extra[] = {
        "--rate-limit", "0", "--max-per-day", "0", "--max-body", MAX_BODY, "--threads", "4", NULL};
    assert_int_equal(lbt_server_start(&g.server, LBT_SERVER_BIN, g.data, g.cert, g.key, 0, extra),
                     0);
    assert_int_equal(lbt_make_token(g.token, sizeof g.token, LBT_SERVER_BIN, g.data, "alice"), 0);
    if (lbt_database()) {
        char data2[400];
        snprintf(data2, sizeof data2, "%s/second", g.root);
        assert_int_equal(
            lbt_server_start(&g.second, LBT_SERVER_BIN, data2, g.cert, g.key, 0, extra), 0);
    }
    snprintf(g.env_token, sizeof g.env_token, "XPB_UPLOAD_TOKEN=%s", g.token);
    snprintf(g.env_xdg, sizeof g.env_xdg, "XDG_DATA_HOME=%s", g.xdg);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g.server.pid > 0)
        assert_int_equal(lbt_server_stop(&g.server, 0), 0);
    if (g.second.pid > 0)
        assert_int_equal(lbt_server_stop(&g.second, 0), 0);
    if (!getenv("LBT_KEEP"))
        lbt_rmtree(g.root);
    return 0;
}

static int test_setup(void **state)
{
    (void)state;
    g.base = lbt_count(g.server.url, g.ca);
    assert_true(g.base >= 0);
    return 0;
}

static void test_upload_then_visible(void **state)
{
    (void)state;
    struct lbt_run runs[2] = {
        {"t4-train", "resnet18", "cifar", "train", "fp32", "cuda", "Tesla T4 e2e", 64, 2500, 0.0256,
         31.5, NULL},
        {"cpu-train", "resnet18", "cifar", "train", "fp32", "cpu_onednn", "Xeon e2e", 64, 40, 1.6,
         0, NULL},
    };
    struct lbt_v2 kinds[2] = {{"gpu", 0, 0}, {"cpu", 0, 0}};
    json_t *doc = lbt_doc_v2("Xeon e2e", "Tesla T4 e2e", runs, kinds, 2, 4242);
    char file[512], out[8192];
    snprintf(file, sizeof file, "%s/visible.json", g.files);
    assert_int_equal(lbt_write_doc(doc, file), 0);

    assert_int_equal(upload_cli(out, sizeof out, client_env(), file, "--server", g.server.url,
                                "--cacert", g.ca, NULL),
                     0);
    assert_non_null(strstr(out, "uploaded as submission"));
    long id = 0;
    const char *p = strstr(out, "submission ");
    assert_int_equal(sscanf(p, "submission %ld", &id), 1);
    char url[256];
    snprintf(url, sizeof url, "%s/submissions/%ld", g.server.url, id);
    assert_non_null(strstr(out, url));
    assert_int_equal(spooled(), 0);
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + 1);

    /* the API gives the document back as sent */
    struct lbt_reply r;
    snprintf(url, sizeof url, "%s/api/v1/results/%ld", g.server.url, id);
    assert_int_equal(lbt_http(&r, "GET", url, g.ca, NULL, NULL, 0, 0), 0);
    assert_int_equal(r.status, 200);
    json_t *back = json_loads(r.body, 0, NULL);
    assert_true(json_equal(json_object_get(back, "results"), doc));
    json_decref(back);
    lbt_reply_free(&r);

    /* the page ranks it: the T4 above the Xeon, 62.5x the best CPU device, energy shown */
    snprintf(url, sizeof url, "%s/?model=resnet18", g.server.url);
    assert_int_equal(lbt_http(&r, "GET", url, g.ca, NULL, NULL, 0, 0), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.content_type, "text/html"));
    assert_non_null(strstr(r.csp, "script-src 'self'"));
    const char *t4 = strstr(r.body, "<b>Tesla T4 e2e</b>");
    const char *xeon = strstr(r.body, "<b>Xeon e2e</b>");
    assert_non_null(t4);
    assert_non_null(xeon);
    assert_true(t4 < xeon);
    assert_non_null(strstr(r.body, "62.5\xC3\x97"));
    assert_non_null(strstr(r.body, "31.50"));
    lbt_reply_free(&r);

    /* the same file again: recognised, not stored twice */
    assert_int_equal(upload_cli(out, sizeof out, client_env(), file, "--server", g.server.url,
                                "--cacert", g.ca, NULL),
                     0);
    assert_non_null(strstr(out, "already on the leaderboard"));
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + 1);

    /* certificate verification is always on: an unrelated CA fails and the upload waits in
     * the spool; the right CA then delivers it (as a duplicate) */
    assert_int_equal(upload_cli(out, sizeof out, client_env(), file, "--server", g.server.url,
                                "--cacert", g.other_ca, "--retries", "0", NULL),
                     1);
    assert_int_equal(spooled(), 1);
    assert_int_equal(upload_cli(out, sizeof out, client_env(), "--flush", "--cacert", g.ca, NULL),
                     0);
    assert_non_null(strstr(out, "1 delivered"));
    assert_int_equal(spooled(), 0);
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + 1);
    json_decref(doc);
}

/* A version-3 document with time-to-accuracy results, uploaded by the client: its results are
 * on the time-to-accuracy board, ranked by time to target, and on no throughput table. */
static void test_tta_uploaded(void **state)
{
    (void)state;
    const struct lbt_tta tta[2] = {
        {"tta-slow",
         "conv6",
         "e2e",
         "fp32",
         "cpu_ref",
         "Xeon tta e2e",
         "cpu",
         64,
         0.90,
         3,
         {300, 320, 340},
         {3, 3, 3},
         0,
         {NULL}},
        {"tta-fast",
         "conv6",
         "e2e",
         "fp32",
         "cpu_onednn",
         "Xeon tta e2e",
         "cpu",
         64,
         0.90,
         3,
         {80, 90, 100},
         {3, 3, 3},
         60,
         {NULL}},
    };
    json_t *doc = lbt_doc_v3("Xeon tta e2e", NULL, 0, tta, 2, 4343);
    char file[512], out[8192];
    snprintf(file, sizeof file, "%s/tta.json", g.files);
    assert_int_equal(lbt_write_doc(doc, file), 0);
    json_decref(doc);
    assert_int_equal(upload_cli(out, sizeof out, client_env(), file, "--server", g.server.url,
                                "--cacert", g.ca, NULL),
                     0);
    assert_non_null(strstr(out, "uploaded as submission"));
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + 1);
    struct lbt_reply r;
    char url[256];
    snprintf(url, sizeof url, "%s/tta", g.server.url);
    assert_int_equal(lbt_http(&r, "GET", url, g.ca, NULL, NULL, 0, 0), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.content_type, "text/html"));
    const char *table = strstr(r.body, "id=\"t-conv6-e2e-fashion-mnist-0.9000\"");
    assert_non_null(table);
    const char *fast = strstr(table, "<b>90.0</b>");
    const char *slow = strstr(table, "<b>320</b>");
    assert_non_null(fast);
    assert_non_null(slow);
    assert_true(fast < slow);
    assert_non_null(strstr(table, "5,400")); /* 60 W x 90 s */
    lbt_reply_free(&r);
    snprintf(url, sizeof url, "%s/?model=conv6", g.server.url);
    assert_int_equal(lbt_http(&r, "GET", url, g.ca, NULL, NULL, 0, 0), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "Xeon tta e2e"));            /* among the recent submissions */
    assert_null(strstr(r.body, "id=\"g-conv6-e2e-tta-fp32\"")); /* in no table */
    lbt_reply_free(&r);
}

/* The token never comes from the command line; http:// is refused before anything. */
static void test_client_refuses(void **state)
{
    (void)state;
    json_t *doc = lbt_small_doc(4343);
    char file[512], out[8192];
    snprintf(file, sizeof file, "%s/refused.json", g.files);
    assert_int_equal(lbt_write_doc(doc, file), 0);
    assert_int_equal(upload_cli(out, sizeof out, client_env(), file, "--server", g.server.url,
                                "--token", g.token, NULL),
                     2);
    char http_url[160];
    snprintf(http_url, sizeof http_url, "http://127.0.0.1:%d", g.server.port);
    assert_int_equal(upload_cli(out, sizeof out, client_env(), file, "--server", http_url, NULL),
                     2);
    char *no_token_env[] = {"XPB_UPLOAD_TOKEN=", g.env_xdg, NULL};
    assert_int_equal(upload_cli(out, sizeof out, no_token_env, file, "--server", g.server.url,
                                "--cacert", g.ca, NULL),
                     2);
    assert_int_equal(spooled(), 0);
    json_decref(doc);
}

/* POSTs body with the given token (NULL: none) and content type; checks the status and that
 * the answer is a JSON error with a message (status 0: no answer is required). */
static void expect_refused_with(const char *body, size_t len, const char *token, const char *type,
                                int chunked, const char *expect, long status, const char *needle)
{
    char auth[200], ctype[100], url[200];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    snprintf(ctype, sizeof ctype, "Content-Type: %s", type);
    snprintf(url, sizeof url, "%s/api/v1/results", g.server.url);
    const char *headers[] = {ctype, expect, token ? auth : NULL, NULL};
    if (!expect) {
        headers[1] = headers[2];
        headers[2] = NULL;
    }
    struct lbt_reply r;
    int rc = lbt_http(&r, "POST", url, g.ca, headers, body, len, chunked);
    if (status == 0) {
        /* a stream going on far past the limit is cut off: no answer expected */
        lbt_reply_free(&r);
        return;
    }
    assert_int_equal(rc, 0);
    if (r.status != status)
        fprintf(stderr, "expected %ld, got %ld: %s\n", status, r.status, r.body);
    assert_int_equal(r.status, status);
    json_t *err = json_loads(r.body, 0, NULL);
    assert_non_null(err);
    assert_true(json_is_string(json_object_get(err, "error")));
    if (needle && !strstr(r.body, needle))
        fail_msg("answer '%s' lacks '%s'", r.body, needle);
    json_decref(err);
    lbt_reply_free(&r);
}

static void expect_refused(const char *body, size_t len, const char *token, const char *type,
                           int chunked, long status, const char *needle)
{
    expect_refused_with(body, len, token, type, chunked, NULL, status, needle);
}

static void test_invalid_submissions(void **state)
{
    (void)state;
    json_t *doc = lbt_small_doc(777);
    char *good = json_dumps(doc, JSON_COMPACT);
    const char *js = "application/json";

    expect_refused(good, strlen(good), NULL, js, 0, 401, "missing bearer token");
    expect_refused(good, strlen(good),
                   "xpb_0123456789abcdef_"
                   "0000000000000000000000000000000000000000000000000000000000000000",
                   js, 0, 401, "unknown token");
    expect_refused(good, strlen(good), g.token, "text/plain", 0, 415, "Content-Type");
    expect_refused("{\"schema\": \"xpubench-results\",", 30, g.token, js, 0, 400, "not valid JSON");
    expect_refused("\xff\xfe{}", 4, g.token, js, 0, 400, "not valid JSON");

    json_t *bad = json_deep_copy(doc); /* wrong type */
    json_object_set_new(json_object_get(json_array_get(json_object_get(bad, "runs"), 0), "metrics"),
                        "flops_per_s", json_string("fast"));
    char *text = json_dumps(bad, JSON_COMPACT);
    expect_refused(text, strlen(text), g.token, js, 0, 422, "runs[0].metrics.flops_per_s");
    free(text);
    json_decref(bad);
    bad = json_deep_copy(doc); /* missing field */
    json_object_del(bad, "environment");
    text = json_dumps(bad, JSON_COMPACT);
    expect_refused(text, strlen(text), g.token, js, 0, 422, "environment");
    free(text);
    json_decref(bad);
    bad = json_deep_copy(doc); /* schema violation: an unknown key, a negative batch */
    json_object_set_new(bad, "hacked", json_true());
    text = json_dumps(bad, JSON_COMPACT);
    expect_refused(text, strlen(text), g.token, js, 0, 422, "hacked");
    free(text);
    json_decref(bad);
    bad = json_deep_copy(doc);
    json_object_set_new(json_object_get(json_array_get(json_object_get(bad, "runs"), 0), "config"),
                        "batch", json_integer(-4));
    text = json_dumps(bad, JSON_COMPACT);
    expect_refused(text, strlen(text), g.token, js, 0, 422, "batch");
    free(text);
    json_decref(bad);
    bad = json_deep_copy(doc); /* script in a name the leaderboard ranks by */
    json_object_set_new(json_object_get(json_array_get(json_object_get(bad, "runs"), 0), "config"),
                        "backend", json_string("<script>alert(1)</script>"));
    text = json_dumps(bad, JSON_COMPACT);
    expect_refused(text, strlen(text), g.token, js, 0, 422, "config.backend");
    free(text);
    json_decref(bad);

    /* huge bodies: announced (Content-Length) and streamed (chunked) */
    size_t huge_len = 4u << 20;
    char *huge = malloc(huge_len);
    assert_non_null(huge);
    memset(huge, ' ', huge_len);
    huge[0] = '[';
    huge[huge_len - 1] = ']';
    expect_refused(huge, 512 * 1024, g.token, js, 0, 413, "limit"); /* read, then refused */
    expect_refused(huge, 512 * 1024, g.token, js, 1, 413, "limit");
    expect_refused_with(huge, huge_len, g.token, js, 0, "Expect: 100-continue", 413, "limit");
    expect_refused(huge, huge_len, g.token, js, 0, 0, NULL); /* may be cut off */
    expect_refused(huge, huge_len, g.token, js, 1, 0, NULL);
    free(huge);

    /* nothing was stored, and the service still answers */
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base);
    expect_refused(good, strlen(good), NULL, js, 0, 401, NULL);
    free(good);
    json_decref(doc);
}

struct client {
    int index;
    char *bodies[N_DOCS];
    size_t lens[N_DOCS];
    char keys[N_DOCS][65];
    long long ids[N_DOCS];
    int failures;
    int created;
};

static struct client clients[N_CLIENTS];

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct xpb_upload_opts opts;
    xpb_upload_opts_init(&opts);
    /* on PostgreSQL, half the clients go through the second service process */
    opts.server = g.second.pid > 0 && c->index % 2 ? g.second.url : g.server.url;
    opts.cacert = g.ca;
    opts.token = g.token;
    opts.backoff_ms = 50;
    for (int k = 0; k < N_DOCS; k++) {
        int i = (k + c->index * (N_DOCS / N_CLIENTS)) % N_DOCS; /* each client its own order */
        struct xpb_upload_reply reply;
        xpb_err err;
        if (xpb_upload_post(&reply, &opts, c->bodies[i], c->lens[i], c->keys[i], &err) != XPB_OK) {
            fprintf(stderr, "client %d doc %d: %s\n", c->index, i, err.msg);
            c->failures++;
            continue;
        }
        c->ids[i] = reply.id;
        c->created += reply.outcome == XPB_UPLOAD_CREATED;
    }
    return NULL;
}

static void test_parallel_clients(void **state)
{
    (void)state;
    xpb_err err;
    for (int i = 0; i < N_DOCS; i++) {
        json_t *doc = lbt_small_doc(10000 + (unsigned)i);
        char *text, key[65];
        size_t len;
        assert_int_equal(xpb_results_canonical(&text, &len, key, doc, &err), XPB_OK);
        json_decref(doc);
        for (int c = 0; c < N_CLIENTS; c++) {
            clients[c].bodies[i] = c == 0 ? text : clients[0].bodies[i];
            clients[c].lens[i] = len;
            memcpy(clients[c].keys[i], key, 65);
        }
    }
    pthread_t threads[N_CLIENTS];
    for (int c = 0; c < N_CLIENTS; c++) {
        clients[c].index = c;
        assert_int_equal(pthread_create(&threads[c], NULL, client_main, &clients[c]), 0);
    }
    for (int c = 0; c < N_CLIENTS; c++)
        pthread_join(threads[c], NULL);
    int created = 0;
    for (int c = 0; c < N_CLIENTS; c++) {
        assert_int_equal(clients[c].failures, 0);
        created += clients[c].created;
    }
    /* each document stored once: 200 created in all, every client saw the same id */
    assert_int_equal(created, N_DOCS);
    for (int i = 0; i < N_DOCS; i++)
        for (int c = 1; c < N_CLIENTS; c++)
            assert_int_equal(clients[c].ids[i], clients[0].ids[i]);
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + N_DOCS);
    for (int i = 0; i < N_DOCS; i++)
        free(clients[0].bodies[i]);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_server_killed_mid_run(void **state)
{
    (void)state;
    /* KILL_DOCS files for one `xpubench upload` run */
    char *argv[KILL_DOCS + 16];
    static char paths[KILL_DOCS][512];
    int n = 0;
    argv[n++] = LBT_CLIENT_BIN;
    argv[n++] = "upload";
    for (int i = 0; i < KILL_DOCS; i++) {
        json_t *doc = lbt_small_doc(50000 + (unsigned)i);
        snprintf(paths[i], sizeof paths[i], "%s/kill-%02d.json", g.files, i);
        assert_int_equal(lbt_write_doc(doc, paths[i]), 0);
        json_decref(doc);
        argv[n++] = paths[i];
    }
    argv[n++] = "--server";
    argv[n++] = g.server.url;
    argv[n++] = "--cacert";
    argv[n++] = g.ca;
    argv[n++] = "--retries"; /* backoff is test_upload's business: fail fast here */
    argv[n++] = "0";
    argv[n] = NULL;
    pid_t client = lbt_spawn(argv, (char *const *)client_env(), NULL, NULL);
    assert_true(client > 0);

    /* kill the service once a few results are in, while the client is still sending */
    double start = now_s();
    long stored = g.base;
    while (stored < g.base + 3 && now_s() - start < 60) {
        stored = lbt_count(g.server.url, g.ca);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    int port = g.server.port;
    assert_int_equal(lbt_server_stop(&g.server, 1), 128 + SIGKILL);
    assert_int_equal(lbt_wait(client, 90), 1); /* some were not delivered */
    size_t waiting = spooled();
    assert_true(waiting > 0);
    assert_true(waiting < KILL_DOCS);

    /* restart on the same port and data; the spool remembers server and CA */
    const char *extra[] = {"--rate-limit", "0", "--max-per-day", "0", "--max-body", MAX_BODY, NULL};
    int started = -1;
    for (int attempt = 0; attempt < 50 && started != 0; attempt++) {
        started = lbt_server_start(&g.server, LBT_SERVER_BIN, g.data, g.cert, g.key, port, extra);
        if (started != 0) {
            struct timespec ts = {0, 100000000};
            nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(started, 0);
    assert_int_equal(g.server.port, port);

    /* a result whose answer was lost is in the spool although the server has it */
    json_t *first = json_load_file(paths[0], 0, NULL);
    char *text, key[65], dir[512];
    size_t len;
    xpb_err err;
    assert_int_equal(xpb_results_canonical(&text, &len, key, first, &err), XPB_OK);
    snprintf(dir, sizeof dir, "%s/xpubench/spool", g.xdg);
    assert_int_equal(xpb_spool_put(NULL, 0, dir, key, g.server.url, g.ca, text, len, &err), XPB_OK);
    free(text);
    json_decref(first);

    char out[16384];
    assert_int_equal(upload_cli(out, sizeof out, client_env(), "--flush", NULL), 0);
    assert_int_equal(spooled(), 0);
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + KILL_DOCS);
    /* a second flush has nothing to do */
    assert_int_equal(upload_cli(out, sizeof out, client_env(), "--flush", NULL), 0);
    assert_non_null(strstr(out, "nothing to send"));
}

static void test_token_admin(void **state)
{
    (void)state;
    char bob[128], out[4096];
    assert_int_equal(lbt_make_token(bob, sizeof bob, LBT_SERVER_BIN, g.data, "bob"), 0);
    char *store_opt = lbt_database() ? "--database" : "--data";
    char *store = lbt_database() ? (char *)lbt_database() : g.data;
    char *list[] = {LBT_SERVER_BIN, "token", "list", store_opt, store, NULL};
    assert_int_equal(lbt_run(list, NULL, out, sizeof out, 30), 0);
    assert_non_null(strstr(out, "alice"));
    assert_non_null(strstr(out, "bob"));
    assert_null(strstr(out, bob + 21)); /* never the secret */
    char *revoke[] = {LBT_SERVER_BIN, "token", "revoke", "bob", store_opt, store, NULL};
    assert_int_equal(lbt_run(revoke, NULL, out, sizeof out, 30), 0);

    json_t *doc = lbt_small_doc(999);
    char file[512];
    snprintf(file, sizeof file, "%s/revoked.json", g.files);
    assert_int_equal(lbt_write_doc(doc, file), 0);
    json_decref(doc);
    char env_bob[200];
    snprintf(env_bob, sizeof env_bob, "XPB_UPLOAD_TOKEN=%s", bob);
    char *env[] = {env_bob, g.env_xdg, NULL};
    assert_int_equal(
        upload_cli(out, sizeof out, env, file, "--server", g.server.url, "--cacert", g.ca, NULL),
        1);
    assert_int_equal(spooled(), 1); /* refused for the token: kept for another try */
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base);
    assert_int_equal(upload_cli(out, sizeof out, client_env(), "--flush", NULL), 0);
    assert_int_equal(spooled(), 0);
    assert_int_equal(lbt_count(g.server.url, g.ca), g.base + 1);
}

/* `migrate` brings the store the service uses (and a new SQLite folder) to this build's
 * schema version and says so; a bad command line is refused with exit code 2. */
static void test_migrate_command(void **state)
{
    (void)state;
    char out[512], expect[64], fresh[512];
    snprintf(expect, sizeof expect, "database schema at version %d\n", lb_migrate_latest());
    char *store_opt = lbt_database() ? "--database" : "--data";
    char *store = lbt_database() ? (char *)lbt_database() : g.data;
    char *again[] = {LBT_SERVER_BIN, "migrate", store_opt, store, NULL};
    assert_int_equal(lbt_run(again, NULL, out, sizeof out, 30), 0);
    assert_string_equal(out, expect);
    snprintf(fresh, sizeof fresh, "%s/migrated", g.root);
    char *first[] = {LBT_SERVER_BIN, "migrate", "--data", fresh, NULL};
    assert_int_equal(lbt_run(first, NULL, out, sizeof out, 30), 0);
    assert_string_equal(out, expect);
    char file[600];
    struct stat st;
    snprintf(file, sizeof file, "%s/" LB_DB_FILE, fresh);
    assert_int_equal(stat(file, &st), 0);

    char *none[] = {LBT_SERVER_BIN, "migrate", NULL};
    char *extra[] = {LBT_SERVER_BIN, "migrate", "--data", fresh, "now", NULL};
    char *both[] = {LBT_SERVER_BIN, "migrate",          "--data", fresh,
                    "--database",   "postgresql://x/y", NULL};
    assert_int_equal(lbt_run(none, NULL, out, sizeof out, 30), 2);
    assert_int_equal(lbt_run(extra, NULL, out, sizeof out, 30), 2);
    assert_int_equal(lbt_run(both, NULL, out, sizeof out, 30), 2);
}

static void test_plain_http_loopback_only(void **state)
{
    (void)state;
    char data[512];
    snprintf(data, sizeof data, "%s/plain", g.root);
    struct lbt_server s;
    assert_int_equal(lbt_server_start(&s, LBT_SERVER_BIN, data, NULL, NULL, 0, NULL), 0);
    assert_non_null(strstr(s.url, "http://127.0.0.1:"));
    char url[200];
    snprintf(url, sizeof url, "%s/healthz", s.url);
    struct lbt_reply r;
    assert_int_equal(lbt_http(&r, "GET", url, NULL, NULL, NULL, 0, 0), 0);
    assert_int_equal(r.status, 200);
    lbt_reply_free(&r);
    assert_int_equal(lbt_server_stop(&s, 0), 0);
    /* not on a public address without TLS */
    char *argv[] = {LBT_SERVER_BIN, "serve",  "--data", data, "--bind",
                    "0.0.0.0",      "--port", "0",      NULL};
    char out[512];
    assert_int_equal(lbt_run(argv, NULL, out, sizeof out, 20), 1);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "postgres")) {
        if (!lb_db_have_postgres()) {
            printf("skipped: this build has no PostgreSQL store (libpq-dev)\n");
            return 77;
        }
        int rc = lbt_pg_start(&g.pg, LBT_PG_CLUSTER);
        if (rc != 0) {
            printf("%s\n", rc == 77 ? "skipped: no PostgreSQL server tools here"
                                    : "cannot start a PostgreSQL cluster");
            return rc == 77 ? 77 : 1;
        }
        lbt_use_database(g.pg.url);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_upload_then_visible, test_setup),
        cmocka_unit_test_setup(test_tta_uploaded, test_setup),
        cmocka_unit_test_setup(test_client_refuses, test_setup),
        cmocka_unit_test_setup(test_invalid_submissions, test_setup),
        cmocka_unit_test_setup(test_parallel_clients, test_setup),
        cmocka_unit_test_setup(test_server_killed_mid_run, test_setup),
        cmocka_unit_test_setup(test_token_admin, test_setup),
        cmocka_unit_test_setup(test_migrate_command, test_setup),
        cmocka_unit_test(test_plain_http_loopback_only),
    };
    int failed = cmocka_run_group_tests_name(lbt_database() ? "end to end on PostgreSQL"
                                                            : "end to end on SQLite",
                                             tests, group_setup, group_teardown);
    lbt_pg_stop(&g.pg, LBT_PG_CLUSTER);
    return failed;
}
