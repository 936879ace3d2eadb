/* The leaderboard client over libcurl (see upload.h). */
#include "publish/upload.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "render/terminal.h"

/* Bytes of a server answer kept; the rest is dropped (answers are small JSON objects). */
#define REPLY_MAX_BYTES (64 * 1024)

void xpb_upload_opts_init(struct xpb_upload_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->connect_timeout_ms = 10000;
    opts->timeout_ms = 60000;
    opts->attempts = 5;
    opts->backoff_ms = 500;
    opts->backoff_max_ms = 30000;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_code = CURLE_FAILED_INIT;

static void init_curl(void)
{
    curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* A response body collected up to REPLY_MAX_BYTES. */
struct reply_buf {
    char data[REPLY_MAX_BYTES + 1];
    size_t len;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct reply_buf *buf = user;
    size_t n = size * nmemb, room = REPLY_MAX_BYTES - buf->len;
    size_t take = n < room ? n : room;
    memcpy(buf->data + buf->len, ptr, take);
    buf->len += take;
    buf->data[buf->len] = '\0';
    return n;
}

int xpb_upload_token_ok(const char *t)
{
    if (!t || !*t)
        return 0;
    for (; *t; t++)
        if (*t <= ' ' || *t > '~')
            return 0;
    return 1;
}

int xpb_upload_url_ok(const char *url)
{
    if (!url || strncasecmp(url, "https://", 8) != 0 || url[8] == '\0' || url[8] == '/' ||
        url[8] == ':' || url[8] == '?' || url[8] == '#')
        return 0;
    for (const char *p = url; *p; p++)
        if (*p <= ' ' || *p > '~' || *p == '\\')
            return 0;
    return 1;
}

/* Copies into reply->message what the server said: the "error" member of a JSON answer, or
 * the start of a text answer. Whatever a server sends is escaped for the terminal
 * (render/terminal.h): a hostile server, or a hostile results file quoted back in a 422,
 * cannot write control sequences to the user's terminal or logs. */
static void server_message(struct xpb_upload_reply *reply, const struct reply_buf *buf)
{
    reply->message[0] = '\0';
    json_t *doc = json_loadb(buf->data, buf->len, 0, NULL);
    const char *msg = NULL;
    json_t *error = NULL, *message = NULL; /* borrowed from doc */
    json_unpack(doc, "{s?o, s?o}", "error", &error, "message", &message);
    if (json_is_string(error))
        msg = json_string_value(error);
    else if (json_is_string(message))
        msg = json_string_value(message);
    if (msg) {
        xpb_term_field(reply->message, sizeof reply->message, msg);
    } else {
        /* a proxy's HTML or text page: its first line, printable characters only */
        size_t j = 0;
        for (size_t i = 0; i < buf->len && j + 1 < sizeof reply->message; i++) {
            char c = buf->data[i];
            if (c == '\n' && j > 0)
                break;
            if (c >= ' ' && c <= '~')
                reply->message[j++] = c;
        }
        reply->message[j] = '\0';
    }
    json_decref(doc);
}

/* Reads id and url of a successful answer. */
static void parse_created(struct xpb_upload_reply *reply, const struct reply_buf *buf)
{
    json_t *doc = json_loadb(buf->data, buf->len, 0, NULL);
    if (!doc)
        return;
    json_t *id = NULL, *url = NULL, *dup = NULL; /* borrowed from doc */
    json_unpack(doc, "{s?o, s?o, s?o}", "id", &id, "url", &url, "duplicate", &dup);
    if (json_is_integer(id))
        reply->id = json_integer_value(id);
    if (json_is_string(url))
        xpb_term_field(reply->url, sizeof reply->url, json_string_value(url));
    if (json_is_true(dup))
        reply->outcome = XPB_UPLOAD_DUPLICATE;
    json_decref(doc);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Delay before retry number `retry` (1-based): backoff * 2^(retry-1), capped, with up to 25%
 * random jitter so that many clients do not retry in lockstep; at least Retry-After. */
static long backoff_delay(const struct xpb_upload_opts *o, int retry, long retry_after_s,
                          unsigned *seed)
{
    long d = o->backoff_ms > 0 ? o->backoff_ms : 0;
    for (int i = 1; i < retry && d < o->backoff_max_ms; i++)
        d *= 2;
    if (o->backoff_max_ms > 0 && d > o->backoff_max_ms)
        d = o->backoff_max_ms;
    if (d > 0)
        d += (long)(rand_r(seed) % (unsigned)(d / 4 + 1));
    if (retry_after_s > 0) {
        long ra = retry_after_s * 1000;
        if (o->backoff_max_ms > 0 && ra > o->backoff_max_ms)
            ra = o->backoff_max_ms;
        if (ra > d)
            d = ra;
    }
    return d;
}

/* Network errors worth another attempt; certificate and usage errors are not. */
static int transient(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

/* What xpb_upload_post refuses before sending anything. */
static xpb_status check_request(const struct xpb_upload_opts *opts, const char *key, xpb_err *err)
{
    if (!xpb_upload_url_ok(opts->server))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "server URL '%s' is not an https:// URL (uploads are only sent over "
                           "HTTPS with certificate verification)",
                           opts->server ? opts->server : "");
    if (!xpb_upload_token_ok(opts->token))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "no usable upload token: set XPB_UPLOAD_TOKEN to the token the "
                           "leaderboard's administrator gave you (printable characters, no "
                           "spaces)");
    if (opts->cacert && access(opts->cacert, R_OK) != 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "cannot read CA file %s: %s", opts->cacert,
                           strerror(errno));
    if (!key || strlen(key) != 64)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "missing idempotency key");
    return XPB_OK;
}

/* One upload's libcurl handle, headers and answer buffer, reused by every attempt. */
struct session {
    CURL *curl;
    struct curl_slist *headers;
    struct reply_buf *buf;
    char url[2048], key_header[128];
    char curl_msg[CURL_ERROR_SIZE];
    size_t base_len; /* of the server URL without trailing slashes, for messages */
};

static void session_free(struct session *s)
{
    curl_slist_free_all(s->headers);
    if (s->curl)
        curl_easy_cleanup(s->curl);
    free(s->buf);
}

/* The URL and headers of the request. */
static xpb_status session_request(struct session *s, const struct xpb_upload_opts *opts,
                                  const char *key, xpb_err *err)
{
    s->base_len = strlen(opts->server);
    while (s->base_len > 8 && opts->server[s->base_len - 1] == '/')
        s->base_len--;
    if (s->base_len + sizeof XPB_UPLOAD_API_PATH >= sizeof s->url)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "server URL is too long");
    snprintf(s->url, sizeof s->url, "%.*s%s", (int)s->base_len, opts->server, XPB_UPLOAD_API_PATH);
    snprintf(s->key_header, sizeof s->key_header, "Idempotency-Key: %s", key);
    /* 100-continue: the server checks the token, rate and size from the headers and refuses
     * before the body is sent, with its message */
    const char *lines[] = {"Content-Type: application/json", "Accept: application/json",
                           "Expect: 100-continue", s->key_header};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        struct curl_slist *h = curl_slist_append(s->headers, lines[i]);
        if (!h)
            return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        s->headers = h;
    }
    return XPB_OK;
}

