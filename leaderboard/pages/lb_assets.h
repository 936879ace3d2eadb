/* The stylesheet and script of the pages, compiled into the service (from static/ by
 * cmake/embed.cmake) and served at /static/lb.css and /static/lb.js. */
#ifndef LB_ASSETS_H
#define LB_ASSETS_H

#include "service/lb_http.h"

/* Serves the asset at `path` into res and returns 1; 0 when there is none. */
int lb_asset(struct lb_response *res, const char *path);

/* A short hash of both assets, appended to their links (?v=...) so that browsers can cache
 * them for long and still fetch a new build's. Static string. */
const char *lb_asset_version(void);

#endif
