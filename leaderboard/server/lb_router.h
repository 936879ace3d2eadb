/* Request dispatch: method and path to the API handlers, the pages and the static assets. */
#ifndef LB_ROUTER_H
#define LB_ROUTER_H

#include "service/lb_app.h"

/* Dispatches `req` to its handler and fills `res`. */
void lb_route(struct lb_app *app, const struct lb_request *req, struct lb_response *res);

#endif
