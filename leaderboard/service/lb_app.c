/* The application context shared by every handler (see lb_app.h). */
#include "service/lb_app.h"

#include <stdio.h>
#include <string.h>

/* A Host header we are willing to echo into links: host name or address, optional port. */
static int host_ok(const char *h)
{
    size_t n = strlen(h);
    if (n == 0 || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
            return 0;
    }
    return 1;
}

size_t lb_answer_limit(const struct lb_app *app)
{
    size_t need = app->max_body + (64u << 10); /* the document and its envelope */
    return need > LB_ANSWER_MIN ? need : LB_ANSWER_MIN;
}

void lb_respond_answers_full(struct lb_response *res)
{
    res->retry_after = LB_ANSWERS_FULL_RETRY;
    lb_respond_error(res, 503, "the service is sending too much at once: retry in a few seconds");
}

int lb_answer_fits(const struct lb_request *req, size_t bytes, struct lb_response *res)
{
    if (!req->answers_bounded || bytes <= LB_SMALL_ANSWER || bytes <= req->large_room)
        return 1;
    lb_respond_answers_full(res);
    return 0;
}

void lb_base_url(char *out, size_t cap, const struct lb_app *app, const struct lb_request *req)
{
    if (app->public_url && *app->public_url) {
        size_t n = strlen(app->public_url);
        while (n > 0 && app->public_url[n - 1] == '/')
            n--;
        snprintf(out, cap, "%.*s", (int)n, app->public_url);
    } else if (req->host && host_ok(req->host)) {
        snprintf(out, cap, "%s://%s", req->https ? "https" : "http", req->host);
    } else {
        out[0] = '\0';
    }
}

void lb_submission_urls(char *page, char *api, size_t cap, const char *base, long long id)
{
    snprintf(page, cap, "%s/submissions/%lld", base, id);
    snprintf(api, cap, "%s/api/v1/results/%lld", base, id);
}
