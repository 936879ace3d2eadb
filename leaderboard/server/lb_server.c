/* The libmicrohttpd glue (see lb_server.h). */
#include "server/lb_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "api/lb_api.h"
#include "base/clock.h"
#include "server/lb_answer.h"
#include "server/lb_conntrack.h"
#include "server/lb_log.h"
#include "server/lb_router.h"
#include "service/lb_workq.h"

/* A refused request's body is read and dropped (never kept) up to this many times the body
 * limit, so that a client that does not wait for 100-continue still receives the refusal and
 * its message; beyond that the server answers at once (announced length) or closes the
 * connection (streamed body). */
#define DISCARD_LIMIT_FACTOR 16

/* libmicrohttpd's own connection limit, over ours: room for the newcomer that makes us shed
 * an old connection (its per-thread share must not be what refuses new clients). */
#define MHD_LIMIT_FACTOR 2

struct lb_server {
    struct MHD_Daemon *daemon;
    struct lb_app *app;
    struct lb_server_opts opts;
    struct lb_conntrack *tracker;
    struct lb_trimmer *trimmer; /* gives back what large answers and uploads leave */
    struct lb_answers *answers; /* answers being sent, and the memory they hold */
    struct lb_workq *renders;   /* costly requests, off the connection threads (or NULL) */
    unsigned port;
    int https;
};

/* A request handed to a render thread (lb_response.defer). Its connection is suspended until
 * the answer is built; the request's pointers stay valid meanwhile (the library keeps the
 * request until it is answered). The lock orders the render thread's resume after the
 * connection thread's suspend, whichever comes first. */
struct deferred {
    struct lb_server *srv;
    struct MHD_Connection *conn;
    struct lb_request req;
    char client[INET6_ADDRSTRLEN + 1];
    struct lb_response res; /* the handler's "busy" answer, then the one built */
    pthread_mutex_t lock;
    int done;      /* res is the answer to send */
    int suspended; /* the connection is suspended: the render thread resumes it */
};

