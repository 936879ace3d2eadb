/* The filters of the rankings and of the API list, from a request's query string: model,
 * variant, mode, precision, backend, submitter (exact names), batch and world_size (whole
 * numbers). */
#ifndef LB_FILTER_H
#define LB_FILTER_H

#include "service/lb_http.h"
#include "store/lb_store.h"

/* Reads the filter parameters of `req` into *f (pointers into the request; an empty value
 * means any). Returns 1, or 0 with *bad naming the parameter whose value is not acceptable. */
int lb_filter_from_query(struct lb_filter *f, const struct lb_request *req, const char **bad);

#endif
