/* The leaderboard client (core/upload.c) and `xpubench upload` (core/cli_upload.c) against a
 * scripted HTTPS server on 127.0.0.1 (libmicrohttpd, with a CA and certificate the test
 * makes): what is sent, retries with backoff on network errors, 5xx and 429, no retry on
 * 4xx, timeouts, certificate verification, redirects never followed, and the CLI's spooling
 * and flushing. Without libmicrohttpd (XPB_TEST_HAVE_SERVER unset) only the offline parts
 * run. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "base/sha256.h"
#include "publish/spool.h"
#include "results/results.h"
#include "publish/upload.h"

#ifdef XPB_TEST_HAVE_SERVER
#include <microhttpd.h>

#include "lbt_support.h"
#include "terminal_inert.h"
#endif

/* ---- offline ---- */

static void test_canonical(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *a = json_loads("{\"b\": [1, 2.5, {\"y\": null, \"x\": true}], \"a\": \"\\u00fc\", "
                           "\"c\": 0.1}",
                           0, &jerr);
    json_t *b = json_loads("{\"c\":0.1,\"a\":\"\xc3\xbc\",\"b\":[1,2.5,{\"x\":true,\"y\":null}]}",
                           0, &jerr);
    assert_non_null(a);
    assert_non_null(b);
    char *ta, *tb, ka[65], kb[65];
    size_t la, lb;
    xpb_err err;
    assert_int_equal(xpb_results_canonical(&ta, &la, ka, a, &err), XPB_OK);
    assert_int_equal(xpb_results_canonical(&tb, &lb, kb, b, &err), XPB_OK);
    assert_string_equal(ta, tb);
    assert_string_equal(ka, kb);
    /* compact, sorted keys, UTF-8 as is, reals with 17 significant digits */
    assert_string_equal(ta, "{\"a\":\"\xc3\xbc\",\"b\":[1,2.5,{\"x\":true,\"y\":null}],"
                            "\"c\":0.10000000000000001}");
    char want[65];
    xpb_sha256_hex(want, ta, la);
    assert_string_equal(ka, want);
    /* a reload of the canonical text is canonical again (reals survive) */
    json_t *c = json_loads(ta, 0, &jerr);
    char *tc, kc[65];
    size_t lc;
    assert_int_equal(xpb_results_canonical(&tc, &lc, kc, c, &err), XPB_OK);
    assert_string_equal(ka, kc);
    free(ta);
    free(tb);
    free(tc);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_refuses_before_sending(void **state)
{
    (void)state;
    struct xpb_upload_opts o;
    xpb_upload_opts_init(&o);
    assert_int_equal(o.attempts, 5);
    assert_true(o.connect_timeout_ms > 0 && o.timeout_ms > 0);
    char key[65];
    xpb_sha256_hex(key, "{}", 2);
    struct xpb_upload_reply r;
    xpb_err err;
    o.token = "secret";
    o.server = "http://127.0.0.1:1";
    assert_int_equal(xpb_upload_post(&r, &o, "{}", 2, key, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "https://"));
    o.server = "https://127.0.0.1:1";
    o.token = "two\nlines";
    assert_int_equal(xpb_upload_post(&r, &o, "{}", 2, key, &err), XPB_INVALID_ARGUMENT);
    o.token = NULL;
    assert_int_equal(xpb_upload_post(&r, &o, "{}", 2, key, &err), XPB_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "XPB_UPLOAD_TOKEN"));
    o.token = "secret";
    o.cacert = "/nonexistent/ca.pem";
    assert_int_equal(xpb_upload_post(&r, &o, "{}", 2, key, &err), XPB_INVALID_ARGUMENT);
    o.cacert = NULL;
    assert_int_equal(xpb_upload_post(&r, &o, "{}", 2, "short", &err), XPB_INVALID_ARGUMENT);
    assert_int_equal(r.attempts, 0);
    /* what makes a usable server URL and token */
    assert_true(xpb_upload_url_ok("https://lb.example"));
    assert_true(xpb_upload_url_ok("HTTPS://lb.example:8443/board/"));
    assert_false(xpb_upload_url_ok("https://"));
    assert_false(xpb_upload_url_ok("https:///path"));
    assert_false(xpb_upload_url_ok("https://:443"));
    assert_false(xpb_upload_url_ok("https://lb example"));
    assert_false(xpb_upload_url_ok("https://lb.example/\r\nX: y"));
    assert_false(xpb_upload_url_ok("ftp://lb.example"));
    assert_false(xpb_upload_url_ok(NULL));
    assert_true(xpb_upload_token_ok("xpb_0123_abc"));
    assert_false(xpb_upload_token_ok("a\x1b[31m"));
    assert_false(xpb_upload_token_ok("a b"));
    assert_false(xpb_upload_token_ok(""));
}