/* Per-request state kept across the access handler's calls. */
struct exchange {
    struct lb_conn *conn; /* the connection's deadline record, or NULL */
    struct xpb_text body; /* kept only for an admitted upload */
    int keep_body;        /* an admitted upload: its body is kept (up to the limit) */
    int too_large;        /* the body passed the limit and was dropped */
    size_t discarded;     /* bytes of body dropped so far */
    int answered;         /* a response was queued before the body was complete */
    int admitted;
    struct lb_admission admission;
    struct lb_response *refusal; /* to send once the body has been dropped, or NULL */
    struct deferred *deferred;   /* handed to a render thread, or NULL */
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

static struct lb_conn *conn_record(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* One line per exchange: time, client, method, path, status, duration, and, after "--", what
 * went wrong inside when the answer hid it (lb_response.internal), escaped like the path. */
static void log_exchange(struct lb_server *srv, struct MHD_Connection *conn, const char *method,
                         const char *url, const struct lb_response *res, double started)
{
    if (srv->opts.quiet)
        return;
    char client[INET6_ADDRSTRLEN + 1], when[32], what[24], path[256], inside[600];
    client_text(client, sizeof client, conn);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* the method and path only, escaped: never headers (the token), never the body */
    lb_log_text(what, sizeof what, method);
    lb_log_text(path, sizeof path, url);
    lb_log_text(inside, sizeof inside, res->internal);
    fprintf(stderr, "%s %s %s %s %d %.1fms%s%s\n", when, client, what, path, res->status,
            (xpb_now() - started) * 1e3, inside[0] ? " -- " : "", inside);
}

/* Queues res (taking its body; lb_answer.h bounds what answers hold), logs the status sent,
 * and starts the deadline of its sending. */
static enum MHD_Result answer(struct lb_server *srv, struct MHD_Connection *conn,
                              const char *method, const char *url, double started,
                              struct lb_response *res)
{
    enum MHD_Result ok = lb_answer_queue(srv->answers, conn, url, res);
    log_exchange(srv, conn, method, url, res, started);
    lb_conntrack_enter(srv->tracker, conn_record(conn), LB_CONN_SENDING);
    return ok;
}

/* The request as the handlers see it: method, path, headers (pointers into the connection),
 * and the client's address (written into client, cap bytes, which must outlive req). */
static void fill_request(struct lb_request *req, char *client, size_t cap, struct lb_server *srv,
                         struct MHD_Connection *conn, const char *method, const char *url)
{
    client_text(client, cap, conn);
    memset(req, 0, sizeof *req);
    req->method = method;
    req->path = url;
    req->client = client;
    req->https = srv->https;
    req->authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    req->content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    req->idempotency_key = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Idempotency-Key");
    req->host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    req->expect = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    req->content_length = -1;
    if (cl && *cl && strspn(cl, "0123456789") == strlen(cl))
        req->content_length = strlen(cl) > 18 ? (long long)1e18 : strtoll(cl, NULL, 10);
    req->body = "";
}

/* The head of a request arrived. An upload is admitted or refused now, before any of its body
 * is read; every other request's body is dropped as it comes. */
static enum MHD_Result on_head(struct lb_server *srv, struct MHD_Connection *conn, const char *url,
                               const char *method, struct exchange *ex)
{
    ex->conn = conn_record(conn);
    lb_conntrack_enter(srv->tracker, ex->conn, LB_CONN_BODY);
    if (strcmp(method, "POST") != 0 || strcmp(url, "/api/v1/results") != 0)
        return MHD_YES;
    char client[INET6_ADDRSTRLEN + 1];
    struct lb_request req;
    fill_request(&req, client, sizeof client, srv, conn, method, url);
    struct lb_response *res = calloc(1, sizeof *res);
    if (!res)
        return MHD_NO;
    res->status = 500;
    res->body.limit = lb_answer_limit(srv->app);
    if (lb_api_admit(&ex->admission, srv->app, &req, res)) {
        ex->admitted = ex->keep_body = 1;
        free(res);
        return MHD_YES;
    }
    int waits = req.expect && !strcasecmp(req.expect, "100-continue");
    unsigned long long drain = (unsigned long long)DISCARD_LIMIT_FACTOR * srv->app->max_body;
    if (waits || req.content_length == 0 || (unsigned long long)req.content_length > drain) {
        /* answer before the body: cleanly when the client waits for 100-continue; else the
         * client may see its send cut off */
        ex->answered = 1;
        enum MHD_Result ok = answer(srv, conn, method, url, ex->started, res);
        free(res);
        return ok;
    }
    ex->refusal = res; /* sent once the body has been dropped */
    return MHD_YES;
}

/* A piece of the body: kept for an admitted upload up to the limit, else dropped (and a stream
 * far past the limit is cut off). */
static enum MHD_Result on_body(struct lb_server *srv, struct exchange *ex, const char *data,
                               size_t *size)
{
    size_t max = srv->app->max_body;
    if (ex->keep_body && !ex->too_large) {
        if (ex->body.len + *size > max) {
            ex->too_large = 1; /* answered with 413 at the end */
            xpb_text_free(&ex->body);
        } else {
            xpb_text_add(&ex->body, data, *size);
        }
    }
    if (!ex->keep_body || ex->too_large) {
        ex->discarded += *size;
        if (ex->discarded > DISCARD_LIMIT_FACTOR * max)
            return MHD_NO;
    }
    *size = 0;
    return MHD_YES;
}

/* Frees a deferred request once its render thread is done with it. */
static void free_deferred(struct deferred *d)
{
    pthread_mutex_lock(&d->lock); /* the render thread has left its last use of d */
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_destroy(&d->lock);
    xpb_text_free(&d->res.body);
    free(d);
}

/* On a render thread: builds the answer (or keeps the "busy" one when the request waited too
 * long or the service is stopping) and resumes the connection, if its thread suspended it
 * already. */
static void run_deferred(void *arg, int cancelled)
{
    struct deferred *d = arg;
    if (!cancelled) {
        struct lb_response busy = d->res;
        memset(&d->res, 0, sizeof d->res);
        d->res.status = 500;
        d->res.body.limit = lb_answer_limit(d->srv->app);
        lb_route(d->srv->app, &d->req, &d->res);
        xpb_text_free(&busy.body);
    }
    pthread_mutex_lock(&d->lock);
    d->done = 1;
    if (d->suspended)
        MHD_resume_connection(d->conn);
    pthread_mutex_unlock(&d->lock);
}

/* The connection thread again, after a render thread built the answer: sends it. */
static enum MHD_Result finish_deferred(struct lb_server *srv, struct MHD_Connection *conn,
                                       const char *url, const char *method, struct exchange *ex)
{
    struct deferred *d = ex->deferred;
    ex->deferred = NULL;
    pthread_mutex_lock(&d->lock); /* done: its render thread is leaving */
    pthread_mutex_unlock(&d->lock);
    enum MHD_Result ok = answer(srv, conn, method, url, ex->started, &d->res);
    free_deferred(d);
    return ok;
}

/* The handler asked to run off this thread (res->defer): hands the request to a render thread
 * and suspends the connection, or, when none can take it now, sends the handler's answer (503
 * busy) at once. Takes res's body either way. */
static enum MHD_Result defer(struct lb_server *srv, struct MHD_Connection *conn, const char *url,
                             const char *method, struct exchange *ex, const struct lb_request *req,
                             struct lb_response *res)
{
    struct deferred *d = calloc(1, sizeof *d);
    if (!d)
        goto send_now;
    d->srv = srv;
    d->conn = conn;
    d->req = *req;
    snprintf(d->client, sizeof d->client, "%s", req->client);
    d->req.client = d->client;
    d->req.may_defer = 0; /* the render thread builds it */
    d->res = *res;        /* the busy answer moves to d, before a render thread may see d */
    memset(&res->body, 0, sizeof res->body);
    pthread_mutex_init(&d->lock, NULL);
    if (!lb_workq_submit(srv->renders, run_deferred, d)) {
        *res = d->res; /* back: it is the answer */
        pthread_mutex_destroy(&d->lock);
        free(d);
        goto send_now;
    }
    ex->deferred = d;
    pthread_mutex_lock(&d->lock);
    int done = d->done;
    if (!done) {
        MHD_suspend_connection(conn);
        d->suspended = 1;
    }
    pthread_mutex_unlock(&d->lock);
    return done ? finish_deferred(srv, conn, url, method, ex) : MHD_YES;

send_now:
    return answer(srv, conn, method, url, ex->started, res);
}

/* The whole request is in: route it and answer. */
static enum MHD_Result on_complete(struct lb_server *srv, struct MHD_Connection *conn,
                                   const char *url, const char *method, struct exchange *ex)
{
    if (ex->refusal) {
        enum MHD_Result ok = answer(srv, conn, method, url, ex->started, ex->refusal);
        free(ex->refusal);
        ex->refusal = NULL;
        return ok;
    }
    char client[INET6_ADDRSTRLEN + 1];
    struct lb_request req;
    fill_request(&req, client, sizeof client, srv, conn, method, url);
    req.body = ex->body.data ? ex->body.data : "";
    req.body_len = ex->body.len;
    req.body_too_large = ex->too_large || ex->body.failed;
    req.admission = ex->admitted ? &ex->admission : NULL;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, &req);

    lb_conntrack_enter(srv->tracker, ex->conn, LB_CONN_BUSY);
    struct lb_response res;
    memset(&res, 0, sizeof res);
    res.status = 500;
    res.body.limit = lb_answer_limit(srv->app);
    req.may_defer = srv->renders != NULL;
    req.large_room = lb_answers_large_room(srv->answers, &req.answers_bounded);
    lb_route(srv->app, &req, &res);
    if (res.defer && srv->renders)
        return defer(srv, conn, url, method, ex, &req, &res);
    return answer(srv, conn, method, url, ex->started, &res);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct lb_server *srv = cls;
    struct exchange *ex = *con_cls;
    if (!ex) {
        if (!(ex = calloc(1, sizeof *ex)))
            return MHD_NO;
        ex->started = xpb_now();
        *con_cls = ex;
        return on_head(srv, conn, url, method, ex);
    }
    if (ex->deferred) /* resumed: a render thread built the answer */
        return finish_deferred(srv, conn, url, method, ex);
    if (ex->answered) {
        *upload_data_size = 0; /* the rest of a refused body is dropped */
        return MHD_YES;
    }
    if (*upload_data_size > 0)
        return on_body(srv, ex, upload_data, upload_data_size);
    return on_complete(srv, conn, url, method, ex);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct lb_server *srv = cls;
    struct exchange *ex = *con_cls;
    if (ex) {
        if (ex->admitted)
            lb_api_release(srv->app, &ex->admission);
        lb_trimmer_note(srv->trimmer, ex->body.cap); /* a large upload was parsed */
        xpb_text_free(&ex->body);
        if (ex->refusal) {
            xpb_text_free(&ex->refusal->body);
            free(ex->refusal);
        }
        if (ex->deferred) /* the service stopped before the answer was sent */
            free_deferred(ex->deferred);
        free(ex);
        *con_cls = NULL;
    }
    /* a kept-alive connection now waits for its next request's head */
    lb_conntrack_enter(srv->tracker, conn_record(conn), LB_CONN_HEAD);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct lb_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? lb_conntrack_open(srv->tracker, ci->connect_fd) : NULL;
    } else {
        /* called before the library closes the socket: the tracker never shuts down a reused
         * descriptor */
        lb_conntrack_close(srv->tracker, *socket_context);
        *socket_context = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct lb_server *srv = cls;
    if (srv->opts.quiet)
        return;
    char msg[512], safe[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    lb_log_text(safe, sizeof safe, msg);
    fprintf(stderr, "xpubench-leaderboard: %s\n", safe);
}

/* The listening address, into the storage given. NULL when `bind` is not an address. */
static struct sockaddr *listen_address(struct sockaddr_in *sin, struct sockaddr_in6 *sin6,
                                       const char *bind, unsigned port, unsigned *flags)
{
    memset(sin, 0, sizeof *sin);
    memset(sin6, 0, sizeof *sin6);
    if (inet_pton(AF_INET, bind, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)port);
        return (struct sockaddr *)sin;
    }
    if (inet_pton(AF_INET6, bind, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t)port);
        *flags |= MHD_USE_IPv6;
        return (struct sockaddr *)sin6;
    }
    return NULL;
}

