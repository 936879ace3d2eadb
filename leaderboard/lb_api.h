/* The JSON API, version 1:
 *   POST /api/v1/results       submit a results document (bearer token)
 *   GET  /api/v1/results       list submissions, filtered (model, variant, mode, precision,
 *                              backend, batch; limit, offset)
 *   GET  /api/v1/results/ID    one submission with its whole document
 * Every error is {"error": message, "status": code}. docs/leaderboard.md documents each. */
#ifndef LB_API_H
#define LB_API_H

#include "lb_app.h"
#include "lb_store.h"

void lb_api_post_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
void lb_api_list_results(struct lb_app *app, const struct lb_request *req, struct lb_response *res);
void lb_api_get_result(struct lb_app *app, const struct lb_request *req, struct lb_response *res,
                       long long id);

/* Reads the filter parameters of `req` into *f (pointers into the request). Returns 1, or 0
 * with *bad naming the parameter whose value is not acceptable. */
int lb_api_filter(struct lb_filter *f, const struct lb_request *req, const char **bad);

#endif
