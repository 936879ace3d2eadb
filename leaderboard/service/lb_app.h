/* What every request handler shares: the database pool, the limiters and the service's bounds.
 * One per running service; handlers only read it (the pool, the rate limiter and the upload
 * budget lock themselves). Every bound is stated, with its reason, in docs/leaderboard.md
 * ("Bounds") and on the page (pages/lb_page_rules.c). */
#ifndef LB_APP_H
#define LB_APP_H

#include <stdatomic.h>
#include <stddef.h>

#include "results/results_limits.h" /* the limits of a document, shared with the CLI */
#include "service/lb_budget.h"
#include "service/lb_http.h"
#include "service/lb_pool.h"
#include "service/lb_ratelimit.h"
#include "store/lb_store.h"

/* Defaults of the bounds (serve's options override most). */
#define LB_DEFAULT_MAX_BODY (4u << 20)       /* bytes of an upload */
#define LB_DEFAULT_UPLOAD_MEMORY (64u << 20) /* bytes of upload bodies held at once */
#define LB_DEFAULT_MAX_RUNS 256              /* runs per submission */
#define LB_DEFAULT_PER_DAY 100               /* new submissions per token per 24 hours */
#define LB_MAX_DEPTH XPB_RESULTS_MAX_DEPTH   /* nesting of a submitted document */
#define LB_MAX_NODES XPB_RESULTS_MAX_NODES   /* values and keys of a submitted document */
#define LB_ANSWER_MIN (16u << 20)            /* an answer may hold at least this much */
#define LB_PAGE_CACHE_BYTES (32u << 20)      /* rankings pages kept (lb_page_cache.h) */
#define LB_DEFAULT_ANSWER_MEMORY (64u << 20) /* bytes of answers being sent, together */
#define LB_SMALL_ANSWER (1u << 20)           /* answers that may use all of that budget */
#define LB_ANSWERS_FULL_RETRY 5              /* Retry-After when that budget is full, seconds */
#define LB_RENDERS 2        /* rankings pages that read runs rendered at once, per process */
#define LB_RENDER_QUEUE 8   /* more such pages waiting for a render thread; beyond: 503 at once */
#define LB_RENDER_NICE 10   /* the render threads' nice value: connection threads come first */
#define LB_RENDER_WAIT 10.0 /* seconds a page may wait for a render thread, then 503 */

/* The server's own bounds, as configured, for the page that states them (0: not set). */
struct lb_shown_bounds {
    unsigned max_connections, max_per_ip;
    double head_timeout, request_timeout; /* seconds */
    size_t upload_memory;                 /* bytes */
    size_t answer_memory;                 /* bytes */
    double rate_per_minute, rate_burst;   /* uploads per token */
};

struct lb_page_cache; /* pages/lb_page_cache.h: the app only holds it for the pages */

struct lb_app {
    struct lb_pool *pool;
    struct lb_ratelimit *limiter; /* uploads per token per minute */
    struct lb_budget *uploads;    /* memory for upload bodies being received */
    const char *public_url;       /* base URL for links in API answers, or NULL: from the request */
    size_t max_body;              /* largest accepted request body (and stored document), bytes */
    struct lb_submit_limits submit; /* runs per submission, submissions per token per day */
    struct lb_shown_bounds bounds;
    struct lb_page_cache *pages; /* rankings pages, or NULL: none kept */
    atomic_ulong generation;     /* bumped by every submission this process stores */
};

/* The largest answer the service builds: the stored document of an upload of max_body bytes
 * fits, and never less than LB_ANSWER_MIN. */
size_t lb_answer_limit(const struct lb_app *app);

/* 1 when an answer of `bytes` can be sent now (req->large_room); else res is a 503 with
 * Retry-After saying the service is sending too much at once, and 0. */
int lb_answer_fits(const struct lb_request *req, size_t bytes, struct lb_response *res);

/* res: the 503 of an answer that does not fit in the budget of answers being sent (JSON). */
void lb_respond_answers_full(struct lb_response *res);

/* The base URL of the service as the client sees it, without a trailing slash, into out
 * (cap bytes): app->public_url, else "<scheme>://<Host header>" when the Host header is a
 * plain host[:port], else "" (links are then relative). */
void lb_base_url(char *out, size_t cap, const struct lb_app *app, const struct lb_request *req);

/* The addresses of submission `id` that API answers give, below `base` (lb_base_url): its page
 * (<base>/submissions/ID) into page and its document (<base>/api/v1/results/ID) into api, cap
 * bytes each. */
void lb_submission_urls(char *page, char *api, size_t cap, const char *base, long long id);

#endif
