/* The libmicrohttpd glue (see lb_server.h). */
#include "lb_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "lb_ratelimit.h"
#include "lb_router.h"

/* Sent with every answer. The pages load their script and stylesheet from this server only
 * and embed no inline script or style; SVG charts are inline markup. */
#define CSP                                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/* An oversized body is read (and dropped) up to this many times the body limit, so that the
 * client reliably receives the 413 and its message; beyond that the server answers at once
 * (announced length) or closes the connection (streamed body). */
#define DISCARD_LIMIT_FACTOR 16

struct lb_server {
    struct MHD_Daemon *daemon;
    struct lb_app *app;
    struct lb_server_opts opts;
    unsigned port;
    int https;
};

/* Per-request state kept across the access handler's calls. */
struct exchange {
    struct lb_buf body;
    int too_large;
    int answered;     /* a response was queued before the body was complete */
    size_t discarded; /* bytes of an oversized streamed body dropped so far */
    double started;
};

int lb_is_loopback(const char *addr)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, addr, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, addr, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6);
    return 0;
}

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    struct lb_request *req = cls;
    if (req->n_query < LB_MAX_QUERY && key) {
        req->query[req->n_query].key = key;
        req->query[req->n_query].value = value ? value : "";
        req->n_query++;
    }
    return MHD_YES;
}

static void client_text(char *out, size_t cap, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(out, cap, "?");
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)cap);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)cap);
}

/* Sends `res` with the standard headers. Takes the body. */
static enum MHD_Result send_response(struct lb_server *srv, struct MHD_Connection *conn,
                                     struct lb_response *res)
{
    size_t len = 0;
    char *body = lb_buf_take(&res->body, &len);
    if (!body) {
        res->status = 500;
        res->content_type = "text/plain; charset=utf-8";
        body = strdup("internal error: out of memory\n");
        if (!body)
            return MHD_NO;
        len = strlen(body);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            res->content_type ? res->content_type : "text/plain; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    if (srv->https)
        MHD_add_response_header(r, "Strict-Transport-Security", "max-age=31536000");
    char value[64];
    if (res->cache_seconds > 0) {
        snprintf(value, sizeof value, "public, max-age=%d", res->cache_seconds);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, value);
    } else {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    }
    if (res->retry_after > 0) {
        snprintf(value, sizeof value, "%ld", res->retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, value);
    }
    if (res->location[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, res->location);
    if (res->allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, res->allow);
    if (res->bearer_challenge)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"xpubench leaderboard\"");
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)res->status, r);
    MHD_destroy_response(r);
    return ok;
}

static void log_exchange(struct lb_server *srv, struct MHD_Connection *conn, const char *method,
                         const char *url, int status, double started)
{
    if (srv->opts.quiet)
        return;
    char client[INET6_ADDRSTRLEN + 1], when[32];
    client_text(client, sizeof client, conn);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* the path only: never headers (the token), never the body */
    fprintf(stderr, "%s %s %s %.200s %d %.1fms\n", when, client, method, url, status,
            (lb_monotonic_seconds() - started) * 1e3);
}