static void test_cli_usage(void **state)
{
    (void)state;
    char *a1[] = {"upload", NULL};
    assert_int_equal(xpb_cli_upload(1, a1), XPB_EXIT_USAGE);
    char *a2[] = {"upload", "r.json", "--token", "abc", NULL};
    assert_int_equal(xpb_cli_upload(4, a2), XPB_EXIT_USAGE);
    char *a3[] = {"upload", "--flush", "r.json", NULL};
    assert_int_equal(xpb_cli_upload(3, a3), XPB_EXIT_USAGE);
    char *a4[] = {"upload", "r.json", "--retries", "many", NULL};
    assert_int_equal(xpb_cli_upload(4, a4), XPB_EXIT_USAGE);
    char *a5[] = {"upload", "--help", NULL};
    assert_int_equal(xpb_cli_upload(2, a5), XPB_EXIT_OK);
}

#ifdef XPB_TEST_HAVE_SERVER

/* ---- the scripted server ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct scripted {
    int status;
    const char *body;
    const char *retry_after;
    const char *location;
    int delay_ms;
    int early; /* answer from the headers, before the body (a leaderboard refusing a token) */
};

#define SCRIPT_MAX 16
#define STEP(code, text, ...) ((struct scripted){.status = (code), .body = (text), __VA_ARGS__})

static struct {
    pthread_mutex_t lock;
    struct MHD_Daemon *daemon;
    int port;
    struct scripted script[SCRIPT_MAX];
    int n_script, next; /* past the script's end its last entry repeats */
    int requests;
    char auth[256], key[128], ctype[128], agent[128], expect[64], path[128];
    char *body;
    char root[256], ca[300], other_ca[300], url[64], xdg[300], results[300], bad_results[300];
} s;

static void script(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    pthread_mutex_lock(&s.lock);
    for (int i = 0; i < n && i < SCRIPT_MAX; i++)
        s.script[i] = va_arg(ap, struct scripted);
    s.n_script = n;
    s.next = 0;
    s.requests = 0;
    pthread_mutex_unlock(&s.lock);
    va_end(ap);
}

struct pending {
    char *data;
    size_t len;
};

