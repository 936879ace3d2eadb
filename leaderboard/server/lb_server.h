/* The HTTP(S) server: libmicrohttpd with its own thread pool, serving HTTPS (GnuTLS, key and
 * certificate from PEM text) or, for a deployment behind a TLS-terminating proxy, plain HTTP
 * on a loopback address only. It turns each exchange into an lb_request, lets lb_route
 * answer, and adds the security headers every answer carries.
 *
 * What keeps it answering under attack: connection deadlines and shedding (lb_conntrack.h);
 * costly requests built by render threads while their connection is suspended, never on a
 * connection thread (lb_workq.h);
 * uploads admitted from their headers (token, rate, quota, memory budget: lb_api_admit) before
 * any of their body is buffered, and other requests' bodies never buffered; every answer built
 * under a size limit (lb_answer_limit); the access log escaped (lb_log_text). */
#ifndef LB_SERVER_H
#define LB_SERVER_H

#include <stddef.h>

#include "base/errmsg.h"
#include "service/lb_app.h"

struct lb_server_opts {
    const char *bind;               /* address to listen on (IPv4 or IPv6 literal) */
    unsigned port;                  /* 0: an ephemeral port (lb_server_port tells which) */
    const char *cert_pem, *key_pem; /* PEM text; both NULL for plain HTTP (loopback only) */
    unsigned threads;               /* worker threads */
    unsigned max_connections;       /* kept at once, in total (the oldest idle ones are shed) */
    unsigned max_per_ip;            /* at once, from one client address (0: no limit) */
    unsigned timeout_s;             /* a connection idle this long is closed */
    double head_timeout;            /* seconds for a request's head (lb_conntrack.h) */
    double request_timeout;         /* seconds for its head and body, and for its answer */
    int quiet;                      /* no access log */
    /* render threads for the requests whose handler asks to run off the connection threads
     * (lb_response.defer: rankings pages that read runs), with room for render_queue more
     * waiting at most render_wait seconds, niced by render_nice; 0 renders: handlers run where
     * they are asked */
    unsigned renders, render_queue;
    int render_nice;
    double render_wait;
    /* bytes the answers being sent may hold together (0: no bound); answers over
     * LB_SMALL_ANSWER must leave a quarter of it to the others (lb_answer.h) */
    size_t answer_memory;
};

struct lb_server;

/* Starts serving `app` (which must outlive the server). *out is owned by the caller:
 * lb_server_stop. XPB_INVALID_ARGUMENT for a bad address or plain HTTP on a non-loopback
 * address; XPB_IO_ERROR when the server cannot start (port in use, bad certificate). */
xpb_status lb_server_start(struct lb_server **out, struct lb_app *app,
                           const struct lb_server_opts *opts, xpb_err *err);

/* The port the server listens on. */
unsigned lb_server_port(const struct lb_server *server);

/* Stops accepting, finishes or closes the open connections, and frees the server. */
void lb_server_stop(struct lb_server *server);

/* 1 when `addr` is a loopback address literal (127.0.0.0/8 or ::1). */
int lb_is_loopback(const char *addr);

#endif
