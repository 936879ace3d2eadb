/* Request dispatch: method and path to handler (see lb_router.h). */
#include "server/lb_router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/lb_api.h"
#include "pages/lb_assets.h"
#include "pages/lb_pages.h"

/* Parses the decimal id that makes up the rest of `path` after `prefix`; 0 when it is not
 * one (ids start at 1). */
static long long parse_id(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) != 0)
        return 0;
    const char *p = path + n;
    size_t digits = strspn(p, "0123456789");
    if (digits == 0 || digits > 15 || p[digits] != '\0' || p[0] == '0')
        return 0;
    return strtoll(p, NULL, 10);
}

static int is_get(const struct lb_request *req)
{
    return !strcmp(req->method, "GET") || !strcmp(req->method, "HEAD");
}

static void not_allowed(struct lb_response *res, const char *allow, int api)
{
    res->allow = allow;
    if (api)
        lb_respond_error(res, 405, "method not allowed (allowed: %s)", allow);
    else
        lb_page_error(res, 405, "This address only answers GET requests.");
}

void lb_route(struct lb_app *app, const struct lb_request *req, struct lb_response *res)
{
    const char *path = req->path;
    long long id;
    int api = strncmp(path, "/api/", 5) == 0;

    if (!strcmp(path, "/api/v1/results")) {
        if (!strcmp(req->method, "POST"))
            lb_api_post_results(app, req, res);
        else if (is_get(req))
            lb_api_list_results(app, req, res);
        else
            not_allowed(res, "GET, HEAD, POST", 1);
        return;
    }
    if (!strcmp(path, "/api/v1/token")) {
        if (is_get(req))
            lb_api_token(app, req, res);
        else
            not_allowed(res, "GET, HEAD", 1);
        return;
    }
    if ((id = parse_id(path, "/api/v1/results/")) > 0) {
        if (is_get(req))
            lb_api_get_result(app, req, res, id);
        else
            not_allowed(res, "GET, HEAD", 1);
        return;
    }
    if (api) {
        lb_respond_error(res, 404, "no such API endpoint");
        return;
    }
    if (!is_get(req)) {
        not_allowed(res, "GET, HEAD", 0);
        return;
    }
    if (!strcmp(path, "/"))
        lb_page_board(app, req, res);
    else if ((id = parse_id(path, "/submissions/")) > 0)
        lb_page_submission(app, req, res, id);
    else if (!strcmp(path, "/compare"))
        lb_page_compare(app, req, res);
    else if (!strcmp(path, "/tta"))
        lb_page_tta(app, req, res);
    else if (!strcmp(path, "/healthz")) {
        res->status = 200;
        res->content_type = "text/plain; charset=utf-8";
        xpb_text_puts(&res->body, "ok\n");
    } else if (!lb_asset(res, path))
        lb_page_error(res, 404, "There is no page at this address.");
}
