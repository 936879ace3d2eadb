/* The JSON API, version 1:
 *   POST /api/v1/results       submit a results document (bearer token)
 *   GET  /api/v1/results       list submissions, filtered (model, variant, mode, precision,
 *                              backend, batch, world_size, submitter; limit, offset)
 *   GET  /api/v1/results/ID    one submission with its document, as stored
 *   GET  /api/v1/token         who a bearer token belongs to (a reverse proxy asks this
 *                              before it reads an upload's body)
 * Every error is {"error": message, "status": code}. docs/leaderboard.md documents each. */
#ifndef LB_API_H
#define LB_API_H

#include "api/lb_auth.h"
#include "service/lb_app.h"

/* An upload admitted from its headers, before its body was read: authenticated, within its
 * token's rate limit and daily quota, and holding its share of the upload memory budget. */
struct lb_admission {
    long long token_id;
    char submitter[LB_TOKEN_NAME_MAX + 1];
    size_t reserved; /* bytes of app->uploads held; given back by lb_api_release */
};

/* Checks what the headers of POST /api/v1/results allow to check, in this order: the
 * announced size (413), the content type (415), the Idempotency-Key's form (400), the token
 * (401), its rate limit and its daily quota (429), the upload memory budget (503). Returns 1
 * with *a filled (the caller owes lb_api_release), or 0 with the refusal in res. */
int lb_api_admit(struct lb_admission *a, struct lb_app *app, const struct lb_request *req,
                 struct lb_response *res);
void lb_api_release(struct lb_app *app, struct lb_admission *a);

void lb_api_post_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
void lb_api_list_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
void lb_api_get_result(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                       long long id);
void lb_api_token(struct lb_app *app, const struct lb_request *req, struct lb_response *res);

#endif