static void copy_header(char *out, size_t cap, struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    snprintf(out, cap, "%s", v ? v : "");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    (void)cls;
    (void)method;
    (void)version;
    struct pending *p = *con_cls;
    if (!p) {
        p = calloc(1, sizeof *p);
        *con_cls = p;
        pthread_mutex_lock(&s.lock);
        struct scripted next = s.script[s.next < s.n_script ? s.next : s.n_script - 1];
        copy_header(s.expect, sizeof s.expect, c, "Expect");
        pthread_mutex_unlock(&s.lock);
        if (!next.early)
            return MHD_YES; /* 100 Continue goes out: the client sends the body */
    } else if (*size) {
        p->data = realloc(p->data, p->len + *size + 1);
        memcpy(p->data + p->len, data, *size);
        p->len += *size;
        p->data[p->len] = '\0';
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&s.lock);
    struct scripted step = s.script[s.next < s.n_script ? s.next : s.n_script - 1];
    s.next++;
    s.requests++;
    copy_header(s.auth, sizeof s.auth, c, "Authorization");
    copy_header(s.key, sizeof s.key, c, "Idempotency-Key");
    copy_header(s.ctype, sizeof s.ctype, c, "Content-Type");
    copy_header(s.agent, sizeof s.agent, c, "User-Agent");
    snprintf(s.path, sizeof s.path, "%s", url);
    free(s.body);
    s.body = p->data ? strdup(p->data) : strdup("");
    pthread_mutex_unlock(&s.lock);
    if (step.delay_ms) {
        struct timespec ts = {step.delay_ms / 1000, (step.delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    const char *body = step.body ? step.body : "";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (step.retry_after)
        MHD_add_response_header(r, "Retry-After", step.retry_after);
    if (step.location)
        MHD_add_response_header(r, "Location", step.location);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)step.status, r);
    MHD_destroy_response(r);
    return ok;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct pending *p = *con_cls;
    if (p) {
        free(p->data);
        free(p);
    }
    *con_cls = NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

static int server_setup(void **state)
{
    (void)state;
    pthread_mutex_init(&s.lock, NULL);
    assert_int_equal(lbt_tempdir(s.root, sizeof s.root, "upload"), 0);
    char spki[64], path[400];
    assert_int_equal(lbt_make_certs(s.root, spki), 0);
    snprintf(s.ca, sizeof s.ca, "%s/ca.pem", s.root);
    snprintf(s.other_ca, sizeof s.other_ca, "%s/other-ca.pem", s.root);
    snprintf(path, sizeof path, "%s/server.pem", s.root);
    char *cert = slurp(path);
    snprintf(path, sizeof path, "%s/server.key", s.root);
    char *key = slurp(path);
    assert_non_null(cert);
    assert_non_null(key);
    s.daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL,
        NULL, on_request, NULL, MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_HTTPS_MEM_CERT, cert,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
    assert_non_null(s.daemon);
    free(cert);
    free(key);
    s.port = MHD_get_daemon_info(s.daemon, MHD_DAEMON_INFO_BIND_PORT)->port;
    snprintf(s.url, sizeof s.url, "https://127.0.0.1:%d", s.port);
    snprintf(s.xdg, sizeof s.xdg, "%s/xdg", s.root);
    setenv("XDG_DATA_HOME", s.xdg, 1);
    setenv("XPB_UPLOAD_TOKEN", "tok-123", 1);
    unsetenv("XPB_UPLOAD_SERVER");
    json_t *doc = lbt_small_doc(1);
    snprintf(s.results, sizeof s.results, "%s/results.json", s.root);
    assert_int_equal(lbt_write_doc(doc, s.results), 0);
    json_object_del(doc, "runs");
    snprintf(s.bad_results, sizeof s.bad_results, "%s/bad.json", s.root);
    assert_int_equal(lbt_write_doc(doc, s.bad_results), 0);
    json_decref(doc);
    return 0;
}

static int server_teardown(void **state)
{
    (void)state;
    MHD_stop_daemon(s.daemon);
    free(s.body);
    lbt_rmtree(s.root);
    return 0;
}

/* Options for the scripted server with short backoff. */
static struct xpb_upload_opts opts(int attempts)
{
    struct xpb_upload_opts o;
    xpb_upload_opts_init(&o);
    o.server = s.url;
    o.cacert = s.ca;
    o.token = "tok-123";
    o.attempts = attempts;
    o.backoff_ms = 20;
    o.backoff_max_ms = 2000;
    o.connect_timeout_ms = 2000;
    o.timeout_ms = 5000;
    return o;
}

static xpb_status post(struct xpb_upload_reply *r, const struct xpb_upload_opts *o, xpb_err *err)
{
    static const char body[] = "{\"schema\":\"xpubench-results\"}";
    char key[65];
    xpb_sha256_hex(key, body, strlen(body));
    return xpb_upload_post(r, o, body, strlen(body), key, err);
}

static void test_created(void **state)
{
    (void)state;
    script(1, STEP(201, "{\"id\":7,\"url\":\"https://lb/submissions/7\"}"));
    struct xpb_upload_opts o = opts(3);
    struct xpb_upload_reply r;
    xpb_err err;
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_int_equal(r.outcome, XPB_UPLOAD_CREATED);
    assert_int_equal(r.http_status, 201);
    assert_int_equal(r.id, 7);
    assert_string_equal(r.url, "https://lb/submissions/7");
    assert_int_equal(r.attempts, 1);
    /* what went over the wire */
    char key[65];
    xpb_sha256_hex(key, "{\"schema\":\"xpubench-results\"}", 29);
    assert_string_equal(s.path, "/api/v1/results");
    assert_string_equal(s.auth, "Bearer tok-123");
    assert_string_equal(s.key, key);
    assert_string_equal(s.ctype, "application/json");
    assert_string_equal(s.body, "{\"schema\":\"xpubench-results\"}");
    assert_non_null(strstr(s.agent, "xpubench/"));
    assert_string_equal(s.expect, "100-continue"); /* a refusal can come before the body */
    /* a base URL with a path and a trailing slash */
    char base[96];
    snprintf(base, sizeof base, "%s/board/", s.url);
    o.server = base;
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_string_equal(s.path, "/board/api/v1/results");
}

static void test_duplicates(void **state)
{
    (void)state;
    struct xpb_upload_opts o = opts(3);
    struct xpb_upload_reply r;
    xpb_err err;
    script(1, STEP(200, "{\"id\":3,\"url\":\"u\",\"duplicate\":true}"));
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_int_equal(r.outcome, XPB_UPLOAD_DUPLICATE);
    assert_int_equal(r.id, 3);
    script(1, STEP(409, "{\"error\":\"duplicate submission\",\"duplicate\":true,"
                        "\"id\":4}"));
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_int_equal(r.outcome, XPB_UPLOAD_DUPLICATE);
    assert_int_equal(r.id, 4);
    assert_int_equal(s.requests, 1);
}

/* A server that refuses from the headers (an unknown token): the client waited for 100 Continue,
 * so the body was never sent, and the refusal's message arrives intact. */
static void test_refused_before_body(void **state)
{
    (void)state;
    script(1, STEP(401, "{\"error\":\"unknown token\"}", .early = 1));
    struct xpb_upload_opts o = opts(3);
    size_t len = 2u << 20;
    char *big = malloc(len + 1);
    assert_non_null(big);
    memset(big, ' ', len);
    big[0] = '{';
    big[len - 1] = '}';
    big[len] = '\0';
    char key[65];
    xpb_sha256_hex(key, big, len);
    struct xpb_upload_reply r;
    xpb_err err;
    double t0 = now_s();
    assert_int_equal(xpb_upload_post(&r, &o, big, len, key, &err), XPB_REJECTED);
    assert_int_equal(r.outcome, XPB_UPLOAD_DENIED);
    assert_int_equal(r.http_status, 401);
    assert_string_equal(r.message, "unknown token");
    assert_string_equal(s.body, ""); /* none of the 2 MiB went over */
    assert_true(now_s() - t0 < 0.9); /* no wait for a 100 that never comes */
    free(big);
}

static void test_retries_then_succeeds(void **state)
{
    (void)state;
    script(3, STEP(500, "{\"error\":\"db busy\"}"),
           STEP(503, "<html>\n<body>Service Unavailable</body>"),
           STEP(201, "{\"id\":1,\"url\":\"u\"}"));
    struct xpb_upload_opts o = opts(5);
    struct xpb_upload_reply r;
    xpb_err err;
    double t0 = now_s();
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(s.requests, 3);
    assert_true(now_s() - t0 >= 0.055); /* 20 ms, then 40 ms */
}

static void test_gives_up(void **state)
{
    (void)state;
    script(1, STEP(502, "<html>\n<h1>Bad Gateway</h1>"));
    struct xpb_upload_opts o = opts(3);
    struct xpb_upload_reply r;
    xpb_err err;
    assert_int_equal(post(&r, &o, &err), XPB_NETWORK);
    assert_int_equal(r.outcome, XPB_UPLOAD_UNREACHABLE);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(s.requests, 3);
    assert_int_equal(r.http_status, 502);
    assert_string_equal(r.message, "<html>");
    assert_non_null(strstr(err.msg, "502"));
}

static void test_client_errors_not_retried(void **state)
{
    (void)state;
    struct xpb_upload_opts o = opts(5);
    struct xpb_upload_reply r;
    xpb_err err;
    script(1, STEP(422, "{\"error\":\"invalid results document: runs[0].config.batch: "
                        "expected an integer >= 1, found string\"}"));
    assert_int_equal(post(&r, &o, &err), XPB_REJECTED);
    assert_int_equal(r.outcome, XPB_UPLOAD_REJECTED);
    assert_int_equal(r.attempts, 1);
    assert_non_null(strstr(r.message, "runs[0].config.batch"));
    assert_non_null(strstr(err.msg, "422"));
    assert_non_null(strstr(err.msg, "runs[0].config.batch"));
    script(1, STEP(401, "{\"error\":\"unknown token\"}"));
    assert_int_equal(post(&r, &o, &err), XPB_REJECTED);
    assert_int_equal(r.outcome, XPB_UPLOAD_DENIED);
    assert_string_equal(r.message, "unknown token");
    script(1, STEP(413, "{\"error\":\"too large\"}"));
    assert_int_equal(post(&r, &o, &err), XPB_REJECTED);
    assert_int_equal(r.outcome, XPB_UPLOAD_REJECTED);
    assert_int_equal(s.requests, 1);
    /* a redirect is never followed (the token stays with the server it was meant for) */
    script(1, STEP(301, "", .location = "https://elsewhere.example/api/v1/results"));
    assert_int_equal(post(&r, &o, &err), XPB_REJECTED);
    assert_int_equal(r.outcome, XPB_UPLOAD_DENIED);
    assert_non_null(strstr(r.message, "elsewhere.example"));
    assert_int_equal(s.requests, 1);
}

static void test_rate_limited_honours_retry_after(void **state)
{
    (void)state;
    script(2, STEP(429, "{\"error\":\"slow down\"}", .retry_after = "1"),
           STEP(201, "{\"id\":2,\"url\":\"u\"}"));
    struct xpb_upload_opts o = opts(3);
    struct xpb_upload_reply r;
    xpb_err err;
    double t0 = now_s();
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_int_equal(r.attempts, 2);
    assert_true(now_s() - t0 >= 0.95);
}

static void test_timeout(void **state)
{
    (void)state;
    script(1, STEP(201, "{}", .delay_ms = 1500));
    struct xpb_upload_opts o = opts(2);
    o.timeout_ms = 250;
    struct xpb_upload_reply r;
    xpb_err err;
    double t0 = now_s();
    assert_int_equal(post(&r, &o, &err), XPB_NETWORK);
    assert_int_equal(r.outcome, XPB_UPLOAD_UNREACHABLE);
    assert_int_equal(r.attempts, 2);
    assert_true(now_s() - t0 < 1.4);
}

static void test_unreachable_and_untrusted(void **state)
{
    (void)state;
    /* nobody listens: retried, then given up */
    struct xpb_upload_opts o = opts(3);
    o.server = "https://127.0.0.1:1";
    struct xpb_upload_reply r;
    xpb_err err;
    assert_int_equal(post(&r, &o, &err), XPB_NETWORK);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(r.http_status, 0);
    /* a certificate from an unrelated CA, or the system store: refused, not retried */
    script(1, STEP(201, "{\"id\":1,\"url\":\"u\"}"));
    o = opts(3);
    o.cacert = s.other_ca;
    assert_int_equal(post(&r, &o, &err), XPB_NETWORK);
    assert_int_equal(r.attempts, 1);
    assert_int_equal(s.requests, 0);
    o.cacert = NULL;
    assert_int_equal(post(&r, &o, &err), XPB_NETWORK);
    assert_int_equal(s.requests, 0);
}

/* ---- the command ---- */

static size_t spooled(const char *sub)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/xpubench/spool%s", s.xdg, sub);
    char **paths;
    size_t n;
    xpb_err err;
    assert_int_equal(xpb_spool_list(&paths, &n, dir, &err), XPB_OK);
    xpb_spool_list_free(paths, n);
    return n;
}

/* Runs xpb_cli_upload with stderr captured into `captured`. */
static int cli(char *captured, size_t cap, int argc, char **argv)
{
    char path[400];
    snprintf(path, sizeof path, "%s/stderr.txt", s.root);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    int rc = xpb_cli_upload(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(captured, 1, cap - 1, f) : 0;
    captured[n] = '\0';
    if (f)
        fclose(f);
    return rc;
}

static void test_cli_spool_and_flush(void **state)
{
    (void)state;
    char msg[8192];
    /* delivered at once: nothing stays behind */
    script(1, STEP(201, "{\"id\":1,\"url\":\"https://lb/submissions/1\"}"));
    char *up[] = {"upload", s.results, "--server", s.url, "--cacert", s.ca, NULL};
    assert_int_equal(cli(msg, sizeof msg, 6, up), XPB_EXIT_OK);
    assert_int_equal(spooled(""), 0);
    char first_key[128];
    snprintf(first_key, sizeof first_key, "%s", s.key);

    /* the server is down: kept in the spool, with a message saying how to send it later */
    script(1, STEP(503, "{\"error\":\"maintenance\"}"));
    char *down[] = {"upload", s.results,   "--server", s.url, "--cacert",
                    s.ca,     "--retries", "1",        NULL};
    assert_int_equal(cli(msg, sizeof msg, 8, down), XPB_EXIT_FAILURE);
    assert_int_equal(s.requests, 2);
    assert_non_null(strstr(msg, "maintenance"));
    assert_non_null(strstr(msg, "--flush"));
    assert_int_equal(spooled(""), 1);

    /* --list shows it; --flush sends it with the same idempotency key */
    char *list[] = {"upload", "--list", NULL};
    assert_int_equal(cli(msg, sizeof msg, 2, list), XPB_EXIT_OK);
    script(1, STEP(200, "{\"id\":1,\"url\":\"u\",\"duplicate\":true}"));
    char *flush[] = {"upload", "--flush", NULL};
    assert_int_equal(cli(msg, sizeof msg, 2, flush), XPB_EXIT_OK);
    assert_int_equal(s.requests, 1);
    assert_string_equal(s.key, first_key);
    assert_string_equal(s.auth, "Bearer tok-123");
    assert_int_equal(spooled(""), 0);
    assert_int_equal(cli(msg, sizeof msg, 2, flush), XPB_EXIT_OK); /* nothing left */

    /* refused for its content: the message quotes the server; a direct upload drops the
     * entry (the user has the file), a flushed one moves to rejected/ */
    script(1, STEP(422, "{\"error\":\"runs[0].device.name: longer than 256 bytes\"}"));
    assert_int_equal(cli(msg, sizeof msg, 6, up), XPB_EXIT_FAILURE);
    assert_non_null(strstr(msg, "rejected"));
    assert_non_null(strstr(msg, "runs[0].device.name: longer than 256 bytes"));
    assert_int_equal(spooled(""), 0);
    script(1, STEP(503, "{}"));
    char *once[] = {"upload", s.results,   "--server", s.url, "--cacert",
                    s.ca,     "--retries", "0",        NULL};
    assert_int_equal(cli(msg, sizeof msg, 8, once), XPB_EXIT_FAILURE);
    assert_int_equal(spooled(""), 1);
    script(1, STEP(422, "{\"error\":\"runs[0]: nope\"}"));
    assert_int_equal(cli(msg, sizeof msg, 2, flush), XPB_EXIT_FAILURE);
    assert_int_equal(spooled(""), 0);
    assert_int_equal(spooled("/rejected"), 1);

    /* a token refused: kept for another try */
    script(1, STEP(401, "{\"error\":\"this token has been revoked\"}"));
    assert_int_equal(cli(msg, sizeof msg, 6, up), XPB_EXIT_FAILURE);
    assert_non_null(strstr(msg, "revoked"));
    assert_non_null(strstr(msg, "XPB_UPLOAD_TOKEN"));
    assert_int_equal(spooled(""), 1);
    script(1, STEP(201, "{\"id\":9,\"url\":\"u\"}"));
    assert_int_equal(cli(msg, sizeof msg, 2, flush), XPB_EXIT_OK);
    assert_int_equal(spooled(""), 0);

    /* an invalid results file is never sent nor spooled */
    script(1, STEP(201, "{}"));
    char *bad[] = {"upload", s.bad_results, "--server", s.url, "--cacert", s.ca, NULL};
    assert_int_equal(cli(msg, sizeof msg, 6, bad), XPB_EXIT_INPUT);
    assert_int_equal(s.requests, 0);
    assert_int_equal(spooled(""), 0);

    /* no token, no server, http:// */
    unsetenv("XPB_UPLOAD_TOKEN");
    assert_int_equal(cli(msg, sizeof msg, 6, up), XPB_EXIT_USAGE);
    assert_non_null(strstr(msg, "XPB_UPLOAD_TOKEN"));
    setenv("XPB_UPLOAD_TOKEN", "tok-123", 1);
    char *noserver[] = {"upload", s.results, NULL};
    assert_int_equal(cli(msg, sizeof msg, 2, noserver), XPB_EXIT_USAGE);
    setenv("XPB_UPLOAD_SERVER", s.url, 1); /* the environment names the default server */
    char *envserver[] = {"upload", s.results, "--cacert", s.ca, NULL};
    assert_int_equal(cli(msg, sizeof msg, 4, envserver), XPB_EXIT_OK);
    unsetenv("XPB_UPLOAD_SERVER");
    char *plain[] = {"upload", s.results, "--server", "http://127.0.0.1:9", NULL};
    assert_int_equal(cli(msg, sizeof msg, 4, plain), XPB_EXIT_USAGE);
    assert_int_equal(spooled(""), 0);
    /* the token never shows in what the command prints */
    assert_null(strstr(msg, "tok-123"));
}

/* Issue 14: a malformed https URL, a token with control characters, an unreadable CA file are
 * command-line problems (exit code 2), caught before anything is spooled or sent. */
static void test_cli_refuses_early(void **state)
{
    (void)state;
    char msg[8192];
    char *up[] = {"upload", s.results, "--server", s.url, "--cacert", s.ca, NULL};
    /* a malformed https URL, a token with control characters, an unreadable CA: usage (2),
     * refused before anything is spooled or sent */
    script(1, STEP(201, "{}"));
    char *empty_host[] = {"upload", s.results, "--server", "https://", NULL};
    assert_int_equal(cli(msg, sizeof msg, 4, empty_host), XPB_EXIT_USAGE);
    char *spaced[] = {"upload", s.results, "--server", "https://lb .example", NULL};
    assert_int_equal(cli(msg, sizeof msg, 4, spaced), XPB_EXIT_USAGE);
    setenv("XPB_UPLOAD_TOKEN", "tok\x1b[31m", 1);
    assert_int_equal(cli(msg, sizeof msg, 6, up), XPB_EXIT_USAGE);
    assert_non_null(strstr(msg, "control characters"));
    setenv("XPB_UPLOAD_TOKEN", "tok-123", 1);
    char *no_ca[] = {"upload", s.results, "--server", s.url, "--cacert", "/nonexistent.pem", NULL};
    assert_int_equal(cli(msg, sizeof msg, 6, no_ca), XPB_EXIT_USAGE);
    assert_int_equal(s.requests, 0);
    assert_int_equal(spooled(""), 0);
}

/* Issue 14: a relative --cacert is spooled absolute, so a flush from another folder finds it. */
static void test_cli_relative_cacert(void **state)
{
    (void)state;
    char msg[8192];
    char *flush[] = {"upload", "--flush", NULL};
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(s.root), 0);
    script(1, STEP(503, "{}"));
    char *rel[] = {"upload", s.results,   "--server", s.url, "--cacert",
                   "ca.pem", "--retries", "0",        NULL};
    assert_int_equal(cli(msg, sizeof msg, 8, rel), XPB_EXIT_FAILURE);
    assert_int_equal(chdir("/"), 0);
    script(1, STEP(201, "{\"id\":11,\"url\":\"u\"}"));
    assert_int_equal(cli(msg, sizeof msg, 2, flush), XPB_EXIT_OK);
    assert_int_equal(s.requests, 1);
    assert_int_equal(spooled(""), 0);
    assert_int_equal(chdir(cwd), 0);
}

/* Issue 22: what a server says never reaches the terminal raw. A hostile server (or a hostile
 * results file quoted back in the leaderboard's 422) sends escape sequences, C1 controls and a
 * right-to-left override in its error text, its redirect's Location and its submission URL;
 * the client keeps them as visible escapes, and the command prints nothing raw. */
static void test_hostile_server(void **state)
{
    (void)state;
    struct xpb_upload_opts o = opts(1);
    struct xpb_upload_reply r;
    xpb_err err;
    script(1, STEP(422, "{\"error\":\"runs[0].id: found \\\"\\u001b]52;c;ZXZpbA==\\u0007"
                        "\\u001b[2J\\u009b31m\\u202egnp.exe\\r\\\"\"}"));
    assert_int_equal(post(&r, &o, &err), XPB_REJECTED);
    assert_inert(r.message, 0, "422 message");
    assert_inert(err.msg, 0, "422 error");
    assert_non_null(strstr(r.message, "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\u009b31m\\u202egnp.exe"));
    script(1, STEP(301, "", .location = "https://elsewhere.example/\x1b]0;owned\x07\xe2\x80\xae"));
    assert_int_equal(post(&r, &o, &err), XPB_REJECTED);
    assert_inert(r.message, 0, "redirect");
    assert_inert(err.msg, 0, "redirect error");
    assert_non_null(strstr(r.message, "elsewhere.example"));
    script(1, STEP(201, "{\"id\":3,\"url\":\"https://lb/\\u001b]0;owned\\u0007\"}"));
    assert_int_equal(post(&r, &o, &err), XPB_OK);
    assert_inert(r.url, 0, "submission url");
    assert_non_null(strstr(r.url, "\\x1b]0;owned\\x07"));

    /* the command: a hostile file, and the server's refusal quoting it, printed */
    char msg[8192];
    script(1, STEP(422, "{\"error\":\"invalid results document: \\u001b]0;owned\\u0007"
                        "\\u202e\\u0085\"}"));
    char hostile[400];
    snprintf(hostile, sizeof hostile, "%s/hostile.json", s.root);
    json_t *doc = lbt_small_doc(1);
    json_object_set_new(json_array_get(json_object_get(doc, "runs"), 0), "id",
                        json_string("r\x1b]0;owned\x07\xe2\x80\xae"));
    assert_int_equal(lbt_write_doc(doc, hostile), 0);
    json_decref(doc);
    char *up[] = {"upload", hostile, "--server", s.url, "--cacert", s.ca, "--no-spool", NULL};
    assert_int_equal(cli(msg, sizeof msg, 7, up), XPB_EXIT_FAILURE);
    assert_inert(msg, 0, "upload's stderr");
    assert_non_null(strstr(msg, "\\x1b]0;owned\\x07\\u202e\\u0085"));
}

#endif /* XPB_TEST_HAVE_SERVER */

int main(void)
{
    const struct CMUnitTest offline[] = {
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_refuses_before_sending),
        cmocka_unit_test(test_cli_usage),
    };
    int failed = cmocka_run_group_tests_name("upload offline", offline, NULL, NULL);
#ifdef XPB_TEST_HAVE_SERVER
    const struct CMUnitTest online[] = {
        cmocka_unit_test(test_created),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_refused_before_body),
        cmocka_unit_test(test_retries_then_succeeds),
        cmocka_unit_test(test_gives_up),
        cmocka_unit_test(test_client_errors_not_retried),
        cmocka_unit_test(test_rate_limited_honours_retry_after),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_unreachable_and_untrusted),
        cmocka_unit_test(test_hostile_server),
        cmocka_unit_test(test_cli_spool_and_flush),
        cmocka_unit_test(test_cli_refuses_early),
        cmocka_unit_test(test_cli_relative_cacert),
    };
    failed +=
        cmocka_run_group_tests_name("upload over https", online, server_setup, server_teardown);
#else
    printf("upload over https: skipped (needs libmicrohttpd and the leaderboard test support)\n");
#endif
    return failed;
}