/* Answers right away with a JSON error (before the body was read). */
static enum MHD_Result early_error(struct lb_server *srv, struct MHD_Connection *conn,
                                   const char *method, const char *url, int status, const char *msg,
                                   double started)
{
    struct lb_response res;
    memset(&res, 0, sizeof res);
    lb_respond_error(&res, status, "%s", msg);
    log_exchange(srv, conn, method, url, status, started);
    return send_response(srv, conn, &res);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct lb_server *srv = cls;
    struct exchange *ex = *con_cls;
    if (!ex) {
        ex = calloc(1, sizeof *ex);
        if (!ex)
            return MHD_NO;
        ex->started = lb_monotonic_seconds();
        *con_cls = ex;
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char *expect =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
        unsigned long long announced = cl ? strtoull(cl, NULL, 10) : 0;
        if (announced > srv->app->max_body &&
            (expect || announced > DISCARD_LIMIT_FACTOR * (unsigned long long)srv->app->max_body)) {
            /* answer before the body: cleanly when the client waits for 100-continue; for a
             * very large body even though the client may see its send cut off */
            char msg[128];
            snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes",
                     srv->app->max_body);
            ex->answered = 1;
            return early_error(srv, conn, method, url, 413, msg, ex->started);
        }
        return MHD_YES; /* wait for the body, if any (a too large one is dropped: 413) */
    }
    if (ex->answered) {
        *upload_data_size = 0; /* the rest of a refused body is dropped */
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (!ex->too_large && ex->body.len + *upload_data_size > srv->app->max_body) {
            /* a streamed (chunked) body grew past the limit: drop it and keep reading, so
             * that the client gets a 413 with a message at the end; one that goes on far
             * past the limit is cut off */
            ex->too_large = 1;
            lb_buf_free(&ex->body);
        }
        if (ex->too_large) {
            ex->discarded += *upload_data_size;
            if (ex->discarded > DISCARD_LIMIT_FACTOR * srv->app->max_body)
                return MHD_NO;
        } else {
            lb_buf_add(&ex->body, upload_data, *upload_data_size);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }

    char client[INET6_ADDRSTRLEN + 1];
    client_text(client, sizeof client, conn);
    struct lb_request req;
    memset(&req, 0, sizeof req);
    req.method = method;
    req.path = url;
    req.client = client;
    req.https = srv->https;
    req.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    req.idempotency_key = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Idempotency-Key");
    req.host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    req.body = ex->body.data ? ex->body.data : "";
    req.body_len = ex->body.len;
    req.body_too_large = ex->too_large || ex->body.failed;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, &req);

    struct lb_response res;
    memset(&res, 0, sizeof res);
    res.status = 500;
    lb_route(srv->app, &req, &res);
    log_exchange(srv, conn, method, url, res.status, ex->started);
    return send_response(srv, conn, &res);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct exchange *ex = *con_cls;
    if (ex) {
        lb_buf_free(&ex->body);
        free(ex);
        *con_cls = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct lb_server *srv = cls;
    if (srv->opts.quiet)
        return;
    fputs("xpubench-leaderboard: ", stderr);
    vfprintf(stderr, fmt, ap);
}

xpb_status lb_server_start(struct lb_server **out, struct lb_app *app,
                           const struct lb_server_opts *opts, xpb_err *err)
{
    *out = NULL;
    int https = opts->cert_pem && opts->key_pem;
    if (!https && !lb_is_loopback(opts->bind))
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "plain HTTP is only served on a loopback address (behind a TLS proxy); "
                           "give --tls-cert and --tls-key to listen on %s",
                           opts->bind);
    struct sockaddr_in sin;
    struct sockaddr_in6 sin6;
    struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO;
    memset(&sin, 0, sizeof sin);
    memset(&sin6, 0, sizeof sin6);
    if (inet_pton(AF_INET, opts->bind, &sin.sin_addr) == 1) {
        sin.sin_family = AF_INET;
        sin.sin_port = htons((uint16_t)opts->port);
        sa = (struct sockaddr *)&sin;
    } else if (inet_pton(AF_INET6, opts->bind, &sin6.sin6_addr) == 1) {
        sin6.sin6_family = AF_INET6;
        sin6.sin6_port = htons((uint16_t)opts->port);
        sa = (struct sockaddr *)&sin6;
        flags |= MHD_USE_IPv6;
    } else {
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "--bind %s is not an IPv4 or IPv6 address",
                           opts->bind);
    }
    if (https)
        flags |= MHD_USE_TLS;

    struct lb_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    srv->app = app;
    srv->opts = *opts;
    srv->https = https;
    struct MHD_OptionItem tls_opts[] = {
        {https ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)opts->key_pem},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)opts->cert_pem},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
        {MHD_OPTION_END, 0, NULL},
    };
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)opts->port, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_log, srv, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(opts->threads ? opts->threads : 1), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)opts->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)opts->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)opts->timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    if (!srv->daemon) {
        free(srv);
        return xpb_err_set(err, XPB_IO_ERROR,
                           "cannot start the server on %s port %u (address in use, or a bad "
                           "certificate or key)",
                           opts->bind, opts->port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opts->port;
    *out = srv;
    return XPB_OK;
}

unsigned lb_server_port(const struct lb_server *server)
{
    return server->port;
}

void lb_server_stop(struct lb_server *server)
{
    if (!server)
        return;
    MHD_stop_daemon(server->daemon);
    free(server);
}