/* A handle set up for the request: TLS verification, no redirects, timeouts, the body. */
static xpb_status session_open(struct session *s, const struct xpb_upload_opts *opts,
                               const char *body, size_t len, const char *key, xpb_err *err)
{
    memset(s, 0, sizeof *s);
    s->buf = malloc(sizeof *s->buf);
    s->curl = curl_easy_init();
    if (!s->buf || !s->curl)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    xpb_status st = session_request(s, opts, key, err);
    if (st != XPB_OK)
        return st;
    CURL *c = s->curl;
    curl_easy_setopt(c, CURLOPT_URL, s->url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (opts->cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, opts->cacert);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
    curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, opts->token);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "xpubench/" XPB_VERSION);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, opts->connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, opts->timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s->buf);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->curl_msg);
    return XPB_OK;
}

/* Classifies an HTTP answer into reply and says whether to try again. Returns the status for
 * the caller (XPB_OK when delivered). */
static xpb_status classify_answer(struct xpb_upload_reply *reply, struct session *s, long code,
                                  int *retry, xpb_err *err)
{
    *retry = 0;
    reply->http_status = code;
    if (code >= 200 && code < 300) {
        reply->outcome = XPB_UPLOAD_CREATED; /* DUPLICATE when the answer says so */
        parse_created(reply, s->buf);
        reply->message[0] = '\0';
        return XPB_OK;
    }
    server_message(reply, s->buf);
    if (code == 409 && strstr(s->buf->data, "\"duplicate\"")) {
        parse_created(reply, s->buf);
        reply->outcome = XPB_UPLOAD_DUPLICATE;
        return XPB_OK;
    }
    if (code >= 300 && code < 400) {
        /* never followed: the token must not go to another address unasked */
        char *where = NULL, shown[900];
        curl_easy_getinfo(s->curl, CURLINFO_REDIRECT_URL, &where);
        snprintf(reply->message, sizeof reply->message,
                 "the server redirects to %s; pass that address with --server",
                 where ? xpb_term_field(shown, sizeof shown, where) : "another address");
        reply->outcome = XPB_UPLOAD_DENIED;
    } else if (code >= 500 || code == 429 || code == 408) {
        reply->outcome = code == 429 ? XPB_UPLOAD_DENIED : XPB_UPLOAD_UNREACHABLE;
        *retry = 1;
    } else {
        reply->outcome = (code == 401 || code == 403) ? XPB_UPLOAD_DENIED : XPB_UPLOAD_REJECTED;
    }
    xpb_status st = reply->outcome == XPB_UPLOAD_UNREACHABLE ? XPB_NETWORK : XPB_REJECTED;
    return xpb_err_set(err, st, "the server answered %ld%s%s", code, reply->message[0] ? ": " : "",
                       reply->message);
}

