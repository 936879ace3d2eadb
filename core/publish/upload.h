/* The leaderboard client: sends one results document to a leaderboard service over HTTPS
 * (libcurl).
 *
 * Certificate verification is always on: the server's certificate must chain to the system's
 * CA store, or to the CA file given as `cacert` for a private deployment; there is no way to
 * turn verification off. Only https:// URLs are accepted, redirects are not followed (the
 * token is never sent anywhere else), and the bearer token is never logged or stored.
 *
 * The request asks for 100-continue, so that a server refusing it from its headers (token,
 * rate, size) answers before the body is sent. Each request carries an Idempotency-Key: the SHA-256
 * of the canonical results text (see xpb_results_canonical), so a retried or repeated upload of the
 * same results is stored once by the server. Network errors, timeouts, 5xx answers and 429 are
 * retried with exponential backoff (a Retry-After header is honoured up to the backoff cap). */
#ifndef XPB_CORE_UPLOAD_H
#define XPB_CORE_UPLOAD_H

#include <stddef.h>

#include <jansson.h>

#include "base/errmsg.h"

/* The path the client posts to, below the server's base URL. */
#define XPB_UPLOAD_API_PATH "/api/v1/results"

struct xpb_upload_opts {
    const char *server; /* base URL, "https://host[:port][/prefix]" */
    const char *cacert; /* PEM file of CA certificates to trust instead of the system's, or NULL */
    const char *token;  /* bearer token (from the environment); never logged */
    long connect_timeout_ms; /* per attempt, to establish the connection */
    long timeout_ms;         /* per attempt, for the whole exchange */
    int attempts;            /* total attempts (>= 1) */
    long backoff_ms;         /* delay before the first retry; doubles after each, with jitter */
    long backoff_max_ms;     /* cap of one delay */
};

/* Defaults: connect timeout 10 s, total 60 s, 5 attempts, backoff 0.5 s doubling to 30 s. */
void xpb_upload_opts_init(struct xpb_upload_opts *opts);

enum xpb_upload_outcome {
    XPB_UPLOAD_CREATED,     /* stored as a new submission (201) */
    XPB_UPLOAD_DUPLICATE,   /* the server already had these results (200/409 duplicate) */
    XPB_UPLOAD_REJECTED,    /* the server refused the content (400, 413, 415, 422, ...): resending
                               the same results cannot succeed */
    XPB_UPLOAD_DENIED,      /* authentication, permission or rate limit (401, 403, 429), or a
                               redirect (3xx, never followed): may succeed later with another token,
                               after a while, or at the address the server names */
    XPB_UPLOAD_UNREACHABLE, /* network error, timeout or 5xx on every attempt */
};

struct xpb_upload_reply {
    enum xpb_upload_outcome outcome;
    long http_status; /* status of the last answer; 0 when no answer came */
    long long id;     /* submission id (CREATED, DUPLICATE); 0 otherwise */
    /* What the server sent is escaped for a terminal (render/terminal.h) in both: */
    char url[1024];     /* submission page the server named (CREATED, DUPLICATE) */
    char message[1024]; /* what the server said was wrong (a redirect: where to), or the
                           network error */
    int attempts;       /* attempts made */
};

/* 1 when `url` is a usable base URL: https://, a host, printable ASCII without spaces. */
int xpb_upload_url_ok(const char *url);

/* 1 when `token` can go into an Authorization header: printable ASCII without spaces (so it
 * can never inject another header line). */
int xpb_upload_token_ok(const char *token);

/* POSTs `body` (len bytes of canonical results text, idempotency key `key`) to
 * <server>/api/v1/results and fills *reply. Returns XPB_OK for CREATED and DUPLICATE,
 * XPB_REJECTED for REJECTED and DENIED, XPB_NETWORK for UNREACHABLE (err->msg and
 * reply->message say why, quoting the server), XPB_INVALID_ARGUMENT for a bad URL, a missing
 * token or an unreadable cacert file (nothing was sent). Thread-safe. */
xpb_status xpb_upload_post(struct xpb_upload_reply *reply, const struct xpb_upload_opts *opts,
                           const char *body, size_t len, const char *key, xpb_err *err);

#endif
