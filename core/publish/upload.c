/* The leaderboard client over libcurl (see upload.h). */
#include "upload.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>


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

/* Token characters allowed in an Authorization header (RFC 6750 b64token plus a little):
 * printable ASCII without spaces, so a token can never inject another header line. */
static int token_ok(const char *t)
{
    if (!t || !*t)
        return 0;
    for (; *t; t++)
        if (*t <= ' ' || *t > '~')
            return 0;
    return 1;
}

static int url_ok(const char *url)
{
    if (strncasecmp(url, "https://", 8) != 0 || url[8] == '\0' || url[8] == '/')
        return 0;
    for (const char *p = url; *p; p++)
        if (*p <= ' ' || *p > '~')
            return 0;
    return 1;
}

/* Copies into reply->message what the server said: the "error" member of a JSON answer, or
 * the start of a text answer. */
static void server_message(struct xpb_upload_reply *reply, const struct reply_buf *buf)
{
    reply->message[0] = '\0';
    json_t *doc = json_loadb(buf->data, buf->len, 0, NULL);
    const char *msg = NULL;
    if (doc) {
        const json_t *e = json_object_get(doc, "error");
        if (json_is_string(e))
            msg = json_string_value(e);
        else if (json_is_string(json_object_get(doc, "message")))
            msg = json_string_value(json_object_get(doc, "message"));
    }
    if (msg) {
        snprintf(reply->message, sizeof reply->message, "%s", msg);
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
    const json_t *id = json_object_get(doc, "id");
    const json_t *url = json_object_get(doc, "url");
    const json_t *dup = json_object_get(doc, "duplicate");
    if (json_is_integer(id))
        reply->id = json_integer_value(id);
    if (json_is_string(url))
        snprintf(reply->url, sizeof reply->url, "%s", json_string_value(url));
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

xpb_status xpb_upload_post(struct xpb_upload_reply *reply, const struct xpb_upload_opts *opts,
                           const char *body, size_t len, const char *key, xpb_err *err)
{
    memset(reply, 0, sizeof *reply);
    reply->outcome = XPB_UPLOAD_UNREACHABLE;
    if (!opts->server || !url_ok(opts->server))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "server URL '%s' is not an https:// URL (uploads are only sent over "
                           "HTTPS with certificate verification)",
                           opts->server ? opts->server : "");
    if (!token_ok(opts->token))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "no usable upload token: set XPB_UPLOAD_TOKEN to the token the "
                           "leaderboard's administrator gave you");
    if (opts->cacert && access(opts->cacert, R_OK) != 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "cannot read CA file %s: %s", opts->cacert,
                           strerror(errno));
    if (!key || strlen(key) != 64)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "missing idempotency key");
    pthread_once(&curl_once, init_curl);
    if (curl_init_code != CURLE_OK)
        return xpb_err_set(err, XPB_INTERNAL, "libcurl initialisation failed: %s",
                           curl_easy_strerror(curl_init_code));

    size_t base_len = strlen(opts->server);
    while (base_len > 8 && opts->server[base_len - 1] == '/')
        base_len--;
    char url[2048], key_header[128];
    if (base_len + sizeof XPB_UPLOAD_API_PATH >= sizeof url)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "server URL is too long");
    snprintf(url, sizeof url, "%.*s%s", (int)base_len, opts->server, XPB_UPLOAD_API_PATH);
    snprintf(key_header, sizeof key_header, "Idempotency-Key: %s", key);

    xpb_status st = XPB_OK;
    struct reply_buf *buf = malloc(sizeof *buf);
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL, *h;
    if (!buf || !curl) {
        st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
        goto fail_curl;
    }
    const char *header_lines[] = {"Content-Type: application/json", "Accept: application/json",
                                  "Expect:", key_header};
    for (size_t i = 0; i < sizeof header_lines / sizeof *header_lines; i++) {
        h = curl_slist_append(headers, header_lines[i]);
        if (!h) {
            st = xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
            goto fail_curl;
        }
        headers = h;
    }

    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (opts->cacert)
        curl_easy_setopt(curl, CURLOPT_CAINFO, opts->cacert);
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
    curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, opts->token);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "xpubench/" XPB_VERSION);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, opts->connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, opts->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, buf);

    char curl_msg[CURL_ERROR_SIZE];
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_msg);
    unsigned seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16) ^ (unsigned)(size_t)buf;
    int attempts = opts->attempts > 0 ? opts->attempts : 1;
    for (int attempt = 1; attempt <= attempts; attempt++) {
        buf->len = 0;
        buf->data[0] = '\0';
        curl_msg[0] = '\0';
        reply->attempts = attempt;
        reply->http_status = 0;
        CURLcode rc = curl_easy_perform(curl);
        long code = 0;
        curl_off_t retry_after = 0;
        int retry;
        if (rc == CURLE_OK) {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
            curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &retry_after);
            reply->http_status = code;
            if (code >= 200 && code < 300) {
                reply->outcome = XPB_UPLOAD_CREATED; /* DUPLICATE when the answer says so */
                parse_created(reply, buf);
                reply->message[0] = '\0';
                st = XPB_OK;
                break;
            }
            server_message(reply, buf);
            if (code == 409 && strstr(buf->data, "\"duplicate\"")) {
                parse_created(reply, buf);
                reply->outcome = XPB_UPLOAD_DUPLICATE;
                st = XPB_OK;
                break;
            }
            if (code >= 300 && code < 400) {
                /* never followed: the token must not go to another address unasked */
                char *where = NULL;
                curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &where);
                snprintf(reply->message, sizeof reply->message,
                         "the server redirects to %.900s; pass that address with --server",
                         where ? where : "another address");
                reply->outcome = XPB_UPLOAD_DENIED;
                retry = 0;
            } else if (code >= 500 || code == 429 || code == 408) {
                reply->outcome = code == 429 ? XPB_UPLOAD_DENIED : XPB_UPLOAD_UNREACHABLE;
                retry = 1;
            } else {
                reply->outcome =
                    (code == 401 || code == 403) ? XPB_UPLOAD_DENIED : XPB_UPLOAD_REJECTED;
                retry = 0;
            }
            st = reply->outcome == XPB_UPLOAD_UNREACHABLE ? XPB_NETWORK : XPB_REJECTED;
            xpb_err_set(err, st, "the server answered %ld%s%s", code, reply->message[0] ? ": " : "",
                        reply->message);
        } else {
            reply->outcome = XPB_UPLOAD_UNREACHABLE;
            snprintf(reply->message, sizeof reply->message, "%s",
                     curl_msg[0] ? curl_msg : curl_easy_strerror(rc));
            retry = transient(rc);
            st = XPB_NETWORK;
            xpb_err_set(err, st, "cannot reach %.*s: %s", (int)base_len, opts->server,
                        reply->message);
        }
        if (!retry || attempt == attempts)
            break;
        sleep_ms(backoff_delay(opts, attempt, (long)retry_after, &seed));
    }

fail_curl:
    curl_slist_free_all(headers);
    if (curl)
        curl_easy_cleanup(curl);
    free(buf);
    return st;
}
