/* Answers on their way out (see lb_answer.h). */
#include "server/lb_answer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pages/lb_pages.h"
#include "service/lb_budget.h"

/* Sent with every answer. The pages load their script and stylesheet from this server only
 * and embed no inline script or style; SVG charts are inline markup. */
#define CSP                                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

struct lb_answers {
    struct lb_answers_opts o;
    struct lb_budget *budget; /* NULL: no bound */
    struct lb_trimmer *trimmer;
    atomic_ullong refused;
};

/* An answer's body while libmicrohttpd holds it: freed, and its bytes given back, when the
 * library lets go of it. */
struct held {
    struct lb_answers *answers;
    char *body;
    size_t len;
    int counted; /* its bytes are reserved in the budget */
};

xpb_status lb_answers_new(struct lb_answers **out, const struct lb_answers_opts *opts,
                          struct lb_trimmer *trimmer, xpb_err *err)
{
    *out = NULL;
    struct lb_answers *a = calloc(1, sizeof *a);
    if (!a)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    a->o = *opts;
    a->trimmer = trimmer;
    if (opts->memory && !(a->budget = lb_budget_new(opts->memory))) {
        free(a);
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    }
    *out = a;
    return XPB_OK;
}

void lb_answers_free(struct lb_answers *a)
{
    if (!a)
        return;
    lb_budget_free(a->budget);
    free(a);
}

static void add_headers(const struct lb_answers *a, struct MHD_Response *r,
                        const struct lb_response *res)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            res->content_type ? res->content_type : "text/plain; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    if (a->o.https)
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
}

/* libmicrohttpd is done with an answer. */
static void release(void *cls)
{
    struct held *h = cls;
    if (h->counted)
        lb_budget_give(h->answers->budget, h->len);
    free(h->body);
    lb_trimmer_note(h->answers->trimmer, h->len);
    free(h);
}

/* Reserves len bytes: any answer while it fits, one over `small` only while it leaves
 * `reserve` free. 1 when granted (or when nothing is bounded). */
static int reserve(struct lb_answers *a, size_t len)
{
    if (!a->budget)
        return 1;
    return lb_budget_take_leaving(a->budget, len, len > a->o.small ? a->o.reserve : 0);
}

/* res becomes the short answer of a full budget. */
static void refuse(struct lb_answers *a, const char *path, struct lb_response *res)
{
    atomic_fetch_add(&a->refused, 1);
    struct lb_response full;
    memset(&full, 0, sizeof full);
    if (!strncmp(path, "/api/", 5)) {
        lb_respond_answers_full(&full);
    } else {
        full.retry_after = LB_ANSWERS_FULL_RETRY;
        lb_page_error(&full, 503,
                      "The service is sending too much at once: try again in a few "
                      "seconds.");
    }
    xpb_text_free(&res->body);
    *res = full;
}

/* The body to send, taken from res: a failed one becomes a 500's. NULL when out of memory. */
static char *take_body(struct lb_response *res, size_t *len)
{
    int too_large = res->body.too_large;
    char *body = xpb_text_take(&res->body, len);
    if (body)
        return body;
    res->status = 500;
    res->content_type = "text/plain; charset=utf-8";
    body = strdup(too_large ? "internal error: the answer would exceed the service's limit\n"
                            : "internal error: out of memory\n");
    *len = body ? strlen(body) : 0;
    return body;
}

enum MHD_Result lb_answer_queue(struct lb_answers *a, struct MHD_Connection *conn, const char *path,
                                struct lb_response *res)
{
    size_t len = 0;
    char *body = take_body(res, &len);
    if (!body)
        return MHD_NO;
    int counted = a->budget != NULL;
    if (counted && !reserve(a, len)) {
        free(body);
        refuse(a, path, res);
        counted = 0;
        if (!(body = take_body(res, &len)))
            return MHD_NO;
    }
    struct held *h = malloc(sizeof *h);
    if (!h)
        goto fail_reserved;
    *h = (struct held){a, body, len, counted};
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback_cls(len, body, release, h);
    if (!r)
        goto fail_held;
    add_headers(a, r, res);
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)res->status, r);
    MHD_destroy_response(r); /* the connection keeps it until it is done: then `release` */
    return ok;

fail_held:
    free(h);
fail_reserved:
    if (counted)
        lb_budget_give(a->budget, len);
    free(body);
    return MHD_NO;
}

size_t lb_answers_large_room(struct lb_answers *a, int *bounded)
{
    *bounded = a->budget != NULL;
    if (!a->budget)
        return 0;
    size_t used = lb_budget_used(a->budget), most = a->o.memory - a->o.reserve;
    return used < most ? most - used : 0;
}

size_t lb_answers_held(struct lb_answers *a)
{
    return a->budget ? lb_budget_used(a->budget) : 0;
}

unsigned long long lb_answers_refused(struct lb_answers *a)
{
    return atomic_load(&a->refused);
}