static struct MHD_Daemon *start_daemon(struct lb_server *srv, unsigned flags, struct sockaddr *sa)
{
    const struct lb_server_opts *o = &srv->opts;
    struct MHD_OptionItem tls_opts[] = {
        {srv->https ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)o->key_pem},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->cert_pem},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
        {MHD_OPTION_END, 0, NULL},
    };
    unsigned threads = o->threads ? o->threads : 1;
    unsigned hard_limit = MHD_LIMIT_FACTOR * o->max_connections + 2 * threads;
    return MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_log, srv, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, hard_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)o->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        srv, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
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
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO |
                     MHD_ALLOW_SUSPEND_RESUME;
    struct sockaddr *sa = listen_address(&sin, &sin6, opts->bind, opts->port, &flags);
    if (!sa)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "--bind %s is not an IPv4 or IPv6 address",
                           opts->bind);
    if (https)
        flags |= MHD_USE_TLS;
    struct lb_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    srv->app = app;
    srv->opts = *opts;
    srv->https = https;
    struct lb_conntrack_opts track = {opts->max_connections, opts->head_timeout,
                                      opts->request_timeout};
    xpb_status st = lb_conntrack_start(&srv->tracker, &track, err);
    if (st != XPB_OK)
        goto fail_srv;
    if ((st = lb_trimmer_start(&srv->trimmer, 1.0, err)) != XPB_OK)
        goto fail_tracker;
    struct lb_answers_opts answers = {opts->answer_memory, opts->answer_memory / 4, LB_SMALL_ANSWER,
                                      https};
    if ((st = lb_answers_new(&srv->answers, &answers, srv->trimmer, err)) != XPB_OK)
        goto fail_trimmer;
    if (opts->renders > 0 &&
        (st = lb_workq_start(&srv->renders, opts->renders, opts->render_queue, opts->render_nice,
                             opts->render_wait, err)) != XPB_OK)
        goto fail_answers;
    srv->daemon = start_daemon(srv, flags, sa);
    if (!srv->daemon) {
        st = xpb_err_set(err, XPB_IO_ERROR,
                         "cannot start the server on %s port %u (address in use, or a bad "
                         "certificate or key)",
                         opts->bind, opts->port);
        goto fail_renders;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opts->port;
    *out = srv;
    return XPB_OK;

fail_renders:
    if (srv->renders) {
        lb_workq_stop(srv->renders);
        lb_workq_free(srv->renders);
    }
fail_answers:
    lb_answers_free(srv->answers);
fail_trimmer:
    lb_trimmer_stop(srv->trimmer);
fail_tracker:
    lb_conntrack_stop(srv->tracker);
fail_srv:
    free(srv);
    return st;
}

unsigned lb_server_port(const struct lb_server *server)
{
    return server->port;
}

void lb_server_stop(struct lb_server *server)
{
    if (!server)
        return;
    /* every suspended connection is resumed first (the library requires it): the pages still
     * waiting for a render thread get their "busy" answer, those being built are finished */
    if (server->renders)
        lb_workq_stop(server->renders);
    MHD_stop_daemon(server->daemon); /* closes every connection: the tracker is then empty, and
                                        every answer released */
    struct lb_conntrack_stats st;
    lb_conntrack_stats(server->tracker, &st);
    if (!server->opts.quiet)
        fprintf(stderr,
                "xpubench-leaderboard: connections: %llu shed to make room, %llu closed at "
                "their deadline; %llu rankings pages and %llu answers refused as busy\n",
                st.shed, st.expired, server->renders ? lb_workq_refused(server->renders) : 0ULL,
                lb_answers_refused(server->answers));
    lb_workq_free(server->renders);
    lb_answers_free(server->answers);
    lb_trimmer_stop(server->trimmer);
    lb_conntrack_stop(server->tracker);
    free(server);
}
