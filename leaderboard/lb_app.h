/* What every request handler shares: the database pool, the rate limiter and the service's
 * settings. One per running service; handlers only read it (the pool and the limiter lock
 * themselves). */
#ifndef LB_APP_H
#define LB_APP_H

#include <stddef.h>

#include "lb_db.h"
#include "lb_http.h"
#include "lb_ratelimit.h"

struct lb_app {
    struct lb_pool *pool;
    struct lb_ratelimit *limiter; /* per upload token */
    const char *public_url;       /* base URL for links in API answers, or NULL: from the request */
    size_t max_body;              /* largest accepted request body, bytes */
};

/* The base URL of the service as the client sees it, without a trailing slash, into out
 * (cap bytes): app->public_url, else "<scheme>://<Host header>" when the Host header is a
 * plain host[:port], else "" (links are then relative). */
void lb_base_url(char *out, size_t cap, const struct lb_app *app, const struct lb_request *req);

#endif
