/* The HTTP(S) server: libmicrohttpd with its own thread pool, serving HTTPS (GnuTLS, key and
 * certificate from PEM text) or, for a deployment behind a TLS-terminating proxy, plain HTTP
 * on a loopback address only. It turns each exchange into an lb_request, lets lb_route
 * answer, and adds the security headers every answer carries. */
#ifndef LB_SERVER_H
#define LB_SERVER_H

#include <stddef.h>

#include "error.h"
#include "lb_app.h"

struct lb_server_opts {
    const char *bind;               /* address to listen on (IPv4 or IPv6 literal) */
    unsigned port;                  /* 0: an ephemeral port (lb_server_port tells which) */
    const char *cert_pem, *key_pem; /* PEM text; both NULL for plain HTTP (loopback only) */
    unsigned threads;               /* worker threads */
    unsigned max_connections;       /* at once, in total */
    unsigned max_per_ip;            /* at once, from one client address (0: no limit) */
    unsigned timeout_s;             /* an idle connection is closed after this */
    int quiet;                      /* no access log */
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