/* One exchange. *retry says whether another attempt may succeed, *retry_after_s what the
 * server asked to wait (0 when it did not say). */
static xpb_status attempt(struct xpb_upload_reply *reply, struct session *s, const char *server,
                          int *retry, long *retry_after_s, xpb_err *err)
{
    s->buf->len = 0;
    s->buf->data[0] = '\0';
    s->curl_msg[0] = '\0';
    reply->http_status = 0;
    *retry_after_s = 0;
    CURLcode rc = curl_easy_perform(s->curl);
    if (rc == CURLE_OK) {
        long code = 0;
        curl_off_t retry_after = 0;
        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(s->curl, CURLINFO_RETRY_AFTER, &retry_after);
        *retry_after_s = (long)retry_after;
        return classify_answer(reply, s, code, retry, err);
    }
    reply->outcome = XPB_UPLOAD_UNREACHABLE;
    snprintf(reply->message, sizeof reply->message, "%s",
             s->curl_msg[0] ? s->curl_msg : curl_easy_strerror(rc));
    *retry = transient(rc);
    return xpb_err_set(err, XPB_NETWORK, "cannot reach %.*s: %s", (int)s->base_len, server,
                       reply->message);
}

/* Attempts until delivered, refused for good, or out of attempts, with backoff between. */
static xpb_status send_with_retries(struct xpb_upload_reply *reply, struct session *s,
                                    const struct xpb_upload_opts *opts, xpb_err *err)
{
    unsigned seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16) ^ (unsigned)(size_t)s->buf;
    int attempts = opts->attempts > 0 ? opts->attempts : 1;
    xpb_status st = XPB_NETWORK;
    for (int n = 1; n <= attempts; n++) {
        int retry;
        long retry_after;
        reply->attempts = n;
        st = attempt(reply, s, opts->server, &retry, &retry_after, err);
        if (st == XPB_OK || !retry || n == attempts)
            break;
        sleep_ms(backoff_delay(opts, n, retry_after, &seed));
    }
    return st;
}

xpb_status xpb_upload_post(struct xpb_upload_reply *reply, const struct xpb_upload_opts *opts,
                           const char *body, size_t len, const char *key, xpb_err *err)
{
    memset(reply, 0, sizeof *reply);
    reply->outcome = XPB_UPLOAD_UNREACHABLE;
    xpb_status st = check_request(opts, key, err);
    if (st != XPB_OK)
        return st;
    pthread_once(&curl_once, init_curl);
    if (curl_init_code != CURLE_OK)
        return xpb_err_set(err, XPB_INTERNAL, "libcurl initialisation failed: %s",
                           curl_easy_strerror(curl_init_code));
    struct session s;
    st = session_open(&s, opts, body, len, key, err);
    if (st == XPB_OK)
        st = send_with_retries(reply, &s, opts, err);
    session_free(&s);
    return st;
}
