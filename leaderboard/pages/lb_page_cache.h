/* A short-lived cache of rendered rankings pages. The rankings are the page everyone asks for
 * and the one that costs most to build (a query per table); without the cache a crowd of
 * readers costs a query storm, with it one render per page variant per `ttl` seconds. An entry
 * is dropped when it is older than `ttl`, or when this process stored a submission since (the
 * generation changed); another process's new submission shows within `ttl`. Keys are built
 * from the page's parsed view, so unknown query parameters cannot multiply entries. At most
 * max_bytes of pages are kept (the oldest entries go first); a page larger than an eighth of
 * that is not cached. Thread-safe. */
#ifndef LB_PAGE_CACHE_H
#define LB_PAGE_CACHE_H

#include <stddef.h>

#include "service/lb_http.h"

struct lb_page_cache;

/* NULL when out of memory. The caller owns it: lb_page_cache_free. */
struct lb_page_cache *lb_page_cache_new(size_t max_bytes, double ttl);
void lb_page_cache_free(struct lb_page_cache *c);

/* On a fresh entry for `key` of this generation: fills res (status, content type, a copy of the
 * body) and returns 1. 0 otherwise. NULL cache: 0. */
int lb_page_cache_get(struct lb_page_cache *c, const char *key, unsigned long generation,
                      double now, struct lb_response *res);

/* Keeps a copy of res's answer under `key`. NULL cache: nothing. */
void lb_page_cache_put(struct lb_page_cache *c, const char *key, unsigned long generation,
                       double now, const struct lb_response *res);

#endif
