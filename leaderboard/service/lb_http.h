/* The service's view of one HTTP exchange, independent of the HTTP library: the server
 * (lb_server.c) fills a request from libmicrohttpd and sends the response; the router, API
 * and pages only see these structs, so the tests can drive them directly. */
#ifndef LB_HTTP_H
#define LB_HTTP_H

#include <stddef.h>

#include <jansson.h>

#include "render/text.h"

#define LB_MAX_QUERY 16

struct lb_query_param {
    const char *key, *value; /* decoded; value "" for a key without '=' */
};

struct lb_admission; /* lb_api.h: an upload admitted before its body was read */

/* Every pointer is owned by the server and valid while the request is handled. */
struct lb_request {
    const char *method; /* "GET", "HEAD", "POST", ... */
    const char *path;   /* without the query string, e.g. "/api/v1/results/12" */
    struct lb_query_param query[LB_MAX_QUERY]; /* the first LB_MAX_QUERY query parameters */
    size_t n_query;
    const char *authorization; /* header values, NULL when absent */
    const char *content_type;
    const char *idempotency_key;
    const char *host;
    const char *expect;       /* Expect header, NULL when absent */
    long long content_length; /* announced body length; -1 when not announced */
    const char *body;         /* request body (POST), NUL-terminated, body_len bytes */
    size_t body_len;
    int body_too_large; /* the body exceeded the server's limit and was discarded */
    const struct lb_admission *admission; /* set by the server for an upload it admitted from
                                             its headers (lb_api_admit); NULL otherwise */
    const char *client;                   /* client address as text */
    int https;                            /* received over TLS */
    /* the server can run this request's handler again off its connection threads when the
     * handler asks (lb_response.defer); 0 when it already runs there, or in the tests */
    int may_defer;
    /* when answers_bounded, the room left now for an answer larger than LB_SMALL_ANSWER in the
     * server's budget of answers being sent: a handler that can tell its answer's size before
     * building it refuses it at once when it would not fit (lb_answer_fits, lb_app.h) */
    int answers_bounded;
    size_t large_room;
};

struct lb_response {
    int status;               /* HTTP status code */
    const char *content_type; /* static string */
    struct xpb_text body;
    long retry_after;     /* seconds for a Retry-After header; 0 for none */
    int cache_seconds;    /* > 0: public caching allowed for that long; 0: no-store */
    char location[256];   /* Location header when not empty */
    const char *allow;    /* Allow header (405 answers), static, or NULL */
    int bearer_challenge; /* add WWW-Authenticate: Bearer (401 answers) */
    /* the handler (asked with lb_request.may_defer) wants to be run again off the connection
     * threads, the work being costly; the answer it gave stands when the server cannot (too
     * many wait already): a 503 "busy" with Retry-After */
    int defer;
    /* what went wrong inside (a database's error text), for the service's log only: answers
     * never carry it (lb_note_internal); "" when nothing did */
    char internal[256];
};

/* The first value of query parameter `key`, or NULL. The pointer belongs to the request. */
const char *lb_query(const struct lb_request *req, const char *key);

/* A whole-number query parameter in 0..max: `def` when absent or empty, -1 when it is not one. */
long long lb_query_count(const struct lb_request *req, const char *key, long long def,
                         long long max);

/* Sets a compact JSON body and status; `obj` is stolen (decref'ed here). */
void lb_respond_json(struct lb_response *res, int status, json_t *obj);

/* Appends `value` to b as the answers write JSON (compact, keys in order, reals with 17
 * digits), dumped straight into b (no copy of the text); a failure marks b failed. */
void lb_text_json(struct xpb_text *b, const json_t *value);

/* A JSON error {"error": message} with `status`. */
void lb_respond_error(struct lb_response *res, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keeps `what` (an internal error's text) in res for the log, never in the answer. */
void lb_note_internal(struct lb_response *res, const char *what);

/* A JSON error that hides an internal failure: `status` with `message` (what the client may
 * know: that the service cannot answer now, not why), Retry-After `retry_after` seconds (0:
 * none), and `what` for the log only (lb_note_internal). */
void lb_respond_internal(struct lb_response *res, int status, long retry_after, const char *message,
                         const char *what);

/* The standard reason phrase of an HTTP status ("Not Found"); static, never NULL. */
const char *lb_status_text(int status);

#endif
